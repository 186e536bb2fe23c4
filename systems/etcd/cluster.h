/*
 * An etcd (3.4) cluster on 127.0.0.1 for tests and captures, run by the generic supervisor
 * (collector/supervise.h): N members named n1..nN, member i (0-based) with peer port
 * base + 2i and client port base + 2i + 1, data dirs <work>/nK.etcd, logs <work>/nK.log,
 * --heartbeat-interval 100 --election-timeout 1000 by default, zap logger to stderr.
 *
 * State is read with `etcdctl endpoint status -w json` and parsed with spectap's JSON reader.
 * etcdctl prints member ids as bare decimal numbers up to 2^64-1, which neither an int64 nor a
 * double holds, so every bare integer is quoted before parsing and read back as an exact
 * uint64.
 *
 * Facts relied on (docs/facts.md): a leader about 0.4 s after launch; SIGTERM of the leader
 * transfers leadership without an election, so faults are SIGKILL and SIGSTOP.
 *
 * Functions return 0 or a negative errno and write a message into c->err.
 */
#ifndef SPECTAP_ETCD_CLUSTER_H
#define SPECTAP_ETCD_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise.h"

#define ETCD_MAX_MEMBERS 9
#define ETCD_ERR_SIZE 768

struct etcd_cluster_opts {
	const char *work_dir;   /* required; created when missing; must not hold nK.etcd yet */
	unsigned members;       /* 0: 3 */
	unsigned base_port;     /* 0: the first free block found from 20000 up */
	unsigned heartbeat_ms;  /* 0: 100 */
	unsigned election_ms;   /* 0: 1000 */
	const char *etcd;       /* 0: /usr/bin/etcd */
	const char *etcdctl;    /* 0: /usr/bin/etcdctl */
	unsigned grace_ms;      /* SIGTERM -> SIGKILL on stop; 0: 2000 */
};

/* One member's view, from `endpoint status`. Ids are exact uint64. */
struct etcd_member_status {
	bool reachable;         /* answered this query */
	uint64_t id;            /* header.member_id */
	uint64_t leader;        /* the leader it knows; 0: none */
	uint64_t term;          /* raftTerm */
	uint64_t raft_index;    /* raftIndex (last log index) */
	uint64_t applied_index; /* raftAppliedIndex */
	uint64_t revision;      /* header.revision */
	uint64_t cluster_id;
	char endpoint[64];
};

struct etcd_member {
	char name[8];           /* "n1" */
	unsigned peer_port, client_port;
	char data_dir[PATH_MAX];
	char log_path[PATH_MAX];
	uint64_t id;            /* learned from the first status that names it; 0: not yet */
	bool killed, paused;
	size_t proc;            /* index in the supervisor */
};

struct etcd_cluster {
	struct sup sup;
	unsigned n;
	unsigned base_port, heartbeat_ms, election_ms;
	char work_dir[PATH_MAX];
	char etcd[PATH_MAX], etcdctl[PATH_MAX];
	char initial_cluster[ETCD_MAX_MEMBERS * 48];
	struct etcd_member m[ETCD_MAX_MEMBERS];
	uint64_t launched_ms;   /* sup_now_ms() when the last member was started by start() */
	bool started;
	char err[ETCD_ERR_SIZE];
};

/* The agreed leader, as found by etcd_cluster_find_leader. */
struct etcd_leader {
	int index;              /* member index, -1 when unknown */
	uint64_t id, term;
	unsigned agree;         /* reachable members that name this leader with this term */
	unsigned reachable;
};

/* True when /usr/bin/etcd (or path) is an executable file. */
bool etcd_available(const char *path);

/* Checks the ports, then starts every member (without waiting for a leader). On failure nothing
 * is left running; a busy port is named ("port 20003 (n2 client) is busy"). */
int etcd_cluster_start(struct etcd_cluster *c, const struct etcd_cluster_opts *o);
/* Stops every member (SIGTERM, SIGKILL after the grace) and frees. Safe to call twice, and on a
 * cluster whose start failed. */
void etcd_cluster_stop(struct etcd_cluster *c);

/* "127.0.0.1:P,..." of the members not killed nor paused (or all, when all is true). */
void etcd_cluster_endpoints(const struct etcd_cluster *c, bool all, char *buf, size_t size);

/* Parses `etcdctl endpoint status -w json` output into at most max entries (*n set). */
int etcd_parse_status(const char *text, size_t len, struct etcd_member_status *out, size_t max,
		      size_t *n, char *err, size_t errsize);

/* One status per member (st[c->n]), from one etcdctl run against the members that are neither
 * killed nor paused; unreachable ones have reachable == false. Returns how many answered. */
int etcd_cluster_status(struct etcd_cluster *c, struct etcd_member_status *st);

/* From statuses: the leader named by the most reachable members with the highest term, if that
 * leader is itself reachable and names itself. 0 (l filled) or -EAGAIN (l->index = -1). */
int etcd_cluster_find_leader(const struct etcd_cluster *c, const struct etcd_member_status *st,
			     struct etcd_leader *l);

/* Waits until a leader agreed by a majority of all members (and, when all_agree, by every
 * member not killed nor paused) exists with term > min_term. *l (may be NULL) gets it,
 * *elapsed_ms (may be NULL) the time waited. -ETIMEDOUT with a message naming what was seen. */
int etcd_cluster_wait_leader(struct etcd_cluster *c, unsigned timeout_ms, uint64_t min_term,
			     bool all_agree, struct etcd_leader *l, unsigned *elapsed_ms);

/* Member index for a member id, or -1 (ids are learned by status queries). */
int etcd_cluster_member_of(const struct etcd_cluster *c, uint64_t id);

/* Faults. kill: SIGKILL and reap. pause/resume: SIGSTOP/SIGCONT. restart: a killed (or running:
 * it is killed first) member is started again on its data dir with --initial-cluster-state
 * existing. */
int etcd_cluster_kill(struct etcd_cluster *c, unsigned i);
int etcd_cluster_pause(struct etcd_cluster *c, unsigned i);
int etcd_cluster_resume(struct etcd_cluster *c, unsigned i);
int etcd_cluster_restart(struct etcd_cluster *c, unsigned i);
/* pid of member i, 0 when it is not running. */
int etcd_cluster_pid(struct etcd_cluster *c, unsigned i);

/* `etcdctl put key value` against the live members: 0 when etcdctl said OK. */
int etcd_cluster_put(struct etcd_cluster *c, const char *key, const char *value,
		     unsigned timeout_ms);

#endif
