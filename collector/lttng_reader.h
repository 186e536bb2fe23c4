/*
 * The LTTng collector for the emit API (include/spectap/emit.h): runs an LTTng session that
 * records the user-space tracepoint spectap:event with the vpid and vtid contexts, and after the
 * session stopped reads the CTF trace back with libbabeltrace2, one callback per record.
 *
 *   lttng_reader_open    ensures a session daemon (see below), creates a session writing to a
 *                        directory, a channel "spectap" (per-user buffers, discard mode with a
 *                        blocking timeout: infinite by default, so that nothing is discarded;
 *                        the traced program must run with LTTNG_UST_ALLOW_BLOCKING=1 for that,
 *                        else LTTng discards when the buffers are full), the vpid and vtid
 *                        contexts, and enables spectap:event; not started yet;
 *   lttng_reader_start   starts tracing;
 *   lttng_reader_rotate  while tracing: rotates the session (LTTng archives the trace chunk
 *                        written so far as a CTF trace of its own), reads that archive (as
 *                        lttng_reader_read does) and removes it (unless opts.keep): how the
 *                        records reach a caller while the traced programs run;
 *   lttng_reader_stop    stops tracing (waits until the trace is complete on disk), reads the
 *                        channel's discarded-event and lost-packet counts from the session
 *                        daemon, and destroys the session;
 *   lttng_reader_read    reads the trace (what no rotation read: after rotations, the last
 *                        chunk, which destroying the session archived): records in time order
 *                        (merged over the per-CPU streams), discarded events and packets as the
 *                        CTF packet contexts report them;
 *   lttng_reader_close   destroys the session if it still exists (also after any error),
 *                        stops the session daemon if this reader started it, removes the trace
 *                        directory if the reader made it (unless opts.keep), frees.
 *
 * Session daemon: if none is alive (lttng_session_daemon_alive), open starts
 * `lttng-sessiond --no-kernel` as a child process (its output to /dev/null), waits until it
 * answers (at most 10 s), and close stops it (SIGTERM, then SIGKILL after 5 s) and reaps it. A
 * daemon that was already running is used and left running. So nothing this code started is
 * left running after close; and since the daemon gets SIGTERM when the thread that opened the
 * reader exits (PR_SET_PDEATHSIG), not after a crash either: open, use and close the reader on
 * one long-lived thread. A program traced by a daemon started after it registers when the
 * daemon comes up; spt_emit_listeners() tells it when spectap:event is enabled.
 *
 * Loss is never silent: stats.discarded_events (sum of the CTF discarded-events messages, which
 * babeltrace derives from the packet contexts' events_discarded counters) and
 * stats.channel_discarded (the session daemon's own count) are both reported; with a blocking
 * channel and a program allowed to block both are 0. One exception, measured here: a program
 * that was already running when the session started lost some of its first records, under CPU
 * load, with neither count raised (lttng-ust still setting up its per-CPU buffers while the
 * event already reads as enabled). Start the session before the traced program.
 *
 * All int returns: 0 or a count on success, -errno on failure, with a message saying what failed
 * on what (and what to do) in lttng_reader_error(). Needs root, or the tracing group.
 */
#ifndef SPECTAP_COLLECTOR_LTTNG_READER_H
#define SPECTAP_COLLECTOR_LTTNG_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/programs.h"

/* The session daemon the reader starts when none runs. */
extern const struct spt_program lttng_programs[2];

struct lttng_reader;

struct lttng_reader_opts {
	const char *output_dir;       /* the trace directory; NULL: a new one under $TMPDIR or /tmp */
	bool keep;                    /* keep a directory the reader made (output_dir NULL) at close */
	bool discard;                 /* never block the program: discard when the buffers are full */
	uint64_t blocking_timeout_us; /* without discard: 0 = block as long as needed, else at most
				       * this long per event, then discard. A blocked thread of the
				       * program retries every 100 ms (lttng-ust): size the buffers
				       * so that they do not fill */
	uint64_t subbuf_size;         /* bytes per sub-buffer (power of two >= page size); 0: 1 MiB.
				       * A record needs about 64 bytes more than its length to fit */
	uint64_t num_subbuf;          /* sub-buffers per CPU (power of two >= 2); 0: 8 */
};

/* One record, valid during the callback. */
struct lttng_reader_record {
	uint64_t ts_ns;   /* the event's timestamp: CLOCK_MONOTONIC, in ns */
	int64_t pid, tid; /* vpid, vtid contexts */
	uint64_t cpu;     /* cpu_id of the packet */
	const char *data; /* len bytes (and a NUL after them) */
	size_t len;
};

/* Return 0 to go on; a negative errno stops lttng_reader_read, which returns it. */
typedef int (*lttng_reader_fn)(void *ctx, const struct lttng_reader_record *rec);

struct lttng_reader_stats {
	uint64_t records;           /* spectap:event records read */
	uint64_t other_events;      /* events of other names in the trace (not passed on) */
	uint64_t discarded_events;  /* from the trace: CTF discarded-events messages, summed */
	uint64_t discarded_unknown; /* discarded-events messages without a count */
	uint64_t discarded_packets; /* from the trace: CTF discarded-packets messages, summed (one
				     * without a count adds 1) */
	uint64_t channel_discarded; /* from the session daemon at stop */
	uint64_t channel_lost_packets;
	unsigned traces;            /* CTF traces read (directories with a metadata file; one per rotation) */
};

/* On failure *out is NULL and the message is copied to err (errlen bytes) if not NULL;
 * everything set up so far is undone. */
int lttng_reader_open(struct lttng_reader **out, const struct lttng_reader_opts *opts, char *err,
		      size_t errlen);
int lttng_reader_start(struct lttng_reader *r);
int lttng_reader_stop(struct lttng_reader *r);
/* While started, from any one thread at a time (the thread that opened the reader must live
 * on). Returns the number of records passed to fn. Records of one stream come in time order
 * across rotations; each rotation's are merged in time order over the streams, and every
 * record whose timestamp is before the call is in this or an earlier rotation's archive. */
int lttng_reader_rotate(struct lttng_reader *r, lttng_reader_fn fn, void *ctx);
/* After stop. Returns the number of records passed to fn (those no rotation read). -EBADMSG: a
 * malformed trace or record (e.g. a record whose text is shorter than its length field: it held
 * a NUL byte). The stats count every read, rotations' included. */
int lttng_reader_read(struct lttng_reader *r, lttng_reader_fn fn, void *ctx);
void lttng_reader_close(struct lttng_reader *r);

const char *lttng_reader_error(const struct lttng_reader *r);
const struct lttng_reader_stats *lttng_reader_stats(const struct lttng_reader *r);
/* The trace directory and the session's name. */
const char *lttng_reader_dir(const struct lttng_reader *r);
const char *lttng_reader_session(const struct lttng_reader *r);
/* Sessions named spectap-PID-N whose PID is gone (a capture killed while a session daemon that
 * outlived it kept its session active, spectap:event enabled: every program using the emit
 * library would record into it) are destroyed, with their output directory when it is one of
 * ours. Best effort; does nothing when no session daemon runs. Every emit capture calls it. */
void lttng_reclaim_stale_sessions(void);
/* True if this reader started the session daemon (and will stop it at close). */
bool lttng_reader_owns_daemon(const struct lttng_reader *r);

#endif
