/* Equality and the Boolean operators on evaluated values (the evaluator short-circuits
 * /\, \/ and => itself). */
#include "builtins_internal.h"

BI(bi_eq)
{
	(void)n;
	int r = bi_equal(ev, at, "=", args[0], args[1]);
	return r < 0 ? EVAL_ERR : bi_ret_bool(ev, at, "=", r == 1, out);
}

BI(bi_neq)
{
	(void)n;
	int r = bi_equal(ev, at, "#", args[0], args[1]);
	return r < 0 ? EVAL_ERR : bi_ret_bool(ev, at, "#", r == 0, out);
}

BI(bi_not)
{
	(void)n;
	bool b;
	if (bi_boolean(ev, at, "\\lnot", 0, args[0], &b))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "\\lnot", !b, out);
}

BI(bi_equiv)
{
	(void)n;
	bool a, b;
	if (bi_boolean(ev, at, "\\equiv", 1, args[0], &a) ||
	    bi_boolean(ev, at, "\\equiv", 2, args[1], &b))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "\\equiv", a == b, out);
}
