/*
 * The collector core for the emit API (include/spectap/emit.h): turns records that traced
 * programs emitted (JSON objects in the `json` dialect's event shape, carried by USDT or LTTng)
 * into trace events. Knows no particular system and no transport: the caller hands it records
 * with their time, pid and tid (probes/usdt_loader.h or collector/lttng_reader.h did the rest).
 *
 * Per record:
 *   - records of pids never named with ecol_name_pid are dropped and counted (stats.foreign):
 *     another program on the machine that emits through the same library;
 *   - the record is parsed as a `json` dialect event (lib/dialect.c): node and kind required,
 *     state, args, msg, meta optional. A record that does not parse is rejected (counted, and
 *     the first one's reason kept: pid, byte offset, what was wrong) and is a lost event;
 *   - source = opts.source; seq per node (1, 2, ...); ts_ns = the record's (CLOCK_MONOTONIC);
 *     message ids and Lamport clocks from content (include/spectap/msgpair.h): a receive takes
 *     the id of the oldest unreceived send with the same from, to, type and fields;
 *   - meta.seq, when the record has it, is the emitting process's own record number (1, 2, ...
 *     counting every record it built): a gap there is a loss, written as a loss record of that
 *     node whose first_seq..last_seq is the gap left in the node's trace seq.
 *
 * Order: records are held until ecol_release; each release writes the held records older than
 * its limit in time order (stable for equal times). A record added with a time older than what
 * was already written is still written, and counted late. Transport loss that no gap shows (the
 * last records of a process, or records of unknown pids) is given to ecol_finish: the trace's
 * loss total is max(gaps, transport loss + rejected), so loss is never silent.
 *
 * Not thread-safe: one caller at a time. All int returns: 0 (or a count) on success, -errno
 * on failure, with the reason in ecol_error().
 */
#ifndef SPECTAP_COLLECTOR_EMIT_COLLECT_H
#define SPECTAP_COLLECTOR_EMIT_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/event.h"
#include "spectap/trace.h"

struct ecol;

struct ecol_opts {
	size_t sz;          /* sizeof(struct ecol_opts) */
	const char *source; /* the events' source, e.g. "usdt" or "lttng" (required) */
	/* Called after each event is written (e.g. to follow each node's last state), with the
	 * pid that emitted it. */
	void (*on_event)(void *ctx, const struct spt_event *ev, int pid);
	void *ctx;
};

/* One record, copied by ecol_add. */
struct ecol_rec {
	uint64_t ts_ns;
	int pid, tid;
	const char *data;
	size_t len;
};

struct ecol_stats {
	uint64_t records;   /* records added */
	uint64_t held;      /* records waiting for a release */
	uint64_t events;    /* events written */
	uint64_t foreign;   /* records of pids not named: not written */
	uint64_t rejected;  /* records that did not parse: lost */
	uint64_t gap_lost;  /* events lost as meta.seq gaps showed */
	uint64_t late;      /* events written after a later one */
	uint64_t sends, receives, paired, unpaired_receives;
	uint64_t unpaired_sends; /* set by ecol_finish */
};

/* w stays the caller's (never closed here). */
int ecol_new(struct spt_writer *w, const struct ecol_opts *o, struct ecol **out, char *err, size_t errlen);
void ecol_free(struct ecol *c);
const char *ecol_error(const struct ecol *c);
/* The first rejected record's reason ("" when none was rejected). */
const char *ecol_first_rejection(const struct ecol *c);

/* Records of this pid are the caller's (a process it started). */
int ecol_name_pid(struct ecol *c, int pid);
int ecol_add(struct ecol *c, const struct ecol_rec *r);
/* Writes the held records with ts_ns < before_ns (UINT64_MAX: all), then ticks the writer
 * (spt_writer_tick: its flush interval). Returns the count. */
int ecol_release(struct ecol *c, uint64_t before_ns);
/* Releases everything, writes the loss records that the gaps do not cover (see above), and
 * flushes. transport_lost: records the transport counted lost, too large or unreadable.
 * *lost (may be NULL) gets the trace's loss total. */
int ecol_finish(struct ecol *c, uint64_t transport_lost, uint64_t *lost);
const struct ecol_stats *ecol_stats(const struct ecol *c);

#endif
