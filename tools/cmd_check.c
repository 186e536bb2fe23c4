/* spectap check: Transition Validation of canonical windows against a TLA+ spec. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "check_trace.h"
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
	"  --jobs N         with --map: the mapping on one thread, N - 1 threads checking its\n"
	"                   windows (default 1); the verdicts and the report are the same with\n"
	"                   any number; worth it when checking, not mapping, dominates\n"
	"  --quiet          no progress line (there is none with --json either)\n"
	"  --no-cache       evaluate every application of a definition, cached or not (slower;\n"
	"                   to check that caching changes nothing)\n"
	"  --json           {\"actions\":{A:{\"windows\":n,\"passed\":k,\"rate\":r,\"score\":0|1,\"failures\":[...]}},\"score\":s}\n"
	"  -h, --help       this text\n"
	"\n"
	"Exit status: 0 when the check ran, whatever the verdicts; 1 when the spec, the cfg or\n"
	"a window could not be read or evaluated (the message names the file, line and column).\n";

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
		memo_collect(&checker_interp(ck)->memo); /* nothing holds a value of the last window */
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
			char where[64], where_json[64];
			snprintf(where, sizeof(where), "line %" PRIu64, line);
			snprintf(where_json, sizeof(where_json), ",\"line\":%" PRIu64, line);
			struct failure f = { .order = line, .id = window_id(w, line) };
			if (!f.id || !(f.where = strdup(where)) || !(f.where_json = strdup(where_json)) ||
			    check_diagnose(action, &res, &f) || tally_add_failure(t, &f)) {
				failure_free(&f);
				rc = cli_fail(c, "out of memory");
				break;
			}
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

int cmd_check(int argc, char **argv)
{
	struct cli c = { .cmd = "check", .usage = usage };
	const char *spec = NULL, *cfg = NULL, *windows = NULL, *action = NULL, *map = NULL;
	uint64_t max_failures = 10, jobs = 1;
	bool no_memo = false;
	static const struct option longopts[] = {
		{ "spec", required_argument, NULL, 's' },    { "cfg", required_argument, NULL, 'c' },
		{ "windows", required_argument, NULL, 'w' }, { "action", required_argument, NULL, 'a' },
		{ "max-failures", required_argument, NULL, 'm' }, { "map", required_argument, NULL, 'M' },
		{ "jobs", required_argument, NULL, 'J' },    { "quiet", no_argument, NULL, 'q' },
		{ "no-cache", no_argument, NULL, 'N' },
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
		case 'J':
			if (!cli_parse_u64(&c, "--jobs", optarg, &jobs))
				return CLI_USAGE;
			if (jobs < 1 || jobs > 64)
				return cli_usage_error(&c, "--jobs: %" PRIu64 " is not in 1..64", jobs);
			break;
		case 'q': c.quiet = true; break;
		case 'N': no_memo = true; break;
		case 'j': break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (map && !windows) {
		if (!spec || optind + 1 != argc)
			return cli_usage_error(&c, "with --map: --spec S.tla and one FILE.spt (or --windows W --action A)");
		if (action)
			return cli_usage_error(&c, "--map on a trace checks every action it maps: --action is for window files");
		struct check_trace_opts o = { map, spec, cfg, argv[optind], max_failures, (unsigned)jobs, no_memo };
		return check_trace(&c, &o);
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
	checker_interp(ck)->no_memo = no_memo;
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
		check_report(&c, &t, 1);
	tally_free(&t);
out:
	checker_free(ck);
	return rc;
}
