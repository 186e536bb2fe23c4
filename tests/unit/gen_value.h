/* Deterministic random values for property tests (shared by test_value.c and test_json.c). */
#ifndef SPECTAP_TEST_GEN_VALUE_H
#define SPECTAP_TEST_GEN_VALUE_H

#include <stdint.h>
#include <string.h>

#include "spectap/value.h"

/* splitmix64: small, seedable, good enough for test data. */
struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform enough in [0, n); n > 0. */
static inline uint32_t rng_below(struct rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

/* Fisher-Yates over an array of value pointers (and a parallel array, when given). */
static inline void shuffle2(struct rng *r, spt_val **a, spt_val **b, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(r, (uint32_t)i);
		spt_val *t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
		if (b) {
			t = b[i - 1];
			b[i - 1] = b[j];
			b[j] = t;
		}
	}
}

/* Small pools so that equal values turn up often. */
static const char *const gen_names[] = {
	"a", "b", "c", "ab", "x1", "_y", "", "$set", "$rec", "$fun", "$model", "$", "x y",
	"1", "null", "\x01\x1f", "quote\"back\\slash", "tab\tnl\n", "\x7f\xc3\xa9\xff\x80", "$x",
};
#define GEN_NAMES (sizeof(gen_names) / sizeof(gen_names[0]))

static const char *const gen_models[] = { "m1", "m2", "null", "A", "n\"q", "" };
#define GEN_MODELS (sizeof(gen_models) / sizeof(gen_models[0]))

/* Valid non-integer JSON numbers (SPT_HINT_NUMBER strings). */
static const char *const gen_numbers[] = { "1.5", "1e10", "-0.25E-3", "1712329729.6024537",
					   "0.0", "2E+3" };
#define GEN_NUMBERS (sizeof(gen_numbers) / sizeof(gen_numbers[0]))

static inline int64_t gen_int(struct rng *r)
{
	switch (rng_below(r, 8)) {
	case 0: return INT64_MIN;
	case 1: return INT64_MAX;
	case 2: return INT64_MIN + 1;
	case 3: return (int64_t)rng_next(r);
	case 4: return -(int64_t)rng_below(r, 4);
	default: return (int64_t)rng_below(r, 6);
	}
}

static inline spt_val *gen_str(struct spt_arena *a, struct rng *r)
{
	switch (rng_below(r, 6)) {
	case 0: { /* random NUL-free bytes, any value 1..255 */
		char buf[12];
		size_t n = rng_below(r, sizeof(buf));
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)(1 + rng_below(r, 255));
		return spt_str(a, buf, n);
	}
	case 1: {
		const char *t = gen_numbers[rng_below(r, GEN_NUMBERS)];
		return rng_below(r, 2) ? spt_number_text(a, t, strlen(t)) : spt_cstr(a, t);
	}
	default:
		return spt_cstr(a, gen_names[rng_below(r, GEN_NAMES)]);
	}
}

static spt_val *gen_value(struct spt_arena *a, struct rng *r, int depth);

/* n distinct keys (fewer when the pool runs dry): deduplicated through a set. */
static inline size_t gen_keys(struct spt_arena *a, struct rng *r, int depth, spt_val **keys,
			      size_t n, int how)
{
	spt_val *raw[8];
	for (size_t i = 0; i < n; i++) {
		if (how == 0)
			raw[i] = gen_str(a, r);
		else if (how == 1)
			raw[i] = spt_int(a, (int64_t)rng_below(r, 6) - 1);
		else
			raw[i] = gen_value(a, r, depth);
	}
	spt_val *s = spt_set(a, raw, n);
	for (uint32_t i = 0; i < s->n; i++)
		keys[i] = s->u.elems[i];
	shuffle2(r, keys, NULL, s->n);
	return s->n;
}

/* A random value nested at most depth levels (depth 0: scalars only). */
static spt_val *gen_value(struct spt_arena *a, struct rng *r, int depth)
{
	unsigned k = rng_below(r, depth > 0 ? 12 : 4);
	spt_val *e[8], *k2[8];
	size_t n = rng_below(r, 6);
	switch (k) {
	case 0: return spt_bool(a, rng_below(r, 2));
	case 1: return spt_int(a, gen_int(r));
	case 2: return gen_str(a, r);
	case 3: return spt_model(a, gen_models[rng_below(r, GEN_MODELS)]);
	case 4:
	case 5: /* set, possibly with duplicates */
		for (size_t i = 0; i < n; i++)
			e[i] = gen_value(a, r, depth - 1 - (int)rng_below(r, 2));
		if (n && rng_below(r, 3) == 0)
			e[rng_below(r, (uint32_t)n)] = e[0];
		return spt_set(a, e, n);
	case 6:
		for (size_t i = 0; i < n; i++)
			e[i] = gen_value(a, r, depth - 1);
		return spt_seq(a, e, n);
	case 7: { /* record */
		n = gen_keys(a, r, 0, k2, n, 0);
		for (size_t i = 0; i < n; i++)
			e[i] = gen_value(a, r, depth - 1);
		return spt_fun(a, k2, e, n, NULL);
	}
	case 8:
	case 9: { /* function with non-string (or mixed) keys */
		n = gen_keys(a, r, depth - 1, k2, n, k == 8 ? 1 : 2);
		for (size_t i = 0; i < n; i++)
			e[i] = gen_value(a, r, depth - 1);
		return spt_fun(a, k2, e, n, NULL);
	}
	case 10: { /* keys exactly 1..n, given in random order: a sequence */
		for (size_t i = 0; i < n; i++) {
			k2[i] = spt_int(a, (int64_t)i + 1);
			e[i] = gen_value(a, r, depth - 1);
		}
		shuffle2(r, k2, e, n);
		return spt_fun(a, k2, e, n, NULL);
	}
	default: { /* an empty function of each representation */
		static const enum spt_kind how[] = { SPT_SEQ, SPT_REC, SPT_FUN };
		return spt_empty_fun(a, how[rng_below(r, 3)]);
	}
	}
}

#endif
