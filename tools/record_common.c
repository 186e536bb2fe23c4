/* The options every spectap record command shares; see record.h. */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "record.h"

int record_common_opt(struct cli *c, int opt, const char *arg, struct record_common *rc, unsigned min_nodes,
		      unsigned max_nodes)
{
	uint64_t v;
	switch (opt) {
	case 's': rc->scenario = arg; return 1;
	case 'o': rc->out = arg; return 1;
	case 'f': rc->force = true; return 1;
	case 'L': rc->allow_loss = true; return 1;
	case 'j': return 1; /* cli_begin saw it */
	case 'n':
		if (!cli_parse_u64(c, "--nodes", arg, &v))
			return -1;
		if (v < min_nodes || v > max_nodes) {
			cli_usage_error(c, "--nodes: %" PRIu64 " is not in %u..%u", v, min_nodes, max_nodes);
			return -1;
		}
		rc->nodes = (unsigned)v;
		return 1;
	case 'S':
		return cli_parse_u64(c, "--seed", arg, &rc->seed) ? 1 : -1;
	case 'T':
		if (!cli_parse_u64(c, "--log-terms", arg, &v))
			return -1;
		if (v < 1 || v > 1000000) {
			cli_usage_error(c, "--log-terms: %" PRIu64 " is not in 1..1000000", v);
			return -1;
		}
		rc->log_terms = (size_t)v;
		return 1;
	default: return 0;
	}
}

int record_common_check(struct cli *c, int argc, char **argv, const char *system, const struct record_common *rc,
			bool (*known)(const char *scenario), const char *scenarios)
{
	if (optind >= argc || strcmp(argv[optind], system))
		return cli_usage_error(c, "spectap record %s: the system must come first", system);
	if (optind + 1 != argc)
		return cli_usage_error(c, "unexpected argument '%s'", argv[optind + 1]);
	if (!rc->scenario)
		return cli_usage_error(c, "--scenario is required (%s)", scenarios);
	if (!known(rc->scenario))
		return cli_usage_error(c, "unknown scenario '%s' (known: %s)", rc->scenario, scenarios);
	return CLI_OK;
}
