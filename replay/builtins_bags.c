/* The Bags module: a bag is a function from elements to their (positive) number of copies. */
#include "builtins_internal.h"

#include <stdlib.h>
#include <string.h>

/* A bag argument: a function whose values are positive integers. */
static int bag(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *b)
{
	if (!spt_is_fun(b))
		return bi_type_err(ev, at, op, argno, "a bag", b);
	for (uint32_t i = 0; i < b->n; i++) {
		spt_val *c = spt_fun_val(b, i);
		if (c->kind != SPT_INT || c->u.i < 1)
			return bi_type_err(ev, at, op, argno, "a bag (copies are positive integers)", b);
	}
	return 0;
}

static int64_t copies(spt_val *b, spt_val *x)
{
	spt_val *c = spt_fun_apply(b, x);
	return c ? c->u.i : 0;
}

BI(bi_empty_bag)
{
	(void)args;
	(void)n;
	return bi_ret(ev, at, "EmptyBag", spt_empty_fun(ev_arena(ev), SPT_FUN), out);
}

BI(bi_set_to_bag)
{
	(void)n;
	if (bi_set(ev, at, "SetToBag", 0, args[0]))
		return EVAL_ERR;
	struct spt_arena *a = ev_arena(ev);
	spt_val *one = spt_int(a, 1);
	spt_val **v = spt_arena_alloc(a, (args[0]->n + 1) * sizeof(*v));
	if (!one || !v)
		return bi_ret(ev, at, "SetToBag", NULL, out);
	for (uint32_t i = 0; i < args[0]->n; i++)
		v[i] = one;
	return bi_ret(ev, at, "SetToBag", spt_fun(a, args[0]->u.elems, v, args[0]->n, NULL), out);
}

BI(bi_bag_to_set)
{
	(void)n;
	if (bag(ev, at, "BagToSet", 0, args[0]))
		return EVAL_ERR;
	return bi_domain(ev, at, args, 1, out);
}

BI(bi_bag_in)
{
	(void)n;
	if (bag(ev, at, "BagIn", 2, args[1]))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "BagIn", copies(args[1], args[0]) > 0, out);
}

BI(bi_copies_in)
{
	(void)n;
	if (bag(ev, at, "CopiesIn", 2, args[1]))
		return EVAL_ERR;
	return bi_ret_int(ev, at, "CopiesIn", copies(args[1], args[0]), out);
}

BI(bi_bag_cardinality)
{
	(void)n;
	if (bag(ev, at, "BagCardinality", 0, args[0]))
		return EVAL_ERR;
	int64_t sum = 0;
	for (uint32_t i = 0; i < args[0]->n; i++)
		if (__builtin_add_overflow(sum, spt_fun_val(args[0], i)->u.i, &sum))
			return ev_fail(ev, at, "integer overflow in BagCardinality");
	return bi_ret_int(ev, at, "BagCardinality", sum, out);
}

/* (+) and (-): copies added, or subtracted down to none. */
static int combine(struct ev *ev, const struct ast *at, const char *op, spt_val *x, spt_val *y, int sign, spt_val **out)
{
	if (bag(ev, at, op, 1, x) || bag(ev, at, op, 2, y))
		return EVAL_ERR;
	struct spt_arena *a = ev_arena(ev);
	size_t cap = (size_t)x->n + y->n + 1, m = 0;
	spt_val **k = spt_arena_alloc(a, cap * sizeof(*k)), **v = spt_arena_alloc(a, cap * sizeof(*v));
	if (!k || !v)
		return bi_ret(ev, at, op, NULL, out);
	for (int side = 0; side < 2; side++) {
		spt_val *b = side ? y : x;
		for (uint32_t i = 0; i < b->n; i++) {
			spt_val *key = bi_fun_key(ev, b, i);
			if (side && spt_fun_apply(x, key))
				continue; /* done with x's keys */
			int64_t c = copies(x, key), d = copies(y, key), r;
			if (sign > 0 ? __builtin_add_overflow(c, d, &r) : __builtin_sub_overflow(c, d, &r))
				return ev_fail(ev, at, "integer overflow in %s", op);
			if (r <= 0)
				continue;
			k[m] = key;
			if (!(v[m++] = spt_int(a, r)))
				return bi_ret(ev, at, op, NULL, out);
		}
	}
	return bi_ret(ev, at, op, m ? spt_fun(a, k, v, m, NULL) : spt_empty_fun(a, SPT_FUN), out);
}

BI(bi_bag_plus)
{
	(void)n;
	return combine(ev, at, "(+)", args[0], args[1], 1, out);
}

BI(bi_bag_minus)
{
	(void)n;
	return combine(ev, at, "(-)", args[0], args[1], -1, out);
}

BI(bi_sub_bag)
{
	(void)n;
	if (bag(ev, at, "\\sqsubseteq", 1, args[0]) || bag(ev, at, "\\sqsubseteq", 2, args[1]))
		return EVAL_ERR;
	for (uint32_t i = 0; i < args[0]->n; i++)
		if (spt_fun_val(args[0], i)->u.i > copies(args[1], bi_fun_key(ev, args[0], i)))
			return bi_ret_bool(ev, at, "\\sqsubseteq", false, out);
	return bi_ret_bool(ev, at, "\\sqsubseteq", true, out);
}

BI(bi_is_a_bag)
{
	(void)n;
	bool ok = spt_is_fun(args[0]);
	for (uint32_t i = 0; ok && i < args[0]->n; i++) {
		spt_val *c = spt_fun_val(args[0], i);
		ok = c->kind == SPT_INT && c->u.i >= 1;
	}
	return bi_ret_bool(ev, at, "IsABag", ok, out);
}
