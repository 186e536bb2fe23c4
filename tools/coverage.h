/* Coverage of a corpus of traces through a mapping (docs/mapping.md): windows per action, and
 * events per code branch (the mapping's Branch(ev)) against the branches it lists (Branches).
 * Used by `spectap stat --coverage` and `spectap record ... --until-covered`. */
#ifndef SPECTAP_TOOLS_COVERAGE_H
#define SPECTAP_TOOLS_COVERAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

struct coverage {
	const char *map, *spec, *cfg;
	struct cli_counts windows;  /* per action */
	struct cli_counts branches; /* listed branches first (count 0 until seen), then others */
	size_t n_listed;            /* the first n_listed of branches are the mapping's Branches */
	bool listed_read;
	uint64_t traces;
};

/* map and spec are required (cfg may be NULL); the strings must outlive cv. */
void coverage_init(struct coverage *cv, const char *map, const char *spec, const char *cfg);
void coverage_fini(struct coverage *cv);
/* Adds one trace: its windows and branches. CLI_OK, or CLI_FAIL after reporting through c. */
int coverage_add(struct coverage *cv, struct cli *c, const char *trace);
/* Listed branches with fewer than min events. */
size_t coverage_missing(const struct coverage *cv, uint64_t min);
/* A table, or with json one object: {"traces","windows":{A:n},"branches":{B:n},"listed":[...],
 * "missing":[...],"min":N,"complete":bool}. */
void coverage_print(const struct coverage *cv, uint64_t min, bool json, FILE *f);

#endif
