/*
 * An etcd (3.4) cluster on 127.0.0.1 for tests and captures, run by the generic supervisor
 * (collector/supervise.h): N members named n1..nN, member i (0-based) with peer port
 * base + 2i and client port base + 2i + 1, data dirs <work>/nK.etcd, logs <work>/nK.log,
 * --heartbeat-interval 100 --election-timeout 1000 by default, zap logger to stderr.
 *
 * With opts.netns, each member runs in its own network namespace (harness/netns.h) on
 * address 10.231.<k>.<i+1> instead of 127.0.0.1 (same ports), all joined by a bridge on which
 * the root namespace has 10.231.<k>.254, so etcdctl and load clients run from here as usual;
 * etcd_cluster_partition cuts a member off (its root-side veth down) and etcd_cluster_heal
 * puts it back. Members are started as `ip netns exec <ns> etcd ...`, which execs etcd in place:
 * etcd_cluster_pid is etcd's pid. The namespaces and links go on stop.
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

#include "spectap/programs.h"

/* What the cluster runs (etcd_programs.c). */
enum { ETCD_PROG_ETCD, ETCD_PROG_ETCDCTL, ETCD_N_PROGS };
extern const struct spt_program etcd_programs[ETCD_N_PROGS + 1];

#include "netns.h"
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
	bool netns;             /* each member in its own network namespace (needs root) */
	bool pre_vote;          /* --pre-vote (etcd 3.4's default is off) */
	/* Called with each member's pid as soon as it is forked (at start and restart), before
	 * etcd runs: a capture names the pid before the member's first probe hit. */
	void (*spawned)(void *ctx, unsigned member, int pid);
	void *spawned_ctx;
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
	char host[16];          /* its address: "127.0.0.1", or "10.231.k.i" with netns */
	unsigned peer_port, client_port;
	char data_dir[PATH_MAX];
	char log_path[PATH_MAX];
	uint64_t id;            /* learned from the first status that names it; 0: not yet */
	bool killed, paused;
	bool partitioned;       /* cut off by etcd_cluster_partition (netns only) */
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
	bool netns;             /* started with opts.netns: net holds the namespaces */
	bool pre_vote;
	void (*spawned)(void *ctx, unsigned member, int pid);
	void *spawned_ctx;
	struct netns_net net;
	unsigned loads;         /* putload runs started so far (they are named load1, ...) */
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

/* "H:P,..." of the members not killed, paused nor partitioned (or all, when all is true). */
void etcd_cluster_endpoints(const struct etcd_cluster *c, bool all, char *buf, size_t size);

/* Parses `etcdctl endpoint status -w json` output into at most max entries (*n set). */
int etcd_parse_status(const char *text, size_t len, struct etcd_member_status *out, size_t max,
		      size_t *n, char *err, size_t errsize);

/* One status per member (st[c->n]), from one etcdctl run against the members that are neither
 * killed, paused nor partitioned; unreachable ones have reachable == false. Returns how many
 * answered. */
int etcd_cluster_status(struct etcd_cluster *c, struct etcd_member_status *st);

/* Member i's own view, asked of it alone; with netns from inside its namespace, so a
 * partitioned member answers too. 1 (st filled), 0 when it did not answer (st->reachable
 * false), or a negative errno. */
int etcd_cluster_member_status(struct etcd_cluster *c, unsigned i, struct etcd_member_status *st);

/* From statuses: the leader named by the most reachable members with the highest term, if that
 * leader is itself reachable and names itself. 0 (l filled) or -EAGAIN (l->index = -1). */
int etcd_cluster_find_leader(const struct etcd_cluster *c, const struct etcd_member_status *st,
			     struct etcd_leader *l);

/* Waits until a leader agreed by a majority of all members (and, when all_agree, by every
 * member not killed, paused nor partitioned) exists with term > min_term. *l (may be NULL) gets it,
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

/* Network partition (netns clusters only; -EOPNOTSUPP otherwise): partition cuts member i off
 * from every other member and from this namespace (it keeps running and its term keeps rising);
 * heal reconnects it. Both idempotent. A partitioned member counts as not live for status,
 * endpoints, puts and wait_leader's all_agree. */
int etcd_cluster_partition(struct etcd_cluster *c, unsigned i);
int etcd_cluster_heal(struct etcd_cluster *c, unsigned i);

/* `etcdctl put key value` against the live members: 0 when etcdctl said OK. */
int etcd_cluster_put(struct etcd_cluster *c, const char *key, const char *value,
		     unsigned timeout_ms);

/* ---- put load (tools/go/putload) ----
 * putload runs under the cluster's supervisor (named load1, load2, ...; stopped by
 * etcd_cluster_stop), stdout and stderr to <work>/load<K>.log, each acked put as a JSON line
 * {"key":..,"rev":..,"ms":..} to <work>/load<K>.acked. Puts that fail (a member killed, no
 * leader) are counted, not retried, and the load goes on. */
struct etcd_load_opts {
	unsigned count;          /* puts to issue; 0: issue puts for duration_ms */
	unsigned duration_ms;    /* used when count is 0 */
	unsigned concurrency;    /* puts in flight; 0: 1 */
	unsigned rate;           /* puts per second, paced (latency from each put's slot); 0: unpaced */
	const char *prefix;      /* keys <prefix><i>, i from 0; 0: "load<K>-" */
	unsigned value_size;     /* bytes; 0: 16 */
	unsigned put_timeout_ms; /* each put; 0: 2000 */
	unsigned timeout_ms;     /* the whole run, then it is stopped; 0: count * put_timeout /
				  * concurrency (or duration + put_timeout) + 10 s */
	bool all_endpoints;      /* every member, not only the live ones at start */
};

/* putload's summary line. */
struct etcd_load_result {
	uint64_t puts, acked, failed;
	double seconds, per_second, p50_ms, p99_ms;
	char first_error[256];      /* the first failed put's error; "" when none failed */
	int status;                 /* putload's wait status */
	char acked_path[PATH_MAX];  /* the acked puts, JSON lines */
	char log_path[PATH_MAX];    /* putload's stdout and stderr */
};

/* A load started in the background. */
struct etcd_load {
	size_t proc;             /* in c->sup */
	unsigned id;             /* K of load<K> */
	bool running;
	uint64_t deadline_ms;    /* sup_now_ms() after which etcd_cluster_load_wait stops it */
	unsigned put_timeout_ms;
	char acked_path[PATH_MAX];
	char log_path[PATH_MAX];
};

/* Runs putload (the binary at putload_path) against the cluster and waits for it (at most
 * o->timeout_ms): 0 with *r filled from its summary, -ETIMEDOUT when it had to be stopped (*r
 * filled when it still printed its summary), -EIO when it failed to run (its log tail in c->err). */
int etcd_cluster_load(struct etcd_cluster *c, const char *putload_path,
		      const struct etcd_load_opts *o, struct etcd_load_result *r);
/* The same in two steps: start returns once putload runs; wait blocks until it ends (or its
 * deadline: then as etcd_cluster_load); stop ends it early (SIGTERM: in-flight puts count as
 * failed, the summary is still printed) and collects it. wait or stop once per load. */
int etcd_cluster_load_start(struct etcd_cluster *c, const char *putload_path,
			    const struct etcd_load_opts *o, struct etcd_load *l);
int etcd_cluster_load_wait(struct etcd_cluster *c, struct etcd_load *l,
			   struct etcd_load_result *r);
int etcd_cluster_load_stop(struct etcd_cluster *c, struct etcd_load *l,
			   struct etcd_load_result *r);
/* How many puts of a running (or collected) load were acknowledged so far (the lines of its
 * acked file), or a negative errno. */
int64_t etcd_cluster_load_acked(const struct etcd_load *l);
/* Fills r from the last {"puts":...} line of putload's output. 0, or -EINVAL/-ENOENT with err. */
int etcd_parse_load_summary(const char *text, size_t len, struct etcd_load_result *r, char *err,
			    size_t errsize);

#endif
