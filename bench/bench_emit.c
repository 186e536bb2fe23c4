/* bench_emit: what one spt_emit(record, len) costs (include/spectap/emit.h) for a ~600-byte
 * record like the ZooKeeper agent's, in three conditions measured in one run:
 *   none   nothing attached (the semaphore and the tracepoint's enabled flag read as off);
 *   usdt   probes/usdt_loader attached to this executable's spectap:event, the ring buffer
 *          drained by a thread every 10 ms; every record is checked and the loss counted;
 *   lttng  a collector/lttng_reader session (reader defaults: blocking channel) started before
 *          the timed calls; the trace is read back and the records counted.
 *
 *	bench_emit [--calls N]      (default 20000 timed calls per condition, after 1000 untimed)
 *
 * Prints `emit_ns_<cond> N` (median of batches of 100 calls, ns per call: the path's own cost),
 * `emit_mean_ns_<cond> N` (all calls, wall: page faults and blocking included) and
 * `emit_cpu_ns_<cond> N` (this thread's CPU per call: the uprobe trap is charged to it, a busy
 * machine does not inflate it). usdt and lttng need root; without it they are skipped.
 * LTTng blocks instead of discarding only in a process started with LTTNG_UST_ALLOW_BLOCKING=1,
 * read when liblttng-ust initializes (before main): without it, this program sets it and
 * re-executes itself. Exit status: 0 done, 1 failed, 2 usage. */
#include <errno.h>
#include <pthread.h>
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
#ifndef RING_BYTES
#define RING_BYTES (64u << 20) /* holds 65,000 records of this size: far more than 10 ms of them */
#endif

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

/* A zk.recvset.put record of a 3-server election, shaped as the agent builds it
 * (systems/zookeeper/README.md): the full state after the step, the args and meta. */
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
	vote(&w, "1", 3, 4294967296, 2);
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

/* WARMUP untimed calls, then g_calls timed ones; prints the three figures of cond. Exactly the
 * transports want must listen throughout: an LTTng session of another program that enables
 * spectap:event for every process would add its cost unseen. */
static int measure(const char *cond, unsigned want)
{
	long nb = (g_calls + BATCH - 1) / BATCH;
	double *batch, t0, t1, c0, c1;

	if (spt_emit_listeners() != want) {
		fprintf(stderr, "bench_emit: %s: listeners %u before the calls, expected %u (another "
				"LTTng session enabling spectap:event?)\n", cond, spt_emit_listeners(), want);
		return -EBUSY;
	}
	if (!(batch = calloc((size_t)nb, sizeof(*batch))))
		return -ENOMEM;
	for (long i = 0; i < WARMUP; i++)
		if (spt_emit(g_rec, g_len)) {
			free(batch);
			return -EIO;
		}
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long b = 0; b < nb; b++) {
		long end = (b + 1) * BATCH < g_calls ? (b + 1) * BATCH : g_calls;
		double tb = now_ns(CLOCK_MONOTONIC);

		for (long i = b * BATCH; i < end; i++)
			if (spt_emit(g_rec, g_len)) {
				free(batch);
				return -EIO;
			}
		batch[b] = (now_ns(CLOCK_MONOTONIC) - tb) / (double)(end - b * BATCH);
	}
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	if (spt_emit_listeners() != want) {
		fprintf(stderr, "bench_emit: %s: listeners %u after the calls, expected %u\n", cond,
			spt_emit_listeners(), want);
		free(batch);
		return -EBUSY;
	}
	qsort(batch, (size_t)nb, sizeof(*batch), cmp_double);
	printf("emit_ns_%s %.1f\n", cond, batch[nb / 2]);
	printf("emit_mean_ns_%s %.1f\n", cond, (t1 - t0) / (double)g_calls);
	printf("emit_cpu_ns_%s %.1f\n", cond, (c1 - c0) / (double)g_calls);
	fflush(stdout);
	free(batch);
	return 0;
}

/* ---- USDT ----------------------------------------------------------------------------------- */

struct usdt_ctx {
	struct usdt_loader *l;
	atomic_bool stop;
	int err;                 /* first drain error */
	uint64_t received, bad;  /* bad: not our record byte for byte, or flagged */
};

static int on_usdt(void *ctx, const struct usdt_record *rec, const uint8_t *data, size_t len)
{
	struct usdt_ctx *u = ctx;

	u->received++;
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

static int bench_usdt(void)
{
	struct usdt_loader_opts o = {.ringbuf_bytes = RING_BYTES};
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
	if (!(spt_emit_listeners() & SPT_EMIT_USDT)) {
		fprintf(stderr, "bench_emit: usdt attached but its semaphore is not set\n");
		usdt_loader_close(u.l);
		return -EIO;
	}
	if ((rc = pthread_create(&th, NULL, usdt_drainer, &u))) {
		usdt_loader_close(u.l);
		return -rc;
	}
	rc = measure("usdt", SPT_EMIT_USDT);
	atomic_store(&u.stop, true);
	pthread_join(th, NULL);
	while ((n = usdt_drain(u.l, on_usdt, &u)) > 0)
		;
	if (n < 0 && !u.err)
		u.err = (int)n;
	usdt_counters_sum(u.l, &c);
	printf("usdt_received %llu\nusdt_lost %llu\n", (unsigned long long)u.received,
	       (unsigned long long)c.lost);
	if (rc == 0 && (u.err || u.bad || c.lost || c.too_large || c.faults ||
			u.received != (uint64_t)(g_calls + WARMUP) || c.seq != u.received)) {
		fprintf(stderr, "bench_emit: usdt: %llu received of %ld emitted (%llu not our record), "
				"counters seq %llu lost %llu too_large %llu faults %llu, drain %s\n",
			(unsigned long long)u.received, g_calls + WARMUP, (unsigned long long)u.bad,
			(unsigned long long)c.seq, (unsigned long long)c.lost,
			(unsigned long long)c.too_large, (unsigned long long)c.faults,
			u.err ? strerror(-u.err) : "ok");
		rc = -EIO;
	}
	usdt_loader_close(u.l);
	return rc;
}

/* ---- LTTng ---------------------------------------------------------------------------------- */

struct lttng_count {
	uint64_t mine, bad, foreign; /* foreign: other processes traced by the same session */
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

static int bench_lttng(void)
{
	struct lttng_reader *r = NULL;
	const struct lttng_reader_stats *s;
	struct lttng_count c = {0};
	char err[768];
	int rc, n = 0;

	if ((rc = lttng_reader_open(&r, NULL, err, sizeof(err))) < 0) {
		fprintf(stderr, "bench_emit: lttng: %s\n", err);
		return rc;
	}
	if ((rc = lttng_reader_start(r)) < 0)
		goto fail;
	/* This process registers with the session daemon on its own schedule (at start, or when a
	 * daemon it had not found comes up): emit once the tracepoint reads as enabled. */
	for (int i = 0; i < 1000 && !(spt_emit_listeners() & SPT_EMIT_LTTNG); i++)
		sleep_ms(10);
	if (!(spt_emit_listeners() & SPT_EMIT_LTTNG)) {
		fprintf(stderr, "bench_emit: lttng: spectap:event not enabled in this process after 10 s\n");
		lttng_reader_close(r);
		return -ETIMEDOUT;
	}
	if ((rc = measure("lttng", SPT_EMIT_LTTNG)) < 0) {
		lttng_reader_close(r);
		return rc;
	}
	if ((rc = lttng_reader_stop(r)) < 0 || (n = lttng_reader_read(r, on_lttng, &c)) < 0) {
		rc = rc < 0 ? rc : n;
		goto fail;
	}
	s = lttng_reader_stats(r);
	printf("lttng_records %llu\nlttng_discarded %llu\n", (unsigned long long)c.mine,
	       (unsigned long long)(s->discarded_events + s->channel_discarded));
	if (c.foreign)
		printf("# lttng: %llu records of other processes in the session (not counted)\n",
		       (unsigned long long)c.foreign);
	if (c.bad || c.mine != (uint64_t)(g_calls + WARMUP) || s->discarded_events ||
	    s->discarded_packets || s->channel_discarded || s->channel_lost_packets) {
		fprintf(stderr, "bench_emit: lttng: %llu records read of %ld emitted (%llu altered), "
				"discarded %llu events %llu packets (channel: %llu, %llu lost packets)\n",
			(unsigned long long)c.mine, g_calls + WARMUP, (unsigned long long)c.bad,
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

		if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
			g_calls = strtol(argv[++i], &end, 10);
			if (*end || g_calls < BATCH || g_calls > 100000000)
				goto usage;
		} else {
			goto usage;
		}
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
	failed |= measure("none", 0) < 0;
	if (geteuid() != 0) {
		printf("# usdt, lttng: skipped (need root: BPF, the LTTng session daemon)\n");
		return failed;
	}
	failed |= bench_usdt() < 0;
	if (spt_emit_listeners()) {
		fprintf(stderr, "bench_emit: spectap:event still listened to after closing the USDT loader\n");
		failed = 1;
	}
	failed |= bench_lttng() < 0;
	return failed;
usage:
	fprintf(stderr, "usage: bench_emit [--calls N]   (N >= %d)\n", BATCH);
	return 2;
}
