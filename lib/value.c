/* Construction, canonical order, equality and hashing of TLA+ values. */
#include "spectap/value.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Kinds that compare as one class: every function kind is a function. */
enum vclass { VC_BOOL, VC_INT, VC_STR, VC_MODEL, VC_SET, VC_FUN };

static enum vclass vclass(spt_val *v)
{
	switch (v->kind) {
	case SPT_BOOL: return VC_BOOL;
	case SPT_INT: return VC_INT;
	case SPT_STR: return VC_STR;
	case SPT_MODEL: return VC_MODEL;
	case SPT_SET: return VC_SET;
	default: return VC_FUN;
	}
}

/* ---- hashing ---- */

static uint64_t fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t spt_hash_mix(uint64_t h, uint64_t x)
{
	/* Order-dependent and cheap; composite hashes get a full avalanche (fmix64) at the end. */
	h ^= (x + 0x9e3779b97f4a7c15ULL) * 0x87c37b91114253d5ULL;
	h = (h << 27) | (h >> 37);
	return h * 0x100000001b3ULL + 0x52dce729ULL;
}

uint64_t spt_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	/* One multiply per 8 bytes, then a full avalanche: cheap for the short strings of traces. */
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h ^= w * 0x87c37b91114253d5ULL;
		h = ((h << 31) | (h >> 33)) * 0x4cf5ad432745937fULL;
		s += 8;
		n -= 8;
	}
	uint64_t tail = 0;
	memcpy(&tail, s, n);
	h ^= tail * 0x87c37b91114253d5ULL;
	return fmix64(h);
}

uint64_t spt_str_hash(const char *s, size_t n) { return spt_hash_bytes(s, n, VC_STR); }

static uint64_t hash_int(int64_t i) { return fmix64(spt_hash_mix(VC_INT, (uint64_t)i)); }

/*
 * Composite hashes are sums (mod 2^64) of one well-mixed term per element plus a term for the
 * kind and size, so that one element replaced, appended, inserted or removed updates the hash in
 * O(1). A sequence's i-th element hashes as the pair (i + 1, e): the same term as a function
 * with that key, so equal values of either spelling hash alike.
 */
static uint64_t size_term(enum vclass c, uint32_t n) { return fmix64(spt_hash_mix(c, n)); }
static uint64_t kv_term(uint64_t hk, uint64_t hv) { return fmix64(spt_hash_mix(spt_hash_mix(0x5ca1ab1eULL, hk), hv)); }
static uint64_t set_term(uint64_t h) { return fmix64(h ^ 0x2545f4914f6cdd1dULL); }

/* ---- scalars ---- */

static struct spt_value *new_value(struct spt_arena *a, enum spt_kind k)
{
	struct spt_value *v = spt_arena_alloc(a, sizeof(*v));
	if (v) {
		memset(v, 0, sizeof(*v));
		v->kind = (uint8_t)k;
		v->gen = a->tag;
	}
	return v;
}

/* Booleans and small integers are built once for the whole process: no allocation, and equal
 * ones are one pointer. */
#define SMALL_MIN (-256)
#define SMALL_MAX 32767
static struct spt_value small_ints[SMALL_MAX - SMALL_MIN + 1];
static struct spt_value bools[2];

__attribute__((constructor)) static void static_values_init(void)
{
	for (int64_t i = SMALL_MIN; i <= SMALL_MAX; i++) {
		struct spt_value *v = &small_ints[i - SMALL_MIN];
		v->kind = SPT_INT;
		v->gen = SPT_GEN_STATIC;
		v->u.i = i;
		v->hash = hash_int(i);
	}
	for (int b = 0; b < 2; b++) {
		bools[b].kind = SPT_BOOL;
		bools[b].gen = SPT_GEN_STATIC;
		bools[b].u.b = b;
		bools[b].hash = fmix64(spt_hash_mix(VC_BOOL, (uint64_t)b));
	}
}

spt_val *spt_bool(struct spt_arena *a, bool b)
{
	(void)a;
	return &bools[b ? 1 : 0];
}

spt_val *spt_int(struct spt_arena *a, int64_t i)
{
	if (i >= SMALL_MIN && i <= SMALL_MAX)
		return &small_ints[i - SMALL_MIN];
	struct spt_value *v = new_value(a, SPT_INT);
	if (v) {
		v->u.i = i;
		v->hash = hash_int(i);
	}
	return v;
}

static spt_val *text_value(struct spt_arena *a, enum spt_kind k, const char *s, size_t len)
{
	if (len > UINT32_MAX)
		return NULL;
	struct spt_value *v = new_value(a, k);
	char *copy = spt_arena_strndup(a, s, len);
	if (!v || !copy)
		return NULL;
	v->u.s = copy;
	v->n = (uint32_t)len;
	v->hash = spt_hash_bytes(s, len, k == SPT_MODEL ? VC_MODEL : VC_STR);
	return v;
}

spt_val *spt_str(struct spt_arena *a, const char *s, size_t len) { return text_value(a, SPT_STR, s, len); }
spt_val *spt_cstr(struct spt_arena *a, const char *s) { return spt_str(a, s, strlen(s)); }
spt_val *spt_model(struct spt_arena *a, const char *name) { return text_value(a, SPT_MODEL, name, strlen(name)); }

spt_val *spt_number_text(struct spt_arena *a, const char *s, size_t len)
{
	struct spt_value *v = (struct spt_value *)spt_str(a, s, len);
	if (v)
		v->hint = SPT_HINT_NUMBER;
	return v;
}

/* ---- order ---- */

static int cmp_bytes(const char *a, uint32_t an, const char *b, uint32_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	if (c)
		return c < 0 ? -1 : 1;
	return an < bn ? -1 : an > bn;
}

spt_val *spt_fun_key(spt_val *f, uint32_t i, struct spt_value *tmp)
{
	if (f->kind != SPT_SEQ)
		return f->u.fn.keys[i];
	memset(tmp, 0, sizeof(*tmp));
	tmp->kind = SPT_INT;
	tmp->u.i = (int64_t)i + 1;
	tmp->hash = hash_int(tmp->u.i);
	return tmp;
}

int spt_value_cmp(spt_val *x, spt_val *y)
{
	if (x == y)
		return 0;
	enum vclass cx = vclass(x), cy = vclass(y);
	if (cx != cy)
		return cx < cy ? -1 : 1;
	switch (cx) {
	case VC_BOOL:
		return (int)x->u.b - (int)y->u.b;
	case VC_INT:
		return x->u.i < y->u.i ? -1 : x->u.i > y->u.i;
	case VC_STR:
	case VC_MODEL:
		return cmp_bytes(x->u.s, x->n, y->u.s, y->n);
	case VC_SET:
		if (x->n != y->n)
			return x->n < y->n ? -1 : 1;
		for (uint32_t i = 0; i < x->n; i++) {
			int c = spt_value_cmp(x->u.elems[i], y->u.elems[i]);
			if (c)
				return c;
		}
		return 0;
	case VC_FUN:
		if (x->n != y->n)
			return x->n < y->n ? -1 : 1;
		/* Two sequences of one length have the same keys 1..n: only their values differ. */
		bool seqs = x->kind == SPT_SEQ && y->kind == SPT_SEQ;
		for (uint32_t i = 0; !seqs && i < x->n; i++) {
			struct spt_value tx, ty;
			int c = spt_value_cmp(spt_fun_key(x, i, &tx), spt_fun_key(y, i, &ty));
			if (c)
				return c;
		}
		if (seqs) { /* long sequences of integers (logs) are compared on every event */
			spt_val *const *ex = x->u.elems, *const *ey = y->u.elems;
			for (uint32_t i = 0; i < x->n; i++) {
				spt_val *a = ex[i], *b = ey[i];
				if (a == b)
					continue;
				int c = a->kind == SPT_INT && b->kind == SPT_INT ? (a->u.i > b->u.i) - (a->u.i < b->u.i)
										 : spt_value_cmp(a, b);
				if (c)
					return c;
			}
			return 0;
		}
		for (uint32_t i = 0; i < x->n; i++) {
			int c = spt_value_cmp(spt_fun_val(x, i), spt_fun_val(y, i));
			if (c)
				return c;
		}
		return 0;
	}
	return 0;
}

bool spt_value_eq(spt_val *x, spt_val *y)
{
	return x == y || (x->hash == y->hash && spt_value_cmp(x, y) == 0);
}

/* ---- composites ---- */

static int cmp_ptr(const void *a, const void *b)
{
	return spt_value_cmp(*(spt_val *const *)a, *(spt_val *const *)b);
}

/* Decoded and generated input is usually canonical already: skip the sort then. */
static bool sorted_unique(spt_val *const *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (spt_value_cmp(v[i - 1], v[i]) >= 0)
			return false;
	return true;
}

spt_val *spt_set(struct spt_arena *a, spt_val *const *elems, size_t n)
{
	if (n > UINT32_MAX)
		return NULL;
	struct spt_value *v = new_value(a, SPT_SET);
	spt_val **copy = spt_arena_alloc(a, (n ? n : 1) * sizeof(*copy));
	if (!v || !copy)
		return NULL;
	if (n)
		memcpy(copy, elems, n * sizeof(*copy));
	if (!sorted_unique(copy, n))
		qsort(copy, n, sizeof(*copy), cmp_ptr);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || !spt_value_eq(copy[m - 1], copy[i]))
			copy[m++] = copy[i];
	uint64_t h = size_term(VC_SET, (uint32_t)m);
	for (size_t i = 0; i < m; i++)
		h += set_term(copy[i]->hash);
	v->u.elems = copy;
	v->n = (uint32_t)m;
	v->hash = h;
	return v;
}

spt_val *spt_set_adopt_sorted(struct spt_arena *a, spt_val **elems, size_t n)
{
	if (n > UINT32_MAX)
		return NULL;
	struct spt_value *v = new_value(a, SPT_SET);
	if (!v)
		return NULL;
	uint64_t h = size_term(VC_SET, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		h += set_term(elems[i]->hash);
	v->u.elems = (spt_val *const *)elems;
	v->n = (uint32_t)n;
	v->hash = h;
	return v;
}

/* hash_int(i + 1) of the first positions, as a sequence's keys: long sequences (logs) are
 * hashed often. Filled lazily by whichever thread gets there (all write the same value; 0 means
 * not yet, or a hash that happens to be 0: then computed each time). */
#define SEQ_KEY_HASHES 4096
static _Atomic uint64_t seq_key_hash[SEQ_KEY_HASHES];

static uint64_t seq_key(size_t i)
{
	if (i >= SEQ_KEY_HASHES)
		return hash_int((int64_t)i + 1);
	uint64_t h = atomic_load_explicit(&seq_key_hash[i], memory_order_relaxed);
	if (!h) {
		h = hash_int((int64_t)i + 1);
		atomic_store_explicit(&seq_key_hash[i], h, memory_order_relaxed);
	}
	return h;
}

static uint64_t hash_seq(spt_val *const *elems, size_t n)
{
	uint64_t h = size_term(VC_FUN, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		h += kv_term(seq_key(i), elems[i]->hash);
	return h;
}

spt_val *spt_seq(struct spt_arena *a, spt_val *const *elems, size_t n)
{
	if (n > UINT32_MAX)
		return NULL;
	struct spt_value *v = new_value(a, SPT_SEQ);
	spt_val **copy = spt_arena_alloc(a, (n ? n : 1) * sizeof(*copy));
	if (!v || !copy)
		return NULL;
	if (n)
		memcpy(copy, elems, n * sizeof(*copy));
	v->u.elems = copy;
	v->n = (uint32_t)n;
	v->hash = hash_seq(copy, n);
	return v;
}

spt_val *spt_empty_fun(struct spt_arena *a, enum spt_kind how)
{
	if (how != SPT_SEQ && how != SPT_REC)
		how = SPT_FUN;
	struct spt_value *v = new_value(a, how);
	if (v)
		v->hash = size_term(VC_FUN, 0);
	return v;
}

struct kv {
	spt_val *k, *v;
	uint32_t given; /* position in the caller's arrays */
};

static int cmp_kv(const void *a, const void *b)
{
	return spt_value_cmp(((const struct kv *)a)->k, ((const struct kv *)b)->k);
}

/* Builds a function from pairs already sorted by key, without duplicates. */
static spt_val *fun_from_sorted(struct spt_arena *a, const struct kv *p, size_t n)
{
	if (n == 0)
		return spt_empty_fun(a, SPT_FUN);
	bool all_str = true, is_seq = true;
	for (size_t i = 0; i < n; i++) {
		if (p[i].k->kind != SPT_STR)
			all_str = false;
		if (p[i].k->kind != SPT_INT || p[i].k->u.i != (int64_t)i + 1)
			is_seq = false;
	}
	spt_val **vals = spt_arena_alloc(a, n * sizeof(*vals));
	if (!vals)
		return NULL;
	for (size_t i = 0; i < n; i++)
		vals[i] = p[i].v;
	if (is_seq)
		return spt_seq(a, vals, n);

	struct spt_value *v = new_value(a, all_str ? SPT_REC : SPT_FUN);
	spt_val **keys = spt_arena_alloc(a, n * sizeof(*keys));
	if (!v || !keys)
		return NULL;
	uint64_t h = size_term(VC_FUN, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		keys[i] = p[i].k;
		h += kv_term(keys[i]->hash, vals[i]->hash);
	}
	v->u.fn.keys = keys;
	v->u.fn.vals = vals;
	v->n = (uint32_t)n;
	v->hash = h;
	return v;
}

/* The written order of a record's fields as a hint, when it differs from the canonical one. */
static spt_val *attach_order(struct spt_arena *a, spt_val *r, const struct kv *p, size_t n)
{
	bool canonical = true;
	for (size_t j = 0; j < n; j++)
		if (p[j].given != j)
			canonical = false;
	if (canonical || r->kind != SPT_REC)
		return r;
	uint32_t *order = spt_arena_alloc(a, n * sizeof(*order));
	struct spt_value *c = spt_arena_memdup(a, r, sizeof(*r));
	if (!order || !c)
		return NULL;
	c->gen = a->tag;
	for (size_t j = 0; j < n; j++)
		order[p[j].given] = (uint32_t)j;
	c->u.fn.order = order;
	return c;
}

static spt_val *make_fun(struct spt_arena *a, spt_val *const *keys, spt_val *const *vals, size_t n,
			 bool *dup, bool keep_order)
{
	if (dup)
		*dup = false;
	if (n > UINT32_MAX)
		return NULL;
	/* Keys 1..n in order ([i \in 1..n |-> e]): the sequence, without a sort or a check. */
	size_t k = 0;
	while (k < n && keys[k]->kind == SPT_INT && keys[k]->u.i == (int64_t)k + 1)
		k++;
	if (n && k == n)
		return spt_seq(a, vals, n);
	struct kv stackbuf[16];
	struct kv *p = n <= 16 ? stackbuf : malloc(n * sizeof(*p));
	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		p[i] = (struct kv){ keys[i], vals[i], (uint32_t)i };
	bool sorted = sorted_unique(keys, n); /* strictly increasing: no duplicate either */
	if (!sorted)
		qsort(p, n, sizeof(*p), cmp_kv);
	spt_val *r = NULL;
	for (size_t i = 1; !sorted && i < n; i++) {
		if (spt_value_eq(p[i - 1].k, p[i].k)) {
			if (dup)
				*dup = true;
			goto out;
		}
	}
	r = fun_from_sorted(a, p, n);
	if (r && keep_order)
		r = attach_order(a, r, p, n);
out:
	if (p != stackbuf)
		free(p);
	return r;
}

spt_val *spt_fun(struct spt_arena *a, spt_val *const *keys, spt_val *const *vals, size_t n,
		 bool *dup)
{
	return make_fun(a, keys, vals, n, dup, false);
}

/* v (new, of kind SPT_REC or SPT_FUN) takes the n sorted keys and their values, and its hash. */
static struct spt_value *fun_take(struct spt_value *v, spt_val **keys, spt_val **vals, size_t n)
{
	uint64_t h = size_term(VC_FUN, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		h += kv_term(keys[i]->hash, vals[i]->hash);
	v->u.fn.keys = keys;
	v->u.fn.vals = vals;
	v->n = (uint32_t)n;
	v->hash = h;
	return v;
}

spt_val *spt_fun_adopt(struct spt_arena *a, spt_val **keys, spt_val **vals, size_t n, bool *dup)
{
	if (n == 0 || n > UINT32_MAX || !sorted_unique(keys, n))
		return spt_fun(a, keys, vals, n, dup); /* copies: the rare, slow way */
	if (dup)
		*dup = false;
	bool all_str = true, is_seq = true;
	for (size_t i = 0; i < n; i++) {
		if (keys[i]->kind != SPT_STR)
			all_str = false;
		if (keys[i]->kind != SPT_INT || keys[i]->u.i != (int64_t)i + 1)
			is_seq = false;
	}
	if (is_seq)
		return spt_seq_adopt(a, vals, n);
	struct spt_value *v = new_value(a, all_str ? SPT_REC : SPT_FUN);
	if (!v)
		return NULL;
	return fun_take(v, keys, vals, n);
}

spt_val *spt_rec_adopt_sorted(struct spt_arena *a, spt_val **keys, spt_val **vals, size_t n)
{
	if (n == 0 || n > UINT32_MAX)
		return n ? NULL : spt_empty_fun(a, SPT_REC);
	struct spt_value *v = new_value(a, SPT_REC);
	if (!v)
		return NULL;
	return fun_take(v, keys, vals, n);
}

spt_val *spt_seq_adopt_copy(struct spt_arena *a, spt_val **elems, spt_val *like)
{
	if (like->kind != SPT_SEQ || like->n == 0)
		return spt_seq_adopt(a, elems, like->n);
	struct spt_value *v = new_value(a, SPT_SEQ);
	if (!v)
		return NULL;
	v->u.elems = elems;
	v->n = like->n;
	v->hash = like->hash;
	return v;
}

spt_val *spt_seq_adopt(struct spt_arena *a, spt_val **elems, size_t n)
{
	if (n == 0 || n > UINT32_MAX)
		return n ? NULL : spt_empty_fun(a, SPT_SEQ);
	struct spt_value *v = new_value(a, SPT_SEQ);
	if (!v)
		return NULL;
	v->u.elems = elems;
	v->n = (uint32_t)n;
	v->hash = hash_seq(elems, n);
	return v;
}

spt_val *spt_fun_ordered(struct spt_arena *a, spt_val *const *keys, spt_val *const *vals, size_t n,
			 bool *dup)
{
	return make_fun(a, keys, vals, n, dup, true);
}

spt_val *spt_rec_with_order(struct spt_arena *a, spt_val *rec, const uint32_t *order)
{
	if (rec->kind != SPT_REC)
		return NULL;
	if (!order) {
		struct spt_value *plain = spt_arena_memdup(a, rec, sizeof(*rec));
		if (plain) {
			plain->u.fn.order = NULL;
			plain->gen = a->tag;
		}
		return plain;
	}
	uint32_t n = rec->n;
	bool seen_stack[64], *seen = n <= 64 ? seen_stack : calloc(n, 1);
	if (!seen)
		return NULL;
	memset(seen, 0, n <= 64 ? sizeof(seen_stack) : 0);
	bool ok = true, identity = true;
	for (uint32_t i = 0; i < n && ok; i++) {
		if (order[i] >= n || seen[order[i]])
			ok = false;
		else
			seen[order[i]] = true;
		if (order[i] != i)
			identity = false;
	}
	if (seen != seen_stack)
		free(seen);
	if (!ok)
		return NULL;
	struct spt_value *c = spt_arena_memdup(a, rec, sizeof(*rec));
	if (!c)
		return NULL;
	c->gen = a->tag;
	c->u.fn.order = identity ? NULL : spt_arena_memdup(a, order, n * sizeof(*order));
	if (!identity && !c->u.fn.order)
		return NULL;
	return c;
}

spt_val *spt_rec(struct spt_arena *a, const char *const *names, spt_val *const *vals, size_t n)
{
	if (n == 0)
		return spt_empty_fun(a, SPT_REC);
	spt_val **keys = spt_arena_alloc(a, n * sizeof(*keys));
	if (!keys)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(keys[i] = spt_cstr(a, names[i])))
			return NULL;
	return spt_fun(a, keys, vals, n, NULL);
}

/* Deep copy; static values are shared, and with share_tag so are values of that arena and of
 * the arenas whose tags keep lists (keep[0], keep[1]; 0 for none). */
static const unsigned char no_keep[2];

static bool shared(const struct spt_arena *a, spt_val *v, bool share_tag, const unsigned char *keep)
{
	if (v->gen == SPT_GEN_STATIC)
		return true;
	if (!share_tag || !v->gen)
		return false;
	return v->gen == a->tag || v->gen == keep[0] || v->gen == keep[1];
}

/* budget (NULL: none) is decremented by the elements copied; at zero the copy fails (NULL). */
static spt_val *copy_value_k(struct spt_arena *a, spt_val *v, bool share_tag, const unsigned char *keep, size_t *budget)
{
	if (shared(a, v, share_tag, keep))
		return v;
	if (budget) {
		size_t cost = 1 + (v->kind >= SPT_SET ? v->n : 0);
		if (*budget < cost)
			return NULL;
		*budget -= cost;
	}
	struct spt_value *c = spt_arena_memdup(a, v, sizeof(*v));
	if (!c)
		return NULL;
	c->gen = a->tag;
	switch (v->kind) {
	case SPT_INT:
	case SPT_BOOL:
		break;
	case SPT_STR:
	case SPT_MODEL:
		if (!(c->u.s = spt_arena_strndup(a, v->u.s, v->n)))
			return NULL;
		break;
	case SPT_SET:
	case SPT_SEQ: {
		spt_val **e = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*e));
		if (!e)
			return NULL;
		/* Integer elements outside the static range (a log's indexes) go into one block. */
		uint32_t big = 0;
		for (uint32_t i = 0; i < v->n; i++) {
			spt_val *x = v->u.elems[i];
			big += x->kind == SPT_INT && !shared(a, x, share_tag, keep);
		}
		struct spt_value *block = big ? spt_arena_alloc(a, big * sizeof(*block)) : NULL;
		if (big && !block)
			return NULL;
		for (uint32_t i = 0; i < v->n; i++) {
			spt_val *x = v->u.elems[i];
			if (x->kind == SPT_INT && !shared(a, x, share_tag, keep)) {
				*block = *x;
				block->gen = a->tag;
				e[i] = block++;
			} else if (!(e[i] = copy_value_k(a, x, share_tag, keep, budget))) {
				return NULL;
			}
		}
		c->u.elems = e;
		break;
	}
	case SPT_REC:
	case SPT_FUN: {
		spt_val **k = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*k));
		spt_val **x = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*x));
		if (!k || !x)
			return NULL;
		for (uint32_t i = 0; i < v->n; i++)
			if (!(k[i] = copy_value_k(a, v->u.fn.keys[i], share_tag, keep, budget)) ||
			    !(x[i] = copy_value_k(a, v->u.fn.vals[i], share_tag, keep, budget)))
				return NULL;
		c->u.fn.keys = k;
		c->u.fn.vals = x;
		if (v->u.fn.order &&
		    !(c->u.fn.order = spt_arena_memdup(a, v->u.fn.order, v->n * sizeof(uint32_t))))
			return NULL;
		break;
	}
	default:
		break;
	}
	return c;
}

spt_val *spt_value_clone(struct spt_arena *a, spt_val *v) { return copy_value_k(a, v, false, no_keep, NULL); }
spt_val *spt_value_move(struct spt_arena *a, spt_val *v) { return copy_value_k(a, v, true, no_keep, NULL); }
spt_val *spt_value_move_keep(struct spt_arena *a, spt_val *v, const unsigned char keep[2], size_t *budget)
{
	return copy_value_k(a, v, true, keep, budget);
}

/* ---- one-element updates ---- */

static struct spt_value *dup_header(struct spt_arena *a, spt_val *v)
{
	struct spt_value *c = spt_arena_memdup(a, v, sizeof(*v));
	if (c)
		c->gen = a->tag;
	return c;
}

spt_val *spt_seq_set(struct spt_arena *a, spt_val *s, uint32_t i, spt_val *v)
{
	if (s->kind != SPT_SEQ || i >= s->n)
		return NULL;
	if (s->u.elems[i] == v)
		return s;
	struct spt_value *c = dup_header(a, s);
	spt_val **e = spt_arena_alloc(a, s->n * sizeof(*e));
	if (!c || !e)
		return NULL;
	memcpy(e, s->u.elems, s->n * sizeof(*e));
	uint64_t k = seq_key(i);
	c->hash = s->hash - kv_term(k, e[i]->hash) + kv_term(k, v->hash);
	e[i] = v;
	c->u.elems = e;
	return c;
}

spt_val *spt_fun_set(struct spt_arena *a, spt_val *f, uint32_t i, spt_val *v)
{
	if (f->kind == SPT_SEQ)
		return spt_seq_set(a, f, i, v);
	if (!spt_is_fun(f) || i >= f->n)
		return NULL;
	if (f->u.fn.vals[i] == v)
		return f;
	struct spt_value *c = dup_header(a, f);
	spt_val **x = spt_arena_alloc(a, f->n * sizeof(*x));
	if (!c || !x)
		return NULL;
	memcpy(x, f->u.fn.vals, f->n * sizeof(*x));
	uint64_t hk = f->u.fn.keys[i]->hash;
	c->hash = f->hash - kv_term(hk, x[i]->hash) + kv_term(hk, v->hash);
	x[i] = v;
	c->u.fn.vals = x; /* the keys (and the written order) are shared */
	return c;
}

void spt_fun_set_owned(spt_val *f, uint32_t i, spt_val *v)
{
	struct spt_value *w = (struct spt_value *)f;
	if (!spt_is_fun(f) || i >= f->n)
		return;
	if (f->kind == SPT_SEQ) {
		spt_val **e = (spt_val **)f->u.elems;
		uint64_t k = seq_key(i);
		w->hash = f->hash - kv_term(k, e[i]->hash) + kv_term(k, v->hash);
		e[i] = v;
		return;
	}
	spt_val **x = (spt_val **)f->u.fn.vals;
	uint64_t hk = f->u.fn.keys[i]->hash;
	w->hash = f->hash - kv_term(hk, x[i]->hash) + kv_term(hk, v->hash);
	x[i] = v;
}

spt_val *spt_seq_append(struct spt_arena *a, spt_val *s, spt_val *v)
{
	if (!spt_is_fun(s) || (s->n && s->kind != SPT_SEQ) || s->n == UINT32_MAX)
		return NULL;
	uint32_t n = s->n;
	struct spt_value *c = new_value(a, SPT_SEQ);
	spt_val **e = spt_arena_alloc(a, (n + 1) * sizeof(*e));
	if (!c || !e)
		return NULL;
	if (n)
		memcpy(e, s->u.elems, n * sizeof(*e));
	e[n] = v;
	c->u.elems = e;
	c->n = n + 1;
	c->hash = s->hash - size_term(VC_FUN, n) + size_term(VC_FUN, n + 1) + kv_term(seq_key(n), v->hash);
	return c;
}

/* Where x is or would go in the sorted set s. */
static uint32_t set_pos(spt_val *s, spt_val *x, bool *found)
{
	uint32_t lo = 0, hi = s->n;
	*found = false;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = spt_value_cmp(s->u.elems[mid], x);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

spt_val *spt_set_insert(struct spt_arena *a, spt_val *s, spt_val *x)
{
	if (s->kind != SPT_SET || s->n == UINT32_MAX)
		return NULL;
	bool found;
	uint32_t k = set_pos(s, x, &found);
	if (found)
		return s;
	struct spt_value *c = dup_header(a, s);
	spt_val **e = spt_arena_alloc(a, (s->n + 1) * sizeof(*e));
	if (!c || !e)
		return NULL;
	memcpy(e, s->u.elems, k * sizeof(*e));
	e[k] = x;
	memcpy(e + k + 1, s->u.elems + k, (s->n - k) * sizeof(*e));
	c->u.elems = e;
	c->n = s->n + 1;
	c->hash = s->hash - size_term(VC_SET, s->n) + size_term(VC_SET, s->n + 1) + set_term(x->hash);
	return c;
}

spt_val *spt_set_remove(struct spt_arena *a, spt_val *s, spt_val *x)
{
	if (s->kind != SPT_SET)
		return NULL;
	bool found;
	uint32_t k = set_pos(s, x, &found);
	if (!found)
		return s;
	struct spt_value *c = dup_header(a, s);
	spt_val **e = spt_arena_alloc(a, (s->n ? s->n : 1) * sizeof(*e));
	if (!c || !e)
		return NULL;
	memcpy(e, s->u.elems, k * sizeof(*e));
	memcpy(e + k, s->u.elems + k + 1, (s->n - k - 1) * sizeof(*e));
	c->u.elems = e;
	c->n = s->n - 1;
	c->hash = s->hash - size_term(VC_SET, s->n) + size_term(VC_SET, s->n - 1) - set_term(s->u.elems[k]->hash);
	return c;
}

/* ---- lookup ---- */

/* Below this many keys a function is searched by hash, one key after another (equal values
 * hash alike): no byte compares on the way. */
#define FUN_SCAN_MAX 8

static long fun_scan(spt_val *f, spt_val *key)
{
	for (uint32_t i = 0; i < f->n; i++) {
		spt_val *k = f->u.fn.keys[i];
		if (k == key || (k->hash == key->hash && spt_value_cmp(k, key) == 0))
			return (long)i;
	}
	return -1;
}

spt_val *spt_fun_apply(spt_val *f, spt_val *key)
{
	if (!spt_is_fun(f))
		return NULL;
	if (f->kind == SPT_SEQ) {
		if (key->kind != SPT_INT || key->u.i < 1 || key->u.i > (int64_t)f->n)
			return NULL;
		return f->u.elems[key->u.i - 1];
	}
	if (f->n <= FUN_SCAN_MAX) {
		long i = fun_scan(f, key);
		return i < 0 ? NULL : f->u.fn.vals[i];
	}
	uint32_t lo = 0, hi = f->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = spt_value_cmp(f->u.fn.keys[mid], key);
		if (c == 0)
			return f->u.fn.vals[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long spt_fun_index(spt_val *f, spt_val *key)
{
	if (!spt_is_fun(f))
		return -1;
	if (f->kind == SPT_SEQ)
		return key->kind == SPT_INT && key->u.i >= 1 && key->u.i <= (int64_t)f->n ? (long)(key->u.i - 1) : -1;
	if (f->n <= FUN_SCAN_MAX)
		return fun_scan(f, key);
	uint32_t lo = 0, hi = f->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = spt_value_cmp(f->u.fn.keys[mid], key);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

spt_val *spt_rec_get(spt_val *r, const char *name)
{
	if (r->kind != SPT_REC)
		return NULL;
	size_t len = strlen(name);
	uint32_t lo = 0, hi = r->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		spt_val *k = r->u.fn.keys[mid];
		int c = cmp_bytes(k->u.s, k->n, name, (uint32_t)len);
		if (c == 0)
			return r->u.fn.vals[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long spt_set_find(spt_val *s, spt_val *x)
{
	if (s->kind != SPT_SET)
		return -1;
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = spt_value_cmp(s->u.elems[mid], x);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

uint64_t spt_hash_renamed(spt_val *v, const uint64_t *from, const uint64_t *to, uint32_t n)
{
	switch (v->kind) {
	case SPT_MODEL:
		for (uint32_t i = 0; i < n; i++)
			if (from[i] == v->hash)
				return to[i];
		return v->hash;
	case SPT_SET: {
		uint64_t h = size_term(VC_SET, v->n);
		for (uint32_t i = 0; i < v->n; i++)
			h += set_term(spt_hash_renamed(v->u.elems[i], from, to, n));
		return h;
	}
	case SPT_SEQ: {
		uint64_t h = size_term(VC_FUN, v->n);
		for (uint32_t i = 0; i < v->n; i++)
			h += kv_term(seq_key(i), spt_hash_renamed(v->u.elems[i], from, to, n));
		return h;
	}
	case SPT_REC:
	case SPT_FUN: {
		uint64_t h = size_term(VC_FUN, v->n);
		for (uint32_t i = 0; i < v->n; i++) {
			uint64_t hk = v->kind == SPT_REC ? v->u.fn.keys[i]->hash : spt_hash_renamed(v->u.fn.keys[i], from, to, n);
			h += kv_term(hk, spt_hash_renamed(v->u.fn.vals[i], from, to, n));
		}
		return h;
	}
	default:
		return v->hash;
	}
}
