/*
 * fold: a TLA+ operator folded over a stream of values, with an accumulator that lives from one
 * value to the next: Step(x, acc) == [acc |-> ..., out |-> ...], acc starting as Init. The
 * harness turns probe hits into events this way (a system's events module, docs/adding-a-system.md);
 * it knows no particular system.
 *
 * Memory stays flat over a stream of any length: the accumulator lives in an arena that is
 * compacted (its live parts copied into a fresh one) whenever it has doubled; everything a step
 * builds beside it is given back at the next step.
 */
#ifndef SPECTAP_REPLAY_FOLD_H
#define SPECTAP_REPLAY_FOLD_H

#include "check.h"

struct fold;

/* Loads module and its definitions init (no parameters), step (two) and, when end is not NULL
 * and the module defines it, end (one: End(acc), what is left to say when the stream ends). */
int fold_new(const char *module, const char *init, const char *step, const char *end, struct fold **out,
	     struct check_error *err);
void fold_free(struct fold *f);

/* The arena to build the next input in: valid until the step after the next. */
struct spt_arena *fold_begin(struct fold *f);
/* One step: *out (Step's out, or NULL when the record has none) valid until the next
 * fold_begin. -EINVAL with err when Step fails or gives something else than a record with acc. */
int fold_step(struct fold *f, spt_val *x, spt_val **out, struct check_error *err);
/* End(acc) into *out (valid until the next fold_begin); 1 when the module defines no End. */
int fold_end(struct fold *f, spt_val **out, struct check_error *err);
/* The interpreter, to show values in messages. */
struct interp *fold_interp(struct fold *f);

#endif
