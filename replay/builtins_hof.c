/*
 * Operators taking operators (SelectSeq(s, Test), FoldSet(op, base, S), ...), with TLC's
 * semantics: where TLC evaluates a Java override rather than the module's TLA+ definition, the
 * override's (the order in which a fold combines its elements, absolute indices of
 * SelectInSubSeq): those are what specs in the wild were written against.
 */
#include "builtins_internal.h"
#include "ev_core.h"

#include <stdlib.h>
#include <string.h>

#define HBI(name)                                                                                       \
	int name(struct ev *ev, const struct ast *at, spt_val *const *args, const struct closure *const *ops, \
		 uint32_t n, spt_val **out)

static int oom(struct ev *ev, const struct ast *at, const char *op)
{
	return ev_fail(ev, at, "out of memory in %s", op);
}

static int call1(struct ev *ev, const struct ast *at, const struct closure *op, spt_val *x, spt_val **out)
{
	return ev_call_op(ev, at, op, &x, 1, out);
}

static int call2(struct ev *ev, const struct ast *at, const struct closure *op, spt_val *x, spt_val *y, spt_val **out)
{
	spt_val *a[2] = { x, y };
	return ev_call_op(ev, at, op, a, 2, out);
}

static int test(struct ev *ev, const struct ast *at, const char *name, const struct closure *op, spt_val *x, bool *b)
{
	spt_val *v;
	if (call1(ev, at, op, x, &v))
		return EVAL_ERR;
	if (v->kind != SPT_BOOL)
		return ev_fail(ev, at, "the test of %s must give a Boolean, not %s (for %s)", name, ev_show(ev, v),
			       ev_show(ev, x));
	*b = v->u.b;
	return 0;
}

static int arity(struct ev *ev, const struct ast *at, const char *name, const struct closure *op, uint32_t want)
{
	if (ev_op_arity(op) != want)
		return ev_fail(ev, at, "%s needs an operator of %u argument%s here", name, want, want == 1 ? "" : "s");
	return 0;
}

/* ---- sequences ---- */

HBI(bi_select_seq)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "SelectSeq", 1, args[0], &s) || arity(ev, at, "SelectSeq", ops[1], 1))
		return EVAL_ERR;
	spt_val **e = malloc((s.n ? s.n : 1) * sizeof(*e));
	if (!e)
		return oom(ev, at, "SelectSeq");
	uint32_t k = 0;
	for (uint32_t i = 0; i < s.n; i++) {
		bool b;
		if (test(ev, at, "SelectSeq", ops[1], s.e[i], &b)) {
			free(e);
			return EVAL_ERR;
		}
		if (b)
			e[k++] = s.e[i];
	}
	spt_val *r = spt_seq(ev_arena(ev), e, k);
	free(e);
	return bi_ret(ev, at, "SelectSeq", r, out);
}

/* The first (last) index of s[from..to] whose element passes the test, absolute; 0 if none. */
static int select_in(struct ev *ev, const struct ast *at, const char *name, spt_val *seq, int64_t from, int64_t to,
		     const struct closure *op, bool last, spt_val **out)
{
	struct bi_seq s;
	if (bi_seq(ev, at, name, 1, seq, &s) || arity(ev, at, name, op, 1))
		return EVAL_ERR;
	if (from > to)
		return bi_ret_int(ev, at, name, 0, out);
	if (from < 1 || to > (int64_t)s.n)
		return ev_fail(ev, at, "%s: %lld..%lld is outside the sequence's 1..%u", name, (long long)from,
			       (long long)to, s.n);
	for (int64_t k = 0; k <= to - from; k++) {
		int64_t i = last ? to - k : from + k;
		bool b;
		if (test(ev, at, name, op, s.e[i - 1], &b))
			return EVAL_ERR;
		if (b)
			return bi_ret_int(ev, at, name, i, out);
	}
	return bi_ret_int(ev, at, name, 0, out);
}

HBI(bi_select_in_seq)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "SelectInSeq", 1, args[0], &s))
		return EVAL_ERR;
	return select_in(ev, at, "SelectInSeq", args[0], 1, s.n, ops[1], false, out);
}

/* RemoveFirstMatch(s, Test): s without its first element that passes Test (s when none does). */
HBI(bi_remove_first_match)
{
	(void)n;
	struct bi_seq s;
	spt_val *idx;
	if (bi_seq(ev, at, "RemoveFirstMatch", 1, args[0], &s) ||
	    select_in(ev, at, "RemoveFirstMatch", args[0], 1, s.n, ops[1], false, &idx))
		return EVAL_ERR;
	if (idx->u.i == 0) {
		*out = args[0];
		return 0;
	}
	return bi_seq_without(ev, at, "RemoveFirstMatch", &s, (uint32_t)idx->u.i - 1, out);
}

HBI(bi_select_last_in_seq)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "SelectLastInSeq", 1, args[0], &s))
		return EVAL_ERR;
	return select_in(ev, at, "SelectLastInSeq", args[0], 1, s.n, ops[1], true, out);
}

static int sub_bounds(struct ev *ev, const struct ast *at, const char *name, spt_val *const *args, int64_t *from,
		      int64_t *to)
{
	return bi_int(ev, at, name, 2, args[1], from) || bi_int(ev, at, name, 3, args[2], to) ? EVAL_ERR : 0;
}

HBI(bi_select_in_sub_seq)
{
	(void)n;
	int64_t from, to;
	if (sub_bounds(ev, at, "SelectInSubSeq", args, &from, &to))
		return EVAL_ERR;
	return select_in(ev, at, "SelectInSubSeq", args[0], from, to, ops[3], false, out);
}

HBI(bi_select_last_in_sub_seq)
{
	(void)n;
	int64_t from, to;
	if (sub_bounds(ev, at, "SelectLastInSubSeq", args, &from, &to))
		return EVAL_ERR;
	return select_in(ev, at, "SelectLastInSubSeq", args[0], from, to, ops[3], true, out);
}

/* SortSeq(s, Op): Op(a, b) means a comes before b (a stable insertion sort: n is small). */
HBI(bi_sort_seq)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "SortSeq", 1, args[0], &s) || arity(ev, at, "SortSeq", ops[1], 2))
		return EVAL_ERR;
	spt_val **e = malloc((s.n ? s.n : 1) * sizeof(*e));
	if (!e)
		return oom(ev, at, "SortSeq");
	for (uint32_t i = 0; i < s.n; i++) {
		spt_val *x = s.e[i];
		uint32_t j = i;
		while (j > 0) {
			spt_val *v;
			if (call2(ev, at, ops[1], x, e[j - 1], &v)) {
				free(e);
				return EVAL_ERR;
			}
			if (v->kind != SPT_BOOL) {
				free(e);
				return ev_fail(ev, at, "the order of SortSeq must give a Boolean, not %s", ev_show(ev, v));
			}
			if (!v->u.b)
				break;
			e[j] = e[j - 1];
			j--;
		}
		e[j] = x;
	}
	spt_val *r = spt_seq(ev_arena(ev), e, s.n);
	free(e);
	return bi_ret(ev, at, "SortSeq", r, out);
}

/* ---- folds ---- */

/* acc := op(x, acc) over xs in order (FoldSet, FoldFunction, FoldSeq: TLC's overrides). */
static int fold_elem_first(struct ev *ev, const struct ast *at, const char *name, const struct closure *op,
			   spt_val *acc, spt_val *const *xs, uint32_t nx, spt_val **out)
{
	if (arity(ev, at, name, op, 2))
		return EVAL_ERR;
	for (uint32_t i = 0; i < nx; i++)
		if (call2(ev, at, op, xs[i], acc, &acc))
			return EVAL_ERR;
	*out = acc;
	return 0;
}

HBI(bi_fold_set)
{
	(void)n;
	spt_val *const *xs;
	if (bi_tlc_elems(ev, at, "FoldSet", 3, args[2], &xs))
		return EVAL_ERR;
	return fold_elem_first(ev, at, "FoldSet", ops[0], args[1], xs, args[2]->n, out);
}

/* ReduceSet(op, S, acc) = FoldSet(op, acc, S). */
HBI(bi_reduce_set)
{
	(void)n;
	spt_val *const *xs;
	if (bi_tlc_elems(ev, at, "ReduceSet", 2, args[1], &xs))
		return EVAL_ERR;
	return fold_elem_first(ev, at, "ReduceSet", ops[0], args[2], xs, args[1]->n, out);
}

static int fun_values(struct ev *ev, const struct ast *at, const char *name, int argno, spt_val *f, spt_val *dom,
		      spt_val ***vals, uint32_t *nv)
{
	if (bi_fun(ev, at, name, argno, f))
		return EVAL_ERR;
	uint32_t m = dom ? dom->n : f->n;
	spt_val **v = malloc((m ? m : 1) * sizeof(*v));
	if (!v)
		return oom(ev, at, name);
	for (uint32_t i = 0; i < m; i++) {
		if (!dom) {
			v[i] = spt_fun_val(f, i);
			continue;
		}
		if (!(v[i] = spt_fun_apply(f, dom->u.elems[i]))) {
			free(v);
			return ev_fail(ev, at, "%s: %s is not in the domain of %s", name, ev_show(ev, dom->u.elems[i]),
				       ev_show(ev, f));
		}
	}
	*vals = v;
	*nv = m;
	return 0;
}

static int fold_fun(struct ev *ev, const struct ast *at, const char *name, const struct closure *op, spt_val *base,
		    spt_val *f, spt_val *dom, spt_val **out)
{
	spt_val **v = NULL;
	uint32_t nv = 0;
	if (fun_values(ev, at, name, 3, f, dom, &v, &nv))
		return EVAL_ERR;
	int rc = fold_elem_first(ev, at, name, op, base, v, nv, out);
	free(v);
	return rc;
}

HBI(bi_fold_function)
{
	(void)n;
	return fold_fun(ev, at, "FoldFunction", ops[0], args[1], args[2], NULL, out);
}

HBI(bi_fold_seq)
{
	(void)n;
	return fold_fun(ev, at, "FoldSeq", ops[0], args[1], args[2], NULL, out);
}

HBI(bi_fold_function_on_set)
{
	(void)n;
	if (bi_set(ev, at, "FoldFunctionOnSet", 4, args[3]))
		return EVAL_ERR;
	return fold_fun(ev, at, "FoldFunctionOnSet", ops[0], args[1], args[2], args[3], out);
}

/* FoldLeft(op, base, s) = op(...op(op(base, s[1]), s[2])..., s[n]) and FoldRight(op, s, base) =
 * op(s[1], op(s[2], ... op(s[n], base))); their ...Domain forms fold s's indices 1..Len(s)
 * instead of its elements. */
static int fold_seq(struct ev *ev, const struct ast *at, const char *name, const struct closure *op, spt_val *seq,
		    int argno, spt_val *base, bool right, bool indices, spt_val **out)
{
	struct bi_seq s;
	if (bi_seq(ev, at, name, argno, seq, &s) || arity(ev, at, name, op, 2))
		return EVAL_ERR;
	spt_val *acc = base;
	for (uint32_t k = 0; k < s.n; k++) {
		uint32_t i = right ? s.n - 1 - k : k;
		spt_val *x = indices ? spt_int(ev->arena, (int64_t)i + 1) : s.e[i];
		if (right ? call2(ev, at, op, x, acc, &acc) : call2(ev, at, op, acc, x, &acc))
			return EVAL_ERR;
	}
	*out = acc;
	return 0;
}

HBI(bi_fold_left)
{
	(void)n;
	return fold_seq(ev, at, "FoldLeft", ops[0], args[2], 3, args[1], false, false, out);
}

HBI(bi_fold_right)
{
	(void)n;
	return fold_seq(ev, at, "FoldRight", ops[0], args[1], 2, args[2], true, false, out);
}

HBI(bi_fold_left_domain)
{
	(void)n;
	return fold_seq(ev, at, "FoldLeftDomain", ops[0], args[2], 3, args[1], false, true, out);
}

HBI(bi_fold_right_domain)
{
	(void)n;
	return fold_seq(ev, at, "FoldRightDomain", ops[0], args[1], 2, args[2], true, true, out);
}

/* MapThenFoldSet(op, base, f, choose, S): as its definition (no override): x = choose(S) is
 * combined outermost, op(f(x), <the fold of S \ {x}>). */
HBI(bi_map_then_fold_set)
{
	(void)n;
	const char *name = "MapThenFoldSet";
	if (bi_set(ev, at, name, 5, args[4]) || arity(ev, at, name, ops[0], 2) || arity(ev, at, name, ops[2], 1) ||
	    arity(ev, at, name, ops[3], 1))
		return EVAL_ERR;
	spt_val *s = args[4];
	uint32_t m = s->n;
	spt_val **order = malloc((m ? m : 1) * sizeof(*order));
	if (!order)
		return oom(ev, at, name);
	int rc = 0;
	for (uint32_t i = 0; i < m; i++) {
		spt_val *x;
		if ((rc = call1(ev, at, ops[3], s, &x)))
			goto out;
		long k = s->kind == SPT_SET ? spt_set_find(s, x) : -1;
		if (k < 0) {
			rc = ev_fail(ev, at, "%s: choose gave %s, which is not in %s", name, ev_show(ev, x), ev_show(ev, s));
			goto out;
		}
		order[i] = x;
		if (!(s = spt_set_remove(ev_arena(ev), s, x))) {
			rc = oom(ev, at, name);
			goto out;
		}
	}
	spt_val *acc = args[1];
	for (uint32_t i = m; i-- > 0;) {
		spt_val *fx;
		if ((rc = call1(ev, at, ops[2], order[i], &fx)) || (rc = call2(ev, at, ops[0], fx, acc, &acc)))
			goto out;
	}
	*out = acc;
out:
	free(order);
	return rc;
}

/* FoldBag(op, base, B): acc := op(acc, e), each element as many times as B counts it. */
HBI(bi_fold_bag)
{
	(void)n;
	spt_val *b = args[2];
	if (bi_fun(ev, at, "FoldBag", 3, b) || arity(ev, at, "FoldBag", ops[0], 2))
		return EVAL_ERR;
	spt_val *acc = args[1];
	for (uint32_t i = 0; i < b->n; i++) {
		spt_val *c = spt_fun_val(b, i);
		if (c->kind != SPT_INT || c->u.i < 1)
			return ev_fail(ev, at, "FoldBag: %s is not a bag (counts are positive integers)", ev_show(ev, b));
		spt_val *e = bi_fun_key(ev, b, i);
		if (!e)
			return oom(ev, at, "FoldBag");
		for (int64_t k = 0; k < c->u.i; k++)
			if (call2(ev, at, ops[0], acc, e, &acc))
				return EVAL_ERR;
	}
	*out = acc;
	return 0;
}

/* ---- sets, functions and bags ---- */

HBI(bi_quantify)
{
	(void)n;
	if (bi_set(ev, at, "Quantify", 1, args[0]) || arity(ev, at, "Quantify", ops[1], 1))
		return EVAL_ERR;
	int64_t k = 0;
	for (uint32_t i = 0; i < args[0]->n; i++) {
		bool b;
		if (test(ev, at, "Quantify", ops[1], args[0]->u.elems[i], &b))
			return EVAL_ERR;
		k += b;
	}
	return bi_ret_int(ev, at, "Quantify", k, out);
}

/* MapThenSumSet(f, S): the sum of f(x) over x \in S. */
HBI(bi_map_then_sum_set)
{
	(void)n;
	if (bi_set(ev, at, "MapThenSumSet", 2, args[1]) || arity(ev, at, "MapThenSumSet", ops[0], 1))
		return EVAL_ERR;
	int64_t sum = 0;
	for (uint32_t i = 0; i < args[1]->n; i++) {
		spt_val *v;
		int64_t x;
		if (call1(ev, at, ops[0], args[1]->u.elems[i], &v) || bi_int(ev, at, "MapThenSumSet", 0, v, &x))
			return EVAL_ERR;
		if (__builtin_add_overflow(sum, x, &sum))
			return ev_fail(ev, at, "MapThenSumSet: the sum overflows 64 bits");
	}
	return bi_ret_int(ev, at, "MapThenSumSet", sum, out);
}

HBI(bi_choose_unique)
{
	(void)n;
	if (bi_set(ev, at, "ChooseUnique", 1, args[0]) || arity(ev, at, "ChooseUnique", ops[1], 1))
		return EVAL_ERR;
	spt_val *found = NULL;
	for (uint32_t i = 0; i < args[0]->n; i++) {
		bool b;
		if (test(ev, at, "ChooseUnique", ops[1], args[0]->u.elems[i], &b))
			return EVAL_ERR;
		if (b && found)
			return ev_fail(ev, at, "ChooseUnique: both %s and %s satisfy the predicate", ev_show(ev, found),
				       ev_show(ev, args[0]->u.elems[i]));
		if (b)
			found = args[0]->u.elems[i];
	}
	if (!found)
		return ev_fail(ev, at, "ChooseUnique: no element of %s satisfies the predicate", ev_show(ev, args[0]));
	*out = found;
	return 0;
}

/* Keeps the points of f whose key (values: false) or value passes the test. */
static int restrict_by(struct ev *ev, const struct ast *at, const char *name, spt_val *f, const struct closure *op,
		       bool values, spt_val **out)
{
	if (bi_fun(ev, at, name, 1, f) || arity(ev, at, name, op, 1))
		return EVAL_ERR;
	spt_val **k = malloc((f->n ? f->n : 1) * sizeof(*k)), **v = malloc((f->n ? f->n : 1) * sizeof(*v));
	int rc = 0;
	if (!k || !v) {
		rc = oom(ev, at, name);
		goto out;
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < f->n; i++) {
		spt_val *key = bi_fun_key(ev, f, i), *val = spt_fun_val(f, i);
		bool b;
		if (!key) {
			rc = oom(ev, at, name);
			goto out;
		}
		if ((rc = test(ev, at, name, op, values ? val : key, &b)))
			goto out;
		if (b) {
			k[m] = key;
			v[m++] = val;
		}
	}
	bool dup = false;
	rc = bi_ret(ev, at, name, spt_fun(ev_arena(ev), k, v, m, &dup), out);
out:
	free(k);
	free(v);
	return rc;
}

HBI(bi_restrict_domain)
{
	(void)n;
	return restrict_by(ev, at, "RestrictDomain", args[0], ops[1], false, out);
}

HBI(bi_restrict_values)
{
	(void)n;
	return restrict_by(ev, at, "RestrictValues", args[0], ops[1], true, out);
}

/* Pointwise(f, g, T) = [e \in DOMAIN f |-> T(f[e], g[e])]. */
HBI(bi_pointwise)
{
	(void)n;
	spt_val *f = args[0], *g = args[1];
	if (bi_fun(ev, at, "Pointwise", 1, f) || bi_fun(ev, at, "Pointwise", 2, g) || arity(ev, at, "Pointwise", ops[2], 2))
		return EVAL_ERR;
	spt_val **k = malloc((f->n ? f->n : 1) * sizeof(*k)), **v = malloc((f->n ? f->n : 1) * sizeof(*v));
	int rc = 0;
	if (!k || !v) {
		rc = oom(ev, at, "Pointwise");
		goto out;
	}
	for (uint32_t i = 0; i < f->n; i++) {
		if (!(k[i] = bi_fun_key(ev, f, i))) {
			rc = oom(ev, at, "Pointwise");
			goto out;
		}
		spt_val *y = spt_fun_apply(g, k[i]);
		if (!y) {
			rc = ev_fail(ev, at, "Pointwise: %s is not in the domain of %s", ev_show(ev, k[i]), ev_show(ev, g));
			goto out;
		}
		if ((rc = call2(ev, at, ops[2], spt_fun_val(f, i), y, &v[i])))
			goto out;
	}
	bool dup = false;
	rc = bi_ret(ev, at, "Pointwise", spt_fun(ev_arena(ev), k, v, f->n, &dup), out);
out:
	free(k);
	free(v);
	return rc;
}

/* BagOfAll(F, B): for each e of B, B[e] copies of F(e). */
HBI(bi_bag_of_all)
{
	(void)n;
	spt_val *b = args[1];
	if (bi_fun(ev, at, "BagOfAll", 2, b) || arity(ev, at, "BagOfAll", ops[0], 1))
		return EVAL_ERR;
	spt_val **k = malloc((b->n ? b->n : 1) * sizeof(*k)), **v = malloc((b->n ? b->n : 1) * sizeof(*v));
	int rc = 0;
	uint32_t m = 0;
	if (!k || !v) {
		rc = oom(ev, at, "BagOfAll");
		goto out;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		spt_val *e = bi_fun_key(ev, b, i), *c = spt_fun_val(b, i), *fe;
		if (!e) {
			rc = oom(ev, at, "BagOfAll");
			goto out;
		}
		if (c->kind != SPT_INT) {
			rc = ev_fail(ev, at, "BagOfAll: %s is not a bag", ev_show(ev, b));
			goto out;
		}
		if ((rc = call1(ev, at, ops[0], e, &fe)))
			goto out;
		uint32_t j = 0;
		while (j < m && !spt_value_eq(k[j], fe))
			j++;
		if (j == m) {
			k[m] = fe;
			v[m++] = c;
		} else if (!(v[j] = spt_int(ev_arena(ev), v[j]->u.i + c->u.i))) {
			rc = oom(ev, at, "BagOfAll");
			goto out;
		}
	}
	bool dup = false;
	rc = bi_ret(ev, at, "BagOfAll", spt_fun(ev_arena(ev), k, v, m, &dup), out);
out:
	free(k);
	free(v);
	return rc;
}

/* SetToSortSeq(S, op) = SortSeq(SetToSeq(S), op). */
HBI(bi_set_to_sort_seq)
{
	(void)n;
	spt_val *const *xs;
	if (bi_tlc_elems(ev, at, "SetToSortSeq", 1, args[0], &xs))
		return EVAL_ERR;
	spt_val *s = spt_seq(ev_arena(ev), xs, args[0]->n);
	if (!s)
		return oom(ev, at, "SetToSortSeq");
	spt_val *a[2] = { s, NULL };
	return bi_sort_seq(ev, at, a, ops, 2, out);
}

/* IsSorted(s, op): op holds for every pair of positions i < j. */
HBI(bi_is_sorted)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "IsSorted", 1, args[0], &s) || arity(ev, at, "IsSorted", ops[1], 2))
		return EVAL_ERR;
	for (uint32_t i = 0; i < s.n; i++)
		for (uint32_t j = i + 1; j < s.n; j++) {
			spt_val *v;
			if (call2(ev, at, ops[1], s.e[i], s.e[j], &v))
				return EVAL_ERR;
			if (v->kind != SPT_BOOL)
				return ev_fail(ev, at, "the order of IsSorted must give a Boolean, not %s", ev_show(ev, v));
			if (!v->u.b)
				return bi_ret_bool(ev, at, "IsSorted", false, out);
		}
	return bi_ret_bool(ev, at, "IsSorted", true, out);
}

/* VectorClocks' IsCausalOrder(log, clock(_)): every entry's clock, against each one before it
 * (both filled with 0 over the union of their domains), happened after it or is concurrent with
 * it, which is: some component of the earlier clock is less than the later one's. The clocks are
 * evaluated where the module's definition first needs them (clock(log[i]), then clock(log[j]) for
 * j < i), once each; their values must be integers. */
struct vclock {
	spt_val *c;
	bool have;
};

static int vclock_of(struct ev *ev, const struct ast *at, const struct closure *op, struct bi_seq *s,
		     struct vclock *vc, uint32_t k)
{
	if (vc[k].have)
		return 0;
	spt_val *c;
	if (call1(ev, at, op, s->e[k], &c))
		return EVAL_ERR;
	if (!spt_is_fun(c))
		return ev_fail(ev, at, "IsCausalOrder: the clock of entry %u is not a function: %s", k + 1, ev_show(ev, c));
	for (uint32_t i = 0; i < c->n; i++)
		if (spt_fun_val(c, i)->kind != SPT_INT)
			return ev_fail(ev, at, "IsCausalOrder: the clock of entry %u has a value that is not an integer: %s",
				       k + 1, ev_show(ev, spt_fun_val(c, i)));
	vc[k].c = c;
	vc[k].have = true;
	return 0;
}

/* Whether some component of earlier (0 where undefined) is less than later's (0 likewise). */
static bool some_less(spt_val *earlier, spt_val *later)
{
	struct spt_value tmp;
	for (uint32_t i = 0; i < later->n; i++) {
		spt_val *e = spt_fun_apply(earlier, spt_fun_key(later, i, &tmp));
		if ((e ? e->u.i : 0) < spt_fun_val(later, i)->u.i)
			return true;
	}
	for (uint32_t i = 0; i < earlier->n; i++)
		if (spt_fun_val(earlier, i)->u.i < 0 && spt_fun_index(later, spt_fun_key(earlier, i, &tmp)) < 0)
			return true; /* later's is 0 there */
	return false;
}

HBI(bi_is_causal_order)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "IsCausalOrder", 1, args[0], &s) || arity(ev, at, "IsCausalOrder", ops[1], 1))
		return EVAL_ERR;
	struct vclock *vc = calloc(s.n ? s.n : 1, sizeof(*vc));
	if (!vc)
		return oom(ev, at, "IsCausalOrder");
	bool ok = true;
	int rc = 0;
	for (uint32_t i = 0; ok && !rc && i < s.n; i++)
		for (uint32_t j = 0; ok && j < i; j++) {
			if ((rc = vclock_of(ev, at, ops[1], &s, vc, i)) || (rc = vclock_of(ev, at, ops[1], &s, vc, j)))
				break;
			ok = some_less(vc[j].c, vc[i].c);
		}
	free(vc);
	return rc ? EVAL_ERR : bi_ret_bool(ev, at, "IsCausalOrder", ok, out);
}
