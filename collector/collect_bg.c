/* The collector's threads: the drain (ring buffer -> events, or -> spool in spool mode) and, in
 * spool mode, the shaping thread (spool -> events) at idle priority. See collect.h. */
#include "collect_priv.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SHAPE_BATCH 256 /* frames shaped per hold of the lock */

void collect_publish_stats(struct collect *c)
{
	pthread_mutex_lock(&c->snap_lock);
	c->snap = c->st;
	pthread_mutex_unlock(&c->snap_lock);
}

void collect_bg_stats(struct collect *c, struct collect_stats *out)
{
	pthread_mutex_lock(&c->snap_lock);
	*out = c->snap;
	pthread_mutex_unlock(&c->snap_lock);
	out->spooled = atomic_load(&c->spooled);
}

/* ---- spool mode ----------------------------------------------------------------------------- */

/* A record of neither size stops the drain with the spool's message; one whose size field
 * disagrees is copied as it is and refused by collect_record when shaped, as it would be live. */
static int spool_one(void *ctx, const struct uprobe_event *ev, size_t size)
{
	struct collect *c = ctx;

	return spool_add_record(c->spool, ev, size);
}

/* Ring buffer -> spool, then a tick; the records drained or -errno (message in drain_err). */
static int spool_drain(struct collect *c)
{
	int n, r;

	pthread_mutex_lock(&c->spool_lock);
	n = uprobe_drain(c->l, spool_one, c);
	r = n < 0 ? n : spool_add_tick(c->spool);
	if (!r)
		r = spool_commit(c->spool);
	if (r < 0)
		snprintf(c->drain_err, sizeof(c->drain_err), "collector: drain into the spool: %s",
			 spool_error(c->spool)[0] ? spool_error(c->spool) : uprobe_loader_error(c->l));
	pthread_mutex_unlock(&c->spool_lock);
	if (n > 0)
		atomic_fetch_add(&c->spooled, (uint64_t)n);
	return r < 0 ? r : n;
}

static int on_frame(void *ctx, const struct spool_frame *f)
{
	struct collect *c = ctx;

	switch (f->kind) {
	case SPOOL_RECORD:
		return collect_record(c, f->ev, f->size);
	case SPOOL_TICK:
		return collect_tick(c);
	case SPOOL_NODE:
		return collect_set_node_locked(c, f->pid, f->node);
	}
	return collect_fail(c, -EPROTO, "collector: spool frame of unknown kind %u", f->kind);
}

int collect_shape_spool(struct collect *c, size_t max)
{
	int r;

	unsigned fails = c->fails; /* an earlier failure's message stays (it may be the one reported) */
	do /* max 0: all, however many bites of INT_MAX frames that takes */
		r = spool_read(c->spool, max, on_frame, c);
	while (!max && r == INT_MAX);
	if (r < 0 && c->fails == fails)
		collect_fail(c, r, "collector: %s", spool_error(c->spool));
	return r;
}

static uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Under the lock: the pending events to the file, now (force) or when the writer's interval is up. */
static int write_out(struct collect *c, bool force)
{
	int wr = force ? spt_writer_flush(c->w) : spt_writer_tick(c->w);
	return wr < 0 ? collect_fail(c, wr, "collector: writing the trace: %s", strerror(-wr)) : 0;
}

static void *shaper_main(void *arg)
{
	struct collect *c = arg;
	struct sched_param sp = {0};
	bool catching_up = false, flushing = false;

	/* Best effort: without it the shaping only competes at normal priority. */
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	uint64_t last_ms = mono_ms();
	for (;;) {
		bool stop = atomic_load(&c->shaper_stop);
		struct spool_stats ss;
		int r;

		uint64_t now_ms = mono_ms();
		bool due = c->flush_ms && now_ms - last_ms >= c->flush_ms;
		/* Even at idle priority, shaping on the machine under test slows it (caches, wakeups,
		 * a shared core): wait until the backlog is worth it, the flush interval is up or the
		 * capture is over. */
		spool_stats(c->spool, &ss);
		if (!stop && !catching_up && !due && ss.bytes_written - ss.bytes_read < c->spool_backlog) {
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
			continue;
		}
		if (due) {
			last_ms = now_ms;
			flushing = true;
		}
		catching_up = true;
		pthread_mutex_lock(&c->lock);
		r = collect_shape_spool(c, SHAPE_BATCH);
		if (r == 0 && flushing) { /* caught up: what was shaped reaches the file */
			r = write_out(c, true);
			flushing = false;
		}
		collect_publish_stats(c);
		pthread_mutex_unlock(&c->lock);
		if (r < 0) {
			c->shaper_err = r;
			return NULL;
		}
		if (r == 0) {
			if (stop)
				return NULL; /* the drain thread ended before the stop: all is read */
			catching_up = false;
		}
	}
}

bool collect_bg_failed(const struct collect *c)
{
	return c && (atomic_load(&c->bg_err) || atomic_load(&c->shaper_err));
}

int collect_drain(struct collect *c)
{
	int n, r;

	if (!c->spool)
		return collect_drain_live(c);
	if (!c->l)
		return collect_fail(c, -EINVAL, "collector: collect_drain without a loader");
	n = spool_drain(c);
	if (n < 0)
		return collect_fail(c, n, "%s", c->drain_err);
	if (!c->shaper_running && (r = collect_shape_spool(c, 0)) < 0)
		return r;
	return n;
}

/* ---- threads -------------------------------------------------------------------------------- */

static void *bg_main(void *arg)
{
	struct collect *c = arg;

	for (;;) {
		struct timespec ts = { c->bg_period_ms / 1000, (long)(c->bg_period_ms % 1000) * 1000000L };
		bool stop;
		int r, r2;

		stop = atomic_load(&c->bg_stop);
		if (c->spool) {
			r = spool_drain(c);
		} else {
			pthread_mutex_lock(&c->lock);
			r = collect_drain_live(c);
			if (r >= 0 && c->flush_ms && (r2 = write_out(c, false)) < 0)
				r = r2;
			pthread_mutex_unlock(&c->lock);
		}
		if (r < 0) {
			c->bg_err = r;
			return NULL;
		}
		if (stop)
			return NULL; /* drained once more after the stop was asked */
		nanosleep(&ts, NULL);
	}
}

int collect_bg_start(struct collect *c, unsigned period_ms)
{
	int r;

	if (c->bg_running)
		return collect_fail(c, -EINVAL, "collector: the drain thread already runs");
	c->bg_period_ms = period_ms ? period_ms : 10;
	atomic_store(&c->bg_stop, false);
	c->bg_err = 0;
	c->shaper_err = 0;
	atomic_store(&c->shaper_stop, false);
	if (c->spool) {
		r = pthread_create(&c->shaper, NULL, shaper_main, c);
		if (r)
			return collect_fail(c, -r, "collector: starting the shaping thread: %s", strerror(r));
		c->shaper_running = true;
	}
	r = pthread_create(&c->thread, NULL, bg_main, c);
	if (r) {
		collect_fail(c, -r, "collector: starting the drain thread: %s", strerror(r));
		collect_bg_stop(c);
		return -r;
	}
	c->bg_running = true;
	return 0;
}

int collect_bg_stop(struct collect *c)
{
	int r = 0;

	if (c->bg_running) {
		atomic_store(&c->bg_stop, true);
		pthread_join(c->thread, NULL);
		c->bg_running = false;
		r = c->bg_err;
		if (r && c->spool)
			collect_fail(c, r, "%s", c->drain_err);
	}
	if (c->shaper_running) {
		struct sched_param sp = {0};

		/* The capture is over: catch up at normal priority. */
		pthread_setschedparam(c->shaper, SCHED_OTHER, &sp);
		atomic_store(&c->shaper_stop, true);
		pthread_join(c->shaper, NULL);
		c->shaper_running = false;
		if (!r)
			r = c->shaper_err;
	}
	return r;
}
