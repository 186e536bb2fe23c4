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

static uint64_t hash_fun_start(uint32_t n) { return spt_hash_mix(VC_FUN, n); }

/* ---- scalars ---- */

static struct spt_value *new_value(struct spt_arena *a, enum spt_kind k)
{
	struct spt_value *v = spt_arena_alloc(a, sizeof(*v));
	if (v) {
		memset(v, 0, sizeof(*v));
		v->kind = (uint8_t)k;
	}
	return v;
}

spt_val *spt_bool(struct spt_arena *a, bool b)
{
	struct spt_value *v = new_value(a, SPT_BOOL);
	if (v) {
		v->u.b = b;
		v->hash = fmix64(spt_hash_mix(VC_BOOL, b));
	}
	return v;
}

spt_val *spt_int(struct spt_arena *a, int64_t i)
{
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
	uint64_t h = spt_hash_mix(VC_SET, m);
	for (size_t i = 0; i < m; i++)
		h = spt_hash_mix(h, copy[i]->hash);
	v->u.elems = copy;
	v->n = (uint32_t)m;
	v->hash = fmix64(h);
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
	uint64_t h = hash_fun_start((uint32_t)n);
	for (size_t i = 0; i < n; i++)
		h = spt_hash_mix(spt_hash_mix(h, seq_key(i)), elems[i]->hash);
	return fmix64(h);
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
		v->hash = fmix64(hash_fun_start(0));
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
	uint64_t h = hash_fun_start((uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		keys[i] = p[i].k;
		h = spt_hash_mix(spt_hash_mix(h, keys[i]->hash), vals[i]->hash);
	}
	v->u.fn.keys = keys;
	v->u.fn.vals = vals;
	v->n = (uint32_t)n;
	v->hash = fmix64(h);
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
	struct kv stackbuf[16];
	struct kv *p = n <= 16 ? stackbuf : malloc(n * sizeof(*p));
	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		p[i] = (struct kv){ keys[i], vals[i], (uint32_t)i };
	if (!sorted_unique(keys, n))
		qsort(p, n, sizeof(*p), cmp_kv);
	spt_val *r = NULL;
	for (size_t i = 1; i < n; i++) {
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
	uint64_t h = hash_fun_start((uint32_t)n);
	for (size_t i = 0; i < n; i++)
		h = spt_hash_mix(spt_hash_mix(h, keys[i]->hash), vals[i]->hash);
	v->u.fn.keys = keys;
	v->u.fn.vals = vals;
	v->n = (uint32_t)n;
	v->hash = fmix64(h);
	return v;
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
		if (plain)
			plain->u.fn.order = NULL;
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

spt_val *spt_value_clone(struct spt_arena *a, spt_val *v)
{
	struct spt_value *c = spt_arena_memdup(a, v, sizeof(*v));
	if (!c)
		return NULL;
	switch (v->kind) {
	case SPT_STR:
	case SPT_MODEL:
		if (!(c->u.s = spt_arena_strndup(a, v->u.s, v->n)))
			return NULL;
		break;
	case SPT_SET:
	case SPT_SEQ: {
		/* Scalar elements (a log's terms) go into one block: one allocation, not n. */
		uint32_t scalars = 0;
		for (uint32_t i = 0; i < v->n; i++)
			scalars += v->u.elems[i]->kind == SPT_INT || v->u.elems[i]->kind == SPT_BOOL;
		spt_val **e = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*e));
		struct spt_value *block = spt_arena_alloc(a, (scalars ? scalars : 1) * sizeof(*block));
		if (!e || !block)
			return NULL;
		for (uint32_t i = 0; i < v->n; i++) {
			spt_val *x = v->u.elems[i];
			if (x->kind == SPT_INT || x->kind == SPT_BOOL) {
				*block = *x;
				e[i] = block++;
			} else if (!(e[i] = spt_value_clone(a, x))) {
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
			if (!(k[i] = spt_value_clone(a, v->u.fn.keys[i])) ||
			    !(x[i] = spt_value_clone(a, v->u.fn.vals[i])))
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

/* ---- lookup ---- */

spt_val *spt_fun_apply(spt_val *f, spt_val *key)
{
	if (!spt_is_fun(f))
		return NULL;
	if (f->kind == SPT_SEQ) {
		if (key->kind != SPT_INT || key->u.i < 1 || key->u.i > (int64_t)f->n)
			return NULL;
		return f->u.elems[key->u.i - 1];
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
