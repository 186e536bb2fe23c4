/* bench_emit: what one spt_emit(record, len) costs (include/spectap/emit.h) for a ~600-byte
 * record shaped like the ZooKeeper agent's, in three conditions measured in one run:
 *   none   nothing attached (the semaphore and the tracepoint's enabled flag read as off);
 *   usdt   probes/usdt_loader attached to this executable's spectap:event (64 MiB ring buffer)
 *          and drained by a thread every 10 ms; every record is checked, the loss counted;
 *   lttng  a collector/lttng_reader session (blocking channel, 8 x 4 MiB per CPU), started
 *          before the calls; the trace is read back and this process's records counted.
 * With USDT and LTTng, a record written into buffer pages for the first time costs several
 * times what one written into pages used before does (bench/RESULTS.md). A capture of a
 * ZooKeeper election (hundreds of records) only writes fresh pages, a long capture mostly reused
 * ones, so both are measured: `<cond>` is the first pass (every timed record in pages not
 * written before), `<cond>_warm` follows a pass over the whole buffer.
 *
 *	bench_emit [--calls N]     (timed calls per figure, default 20000, after 1000 untimed)
 *
 * Prints `emit_ns_<cond> N` (median of batches of 100 calls, ns per call: the path's own cost),
 * `emit_mean_ns_<cond> N` (all calls, wall: preemption and blocking included) and
 * `emit_cpu_ns_<cond> N` (this thread's CPU per call: the uprobe is charged to it; a busy machine
 * does not inflate it). usdt and lttng need root; without it they are skipped. LTTng blocks
 * instead of discarding only in a process started with LTTNG_UST_ALLOW_BLOCKING=1, read when
 * liblttng-ust initializes (before main): without it, this program sets it and re-executes
 * itself. Exit status: 0 done, 1 failed (a figure could not be measured, or a record was lost),
 * 2 usage. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lttng_reader.h" /* collector/ */
#include "spectap/emit.h"
#include "usdt_loader.h" /* probes/ */

#define BATCH 100
#define WARMUP 1000
#define USDT_RING (64u << 20)
/* Bytes a record takes in the USDT ring: the BPF ring buffer's 8-byte header, usdt.h's 40-byte
 * record header, the data rounded up to its size class. */
#define USDT_SLOT(len) (8 + 40 + usdt_class(len))
#define LTTNG_SUBBUF (4u << 20)
#define LTTNG_NSUBBUF 8
#define LTTNG_SLOT(len) ((len) + 64) /* lttng_reader.h: about 64 bytes more than the record */

static long g_calls = 20000;
static char g_rec[SPT_EMIT_MAX];
static size_t g_len;

static double now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t usdt_class(size_t len)
{
	static const size_t cls[] = {USDT_CLASS0, USDT_CLASS1, USDT_CLASS2,
				     USDT_CLASS3, USDT_CLASS4, USDT_CLASS5};

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++)
		if (len <= cls[i])
			return cls[i];
	return USDT_CLASS5;
}

static void vote(struct spt_jw *w, const char *key, int64_t leader, int64_t zxid, int64_t epoch)
{
	spt_jw_begin(w, key);
	spt_jw_int(w, "leader", leader);
	spt_jw_int(w, "zxid", zxid);
	spt_jw_int(w, "electionEpoch", epoch);
	spt_jw_int(w, "peerEpoch", 1);
	spt_jw_str(w, "state", "LOOKING");
	spt_jw_end(w);
}

/* A zk.recvset.put record as the agent builds it (systems/zookeeper/README.md): the server's
 * whole state after the step (two votes received so far), the args and meta. */
static int build_record(void)
{
	struct spt_jw w;

	spt_jw_init(&w, g_rec, sizeof(g_rec));
	spt_jw_begin(&w, NULL);
	spt_jw_str(&w, "node", "2");
	spt_jw_str(&w, "kind", "zk.recvset.put");
	spt_jw_begin(&w, "state");
	spt_jw_int(&w, "logicalclock", 2);
	spt_jw_int(&w, "proposedLeader", 3);
	spt_jw_int(&w, "proposedZxid", 4294967296);
	spt_jw_int(&w, "proposedEpoch", 1);
	spt_jw_str(&w, "state", "LOOKING");
	spt_jw_int(&w, "currentEpoch", 1);
	spt_jw_int(&w, "acceptedEpoch", 1);
	spt_jw_begin(&w, "recvset");
	vote(&w, "2", 3, 4294967296, 2);
	vote(&w, "3", 3, 4294967296, 2);
	spt_jw_end(&w);
	spt_jw_begin(&w, "outofelection");
	spt_jw_end(&w);
	spt_jw_end(&w);
	spt_jw_begin(&w, "args");
	spt_jw_str(&w, "site", "lookForLeader");
	spt_jw_int(&w, "sid", 3);
	vote(&w, "vote", 3, 4294967296, 2);
	spt_jw_end(&w);
	spt_jw_begin(&w, "meta");
	spt_jw_str(&w, "hook", "lookForLeader.recvset.put");
	spt_jw_str(&w, "at", "FastLeaderElection.lookForLeader:1042@727");
	spt_jw_end(&w);
	spt_jw_end(&w);
	return spt_jw_finish(&w, &g_len);
}

static long g_emitted; /* spt_emit calls that returned 0 */

/* n calls. */
static int emit_n(long n)
{
	for (long i = 0; i < n; i++, g_emitted++)
		if (spt_emit(g_rec, g_len))
			return -EIO;
	return 0;
}

/* warmup untimed calls, then g_calls timed ones; prints the three figures of cond. Exactly the
 * transports want must listen throughout: an LTTng session of another program that enables
 * spectap:event for every process would add its cost unseen. */
static int measure(const char *cond, unsigned want, long warmup)
{
	long nb = (g_calls + BATCH - 1) / BATCH;
	double *batch, t0, t1, c0, c1;
	int rc = -EIO;

	if (spt_emit_listeners() != want) {
		fprintf(stderr, "bench_emit: %s: listeners %u, expected %u (another LTTng session "
				"enabling spectap:event?)\n", cond, spt_emit_listeners(), want);
		return -EBUSY;
	}
	if (!(batch = calloc((size_t)nb, sizeof(*batch))))
		return -ENOMEM;
	if (emit_n(warmup))
		goto out;
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long b = 0; b < nb; b++) {
		long end = (b + 1) * BATCH < g_calls ? (b + 1) * BATCH : g_calls;
		double tb = now_ns(CLOCK_MONOTONIC);

		if (emit_n(end - b * BATCH))
			goto out;
		batch[b] = (now_ns(CLOCK_MONOTONIC) - tb) / (double)(end - b * BATCH);
	}
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	if (spt_emit_listeners() != want) {
		fprintf(stderr, "bench_emit: %s: listeners %u after the calls, expected %u\n", cond,
			spt_emit_listeners(), want);
		rc = -EBUSY;
		goto out;
	}
	qsort(batch, (size_t)nb, sizeof(*batch), cmp_double);
	printf("emit_ns_%s %.1f\n", cond, batch[nb / 2]);
	printf("emit_mean_ns_%s %.1f\n", cond, (t1 - t0) / (double)g_calls);
	printf("emit_cpu_ns_%s %.1f\n", cond, (c1 - c0) / (double)g_calls);
	rc = 0;
out:
	free(batch);
	return rc;
}

/* ---- USDT ----------------------------------------------------------------------------------- */

struct usdt_ctx {
	struct usdt_loader *l;
	atomic_bool stop;
	int err;                    /* first drain error */
	atomic_long received;       /* read by the emitting thread to wait for the drain */
	long base;                  /* g_emitted when attached */
	uint64_t bad;               /* not our record byte for byte, or flagged */
};

static int on_usdt(void *ctx, const struct usdt_record *rec, const uint8_t *data, size_t len)
{
	struct usdt_ctx *u = ctx;

	atomic_fetch_add(&u->received, 1);
	if (rec->flags || rec->pid != (uint32_t)getpid() || len != g_len || memcmp(data, g_rec, len))
		u->bad++;
	return 0;
}

/* The collector's side: records are submitted without wakeups, so it polls, as a capture does. */
static void *usdt_drainer(void *arg)
{
	struct usdt_ctx *u = arg;

	while (!atomic_load(&u->stop)) {
		int n = usdt_drain(u->l, on_usdt, u);

		if (n < 0 && !u->err)
			u->err = n;
		sleep_ms(10);
	}
	return NULL;
}

/* Waits (at most 10 s) until the drain thread has taken every record emitted so far. */
static int usdt_wait_drained(struct usdt_ctx *u)
{
	for (int i = 0; i < 10000 && atomic_load(&u->received) < g_emitted - u->base; i++)
		sleep_ms(1);
	if (atomic_load(&u->received) >= g_emitted - u->base)
		return 0;
	fprintf(stderr, "bench_emit: usdt: %ld records not received after 10 s (lost?)\n",
		g_emitted - u->base - atomic_load(&u->received));
	return -ETIMEDOUT;
}

/* The fresh pass, a pass over the whole ring (untimed), the warm figure. Each timed pass starts
 * on an empty ring, and the untimed one goes by quarters, each once the drain has caught up: the
 * emitter fills the ring far faster than a drain thread on a busy machine can be sure to run. */
static int usdt_passes(struct usdt_ctx *u)
{
	long slots = (long)(USDT_RING / USDT_SLOT(g_len));
	int rc;

	if (g_calls + WARMUP > slots)
		printf("# usdt: %ld calls do not fit in one pass (%ld records): emit_ns_usdt is partly warm\n",
		       g_calls + WARMUP, slots);
	if ((rc = measure("usdt", SPT_EMIT_USDT, WARMUP)) < 0)
		return rc;
	for (int q = 0; q < 4; q++)
		if ((rc = usdt_wait_drained(u)) < 0 || (rc = emit_n(slots / 4 + 1)) < 0)
			return rc;
	if ((rc = usdt_wait_drained(u)) < 0)
		return rc;
	return measure("usdt_warm", SPT_EMIT_USDT, WARMUP);
}

static int bench_usdt(void)
{
	struct usdt_loader_opts o = {.ringbuf_bytes = USDT_RING};
	struct usdt_ctx u = {0};
	struct usdt_counters c = {0};
	pthread_t th;
	char exe[4096], err[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int rc;

	if (n <= 0) {
		perror("bench_emit: /proc/self/exe");
		return -EIO;
	}
	exe[n] = 0;
	if ((rc = usdt_loader_open(&u.l, &o, err, sizeof(err))) < 0) {
		fprintf(stderr, "bench_emit: usdt: %s\n", err);
		return rc;
	}
	if ((rc = usdt_attach(u.l, exe, getpid())) < 0) {
		fprintf(stderr, "bench_emit: usdt: %s\n", usdt_loader_error(u.l));
		usdt_loader_close(u.l);
		return rc;
	}
	u.base = g_emitted;
	if ((rc = pthread_create(&th, NULL, usdt_drainer, &u))) {
		usdt_loader_close(u.l);
		return -rc;
	}
	rc = usdt_passes(&u);
	atomic_store(&u.stop, true);
	pthread_join(th, NULL);
	while ((n = usdt_drain(u.l, on_usdt, &u)) > 0)
		;
	if (n < 0 && !u.err)
		u.err = (int)n;
	usdt_counters_sum(u.l, &c);
	usdt_loader_close(u.l);
	printf("usdt_received %ld\nusdt_lost %llu\n", atomic_load(&u.received), (unsigned long long)c.lost);
	if (rc == 0 && (u.err || u.bad || c.lost || c.too_large || c.faults ||
			c.seq != (uint64_t)atomic_load(&u.received) ||
			atomic_load(&u.received) != g_emitted - u.base)) {
		fprintf(stderr, "bench_emit: usdt: %ld received of %ld emitted (%llu altered), counters "
				"seq %llu lost %llu too_large %llu faults %llu, drain %s\n",
			atomic_load(&u.received), g_emitted - u.base, (unsigned long long)u.bad,
			(unsigned long long)c.seq, (unsigned long long)c.lost,
			(unsigned long long)c.too_large, (unsigned long long)c.faults,
			u.err ? strerror(-u.err) : "ok");
		rc = -EIO;
	}
	return rc;
}

/* ---- LTTng ---------------------------------------------------------------------------------- */

struct lttng_count {
	uint64_t mine, bad, foreign; /* foreign: other processes that the same session traced */
};

static int on_lttng(void *ctx, const struct lttng_reader_record *rec)
{
	struct lttng_count *c = ctx;

	if (rec->pid != getpid())
		c->foreign++;
	else if (rec->len != g_len || memcmp(rec->data, g_rec, g_len))
		c->bad++;
	else
		c->mine++;
	return 0;
}

/* LTTng's buffers are per CPU: this thread stays on one CPU, so that the fresh pass writes
 * only fresh pages and the pass before the warm figure wraps the very buffer it then uses. */
static int lttng_passes(void)
{
	long slots = (long)((uint64_t)LTTNG_SUBBUF * LTTNG_NSUBBUF / LTTNG_SLOT(g_len));
	int cpu = sched_getcpu(), rc;
	cpu_set_t one, all;

	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (pthread_getaffinity_np(pthread_self(), sizeof(all), &all) ||
	    pthread_setaffinity_np(pthread_self(), sizeof(one), &one))
		return -EIO;
	if (g_calls + WARMUP > slots)
		printf("# lttng: %ld calls do not fit in one pass (%ld records): emit_ns_lttng is partly warm\n",
		       g_calls + WARMUP, slots);
	if ((rc = measure("lttng", SPT_EMIT_LTTNG, WARMUP)) == 0 && (rc = emit_n(slots)) == 0)
		rc = measure("lttng_warm", SPT_EMIT_LTTNG, WARMUP);
	pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
	return rc;
}

static int bench_lttng(void)
{
	struct lttng_reader_opts o = {.subbuf_size = LTTNG_SUBBUF, .num_subbuf = LTTNG_NSUBBUF};
	struct lttng_reader *r = NULL;
	const struct lttng_reader_stats *s;
	struct lttng_count c = {0};
	char err[768];
	long emitted = g_emitted;
	int rc, n;

	if ((rc = lttng_reader_open(&r, &o, err, sizeof(err))) < 0) {
		fprintf(stderr, "bench_emit: lttng: %s\n", err);
		return rc;
	}
	if ((rc = lttng_reader_start(r)) < 0)
		goto fail;
	/* This process registers with the session daemon on its own schedule (at start, or when a
	 * daemon it had not found comes up): emit once the tracepoint reads as enabled. */
	for (int i = 0; i < 1000 && !(spt_emit_listeners() & SPT_EMIT_LTTNG); i++)
		sleep_ms(10);
	if ((rc = lttng_passes()) < 0) {
		lttng_reader_close(r);
		return rc;
	}
	emitted = g_emitted - emitted;
	if ((rc = lttng_reader_stop(r)) < 0 || (rc = n = lttng_reader_read(r, on_lttng, &c)) < 0)
		goto fail;
	s = lttng_reader_stats(r);
	printf("lttng_records %llu\nlttng_discarded %llu\n", (unsigned long long)c.mine,
	       (unsigned long long)(s->discarded_events + s->channel_discarded));
	if (c.foreign)
		printf("# lttng: %llu records of other processes in the session (not counted)\n",
		       (unsigned long long)c.foreign);
	rc = 0;
	if (c.bad || c.mine != (uint64_t)emitted || s->discarded_events || s->discarded_packets ||
	    s->channel_discarded || s->channel_lost_packets) {
		fprintf(stderr, "bench_emit: lttng: %llu records read of %ld emitted (%llu altered), "
				"discarded %llu events %llu packets (channel: %llu, %llu lost packets)\n",
			(unsigned long long)c.mine, emitted, (unsigned long long)c.bad,
			(unsigned long long)s->discarded_events, (unsigned long long)s->discarded_packets,
			(unsigned long long)s->channel_discarded,
			(unsigned long long)s->channel_lost_packets);
		rc = -EIO;
	}
	lttng_reader_close(r);
	return rc;
fail:
	fprintf(stderr, "bench_emit: lttng: %s\n", lttng_reader_error(r));
	lttng_reader_close(r);
	return rc;
}

int main(int argc, char **argv)
{
	const char *blocking = getenv("LTTNG_UST_ALLOW_BLOCKING");
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (strcmp(argv[i], "--calls") || i + 1 == argc)
			goto usage;
		g_calls = strtol(argv[++i], &end, 10);
		if (*end || g_calls < BATCH || g_calls > 10000000)
			goto usage;
	}
	if (!blocking || strcmp(blocking, "1")) {
		if (setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 1) == 0)
			execv("/proc/self/exe", argv);
		perror("bench_emit: re-executing with LTTNG_UST_ALLOW_BLOCKING=1");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (build_record() < 0) {
		fprintf(stderr, "bench_emit: the record does not build\n");
		return 1;
	}
	printf("record_bytes %zu\ncalls %ld\n", g_len, g_calls);
	failed |= measure("none", 0, WARMUP) < 0;
	if (geteuid() != 0) {
		printf("# usdt, lttng: skipped (need root: BPF, the LTTng session daemon)\n");
		return failed;
	}
	failed |= bench_usdt() < 0;
	failed |= bench_lttng() < 0;
	return failed;
usage:
	fprintf(stderr, "usage: bench_emit [--calls N]   (N >= %d)\n", BATCH);
	return 2;
}
