/* The first-order operators of the TLC module: printing, assertions, ToString. */
#include "builtins_internal.h"
#include "ev_core.h"

#include <stdlib.h>

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

/* TLCSet/TLCGet registers: meaningful for a spec's own bookkeeping (integer registers). The
 * named ones ("level", "diameter", ...) describe TLC's model checking, which has no counterpart
 * in window validation: asking for them is an error, never a made-up value. */
#define TLC_REGISTERS 64
struct tlc_registers {
	spt_val *r[TLC_REGISTERS];
	struct spt_arena arena;
};

static struct tlc_registers *regs(struct ev *ev)
{
	if (!ev->tlc) {
		struct tlc_registers *t = calloc(1, sizeof(*t));
		if (t)
			spt_arena_init(&t->arena);
		ev->tlc = t;
	}
	return ev->tlc;
}

void bi_tlc_fini(struct ev *ev)
{
	struct tlc_registers *t = ev->tlc;
	if (t) {
		spt_arena_fini(&t->arena);
		free(t);
	}
	ev->tlc = NULL;
}

static int register_index(struct ev *ev, const struct ast *at, const char *op, spt_val *i, int64_t *out)
{
	if (i->kind == SPT_STR)
		return ev_fail(ev, at, "%s(\"%s\") describes TLC's model checking run, which window validation does not have",
			       op, i->u.s);
	if (bi_int(ev, at, op, 1, i, out))
		return EVAL_ERR;
	if (*out < 0 || *out >= TLC_REGISTERS)
		return ev_fail(ev, at, "%s: register %lld is outside 0..%d", op, (long long)*out, TLC_REGISTERS - 1);
	return 0;
}

BI(bi_tlcset)
{
	(void)n;
	int64_t i;
	if (register_index(ev, at, "TLCSet", args[0], &i))
		return EVAL_ERR;
	/* Registers outlive the window being checked: keep a copy of their own. */
	struct tlc_registers *t = regs(ev);
	spt_val *v = t ? spt_value_clone(&t->arena, args[1]) : NULL;
	if (!v)
		return bi_ret(ev, at, "TLCSet", NULL, out);
	t->r[i] = v;
	return bi_ret_bool(ev, at, "TLCSet", true, out);
}

BI(bi_tlcget)
{
	(void)n;
	int64_t i;
	if (register_index(ev, at, "TLCGet", args[0], &i))
		return EVAL_ERR;
	struct tlc_registers *t = regs(ev);
	if (!t || !t->r[i])
		return ev_fail(ev, at, "TLCGet(%lld): nothing was TLCSet there", (long long)i);
	*out = t->r[i];
	return 0;
}
