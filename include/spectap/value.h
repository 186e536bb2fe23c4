/*
 * TLA+-shaped values: booleans, 64-bit integers, strings, model values, finite sets and
 * functions. Records and sequences are functions too (domain: strings, resp. 1..n), as in TLA+.
 *
 * Values are immutable and live in an arena. Constructors put every value in canonical form
 * (sets sorted without duplicates, functions sorted by key, a function whose domain is 1..n
 * becomes a sequence, one whose keys are all strings becomes a record), so structural equality
 * is TLA+ equality, and order and hash agree with it. The one representation choice left is
 * the empty function, which compares equal as <<>>, [] or an empty map: its kind only says how
 * it was written, so that it can be written back the same way.
 */
#ifndef SPECTAP_VALUE_H
#define SPECTAP_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spectap/arena.h"

enum spt_kind {
	SPT_BOOL = 1,
	SPT_INT,
	SPT_STR,
	SPT_MODEL, /* a TLC model value: equal only to itself */
	SPT_SET,
	SPT_SEQ,   /* function with domain 1..n */
	SPT_REC,   /* function whose domain is a set of strings */
	SPT_FUN,   /* any other function */
};

/* Representation hints: never change equality, order or hash. */
enum spt_hint {
	SPT_HINT_NONE = 0,
	SPT_HINT_NUMBER = 1, /* SPT_STR holding a non-integer JSON number's text, e.g. "1.5" */
};

struct spt_value {
	uint8_t kind;
	uint8_t hint;
	uint8_t gen;   /* the tag of the arena it was built in (SPT_GEN_STATIC: never freed) */
	uint32_t n;    /* string bytes, set/sequence elements, or function pairs */
	uint64_t hash; /* computed at construction; composites sum one term per element, so that
			* replacing, adding or removing one element updates it in O(1) */
	union {
		bool b;
		int64_t i;
		const char *s; /* SPT_STR, SPT_MODEL: n bytes, NUL-terminated */
		const struct spt_value *const *elems; /* SPT_SET (sorted), SPT_SEQ */
		struct {
			const struct spt_value *const *keys; /* sorted; all SPT_STR for SPT_REC */
			const struct spt_value *const *vals;
			/* Hint, SPT_REC only: the fields in the order they were written (order[i] is
			 * the canonical index of the i-th written field), or NULL for canonical. */
			const uint32_t *order;
		} fn;
	} u;
};

typedef const struct spt_value spt_val;

/* The gen of values that live for the whole process (small integers, booleans). */
#define SPT_GEN_STATIC 255

/* Constructors return NULL when out of memory (and, for functions, on duplicate keys). */
spt_val *spt_bool(struct spt_arena *a, bool b);
spt_val *spt_int(struct spt_arena *a, int64_t i);
spt_val *spt_str(struct spt_arena *a, const char *s, size_t len);
spt_val *spt_cstr(struct spt_arena *a, const char *s);
spt_val *spt_number_text(struct spt_arena *a, const char *s, size_t len);
spt_val *spt_model(struct spt_arena *a, const char *name);
/* Copies and sorts; duplicates are dropped. */
spt_val *spt_set(struct spt_arena *a, spt_val *const *elems, size_t n);
spt_val *spt_seq(struct spt_arena *a, spt_val *const *elems, size_t n);
/* Copies, sorts by key and normalizes to a sequence or record where the domain allows.
 * Returns NULL with *dup set when two keys are equal. */
spt_val *spt_fun(struct spt_arena *a, spt_val *const *keys, spt_val *const *vals, size_t n,
		 bool *dup);
/* Like spt_fun and spt_seq, but the arrays, allocated in a for this value alone, become the
 * value's own instead of being copied (decoders build them exactly so). */
spt_val *spt_fun_adopt(struct spt_arena *a, spt_val **keys, spt_val **vals, size_t n, bool *dup);
spt_val *spt_seq_adopt(struct spt_arena *a, spt_val **elems, size_t n);
/* A record from string keys strictly increasing in canonical order (the caller checked; no
 * duplicate) and their values: adopts both arrays, the values' allocated in a for this value
 * alone (the keys' may be shared: no one changes a function's keys). */
spt_val *spt_rec_adopt_sorted(struct spt_arena *a, spt_val **keys, spt_val **vals, size_t n);
/* spt_seq_adopt of the elements of a copy of `like` (equal to it element for element): its hash
 * is like's, not computed again. */
spt_val *spt_seq_adopt_copy(struct spt_arena *a, spt_val **elems, spt_val *like);
/* Like spt_fun, and a record remembers the order in which its keys were given. */
spt_val *spt_fun_ordered(struct spt_arena *a, spt_val *const *keys, spt_val *const *vals, size_t n,
			 bool *dup);
/* The same record with the written-order hint set to order (a permutation of 0..n-1, copied;
 * NULL order: canonical). Returns NULL when order is not a permutation. */
spt_val *spt_rec_with_order(struct spt_arena *a, spt_val *rec, const uint32_t *order);
/* A record from field names. Returns NULL on a duplicate name or out of memory. */
spt_val *spt_rec(struct spt_arena *a, const char *const *names, spt_val *const *vals, size_t n);
/* The empty function written as [] (record), <<>> (sequence) or a map. */
spt_val *spt_empty_fun(struct spt_arena *a, enum spt_kind how);

/* Deep copy into another arena. */
spt_val *spt_value_clone(struct spt_arena *a, spt_val *v);
/* Copy into a: parts already in a (gen == a->tag, a nonzero tag) or static are shared, not
 * copied. */
spt_val *spt_value_move(struct spt_arena *a, spt_val *v);
/* The same, and parts in arenas tagged keep[0] or keep[1] (nonzero) are shared too; with a
 * budget, NULL once more than *budget elements would be copied (what was copied is left in a). */
spt_val *spt_value_move_keep(struct spt_arena *a, spt_val *v, const unsigned char keep[2], size_t *budget);

/* One-element updates: O(1) hash, one copy of the element array. NULL when out of memory.
 * Replace the i-th element (0-based) of a sequence, or the value at f's i-th key. */
spt_val *spt_seq_set(struct spt_arena *a, spt_val *s, uint32_t i, spt_val *v);
spt_val *spt_fun_set(struct spt_arena *a, spt_val *f, uint32_t i, spt_val *v);
/* The same in place, on a value the caller built and no one else holds yet (a copy that
 * spt_fun_set just returned): a multi-update EXCEPT copies once. */
void spt_fun_set_owned(spt_val *f, uint32_t i, spt_val *v);
/* <<s[1], ..., s[n], v>>; s a sequence or an empty function. */
spt_val *spt_seq_append(struct spt_arena *a, spt_val *s, spt_val *v);
/* s \cup {x} and s \ {x}. */
spt_val *spt_set_insert(struct spt_arena *a, spt_val *s, spt_val *x);
spt_val *spt_set_remove(struct spt_arena *a, spt_val *s, spt_val *x);
/* A set from elements already sorted and distinct (checked in debug builds only); adopts the
 * array. */
spt_val *spt_set_adopt_sorted(struct spt_arena *a, spt_val **elems, size_t n);

/* Total order consistent with equality; -1, 0 or 1. */
int spt_value_cmp(spt_val *x, spt_val *y);
bool spt_value_eq(spt_val *x, spt_val *y);
static inline uint64_t spt_value_hash(spt_val *v) { return v->hash; }

static inline bool spt_is_fun(spt_val *v)
{
	return v->kind == SPT_SEQ || v->kind == SPT_REC || v->kind == SPT_FUN;
}
/* A function's i-th key in canonical order; a sequence's keys are built in *tmp. */
spt_val *spt_fun_key(spt_val *f, uint32_t i, struct spt_value *tmp);
static inline spt_val *spt_fun_val(spt_val *f, uint32_t i)
{
	return f->kind == SPT_SEQ ? f->u.elems[i] : f->u.fn.vals[i];
}
/* f[key], or NULL when key is outside the domain (or f is no function). */
spt_val *spt_fun_apply(spt_val *f, spt_val *key);
/* The position of key among f's keys (0-based), or -1 when it is outside f's domain. */
long spt_fun_index(spt_val *f, spt_val *key);
/* r.name for a record, or NULL. */
spt_val *spt_rec_get(spt_val *r, const char *name);
/* Index of x in a set, or -1. */
long spt_set_find(spt_val *s, spt_val *x);

/* TLA+ notation: [a |-> 1], <<1, 2>>, {1, 2}, (1 :> "a" @@ 2 :> "b"), TRUE, "s". */
int spt_value_print(FILE *f, spt_val *v);

/* Hashing helpers shared with other value users. */
uint64_t spt_hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t spt_hash_mix(uint64_t h, uint64_t x);
/* The hash v would have with every model value whose hash is from[i] renamed to the one whose
 * hash is to[i] (symmetry: the fingerprint of a permuted state, without building it). */
uint64_t spt_hash_renamed(spt_val *v, const uint64_t *from, const uint64_t *to, uint32_t n);
/* The hash an SPT_STR value of these bytes carries. */
uint64_t spt_str_hash(const char *s, size_t n);

#endif
