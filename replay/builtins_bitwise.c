/* CommunityModules' Bitwise, natively: &, |, ^^ and shiftR of non-negative integers (the module
 * defines them through recursion on the bits; TLC overrides them in Java). */
#include "builtins_internal.h"

static int naturals(struct ev *ev, const struct ast *at, const char *op, spt_val *const *args, uint32_t n,
		    int64_t *x, int64_t *y)
{
	if (bi_int(ev, at, op, 1, args[0], x) || (n > 1 && bi_int(ev, at, op, 2, args[1], y)))
		return EVAL_ERR;
	if (*x < 0 || (n > 1 && *y < 0))
		return ev_fail(ev, at, "Bitwise's %s is defined for non-negative integers (Nat), not %lld", op,
			       (long long)(*x < 0 ? *x : *y));
	return 0;
}

BI(bi_bit_and)
{
	int64_t x, y;
	return naturals(ev, at, "&", args, n, &x, &y) ? EVAL_ERR : bi_ret_int(ev, at, "&", x & y, out);
}

BI(bi_bit_or)
{
	int64_t x, y;
	return naturals(ev, at, "|", args, n, &x, &y) ? EVAL_ERR : bi_ret_int(ev, at, "|", x | y, out);
}

BI(bi_bit_xor)
{
	int64_t x, y;
	return naturals(ev, at, "^^", args, n, &x, &y) ? EVAL_ERR : bi_ret_int(ev, at, "^^", x ^ y, out);
}

BI(bi_shift_r)
{
	int64_t x, pos;
	if (naturals(ev, at, "shiftR", args, n, &x, &pos))
		return EVAL_ERR;
	return bi_ret_int(ev, at, "shiftR", pos >= 63 ? 0 : x >> pos, out);
}
