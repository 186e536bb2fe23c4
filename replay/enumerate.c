/*
 * Successor enumeration with TLC's semantics: an action is read left to right; x' = e assigns x'
 * when x' has no value yet (else it is a guard), x' \in S branches over S, disjunctions and \E
 * branch, UNCHANGED v assigns v's variables their current values, and anything else is a guard.
 * In Init mode the unprimed variables are the ones assigned.
 *
 * What a branch allocates is given back when it returns (the arena is rewound): a successor
 * that must outlive its branch is copied by the callback.
 */
#include <stdio.h>
#include <string.h>

#include "enumerate.h"
#include "hoist.h"

/* What is left to do after the current conjunct: a linked list of (expression, context). */
struct cont {
	const struct ast *e;
	struct ctx c;
	const struct cont *next;
	bool changed; /* e is the v of <<A>>_v, reached after A: go on only when v' # v */
	bool rebind;  /* e is an A_INST whose steps are done: its instance's parameters are
		       * bound to c.f again (as before it) for the steps after it */
};

struct en {
	struct interp *in;
	succ_fn fn;
	void *arg;
	int depth;
	struct hoist_watch *w;
};

#define MAX_STEP_DEPTH 20000

static int step(struct en *en, const struct cont *k);

static int fail_unassigned(struct en *en, const struct ast *at)
{
	struct interp *in = en->in;
	for (uint32_t i = 0; i < in->n_vars; i++)
		if (!in->next[i])
			return ev_fail(&in->ev, at, in->init_mode ? "Init does not assign %s" : "the action does not assign %s' (it says nothing of it)", in->vars[i]);
	return 0;
}

static int done(struct en *en, const struct ast *at)
{
	if (!en->in->partial && fail_unassigned(en, at))
		return EVAL_ERR;
	return en->fn(en->in, en->arg);
}

static int next(struct en *en, const struct cont *k, const struct ast *at)
{
	return k ? step(en, k) : done(en, at);
}

/* The state variable x names (a variable, an instance's substitution by one, or a parameter
 * bound to one), or -1. */
static int var_index(struct interp *in, struct ctx c, const struct ast *x)
{
	for (int guard = 0; guard < 16 && x->kind == A_NAME && x->n == 0; guard++) {
		if (x->ref == REF_VAR)
			return (int)x->slot;
		if (x->ref == REF_SUBST) {
			/* (A parameterized instance's substitution names its parameters: their frame.) */
			if (x->ipar && subst_ctx(in, x, c.primed, &c))
				break;
			x = x->r.subst;
			continue;
		}
		const struct ast *t = thunk_expr(&c, x);
		if (!t || c.primed)
			break;
		x = t;
	}
	return -1;
}

/* The variable an assignment target denotes: x' in actions, x in Init. */
static int target(struct interp *in, struct ctx c, const struct ast *lhs)
{
	if (in->init_mode)
		return c.primed ? -1 : var_index(in, c, lhs);
	for (int guard = 0; guard < 16 && !c.primed; guard++) {
		if (lhs->kind == A_PRIME)
			return var_index(in, c, lhs->a[0]);
		/* A parameter standing for x' (Send(p, m, m') == m' = ...: lhs is m). */
		const struct ast *t = thunk_expr(&c, lhs);
		if (!t)
			break;
		lhs = t;
	}
	return -1;
}

static int assign(struct en *en, int var, spt_val *v, const struct cont *rest, const struct ast *at)
{
	struct interp *in = en->in;
	in->next[var] = v;
	int rc = next(en, rest, at);
	in->next[var] = NULL;
	return rc;
}

void show_value_cut(char *buf, size_t size, spt_val *v)
{
	FILE *f = fmemopen(buf, size, "w");
	if (!f) {
		buf[0] = '\0';
		return;
	}
	setvbuf(f, NULL, _IONBF, 0);
	spt_value_print(f, v);
	long n = ftell(f);
	fclose(f);
	buf[size - 1] = '\0';
	if (n >= (long)size - 1 && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/* A guard was false: keep it when it is the deepest so far, with both sides of a relation. */
static void note_false(struct en *en, const struct cont *k)
{
	struct interp *in = en->in;
	struct en_diag *d = in->diag;
	if (en->depth <= d->depth)
		return;
	const struct ast *e = k->e;
	struct spt_arena_mark m = spt_arena_mark(in->ev.arena);
	/* P => Q false: Q is what failed. */
	for (bool b; e->kind == A_NAME && e->ref == REF_BUILTIN && e->r.bi->code == BI_IMPLIES && e->n == 2;) {
		if (eval_bool(in, k->c, e->a[0], &b) || !b)
			break;
		e = e->a[1];
	}
	ev_clear_error(&in->ev);
	d->depth = en->depth;
	d->pos = e->pos;
	uint32_t na = in->n_actions < 16 ? in->n_actions : 16;
	d->action = na ? in->actions[na - 1] : NULL;
	d->sides = false;
	if (e->kind != A_NAME || e->ref != REF_BUILTIN || e->n != 2) {
		spt_arena_rewind(in->ev.arena, m);
		return;
	}
	spt_val *l, *r;
	if (!eval(in, k->c, e->a[0], &l) && !eval(in, k->c, e->a[1], &r)) {
		snprintf(d->op, sizeof(d->op), "%s", e->r.bi->name);
		show_value_cut(d->lhs, sizeof(d->lhs), l);
		show_value_cut(d->rhs, sizeof(d->rhs), r);
		d->sides = true;
	}
	ev_clear_error(&in->ev);
	spt_arena_rewind(in->ev.arena, m);
}

static int guard(struct en *en, const struct cont *k)
{
	bool b;
	if (eval_bool(en->in, k->c, k->e, &b))
		return EVAL_ERR;
	if (!b && en->in->diag)
		note_false(en, k);
	struct hoist_watch *w = en->w;
	if (w && w->armed) {
		if (k->e != w->h->g[w->idx])
			w->armed = false;
		else if (!b) {
			w->skip = w->h->m[w->idx];
			w->armed = false;
		} else if (++w->idx == w->h->n)
			w->armed = false;
	}
	return b ? next(en, k->next, k->e) : 0;
}

/* x' = e, x' \in S: assignments when x' is still free. */
static int relation(struct en *en, const struct cont *k, bool *handled)
{
	struct interp *in = en->in;
	const struct ast *e = k->e;
	*handled = false;
	if (e->ref != REF_BUILTIN || e->n != 2 || (e->r.bi->code != BI_EQ && e->r.bi->code != BI_IN))
		return 0;
	int var = target(in, k->c, e->a[0]);
	if (var < 0 || in->next[var])
		return 0;
	*handled = true;
	spt_val *v;
	if (eval(in, k->c, e->a[1], &v))
		return EVAL_ERR;
	if (e->r.bi->code == BI_EQ)
		return assign(en, var, v, k->next, e);
	if (v->kind != SPT_SET)
		return ev_fail(&in->ev, e->a[1], "%s' \\in S needs a finite set, not %s", in->vars[var], ev_show(&in->ev, v));
	struct spt_arena *a = in->ev.arena;
	for (uint32_t i = 0; i < v->n; i++) {
		struct spt_arena_mark m = spt_arena_mark(a);
		int rc = assign(en, var, v->u.elems[i], k->next, e);
		if (in->rewind)
			spt_arena_rewind(a, m);
		if (rc)
			return rc;
	}
	return 0;
}

/* The frame a zero-parameter definition's body is evaluated in. */
static int def_frame(struct interp *in, const struct opdef *d, struct frame *env, const struct ast *at, struct ctx *out)
{
	struct frame *f = frame_new(in, d, env, at);
	if (!f)
		return EVAL_ERR;
	*out = (struct ctx){ f, NULL, false };
	return 0;
}

/* UNCHANGED v: each variable in v (a variable, a tuple, or a name for one) keeps its value. */
static int unchanged(struct en *en, const struct ast *v, struct ctx c, const struct cont *rest, const struct ast *at)
{
	struct interp *in = en->in;
	if (v->kind == A_TUPLE) {
		if (v->n == 0)
			return next(en, rest, at);
		/* UNCHANGED <<a, b, c>> = UNCHANGED a /\ UNCHANGED <<b, c>> */
		struct ast *tail = spt_arena_alloc(in->ev.arena, sizeof(*tail));
		struct ast *un = spt_arena_alloc(in->ev.arena, sizeof(*un));
		struct ast **ua = spt_arena_alloc(in->ev.arena, sizeof(*ua));
		if (!tail || !un || !ua)
			return ev_fail(&in->ev, at, "out of memory");
		*tail = *v;
		tail->a++;
		tail->n--;
		memset(un, 0, sizeof(*un));
		un->kind = A_UNCHANGED;
		un->pos = v->pos;
		un->n = 1;
		un->a = ua;
		un->a[0] = tail;
		struct cont k2 = { un, c, rest, false };
		return unchanged(en, v->a[0], c, &k2, at);
	}
	int var = var_index(in, c, v);
	if (var >= 0) {
		if (!in->cur[var])
			return ev_fail(&in->ev, v, "UNCHANGED %s, but %s has no value in this state", in->vars[var], in->vars[var]);
		if (!in->next[var])
			return assign(en, var, in->cur[var], rest, at);
		return spt_value_eq(in->next[var], in->cur[var]) ? next(en, rest, at) : 0;
	}
	if (v->kind == A_NAME && v->n == 0) {
		struct ctx dc;
		if (v->ref == REF_DEF && !v->r.def->n_params && !v->r.def->n_fbounds) {
			if (def_frame(in, v->r.def, NULL, v, &dc))
				return EVAL_ERR;
			return unchanged(en, v->r.def->body, dc, rest, at);
		}
		/* A LET name for a tuple of variables. */
		if (v->ref == REF_LOCAL) {
			struct cell *cell = local_cell(c, v);
			const struct closure *cl = cell ? cell->op : NULL;
			if (cl && cl->def && !cl->def->n_params && !cl->def->n_fbounds) {
				if (def_frame(in, cl->def, cl->env, v, &dc))
					return EVAL_ERR;
				return unchanged(en, cl->def->body, dc, rest, at);
			}
		}
	}
	/* Any other expression: UNCHANGED e is the guard e' = e. */
	struct ast tmp = { .kind = A_UNCHANGED, .pos = v->pos, .n = 1, .a = (struct ast *[]){ (struct ast *)v } };
	bool b;
	if (eval_bool(in, c, &tmp, &b))
		return EVAL_ERR;
	return b ? next(en, rest, at) : 0;
}

/* A \cdot B: A's successors u of the current state, each as the state B steps from. */
struct cdot_st {
	struct en *en;
	const struct ast *b;
	struct ctx c;
	const struct cont *rest;
	spt_val **from;   /* the state A steps from */
	spt_val **outer;  /* the next state being built outside (B's target) */
};

/* After B: its target is the step's; go on with the rest from the state A started in. */
static int cdot_after_b(struct interp *in, void *arg)
{
	struct cdot_st *st = arg;
	spt_val **mid = in->cur;
	in->cur = st->from;
	int rc = next(st->en, st->rest, st->b);
	in->cur = mid;
	return rc;
}

static int cdot_mid(struct interp *in, void *arg)
{
	struct cdot_st *st = arg;
	spt_val **mid = spt_arena_alloc(in->ev.arena, (in->n_vars + 1) * sizeof(*mid));
	if (!mid)
		return ev_fail(&in->ev, st->b, "out of memory");
	memcpy(mid, in->next, in->n_vars * sizeof(*mid));
	spt_val **a_next = in->next;
	in->cur = mid;
	in->next = st->outer;
	struct en sub = { in, cdot_after_b, st, st->en->depth, st->en->w };
	struct cont k = { st->b, st->c, NULL, false };
	int rc = step(&sub, &k);
	in->cur = st->from;
	in->next = a_next;
	return rc;
}

static int cdot(struct en *en, const struct cont *k)
{
	struct interp *in = en->in;
	const struct ast *e = k->e;
	if (in->init_mode)
		return ev_fail(&in->ev, e, "\\cdot in Init");
	spt_val **a_next = spt_arena_alloc(in->ev.arena, (in->n_vars + 1) * sizeof(*a_next));
	if (!a_next)
		return ev_fail(&in->ev, e, "out of memory");
	memset(a_next, 0, (in->n_vars + 1) * sizeof(*a_next));
	/* As TLC's s0.copyWith(s1): a variable the step assigned before the composition (a trace
	 * spec's line counter: l' = l + 1 /\ (A \cdot B)) keeps its old value in the middle state, and
	 * its new one is the step's. */
	for (uint32_t i = 0; !in->next_known && i < in->n_vars; i++)
		a_next[i] = in->next[i] ? in->cur[i] : NULL;
	struct cdot_st st = { en, e->a[1], k->c, k->next, in->cur, in->next };
	in->next = a_next;
	struct en sub = { in, cdot_mid, &st, en->depth, NULL };
	struct cont ka = { e->a[0], k->c, NULL, false };
	int rc = step(&sub, &ka);
	in->next = st.outer;
	return rc;
}

struct exists_st {
	struct en *en;
	const struct ast *body;
	const struct cont *rest;
	struct hoist_watch *w; /* the \E's hoisted guards, or NULL */
};

static int exists_one(struct interp *in, struct ctx c, void *arg)
{
	struct exists_st *st = arg;
	struct spt_arena_mark m = spt_arena_mark(in->ev.arena);
	struct cont k = { st->body, c, st->rest, false };
	struct hoist_watch *saved = st->en->w, *w = st->w;
	if (w)
		*w = (struct hoist_watch){ w->h, 0, true, -1 };
	st->en->w = w;
	int rc = step(st->en, &k);
	st->en->w = saved;
	if (in->rewind)
		spt_arena_rewind(in->ev.arena, m);
	if (!rc && w && w->skip >= 0)
		return EVAL_SKIP(w->skip);
	return rc;
}

/* A call of an action operator: go on inside its body. */
static int call(struct en *en, const struct cont *k, bool *handled)
{
	struct interp *in = en->in;
	const struct ast *e = k->e;
	const struct opdef *d = NULL;
	struct frame *env = NULL;
	*handled = false;
	if (e->ref == REF_DEF && !e->r.def->n_fbounds) {
		d = e->r.def;
	} else if (e->ref == REF_CONST && in->const_ops[e->slot] && in->const_ops[e->slot]->def) {
		d = in->const_ops[e->slot]->def; /* an operator constant the cfg gives (Send <- MCSend) */
	} else if (e->ref == REF_LOCAL) {
		struct cell *cell = local_cell(k->c, e);
		if (cell && cell->op && cell->op->def && !cell->op->def->n_fbounds) {
			d = cell->op->def;
			env = cell->op->env;
		}
	}
	/* Constant and state predicates are guards (but Init's state predicates assign). */
	/* (A constant-level operator given primed arguments is an action too: Send(p, m, m').) */
	if (!d || !(d->level >= L_ACTION || d->primes_params || e->level >= L_ACTION ||
		    (in->init_mode && (d->level >= L_STATE || e->level >= L_STATE))))
		return 0;
	*handled = true;
	struct frame *f;
	if (bind_args(in, k->c, e, d, env, &f))
		return EVAL_ERR;
	struct cont k2 = { d->body, { f, NULL, false }, k->next, false };
	if (!in->track_actions)
		return step(en, &k2);
	uint32_t at = in->n_actions++;
	if (at < sizeof(in->actions) / sizeof(in->actions[0]))
		in->actions[at] = d;
	int rc = step(en, &k2);
	in->n_actions = at;
	return rc;
}

static int step_inner(struct en *en, const struct cont *k);

/* P(a)!Op (A_INST): P's parameters are the first cells of the frame while Op's steps are taken
 * (as eval binds them); the steps after Op see the binding from before (a rebind cont). Out of
 * line: step_inner's frame is on the stack once per step. */
__attribute__((noinline)) static int inst_step(struct en *en, const struct cont *k)
{
	const struct ast *e = k->e;
	struct frame **slot = &en->in->ibind[e->ipar - 1];
	if (k->rebind) {
		struct frame *inner = *slot;
		*slot = k->c.f;
		int rc = next(en, k->next, e);
		*slot = inner;
		return rc;
	}
	struct frame *saved = *slot;
	struct cont back = { e, { saved, NULL, false }, k->next, false, true };
	struct cont k2 = { e->a[0], k->c, &back, false, false };
	*slot = k->c.f;
	int rc = step(en, &k2);
	*slot = saved;
	return rc;
}

static int step(struct en *en, const struct cont *k)
{
	/* Steps recurse on the C stack, and each one may evaluate (eval guards its own half from
	 * where it starts): the steps may take a quarter. */
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (en->depth == 0)
		en->in->step_stack_base = here;
	uintptr_t base = en->in->step_stack_base;
	if (++en->depth > MAX_STEP_DEPTH || (base > here && base - here > interp_stack_budget() / 2)) {
		int d = en->depth--;
		return ev_fail(&en->in->ev, k->e,
			       "the action unfolds %d steps deep, more than %s (a RECURSIVE action calling itself?)", d,
			       d > MAX_STEP_DEPTH ? "the step limit" : "the stack allows");
	}
	int rc = step_inner(en, k);
	en->depth--;
	return rc;
}

static int step_inner(struct en *en, const struct cont *k)
{
	struct interp *in = en->in;
	const struct ast *e = k->e;
	if (k->rebind)
		return inst_step(en, k);
	if (k->changed) {
		struct ast same = { .kind = A_UNCHANGED, .pos = e->pos, .n = 1, .a = (struct ast *[]){ (struct ast *)e } };
		bool b;
		if (eval_bool(in, k->c, &same, &b))
			return EVAL_ERR;
		return b ? 0 : next(en, k->next, e);
	}
	/* The initial states of a SPECIFICATION: its temporal conjuncts ([][Next]_v, fairness) say
	 * nothing about them. */
	if (in->init_mode && e->level == L_TEMPORAL && e->kind != A_AND && e->kind != A_LET &&
	    !(e->kind == A_NAME && (e->ref == REF_DEF || e->ref == REF_LOCAL)))
		return next(en, k->next, e);
	switch (e->kind) {
	case A_AND: {
		if (e->n == 0)
			return next(en, k->next, e);
		struct cont *ks = spt_arena_alloc(in->ev.arena, e->n * sizeof(*ks));
		if (!ks)
			return ev_fail(&in->ev, e, "out of memory");
		for (uint32_t i = e->n; i-- > 0;)
			ks[i] = (struct cont){ e->a[i], k->c, i + 1 < e->n ? &ks[i + 1] : k->next, false };
		return step(en, &ks[0]);
	}
	case A_OR:
		for (uint32_t i = 0; i < e->n; i++) {
			struct spt_arena_mark m = spt_arena_mark(in->ev.arena);
			struct cont k2 = { e->a[i], k->c, k->next, false };
			int rc = step(en, &k2);
			if (in->rewind)
				spt_arena_rewind(in->ev.arena, m);
			if (rc)
				return rc;
		}
		return 0;
	case A_EXISTS: {
		if (en->w)
			en->w->armed = false; /* an enclosing \E's guards are behind */
		struct hoist_watch w = { e->hoist, 0, false, -1 };
		struct exists_st st = { en, e->a[0], k->next, e->hoist && !in->init_mode && !in->diag ? &w : NULL };
		int rc = eval_bounds(in, k->c, e->bounds, e->n_bounds, exists_one, &st);
		return rc >= EVAL_SKIP_BASE ? 0 : rc;
	}
	case A_IF: {
		bool b;
		if (eval_bool(in, k->c, e->a[0], &b))
			return EVAL_ERR;
		struct cont k2 = { e->a[b ? 1 : 2], k->c, k->next, false };
		return step(en, &k2);
	}
	case A_CASE: {
		uint32_t arms = (e->n - e->has_other) / 2;
		for (uint32_t i = 0; i < arms; i++) {
			bool b;
			if (eval_bool(in, k->c, e->a[2 * i], &b))
				return EVAL_ERR;
			if (b) {
				struct cont k2 = { e->a[2 * i + 1], k->c, k->next, false };
				return step(en, &k2);
			}
		}
		if (!e->has_other)
			return ev_fail(&in->ev, e, "no CASE arm is true, and there is no OTHER");
		struct cont k2 = { e->a[e->n - 1], k->c, k->next, false };
		return step(en, &k2);
	}
	case A_LET: {
		/* Bind the definitions as eval does, then go on with the body as an action. */
		if (!k->c.f)
			return ev_fail(&in->ev, e, "internal: LET without a frame");
		for (uint32_t i = 0; i < e->n_defs; i++) {
			struct closure *cl = spt_arena_alloc(in->ev.arena, sizeof(*cl));
			if (!cl)
				return ev_fail(&in->ev, e, "out of memory");
			*cl = (struct closure){ e->defs[i], k->c.f, NULL };
			k->c.f->c[e->def_slots[i]].op = cl;
			k->c.f->c[e->def_slots[i]].v = NULL;
		}
		struct cont k2 = { e->a[0], k->c, k->next, false };
		return step(en, &k2);
	}
	case A_INST:
		return inst_step(en, k);
	case A_CDOT:
		return cdot(en, k);
	case A_UNCHANGED:
		if (in->init_mode)
			return ev_fail(&in->ev, e, "UNCHANGED in Init");
		return unchanged(en, e->a[0], k->c, k->next, e);
	case A_STUTTER: {
		/* [A]_v: A \/ UNCHANGED v; <<A>>_v: A /\ v' # v, checked as A then the guard. */
		if (e->num) {
			struct cont kc = { e->a[1], k->c, k->next, true };
			struct cont k2 = { e->a[0], k->c, &kc, false };
			return step(en, &k2);
		}
		struct spt_arena_mark m = spt_arena_mark(in->ev.arena);
		struct cont k2 = { e->a[0], k->c, k->next, false };
		int rc = step(en, &k2);
		if (in->rewind)
			spt_arena_rewind(in->ev.arena, m);
		if (rc)
			return rc;
		return unchanged(en, e->a[1], k->c, k->next, e);
	}
	case A_NAME: {
		if (e->ref == REF_LOCAL && !e->n) {
			/* A parameter bound to an action (NoStutter(l0(self)) == ... /\ A): go on in it. */
			struct ctx tc = k->c;
			const struct ast *t = thunk_expr(&tc, e);
			if (t) {
				struct cont k2 = { t, tc, k->next, false };
				return step(en, &k2);
			}
		}
		bool handled;
		int rc = relation(en, k, &handled);
		if (rc || handled)
			return rc;
		if ((rc = call(en, k, &handled)) || handled)
			return rc;
		return guard(en, k);
	}
	default:
		return guard(en, k);
	}
}

int enumerate(struct interp *in, struct ctx c, const struct ast *action, succ_fn fn, void *arg)
{
	struct en en = { in, fn, arg, 0, NULL };
	struct cont k = { action, c, NULL, false };
	return step(&en, &k);
}
