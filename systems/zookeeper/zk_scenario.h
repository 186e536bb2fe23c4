/*
 * ZooKeeper scenarios: what `spectap record zookeeper --scenario NAME` does to a running
 * ensemble, each reproducible from its seed (the seed picks the faulted servers and, for
 * random, the faults). "Agreed" is zk_ensemble_wait_leader with all_agree: one server leads
 * and every server neither killed nor paused serves in its epoch.
 *
 *   initial-election  wait until a leader is agreed
 *   leader-kill       then SIGKILL the leader; wait until the others agree on a new one
 *   leader-restart    leader-kill, then restart the old leader on its data dir; wait until it
 *                     serves (it rejoins as a follower)
 *   follower-pause    SIGSTOP a follower for syncLimit ticks + 1 s (the leader drops it), then
 *                     SIGCONT; wait until it serves again (it rejoins through an election)
 *   rolling-restart   restart every server in turn, followers first and the leader last,
 *                     waiting for agreement after each
 *   random            3 faults drawn from the seed: kill and restart a server, SIGKILL the
 *                     leader and restart it, or pause and resume a server, each followed by
 *                     agreement
 *
 * Every scenario ends when two answers of every live server in a row (300 ms apart) agree on
 * the leader and epoch, and keeps each server's last srvr answer. Fault durations are the
 * scenario's; results are waited on as conditions with timeouts (60 s each), never slept on.
 */
#ifndef SPECTAP_ZK_SCENARIO_H
#define SPECTAP_ZK_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "ensemble.h"

#define ZK_SCENARIOS "initial-election, leader-kill, leader-restart, follower-pause, rolling-restart, random, quorum-loss"

struct zk_scenario {
	struct zk_ensemble *e;
	uint64_t seed;
	void (*phase)(void *ctx, const char *what); /* progress, at each phase */
	void *ctx;
	/* Results */
	struct zk_leader first, last;           /* the first agreed leader, and the one at the end */
	unsigned first_ms;                      /* launch to the first agreed leader */
	unsigned elections;                     /* agreements waited for (the first included) */
	struct zk_srvr final[ZK_MAX_SERVERS];   /* at the end, per server (reachable: live) */
	char err[ZK_ERR_SIZE + 128]; /* what failed, then the ensemble's message */
};

bool zk_scenario_known(const char *name);
/* Runs the named scenario on a started ensemble. 0, or a negative errno with s->err. */
int zk_scenario_run(struct zk_scenario *s, const char *name);

#endif
