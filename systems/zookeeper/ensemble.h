/*
 * A ZooKeeper (3.8) ensemble on 127.0.0.1 for tests and captures, run by the generic supervisor
 * (collector/supervise.h): N servers named zk1..zkN with myid 1..N. Server i (0-based) has client
 * port base + 3i, quorum port base + 3i + 1 and election port base + 3i + 2; its files are under
 * <work>/zkK/: zoo.cfg, data/ (with myid), and <work>/zkK.log holds its stdout and stderr.
 *
 * Each server is Debian's unmodified ZooKeeper run as
 *   java [-agentpath:AGENT=node=K[,out=<work>/zkK.agent.ndjson][,OPTIONS]] [jvm args]
 *        -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar
 *        org.apache.zookeeper.server.quorum.QuorumPeerMain <work>/zkK/zoo.cfg
 * with admin.enableServer=false, 4lw.commands.whitelist=*, clientPortAddress=127.0.0.1 and
 * standaloneEnabled=false (so that even one server runs leader election).
 *
 * A server's own view is asked with the four-letter word `srvr` on its client port (a small TCP
 * client here). srvr does not say whom a follower follows, so "agreed" means: one server says
 * leader, and a quorum of servers (it included) serve as leader or follower in the leader's epoch
 * (the high 32 bits of the zxid they report; a follower only serves once synced with its leader).
 *
 * Facts relied on (docs/facts.md): a leader about 1.4 s after launch; after a SIGKILL of the
 * leader the others re-elect in about 250 ms.
 *
 * Functions return 0 or a negative errno and write a message naming what failed into e->err.
 */
#ifndef SPECTAP_ZK_ENSEMBLE_H
#define SPECTAP_ZK_ENSEMBLE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/programs.h"
#include "supervise.h"

#define ZK_MAX_SERVERS 9
#define ZK_ERR_SIZE 1024
/* What the ensemble runs and reads (zk_programs.c). */
enum { ZK_PROG_JAVA, ZK_PROG_JAR, ZK_PROG_SLF4J, ZK_N_PROGS };
extern const struct spt_program zk_programs[ZK_N_PROGS + 1];
#define ZK_DEFAULT_JAVA (zk_programs[ZK_PROG_JAVA].path)
#define ZK_MAIN_CLASS "org.apache.zookeeper.server.quorum.QuorumPeerMain"

struct zk_ensemble_opts {
	const char *work_dir;       /* required; created when missing; must not hold zkK/ yet */
	unsigned servers;           /* 0: 3 */
	unsigned base_port;         /* 0: the first free block found from 21000 up */
	unsigned tick_ms;           /* tickTime; 0: 2000 */
	unsigned init_limit;        /* initLimit in ticks; 0: 10 */
	unsigned sync_limit;        /* syncLimit in ticks; 0: 5 */
	const char *java;           /* 0: ZK_DEFAULT_JAVA (zk_programs) */
	const char *classpath;      /* 0: ZK_DEFAULT_CLASSPATH */
	const char *agent;          /* a JVMTI agent (.so) loaded with -agentpath; 0: none */
	bool agent_out;             /* with an agent: out=<work>/zkK.agent.ndjson (one file per
				     * JVM run: the n-th restart writes zkK.agent.<n+1>.ndjson) */
	const char *agent_options;  /* with an agent: more options, appended after node=K[,out=..] */
	const char *const *jvm_args;/* more JVM arguments (NULL-terminated), before -cp; or 0 */
	unsigned grace_ms;          /* SIGTERM -> SIGKILL on stop; 0: 2000 */
	/* Called in this process right after server i's JVM is forked (at start and at each
	 * restart), before it can run any code of its own: a collector names the pid then. */
	void (*spawned)(void *ctx, unsigned server, int pid);
	void *spawned_ctx;
};

enum zk_mode {
	ZK_MODE_UNKNOWN = 0, /* no answer, or an answer without a Mode line */
	ZK_MODE_LEADER,
	ZK_MODE_FOLLOWER,
	ZK_MODE_OBSERVER,
	ZK_MODE_STANDALONE,
	ZK_MODE_READ_ONLY,
};

/* One server's answer to `srvr`. */
struct zk_srvr {
	bool reachable;          /* connected and got an answer */
	bool serving;            /* false: "not currently serving requests" (e.g. electing) */
	enum zk_mode mode;
	uint64_t zxid;           /* Zxid: 0x... */
	uint64_t epoch;          /* zxid >> 32 */
	int64_t node_count;      /* Node count; -1 when absent */
	char version[96];        /* "Zookeeper version: ..." after the colon */
};

struct zk_server {
	char name[8];            /* "zk1" */
	unsigned myid;           /* 1..N */
	unsigned client_port, quorum_port, election_port;
	char dir[PATH_MAX];      /* <work>/zkK */
	char data_dir[PATH_MAX]; /* <work>/zkK/data */
	char cfg_path[PATH_MAX]; /* <work>/zkK/zoo.cfg */
	char log_path[PATH_MAX]; /* <work>/zkK.log */
	char agent_out[PATH_MAX];/* the agent's file of the current (or last) run when
				  * opts.agent_out: <work>/zkK.agent.ndjson, then zkK.agent.2.ndjson
				  * after a restart, ...; else "" */
	unsigned runs;           /* JVM runs started so far */
	bool killed, paused;
	size_t proc;             /* index in the supervisor */
};

struct zk_ensemble {
	struct sup sup;
	unsigned n;
	unsigned base_port, tick_ms, init_limit, sync_limit;
	char work_dir[PATH_MAX];
	char java[PATH_MAX];
	char classpath[PATH_MAX];
	char agent[PATH_MAX];
	char agent_options[512];
	char **jvm_args;         /* copy of opts.jvm_args (NULL-terminated) or NULL */
	struct zk_server s[ZK_MAX_SERVERS];
	void (*spawned)(void *ctx, unsigned server, int pid);
	void *spawned_ctx;
	uint64_t launched_ms;    /* sup_now_ms() when start() had started every server */
	bool started;
	char err[ZK_ERR_SIZE];
};

/* The agreed leader, as found by zk_ensemble_find_leader. */
struct zk_leader {
	int index;               /* server index (0-based), -1 when none */
	unsigned myid;
	uint64_t epoch, zxid;
	unsigned agree;          /* servers serving as leader or follower in that epoch (leader too) */
	unsigned reachable;      /* servers that answered srvr */
};

/* 0 when java (0: the default) runs and the ZooKeeper jar (0: /usr/share/java/zookeeper.jar)
 * is a readable file; otherwise a negative errno with a message in err (e.g. "apt-get install
 * zookeeper"). */
int zk_available(const char *java, const char *jar, char *err, size_t errsize);

/* Checks the ports, writes each server's zoo.cfg and myid, then starts every server (without
 * waiting for a leader). On failure nothing is left running; a busy port is named. */
int zk_ensemble_start(struct zk_ensemble *e, const struct zk_ensemble_opts *o);
/* Stops every server (SIGTERM, SIGKILL after the grace) and frees. Safe to call twice, and on an
 * ensemble whose start failed. */
void zk_ensemble_stop(struct zk_ensemble *e);

/* Sends a four-letter word (e.g. "srvr", "mntr") to 127.0.0.1:port and reads the answer until
 * the server closes (at most timeout_ms in all). *out is malloc'ed and NUL-terminated. 0, or
 * -ECONNREFUSED / -ETIMEDOUT / another negative errno with a message in err. */
int zk_four_letter(unsigned port, const char *word, unsigned timeout_ms, char **out, size_t *len,
		   char *err, size_t errsize);
/* Parses a `srvr` answer. 0, or -EINVAL when it is not one (err says why). */
int zk_parse_srvr(const char *text, size_t len, struct zk_srvr *out, char *err, size_t errsize);
/* `srvr` of server i (st->reachable false when it does not answer; killed or paused servers are
 * not asked). 1 when it answered, 0 when not, or a negative errno. */
int zk_ensemble_srvr(struct zk_ensemble *e, unsigned i, struct zk_srvr *st);
/* srvr of every server into st[e->n]; returns how many answered. */
int zk_ensemble_status(struct zk_ensemble *e, struct zk_srvr *st);

/* From statuses: the server that says leader with the highest epoch, and how many serve in its
 * epoch. 0 when that is a quorum of all servers (l filled), -EAGAIN otherwise (l->index may
 * still name a leader without a quorum, or be -1). */
int zk_ensemble_find_leader(const struct zk_ensemble *e, const struct zk_srvr *st,
			    struct zk_leader *l);

/* Waits until a leader agreed by a quorum of all servers exists with epoch > min_epoch (and, when
 * all_agree, every server neither killed nor paused serves in its epoch). *l (may be NULL) gets
 * it, *elapsed_ms (may be NULL) the time waited. -ETIMEDOUT with a message naming what each server
 * said last; -ECHILD when a server that should run has exited (its log named). */
int zk_ensemble_wait_leader(struct zk_ensemble *e, unsigned timeout_ms, uint64_t min_epoch,
			    bool all_agree, struct zk_leader *l, unsigned *elapsed_ms);

/* Faults. kill: SIGKILL and reap. pause/resume: SIGSTOP/SIGCONT. restart: a killed (or running:
 * it is killed first) server is started again on its data dir, with the same configuration. */
int zk_ensemble_kill(struct zk_ensemble *e, unsigned i);
int zk_ensemble_pause(struct zk_ensemble *e, unsigned i);
int zk_ensemble_resume(struct zk_ensemble *e, unsigned i);
int zk_ensemble_restart(struct zk_ensemble *e, unsigned i);
/* pid of server i, 0 when it is not running. */
int zk_ensemble_pid(struct zk_ensemble *e, unsigned i);
/* Waits up to timeout_ms for server i to exit by itself; *status gets its wait status. 0, or
 * -ETIMEDOUT when it still runs. */
int zk_ensemble_wait_exit(struct zk_ensemble *e, unsigned i, unsigned timeout_ms, int *status);

const char *zk_mode_name(enum zk_mode m);

#endif
