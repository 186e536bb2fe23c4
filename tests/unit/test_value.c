/* Property and hand-checked tests of the value model (lib/value.c, lib/value_print.c, arena). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gen_value.h"
#include "spectap/arena.h"
#include "spectap/value.h"

#define NVALUES 3000
#define DEPTH 4

static int sign(int x) { return (x > 0) - (x < 0); }

/* Every value reachable from v is in canonical form (sets strictly sorted, keys strictly
 * sorted, no SPT_FUN/SPT_REC whose domain is 1..n, record keys all strings). */
static bool canonical(spt_val *v)
{
	switch (v->kind) {
	case SPT_BOOL:
	case SPT_INT:
		return true;
	case SPT_STR:
	case SPT_MODEL:
		return v->u.s[v->n] == '\0' && memchr(v->u.s, 0, v->n) == NULL;
	case SPT_SET:
	case SPT_SEQ:
		for (uint32_t i = 0; i < v->n; i++) {
			if (!canonical(v->u.elems[i]))
				return false;
			if (v->kind == SPT_SET && i && spt_value_cmp(v->u.elems[i - 1], v->u.elems[i]) >= 0)
				return false;
		}
		return true;
	default: {
		bool all_str = true, is_seq = v->n > 0;
		for (uint32_t i = 0; i < v->n; i++) {
			spt_val *k = v->u.fn.keys[i];
			if (!canonical(k) || !canonical(v->u.fn.vals[i]))
				return false;
			if (i && spt_value_cmp(v->u.fn.keys[i - 1], k) >= 0)
				return false;
			if (k->kind != SPT_STR)
				all_str = false;
			if (k->kind != SPT_INT || k->u.i != (int64_t)i + 1)
				is_seq = false;
		}
		if (is_seq)
			return false;
		if (v->n && (v->kind == SPT_REC) != all_str)
			return false;
		return true;
	}
	}
}

static spt_val **gen_many(struct spt_arena *a, uint64_t seed, size_t n)
{
	struct rng r = { seed };
	spt_val **v = malloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = gen_value(a, &r, DEPTH);
	return v;
}

static void test_generator_sane(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val **v = gen_many(&a, 1, NVALUES);
	unsigned kinds[SPT_FUN + 1] = { 0 }, empties[SPT_FUN + 1] = { 0 };
	bool all = true;
	for (size_t i = 0; i < NVALUES; i++) {
		if (!v[i]) {
			all = false;
			continue;
		}
		kinds[v[i]->kind]++;
		if (spt_is_fun(v[i]) && v[i]->n == 0)
			empties[v[i]->kind]++;
		if (!canonical(v[i])) {
			CHECKF(0, "value %zu is not canonical", i);
			spt_value_print(stderr, v[i]);
			fputc('\n', stderr);
		}
	}
	CHECK(all);
	for (int k = SPT_BOOL; k <= SPT_FUN; k++)
		CHECKF(kinds[k] > 20, "kind %d generated %u times", k, kinds[k]);
	for (int k = SPT_SEQ; k <= SPT_FUN; k++)
		CHECKF(empties[k] > 5, "empty kind %d generated %u times", k, empties[k]);
	free(v);
	spt_arena_fini(&a);
}

/* Reflexive, also on a deep clone whose source arena is gone; clone keeps hash and kind. */
static void test_reflexive_and_clone(void)
{
	struct spt_arena a, b, c;
	spt_arena_init(&a);
	spt_arena_init(&b);
	spt_arena_init(&c);
	spt_val **v = gen_many(&a, 2, NVALUES);
	spt_val **w = malloc(NVALUES * sizeof(*w));
	for (size_t i = 0; i < NVALUES; i++)
		w[i] = spt_value_clone(&b, v[i]);
	/* Clone the clones into c and drop b: nothing may point back into b. */
	for (size_t i = 0; i < NVALUES; i++)
		w[i] = spt_value_clone(&c, w[i]);
	spt_arena_fini(&b);
	unsigned bad = 0;
	for (size_t i = 0; i < NVALUES; i++) {
		if (!w[i]) {
			bad++;
			continue;
		}
		if (spt_value_cmp(v[i], v[i]) != 0 || !spt_value_eq(v[i], v[i]) ||
		    spt_value_cmp(v[i], w[i]) != 0 || spt_value_cmp(w[i], v[i]) != 0 ||
		    !spt_value_eq(v[i], w[i]) || spt_value_hash(v[i]) != spt_value_hash(w[i]) ||
		    v[i]->kind != w[i]->kind || v[i]->hint != w[i]->hint || v[i]->n != w[i]->n ||
		    !canonical(w[i]))
			bad++;
	}
	CHECKF(bad == 0, "%u of %d values not equal to their clone", bad, NVALUES);
	free(v);
	free(w);
	spt_arena_fini(&a);
	spt_arena_fini(&c);
}

/* Antisymmetry, eq <=> cmp == 0, eq => same hash, over many pairs (many of them equal). */
static void test_pairs(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val **v = gen_many(&a, 3, NVALUES);
	struct rng r = { 33 };
	unsigned bad_anti = 0, bad_eq = 0, bad_hash = 0, equal_pairs = 0;
	for (size_t t = 0; t < 200000; t++) {
		/* Bias towards small indices of scalars pools: pick neighbours sometimes. */
		size_t i = rng_below(&r, NVALUES), j = rng_below(&r, NVALUES);
		spt_val *x = v[i], *y = v[j];
		int c1 = spt_value_cmp(x, y), c2 = spt_value_cmp(y, x);
		bool eq = spt_value_eq(x, y);
		if (c1 < -1 || c1 > 1 || sign(c1) != -sign(c2))
			bad_anti++;
		if (eq != (c1 == 0) || eq != spt_value_eq(y, x))
			bad_eq++;
		if (eq && spt_value_hash(x) != spt_value_hash(y))
			bad_hash++;
		equal_pairs += eq && x != y;
	}
	CHECKF(bad_anti == 0, "%u antisymmetry violations", bad_anti);
	CHECKF(bad_eq == 0, "%u eq/cmp disagreements", bad_eq);
	CHECKF(bad_hash == 0, "%u equal pairs with different hashes", bad_hash);
	CHECKF(equal_pairs > 100, "only %u distinct-but-equal pairs: generator too spread out",
	       equal_pairs);
	free(v);
	spt_arena_fini(&a);
}

static int cmp_ptr(const void *a, const void *b)
{
	return spt_value_cmp(*(spt_val *const *)a, *(spt_val *const *)b);
}

/* Transitivity: after sorting, every pair i < j is in order; plus random triples. */
static void test_transitive(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	enum { N = 700 };
	spt_val **v = gen_many(&a, 4, N);
	qsort(v, N, sizeof(*v), cmp_ptr);
	unsigned bad = 0;
	for (size_t i = 0; i < N; i++)
		for (size_t j = i + 1; j < N; j++)
			if (spt_value_cmp(v[i], v[j]) > 0 || spt_value_cmp(v[j], v[i]) < 0)
				bad++;
	CHECKF(bad == 0, "%u pairs out of order after sorting", bad);

	struct rng r = { 44 };
	unsigned bad3 = 0;
	for (size_t t = 0; t < 100000; t++) {
		spt_val *x = v[rng_below(&r, N)], *y = v[rng_below(&r, N)], *z = v[rng_below(&r, N)];
		int xy = spt_value_cmp(x, y), yz = spt_value_cmp(y, z), xz = spt_value_cmp(x, z);
		if (xy <= 0 && yz <= 0 && xz > 0)
			bad3++;
		if (xy < 0 && yz <= 0 && xz >= 0)
			bad3++;
		if (xy == 0 && yz == 0 && xz != 0)
			bad3++;
	}
	CHECKF(bad3 == 0, "%u intransitive triples", bad3);
	free(v);
	spt_arena_fini(&a);
}

/* A function with keys 1..n given in any order is the sequence of its values. */
static void test_canon_seq(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	struct rng r = { 5 };
	unsigned bad = 0;
	for (int t = 0; t < 500; t++) {
		size_t n = rng_below(&r, 9);
		spt_val *k[8], *x[8], *inorder[8];
		for (size_t i = 0; i < n; i++) {
			k[i] = spt_int(&a, (int64_t)i + 1);
			x[i] = inorder[i] = gen_value(&a, &r, 2);
		}
		shuffle2(&r, k, x, n);
		bool dup = true;
		spt_val *f = spt_fun(&a, k, x, n, &dup);
		spt_val *s = spt_seq(&a, inorder, n);
		if (!f || dup || !s || !spt_value_eq(f, s) || spt_value_hash(f) != spt_value_hash(s) ||
		    (n && f->kind != SPT_SEQ) || f->n != n) {
			bad++;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			struct spt_value tmp;
			spt_val *key = spt_fun_key(f, (uint32_t)i, &tmp);
			if (key->kind != SPT_INT || key->u.i != (int64_t)i + 1 ||
			    spt_fun_val(f, (uint32_t)i) != inorder[i] ||
			    spt_value_hash(key) != spt_value_hash(spt_int(&a, (int64_t)i + 1)))
				bad++;
		}
	}
	CHECKF(bad == 0, "%u keys-1..n functions not equal to their sequence", bad);

	/* Not a sequence: a gap, a start at 0 or 2. */
	spt_val *one = spt_int(&a, 1), *two = spt_int(&a, 2), *three = spt_int(&a, 3),
		*zero = spt_int(&a, 0);
	spt_val *ks[][2] = { { one, three }, { zero, one }, { two, three } };
	spt_val *vs[2] = { spt_cstr(&a, "a"), spt_cstr(&a, "b") };
	for (size_t i = 0; i < 3; i++) {
		spt_val *f = spt_fun(&a, ks[i], vs, 2, NULL);
		CHECK(f && f->kind == SPT_FUN && !spt_value_eq(f, spt_seq(&a, vs, 2)));
	}
	spt_arena_fini(&a);
}

/* A function whose keys are all strings is the record of those fields. */
static void test_canon_rec(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	struct rng r = { 6 };
	unsigned bad = 0;
	for (int t = 0; t < 500; t++) {
		size_t n = 1 + rng_below(&r, 8);
		spt_val *k[8], *x[8];
		/* Distinct NUL-free names from the pool. */
		n = gen_keys(&a, &r, 0, k, n, 0);
		const char *names[8];
		for (size_t i = 0; i < n; i++) {
			names[i] = k[i]->u.s;
			x[i] = gen_value(&a, &r, 2);
		}
		spt_val *rec = spt_rec(&a, names, x, n);
		/* Same fields given in another order, with keys built afresh. */
		spt_val *k2[8], *x2[8];
		for (size_t i = 0; i < n; i++) {
			k2[i] = spt_str(&a, k[i]->u.s, k[i]->n);
			x2[i] = x[i];
		}
		shuffle2(&r, k2, x2, n);
		bool dup = true;
		spt_val *f = spt_fun(&a, k2, x2, n, &dup);
		if (!rec || !f || dup || f->kind != SPT_REC || rec->kind != SPT_REC ||
		    !spt_value_eq(rec, f) || spt_value_hash(rec) != spt_value_hash(f)) {
			bad++;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (spt_rec_get(f, names[i]) != x[i] || spt_rec_get(rec, names[i]) != x[i])
				bad++;
	}
	CHECKF(bad == 0, "%u string-key functions not equal to their record", bad);

	/* One non-string key makes it a plain function. */
	spt_val *k[2] = { spt_cstr(&a, "a"), spt_int(&a, 7) }, *x[2] = { k[1], k[0] };
	spt_val *f = spt_fun(&a, k, x, 2, NULL);
	CHECK(f && f->kind == SPT_FUN && spt_rec_get(f, "a") == NULL);
	CHECK(f && spt_fun_apply(f, k[0]) == x[0] && spt_fun_apply(f, k[1]) == x[1]);
	/* A key that is a model value is not a string. */
	spt_val *mk[1] = { spt_model(&a, "a") };
	f = spt_fun(&a, mk, x, 1, NULL);
	CHECK(f && f->kind == SPT_FUN);
	spt_arena_fini(&a);
}

/* <<>> = [] = the empty map, whichever way it was built. */
static void test_empty_functions(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	bool dup = true;
	spt_val *e[] = {
		spt_empty_fun(&a, SPT_SEQ), spt_empty_fun(&a, SPT_REC),  spt_empty_fun(&a, SPT_FUN),
		spt_empty_fun(&a, SPT_INT), spt_seq(&a, NULL, 0),       spt_rec(&a, NULL, NULL, 0),
		spt_fun(&a, NULL, NULL, 0, &dup),
	};
	size_t n = sizeof(e) / sizeof(e[0]);
	CHECK(!dup);
	for (size_t i = 0; i < n; i++)
		CHECK(e[i] && spt_is_fun(e[i]) && e[i]->n == 0);
	CHECK(e[0]->kind == SPT_SEQ && e[1]->kind == SPT_REC && e[2]->kind == SPT_FUN);
	CHECK(e[3]->kind == SPT_FUN && e[4]->kind == SPT_SEQ && e[5]->kind == SPT_REC);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			CHECKF(spt_value_eq(e[i], e[j]) && spt_value_cmp(e[i], e[j]) == 0 &&
				       spt_value_hash(e[i]) == spt_value_hash(e[j]),
			       "empty functions %zu and %zu differ", i, j);
		}
	/* Not the empty set, and a set of them has one element. */
	spt_val *empty_set = spt_set(&a, NULL, 0);
	CHECK(empty_set && empty_set->kind == SPT_SET && !spt_value_eq(empty_set, e[0]));
	spt_val *s = spt_set(&a, e, n);
	CHECK(s && s->n == 1);
	/* As keys, two empty functions are the same key. */
	spt_val *keys[2] = { e[0], e[1] }, *vals[2] = { e[2], e[3] };
	dup = false;
	CHECK(spt_fun(&a, keys, vals, 2, &dup) == NULL && dup);
	/* Lookups in an empty function find nothing. */
	for (size_t i = 0; i < n; i++) {
		CHECK(spt_fun_apply(e[i], spt_int(&a, 1)) == NULL);
		CHECK(spt_fun_apply(e[i], spt_cstr(&a, "a")) == NULL);
	}
	CHECK(spt_rec_get(e[1], "a") == NULL);
	spt_arena_fini(&a);
}

/* Sets: insensitive to order and duplicates in the input; find members, reject others. */
static void test_sets(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	struct rng r = { 7 };
	unsigned bad = 0, bad_find = 0;
	for (int t = 0; t < 400; t++) {
		size_t n = rng_below(&r, 24);
		spt_val *in[48], *in2[48];
		for (size_t i = 0; i < n; i++)
			in[i] = gen_value(&a, &r, (int)rng_below(&r, 3));
		/* Add equal copies (other pointers, other arena position). */
		size_t m = n;
		for (size_t i = 0; i < n && m < 48; i++)
			if (rng_below(&r, 3) == 0)
				in[m++] = spt_value_clone(&a, in[rng_below(&r, (uint32_t)n)]);
		memcpy(in2, in, m * sizeof(*in));
		shuffle2(&r, in2, NULL, m);
		spt_val *s1 = spt_set(&a, in, m), *s2 = spt_set(&a, in2, m);
		/* Count the distinct inputs the slow way. */
		size_t distinct = 0;
		for (size_t i = 0; i < m; i++) {
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = spt_value_eq(in[i], in[j]);
			distinct += !seen;
		}
		if (!s1 || !s2 || !spt_value_eq(s1, s2) || spt_value_hash(s1) != spt_value_hash(s2) ||
		    s1->n != distinct || !canonical(s1)) {
			bad++;
			continue;
		}
		for (size_t i = 0; i < m; i++) {
			long at = spt_set_find(s1, in[i]);
			if (at < 0 || !spt_value_eq(s1->u.elems[at], in[i]))
				bad_find++;
		}
		/* Random probes: found exactly when equal to some input. */
		for (int p = 0; p < 20; p++) {
			spt_val *x = gen_value(&a, &r, 2);
			bool member = false;
			for (size_t i = 0; i < m && !member; i++)
				member = spt_value_eq(x, in[i]);
			long at = spt_set_find(s1, x);
			if ((at >= 0) != member || (at >= 0 && !spt_value_eq(s1->u.elems[at], x)))
				bad_find++;
		}
	}
	CHECKF(bad == 0, "%u sets depend on input order or keep duplicates", bad);
	CHECKF(bad_find == 0, "%u wrong spt_set_find answers", bad_find);
	CHECK(spt_set_find(spt_int(&a, 1), spt_int(&a, 1)) == -1);
	/* A set is not equal to the sequence of its elements. */
	spt_val *e[2] = { spt_int(&a, 1), spt_int(&a, 2) };
	CHECK(!spt_value_eq(spt_set(&a, e, 2), spt_seq(&a, e, 2)));
	spt_arena_fini(&a);
}

/* spt_fun: duplicate keys are reported, also when equal but built separately. */
static void test_fun_duplicates(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	struct rng r = { 8 };
	unsigned bad = 0;
	for (int t = 0; t < 500; t++) {
		spt_val *k[9], *x[9];
		size_t n = gen_keys(&a, &r, 2, k, 1 + rng_below(&r, 8), 2);
		for (size_t i = 0; i < n; i++)
			x[i] = gen_value(&a, &r, 1);
		bool dup = true;
		spt_val *f = spt_fun(&a, k, x, n, &dup);
		if (!f || dup || f->n != n || !canonical(f))
			bad++;
		/* Repeat one key as a deep clone at a random place. */
		size_t at = rng_below(&r, (uint32_t)n + 1);
		memmove(k + at + 1, k + at, (n - at) * sizeof(*k));
		memmove(x + at + 1, x + at, (n - at) * sizeof(*x));
		k[at] = spt_value_clone(&a, k[(at + 1 + rng_below(&r, (uint32_t)n)) % (n + 1)]);
		x[at] = spt_bool(&a, true);
		dup = false;
		if (spt_fun(&a, k, x, n + 1, &dup) != NULL || !dup)
			bad++;
	}
	CHECKF(bad == 0, "%u duplicate-key errors missed (or false alarms)", bad);
	/* A NULL dup pointer is allowed. */
	spt_val *k2[2] = { spt_int(&a, 5), spt_int(&a, 5) }, *x2[2] = { k2[0], k2[1] };
	CHECK(spt_fun(&a, k2, x2, 2, NULL) == NULL);
	/* More than the constructor's stack buffer (16 pairs). */
	spt_val *kb[40], *xb[40];
	for (int i = 0; i < 40; i++) {
		kb[i] = spt_int(&a, 100 - i);
		xb[i] = spt_int(&a, i);
	}
	bool dup = true;
	spt_val *big = spt_fun(&a, kb, xb, 40, &dup);
	CHECK(big && !dup && big->n == 40 && canonical(big));
	kb[39] = spt_int(&a, 100);
	CHECK(spt_fun(&a, kb, xb, 40, &dup) == NULL && dup);
	/* Records: a repeated field name. */
	const char *names[3] = { "a", "b", "a" };
	spt_val *x3[3] = { x2[0], x2[1], x2[0] };
	CHECK(spt_rec(&a, names, x3, 3) == NULL);
	CHECK(spt_rec(&a, names, x3, 2) != NULL);
	spt_arena_fini(&a);
}

/* spt_fun_apply and spt_rec_get find every key and nothing else. */
static void test_lookup(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	struct rng r = { 9 };
	unsigned bad = 0, funs = 0;
	for (int t = 0; t < 3000; t++) {
		spt_val *f = gen_value(&a, &r, 3);
		if (!spt_is_fun(f)) {
			if (spt_fun_apply(f, f) != NULL || spt_rec_get(f, "a") != NULL)
				bad++;
			continue;
		}
		funs++;
		for (uint32_t i = 0; i < f->n; i++) {
			struct spt_value tmp;
			spt_val *key = spt_fun_key(f, i, &tmp);
			spt_val *kc = spt_value_clone(&a, key);
			if (spt_fun_apply(f, kc) != spt_fun_val(f, i))
				bad++;
			if (f->kind == SPT_REC && spt_rec_get(f, key->u.s) != spt_fun_val(f, i))
				bad++;
		}
		for (int p = 0; p < 10; p++) {
			spt_val *x = gen_value(&a, &r, 1);
			bool member = false;
			for (uint32_t i = 0; i < f->n && !member; i++) {
				struct spt_value tmp;
				member = spt_value_eq(spt_fun_key(f, i, &tmp), x);
			}
			spt_val *got = spt_fun_apply(f, x);
			if ((got != NULL) != member)
				bad++;
			if (x->kind == SPT_STR && memchr(x->u.s, 0, x->n) == NULL &&
			    (spt_rec_get(f, x->u.s) != NULL) != (member && f->kind == SPT_REC))
				bad++;
		}
		if (f->kind == SPT_SEQ) {
			int64_t probes[] = { 0, -1, (int64_t)f->n + 1, INT64_MIN, INT64_MAX };
			for (size_t i = 0; i < 5; i++)
				if (spt_fun_apply(f, spt_int(&a, probes[i])) != NULL)
					bad++;
			if (spt_fun_apply(f, spt_cstr(&a, "1")) != NULL)
				bad++;
		}
	}
	CHECKF(bad == 0, "%u wrong lookups", bad);
	CHECKF(funs > 500, "only %u functions generated", funs);
	spt_arena_fini(&a);
}

/* A number's text equals the string of that text: hints never change identity. */
static void test_number_hint(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	for (size_t i = 0; i < GEN_NUMBERS; i++) {
		const char *t = gen_numbers[i];
		spt_val *num = spt_number_text(&a, t, strlen(t)), *str = spt_cstr(&a, t);
		CHECK(num->kind == SPT_STR && num->hint == SPT_HINT_NUMBER);
		CHECK(str->hint == SPT_HINT_NONE);
		CHECK(num->n == strlen(t) && !strcmp(num->u.s, t));
		CHECK(spt_value_eq(num, str) && spt_value_cmp(num, str) == 0 &&
		      spt_value_cmp(str, num) == 0);
		CHECK(spt_value_hash(num) == spt_value_hash(str));
		spt_val *both[2] = { num, str };
		CHECK(spt_set(&a, both, 2)->n == 1);
		bool dup = false;
		CHECK(spt_fun(&a, both, both, 2, &dup) == NULL && dup);
		spt_val *seq1 = spt_seq(&a, &num, 1), *seq2 = spt_seq(&a, &str, 1);
		CHECK(spt_value_eq(seq1, seq2) && spt_value_hash(seq1) == spt_value_hash(seq2));
		/* A number text is a string key: a record. */
		spt_val *r = spt_fun(&a, &num, &str, 1, NULL);
		CHECK(r && r->kind == SPT_REC && spt_rec_get(r, t) == str);
		CHECK(spt_value_clone(&a, num)->hint == SPT_HINT_NUMBER);
	}
	spt_arena_fini(&a);
}

/* Scalars: integer extremes, kinds that must never be equal to each other. */
static void test_scalars(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val *ints[] = { spt_int(&a, INT64_MIN), spt_int(&a, INT64_MIN + 1), spt_int(&a, -1),
			    spt_int(&a, 0),         spt_int(&a, 1),             spt_int(&a, INT64_MAX) };
	for (size_t i = 0; i < 6; i++)
		for (size_t j = 0; j < 6; j++)
			CHECKF(spt_value_cmp(ints[i], ints[j]) == (i < j ? -1 : i > j),
			       "int order %zu %zu", i, j);
	CHECK(ints[0]->u.i == INT64_MIN && ints[5]->u.i == INT64_MAX);
	CHECK(spt_value_cmp(spt_bool(&a, false), spt_bool(&a, true)) == -1);
	CHECK(spt_value_eq(spt_bool(&a, true), spt_bool(&a, true)));
	CHECK(spt_value_hash(spt_bool(&a, true)) == spt_value_hash(spt_bool(&a, true)));
	/* The string "a", the model value a, TRUE vs 1, 0 vs FALSE, "" vs the empty sequence. */
	CHECK(!spt_value_eq(spt_cstr(&a, "a"), spt_model(&a, "a")));
	CHECK(spt_value_cmp(spt_cstr(&a, "a"), spt_model(&a, "a")) != 0);
	CHECK(!spt_value_eq(spt_bool(&a, true), spt_int(&a, 1)));
	CHECK(!spt_value_eq(spt_bool(&a, false), spt_int(&a, 0)));
	CHECK(!spt_value_eq(spt_cstr(&a, ""), spt_seq(&a, NULL, 0)));
	CHECK(!spt_value_eq(spt_model(&a, "m1"), spt_model(&a, "m2")));
	CHECK(spt_value_eq(spt_model(&a, "m1"), spt_model(&a, "m1")));
	/* Strings: bytes compare unsigned, prefixes first, lengths with embedded NULs. */
	CHECK(spt_value_cmp(spt_cstr(&a, "a"), spt_cstr(&a, "ab")) == -1);
	CHECK(spt_value_cmp(spt_cstr(&a, "\x7f"), spt_cstr(&a, "\x80")) == -1);
	CHECK(spt_value_cmp(spt_str(&a, "a\0b", 3), spt_str(&a, "a\0c", 3)) == -1);
	CHECK(!spt_value_eq(spt_str(&a, "a\0b", 3), spt_cstr(&a, "a")));
	spt_val *s = spt_str(&a, "a\0b", 3);
	CHECK(s->n == 3 && s->u.s[3] == '\0' && !memcmp(s->u.s, "a\0b", 3));
	/* Long strings: the hash reads 8 bytes at a time. */
	char buf[100];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	for (size_t len = 0; len <= sizeof(buf); len++) {
		spt_val *x = spt_str(&a, buf, len), *y = spt_str(&a, buf, len);
		CHECK(spt_value_eq(x, y) && spt_value_hash(x) == spt_value_hash(y));
		if (len)
			CHECK(!spt_value_eq(x, spt_str(&a, buf, len - 1)));
	}
	spt_arena_fini(&a);
}

static char *print_to_string(spt_val *v)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);
	int rc = spt_value_print(f, v);
	fclose(f);
	CHECK(rc == 0);
	return p;
}

#define CHECK_PRINT(v, want)                                                                       \
	do {                                                                                       \
		char *got_ = print_to_string(v);                                                   \
		CHECKF(!strcmp(got_, want), "printed %s, want %s", got_, want);                    \
		free(got_);                                                                        \
	} while (0)

static void test_print(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val *one = spt_int(&a, 1), *two = spt_int(&a, 2), *three = spt_int(&a, 3);
	spt_val *sa = spt_cstr(&a, "a"), *sb = spt_cstr(&a, "b"), *sx = spt_cstr(&a, "x");

	CHECK_PRINT(spt_bool(&a, true), "TRUE");
	CHECK_PRINT(spt_bool(&a, false), "FALSE");
	CHECK_PRINT(spt_int(&a, INT64_MIN), "-9223372036854775808");
	CHECK_PRINT(spt_int(&a, INT64_MAX), "9223372036854775807");
	CHECK_PRINT(sa, "\"a\"");
	CHECK_PRINT(spt_cstr(&a, "q\"b\\n\nt\t"), "\"q\\\"b\\\\n\\nt\\t\"");
	CHECK_PRINT(spt_cstr(&a, ""), "\"\"");
	CHECK_PRINT(spt_number_text(&a, "1.5", 3), "\"1.5\"");
	CHECK_PRINT(spt_model(&a, "m1"), "m1");
	CHECK_PRINT(spt_model(&a, "null"), "null");

	spt_val *vals[2] = { one, sx };
	const char *names[2] = { "b", "a" };
	spt_val *rv[2] = { sx, one };
	CHECK_PRINT(spt_rec(&a, names, rv, 2), "[a |-> 1, b |-> \"x\"]");
	spt_val *e12[2] = { one, two }, *e21[3] = { two, one, two };
	CHECK_PRINT(spt_seq(&a, e12, 2), "<<1, 2>>");
	CHECK_PRINT(spt_seq(&a, e21, 3), "<<2, 1, 2>>");
	CHECK_PRINT(spt_set(&a, e21, 3), "{1, 2}");
	CHECK_PRINT(spt_set(&a, NULL, 0), "{}");
	CHECK_PRINT(spt_seq(&a, NULL, 0), "<<>>");
	CHECK_PRINT(spt_empty_fun(&a, SPT_FUN), "<<>>");
	CHECK_PRINT(spt_empty_fun(&a, SPT_REC), "<<>>");

	/* Non-sequence domains print with :> and @@; keys 1..n are a sequence. */
	spt_val *k13[2] = { three, one }, *vab[2] = { sb, sa };
	CHECK_PRINT(spt_fun(&a, k13, vab, 2, NULL), "(1 :> \"a\" @@ 3 :> \"b\")");
	spt_val *k12[2] = { two, one };
	CHECK_PRINT(spt_fun(&a, k12, vab, 2, NULL), "<<\"a\", \"b\">>");
	spt_val *km[2] = { spt_model(&a, "m"), spt_bool(&a, false) };
	CHECK_PRINT(spt_fun(&a, km, vals, 2, NULL), "(FALSE :> \"x\" @@ m :> 1)");

	/* Records with a field that is no identifier print as functions. */
	const char *odd[2] = { "a", "x y" };
	CHECK_PRINT(spt_rec(&a, odd, vals, 2), "(\"a\" :> 1 @@ \"x y\" :> \"x\")");
	const char *dollar[1] = { "$set" };
	CHECK_PRINT(spt_rec(&a, dollar, vals, 1), "(\"$set\" :> 1)");
	const char *digits[1] = { "12" };
	CHECK_PRINT(spt_rec(&a, digits, vals, 1), "(\"12\" :> 1)");
	const char *ident[2] = { "x_1", "_9a" };
	CHECK_PRINT(spt_rec(&a, ident, vals, 2), "[_9a |-> \"x\", x_1 |-> 1]");

	/* Nesting. */
	spt_val *inner = spt_rec(&a, names, rv, 2);
	spt_val *outer[3] = { spt_set(&a, e12, 2), inner, spt_seq(&a, NULL, 0) };
	CHECK_PRINT(spt_seq(&a, outer, 3), "<<{1, 2}, [a |-> 1, b |-> \"x\"], <<>>>>");
	spt_arena_fini(&a);
}

/* The allocator: alignment, big blocks, reset and reuse (ASan checks the bounds). */
static void test_arena(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	struct rng r = { 10 };
	bool aligned = true;
	static unsigned char *ptr[2000];
	static size_t len[2000];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 2000; i++) {
			size_t n = rng_below(&r, 10) == 0 ? 1 + rng_below(&r, 200000) : rng_below(&r, 100);
			unsigned char *p = spt_arena_alloc(&a, n);
			CHECK(p != NULL);
			if ((uintptr_t)p % 16)
				aligned = false;
			memset(p, i & 0xff, n);
			ptr[i] = p;
			len[i] = n;
		}
		/* No allocation overlaps another: each still holds its own byte. */
		bool intact = true;
		for (int i = 0; i < 2000; i++)
			for (size_t k = 0; k < len[i]; k++)
				if (ptr[i][k] != (unsigned char)(i & 0xff))
					intact = false;
		CHECK(intact);
		spt_arena_reset(&a);
		CHECK(a.head == NULL && a.cur == a.end);
	}
	CHECK(aligned);
	char *d = spt_arena_memdup(&a, "hello", 5);
	CHECK(d && !memcmp(d, "hello", 5));
	CHECK(spt_arena_memdup(&a, NULL, 0) != NULL);
	char *s = spt_arena_strndup(&a, "abcdef", 3);
	CHECK(s && !strcmp(s, "abc"));
	spt_arena_fini(&a);
	CHECK(a.head == NULL && a.spare == NULL && a.cur == NULL);
	/* Usable again after fini + init. */
	spt_arena_init(&a);
	CHECK(spt_cstr(&a, "x") != NULL);
	spt_arena_fini(&a);
}

int main(void)
{
	RUN(test_generator_sane);
	RUN(test_reflexive_and_clone);
	RUN(test_pairs);
	RUN(test_transitive);
	RUN(test_canon_seq);
	RUN(test_canon_rec);
	RUN(test_empty_functions);
	RUN(test_sets);
	RUN(test_fun_duplicates);
	RUN(test_lookup);
	RUN(test_number_hint);
	RUN(test_scalars);
	RUN(test_print);
	RUN(test_arena);
	TEST_MAIN_END("test_value");
}
