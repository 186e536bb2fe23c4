/* spectap check's tallies and reports (check_report.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check_report.h"
#include "value_diff.h"
#include "spectap/buf.h"
#include "spectap/json.h"

/* A diagnosis prints both sides whole up to this size, else the paths where they differ. */
#define DIFF_WHOLE_CHARS 160
#define DIFF_MAX_LINES 12
#define DIFF_SIDE_CHARS 100

static char *show(spt_val *v)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);
	if (!f)
		return NULL;
	spt_value_print(f, v);
	fclose(f);
	return t;
}

int check_diagnose(const char *action, const struct window_result *r, struct failure *f)
{
	struct spt_buf t = { 0 }, j = { 0 };
	if (r->error) {
		spt_buf_printf(&t, "%s\n", r->error);
		spt_buf_puts(&j, ",\"verdict\":\"error\",\"error\":");
		spt_buf_json_str(&j, r->error, strlen(r->error));
	} else if (r->no_successor) {
		spt_buf_printf(&t, "%s is not enabled in the pre-state (no binding of its parameters has a successor)\n", action);
		spt_buf_puts(&j, ",\"verdict\":\"failed\",\"enabled\":false,\"differs\":[]");
	} else {
		spt_buf_printf(&t, "no successor of %s matches the post-state; the closest", action);
		if (r->binding)
			spt_buf_printf(&t, " (parameters %s)", r->binding);
		spt_buf_printf(&t, " differs in %u variable%s:\n", r->n_diffs, r->n_diffs == 1 ? "" : "s");
		spt_buf_puts(&j, ",\"verdict\":\"failed\",\"enabled\":true,\"differs\":[");
		for (uint32_t i = 0; i < r->n_diffs; i++)
			spt_buf_printf(&j, "%s\"%s\"", i ? "," : "", r->diffs[i].var);
		spt_buf_puts(&j, "],\"closest\":{");
		if (r->binding) {
			spt_buf_puts(&j, "\"binding\":");
			spt_buf_json_str(&j, r->binding, strlen(r->binding));
			spt_buf_putc(&j, ',');
		}
		spt_buf_puts(&j, "\"vars\":{");
		for (uint32_t i = 0; i < r->n_diffs; i++) {
			const struct var_diff *v = &r->diffs[i];
			char *e = show(v->expected), *g = show(v->reached);
			if (e && g && strlen(e) + strlen(g) <= DIFF_WHOLE_CHARS) {
				spt_buf_printf(&t, "    %-16s expected %s\n    %-16s reached  %s\n", v->var, e, "", g);
			} else {
				/* A large value (a log, a message set): only where it differs. */
				spt_buf_printf(&t, "    %-16s differs at:\n", v->var);
				value_diff(&t, v->var, v->expected, v->reached, "      ", DIFF_MAX_LINES, DIFF_SIDE_CHARS);
			}
			/* JSON values as the windows write them, and the exact TLA+ beside (JSON has no
			 * sets or model values). */
			spt_buf_printf(&j, "%s\"%s\":{\"expected\":", i ? "," : "", v->var);
			spt_json_write(&j, v->expected, 0, NULL);
			spt_buf_puts(&j, ",\"reached\":");
			spt_json_write(&j, v->reached, 0, NULL);
			spt_buf_puts(&j, ",\"expected_tla\":");
			spt_buf_json_str(&j, e ? e : "", e ? strlen(e) : 0);
			spt_buf_puts(&j, ",\"reached_tla\":");
			spt_buf_json_str(&j, g ? g : "", g ? strlen(g) : 0);
			spt_buf_putc(&j, '}');
			free(e);
			free(g);
		}
		spt_buf_puts(&j, "}}");
	}
	if (t.oom || j.oom) {
		spt_buf_free(&t);
		spt_buf_free(&j);
		return -ENOMEM;
	}
	f->body = t.p;
	f->error = r->error != NULL;
	f->body_json = j.p;
	return 0;
}

void failure_free(struct failure *f)
{
	free(f->id);
	free(f->where);
	free(f->where_json);
	free(f->body);
	free(f->body_json);
	memset(f, 0, sizeof(*f));
}

int tally_add_failure(struct tally *t, struct failure *f)
{
	struct failure *n = realloc(t->fails, (t->n_fails + 1) * sizeof(*n));
	if (!n) {
		failure_free(f);
		return -ENOMEM;
	}
	t->fails = n;
	t->fails[t->n_fails++] = *f;
	memset(f, 0, sizeof(*f));
	t->listed++;
	return 0;
}

void tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->n_fails; i++)
		failure_free(&t->fails[i]);
	free(t->fails);
	free(t->action);
	memset(t, 0, sizeof(*t));
}

static void report_json(const struct tally *t)
{
	double rate = t->windows ? (double)t->passed / (double)t->windows : 0.0;
	int score = t->windows && t->passed == t->windows;
	cli_json_str(stdout, t->action);
	printf(":{\"windows\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"errors\":%" PRIu64
	       ",\"rate\":%.4f,\"score\":%d,\"skipped\":%" PRIu64 ",\"seconds\":%.3f,\"failures\":[",
	       t->windows, t->passed, t->windows - t->passed - t->errors, t->errors, rate, score, t->skipped, t->seconds);
	for (size_t i = 0; i < t->n_fails; i++) {
		const struct failure *f = &t->fails[i];
		printf("%s{\"window_id\":%s%s%s}", i ? "," : "", f->id ? f->id : "null", f->where_json ? f->where_json : "",
		       f->body_json ? f->body_json : "");
	}
	printf("]}");
}

static void report_text(const struct tally *t)
{
	double rate = t->windows ? (double)t->passed / (double)t->windows : 0.0;
	int score = t->windows && t->passed == t->windows;
	printf("action %s: %" PRIu64 " windows, %" PRIu64 " passed (%.1f%%), score %d", t->action, t->windows, t->passed,
	       100.0 * rate, score);
	if (t->errors)
		printf("; %" PRIu64 " could not be evaluated", t->errors);
	if (t->skipped)
		printf("; %" PRIu64 " windows of other actions skipped", t->skipped);
	printf("  [%.3f s, %.0f windows/s]\n", t->seconds, t->seconds > 0 ? (double)t->windows / t->seconds : 0.0);
	for (size_t i = 0; i < t->n_fails; i++) {
		const struct failure *f = &t->fails[i];
		printf("  window %s (%s) %s: %s", f->id ? f->id : "?", f->where ? f->where : "?", f->error ? "ERROR" : "FAILED",
		       f->body ? f->body : "?\n");
	}
	if (t->windows > t->passed && t->n_fails < t->windows - t->passed)
		printf("  ... %" PRIu64 " more windows failed or could not be evaluated (--max-failures)\n",
		       t->windows - t->passed - t->n_fails);
}

size_t check_unwindowed(const struct tally *ts, size_t n, const char *const *mapped, size_t n_mapped, const char **out)
{
	size_t k = 0;
	for (size_t i = 0; i < n_mapped; i++) {
		bool seen = false;
		for (size_t j = 0; j < n && !seen; j++)
			seen = ts[j].windows && !strcmp(ts[j].action, mapped[i]);
		if (!seen)
			out[k++] = mapped[i];
	}
	return k;
}

int check_exit(struct cli *c, const struct tally *ts, size_t n, const char *const *unwindowed, size_t n_unwindowed,
	       bool allow_empty)
{
	uint64_t windows = 0, errors = 0;
	for (size_t i = 0; i < n; i++) {
		windows += ts[i].windows;
		errors += ts[i].errors;
	}
	if (errors) {
		cli_warn(c, "%" PRIu64 " window%s could not be evaluated: %s verdict is an error (listed in the report); the other "
			 "windows were checked", errors, errors == 1 ? "" : "s", errors == 1 ? "its" : "their");
		return CLI_FAIL;
	}
	if (allow_empty)
		return CLI_OK;
	if (!windows) {
		cli_warn(c, "no window was checked, so nothing was verified: the trace has no step the mapping's WindowStart names "
			 "(or the window file none of the action); --allow-empty makes this exit 0");
		return CLI_EMPTY;
	}
	if (n_unwindowed) {
		struct spt_buf b = { 0 };
		for (size_t i = 0; i < n_unwindowed; i++)
			spt_buf_printf(&b, "%s%s", i ? ", " : "", unwindowed[i]);
		cli_warn(c, "no window of %s, which the mapping's WindowStart can name: %s unchecked; --allow-empty makes this "
			 "exit 0", b.p ? b.p : "?", n_unwindowed == 1 ? "that action is" : "those actions are");
		spt_buf_free(&b);
		return CLI_EMPTY;
	}
	return CLI_OK;
}

static void trace_line_json(const struct trace_summary *t)
{
	cli_json_str(stdout, t->path);
	printf(":{\"windows\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"checked\":%s", t->windows,
	       t->passed, t->errors, t->failed ? "false" : "true");
	if (!t->failed)
		cli_json_damage(stdout, &t->info);
	printf("}");
}

static void trace_line_text(const struct trace_summary *t)
{
	if (t->failed) {
		printf("trace %s: could not be checked\n", t->path);
		return;
	}
	printf("trace %s: %" PRIu64 " windows, %" PRIu64 " passed", t->path, t->windows, t->passed);
	if (t->errors)
		printf(", %" PRIu64 " could not be evaluated", t->errors);
	if (t->info.damaged)
		printf(", DAMAGED (%" PRIu64 " events could not be read)", t->info.damaged_events);
	printf("\n");
}

void check_report(struct cli *c, const struct tally *ts, size_t n, const struct check_extras *x)
{
	static const struct check_extras none;
	if (!x)
		x = &none;
	const struct spt_trace_info *damage = x->damage;
	const char *const *unwindowed = x->unwindowed;
	size_t n_unwindowed = x->n_unwindowed;
	double sum = 0;
	size_t with = 0;
	for (size_t i = 0; i < n; i++) {
		if (ts[i].windows) {
			with++;
			sum += ts[i].passed == ts[i].windows;
		}
	}
	if (c->json) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("{");
		if (x->traces) {
			printf("\"traces\":{");
			for (size_t i = 0; i < x->n_traces; i++) {
				printf(i ? "," : "");
				trace_line_json(&x->traces[i]);
			}
			printf("},");
		}
		printf("\"actions\":{");
		for (size_t i = 0; i < n; i++) {
			printf(i ? "," : "");
			report_json(&ts[i]);
		}
		printf("},\"peak_rss_kb\":%ld", ru.ru_maxrss);
		if (damage)
			cli_json_damage(stdout, damage);
		printf(",\"unwindowed\":[");
		for (size_t i = 0; i < n_unwindowed; i++) {
			printf(i ? "," : "");
			cli_json_str(stdout, unwindowed[i]);
		}
		printf("],\"dropped_windows\":%" PRIu64, x->dropped);
		if (with)
			printf(",\"score\":%g}\n", sum / (double)with);
		else
			printf(",\"score\":null}\n");
		return;
	}
	for (size_t i = 0; i < x->n_traces; i++)
		trace_line_text(&x->traces[i]);
	if (x->traces)
		printf("totals over the %zu traces:\n", x->n_traces);
	for (size_t i = 0; i < n; i++)
		report_text(&ts[i]);
	for (size_t i = 0; i < n_unwindowed; i++)
		printf("action %s: no windows (the mapping's WindowStart can name it)\n", unwindowed[i]);
	if (x->dropped)
		printf("%" PRIu64 " window%s not checked: steps the trace did not see whole (the mapping's WindowDrop)\n",
		       x->dropped, x->dropped == 1 ? "" : "s");
	if (!with)
		printf("score: none (no windows: actions without windows are left out)\n");
	else
		printf("score: %g (mean over %zu action%s with windows)\n", sum / (double)with, with, with == 1 ? "" : "s");
	if (damage && damage->damaged)
		printf("trace DAMAGED: %" PRIu64 " chunks (%" PRIu64 " events)%s could not be read: their windows are "
		       "missing from these verdicts\n",
		       damage->damaged_chunks, damage->damaged_events,
		       damage->damaged_tail ? " and the end of the file" : "");
}

int check_tlc_results(struct cli *c, const char *path, const struct tally *ts, size_t n)
{
	FILE *f = cli_create_output(c, path, true);
	if (!f)
		return CLI_FAIL;
	fputc('{', f);
	for (size_t i = 0; i < n; i++) {
		const struct tally *t = &ts[i];
		fputs(i ? "," : "", f);
		cli_json_str(f, t->action);
		fprintf(f, ":{\"passes\":%" PRIu64 ",\"total\":%" PRIu64 ",\"rate\":%.4f,\"failures\":%" PRIu64
			   ",\"errors\":%" PRIu64 "}",
			t->passed, t->windows, t->windows ? (double)t->passed / (double)t->windows : 0.0,
			t->windows - t->passed - t->errors, t->errors);
	}
	fputs("}\n", f);
	return cli_close_output(c, f, path, !ferror(f));
}

void check_oom_hint(char *msg, size_t size)
{
	if (!strstr(msg, "out of memory"))
		return;
	size_t n = strlen(msg);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	snprintf(msg + n, size - n, "; spectap had %ld MB when memory ran out: check fewer windows at a time (a shorter "
		 "trace, fewer --jobs) or give it more memory (--max-memory MB, 0 for no limit; the default is 90%% "
		 "of what was available)", ru.ru_maxrss / 1024);
}
