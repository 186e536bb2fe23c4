/* spectap check --model: safety model checking, reported as TLC reports it (or as JSON). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_model.h"
#include "model.h"
#include "spectap/json.h"

static const char *verdict_name(enum mc_verdict v)
{
	switch (v) {
	case MC_OK: return "ok";
	case MC_INVARIANT: return "invariant";
	case MC_PROPERTY: return "property";
	case MC_TEMPORAL: return "temporal";
	case MC_DEADLOCK: return "deadlock";
	case MC_ASSUMPTION: return "assumption";
	case MC_EVAL_ERROR: return "error";
	case MC_POSTCONDITION: return "postcondition";
	case MC_LIVENESS: return "liveness";
	}
	return "?";
}

/* TLC's exit codes: 10 assumption, 11 deadlock, 12 safety; 1 for an evaluation error. */
static int exit_code(enum mc_verdict v)
{
	switch (v) {
	case MC_OK: return CLI_OK;
	case MC_ASSUMPTION: return 10;
	case MC_DEADLOCK: return 11;
	case MC_INVARIANT:
	case MC_PROPERTY:
	case MC_POSTCONDITION:
	case MC_TEMPORAL: return 12; /* TLC's on-the-fly violation of [](A => []B) */
	case MC_LIVENESS: return 13;
	default: return CLI_FAIL;
	}
}

static void progress(void *arg, const struct mc_progress *p)
{
	if (p->line >= 0)
		cli_progress(arg, "level %" PRIu64 ": log line %" PRId64 ", %" PRIu64 " state%s there, %" PRIu64
			     " generated, %" PRIu64 " distinct",
			     p->level, p->line, p->frontier, p->frontier == 1 ? "" : "s", p->generated, p->distinct);
	else
		cli_progress(arg, "level %" PRIu64 ": %" PRIu64 " states generated, %" PRIu64 " distinct, %" PRIu64 " on the queue",
			     p->level, p->generated, p->distinct, p->queue);
}

/* A trace spec's verdict: every line matched, or the first line no behaviour got past. */
static bool trace_accepted(const struct mc_result *r)
{
	const struct mc_trace_outcome *t = &r->trace_spec;
	return r->verdict == MC_OK && t->log_len >= 0 && t->line > t->log_len;
}

/* The source line at pos, from its column on, trimmed (NULL when it cannot be read). */
static char *source_at(struct src_pos pos, char *buf, size_t size)
{
	FILE *f = pos.file ? fopen(pos.file, "r") : NULL;
	if (!f)
		return NULL;
	char *got = NULL;
	for (uint32_t i = 0; i < pos.line && (got = fgets(buf, (int)size, f)); i++)
		;
	fclose(f);
	if (!got)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	size_t len = strlen(buf);
	char *s = buf + (pos.col >= 1 && pos.col - 1 < len ? pos.col - 1 : 0);
	/* The expression ends at a /\ or \/ outside brackets, or at a bracket it did not open. */
	int depth = 0;
	for (char *p = s; *p; p++) {
		if (*p == '(' || *p == '[' || *p == '{')
			depth++;
		else if ((*p == ')' || *p == ']' || *p == '}') && --depth < 0)
			*p = '\0';
		else if (!depth && p > s && (!strncmp(p, "/\\", 2) || !strncmp(p, "\\/", 2)))
			*p = '\0';
		if (!*p)
			break;
	}
	len = strlen(buf);
	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	return s;
}

static void print_trace_text(const struct mc_result *r, const struct check_model_opts *o)
{
	const struct mc_trace_outcome *t = &r->trace_spec;
	FILE *f = stdout;
	if (r->verdict == MC_ASSUMPTION) {
		fprintf(f, "rejected: the error above (an assumption is false: no %s was checked)\n", o->states ? "state" : "log line");
		return;
	}
	if (o->states) {
		if (trace_accepted(r))
			fprintf(f, "accepted: a behaviour goes through all %" PRId64 " states of %s (%" PRIu64 " at the end)\n",
				t->log_len, t->log, t->frontier);
		else if (r->verdict != MC_OK)
			fprintf(f, "rejected: the error above, in state %" PRId64 " of %s\n", t->error_line - 1, t->log);
		else
			fprintf(f, "rejected at state %" PRId64 " of %" PRId64 " of %s: no successor of the %" PRIu64
				" state%s that matched state %" PRId64 " matches it\n",
				t->line, t->log_len, t->log, t->frontier, t->frontier == 1 ? "" : "s", t->line - 1);
		if (t->n_diffs > 0) {
			fprintf(f, "  closest successor differs in %d variable%s:\n", t->n_diffs, t->n_diffs == 1 ? "" : "s");
			for (int i = 0; i < t->n_diffs; i++)
				fprintf(f, "    %-10s expected %s\n    %-10s reached  %s\n", t->diffs[i].var, t->diffs[i].expected, "",
					t->diffs[i].reached);
		} else if (t->n_diffs < 0 && !trace_accepted(r) && r->verdict == MC_OK && t->line > 1) {
			fprintf(f, "  the state that matched state %" PRId64 " has no successor\n", t->line - 1);
		}
		return;
	}
	if (trace_accepted(r)) {
		fprintf(f, "accepted: a behaviour matches all %" PRId64 " lines of %s (%" PRIu64 " state%s at the end)\n",
			t->log_len, t->log, t->frontier, t->frontier == 1 ? "" : "s");
		return;
	}
	if (r->verdict != MC_OK && r->verdict != MC_TEMPORAL && !(r->verdict == MC_POSTCONDITION && t->line >= 1 &&
									     t->line <= t->log_len)) {
		if (t->error_line >= 0)
			fprintf(f, "rejected: the error above, in the behaviour's state at log line %" PRId64 " of %" PRId64
				" of %s\n", t->error_line, t->log_len, t->log);
		else
			fprintf(f, "rejected: the error above (the search got to log line %" PRId64 " of %" PRId64 " of %s)\n",
				t->line, t->log_len, t->log);
		return;
	}
	fprintf(f, "rejected at log line %" PRId64 " of %" PRId64 " (%s[%" PRId64 "]): no successor of the %" PRIu64
		" state%s that matched line %" PRId64 " matches it\n",
		t->line, t->log_len, t->log, t->line, t->frontier, t->frontier == 1 ? "" : "s", t->line - 1);
	if (t->entry) {
		struct spt_buf b = { 0 };
		spt_json_write(&b, t->entry, 0, NULL);
		fprintf(f, "  line %" PRId64 ": %.*s\n", t->line, (int)b.len, b.p ? b.p : "");
		spt_buf_free(&b);
	}
	const struct en_diag *d = &t->closest;
	if (d->depth >= 0) {
		char src[1024];
		const char *text = source_at(d->pos, src, sizeof(src));
		fprintf(f, "  closest: %s%s%s%s:%u:%u: %s is false\n", d->action ? "in " : "", d->action ? d->action->name : "",
			d->action ? ", " : "", d->pos.file ? d->pos.file : "?", d->pos.line, d->pos.col, text ? text : "a guard");
		if (d->sides)
			fprintf(f, "    left:  %s\n    right: %s\n", d->lhs, d->rhs);
	}
}

/* One field of an ALIAS record as TLC's PrintTLCState prints it: "/\\ k = v" ("k = v" alone), or
 * the record's _format string with its two %s for k and v (%n a new line, %% a per cent). */
static void print_alias_field(FILE *f, const char *format, bool alone, const char *k, spt_val *v)
{
	if (!format) {
		fprintf(f, "%s%s = ", alone ? "" : "/\\ ", k);
		spt_value_print(f, v);
		fputc('\n', f);
		return;
	}
	int arg = 0;
	for (const char *p = format; *p; p++) {
		if (p[0] != '%' || !p[1]) {
			fputc(*p, f);
			continue;
		}
		p++;
		if (*p == 's' && arg == 0)
			fputs(k, f), arg++;
		else if (*p == 's' && arg == 1)
			spt_value_print(f, v), arg++;
		else if (*p == 'n')
			fputc('\n', f);
		else if (*p == '%')
			fputc('%', f);
		else
			fputc('%', f), fputc(*p, f);
	}
}

static void print_alias(FILE *f, const struct mc_result *r, spt_val *rec)
{
	spt_val *fmt = spt_rec_get(rec, "_format");
	const char *format = fmt && fmt->kind == SPT_STR ? fmt->u.s : NULL;
	bool alone = rec->n - (fmt != NULL) == 1;
	if (r->alias_order && !rec->u.fn.order) { /* the constructor's order; each field once */
		for (uint32_t i = 0; i < r->n_alias_order; i++) {
			spt_val *v = strcmp(r->alias_order[i], "_format") ? spt_rec_get(rec, r->alias_order[i]) : NULL;
			if (v)
				print_alias_field(f, format, alone, r->alias_order[i], v);
		}
		return;
	}
	for (uint32_t i = 0; i < rec->n; i++) { /* the order written where the record knows it */
		uint32_t k = rec->u.fn.order ? rec->u.fn.order[i] : i;
		if (rec->u.fn.keys[k]->kind == SPT_STR && strcmp(rec->u.fn.keys[k]->u.s, "_format"))
			print_alias_field(f, format, alone, rec->u.fn.keys[k]->u.s, rec->u.fn.vals[k]);
	}
}

static void print_state(FILE *f, const struct mc_result *r, const struct mc_step *st)
{
	if (st->alias) {
		print_alias(f, r, st->alias);
		return;
	}
	for (uint32_t i = 0; i < r->n_vars; i++) {
		fprintf(f, "%s%s = ", r->n_vars > 1 ? "/\\ " : "", r->vars[i]);
		spt_value_print(f, st->vals[i]);
		fputc('\n', f);
	}
}

static void print_text(const struct mc_result *r, const struct check_model_opts *o)
{
	FILE *f = stdout;
	switch (r->verdict) {
	case MC_OK: break;
	case MC_INVARIANT: fprintf(f, "Error: Invariant %s is violated.\n", r->what); break;
	case MC_PROPERTY: fprintf(f, "Error: Property %s is violated.\n", r->what); break;
	case MC_TEMPORAL: fprintf(f, "Error: Temporal property %s was violated.\n", r->what); break;
	case MC_DEADLOCK: fprintf(f, "Error: Deadlock reached.\n"); break;
	case MC_ASSUMPTION: fprintf(f, "Error: Assumption %s is false.\n", r->what); break;
	case MC_EVAL_ERROR: fprintf(f, "Error: %s\n", r->msg); break;
	case MC_POSTCONDITION: fprintf(f, "Error: Postcondition %s is false.\n", r->what); break;
	case MC_LIVENESS: fprintf(f, "Error: Temporal properties were violated.\n(property %s)\n", r->what); break;
	}
	if (r->n_trace) {
		/* A trace spec's behaviour is as long as its log: its last state says enough. */
		uint32_t from = (o->trace_spec || o->states) && r->n_trace > 1 ? r->n_trace - 1 : 0;
		if (from && r->verdict == MC_OK)
			fprintf(f, "A behaviour to the furthest log line; its last state (its %u states are in --json's trace):\n",
				r->n_trace);
		else if (from)
			fprintf(f, "Error: The behavior's last state (its %u states are in --json's trace):\n", r->n_trace);
		else
			fprintf(f, "Error: The behavior up to this point is:\n");
		for (uint32_t i = from; i < r->n_trace; i++) {
			const struct mc_step *st = &r->trace[i];
			if (st->pos.file) {
				const char *base = strrchr(st->pos.file, '/');
				base = base ? base + 1 : st->pos.file;
				fprintf(f, "State %u: <%s line %u, col %u of module %.*s>\n", i + 1, st->action, st->pos.line,
					st->pos.col, (int)(strlen(base) > 4 ? strlen(base) - 4 : strlen(base)), base);
			} else {
				fprintf(f, "State %u: <%s>\n", i + 1, st->action);
			}
			print_state(f, r, st);
			fputc('\n', f);
		}
	}
	if (r->verdict == MC_OK && !o->trace_spec && !o->states)
		fprintf(f, "Model checking completed. No error has been found.\n");
	if (r->verdict != MC_ASSUMPTION) {
		fprintf(f, "%" PRIu64 " states generated, %" PRIu64 " distinct states found, %" PRIu64 " states left on queue.\n",
			r->generated, r->distinct, r->queue);
		fprintf(f, "The depth of the complete state graph search is %" PRIu64 ".\n", r->depth);
		if (r->verdict == MC_OK && r->distinct)
			fprintf(f, "The average outdegree of the complete state graph is %.0f (minimum is %u, the maximum %u).\n",
				r->mean_out, r->min_out, r->max_out);
	}
	fprintf(f, "Finished in %.2f s (%u worker%s, %.0f distinct states/s).\n", r->seconds, o->workers,
		o->workers == 1 ? "" : "s", r->seconds > 0 ? (double)r->distinct / r->seconds : 0);
	if (o->trace_spec || o->states)
		print_trace_text(r, o);
}

static void json_value(struct spt_buf *b, spt_val *v)
{
	spt_json_write(b, v, 0, NULL);
}

static void json_text(struct spt_buf *b, spt_val *v)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);
	if (f) {
		spt_value_print(f, v);
		fclose(f);
	}
	spt_buf_json_str(b, t ? t : "", t ? strlen(t) : 0);
	free(t);
}

static void print_json(const struct mc_result *r, const struct check_model_opts *o)
{
	struct spt_buf b = { 0 };
	spt_buf_printf(&b, "{\"verdict\":\"%s\",\"ok\":%s", verdict_name(r->verdict), r->verdict == MC_OK ? "true" : "false");
	if (r->what[0] && r->verdict != MC_EVAL_ERROR) {
		spt_buf_puts(&b, ",\"violated\":");
		spt_buf_json_str(&b, r->what, strlen(r->what));
	}
	if (r->msg[0]) {
		spt_buf_puts(&b, ",\"message\":");
		spt_buf_json_str(&b, r->msg, strlen(r->msg));
	}
	spt_buf_printf(&b,
		       ",\"initial\":{\"generated\":%" PRIu64 ",\"distinct\":%" PRIu64 "},\"generated\":%" PRIu64
		       ",\"distinct\":%" PRIu64 ",\"queue\":%" PRIu64 ",\"depth\":%" PRIu64
		       ",\"outdegree\":{\"min\":%u,\"max\":%u,\"mean\":%.3f},\"seconds\":%.3f,\"workers\":%u,\"fp_bytes\":%zu",
		       r->init_generated, r->init_distinct, r->generated, r->distinct, r->queue, r->depth, r->min_out,
		       r->max_out, r->mean_out, r->seconds, o->workers, r->fp_bytes);
	if (r->n_trace) {
		spt_buf_puts(&b, ",\"trace\":[");
		for (uint32_t i = 0; i < r->n_trace; i++) {
			const struct mc_step *st = &r->trace[i];
			spt_buf_puts(&b, i ? ",{\"action\":" : "{\"action\":");
			spt_buf_json_str(&b, st->action, strlen(st->action));
			if (st->pos.file) {
				spt_buf_puts(&b, ",\"position\":{\"file\":");
				spt_buf_json_str(&b, st->pos.file, strlen(st->pos.file));
				spt_buf_printf(&b, ",\"line\":%u,\"col\":%u}", st->pos.line, st->pos.col);
			}
			spt_buf_puts(&b, ",\"state\":{");
			for (uint32_t v = 0; v < r->n_vars; v++) {
				spt_buf_printf(&b, "%s", v ? "," : "");
				spt_buf_json_str(&b, r->vars[v], strlen(r->vars[v]));
				spt_buf_putc(&b, ':');
				json_value(&b, st->vals[v]);
			}
			spt_buf_puts(&b, "},\"tla\":{");
			for (uint32_t v = 0; v < r->n_vars; v++) {
				spt_buf_printf(&b, "%s", v ? "," : "");
				spt_buf_json_str(&b, r->vars[v], strlen(r->vars[v]));
				spt_buf_putc(&b, ':');
				json_text(&b, st->vals[v]);
			}
			spt_buf_putc(&b, '}');
			if (st->alias) {
				spt_buf_puts(&b, ",\"alias\":");
				json_value(&b, st->alias);
			}
			spt_buf_putc(&b, '}');
		}
		spt_buf_putc(&b, ']');
	}
	const struct mc_trace_outcome *t = &r->trace_spec;
	if (o->trace_spec || o->states) {
		spt_buf_printf(&b, ",\"trace_spec\":{\"verdict\":\"%s\",\"cursor\":", trace_accepted(r) ? "accepted" : "rejected");
		const char *cursor = t->cursor ? t->cursor : "", *log = t->log ? t->log : "";
		spt_buf_json_str(&b, cursor, strlen(cursor));
		spt_buf_puts(&b, ",\"log\":");
		spt_buf_json_str(&b, log, strlen(log));
		spt_buf_printf(&b, ",\"log_length\":%" PRId64 ",\"line\":%" PRId64 ",\"frontier\":%" PRIu64, t->log_len,
			       t->line, t->frontier);
		if (t->error_line >= 0)
			spt_buf_printf(&b, ",\"error_line\":%" PRId64, t->error_line);
		if (t->entry) {
			spt_buf_puts(&b, ",\"entry\":");
			json_value(&b, t->entry);
		}
		if (t->n_diffs >= 0) {
			spt_buf_puts(&b, ",\"differs\":[");
			for (int i = 0; i < t->n_diffs; i++) {
				spt_buf_puts(&b, i ? ",{\"var\":" : "{\"var\":");
				spt_buf_json_str(&b, t->diffs[i].var, strlen(t->diffs[i].var));
				spt_buf_puts(&b, ",\"expected\":");
				spt_buf_json_str(&b, t->diffs[i].expected, strlen(t->diffs[i].expected));
				spt_buf_puts(&b, ",\"reached\":");
				spt_buf_json_str(&b, t->diffs[i].reached, strlen(t->diffs[i].reached));
				spt_buf_putc(&b, '}');
			}
			spt_buf_putc(&b, ']');
		}
		const struct en_diag *d = &t->closest;
		if (d->depth >= 0) {
			spt_buf_puts(&b, ",\"closest\":{\"position\":{\"file\":");
			spt_buf_json_str(&b, d->pos.file ? d->pos.file : "", d->pos.file ? strlen(d->pos.file) : 0);
			spt_buf_printf(&b, ",\"line\":%u,\"col\":%u}", d->pos.line, d->pos.col);
			if (d->action) {
				spt_buf_puts(&b, ",\"action\":");
				spt_buf_json_str(&b, d->action->name, strlen(d->action->name));
			}
			char src[1024];
			const char *text = source_at(d->pos, src, sizeof(src));
			if (text) {
				spt_buf_puts(&b, ",\"text\":");
				spt_buf_json_str(&b, text, strlen(text));
			}
			if (d->sides) {
				spt_buf_puts(&b, ",\"op\":");
				spt_buf_json_str(&b, d->op, strlen(d->op));
				spt_buf_puts(&b, ",\"left\":");
				spt_buf_json_str(&b, d->lhs, strlen(d->lhs));
				spt_buf_puts(&b, ",\"right\":");
				spt_buf_json_str(&b, d->rhs, strlen(d->rhs));
			}
			spt_buf_putc(&b, '}');
		}
		spt_buf_putc(&b, '}');
	}
	if (r->warnings[0]) {
		spt_buf_puts(&b, ",\"warnings\":");
		spt_buf_json_str(&b, r->warnings, strlen(r->warnings));
	}
	spt_buf_puts(&b, "}\n");
	cli_flush(&b, stdout);
	spt_buf_free(&b);
}

/* A JSON array of states (objects of variables), as TLC's -loadTrace json reads one. */
static int read_states(struct cli *c, const char *path, struct spt_arena *a, spt_val **out)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return cli_fail(c, "cannot open the state trace %s: %s", path, strerror(errno));
	char *text = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 65536 > cap) {
			char *nt = realloc(text, cap = cap ? cap * 2 : 1 << 20);
			if (!nt) {
				free(text);
				fclose(f);
				return cli_fail(c, "out of memory reading %s", path);
			}
			text = nt;
		}
		size_t got = fread(text + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	struct spt_json_error je;
	memset(&je, 0, sizeof(je));
	int rc = spt_json_parse(a, text, n, 0, out, &je);
	if (rc) {
		spt_json_locate(text, n, &je);
		free(text);
		return cli_fail(c, "%s:%u:%u: %s", path, je.line, je.col, rc == -ENOMEM ? "out of memory" : je.msg);
	}
	free(text);
	return 0;
}

int check_model(struct cli *c, const struct check_model_opts *o)
{
	struct spt_arena states_arena;
	spt_arena_init(&states_arena);
	spt_val *states = o->states_val;
	if (o->states && !states) {
		int src = read_states(c, o->states, &states_arena, &states);
		if (src) {
			spt_arena_fini(&states_arena);
			return src;
		}
	}
	struct mc_opts mo = { o->spec, o->cfg, o->workers, o->no_deadlock ? 0 : -1, o->no_memo, progress, c, o->max_states,
			      o->trace_spec, states, o->states };
	struct mc_result r;
	struct check_error err;
	int rc = mc_run(&mo, &r, &err), code;
	cli_progress_done(c);
	if (rc) {
		code = rc == -ENOTSUP ? cli_fail(c, "unsupported: %s", err.msg) : cli_fail(c, "%s", err.msg);
		goto out;
	}
	if (r.warnings[0] && !c->json)
		cli_warn(c, "%s", r.warnings);
	if (c->json)
		print_json(&r, o);
	else
		print_text(&r, o);
	fflush(stdout);
	code = exit_code(r.verdict);
	if ((o->trace_spec || o->states) && r.verdict == MC_OK && !trace_accepted(&r))
		code = 12; /* the search ended before the log did */
out:
	mc_result_free(&r);
	spt_arena_fini(&states_arena);
	return code;
}
