/*
 * SYMMETRY: the group of model-value permutations a cfg's symmetry set generates (TLC takes the
 * closure of the given permutations under composition), and permuting values by one.
 */
#ifndef SPECTAP_REPLAY_SYMMETRY_H
#define SPECTAP_REPLAY_SYMMETRY_H

#include "interp.h"

/* The avalanche that fingerprints of states use, in the search (bfs.c) and for the permuted
 * states of a symmetry (symmetry.c): both must compute the same fingerprint for a state. */
static inline uint64_t fp_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

struct sym_group {
	spt_val **mv;      /* the model values permuted, sorted */
	uint32_t n_mv;
	uint32_t *perms;   /* n_perms rows of n_mv indices into mv: mv[i] goes to mv[perm[i]] */
	uint32_t n_perms;  /* the identity included (row 0) */
	uint64_t *mv_hash; /* the hash of each of mv */
	uint64_t *to_hash; /* n_perms rows: the hash of what mv[i] goes to */
	/* When the group is every permutation of each of its classes (Permutations(A) \cup
	 * Permutations(B)...), the fingerprint tries only the permutations that order each class by
	 * how its values appear in the state (sym_full). */
	bool full;
	uint32_t *cls;     /* class of each mv */
	uint32_t n_cls;
};

/* Evaluates the symmetry definition d (a set of permutations: functions from model values to
 * model values) and closes it. 0, or EVAL_ERR with the message in in->ev. */
int sym_group_build(struct interp *in, const struct opdef *d, struct spt_arena *a, struct sym_group *g);
/* v with its model values permuted by row p of g, built in a; NULL when out of memory. */
spt_val *sym_apply(struct spt_arena *a, const struct sym_group *g, uint32_t p, spt_val *v);

/* A fingerprint of v's orbit under g: the same for every state a permutation of g maps v to. */
uint64_t sym_fingerprint(const struct sym_group *g, spt_val *const *vals, uint32_t n);

#endif
