/*
 * A RedisRaft cluster on 127.0.0.1 for captures, run by the generic supervisor
 * (collector/supervise.h): N redis-server processes named s1..sN, node i (0-based) on port
 * base + i with `--loadmodule MODULE --raft.id i+1 --raft.addr 127.0.0.1:PORT`, its own dir
 * <work>/sK (raft log, snapshot), log <work>/sK.log, persistence off (--save ''). Raft node ids
 * are 1..N so that node names and ids agree. Formed with RAFT.CLUSTER INIT on s1 and
 * RAFT.CLUSTER JOIN 127.0.0.1:<s1's port> on the others, one at a time.
 *
 * Each node's own view is `redis-cli -p PORT INFO raft` (raft_role, raft_current_term,
 * raft_commit_index, raft_leader_id, raft_voted_for, raft_current_index).
 * Functions return 0 or a negative errno and write a message into c->err.
 */
#ifndef SPECTAP_REDISRAFT_CLUSTER_H
#define SPECTAP_REDISRAFT_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "spectap/programs.h"
#include "supervise.h"

/* What the cluster runs (rr_programs.c). */
enum { RR_PROG_SERVER, RR_PROG_CLI, RR_N_PROGS };
extern const struct spt_program rr_programs[RR_N_PROGS + 1];

#define RR_MAX_NODES 9
#define RR_ERR_SIZE 768

struct rr_cluster_opts {
	const char *work_dir;     /* required; created when missing */
	const char *module;       /* the redisraft.so to load; required */
	unsigned nodes;           /* 0: 3 */
	unsigned base_port;       /* 0: the first free block from 21000 up */
	const char *redis_server; /* 0: rr_programs[RR_PROG_SERVER] */
	const char *redis_cli;    /* 0: rr_programs[RR_PROG_CLI] */
	unsigned election_ms;     /* 0: RedisRaft's default (1000) */
	/* Called with each node's pid as soon as it is forked (start and restart), before exec. */
	void (*spawned)(void *ctx, unsigned node, int pid);
	void *spawned_ctx;
};

/* One node's INFO raft. */
struct rr_info {
	bool reachable;
	char role[16];            /* raft_role: "leader", "follower", "candidate", "pre-candidate" */
	char state[16];           /* raft_state: "up", "loading", ... */
	int64_t node_id, leader_id, voted_for; /* -1: none */
	int64_t term, commit_index, current_index, applied_index;
};

struct rr_node {
	char name[8];             /* "s1" */
	unsigned port;
	char dir[PATH_MAX];
	char log_path[PATH_MAX];
	bool killed, paused;
	size_t proc;
};

struct rr_cluster {
	struct sup sup;
	unsigned n, base_port, election_ms;
	char work_dir[PATH_MAX], module[PATH_MAX], redis_cli[PATH_MAX];
	struct rr_node node[RR_MAX_NODES];
	void (*spawned)(void *ctx, unsigned node, int pid);
	void *spawned_ctx;
	bool started;
	char err[RR_ERR_SIZE];
};

/* Checks the ports, starts every node, waits until each answers PING, then INIT and JOINs.
 * On failure nothing is left running. */
int rr_cluster_start(struct rr_cluster *c, const struct rr_cluster_opts *o);
/* Stops every node and frees; safe twice and after a failed start. */
void rr_cluster_stop(struct rr_cluster *c);

/* Parses INFO raft text. */
int rr_parse_info(const char *text, struct rr_info *out, char *err, size_t errlen);
/* Node i's INFO raft: 1 (st filled), 0 when it did not answer, or a negative errno. */
int rr_cluster_info(struct rr_cluster *c, unsigned i, struct rr_info *st);

/* Waits until a live node leads in a term > min_term and (all_agree) every live node names it
 * with that term and has committed what the leader committed. *leader (index) and *term (may
 * be NULL) get it. -ETIMEDOUT with what was seen. */
int rr_cluster_wait_leader(struct rr_cluster *c, unsigned timeout_ms, int64_t min_term, bool all_agree,
			   int *leader, int64_t *term);

/* Faults: SIGKILL (reaped), SIGSTOP / SIGCONT, restart on its dir (rejoins by its log). */
int rr_cluster_kill(struct rr_cluster *c, unsigned i);
int rr_cluster_pause(struct rr_cluster *c, unsigned i);
int rr_cluster_resume(struct rr_cluster *c, unsigned i);
int rr_cluster_restart(struct rr_cluster *c, unsigned i);
int rr_cluster_pid(struct rr_cluster *c, unsigned i);
/* Sends one INCR of key to node i, which must not be able to commit it (its peers paused): the
 * client gives up after wait_ms. 0 when it did; -EPROTO if the write was answered. */
int rr_cluster_write_unacked(struct rr_cluster *c, unsigned i, const char *key, unsigned wait_ms);

/* n INCRs of key on node i in one redis-cli run (-r n): *acked counts integer replies, *failed
 * the rest (MOVED, errors, no reply). */
int rr_cluster_incr(struct rr_cluster *c, unsigned i, const char *key, unsigned n, unsigned *acked,
		    unsigned *failed);

#endif
