/* spectap import: NDJSON (etcd-ndjson, sysmobench, json) -> .spt */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "spectap/dialect.h"
#include "spectap/trace.h"

static const char usage[] =
	"usage: spectap import --from DIALECT IN.ndjson -o OUT.spt [options]\n"
	"\n"
	"Converts an NDJSON trace into a .spt trace. IN may be - for standard input.\n"
	"The whole input is checked before OUT is created: a bad line creates nothing.\n"
	"\n"
	"  --from DIALECT   json (spectap's own), etcd-ndjson (etcd-io/raft with_tla events,\n"
	"                   bare or zap-wrapped), sysmobench (SysMoBench/Specula envelope)\n"
	"  -o, --output F   the .spt file to write\n"
	"  -f, --force      replace F if it exists\n"
	"  --system NAME    system recorded in the header (default: from the dialect)\n"
	"  --level N        zstd level, 1-19 (default 3)\n"
	"  --json           print the summary as JSON\n"
	"  -h, --help       this text\n"
	"\n"
	"etcd-ndjson and sysmobench carry no per-node sequence numbers, message ids or causal\n"
	"clocks: import derives them (a receive pairs with the oldest unpaired send of the\n"
	"same message) and reports how many receives found their send.\n";

struct import_opts {
	enum spt_dialect dialect;
	const char *in, *out, *system;
	bool force;
	int level;
};

/* Reads every line; with w set, writes the events. Returns CLI_OK or CLI_FAIL (reported). */
static int run_pass(struct cli *c, const struct cli_input *in, const struct import_opts *o,
		    struct spt_import *im, struct spt_writer *w)
{
	const char *p = in->data, *end = in->data + in->len;
	uint64_t line = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		line++;
		const struct spt_event *ev;
		const struct spt_loss *loss;
		struct spt_json_error err = { 0 };
		int rc = spt_import_line(im, p, len, &ev, &loss, &err);
		if (rc < 0)
			return cli_fail(c, "%s:%" PRIu64 ":%u: %s (byte %zu of the file)", in->name, line,
					err.col ? err.col : 1, err.msg,
					(size_t)(p - in->data) + err.offset);
		if (w && rc == 1 && (rc = spt_writer_append(w, ev))) {
			if (rc == -EFBIG)
				return cli_fail(c, "%s:%" PRIu64 ":1: the event is larger than a trace chunk can hold "
						"(256 MiB encoded), which no reader could read back: split its state or "
						"arguments", in->name, line);
			return cli_fail(c, "writing %s: %s", o->out, strerror(-rc));
		}
		if (w && rc == 2 && (rc = spt_writer_add_loss(w, loss)))
			return cli_fail(c, "writing %s: %s", o->out, strerror(-rc));
		if (w && (line & 0xfff) == 0)
			cli_progress(c, "%" PRIu64 " lines, %.0f%%", line,
				     100.0 * (double)(p - in->data) / (double)in->len);
		p += len + (nl ? 1 : 0);
	}
	return CLI_OK;
}

static const char *default_system(enum spt_dialect d)
{
	return d == SPT_DIALECT_ETCD ? "etcd-raft" : "";
}

static int import(struct cli *c, const struct import_opts *o)
{
	struct cli_input in;
	struct spt_import *scan = NULL, *im = NULL;
	struct spt_writer *w = NULL;
	struct spt_diag d = { { 0 } };
	int rc = cli_input_open(c, o->in, &in);
	if (rc)
		return rc;
	rc = CLI_FAIL;
	if (spt_import_new(o->dialect, &scan) || spt_import_new(o->dialect, &im)) {
		cli_fail(c, "out of memory");
		goto out;
	}
	/* Pass 1 checks everything and learns the node list the header needs. */
	if ((rc = run_pass(c, &in, o, scan, NULL)))
		goto out;
	struct spt_header h = *spt_import_header(scan);
	char method[64];
	snprintf(method, sizeof(method), "import:%s", spt_dialect_name(o->dialect));
	if (o->dialect != SPT_DIALECT_JSON || !h.capture_method || !*h.capture_method)
		h.capture_method = method;
	if (o->system)
		h.system = o->system;
	else if (!h.system || !*h.system)
		h.system = default_system(o->dialect);
	if (o->dialect != SPT_DIALECT_JSON || !h.command_line || !*h.command_line)
		h.command_line = cli_command_line();
	h.writer = NULL;
	struct spt_writer_opts wo = { .sz = sizeof(wo), .level = o->level, .overwrite = o->force };
	struct stat before;
	bool replaces = lstat(o->out, &before) == 0; /* then the writer writes OUT.partial */
	if ((rc = spt_writer_open(o->out, &h, &wo, &w, &d))) {
		rc = cli_fail(c, "%s", d.msg);
		goto out;
	}
	if ((rc = run_pass(c, &in, o, im, w))) {
		spt_writer_discard(w); /* a half import is of no use; a trace it replaced stays */
		w = NULL;
		goto out;
	}
	uint64_t events = spt_writer_events(w);
	int err = spt_writer_close(w, &d);
	w = NULL;
	cli_progress_done(c);
	if (err) {
		if (!replaces)
			unlink(o->out); /* created by this import: a half trace is of no use */
		rc = cli_fail(c, "%s", d.msg);
		goto out;
	}
	const struct spt_import_stats *s = spt_import_stats(im);
	FILE *f = fopen(o->out, "rb");
	long bytes = 0;
	if (f && !fseek(f, 0, SEEK_END))
		bytes = ftell(f);
	if (f)
		fclose(f);
	if (c->json) {
		printf("{\"output\":");
		cli_json_str(stdout, o->out);
		printf(",\"dialect\":\"%s\",\"events\":%" PRIu64 ",\"nodes\":%zu,"
		       "\"bytes\":%ld,\"bytes_per_event\":%.2f,\"sends\":%" PRIu64
		       ",\"receives\":%" PRIu64 ",\"paired\":%" PRIu64 ",\"unpaired_receives\":%" PRIu64
		       ",\"input_bytes\":%zu}\n",
		       spt_dialect_name(o->dialect), events, h.n_nodes, bytes,
		       events ? (double)bytes / (double)events : 0.0, s->sends, s->receives, s->paired,
		       s->unpaired_receives, in.len);
	} else {
		printf("imported %" PRIu64 " events of %zu nodes from %s into %s\n", events, h.n_nodes,
		       in.name, o->out);
		printf("  %ld bytes (%.1f per event; input %zu bytes, %.1fx smaller)\n", bytes,
		       events ? (double)bytes / (double)events : 0.0, in.len,
		       bytes ? (double)in.len / (double)bytes : 0.0);
		if (s->sends || s->receives)
			printf("  messages: %" PRIu64 " sends, %" PRIu64 " receives, %" PRIu64
			       " paired with their send, %" PRIu64 " unpaired\n",
			       s->sends, s->receives, s->paired, s->unpaired_receives);
	}
	rc = CLI_OK;
out:
	spt_writer_abandon(w);
	spt_import_free(scan);
	spt_import_free(im);
	cli_input_close(&in);
	return rc;
}

int cmd_import(int argc, char **argv)
{
	struct cli c = { .cmd = "import", .usage = usage };
	struct import_opts o = { .level = 0 };
	bool have_dialect = false;
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, 'F' }, { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },      { "system", required_argument, NULL, 'S' },
		{ "level", required_argument, NULL, 'L' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt;
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		uint64_t v;
		switch (opt) {
		case 'F':
			if (spt_dialect_from_name(optarg, &o.dialect))
				return cli_usage_error(&c, "--from: unknown dialect '%s' (known: %s)", optarg,
						       spt_dialect_names());
			have_dialect = true;
			break;
		case 'o': o.out = optarg; break;
		case 'f': o.force = true; break;
		case 'S': o.system = optarg; break;
		case 'L':
			if (!cli_parse_u64(&c, "--level", optarg, &v))
				return CLI_USAGE;
			if (v < 1 || v > 19)
				return cli_usage_error(&c, "--level: %" PRIu64 " is not in 1..19", v);
			o.level = (int)v;
			break;
		case 'j': break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (!have_dialect)
		return cli_usage_error(&c, "--from DIALECT is required (one of: %s)", spt_dialect_names());
	if (optind + 1 != argc)
		return cli_usage_error(&c, optind == argc ? "the input file is missing"
							  : "one input file expected");
	if (!o.out)
		return cli_usage_error(&c, "-o OUT.spt is required");
	o.in = argv[optind];
	return import(&c, &o);
}
