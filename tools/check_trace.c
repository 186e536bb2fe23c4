/*
 * spectap check --map: a trace cut into windows by a mapping, each window checked. With
 * --jobs N the mapping runs on this thread and N - 1 others check the windows it hands them
 * (each with its own copy of the spec): the windows' values are the mapping's, shared while it
 * keeps them (a compaction of its arena waits until every window handed out is done), so a
 * window costs a queue slot, not a copy. Verdicts and report order do not depend on N.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include "check_trace.h"
#include "mapping.h"

#define QUEUE_SLOTS 64

/* One window handed to a checker thread: its values, and the arena the parts of its post-state
 * that the mapping does not keep were copied into. */
struct job {
	uint64_t id, first, last;
	char action[256], node[128];
	spt_val *pre, *post, *params, *input;
	struct spt_arena arena;
};

/* The tallies of one checker (a thread, or the mapping's own with --jobs 1). */
struct results {
	struct tally *ts;
	size_t n;
	int rc;
	char err[1200];
};

struct pipeline {
	const struct check_trace_opts *o;
	struct cli *c;
	uint64_t events;
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull, idle;
	struct job slots[QUEUE_SLOTS];
	struct job *free_jobs[QUEUE_SLOTS];
	size_t n_free;
	struct job *queue[QUEUE_SLOTS];
	size_t head, count;
	unsigned busy;           /* jobs taken and not done */
	bool closing;            /* no more windows: workers finish the queue and stop */
	_Atomic bool failed;     /* a checker failed: stop handing out windows */
	_Atomic uint64_t checked;
	unsigned char live_tags[2];
	struct checker *inline_ck; /* --jobs 1: the mapping's checker checks its windows itself */
	struct results inline_res;
};

static struct tally *tally_for(struct results *r, const char *action)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->ts[i].action, action))
			return &r->ts[i];
	struct tally *n = realloc(r->ts, (r->n + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->ts = n;
	memset(&r->ts[r->n], 0, sizeof(r->ts[r->n]));
	if (!(r->ts[r->n].action = strdup(action)))
		return NULL;
	return &r->ts[r->n++];
}

static int results_fail(struct results *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int results_fail(struct results *r, int rc, const char *fmt, ...)
{
	if (r->rc)
		return r->rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->rc = rc;
	return rc;
}

/* Checks one window with ck and tallies it. 0, or the error (in r). */
static int check_one(struct checker *ck, const struct check_trace_opts *o, struct results *r, uint64_t id,
		     const char *action, const char *node, uint64_t first, uint64_t last, spt_val *pre, spt_val *post,
		     spt_val *params)
{
	struct tally *t = tally_for(r, action);
	if (!t)
		return results_fail(r, -ENOMEM, "out of memory");
	struct window_result res;
	struct check_error err = { "" };
	spt_arena_reset(checker_window_arena(ck));
	if (checker_window(ck, action, pre->n ? pre : NULL, post->n ? post : NULL, params, &res, &err) &&
	    (check_oom_hint(err.msg, sizeof(err.msg)), true))
		return results_fail(r, -EINVAL, "%s (window %" PRIu64 ": node %s, events %" PRIu64 "..%" PRIu64 ")",
				    err.msg[0] ? err.msg : "the check failed", id, node, first, last);
	t->windows++;
	if (res.passed) {
		t->passed++;
		return 0;
	}
	t->errors += res.error != NULL;
	if (t->listed >= o->max_failures)
		return 0;
	struct failure f = { .order = id };
	char buf[24], where[256], where_json[256];
	snprintf(buf, sizeof(buf), "%" PRIu64, id);
	snprintf(where, sizeof(where), "node %s, events %" PRIu64 "..%" PRIu64, node, first, last);
	snprintf(where_json, sizeof(where_json), ",\"actor\":\"%s\",\"events\":[%" PRIu64 ",%" PRIu64 "]", node, first, last);
	if (!(f.id = strdup(buf)) || !(f.where = strdup(where)) || !(f.where_json = strdup(where_json)) ||
	    check_diagnose(action, &res, &f) || tally_add_failure(t, &f)) {
		failure_free(&f);
		return results_fail(r, -ENOMEM, "out of memory");
	}
	return 0;
}

/* ---- checker threads ---- */

struct worker {
	struct pipeline *p;
	pthread_t thread;
	bool started;
	struct results res;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pipeline *p = w->p;
	const struct check_trace_opts *o = p->o;
	struct checker *ck = NULL;
	struct check_error err = { "" };
	if (checker_new_mapped(o->map, o->spec, o->cfg, &ck, &err)) {
		results_fail(&w->res, -EINVAL, "%s", err.msg);
		atomic_store(&p->failed, true);
	} else {
		checker_interp(ck)->no_memo = o->no_memo;
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->count && !p->closing)
			pthread_cond_wait(&p->nonempty, &p->lock);
		if (!p->count)
			break;
		struct job *j = p->queue[p->head];
		p->head = (p->head + 1) % QUEUE_SLOTS;
		p->count--;
		p->busy++;
		pthread_cond_signal(&p->nonfull);
		pthread_mutex_unlock(&p->lock);
		if (ck && !atomic_load(&p->failed) &&
		    check_one(ck, o, &w->res, j->id, j->action, j->node, j->first, j->last, j->pre, j->post, j->params))
			atomic_store(&p->failed, true);
		/* Between windows this checker holds no value of its cache. */
		if (ck)
			memo_collect(&checker_interp(ck)->memo);
		atomic_fetch_add(&p->checked, 1);
		spt_arena_reset(&j->arena);
		pthread_mutex_lock(&p->lock);
		p->free_jobs[p->n_free++] = j;
		p->busy--;
		pthread_cond_signal(&p->nonfull);
		if (!p->count && !p->busy)
			pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	checker_free(ck);
	return NULL;
}

/* Waits until every window handed out is checked (before the mapping compacts its arena). */
static void drain(void *arg)
{
	struct pipeline *p = arg;
	pthread_mutex_lock(&p->lock);
	while (p->count || p->busy)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static void progress(struct pipeline *p, const struct map_window *w)
{
	uint64_t done = atomic_load(&p->checked);
	if (p->events && w->closed_at)
		cli_progress(p->c, "%" PRIu64 " windows checked, event %" PRIu64 " of %" PRIu64 " (%.0f%%)", done, w->closed_at,
			     p->events, 100.0 * (double)w->closed_at / (double)p->events);
}

/* The mapping's callback: a window, checked here (--jobs 1) or handed to a checker thread. */
static int on_window(void *arg, const struct map_window *w)
{
	struct pipeline *p = arg;
	if (p->inline_ck) {
		atomic_fetch_add(&p->checked, 1);
		progress(p, w);
		return check_one(p->inline_ck, p->o, &p->inline_res, w->id, w->action, w->node, w->first_event, w->last_event,
				 w->pre, w->post, w->params) ? 1 : 0;
	}
	if (atomic_load(&p->failed))
		return 1;
	progress(p, w);
	pthread_mutex_lock(&p->lock);
	while (!p->n_free && !atomic_load(&p->failed))
		pthread_cond_wait(&p->nonfull, &p->lock);
	if (atomic_load(&p->failed)) {
		pthread_mutex_unlock(&p->lock);
		return 1;
	}
	struct job *j = p->free_jobs[--p->n_free];
	pthread_mutex_unlock(&p->lock);
	/* The post-state lives until the next event: its parts the mapping does not keep are
	 * copied (the nodes' states and the window's pre-state are the mapping's, shared). */
	j->id = w->id;
	j->first = w->first_event;
	j->last = w->last_event;
	snprintf(j->action, sizeof(j->action), "%s", w->action);
	snprintf(j->node, sizeof(j->node), "%s", w->node);
	j->pre = w->pre;
	j->params = w->params;
	j->input = w->input;
	if (!(j->post = spt_value_move_keep(&j->arena, w->post, p->live_tags, NULL))) {
		pthread_mutex_lock(&p->lock);
		p->free_jobs[p->n_free++] = j;
		pthread_mutex_unlock(&p->lock);
		return results_fail(&p->inline_res, -ENOMEM, "out of memory handing window %" PRIu64 " on", w->id) ? 1 : 1;
	}
	pthread_mutex_lock(&p->lock);
	p->queue[(p->head + p->count) % QUEUE_SLOTS] = j;
	p->count++;
	pthread_cond_signal(&p->nonempty);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static int cmp_failure(const void *a, const void *b)
{
	const struct failure *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The tally of src's action in ts (added, taking src's name, when it has none), with src's
 * counts added; failures are the caller's. NULL when out of memory. */
static struct tally *tally_absorb(struct tally **ts, size_t *nt, struct tally *src)
{
	struct tally *dst = NULL;
	for (size_t k = 0; k < *nt && !dst; k++)
		if (!strcmp((*ts)[k].action, src->action))
			dst = &(*ts)[k];
	if (!dst) {
		struct tally *grown = realloc(*ts, (*nt + 1) * sizeof(*grown));
		if (!grown)
			return NULL;
		*ts = grown;
		dst = &grown[(*nt)++];
		memset(dst, 0, sizeof(*dst));
		dst->action = src->action;
		src->action = NULL;
	}
	dst->windows += src->windows;
	dst->passed += src->passed;
	dst->errors += src->errors;
	dst->skipped += src->skipped;
	dst->seconds += src->seconds;
	return dst;
}

/* The checkers' tallies as one: actions in the order they first appear, failures in window
 * order, the first max_failures of each action. */
static int merge(struct results *rs, unsigned n, uint64_t max_failures, struct tally **out, size_t *n_out)
{
	struct tally *ts = NULL;
	size_t nt = 0;
	for (unsigned j = 0; j < n; j++) {
		for (size_t a = 0; a < rs[j].n; a++) {
			struct tally *src = &rs[j].ts[a], *dst = tally_absorb(&ts, &nt, src);
			if (!dst)
				goto oom;
			for (size_t f = 0; f < src->n_fails; f++)
				if (tally_add_failure(dst, &src->fails[f]))
					goto oom;
			src->n_fails = 0;
		}
	}
	for (size_t k = 0; k < nt; k++) {
		struct tally *t = &ts[k];
		if (t->n_fails)
			qsort(t->fails, t->n_fails, sizeof(*t->fails), cmp_failure);
		while (t->n_fails > max_failures)
			failure_free(&t->fails[--t->n_fails]);
		t->listed = t->n_fails;
	}
	*out = ts;
	*n_out = nt;
	return 0;
oom:
	for (size_t k = 0; k < nt; k++)
		tally_free(&ts[k]);
	free(ts);
	return -ENOMEM;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void results_free(struct results *r)
{
	for (size_t a = 0; a < r->n; a++)
		tally_free(&r->ts[a]);
	free(r->ts);
}

/* One trace, mapped and checked: its tallies, what the reader found, the mapped actions. The
 * status is CLI_OK or an error already said (naming the trace). */
struct trace_run {
	struct tally *ts;
	size_t nt;
	struct spt_trace_info info;
	const char **mapped; /* the actions WindowStart can name */
	uint32_t n_mapped;
	uint64_t dropped;    /* windows WindowDrop closed */
};

static int run_trace(struct cli *c, const struct check_trace_opts *o, const char *path, struct trace_run *tr)
{
	struct mapping *mp;
	struct check_error err = { "" };
	if (mapping_new(o->map, o->spec, o->cfg, &mp, &err))
		return cli_fail(c, "%s", err.msg[0] ? err.msg : "cannot load the mapping");
	struct checker *mck = mapping_checker(mp);
	checker_interp(mck)->no_memo = o->no_memo;
	if (checker_warnings(mck))
		cli_warn(c, "%s", checker_warnings(mck));
	struct spt_reader *r;
	int rc = cli_open_trace(c, path, &r);
	if (rc) {
		mapping_free(mp);
		return rc;
	}
	struct pipeline *p = calloc(1, sizeof(*p));
	unsigned nw = o->jobs > 1 ? o->jobs - 1 : 0;
	struct worker *ws = calloc(nw + 1, sizeof(*ws));
	if (!p || !ws) {
		free(p);
		free(ws);
		spt_reader_close(r);
		mapping_free(mp);
		return cli_fail(c, "out of memory");
	}
	p->o = o;
	p->c = c;
	p->events = spt_reader_info(r)->events;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->nonempty, NULL);
	pthread_cond_init(&p->nonfull, NULL);
	pthread_cond_init(&p->idle, NULL);
	for (size_t i = 0; i < QUEUE_SLOTS; i++) {
		spt_arena_init(&p->slots[i].arena);
		p->free_jobs[p->n_free++] = &p->slots[i];
	}
	mapping_live_tags(mp, p->live_tags);
	if (!nw)
		p->inline_ck = mck;
	for (unsigned j = 0; j < nw; j++) {
		ws[j].p = p;
		if (interp_thread_create(&ws[j].thread, work, &ws[j])) {
			results_fail(&ws[j].res, -EAGAIN, "cannot start a thread (--jobs %u): try fewer", o->jobs);
			break;
		}
		ws[j].started = true;
	}
	mapping_on_compact(mp, drain, p);
	double t0 = now();
	rc = mapping_run(mp, r, on_window, p, &err);
	/* The workers finish the queue and stop. */
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_cond_broadcast(&p->nonempty);
	pthread_mutex_unlock(&p->lock);
	for (unsigned j = 0; j < nw; j++)
		if (ws[j].started)
			pthread_join(ws[j].thread, NULL);
	double secs = now() - t0;
	cli_progress_done(c);
	/* The first error: a checker's (it stopped the mapping), or the mapping's own. */
	int out = CLI_OK;
	for (unsigned j = 0; j < nw && out == CLI_OK; j++)
		if (ws[j].res.rc)
			out = cli_fail(c, "%s", ws[j].res.err);
	if (out == CLI_OK && p->inline_res.rc)
		out = cli_fail(c, "%s", p->inline_res.err);
	if (out == CLI_OK && rc < 0) {
		check_oom_hint(err.msg, sizeof(err.msg));
		out = cli_fail(c, "%s", err.msg[0] ? err.msg : strerror(-rc));
	}
	ws[nw].res = p->inline_res;
	struct results *all = calloc(nw + 1, sizeof(*all));
	struct tally *ts = NULL;
	size_t nt = 0;
	if (!all) {
		if (out == CLI_OK)
			out = cli_fail(c, "out of memory");
	} else {
		for (unsigned j = 0; j <= nw; j++)
			all[j] = ws[j].res;
		if (out == CLI_OK && merge(all, nw + 1, o->max_failures, &ts, &nt))
			out = cli_fail(c, "out of memory merging the results");
	}
	if (out == CLI_OK) {
		for (size_t i = 0; i < nt; i++)
			ts[i].seconds = secs; /* one pass checks every action */
		tr->info = *spt_reader_info(r);
		tr->dropped = mapping_dropped(mp);
		if (mapping_actions(mp, &tr->mapped, &tr->n_mapped))
			out = cli_fail(c, "out of memory");
		for (uint32_t i = 0; out == CLI_OK && i < tr->n_mapped; i++)
			if (!(tr->mapped[i] = strdup(tr->mapped[i])))
				out = cli_fail(c, "out of memory"); /* (the names not yet copied leak) */
	}
	if (out == CLI_OK) {
		tr->ts = ts;
		tr->nt = nt;
	} else {
		for (size_t i = 0; i < nt; i++)
			tally_free(&ts[i]);
		free(ts);
	}
	for (unsigned j = 0; j <= nw; j++)
		results_free(all ? &all[j] : &ws[j].res);
	free(all);
	for (size_t i = 0; i < QUEUE_SLOTS; i++)
		spt_arena_fini(&p->slots[i].arena);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->nonempty);
	pthread_cond_destroy(&p->nonfull);
	pthread_cond_destroy(&p->idle);
	free(p);
	free(ws);
	spt_reader_close(r);
	mapping_free(mp);
	return out;
}

static void trace_run_free(struct trace_run *tr)
{
	for (size_t i = 0; i < tr->nt; i++)
		tally_free(&tr->ts[i]);
	free(tr->ts);
	for (uint32_t i = 0; i < tr->n_mapped; i++)
		free((char *)tr->mapped[i]);
	free(tr->mapped);
	memset(tr, 0, sizeof(*tr));
}

/* Adds run (the k-th trace, at path) to the totals: windows counted, failures kept in trace
 * order with the trace named in their place. */
static int add_totals(struct trace_run *tot, struct trace_run *run, size_t k, const char *path, uint64_t max_failures)
{
	for (size_t a = 0; a < run->nt; a++) {
		struct tally *src = &run->ts[a], *dst = tally_absorb(&tot->ts, &tot->nt, src);
		if (!dst)
			return -ENOMEM;
		for (size_t f = 0; f < src->n_fails && dst->listed < max_failures; f++) {
			struct failure *x = &src->fails[f];
			char *w = NULL, *wj = NULL;
			struct spt_buf b = { 0 };
			spt_buf_puts(&b, ",\"trace\":");
			spt_buf_json_str(&b, path, strlen(path));
			spt_buf_puts(&b, x->where_json ? x->where_json : "");
			if (b.oom || asprintf(&w, "%s: %s", path, x->where ? x->where : "?") < 0) {
				spt_buf_free(&b);
				return -ENOMEM;
			}
			wj = b.p;
			free(x->where);
			free(x->where_json);
			x->where = w;
			x->where_json = wj;
			x->order = ((uint64_t)k << 40) | (x->order & (((uint64_t)1 << 40) - 1));
			if (tally_add_failure(dst, x))
				return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < run->n_mapped; i++) {
		bool have = false;
		for (uint32_t j = 0; j < tot->n_mapped && !have; j++)
			have = !strcmp(tot->mapped[j], run->mapped[i]);
		if (have)
			continue;
		const char **grown = realloc(tot->mapped, (tot->n_mapped + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		tot->mapped = grown;
		tot->mapped[tot->n_mapped++] = run->mapped[i];
		run->mapped[i] = NULL;
	}
	return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The traces the arguments name: files as given, directories' .spt files in name order. */
static int expand_paths(struct cli *c, const char *const *args, size_t n, char ***out, size_t *n_out)
{
	char **ps = NULL;
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(args[i], &st) || !S_ISDIR(st.st_mode)) {
			char **g = realloc(ps, (np + 1) * sizeof(*g));
			if (!g || !(g[np] = strdup(args[i])))
				goto oom;
			ps = g;
			np++;
			continue;
		}
		DIR *d = opendir(args[i]);
		if (!d) {
			cli_fail(c, "cannot read the directory %s: %s", args[i], strerror(errno));
			goto fail;
		}
		size_t first = np;
		for (struct dirent *e; (e = readdir(d));) {
			size_t len = strlen(e->d_name);
			if (len < 5 || strcmp(e->d_name + len - 4, ".spt"))
				continue;
			char **g = realloc(ps, (np + 1) * sizeof(*g));
			if (!g) {
				closedir(d);
				goto oom;
			}
			ps = g;
			if (asprintf(&ps[np], "%s/%s", args[i], e->d_name) < 0) {
				closedir(d);
				goto oom;
			}
			np++;
		}
		closedir(d);
		if (np == first) {
			cli_fail(c, "the directory %s holds no .spt trace", args[i]);
			goto fail;
		}
		qsort(ps + first, np - first, sizeof(*ps), by_name);
	}
	*out = ps;
	*n_out = np;
	return 0;
oom:
	cli_fail(c, "out of memory");
fail:
	for (size_t i = 0; i < np; i++)
		free(ps[i]);
	free(ps);
	return CLI_FAIL;
}

int check_trace(struct cli *c, const struct check_trace_opts *o)
{
	char **paths;
	size_t n;
	int rc = expand_paths(c, o->paths, o->n_paths, &paths, &n);
	if (rc)
		return rc;
	struct trace_run tot = { 0 };
	struct trace_summary *sums = calloc(n, sizeof(*sums));
	const char **unwindowed = NULL;
	int out = sums ? CLI_OK : cli_fail(c, "out of memory");
	bool several = n > 1;
	for (size_t k = 0; k < n && out == CLI_OK; k++) {
		struct trace_run run = { 0 };
		struct trace_summary *sm = &sums[k];
		sm->path = paths[k];
		if (several)
			cli_progress(c, "trace %zu of %zu: %s", k + 1, n, paths[k]);
		/* A trace that cannot be checked is said on stderr, and its entry says so: with --json,
		 * stdout stays the one report. */
		struct cli one = *c;
		one.json = several ? false : c->json;
		rc = run_trace(&one, o, paths[k], &run);
		if (rc != CLI_OK) {
			/* One bad trace of a corpus is said, and the others are checked. */
			if (!several) {
				out = rc;
				break;
			}
			sm->failed = true;
			continue;
		}
		sm->info = run.info;
		for (size_t a = 0; a < run.nt; a++) {
			sm->windows += run.ts[a].windows;
			sm->passed += run.ts[a].passed;
			sm->errors += run.ts[a].errors;
		}
		tot.dropped += several ? run.dropped : 0;
		if (several ? add_totals(&tot, &run, k, paths[k], o->max_failures) : 0)
			out = cli_fail(c, "out of memory");
		if (several)
			trace_run_free(&run);
		else
			tot = run;
	}
	cli_progress_done(c);
	if (out == CLI_OK && !(unwindowed = calloc(tot.n_mapped + 1, sizeof(*unwindowed))))
		out = cli_fail(c, "out of memory");
	if (out == CLI_OK) {
		size_t n_unwindowed = check_unwindowed(tot.ts, tot.nt, tot.mapped, tot.n_mapped, unwindowed);
		struct check_extras x = { several ? NULL : &sums[0].info, unwindowed, n_unwindowed, several ? sums : NULL,
					  several ? n : 0, tot.dropped };
		check_report(c, tot.ts, tot.nt, &x);
		if (o->tlc_results && check_tlc_results(c, o->tlc_results, tot.ts, tot.nt))
			out = CLI_FAIL;
		size_t bad = 0, damaged = 0;
		for (size_t k = 0; k < n; k++) {
			bad += sums[k].failed;
			damaged += !sums[k].failed && sums[k].info.damaged;
		}
		if (bad) {
			cli_warn(c, "%zu of %zu traces could not be checked (each said why above); the totals are of the others",
				 bad, n);
			out = CLI_FAIL;
		} else if (damaged && !c->allow_damage) {
			cli_warn(c, "%zu trace%s damaged: exit %d (--allow-damage exits 0)", damaged,
				 damaged == 1 ? " is" : "s are", CLI_DAMAGED);
			out = CLI_DAMAGED;
		} else if (out == CLI_OK) {
			out = check_exit(c, tot.ts, tot.nt, unwindowed, n_unwindowed, o->allow_empty);
		}
	}
	free(unwindowed);
	trace_run_free(&tot);
	free(sums);
	for (size_t k = 0; k < n; k++)
		free(paths[k]);
	free(paths);
	return out;
}
