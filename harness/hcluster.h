/* cluster: the nodes of a described system (desc.h) on 127.0.0.1, run by the generic supervisor
 * (collector/supervise.h): ports from a free block, each node's files written from the
 * description's templates, the command started, readiness and status asked as described, and
 * the faults (kill, pause, restart, partition). It knows no particular system.
 *
 * With opts.netns each node runs in a network namespace of its own around a bridge
 * (harness/netns.h; root only), at the address ${host} names (127.0.0.1 without), so that a
 * partition can cut it off and a heal reconnect it while it runs.
 *
 * Node i (0-based) is named by the description's nodes.name (n1..nN); its ports are
 * base + i * nports + k for the k-th port of the description. Logs go to DIR/<node>.log.
 * Functions return 0 or a negative errno with the reason in c->err. */
#ifndef SPECTAP_HARNESS_CLUSTER_H
#define SPECTAP_HARNESS_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "desc.h"
#include "netns.h"
#include "supervise.h"

#define HCLUSTER_ERR_SIZE 768
#define HCLUSTER_MAX_NODES 64
#define HCLUSTER_NAME_SIZE DESC_NODE_NAME_SIZE

struct hcluster_opts {
	const char *work_dir;  /* required: created when missing */
	unsigned nodes;        /* 0: the description's default */
	const char *binary;    /* NULL: the description's */
	bool netns;            /* each node in a network namespace (partitions; needs root) */
	const char *tools;     /* ${tools}: the programs spectap builds (build/tools), or NULL */
	/* Each node's pid as soon as it is forked (start and restart), before it runs. */
	void (*spawned)(void *ctx, unsigned node, int pid);
	void *spawned_ctx;
};

struct hcluster {
	const struct desc *d;
	struct sup sup;
	char dir[PATH_MAX];
	char binary[PATH_MAX];
	char tools[PATH_MAX];
	unsigned n;
	char names[HCLUSTER_MAX_NODES][HCLUSTER_NAME_SIZE];
	unsigned base_port;
	size_t proc[HCLUSTER_MAX_NODES];
	void (*spawned)(void *ctx, unsigned node, int pid);
	void *spawned_ctx;
	bool sup_ready;
	bool netns;
	struct netns_net net;
	bool cut[HCLUSTER_MAX_NODES]; /* cut off by hcluster_partition */
	char err[HCLUSTER_ERR_SIZE];
};

/* Allocates ports, writes the files, starts every node and waits until each is ready. */
int hcluster_start(struct hcluster *c, const struct desc *d, const struct hcluster_opts *o);
/* Stops every node (SIGTERM, SIGKILL after the grace) and frees. */
void hcluster_stop(struct hcluster *c);

unsigned hcluster_port(const struct hcluster *c, unsigned node, size_t k);
int hcluster_pid(const struct hcluster *c, unsigned node);
bool hcluster_running(struct hcluster *c, unsigned node);
/* Faults. kill: SIGKILL; pause/resume: SIGSTOP/SIGCONT of the node's process group; restart:
 * the node again, with its files and data as they are, then waits until it is ready (not when
 * it is cut off: it stays so, and cannot be asked). */
int hcluster_kill(struct hcluster *c, unsigned node);
int hcluster_pause(struct hcluster *c, unsigned node);
int hcluster_resume(struct hcluster *c, unsigned node);
int hcluster_restart(struct hcluster *c, unsigned node);
/* Cuts node off the network (it keeps running) / reconnects it; needs opts.netns. */
int hcluster_partition(struct hcluster *c, unsigned node);
int hcluster_heal(struct hcluster *c, unsigned node);
/* Every reachable node names the same leader (with status.leader_if, whose followers name
 * none: exactly one says it leads, as hcluster_leader): 0 and *leader, -EAGAIN while they do
 * not, or -errno. */
int hcluster_agreed(struct hcluster *c, unsigned *leader);
/* Running, not paused and not cut off: a node the harness can talk to. */
bool hcluster_reachable(struct hcluster *c, unsigned node);

/* Expands a node template for node (or -1: node-less) into *out (malloc'd). extra names and
 * values (may be NULL) are variables of the caller (a load's op). */
int hcluster_expand(struct hcluster *c, const char *tmpl, long node, const char *const *names,
		    const char *const *values, size_t nextra, char **out);

/* Asks node q (an HTTP GET or a command, desc_query): 0 with *answer (malloc'd, the body or
 * the command's stdout) when it answered (HTTP 200, command exit 0) and holds q->expect. */
int hcluster_query(struct hcluster *c, unsigned node, const struct desc_query *q, unsigned timeout_ms, char **answer);
/* The leader by the description's status: the node named at status.leader in the answers of
 * the running nodes, when a majority of them name the same running node; or, with
 * status.leader_if, the one running node whose answer holds that text. 0 with *leader (its
 * index), -EAGAIN when there is none yet (no message), another -errno on a real failure. */
int hcluster_leader(struct hcluster *c, unsigned *leader);
/* The leader node i names in its status answer (its index, or -1 when none or unreachable; with
 * leader_if: i itself when its answer holds the text, else -1). */
int hcluster_leader_of(struct hcluster *c, unsigned node, long *leader);

#endif
