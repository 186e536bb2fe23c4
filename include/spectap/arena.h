/* Bump allocator: values and events are built in an arena and freed all at once. */
#ifndef SPECTAP_ARENA_H
#define SPECTAP_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct spt_arena_block;

struct spt_arena {
	char *cur, *end;                /* free space left in the block being filled */
	struct spt_arena_block *head;   /* block being filled */
	struct spt_arena_block *spare;  /* blocks kept by reset for reuse */
	size_t bytes;                   /* bytes in the blocks in use (head's chain) */
	unsigned char tag;              /* copied into the values built here (spt_value.gen) */
	uint32_t rewinds;               /* rewinds and resets so far: what was allocated before the
					 * last one may be gone (a cache checks it has not moved) */
};

/* A position to come back to: everything allocated after it is given back at once. */
struct spt_arena_mark {
	struct spt_arena_block *head;
	char *cur, *end;
	size_t bytes;
};

void spt_arena_init(struct spt_arena *a);
/* Frees every block. The arena may be reused after spt_arena_init. */
void spt_arena_fini(struct spt_arena *a);
/* Forgets every allocation but keeps the memory for the next ones. */
void spt_arena_reset(struct spt_arena *a);
void *spt_arena_alloc_slow(struct spt_arena *a, size_t size);
/* 16-byte aligned; NULL only when the system is out of memory. Inline: values are many. */
static inline void *spt_arena_alloc(struct spt_arena *a, size_t size)
{
	size_t need = (size + 15) & ~(size_t)15;
	if (need >= size && (size_t)(a->end - a->cur) >= need) {
		void *p = a->cur;
		a->cur += need;
		return p;
	}
	return spt_arena_alloc_slow(a, size);
}
static inline struct spt_arena_mark spt_arena_mark(const struct spt_arena *a)
{
	return (struct spt_arena_mark){ a->head, a->cur, a->end, a->bytes };
}
/* Forgets what was allocated since m (the blocks are kept for reuse). */
void spt_arena_rewind(struct spt_arena *a, struct spt_arena_mark m);
/* Frees spare blocks beyond keep bytes (after a large window, say). */
void spt_arena_trim(struct spt_arena *a, size_t keep);
void *spt_arena_memdup(struct spt_arena *a, const void *p, size_t size);
/* Copies len bytes and appends a NUL. */
char *spt_arena_strndup(struct spt_arena *a, const char *s, size_t len);

#endif
