/* The event model: one observed step of one node, with the node's state after the step. */
#ifndef SPECTAP_EVENT_H
#define SPECTAP_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/value.h"

/* The version this spectap writes; it reads every version from SPT_FORMAT_VERSION_MIN up.
 * 2: sequence edits (SeqEdit) in state deltas; 3: meta_same (an event's meta repeats its node's last). */
#define SPT_FORMAT_VERSION 3
#define SPT_FORMAT_VERSION_MIN 1

enum spt_msg_dir {
	SPT_MSG_SEND = 1,
	SPT_MSG_RECV = 2,
};

struct spt_msg {
	uint64_t id;             /* shared by the send and the receive; 0 = unknown */
	enum spt_msg_dir dir;
	const char *from, *to;   /* node ids */
	const char *type;
	spt_val *fields;         /* record of the payload fields; NULL = none */
};

struct spt_event {
	const char *node;        /* the system's own node id */
	const char *source;      /* what captured it (e.g. "bpf", "import"); seq counts per node+source */
	uint64_t seq;            /* strictly increasing per node+source: a gap is a loss */
	uint64_t ts_ns;          /* CLOCK_MONOTONIC, or the imported trace's own clock */
	uint64_t lamport;        /* causal clock: advanced on every step, max'ed on receive */
	uint32_t tid;
	const char *kind;        /* stable name, e.g. "zk.recvset.put" or "BecomeLeader" */
	spt_val *args;           /* record: the step's inputs; NULL = none */
	spt_val *state;          /* record: the node's observed variables after the step; NULL = none */
	const struct spt_msg *msg; /* NULL when the step neither sends nor receives */
	spt_val *meta;           /* record: a source format's fields kept for lossless export */
};

/* Events that a source dropped, e.g. failed ring-buffer reservations. */
struct spt_loss {
	const char *node, *source;
	uint64_t count;
	uint64_t first_seq, last_seq; /* the missing range, when known (else 0) */
};

struct spt_header {
	const char *system;          /* "etcd", "zookeeper", ... */
	const char *system_version;
	const char *const *nodes;
	size_t n_nodes;
	const char *capture_method;  /* "bpf", "lttng", "import:etcd-ndjson", ... */
	const char *scenario;
	bool has_seed;
	uint64_t seed;
	uint64_t clock_realtime_ns, clock_monotonic_ns;
	const char *command_line;
	const char *writer;          /* filled by the writer */
	spt_val *extra;              /* record of anything else; NULL = none */
	uint32_t format_version;     /* filled by the writer */
};

/* An event as one TLA+ record [node, kind, seq, ts, lamport, tid, state, args, msg] (state and
 * args [] when absent; msg only when there is one), as mappings and a system's modules see it;
 * its message as [id, from, to, type, fields] (and dir, "send" or "recv"). NULL: out of memory. */
spt_val *spt_event_value(struct spt_arena *a, const struct spt_event *ev);
spt_val *spt_msg_value(struct spt_arena *a, const struct spt_msg *mm, bool with_dir);

/* The header as written by the writer: version, writer name and a clock snapshot if unset. */
void spt_header_fill_defaults(struct spt_header *h);

#endif
