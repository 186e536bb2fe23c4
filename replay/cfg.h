/* TLC model configuration files (.cfg): constants, Init/Next or SPECIFICATION, invariants. */
#ifndef SPECTAP_REPLAY_CFG_H
#define SPECTAP_REPLAY_CFG_H

#include "module.h"

struct cfg_const {
	const char *name;      /* interned */
	spt_val *value;        /* CONSTANT N = value (model values for bare names) */
	const char *op;        /* CONSTANT N <- Op */
	const char *module;    /* N <- [Mod] Op, N = [Mod] v: the module whose definition N is meant */
	uint32_t line;
};

/* A list keyword's names (INVARIANTS, PROPERTIES, CONSTRAINTS, ...), with their lines. */
struct cfg_names {
	const char **names;
	uint32_t *lines;
	uint32_t n;
};

struct cfg {
	const char *path;
	char *text;            /* the file's text */
	size_t text_len;
	struct cfg_const *consts;
	uint32_t n_consts;
	const char *init, *next, *spec; /* interned; NULL when absent */
	const char *view, *symmetry, *alias;
	uint32_t init_line, next_line, spec_line, view_line, symmetry_line, alias_line;
	const char **invariants;
	uint32_t n_invariants;
	uint32_t *invariant_lines;
	struct cfg_names properties, constraints, action_constraints, postconditions;
	int check_deadlock;    /* -1 not given (TLC checks), 0 FALSE, 1 TRUE */
};

/* Parses path; names are interned in s, values built in its arena. 0 or -EINVAL with err. */
int cfg_load(struct spec *s, const char *path, struct cfg *out, struct spec_error *err);
void cfg_free(struct cfg *c);

#endif
