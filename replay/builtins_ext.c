/*
 * More operators of the community modules (SequencesExt, FiniteSetsExt, Functions, BagsExt) and
 * of TLC and Bags that specs use: each as its module defines it (or as TLC's Java override
 * behaves where it differs).
 */
#include "builtins_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int oom(struct ev *ev, const struct ast *at, const char *op)
{
	return ev_fail(ev, at, "out of memory in %s", op);
}

static int ret_seq(struct ev *ev, const struct ast *at, const char *op, spt_val **e, size_t n, spt_val **out)
{
	spt_val *s = e ? spt_seq(ev_arena(ev), e, n) : NULL;
	free(e);
	return bi_ret(ev, at, op, s, out);
}

static spt_val **elems(size_t n) { return malloc((n ? n : 1) * sizeof(spt_val *)); }

/* ---- SequencesExt ---- */

/* Remove(s, e): s without every occurrence of e. */
BI(bi_remove)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "Remove", 1, args[0], &s))
		return EVAL_ERR;
	spt_val **e = elems(s.n);
	size_t k = 0;
	for (uint32_t i = 0; e && i < s.n; i++)
		if (!spt_value_eq(s.e[i], args[1]))
			e[k++] = s.e[i];
	return e ? ret_seq(ev, at, "Remove", e, k, out) : oom(ev, at, "Remove");
}

/* The sequence s without its element at index i0 (0-based, < s->n). */
int bi_seq_without(struct ev *ev, const struct ast *at, const char *op, const struct bi_seq *s, uint32_t i0,
		   spt_val **out)
{
	spt_val **e = elems(s->n);
	if (!e)
		return oom(ev, at, op);
	memcpy(e, s->e, (size_t)i0 * sizeof(*e));
	memcpy(e + i0, s->e + i0 + 1, (size_t)(s->n - i0 - 1) * sizeof(*e));
	return ret_seq(ev, at, op, e, s->n - 1, out);
}

/* RemoveFirst(s, e): s without its first occurrence of e (s itself when there is none). */
BI(bi_remove_first)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "RemoveFirst", 1, args[0], &s))
		return EVAL_ERR;
	uint32_t i = 0;
	while (i < s.n && !spt_value_eq(s.e[i], args[1]))
		i++;
	return i == s.n ? bi_ret(ev, at, "RemoveFirst", args[0], out) : bi_seq_without(ev, at, "RemoveFirst", &s, i, out);
}

/* The set of the sequences s[from..to] (copies), for the (from, to) pairs pick gives in turn
 * (it returns false when done). */
static int seq_pieces(struct ev *ev, const struct ast *at, const char *op, spt_val *seq, size_t count,
		      bool (*pick)(uint32_t len, size_t k, uint32_t *from, uint32_t *to), spt_val **out)
{
	struct bi_seq s;
	if (bi_seq(ev, at, op, 1, seq, &s))
		return EVAL_ERR;
	spt_val **set = elems(count);
	size_t m = 0;
	uint32_t from, to;
	for (size_t k = 0; set && pick(s.n, k, &from, &to); k++)
		if (!(set[m++] = spt_seq(ev_arena(ev), s.e + from, to - from)))
			m--;
	spt_val *r = set ? spt_set(ev_arena(ev), set, m) : NULL;
	free(set);
	return bi_ret(ev, at, op, r, out);
}

/* Prefixes(s): s[1..l] for l in 0..Len(s); Suffixes(s): s[l..] for l in 1..Len(s), and <<>>. */
static bool pick_prefix(uint32_t len, size_t k, uint32_t *from, uint32_t *to)
{
	*from = 0;
	*to = (uint32_t)k;
	return k <= len;
}

static bool pick_suffix(uint32_t len, size_t k, uint32_t *from, uint32_t *to)
{
	*from = (uint32_t)k;
	*to = len;
	return k <= len;
}

/* SubSeqs(s): SubSeq(s, i + 1, j) for i, j in 0..Len(s) (i >= j gives <<>>). */
static bool pick_sub(uint32_t len, size_t k, uint32_t *from, uint32_t *to)
{
	size_t side = (size_t)len + 1;
	if (k >= side * side)
		return false;
	*from = (uint32_t)(k / side);
	*to = (uint32_t)(k % side);
	if (*to < *from)
		*to = *from;
	return true;
}

BI(bi_prefixes)
{
	(void)n;
	return seq_pieces(ev, at, "Prefixes", args[0], args[0]->n + 1, pick_prefix, out);
}

BI(bi_suffixes)
{
	(void)n;
	return seq_pieces(ev, at, "Suffixes", args[0], args[0]->n + 1, pick_suffix, out);
}

BI(bi_sub_seqs)
{
	(void)n;
	return seq_pieces(ev, at, "SubSeqs", args[0], ((size_t)args[0]->n + 1) * (args[0]->n + 1), pick_sub, out);
}

/* AllSubSeqs(s): the subsequences of s by every subset of its indices, in order. */
BI(bi_all_sub_seqs)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "AllSubSeqs", 1, args[0], &s))
		return EVAL_ERR;
	if (s.n > 24)
		return ev_fail(ev, at, "AllSubSeqs of a sequence of %u elements: 2^%u subsequences is more than spectap builds", s.n,
			       s.n);
	size_t count = (size_t)1 << s.n;
	spt_val **set = elems(count), **sub = elems(s.n);
	size_t m = 0;
	for (size_t mask = 0; set && sub && mask < count; mask++) {
		size_t k = 0;
		for (uint32_t j = 0; j < s.n; j++)
			if (mask >> j & 1)
				sub[k++] = s.e[j];
		if ((set[m] = spt_seq(ev_arena(ev), sub, k)))
			m++;
	}
	spt_val *r = set && sub && m == count ? spt_set(ev_arena(ev), set, m) : NULL;
	free(set);
	free(sub);
	return bi_ret(ev, at, "AllSubSeqs", r, out);
}

/* SeqMod(a, b): a % b, with b for 0 (1-based indices that wrap). */
BI(bi_seq_mod)
{
	(void)n;
	int64_t a, b;
	if (bi_int(ev, at, "SeqMod", 1, args[0], &a) || bi_int(ev, at, "SeqMod", 2, args[1], &b))
		return EVAL_ERR;
	if (b <= 0)
		return ev_fail(ev, at, "SeqMod(%lld, %lld): the second argument of %% must be positive", (long long)a, (long long)b);
	int64_t r = ((a % b) + b) % b;
	return bi_ret_int(ev, at, "SeqMod", r == 0 ? b : r, out);
}

BI(bi_replace_all)
{
	(void)n;
	struct bi_seq s;
	if (bi_seq(ev, at, "ReplaceAll", 1, args[0], &s))
		return EVAL_ERR;
	spt_val **e = elems(s.n);
	for (uint32_t i = 0; e && i < s.n; i++)
		e[i] = spt_value_eq(s.e[i], args[1]) ? args[2] : s.e[i];
	return e ? ret_seq(ev, at, "ReplaceAll", e, s.n, out) : oom(ev, at, "ReplaceAll");
}

static int index_arg(struct ev *ev, const struct ast *at, const char *op, spt_val *v, int64_t lo, int64_t hi, int64_t *i)
{
	if (bi_int(ev, at, op, 2, v, i))
		return EVAL_ERR;
	if (*i < lo || *i > hi)
		return ev_fail(ev, at, "%s: index %lld is outside %lld..%lld", op, (long long)*i, (long long)lo, (long long)hi);
	return 0;
}

BI(bi_insert_at)
{
	(void)n;
	struct bi_seq s;
	int64_t i;
	if (bi_seq(ev, at, "InsertAt", 1, args[0], &s) || index_arg(ev, at, "InsertAt", args[1], 1, (int64_t)s.n + 1, &i))
		return EVAL_ERR;
	spt_val **e = elems((size_t)s.n + 1);
	if (!e)
		return oom(ev, at, "InsertAt");
	memcpy(e, s.e, (size_t)(i - 1) * sizeof(*e));
	e[i - 1] = args[2];
	memcpy(e + i, s.e + i - 1, (size_t)(s.n - (uint32_t)(i - 1)) * sizeof(*e));
	return ret_seq(ev, at, "InsertAt", e, (size_t)s.n + 1, out);
}

BI(bi_replace_at)
{
	(void)n;
	struct bi_seq s;
	int64_t i;
	if (bi_seq(ev, at, "ReplaceAt", 1, args[0], &s) || index_arg(ev, at, "ReplaceAt", args[1], 1, s.n, &i))
		return EVAL_ERR;
	return bi_ret(ev, at, "ReplaceAt", spt_seq_set(ev_arena(ev), args[0], (uint32_t)(i - 1), args[2]), out);
}

BI(bi_remove_at)
{
	(void)n;
	struct bi_seq s;
	int64_t i;
	if (bi_seq(ev, at, "RemoveAt", 1, args[0], &s) || index_arg(ev, at, "RemoveAt", args[1], 1, s.n, &i))
		return EVAL_ERR;
	return bi_seq_without(ev, at, "RemoveAt", &s, (uint32_t)i - 1, out);
}

/* FlattenSeq(ss): the concatenation of the sequences of ss. */
BI(bi_flatten_seq)
{
	(void)n;
	struct bi_seq ss;
	if (bi_seq(ev, at, "FlattenSeq", 1, args[0], &ss))
		return EVAL_ERR;
	size_t total = 0;
	for (uint32_t i = 0; i < ss.n; i++) {
		struct bi_seq s;
		if (bi_seq(ev, at, "FlattenSeq", 0, ss.e[i], &s))
			return EVAL_ERR;
		total += s.n;
	}
	spt_val **e = elems(total);
	if (!e)
		return oom(ev, at, "FlattenSeq");
	size_t k = 0;
	for (uint32_t i = 0; i < ss.n; i++) {
		struct bi_seq s;
		bi_as_seq(ss.e[i], &s);
		if (s.n)
			memcpy(e + k, s.e, s.n * sizeof(*e));
		k += s.n;
	}
	return ret_seq(ev, at, "FlattenSeq", e, total, out);
}

BI(bi_zip)
{
	(void)n;
	struct bi_seq s, t;
	if (bi_seq(ev, at, "Zip", 1, args[0], &s) || bi_seq(ev, at, "Zip", 2, args[1], &t))
		return EVAL_ERR;
	uint32_t m = s.n < t.n ? s.n : t.n;
	spt_val **e = elems(m);
	for (uint32_t i = 0; e && i < m; i++) {
		spt_val *pair[2] = { s.e[i], t.e[i] };
		if (!(e[i] = spt_seq(ev_arena(ev), pair, 2))) {
			free(e);
			return oom(ev, at, "Zip");
		}
	}
	return e ? ret_seq(ev, at, "Zip", e, m, out) : oom(ev, at, "Zip");
}

/* The longest common prefix of a non-empty set of sequences. */
BI(bi_longest_common_prefix)
{
	(void)n;
	spt_val *S = args[0];
	if (bi_set(ev, at, "LongestCommonPrefix", 1, S))
		return EVAL_ERR;
	if (!S->n)
		return ev_fail(ev, at, "LongestCommonPrefix of the empty set (it has no common prefixes to choose from)");
	struct bi_seq first;
	if (bi_seq(ev, at, "LongestCommonPrefix", 0, S->u.elems[0], &first))
		return EVAL_ERR;
	uint32_t len = first.n;
	for (uint32_t j = 1; j < S->n; j++) {
		struct bi_seq s;
		if (bi_seq(ev, at, "LongestCommonPrefix", 0, S->u.elems[j], &s))
			return EVAL_ERR;
		uint32_t k = 0;
		while (k < len && k < s.n && spt_value_eq(first.e[k], s.e[k]))
			k++;
		len = k;
	}
	spt_val **e = elems(len);
	if (!e)
		return oom(ev, at, "LongestCommonPrefix");
	if (len)
		memcpy(e, first.e, len * sizeof(*e));
	return ret_seq(ev, at, "LongestCommonPrefix", e, len, out);
}

/* Every sequence of length 0..max over the elements of S (SeqOf, BoundedSeq), or of length
 * exactly max (TupleOf). */
static int seqs_of(struct ev *ev, const struct ast *at, const char *op, spt_val *S, spt_val *nv, bool exact, spt_val **out)
{
	int64_t max;
	if (bi_set(ev, at, op, 1, S) || bi_int(ev, at, op, 2, nv, &max))
		return EVAL_ERR;
	if (max < 0)
		max = 0;
	uint64_t total = 0, p = 1;
	for (int64_t len = 0; len <= max; len++) {
		if (!exact || len == max)
			total += p;
		if (total > BI_MAX_ELEMS || (S->n > 1 && p > BI_MAX_ELEMS))
			return ev_fail(ev, at, "%s: more than %llu sequences to enumerate", op, (unsigned long long)BI_MAX_ELEMS);
		p *= S->n;
	}
	spt_val **all = elems(total), **cur = elems((size_t)max);
	uint32_t *idx = calloc((size_t)max + 1, sizeof(*idx));
	size_t k = 0;
	if (!all || !cur || !idx)
		goto oom;
	for (int64_t len = exact ? max : 0; len <= max; len++) {
		if (len && !S->n)
			break;
		memset(idx, 0, (size_t)(len + 1) * sizeof(*idx));
		for (;;) {
			for (int64_t i = 0; i < len; i++)
				cur[i] = S->u.elems[idx[i]];
			if (!(all[k++] = spt_seq(ev_arena(ev), cur, (size_t)len)))
				goto oom;
			int64_t i = len - 1;
			while (i >= 0 && ++idx[i] == S->n)
				idx[i--] = 0;
			if (i < 0)
				break;
		}
	}
	spt_val *r = spt_set(ev_arena(ev), all, k);
	free(all);
	free(cur);
	free(idx);
	return bi_ret(ev, at, op, r, out);
oom:
	free(all);
	free(cur);
	free(idx);
	return oom(ev, at, op);
}

BI(bi_seq_of)
{
	(void)n;
	return seqs_of(ev, at, "SeqOf", args[0], args[1], false, out);
}

BI(bi_tuple_of)
{
	(void)n;
	return seqs_of(ev, at, "TupleOf", args[0], args[1], true, out);
}

/* SetToSeqs(S): every sequence listing each element of S once (the permutations). */
BI(bi_set_to_seqs)
{
	(void)n;
	spt_val *S = args[0];
	if (bi_set(ev, at, "SetToSeqs", 1, S))
		return EVAL_ERR;
	if (S->n > 9)
		return ev_fail(ev, at, "SetToSeqs of a set of %u elements is too large to enumerate", S->n);
	uint64_t total = 1;
	for (uint32_t i = 2; i <= S->n; i++)
		total *= i;
	spt_val **all = elems(total), **cur = elems(S->n);
	uint32_t idx[9];
	if (!all || !cur) {
		free(all);
		free(cur);
		return oom(ev, at, "SetToSeqs");
	}
	for (uint32_t i = 0; i < S->n; i++)
		idx[i] = i;
	size_t k = 0;
	for (;;) {
		for (uint32_t i = 0; i < S->n; i++)
			cur[i] = S->u.elems[idx[i]];
		if (!(all[k++] = spt_seq(ev_arena(ev), cur, S->n))) {
			free(all);
			free(cur);
			return oom(ev, at, "SetToSeqs");
		}
		/* next permutation in lexicographic order of indices */
		int i = (int)S->n - 2;
		while (i >= 0 && idx[i] > idx[i + 1])
			i--;
		if (i < 0)
			break;
		int j = (int)S->n - 1;
		while (idx[j] < idx[i])
			j--;
		uint32_t t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		for (int a = i + 1, b = (int)S->n - 1; a < b; a++, b--) {
			t = idx[a];
			idx[a] = idx[b];
			idx[b] = t;
		}
	}
	spt_val *r = spt_set(ev_arena(ev), all, k);
	free(all);
	free(cur);
	return bi_ret(ev, at, "SetToSeqs", r, out);
}

/* ---- FiniteSetsExt ---- */

BI(bi_ksubset)
{
	(void)n;
	int64_t k;
	spt_val *S = args[1];
	if (bi_int(ev, at, "kSubset", 1, args[0], &k) || bi_set(ev, at, "kSubset", 2, S))
		return EVAL_ERR;
	if (k < 0 || k > S->n)
		return bi_ret(ev, at, "kSubset", spt_set(ev_arena(ev), NULL, 0), out);
	/* C(n, k) subsets, each chosen by an increasing index vector */
	uint64_t total = 1;
	for (int64_t i = 0; i < k; i++) {
		total = total * (S->n - (uint64_t)i) / (uint64_t)(i + 1);
		if (total > BI_MAX_ELEMS)
			return ev_fail(ev, at, "kSubset: more than %llu subsets to enumerate", (unsigned long long)BI_MAX_ELEMS);
	}
	spt_val **all = elems(total), **cur = elems((size_t)k);
	uint32_t *idx = malloc(((size_t)k + 1) * sizeof(*idx));
	size_t m = 0;
	if (!all || !cur || !idx)
		goto oom;
	for (int64_t i = 0; i < k; i++)
		idx[i] = (uint32_t)i;
	for (;;) {
		for (int64_t i = 0; i < k; i++)
			cur[i] = S->u.elems[idx[i]];
		if (!(all[m++] = spt_set(ev_arena(ev), cur, (size_t)k)))
			goto oom;
		int64_t i = k - 1;
		while (i >= 0 && idx[i] == S->n - (uint32_t)(k - i))
			i--;
		if (i < 0)
			break;
		idx[i]++;
		for (int64_t j = i + 1; j < k; j++)
			idx[j] = idx[j - 1] + 1;
	}
	spt_val *r = spt_set(ev_arena(ev), all, m);
	free(all);
	free(cur);
	free(idx);
	return bi_ret(ev, at, "kSubset", r, out);
oom:
	free(all);
	free(cur);
	free(idx);
	return oom(ev, at, "kSubset");
}

BI(bi_sym_diff)
{
	(void)n;
	spt_val *a = args[0], *b = args[1];
	if (bi_set(ev, at, "SymDiff", 1, a) || bi_set(ev, at, "SymDiff", 2, b))
		return EVAL_ERR;
	spt_val **e = elems((size_t)a->n + b->n);
	if (!e)
		return oom(ev, at, "SymDiff");
	size_t k = 0;
	for (uint32_t i = 0; i < a->n; i++)
		if (spt_set_find(b, a->u.elems[i]) < 0)
			e[k++] = a->u.elems[i];
	for (uint32_t i = 0; i < b->n; i++)
		if (spt_set_find(a, b->u.elems[i]) < 0)
			e[k++] = b->u.elems[i];
	spt_val *r = spt_set(ev_arena(ev), e, k);
	free(e);
	return bi_ret(ev, at, "SymDiff", r, out);
}

BI(bi_product_set)
{
	(void)n;
	if (bi_set(ev, at, "ProductSet", 1, args[0]))
		return EVAL_ERR;
	int64_t p = 1;
	for (uint32_t i = 0; i < args[0]->n; i++) {
		int64_t x;
		if (bi_int(ev, at, "ProductSet", 0, args[0]->u.elems[i], &x))
			return EVAL_ERR;
		if (__builtin_mul_overflow(p, x, &p))
			return ev_fail(ev, at, "ProductSet: the product overflows 64 bits");
	}
	return bi_ret_int(ev, at, "ProductSet", p, out);
}

/* ---- Functions ---- */

/* Inverse(f, S, T) = [t \in T |-> CHOOSE s \in S : t \in Range(f) => f[s] = t]. */
static int inverse(struct ev *ev, const struct ast *at, const char *op, spt_val *f, spt_val *S, spt_val *T, spt_val **out)
{
	if (bi_fun(ev, at, op, 1, f) || bi_set(ev, at, op, 2, S) || bi_set(ev, at, op, 3, T))
		return EVAL_ERR;
	spt_val **k = elems(T->n), **v = elems(T->n);
	int rc = 0;
	if (!k || !v) {
		rc = oom(ev, at, op);
		goto out;
	}
	for (uint32_t i = 0; i < T->n; i++) {
		spt_val *t = T->u.elems[i];
		bool in_range = false;
		for (uint32_t j = 0; j < f->n && !in_range; j++)
			in_range = spt_value_eq(spt_fun_val(f, j), t);
		spt_val *chosen = NULL;
		for (uint32_t j = 0; j < S->n && !chosen; j++) {
			spt_val *fs = in_range ? spt_fun_apply(f, S->u.elems[j]) : NULL;
			if (in_range && !fs) {
				rc = ev_fail(ev, at, "%s: %s is not in the domain of %s", op, ev_show(ev, S->u.elems[j]), ev_show(ev, f));
				goto out;
			}
			if (!in_range || spt_value_eq(fs, t))
				chosen = S->u.elems[j];
		}
		if (!chosen) {
			rc = ev_fail(ev, at, "%s: no element of %s is mapped to %s (CHOOSE found nothing)", op, ev_show(ev, S),
				     ev_show(ev, t));
			goto out;
		}
		k[i] = t;
		v[i] = chosen;
	}
	bool dup = false;
	rc = bi_ret(ev, at, op, spt_fun(ev_arena(ev), k, v, T->n, &dup), out);
out:
	free(k);
	free(v);
	return rc;
}

BI(bi_inverse)
{
	(void)n;
	return inverse(ev, at, "Inverse", args[0], args[1], args[2], out);
}

BI(bi_anti_function)
{
	(void)n;
	spt_val *f = args[0];
	if (bi_fun(ev, at, "AntiFunction", 1, f))
		return EVAL_ERR;
	spt_val **d = elems(f->n), **r = elems(f->n);
	if (!d || !r) {
		free(d);
		free(r);
		return oom(ev, at, "AntiFunction");
	}
	for (uint32_t i = 0; i < f->n; i++) {
		d[i] = bi_fun_key(ev, f, i);
		r[i] = spt_fun_val(f, i);
	}
	spt_val *D = spt_set(ev_arena(ev), d, f->n), *R = spt_set(ev_arena(ev), r, f->n);
	free(d);
	free(r);
	if (!D || !R)
		return oom(ev, at, "AntiFunction");
	return inverse(ev, at, "AntiFunction", f, D, R, out);
}

static int sizes(struct ev *ev, const struct ast *at, const char *op, spt_val *const *args, uint32_t *s, uint32_t *t)
{
	if (bi_set(ev, at, op, 1, args[0]) || bi_set(ev, at, op, 2, args[1]))
		return EVAL_ERR;
	*s = args[0]->n;
	*t = args[1]->n;
	return 0;
}

BI(bi_exists_injection)
{
	(void)n;
	uint32_t s, t;
	return sizes(ev, at, "ExistsInjection", args, &s, &t) ? EVAL_ERR : bi_ret_bool(ev, at, "ExistsInjection", s <= t, out);
}

BI(bi_exists_surjection)
{
	(void)n;
	uint32_t s, t;
	if (sizes(ev, at, "ExistsSurjection", args, &s, &t))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "ExistsSurjection", (s == 0 && t == 0) || (t > 0 && t <= s), out);
}

BI(bi_exists_bijection)
{
	(void)n;
	uint32_t s, t;
	return sizes(ev, at, "ExistsBijection", args, &s, &t) ? EVAL_ERR : bi_ret_bool(ev, at, "ExistsBijection", s == t, out);
}

/* ---- Bags and BagsExt ---- */

static int bag_update(struct ev *ev, const struct ast *at, const char *op, spt_val *b, spt_val *x, int how, spt_val **out)
{
	if (bi_fun(ev, at, op, 1, b))
		return EVAL_ERR;
	long i = spt_fun_index(b, x);
	if (i >= 0 && spt_fun_val(b, (uint32_t)i)->kind != SPT_INT)
		return ev_fail(ev, at, "%s: %s is not a bag", op, ev_show(ev, b));
	int64_t c = i >= 0 ? spt_fun_val(b, (uint32_t)i)->u.i : 0;
	int64_t want = how > 0 ? c + 1 : how == 0 ? 0 : c - 1;
	if (i >= 0 && want > 0)
		return bi_ret(ev, at, op, spt_fun_set(ev_arena(ev), b, (uint32_t)i, spt_int(ev_arena(ev), want)), out);
	uint32_t m = b->n + (i < 0 ? 1 : 0);
	spt_val **k = elems(m), **v = elems(m);
	if (!k || !v) {
		free(k);
		free(v);
		return oom(ev, at, op);
	}
	uint32_t j = 0;
	for (uint32_t p = 0; p < b->n; p++) {
		if ((long)p == i)
			continue;
		k[j] = bi_fun_key(ev, b, p);
		v[j++] = spt_fun_val(b, p);
	}
	if (i < 0 && want > 0) {
		k[j] = x;
		v[j++] = spt_int(ev_arena(ev), want);
	}
	bool dup = false;
	spt_val *r = spt_fun(ev_arena(ev), k, v, j, &dup);
	free(k);
	free(v);
	return bi_ret(ev, at, op, r, out);
}

BI(bi_bag_add)
{
	(void)n;
	return bag_update(ev, at, "BagAdd", args[0], args[1], 1, out);
}

BI(bi_bag_remove)
{
	(void)n;
	return bag_update(ev, at, "BagRemove", args[0], args[1], -1, out);
}

BI(bi_bag_remove_all)
{
	(void)n;
	return bag_update(ev, at, "BagRemoveAll", args[0], args[1], 0, out);
}

/* BagUnion(S): the counts of every bag of S added. */
BI(bi_bag_union)
{
	(void)n;
	if (bi_set(ev, at, "BagUnion", 1, args[0]))
		return EVAL_ERR;
	spt_val *acc = spt_empty_fun(ev_arena(ev), SPT_FUN);
	for (uint32_t i = 0; acc && i < args[0]->n; i++) {
		spt_val *pair[2] = { acc, args[0]->u.elems[i] };
		if (bi_bag_plus(ev, at, pair, 2, &acc))
			return EVAL_ERR;
	}
	return bi_ret(ev, at, "BagUnion", acc, out);
}

/* SubBag(B): every bag B2 with B2 \sqsubseteq B. */
BI(bi_sub_bag_set)
{
	(void)n;
	spt_val *b = args[0];
	if (bi_fun(ev, at, "SubBag", 1, b))
		return EVAL_ERR;
	uint64_t total = 1;
	for (uint32_t i = 0; i < b->n; i++) {
		spt_val *c = spt_fun_val(b, i);
		if (c->kind != SPT_INT || c->u.i < 1)
			return ev_fail(ev, at, "SubBag: %s is not a bag", ev_show(ev, b));
		total *= (uint64_t)c->u.i + 1;
		if (total > BI_MAX_ELEMS)
			return ev_fail(ev, at, "SubBag: more than %llu sub-bags to enumerate", (unsigned long long)BI_MAX_ELEMS);
	}
	spt_val **all = elems(total), **k = elems(b->n), **v = elems(b->n);
	int64_t *cnt = calloc(b->n + 1, sizeof(*cnt));
	size_t m = 0;
	if (!all || !k || !v || !cnt)
		goto oom;
	for (;;) {
		uint32_t j = 0;
		for (uint32_t i = 0; i < b->n; i++)
			if (cnt[i]) {
				k[j] = bi_fun_key(ev, b, i);
				v[j++] = spt_int(ev_arena(ev), cnt[i]);
			}
		bool dup = false;
		if (!(all[m++] = spt_fun(ev_arena(ev), k, v, j, &dup)))
			goto oom;
		uint32_t i = 0;
		while (i < b->n && ++cnt[i] > spt_fun_val(b, i)->u.i)
			cnt[i++] = 0;
		if (i == b->n)
			break;
	}
	spt_val *r = spt_set(ev_arena(ev), all, m);
	free(all);
	free(k);
	free(v);
	free(cnt);
	return bi_ret(ev, at, "SubBag", r, out);
oom:
	free(all);
	free(k);
	free(v);
	free(cnt);
	return oom(ev, at, "SubBag");
}

/* ---- TLC ---- */

/* RandomElement(S): TLC picks at random; here a fixed-seed generator, so that runs repeat. */
BI(bi_random_element)
{
	(void)n;
	static _Thread_local uint64_t state = 0x853c49e6748fea9bull;
	if (bi_set(ev, at, "RandomElement", 1, args[0]))
		return EVAL_ERR;
	if (!args[0]->n)
		return ev_fail(ev, at, "RandomElement of the empty set");
	state = state * 6364136223846793005ull + 1442695040888963407ull;
	*out = args[0]->u.elems[(state >> 33) % args[0]->n];
	return 0;
}

BI(bi_java_time)
{
	(void)args;
	(void)n;
	return bi_ret_int(ev, at, "JavaTime", (int64_t)time(NULL), out);
}
