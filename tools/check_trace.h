/* spectap check --map on a trace (check_trace.c). */
#ifndef SPECTAP_TOOLS_CHECK_TRACE_H
#define SPECTAP_TOOLS_CHECK_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "check_report.h"

struct check_trace_opts {
	const char *map, *spec, *cfg;
	const char *const *paths; /* traces, or directories of .spt traces */
	size_t n_paths;
	uint64_t max_failures;
	unsigned jobs;   /* threads (parts of the trace); 0 or 1: one */
	bool no_memo;    /* --no-cache: evaluate every application (a debugging aid) */
	bool allow_empty; /* --allow-empty: no window (of some mapped action) is no failure */
	const char *tlc_results; /* --tlc-results: the totals also written there, or NULL */
};

int check_trace(struct cli *c, const struct check_trace_opts *o);

#endif
