/* Sequences and SequencesExt. A sequence is an SPT_SEQ or any empty function (<<>>). As in
 * TLC, Len, Tail, \o and SubSeq also take strings (measured in bytes here, UTF-16 units in TLC). */
#include "builtins_internal.h"

#include <stdlib.h>
#include <string.h>

static int oom(struct ev *ev, const struct ast *at, const char *op)
{
	return ev_fail(ev, at, "out of memory in %s", op);
}

/* The sequence of a[0..an) followed by b[0..bn). */
static int ret_join(struct ev *ev, const struct ast *at, const char *op, spt_val *const *a,
		    size_t an, spt_val *const *b, size_t bn, spt_val **out)
{
	if (an + bn > UINT32_MAX)
		return ev_fail(ev, at, "%s: sequence too long", op);
	spt_val **e = malloc((an + bn ? an + bn : 1) * sizeof(*e));
	if (!e)
		return oom(ev, at, op);
	if (an)
		memcpy(e, a, an * sizeof(*e));
	if (bn)
		memcpy(e + an, b, bn * sizeof(*e));
	spt_val *s = spt_seq(ev_arena(ev), e, an + bn);
	free(e);
	return bi_ret(ev, at, op, s, out);
}

BI(bi_len)
{
	(void)n;
	struct bi_seq s;
	if (args[0]->kind == SPT_STR)
		return bi_ret_int(ev, at, "Len", args[0]->n, out);
	if (bi_seq(ev, at, "Len", 0, args[0], &s))
		return EVAL_ERR;
	return bi_ret_int(ev, at, "Len", s.n, out);
}

BI(bi_head)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Head", 0, args[0], &s))
		return EVAL_ERR;
	if (s.n == 0)
		return ev_fail(ev, at, "Head of the empty sequence");
	*out = s.e[0];
	return 0;
}

BI(bi_tail)
{
	(void)n;
	spt_val *v = args[0];
	struct bi_seq s;
	if (v->kind == SPT_STR) {
		if (v->n == 0)
			return ev_fail(ev, at, "Tail of the empty string");
		return bi_ret(ev, at, "Tail", spt_str(ev_arena(ev), v->u.s + 1, v->n - 1), out);
	}
	if (bi_seq(ev, at, "Tail", 0, v, &s))
		return EVAL_ERR;
	if (s.n == 0)
		return ev_fail(ev, at, "Tail of the empty sequence");
	return ret_join(ev, at, "Tail", s.e + 1, s.n - 1, NULL, 0, out);
}

BI(bi_append)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Append", 1, args[0], &s))
		return EVAL_ERR;
	return ret_join(ev, at, "Append", s.e, s.n, &args[1], 1, out);
}

static int concat_strings(struct ev *ev, const struct ast *at, spt_val *x, spt_val *y,
			  spt_val **out)
{
	if (y->kind != SPT_STR)
		return bi_type_err(ev, at, "\\o", 2, "a string", y);
	if ((size_t)x->n + y->n > UINT32_MAX)
		return ev_fail(ev, at, "\\o: string too long");
	char *buf = malloc((size_t)x->n + y->n + 1);
	if (!buf)
		return oom(ev, at, "\\o");
	memcpy(buf, x->u.s, x->n);
	memcpy(buf + x->n, y->u.s, y->n);
	spt_val *s = spt_str(ev_arena(ev), buf, (size_t)x->n + y->n);
	free(buf);
	return bi_ret(ev, at, "\\o", s, out);
}

BI(bi_concat)
{
	(void)n;
	struct bi_seq a, b;
	if (args[0]->kind == SPT_STR)
		return concat_strings(ev, at, args[0], args[1], out);
	if (bi_seq(ev, at, "\\o", 1, args[0], &a) || bi_seq(ev, at, "\\o", 2, args[1], &b))
		return EVAL_ERR;
	return ret_join(ev, at, "\\o", a.e, a.n, b.e, b.n, out);
}

/* TLC: <<>> (or "") when m > n, else both m and n must lie in 1..Len(s). */
BI(bi_subseq)
{
	(void)n;
	spt_val *v = args[0];
	struct bi_seq s = { NULL, v->n };
	int64_t m, k;
	if (v->kind != SPT_STR && bi_seq(ev, at, "SubSeq", 1, v, &s))
		return EVAL_ERR;
	if (bi_int(ev, at, "SubSeq", 2, args[1], &m) || bi_int(ev, at, "SubSeq", 3, args[2], &k))
		return EVAL_ERR;
	bool str = v->kind == SPT_STR;
	if (m > k)
		return bi_ret(ev, at, "SubSeq", str ? spt_str(ev_arena(ev), "", 0)
						   : spt_seq(ev_arena(ev), NULL, 0), out);
	if (m < 1 || m > (int64_t)s.n || k > (int64_t)s.n)
		return ev_fail(ev, at, "SubSeq(%s, %lld, %lld): index out of 1..%u", ev_show(ev, v),
			       (long long)m, (long long)k, (unsigned)s.n);
	if (str)
		return bi_ret(ev, at, "SubSeq",
			      spt_str(ev_arena(ev), v->u.s + m - 1, (size_t)(k - m + 1)), out);
	return ret_join(ev, at, "SubSeq", s.e + m - 1, (size_t)(k - m + 1), NULL, 0, out);
}

BI(bi_to_set)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "ToSet", 0, args[0], &s))
		return EVAL_ERR;
	return bi_ret(ev, at, "ToSet", spt_set(ev_arena(ev), s.e, s.n), out);
}

BI(bi_reverse)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Reverse", 0, args[0], &s))
		return EVAL_ERR;
	spt_val **e = malloc((s.n ? s.n : 1) * sizeof(*e));
	if (!e)
		return oom(ev, at, "Reverse");
	for (uint32_t i = 0; i < s.n; i++)
		e[i] = s.e[s.n - 1 - i];
	spt_val *r = spt_seq(ev_arena(ev), e, s.n);
	free(e);
	return bi_ret(ev, at, "Reverse", r, out);
}

BI(bi_last)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Last", 0, args[0], &s))
		return EVAL_ERR;
	if (s.n == 0)
		return ev_fail(ev, at, "Last of the empty sequence");
	*out = s.e[s.n - 1];
	return 0;
}

/* SequencesExt: Front(s) == SubSeq(s, 1, Len(s)-1), so Front(<<>>) = <<>>. */
BI(bi_front)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Front", 0, args[0], &s))
		return EVAL_ERR;
	return ret_join(ev, at, "Front", s.e, s.n ? s.n - 1 : 0, NULL, 0, out);
}

BI(bi_cons)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Cons", 2, args[1], &s))
		return EVAL_ERR;
	return ret_join(ev, at, "Cons", &args[0], 1, s.e, s.n, out);
}

BI(bi_snoc)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Snoc", 2, args[1], &s))
		return EVAL_ERR;
	return ret_join(ev, at, "Snoc", s.e, s.n, &args[0], 1, out);
}

/* 1 when a[off..off+a.n) of b equals a elementwise, 0 when not, EVAL_ERR on incomparable. */
static int matches_at(struct ev *ev, const struct ast *at, const char *op, struct bi_seq a,
		      struct bi_seq b, uint32_t off)
{
	for (uint32_t i = 0; i < a.n; i++) {
		int r = bi_equal(ev, at, op, a.e[i], b.e[off + i]);
		if (r != 1)
			return r;
	}
	return 1;
}

/* Whether s is a prefix (suffix: at the end) of t, and for strict, s # t. */
static int affix(struct ev *ev, const struct ast *at, const char *op, spt_val *const *args,
		 bool suffix, bool strict, spt_val **out)
{
	struct bi_seq s, t;
	if (bi_seq(ev, at, op, 1, args[0], &s) || bi_seq(ev, at, op, 2, args[1], &t))
		return EVAL_ERR;
	int r = 0;
	if (s.n <= t.n && !(strict && s.n == t.n))
		r = matches_at(ev, at, op, s, t, suffix ? t.n - s.n : 0);
	return r < 0 ? EVAL_ERR : bi_ret_bool(ev, at, op, r == 1, out);
}

BI(bi_is_prefix) { (void)n; return affix(ev, at, "IsPrefix", args, false, false, out); }
BI(bi_is_strict_prefix) { (void)n; return affix(ev, at, "IsStrictPrefix", args, false, true, out); }
BI(bi_is_suffix) { (void)n; return affix(ev, at, "IsSuffix", args, true, false, out); }
BI(bi_is_strict_suffix) { (void)n; return affix(ev, at, "IsStrictSuffix", args, true, true, out); }

BI(bi_contains)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Contains", 1, args[0], &s))
		return EVAL_ERR;
	for (uint32_t i = 0; i < s.n; i++) {
		int r = bi_equal(ev, at, "Contains", s.e[i], args[1]);
		if (r != 0)
			return r < 0 ? EVAL_ERR : bi_ret_bool(ev, at, "Contains", true, out);
	}
	return bi_ret_bool(ev, at, "Contains", false, out);
}

/* TLC's override lists the set in its value order (replay/tlc_order.h). */
BI(bi_set_to_seq)
{
	(void)n;
	spt_val *const *xs;
	if (bi_tlc_elems(ev, at, "SetToSeq", 0, args[0], &xs))
		return EVAL_ERR;
	return bi_ret(ev, at, "SetToSeq", spt_seq(ev_arena(ev), xs, args[0]->n), out);
}
