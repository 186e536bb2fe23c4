/* spectap check --tv: the benchmark's per-action wrapper modules, one search per window. */
#ifndef SPECTAP_TOOLS_CHECK_TV_H
#define SPECTAP_TOOLS_CHECK_TV_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

struct check_tv_opts {
	const char *module;      /* TV_A.tla */
	const char *cfg;         /* NULL: TV_A.cfg beside it */
	const char *windows;     /* NULL: windows_A.ndjson beside it (what the module reads) */
	const char *index_var;   /* the environment variable the module reads the window's index from */
	uint64_t max_failures, max_states;
	bool no_memo, allow_empty;
	const char *tlc_results; /* or NULL */
};

int check_tv(struct cli *c, const struct check_tv_opts *o);

#endif
