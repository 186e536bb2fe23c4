/* spectap check --model (check_model.c). */
#ifndef SPECTAP_TOOLS_CHECK_MODEL_H
#define SPECTAP_TOOLS_CHECK_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "spectap/value.h"

struct check_model_opts {
	const char *spec, *cfg;
	unsigned workers;
	bool no_deadlock;   /* as TLC's -deadlock: a state without successors is no error */
	bool no_memo;
	uint64_t max_states; /* 0: no limit */
	bool trace_spec;    /* --trace-spec: verdict accepted / rejected at log line N */
	const char *states; /* --states: a JSON array of (partial) states, one per step */
	spt_val *states_val; /* or those states already read (states names where from) */
};

int check_model(struct cli *c, const struct check_model_opts *o);
/* --whole --map M FILE.spt: the mapping's windows as a state trace (check_whole.c). */
int check_whole_map(struct cli *c, const struct check_model_opts *o, const char *map, const char *trace);

#endif
