/*
 * The model checker's breadth-first search, with TLC's rules (docs/model.md): every successor
 * counts as generated; a successor outside the CONSTRAINTs or ACTION_CONSTRAINTs is checked
 * against the invariants but neither kept nor explored; a state with no successor at all is a
 * deadlock. Level by level: workers take states of the current level and put the new ones of
 * the next into their own arenas, which live two levels (a state is copied once, when found).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "enumerate.h"
#include "frames.h"
#include "liveness.h"
#include "model_trace.h"
#include "search.h"

double search_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}


static uint64_t hash_state(spt_val *const *v, uint32_t n)
{
	uint64_t h = 0x243f6a8885a308d3ull;
	for (uint32_t i = 0; i < n; i++)
		h = fp_mix(h + spt_value_hash(v[i]) + i);
	return h;
}

/* Runs f with vals as the current state and nxt as the next (NULL: unchanged). */
int search_eval_on(struct worker *w, const struct mc_formula *f, spt_val **cur, spt_val **nxt, bool *b)
{
	struct interp *in = &w->in;
	spt_val **oc = in->cur, **on = in->next;
	bool im = in->init_mode;
	bool nk = in->next_known;
	in->cur = cur;
	if (nxt)
		in->next = nxt;
	in->init_mode = false;
	in->next_known = nxt != NULL;
	int rc = mc_eval_bool(in, f, b);
	in->cur = oc;
	in->next = on;
	in->init_mode = im;
	in->next_known = nk;
	return rc;
}

static int view_hash(struct worker *w, spt_val **vals, uint64_t *h)
{
	struct interp *in = &w->in;
	spt_val **oc = in->cur;
	bool im = in->init_mode;
	in->cur = vals;
	in->init_mode = false;
	spt_val *v;
	int rc = mc_eval(in, &w->S->m->view, &v);
	in->cur = oc;
	in->init_mode = im;
	if (!rc)
		*h = fp_mix(spt_value_hash(v) ^ 0x9e3779b97f4a7c15ull);
	return rc;
}

int search_fingerprint(struct worker *w, spt_val **vals, uint64_t *fp)
{
	struct search *S = w->S;
	uint32_t n = S->m->n_vars;
	if (!S->has_sym && !S->m->has_view) {
		uint64_t h = hash_state(vals, n);
		*fp = h ? h : 1;
		return 0;
	}
	/* Symmetric states share the least fingerprint of the orbit (any function of the orbit
	 * counts orbits as TLC's least-state rule does). Without a VIEW, each permutation's
	 * fingerprint comes from the hashes alone (they are sums of per-element terms). */
	uint64_t best = UINT64_MAX;
	if (!S->m->has_view) {
		uint64_t h = sym_fingerprint(&S->sym, vals, n);
		*fp = h ? h : 1;
		return 0;
	}
	uint32_t np = S->has_sym ? S->sym.n_perms : 1;
	for (uint32_t p = 0; p < np; p++) {
		spt_val **pv = vals;
		if (p) {
			pv = w->pv;
			for (uint32_t i = 0; i < n; i++)
				if (!(pv[i] = sym_apply(w->in.ev.arena, &S->sym, p, vals[i])))
					return ev_fail(&w->in.ev, NULL, "out of memory");
		}
		uint64_t h;
		if (S->m->has_view) {
			if (view_hash(w, pv, &h))
				return EVAL_ERR;
		} else {
			h = hash_state(pv, n);
		}
		if (h < best)
			best = h;
	}
	*fp = best ? best : 1;
	return 0;
}

/* ---- errors ---- */

static int record(struct worker *w, enum mc_verdict v, const char *what, const char *msg, uint64_t parent,
		  spt_val **state)
{
	struct search *S = w->S;
	pthread_mutex_lock(&S->err_mu);
	if (!S->failed) {
		S->failed = true;
		S->verdict = v;
		snprintf(S->what, sizeof(S->what), "%s", what ? what : "");
		snprintf(S->msg, sizeof(S->msg), "%s", msg ? msg : "");
		S->err_parent = parent;
		if (state) {
			uint32_t n = S->m->n_vars;
			S->err_state = spt_arena_alloc(&S->err_arena, (n + 1) * sizeof(*S->err_state));
			for (uint32_t i = 0; S->err_state && i < n; i++)
				if (!(S->err_state[i] = spt_value_clone(&S->err_arena, state[i])))
					S->err_state = NULL;
		}
	}
	pthread_mutex_unlock(&S->err_mu);
	atomic_store(&S->stop, 1);
	return 1;
}

/* An evaluation error: what was being evaluated, and where the evaluator stopped. */
static int record_eval(struct worker *w, const char *doing, uint64_t parent, spt_val **state)
{
	const struct eval_error *e = &w->in.ev.err;
	char msg[1536];
	if (e->pos.file)
		snprintf(msg, sizeof(msg), "%s:%u:%u: %s: %s", e->pos.file, e->pos.line, e->pos.col, doing, e->msg);
	else
		snprintf(msg, sizeof(msg), "%s: %s", doing, e->msg);
	return record(w, MC_EVAL_ERROR, doing, msg, parent, state);
}

/* ---- one state found ---- */

static int keep(struct worker *w, spt_val **vals, uint64_t fp, uint64_t level)
{
	struct search *S = w->S;
	uint32_t n = S->m->n_vars;
	struct spt_arena *a = &w->lvl[level & 1];
	struct mstate *st = spt_arena_alloc(a, sizeof(*st) + (n + 1) * sizeof(st->v[0]));
	if (!st)
		return ev_fail(&w->in.ev, NULL, "out of memory keeping a state");
	st->fp = fp;
	static const unsigned char keep_tags[2] = { CHECKER_LONG_TAG, TAG_WORKER_LONG };
	for (uint32_t i = 0; i < n; i++)
		if (!(st->v[i] = spt_value_move_keep(a, vals[i], keep_tags, NULL)))
			return ev_fail(&w->in.ev, NULL, "out of memory keeping a state");
	if (w->out.n == w->out.cap) {
		size_t cap = w->out.cap ? w->out.cap * 2 : 1024;
		struct mstate **ns = realloc(w->out.s, cap * sizeof(*ns));
		if (!ns)
			return ev_fail(&w->in.ev, NULL, "out of memory keeping a state");
		w->out.s = ns;
		w->out.cap = cap;
	}
	w->out.s[w->out.n++] = st;
	if (S->m->lines || (S->m->cursor >= 0 && st->v[S->m->cursor]->kind == SPT_INT)) {
		int64_t c = S->m->lines ? (int64_t)level : st->v[S->m->cursor]->u.i;
		if (c > w->cursor_max || !w->cursor_n) {
			w->cursor_max = c;
			w->cursor_n = 0;
			w->cursor_fp = fp;
		}
		w->cursor_n += c == w->cursor_max;
	}
	uint64_t d = atomic_fetch_add(&S->distinct, 1) + 1;
	if (S->o->max_states && d > S->o->max_states) {
		char msg[256];
		snprintf(msg, sizeof(msg), "more than %llu distinct states (--max-states): stopped",
			 (unsigned long long)S->o->max_states);
		return record(w, MC_EVAL_ERROR, "the state limit", msg, 0, NULL);
	}
	return 0;
}

bool search_trace_value_eq(spt_val *expected, spt_val *reached)
{
	if (spt_value_eq(expected, reached))
		return true;
	if (reached->kind != SPT_SET || !(expected->kind == SPT_SEQ || (spt_is_fun(expected) && !expected->n)))
		return false;
	if (expected->n < reached->n)
		return false;
	for (uint32_t i = 0; i < expected->n; i++) {
		bool in = false;
		for (uint32_t j = 0; j < reached->n && !in; j++)
			in = search_trace_value_eq(expected->u.elems[i], reached->u.elems[j]);
		if (!in)
			return false;
	}
	for (uint32_t j = 0; j < reached->n; j++) {
		bool in = false;
		for (uint32_t i = 0; i < expected->n && !in; i++)
			in = search_trace_value_eq(expected->u.elems[i], reached->u.elems[j]);
		if (!in)
			return false;
	}
	return true;
}

bool search_on_trace(const struct mc_model *m, uint64_t level, spt_val *const *vals)
{
	if (level < 1 || level > m->n_lines)
		return false;
	const struct mc_line *l = &m->lines[level - 1];
	for (uint32_t i = 0; i < l->n; i++)
		if (!search_trace_value_eq(l->val[i], vals[l->var[i]]))
			return false;
	return true;
}

/* The behaviour graph for liveness (liveness.h): a node per state kept, with the state atoms
 * true there, and an edge per step between states of the model. */
static int live_step(struct worker *w, spt_val **t, uint64_t fp, bool unseen, bool initial)
{
	struct search *S = w->S;
	struct live *L = S->m->live;
	uint32_t id, src;
	bool b;
	if (unseen) {
		if (live_node(L, fp, &id))
			return record(w, MC_EVAL_ERROR, "the behaviour graph", "out of memory in the behaviour graph", 0, NULL);
		for (uint32_t i = 0; i < L->state_atoms.n; i++) {
			int rc = search_eval_on(w, &L->state_atoms.f[i], t, NULL, &b);
			if (rc && L->en_step[i] >= 0) {
				ev_clear_error(&w->in.ev);
				live_defer(L, id, i);
				continue;
			}
			if (rc) {
				char doing[300];
				snprintf(doing, sizeof(doing), "evaluating the property %s", L->state_atoms.f[i].name);
				return record_eval(w, doing, initial ? 0 : w->cur->fp, t);
			}
			if (b)
				L->sbits[id] |= LIVE_BIT(i);
		}
	} else if (live_find(L, fp, &id)) {
		return 0; /* a state the constraints left out */
	}
	if (initial)
		return unseen && live_add_init(L, id) ? record(w, MC_EVAL_ERROR, "the behaviour graph", "out of memory", 0, NULL) : 0;
	if (live_find(L, w->cur->fp, &src))
		return 0;
	live_bits bits = 0;
	for (uint32_t i = 0; i < L->action_atoms.n; i++) {
		if (search_eval_on(w, &L->action_atoms.f[i], w->cur->v, t, &b)) {
			char doing[300];
			snprintf(doing, sizeof(doing), "evaluating the property %s", L->action_atoms.f[i].name);
			return record_eval(w, doing, w->cur->fp, t);
		}
		if (b)
			bits |= LIVE_BIT(i);
	}
	if (live_add_edge(L, src, id, bits))
		return record(w, MC_EVAL_ERROR, "the behaviour graph", "out of memory in the behaviour graph", 0, NULL);
	return 0;
}

/* A state reached (an initial one when parent is 0): constraints, the set, invariants. Returns
 * 1 to stop (an error was recorded), EVAL_ERR, or 0. */
static int found(struct worker *w, spt_val **t, uint64_t level, bool initial)
{
	struct search *S = w->S;
	struct mc_model *m = S->m;
	uint64_t parent = initial ? 0 : w->cur->fp;
	if (m->lines && !search_on_trace(m, level, t))
		return 0; /* not the trace's state there: no behaviour of the trace goes through it */
	bool in_model = true, b;
	w->run.level = (int64_t)level;
	for (uint32_t i = 0; in_model && i < m->constraints.n; i++) {
		const uint64_t *r = m->constraints.f[i].reads;
		if (!initial && r && !frames_broken(r, m->n_vars, w->cur->v, t))
			continue; /* reads nothing the step changed: holds as in the predecessor */
		if (search_eval_on(w, &m->constraints.f[i], t, NULL, &b)) {
			char doing[300];
			snprintf(doing, sizeof(doing), "evaluating the constraint %s", m->constraints.f[i].name);
			return record_eval(w, doing, parent, t);
		}
		in_model = b;
	}
	w->run.level = (int64_t)level - 1;
	for (uint32_t i = 0; !initial && in_model && i < m->action_constraints.n; i++) {
		if (search_eval_on(w, &m->action_constraints.f[i], w->cur->v, t, &b)) {
			char doing[300];
			snprintf(doing, sizeof(doing), "evaluating the action constraint %s", m->action_constraints.f[i].name);
			return record_eval(w, doing, parent, t);
		}
		in_model = b;
	}
	uint64_t fp;
	if (search_fingerprint(w, t, &fp))
		return record_eval(w, m->has_view ? "evaluating the VIEW" : "permuting by the SYMMETRY", parent, t);
	bool unseen = true;
	if (in_model) {
		int rc = fpset_put(S->fps, fp, parent);
		if (rc < 0)
			return record(w, MC_EVAL_ERROR, "the state set", "out of memory in the set of states seen", parent, NULL);
		unseen = rc == 1;
		if (unseen) /* TLC's depth: the deepest level of a state in the set */
			for (uint64_t d = atomic_load(&S->max_level); d < level && !atomic_compare_exchange_weak(&S->max_level, &d, level);)
				;
	}
	w->run.level = (int64_t)level;
	if (unseen) {
		for (uint32_t i = 0; i < m->invariants.n; i++) {
			const struct mc_formula *f = &m->invariants.f[i];
			if (!initial && f->reads && !frames_broken(f->reads, m->n_vars, w->cur->v, t))
				continue; /* reads nothing the step changed: holds as in the predecessor */
			if (search_eval_on(w, f, t, NULL, &b)) {
				char doing[300];
				snprintf(doing, sizeof(doing), "evaluating the invariant %s", f->name);
				return record_eval(w, doing, parent, t);
			}
			if (!b)
				return record(w, i < m->n_cfg_invariants ? MC_INVARIANT : MC_PROPERTY, f->name, NULL, parent, t);
		}
	}
	if (initial) {
		for (uint32_t i = 0; unseen && i < m->init_props.n; i++) {
			const struct mc_formula *f = &m->init_props.f[i];
			if (search_eval_on(w, f, t, NULL, &b)) {
				char doing[300];
				snprintf(doing, sizeof(doing), "evaluating the property %s", f->name);
				return record_eval(w, doing, parent, t);
			}
			if (!b)
				return record(w, MC_PROPERTY, f->name, NULL, parent, t);
		}
	} else {
		w->run.level = (int64_t)level - 1;
		for (uint32_t i = 0; i < m->action_props.n; i++) {
			const struct mc_formula *f = &m->action_props.f[i];
			if (search_eval_on(w, f, w->cur->v, t, &b)) {
				char doing[300];
				snprintf(doing, sizeof(doing), "evaluating the property %s", f->name);
				return record_eval(w, doing, parent, t);
			}
			if (!b)
				return record(w, MC_PROPERTY, f->name, NULL, parent, t);
		}
	}
	bool expand = !S->o->max_depth || level < S->o->max_depth;
	if (in_model && unseen && expand && keep(w, t, fp, level))
		return atomic_load(&S->stop) ? 1 : record_eval(w, "keeping a state", parent, NULL);
	if (in_model && m->live && m->live->n_checks)
		return live_step(w, t, fp, unseen, initial);
	return 0;
}

/* Keeps a copy of a successor for the properties checked when the expansion ends. */
static int remember(struct worker *w, spt_val **vals)
{
	uint32_t n = w->S->m->n_vars;
	struct mstate *st = spt_arena_alloc(&w->succ_arena, sizeof(*st) + (n + 1) * sizeof(st->v[0]));
	if (!st)
		return ev_fail(&w->in.ev, NULL, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		if (!(st->v[i] = spt_value_move(&w->succ_arena, vals[i])))
			return ev_fail(&w->in.ev, NULL, "out of memory");
	if (w->succs.n == w->succs.cap) {
		size_t cap = w->succs.cap ? w->succs.cap * 2 : 16;
		struct mstate **ns = realloc(w->succs.s, cap * sizeof(*ns));
		if (!ns)
			return ev_fail(&w->in.ev, NULL, "out of memory");
		w->succs.s = ns;
		w->succs.cap = cap;
	}
	w->succs.s[w->succs.n++] = st;
	return 0;
}

static int on_successor(struct interp *in, void *arg)
{
	struct worker *w = arg;
	if (atomic_load_explicit(&w->S->stop, memory_order_relaxed))
		return 1;
	w->generated++;
	w->succ++;
	if (w->S->m->expand_props.n && remember(w, in->next))
		return EVAL_ERR;
	return found(w, in->next, w->cur_level + 1, false);
}

/* [](A => []B) properties, as TLC checks them on the fly once a state is expanded: for the state
 * and each successor, A /\ ~B is a violation (TLCGet("queue") counting what waits then). */
static int expansion_props(struct worker *w, struct mstate *s, uint64_t level)
{
	struct mc_model *m = w->S->m;
	for (size_t k = 0; k <= w->succs.n; k++) {
		spt_val **x = k == 0 ? s->v : w->succs.s[k - 1]->v;
		w->run.level = (int64_t)(k == 0 ? level : level + 1);
		for (uint32_t i = 0; i < m->expand_props.n; i++) {
			const struct mc_formula *f = &m->expand_props.f[i];
			struct mc_formula g = { f->name, f->owner, m->expand_b[i] };
			bool a, b = true;
			if (search_eval_on(w, f, x, NULL, &a) || (a && search_eval_on(w, &g, x, NULL, &b))) {
				char doing[300];
				snprintf(doing, sizeof(doing), "evaluating the property %s", f->name);
				return record_eval(w, doing, s->fp, k ? x : NULL);
			}
			if (a && !b)
				return record(w, MC_TEMPORAL, f->name, NULL, s->fp, k ? x : NULL);
		}
	}
	return 0;
}

static int on_initial(struct interp *in, void *arg)
{
	struct worker *w = arg;
	struct search *S = w->S;
	S->init_generated++;
	size_t before = w->out.n;
	int rc = found(w, in->next, 1, true);
	if (!rc && S->m->expand_props.n && w->out.n > before) {
		/* TLC looks at an initial state right after queueing it. */
		w->succs.n = 0;
		rc = expansion_props(w, w->out.s[w->out.n - 1], 1);
	}
	return rc;
}

/* ---- the search ---- */

static void progress(struct search *S)
{
	if (!S->o->progress)
		return;
	double now = search_now();
	if (now - S->last_progress < 1.0)
		return;
	S->last_progress = now;
	uint64_t gen = S->init_generated, queue = S->level.n - (S->next < S->level.n ? S->next : S->level.n);
	for (unsigned i = 0; i < S->nw; i++) {
		gen += S->w[i].generated;
		queue += S->w[i].out.n;
	}
	struct mc_progress p = { S->level_no, gen, atomic_load(&S->distinct), queue, -1, 0 };
	if (S->m->cursor >= 0 || S->m->lines)
		for (unsigned i = 0; i < S->nw; i++) {
			const struct worker *w = &S->w[i];
			if (!w->cursor_n)
				continue;
			int64_t line = w->cursor_max + S->m->cursor_offset;
			if (line > p.line) {
				p.line = line;
				p.frontier = 0;
			}
			if (line == p.line)
				p.frontier += w->cursor_n;
		}
	S->o->progress(S->o->progress_arg, &p);
}

/* Expands one state; 1 when the search must stop. */
static int expand(struct worker *w, struct mstate *s)
{
	struct search *S = w->S;
	struct mc_model *m = S->m;
	struct interp *in = &w->in;
	spt_arena_reset(&w->scratch);
	in->ev.arena = &w->scratch;
	ev_clear_error(&in->ev);
	in->cur = s->v;
	memset(in->next, 0, m->n_vars * sizeof(*in->next));
	w->cur = s;
	w->succ = 0;
	w->run.level = (int64_t)w->cur_level;
	if (m->expand_props.n) {
		spt_arena_reset(&w->succ_arena);
		w->succs.n = 0;
	}
	struct frame *f = frame_new(in, m->next.owner, NULL, NULL);
	int rc = f ? enumerate(in, (struct ctx){ f, NULL, false }, m->next.e, on_successor, w) : EVAL_ERR;
	in->cur = w->own_cur;
	if (rc == EVAL_ERR)
		return record_eval(w, "evaluating the next-state action", s->fp, NULL);
	if (rc)
		return 1;
	w->expanded++;
	w->out_sum += w->succ;
	if (w->succ < w->out_min)
		w->out_min = (uint32_t)w->succ;
	if (w->succ > w->out_max)
		w->out_max = (uint32_t)(w->succ > UINT32_MAX ? UINT32_MAX : w->succ);
	if (!w->succ && m->check_deadlock)
		return record(w, MC_DEADLOCK, "deadlock", NULL, s->fp, NULL);
	if (m->expand_props.n && expansion_props(w, s, w->cur_level))
		return 1;
	memo_collect(&in->memo); /* the successors kept were copied out */
	return 0;
}

static void explore_level(struct worker *w)
{
	struct search *S = w->S;
	size_t n = S->level.n, chunk = n / (S->threads * 64u);
	chunk = chunk < 1 ? 1 : chunk > 64 ? 64 : chunk;
	w->cur_level = S->level_no;
	while (!atomic_load(&S->stop)) {
		size_t i = atomic_fetch_add(&S->next, chunk);
		if (i >= n)
			break;
		size_t e = i + chunk < n ? i + chunk : n;
		for (; i < e; i++) {
			w->level_index = i;
			if (expand(w, S->level.s[i]))
				return;
			if (atomic_load_explicit(&S->exit_req, memory_order_relaxed)) {
				/* TLCSet("exit", TRUE): this state's successors are all in, no other state
				 * is taken (as TLC's workers after theStateQueue.finishAll()). */
				atomic_store(&S->stop, 1);
				return;
			}
			if (w->id == 0 && (w->expanded & 255) == 0)
				progress(S);
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct search *S = w->S;
	pthread_mutex_lock(&S->ready_mu);
	while (!S->ready)
		pthread_cond_wait(&S->ready_cv, &S->ready_mu);
	pthread_mutex_unlock(&S->ready_mu);
	for (;;) {
		pthread_barrier_wait(&S->start);
		if (S->done)
			break;
		explore_level(w);
		pthread_barrier_wait(&S->end);
	}
	return NULL;
}

static uint64_t run_count(void *arg, enum tlc_counter c)
{
	struct search *S = arg;
	uint64_t v = 0;
	switch (c) {
	case TLC_DISTINCT: return atomic_load(&S->distinct);
	case TLC_DIAMETER: return S->level_no;
	case TLC_GENERATED:
		v = S->init_generated;
		for (unsigned i = 0; i < S->nw; i++)
			v += S->w[i].generated;
		return v;
	case TLC_QUEUE:
		if (S->nw == 1) {
			/* TLC's queue: the states of this level after the one being expanded, and the
			 * new ones of the next. */
			const struct worker *w = &S->w[0];
			size_t after = w->level_index == SIZE_MAX || w->level_index >= S->level.n ? 0 : S->level.n - w->level_index - 1;
			return after + w->out.n;
		}
		v = S->level.n - (S->next < S->level.n ? S->next : S->level.n);
		for (unsigned i = 0; i < S->nw; i++)
			v += S->w[i].out.n;
		return v;
	}
	return 0;
}

/* TLCExt's Trace, evaluated by worker arg's interpreter (model_trace.c). */
static int run_trace(void *arg, struct ev *ev, const struct ast *at, spt_val **out)
{
	return mc_trace_current(arg, ev, at, out);
}

int search_worker_init(struct search *S, struct worker *w, unsigned i)
{
	struct mc_model *m = S->m;
	struct interp *base = checker_interp(m->ck);
	uint32_t nc, *ar;
	spec_constants(m->spec, &ar, &nc);
	w->S = S;
	w->id = i;
	spt_arena_init(&w->long_arena);
	w->long_arena.tag = TAG_WORKER_LONG;
	spt_arena_init(&w->scratch);
	spt_arena_init(&w->lvl[0]);
	spt_arena_init(&w->lvl[1]);
	w->lvl[0].tag = TAG_LEVEL_EVEN;
	w->lvl[1].tag = TAG_LEVEL_ODD;
	interp_init(&w->in, m->spec, &w->long_arena);
	memcpy(w->in.consts, base->consts, nc * sizeof(*base->consts));
	memcpy(w->in.const_ops, base->const_ops, nc * sizeof(*base->const_ops));
	w->in.rewind = true; /* found() copies what it keeps */
	w->in.no_memo = S->o->no_memo;
	memo_set_constant(&w->in.memo, CHECKER_LONG_TAG, TAG_WORKER_LONG, SPEC_ARENA_TAG);
	w->own_cur = w->in.cur;
	w->out_min = UINT32_MAX;
	w->pv = calloc(m->n_vars + 1, sizeof(*w->pv));
	w->level_index = SIZE_MAX;
	spt_arena_init(&w->succ_arena);
	w->run = (struct tlc_run){ 0, run_count, S, S->t0, (int)i, (int)S->nw, m->check_deadlock, 0 };
	w->run.trace = run_trace;
	w->run.trace_arg = w;
	w->run.exit_req = &S->exit_req;
	w->in.ev.run = &w->run;
	return w->pv && w->in.cur && w->in.next ? 0 : -ENOMEM;
}

void search_worker_fini(struct worker *w)
{
	if (w->tracer) {
		search_worker_fini(w->tracer);
		free(w->tracer);
	}
	w->in.cur = w->own_cur;
	interp_fini(&w->in);
	spt_arena_fini(&w->long_arena);
	spt_arena_fini(&w->scratch);
	spt_arena_fini(&w->lvl[0]);
	spt_arena_fini(&w->lvl[1]);
	free(w->out.s);
	free(w->pv);
	free(w->succs.s);
	spt_arena_fini(&w->succ_arena);
}

int search_init(struct search *S, struct mc_model *m, const struct mc_opts *o, struct check_error *err)
{
	memset(S, 0, sizeof(*S));
	S->m = m;
	S->o = o;
	S->nw = o->workers ? o->workers : 1;
	if (m->live && m->live->n_checks)
		S->nw = 1; /* the behaviour graph is built by one worker */
	S->t0 = search_now();
	S->threads = 1;
	spt_arena_init(&S->err_arena);
	pthread_mutex_init(&S->err_mu, NULL);
	pthread_mutex_init(&S->ready_mu, NULL);
	pthread_cond_init(&S->ready_cv, NULL);
	if (!(S->fps = fpset_new()) || !(S->w = calloc(S->nw, sizeof(*S->w)))) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < S->nw; i++) {
		if (search_worker_init(S, &S->w[i], i)) {
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			return -ENOMEM;
		}
	}
	if (m->symmetry) {
		struct interp *in = &S->w[0].in;
		in->ev.arena = &S->w[0].long_arena;
		if (sym_group_build(in, m->symmetry, &S->w[0].long_arena, &S->sym)) {
			const struct eval_error *e = &in->ev.err;
			snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: evaluating the symmetry set %s: %s",
				 e->pos.file ? e->pos.file : "?", e->pos.line, e->pos.col, m->symmetry->name, e->msg);
			return -EINVAL;
		}
		S->has_sym = S->sym.n_perms > 1;
	}
	return 0;
}

void search_fini(struct search *S)
{
	for (unsigned i = 0; S->w && i < S->nw; i++) {
		struct worker *w = &S->w[i];
		if (w->S)
			search_worker_fini(w);
	}
	free(S->w);
	free(S->level.s);
	fpset_free(S->fps);
	spt_arena_fini(&S->err_arena);
	pthread_mutex_destroy(&S->err_mu);
	pthread_mutex_destroy(&S->ready_mu);
	pthread_cond_destroy(&S->ready_cv);
}

/* The next level: every worker's new states, in worker order. */
static int gather(struct search *S)
{
	size_t total = 0;
	for (unsigned i = 0; i < S->nw; i++)
		total += S->w[i].out.n;
	if (total > S->level.cap) {
		struct mstate **ns = realloc(S->level.s, total * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		S->level.s = ns;
		S->level.cap = total;
	}
	S->level.n = 0;
	for (unsigned i = 0; i < S->nw; i++) {
		if (S->w[i].out.n)
			memcpy(S->level.s + S->level.n, S->w[i].out.s, S->w[i].out.n * sizeof(struct mstate *));
		S->level.n += S->w[i].out.n;
		S->w[i].out.n = 0;
	}
	return 0;
}

static int initial_states(struct search *S)
{
	struct worker *w = &S->w[0];
	struct interp *in = &w->in;
	struct mc_model *m = S->m;
	spt_arena_reset(&w->scratch);
	in->ev.arena = &w->scratch;
	ev_clear_error(&in->ev);
	in->init_mode = true;
	memset(in->next, 0, m->n_vars * sizeof(*in->next));
	w->cur_level = 0;
	w->run.level = 0;
	struct frame *f = frame_new(in, m->init.owner, NULL, NULL);
	int rc = f ? enumerate(in, (struct ctx){ f, NULL, false }, m->init.e, on_initial, w) : EVAL_ERR;
	in->init_mode = false;
	if (rc == EVAL_ERR)
		record_eval(w, "evaluating the initial predicate", 0, NULL);
	S->init_distinct = atomic_load(&S->distinct);
	return 0;
}

int search_run(struct search *S, struct check_error *err)
{
	(void)err;
	initial_states(S);
	/* Workers wait until the barriers are made for as many as could be started. */
	unsigned started = 1;
	pthread_mutex_lock(&S->ready_mu);
	for (unsigned i = 1; i < S->nw; i++) {
		if (interp_thread_create(&S->w[i].thread, worker_main, &S->w[i]))
			break;
		S->w[i].started = true;
		started++;
	}
	S->threads = started;
	if (started > 1) {
		pthread_barrier_init(&S->start, NULL, started);
		pthread_barrier_init(&S->end, NULL, started);
	}
	S->ready = true;
	pthread_cond_broadcast(&S->ready_cv);
	pthread_mutex_unlock(&S->ready_mu);
	S->level_no = 1;
	bool explored = false;
	while (!atomic_load(&S->stop) && !atomic_load(&S->exit_req)) {
		if (gather(S)) {
			record(&S->w[0], MC_EVAL_ERROR, "memory", "out of memory gathering the next level", 0, NULL);
			break;
		}
		if (!S->level.n)
			break;
		if (!S->m->has_next)
			break; /* no NEXT: the initial states are all there is */
		for (unsigned i = 0; i < S->nw; i++)
			spt_arena_reset(&S->w[i].lvl[(S->level_no + 1) & 1]); /* level - 1: all expanded */
		atomic_store(&S->next, 0);
		if (started > 1)
			pthread_barrier_wait(&S->start);
		explore_level(&S->w[0]);
		if (started > 1)
			pthread_barrier_wait(&S->end);
		S->level_no++;
		explored = true;
	}
	/* TLCGet("diameter") after the search (a POSTCONDITION's) is, as TLC's, the level of the
	 * last states expanded, not the one after it. */
	if (explored)
		S->level_no--;
	S->done = true;
	if (started > 1) {
		pthread_barrier_wait(&S->start);
		for (unsigned i = 1; i < S->nw; i++)
			if (S->w[i].started)
				pthread_join(S->w[i].thread, NULL);
		pthread_barrier_destroy(&S->start);
		pthread_barrier_destroy(&S->end);
	}
	return 0;
}
