/* Capturing emit records over BPF or LTTng; see emit_capture.h. */
#include "emit_capture.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lttng_reader.h"
#include "usdt_loader.h"

#define DRAIN_PERIOD_MS 10
/* LTTng: the session is rotated this often and each archived chunk read into the trace, so a
 * killed capture loses at most about this much (plus the writer's flush interval). */
#define ROTATE_PERIOD_MS 1000
/* Records of one process are emitted under its own lock, so they arrive in time order; records
 * of different CPUs reach the ring buffer in reservation order. Holding 200 ms (20 drains) puts
 * every record of a moment in place before it is written. */
#define WINDOW_NS (200ull * 1000 * 1000)

struct ecap {
	enum emit_via via;
	struct ecol *col;
	struct usdt_loader *usdt;
	struct lttng_reader *lttng;
	pthread_t thread;
	pthread_mutex_t lock;
	bool running, stop, finished;
	int thread_rc;
	struct ecap_stats st;
	char err[512];
};

const char *emit_via_name(enum emit_via via) { return via == EMIT_VIA_LTTNG ? "lttng" : "bpf"; }
const char *ecap_error(const struct ecap *e) { return e->err; }
const char *ecap_first_rejection(const struct ecap *e) { return ecol_first_rejection(e->col); }

static int fail(struct ecap *e, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
	return rc;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int on_usdt(void *ctx, const struct usdt_record *rec, const uint8_t *data, size_t len)
{
	struct ecap *e = ctx;
	/* Flagged records (too large, unreadable) carry no event: the counters count them. */
	if (rec->flags || !len)
		return 0;
	struct ecol_rec r = { rec->ktime_ns, (int)rec->pid, (int)rec->tid, (const char *)data, len };
	return ecol_add(e->col, &r);
}

/* One drain and release, under the lock. */
static int drain_once(struct ecap *e, uint64_t before_ns)
{
	int rc = usdt_drain(e->usdt, on_usdt, e);
	if (rc < 0)
		return fail(e, rc, "draining the USDT ring buffer: %s",
			    ecol_error(e->col)[0] ? ecol_error(e->col) : usdt_loader_error(e->usdt));
	rc = ecol_release(e->col, before_ns);
	if (rc < 0)
		return fail(e, rc, "%s", ecol_error(e->col));
	return 0;
}

static void *drain_thread(void *arg)
{
	struct ecap *e = arg;
	struct timespec period = { 0, DRAIN_PERIOD_MS * 1000000L };
	for (;;) {
		pthread_mutex_lock(&e->lock);
		bool stop = e->stop;
		uint64_t now = mono_ns();
		int rc = drain_once(e, now > WINDOW_NS ? now - WINDOW_NS : 0);
		if (rc < 0)
			e->thread_rc = rc;
		pthread_mutex_unlock(&e->lock);
		if (stop || rc < 0)
			return NULL;
		nanosleep(&period, NULL);
	}
}

static int open_bpf(struct ecap *e, const char *path)
{
	char err[512] = "";
	struct usdt_loader_opts lo = { .ringbuf_bytes = 32u << 20 };
	int rc = usdt_loader_open(&e->usdt, &lo, err, sizeof(err));
	if (rc < 0)
		return fail(e, rc, "%s", err);
	if ((rc = usdt_attach(e->usdt, path, -1)) < 0)
		return fail(e, rc, "%s", usdt_loader_error(e->usdt));
	if ((rc = pthread_create(&e->thread, NULL, drain_thread, e)) != 0)
		return fail(e, -rc, "cannot start the drain thread: %s", strerror(rc));
	e->running = true;
	return 0;
}

static int on_lttng(void *ctx, const struct lttng_reader_record *rec)
{
	struct ecap *e = ctx;
	struct ecol_rec r = { rec->ts_ns, (int)rec->pid, (int)rec->tid, rec->data, rec->len };
	return ecol_add(e->col, &r);
}

/* Rotates the session every period and writes what the archive held. A record stamped before
 * the rotation began is in it or in an earlier one, so those are released into the trace. */
static void *rotate_thread(void *arg)
{
	struct ecap *e = arg;
	struct timespec step = { 0, 50 * 1000000L };
	for (;;) {
		for (unsigned waited = 0; waited < ROTATE_PERIOD_MS; waited += 50) {
			pthread_mutex_lock(&e->lock);
			bool stop = e->stop;
			pthread_mutex_unlock(&e->lock);
			if (stop)
				return NULL;
			nanosleep(&step, NULL);
		}
		pthread_mutex_lock(&e->lock);
		uint64_t began = mono_ns();
		int rc = lttng_reader_rotate(e->lttng, on_lttng, e);
		if (rc < 0)
			rc = fail(e, rc, "%s", ecol_error(e->col)[0] ? ecol_error(e->col) : lttng_reader_error(e->lttng));
		else if ((rc = ecol_release(e->col, began)) < 0)
			rc = fail(e, rc, "%s", ecol_error(e->col));
		if (rc < 0)
			e->thread_rc = rc;
		pthread_mutex_unlock(&e->lock);
		if (rc < 0)
			return NULL;
	}
}

static int open_lttng(struct ecap *e)
{
	char err[512] = "";
	/* Blocking channel: the traced programs must be allowed to block (they inherit this). */
	if (setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 1))
		return fail(e, -errno, "setenv LTTNG_UST_ALLOW_BLOCKING: %s", strerror(errno));
	struct lttng_reader_opts lo = { .subbuf_size = 1u << 20, .num_subbuf = 8 };
	int rc = lttng_reader_open(&e->lttng, &lo, err, sizeof(err));
	if (rc < 0)
		return fail(e, rc, "%s", err);
	if ((rc = lttng_reader_start(e->lttng)) < 0)
		return fail(e, rc, "%s", lttng_reader_error(e->lttng));
	if ((rc = pthread_create(&e->thread, NULL, rotate_thread, e)) != 0)
		return fail(e, -rc, "cannot start the LTTng rotation thread: %s", strerror(rc));
	e->running = true;
	return 0;
}

int ecap_open(struct ecap **out, enum emit_via via, const char *path, struct spt_writer *w,
	      const struct ecol_opts *eo, char *err, size_t errlen)
{
	*out = NULL;
	struct ecap *e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->via = via;
	pthread_mutex_init(&e->lock, NULL);
	struct ecol_opts o = *eo;
	if (!o.source)
		o.source = via == EMIT_VIA_LTTNG ? "lttng" : "usdt";
	int rc = ecol_new(w, &o, &e->col, e->err, sizeof(e->err));
	/* A session a killed LTTng capture left active would record this capture's programs too
	 * (and block them when its buffers fill): gone first, whichever transport this is. */
	if (rc == 0 && via == EMIT_VIA_BPF)
		lttng_reclaim_stale_sessions();
	if (rc == 0)
		rc = via == EMIT_VIA_LTTNG ? open_lttng(e) : open_bpf(e, path);
	if (rc < 0) {
		snprintf(err, errlen, "%s", e->err);
		ecap_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

int ecap_name_pid(struct ecap *e, int pid)
{
	pthread_mutex_lock(&e->lock);
	int rc = ecol_name_pid(e->col, pid);
	if (rc < 0)
		fail(e, rc, "%s", ecol_error(e->col));
	pthread_mutex_unlock(&e->lock);
	return rc;
}

void ecap_stats(struct ecap *e, struct ecap_stats *out)
{
	pthread_mutex_lock(&e->lock);
	*out = e->st;
	out->ev = *ecol_stats(e->col);
	pthread_mutex_unlock(&e->lock);
}

static int stop_thread(struct ecap *e)
{
	if (!e->running)
		return 0;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	e->running = false;
	return e->thread_rc;
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static int finish_bpf(struct ecap *e)
{
	int rc = stop_thread(e);
	if (rc < 0)
		return rc;
	/* The processes have exited: what is in the ring buffer now is all there is. */
	if ((rc = drain_once(e, UINT64_MAX)) < 0)
		return rc;
	struct usdt_counters sum;
	if ((rc = usdt_counters_sum(e->usdt, &sum)) < 0)
		return fail(e, rc, "%s", usdt_loader_error(e->usdt));
	e->st.transport_lost = sum.lost + sum.too_large + sum.faults;
	return 0;
}

static int finish_lttng(struct ecap *e)
{
	int rc = stop_thread(e);
	if (rc < 0)
		return rc;
	rc = lttng_reader_stop(e->lttng);
	if (rc < 0)
		return fail(e, rc, "%s", lttng_reader_error(e->lttng));
	if ((rc = lttng_reader_read(e->lttng, on_lttng, e)) < 0)
		return fail(e, rc, "%s", ecol_error(e->col)[0] ? ecol_error(e->col) : lttng_reader_error(e->lttng));
	const struct lttng_reader_stats *ls = lttng_reader_stats(e->lttng);
	/* Both the trace and the session daemon count discards; a lost packet held at least one. */
	e->st.transport_lost = max_u64(ls->discarded_events + ls->discarded_unknown, ls->channel_discarded) +
			       max_u64(ls->discarded_packets, ls->channel_lost_packets);
	return 0;
}

int ecap_finish(struct ecap *e, struct ecap_stats *out)
{
	if (e->finished)
		return fail(e, -EINVAL, "the capture was already finished");
	e->finished = true;
	int rc = e->via == EMIT_VIA_LTTNG ? finish_lttng(e) : finish_bpf(e);
	if (rc == 0 && (rc = ecol_finish(e->col, e->st.transport_lost, &e->st.lost)) < 0)
		fail(e, rc, "%s", ecol_error(e->col));
	if (out)
		ecap_stats(e, out);
	return rc;
}

void ecap_close(struct ecap *e)
{
	if (!e)
		return;
	stop_thread(e);
	usdt_loader_close(e->usdt);
	lttng_reader_close(e->lttng);
	ecol_free(e->col);
	pthread_mutex_destroy(&e->lock);
	free(e);
}
