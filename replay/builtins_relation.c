/*
 * CommunityModules' Relation, natively. A relation is a Boolean function over S \X S (R[x, y]),
 * or, in the ...Under forms, an operator op(x, y) (the module builds [p \in S \X S |-> op(p[1],
 * p[2])], which TLC applies lazily: op is evaluated for the pairs the definition reaches, in the
 * order it reaches them, as here). The predicates short-circuit as the module's /\, => and \/
 * do; the closures are computed by Warshall's algorithm, which gives the function the module's
 * iterated squaring gives.
 */
#include <stdlib.h>
#include <string.h>

#include "builtins_internal.h"
#include "ev_core.h"

struct rel {
	struct ev *ev;
	const struct ast *at;
	const char *op;
	spt_val *R;                 /* the function, or NULL */
	const struct closure *under; /* the operator, or NULL */
};

/* R[x, y] (or op(x, y)), a Boolean. */
static int rel_at(struct rel *r, spt_val *x, spt_val *y, bool *b)
{
	spt_val *v;
	if (r->under) {
		spt_val *a[2] = { x, y };
		if (ev_call_op(r->ev, r->at, r->under, a, 2, &v))
			return EVAL_ERR;
	} else {
		spt_val *pair[2] = { x, y };
		spt_val *key = spt_seq(r->ev->arena, pair, 2);
		if (!key)
			return ev_fail(r->ev, r->at, "out of memory in %s", r->op);
		if (!spt_is_fun(r->R))
			return ev_fail(r->ev, r->at, "%s: the relation %s is not a function", r->op, ev_show(r->ev, r->R));
		if (!(v = spt_fun_apply(r->R, key)))
			return ev_fail(r->ev, r->at, "%s: %s is not in the domain of the relation %s", r->op, ev_show(r->ev, key),
				       ev_show(r->ev, r->R));
	}
	if (v->kind != SPT_BOOL)
		return ev_fail(r->ev, r->at, "%s: the relation gives %s for <<%s, ...>>, not a Boolean", r->op, ev_show(r->ev, v),
			       ev_show(r->ev, x));
	*b = v->u.b;
	return 0;
}

enum rel_kind { REFL, IRREFL, SYM, ANTISYM, ASYM, TRANS, SPO, PO, STO, TO };

static int holds(struct rel *r, spt_val *S, enum rel_kind k, bool *out);

static int each_x(struct rel *r, spt_val *S, bool want, bool *out)
{
	for (uint32_t i = 0; i < S->n; i++) {
		bool b;
		if (rel_at(r, S->u.elems[i], S->u.elems[i], &b))
			return EVAL_ERR;
		if (b != want)
			return (*out = false), 0;
	}
	return (*out = true), 0;
}

/* \A x, y \in S (and z for TRANS) of the kind's body. */
static int each_pair(struct rel *r, spt_val *S, enum rel_kind k, bool *out)
{
	uint32_t n = S->n;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			spt_val *x = S->u.elems[i], *y = S->u.elems[j];
			bool a, b = false, ok = true;
			if (k == STO && i == j)
				continue; /* x # y => ... */
			if (rel_at(r, x, y, &a))
				return EVAL_ERR;
			switch (k) {
			case SYM: /* R[x,y] <=> R[y,x] */
				if (rel_at(r, y, x, &b))
					return EVAL_ERR;
				ok = a == b;
				break;
			case ASYM: /* ~(R[x,y] /\ R[y,x]) */
				if (a && rel_at(r, y, x, &b))
					return EVAL_ERR;
				ok = !(a && b);
				break;
			case ANTISYM: /* R[x,y] /\ R[y,x] => x = y */
				if (a && rel_at(r, y, x, &b))
					return EVAL_ERR;
				ok = !(a && b) || i == j;
				break;
			case STO: /* x # y => R[x,y] \/ R[y,x] */
			case TO:  /* R[x,y] \/ R[y,x] */
				if (!a && rel_at(r, y, x, &b))
					return EVAL_ERR;
				ok = a || b;
				break;
			case TRANS: /* R[x,y] /\ R[y,z] => R[x,z] */
				for (uint32_t l = 0; a && l < n && ok; l++) {
					bool c, d = true;
					if (rel_at(r, y, S->u.elems[l], &c) || (c && rel_at(r, x, S->u.elems[l], &d)))
						return EVAL_ERR;
					ok = !c || d;
				}
				break;
			default:
				break;
			}
			if (!ok)
				return (*out = false), 0;
		}
	return (*out = true), 0;
}

/* The kinds made of others, as the module's conjunctions (each evaluated only while TRUE). */
static int all_of(struct rel *r, spt_val *S, const enum rel_kind *ks, int n, bool *out)
{
	*out = true;
	for (int i = 0; i < n && *out; i++)
		if (holds(r, S, ks[i], out))
			return EVAL_ERR;
	return 0;
}

static int holds(struct rel *r, spt_val *S, enum rel_kind k, bool *out)
{
	static const enum rel_kind spo[] = { IRREFL, ANTISYM, TRANS }, po[] = { REFL, ANTISYM, TRANS };
	switch (k) {
	case REFL: return each_x(r, S, true, out);
	case IRREFL: return each_x(r, S, false, out);
	case SPO: return all_of(r, S, spo, 3, out);
	case PO: return all_of(r, S, po, 3, out);
	case STO:
	case TO:
		if (all_of(r, S, k == STO ? spo : po, 3, out))
			return EVAL_ERR;
		return *out ? each_pair(r, S, k, out) : 0;
	default: return each_pair(r, S, k, out);
	}
}

static int predicate(struct ev *ev, const struct ast *at, const char *op, spt_val *R, const struct closure *under,
		     spt_val *S, enum rel_kind k, spt_val **out)
{
	if (bi_set(ev, at, op, 2, S))
		return EVAL_ERR;
	struct rel r = { ev, at, op, R, under };
	bool b;
	if (holds(&r, S, k, &b))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, op, b, out);
}

#define REL_PREDICATE(fn, under_fn, name, kind)                                                   \
	BI(fn)                                                                                      \
	{                                                                                           \
		(void)n;                                                                            \
		return predicate(ev, at, name, args[0], NULL, args[1], kind, out);                  \
	}                                                                                           \
	HBI_DECL(under_fn)                                                                          \
	{                                                                                           \
		(void)n;                                                                            \
		if (ev_op_arity(ops[0]) != 2)                                                       \
			return ev_fail(ev, at, "%sUnder needs an operator of 2 arguments here", name); \
		return predicate(ev, at, name "Under", NULL, ops[0], args[1], kind, out);           \
	}

REL_PREDICATE(bi_rel_reflexive, bi_rel_reflexive_under, "IsReflexive", REFL)
REL_PREDICATE(bi_rel_irreflexive, bi_rel_irreflexive_under, "IsIrreflexive", IRREFL)
REL_PREDICATE(bi_rel_symmetric, bi_rel_symmetric_under, "IsSymmetric", SYM)
REL_PREDICATE(bi_rel_antisymmetric, bi_rel_antisymmetric_under, "IsAntiSymmetric", ANTISYM)
REL_PREDICATE(bi_rel_asymmetric, bi_rel_asymmetric_under, "IsAsymmetric", ASYM)
REL_PREDICATE(bi_rel_transitive, bi_rel_transitive_under, "IsTransitive", TRANS)
REL_PREDICATE(bi_rel_strict_partial, bi_rel_strict_partial_under, "IsStrictlyPartiallyOrdered", SPO)
REL_PREDICATE(bi_rel_partial, bi_rel_partial_under, "IsPartiallyOrdered", PO)
REL_PREDICATE(bi_rel_strict_total, bi_rel_strict_total_under, "IsStrictlyTotallyOrdered", STO)
REL_PREDICATE(bi_rel_total, bi_rel_total_under, "IsTotallyOrdered", TO)

enum closure_kind { CL_TRANS, CL_REFL_TRANS, CL_CONNECTED };

/* The (reflexive) transitive closure of R over S as a function over S \X S, or whether S is
 * connected under it (every pair in the reflexive closure). */
static int closure(struct ev *ev, const struct ast *at, const char *op, spt_val *R, spt_val *S, enum closure_kind k,
		   spt_val **out)
{
	if (bi_set(ev, at, op, 2, S))
		return EVAL_ERR;
	struct rel r = { ev, at, op, R, NULL };
	size_t n = S->n, nn = n * n;
	bool *m = malloc(nn ? nn : 1);
	if (!m)
		return ev_fail(ev, at, "out of memory in %s", op);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		for (size_t j = 0; j < n && !rc; j++)
			rc = rel_at(&r, S->u.elems[i], S->u.elems[j], &m[i * n + j]);
	for (size_t l = 0; l < n && !rc; l++) /* Warshall */
		for (size_t i = 0; i < n; i++)
			if (m[i * n + l])
				for (size_t j = 0; j < n; j++)
					m[i * n + j] |= m[l * n + j];
	if (!rc && k == CL_CONNECTED) {
		bool all = true;
		for (size_t i = 0; i < n && all; i++)
			for (size_t j = 0; j < n && all; j++)
				all = i == j || m[i * n + j];
		free(m);
		return bi_ret_bool(ev, at, op, all, out);
	}
	spt_val **keys = rc ? NULL : spt_arena_alloc(ev->arena, (nn ? nn : 1) * sizeof(*keys));
	spt_val **vals = keys ? spt_arena_alloc(ev->arena, (nn ? nn : 1) * sizeof(*vals)) : NULL;
	for (size_t i = 0; vals && i < n; i++)
		for (size_t j = 0; j < n && vals; j++) {
			spt_val *pair[2] = { S->u.elems[i], S->u.elems[j] };
			keys[i * n + j] = spt_seq(ev->arena, pair, 2);
			vals[i * n + j] = spt_bool(ev->arena, m[i * n + j] || (k == CL_REFL_TRANS && i == j));
			if (!keys[i * n + j] || !vals[i * n + j])
				vals = NULL;
		}
	free(m);
	if (rc)
		return EVAL_ERR;
	bool dup;
	spt_val *f = vals ? spt_fun(ev->arena, keys, vals, nn, &dup) : NULL;
	return bi_ret(ev, at, op, f, out);
}

BI(bi_rel_transitive_closure)
{
	(void)n;
	return closure(ev, at, "TransitiveClosure", args[0], args[1], CL_TRANS, out);
}

BI(bi_rel_reflexive_transitive_closure)
{
	(void)n;
	return closure(ev, at, "ReflexiveTransitiveClosure", args[0], args[1], CL_REFL_TRANS, out);
}

BI(bi_rel_connected)
{
	(void)n;
	return closure(ev, at, "IsConnected", args[0], args[1], CL_CONNECTED, out);
}
