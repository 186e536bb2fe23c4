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
	g->mv_hash = spt_arena_alloc(a, w * sizeof(*g->mv_hash));
	g->to_hash = spt_arena_alloc(a, (size_t)s.n * w * sizeof(*g->to_hash));
	if (!g->mv_hash || !g->to_hash)
		goto oom;
	for (uint32_t i = 0; i < g->n_mv; i++)
		g->mv_hash[i] = spt_value_hash(g->mv[i]);
	for (size_t k = 0; k < (size_t)s.n * g->n_mv; k++)
		g->to_hash[k] = spt_value_hash(g->mv[g->perms[k]]);
	/* Classes: the orbits of the model values; the group is full when its size is the product of
	 * the classes' factorials. */
	if (!(g->cls = spt_arena_alloc(a, w * sizeof(*g->cls))))
		goto oom;
	for (uint32_t i = 0; i < g->n_mv; i++)
		g->cls[i] = UINT32_MAX;
	double full = 1;
	for (uint32_t i = 0; i < g->n_mv; i++) {
		if (g->cls[i] != UINT32_MAX)
			continue;
		uint32_t size = 0;
		for (uint32_t j = i; j < g->n_mv; j++) {
			bool in_orbit = false;
			for (uint32_t r = 0; r < s.n && !in_orbit; r++)
				in_orbit = g->perms[(size_t)r * w + i] == j;
			if (in_orbit) {
				g->cls[j] = g->n_cls;
				size++;
			}
		}
		for (uint32_t k = 2; k <= size; k++)
			full *= k;
		g->n_cls++;
	}
	g->full = full == (double)s.n && !getenv("SPECTAP_SYM_ALL");
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

/* ---- fingerprints of orbits ---- */


static uint64_t chain(spt_val *const *vals, uint32_t n, const uint64_t *from, const uint64_t *to, uint32_t m)
{
	uint64_t h = 0x243f6a8885a308d3ull;
	for (uint32_t i = 0; i < n; i++)
		h = fp_mix(h + spt_hash_renamed(vals[i], from, to, m) + i);
	return h;
}

static bool next_perm(uint32_t *a, uint32_t n)
{
	if (n < 2)
		return false;
	uint32_t i = n - 1;
	while (i > 0 && a[i - 1] >= a[i])
		i--;
	if (i == 0) {
		/* the last ordering: back to the first (ascending), as an odometer's wheel */
		for (uint32_t x = 0, y = n - 1; x < y; x++, y--) {
			uint32_t t = a[x];
			a[x] = a[y];
			a[y] = t;
		}
		return false;
	}
	uint32_t j = n - 1;
	while (a[j] <= a[i - 1])
		j--;
	uint32_t t = a[i - 1];
	a[i - 1] = a[j];
	a[j] = t;
	for (uint32_t x = i, y = n - 1; x < y; x++, y--) {
		t = a[x];
		a[x] = a[y];
		a[y] = t;
	}
	return true;
}

#define MAX_SYM_MV 64

uint64_t sym_fingerprint(const struct sym_group *g, spt_val *const *vals, uint32_t n)
{
	uint32_t m = g->n_mv;
	uint64_t best = UINT64_MAX;
	if (!g->full || m > MAX_SYM_MV) {
		for (uint32_t p = 0; p < g->n_perms; p++) {
			uint64_t h = chain(vals, n, g->mv_hash, &g->to_hash[(size_t)p * m], m);
			if (h < best)
				best = h;
		}
		return best;
	}
	/* Each value's part in the state, the others of every class anonymous: equal for values
	 * a permutation of the orbit exchanges, so ordering by it commutes with the group. */
	uint64_t to[MAX_SYM_MV], inv[MAX_SYM_MV];
	for (uint32_t i = 0; i < m; i++) {
		for (uint32_t j = 0; j < m; j++)
			to[j] = j == i ? 0x6d61726b6d61726bull : fp_mix(0x616e6f6e + g->cls[j]);
		inv[i] = chain(vals, n, g->mv_hash, to, m);
	}
	/* order: the values sorted by (class, part); slot: the index each position renames to. */
	uint32_t order[MAX_SYM_MV], slot[MAX_SYM_MV];
	for (uint32_t i = 0; i < m; i++) {
		uint32_t k = i;
		while (k > 0 && (g->cls[order[k - 1]] > g->cls[i] ||
				 (g->cls[order[k - 1]] == g->cls[i] && inv[order[k - 1]] > inv[i]))) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
	for (uint32_t c = 0, k = 0; c < g->n_cls; c++)
		for (uint32_t j = 0; j < m; j++)
			if (g->cls[j] == c)
				slot[k++] = j;
	/* Ties: runs of equal parts, every ordering of each tried (their product, bounded). */
	uint32_t run_start[MAX_SYM_MV], n_runs = 0;
	double cands = 1;
	for (uint32_t k = 0; k < m; k++) {
		bool same = k > 0 && g->cls[order[k]] == g->cls[order[k - 1]] && inv[order[k]] == inv[order[k - 1]];
		if (!same)
			run_start[n_runs++] = k;
		else
			cands *= (double)(k - run_start[n_runs - 1] + 1);
	}
	if (cands > (double)g->n_perms) {
		for (uint32_t p = 0; p < g->n_perms; p++) {
			uint64_t h = chain(vals, n, g->mv_hash, &g->to_hash[(size_t)p * m], m);
			if (h < best)
				best = h;
		}
		return best;
	}
	/* Each run's members are sorted by index: next_perm walks all their orderings. */
	for (uint32_t r = 0; r < n_runs; r++) {
		uint32_t a = run_start[r], b = r + 1 < n_runs ? run_start[r + 1] : m;
		for (uint32_t x = a + 1; x < b; x++)
			for (uint32_t y = x; y > a && order[y - 1] > order[y]; y--) {
				uint32_t t = order[y];
				order[y] = order[y - 1];
				order[y - 1] = t;
			}
	}
	for (;;) {
		for (uint32_t k = 0; k < m; k++)
			to[order[k]] = g->mv_hash[slot[k]];
		uint64_t h = chain(vals, n, g->mv_hash, to, m);
		if (h < best)
			best = h;
		uint32_t r = 0;
		for (; r < n_runs; r++) {
			uint32_t a = run_start[r], b = r + 1 < n_runs ? run_start[r + 1] : m;
			if (next_perm(order + a, b - a))
				break; /* this run moved on; the runs before it were reset to sorted */
		}
		if (r == n_runs)
			break;
	}
	return best;
}
