/* spectap record SYSTEM --until-covered (tools/record_corpus.c). */
#ifndef SPECTAP_TOOLS_RECORD_CORPUS_H
#define SPECTAP_TOOLS_RECORD_CORPUS_H

#include <stdint.h>

#include "cli.h"

struct corpus_opts {
	const char *system, *scenario;
	const char *map, *spec, *cfg; /* the coverage mapping (cfg may be NULL) */
	const char *dir;              /* the corpus: one trace (and its --json summary) per run,
				       * and manifest.json */
	uint64_t seed, min;           /* the first seed (then seed+1, ...); events per branch */
	unsigned budget_s;            /* no new run starts after this many seconds */
	const char *const *pass;      /* more options for every run (NULL-terminated) */
};

/* CLI_OK when every listed branch was covered; CLI_FAIL (reported) otherwise. */
int record_until_covered(struct cli *c, const struct corpus_opts *o);

#endif
