/* The first-order operators of the TLC module: printing, assertions, ToString. */
#include "builtins_internal.h"

FILE *bi_print_stream;

static void print_line(spt_val *v)
{
	FILE *f = bi_print_stream ? bi_print_stream : stderr;
	spt_value_print(f, v);
	fputc('\n', f);
	fflush(f);
}

/* Print(out, val): shows out as TLC does (strings with their quotes) and is val. */
BI(bi_print)
{
	(void)ev;
	(void)at;
	(void)n;
	print_line(args[0]);
	*out = args[1];
	return 0;
}

BI(bi_printt)
{
	(void)n;
	print_line(args[0]);
	return bi_ret_bool(ev, at, "PrintT", true, out);
}

/* Assert(c, msg): TRUE, or an error carrying msg (a string shows without its quotes). */
BI(bi_assert)
{
	(void)n;
	bool c;
	if (bi_boolean(ev, at, "Assert", 1, args[0], &c))
		return EVAL_ERR;
	if (c)
		return bi_ret_bool(ev, at, "Assert", true, out);
	spt_val *m = args[1];
	if (m->kind == SPT_STR)
		return ev_fail(ev, at, "Assert failed: %.*s", m->n > 600 ? 600 : (int)m->n, m->u.s);
	return ev_fail(ev, at, "Assert failed: %s", ev_show(ev, m));
}

BI(bi_tostring)
{
	(void)n;
	return bi_ret(ev, at, "ToString", bi_to_string(ev, args[0]), out);
}

/* TLCEval(v) only forces evaluation in TLC; arguments arrive evaluated here. */
BI(bi_tlceval)
{
	(void)ev;
	(void)at;
	(void)n;
	*out = args[0];
	return 0;
}
