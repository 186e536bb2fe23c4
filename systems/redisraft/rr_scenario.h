/*
 * RedisRaft scenarios: what `spectap record redisraft --scenario NAME` does to a formed cluster,
 * reproducible from the seed (it picks the paused follower and the random faults). Writes are
 * INCRs sent to the leader with redis-cli in batches of 20.
 *
 *   initial-election  the cluster as formed: s1 leads its single-node cluster, the others join
 *   steady-writes     200 writes
 *   leader-kill       40 writes; SIGKILL the leader; a new leader in a higher term; 40 writes
 *   follower-pause    40 writes; SIGSTOP a follower for 3 s while 40 more; SIGCONT
 *   leader-restart    40 writes; SIGKILL the leader; a new leader; restart the old one on its
 *                     dir; it follows; 40 writes
 *   random            3 seeded faults (kill+restart or pause+resume of a seeded node), writes
 *
 * Every scenario ends when the cluster is quiet (every live node names the same leader and
 * term and has applied what the leader committed, twice in a row) and reads each node's INFO
 * raft into final[].
 */
#ifndef SPECTAP_REDISRAFT_SCENARIO_H
#define SPECTAP_REDISRAFT_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "rr_cluster.h"

#define RR_SCENARIOS "initial-election, steady-writes, leader-kill, follower-pause, leader-restart, random"

struct rr_scenario {
	struct rr_cluster *cl;
	uint64_t seed;
	void (*phase)(void *ctx, const char *what);
	void *ctx;
	/* Results */
	int first_leader, last_leader; /* node indexes */
	int64_t first_term, last_term;
	unsigned writes_acked, writes_failed;
	unsigned writes_unacked; /* sent to a leader that could not commit them (leader-restart) */
	struct rr_info final[RR_MAX_NODES];
	char err[RR_ERR_SIZE + 128];
};

bool rr_scenario_known(const char *name);
int rr_scenario_run(struct rr_scenario *s, const char *name);

#endif
