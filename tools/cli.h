/* Shared by the spectap subcommands: errors, JSON output, progress, input files. */
#ifndef SPECTAP_CLI_H
#define SPECTAP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spectap/buf.h"

/* Exit codes: 0 done, 1 failed (bad input, I/O), 2 wrong usage, 3 the trace read is damaged
 * (what could be read was, and reported; --allow-damage exits 0), 4 (check) nothing was
 * checked: no window, or none of an action the mapping names (--allow-empty exits 0). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_DAMAGED = 3, CLI_EMPTY = 4 };

/* --allow-damage, for the getopt_long tables of the commands that read traces. */
#define CLI_OPT_ALLOW_DAMAGE 0x2000
#define CLI_ALLOW_DAMAGE_OPTION { "allow-damage", no_argument, NULL, CLI_OPT_ALLOW_DAMAGE }
#define CLI_ALLOW_DAMAGE_HELP \
	"  --allow-damage   exit 0 on a damaged trace (the chunks that can be read are, either way)\n"

struct cli {
	const char *cmd;  /* subcommand name, for messages */
	const char *usage;
	bool json;        /* --json: machine-readable output, errors as {"error": "..."} */
	bool quiet;       /* --quiet: no progress lines */
	bool allow_damage; /* --allow-damage: reading a damaged trace is not a failure */
	double progress_at;
};

/* Prints "spectap CMD: message" on stderr, or {"error":"message"} on stdout with --json. */
int cli_fail(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A usage error: the message, then the usage text; returns CLI_USAGE. */
int cli_usage_error(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_help(struct cli *c);
/* Before getopt_long: --json anywhere turns JSON errors on (even for bad options), and getopt
 * starts afresh. */
void cli_begin(struct cli *c, int argc, char **argv);
/* What getopt_long returned for --help (h), a missing value (:) or an unknown option. */
int cli_other_opt(struct cli *c, int opt, char **argv);
void cli_warn(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* At most about once a second, on a terminal only (not with --json or --quiet), overwriting the
 * line. */
void cli_progress(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_progress_done(struct cli *c);
/* Parses a non-negative integer option value; false (and a usage message) when malformed. */
bool cli_parse_u64(struct cli *c, const char *opt, const char *s, uint64_t *out);

/* A whole input file (or "-" for stdin) in memory; mapped when it is a regular file. */
struct cli_input {
	const char *name;
	const char *data;
	size_t len;
	bool mapped;
	bool owned; /* read into a buffer of its own (freed by close) */
};
int cli_input_open(struct cli *c, const char *path, struct cli_input *in);
void cli_input_close(struct cli_input *in);

/* A file built beside the running spectap: DIR/rel where DIR is spectap's directory
 * (build/spectap -> build/rel) or its parent (the sanitized build/san/spectap), if access(mode)
 * allows it; else NULL. */
const char *cli_beside_self(const char *rel, int mode, char *buf, size_t size);
/* Copies a file's bytes (replacing to). 0 or -errno (-EIO on a short write). */
int cli_copy_file(const char *from, const char *to);
/* Prints s as a JSON string literal. */
void cli_json_str(FILE *f, const char *s);
/* Writes the buffer to f and clears it; false on a write error. */
bool cli_flush(struct spt_buf *b, FILE *f);
/* The process's command line, space-joined, for trace headers. */
const char *cli_command_line(void);
void cli_set_command_line(int argc, char **argv);

/* Counters keyed by string, kept in first-seen order. */
struct cli_counts {
	char **names;
	uint64_t *counts;
	size_t n, cap;
};
int cli_count(struct cli_counts *m, const char *name, uint64_t n);
void cli_counts_free(struct cli_counts *m);
/* Indices sorted by count, largest first (ties: first seen first). Caller frees. */
size_t *cli_counts_by_size(const struct cli_counts *m);


#include "spectap/trace.h"

/* Opens a trace; reports the error and returns CLI_FAIL, or warns when it was recovered. */
int cli_open_trace(struct cli *c, const char *path, struct spt_reader **r);
/* Warns when reading found damage (a torn or corrupt chunk): what was lost and where. */
void cli_warn_damage(struct cli *c, const char *path, const struct spt_reader *r);
/* After reading the trace: warns about damage, and turns rc (CLI_OK) into CLI_DAMAGED unless
 * --allow-damage. */
int cli_damage_exit(struct cli *c, const char *path, const struct spt_reader *r, int rc);
/* The damage as a JSON member: ,"damage":null or ,"damage":{"offset":...}. */
void cli_json_damage(FILE *f, const struct spt_trace_info *i);
/* Creates an output file, refusing to replace one unless force; "-" or NULL is stdout. It is
 * written as PATH.partial (never through a symlink; with force, one a killed run left is removed
 * first) and renamed over PATH by cli_close_output: a failure or a crash never leaves half a file
 * at PATH, nor destroys the file it replaces. */
FILE *cli_create_output(struct cli *c, const char *path, bool force);
/* Closes an output of cli_create_output: kept, it is renamed into place; else removed. CLI_OK,
 * or CLI_FAIL when it could not be written (reported). */
int cli_close_output(struct cli *c, FILE *f, const char *path, bool keep);

#endif
