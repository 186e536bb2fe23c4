/* The string table of a JSON reader (json_strtab.h): open addressing, at most half full. */
#include "json_strtab.h"

#include "spectap/json.h"

#include <stdlib.h>

void json_strtab_init(struct json_strtab *t)
{
	memset(t, 0, sizeof(*t));
	spt_arena_init(&t->arena);
	t->arena.tag = SPT_GEN_JSON_READER;
}

void json_strtab_fini(struct json_strtab *t)
{
	free(t->slots);
	spt_arena_fini(&t->arena);
	memset(t, 0, sizeof(*t));
}

static int grow(struct json_strtab *t)
{
	uint32_t cap = t->slots ? (t->mask + 1) * 2 : 256;
	struct strtab_slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
		const struct strtab_slot *e = &t->slots[i];
		if (!e->v)
			continue;
		uint32_t j = (uint32_t)json_strtab_hash(e->w0, e->w1, e->n) & (cap - 1);
		while (s[j].v)
			j = (j + 1) & (cap - 1);
		s[j] = *e;
	}
	free(t->slots);
	t->slots = s;
	t->mask = cap - 1;
	return 0;
}

spt_val *json_strtab_add(struct json_strtab *t, struct spt_arena *a, const char *s, size_t n, uint64_t w0, uint64_t w1,
			 uint64_t h)
{
	if (n > STRTAB_MAX_LEN || t->count >= STRTAB_MAX_COUNT)
		return spt_str(a, s, n);
	if ((!t->slots || (t->count + 1) * 2 > t->mask + 1) && grow(t))
		return spt_str(a, s, n); /* no room for a bigger table: the value all the same */
	spt_val *v = spt_str(&t->arena, s, n);
	if (!v)
		return NULL;
	uint32_t j = (uint32_t)h & t->mask;
	while (t->slots[j].v)
		j = (j + 1) & t->mask;
	t->slots[j] = (struct strtab_slot){ w0, w1, (uint32_t)n, v };
	t->count++;
	return v;
}
