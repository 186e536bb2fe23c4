/*
 * Liveness (liveness.h): the properties taken apart at load, the behaviour graph the search
 * builds, and the search for fair cycles in it.
 *
 * Each check asks for a cycle of a region of the graph (every state has a stuttering step to
 * itself: a behaviour may stop anywhere unless fairness forbids it), found as a strongly
 * connected component. A component is fair when, for each WF_v(A) of the spec, it has a state
 * where <<A>>_v is not enabled or a step of <<A>>_v inside it, and, for each SF_v(A), a step of
 * <<A>>_v inside it or no state where it is enabled; when only the latter fails, the states
 * where A is enabled are taken out and the rest searched again (Streett emptiness).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "liveness.h"

#define MAX_BIND 16

/* Where a formula is evaluated: a definition's frame with some of its cells bound. */
struct lctx {
	const struct opdef *owner;
	uint32_t nb;
	uint32_t slots[MAX_BIND];
	spt_val *vals[MAX_BIND];
	int guard;      /* under IF c THEN ... ELSE ...: the state atom c (-1: none) */
	bool guard_neg;
};


static struct live *live_of(struct mc_model *m)
{
	if (!m->live && (m->live = calloc(1, sizeof(*m->live))))
		for (int i = 0; i < LIVE_MAX_ATOMS; i++)
			m->live->en_step[i] = -1;
	return m->live;
}

/* f with c's bindings, copied where the model lives. */
static int formula(struct mc_model *m, const char *name, const struct lctx *c, const struct ast *e,
		   struct mc_formula *out)
{
	struct spt_arena *a = spec_arena(m->spec);
	*out = (struct mc_formula){ name, c->owner, e, NULL, 0, NULL, NULL };
	if (!c->nb)
		return 0;
	uint32_t *slots = spt_arena_alloc(a, c->nb * sizeof(*slots));
	spt_val **vals = spt_arena_alloc(a, c->nb * sizeof(*vals));
	if (!slots || !vals)
		return -ENOMEM;
	memcpy(slots, c->slots, c->nb * sizeof(*slots));
	memcpy(vals, c->vals, c->nb * sizeof(*vals));
	out->nb = c->nb;
	out->bslots = slots;
	out->bvals = vals;
	return 0;
}

static int push(struct mc_list *l, const struct mc_formula *f)
{
	struct mc_formula *nf = realloc(l->f, (l->n + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	l->f = nf;
	l->f[l->n] = *f;
	return (int)l->n++;
}

/* A new atom: its index (at most 64 of each kind), or a negative errno. */
static int atom(struct mc_model *m, struct mc_list *l, const char *name, const struct lctx *c, const struct ast *e,
		struct check_error *err)
{
	if (l->n >= LIVE_MAX_ATOMS)
		return mc_fail(err, -ENOTSUP, "%s: more than %d temporal subformulas: spectap's liveness checking stops there", name,
			    LIVE_MAX_ATOMS);
	struct mc_formula f;
	if (formula(m, name, c, e, &f))
		return mc_fail(err, -ENOMEM, "out of memory");
	int rc = push(l, &f);
	return rc < 0 ? mc_fail(err, -ENOMEM, "out of memory") : rc;
}

/* Evaluates e (constant level) in c, into the model's arena. */
static int eval_const(struct mc_model *m, const struct lctx *c, const struct ast *e, spt_val **out,
		      struct check_error *err)
{
	struct interp *in = checker_interp(m->ck);
	ev_clear_error(&in->ev);
	struct frame *fr = frame_new(in, c->owner, NULL, NULL);
	if (!fr)
		return mc_fail(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < c->nb; i++)
		fr->c[c->slots[i]].v = c->vals[i];
	spt_val *v;
	if (eval(in, (struct ctx){ fr, NULL, false }, e, &v))
		return mc_fail(err, -EINVAL, "%s:%u:%u: evaluating a property's bound: %s", in->ev.err.pos.file ? in->ev.err.pos.file : "?",
			    in->ev.err.pos.line, in->ev.err.pos.col, in->ev.err.msg);
	if (!(*out = spt_value_clone(spec_arena(m->spec), v)))
		return mc_fail(err, -ENOMEM, "out of memory");
	return 0;
}

static struct ast *node(struct mc_model *m, enum ast_kind kind, const struct ast *at, uint8_t level, uint32_t n,
			const struct ast *a0, const struct ast *a1)
{
	struct spt_arena *a = spec_arena(m->spec);
	struct ast *x = spt_arena_alloc(a, sizeof(*x));
	struct ast **ops = spt_arena_alloc(a, 2 * sizeof(*ops));
	if (!x || !ops)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->pos = at->pos;
	x->level = level;
	x->n = n;
	x->a = ops;
	ops[0] = (struct ast *)a0;
	ops[1] = (struct ast *)a1;
	return x;
}

/* WF_v(A) or SF_v(A): the atoms <<A>>_v (a step) and ENABLED <<A>>_v (a state). */
static int fairness_atoms(struct mc_model *m, const char *name, const struct lctx *c, const struct ast *e, int *step,
			  int *en, struct check_error *err)
{
	if (e->n != 2)
		return mc_fail(err, -EINVAL, "%s:%u:%u: malformed fairness condition", e->pos.file, e->pos.line, e->pos.col);
	struct live *L = live_of(m);
	struct ast *angle = node(m, A_STUTTER, e, L_ACTION, 2, e->a[1], e->a[0]);
	struct ast *enabled = angle ? node(m, A_UNSUPPORTED, e, L_STATE, 1, angle, NULL) : NULL;
	if (!L || !enabled)
		return mc_fail(err, -ENOMEM, "out of memory");
	angle->num = 1; /* <<A>>_v */
	enabled->num = T_ENABLED;
	enabled->name = "ENABLED";
	if ((*step = atom(m, &L->action_atoms, name, c, angle, err)) < 0)
		return *step;
	if ((*en = atom(m, &L->state_atoms, name, c, enabled, err)) < 0)
		return *en;
	L->en_step[*en] = (int16_t)*step;
	return 0;
}

static int add_check(struct mc_model *m, const struct lctx *c, const char *name, const struct ast *at,
		     enum live_kind kind, int p, int q, int step, int en, struct check_error *err)
{
	struct live *L = live_of(m);
	struct live_check *nc = L ? realloc(L->checks, (L->n_checks + 1) * sizeof(*nc)) : NULL;
	if (!nc)
		return mc_fail(err, -ENOMEM, "out of memory");
	L->checks = nc;
	L->checks[L->n_checks++] = (struct live_check){ name, at->pos, kind, p, q, step, en, 0, 0, c->guard, c->guard_neg };
	return 0;
}

static bool state_level(const struct ast *e)
{
	return e->level <= L_STATE && (e->kind != A_UNSUPPORTED || e->num == T_ENABLED);
}

static bool is_temporal(const struct ast *e, unsigned num, uint32_t n)
{
	return e->kind == A_UNSUPPORTED && e->num == num && e->n == n;
}

static const char *what(const struct ast *e)
{
	if (e->kind != A_UNSUPPORTED)
		return "a temporal formula";
	switch (e->num) {
	case T_EVENTUALLY: return "<> of this formula";
	case T_LEADSTO: return "~> of these formulas";
	case T_ALWAYS: return "[] of this formula";
	default: return "this temporal formula";
	}
}

enum mode { M_PROPERTY, M_FAIRNESS };

static int walk(struct mc_model *m, const char *name, struct lctx *c, const struct ast *e, enum mode mode, int depth,
		struct check_error *err);

struct forall_st {
	struct mc_model *m;
	const char *name;
	struct lctx *c;
	const struct ast *e;
	enum mode mode;
	int depth;
	struct check_error *err;
	spt_val **sets;
};

/* \A x \in S, y \in T : F: F for each binding (the sets are constants). */
static int forall_rec(struct forall_st *st, uint32_t i, uint32_t j)
{
	const struct ast *e = st->e;
	if (i == e->n_bounds)
		return walk(st->m, st->name, st->c, e->a[0], st->mode, st->depth + 1, st->err);
	const struct bound *b = &e->bounds[i];
	spt_val *s = st->sets[i];
	for (uint32_t k = 0; k < s->n; k++) {
		uint32_t nb = st->c->nb;
		spt_val *x = s->u.elems[k];
		uint32_t names = b->tuple ? b->n_names : 1;
		if (nb + names > MAX_BIND)
			return mc_fail(st->err, -ENOTSUP, "%s: a property quantifies over more than %d names", st->name, MAX_BIND);
		if (b->tuple) {
			if (x->kind != SPT_SEQ || x->n != b->n_names)
				return mc_fail(st->err, -EINVAL, "%s:%u:%u: an element of the bound is not a tuple of %u", e->pos.file,
					    e->pos.line, e->pos.col, b->n_names);
			for (uint32_t t = 0; t < b->n_names; t++) {
				st->c->slots[st->c->nb] = b->slots[t];
				st->c->vals[st->c->nb++] = x->u.elems[t];
			}
		} else {
			st->c->slots[st->c->nb] = b->slots[j];
			st->c->vals[st->c->nb++] = x;
		}
		int rc = b->tuple || j + 1 == b->n_names ? forall_rec(st, i + 1, 0) : forall_rec(st, i, j + 1);
		st->c->nb = nb;
		if (rc)
			return rc;
	}
	return 0;
}

static int walk(struct mc_model *m, const char *name, struct lctx *c, const struct ast *e, enum mode mode, int depth,
		struct check_error *err)
{
	if (depth > 100)
		return mc_fail(err, -ENOTSUP, "%s: the property nests more than 100 deep", name);
	struct live *L = live_of(m);
	if (!L)
		return mc_fail(err, -ENOMEM, "out of memory");
	if (e->kind == A_AND) {
		for (uint32_t i = 0; i < e->n; i++) {
			int rc = walk(m, name, c, e->a[i], mode, depth + 1, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (e->kind == A_FORALL && e->level == L_TEMPORAL) {
		spt_val *sets[8];
		if (e->n_bounds > 8)
			return mc_fail(err, -ENOTSUP, "%s: more than 8 bounds in a temporal \\A", name);
		for (uint32_t i = 0; i < e->n_bounds; i++) {
			if (!e->bounds[i].set)
				return mc_fail(err, -ENOTSUP, "%s:%u:%u: an unbounded \\A in a temporal formula", e->pos.file, e->pos.line,
					    e->pos.col);
			int rc = eval_const(m, c, e->bounds[i].set, &sets[i], err);
			if (rc)
				return rc;
			if (sets[i]->kind != SPT_SET)
				return mc_fail(err, -EINVAL, "%s:%u:%u: the bound of a temporal \\A is not a set", e->pos.file, e->pos.line,
					    e->pos.col);
		}
		struct forall_st st = { m, name, c, e, mode, depth, err, sets };
		return forall_rec(&st, 0, 0);
	}
	if (e->kind == A_NAME && e->ref == REF_DEF && e->r.def->level == L_TEMPORAL && !e->r.def->n_fbounds) {
		const struct opdef *d = e->r.def;
		if (d->ientry)
			return mc_fail(err, -ENOTSUP,
				       "%s:%u:%u: %s: temporal formulas of a parameterized instance (I(x)!Spec) are not supported",
				       e->pos.file, e->pos.line, e->pos.col, d->name);
		if (d->higher_order || e->n != d->n_params || d->n_params > MAX_BIND)
			return mc_fail(err, -ENOTSUP, "%s:%u:%u: the temporal operator %s takes operator arguments", e->pos.file,
				    e->pos.line, e->pos.col, d->name);
		struct lctx inner = { d, d->n_params, { 0 }, { 0 }, c->guard, c->guard_neg };
		for (uint32_t i = 0; i < d->n_params; i++) {
			inner.slots[i] = i;
			int rc = eval_const(m, c, e->a[i], &inner.vals[i], err);
			if (rc)
				return rc;
		}
		return walk(m, name, &inner, d->body, mode, depth + 1, err);
	}
	if (is_temporal(e, T_WF, 2) || is_temporal(e, T_SF, 2)) {
		int step = -1, en = -1, rc;
		if ((rc = fairness_atoms(m, name, c, e, &step, &en, err)))
			return rc;
		bool strong = e->num == T_SF;
		if (mode == M_PROPERTY)
			return add_check(m, c, name, e, strong ? LK_SF : LK_WF, -1, -1, step, en, err);
		struct live_fair *nf = realloc(L->fair, (L->n_fair + 1) * sizeof(*nf));
		if (!nf)
			return mc_fail(err, -ENOMEM, "out of memory");
		L->fair = nf;
		L->fair[L->n_fair++] = (struct live_fair){ strong, step, en };
		return 0;
	}
	if (mode == M_FAIRNESS && is_temporal(e, T_EVENTUALLY, 1) && is_temporal(e->a[0], T_ALWAYS, 1) &&
	    e->a[0]->a[0]->kind == A_STUTTER && e->a[0]->a[0]->num == 0) {
		/* <>[][A]_v: from some point on every step is an A step or a stutter */
		int a = atom(m, &L->action_atoms, name, c, e->a[0]->a[0], err);
		if (a < 0)
			return a;
		L->cycle_mask |= LIVE_BIT(a);
		return 0;
	}
	if (mode == M_FAIRNESS)
		return mc_fail(err, -ENOTSUP, "%s:%u:%u: a fairness condition spectap does not read (%s)", e->pos.file, e->pos.line,
			    e->pos.col, what(e));
	struct mc_formula f;
	int p, q;
	/* IF c THEN F ELSE G, c a state predicate: F for the behaviours from initial states where c
	 * holds, G for the others. */
	if (e->kind == A_IF && e->level == L_TEMPORAL && state_level(e->a[0]) && c->guard < 0) {
		int g = atom(m, &L->state_atoms, name, c, e->a[0], err);
		if (g < 0)
			return g;
		struct lctx then = *c, other = *c;
		then.guard = other.guard = g;
		other.guard_neg = true;
		int rc = walk(m, name, &then, e->a[1], mode, depth + 1, err);
		return rc ? rc : walk(m, name, &other, e->a[2], mode, depth + 1, err);
	}
	/* []A => <>B: a fair behaviour in A /\ ~B from an initial state (LK_EVENTUALLY staying in A). */
	if (e->kind == A_NAME && e->ref == REF_BUILTIN && e->r.bi->code == BI_IMPLIES && e->n == 2 &&
	    is_temporal(e->a[0], T_ALWAYS, 1) && state_level(e->a[0]->a[0]) && is_temporal(e->a[1], T_EVENTUALLY, 1) &&
	    state_level(e->a[1]->a[0])) {
		int stay = atom(m, &L->state_atoms, name, c, e->a[0]->a[0], err);
		if (stay < 0 || (p = atom(m, &L->state_atoms, name, c, e->a[1]->a[0], err)) < 0)
			return -ENOTSUP;
		return add_check(m, c, name, e, LK_EVENTUALLY, p, stay, -1, -1, err);
	}
	/* c => F, c a state predicate: IF c THEN F ELSE TRUE. */
	if (e->kind == A_NAME && e->ref == REF_BUILTIN && e->r.bi->code == BI_IMPLIES && e->n == 2 &&
	    e->level == L_TEMPORAL && state_level(e->a[0]) && c->guard < 0) {
		int g = atom(m, &L->state_atoms, name, c, e->a[0], err);
		if (g < 0)
			return g;
		struct lctx then = *c;
		then.guard = g;
		return walk(m, name, &then, e->a[1], mode, depth + 1, err);
	}
	if (c->guard >= 0 && is_temporal(e, T_ALWAYS, 1) && state_level(e->a[0])) {
		/* c => []P: P in every state reachable from the initial states in c */
		if ((p = atom(m, &L->state_atoms, name, c, e->a[0], err)) < 0)
			return p;
		return add_check(m, c, name, e, LK_INVARIANT, p, -1, -1, -1, err);
	}
	if (c->guard >= 0 && (state_level(e) || (is_temporal(e, T_ALWAYS, 1) && e->a[0]->kind == A_STUTTER)))
		return mc_fail(err, -ENOTSUP, "%s:%u:%u: the property %s has a safety part under IF or =>: spectap does not check it",
			    e->pos.file, e->pos.line, e->pos.col, name);
	/* []<>X1 \/ []<>X2 \/ ...: X a state predicate or an action */
	if (e->kind == A_OR && e->level == L_TEMPORAL) {
		live_bits fmask = 0, emask = 0;
		bool all = e->n > 0;
		for (uint32_t i = 0; i < e->n && all; i++) {
			const struct ast *d = e->a[i];
			all = is_temporal(d, T_ALWAYS, 1) && is_temporal(d->a[0], T_EVENTUALLY, 1) &&
			      d->a[0]->a[0]->level <= L_ACTION &&
			      (d->a[0]->a[0]->kind != A_UNSUPPORTED || d->a[0]->a[0]->num == T_ENABLED);
		}
		if (all) {
			for (uint32_t i = 0; i < e->n; i++) {
				const struct ast *x = e->a[i]->a[0]->a[0];
				bool action = x->level == L_ACTION;
				int a = atom(m, action ? &L->action_atoms : &L->state_atoms, name, c, x, err);
				if (a < 0)
					return a;
				if (action)
					emask |= LIVE_BIT(a);
				else
					fmask |= LIVE_BIT(a);
			}
			int rc = add_check(m, c, name, e, LK_GF, -1, -1, -1, -1, err);
			if (!rc) {
				L->checks[L->n_checks - 1].fmask = fmask;
				L->checks[L->n_checks - 1].emask = emask;
			}
			return rc;
		}
	}
	/* Safety parts under \A or a definition with parameters. */
	if (state_level(e)) {
		if (formula(m, name, c, e, &f) || push(&m->init_props, &f) < 0)
			return mc_fail(err, -ENOMEM, "out of memory");
		return 0;
	}
	if (is_temporal(e, T_ALWAYS, 1) && state_level(e->a[0])) {
		if (formula(m, name, c, e->a[0], &f) || push(&m->invariants, &f) < 0)
			return mc_fail(err, -ENOMEM, "out of memory");
		return 0;
	}
	if (is_temporal(e, T_ALWAYS, 1) && e->a[0]->kind == A_STUTTER && e->a[0]->num == 0) {
		if (formula(m, name, c, e->a[0], &f) || push(&m->action_props, &f) < 0)
			return mc_fail(err, -ENOMEM, "out of memory");
		return 0;
	}
	/* <>P, <>[]P */
	if (is_temporal(e, T_EVENTUALLY, 1)) {
		const struct ast *x = e->a[0];
		if (state_level(x)) {
			if ((p = atom(m, &L->state_atoms, name, c, x, err)) < 0)
				return p;
			return add_check(m, c, name, e, LK_EVENTUALLY, p, -1, -1, -1, err);
		}
		if (is_temporal(x, T_ALWAYS, 1) && state_level(x->a[0])) {
			if ((p = atom(m, &L->state_atoms, name, c, x->a[0], err)) < 0)
				return p;
			return add_check(m, c, name, e, LK_EVENTUALLY_ALWAYS, p, -1, -1, -1, err);
		}
	}
	/* []<>P, [](P => <>Q) */
	if (is_temporal(e, T_ALWAYS, 1)) {
		const struct ast *x = e->a[0];
		if (is_temporal(x, T_EVENTUALLY, 1) && state_level(x->a[0])) {
			if ((p = atom(m, &L->state_atoms, name, c, x->a[0], err)) < 0)
				return p;
			return add_check(m, c, name, e, LK_ALWAYS_EVENTUALLY, p, -1, -1, -1, err);
		}
		if (is_temporal(x, T_EVENTUALLY, 1) && x->a[0]->level == L_ACTION && x->a[0]->kind != A_UNSUPPORTED) {
			/* []<><<A>>_v: a fair cycle without an A step */
			int a = atom(m, &L->action_atoms, name, c, x->a[0], err);
			if (a < 0)
				return a;
			int rc = add_check(m, c, name, e, LK_GF, -1, -1, -1, -1, err);
			if (!rc)
				L->checks[L->n_checks - 1].emask = LIVE_BIT(a);
			return rc;
		}
		if (x->kind == A_NAME && x->ref == REF_BUILTIN && x->r.bi->code == BI_IMPLIES && x->n == 2 &&
		    state_level(x->a[0]) && is_temporal(x->a[1], T_EVENTUALLY, 1) && state_level(x->a[1]->a[0])) {
			if ((p = atom(m, &L->state_atoms, name, c, x->a[0], err)) < 0 ||
			    (q = atom(m, &L->state_atoms, name, c, x->a[1]->a[0], err)) < 0)
				return -ENOTSUP;
			return add_check(m, c, name, e, LK_LEADSTO, p, q, -1, -1, err);
		}
	}
	if (is_temporal(e, T_LEADSTO, 2) && state_level(e->a[0]) && state_level(e->a[1])) {
		if ((p = atom(m, &L->state_atoms, name, c, e->a[0], err)) < 0 ||
		    (q = atom(m, &L->state_atoms, name, c, e->a[1], err)) < 0)
			return -ENOTSUP;
		return add_check(m, c, name, e, LK_LEADSTO, p, q, -1, -1, err);
	}
	return mc_fail(err, -ENOTSUP,
		    "%s:%u:%u: the property %s has %s, which spectap does not check (liveness: <>P, []<>P, <>[]P, "
		    "P ~> Q, WF/SF, under \\A and definitions, P a state predicate)",
		    e->pos.file, e->pos.line, e->pos.col, name, what(e));
}

int live_property(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e,
		  struct check_error *err)
{
	struct lctx c = { owner, 0, { 0 }, { 0 }, -1, false };
	return walk(m, name, &c, e, M_PROPERTY, 0, err);
}

int live_fairness(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e,
		  struct check_error *err)
{
	struct lctx c = { owner, 0, { 0 }, { 0 }, -1, false };
	return walk(m, name, &c, e, M_FAIRNESS, 0, err);
}

void live_free(struct live *L)
{
	if (!L)
		return;
	free(L->state_atoms.f);
	free(L->action_atoms.f);
	free(L->checks);
	free(L->fair);
	free(L->fps);
	free(L->sbits);
	free(L->dbits);
	free(L->edges);
	free(L->init);
	free(L->map_keys);
	free(L->map_ids);
	free(L);
}

/* ---- the graph ---- */

static size_t slot_of(const struct live *L, uint64_t fp)
{
	size_t h = (size_t)(fp ^ (fp >> 29)) & (L->map_cap - 1);
	while (L->map_keys[h] && L->map_keys[h] != fp)
		h = (h + 1) & (L->map_cap - 1);
	return h;
}

static int grow_map(struct live *L)
{
	size_t cap = L->map_cap ? L->map_cap * 2 : 1 << 12;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *ids = calloc(cap, sizeof(*ids));
	if (!keys || !ids) {
		free(keys);
		free(ids);
		return -ENOMEM;
	}
	uint64_t *ok = L->map_keys;
	uint32_t *oi = L->map_ids;
	size_t ocap = L->map_cap;
	L->map_keys = keys;
	L->map_ids = ids;
	L->map_cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (ok[i]) {
			size_t h = slot_of(L, ok[i]);
			L->map_keys[h] = ok[i];
			L->map_ids[h] = oi[i];
		}
	free(ok);
	free(oi);
	return 0;
}

int live_node(struct live *L, uint64_t fp, uint32_t *id)
{
	if (!fp)
		fp = 1; /* 0 marks a free slot */
	if ((size_t)(L->n_nodes + 1) * 2 > L->map_cap && grow_map(L))
		return -ENOMEM;
	if (L->n_nodes == L->cap_nodes) {
		uint32_t cap = L->cap_nodes ? L->cap_nodes * 2 : 1024;
		uint64_t *f = realloc(L->fps, cap * sizeof(*f));
		if (f)
			L->fps = f;
		live_bits *b = realloc(L->sbits, cap * sizeof(*b));
		if (b)
			L->sbits = b;
		live_bits *d = realloc(L->dbits, cap * sizeof(*d));
		if (d)
			L->dbits = d;
		if (!f || !b || !d)
			return -ENOMEM;
		L->cap_nodes = cap;
	}
	*id = L->n_nodes++;
	L->fps[*id] = fp;
	L->sbits[*id] = 0;
	L->dbits[*id] = 0;
	size_t h = slot_of(L, fp);
	L->map_keys[h] = fp;
	L->map_ids[h] = *id;
	return 0;
}

int live_find(const struct live *L, uint64_t fp, uint32_t *id)
{
	if (!fp)
		fp = 1;
	if (!L->map_cap)
		return -ENOENT;
	size_t h = slot_of(L, fp);
	if (!L->map_keys[h])
		return -ENOENT;
	*id = L->map_ids[h];
	return 0;
}

void live_defer(struct live *L, uint32_t id, uint32_t atom)
{
	L->dbits[id] |= LIVE_BIT(atom);
	L->deferred_used = true;
}

int live_add_edge(struct live *L, uint32_t src, uint32_t dst, live_bits bits)
{
	if (L->n_edges == L->cap_edges) {
		size_t cap = L->cap_edges ? L->cap_edges * 2 : 4096;
		struct live_edge *e = realloc(L->edges, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		L->edges = e;
		L->cap_edges = cap;
	}
	L->edges[L->n_edges++] = (struct live_edge){ src, dst, bits };
	return 0;
}

int live_add_init(struct live *L, uint32_t id)
{
	if (L->n_init == L->cap_init) {
		uint32_t cap = L->cap_init ? L->cap_init * 2 : 64;
		uint32_t *p = realloc(L->init, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		L->init = p;
		L->cap_init = cap;
	}
	L->init[L->n_init++] = id;
	return 0;
}

/* The graph in compressed rows: the steps from node v are off[v] .. off[v + 1]. */
struct graph {
	uint32_t n;
	size_t *off;
	uint32_t *dst;
	live_bits *bits;
};

static int graph_build(const struct live *L, struct graph *G)
{
	G->n = L->n_nodes;
	G->off = calloc((size_t)G->n + 1, sizeof(*G->off));
	G->dst = malloc((L->n_edges + 1) * sizeof(*G->dst));
	G->bits = malloc((L->n_edges + 1) * sizeof(*G->bits));
	if (!G->off || !G->dst || !G->bits)
		return -ENOMEM;
	for (size_t i = 0; i < L->n_edges; i++)
		G->off[L->edges[i].src + 1]++;
	for (uint32_t v = 0; v < G->n; v++)
		G->off[v + 1] += G->off[v];
	size_t *pos = malloc(((size_t)G->n + 1) * sizeof(*pos));
	if (!pos)
		return -ENOMEM;
	memcpy(pos, G->off, ((size_t)G->n + 1) * sizeof(*pos));
	for (size_t i = 0; i < L->n_edges; i++) {
		size_t at = pos[L->edges[i].src]++;
		G->dst[at] = L->edges[i].dst;
		G->bits[at] = L->edges[i].bits;
	}
	free(pos);
	return 0;
}

static void graph_free(struct graph *G)
{
	free(G->off);
	free(G->dst);
	free(G->bits);
}

/* One search: the region (in[v]), the steps left out (their bits meet excl), and the state atom
 * a cycle must visit (visit >= 0; visit_neg: a state where it is false). */
struct fsearch {
	const struct live *L;
	const struct graph *G;
	live_bits excl;
	int visit;
	bool visit_neg;
	/* Tarjan's, iterative */
	uint32_t *index, *low, *comp, *stack, *cs_node;
	size_t *cs_edge;
	uint8_t *on;
};

#define NONE UINT32_MAX

static bool bit(live_bits bits, int i)
{
	return i >= 0 && ((bits >> i) & 1);
}

static int fair_in(struct fsearch *F, const uint8_t *in, uint32_t *found);

/* Whether component K (the nodes with comp[v] == k, listed in nodes) holds a fair cycle meeting
 * the visit condition; 1 with *found, 0, or -ENOMEM. */
static int component(struct fsearch *F, const uint32_t *nodes, uint32_t nn, uint32_t k, uint32_t *found)
{
	const struct live *L = F->L;
	const struct graph *G = F->G;
	if (F->visit >= 0) {
		bool seen = false;
		for (uint32_t i = 0; i < nn && !seen; i++)
			seen = bit(L->sbits[nodes[i]], F->visit) != F->visit_neg;
		if (!seen)
			return 0;
	}
	/* The steps inside K, by action atom. */
	live_bits inside = 0, some_disabled = 0, some_enabled = 0;
	for (uint32_t i = 0; i < nn; i++) {
		uint32_t v = nodes[i];
		for (size_t e = G->off[v]; e < G->off[v + 1]; e++)
			if (F->comp[G->dst[e]] == k && !(G->bits[e] & F->excl) &&
			    (G->bits[e] & L->cycle_mask) == L->cycle_mask)
				inside |= G->bits[e];
		some_enabled |= L->sbits[v];
		some_disabled |= ~L->sbits[v];
	}
	int sf_fail = -1;
	for (uint32_t f = 0; f < L->n_fair; f++) {
		const struct live_fair *fa = &L->fair[f];
		if (bit(inside, fa->step))
			continue;
		if (!fa->strong) {
			if (!bit(some_disabled, fa->en))
				return 0; /* always enabled, never taken: no part of K does better */
		} else if (bit(some_enabled, fa->en) && sf_fail < 0) {
			sf_fail = (int)f;
		}
	}
	if (sf_fail < 0) {
		*found = nodes[0];
		return 1;
	}
	/* SF_v(A) enabled in K, never taken: without the states where it is enabled. */
	uint8_t *in2 = calloc(G->n, 1);
	if (!in2)
		return -ENOMEM;
	int en = L->fair[sf_fail].en;
	for (uint32_t i = 0; i < nn; i++)
		if (!bit(L->sbits[nodes[i]], en))
			in2[nodes[i]] = 1;
	struct fsearch sub = *F;
	int rc = fair_in(&sub, in2, found);
	free(in2);
	return rc;
}

/* Tarjan's algorithm over the region; each component is examined as it is completed. */
static int fair_in(struct fsearch *F0, const uint8_t *in, uint32_t *found)
{
	const struct graph *G = F0->G;
	uint32_t n = G->n;
	struct fsearch F = *F0;
	F.index = malloc(n * sizeof(uint32_t));
	F.low = malloc(n * sizeof(uint32_t));
	F.comp = malloc(n * sizeof(uint32_t));
	F.stack = malloc(n * sizeof(uint32_t));
	F.cs_node = malloc(n * sizeof(uint32_t));
	F.cs_edge = malloc(n * sizeof(size_t));
	F.on = calloc(n, 1);
	int rc = 0;
	if (!F.index || !F.low || !F.comp || !F.stack || !F.cs_node || !F.cs_edge || !F.on) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t v = 0; v < n; v++)
		F.index[v] = F.comp[v] = NONE;
	uint32_t next_index = 0, sp = 0, n_comp = 0;
	for (uint32_t root = 0; root < n && !rc; root++) {
		if (!in[root] || F.index[root] != NONE)
			continue;
		uint32_t csp = 0;
		F.cs_node[csp] = root;
		F.cs_edge[csp++] = G->off[root];
		F.index[root] = F.low[root] = next_index++;
		F.stack[sp++] = root;
		F.on[root] = 1;
		while (csp && !rc) {
			uint32_t v = F.cs_node[csp - 1];
			size_t *ep = &F.cs_edge[csp - 1];
			bool pushed = false;
			while (*ep < G->off[v + 1]) {
				size_t e = (*ep)++;
				uint32_t w = G->dst[e];
				if (!in[w] || (G->bits[e] & F.excl) || (G->bits[e] & F.L->cycle_mask) != F.L->cycle_mask)
					continue;
				if (F.index[w] == NONE) {
					F.index[w] = F.low[w] = next_index++;
					F.stack[sp++] = w;
					F.on[w] = 1;
					F.cs_node[csp] = w;
					F.cs_edge[csp++] = G->off[w];
					pushed = true;
					break;
				}
				if (F.on[w] && F.index[w] < F.low[v])
					F.low[v] = F.index[w];
			}
			if (pushed)
				continue;
			csp--;
			if (csp) {
				uint32_t u = F.cs_node[csp - 1];
				if (F.low[v] < F.low[u])
					F.low[u] = F.low[v];
			}
			if (F.low[v] == F.index[v]) {
				uint32_t k = n_comp++, start = sp;
				do {
					start--;
					F.on[F.stack[start]] = 0;
					F.comp[F.stack[start]] = k;
				} while (F.stack[start] != v);
				rc = component(&F, &F.stack[start], sp - start, k, found);
				sp = start;
			}
		}
	}
out:
	free(F.index);
	free(F.low);
	free(F.comp);
	free(F.stack);
	free(F.cs_node);
	free(F.cs_edge);
	free(F.on);
	return rc;
}

/* The nodes reachable from the seeds through nodes of the region (in is narrowed to them). */
static int reach(const struct graph *G, uint8_t *in, const uint8_t *seed)
{
	uint8_t *seen = calloc(G->n, 1);
	uint32_t *queue = malloc(((size_t)G->n + 1) * sizeof(*queue));
	if (!seen || !queue) {
		free(seen);
		free(queue);
		return -ENOMEM;
	}
	uint32_t qh = 0, qt = 0;
	for (uint32_t v = 0; v < G->n; v++)
		if (seed[v] && in[v]) {
			seen[v] = 1;
			queue[qt++] = v;
		}
	while (qh < qt) {
		uint32_t v = queue[qh++];
		for (size_t e = G->off[v]; e < G->off[v + 1]; e++) {
			uint32_t w = G->dst[e];
			if (in[w] && !seen[w]) {
				seen[w] = 1;
				queue[qt++] = w;
			}
		}
	}
	memcpy(in, seen, G->n);
	free(seen);
	free(queue);
	return 0;
}

int live_decide(struct live *L, uint32_t *check, uint32_t *node)
{
	struct graph G = { 0 };
	int rc = graph_build(L, &G);
	uint8_t *in = calloc((size_t)L->n_nodes + 1, 1), *seed = calloc((size_t)L->n_nodes + 1, 1),
		*scope = calloc((size_t)L->n_nodes + 1, 1);
	if (rc || !in || !seed || !scope) {
		rc = -1;
		goto out;
	}
	if (L->deferred_used)
		for (uint32_t v = 0; v < L->n_nodes; v++)
			for (uint32_t a = 0; L->dbits[v] && a < LIVE_MAX_ATOMS; a++) {
				if (!bit(L->dbits[v], (int)a))
					continue;
				bool en = false;
				for (size_t e = G.off[v]; e < G.off[v + 1] && !en; e++)
					en = bit(G.bits[e], L->en_step[a]);
				if (en)
					L->sbits[v] |= LIVE_BIT(a);
			}
	for (uint32_t c = 0; c < L->n_checks && !rc; c++) {
		const struct live_check *k = &L->checks[c];
		struct fsearch F = { L, &G, 0, -1, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
		/* Under IF c: the states reachable from the initial states where the guard says. */
		if (k->guard >= 0) {
			memset(seed, 0, L->n_nodes);
			for (uint32_t i = 0; i < L->n_init; i++)
				seed[L->init[i]] = bit(L->sbits[L->init[i]], k->guard) != k->guard_neg;
			memset(scope, 1, L->n_nodes);
			if (reach(&G, scope, seed)) {
				rc = -1;
				break;
			}
		}
		memset(seed, 0, L->n_nodes);
		for (uint32_t v = 0; v < L->n_nodes; v++) {
			live_bits b = L->sbits[v];
			switch (k->kind) {
			case LK_EVENTUALLY: in[v] = !bit(b, k->p) && (k->q < 0 || bit(b, k->q)); break;
			case LK_ALWAYS_EVENTUALLY: in[v] = !bit(b, k->p); break;
			case LK_EVENTUALLY_ALWAYS: in[v] = 1; break;
			case LK_LEADSTO:
				in[v] = !bit(b, k->q);
				seed[v] = bit(b, k->p) && !bit(b, k->q);
				break;
			case LK_WF: in[v] = bit(b, k->en); break;
			case LK_SF: in[v] = 1; break;
			case LK_GF: in[v] = (b & k->fmask) == 0; break;
			case LK_INVARIANT: in[v] = 1; break;
			}
		}
		if (k->kind == LK_EVENTUALLY)
			for (uint32_t i = 0; i < L->n_init; i++)
				seed[L->init[i]] = k->guard < 0 || bit(L->sbits[L->init[i]], k->guard) != k->guard_neg;
		if (k->guard >= 0)
			for (uint32_t v = 0; v < L->n_nodes; v++)
				in[v] &= scope[v];
		if ((k->kind == LK_EVENTUALLY || k->kind == LK_LEADSTO) && reach(&G, in, seed)) {
			rc = -1;
			break;
		}
		if (k->kind == LK_EVENTUALLY_ALWAYS) {
			F.visit = k->p;
			F.visit_neg = true;
		}
		if (k->kind == LK_WF || k->kind == LK_SF)
			F.excl = LIVE_BIT(k->step);
		if (k->kind == LK_SF)
			F.visit = k->en;
		if (k->kind == LK_GF)
			F.excl = k->emask;
		uint32_t found;
		if (k->kind == LK_INVARIANT) {
			for (uint32_t v = 0; v < L->n_nodes && rc != 1; v++)
				if (in[v] && !bit(L->sbits[v], k->p)) {
					*check = c;
					*node = v;
					rc = 1;
				}
			continue;
		}
		int r = fair_in(&F, in, &found);
		if (r < 0) {
			rc = -1;
			break;
		}
		if (r == 1) {
			*check = c;
			*node = found;
			rc = 1;
		}
	}
out:
	graph_free(&G);
	free(in);
	free(seed);
	free(scope);
	return rc;
}
