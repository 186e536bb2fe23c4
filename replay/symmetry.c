/* Symmetry groups of model-value permutations, and values permuted. */
#include <stdlib.h>
#include <string.h>

#include "symmetry.h"

static int mv_index(const struct sym_group *g, spt_val *x)
{
	uint32_t lo = 0, hi = g->n_mv;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		int c = spt_value_cmp(g->mv[mid], x);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int add_mv(struct spt_arena *a, struct sym_group *g, spt_val *x, uint32_t *cap)
{
	if (mv_index(g, x) >= 0)
		return 0;
	if (g->n_mv == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 16;
		spt_val **n = spt_arena_alloc(a, nc * sizeof(*n));
		if (!n)
			return -1;
		if (g->n_mv)
			memcpy(n, g->mv, g->n_mv * sizeof(*n));
		g->mv = n;
		*cap = nc;
	}
	uint32_t i = g->n_mv;
	while (i > 0 && spt_value_cmp(g->mv[i - 1], x) > 0) {
		g->mv[i] = g->mv[i - 1];
		i--;
	}
	g->mv[i] = x;
	g->n_mv++;
	return 0;
}

/* A set of permutation rows with a hash index, for the closure. */
struct rows {
	uint32_t *r, n, cap, width;
	uint32_t *index, index_cap; /* slot -> row + 1 */
};

static uint64_t row_hash(const uint32_t *p, uint32_t w)
{
	uint64_t h = 1469598103934665603ull;
	for (uint32_t i = 0; i < w; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static int rows_add(struct rows *s, const uint32_t *p)
{
	if ((s->n + 1) * 2 > s->index_cap) {
		uint32_t nc = s->index_cap ? s->index_cap * 2 : 64;
		uint32_t *ni = calloc(nc, sizeof(*ni));
		if (!ni)
			return -1;
		for (uint32_t i = 0; i < s->n; i++) {
			uint64_t h = row_hash(&s->r[(size_t)i * s->width], s->width) & (nc - 1);
			while (ni[h])
				h = (h + 1) & (nc - 1);
			ni[h] = i + 1;
		}
		free(s->index);
		s->index = ni;
		s->index_cap = nc;
	}
	uint64_t h = row_hash(p, s->width) & (s->index_cap - 1);
	for (; s->index[h]; h = (h + 1) & (s->index_cap - 1))
		if (!memcmp(&s->r[(size_t)(s->index[h] - 1) * s->width], p, s->width * sizeof(*p)))
			return 0;
	if (s->n == s->cap) {
		uint32_t nc = s->cap ? s->cap * 2 : 64;
		uint32_t *nr = realloc(s->r, (size_t)nc * s->width * sizeof(*nr));
		if (!nr)
			return -1;
		s->r = nr;
		s->cap = nc;
	}
	memcpy(&s->r[(size_t)s->n * s->width], p, s->width * sizeof(*p));
	s->index[h] = ++s->n;
	return 1;
}

#define MAX_GROUP 1000000

int sym_group_build(struct interp *in, const struct opdef *d, struct spt_arena *a, struct sym_group *g)
{
	memset(g, 0, sizeof(*g));
	spt_val *set;
	if (eval_call(in, d, NULL, 0, &set))
		return EVAL_ERR;
	const struct ast *at = d->body;
	if (set->kind != SPT_SET)
		return ev_fail(&in->ev, at, "the symmetry set %s is %s, not a set of permutations", d->name, ev_show(&in->ev, set));
	uint32_t cap = 0;
	for (uint32_t i = 0; i < set->n; i++) {
		spt_val *f = set->u.elems[i];
		if (!spt_is_fun(f) || f->kind == SPT_SEQ || f->kind == SPT_REC)
			return ev_fail(&in->ev, at, "symmetry function must have model values as domain and range: %s is not",
				       ev_show(&in->ev, f));
		for (uint32_t k = 0; k < f->n; k++) {
			if (f->u.fn.keys[k]->kind != SPT_MODEL || f->u.fn.vals[k]->kind != SPT_MODEL)
				return ev_fail(&in->ev, at, "symmetry function must have model values as domain and range: %s is not",
					       ev_show(&in->ev, f));
			if (add_mv(a, g, f->u.fn.keys[k], &cap) || add_mv(a, g, f->u.fn.vals[k], &cap))
				return ev_fail(&in->ev, at, "out of memory");
		}
	}
	uint32_t w = g->n_mv ? g->n_mv : 1;
	struct rows s = { .width = w };
	uint32_t *p = malloc(w * sizeof(*p)), *gens = malloc((size_t)(set->n + 1) * w * sizeof(*gens));
	int rc = 0;
	if (!p || !gens)
		goto oom;
	for (uint32_t i = 0; i < w; i++)
		p[i] = i;
	if (rows_add(&s, p) < 0)
		goto oom;
	for (uint32_t i = 0; i < set->n; i++) {
		spt_val *f = set->u.elems[i];
		uint32_t *row = &gens[(size_t)i * w];
		for (uint32_t k = 0; k < w; k++)
			row[k] = k;
		for (uint32_t k = 0; k < f->n; k++)
			row[mv_index(g, f->u.fn.keys[k])] = (uint32_t)mv_index(g, f->u.fn.vals[k]);
	}
	/* Closure: every row composed with every generator, until nothing new appears. */
	for (uint32_t i = 0; i < s.n; i++) {
		for (uint32_t j = 0; j < set->n; j++) {
			const uint32_t *gen = &gens[(size_t)j * w];
			for (uint32_t k = 0; k < w; k++)
				p[k] = gen[s.r[(size_t)i * w + k]];
			int added = rows_add(&s, p);
			if (added < 0)
				goto oom;
			if (s.n > MAX_GROUP) {
				rc = ev_fail(&in->ev, at, "the symmetry group of %s has more than %d permutations", d->name, MAX_GROUP);
				goto out;
			}
		}
	}
	g->n_perms = s.n;
	if (!(g->perms = spt_arena_memdup(a, s.r, (size_t)s.n * w * sizeof(*s.r))))
		goto oom;
	goto out;
oom:
	rc = ev_fail(&in->ev, at, "out of memory building the symmetry group of %s", d->name);
out:
	free(p);
	free(gens);
	free(s.r);
	free(s.index);
	return rc;
}

spt_val *sym_apply(struct spt_arena *a, const struct sym_group *g, uint32_t p, spt_val *v)
{
	const uint32_t *row = &g->perms[(size_t)p * g->n_mv];
	switch (v->kind) {
	case SPT_MODEL: {
		int i = mv_index(g, v);
		return i < 0 ? v : g->mv[row[i]];
	}
	case SPT_SET:
	case SPT_SEQ: {
		if (!v->n)
			return v;
		spt_val **e = spt_arena_alloc(a, v->n * sizeof(*e));
		if (!e)
			return NULL;
		bool same = true;
		for (uint32_t i = 0; i < v->n; i++) {
			if (!(e[i] = sym_apply(a, g, p, v->u.elems[i])))
				return NULL;
			same &= e[i] == v->u.elems[i];
		}
		if (same)
			return v;
		return v->kind == SPT_SET ? spt_set(a, e, v->n) : spt_seq_adopt(a, e, v->n);
	}
	case SPT_REC:
	case SPT_FUN: {
		if (!v->n)
			return v;
		spt_val **k = spt_arena_alloc(a, v->n * sizeof(*k)), **x = spt_arena_alloc(a, v->n * sizeof(*x));
		if (!k || !x)
			return NULL;
		bool same = true;
		for (uint32_t i = 0; i < v->n; i++) {
			k[i] = v->kind == SPT_REC ? v->u.fn.keys[i] : sym_apply(a, g, p, v->u.fn.keys[i]);
			x[i] = sym_apply(a, g, p, v->u.fn.vals[i]);
			if (!k[i] || !x[i])
				return NULL;
			same &= k[i] == v->u.fn.keys[i] && x[i] == v->u.fn.vals[i];
		}
		if (same)
			return v;
		bool dup = false;
		return spt_fun(a, k, x, v->n, &dup);
	}
	default:
		return v;
	}
}
