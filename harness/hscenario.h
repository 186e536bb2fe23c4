/* scenario: runs a described scenario (desc_scenario) on a cluster: start, wait for a leader,
 * load, faults (kill, pause, restart, partition of the leader, a follower, a named node or the
 * node last struck; resume, heal), quiet and sleep. A scenario with a partition starts its nodes
 * in network namespaces. Every wait has a timeout and every choice comes from the seed, so a
 * scenario does the same work on every machine. It knows no particular system. */
#ifndef SPECTAP_HARNESS_SCENARIO_H
#define SPECTAP_HARNESS_SCENARIO_H

#include <stdint.h>

#include "hcluster.h"
#include "load.h"

struct hscenario {
	struct hcluster *c;
	const struct desc *d;
	const struct hcluster_opts *copts; /* for the start step */
	uint64_t seed;
	/* Optional: a progress line for each step; the count of events captured so far (quiet). */
	void (*phase)(void *ctx, const char *what);
	uint64_t (*events_so_far)(void *ctx);
	/* Optional: whether the capture has failed, checked after each step (the run stops). */
	bool (*failed)(void *ctx);
	void *ctx;
	/* Filled by the run. */
	bool started;
	long last_struck;     /* the node the last fault struck, or -1 */
	struct hload load;
	char err[HCLUSTER_ERR_SIZE];
};

/* Runs sc. 0, or -errno with s->err ("step N (line L): what"). The cluster stays up (the caller
 * compares the final state and stops it); s->started says whether it was started. */
int hscenario_run(struct hscenario *s, const struct desc_scenario *sc);
void hscenario_fini(struct hscenario *s);

#endif
