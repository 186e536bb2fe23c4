/* Part 1: put throughput and latency of one 3-member etcd cluster, probes off and on. The same
 * cluster and putload settings throughout; rounds alternate which mode goes first, so a drift
 * (the growing database, the machine) does not favour one mode. "On" is the whole recording
 * chain (bench_capture.c) attached to the running members; "off" has the loader closed, so no
 * probe is installed. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_etcd.h"
#include "cluster.h"
#include "probes.h"
#include "supervise.h"

#define MAX_ROUNDS 20
#define NPROBES ETCD_NPROBES

/* The probe set as systems/etcd/probes.c attaches it: site kind and record kind (probes with an
 * ARRAY or BLOCK read write full records). Index = probe id / 10 - 1. */
static const struct {
	const char *name;
	bool ret, full;
} probe_info[NPROBES] = {
	{ "becomeFollower", true, false }, { "becomeCandidate", true, false },
	{ "becomePreCandidate", true, false }, { "becomeLeader", true, false },
	{ "send", false, true }, { "Step (RET)", true, true },
	{ "append", false, true }, { "commitTo", false, false },
	{ "Step (entry)", false, true }, { "applyConfChange", true, false },
	{ "tick (entry)", false, false }, { "applyConfChange (entry)", false, false },
};

struct run {
	bool on;
	struct etcd_load_result load;
	struct capture_result cap;
	struct etcd_probe_sites sites;
	double etcd_cpu_s; /* the members' CPU time over the load */
	double drain_cpu_s; /* this process's threads but the main one (the drain thread), at load end */
	unsigned others;   /* etcd processes not ours, and uprobes on etcd not ours, at the start */
};

struct attach_ctx {
	const char *etcd;
	struct etcd_probe_sites sites;
};

static int attach_etcd(void *ctx, struct uprobe_loader *l, char *err, size_t errlen)
{
	struct attach_ctx *a = ctx;
	return etcd_probes_attach(l, a->etcd, 0, &a->sites, err, errlen);
}

/* CPU of this process's threads other than the main one: the collector's drain thread, which
 * the process total (capture_result.cpu_s) mixes with the main thread's polling and stop. */
static double drain_threads_cpu_s(void)
{
	char path[64];
	double s = 0;
	DIR *d = opendir("/proc/self/task");
	for (struct dirent *e; d && (e = readdir(d));) {
		int tid = atoi(e->d_name);
		if (tid <= 0 || tid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		s += bench_stat_cpu_s(path);
	}
	if (d)
		closedir(d);
	return s;
}

static double members_cpu_s(struct etcd_cluster *cl)
{
	double s = 0;
	for (unsigned i = 0; i < cl->n; i++)
		s += bench_proc_cpu_s(etcd_cluster_pid(cl, i));
	return s;
}

/* Interference: etcd processes other than our members (someone's tests), and uprobes on the
 * etcd binary beyond `ours` (someone's capture: their probes fire in our members too). */
static unsigned others(struct etcd_cluster *cl, const char *etcd, unsigned ours)
{
	char real[PATH_MAX], path[64], exe[PATH_MAX], line[512];
	unsigned n = 0, probes = 0;
	if (!realpath(etcd, real))
		return 0;
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		int pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		ssize_t k = readlink(path, exe, sizeof(exe) - 1);
		if (k <= 0)
			continue;
		exe[k] = 0;
		bool mine = false;
		for (unsigned i = 0; i < cl->n; i++)
			mine |= etcd_cluster_pid(cl, i) == pid;
		n += !mine && !strcmp(exe, real);
	}
	if (d)
		closedir(d);
	FILE *p = popen("bpftool perf list 2>/dev/null", "r");
	while (p && fgets(line, sizeof(line), p))
		probes += strstr(line, "uprobe") && strstr(line, real);
	if (p)
		pclose(p);
	return n + (probes > ours ? probes - ours : 0);
}

static int one_run(struct etcd_cluster *cl, const struct bench_opts *o, bool on, struct run *r)
{
	static const char *const names[] = { "n1", "n2", "n3" };
	char err[1024] = "";
	struct attach_ctx a = { o->etcd, { 0, 0 } };
	struct capture *cap = NULL;
	struct capture_cfg cfg = { .attach = attach_etcd, .ctx = &a, .table = etcd_probe_table(), .etcd_shape = true,
				   .log_terms = o->log_terms, .system = "etcd", .nodes = names, .n_nodes = 3,
				   .live = o->live, .flush_ms = o->flush_ms };
	int rc;

	memset(r, 0, sizeof(*r));
	r->on = on;
	if (on) {
		if ((rc = capture_start(&cap, &cfg, err, sizeof(err)))) {
			fprintf(stderr, "bench_etcd: probes: %s\n", err);
			return rc;
		}
		r->sites = a.sites;
		for (unsigned i = 0; i < cl->n; i++)
			capture_name(cap, etcd_cluster_pid(cl, i), names[i]);
	}
	r->others = others(cl, o->etcd, on ? a.sites.entry + a.sites.entry_branch + a.sites.ret : 0);
	struct etcd_load_opts lo = { .count = o->puts, .concurrency = o->concurrency, .rate = o->put_rate };
	double cpu0 = members_cpu_s(cl);
	rc = etcd_cluster_load(cl, o->putload, &lo, &r->load);
	r->etcd_cpu_s = members_cpu_s(cl) - cpu0;
	if (cap)
		r->drain_cpu_s = drain_threads_cpu_s();
	if (rc)
		fprintf(stderr, "bench_etcd: putload: %s\n", cl->err);
	else if (r->load.failed)
		fprintf(stderr, "bench_etcd: %" PRIu64 " puts failed: %s\n", r->load.failed, r->load.first_error);
	if (cap) {
		int src = capture_stop(cap, &r->cap, err, sizeof(err));
		if (src) {
			fprintf(stderr, "bench_etcd: collector: %s\n", err);
			rc = rc ? rc : src;
		}
	}
	return rc;
}

static void print_run(unsigned round, const struct run *r)
{
	printf("  round %u %-3s %7.0f puts/s  p50 %6.2f ms  p99 %6.2f ms  etcd cpu %5.2f ms/put", round,
	       r->on ? "on" : "off", r->load.per_second, r->load.p50_ms, r->load.p99_ms,
	       1000.0 * r->etcd_cpu_s / (double)(r->load.acked ? r->load.acked : 1));
	if (r->on)
		printf("  events %" PRIu64 " lost %" PRIu64 "  trace %" PRIu64 " KiB  collector %.2f s cpu, %.0f us/event "
		       "(drain thread %.0f)", r->cap.events, r->cap.lost, r->cap.bytes >> 10, r->cap.cpu_s,
		       1e6 * r->cap.cpu_s / (double)(r->cap.events ? r->cap.events : 1),
		       1e6 * r->drain_cpu_s / (double)(r->cap.events ? r->cap.events : 1));
	if (r->others)
		printf("  [%u foreign etcd processes/uprobes running]", r->others);
	printf("\n");
	fflush(stdout);
}

/* Medians over the runs of one mode. */
static double med(const struct run *runs, size_t n, bool on, double (*get)(const struct run *))
{
	double v[2 * MAX_ROUNDS];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (runs[i].on == on)
			v[k++] = get(&runs[i]);
	return bench_median(v, k);
}
static double g_tput(const struct run *r) { return r->load.per_second; }
static double g_p50(const struct run *r) { return r->load.p50_ms; }
static double g_p99(const struct run *r) { return r->load.p99_ms; }
static double g_cpu(const struct run *r) { return 1000.0 * r->etcd_cpu_s / (double)(r->load.acked ? r->load.acked : 1); }
static double g_events(const struct run *r) { return (double)r->cap.events; }
static double g_lost(const struct run *r) { return (double)r->cap.lost; }
static double g_col(const struct run *r) { return 1e6 * r->cap.cpu_s / (double)(r->cap.events ? r->cap.events : 1); }
static double g_drain(const struct run *r) { return 1e6 * r->drain_cpu_s / (double)(r->cap.events ? r->cap.events : 1); }
static double g_colpct(const struct run *r) { return 100.0 * r->cap.cpu_s / r->cap.seconds; }

static void report(const struct bench_opts *o, const struct run *runs, size_t n, struct puts_summary *s)
{
	double ratios[MAX_ROUNDS];
	for (size_t i = 0; i + 1 < n; i += 2) {
		const struct run *off = runs[i].on ? &runs[i + 1] : &runs[i], *on = runs[i].on ? &runs[i] : &runs[i + 1];
		ratios[i / 2] = on->load.per_second / off->load.per_second;
	}
	double t_off = med(runs, n, false, g_tput), t_on = med(runs, n, true, g_tput);
	printf("  median off: %7.0f puts/s  p50 %6.2f ms  p99 %6.2f ms  etcd cpu %5.2f ms/put\n", t_off,
	       med(runs, n, false, g_p50), med(runs, n, false, g_p99), med(runs, n, false, g_cpu));
	printf("  median on:  %7.0f puts/s  p50 %6.2f ms  p99 %6.2f ms  etcd cpu %5.2f ms/put  events %.0f  lost %.0f  "
	       "collector %.0f us/event (drain thread %.0f), %.0f%% of a CPU\n",
	       t_on, med(runs, n, true, g_p50), med(runs, n, true, g_p99), med(runs, n, true, g_cpu),
	       med(runs, n, true, g_events), med(runs, n, true, g_lost), med(runs, n, true, g_col), med(runs, n, true, g_drain),
	       med(runs, n, true, g_colpct));
	double col_us = med(runs, n, true, g_col);
	printf("  collector (etcd shaper, log terms %u): %.0f us of CPU per event -> at most %.0f events/s on one CPU; "
	       "etcd wrote %.1f events per put\n", o->log_terms ? o->log_terms : 1000, col_us, 1e6 / col_us,
	       med(runs, n, true, g_events) / (double)o->puts);
	s->collector_cpu = med(runs, n, true, g_colpct) / 100;
	s->ratio = bench_median(ratios, n / 2);
	printf("  throughput on/off: %.3f (median of the per-round ratios; of the medians: %.3f) -> %.1f%% loss "
	       "(target <= 10%%)\n", s->ratio, t_on / t_off, 100.0 * (1.0 - s->ratio));

	/* Probe hits: records per probe (none lost) over the load time of each "on" run, medians. */
	uint64_t lost = 0;
	for (size_t i = 0; i < n; i++)
		lost += runs[i].cap.lost;
	printf("  probe hits with probes on (median over runs; per put and per second of load; lost in all: %" PRIu64 ")\n",
	       lost);
	printf("    %-20s %-6s %-8s %9s %10s\n", "probe", "site", "record", "hits/put", "hits/s");
	double kind[2] = { 0, 0 }, full = 0;
	for (unsigned k = 0; k < NPROBES; k++) {
		double per_put[2 * MAX_ROUNDS], per_s[2 * MAX_ROUNDS];
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (!runs[i].on)
				continue;
			double c = (double)runs[i].cap.probes_seen[k];
			per_put[m] = c / (double)(runs[i].load.acked ? runs[i].load.acked : 1);
			per_s[m++] = c / runs[i].load.seconds;
		}
		double pp = bench_median(per_put, m), ps = bench_median(per_s, m);
		if (!pp && (k + 1) * 10 == ETCD_P_STEP)
			continue; /* Step's RETs: probed only to verify (probes.h) */
		printf("    %-20s %-6s %-8s %9.2f %10.0f\n", probe_info[k].name, probe_info[k].ret ? "RET" : "entry",
		       probe_info[k].full ? "full" : "compact", pp, ps);
		kind[probe_info[k].ret] += ps;
		full += probe_info[k].full ? ps : 0;
	}
	printf("    %-20s %-6s %-8s %9s %10.0f\n", "all entry sites", "entry", "", "", kind[0]);
	printf("    %-20s %-6s %-8s %9s %10.0f\n", "all RET sites", "RET", "", "", kind[1]);
	for (size_t i = 0; i < n; i++)
		if (runs[i].on) {
			printf("  sites attached: %u entry, %u RET; record sizes: %zu (compact), %zu (full) bytes\n",
			       runs[i].sites.entry + runs[i].sites.entry_branch, runs[i].sites.ret, sizeof(struct uprobe_event),
			       sizeof(struct uprobe_event_full));
			break;
		}
	s->entry_hits_per_s = kind[0];
	s->ret_hits_per_s = kind[1];
	s->full_hits_per_s = full;
	s->done = true;
}

int bench_puts(const struct bench_opts *o, struct puts_summary *s)
{
	char dir[] = "/tmp/spectap-bench-etcd-XXXXXX";
	struct etcd_cluster cl;
	struct run runs[2 * MAX_ROUNDS];
	size_t n = 0;
	int rc;

	if (o->rounds < 1 || o->rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench_etcd: --rounds must be 1..%d\n", MAX_ROUNDS);
		return -EINVAL;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_etcd: mkdtemp: %s\n", strerror(errno));
		return -errno;
	}
	sup_install_handlers();
	struct etcd_cluster_opts co = { .work_dir = dir, .etcd = o->etcd };
	if ((rc = etcd_cluster_start(&cl, &co)) ||
	    (rc = etcd_cluster_wait_leader(&cl, 10000, 0, true, NULL, NULL))) {
		fprintf(stderr, "bench_etcd: cluster: %s\n", cl.err);
		goto out;
	}
	printf("puts: 3-member etcd cluster on loopback (%s), putload %u puts, concurrency %u, 16-byte values; "
	       "%u rounds, off/on alternating first; shaper log terms %u\n", o->etcd, o->puts, o->concurrency, o->rounds,
	       o->log_terms ? o->log_terms : 1000);
	struct run warm;
	struct bench_opts paced = *o;
	paced.put_rate = 0;
	if ((rc = one_run(&cl, &paced, false, &warm)))
		goto out;
	printf("  warm-up %7.0f puts/s (not counted)\n", warm.load.per_second);
	if (o->put_rate_half) {
		paced.put_rate = (unsigned)(warm.load.per_second / 2);
		o = &paced;
	} else {
		paced.put_rate = o->put_rate;
	}
	if (o->put_rate)
		printf("  paced at %u puts/s in both modes (latency counted from each put's slot)\n", o->put_rate);
	for (unsigned r = 0; r < o->rounds; r++) {
		for (unsigned k = 0; k < 2; k++) {
			bool on = (r % 2) ^ k; /* round 1 off first, round 2 on first, ... */
			if ((rc = one_run(&cl, o, on, &runs[n])))
				goto out;
			print_run(r + 1, &runs[n++]);
		}
	}
	report(o, runs, n, s);
out:
	etcd_cluster_stop(&cl);
	if (sup_rm_rf(dir))
		fprintf(stderr, "bench_etcd: could not remove %s\n", dir);
	return rc;
}
