/*
 * Trace files (*.spt): a concatenation of independent zstd frames with content checksums.
 * Frame 0 is a skippable magic frame, frame 1 holds the header, then one frame per chunk of
 * length-delimited protobuf records, each chunk ending with a trailer. A clean close appends an
 * index frame and a skippable footer that points to it. Bytes once written are never rewritten,
 * so a crash loses at most the chunk being written. See docs/format.md.
 */
#ifndef SPECTAP_TRACE_H
#define SPECTAP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/event.h"

/* Set to the reason when a function returns a negative errno; may be NULL. */
struct spt_diag {
	char msg[512];
};

/* ---- writer ---- */

struct spt_writer_opts {
	size_t sz;              /* sizeof(struct spt_writer_opts), for forward compatibility */
	size_t chunk_bytes;     /* flush a chunk when this many encoded bytes wait (default 512 KiB) */
	int level;              /* zstd level (default 3) */
	bool sync;              /* fdatasync after every chunk */
	/*
	 * Replace an existing file instead of failing with -EEXIST. The new trace is written to
	 * PATH.partial and renamed over PATH when closed (or abandoned): a crash meanwhile leaves the
	 * previous trace whole, and PATH.partial, which the next open refuses to replace silently.
	 */
	bool overwrite;
	/* Durability: write the pending events as a chunk once the oldest has waited flush_ms (on
	 * the next append or spt_writer_tick), or once flush_events are pending. 0: by size only. */
	unsigned flush_ms;
	uint64_t flush_events;
};

struct spt_writer;

int spt_writer_open(const char *path, const struct spt_header *h, const struct spt_writer_opts *o,
		    struct spt_writer **out, struct spt_diag *d);
/* The event is encoded at once; it need not outlive the call. */
int spt_writer_append(struct spt_writer *w, const struct spt_event *ev);
int spt_writer_add_loss(struct spt_writer *w, const struct spt_loss *loss);
/* Writes the pending events as one chunk (a no-op when none are pending). */
int spt_writer_flush(struct spt_writer *w);
/* Flushes when the oldest pending event has waited flush_ms; call it at least that often. */
int spt_writer_tick(struct spt_writer *w);
/* Flushes, writes the index and footer, closes and frees. Returns the first error seen. */
int spt_writer_close(struct spt_writer *w, struct spt_diag *d);
/* Frees without writing an index, as a crash would leave the file (for tests and aborts); the
 * file is kept at its path (a PATH.partial is renamed to PATH). */
void spt_writer_abandon(struct spt_writer *w);
/* Frees and removes the file being written (an overwritten trace stays as it was). */
void spt_writer_discard(struct spt_writer *w);
uint64_t spt_writer_events(const struct spt_writer *w);
uint64_t spt_writer_bytes(const struct spt_writer *w);

/* ---- reader ---- */

struct spt_trace_info {
	uint64_t file_bytes;
	uint64_t data_bytes;      /* bytes up to the end of the last valid chunk */
	uint64_t events;          /* event ordinals: readable ones and those of damaged chunks */
	uint64_t chunks;
	uint64_t lost;            /* events the capture reported lost (loss records) */
	bool indexed;             /* closed cleanly: footer and index present and valid */
	bool recovered;           /* no valid index: chunks were found by scanning */
	uint64_t torn_bytes;      /* a last frame cut short (its writer stopped mid-write): not damage */
	/*
	 * Damage: frames that do not decode or disagree with their place. Reading resumes at the
	 * next intact chunk, so damage costs only the chunks it hits. With an index, a damaged chunk
	 * is found when it is read (stat, export and check read them all).
	 */
	bool damaged;
	uint64_t damage_offset;   /* where the first bad frame starts */
	uint64_t damaged_bytes;   /* bytes in bad frames, all of them */
	uint64_t damaged_chunks;  /* chunks lost (as far as the next intact chunk tells) */
	uint64_t damaged_events;  /* event ordinals lost in them (their events are not read) */
	bool damaged_tail;        /* the file ends in damage: how many events it held is unknown */
	bool header_lost;         /* the header frame was damaged: the header reads as empty (its
				   * bytes are in damaged_bytes); the chunks are read as ever */
	char damage[256];         /* what was wrong at the first bad frame */
};

struct spt_reader;

int spt_reader_open(const char *path, struct spt_reader **out, struct spt_diag *d);
void spt_reader_close(struct spt_reader *r);
const struct spt_header *spt_reader_header(const struct spt_reader *r);
const struct spt_trace_info *spt_reader_info(const struct spt_reader *r);
/* 1 and *ev set, 0 at the end, negative errno on error. The event and its values stay valid
 * until the next call to next or seek. Loss records met on the way are kept for
 * spt_reader_losses. */
int spt_reader_next(struct spt_reader *r, const struct spt_event **ev);
/* Positions before the n-th event (0-based), or the first readable one after it when it lies in a
 * damaged chunk; n == events positions at the end. Ordinals are the writer's: an event has the
 * same one whether reached by next or by seek, damage or not. */
int spt_reader_seek_event(struct spt_reader *r, uint64_t n);
/* Positions before the first event with ts_ns >= ts (in file order). */
int spt_reader_seek_time(struct spt_reader *r, uint64_t ts);
/* Ordinal of the event the next call to next returns (before a damaged chunk: its first). */
uint64_t spt_reader_tell(const struct spt_reader *r);
/* Every loss record of the valid chunks (read at open). */
size_t spt_reader_losses(const struct spt_reader *r, const struct spt_loss **out);

#endif
