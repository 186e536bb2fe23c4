/* bench_etcd_replay: the etcd collector's CPU per event, off-line (issue 6). `record` saves the raw
 * uprobe records of a 3-member cluster under putload; `replay` feeds them through the capture
 * chain of `spectap record etcd` (collector, etcd shaper, trace writer) with nothing else running,
 * so the collector can be profiled and its output compared byte for byte across changes.
 *
 *	bench_etcd_replay record RAW [--puts 2000] [--concurrency 8] [--etcd P] [--putload P]
 *	bench_etcd_replay replay RAW -o OUT.spt [--reps 1] [--log-terms 1000]
 *
 * RAW: "spectap-raw n1=PID n2=PID n3=PID\n", then per record a u32 size and the record. Replay
 * ticks the collector whenever the records' clock passes a 10 ms step, as the drain thread would.
 * Exit status: 0 done, 1 failed, 2 usage. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "collect.h"
#include "probes.h"
#include "shape.h"
#include "spectap/trace.h"
#include "supervise.h"
#include "uprobe_loader.h"

#define RING (64u << 20)
#define DRAIN_NS (10ull * 1000 * 1000)

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- record ---- */

struct saver {
	struct uprobe_loader *l;
	FILE *f;
	uint64_t n;
	volatile int stop;
	int err;
};

static int save(void *ctx, const struct uprobe_event *ev, size_t size)
{
	struct saver *s = ctx;
	uint32_t sz = (uint32_t)size;
	if (fwrite(&sz, sizeof(sz), 1, s->f) != 1 || fwrite(ev, size, 1, s->f) != 1)
		return -EIO;
	s->n++;
	return 0;
}

static void *saver_main(void *arg)
{
	struct saver *s = arg;
	for (int last = 0; !last;) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		last = s->stop;
		int r = uprobe_drain(s->l, save, s);
		if (r < 0) {
			s->err = r;
			return NULL;
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int record(const char *raw, unsigned puts, unsigned conc, const char *etcd, const char *putload)
{
	char dir[] = "/tmp/spectap-replay-XXXXXX", err[1024] = "";
	struct etcd_cluster cl;
	struct etcd_probe_sites sites;
	struct saver s = { 0 };
	pthread_t t;
	int rc;

	if (!mkdtemp(dir))
		return 1;
	sup_install_handlers();
	struct etcd_cluster_opts co = { .work_dir = dir, .etcd = etcd };
	if ((rc = etcd_cluster_start(&cl, &co)) || (rc = etcd_cluster_wait_leader(&cl, 10000, 0, true, NULL, NULL))) {
		fprintf(stderr, "cluster: %s\n", cl.err);
		goto out;
	}
	struct uprobe_loader_opts lo = { .ringbuf_bytes = RING };
	if ((rc = uprobe_loader_open(&s.l, &lo, err, sizeof(err))) < 0 ||
	    (rc = etcd_probes_attach(s.l, etcd, 0, &sites, err, sizeof(err))) < 0) {
		fprintf(stderr, "probes: %s\n", err);
		goto out;
	}
	if (!(s.f = fopen(raw, "wb"))) {
		rc = -errno;
		goto out;
	}
	fprintf(s.f, "spectap-raw n1=%d n2=%d n3=%d\n", etcd_cluster_pid(&cl, 0), etcd_cluster_pid(&cl, 1),
		etcd_cluster_pid(&cl, 2));
	pthread_create(&t, NULL, saver_main, &s);
	struct etcd_load_opts lopt = { .count = puts, .concurrency = conc };
	struct etcd_load_result res;
	rc = etcd_cluster_load(&cl, putload, &lopt, &res);
	if (rc)
		fprintf(stderr, "load: %s\n", cl.err);
	s.stop = 1;
	pthread_join(t, NULL);
	uint64_t lost = 0;
	uprobe_losses(s.l, &lost);
	printf("recorded %" PRIu64 " records (lost %" PRIu64 "), %" PRIu64 " puts acked, %.0f puts/s\n", s.n, lost,
	       res.acked, res.per_second);
	if (fclose(s.f) || s.err || lost)
		rc = rc ? rc : -EIO;
out:
	uprobe_loader_close(s.l);
	etcd_cluster_stop(&cl);
	if (sup_rm_rf(dir))
		fprintf(stderr, "could not remove %s\n", dir);
	return rc ? 1 : 0;
}

/* ---- replay ---- */

struct raw {
	char *buf;
	size_t len;
	int pids[3];
	size_t body; /* offset of the first record */
};

static int load_raw(const char *path, struct raw *r)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	r->buf = malloc((size_t)n + 1);
	if (!r->buf || fread(r->buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	r->len = (size_t)n;
	char *nl = memchr(r->buf, '\n', r->len);
	if (!nl || sscanf(r->buf, "spectap-raw n1=%d n2=%d n3=%d", &r->pids[0], &r->pids[1], &r->pids[2]) != 3)
		return -EINVAL;
	r->body = (size_t)(nl + 1 - r->buf);
	return 0;
}

/* One pass: returns events written, or -errno. */
static long replay_once(const struct raw *raw, const char *out, unsigned log_terms, double *cpu)
{
	static const char *const names[] = { "n1", "n2", "n3" };
	struct spt_header h = { .system = "etcd", .nodes = names, .n_nodes = 3, .capture_method = "bpf",
				.scenario = "bench" };
	struct spt_writer_opts wo = { .sz = sizeof(wo), .overwrite = true };
	struct spt_diag d = { "" };
	struct spt_writer *w = NULL;
	struct etcd_shape *sh = NULL;
	struct collect *c = NULL;
	char err[512] = "";
	long rc;

	double t0 = thread_cpu_s();
	if ((rc = spt_writer_open(out, &h, &wo, &w, &d))) {
		fprintf(stderr, "writer: %s\n", d.msg);
		return rc;
	}
	if ((rc = etcd_shape_new(&sh, log_terms)))
		goto out;
	struct collect_opts co = { .sz = sizeof(co), .named_pids_only = true, .shape = etcd_shape_event, .shape_ctx = sh,
				   .shape_end = etcd_shape_end };
	if ((rc = collect_new(w, etcd_probe_table(), NULL, &co, &c, err, sizeof(err)))) {
		fprintf(stderr, "collector: %s\n", err);
		goto out;
	}
	for (int i = 0; i < 3; i++)
		collect_set_node(c, raw->pids[i], names[i]);
	uint64_t next_tick = 0;
	for (size_t off = raw->body; off + 4 <= raw->len;) {
		uint32_t sz;
		memcpy(&sz, raw->buf + off, 4);
		off += 4;
		if (sz > raw->len - off)
			break;
		/* the record, aligned, as the ring hands it over */
		union { struct uprobe_event ev; struct uprobe_event_full full; } rec;
		if (sz > sizeof(rec)) {
			rc = -EPROTO;
			goto out;
		}
		memcpy(&rec, raw->buf + off, sz);
		off += sz;
		if (!next_tick)
			next_tick = rec.ev.ktime_ns + DRAIN_NS;
		if (rec.ev.ktime_ns >= next_tick) {
			if ((rc = collect_tick(c)))
				goto fail;
			next_tick = rec.ev.ktime_ns + DRAIN_NS;
		}
		if ((rc = collect_record(c, &rec.ev, sz)))
			goto fail;
	}
	uint64_t lost;
	if ((rc = collect_finish(c, &lost)))
		goto fail;
	rc = (long)collect_stats(c)->events;
	int cr = spt_writer_close(w, &d);
	w = NULL;
	if (cr) {
		fprintf(stderr, "close: %s\n", d.msg);
		rc = cr;
	}
	*cpu = thread_cpu_s() - t0;
	goto out;
fail:
	fprintf(stderr, "%s\n", collect_error(c));
out:
	if (w)
		spt_writer_abandon(w);
	collect_free(c);
	etcd_shape_free(sh);
	return rc;
}

static int replay(const char *rawpath, const char *out, unsigned reps, unsigned log_terms)
{
	struct raw raw = { 0 };
	int r = load_raw(rawpath, &raw);
	if (r) {
		fprintf(stderr, "%s: %s\n", rawpath, strerror(-r));
		return 1;
	}
	double best = 0;
	long events = 0;
	for (unsigned i = 0; i < reps; i++) {
		double cpu = 0;
		events = replay_once(&raw, out, log_terms, &cpu);
		if (events < 0) {
			free(raw.buf);
			return 1;
		}
		printf("rep %u: %ld events, %.3f s cpu, %.2f us/event\n", i + 1, events, cpu, 1e6 * cpu / (double)events);
		best = i == 0 || cpu < best ? cpu : best;
	}
	printf("best: %.2f us/event (%ld events)\n", 1e6 * best / (double)(events ? events : 1), events);
	free(raw.buf);
	return 0;
}

static unsigned opt_u(const char *s)
{
	unsigned long v = strtoul(s, NULL, 10);
	return v && v < 10000000 ? (unsigned)v : 0;
}

int main(int argc, char **argv)
{
	const char *etcd = etcd_programs[ETCD_PROG_ETCD].path, *putload = "build/tools/putload", *out = NULL;
	unsigned puts = 2000, conc = 8, reps = 1, log_terms = 0;

	if (argc < 3)
		goto usage;
	for (int i = 3; i + 1 < argc; i += 2) {
		const char *o = argv[i], *v = argv[i + 1];
		if (!strcmp(o, "--puts")) puts = opt_u(v);
		else if (!strcmp(o, "--concurrency")) conc = opt_u(v);
		else if (!strcmp(o, "--etcd")) etcd = v;
		else if (!strcmp(o, "--putload")) putload = v;
		else if (!strcmp(o, "-o")) out = v;
		else if (!strcmp(o, "--reps")) reps = opt_u(v);
		else if (!strcmp(o, "--log-terms")) log_terms = opt_u(v);
		else goto usage;
	}
	if ((argc - 3) % 2 || !puts || !conc || !reps)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "record")) {
		/* The load runs in the cluster's work directory: a relative path would not be found there. */
		char abs_putload[PATH_MAX];
		if (!realpath(putload, abs_putload)) {
			fprintf(stderr, "bench_etcd_replay: putload %s: %s\n", putload, strerror(errno));
			return 1;
		}
		return record(argv[2], puts, conc, etcd, abs_putload);
	}
	if (!strcmp(argv[1], "replay") && out)
		return replay(argv[2], out, reps, log_terms);
usage:
	fprintf(stderr, "usage: bench_etcd_replay record RAW [--puts N] [--concurrency N] [--etcd P] [--putload P]\n"
			"       bench_etcd_replay replay RAW -o OUT.spt [--reps N] [--log-terms N]\n");
	return 2;
}
