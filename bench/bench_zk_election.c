/* bench_zk_election: what the JVMTI agent (systems/zookeeper/agent) costs ZooKeeper's leader
 * election, measured on Debian's ZooKeeper 3.8.0 in a 3-server ensemble (ensemble.h):
 *   launch    from zk_ensemble_start to a leader followed by all three servers;
 *   reelect   from the SIGKILL of that leader to a new leader followed by the two others.
 * Each configuration runs --runs times, "without" and "with" alternating (without first in even
 * pairs, with first in odd ones) so that drift in the machine's load cancels. "With" is a
 * capture's setup: every server loads the agent with its emit sink only (option emit, no file),
 * and a USDT collector attached to the agent for every process (usdt_attach(l, agent, -1), set
 * up before the JVMs start: the probe's semaphore is what makes the agent build records) drains
 * the ring buffer every 10 ms on a thread; its records are counted per election by their
 * timestamps (CLOCK_MONOTONIC, as the bench's), and their loss reported. The JVMs load a private
 * copy of the agent: a uprobe is attached to a file, so another capture attached to the same
 * .so at the same time would otherwise trace these JVMs too (twice the cost) and this
 * collector would receive its JVMs' records.
 *
 *	bench_zk_election [--runs N] [--agent PATH]     (N >= 1, default 10)
 *
 * Also reported: ZooKeeper's own "LEADER ELECTION TOOK - N MS" (the largest of the servers'). The
 * agent defaults to $SPECTAP_ZK_AGENT, else ZK_AGENT of the build. Every run has its own work
 * directory under /tmp, removed after it; the supervisor stops every JVM on every exit path
 * (also on SIGINT/SIGTERM, which leave the directories behind: /tmp/spectap-bench-zk-*). A
 * failed run is retried twice. Needs root (BPF). Exit status: 0 done, 1 failed, 2 usage. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ensemble.h"    /* systems/zookeeper/ */
#include "supervise.h"   /* collector/ */
#include "usdt_loader.h" /* probes/ */

#ifndef ZK_AGENT
#define ZK_AGENT "build/libspectap_zk_agent.so"
#endif

#define SERVERS 3
#define LAUNCH_TIMEOUT_MS 90000
#define REELECT_TIMEOUT_MS 30000
#define ATTEMPTS 3

static char g_agent[PATH_MAX];   /* the private copy the JVMs load */
static char g_copy_dir[64];       /* holds it */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the collector -------------------------------------------------------------------------- */

struct seen {
	uint64_t ts;
	uint32_t pid, flags;
};

struct collector {
	struct usdt_loader *l;
	pthread_t th;
	bool running;
	atomic_bool stop;
	int err;        /* first drain error */
	struct seen *v; /* every record, in drain order (written by the drain thread only) */
	size_t n, cap;
};

static int on_record(void *ctx, const struct usdt_record *rec, const uint8_t *data, size_t len)
{
	struct collector *c = ctx;

	(void)data;
	(void)len;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4096;
		struct seen *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct seen){rec->ktime_ns, rec->pid, rec->flags};
	return 0;
}

static void drain(struct collector *c)
{
	int n = usdt_drain(c->l, on_record, c);

	if (n < 0 && !c->err)
		c->err = n;
}

/* Records are submitted without wakeups: the collector polls, as a capture does. */
static void *drainer(void *arg)
{
	struct collector *c = arg;

	while (!atomic_load(&c->stop)) {
		drain(c);
		sup_sleep_ms(10);
	}
	return NULL;
}

static int collector_start(struct collector *c)
{
	char err[512];
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = usdt_loader_open(&c->l, NULL, err, sizeof(err))) < 0) {
		fprintf(stderr, "bench_zk_election: %s\n", err);
		return rc;
	}
	if ((rc = usdt_attach(c->l, g_agent, -1)) < 0) {
		fprintf(stderr, "bench_zk_election: %s\n", usdt_loader_error(c->l));
		usdt_loader_close(c->l);
		c->l = NULL;
		return rc;
	}
	if ((rc = pthread_create(&c->th, NULL, drainer, c))) {
		usdt_loader_close(c->l);
		c->l = NULL;
		return -rc;
	}
	c->running = true;
	return 0;
}

/* Stops the thread, drains what is left, reads the loss; the loader is closed (the agent's
 * semaphore cleared). Safe on a collector that never started. */
static void collector_stop(struct collector *c, uint64_t *lost)
{
	*lost = 0;
	if (c->running) {
		atomic_store(&c->stop, true);
		pthread_join(c->th, NULL);
		c->running = false;
	}
	if (!c->l)
		return;
	drain(c);
	usdt_losses(c->l, lost);
	usdt_loader_close(c->l);
	c->l = NULL;
}

/* ---- one run -------------------------------------------------------------------------------- */

struct run {
	bool with;
	double launch_ms, reelect_ms;    /* the bench's clock */
	double took_launch, took_reelect; /* ZooKeeper's own, largest of the servers; -1: none */
	double rec_launch, rec_reelect;  /* records of this run's JVMs in each window */
	uint64_t rec_all, lost, flagged, foreign;
};

/* ZooKeeper's "LEADER ELECTION TOOK - N MS" after byte off of a log: the largest N, or -1. */
static double election_took(const char *log, long off)
{
	FILE *f = fopen(log, "r");
	char line[4096];
	double best = -1;

	if (!f)
		return -1;
	if (off > 0)
		fseek(f, off, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "ELECTION TOOK - ");

		if (p && strtod(p + 16, NULL) > best)
			best = strtod(p + 16, NULL);
	}
	fclose(f);
	return best;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (long)st.st_size;
}

/* Counts the collector's records of this run's JVMs in [t0, t1] (ns). */
static double count_between(const struct collector *c, const uint32_t *pids, uint64_t t0, uint64_t t1)
{
	double n = 0;

	for (size_t i = 0; i < c->n; i++)
		for (unsigned k = 0; k < SERVERS; k++)
			if (c->v[i].pid == pids[k] && c->v[i].ts >= t0 && c->v[i].ts <= t1)
				n++;
	return n;
}

static void tally(struct run *r, const struct collector *c, const uint32_t *pids, uint64_t t0,
		  uint64_t t_a, uint64_t t_kill, uint64_t t_b)
{
	r->rec_launch = count_between(c, pids, t0, t_a);
	r->rec_reelect = count_between(c, pids, t_kill, t_b);
	for (size_t i = 0; i < c->n; i++) {
		bool mine = false;

		for (unsigned k = 0; k < SERVERS; k++)
			mine |= c->v[i].pid == pids[k];
		r->rec_all += mine;
		r->foreign += !mine;
		r->flagged += mine && c->v[i].flags;
	}
}

/* Launch, election, SIGKILL of the leader, re-election; then everything is stopped and the
 * work directory removed, whatever happened. 0 or a negative errno (the message printed). */
static int run_once(struct run *r)
{
	char dir[] = "/tmp/spectap-bench-zk-XXXXXX";
	struct zk_ensemble_opts o = {.work_dir = dir, .servers = SERVERS};
	struct zk_ensemble e;
	struct zk_leader l1, l2;
	struct collector c = {0};
	uint32_t pids[SERVERS] = {0};
	long off[SERVERS] = {0};
	uint64_t t0, t_a, t_kill, t_b;
	int rc;

	memset(&e, 0, sizeof(e));
	if (!mkdtemp(dir)) {
		rc = -errno;
		fprintf(stderr, "bench_zk_election: mkdtemp %s: %s\n", dir, strerror(-rc));
		return rc;
	}
	if (r->with) {
		o.agent = g_agent;
		o.agent_options = "emit";
		if ((rc = collector_start(&c)) < 0)
			goto out;
	}
	t0 = now_ns();
	if ((rc = zk_ensemble_start(&e, &o)) < 0)
		goto fail;
	for (unsigned k = 0; k < SERVERS; k++)
		pids[k] = (uint32_t)zk_ensemble_pid(&e, k);
	if ((rc = zk_ensemble_wait_leader(&e, LAUNCH_TIMEOUT_MS, 0, true, &l1, NULL)) < 0)
		goto fail;
	t_a = now_ns();
	r->launch_ms = (double)(t_a - t0) / 1e6;
	r->took_launch = -1;
	for (unsigned k = 0; k < SERVERS; k++) {
		double t = election_took(e.s[k].log_path, 0);

		r->took_launch = t > r->took_launch ? t : r->took_launch;
		off[k] = file_size(e.s[k].log_path);
	}
	t_kill = now_ns();
	if ((rc = zk_ensemble_kill(&e, (unsigned)l1.index)) < 0)
		goto fail;
	if ((rc = zk_ensemble_wait_leader(&e, REELECT_TIMEOUT_MS, l1.epoch, true, &l2, NULL)) < 0)
		goto fail;
	t_b = now_ns();
	r->reelect_ms = (double)(t_b - t_kill) / 1e6;
	r->took_reelect = -1;
	for (unsigned k = 0; k < SERVERS; k++) {
		double t = (int)k == l1.index ? -1 : election_took(e.s[k].log_path, off[k]);

		r->took_reelect = t > r->took_reelect ? t : r->took_reelect;
	}
	zk_ensemble_stop(&e);
	collector_stop(&c, &r->lost);
	if (r->with) {
		tally(r, &c, pids, t0, t_a, t_kill, t_b);
		if (c.err) {
			fprintf(stderr, "bench_zk_election: draining: %s\n", strerror(-c.err));
			rc = c.err;
		}
	}
	goto out;
fail:
	fprintf(stderr, "bench_zk_election: %s run: %s\n", r->with ? "with" : "without", e.err);
	zk_ensemble_stop(&e);
	collector_stop(&c, &r->lost);
out:
	free(c.v);
	if (sup_rm_rf(dir) < 0)
		fprintf(stderr, "bench_zk_election: could not remove %s\n", dir);
	return rc;
}

/* Copies the agent at src into a new directory under /tmp; g_agent names the copy. */
static int copy_agent(const char *src)
{
	char buf[65536];
	FILE *in, *out;
	size_t n;
	int rc = 0;

	snprintf(g_copy_dir, sizeof(g_copy_dir), "/tmp/spectap-bench-zk-agent-XXXXXX");
	if (!mkdtemp(g_copy_dir)) {
		g_copy_dir[0] = 0;
		return -errno;
	}
	snprintf(g_agent, sizeof(g_agent), "%s/libspectap_zk_agent.so", g_copy_dir);
	if (!(in = fopen(src, "rb")))
		return -errno;
	if (!(out = fopen(g_agent, "wb"))) {
		rc = -errno;
		fclose(in);
		return rc;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -EIO;
	if (ferror(in))
		rc = -EIO;
	fclose(in);
	if (fclose(out))
		rc = -EIO;
	return rc;
}

/* ---- the whole bench ------------------------------------------------------------------------ */

static void print_run(unsigned i, const struct run *r)
{
	printf("run %2u %-7s launch %6.0f ms (zk %5.0f)  reelect %5.0f ms (zk %4.0f)", i + 1,
	       r->with ? "with" : "without", r->launch_ms, r->took_launch, r->reelect_ms,
	       r->took_reelect);
	if (r->with)
		printf("  records %.0f + %.0f (run %llu, lost %llu, flagged %llu, other pids %llu)",
		       r->rec_launch, r->rec_reelect, (unsigned long long)r->rec_all,
		       (unsigned long long)r->lost, (unsigned long long)r->flagged,
		       (unsigned long long)r->foreign);
	printf("\n");
}

/* The median over runs of the field at offset off, with == with. */
static double med_of(const struct run *runs, size_t n, bool with, size_t off)
{
	double *v = calloc(n ? n : 1, sizeof(*v)), m;
	size_t k = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (runs[i].with == with)
			v[k++] = *(const double *)((const char *)&runs[i] + off);
	m = median(v, k);
	free(v);
	return m;
}

static void summary(const struct run *runs, size_t n)
{
	double lw = med_of(runs, n, true, offsetof(struct run, launch_ms));
	double lo = med_of(runs, n, false, offsetof(struct run, launch_ms));
	double rw = med_of(runs, n, true, offsetof(struct run, reelect_ms));
	double ro = med_of(runs, n, false, offsetof(struct run, reelect_ms));
	uint64_t lost = 0, flagged = 0, foreign = 0;

	for (size_t i = 0; i < n; i++) {
		lost += runs[i].lost;
		flagged += runs[i].flagged;
		foreign += runs[i].foreign;
	}
	printf("zk_launch_ms_without %.0f\nzk_launch_ms_with %.0f\nzk_launch_ratio %.2f\n", lo, lw, lw / lo);
	printf("zk_reelect_ms_without %.0f\nzk_reelect_ms_with %.0f\nzk_reelect_ratio %.2f\n", ro, rw, rw / ro);
	printf("zk_took_launch_ms_without %.0f\nzk_took_launch_ms_with %.0f\n",
	       med_of(runs, n, false, offsetof(struct run, took_launch)),
	       med_of(runs, n, true, offsetof(struct run, took_launch)));
	printf("zk_took_reelect_ms_without %.0f\nzk_took_reelect_ms_with %.0f\n",
	       med_of(runs, n, false, offsetof(struct run, took_reelect)),
	       med_of(runs, n, true, offsetof(struct run, took_reelect)));
	printf("zk_records_launch %.0f\nzk_records_reelect %.0f\n",
	       med_of(runs, n, true, offsetof(struct run, rec_launch)),
	       med_of(runs, n, true, offsetof(struct run, rec_reelect)));
	printf("zk_records_lost %llu\nzk_records_flagged %llu\nzk_records_other_pids %llu\n",
	       (unsigned long long)lost, (unsigned long long)flagged, (unsigned long long)foreign);
	printf("ratio with/without (target <= 1.5): launch %.2f %s, reelect %.2f %s\n", lw / lo,
	       lw / lo <= 1.5 ? "ok" : "ABOVE TARGET", rw / ro, rw / ro <= 1.5 ? "ok" : "ABOVE TARGET");
}

int main(int argc, char **argv)
{
	const char *agent = getenv("SPECTAP_ZK_AGENT") ? getenv("SPECTAP_ZK_AGENT") : ZK_AGENT;
	char src[PATH_MAX];
	unsigned runs = 10, failed = 0;
	struct run *res;
	char err[512];
	int rc;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > 1000)
				goto usage;
			runs = (unsigned)v;
		} else if (!strcmp(argv[i], "--agent") && i + 1 < argc) {
			agent = argv[++i];
		} else {
			goto usage;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!realpath(agent, src)) {
		fprintf(stderr, "bench_zk_election: agent %s: %s (make all builds it)\n", agent, strerror(errno));
		return 1;
	}
	if (zk_available(NULL, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_zk_election: %s\n", err);
		return 1;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench_zk_election: needs root (the USDT collector is BPF)\n");
		return 1;
	}
	if (sup_install_handlers() < 0 || !(res = calloc(2 * (size_t)runs, sizeof(*res))))
		return 1;
	if ((rc = copy_agent(src)) < 0) {
		fprintf(stderr, "bench_zk_election: copying %s to %s: %s\n", src, g_agent, strerror(-rc));
		failed = 1;
		goto out;
	}
	printf("bench_zk_election: %u-server ensemble, %u runs each without and with the agent (%s)\n",
	       SERVERS, runs, src);
	for (unsigned i = 0; i < 2 * runs; i++) {
		struct run *r = &res[i];

		rc = -1;
		/* Pairs alternate their order: without-with, with-without, ... */
		r->with = (i % 2) ^ ((i / 2) % 2);
		for (unsigned a = 0; a < ATTEMPTS && rc < 0; a++) {
			bool with = r->with;

			memset(r, 0, sizeof(*r));
			r->with = with;
			if ((rc = run_once(r)) < 0 && a + 1 < ATTEMPTS)
				fprintf(stderr, "bench_zk_election: run %u failed, again\n", i / 2 + 1);
		}
		if (rc < 0) {
			failed++;
			break;
		}
		print_run(i / 2, r);
	}
	if (!failed)
		summary(res, 2 * (size_t)runs);
out:
	if (g_copy_dir[0] && sup_rm_rf(g_copy_dir) < 0)
		fprintf(stderr, "bench_zk_election: could not remove %s\n", g_copy_dir);
	free(res);
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: bench_zk_election [--runs N] [--agent PATH]\n");
	return 2;
}
