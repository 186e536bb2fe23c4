/* Function builders of TLC (:>, @@, Permutations) and the Functions community module.
 * Results go through spt_fun, so 1 :> "a" is the sequence <<"a">>, as TLA+ equality wants. */
#include "builtins_internal.h"

#include <stdlib.h>

static int oom(struct ev *ev, const struct ast *at, const char *op)
{
	return ev_fail(ev, at, "out of memory in %s", op);
}

/* Pairs collected for a new function. */
struct pairs {
	spt_val **k, **v;
	size_t n;
};

static bool pairs_alloc(struct pairs *p, size_t cap)
{
	p->n = 0;
	p->k = malloc((cap ? cap : 1) * sizeof(*p->k));
	p->v = malloc((cap ? cap : 1) * sizeof(*p->v));
	return p->k && p->v;
}

/* Adds f's i-th pair to p; false when out of memory. */
static bool pairs_add(struct ev *ev, struct pairs *p, spt_val *f, uint32_t i)
{
	if (!(p->k[p->n] = bi_fun_key(ev, f, i)))
		return false;
	p->v[p->n++] = spt_fun_val(f, i);
	return true;
}

/* Builds the function from p (keys are distinct by construction) unless ok is false (out of
 * memory), and frees p. */
static int ret_pairs(struct ev *ev, const struct ast *at, const char *op, struct pairs *p, bool ok,
		     spt_val **out)
{
	bool dup = false;
	spt_val *f = ok ? spt_fun(ev_arena(ev), p->k, p->v, p->n, &dup) : NULL;
	free(p->k);
	free(p->v);
	return bi_ret(ev, at, op, f, out);
}

BI(bi_one_point)
{
	(void)n;
	bool dup = false;
	return bi_ret(ev, at, ":>", spt_fun(ev_arena(ev), &args[0], &args[1], 1, &dup), out);
}

/* f @@ g: every pair of f, and the pairs of g whose key is outside DOMAIN f. */
BI(bi_merge)
{
	(void)n;
	spt_val *f = args[0], *g = args[1];
	if (bi_fun(ev, at, "@@", 1, f) || bi_fun(ev, at, "@@", 2, g))
		return EVAL_ERR;
	struct pairs p;
	if (!pairs_alloc(&p, (size_t)f->n + g->n)) {
		free(p.k);
		free(p.v);
		return oom(ev, at, "@@");
	}
	bool ok = true;
	for (uint32_t i = 0; ok && i < f->n; i++)
		ok = pairs_add(ev, &p, f, i);
	for (uint32_t i = 0; ok && i < g->n; i++) {
		struct spt_value tmp;
		if (!spt_fun_apply(f, spt_fun_key(g, i, &tmp)))
			ok = pairs_add(ev, &p, g, i);
	}
	return ret_pairs(ev, at, "@@", &p, ok, out);
}

BI(bi_range)
{
	(void)n;
	spt_val *f = args[0];
	if (bi_fun(ev, at, "Range", 0, f))
		return EVAL_ERR;
	if (f->kind == SPT_SEQ)
		return bi_ret(ev, at, "Range", spt_set(ev_arena(ev), f->u.elems, f->n), out);
	return bi_ret(ev, at, "Range", spt_set(ev_arena(ev), f->u.fn.vals, f->n), out);
}

/* Functions: Restrict(f, S) == [x \in S |-> f[x]], so S must lie within DOMAIN f. */
BI(bi_restrict)
{
	(void)n;
	spt_val *f = args[0], *s = args[1];
	if (bi_fun(ev, at, "Restrict", 1, f) || bi_set(ev, at, "Restrict", 2, s))
		return EVAL_ERR;
	struct pairs p;
	if (!pairs_alloc(&p, s->n)) {
		free(p.k);
		free(p.v);
		return oom(ev, at, "Restrict");
	}
	for (uint32_t i = 0; i < s->n; i++) {
		spt_val *x = s->u.elems[i], *y = spt_fun_apply(f, x);
		if (!y) {
			free(p.k);
			free(p.v);
			return ev_fail(ev, at, "Restrict: %s is not in the domain of %s", ev_show(ev, x),
				       ev_show(ev, f));
		}
		p.k[p.n] = x;
		p.v[p.n++] = y;
	}
	return ret_pairs(ev, at, "Restrict", &p, true, out);
}

/* No two keys share a value: the set of values is as large as the domain. */
BI(bi_injective)
{
	(void)n;
	spt_val *f = args[0], *range;
	if (bi_fun(ev, at, "IsInjective", 0, f) || bi_range(ev, at, args, 1, &range))
		return EVAL_ERR;
	return bi_ret_bool(ev, at, "IsInjective", range->n == f->n, out);
}

/* Steps idx to the next permutation in lexicographic order; false after the last. */
static bool next_perm(uint32_t *idx, uint32_t n)
{
	uint32_t i = n;
	while (i > 1 && idx[i - 2] > idx[i - 1])
		i--;
	if (i <= 1)
		return false;
	uint32_t j = n - 1;
	while (idx[j] < idx[i - 2])
		j--;
	uint32_t t = idx[i - 2];
	idx[i - 2] = idx[j];
	idx[j] = t;
	for (uint32_t a = i - 1, b = n - 1; a < b; a++, b--) {
		t = idx[a];
		idx[a] = idx[b];
		idx[b] = t;
	}
	return true;
}

/* TLC: {f \in [S -> S] : f is a bijection}; at most 8 elements (8! = 40320 functions). */
BI(bi_permutations)
{
	(void)n;
	spt_val *s = args[0];
	if (bi_set(ev, at, "Permutations", 0, s))
		return EVAL_ERR;
	if (s->n > 8)
		return ev_fail(ev, at, "Permutations of a set of %u elements is too large to enumerate",
			       (unsigned)s->n);
	uint32_t idx[8];
	spt_val *vals[8], **fs = malloc(40320 * sizeof(*fs));
	size_t cnt = 0;
	if (!fs)
		return oom(ev, at, "Permutations");
	for (uint32_t i = 0; i < s->n; i++)
		idx[i] = i;
	do {
		bool dup = false;
		for (uint32_t i = 0; i < s->n; i++)
			vals[i] = s->u.elems[idx[i]];
		if (!(fs[cnt++] = spt_fun(ev_arena(ev), s->u.elems, vals, s->n, &dup))) {
			free(fs);
			return oom(ev, at, "Permutations");
		}
	} while (next_perm(idx, s->n));
	spt_val *r = spt_set(ev_arena(ev), fs, cnt);
	free(fs);
	return bi_ret(ev, at, "Permutations", r, out);
}
