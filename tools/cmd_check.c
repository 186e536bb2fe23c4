/* spectap check: Transition Validation of canonical windows against a TLA+ spec. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "interp.h"
#include "check_model.h"
#include "check_trace.h"
#include "check_tv.h"
#include "cli.h"
#include "commands.h"
#include "line_reader.h"
#include "spectap/json.h"

static const char usage[] =
	"usage: spectap check --spec S.tla [--cfg S.cfg] --windows W.ndjson --action A [--json]\n"
	"       spectap check --spec S.tla [--cfg S.cfg] --map M.tla FILE.spt [--json]\n"
	"       spectap check --model S.tla [--cfg S.cfg] [--workers N] [--no-deadlock] [--json]\n"
	"       spectap check --trace-spec T.tla [--cfg T.cfg] [--json]   (log named by T's environment)\n"
	"       spectap check --whole --spec S.tla [--cfg S.cfg] --states T.json [--json]\n"
	"       spectap check --whole --spec S.tla [--cfg S.cfg] --map M.tla FILE.spt [--json]\n"
	"       spectap check --tv TV_A.tla [--cfg TV_A.cfg] [--windows W.ndjson] [--json]\n"
	"\n"
	"Transition Validation: for every window of W (one JSON object per line with\n"
	"pre_state, post_state, and optionally window_id, action, params, input; SysMoBench's\n"
	"pre, post and id spellings; or its stream form, a \"state\" per line, each window going\n"
	"from the state of the line before, a first {\"state\": ...} alone seeding it), decides whether\n"
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
	"  --jobs N         threads; the verdicts and the report are the same with any number.\n"
	"                   A window file (of more than 64 KiB) is cut into N parts (default: the\n"
	"                   machine's cores). A trace is mapped on one thread and its windows\n"
	"                   checked on N - 1 others (default 1: worth it only when checking, not\n"
	"                   mapping, dominates; on two cores two busy threads slow each other)\n"
	"  --quiet          no progress line (there is none with --json either)\n"
	"  --no-cache       evaluate every application of a definition, cached or not (slower;\n"
	"                   to check that caching changes nothing)\n"
	"  --max-steps N    evaluation steps one window (or the mapping, for one event) may take\n"
	"                   (default 100000000; 0: no limit): past it the window's verdict is an\n"
	"                   error, and the next goes on\n"
	"  --allow-empty    exit 0 when no window was checked, or none of an action the mapping's\n"
	"                   WindowStart names (else exit 4: a check of nothing is no success)\n"
	"  --tlc-results F  also write the verdicts per action as SysMoBench's transition\n"
	"                   validation reads them: F is its tlc_results.json, {action: {passes,\n"
	"                   total, rate, failures, errors}}\n"
	"  --timeout S      stop after S seconds (every mode, reading the modules too) with an\n"
	"                   error naming where it was\n"
	"  --max-memory MB  the memory spectap may allocate (every mode; traces are read from their\n"
	"                   files and do not count); past it, out of memory is an error naming where\n"
	"                   it was, not the machine's OOM kill (default: 90% of the memory available\n"
	"                   when it starts; 0: no limit)\n"
	"\n"
	"  --tv TV_A.tla    the benchmark's per-action wrapper module (SysMoBench's tv-eval skill),\n"
	"                   as it is: for each window of its windows file (--windows, default\n"
	"                   windows_A.ndjson beside it), with IOEnv.WINDOW_INDEX (--index-var) the\n"
	"                   window's line, the search TLC -dfid 2 -deadlock makes on TV_A.cfg; a\n"
	"                   window passes when the post-state violates the wrapper's invariant\n"
	"                   (NeverPost), as the skill counts TLC's exit 12. Reported per action A\n"
	"                   like windows (--json, --tlc-results)\n"
	"\n"
	"  --model S.tla    model checking, as TLC's breadth-first search: every state reachable\n"
	"                   from the cfg's INIT by NEXT (or its SPECIFICATION) is checked against\n"
	"                   its INVARIANTs, the safety parts of its PROPERTIES ([]P, [][A]_v) and\n"
	"                   deadlock, within its CONSTRAINTs and ACTION_CONSTRAINTs, with VIEW and\n"
	"                   SYMMETRY; states generated, distinct states and depth are counted as\n"
	"                   TLC counts them, and an error comes with a shortest behaviour to it.\n"
	"                   Liveness (<>P, []<>P, <>[]P, P ~> Q, WF/SF as properties) is decided\n"
	"                   on the behaviour graph, fair for the spec's WF/SF (one worker); any\n"
	"                   other temporal form is refused, named, never reported as checked\n"
	"  --trace-spec T.tla  trace validation as etcd-io/raft's and CCF's: T reads a log (Json's\n"
	"                   ndJsonDeserialize of IOEnv.JSON, say: set JSON=... as for TLC) and its\n"
	"                   behaviours match it line by line; searched as --model does. The log's\n"
	"                   cursor v is the variable of T's property [](v <= Len(Log) => ...)\n"
	"                   (TraceMatched). Verdict: accepted (a behaviour matched every line), or\n"
	"                   rejected at log line N, with the log entry, the number of states that\n"
	"                   matched line N - 1, and the closest miss (the action, the false\n"
	"                   conjunct, both sides of it) from a behaviour to line N (docs/model.md)\n"
	"  --whole --states T.json  whole-trace validation of a state trace, as TLC's -loadTrace\n"
	"                   json: T is a JSON array of objects, the k-th giving some of the spec's\n"
	"                   variables in the k-th state of a behaviour (values as the Json module\n"
	"                   reads them; an array stands for a set where the spec has one); the\n"
	"                   variables it leaves out are searched. Verdict as --trace-spec's, with\n"
	"                   the variables in which the closest successor differs\n"
	"  --whole --map M.tla FILE.spt  the same for a trace: M's windows, in the order they\n"
	"                   end, give the states (the first pre-state, then each post-state);\n"
	"                   the variables M does not give are searched\n"
	"  --workers N      threads searching (default 1)\n"
	"  --no-deadlock    a state without successors is no error (TLC's -deadlock)\n"
	"  --max-states N   stop with an error past N distinct states\n"
	"  --json           {\"actions\":{A:{\"windows\":n,\"passed\":k,\"failed\":f,\"errors\":e,\"rate\":r,\n"
	"                   \"score\":0|1,\"failures\":[{\"verdict\":\"failed\"|\"error\",...}]}},\"score\":s,\n"
	"                   \"unwindowed\":[A...],\"damage\":null|{...}}; values in failures are JSON\n"
	CLI_ALLOW_DAMAGE_HELP
	"  -h, --help       this text\n"
	"\n"
	"                   with --model: {\"verdict\":\"ok\"|\"invariant\"|\"property\"|\"deadlock\"|\n"
	"                   \"liveness\"|\"temporal\"|\"assumption\"|\"error\"|\"postcondition\",\n"
	"                   \"generated\":n, \"distinct\":n,\n"
	"                   \"depth\":n, \"trace\":[{\"action\", \"state\":{var: JSON value}, \"tla\"}]}\n"
	"\n"
	"A window whose action cannot be evaluated (an error in the spec or the mapping for its\n"
	"values: a function applied outside its domain, a CHOOSE that finds nothing) gets the\n"
	"verdict error, with the message and its position; the other windows are checked.\n"
	"\n"
	"Exit status: 0 when the check ran, whatever the verdicts; 1 when the spec, the cfg or\n"
	"a window could not be read, or some window could not be evaluated (after the report;\n"
	"the message names the file, line and column); 3 when the trace is damaged (the\n"
	"verdicts of what could be read are printed); 4 when nothing was checked (no window, or\n"
	"none of an action the mapping names; --allow-empty: 0).\n"
	"With --model, TLC's: 0 no error, 10 an assumption is false, 11 deadlock, 12 an\n"
	"invariant or property is violated, 13 a liveness property is violated, 1 an evaluation\n"
	"error or an unsupported construct.\n"
	"With --trace-spec and --states: 0 accepted, 12 rejected (or another of --model's codes).\n";

static char *window_id(spt_val *w, uint64_t line)
{
	spt_val *id = spt_rec_get(w, "window_id");
	if (!id)
		id = spt_rec_get(w, "id"); /* SysMoBench's spelling */
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

/* Checks the windows of lines data[0, len) (the first is line first_line) into t; on an error,
 * its message in err and -1 (0 when all went through). */
/* Whether the first record of a window file is the stream form's (a "state", no pre-state). */
static bool first_is_stream(const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val *w;
	struct spt_json_error je = { 0 };
	bool stream = !spt_json_parse(&a, p, nl ? (size_t)(nl - p) : (size_t)(end - p), 0, &w, &je) && w->kind == SPT_REC &&
		      spt_rec_get(w, "state") && !spt_rec_get(w, "pre_state") && !spt_rec_get(w, "pre");
	spt_arena_fini(&a);
	return stream;
}

/* A window's state: a record of variables (or the empty one). */
static bool is_state(spt_val *v) { return spt_is_fun(v) && (!v->n || v->kind == SPT_REC); }

static int check_lines(struct checker *ck, const char *name, struct line_reader *lr, uint64_t first_line,
		       const char *action, uint64_t max_failures, bool mapped, bool stream, struct tally *t, char *err_out,
		       size_t err_size, struct cli *progress)
{
	uint64_t line = first_line - 1;
	/* The stream form's last state (and the event form's last post-state): the pre-state of
	 * the next stream record. It outlives its line: two arenas, the older one reused. */
	struct spt_arena keep[2];
	spt_arena_init(&keep[0]);
	spt_arena_init(&keep[1]);
	int cur = 0, rc = 0;
	spt_val *prev = NULL;
	/* The lines share their keys and names: built once, by the reader. */
	struct spt_json_reader *jr = spt_json_reader_new();
	if (!jr) {
		snprintf(err_out, err_size, "out of memory");
		rc = -1;
		goto out;
	}
	for (;;) {
		const char *l;
		size_t n;
		int got = line_reader_next(lr, &l, &n);
		if (got < 0) {
			snprintf(err_out, err_size, "cannot read %s: %s", name, strerror(-got));
			rc = -1;
			goto out;
		}
		if (!got)
			break;
		line++;
		size_t k = 0;
		while (k < n && (l[k] == ' ' || l[k] == '\t' || l[k] == '\r'))
			k++;
		if (k == n)
			continue;
		struct spt_arena *a = checker_window_arena(ck);
		spt_arena_reset(a);
		memo_collect(&checker_interp(ck)->memo); /* nothing holds a value of the last window */
		spt_val *w;
		struct spt_json_error je = { 0 };
		if (spt_json_read(jr, a, l, n, 0, &w, &je)) {
			snprintf(err_out, err_size, "%s:%" PRIu64 ":%u: %s", name, line, je.col, je.msg);
			rc = -1;
			goto out;
		}
		/* The event form: pre_state and post_state (or SysMoBench's pre and post); the stream
		 * form: a state, whose window starts at the state of the record before. */
		spt_val *pre = w->kind == SPT_REC ? spt_rec_get(w, "pre_state") : NULL;
		spt_val *post = w->kind == SPT_REC ? spt_rec_get(w, "post_state") : NULL;
		if (!pre && !post && w->kind == SPT_REC) {
			pre = spt_rec_get(w, "pre");
			post = spt_rec_get(w, "post");
		}
		spt_val *state = !pre && !post && w->kind == SPT_REC ? spt_rec_get(w, "state") : NULL;
		if (state && !stream) {
			snprintf(err_out, err_size,
				 "%s:%" PRIu64 ":1: a \"state\" record in a file whose first record is a window: a stream of "
				 "states starts the file (a {\"state\": ...} first)", name, line);
			rc = -1;
			goto out;
		}
		if (state) {
			pre = prev;
			post = state;
		}
		if ((!state && (!pre || !post)) || (pre && !is_state(pre)) || !is_state(post)) {
			snprintf(err_out, err_size,
				 "%s:%" PRIu64 ":1: a window needs \"pre_state\" and \"post_state\" objects (or \"pre\" and \"post\"), "
				 "or a \"state\" object that follows the record of the state before it", name, line);
			rc = -1;
			goto out;
		}
		/* What the next stream record starts from (a file without one copies nothing). */
		spt_val *next_prev = NULL;
		if (stream) {
			spt_arena_reset(&keep[1 - cur]);
			next_prev = spt_value_move(&keep[1 - cur], post);
		}
		if (stream && !next_prev) {
			snprintf(err_out, err_size, "out of memory (window at %s:%" PRIu64 ")", name, line);
			rc = -1;
			goto out;
		}
		spt_val *act = spt_rec_get(w, "action");
		bool skip = (act && (act->kind != SPT_STR || strcmp(act->u.s, action))) || (state && (!pre || !act));
		if (skip) {
			/* A seed of the stream ({"state": ...} alone) is no window of any action. */
			t->skipped += !(state && !act);
			prev = next_prev;
			cur = 1 - cur;
			continue;
		}
		struct window_result res;
		struct check_error err = { "" };
		/* Windows that spectap windows wrote carry the mapping's parameter binding. */
		spt_val *params = spt_rec_get(w, "params");
		if ((mapped && convert(ck, &pre, &post, w, &params, &err)) ||
		    checker_window(ck, action, pre->n ? pre : NULL, post->n ? post : NULL, params, &res, &err)) {
			check_oom_hint(err.msg, sizeof(err.msg));
			snprintf(err_out, err_size, "%s (window at %s:%" PRIu64 ")", err.msg, name, line);
			rc = -1;
			goto out;
		}
		t->windows++;
		t->errors += res.error != NULL;
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
				snprintf(err_out, err_size, "out of memory (window at %s:%" PRIu64 ")", name, line);
				rc = -1;
				goto out;
			}
		}
		prev = next_prev;
		cur = 1 - cur;
		if (progress && (t->windows & 0xff) == 0)
			cli_progress(progress, "%" PRIu64 " windows, %" PRIu64 " passed", t->windows, t->passed);
	}
out:
	spt_json_reader_free(jr);
	spt_arena_fini(&keep[0]);
	spt_arena_fini(&keep[1]);
	return rc;
}

/* How many lines each part of a file has, as the parts' threads count them: a part's first
 * line is known once the parts before it are counted (all counted at once, not one by one
 * before any check starts). */
struct line_counts {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t *n;
	bool *known;
};

static void counts_publish(struct line_counts *lc, unsigned j, uint64_t n)
{
	pthread_mutex_lock(&lc->mu);
	lc->n[j] = n;
	lc->known[j] = true;
	pthread_cond_broadcast(&lc->cv);
	pthread_mutex_unlock(&lc->mu);
}

/* The first line of part j: 1 and the lines of the parts before it, once they are counted. */
static uint64_t counts_first_line(struct line_counts *lc, unsigned j)
{
	uint64_t line = 1;
	pthread_mutex_lock(&lc->mu);
	for (unsigned i = 0; i < j; i++) {
		while (!lc->known[i])
			pthread_cond_wait(&lc->cv, &lc->mu);
		line += lc->n[i];
	}
	pthread_mutex_unlock(&lc->mu);
	return line;
}

static uint64_t count_newlines(const char *p, size_t len)
{
	uint64_t n = 0;
	for (const char *end = p + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		n++;
	return n;
}

#define CUT_MIN 65536 /* a smaller window file is checked by one thread, whatever --jobs says */

/* Checkers for the parts of --jobs N after the first, loaded by threads of their own while the
 * main thread loads its checker (which then checks the first part): the loads at once, not one
 * after the other. */
struct preload {
	pthread_t thread;
	bool started;
	const char *map, *spec, *cfg;
	struct checker *ck; /* NULL when the load failed: the part loads again, for the message */
};

static void *preload_run(void *arg)
{
	struct preload *p = arg;
	struct check_error err;
	if (p->map ? checker_new_mapped(p->map, p->spec, p->cfg, &p->ck, &err) : checker_new(p->spec, p->cfg, &p->ck, &err))
		p->ck = NULL;
	return NULL;
}

static void preload_start(struct preload *p, unsigned n, const char *map, const char *spec, const char *cfg)
{
	for (unsigned i = 0; i < n; i++) {
		p[i] = (struct preload){ .map = map, .spec = spec, .cfg = cfg };
		p[i].started = !interp_thread_create(&p[i].thread, preload_run, &p[i]);
	}
}

/* Preload i's checker, once loaded (NULL: none); the caller frees it. */
static struct checker *preload_take(struct preload *p, unsigned n, unsigned i)
{
	if (i >= n || !p[i].started)
		return NULL;
	pthread_join(p[i].thread, NULL);
	p[i].started = false;
	struct checker *ck = p[i].ck;
	p[i].ck = NULL;
	return ck;
}

static void preload_end(struct preload *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		checker_free(preload_take(p, n, i));
}

/* One part of a window file checked by a thread of its own: bytes [from, from + len) of the
 * file at path (read, a block at a time), or data when the file is not mapped (a pipe). */
struct lines_part {
	const char *map, *spec, *cfg, *name, *action, *data, *path;
	size_t len, from;
	uint64_t first_line, max_failures;
	bool mapped, no_memo;
	struct line_counts *counts;
	unsigned index;
	struct checker *ck; /* loaded already (NULL: the part loads its own) */
	bool borrowed;      /* ck is the main thread's: not freed here */
	struct tally t;
	int rc;
	char err[1200];
	pthread_t thread;
};

static void *check_part(void *arg)
{
	struct lines_part *lp = arg;
	uint64_t lines;
	if (!lp->path || line_reader_count(lp->path, lp->from, lp->from + lp->len, &lines))
		lines = count_newlines(lp->data, lp->len);
	counts_publish(lp->counts, lp->index, lines);
	lp->first_line = counts_first_line(lp->counts, lp->index);
	struct checker *ck = lp->ck;
	struct check_error err = { "" };
	if (!ck && (lp->mapped ? checker_new_mapped(lp->map, lp->spec, lp->cfg, &ck, &err)
			       : checker_new(lp->spec, lp->cfg, &ck, &err))) {
		snprintf(lp->err, sizeof(lp->err), "%s", err.msg);
		lp->rc = -1;
		return NULL;
	}
	checker_interp(ck)->no_memo = lp->no_memo;
	struct line_reader lr;
	if (!lp->path || line_reader_file(&lr, lp->path, lp->from, lp->from + lp->len))
		line_reader_mem(&lr, lp->data, lp->len);
	lp->rc = check_lines(ck, lp->name, &lr, lp->first_line, lp->action, lp->max_failures, lp->mapped, false, &lp->t, lp->err,
			     sizeof(lp->err), NULL);
	line_reader_close(&lr);
	if (!lp->borrowed)
		checker_free(ck);
	return NULL;
}

struct file_opts {
	const char *map, *spec, *cfg, *path, *action;
	uint64_t max_failures, jobs;
	bool no_memo;
	struct preload *pre; /* jobs - 1 of them, or NULL */
};

static int check_file(struct cli *c, struct checker *ck, const struct file_opts *o, struct tally *t)
{
	struct cli_input in;
	int rc = cli_input_open(c, o->path, &in);
	if (rc)
		return rc;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char err[1200] = "";
	/* A stream of states ({"state": ...} records) is one chain: not cut into parts. */
	bool stream = first_is_stream(in.data, in.len);
	unsigned jobs = o->jobs > 1 && in.len > CUT_MIN && !stream ? (unsigned)o->jobs : 1;
	if (jobs == 1) {
		/* A mapped file is read instead, a block at a time (line_reader.h). */
		struct line_reader lr;
		if (!in.mapped || line_reader_file(&lr, o->path, 0, SIZE_MAX))
			line_reader_mem(&lr, in.data, in.len);
		rc = check_lines(ck, in.name, &lr, 1, o->action, o->max_failures, o->map != NULL, stream, t, err, sizeof(err), c);
		line_reader_close(&lr);
	} else {
		/* Parts of about equal size, cut at line ends; each thread loads the spec itself. */
		struct lines_part *parts = calloc(jobs, sizeof(*parts));
		if (!parts) {
			cli_input_close(&in);
			return cli_fail(c, "out of memory");
		}
		struct line_counts counts = { .n = calloc(jobs, sizeof(uint64_t)), .known = calloc(jobs, sizeof(bool)) };
		if (!counts.n || !counts.known) {
			free(counts.n);
			free(counts.known);
			free(parts);
			cli_input_close(&in);
			return cli_fail(c, "out of memory");
		}
		pthread_mutex_init(&counts.mu, NULL);
		pthread_cond_init(&counts.cv, NULL);
		size_t from = 0;
		for (unsigned j = 0; j < jobs; j++) {
			size_t to = j + 1 == jobs ? in.len : in.len / jobs * (j + 1);
			if (to < from)
				to = from;
			const char *nl = to < in.len ? memchr(in.data + to, '\n', in.len - to) : NULL;
			to = j + 1 == jobs ? in.len : nl ? (size_t)(nl - in.data) + 1 : in.len;
			parts[j] = (struct lines_part){ o->map, o->spec, o->cfg, in.name, o->action, in.data + from, in.mapped ? o->path : NULL,
							to - from, from, 0, o->max_failures, o->map != NULL, o->no_memo, &counts, j,
							j ? (o->pre ? preload_take(o->pre, jobs - 1, j - 1) : NULL) : ck, j == 0 };
			from = to;
		}
		/* The first part on this thread, with its checker; the others on threads of their own. */
		for (unsigned j = 1; j < jobs; j++)
			if (interp_thread_create(&parts[j].thread, check_part, &parts[j])) {
				snprintf(parts[j].err, sizeof(parts[j].err), "cannot start a thread (--jobs %u): try fewer", jobs);
				parts[j].rc = -1;
				parts[j].thread = 0;
				/* The parts after it wait for its count. */
				counts_publish(&counts, j, count_newlines(parts[j].data, parts[j].len));
				checker_free(parts[j].ck);
			}
		check_part(&parts[0]);
		for (unsigned j = 1; j < jobs; j++)
			if (parts[j].thread)
				pthread_join(parts[j].thread, NULL);
		rc = 0;
		for (unsigned j = 0; j < jobs; j++) {
			if (parts[j].rc && !rc) {
				rc = -1;
				snprintf(err, sizeof(err), "%s", parts[j].err);
			}
			t->windows += parts[j].t.windows;
			t->passed += parts[j].t.passed;
			t->errors += parts[j].t.errors;
			t->skipped += parts[j].t.skipped;
			for (size_t f = 0; f < parts[j].t.n_fails; f++)
				if (t->listed < o->max_failures)
					tally_add_failure(t, &parts[j].t.fails[f]);
			tally_free(&parts[j].t);
		}
		pthread_cond_destroy(&counts.cv);
		pthread_mutex_destroy(&counts.mu);
		free(counts.n);
		free(counts.known);
		free(parts);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cli_progress_done(c);
	cli_input_close(&in);
	return rc ? cli_fail(c, "%s", err) : CLI_OK;
}

/* Long options without a short letter. */
enum { OPT_MAX_STEPS = 0x2201, OPT_TIMEOUT, OPT_MAX_MEMORY, OPT_ALLOW_EMPTY, OPT_TLC_RESULTS, OPT_TV, OPT_INDEX_VAR };

static void on_alarm(int sig)
{
	(void)sig;
	interp_time_up = 1;
	spec_parse_cancel = 1;
}

/* --timeout: every evaluation fails once the time is up (interp_time_up). */
static int arm_timeout(unsigned seconds)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		return -1;
	alarm(seconds);
	return 0;
}

/*
 * --max-memory: allocations past it fail, and are reported as out of memory where they were.
 * RLIMIT_DATA counts the heap and private anonymous mappings, not the traces mapped from their
 * files. 0: no limit. The default is 90% of the memory available when the check starts (past
 * it the machine would swap or kill), never above a limit already set; not under
 * AddressSanitizer, whose shadow memory such a limit forbids.
 */
static int limit_memory(uint64_t mb)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_DATA, &rl))
		return -1;
	rlim_t want = mb ? (rlim_t)mb << 20 : RLIM_INFINITY;
	if (rl.rlim_max != RLIM_INFINITY && (want == RLIM_INFINITY || want > rl.rlim_max))
		want = rl.rlim_max; /* an unprivileged process cannot raise the hard limit */
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_DATA, &rl);
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
/* The memory the machine has available now (MemAvailable), in MB; 0 when unknown. */
static uint64_t available_mb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / 1024;
}
#endif

static void default_memory_limit(void)
{
#ifndef UNDER_ASAN
	/* 90% of what is available: at the whole of it, the kernel's OOM killer strikes first. */
	uint64_t mb = available_mb() / 10 * 9;
	struct rlimit rl;
	if (!mb || getrlimit(RLIMIT_DATA, &rl))
		return;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)mb << 20)
		limit_memory(mb);
#endif
}

int cmd_check(int argc, char **argv)
{
	struct cli c = { .cmd = "check", .usage = usage };
	const char *spec = NULL, *cfg = NULL, *windows = NULL, *action = NULL, *map = NULL, *model = NULL;
	const char *trace_spec = NULL, *states = NULL, *tlc_results = NULL, *tv = NULL, *index_var = "WINDOW_INDEX";
	bool whole = false;
	uint64_t max_failures = 10, jobs = 0 /* the default of each mode */, workers = 1, max_states = 0;
	bool max_steps_given = false, memory_given = false;
	bool no_memo = false, no_deadlock = false, allow_empty = false;
	static const struct option longopts[] = {
		{ "spec", required_argument, NULL, 's' },    { "cfg", required_argument, NULL, 'c' },
		{ "windows", required_argument, NULL, 'w' }, { "action", required_argument, NULL, 'a' },
		{ "max-failures", required_argument, NULL, 'm' }, { "map", required_argument, NULL, 'M' },
		{ "jobs", required_argument, NULL, 'J' },    { "quiet", no_argument, NULL, 'q' },
		{ "no-cache", no_argument, NULL, 'N' },     { "model", required_argument, NULL, 'O' },
		{ "workers", required_argument, NULL, 'W' }, { "no-deadlock", no_argument, NULL, 'D' },
		{ "max-states", required_argument, NULL, 'S' }, { "trace-spec", required_argument, NULL, 'T' },
		{ "states", required_argument, NULL, 'X' },  { "whole", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },          { "help", no_argument, NULL, 'h' },
		{ "max-steps", required_argument, NULL, OPT_MAX_STEPS }, { "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY }, { "allow-empty", no_argument, NULL, OPT_ALLOW_EMPTY },
		{ "tlc-results", required_argument, NULL, OPT_TLC_RESULTS }, { "tv", required_argument, NULL, OPT_TV },
		{ "index-var", required_argument, NULL, OPT_INDEX_VAR },
		CLI_ALLOW_DAMAGE_OPTION,                     { NULL, 0, NULL, 0 },
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
		case 'O': model = optarg; break;
		case 'T': trace_spec = optarg; break;
		case 'X': states = optarg; break;
		case 'H': whole = true; break;
		case 'W':
			if (!cli_parse_u64(&c, "--workers", optarg, &workers))
				return CLI_USAGE;
			if (workers < 1 || workers > 64)
				return cli_usage_error(&c, "--workers: %" PRIu64 " is not in 1..64", workers);
			break;
		case 'D': no_deadlock = true; break;
		case 'S':
			if (!cli_parse_u64(&c, "--max-states", optarg, &max_states))
				return CLI_USAGE;
			break;
		case 'q': c.quiet = true; break;
		case 'N': no_memo = true; break;
		case 'j': break;
		case CLI_OPT_ALLOW_DAMAGE: c.allow_damage = true; break;
		case OPT_ALLOW_EMPTY: allow_empty = true; break;
		case OPT_TLC_RESULTS: tlc_results = optarg; break;
		case OPT_TV: tv = optarg; break;
		case OPT_INDEX_VAR: index_var = optarg; break;
		case OPT_MAX_STEPS:
			if (!cli_parse_u64(&c, "--max-steps", optarg, &checker_window_steps))
				return CLI_USAGE;
			max_steps_given = true;
			break;
		case OPT_TIMEOUT:
		case OPT_MAX_MEMORY: {
			const char *name = opt == OPT_TIMEOUT ? "--timeout" : "--max-memory";
			uint64_t v;
			if (!cli_parse_u64(&c, name, optarg, &v))
				return CLI_USAGE;
			if (v < (opt == OPT_TIMEOUT) || v > (opt == OPT_TIMEOUT ? 31536000u : 1u << 30))
				return cli_usage_error(&c, "%s: %" PRIu64 " is out of range", name, v);
			if (opt == OPT_TIMEOUT ? arm_timeout((unsigned)v) : limit_memory(v))
				return cli_fail(&c, "%s: %s", name, strerror(errno));
			memory_given |= opt == OPT_MAX_MEMORY;
			break;
		}
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (!memory_given)
		default_memory_limit();
	if (tv) {
		if (spec || map || model || trace_spec || states || whole || action || optind != argc)
			return cli_usage_error(&c, "--tv TV_A.tla takes [--cfg TV_A.cfg] [--windows W] [--index-var NAME]");
		struct check_tv_opts to = { tv, cfg, windows, index_var, max_failures, max_states, no_memo, allow_empty,
					    tlc_results };
		return check_tv(&c, &to);
	}
	if (max_steps_given && (whole || states || model || trace_spec))
		return cli_usage_error(&c, "--max-steps bounds one window's evaluation; a behaviour or a model (--whole, "
				       "--states, --model, --trace-spec) is bounded by --max-states and --timeout");
	if (whole && map && !windows) {
		if (!spec || states || model || trace_spec || action || optind + 1 != argc)
			return cli_usage_error(&c, "--whole --map M.tla takes --spec S.tla [--cfg S.cfg] and one FILE.spt");
		struct check_model_opts mo = { spec, cfg, (unsigned)workers, true, no_memo, max_states, false, NULL, NULL };
		return check_whole_map(&c, &mo, map, argv[optind]);
	}
	if (whole && !states)
		return cli_usage_error(&c, "--whole checks a trace as one behaviour: --whole --spec S.tla --states T.json, "
				       "or --whole --spec S.tla --map M.tla FILE.spt");
	if (states) {
		if (!spec || model || trace_spec || windows || map || action || optind != argc)
			return cli_usage_error(&c, "--states T.json takes --spec S.tla [--cfg S.cfg] [--workers N]");
		struct check_model_opts mo = { spec, cfg, (unsigned)workers, true, no_memo, max_states, false, states, NULL };
		return check_model(&c, &mo);
	}
	if (model && trace_spec)
		return cli_usage_error(&c, "--model and --trace-spec: give one (a trace spec is checked as a model with a log)");
	if (model || trace_spec) {
		if (spec || windows || map || action || optind != argc)
			return cli_usage_error(&c, "%s S.tla takes only --cfg, --workers, --no-deadlock, --max-states",
					       model ? "--model" : "--trace-spec");
		struct check_model_opts mo = { model ? model : trace_spec, cfg, (unsigned)workers, no_deadlock, no_memo,
					       max_states, trace_spec != NULL, NULL, NULL };
		return check_model(&c, &mo);
	}
	if (map && !windows) {
		if (!spec || optind == argc)
			return cli_usage_error(&c, "with --map: --spec S.tla and FILE.spt... or DIR... (or --windows W --action A)");
		if (action)
			return cli_usage_error(&c, "--map on a trace checks every action it maps: --action is for window files");
		struct check_trace_opts o = { map, spec, cfg, (const char *const *)argv + optind, (size_t)(argc - optind),
					      max_failures, jobs ? (unsigned)jobs : 1, no_memo, allow_empty, tlc_results };
		return check_trace(&c, &o);
	}
	if (optind != argc)
		return cli_usage_error(&c, "unexpected argument '%s' (a .spt trace needs --map M.tla)", argv[optind]);
	if (!spec || !windows || !action)
		return cli_usage_error(&c, "--spec, --windows and --action are required");

	if (jobs == 0) { /* a window file's parts are independent: one per core */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = n < 1 ? 1 : n > 64 ? 64 : (uint64_t)n;
	}
	/* --jobs N on a file big enough to be cut (check_file): the other parts' checkers load
	 * meanwhile (freed unused if it is not cut after all: a stream of states). */
	struct stat wst;
	bool cut = jobs > 1 && stat(windows, &wst) == 0 && S_ISREG(wst.st_mode) && wst.st_size > CUT_MIN;
	struct preload *pre = cut ? calloc(jobs - 1, sizeof(*pre)) : NULL;
	if (pre)
		preload_start(pre, (unsigned)jobs - 1, map, spec, cfg);
	struct checker *ck;
	struct check_error err;
	if (map ? checker_new_mapped(map, spec, cfg, &ck, &err) : checker_new(spec, cfg, &ck, &err)) {
		if (pre)
			preload_end(pre, (unsigned)jobs - 1);
		free(pre);
		return cli_fail(&c, "%s", err.msg);
	}
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
	struct file_opts fo = { map, spec, cfg, windows, action, max_failures, jobs, no_memo, pre };
	rc = check_file(&c, ck, &fo, &t);
	if (rc == CLI_OK) {
		check_report(&c, &t, 1, NULL);
		rc = tlc_results ? check_tlc_results(&c, tlc_results, &t, 1) : CLI_OK;
		if (rc == CLI_OK)
			rc = check_exit(&c, &t, 1, NULL, 0, allow_empty);
	}
	tally_free(&t);
out:
	if (pre)
		preload_end(pre, (unsigned)jobs - 1);
	free(pre);
	checker_free(ck);
	return rc;
}
