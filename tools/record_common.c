/* The options every spectap record command shares; see record.h. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>

#include "record.h"

#include <stdio.h>

#include "collect.h"
#include "supervise.h"
#include "spectap/trace.h"

int record_common_opt(struct cli *c, int opt, const char *arg, struct record_common *rc, unsigned min_nodes,
		      unsigned max_nodes)
{
	uint64_t v;
	switch (opt) {
	case 's': rc->scenario = arg; return 1;
	case 'o': rc->out = arg; return 1;
	case 'f': rc->force = true; return 1;
	case 'L': rc->allow_loss = true; return 1;
	case 'j': return 1; /* cli_begin saw it */
	case 'n':
		if (!cli_parse_u64(c, "--nodes", arg, &v))
			return -1;
		if (v < min_nodes || v > max_nodes) {
			cli_usage_error(c, "--nodes: %" PRIu64 " is not in %u..%u", v, min_nodes, max_nodes);
			return -1;
		}
		rc->nodes = (unsigned)v;
		return 1;
	case 'S':
		return cli_parse_u64(c, "--seed", arg, &rc->seed) ? 1 : -1;
	case RECORD_OPT_FLUSH_MS:
		if (!cli_parse_u64(c, "--flush-ms", arg, &v))
			return -1;
		if (v > 3600000) {
			cli_usage_error(c, "--flush-ms: %" PRIu64 " is not in 0..3600000", v);
			return -1;
		}
		rc->flush_ms = (unsigned)v;
		rc->flush_ms_given = true;
		return 1;
	case RECORD_OPT_FLUSH_EVENTS:
		if (!cli_parse_u64(c, "--flush-events", arg, &v))
			return -1;
		if (v < 1 || v > 100000000) {
			cli_usage_error(c, "--flush-events: %" PRIu64 " is not in 1..100000000", v);
			return -1;
		}
		rc->flush_events = v;
		return 1;
	case 'T':
		if (!cli_parse_u64(c, "--log-terms", arg, &v))
			return -1;
		if (v < 1 || v > 1000000) {
			cli_usage_error(c, "--log-terms: %" PRIu64 " is not in 1..1000000", v);
			return -1;
		}
		rc->log_terms = (size_t)v;
		return 1;
	default: return 0;
	}
}

unsigned record_flush_ms(const struct record_common *rc)
{
	return rc->flush_ms_given ? rc->flush_ms : RECORD_FLUSH_MS;
}

struct spt_writer_opts record_writer_opts(const struct record_common *rc)
{
	unsigned ms = record_flush_ms(rc);
	/* Flushed means on disk: a power loss too. */
	return (struct spt_writer_opts){.sz = sizeof(struct spt_writer_opts), .overwrite = rc->force, .flush_ms = ms,
					.flush_events = rc->flush_events, .sync = ms > 0 || rc->flush_events > 0};
}

void record_pass_flush(const struct record_common *rc, const char **pass, size_t *n, char buf[2][24])
{
	if (rc->flush_ms_given) {
		snprintf(buf[0], sizeof(buf[0]), "%u", rc->flush_ms);
		pass[(*n)++] = "--flush-ms";
		pass[(*n)++] = buf[0];
	}
	if (rc->flush_events) {
		snprintf(buf[1], sizeof(buf[1]), "%" PRIu64, rc->flush_events);
		pass[(*n)++] = "--flush-events";
		pass[(*n)++] = buf[1];
	}
}

/* record_common_check's known(scenario), called through record_scenario_unknown. */
static bool known_plain(const void *ctx, const char *name)
{
	bool (*const *known)(const char *) = ctx;
	return (*known)(name);
}

int record_common_check(struct cli *c, int argc, char **argv, const char *system, const struct record_common *rc,
			bool (*known)(const char *scenario), const char *scenarios)
{
	if (optind >= argc || strcmp(argv[optind], system))
		return cli_usage_error(c, "spectap record %s: the system must come first", system);
	if (optind + 1 != argc)
		return cli_usage_error(c, "unexpected argument '%s'", argv[optind + 1]);
	if (!rc->scenario)
		return cli_usage_error(c, "--scenario is required (%s)", scenarios);
	char bad[128];
	if (record_scenario_unknown(rc->scenario, known_plain, (const void *)&known, bad, sizeof(bad)))
		return cli_usage_error(c, "unknown scenario '%s' (known: %s)", bad, scenarios);
	return CLI_OK;
}

const char *record_scenario_unknown(const char *list, bool (*known)(const void *ctx, const char *name),
				    const void *ctx, char *bad, size_t n)
{
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		snprintf(bad, n, "%.*s", (int)len, p);
		if (!known(ctx, bad))
			return bad;
		p += len;
		if (!*p)
			return NULL;
	}
}

int record_capture_open(struct cli *c, const struct record_common *rc, const char *system, const char *version,
			const char *node_prefix, struct uprobe_loader *l, const struct collect_table *table,
			int (*shape)(void *ctx, struct collect_shape *s), int (*shape_end)(void *ctx, struct collect_shape *s),
			void *shape_ctx, struct spt_writer **w, struct collect **col, bool *bg)
{
	enum { MAX_NODES = 16 };
	const char *names[MAX_NODES];
	char name_buf[MAX_NODES][16], err[1024] = "";
	unsigned n = rc->nodes < MAX_NODES ? rc->nodes : MAX_NODES;

	for (unsigned i = 0; i < n; i++) {
		snprintf(name_buf[i], sizeof(name_buf[i]), "%s%u", node_prefix, i + 1);
		names[i] = rc->node_names ? rc->node_names[i] : name_buf[i];
	}
	struct spt_header h = {.system = system, .system_version = version, .nodes = names, .n_nodes = n,
			       .capture_method = "bpf", .scenario = rc->scenario, .has_seed = true, .seed = rc->seed,
			       .command_line = cli_command_line()};
	struct spt_writer_opts wo = record_writer_opts(rc);
	struct spt_diag d = {""};
	if (spt_writer_open(rc->out, &h, &wo, w, &d))
		return cli_fail(c, "%s", d.msg);
	/* Spooled next to the trace and shaped when the cluster stops (or, past a large backlog, at
	 * idle priority), so the capture takes little CPU from the system it watches (collect.h). */
	char out_copy[PATH_MAX];
	if (snprintf(out_copy, sizeof(out_copy), "%s", rc->out) >= (int)sizeof(out_copy))
		return cli_fail(c, "%s: the output path is longer than %d bytes", rc->out, PATH_MAX - 1);
	struct collect_opts copts = {.sz = sizeof(copts), .shape = shape, .shape_ctx = shape_ctx,
				     .shape_end = shape_end, .named_pids_only = true, .spool = true, .spool_dir = dirname(out_copy),
				     .flush_ms = record_flush_ms(rc)};
	if (collect_new(*w, table, l, &copts, col, err, sizeof(err)))
		return cli_fail(c, "%s", err);
	if (collect_bg_start(*col, 10))
		return cli_fail(c, "%s", collect_error(*col));
	*bg = true;
	return CLI_OK;
}

void record_progress(const struct cli *c, struct collect *col, uint64_t t0_ms, const char *what)
{
	struct collect_stats st;

	if (c->json)
		return;
	collect_bg_stats(col, &st);
	fprintf(stderr, "spectap record: [%5.1fs] %s (%" PRIu64 " records captured, %" PRIu64 " events written)\n",
		(double)(sup_now_ms() - t0_ms) / 1000.0, what, st.spooled, st.events);
}

int record_interrupted(struct cli *c, const struct record_common *rc, struct collect *col, struct spt_writer **w)
{
	int sig = sup_interrupted();
	uint64_t lost = 0;
	int frc = collect_bg_stop(col);
	if (frc >= 0)
		frc = collect_drain(col);
	if (frc >= 0)
		frc = collect_finish(col, &lost);
	spt_writer_abandon(*w); /* collect_finish flushed */
	*w = NULL;
	if (frc < 0)
		cli_fail(c, "interrupted by signal %d; saving the events captured so far failed: %s", sig,
			 collect_error(col));
	else
		cli_fail(c, "interrupted by signal %d: %s keeps the %" PRIu64 " events captured so far, marked "
			    "incomplete (not closed)", sig, rc->out, collect_stats(col)->events);
	return 128 + sig;
}

int record_verdict(struct cli *c, const struct record_common *rc, unsigned bad, const char *nodes,
		   const char *against, uint64_t lost)
{
	if (bad)
		return cli_fail(c, "the trace's end state differs from %s for %u %s", against, bad, nodes);
	if (lost && !rc->allow_loss)
		return cli_fail(c, "%" PRIu64 " events were lost (recorded in the trace); --allow-loss accepts that", lost);
	return CLI_OK;
}

/* A work directory whose recorder is gone: its owner file names a pid that no longer runs. */
static bool orphaned(const char *dir)
{
	char path[PATH_MAX + 16];
	long pid = 0;
	snprintf(path, sizeof(path), "%s/owner.pid", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return false; /* not ours to judge: made before owner files, or being made */
	bool got = fscanf(f, "%ld", &pid) == 1 && pid > 0;
	fclose(f);
	return got && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

int record_make_workdir(char *dir)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[PATH_MAX];
		if (strncmp(e->d_name, "spectap-record-", 15) ||
		    (size_t)snprintf(path, sizeof(path), "/tmp/%s", e->d_name) >= sizeof(path) || !orphaned(path))
			continue;
		if (!sup_rm_rf(path))
			fprintf(stderr, "spectap record: removed %s, the work directory of a recorder that was killed\n", path);
	}
	if (d)
		closedir(d);
	if (!mkdtemp(dir))
		return -errno;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/owner.pid", dir);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
	}
	return 0;
}

const char *record_abs_path(const char *path, char *buf, size_t size)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)) || (size_t)snprintf(buf, size, "%s/%s", cwd, path) >= size)
		return path;
	return buf;
}
