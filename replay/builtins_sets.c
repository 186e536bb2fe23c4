/* Set operators of core TLA+, FiniteSets and FiniteSetsExt on concrete (finite) sets.
 * Sets are sorted arrays, so union, intersection, difference and inclusion are merges. */
#include "builtins_internal.h"

#include <stdlib.h>

static int oom(struct ev *ev, const struct ast *at, const char *op)
{
	return ev_fail(ev, at, "out of memory in %s", op);
}

/* The elements of x and y in one pass: keep says which side (1 x only, 2 y only, 3 both) goes in. */
static int merge(struct ev *ev, const struct ast *at, const char *op, spt_val *const *args,
		 unsigned keep, spt_val **out)
{
	spt_val *x = args[0], *y = args[1];
	if (bi_set(ev, at, op, 1, x) || bi_set(ev, at, op, 2, y))
		return EVAL_ERR;
	size_t cap = (size_t)x->n + y->n, m = 0;
	spt_val **e = malloc((cap ? cap : 1) * sizeof(*e));
	if (!e)
		return oom(ev, at, op);
	uint32_t i = 0, j = 0;
	while (i < x->n || j < y->n) {
		int c = i == x->n ? 1 : j == y->n ? -1 : spt_value_cmp(x->u.elems[i], y->u.elems[j]);
		unsigned side = c < 0 ? 1 : c > 0 ? 2 : 3;
		spt_val *v = c <= 0 ? x->u.elems[i] : y->u.elems[j];
		if (keep & (1u << side))
			e[m++] = v;
		i += c <= 0;
		j += c >= 0;
	}
	spt_val *s = spt_set(ev_arena(ev), e, m);
	free(e);
	return bi_ret(ev, at, op, s, out);
}

/* keep bits: 1 << side for each side that is kept. */
BI(bi_cup) { (void)n; return merge(ev, at, "\\cup", args, 2 | 4 | 8, out); }
BI(bi_cap) { (void)n; return merge(ev, at, "\\cap", args, 8, out); }
BI(bi_setminus) { (void)n; return merge(ev, at, "\\", args, 2, out); }

BI(bi_subseteq)
{
	(void)n;
	spt_val *x = args[0], *y = args[1];
	if (bi_set(ev, at, "\\subseteq", 1, x) || bi_set(ev, at, "\\subseteq", 2, y))
		return EVAL_ERR;
	uint32_t j = 0;
	for (uint32_t i = 0; i < x->n; i++) {
		while (j < y->n && spt_value_cmp(y->u.elems[j], x->u.elems[i]) < 0)
			j++;
		if (j == y->n || !spt_value_eq(y->u.elems[j], x->u.elems[i]))
			return bi_ret_bool(ev, at, "\\subseteq", false, out);
	}
	return bi_ret_bool(ev, at, "\\subseteq", true, out);
}

/* The subset of s whose members are the bits of mask. */
static spt_val *subset_of(struct ev *ev, spt_val *s, uint32_t mask, spt_val **tmp)
{
	size_t m = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (mask & (1u << i))
			tmp[m++] = s->u.elems[i];
	return spt_set(ev_arena(ev), tmp, m);
}

BI(bi_subset)
{
	(void)n;
	spt_val *s = args[0];
	if (bi_set(ev, at, "SUBSET", 0, s))
		return EVAL_ERR;
	if (s->n > 20)
		return ev_fail(ev, at, "SUBSET of a set of %u elements is too large to enumerate",
			       (unsigned)s->n);
	size_t cnt = (size_t)1 << s->n;
	spt_val **subs = malloc(cnt * sizeof(*subs)), *tmp[20];
	if (!subs)
		return oom(ev, at, "SUBSET");
	for (size_t m = 0; m < cnt; m++)
		if (!(subs[m] = subset_of(ev, s, (uint32_t)m, tmp))) {
			free(subs);
			return oom(ev, at, "SUBSET");
		}
	spt_val *r = spt_set(ev_arena(ev), subs, cnt);
	free(subs);
	return bi_ret(ev, at, "SUBSET", r, out);
}

BI(bi_union)
{
	(void)n;
	spt_val *s = args[0];
	if (bi_set(ev, at, "UNION", 0, s))
		return EVAL_ERR;
	size_t total = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		spt_val *e = s->u.elems[i];
		if (e->kind != SPT_SET)
			return ev_fail(ev, at, "UNION applies to a set of sets, not %s, which has %s",
				       ev_show(ev, s), ev_show(ev, e));
		total += e->n;
	}
	if (total > UINT32_MAX)
		return ev_fail(ev, at, "UNION of %s is too large", ev_show(ev, s));
	spt_val **all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return oom(ev, at, "UNION");
	size_t m = 0;
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t j = 0; j < s->u.elems[i]->n; j++)
			all[m++] = s->u.elems[i]->u.elems[j];
	spt_val *r = spt_set(ev_arena(ev), all, m);
	free(all);
	return bi_ret(ev, at, "UNION", r, out);
}

BI(bi_domain)
{
	(void)n;
	spt_val *f = args[0];
	if (bi_fun(ev, at, "DOMAIN", 0, f))
		return EVAL_ERR;
	if (f->kind != SPT_SEQ)
		return bi_ret(ev, at, "DOMAIN", spt_set(ev_arena(ev), f->u.fn.keys, f->n), out);
	spt_val **keys = malloc((f->n ? f->n : 1) * sizeof(*keys));
	if (!keys)
		return oom(ev, at, "DOMAIN");
	for (uint32_t i = 0; i < f->n; i++)
		if (!(keys[i] = bi_fun_key(ev, f, i))) {
			free(keys);
			return oom(ev, at, "DOMAIN");
		}
	spt_val *r = spt_set(ev_arena(ev), keys, f->n);
	free(keys);
	return bi_ret(ev, at, "DOMAIN", r, out);
}

/* Index range [lo, hi) of the model values in s (they sort together, between strings and sets). */
static void model_block(spt_val *s, uint32_t *lo, uint32_t *hi)
{
	int cm = BI_C_MODEL;
	uint32_t a = 0, b = s->n;
	while (a < b) { /* first element of class >= model */
		uint32_t m = a + (b - a) / 2;
		if (bi_class(s->u.elems[m]) < cm)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	b = s->n;
	while (a < b) { /* first element of class > model */
		uint32_t m = a + (b - a) / 2;
		if (bi_class(s->u.elems[m]) <= cm)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

/* TLC errors when x meets an element of another kind class (e.g. 1 \in {"a"}); model values
 * compare with anything. Classes sort together, so the first and last non-model elements tell. */
static int check_member_kinds(struct ev *ev, const struct ast *at, const char *op, spt_val *x,
			      spt_val *s)
{
	int cx = bi_class(x);
	if (x->kind == SPT_MODEL || s->n == 0)
		return 0;
	uint32_t lo, hi;
	model_block(s, &lo, &hi);
	spt_val *first = lo > 0 ? s->u.elems[0] : hi < s->n ? s->u.elems[hi] : NULL;
	spt_val *last = hi < s->n ? s->u.elems[s->n - 1] : lo > 0 ? s->u.elems[lo - 1] : NULL;
	spt_val *bad = first && bi_class(first) != cx ? first
		     : last && bi_class(last) != cx  ? last
						     : NULL;
	if (bad)
		return ev_fail(ev, at, "%s: cannot compare %s with %s", op, ev_show(ev, x),
			       ev_show(ev, bad));
	return 0;
}

static int member(struct ev *ev, const struct ast *at, const char *op, spt_val *const *args,
		  bool want, spt_val **out)
{
	spt_val *x = args[0], *s = args[1];
	if (bi_set(ev, at, op, 2, s))
		return EVAL_ERR;
	bool in = spt_set_find(s, x) >= 0;
	if (!in && check_member_kinds(ev, at, op, x, s))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, op, in == want, out);
}

BI(bi_in) { (void)n; return member(ev, at, "\\in", args, true, out); }
BI(bi_notin) { (void)n; return member(ev, at, "\\notin", args, false, out); }

/* Product of the sizes, or an error when it exceeds BI_MAX_ELEMS. */
static int product_size(struct ev *ev, const struct ast *at, spt_val *const *args, uint32_t n,
			size_t *cnt)
{
	bool empty = false;
	for (uint32_t k = 0; k < n; k++) {
		if (bi_set(ev, at, "\\times", (int)k + 1, args[k]))
			return EVAL_ERR;
		empty |= args[k]->n == 0;
	}
	*cnt = 0;
	if (empty)
		return 0;
	uint64_t c = 1;
	for (uint32_t k = 0; k < n; k++)
		if ((c *= args[k]->n) > BI_MAX_ELEMS)
			return ev_fail(ev, at, "\\times of %u sets is too large to enumerate",
				       (unsigned)n);
	*cnt = (size_t)c;
	return 0;
}

/* Tuples in odometer order (last component fastest), which is already canonical order. */
BI(bi_times_set)
{
	size_t cnt;
	if (product_size(ev, at, args, n, &cnt))
		return EVAL_ERR;
	spt_val **tuples = malloc((cnt ? cnt : 1) * sizeof(*tuples));
	spt_val **comp = malloc((n ? n : 1) * sizeof(*comp));
	uint32_t *idx = calloc(n ? n : 1, sizeof(*idx));
	int rc = tuples && comp && idx ? 0 : oom(ev, at, "\\times");
	for (size_t t = 0; rc == 0 && t < cnt; t++) {
		for (uint32_t k = 0; k < n; k++)
			comp[k] = args[k]->u.elems[idx[k]];
		if (!(tuples[t] = spt_seq(ev_arena(ev), comp, n)))
			rc = oom(ev, at, "\\times");
		for (uint32_t k = n; k-- > 0;) {
			if (++idx[k] < args[k]->n)
				break;
			idx[k] = 0;
		}
	}
	if (rc == 0)
		rc = bi_ret(ev, at, "\\times", spt_set(ev_arena(ev), tuples, cnt), out);
	free(tuples);
	free(comp);
	free(idx);
	return rc;
}

BI(bi_cardinality)
{
	(void)n;
	if (bi_set(ev, at, "Cardinality", 0, args[0]))
		return EVAL_ERR;
	return bi_ret_int(ev, at, "Cardinality", args[0]->n, out);
}

/* Every concrete set is finite; the evaluator answers for Nat, Int and Seq(S) itself. */
BI(bi_is_finite_set)
{
	(void)n;
	if (bi_set(ev, at, "IsFiniteSet", 0, args[0]))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "IsFiniteSet", true, out);
}

/* A set of integers: they sort together, so checking both ends suffices. */
static int int_set(struct ev *ev, const struct ast *at, const char *op, spt_val *s, bool nonempty)
{
	if (bi_set(ev, at, op, 0, s))
		return EVAL_ERR;
	if (s->n == 0)
		return nonempty ? ev_fail(ev, at, "%s of the empty set", op) : 0;
	if (s->u.elems[0]->kind != SPT_INT || s->u.elems[s->n - 1]->kind != SPT_INT)
		return bi_type_err(ev, at, op, 0, "a set of integers", s);
	return 0;
}

BI(bi_max)
{
	(void)n;
	spt_val *s = args[0];
	if (int_set(ev, at, "Max", s, true))
		return EVAL_ERR;
	*out = s->u.elems[s->n - 1];
	return 0;
}

BI(bi_min)
{
	(void)n;
	spt_val *s = args[0];
	if (int_set(ev, at, "Min", s, true))
		return EVAL_ERR;
	*out = s->u.elems[0];
	return 0;
}

BI(bi_sumset)
{
	(void)n;
	spt_val *s = args[0];
	if (int_set(ev, at, "SumSet", s, false))
		return EVAL_ERR;
	int64_t sum = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (__builtin_add_overflow(sum, s->u.elems[i]->u.i, &sum))
			return ev_fail(ev, at, "integer overflow in SumSet(%s)", ev_show(ev, s));
	return bi_ret_int(ev, at, "SumSet", sum, out);
}
