/*
 * Capturing the emit API's records (include/spectap/emit.h) of the processes a caller starts,
 * over either transport, into a trace through the emit collector core (emit_collect.h):
 *
 *   EMIT_VIA_BPF    libbpf attaches probes/bpf/usdt.bpf.c to the spectap:event USDT probe of a
 *                   binary or shared object (for every process that maps it: attach before the
 *                   processes start); a thread of its own drains the ring buffer (records are
 *                   submitted without wakeups) every period and releases the records older
 *                   than the reorder window into the trace, so events reach the file while
 *                   the capture runs;
 *   EMIT_VIA_LTTNG  an LTTng-UST session in blocking mode (collector/lttng_reader.h); start the
 *                   processes after ecap_open and with LTTNG_UST_ALLOW_BLOCKING=1 in their
 *                   environment (ecap_open sets it in this process's, so children inherit
 *                   it); a thread of its own rotates the session every second and reads
 *                   the archived chunk with libbabeltrace2, so events reach the file while the
 *                   capture runs too; ecap_finish reads the last chunk.
 *
 * Loss: with BPF the per-CPU counters (failed reservations, records too large or unreadable);
 * with LTTng the discarded events and lost packets both the trace and the session daemon
 * report; and on either, gaps in each process's own record numbers (meta.seq).
 *
 * All int returns: 0 on success, -errno on failure, with a message in err / ecap_error().
 */
#ifndef SPECTAP_COLLECTOR_EMIT_CAPTURE_H
#define SPECTAP_COLLECTOR_EMIT_CAPTURE_H

#include <stdint.h>

#include "emit_collect.h"

enum emit_via {
	EMIT_VIA_BPF = 0,
	EMIT_VIA_LTTNG = 1,
};

struct ecap;

struct ecap_stats {
	struct ecol_stats ev;    /* the core's counts */
	uint64_t transport_lost; /* what the transport counted lost (set by ecap_finish) */
	uint64_t lost;           /* the trace's loss total (set by ecap_finish) */
};

/* path: the binary or shared object that holds the spectap:event probe (BPF only). eo is
 * passed to the core; eo->source is set from via when NULL ("usdt", "lttng"). */
int ecap_open(struct ecap **out, enum emit_via via, const char *path, struct spt_writer *w,
	      const struct ecol_opts *eo, char *err, size_t errlen);
/* Records of pid are the caller's. Thread-safe. */
int ecap_name_pid(struct ecap *e, int pid);
/* A copy of the counts so far. Thread-safe. */
void ecap_stats(struct ecap *e, struct ecap_stats *out);
/* Call when no traced process can emit any more (they have exited): stops the drain thread,
 * drains or reads what is left, writes the loss records and flushes. The writer stays open. */
int ecap_finish(struct ecap *e, struct ecap_stats *out);
/* Detaches, stops the session, frees (after ecap_finish, or to abort). */
void ecap_close(struct ecap *e);
const char *ecap_error(const struct ecap *e);
/* The first record the core rejected, and why ("" when none). */
const char *ecap_first_rejection(const struct ecap *e);
const char *emit_via_name(enum emit_via via);

#endif
