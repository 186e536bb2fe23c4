/* Argument checks, result wrapping and TLC-style equality shared by the builtins. */
#include "builtins_internal.h"
#include "tlc_order.h"

#include <errno.h>
#include <stdlib.h>

static const char *const ordinals[] = { "", "first", "second", "third", "fourth" };

int bi_type_err(struct ev *ev, const struct ast *at, const char *op, int argno, const char *what,
		spt_val *v)
{
	if (argno <= 0 || argno > 4)
		return ev_fail(ev, at, "%s applies to %s, not %s", op, what, ev_show(ev, v));
	return ev_fail(ev, at, "the %s argument of %s must be %s, not %s", ordinals[argno], op, what,
		       ev_show(ev, v));
}

int bi_ret(struct ev *ev, const struct ast *at, const char *op, spt_val *v, spt_val **out)
{
	if (!v)
		return ev_fail(ev, at, "out of memory in %s", op);
	*out = v;
	return 0;
}

int bi_ret_bool(struct ev *ev, const struct ast *at, const char *op, bool b, spt_val **out)
{
	return bi_ret(ev, at, op, spt_bool(ev_arena(ev), b), out);
}

int bi_ret_int(struct ev *ev, const struct ast *at, const char *op, int64_t i, spt_val **out)
{
	return bi_ret(ev, at, op, spt_int(ev_arena(ev), i), out);
}

int bi_int(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v, int64_t *i)
{
	if (v->kind != SPT_INT)
		return bi_type_err(ev, at, op, argno, argno ? "an integer" : "integers", v);
	*i = v->u.i;
	return 0;
}

int bi_boolean(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v, bool *b)
{
	if (v->kind != SPT_BOOL)
		return bi_type_err(ev, at, op, argno, argno ? "a Boolean" : "Booleans", v);
	*b = v->u.b;
	return 0;
}

int bi_set(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v)
{
	return v->kind == SPT_SET ? 0 : bi_type_err(ev, at, op, argno, "a set", v);
}

int bi_tlc_elems(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v, spt_val *const **out)
{
	if (bi_set(ev, at, op, argno, v))
		return EVAL_ERR;
	char why[200];
	int rc = tlc_order_elems(ev_arena(ev), v, out, why, sizeof(why));
	if (rc == -EDOM)
		return ev_fail(ev, at, "%s: %s (TLC orders the set first)", op, why);
	return rc ? ev_fail(ev, at, "out of memory in %s", op) : 0;
}

int bi_fun(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v)
{
	return spt_is_fun(v) ? 0 : bi_type_err(ev, at, op, argno, "a function", v);
}

bool bi_as_seq(spt_val *v, struct bi_seq *s)
{
	if (v->kind == SPT_SEQ) {
		s->e = v->u.elems;
		s->n = v->n;
		return true;
	}
	if (spt_is_fun(v) && v->n == 0) {
		s->e = NULL;
		s->n = 0;
		return true;
	}
	return false;
}

int bi_seq(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v,
	   struct bi_seq *s)
{
	return bi_as_seq(v, s) ? 0 : bi_type_err(ev, at, op, argno, "a sequence", v);
}

spt_val *bi_fun_key(struct ev *ev, spt_val *f, uint32_t i)
{
	if (f->kind == SPT_SEQ)
		return spt_int(ev_arena(ev), (int64_t)i + 1);
	return f->u.fn.keys[i];
}

int bi_class(spt_val *v)
{
	switch (v->kind) {
	case SPT_BOOL: return BI_C_BOOL;
	case SPT_INT: return BI_C_INT;
	case SPT_STR: return BI_C_STR;
	case SPT_MODEL: return BI_C_MODEL;
	case SPT_SET: return BI_C_SET;
	default: return BI_C_FUN;
	}
}

/* Walks x and y in canonical order up to their first difference; a difference of kind class
 * (neither side a model value) is what TLC reports as an error. Sets or functions of different
 * sizes are simply unequal, as in TLC, which compares sizes first. */
static int eq_walk(spt_val *x, spt_val *y, spt_val **bx, spt_val **by)
{
	int cx = bi_class(x), cy = bi_class(y);
	if (cx != cy) {
		if (cx == BI_C_MODEL || cy == BI_C_MODEL)
			return 0;
		*bx = x;
		*by = y;
		return -1;
	}
	if (spt_value_eq(x, y))
		return 1;
	if ((cx != BI_C_SET && cx != BI_C_FUN) || x->n != y->n)
		return 0;
	if (cx == BI_C_SET) {
		for (uint32_t i = 0; i < x->n; i++) {
			int r = eq_walk(x->u.elems[i], y->u.elems[i], bx, by);
			if (r != 1)
				return r;
		}
		return 0;
	}
	for (uint32_t i = 0; i < x->n; i++) {
		struct spt_value tx, ty;
		int r = eq_walk(spt_fun_key(x, i, &tx), spt_fun_key(y, i, &ty), bx, by);
		if (r == -1 && (*bx == &tx || *by == &ty)) {
			*bx = x; /* a sequence's index lives on this stack: show the functions */
			*by = y;
		}
		if (r != 1)
			return r;
	}
	for (uint32_t i = 0; i < x->n; i++) {
		int r = eq_walk(spt_fun_val(x, i), spt_fun_val(y, i), bx, by);
		if (r != 1)
			return r;
	}
	return 0;
}

int bi_equal(struct ev *ev, const struct ast *at, const char *op, spt_val *x, spt_val *y)
{
	spt_val *bx = NULL, *by = NULL;
	int r = eq_walk(x, y, &bx, &by);
	if (r >= 0)
		return r;
	/* The innermost mismatch says most; ev_show keeps only two texts at a time. */
	return ev_fail(ev, at, "%s: cannot compare %s with %s", op, ev_show(ev, bx), ev_show(ev, by));
}

spt_val *bi_to_string(struct ev *ev, spt_val *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	int rc = spt_value_print(f, v);
	if (fclose(f) != 0)
		rc = -1;
	spt_val *s = rc == 0 && text ? spt_str(ev_arena(ev), text, len) : NULL;
	free(text);
	return s;
}
