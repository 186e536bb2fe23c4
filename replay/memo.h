/*
 * The cache of applications of cacheable definitions (constant level, pure, doing real work:
 * resolve.c decides), keyed by the definition and its arguments' values: a mapping that rebuilds
 * the whole cluster view for every window re-evaluates only the parts whose inputs changed.
 *
 * Values live in two generations of arenas. A lookup that hits the older one moves the entry
 * into the current one; memo_collect, at points where nothing outside the cache holds its values
 * (between windows), drops the older generation when the current one has grown past its limit,
 * so memory stays bounded however long the trace.
 */
#ifndef SPECTAP_REPLAY_MEMO_H
#define SPECTAP_REPLAY_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/arena.h"
#include "spectap/value.h"

struct opdef;

struct memo_entry {
	const struct opdef *def; /* NULL: free slot */
	uint64_t key;
	uint32_t n;
	uint8_t gen;             /* 0 or 1: which arena holds its values; MEMO_PINNED: the pinned one */
	spt_val **args;
	spt_val *result;
};

struct memo {
	struct memo_entry *slots;
	uint32_t cap, count;
	struct spt_arena gen[2];
	uint8_t cur;             /* the current generation */
	unsigned char stable[2]; /* tags of arenas whose values outlive the entries (not copied) */
	/* Applications of constant-level definitions to arguments that live for the whole run
	 * (in arenas tagged constant[], or static) are pinned: kept once, never moved or dropped
	 * (a model's LimitedSeq(Values), a set of 488,000 sequences, looked up in every state). */
	unsigned char constant[3];
	struct spt_arena pinned;
	size_t pin_limit;
	size_t limit;            /* bytes of the current generation past which memo_collect drops the older */
	uint64_t hits, misses, collections;
};

void memo_init(struct memo *m, unsigned char tag0, unsigned char tag1, size_t limit);
void memo_fini(struct memo *m);
/* 1 with *out when d(args) is cached; 0 when not (or out of memory: the caller evaluates). */
int memo_lookup(struct memo *m, const struct opdef *d, spt_val *const *args, uint32_t n, spt_val **out);
/* Keeps d(args) = result (copied into the cache's arena); the copy is returned in *kept, so that
 * the caller hands out one value. 0, or -ENOMEM (nothing is kept; *kept = result). */
int memo_store(struct memo *m, const struct opdef *d, spt_val *const *args, uint32_t n, spt_val *result,
	       spt_val **kept);
/* Drops the older generation if the current one is past its limit. Only where no value handed
 * out by the cache is held (values that must survive were moved elsewhere). */
void memo_collect(struct memo *m);
/* Values in arenas of these tags are referenced, not copied: the owner calls memo_forget_stable
 * before it frees one of them. */
void memo_set_stable(struct memo *m, unsigned char tag_a, unsigned char tag_b);
void memo_forget_stable(struct memo *m);
/* Arenas whose values live as long as the memo (a model checker's constants): see pinned. */
void memo_set_constant(struct memo *m, unsigned char tag_a, unsigned char tag_b, unsigned char tag_c);
#define MEMO_PINNED 2
/* Bytes the cache's arenas hold. */
size_t memo_bytes(const struct memo *m);

#endif
