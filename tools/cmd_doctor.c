/* spectap doctor: every external program spectap, its tests and its build run, the Debian
 * package that provides each, and whether this machine has it. */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cluster.h"
#include "commands.h"
#include "desc.h"
#include "netns.h"
#include "ensemble.h"
#include "lttng_reader.h"
#include "rr_cluster.h"

static const char usage[] =
	"usage: spectap doctor [--json]\n"
	"\n"
	"Lists every external program (and data file) that spectap, its demo, its tests and its\n"
	"build run or read, the Debian package that provides it and whether this machine has it.\n"
	"scripts/deps.sh installs every one of those packages (`make deps`).\n"
	"\n"
	"  --json      one JSON object: {\"programs\":[{\"path\",\"package\",\"purpose\",\"present\"}],\"missing\":n}\n"
	"  -h, --help  this text\n"
	"\n"
	"Exit status: 0 when everything is present, 1 when something is missing (the message\n"
	"names the packages to install), 2 usage.\n";

/* What the build, the tests and the benchmarks run besides the recorders' programs. */
static const struct spt_program toolchain[] = {
	{ "/usr/bin/gcc", "gcc", "the C compiler (build)" },
	{ "/usr/bin/clang", "clang", "BPF programs and the fuzz targets (build)" },
	{ "/usr/bin/make", "make", "the build" },
	{ "/usr/bin/protoc-c", "protobuf-c-compiler", "the trace schema's C code (build)" },
	{ "/usr/sbin/bpftool", "bpftool", "vmlinux.h and BPF skeletons (build), BPF statistics (bench)" },
	{ "/usr/bin/go", "golang-go", "putload, and the Go programs of the tests and benches (build)" },
	{ "/usr/bin/npm", "npm|nodejs", "fetches the TLA+ grammar at build time" },
	{ "/usr/bin/jq", "jq", "the CLI tests and the demo's tables" },
	{ "/usr/bin/zstd", "zstd", "the trace-file tests (a trace decodes with zstd -d)" },
	{ "/usr/bin/objcopy", "binutils", "a stripped target for the DWARF tests" },
	{ "/usr/bin/pgrep", "procps", "the tests' checks that nothing is left running" },
};

static void add(const struct spt_program *p, size_t n, const struct spt_program **all, size_t *k)
{
	for (size_t i = 0; i < n && p[i].path; i++)
		all[(*k)++] = &p[i];
}

/* The programs and sources of the systems described as data (systems/NAME/system.yaml): each
 * one's binary, and the source of its Go probes. Strings kept for the process's life. */
#define MAX_DESCRIBED 16
static struct spt_program described[2 * MAX_DESCRIBED];

static size_t add_described(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], err[DESC_ERR_SIZE];
	size_t n = 0;
	DIR *d;
	if (desc_dir(dir, sizeof(dir)) || !(d = opendir(dir)))
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) && n + 2 <= sizeof(described) / sizeof(*described)) {
		struct desc ds;
		snprintf(path, sizeof(path), "%s/%s/system.yaml", dir, e->d_name);
		if (e->d_name[0] == '.' || access(path, R_OK) || desc_load(path, &ds, err))
			continue;
		char purpose[256], src[PATH_MAX];
		snprintf(purpose, sizeof(purpose), "the nodes of spectap record %s (systems/%s/system.yaml)", ds.name, ds.name);
		described[n++] = (struct spt_program){ strdup(ds.binary), strdup(ds.package ? ds.package : "?"),
						       strdup(purpose) };
		if (ds.lang == DESC_LANG_GO && ds.go_debian) {
			snprintf(src, sizeof(src), "%s/src/%s", ds.go_path, ds.go_package);
			snprintf(purpose, sizeof(purpose), "the source spectap record %s reads its Go probes' offsets from",
				 ds.name);
			described[n++] = (struct spt_program){ strdup(src), strdup(ds.go_debian), strdup(purpose) };
		}
		desc_free(&ds);
	}
	closedir(d);
	return n;
}

int cmd_doctor(int argc, char **argv)
{
	struct cli c = { .cmd = "doctor", .usage = usage };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
		if (opt != 'j')
			return cli_other_opt(&c, opt, argv);
	if (optind != argc)
		return cli_usage_error(&c, "unexpected argument '%s'", argv[optind]);

	const struct spt_program *all[64];
	size_t n = 0;
	add(etcd_programs, ETCD_N_PROGS, all, &n);
	add(zk_programs, ZK_N_PROGS, all, &n);
	add(rr_programs, RR_N_PROGS, all, &n);
	add(lttng_programs, 1, all, &n);
	add(netns_programs, NETNS_N_PROGS, all, &n);
	add(toolchain, sizeof(toolchain) / sizeof(toolchain[0]), all, &n);
	add(described, add_described(), all, &n);

	char missing[1024] = "";
	size_t n_missing = 0, used = 0;
	if (c.json)
		printf("{\"programs\":[");
	for (size_t i = 0; i < n; i++) {
		const struct spt_program *p = all[i];
		bool present = access(p->path, R_OK) == 0;
		size_t plen = strcspn(p->package, "|");
		if (!present) {
			n_missing++;
			int w = snprintf(missing + used, sizeof(missing) - used, " %.*s", (int)plen, p->package);
			if (w > 0 && (size_t)w < sizeof(missing) - used)
				used += (size_t)w;
		}
		if (c.json) {
			printf("%s{\"path\":", i ? "," : "");
			cli_json_str(stdout, p->path);
			printf(",\"package\":");
			cli_json_str(stdout, p->package);
			printf(",\"purpose\":");
			cli_json_str(stdout, p->purpose);
			printf(",\"present\":%s}", present ? "true" : "false");
		} else {
			printf("%-8s %-46s %-26.*s %s\n", present ? "ok" : "MISSING", p->path, (int)plen, p->package,
			       p->purpose);
		}
	}
	if (c.json)
		printf("],\"missing\":%zu}\n", n_missing);
	if (!n_missing)
		return CLI_OK;
	if (!c.json)
		fprintf(stderr, "spectap doctor: %zu missing; install them with `make deps` (or apt-get install%s)\n",
			n_missing, missing);
	return CLI_FAIL;
}
