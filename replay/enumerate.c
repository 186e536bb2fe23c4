/*
 * Successor enumeration with TLC's semantics: an action is read left to right; x' = e assigns x'
 * when x' has no value yet (else it is a guard), x' \in S branches over S, disjunctions and \E
 * branch, UNCHANGED v assigns v's variables their current values, and anything else is a guard.
 * In Init mode the unprimed variables are the ones assigned.
 */
#include <string.h>

#include "enumerate.h"

/* What is left to do after the current conjunct: a linked list of (expression, context). */
struct cont {
	const struct ast *e;
	struct ctx c;
	const struct cont *next;
	bool changed; /* e is the v of <<A>>_v, reached after A: go on only when v' # v */
};

struct en {
	struct interp *in;
	succ_fn fn;
	void *arg;
};

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
	if (fail_unassigned(en, at))
		return EVAL_ERR;
	return en->fn(en->in, en->arg);
}

static int next(struct en *en, const struct cont *k, const struct ast *at)
{
	return k ? step(en, k) : done(en, at);
}

/* The index of the state variable x names in c (not shadowed), or -1. */
static int var_index(struct interp *in, struct ctx c, const struct ast *x)
{
	if (x->kind != A_NAME || x->n != 0)
		return -1;
	struct resolved r;
	if (resolve(in, c, x, x->name, 0, &r) || r.kind != R_VAR)
		return -1;
	return (int)r.index;
}

/* The variable an assignment target denotes: x' in actions, x in Init. */
static int target(struct interp *in, struct ctx c, const struct ast *lhs, bool *primed_ctx)
{
	*primed_ctx = false;
	if (in->init_mode)
		return c.primed ? -1 : var_index(in, c, lhs);
	if (lhs->kind == A_PRIME && !c.primed) {
		*primed_ctx = true;
		return var_index(in, c, lhs->a[0]);
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

static int guard(struct en *en, const struct cont *k)
{
	bool b;
	if (eval_bool(en->in, k->c, k->e, &b))
		return EVAL_ERR;
	return b ? next(en, k->next, k->e) : 0;
}

/* x' = e, x' \in S: assignments when x' is still free. */
static int relation(struct en *en, const struct cont *k, bool *handled)
{
	struct interp *in = en->in;
	const struct ast *e = k->e;
	*handled = false;
	bool eq = !strcmp(e->name, "="), mem = !strcmp(e->name, "\\in");
	if (e->n != 2 || (!eq && !mem))
		return 0;
	bool primed;
	int var = target(in, k->c, e->a[0], &primed);
	if (var < 0 || in->next[var])
		return 0;
	*handled = true;
	spt_val *v;
	if (eq) {
		if (eval(in, k->c, e->a[1], &v))
			return EVAL_ERR;
		return assign(en, var, v, k->next, e);
	}
	if (eval(in, k->c, e->a[1], &v))
		return EVAL_ERR;
	if (v->kind != SPT_SET)
		return ev_fail(&in->ev, e->a[1], "%s' \\in S needs a finite set, not %s", in->vars[var], ev_show(&in->ev, v));
	for (uint32_t i = 0; i < v->n; i++) {
		int rc = assign(en, var, v->u.elems[i], k->next, e);
		if (rc)
			return rc;
	}
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
		if (!tail)
			return ev_fail(&in->ev, at, "out of memory");
		*tail = *v;
		tail->a++;
		tail->n--;
		struct ast *un = spt_arena_alloc(in->ev.arena, sizeof(*un));
		if (!un)
			return ev_fail(&in->ev, at, "out of memory");
		memset(un, 0, sizeof(*un));
		un->kind = A_UNCHANGED;
		un->pos = v->pos;
		un->n = 1;
		un->a = spt_arena_alloc(in->ev.arena, sizeof(*un->a));
		if (!un->a)
			return ev_fail(&in->ev, at, "out of memory");
		un->a[0] = tail;
		struct cont k2 = { un, c, rest };
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
		struct resolved r;
		if (resolve(in, c, v, v->name, 0, &r))
			return EVAL_ERR;
		if (r.kind == R_DEF && !r.def->n_params && !r.def->n_fbounds)
			return unchanged(en, r.def->body, (struct ctx){ NULL, r.mod, NULL, false }, rest, at);
		/* A LET name for a tuple of variables. */
		if (r.kind == R_CLOSURE && r.op->def && !r.op->lambda && !r.op->def->n_params && !r.op->def->n_fbounds)
			return unchanged(en, r.op->def->body, (struct ctx){ r.op->env, r.op->mod, NULL, false }, rest, at);
	}
	/* Any other expression: UNCHANGED e is the guard e' = e. */
	struct ast tmp = { .kind = A_UNCHANGED, .pos = v->pos, .n = 1, .a = (struct ast *[]){ (struct ast *)v } };
	bool b;
	if (eval_bool(in, c, &tmp, &b))
		return EVAL_ERR;
	return b ? next(en, rest, at) : 0;
}

struct exists_st {
	struct en *en;
	const struct ast *body;
	const struct cont *rest;
};

static int exists_one(struct interp *in, struct ctx c, void *arg)
{
	(void)in;
	struct exists_st *st = arg;
	struct cont k = { st->body, c, st->rest };
	return step(st->en, &k);
}

static int step(struct en *en, const struct cont *k)
{
	struct interp *in = en->in;
	const struct ast *e = k->e;
	if (k->changed) {
		struct ast same = { .kind = A_UNCHANGED, .pos = e->pos, .n = 1, .a = (struct ast *[]){ (struct ast *)e } };
		bool b;
		if (eval_bool(in, k->c, &same, &b))
			return EVAL_ERR;
		return b ? 0 : next(en, k->next, e);
	}
	switch (e->kind) {
	case A_AND: {
		if (e->n == 0)
			return next(en, k->next, e);
		struct cont *ks = spt_arena_alloc(in->ev.arena, e->n * sizeof(*ks));
		if (!ks)
			return ev_fail(&in->ev, e, "out of memory");
		for (uint32_t i = e->n; i-- > 0;)
			ks[i] = (struct cont){ e->a[i], k->c, i + 1 < e->n ? &ks[i + 1] : k->next };
		return step(en, &ks[0]);
	}
	case A_OR:
		for (uint32_t i = 0; i < e->n; i++) {
			struct cont k2 = { e->a[i], k->c, k->next };
			int rc = step(en, &k2);
			if (rc)
				return rc;
		}
		return 0;
	case A_EXISTS: {
		struct exists_st st = { en, e->a[0], k->next };
		return eval_bounds(in, k->c, e->bounds, e->n_bounds, exists_one, &st);
	}
	case A_IF: {
		bool b;
		if (eval_bool(in, k->c, e->a[0], &b))
			return EVAL_ERR;
		struct cont k2 = { e->a[b ? 1 : 2], k->c, k->next };
		return step(en, &k2);
	}
	case A_CASE: {
		uint32_t arms = (e->n - e->has_other) / 2;
		for (uint32_t i = 0; i < arms; i++) {
			bool b;
			if (eval_bool(in, k->c, e->a[2 * i], &b))
				return EVAL_ERR;
			if (b) {
				struct cont k2 = { e->a[2 * i + 1], k->c, k->next };
				return step(en, &k2);
			}
		}
		if (!e->has_other)
			return ev_fail(&in->ev, e, "no CASE arm is true, and there is no OTHER");
		struct cont k2 = { e->a[e->n - 1], k->c, k->next };
		return step(en, &k2);
	}
	case A_LET: {
		/* Bind the definitions as eval does, then go on with the body as an action. */
		struct ctx lc = k->c;
		for (uint32_t i = 0; i < e->n_defs; i++) {
			struct closure *cl = spt_arena_alloc(in->ev.arena, sizeof(*cl));
			struct binding *b = spt_arena_alloc(in->ev.arena, sizeof(*b));
			if (!cl || !b)
				return ev_fail(&in->ev, e, "out of memory");
			*cl = (struct closure){ e->defs[i], NULL, NULL, k->c.mod };
			*b = (struct binding){ e->defs[i]->name, NULL, cl, lc.env };
			lc.env = b;
		}
		for (struct binding *b = lc.env; b != k->c.env; b = b->next)
			b->op->env = lc.env;
		struct cont k2 = { e->a[0], lc, k->next };
		return step(en, &k2);
	}
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
		struct cont k2 = { e->a[0], k->c, k->next };
		int rc = step(en, &k2);
		if (rc)
			return rc;
		return unchanged(en, e->a[1], k->c, k->next, e);
	}
	case A_NAME: {
		bool handled;
		int rc = relation(en, k, &handled);
		if (rc || handled)
			return rc;
		if (!strcmp(e->name, "=>") || !strcmp(e->name, "~"))
			return guard(en, k);
		/* A call of an action operator: go on inside its body. */
		struct resolved r;
		if (resolve(in, k->c, e, e->name, e->n, &r))
			return EVAL_ERR;
		if (r.kind == R_DEF && !r.def->n_fbounds) {
			struct ctx body;
			if (apply_def(in, k->c, e, r.def, r.mod, NULL, (const struct ast *const *)e->a, e->n, &body))
				return EVAL_ERR;
			struct cont k2 = { r.def->body, body, k->next };
			return step(en, &k2);
		}
		if (r.kind == R_CLOSURE && r.op->def && !r.op->lambda) {
			struct ctx body;
			if (apply_def(in, k->c, e, r.op->def, r.op->mod, r.op->env, (const struct ast *const *)e->a, e->n, &body))
				return EVAL_ERR;
			struct cont k2 = { r.op->def->body, body, k->next };
			return step(en, &k2);
		}
		return guard(en, k);
	}
	default:
		return guard(en, k);
	}
}

int enumerate(struct interp *in, struct ctx c, const struct ast *action, succ_fn fn, void *arg)
{
	struct en en = { in, fn, arg };
	struct cont k = { action, c, NULL };
	return step(&en, &k);
}
