/* spectap record SYSTEM ...: one entry point per system (tools/cmd_record.c dispatches). */
#ifndef SPECTAP_TOOLS_RECORD_H
#define SPECTAP_TOOLS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "spectap/trace.h"

/* The options every record command shares (tools/record_common.c). */
struct record_common {
	const char *scenario, *out;
	unsigned nodes;
	uint64_t seed;
	size_t log_terms; /* --log-terms, for the commands that keep entry terms; 0: the default */
	bool force, allow_loss;
	/* --flush-ms: events reach the trace file at least this often (0: at the end, or when a chunk
	 * fills); a SIGKILL or power loss of record loses at most this much. */
	unsigned flush_ms;
	bool flush_ms_given;
	/* --flush-events: also as soon as this many events wait to be written (0: by time only). */
	uint64_t flush_events;
	/* The nodes' names in the trace's header, or NULL: record_capture_open's prefix, then 1.. */
	const char *const *node_names;
};

/* The default --flush-ms. */
#define RECORD_FLUSH_MS 1000
#define RECORD_OPT_FLUSH_MS 0x2100
#define RECORD_OPT_FLUSH_EVENTS 0x2101
#define RECORD_FLUSH_HELP \
	"  --flush-ms MS    write the captured events to the trace at least every MS ms, so that a\n" \
	"                   kill -9 or power loss loses at most that (default 1000; 0: at the end)\n" \
	"  --flush-events N also write them as soon as N events wait (default: by time only)\n"
/* The flush interval that rc asks for. */
unsigned record_flush_ms(const struct record_common *rc);
/* The writer options of rc's trace: --force, --flush-ms, --flush-events, fsync'd when flushed. */
struct spt_writer_opts record_writer_opts(const struct record_common *rc);
/* --flush-ms and --flush-events as given, appended to pass[*n] (for the runs of a corpus);
 * buf holds their values. */
void record_pass_flush(const struct record_common *rc, const char **pass, size_t *n, char buf[2][24]);

/* Their long options, for a command's getopt_long table (short letters s n S o f L T j h). */
#define RECORD_COMMON_LONGOPTS                                                                    \
	{ "scenario", required_argument, NULL, 's' }, { "nodes", required_argument, NULL, 'n' },   \
	{ "seed", required_argument, NULL, 'S' },     { "output", required_argument, NULL, 'o' },  \
	{ "force", no_argument, NULL, 'f' },          { "allow-loss", no_argument, NULL, 'L' },    \
	{ "json", no_argument, NULL, 'j' },           { "help", no_argument, NULL, 'h' },          \
	{ "flush-ms", required_argument, NULL, RECORD_OPT_FLUSH_MS },                              \
	{ "flush-events", required_argument, NULL, RECORD_OPT_FLUSH_EVENTS }
#define RECORD_LOG_TERMS_LONGOPT { "log-terms", required_argument, NULL, 'T' }

/* One getopt_long result: 1 when it was a shared option (stored in rc), 0 when it is the
 * command's own, -1 after a usage message (return CLI_USAGE). --nodes must be in
 * min_nodes..max_nodes. */
int record_common_opt(struct cli *c, int opt, const char *arg, struct record_common *rc, unsigned min_nodes,
		      unsigned max_nodes);
/* After getopt: the system's name first and nothing after it, a known scenario (or a
 * comma-separated list of known ones, for --until-covered). CLI_OK or CLI_USAGE (reported). */
int record_common_check(struct cli *c, int argc, char **argv, const char *system, const struct record_common *rc,
			bool (*known)(const char *scenario), const char *scenarios);

/* The trace and collector of a uprobe capture (etcd, RedisRaft): OUT opened (--force) with a
 * header naming the nodes prefix1..prefixN, a collector of table with the system's shaper that
 * keeps only named pids (another process of the same binary hits the same probes), draining every
 * 10 ms on its own thread; shape_end (may be NULL) is collect_opts.shape_end. CLI_OK, or
 * CLI_FAIL reported, with whatever was opened left in *w and *col for the caller's cleanup
 * (*bg: the drain thread runs). */
struct spt_writer;
struct collect;
struct collect_table;
struct uprobe_loader;
struct collect_shape;
/* The first name of the comma-separated list that known(ctx, name) does not know, copied into
 * bad (n bytes); NULL when every one is known. */
const char *record_scenario_unknown(const char *list, bool (*known)(const void *ctx, const char *name),
				    const void *ctx, char *bad, size_t n);

int record_capture_open(struct cli *c, const struct record_common *rc, const char *system, const char *version,
			const char *node_prefix, struct uprobe_loader *l, const struct collect_table *table,
			int (*shape)(void *ctx, struct collect_shape *s), int (*shape_end)(void *ctx, struct collect_shape *s),
			void *shape_ctx, struct spt_writer **w, struct collect **col, bool *bg);

/* A progress line on stderr (nothing with --json): seconds since t0_ms, what, and the records
 * captured and events written so far (events follow the records at idle priority). */
void record_progress(const struct cli *c, struct collect *col, uint64_t t0_ms, const char *what);

/* A fresh work directory for a recording's nodes, /tmp/spectap-record-XXXXXX (dir: a buffer of
 * that template), with the recorder's pid in it; the directories of recorders that were killed
 * (their pid gone) are removed first, and said so. 0, or -errno (mkdtemp's). */
int record_make_workdir(char *dir);
/* path made absolute against the working directory, its symlinks kept (a program may read the
 * name it was started as: redis-server is a link to redis-check-rdb); path itself when it is
 * absolute already or does not fit. */
const char *record_abs_path(const char *path, char *buf, size_t size);

/* The end of a capture that was interrupted (its nodes already stopped): what was captured is
 * kept in the trace, left unclosed so that it reads as incomplete (*w abandoned and NULL).
 * Reports and returns 128 + the signal. */
int record_interrupted(struct cli *c, const struct record_common *rc, struct collect *col, struct spt_writer **w);
/* The verdict of a finished capture: CLI_FAIL (reported) when bad nodes' end states differ from
 * what `against` reports, or events were lost without --allow-loss; else CLI_OK. */
int record_verdict(struct cli *c, const struct record_common *rc, unsigned bad, const char *nodes,
		   const char *against, uint64_t lost);

/* argv[1] is the system's name; the rest are its options. */
int record_etcd(int argc, char **argv);
int record_zookeeper(int argc, char **argv);
int record_redisraft(int argc, char **argv);
/* A system described as data (systems/NAME/system.yaml): tools/record_desc.c. */
int record_described(int argc, char **argv);

#endif
