/*
 * etcd scenarios: what `spectap record etcd --scenario NAME` does to a running cluster, each
 * reproducible from its seed (the seed picks the faulted member and, for random, the faults).
 *
 *   initial-election  wait for a leader agreed by every member
 *   steady-writes     then 300 puts, 4 in flight
 *   leader-kill       1000 puts, 2 in flight; after the first quarter are acknowledged
 *                     SIGKILL the leader, wait for a new one
 *   follower-pause    1000 puts; after a quarter, SIGSTOP a follower for 3 election timeouts
 *   leader-restart    1000 puts; after a quarter, SIGKILL the leader, wait for a new one,
 *                     restart the old one on its data dir, wait until it follows
 *   partition         (network namespaces, --pre-vote) 1000 puts; after a quarter, cut the
 *                     leader off, wait for a new leader among the others, heal, wait until all
 *                     agree
 *   random            (network namespaces) 2000 puts; a fault after each of the first three
 *                     quarters, drawn from the seed: kill+restart, pause+resume or cut+heal
 *
 * The work is bounded by operations (etcd_scenario.puts overrides the counts), never by time,
 * so a run does the same work on any machine: faults strike after a number of acknowledged
 * puts, and only a fault's own duration is a time.
 *
 * Every scenario ends by waiting until the cluster is quiet (every live member names the same
 * leader and term, and has applied what it committed, twice in a row) and reads each member's
 * final status. Timing is the scenario's (how long a fault lasts), never a wait for a result:
 * results are waited on as conditions with timeouts.
 */
#ifndef SPECTAP_ETCD_SCENARIO_H
#define SPECTAP_ETCD_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"

/* The puts of the fault scenarios (random: twice as many). */
#define ETCD_FAULT_PUTS 1000

#define ETCD_SCENARIOS "initial-election, steady-writes, leader-kill, follower-pause, leader-restart, partition, random"

struct etcd_scenario {
	struct etcd_cluster *cl;
	const char *putload;  /* the putload binary (tools/go/putload); NULL: scenarios without puts fail */
	uint64_t seed;
	unsigned puts;        /* puts of the scenario's load; 0: its default */
	/* Called at each phase (for progress). A restarted member's new pid reaches the capture
	 * through the cluster's own spawned callback (cluster.h). */
	void (*phase)(void *ctx, const char *what);
	void *ctx;
	/* Results */
	struct etcd_leader first, last;        /* the first leader, and the one at the end */
	bool has_load;
	struct etcd_load_result load;
	struct etcd_member_status final[ETCD_MAX_MEMBERS]; /* at the end, per member (reachable: live) */
	char err[1024];
};

bool etcd_scenario_known(const char *name);
/* Whether the scenario needs the members in network namespaces (partition, random). */
bool etcd_scenario_needs_netns(const char *name);
/* Whether the scenario runs etcd with --pre-vote (partition: a cut-off member campaigns with
 * pre-votes, so it does not disrupt the cluster when it comes back). */
bool etcd_scenario_pre_vote(const char *name);
/* Whether the scenario drives puts (needs putload). */
bool etcd_scenario_needs_load(const char *name);

/* Runs the named scenario on a started cluster. 0, or a negative errno with s->err. */
int etcd_scenario_run(struct etcd_scenario *s, const char *name);

#endif
