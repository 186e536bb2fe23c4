/* The cfg's ALIAS on a counterexample's states (model_alias.c). */
#ifndef SPECTAP_REPLAY_MODEL_ALIAS_H
#define SPECTAP_REPLAY_MODEL_ALIAS_H

#include "search.h"

/* Sets r->trace[i].alias for each state of r's trace when the model has an ALIAS (and the
 * order its record constructor writes the fields in); 0, or -ENOMEM. */
int mc_alias_trace(struct search *S, struct mc_result *r, struct spt_arena *a);

#endif
