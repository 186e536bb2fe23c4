/* TLC model configuration files (.cfg): constants, Init/Next or SPECIFICATION, invariants. */
#ifndef SPECTAP_REPLAY_CFG_H
#define SPECTAP_REPLAY_CFG_H

#include "module.h"

struct cfg_const {
	const char *name;      /* interned */
	spt_val *value;        /* CONSTANT N = value (model values for bare names) */
	const char *op;        /* CONSTANT N <- Op */
	uint32_t line;
};

struct cfg {
	const char *path;
	struct cfg_const *consts;
	uint32_t n_consts;
	const char *init, *next, *spec; /* interned; NULL when absent */
	const char **invariants;
	uint32_t n_invariants;
};

/* Parses path; names are interned in s, values built in its arena. 0 or -EINVAL with err. */
int cfg_load(struct spec *s, const char *path, struct cfg *out, struct spec_error *err);
void cfg_free(struct cfg *c);

#endif
