/* spectap export: .spt -> NDJSON (etcd-ndjson, sysmobench, json) */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "export_module.h"
#include "spectap/dialect.h"

static const char usage[] =
	"usage: spectap export --to DIALECT FILE.spt [-o OUT.ndjson] [options]\n"
	"\n"
	"Writes a trace as NDJSON, to standard output unless -o is given.\n"
	"\n"
	"  --to DIALECT     json (lossless), etcd-ndjson (etcd-io/raft trace validation),\n"
	"                   sysmobench (SysMoBench/Specula envelope; for a system described as\n"
	"                   data, in the dialect its description names: dialects.sysmobench)\n"
	"  -o, --output F   write to F instead of standard output\n"
	"  -f, --force      replace F if it exists\n"
	"  --json           print the summary as JSON (on stdout with -o, else on stderr)\n"
	CLI_ALLOW_DAMAGE_HELP
	"  -h, --help       this text\n"
	"\n"
	"What the target dialect cannot hold is listed on stderr, with counts. A damaged trace\n"
	"is exported as far as it can be read, and exits 3 unless --allow-damage.\n";

static void summary(struct cli *c, FILE *f, const char *dialect, uint64_t events,
		    const struct spt_export *ex, const struct spt_trace_info *info)
{
	const struct spt_drop *d;
	size_t n = spt_export_dropped(ex, &d);
	if (c->json) {
		fprintf(f, "{\"dialect\":\"%s\",\"events\":%" PRIu64 ",\"dropped\":{", dialect, events);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, i ? "," : "");
			cli_json_str(f, d[i].what);
			fprintf(f, ":%" PRIu64, d[i].count);
		}
		fprintf(f, "}");
		cli_json_damage(f, info);
		fprintf(f, "}\n");
		return;
	}
	fprintf(stderr, "spectap export: %" PRIu64 " events written as %s\n", events, dialect);
	if (n)
		fprintf(stderr, "spectap export: %s cannot hold:\n", dialect);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  %s: %" PRIu64 "\n", d[i].what, d[i].count);
}

int cmd_export(int argc, char **argv)
{
	struct cli c = { .cmd = "export", .usage = usage };
	enum spt_dialect dialect = SPT_DIALECT_JSON;
	bool have_dialect = false, force = false;
	const char *out = NULL;
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 'T' },   { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },      { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },       CLI_ALLOW_DAMAGE_OPTION,
		{ NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt;
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'T':
			if (spt_dialect_from_name(optarg, &dialect))
				return cli_usage_error(&c, "--to: unknown dialect '%s' (known: %s)", optarg,
						       spt_dialect_names());
			have_dialect = true;
			break;
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'j': break;
		case CLI_OPT_ALLOW_DAMAGE: c.allow_damage = true; break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (!have_dialect)
		return cli_usage_error(&c, "--to DIALECT is required (one of: %s)", spt_dialect_names());
	if (optind + 1 != argc)
		return cli_usage_error(&c, optind == argc ? "the trace file is missing"
							  : "one trace file expected");
	const char *path = argv[optind];

	struct spt_reader *r;
	int rc = cli_open_trace(&c, path, &r);
	if (rc)
		return rc;
	struct spt_export *ex = NULL;
	struct spt_buf b = { 0 };
	uint64_t events = 0, lines = 0;
	char module[PATH_MAX];
	FILE *f = cli_create_output(&c, out, force);
	rc = CLI_FAIL;
	if (!f)
		goto done;
	if (dialect == SPT_DIALECT_SYSMOBENCH && export_module_find(spt_reader_header(r), module, sizeof(module))) {
		if ((rc = export_module_run(&c, module, r, f, out, &events, &lines)) != CLI_OK)
			goto done;
		if (fflush(f)) {
			rc = cli_fail(&c, "cannot write %s: %s", out ? out : "standard output", strerror(errno));
			goto done;
		}
		FILE *sf = out && strcmp(out, "-") ? stdout : stderr;
		if (c.json)
			fprintf(sf, "{\"dialect\":\"sysmobench\",\"module\":\"%s\",\"events\":%" PRIu64 ",\"lines\":%" PRIu64 "}\n",
				module, events, lines);
		else
			fprintf(stderr, "spectap export: %" PRIu64 " events written as %" PRIu64 " sysmobench lines by %s\n",
				events, lines, module);
		rc = cli_damage_exit(&c, path, r, CLI_OK);
		goto done;
	}
	if (spt_export_new(dialect, spt_reader_header(r), &ex) || spt_export_begin(ex, &b)) {
		cli_fail(&c, "out of memory");
		goto done;
	}
	const struct spt_event *ev;
	int k;
	while ((k = spt_reader_next(r, &ev)) == 1) {
		if (spt_export_event(ex, ev, &b)) {
			cli_fail(&c, "out of memory");
			goto done;
		}
		events++;
		if (b.len >= 1 << 16 && !cli_flush(&b, f)) {
			cli_fail(&c, "cannot write %s: %s", out ? out : "standard output", strerror(errno));
			goto done;
		}
		if ((events & 0xffff) == 0)
			cli_progress(&c, "%" PRIu64 " events", events);
	}
	if (k < 0) {
		cli_fail(&c, "reading %s: %s", path, strerror(-k));
		goto done;
	}
	if (spt_export_end(ex, &b)) {
		cli_fail(&c, "out of memory");
		goto done;
	}
	const struct spt_loss *losses;
	size_t nl = spt_reader_losses(r, &losses);
	for (size_t i = 0; i < nl; i++)
		spt_export_loss(ex, &losses[i], &b);
	if (!cli_flush(&b, f) || fflush(f)) {
		cli_fail(&c, "cannot write %s: %s", out ? out : "standard output", strerror(errno));
		goto done;
	}
	cli_progress_done(&c);
	summary(&c, out && strcmp(out, "-") ? stdout : stderr, spt_dialect_name(dialect), events, ex,
		spt_reader_info(r));
	rc = cli_damage_exit(&c, path, r, CLI_OK);
done:
	if (f) {
		int cr = cli_close_output(&c, f, out, rc == CLI_OK || rc == CLI_DAMAGED);
		if (cr && (rc == CLI_OK || rc == CLI_DAMAGED))
			rc = cr;
	}
	spt_buf_free(&b);
	spt_export_free(ex);
	spt_reader_close(r);
	return rc;
}
