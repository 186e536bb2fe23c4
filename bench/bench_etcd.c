/* bench_etcd: what capturing etcd with spectap's probes costs, measured (issue 6). See
 * bench_etcd.h for the parts; bench/run.sh runs it and bench/RESULTS.md has the figures.
 *
 *	bench_etcd [--parts puts,hits,rate] [--rounds 5] [--puts 2000] [--concurrency 8] [--put-rate N|half]
 *	           [--calls 20000] [--reps 7] [--rate-ms 3000] [--threads 1,2,4]
 *	           [--log-terms 1000] [--live] [--etcd /usr/bin/etcd] [--putload P] [--hitloop P]
 *
 * --live: the collector shapes records as it drains them (no spool: collect_opts.spool).
 * --put-rate: the puts part paces its puts (N per second, or half the warm-up's unpaced rate) in
 * both modes, for latency at a fixed load instead of throughput.
 *
 * Needs root (BPF). putload and hitloop default to build/tools/putload and build/bench/hitloop,
 * found beside this binary. Exit status: 0 done, 1 failed, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_etcd.h"
#include "cluster.h"

/* rel beside this binary (build/bench/bench_etcd -> build/<rel>), or NULL. */
static const char *beside(char *buf, size_t size, const char *rel)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	for (int k = 0; k < 2; k++) {
		char *slash = strrchr(buf, '/');
		if (!slash)
			return NULL;
		*slash = 0;
	}
	if (strlen(buf) + strlen(rel) + 2 > size)
		return NULL;
	strcat(buf, "/");
	strcat(buf, rel);
	return buf;
}

static int usage(const char *msg)
{
	fprintf(stderr, "bench_etcd: %s\nusage: bench_etcd [--parts puts,hits,rate] [--rounds N] [--puts N] "
			"[--concurrency N] [--put-rate N|half] [--calls N] [--reps N] [--rate-ms MS] [--threads 1,2,4] [--log-terms N] [--live] [--flush-ms MS] "
			"[--etcd P] [--putload P] [--hitloop P]\n", msg);
	return 2;
}

static bool parse_u(const char *s, unsigned *v)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (errno || end == s || *end || x == 0 || x > 10000000)
		return false;
	*v = (unsigned)x;
	return true;
}

static int parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option lo[] = {
		{ "parts", required_argument, NULL, 'p' },   { "rounds", required_argument, NULL, 'r' },
		{ "puts", required_argument, NULL, 'n' },    { "concurrency", required_argument, NULL, 'c' },
		{ "put-rate", required_argument, NULL, 'q' },
		{ "calls", required_argument, NULL, 'C' },   { "reps", required_argument, NULL, 'R' },
		{ "rate-ms", required_argument, NULL, 'm' }, { "threads", required_argument, NULL, 't' },
		{ "etcd", required_argument, NULL, 'e' },    { "putload", required_argument, NULL, 'P' },
		{ "hitloop", required_argument, NULL, 'H' }, { "log-terms", required_argument, NULL, 'L' },
		{ "live", no_argument, NULL, 'l' },          { "flush-ms", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	char *tok, *save;
	int opt;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->puts_part = o->hits_part = o->rate_part = false;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (!strcmp(tok, "puts"))
					o->puts_part = true;
				else if (!strcmp(tok, "hits"))
					o->hits_part = true;
				else if (!strcmp(tok, "rate"))
					o->rate_part = true;
				else
					return usage("--parts: puts, hits, rate");
			}
			break;
		case 't':
			o->nthreads = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (o->nthreads == BENCH_MAX_THREADS || !parse_u(tok, &o->threads[o->nthreads++]))
					return usage("--threads: up to 8 counts, e.g. 1,2,4");
			break;
		case 'r': if (!parse_u(optarg, &o->rounds)) return usage("--rounds"); break;
		case 'n': if (!parse_u(optarg, &o->puts)) return usage("--puts"); break;
		case 'c': if (!parse_u(optarg, &o->concurrency)) return usage("--concurrency"); break;
		case 'q':
			if (!strcmp(optarg, "half"))
				o->put_rate_half = true;
			else if (!parse_u(optarg, &o->put_rate))
				return usage("--put-rate: puts per second, or half");
			break;
		case 'C': if (!parse_u(optarg, &o->calls)) return usage("--calls"); break;
		case 'R': if (!parse_u(optarg, &o->reps)) return usage("--reps"); break;
		case 'm': if (!parse_u(optarg, &o->rate_ms)) return usage("--rate-ms"); break;
		case 'L': if (!parse_u(optarg, &o->log_terms)) return usage("--log-terms"); break;
		case 'l': o->live = true; break;
		case 'F': if (!parse_u(optarg, &o->flush_ms)) return usage("--flush-ms"); break;
		case 'e': o->etcd = optarg; break;
		case 'P': o->putload = optarg; break;
		case 'H': o->hitloop = optarg; break;
		default: return usage("unknown option");
		}
	}
	return optind == argc ? 0 : usage("unexpected argument");
}

/* What part 1's hit rates cost at part 2's price per hit, beside the collector's own CPU. */
static void estimate(const struct puts_summary *p, const struct hits_summary *h)
{
	double entry = p->entry_hits_per_s * h->entry_ns / 1e9, ret = p->ret_hits_per_s * h->ret_ns / 1e9;
	printf("estimate (CPUs, the machine has %ld): probe hits in etcd: entry %.0f/s x %.0f ns = %.2f, RET %.0f/s x %.0f ns "
	       "= %.2f; collector %.2f; in all %.2f. Measured throughput loss %.1f%%\n",
	       sysconf(_SC_NPROCESSORS_ONLN), p->entry_hits_per_s, h->entry_ns, entry, p->ret_hits_per_s, h->ret_ns, ret,
	       p->collector_cpu, entry + ret + p->collector_cpu, 100 * (1 - p->ratio));
}

/* Other work on the machine skews every figure: say how busy it was. */
static void print_load(const char *when)
{
	char buf[128] = "?";
	FILE *f = fopen("/proc/loadavg", "r");
	if (f && fgets(buf, sizeof(buf), f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
	printf("bench_etcd %s: %ld CPUs, load average %s\n", when, sysconf(_SC_NPROCESSORS_ONLN), buf);
}

int main(int argc, char **argv)
{
	char pl[PATH_MAX], hl[PATH_MAX];
	struct bench_opts o = { .etcd = etcd_programs[ETCD_PROG_ETCD].path, .rounds = 5, .puts = 2000, .concurrency = 8,
				.calls = 20000, .reps = 7, .rate_ms = 3000, .threads = { 1, 2, 4 }, .nthreads = 3,
				.puts_part = true, .hits_part = true, .rate_part = true };
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	if (!o.putload)
		o.putload = beside(pl, sizeof(pl), "tools/putload");
	if (!o.hitloop)
		o.hitloop = beside(hl, sizeof(hl), "bench/hitloop");
	if (geteuid() != 0) {
		fprintf(stderr, "bench_etcd: needs root (eBPF uprobes)\n");
		return 1;
	}
	if ((o.puts_part && (!o.putload || access(o.putload, X_OK) || access(o.etcd, X_OK))) ||
	    ((o.hits_part || o.rate_part) && (!o.hitloop || access(o.hitloop, X_OK)))) {
		fprintf(stderr, "bench_etcd: missing %s, %s or %s (make all build/bench/hitloop)\n", o.etcd,
			o.putload ? o.putload : "putload", o.hitloop ? o.hitloop : "hitloop");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_load("start");
	struct puts_summary ps = { 0 };
	struct hits_summary hs = { 0 };
	if (o.puts_part && bench_puts(&o, &ps))
		return 1;
	if (o.hits_part && bench_hits(&o, &hs))
		return 1;
	if (ps.done && hs.done)
		estimate(&ps, &hs);
	if (o.rate_part && bench_rate(&o))
		return 1;
	print_load("end");
	return 0;
}
