/*
 * The model checker's set of states seen: 64-bit fingerprints, each with its predecessor's
 * (0 for an initial state), so that a counterexample can be rebuilt by replaying the path.
 * Safe for concurrent workers: the set is cut into segments, each with its own lock and table.
 */
#ifndef SPECTAP_REPLAY_FPSET_H
#define SPECTAP_REPLAY_FPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fpset;

/* NULL when out of memory. */
struct fpset *fpset_new(void);
void fpset_free(struct fpset *s);
/* fp must not be 0. 1 when fp was new (kept with parent), 0 when already there, -ENOMEM. */
int fpset_put(struct fpset *s, uint64_t fp, uint64_t parent);
/* Whether fp is there, and its predecessor. */
bool fpset_get(struct fpset *s, uint64_t fp, uint64_t *parent);
uint64_t fpset_size(struct fpset *s);
size_t fpset_bytes(struct fpset *s);

#endif
