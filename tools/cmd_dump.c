/* spectap dump: events, one per line, filtered. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "spectap/dialect.h"

static const char usage[] =
	"usage: spectap dump FILE.spt [options]\n"
	"\n"
	"Prints events in trace order, one per line: ordinal, time since the first event,\n"
	"node, Lamport clock, kind, the message sent or received, the state after the step\n"
	"and the step's arguments, in TLA+ notation.\n"
	"\n"
	"  --kind PATTERNS  only events whose kind matches one of the comma-separated globs\n"
	"  --node PATTERNS  only events of matching nodes (both options may repeat)\n"
	"  --from N         start at the N-th event (0-based; seeks through the index)\n"
	"  --since NS       start at the first event with ts_ns >= NS\n"
	"  --count N        print at most N events\n"
	"  --meta           also print the fields kept from the source format\n"
	"  --json           events as lines of spectap's json dialect\n"
	CLI_ALLOW_DAMAGE_HELP
	"  -h, --help       this text\n"
	"\n"
	"Ordinals are the writer's: an event in a damaged chunk is skipped, never renumbered.\n"
	"Exit status: 0 done, 1 failed, 2 usage, 3 the trace is damaged (reported).\n";

struct patterns {
	char **p;
	size_t n;
};

static int add_patterns(struct patterns *ps, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **n = realloc(ps->p, (ps->n + 1) * sizeof(*n));
		if (!n || !(n[ps->n] = strdup(t))) {
			free(n ? n : ps->p);
			free(copy);
			return -ENOMEM;
		}
		ps->p = n;
		ps->n++;
	}
	free(copy);
	return 0;
}

static bool matches(const struct patterns *ps, const char *s)
{
	if (!ps->n)
		return true;
	for (size_t i = 0; i < ps->n; i++)
		if (!fnmatch(ps->p[i], s, 0))
			return true;
	return false;
}

static void free_patterns(struct patterns *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->p[i]);
	free(ps->p);
}

static void print_event(uint64_t ord, uint64_t t0, const struct spt_event *ev, bool meta)
{
	uint64_t dt = ev->ts_ns >= t0 ? ev->ts_ns - t0 : 0;
	printf("#%-6" PRIu64 " +%" PRIu64 ".%06" PRIu64 "s  %-4s L%-5" PRIu64 " %s", ord,
	       dt / 1000000000u, dt / 1000u % 1000000u, ev->node, ev->lamport, ev->kind);
	if (ev->msg) {
		const struct spt_msg *m = ev->msg;
		printf("  %s #%" PRIu64 " %s %s->%s", m->dir == SPT_MSG_SEND ? "send" : "recv", m->id,
		       m->type, m->from, m->to);
		if (m->fields) {
			putchar(' ');
			spt_value_print(stdout, m->fields);
		}
	}
	if (ev->state) {
		fputs("  state ", stdout);
		spt_value_print(stdout, ev->state);
	}
	if (ev->args) {
		fputs("  args ", stdout);
		spt_value_print(stdout, ev->args);
	}
	if (meta && ev->meta) {
		fputs("  meta ", stdout);
		spt_value_print(stdout, ev->meta);
	}
	putchar('\n');
}

int cmd_dump(int argc, char **argv)
{
	struct cli c = { .cmd = "dump", .usage = usage };
	struct patterns kinds = { 0 }, nodes = { 0 };
	uint64_t from = 0, count = UINT64_MAX, since = 0;
	bool have_from = false, have_since = false, meta = false;
	static const struct option longopts[] = {
		{ "kind", required_argument, NULL, 'k' },  { "node", required_argument, NULL, 'n' },
		{ "from", required_argument, NULL, 'F' },  { "count", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' }, { "meta", no_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },        { "help", no_argument, NULL, 'h' },
		CLI_ALLOW_DAMAGE_OPTION,                   { NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt, rc = CLI_USAGE;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'k':
		case 'n':
			if (add_patterns(opt == 'k' ? &kinds : &nodes, optarg)) {
				rc = cli_fail(&c, "out of memory");
				goto out;
			}
			break;
		case 'F':
			if (!cli_parse_u64(&c, "--from", optarg, &from))
				goto out;
			have_from = true;
			break;
		case 'c':
			if (!cli_parse_u64(&c, "--count", optarg, &count))
				goto out;
			break;
		case 's':
			if (!cli_parse_u64(&c, "--since", optarg, &since))
				goto out;
			have_since = true;
			break;
		case 'm': meta = true; break;
		case 'j': break;
		case CLI_OPT_ALLOW_DAMAGE: c.allow_damage = true; break;
		case 'h': rc = cli_help(&c); goto out;
		case ':': rc = cli_usage_error(&c, "%s needs a value", argv[optind - 1]); goto out;
		default: rc = cli_usage_error(&c, "unknown option '%s'", argv[optind - 1]); goto out;
		}
	}
	if (optind + 1 != argc) {
		rc = cli_usage_error(&c, optind == argc ? "the trace file is missing" : "one trace file expected");
		goto out;
	}
	if (have_from && have_since) {
		rc = cli_usage_error(&c, "--from and --since exclude each other");
		goto out;
	}
	const char *path = argv[optind];
	struct spt_reader *r;
	if ((rc = cli_open_trace(&c, path, &r)))
		goto out;
	const struct spt_trace_info *info = spt_reader_info(r);
	struct spt_export *ex = NULL;
	struct spt_buf b = { 0 };
	rc = CLI_FAIL;
	if (c.json && spt_export_new(SPT_DIALECT_JSON, spt_reader_header(r), &ex)) {
		cli_fail(&c, "out of memory");
		goto close;
	}
	/* Times are printed relative to the trace's first event. */
	uint64_t t0 = 0;
	const struct spt_event *ev;
	int k = spt_reader_next(r, &ev);
	if (k == 1)
		t0 = ev->ts_ns;
	if (have_from && from > info->events) {
		cli_fail(&c, "--from %" PRIu64 ": the trace has %" PRIu64 " events", from, info->events);
		goto close;
	}
	k = have_since ? spt_reader_seek_time(r, since) : spt_reader_seek_event(r, from);
	if (k < 0) {
		cli_fail(&c, "cannot seek in %s: %s", path, strerror(-k));
		goto close;
	}
	uint64_t printed = 0;
	while (printed < count) {
		uint64_t ord = spt_reader_tell(r);
		if ((k = spt_reader_next(r, &ev)) != 1)
			break;
		if (!matches(&kinds, ev->kind) || !matches(&nodes, ev->node))
			continue;
		if (ex) {
			spt_export_event(ex, ev, &b);
			cli_flush(&b, stdout);
		} else {
			print_event(ord, t0, ev, meta);
		}
		printed++;
	}
	if (k < 0) {
		cli_fail(&c, "reading %s: %s", path, strerror(-k));
		goto close;
	}
	if (ex) {
		spt_export_end(ex, &b);
		cli_flush(&b, stdout);
	}
	if (fflush(stdout)) {
		cli_fail(&c, "cannot write the output: %s", strerror(errno));
		goto close;
	}
	rc = cli_damage_exit(&c, path, r, CLI_OK);
close:
	spt_buf_free(&b);
	spt_export_free(ex);
	spt_reader_close(r);
out:
	free_patterns(&kinds);
	free_patterns(&nodes);
	return rc;
}
