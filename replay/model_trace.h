/* Internal to the model checker: rebuilding the shortest behaviour to the error found. */
#ifndef SPECTAP_REPLAY_MODEL_TRACE_H
#define SPECTAP_REPLAY_MODEL_TRACE_H

#include "search.h"

/* Fills r->trace (values in a) with the path to S's error. 0, or -1 with why (the trace as far
 * as it got is kept). */
int mc_trace_build(struct search *S, struct mc_result *r, struct spt_arena *a, char *why, size_t why_size);

/* Enumerates Next from state with the diagnosis on: d says why no successor came out (its
 * deepest false guard), depth -1 when none was false. -1 with why when evaluating failed. */
int mc_trace_diagnose(struct search *S, spt_val **state, struct en_diag *d, char *why, size_t why_size);

/* --states: the successor of state closest to the trace's state line (fewest of its variables
 * differ), into t's diffs (n_diffs -1: no successor). -1 with why when evaluating failed. */
int mc_trace_closest(struct search *S, spt_val **state, const struct mc_line *line, struct mc_trace_outcome *t,
		     char *why, size_t why_size);

/* TLCExt's Trace evaluated by worker w (its interpreter's current state): the behaviour from an
 * initial state to it, as a tuple of records of the variables, in ev's arena. */
int mc_trace_current(struct worker *w, struct ev *ev, const struct ast *at, spt_val **out);

#endif
