/*
 * A spool: the collector's log of raw uprobe records, so that draining the ring buffer (cheap,
 * must keep up with the probes) and shaping records into events (expensive) can run apart: the
 * drain appends, a shaping thread at idle priority reads behind it, and whatever it has not read
 * when the capture stops is shaped then. Under a load that keeps every CPU busy, the system under
 * test keeps its CPU and the spool grows on disk instead of the ring overflowing.
 *
 * The file is unnamed (O_TMPFILE, or created and unlinked at once) in the directory given: a
 * crash leaves nothing behind, and the trace already written is never touched by it. What has
 * been read is given back to the file system (a hole), so it holds about the backlog only.
 *
 * Frames, in order: a record (the fixed header, the reads it has, and the 64-byte blocks that are
 * not all zeros; the BPF program zeroes every block it does not fill, so the full record is
 * rebuilt exactly), a tick (the drain that ended here) or a node (pid -> node name, at the point
 * of the capture where it was given). One writer and one reader; the writer publishes whole frames
 * only (spool_commit), so the reader never sees half a frame.
 *
 * All int returns: 0 (or a count) on success, -errno on failure, with the reason in err.
 */
#ifndef SPECTAP_COLLECTOR_SPOOL_H
#define SPECTAP_COLLECTOR_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/uprobe.h" /* probes/: build with -Iprobes */

struct spool;

enum spool_frame_kind { SPOOL_RECORD = 1, SPOOL_TICK = 2, SPOOL_NODE = 3 };

struct spool_frame {
	uint8_t kind;
	/* SPOOL_RECORD: the rebuilt record (size is ev->size) */
	const struct uprobe_event *ev;
	size_t size;
	/* SPOOL_NODE */
	int pid;
	const char *node;
};

int spool_open(const char *dir, struct spool **out, char *err, size_t errlen);
void spool_close(struct spool *s);

/* Writer side: appended to a buffer, published by spool_commit. */
int spool_add_record(struct spool *s, const struct uprobe_event *ev, size_t size);
int spool_add_tick(struct spool *s);
int spool_add_node(struct spool *s, int pid, const char *node);
int spool_commit(struct spool *s);

/* Bytes published so far (safe to call from the reader's thread). */
uint64_t spool_committed(const struct spool *s);

/* Reader side: calls fn for the frames published after the last one read, at most max (0: all,
 * up to INT_MAX);
 * stops at fn's first non-zero return and returns it, else the number of frames read. */
typedef int (*spool_frame_fn)(void *ctx, const struct spool_frame *f);
int spool_read(struct spool *s, size_t max, spool_frame_fn fn, void *ctx);

/* Frames and bytes written and read so far, for progress and figures. */
struct spool_stats {
	uint64_t frames_written, frames_read, bytes_written, bytes_read;
};
void spool_stats(const struct spool *s, struct spool_stats *out);
/* What the file takes on disk now: read parts are given back (holes), about the backlog. */
uint64_t spool_disk_bytes(const struct spool *s);

const char *spool_error(const struct spool *s);

#endif
