/* The string table of a JSON reader (spt_json_reader): the strings that recur across the texts
 * it reads (keys, server names, states) are built once, and every value read shares them. */
#ifndef SPECTAP_JSON_STRTAB_H
#define SPECTAP_JSON_STRTAB_H

#include <string.h>

#include "spectap/value.h"

/* Longer strings are rarely repeated; past the count the table is full. Either way a string
 * not in the table is built in the caller's arena, as without a table. */
#define STRTAB_MAX_LEN 64
#define STRTAB_MAX_COUNT 8192

struct strtab_slot {
	uint64_t w0, w1; /* the first 16 bytes, zeros past the string's end */
	uint32_t n;
	spt_val *v;      /* NULL: an empty slot */
};

struct json_strtab {
	/* The strings, for the table's lifetime, tagged SPT_GEN_JSON_READER: a value moved or
	 * memoized elsewhere copies them instead of sharing them. */
	struct spt_arena arena;
	struct strtab_slot *slots;
	uint32_t mask, count;
};

void json_strtab_init(struct json_strtab *t);
void json_strtab_fini(struct json_strtab *t);
/* The string of the n bytes at s (n <= STRTAB_MAX_LEN, w0 and w1 its first 16 as above): the
 * table's, added when new and there is room, else built in a. NULL when out of memory. */
spt_val *json_strtab_add(struct json_strtab *t, struct spt_arena *a, const char *s, size_t n, uint64_t w0, uint64_t w1,
			 uint64_t h);

static inline uint64_t json_strtab_hash(uint64_t w0, uint64_t w1, size_t n)
{
	uint64_t h = (w0 * 0x9e3779b97f4a7c15ULL) ^ (w1 * 0xc2b2ae3d27d4eb4fULL) ^ (n * 0x165667b19e3779f9ULL);
	return h ^ (h >> 29);
}

/* The table's string of these bytes, or json_strtab_add's. */
static inline spt_val *json_strtab_get(struct json_strtab *t, struct spt_arena *a, const char *s, size_t n, uint64_t w0,
				       uint64_t w1)
{
	uint64_t h = json_strtab_hash(w0, w1, n);
	if (t->slots)
		for (uint32_t j = (uint32_t)h & t->mask;; j = (j + 1) & t->mask) {
			const struct strtab_slot *e = &t->slots[j];
			if (!e->v)
				break;
			if (e->w0 == w0 && e->w1 == w1 && e->n == n && (n <= 16 || !memcmp(e->v->u.s + 16, s + 16, n - 16)))
				return e->v;
		}
	return json_strtab_add(t, a, s, n, w0, w1, h);
}

#endif
