/* bench_redisraft: what capturing RedisRaft with spectap's probes costs in write throughput and
 * latency (issue 7). One 3-node cluster of the module on loopback; rounds of one run without
 * probes and one with `spectap record redisraft`'s capture chain attached (loader, the DWARF
 * probe set, the RedisRaft shaper, the collector draining every 10 ms into a temporary .spt),
 * the order alternating; each run is redis-benchmark's INCR against the leader.
 *
 *	bench_redisraft --module PATH [--rounds 5] [--requests 20000] [--clients 8] [--log-terms 1000] [--live]
 *			[--probes-only] [--spool-dir /tmp] [--data-dir /tmp]
 *
 * Runs last seconds, not one: the servers fsync every batch, and on a virtual disk a second's
 * throughput moves by a third from run to run (bench/RESULTS.md). --data-dir: where the nodes'
 * directories go (/dev/shm: fsync costs nothing, the servers are CPU-bound, the probes' CPU shows
 * in full).
 *
 * --live: the collector shapes as it drains (no spool); --probes-only: nothing drains the ring
 * during the load (--requests defaults to 2,000 then, what the 64 MiB ring holds), so the probes'
 * cost is seen without the collector's.
 *
 * Needs root (BPF), redis-server and redis-benchmark. Exit status: 0 done, 1 failed, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_etcd.h"
#include "rr_cluster.h"
#include "rr_probes.h"
#include "rr_shape.h"

#define MAX_ROUNDS 20

struct opts {
	const char *module;
	unsigned rounds, requests, clients;
	unsigned log_terms; /* the shaper's (0: record's default, 1000) */
	bool live;          /* the collector shapes while it drains (no spool) */
	bool probes_only;   /* no drain during the load (the ring holds it): the probes' cost alone */
	const char *spool_dir;
	const char *data_dir; /* where the cluster's work directory is made */
};

struct run {
	double rps, p50_ms, p99_ms;
	double redis_cpu_s; /* the three servers' CPU over the run */
	uint64_t events, lost;
	double collector_cpu_s;
	double collector_load_cpu_s; /* the part of it spent during the load (draining the ring) */
	double finish_s; /* from the end of the load to the trace closed (shaping what was spooled) */
};

static int usage(const char *msg)
{
	fprintf(stderr, "bench_redisraft: %s\nusage: bench_redisraft --module PATH [--rounds N] [--requests N] "
			"[--clients N] [--log-terms N] [--live] [--probes-only] [--spool-dir DIR] [--data-dir DIR]\n", msg);
	return 2;
}

static int attach(void *ctx, struct uprobe_loader *l, char *err, size_t errlen)
{
	return rr_probes_attach(l, ctx, NULL, NULL, NULL, err, errlen);
}

/* redis-benchmark's CSV row for INCR: "INCR","rps","avg","min","p50","p95","p99","max". */
static int load(struct rr_cluster *cl, unsigned leader, const struct opts *o, struct run *r)
{
	char port[16], n[16], c[16], e[SUP_ERR_SIZE];
	const char *argv[] = {"redis-benchmark", "-p", port, "-n", n, "-c", c, "-t", "incr", "--csv", NULL};
	struct sup_output out;
	int rc;

	snprintf(port, sizeof(port), "%u", cl->node[leader].port);
	snprintf(n, sizeof(n), "%u", o->requests);
	snprintf(c, sizeof(c), "%u", o->clients);
	if ((rc = sup_run_capture(argv, NULL, 300000, &out, e)) < 0) {
		fprintf(stderr, "bench_redisraft: redis-benchmark: %s\n", e);
		return rc;
	}
	const char *row = strstr(out.out ? out.out : "", "\"INCR\"");
	double avg, min, p95;
	if (!row || sscanf(row, "\"INCR\",\"%lf\",\"%lf\",\"%lf\",\"%lf\",\"%lf\",\"%lf\"", &r->rps, &avg, &min,
			   &r->p50_ms, &p95, &r->p99_ms) != 6) {
		fprintf(stderr, "bench_redisraft: redis-benchmark printed no INCR row:\n%s\n", out.out ? out.out : "");
		sup_output_free(&out);
		return -EPROTO;
	}
	sup_output_free(&out);
	return 0;
}

static int run_once(struct rr_cluster *cl, unsigned leader, const struct opts *o, bool probes, struct run *r)
{
	static const char *const nodes[] = {"s1", "s2", "s3"};
	char err[1024] = "";
	struct rr_shape *shape = NULL;
	struct capture *cap = NULL;
	struct capture_result cr;
	int rc;

	memset(r, 0, sizeof(*r));
	if (probes) {
		if ((rc = rr_shape_new(&shape, o->log_terms)))
			return rc;
		struct capture_cfg cfg = {.attach = attach, .ctx = (void *)o->module, .table = rr_probe_table(),
					  .shape = rr_shape_event, .shape_ctx = shape, .system = "redisraft",
					  .nodes = nodes, .n_nodes = cl->n, .live = o->live,
					  .defer_drain = o->probes_only, .spool_dir = o->spool_dir};
		if ((rc = capture_start(&cap, &cfg, err, sizeof(err)))) {
			fprintf(stderr, "bench_redisraft: probes: %s\n", err);
			rr_shape_free(shape);
			return rc;
		}
		for (unsigned i = 0; i < cl->n; i++)
			capture_name(cap, rr_cluster_pid(cl, i), cl->node[i].name);
	}
	double cpu0 = 0, cpu_start = bench_cpu_s();
	for (unsigned i = 0; i < cl->n; i++)
		cpu0 += bench_proc_cpu_s(rr_cluster_pid(cl, i));
	rc = load(cl, leader, o, r);
	for (unsigned i = 0; i < cl->n; i++)
		r->redis_cpu_s += bench_proc_cpu_s(rr_cluster_pid(cl, i));
	r->redis_cpu_s -= cpu0;
	/* This process's CPU during the load is its collector threads': main only waits. */
	double load_cpu_s = cap ? bench_cpu_s() - cpu_start : 0;
	if (cap) {
		int src = capture_stop(cap, &cr, err, sizeof(err));
		if (src)
			fprintf(stderr, "bench_redisraft: collector: %s\n", err);
		r->events = cr.events;
		r->lost = cr.lost;
		r->collector_cpu_s = cr.cpu_s;
		r->collector_load_cpu_s = load_cpu_s;
		r->finish_s = cr.drain_s;
		rc = rc ? rc : src;
	}
	if (shape && !rc) {
		const struct rr_shape_stats *st = rr_shape_stats(shape);
		printf("    records per write:");
		for (unsigned k = 1; k <= RR_NPROBES; k++)
			if (st->probes_seen[k])
				printf(" %s %.2f", rr_probe_info(k)->kind, (double)st->probes_seen[k] / o->requests);
		printf(", call markers %.2f\n", (double)st->begins_seen / o->requests);
	}
	rr_shape_free(shape);
	return rc;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"module", required_argument, NULL, 'm'},
					   {"rounds", required_argument, NULL, 'r'},
					   {"requests", required_argument, NULL, 'n'},
					   {"clients", required_argument, NULL, 'c'},
					   {"log-terms", required_argument, NULL, 'l'},
					   {"live", no_argument, NULL, 'L'},
					   {"probes-only", no_argument, NULL, 'P'},
					   {"spool-dir", required_argument, NULL, 'D'},
					   {"data-dir", required_argument, NULL, 'W'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	int ch;
	bool requests_given = false;

	*o = (struct opts){.module = getenv("SPECTAP_REDISRAFT_MODULE"), .rounds = 5, .requests = 20000, .clients = 8,
			  .data_dir = "/tmp"};
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *end;
		unsigned long v = 0;

		if (ch == 'h')
			return usage("what writing costs with and without spectap's probes");
		if (ch == 'm') {
			o->module = optarg;
			continue;
		}
		if (ch == 'D') {
			o->spool_dir = optarg;
			continue;
		}
		if (ch == 'W') {
			o->data_dir = optarg;
			continue;
		}
		if (ch == 'L') {
			o->live = true;
			continue;
		}
		if (ch == 'P') {
			o->probes_only = true;
			continue;
		}
		if (ch == '?')
			return usage("unknown option");
		v = strtoul(optarg, &end, 10);
		if (*end || v == 0 || v > 10000000)
			return usage("counts are positive integers");
		if (ch == 'r')
			o->rounds = v > MAX_ROUNDS ? MAX_ROUNDS : (unsigned)v;
		else if (ch == 'n') {
			o->requests = (unsigned)v;
			requests_given = true;
		}
		else if (ch == 'l')
			o->log_terms = (unsigned)v;
		else
			o->clients = (unsigned)v;
	}
	if (o->probes_only && !requests_given)
		o->requests = 2000;
	if (!o->module || !*o->module)
		return usage("--module PATH (or SPECTAP_REDISRAFT_MODULE) names the redisraft.so");
	if (access(o->module, R_OK))
		return usage("--module: the file cannot be read");
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct rr_cluster cl;
	struct run off[MAX_ROUNDS], on[MAX_ROUNDS];
	double v[6][MAX_ROUNDS], cpu[4][MAX_ROUNDS];
	char dir[PATH_MAX];
	int rc, leader = 0;

	if ((rc = parse(argc, argv, &o)))
		return rc;
	snprintf(dir, sizeof(dir), "%s/spectap-bench-rr-XXXXXX", o.data_dir);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_redisraft: cannot make a directory in %s (--data-dir): %s\n", o.data_dir,
			strerror(errno));
		return 1;
	}
	memset(&cl, 0, sizeof(cl));
	struct rr_cluster_opts co = {.work_dir = dir, .module = o.module, .nodes = 3};
	if ((rc = rr_cluster_start(&cl, &co)) ||
	    (rc = rr_cluster_wait_leader(&cl, 20000, 0, true, &leader, NULL))) {
		fprintf(stderr, "bench_redisraft: cluster: %s\n", cl.err);
		goto out;
	}
	printf("redisraft: %s, 3 nodes on 127.0.0.1 (data in %s), leader %s; redis-benchmark INCR, %u requests, %u clients; "
	       "%u rounds of one run without and one with probes, alternating which goes first; states keep "
	       "%u log terms; the collector %s\n",
	       o.module, o.data_dir, cl.node[leader].name, o.requests, o.clients, o.rounds, o.log_terms ? o.log_terms : 1000,
	       o.live ? "shapes while it drains (--live)" : "spools, shapes after the load");
	struct run warm;
	if ((rc = run_once(&cl, (unsigned)leader, &o, false, &warm)))
		goto out;
	for (unsigned r = 0; r < o.rounds; r++) {
		for (int k = 0; k < 2; k++) {
			bool probes = (k == 0) == (r % 2 == 1);
			if ((rc = run_once(&cl, (unsigned)leader, &o, probes, probes ? &on[r] : &off[r])))
				goto out;
		}
		double n = o.requests;
		printf("  round %u: off %6.0f writes/s p50 %.2f p99 %.2f ms, redis %.0f us/write | on %6.0f writes/s "
		       "p50 %.2f p99 %.2f ms, redis %.0f us/write, collector %.1f us/event (%" PRIu64 " events, %.1f "
		       "per write, %" PRIu64 " lost; during the load %.0f us/write; trace done %.2f s after the load) | "
		       "on/off %.3f\n",
		       r + 1, off[r].rps, off[r].p50_ms, off[r].p99_ms, 1e6 * off[r].redis_cpu_s / n, on[r].rps,
		       on[r].p50_ms, on[r].p99_ms, 1e6 * on[r].redis_cpu_s / n,
		       on[r].events ? 1e6 * on[r].collector_cpu_s / (double)on[r].events : 0, on[r].events,
		       (double)on[r].events / n, on[r].lost, 1e6 * on[r].collector_load_cpu_s / n, on[r].finish_s,
		       on[r].rps / off[r].rps);
		cpu[0][r] = 1e6 * off[r].redis_cpu_s / n;
		cpu[1][r] = 1e6 * on[r].redis_cpu_s / n;
		cpu[2][r] = on[r].events ? 1e6 * on[r].collector_cpu_s / (double)on[r].events : 0;
		cpu[3][r] = 1e6 * on[r].collector_cpu_s / n;
		v[0][r] = off[r].rps;
		v[1][r] = on[r].rps;
		v[2][r] = on[r].rps / off[r].rps;
		v[3][r] = off[r].p50_ms;
		v[4][r] = on[r].p50_ms;
		v[5][r] = on[r].p99_ms / (off[r].p99_ms > 0 ? off[r].p99_ms : 1);
	}
	double offp99[MAX_ROUNDS], onp99[MAX_ROUNDS];
	for (unsigned r = 0; r < o.rounds; r++) {
		offp99[r] = off[r].p99_ms;
		onp99[r] = on[r].p99_ms;
	}
	printf("median: off %.0f writes/s, on %.0f writes/s: on/off %.3f (throughput loss %.1f%%); p50 %.2f -> %.2f ms, "
	       "p99 %.2f -> %.2f ms\n",
	       bench_median(v[0], o.rounds), bench_median(v[1], o.rounds), bench_median(v[2], o.rounds),
	       100.0 * (1.0 - bench_median(v[2], o.rounds)), bench_median(v[3], o.rounds), bench_median(v[4], o.rounds),
	       bench_median(offp99, o.rounds), bench_median(onp99, o.rounds));
	printf("median CPU: redis %.0f -> %.0f us per write (the probes: +%.0f), collector %.1f us per event, %.0f us "
	       "per write\n",
	       bench_median(cpu[0], o.rounds), bench_median(cpu[1], o.rounds),
	       bench_median(cpu[1], o.rounds) - bench_median(cpu[0], o.rounds), bench_median(cpu[2], o.rounds),
	       bench_median(cpu[3], o.rounds));
out:
	rr_cluster_stop(&cl);
	sup_rm_rf(dir);
	return rc ? 1 : 0;
}
