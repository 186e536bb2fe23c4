/* spectap record SYSTEM --until-covered (tools/record_corpus.c). */
#ifndef SPECTAP_TOOLS_RECORD_CORPUS_H
#define SPECTAP_TOOLS_RECORD_CORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "record.h"

struct corpus_opts {
	const char *system, *scenario; /* scenario: one, or a comma-separated list */
	const char *map, *spec, *cfg; /* the coverage mapping (cfg may be NULL) */
	const char *dir;              /* the corpus: one trace (and its --json summary) per run,
				       * and manifest.json */
	uint64_t seed, min;           /* the first seed (then seed+1, ...); events per branch */
	unsigned budget_s;            /* no new run starts after this many seconds */
	const char *const *pass;      /* more options for every run (NULL-terminated) */
};

/* CLI_OK when every listed branch was covered; CLI_FAIL (reported) otherwise. */
int record_until_covered(struct cli *c, const struct corpus_opts *o);

/* What every record command takes for --until-covered: its options as given. */
struct corpus_args {
	bool until_covered;
	const char *map, *spec, *cfg;
	uint64_t min, budget_s; /* 0: the defaults, 1 event per branch and 600 s */
};

#define CORPUS_OPT_UNTIL 0x2200
#define CORPUS_OPT_MAP 0x2201
#define CORPUS_OPT_SPEC 0x2202
#define CORPUS_OPT_CFG 0x2203
#define CORPUS_OPT_MIN 0x2204
#define CORPUS_OPT_BUDGET 0x2205
#define CORPUS_LONGOPTS                                                                            \
	{ "until-covered", no_argument, NULL, CORPUS_OPT_UNTIL },                                  \
	{ "map", required_argument, NULL, CORPUS_OPT_MAP },                                        \
	{ "spec", required_argument, NULL, CORPUS_OPT_SPEC },                                      \
	{ "cfg", required_argument, NULL, CORPUS_OPT_CFG },                                        \
	{ "min", required_argument, NULL, CORPUS_OPT_MIN },                                        \
	{ "budget", required_argument, NULL, CORPUS_OPT_BUDGET }
#define CORPUS_HELP(what)                                                                          \
	"  --until-covered " what " [--min N] [--budget SECONDS]\n"                                \
	"                   seeded runs of the scenario from --seed on, one trace each (into the\n"   \
	"                   directory -o names, with manifest.json) until every branch the mapping\n" \
	"                   lists (Branches) has N events (default 1), or the budget (default 600 s)\n" \
	"                   is spent; then the coverage table. --scenario A,B,...: each is run\n"     \
	"                   once, then each run is of the one whose runs gave most of what is\n"      \
	"                   still missing, per second\n"

/* One getopt_long result: 1 when it was a --until-covered option (stored in a), 0 when it is
 * not, -1 after a usage message (return CLI_USAGE). */
int corpus_opt(struct cli *c, int opt, const char *arg, struct corpus_args *a);
/* After getopt: --map, --spec, --cfg, --min and --budget only with --until-covered, which
 * needs -o (the corpus directory). CLI_OK or CLI_USAGE (reported). */
int corpus_check(struct cli *c, const struct record_common *rc, const struct corpus_args *a);
/* The corpus loop for system with a's options: each run is `record SYSTEM` with --nodes,
 * --flush-ms/--flush-events, --log-terms and --allow-loss as rc has them, then extra (NULL-terminated, at
 * most 10 strings). Map, spec and cfg default to def_map, def_spec and def_cfg (each may be NULL). */
int corpus_run(struct cli *c, const struct record_common *rc, const char *system, const struct corpus_args *a,
	       const char *def_map, const char *def_spec, const char *def_cfg, const char *const *extra);

#endif
