/* The USDT collector: loads probes/bpf/usdt.bpf.c, attaches it with libbpf's USDT support to the
 * probe spectap:event of the emit library (include/spectap/emit.h) in a binary or shared object,
 * and hands each record to a callback when the caller drains (on its own timer, e.g. every
 * 10 ms: records are submitted without wakeups). Attaching sets the probe's semaphore in every
 * process that maps the file (spt_emit_enabled() turns true there); closing the loader clears it.
 *
 * Loss: every hit takes a per-CPU sequence number before the ring buffer reservation; a failed
 * reservation is counted (usdt_counters.lost) and leaves a gap in that CPU's sequence, so for
 * every CPU, records received + lost = seq. Records that are too large or unreadable are still
 * delivered, flagged (USDT_REC_*), and counted. Records of one CPU may arrive slightly out of
 * sequence order (a uprobe program can be preempted): sort before looking for gaps.
 *
 * All int returns: 0 or a count on success, -errno on failure, with a message saying what failed
 * on what in usdt_loader_error(). Needs root (or CAP_BPF and CAP_PERFMON). */
#ifndef SPECTAP_PROBES_USDT_LOADER_H
#define SPECTAP_PROBES_USDT_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/usdt.h"

struct usdt_loader;

struct usdt_loader_opts {
	size_t ringbuf_bytes; /* power of two, multiple of the page size; 0: 8 MiB */
};

/* Loads the BPF program and maps. On failure *out is NULL and the message is copied to err
 * (errlen bytes) if not NULL. -EPERM: not root / BPF not permitted. */
int usdt_loader_open(struct usdt_loader **out, const struct usdt_loader_opts *opts, char *err,
		     size_t errlen);
/* Detaches everything, frees. */
void usdt_loader_close(struct usdt_loader *l);

/* The message of the last failure on l ("" if none). */
const char *usdt_loader_error(const struct usdt_loader *l);

/* Attaches to every spectap:event probe site in path (an executable or a shared object that
 * links the emit library), for process pid or for all processes (pid -1). -ENOENT: no such file,
 * or it has no spectap:event probe; -EPERM: not permitted. Returns 0. */
int usdt_attach(struct usdt_loader *l, const char *path, int pid);

/* Called once per record. data holds data_len bytes: rec->len, or 0 when rec->flags has
 * USDT_REC_TOO_LARGE or USDT_REC_BAD_ARGS (with USDT_REC_FAULT they are zeros). Valid only
 * during the call. Return 0 to go on; a negative errno stops the drain and usdt_drain returns
 * it (the records after it stay in the ring buffer). */
typedef int (*usdt_record_fn)(void *ctx, const struct usdt_record *rec, const uint8_t *data,
			      size_t data_len);

/* Consumes every record in the ring buffer now (no waiting). Returns the number consumed, or
 * -errno (-EBADMSG: a malformed record). */
int usdt_drain(struct usdt_loader *l, usdt_record_fn fn, void *ctx);

/* Per-CPU counters: fills up to n entries (indexed by CPU) and returns the number of possible
 * CPUs, or -errno. */
int usdt_counters_per_cpu(struct usdt_loader *l, struct usdt_counters *out, size_t n);

/* The counters summed over CPUs. Returns 0. */
int usdt_counters_sum(struct usdt_loader *l, struct usdt_counters *sum);

/* Records lost to failed ring buffer reservations, summed over CPUs. Returns 0. */
int usdt_losses(struct usdt_loader *l, uint64_t *lost);

#endif
