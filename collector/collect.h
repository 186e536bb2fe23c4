/*
 * The generic collector core: turns generic uprobe records (probes/bpf/uprobe.h) into spectap
 * events (include/spectap/event.h) appended to a trace writer. Knows no particular system: what
 * a probe's reads mean is data, a probe table given by the caller.
 *
 * Per record: node = the probe's node read (if it has one and it did not fault), else the node
 * registered for the record's pid with collect_set_node, else "pid:<pid>"; source = "bpf";
 * seq = per node counter (1, 2, ...); ts_ns = the record's ktime_ns (CLOCK_MONOTONIC); lamport =
 * per node counter, +1 per event; tid; kind = the probe's kind; args and state = records of the
 * reads placed there (NULL when the probe places none there or all of them faulted). A faulted read (err bit set) is left out of args/state and named in the
 * event's meta record: meta = [faulted |-> {"name", ...}] (meta is NULL when nothing faulted).
 *
 * Value types: COLLECT_INT: the read's 64 bits as a signed integer (use with
 * UPROBE_READ_SIGNED for narrow reads); COLLECT_UINT: unsigned; a value >= 2^63 cannot be an
 * exact spt_int, so it becomes a STRING field holding its decimal digits (never an error, never
 * truncated; counted in stats.big_uints); COLLECT_BOOL: val != 0; COLLECT_CSTR: a BLOCK read as
 * a string, its bytes up to the first NUL (at most the block size); COLLECT_HEX: a BLOCK read as
 * a string of lower-case hex digits, two per byte.
 *
 * Ordering: records arrive in ring order, which is per-CPU reservation order, not time order.
 * The collector holds a reorder window: records wait in a min-heap keyed by (ktime_ns, cpu,
 * cpu seq); after each drain (collect_tick) it releases every record with
 * ktime_ns + window_ns <= the newest ktime_ns seen, and collect_finish releases the rest. seq and
 * lamport are assigned at release, so within a node they follow ktime order. A record that
 * arrives later than the window (its ktime older than an event already released for its node)
 * is still written (never dropped), with its own ts_ns, and counted in stats.late; with a
 * window larger than the drain period this does not happen. At most max_pending records wait;
 * beyond that the oldest are released early.
 *
 * Loss: every hit takes a per-CPU sequence number before the ring-buffer reservation, so a
 * failed reservation is a gap in that CPU's sequence. The collector tracks, per CPU, the highest
 * sequence number seen and the missing ones below it (gaps). A record may fill a gap late (a
 * uprobe program can be preempted on its CPU), so a gap is declared lost only at the second
 * tick after it was first seen (one full drain period later): then an spt_loss record is written
 * (node "", source "bpf:cpu<N>", count, first_seq..last_seq). collect_tick also reads the BPF
 * per-CPU counters and compares them with the gaps (stats.counter_mismatch). collect_finish
 * (call it after the last drain, when no probe can fire any more) declares the remaining gaps
 * and the tail (sequence numbers counted by the BPF counters after the last record seen) lost,
 * and, if the BPF lost counter of a CPU still exceeds what the gaps account for, writes one more
 * loss record for the difference with an unknown range (first_seq = last_seq = 0). So the trace's
 * loss total equals max(gaps, BPF lost counter) per CPU: loss is never silent.
 *
 * Messages: an event with a message (from the shaper) is paired by content with
 * include/spectap/msgpair.h: a send gets a fresh id, a receive the id of the oldest unreceived
 * send with the same from, to, type and fields, and a Lamport clock past the send's. Events
 * are released in time order, so a send is always written before its receive.
 *
 * All int returns: 0 (or a count) on success, -errno on failure, with the reason in
 * collect_error().
 */
#ifndef SPECTAP_COLLECTOR_COLLECT_H
#define SPECTAP_COLLECTOR_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "spectap/trace.h"
#include "uprobe_loader.h" /* probes/: build with -Iprobes */

/* Where a read goes. */
enum collect_place {
	COLLECT_SKIP = 0,  /* not recorded */
	COLLECT_STATE = 1, /* a field of the event's state record */
	COLLECT_ARGS = 2,  /* a field of the event's args record */
	COLLECT_NODE = 3,  /* the node id (INT/UINT: decimal; CSTR/HEX: the string); one per probe */
};

/* What a read's value is. */
enum collect_type {
	COLLECT_INT = 1,  /* signed 64-bit integer */
	COLLECT_UINT = 2, /* unsigned: < 2^63 an integer, else a decimal string (see above) */
	COLLECT_BOOL = 3,
	COLLECT_CSTR = 4, /* BLOCK read: bytes up to the first NUL */
	COLLECT_HEX = 5,  /* BLOCK read: hex digits */
	COLLECT_ID = 6,   /* an unsigned 64-bit identifier, as lowercase hex digits (how etcd and
			     others print member ids): the same type whatever its size */
};

struct collect_field {
	const char *name; /* the field name (also used for COLLECT_NODE, in messages) */
	uint8_t place;    /* enum collect_place */
	uint8_t type;     /* enum collect_type */
};

struct collect_probe {
	uint32_t probe_id;   /* the attach cookie */
	const char *kind;    /* the event kind, e.g. "raft.step" */
	unsigned nfields;    /* reads described: field i is read i; 0..UPROBE_MAX_READS */
	struct collect_field fields[UPROBE_MAX_READS];
};

struct collect_table {
	const struct collect_probe *probes;
	size_t n;
};

/*
 * A system's shaping step (optional, collect_opts.shape): called for every record as it is
 * released, in time order, after the table built its args and state. It may rename the kind,
 * replace args and state (values from arena, which is reset per record), and attach a message
 * (dir, from, to, type, fields; the collector assigns the id). Returns 0 to write the event,
 * 1 to write nothing (an internal probe whose reads only feed the shaper's own state),
 * COLLECT_SHAPE_MORE to write the event and be called again for the same record with part + 1
 * (a record that is several events), or a negative errno (the collector fails with the shaper's
 * message in err).
 */
#define COLLECT_SHAPE_MORE 2
/* collect_opts.shape_end, for a shaper that holds an event back until the node's next record (a
 * step whose end is read at the node's next call): called once per node by collect_finish,
 * after every record, with probe_id COLLECT_SHAPE_END, ev NULL and ktime the node's last
 * event's time; returns 1 (nothing), 0 or COLLECT_SHAPE_MORE as for a record. */
#define COLLECT_SHAPE_END 0u
struct collect_shape {
	uint32_t probe_id;
	const struct uprobe_event *ev; /* the raw record */
	size_t size;
	const char *node;
	const char *kind;         /* in: the table's kind; out: the event's */
	spt_val *args, *state;    /* in: built from the table; out: the event's */
	spt_val *meta;            /* out: NULL or a record (the collector adds "faulted") */
	struct spt_msg *msg;      /* out: NULL or &msg_buf filled */
	struct spt_msg msg_buf;
	struct spt_arena *arena;
	unsigned part;            /* 0, then 1, 2, ... after COLLECT_SHAPE_MORE */
	uint64_t ktime;           /* the record's time (CLOCK_MONOTONIC ns) */
	char err[1024];
};
typedef int (*collect_shape_fn)(void *ctx, struct collect_shape *s);

struct collect_opts {
	size_t sz;            /* sizeof(struct collect_opts) */
	uint64_t window_ns;   /* reorder window (default 50 ms) */
	size_t max_pending;   /* records held at most (default 65536) */
	collect_shape_fn shape; /* NULL: events as the table says */
	void *shape_ctx;
	collect_shape_fn shape_end; /* NULL: none (COLLECT_SHAPE_END above); ctx is shape_ctx */
	bool named_pids_only; /* drop (and count in stats.foreign) records of pids never given to
			       * collect_set_node: other processes running the probed binary */
	/* Spool mode: draining (collect_drain, the drain thread) only copies the records into an
	 * unnamed file in spool_dir (NULL: /tmp); the records are turned into events later: by a
	 * second thread started by collect_bg_start, at idle priority (SCHED_IDLE), once
	 * spool_backlog bytes (0: 256 MiB) wait, until it has caught up; and by collect_bg_stop
	 * and collect_finish for the rest. The trace is the same as live (the same records, ticks
	 * and collect_set_node calls in the same order); only when the work is done changes, so
	 * that the capture takes as little as it can from the system it watches while it runs
	 * (bench/RESULTS.md: shaping along, even at idle priority, cost RedisRaft 0.85 -> 0.72 of
	 * its throughput on 2 vCPUs). Costs disk: about the header and reads of every record (the
	 * blocks that are all zeros are left out). */
	bool spool;
	const char *spool_dir;
	uint64_t spool_backlog;
	/* Durability: with the drain thread, the events reach the writer, and the writer is ticked
	 * (spt_writer_tick), at least every flush_ms; in spool mode the shaping thread then shapes
	 * what waits at least that often instead of waiting for spool_backlog. 0: as above. */
	unsigned flush_ms;
};

struct collect_stats {
	uint64_t records;          /* records received */
	uint64_t events;           /* events written */
	uint64_t unknown_probe;    /* records whose probe id is not in the table (not written) */
	uint64_t lost;             /* events declared lost (sum of the loss records written) */
	uint64_t late;             /* events written after a later event of their node */
	uint64_t late_fill;        /* records whose seq was below their CPU's highest and not a
				    * pending gap: already declared lost (written anyway), or a
				    * duplicate */
	uint64_t big_uints;        /* UINT values >= 2^63 written as strings */
	uint64_t faulted_reads;    /* reads left out because they faulted */
	uint64_t counter_mismatch; /* ticks where a CPU's BPF lost counter < its declared gaps */
	uint64_t internal;         /* records the shaper consumed without writing an event */
	uint64_t foreign;          /* records of pids not named (with named_pids_only), not written */
	uint64_t sends, receives;  /* message events written */
	uint64_t paired;           /* receives paired with a send (same id, clock past the send) */
	uint64_t unpaired_receives;
	uint64_t unpaired_sends;   /* set by collect_finish: sends no receive took */
	uint64_t spooled;          /* spool mode: records copied into the spool so far (records
				    * counts those turned into events) */
};

struct collect;

/* The table is copied (names and kinds too). w stays the caller's: the collector never closes
 * it. l (may be NULL) is read for the per-CPU counters at each tick and at finish; without it
 * only sequence gaps are seen (a loss after a CPU's last record is then invisible). -EINVAL: a
 * bad table (duplicate probe id, more than one node read, unknown place/type, a field without
 * a name, a name used twice in args or in state); the message says which. */
int collect_new(struct spt_writer *w, const struct collect_table *table, struct uprobe_loader *l,
		const struct collect_opts *opts, struct collect **out, char *err, size_t errlen);
/* Frees; does not write anything (call collect_finish first). */
void collect_free(struct collect *c);
const char *collect_error(const struct collect *c);

/* Records that pid's events belong to node (copied). Replaces an earlier mapping. */
int collect_set_node(struct collect *c, int pid, const char *node);

/* One record: a uprobe_event_fn, so usable as the uprobe_drain callback with c as ctx. The
 * record is copied and held in the reorder window. -EPROTO: a malformed record (size, nreads),
 * or a record of a probe whose table entry has more fields than the record has reads or wants a
 * block from a compact record. */
int collect_record(void *ctx, const struct uprobe_event *ev, size_t size);

/* After a drain: declares old gaps lost, reads the BPF counters, releases the events older
 * than the window. */
int collect_tick(struct collect *c);

/* uprobe_drain(l, collect_record, c) then collect_tick(c): returns the records drained. In spool
 * mode: the records go into the spool, then (no shaping thread running) are shaped at once. */
int collect_drain(struct collect *c);

/* Releases every held event, writes the final loss records, flushes the writer. *lost (may be
 * NULL) receives the total declared lost. After finish only collect_stats and collect_free. */
int collect_finish(struct collect *c, uint64_t *lost);

const struct collect_stats *collect_stats(const struct collect *c);

/* Drains on a thread of its own every period_ms until collect_bg_stop, so that the caller may
 * block (on a cluster, a load) while the ring buffer keeps being emptied (spool mode: and shapes
 * on a second, idle-priority thread). While it runs, the caller may call only collect_set_node,
 * collect_bg_stats and collect_bg_stop. collect_bg_stop returns the first error of either thread
 * (the thread stops at it); in spool mode it first lets the shaping thread, back at normal
 * priority, catch up with the spool. */
int collect_bg_start(struct collect *c, unsigned period_ms);
int collect_bg_stop(struct collect *c);
/* A copy of the stats, taken under the lock (for progress output). */
void collect_bg_stats(struct collect *c, struct collect_stats *out);
/* Whether the drain or the shaping thread has stopped on an error (collect_bg_stop returns it
 * and collect_error says it): a recording need not go on. */
bool collect_bg_failed(const struct collect *c);

#endif
