#include "spectap/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK_MIN (64u * 1024u)
#define ARENA_ALIGN 16u

struct spt_arena_block {
	struct spt_arena_block *next;
	size_t size; /* usable bytes after the header */
	_Alignas(16) unsigned char data[];
};

void spt_arena_init(struct spt_arena *a)
{
	a->cur = a->end = NULL;
	a->head = NULL;
	a->spare = NULL;
	a->bytes = 0;
	a->tag = 0;
	a->rewinds = 0;
}

static void free_chain(struct spt_arena_block *b)
{
	while (b) {
		struct spt_arena_block *next = b->next;
		free(b);
		b = next;
	}
}

void spt_arena_fini(struct spt_arena *a)
{
	unsigned char tag = a->tag;
	free_chain(a->head);
	free_chain(a->spare);
	spt_arena_init(a);
	a->tag = tag;
}

void spt_arena_reset(struct spt_arena *a)
{
	/* Keep the blocks; move all of them to the spare list. */
	while (a->head) {
		struct spt_arena_block *b = a->head;
		a->head = b->next;
		b->next = a->spare;
		a->spare = b;
	}
	a->cur = a->end = NULL;
	a->bytes = 0;
	a->rewinds++;
}

void spt_arena_rewind(struct spt_arena *a, struct spt_arena_mark m)
{
	while (a->head && a->head != m.head) {
		struct spt_arena_block *b = a->head;
		a->head = b->next;
		b->next = a->spare;
		a->spare = b;
	}
	a->cur = m.cur;
	a->end = m.end;
	a->bytes = m.bytes;
	a->rewinds++;
}

void spt_arena_trim(struct spt_arena *a, size_t keep)
{
	size_t kept = 0;
	struct spt_arena_block **pp = &a->spare;
	while (*pp) {
		if (kept + (*pp)->size <= keep) {
			kept += (*pp)->size;
			pp = &(*pp)->next;
			continue;
		}
		struct spt_arena_block *b = *pp;
		*pp = b->next;
		free(b);
	}
}

static struct spt_arena_block *take_block(struct spt_arena *a, size_t need)
{
	struct spt_arena_block **pp = &a->spare;
	while (*pp) {
		struct spt_arena_block *b = *pp;
		if (b->size >= need) {
			*pp = b->next;
			return b;
		}
		if (need > ARENA_BLOCK_MIN && b->size > ARENA_BLOCK_MIN) {
			/* A big spare too small for a big request: a value that grows (a log rebuilt
			 * one entry longer each time) would leave one behind per rebuild, each walked
			 * past ever after (the etcd shaper spent 90% of its time here at 30,000 entries). */
			*pp = b->next;
			free(b);
			continue;
		}
		pp = &b->next;
	}
	/* A big block with room to grow, so that the next, slightly bigger request of a growing
	 * value fits it once it is spare. */
	size_t size = need > ARENA_BLOCK_MIN ? need + need / 4 : ARENA_BLOCK_MIN;
	if (size < need)
		size = need;
	struct spt_arena_block *b = malloc(sizeof(*b) + size);
	if (!b)
		return NULL;
	b->size = size;
	return b;
}

void *spt_arena_alloc_slow(struct spt_arena *a, size_t size)
{
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (need < size)
		return NULL;
	struct spt_arena_block *b = take_block(a, need);
	if (!b)
		return NULL;
	b->next = a->head;
	a->head = b;
	a->bytes += b->size;
	if (need > ARENA_BLOCK_MIN / 4)
		return b->data; /* a big one gets a block of its own; keep filling the current one */
	/* The rest of the new block serves the next allocations; the old block's tail is given up. */
	a->cur = (char *)b->data + need;
	a->end = (char *)b->data + b->size;
	return b->data;
}

void *spt_arena_memdup(struct spt_arena *a, const void *p, size_t size)
{
	void *q = spt_arena_alloc(a, size ? size : 1);
	if (q && size)
		memcpy(q, p, size);
	return q;
}

char *spt_arena_strndup(struct spt_arena *a, const char *s, size_t len)
{
	char *q = spt_arena_alloc(a, len + 1);
	if (!q)
		return NULL;
	memcpy(q, s, len);
	q[len] = '\0';
	return q;
}
