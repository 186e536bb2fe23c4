/* spectap check: Transition Validation of canonical windows against a TLA+ spec. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "mapping.h"
#include "cli.h"
#include "commands.h"
#include "spectap/json.h"

static const char usage[] =
	"usage: spectap check --spec S.tla [--cfg S.cfg] --windows W.ndjson --action A [--json]\n"
	"       spectap check --spec S.tla [--cfg S.cfg] --map M.tla FILE.spt [--json]\n"
	"\n"
	"Transition Validation: for every window of W (one JSON object per line with\n"
	"pre_state, post_state, and optionally window_id, action, params, input), decides whether\n"
	"action A of the spec, with some binding of its parameters, reaches a state whose\n"
	"variables equal the window's post_state from its pre_state in one step. Variables\n"
	"missing from pre_state range over what Init allows; missing from post_state are not\n"
	"compared. Parameters range over the sets Next quantifies them over. JSON values\n"
	"become TLA+ values as TLC's Json module makes them (objects: records, arrays:\n"
	"sequences), so windows must be written in the spec's own value space.\n"
	"\n"
	"  --spec S.tla     the spec (modules it EXTENDS are read from its directory)\n"
	"  --cfg S.cfg      its model configuration (default: S.cfg beside S.tla, if any)\n"
	"  --windows W      canonical windows, NDJSON\n"
	"  --action A       the action to check (windows naming another action are skipped)\n"
	"  --map M.tla      check a trace: M (docs/mapping.md) cuts it into windows of every\n"
	"                   action it names, and each is checked as above; with --windows,\n"
	"                   M's WindowVars(state) and WindowParams(window) convert each window\n"
	"  --max-failures N diagnoses listed per action (default 10; all are counted)\n"
	"  --json           {\"actions\":{A:{\"windows\":n,\"passed\":k,\"rate\":r,\"score\":0|1,\"failures\":[...]}},\"score\":s}\n"
	"  -h, --help       this text\n"
	"\n"
	"Exit status: 0 when the check ran, whatever the verdicts; 1 when the spec, the cfg or\n"
	"a window could not be read or evaluated (the message names the file, line and column).\n";

struct failure {
	char *id;
	char *text;   /* plain diagnosis */
	char *json;   /* JSON diagnosis */
};

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

static char *window_id(spt_val *w, uint64_t line)
{
	spt_val *id = spt_rec_get(w, "window_id");
	struct spt_buf b = { 0 };
	if (id)
		spt_json_write(&b, id, 0, NULL);
	else
		spt_buf_printf(&b, "%" PRIu64, line);
	return b.p;
}

/* id: the window's id as JSON; where: "line 3" / ",\"line\":3" and the like. */
static struct failure diagnose(const char *action, char *id, const char *where, const char *where_json,
			       const struct window_result *r)
{
	struct failure f = { id, NULL, NULL };
	struct spt_buf t = { 0 }, j = { 0 };
	spt_buf_printf(&t, "window %s (%s) FAILED: ", f.id, where);
	spt_buf_puts(&j, "{\"window_id\":");
	spt_buf_puts(&j, f.id ? f.id : "null");
	spt_buf_puts(&j, where_json);
	if (r->no_successor) {
		spt_buf_printf(&t, "%s is not enabled in the pre-state (no binding of its parameters has a successor)\n", action);
		spt_buf_puts(&j, ",\"enabled\":false,\"differs\":[]}");
	} else {
		spt_buf_printf(&t, "no successor of %s matches the post-state; the closest", action);
		if (r->binding)
			spt_buf_printf(&t, " (parameters %s)", r->binding);
		spt_buf_printf(&t, " differs in %u variable%s:\n", r->n_diffs, r->n_diffs == 1 ? "" : "s");
		spt_buf_puts(&j, ",\"enabled\":true,\"differs\":[");
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
			char *e = show(r->diffs[i].expected), *g = show(r->diffs[i].reached);
			spt_buf_printf(&t, "    %-16s expected %s\n    %-16s reached  %s\n", r->diffs[i].var, e ? e : "?", "", g ? g : "?");
			spt_buf_printf(&j, "%s\"%s\":{\"expected\":", i ? "," : "", r->diffs[i].var);
			spt_buf_json_str(&j, e ? e : "", e ? strlen(e) : 0);
			spt_buf_puts(&j, ",\"reached\":");
			spt_buf_json_str(&j, g ? g : "", g ? strlen(g) : 0);
			spt_buf_putc(&j, '}');
			free(e);
			free(g);
		}
		spt_buf_puts(&j, "}}}");
	}
	f.text = t.p;
	f.json = j.p;
	return f;
}

struct tally {
	char *action;
	uint64_t windows, passed, skipped, listed;
	struct failure *fails;
	size_t n_fails;
	double seconds;
};

/* With --map: the mapping's WindowVars(state) and WindowParams(window), when it defines them,
 * turn a window written in another value space into the spec's. */
static int convert(struct checker *ck, spt_val **pre, spt_val **post, spt_val *w, spt_val **params,
		   struct check_error *err)
{
	spt_val *v;
	int rc;
	spt_val **states[2] = { pre, post };
	for (int i = 0; i < 2; i++) {
		if ((rc = checker_call(ck, "WindowVars", states[i], 1, &v, err)) < 0)
			return rc;
		if (rc == 0) {
			if (!spt_is_fun(v) || (v->n && v->kind != SPT_REC)) {
				snprintf(err->msg, sizeof(err->msg), "WindowVars must give a record of variables");
				return -EINVAL;
			}
			*states[i] = v;
		}
	}
	if ((rc = checker_call(ck, "WindowParams", &w, 1, &v, err)) < 0)
		return rc;
	if (rc == 0)
		*params = v;
	return 0;
}

static int check_file(struct cli *c, struct checker *ck, const char *path, const char *action,
		      uint64_t max_failures, bool mapped, struct tally *t)
{
	struct cli_input in;
	int rc = cli_input_open(c, path, &in);
	if (rc)
		return rc;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *p = in.data, *end = in.data + in.len;
	uint64_t line = 0;
	rc = CLI_OK;
	while (p < end && rc == CLI_OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		line++;
		const char *l = p;
		p += len + (nl ? 1 : 0);
		size_t k = 0;
		while (k < len && (l[k] == ' ' || l[k] == '\t' || l[k] == '\r'))
			k++;
		if (k == len)
			continue;
		struct spt_arena *a = checker_window_arena(ck);
		spt_arena_reset(a);
		spt_val *w;
		struct spt_json_error je = { 0 };
		if (spt_json_parse(a, l, len, 0, &w, &je)) {
			rc = cli_fail(c, "%s:%" PRIu64 ":%u: %s", in.name, line, je.col, je.msg);
			break;
		}
		spt_val *pre = w->kind == SPT_REC ? spt_rec_get(w, "pre_state") : NULL;
		spt_val *post = w->kind == SPT_REC ? spt_rec_get(w, "post_state") : NULL;
		if (!pre || !post || !spt_is_fun(pre) || !spt_is_fun(post) || (pre->n && pre->kind != SPT_REC) ||
		    (post->n && post->kind != SPT_REC)) {
			rc = cli_fail(c, "%s:%" PRIu64 ":1: a window needs \"pre_state\" and \"post_state\" objects", in.name, line);
			break;
		}
		spt_val *act = spt_rec_get(w, "action");
		if (act && (act->kind != SPT_STR || strcmp(act->u.s, action))) {
			t->skipped++;
			continue;
		}
		struct window_result res;
		struct check_error err;
		/* Windows that spectap windows wrote carry the mapping's parameter binding. */
		spt_val *params = spt_rec_get(w, "params");
		if (mapped && (convert(ck, &pre, &post, w, &params, &err))) {
			rc = cli_fail(c, "%s (window at %s:%" PRIu64 ")", err.msg, in.name, line);
			break;
		}
		if (checker_window(ck, action, pre->n ? pre : NULL, post->n ? post : NULL, params, &res, &err)) {
			rc = cli_fail(c, "%s (window at %s:%" PRIu64 ")", err.msg, in.name, line);
			break;
		}
		t->windows++;
		if (res.passed) {
			t->passed++;
		} else if (t->listed < max_failures) {
			struct failure *n = realloc(t->fails, (t->n_fails + 1) * sizeof(*n));
			if (!n) {
				rc = cli_fail(c, "out of memory");
				break;
			}
			t->fails = n;
			char where[64], where_json[64];
			snprintf(where, sizeof(where), "line %" PRIu64, line);
			snprintf(where_json, sizeof(where_json), ",\"line\":%" PRIu64, line);
			t->fails[t->n_fails++] = diagnose(action, window_id(w, line), where, where_json, &res);
			t->listed++;
		}
		if ((t->windows & 0xff) == 0)
			cli_progress(c, "%" PRIu64 " windows, %" PRIu64 " passed", t->windows, t->passed);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cli_progress_done(c);
	cli_input_close(&in);
	return rc;
}

static void report_json(const struct tally *t)
{
	double rate = t->windows ? (double)t->passed / (double)t->windows : 0.0;
	int score = t->windows && t->passed == t->windows;
	cli_json_str(stdout, t->action);
	printf(":{\"windows\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"rate\":%.4f,\"score\":%d,\"skipped\":%" PRIu64
	       ",\"seconds\":%.3f,\"failures\":[",
	       t->windows, t->passed, rate, score, t->skipped, t->seconds);
	for (size_t i = 0; i < t->n_fails; i++)
		printf("%s%s", i ? "," : "", t->fails[i].json ? t->fails[i].json : "null");
	printf("]}");
}

static void report_text(const struct tally *t)
{
	double rate = t->windows ? (double)t->passed / (double)t->windows : 0.0;
	int score = t->windows && t->passed == t->windows;
	printf("action %s: %" PRIu64 " windows, %" PRIu64 " passed (%.1f%%), score %d", t->action, t->windows, t->passed,
	       100.0 * rate, score);
	if (t->skipped)
		printf("; %" PRIu64 " windows of other actions skipped", t->skipped);
	printf("  [%.3f s, %.0f windows/s]\n", t->seconds, t->seconds > 0 ? (double)t->windows / t->seconds : 0.0);
	for (size_t i = 0; i < t->n_fails; i++)
		printf("  %s", t->fails[i].text ? t->fails[i].text : "?\n");
	if (t->windows > t->passed && t->n_fails < t->windows - t->passed)
		printf("  ... %" PRIu64 " more failing windows (--max-failures)\n", t->windows - t->passed - t->n_fails);
}

/* Per action, then the score: the mean over actions that have windows (SysMoBench's rule). */
static void report(struct cli *c, const struct tally *ts, size_t n)
{
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
		printf("{\"actions\":{");
		for (size_t i = 0; i < n; i++) {
			printf(i ? "," : "");
			report_json(&ts[i]);
		}
		printf("},\"peak_rss_kb\":%ld", ru.ru_maxrss);
		if (with)
			printf(",\"score\":%g}\n", sum / (double)with);
		else
			printf(",\"score\":null}\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		report_text(&ts[i]);
	if (!with)
		printf("score: none (no windows: actions without windows are left out)\n");
	else
		printf("score: %g (mean over %zu action%s with windows)\n", sum / (double)with, with, with == 1 ? "" : "s");
}

static void free_tally(struct tally *t)
{
	for (size_t i = 0; i < t->n_fails; i++) {
		free(t->fails[i].id);
		free(t->fails[i].text);
		free(t->fails[i].json);
	}
	free(t->fails);
	free(t->action);
}

/* ---- a trace through a mapping ---- */

struct mapped {
	struct cli *c;
	struct checker *ck;
	struct tally *ts;
	size_t n;
	uint64_t max_failures;
	int failed;
};

static struct tally *tally_for(struct mapped *m, const char *action)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->ts[i].action, action))
			return &m->ts[i];
	struct tally *n = realloc(m->ts, (m->n + 1) * sizeof(*n));
	if (!n)
		return NULL;
	m->ts = n;
	memset(&m->ts[m->n], 0, sizeof(m->ts[m->n]));
	if (!(m->ts[m->n].action = strdup(action)))
		return NULL;
	return &m->ts[m->n++];
}

static int check_mapped_window(void *arg, const struct map_window *w)
{
	struct mapped *m = arg;
	struct tally *t = tally_for(m, w->action);
	if (!t) {
		m->failed = cli_fail(m->c, "out of memory");
		return 1;
	}
	struct window_result res;
	struct check_error err;
	spt_arena_reset(checker_window_arena(m->ck)); /* the window's own values live in the mapping */
	if (checker_window(m->ck, w->action, w->pre->n ? w->pre : NULL, w->post->n ? w->post : NULL, w->params, &res, &err)) {
		m->failed = cli_fail(m->c, "%s (window %" PRIu64 ": node %s, events %" PRIu64 "..%" PRIu64 ")", err.msg, w->id,
				     w->node, w->first_event, w->last_event);
		return 1;
	}
	t->windows++;
	if (res.passed) {
		t->passed++;
	} else if (t->listed < m->max_failures) {
		struct failure *n = realloc(t->fails, (t->n_fails + 1) * sizeof(*n));
		char *id = malloc(24);
		if (!n || !id) {
			free(id);
			m->failed = cli_fail(m->c, "out of memory");
			return 1;
		}
		snprintf(id, 24, "%" PRIu64, w->id);
		char where[256], where_json[256];
		snprintf(where, sizeof(where), "node %s, events %" PRIu64 "..%" PRIu64, w->node, w->first_event, w->last_event);
		snprintf(where_json, sizeof(where_json), ",\"actor\":\"%s\",\"events\":[%" PRIu64 ",%" PRIu64 "]", w->node,
			 w->first_event, w->last_event);
		t->fails = n;
		t->fails[t->n_fails++] = diagnose(w->action, id, where, where_json, &res);
		t->listed++;
	}
	return 0;
}

static int check_trace(struct cli *c, const char *map, const char *spec, const char *cfg, const char *path,
		       uint64_t max_failures)
{
	struct mapping *mp;
	struct check_error err;
	if (mapping_new(map, spec, cfg, &mp, &err))
		return cli_fail(c, "%s", err.msg);
	struct spt_reader *r;
	int rc = cli_open_trace(c, path, &r);
	if (rc) {
		mapping_free(mp);
		return rc;
	}
	struct mapped m = { c, mapping_checker(mp), NULL, 0, max_failures, 0 };
	if (checker_warnings(m.ck))
		cli_warn(c, "%s", checker_warnings(m.ck));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = mapping_run(mp, r, check_mapped_window, &m, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc < 0)
		cli_fail(c, "%s", err.msg);
	if (rc || m.failed) {
		rc = CLI_FAIL;
	} else {
		double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		for (size_t i = 0; i < m.n; i++)
			m.ts[i].seconds = secs; /* one pass checks every action */
		cli_warn_damage(c, path, r);
		report(c, m.ts, m.n);
		rc = CLI_OK;
	}
	for (size_t i = 0; i < m.n; i++)
		free_tally(&m.ts[i]);
	free(m.ts);
	spt_reader_close(r);
	mapping_free(mp);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	struct cli c = { .cmd = "check", .usage = usage };
	const char *spec = NULL, *cfg = NULL, *windows = NULL, *action = NULL, *map = NULL;
	uint64_t max_failures = 10;
	static const struct option longopts[] = {
		{ "spec", required_argument, NULL, 's' },    { "cfg", required_argument, NULL, 'c' },
		{ "windows", required_argument, NULL, 'w' }, { "action", required_argument, NULL, 'a' },
		{ "max-failures", required_argument, NULL, 'm' }, { "map", required_argument, NULL, 'M' },
		{ "json", no_argument, NULL, 'j' },          { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': spec = optarg; break;
		case 'c': cfg = optarg; break;
		case 'w': windows = optarg; break;
		case 'a': action = optarg; break;
		case 'M': map = optarg; break;
		case 'm':
			if (!cli_parse_u64(&c, "--max-failures", optarg, &max_failures))
				return CLI_USAGE;
			break;
		case 'j': break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (map && !windows) {
		if (!spec || optind + 1 != argc)
			return cli_usage_error(&c, "with --map: --spec S.tla and one FILE.spt (or --windows W --action A)");
		if (action)
			return cli_usage_error(&c, "--map on a trace checks every action it maps: --action is for window files");
		return check_trace(&c, map, spec, cfg, argv[optind], max_failures);
	}
	if (optind != argc)
		return cli_usage_error(&c, "unexpected argument '%s' (a .spt trace needs --map M.tla)", argv[optind]);
	if (!spec || !windows || !action)
		return cli_usage_error(&c, "--spec, --windows and --action are required");

	struct checker *ck;
	struct check_error err;
	if (map ? checker_new_mapped(map, spec, cfg, &ck, &err) : checker_new(spec, cfg, &ck, &err))
		return cli_fail(&c, "%s", err.msg);
	if (checker_warnings(ck))
		cli_warn(&c, "%s", checker_warnings(ck));
	uint32_t params;
	int rc;
	if (checker_action(ck, action, &params, &err)) {
		rc = cli_fail(&c, "%s", err.msg);
		goto out;
	}
	struct tally t = { 0 };
	if (!(t.action = strdup(action))) {
		rc = cli_fail(&c, "out of memory");
		goto out;
	}
	rc = check_file(&c, ck, windows, action, max_failures, map != NULL, &t);
	if (rc == CLI_OK)
		report(&c, &t, 1);
	free_tally(&t);
out:
	checker_free(ck);
	return rc;
}
