/*
 * The counterexample of a model-checking error, rebuilt as TLC rebuilds it: the fingerprint set
 * keeps each state's predecessor, so the path back to an initial state is known; the states
 * themselves are found again by enumerating Init and then each state's successors for the one
 * with the next fingerprint on the path (the search kept no state it had expanded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enumerate.h"
#include "model_trace.h"

struct finder {
	struct worker *w;
	uint64_t want;             /* the fingerprint sought */
	spt_val **exact;           /* or the exact state (the one after the path) */
	struct spt_arena *a;
	spt_val **vals;            /* what was found, in a */
	const struct opdef *action;
};

/* The action a successor came from, as TLC splits Next into actions: definitions whose body is a
 * disjunction (or one more action) are looked into; the first that is not names the action. */
static const struct opdef *action_of(const struct interp *in)
{
	uint32_t n = in->n_actions < 16 ? in->n_actions : 16;
	for (uint32_t i = 0; i < n; i++) {
		const struct ast *b = in->actions[i]->body;
		while (b->kind == A_LET || b->kind == A_EXISTS)
			b = b->a[0];
		bool more = b->kind == A_OR || (b->kind == A_NAME && b->ref == REF_DEF && b->r.def->level >= L_ACTION);
		if (!more || i + 1 == n)
			return in->actions[i];
	}
	return NULL;
}

static int match(struct interp *in, void *arg)
{
	struct finder *f = arg;
	uint32_t n = f->w->S->m->n_vars;
	if (f->exact) {
		for (uint32_t i = 0; i < n; i++)
			if (!spt_value_eq(in->next[i], f->exact[i]))
				return 0;
	} else {
		uint64_t fp;
		if (search_fingerprint(f->w, in->next, &fp))
			return EVAL_ERR;
		if (fp != f->want)
			return 0;
	}
	if (!(f->vals = spt_arena_alloc(f->a, (n + 1) * sizeof(*f->vals))))
		return ev_fail(&in->ev, NULL, "out of memory");
	static const unsigned char keep_tags[2] = { CHECKER_LONG_TAG, TAG_WORKER_LONG };
	for (uint32_t i = 0; i < n; i++)
		if (!(f->vals[i] = spt_value_move_keep(f->a, in->next[i], keep_tags, NULL)))
			return ev_fail(&in->ev, NULL, "out of memory");
	f->action = action_of(in);
	return 1;
}

/* Finds the state f wants among the initial states (prev NULL) or prev's successors. */
static int find(struct worker *w, spt_val **prev, struct finder *f)
{
	struct search *S = w->S;
	struct interp *in = &w->in;
	const struct mc_formula *act = prev ? &S->m->next : &S->m->init;
	spt_arena_reset(&w->scratch);
	in->ev.arena = &w->scratch;
	ev_clear_error(&in->ev);
	in->init_mode = !prev;
	in->cur = prev ? prev : w->own_cur;
	in->n_actions = 0;
	memset(in->next, 0, S->m->n_vars * sizeof(*in->next));
	struct frame *fr = frame_new(in, act->owner, NULL, NULL);
	int rc = fr ? enumerate(in, (struct ctx){ fr, NULL, false }, act->e, match, f) : EVAL_ERR;
	in->init_mode = false;
	in->cur = w->own_cur;
	return rc;
}

static void set_step(struct mc_step *st, const struct finder *f, bool initial, const struct mc_formula *next)
{
	st->vals = f->vals;
	if (initial) {
		st->action = "Initial predicate";
		return;
	}
	st->action = f->action ? f->action->name : next->name;
	st->pos = f->action ? f->action->pos : (struct src_pos){ 0 };
}

static int ignore(struct interp *in, void *arg)
{
	(void)in;
	(void)arg;
	return 0;
}

int mc_trace_diagnose(struct search *S, spt_val **state, struct en_diag *d, char *why, size_t why_size)
{
	struct worker *w = &S->w[0];
	struct interp *in = &w->in;
	memset(d, 0, sizeof(*d));
	d->depth = -1;
	spt_arena_reset(&w->scratch);
	in->ev.arena = &w->scratch;
	ev_clear_error(&in->ev);
	in->cur = state;
	in->n_actions = 0;
	in->track_actions = true;
	in->diag = d;
	memset(in->next, 0, S->m->n_vars * sizeof(*in->next));
	struct frame *fr = frame_new(in, S->m->next.owner, NULL, NULL);
	int rc = fr ? enumerate(in, (struct ctx){ fr, NULL, false }, S->m->next.e, ignore, NULL) : EVAL_ERR;
	in->diag = NULL;
	in->track_actions = false;
	in->cur = w->own_cur;
	if (rc == EVAL_ERR) {
		snprintf(why, why_size, "%s", in->ev.err.msg);
		return -1;
	}
	return 0;
}

struct closest {
	const struct mc_line *line;
	struct mc_trace_outcome *t;
	int best;
};

static int closer(struct interp *in, void *arg)
{
	struct closest *c = arg;
	int n = 0;
	for (uint32_t i = 0; i < c->line->n; i++)
		n += !search_trace_value_eq(c->line->val[i], in->next[c->line->var[i]]);
	if (c->best >= 0 && n >= c->best)
		return 0;
	c->best = n;
	struct mc_trace_outcome *t = c->t;
	t->n_diffs = 0;
	for (uint32_t i = 0; i < c->line->n && t->n_diffs < 8; i++) {
		spt_val *got = in->next[c->line->var[i]];
		if (search_trace_value_eq(c->line->val[i], got))
			continue;
		struct mc_diff *d = &t->diffs[t->n_diffs++];
		d->var = in->vars[c->line->var[i]];
		show_value_cut(d->expected, sizeof(d->expected), c->line->val[i]);
		show_value_cut(d->reached, sizeof(d->reached), got);
	}
	return 0;
}

int mc_trace_closest(struct search *S, spt_val **state, const struct mc_line *line, struct mc_trace_outcome *t,
		     char *why, size_t why_size)
{
	struct worker *w = &S->w[0];
	struct interp *in = &w->in;
	struct closest c = { line, t, -1 };
	t->n_diffs = -1;
	spt_arena_reset(&w->scratch);
	in->ev.arena = &w->scratch;
	ev_clear_error(&in->ev);
	in->cur = state;
	memset(in->next, 0, S->m->n_vars * sizeof(*in->next));
	struct frame *fr = frame_new(in, S->m->next.owner, NULL, NULL);
	int rc = fr ? enumerate(in, (struct ctx){ fr, NULL, false }, S->m->next.e, closer, &c) : EVAL_ERR;
	in->cur = w->own_cur;
	if (rc == EVAL_ERR) {
		snprintf(why, why_size, "%s", in->ev.err.msg);
		return -1;
	}
	return 0;
}

/* The fingerprints from last back to an initial state, as the fingerprint set links them
 * (malloc'd; *n of them, last first). 0, or -1 with why. */
static int fp_path(struct search *S, uint64_t last, uint64_t **out, uint32_t *n, char *why, size_t why_size)
{
	uint64_t *path = NULL;
	uint32_t k = 0, cap = 0;
	for (uint64_t fp = last, parent; fp; fp = parent) {
		if (k == cap) {
			cap = cap ? cap * 2 : 64;
			uint64_t *np = realloc(path, cap * sizeof(*np));
			if (!np) {
				free(path);
				snprintf(why, why_size, "out of memory");
				return -1;
			}
			path = np;
		}
		path[k++] = fp;
		if (!fpset_get(S->fps, fp, &parent) || k > atomic_load(&S->max_level) + 1)
			break;
	}
	*out = path;
	*n = k;
	return 0;
}

int mc_trace_build(struct search *S, struct mc_result *r, struct spt_arena *a, char *why, size_t why_size)
{
	why[0] = '\0';
	uint64_t *path;
	uint32_t n;
	if (fp_path(S, S->err_parent, &path, &n, why, why_size))
		return -1;
	uint32_t total = n + (S->err_state ? 1 : 0);
	r->trace = spt_arena_alloc(a, (total + 1) * sizeof(*r->trace));
	if (!r->trace) {
		free(path);
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	memset(r->trace, 0, (total + 1) * sizeof(*r->trace));
	struct worker *w = &S->w[0];
	w->in.track_actions = true;
	w->run.level = 0;
	spt_val **prev = NULL;
	int rc = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct finder f = { w, path[n - 1 - i], NULL, a, NULL, NULL };
		w->run.level = (int64_t)i;
		int fr = find(w, prev, &f);
		if (fr != 1) {
			if (fr == EVAL_ERR)
				snprintf(why, why_size, "evaluating the spec again failed: %s", w->in.ev.err.msg);
			else
				snprintf(why, why_size, "state %u of the path was not found again (does the spec choose at random?)", i + 1);
			rc = -1;
			break;
		}
		set_step(&r->trace[r->n_trace++], &f, i == 0, &S->m->next);
		prev = f.vals;
	}
	if (!rc && S->err_state) {
		struct mc_step *st = &r->trace[r->n_trace++];
		st->vals = S->err_state;
		if (!n) {
			st->action = "Initial predicate";
		} else {
			struct finder f = { w, 0, S->err_state, a, NULL, NULL };
			w->run.level = (int64_t)n;
			if (find(w, prev, &f) == 1)
				set_step(st, &f, false, &S->m->next);
			else
				st->action = S->m->next.name;
		}
	}
	w->in.track_actions = false;
	free(path);
	return rc;
}

/* ---- TLCExt's Trace ---- */

/* The worker that rebuilds paths for w (its own interpreter: w's is in the middle of an
 * evaluation), made on first use. */
static struct worker *tracer_of(struct worker *w)
{
	if (!w->tracer) {
		struct worker *t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		if (search_worker_init(w->S, t, w->id)) {
			search_worker_fini(t);
			free(t);
			return NULL;
		}
		w->tracer = t;
	}
	return w->tracer;
}

/* The states of the path that ends at fingerprint last (an initial state first), found again
 * by the tracer, their values in a. */
static int rebuild_path(struct worker *w, uint64_t last, struct spt_arena *a, spt_val ****states, uint32_t *n,
			char *why, size_t why_size)
{
	uint64_t *path;
	uint32_t k;
	if (fp_path(w->S, last, &path, &k, why, why_size))
		return -1;
	struct worker *t = tracer_of(w);
	spt_val ***out = spt_arena_alloc(a, (k + 1) * sizeof(*out));
	if (!t || !out) {
		free(path);
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	spt_val **prev = NULL;
	for (uint32_t i = 0; i < k; i++) {
		struct finder f = { t, path[k - 1 - i], NULL, a, NULL, NULL };
		t->run.level = (int64_t)i;
		int fr = find(t, prev, &f);
		if (fr != 1) {
			snprintf(why, why_size, "%.300s", fr == EVAL_ERR ? t->in.ev.err.msg : "a state of the path was not found again");
			free(path);
			return -1;
		}
		out[i] = prev = f.vals;
	}
	free(path);
	*states = out;
	*n = k;
	return 0;
}

/* As TLC's TLCExt.getTrace: the path to the state being expanded, or to a state just found
 * (its predecessor's path, then it; an initial state alone). */
int mc_trace_current(struct worker *w, struct ev *ev, const struct ast *at, spt_val **out)
{
	struct interp *in = &w->in;
	struct search *S = w->S;
	if (in->init_mode)
		return ev_fail(ev, at, "In evaluating TLCExt!Trace, the state is not completely specified yet (Trace in Init)");
	spt_val **cur = in->cur;
	uint32_t nv = S->m->n_vars;
	uint64_t fp = 0, parent = 0;
	bool expanding = w->cur && cur == w->cur->v;
	if (!expanding && search_fingerprint(w, cur, &fp))
		return EVAL_ERR;
	bool known = expanding || fpset_get(S->fps, fp, &parent);
	uint64_t last = expanding ? w->cur->fp : known ? parent : (w->cur && w->level_index != SIZE_MAX ? w->cur->fp : 0);
	spt_val ***states = NULL;
	uint32_t n = 0;
	char why[600];
	if (last && rebuild_path(w, last, ev->arena, &states, &n, why, sizeof(why)))
		return ev_fail(ev, at, "TLCExt's Trace: rebuilding the behaviour to this state failed: %s", why);
	spt_val **recs = spt_arena_alloc(ev->arena, (n + 2) * sizeof(*recs));
	if (!recs)
		return ev_fail(ev, at, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		if (!(recs[i] = spt_rec(ev->arena, in->vars, states[i], nv)))
			return ev_fail(ev, at, "out of memory");
	if (!expanding && !(recs[n++] = spt_rec(ev->arena, in->vars, cur, nv)))
		return ev_fail(ev, at, "out of memory");
	if (!(*out = spt_seq(ev->arena, recs, n)))
		return ev_fail(ev, at, "out of memory");
	return 0;
}
