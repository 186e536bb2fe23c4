/* Naturals and Integers: 64-bit arithmetic where every overflow is an error (TLC's ints are
 * 32-bit and it errors on overflow too; we only have a wider range). */
#include "builtins_internal.h"

#include <stdlib.h>

/* Both arguments of a binary integer operator. */
static int two_ints(struct ev *ev, const struct ast *at, const char *op, spt_val *const *args,
		    int64_t *a, int64_t *b)
{
	if (bi_int(ev, at, op, 0, args[0], a) || bi_int(ev, at, op, 0, args[1], b))
		return EVAL_ERR;
	return 0;
}

static int overflow(struct ev *ev, const struct ast *at, const char *op, int64_t a, int64_t b)
{
	return ev_fail(ev, at, "integer overflow in %lld %s %lld", (long long)a, op, (long long)b);
}

BI(bi_plus)
{
	(void)n;
	int64_t a, b, r;
	if (two_ints(ev, at, "+", args, &a, &b))
		return EVAL_ERR;
	if (__builtin_add_overflow(a, b, &r))
		return overflow(ev, at, "+", a, b);
	return bi_ret_int(ev, at, "+", r, out);
}

BI(bi_minus)
{
	(void)n;
	int64_t a, b, r;
	if (two_ints(ev, at, "-", args, &a, &b))
		return EVAL_ERR;
	if (__builtin_sub_overflow(a, b, &r))
		return overflow(ev, at, "-", a, b);
	return bi_ret_int(ev, at, "-", r, out);
}

BI(bi_neg)
{
	(void)n;
	int64_t a;
	if (bi_int(ev, at, "-.", 0, args[0], &a))
		return EVAL_ERR;
	if (a == INT64_MIN)
		return ev_fail(ev, at, "integer overflow in -(%lld)", (long long)a);
	return bi_ret_int(ev, at, "-.", -a, out);
}

BI(bi_times)
{
	(void)n;
	int64_t a, b, r;
	if (two_ints(ev, at, "*", args, &a, &b))
		return EVAL_ERR;
	if (__builtin_mul_overflow(a, b, &r))
		return overflow(ev, at, "*", a, b);
	return bi_ret_int(ev, at, "*", r, out);
}

/* Rounds toward negative infinity, as TLC. */
BI(bi_div)
{
	(void)n;
	int64_t a, b;
	if (two_ints(ev, at, "\\div", args, &a, &b))
		return EVAL_ERR;
	if (b == 0)
		return ev_fail(ev, at, "\\div by zero: %lld \\div 0", (long long)a);
	if (a == INT64_MIN && b == -1)
		return overflow(ev, at, "\\div", a, b);
	int64_t q = a / b;
	if (a % b != 0 && (a < 0) != (b < 0))
		q--;
	return bi_ret_int(ev, at, "\\div", q, out);
}

/* In 0..b-1; TLC rejects b <= 0. */
BI(bi_mod)
{
	(void)n;
	int64_t a, b;
	if (two_ints(ev, at, "%", args, &a, &b))
		return EVAL_ERR;
	if (b <= 0)
		return ev_fail(ev, at, "%% needs a positive divisor: %lld %% %lld", (long long)a,
			       (long long)b);
	int64_t r = a % b;
	return bi_ret_int(ev, at, "%", r < 0 ? r + b : r, out);
}

/* Square and multiply; a squared base that overflows while bits remain means the result does. */
static bool ipow(int64_t base, int64_t e, int64_t *out)
{
	int64_t r = 1;
	while (e > 0) {
		if ((e & 1) && __builtin_mul_overflow(r, base, &r))
			return false;
		e >>= 1;
		if (e > 0 && __builtin_mul_overflow(base, base, &base))
			return false;
	}
	*out = r;
	return true;
}

BI(bi_pow)
{
	(void)n;
	int64_t a, b, r;
	if (two_ints(ev, at, "^", args, &a, &b))
		return EVAL_ERR;
	if (b < 0)
		return ev_fail(ev, at, "negative exponent in %lld ^ %lld", (long long)a, (long long)b);
	if (a == 0 && b == 0)
		return ev_fail(ev, at, "0 ^ 0 is undefined");
	if (!ipow(a, b, &r))
		return overflow(ev, at, "^", a, b);
	return bi_ret_int(ev, at, "^", r, out);
}

enum cmp_op { LT, GT, LE, GE };

static int compare(struct ev *ev, const struct ast *at, const char *op, enum cmp_op c,
		   spt_val *const *args, spt_val **out)
{
	int64_t a, b;
	if (two_ints(ev, at, op, args, &a, &b))
		return EVAL_ERR;
	bool r = c == LT ? a < b : c == GT ? a > b : c == LE ? a <= b : a >= b;
	return bi_ret_bool(ev, at, op, r, out);
}

BI(bi_lt) { (void)n; return compare(ev, at, "<", LT, args, out); }
BI(bi_gt) { (void)n; return compare(ev, at, ">", GT, args, out); }
BI(bi_le) { (void)n; return compare(ev, at, "<=", LE, args, out); }
BI(bi_ge) { (void)n; return compare(ev, at, ">=", GE, args, out); }

/* a..b as a concrete set, {} when a > b. */
BI(bi_range_int)
{
	(void)n;
	int64_t a, b;
	if (two_ints(ev, at, "..", args, &a, &b))
		return EVAL_ERR;
	if (a > b)
		return bi_ret(ev, at, "..", spt_set(ev_arena(ev), NULL, 0), out);
	uint64_t span = (uint64_t)b - (uint64_t)a; /* elements - 1, no overflow */
	if (span >= BI_MAX_ELEMS)
		return ev_fail(ev, at, "%lld..%lld is too large to enumerate", (long long)a,
			       (long long)b);
	size_t cnt = (size_t)span + 1;
	spt_val **e = spt_arena_alloc(ev_arena(ev), cnt * sizeof(*e));
	if (!e)
		return ev_fail(ev, at, "out of memory in ..");
	for (size_t i = 0; i < cnt; i++)
		if (!(e[i] = spt_int(ev_arena(ev), a + (int64_t)i)))
			return ev_fail(ev, at, "out of memory in ..");
	/* In order, each once: the set as it is. */
	return bi_ret(ev, at, "..", spt_set_adopt_sorted(ev_arena(ev), e, cnt), out);
}
