/* ZooKeeper scenarios; see zk_scenario.h. */
#include "zk_scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seedrand.h"

#define AGREE_TIMEOUT_MS 60000
#define QUIET_TIMEOUT_MS 30000

static const char *const names[] = { "initial-election", "leader-kill", "leader-restart",
				     "follower-pause", "rolling-restart", "random", "quorum-loss" };

bool zk_scenario_known(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void phase(struct zk_scenario *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void phase(struct zk_scenario *s, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->phase)
		s->phase(s->ctx, buf);
}

static int fail(struct zk_scenario *s, int rc, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, s->e->err);
	return rc;
}

/* Waits until a leader with epoch > min_epoch is agreed by every live server; s->last gets it. */
static int agree(struct zk_scenario *s, uint64_t min_epoch, const char *what)
{
	unsigned ms = 0;
	phase(s, "waiting for %s", what);
	int rc = zk_ensemble_wait_leader(s->e, AGREE_TIMEOUT_MS, min_epoch, true, &s->last, &ms);
	if (rc < 0)
		return fail(s, rc, what);
	s->elections++;
	phase(s, "zk%u leads (epoch %" PRIu64 ") after %u ms", s->last.myid, s->last.epoch, ms);
	return (int)ms;
}

static uint64_t below(uint64_t epoch) { return epoch ? epoch - 1 : 0; }

static int kill_server(struct zk_scenario *s, unsigned i)
{
	phase(s, "SIGKILL zk%u%s", i + 1, (int)i == s->last.index ? " (the leader)" : "");
	int rc = zk_ensemble_kill(s->e, i);
	return rc < 0 ? fail(s, rc, "kill") : 0;
}

static int restart_server(struct zk_scenario *s, unsigned i)
{
	phase(s, "restarting zk%u", i + 1);
	int rc = zk_ensemble_restart(s->e, i);
	return rc < 0 ? fail(s, rc, "restart") : 0;
}

/* A follower drawn from the seed. */
static unsigned pick_follower(struct zk_scenario *s, uint64_t *rng)
{
	unsigned k = (unsigned)(seedrand_next(rng) % (s->e->n - 1));
	return k >= (unsigned)s->last.index ? k + 1 : k;
}

static int leader_kill(struct zk_scenario *s)
{
	int rc;
	uint64_t epoch = s->last.epoch;
	if ((rc = kill_server(s, (unsigned)s->last.index)) < 0)
		return rc;
	return agree(s, epoch, "a new leader");
}

static int leader_restart(struct zk_scenario *s)
{
	unsigned old = (unsigned)s->last.index;
	int rc = leader_kill(s);
	if (rc < 0 || (rc = restart_server(s, old)) < 0)
		return rc;
	return agree(s, below(s->last.epoch), "the old leader to rejoin");
}

/* Pauses server i for hold_ms, resumes it and waits until every server agrees again. */
static int pause_server(struct zk_scenario *s, unsigned i, unsigned hold_ms)
{
	phase(s, "SIGSTOP zk%u for %u ms", i + 1, hold_ms);
	int rc = zk_ensemble_pause(s->e, i);
	if (rc < 0)
		return fail(s, rc, "pause");
	sup_sleep_ms(hold_ms); /* the fault's duration, not a wait for a result */
	phase(s, "SIGCONT zk%u", i + 1);
	if ((rc = zk_ensemble_resume(s->e, i)) < 0)
		return fail(s, rc, "resume");
	return agree(s, 0, "every server to serve again");
}

/* Long enough for the leader to drop the follower: syncLimit ticks, and a second more. */
static unsigned drop_ms(const struct zk_scenario *s) { return s->e->sync_limit * s->e->tick_ms + 1000; }

static int rolling_restart(struct zk_scenario *s)
{
	unsigned order[ZK_MAX_SERVERS], n = 0, leader = (unsigned)s->last.index;
	for (unsigned i = 0; i < s->e->n; i++)
		if (i != leader)
			order[n++] = i;
	order[n++] = leader; /* followers first: the ensemble keeps its leader as long as it can */
	for (unsigned k = 0; k < n; k++) {
		int rc = restart_server(s, order[k]);
		if (rc < 0 || (rc = agree(s, 0, "every server to serve again")) < 0)
			return rc;
	}
	return 0;
}

/* Twice: the leader and as many followers (drawn from the seed) killed as leave no quorum, so
 * the survivors look for a leader alone in a raised election epoch; the followers restarted,
 * their election epoch starting again below the survivors' (the case of lookForLeader that
 * drops a notification from a lower epoch, which nothing else provokes), a leader agreed, and
 * then the old leader restarted. */
static int quorum_loss(struct zk_scenario *s, uint64_t *rng)
{
	unsigned n = s->e->n, down[ZK_MAX_SERVERS];
	for (int round = 0; round < 2; round++) {
		unsigned leader = (unsigned)s->last.index, start = (unsigned)(seedrand_next(rng) % n), k = 0;
		int rc;
		if ((rc = kill_server(s, leader)) < 0)
			return rc;
		for (unsigned j = 0; j < n && k < n - n / 2 - 1; j++) {
			unsigned i = (start + j) % n;
			if (i != leader && (rc = kill_server(s, down[k++] = i)) < 0)
				return rc;
		}
		sup_sleep_ms(1000); /* how long the survivors stay without a quorum */
		for (unsigned j = 0; j < k; j++)
			if ((rc = restart_server(s, down[j])) < 0)
				return rc;
		if ((rc = agree(s, 0, "a quorum again")) < 0 || (rc = restart_server(s, leader)) < 0 ||
		    (rc = agree(s, 0, "the old leader to rejoin")) < 0)
			return rc;
	}
	return 0;
}

static int random_faults(struct zk_scenario *s, uint64_t *rng)
{
	for (int f = 0; f < 3; f++) {
		unsigned kind = (unsigned)(seedrand_next(rng) % 3);
		unsigned i = (unsigned)(seedrand_next(rng) % s->e->n);
		sup_sleep_ms(300 + (unsigned)(seedrand_next(rng) % 700)); /* time between faults */
		int rc;
		if (kind == 0) {
			bool was_leader = (int)i == s->last.index;
			uint64_t epoch = s->last.epoch;
			if ((rc = kill_server(s, i)) < 0)
				return rc;
			if (was_leader && (rc = agree(s, epoch, "a new leader")) < 0)
				return rc;
			if ((rc = restart_server(s, i)) < 0 || (rc = agree(s, 0, "every server to serve again")) < 0)
				return rc;
		} else if (kind == 1) {
			if ((rc = leader_restart(s)) < 0)
				return rc;
		} else {
			unsigned hold = 1000 + (unsigned)(seedrand_next(rng) % drop_ms(s));
			if ((rc = pause_server(s, i, hold)) < 0)
				return rc;
		}
	}
	return 0;
}

struct quiet {
	struct zk_scenario *s;
	struct zk_leader prev;
	bool have_prev;
};

/* Every live server answers, one leader is agreed, and the same as at the previous poll. */
static int is_quiet(void *arg)
{
	struct quiet *q = arg;
	struct zk_ensemble *e = q->s->e;
	struct zk_leader l;
	zk_ensemble_status(e, q->s->final);
	for (unsigned i = 0; i < e->n; i++)
		if (!e->s[i].killed && !e->s[i].paused && !q->s->final[i].serving)
			return q->have_prev = false;
	if (zk_ensemble_find_leader(e, q->s->final, &l) < 0)
		return q->have_prev = false;
	bool same = q->have_prev && l.index == q->prev.index && l.epoch == q->prev.epoch;
	q->prev = l;
	q->have_prev = true;
	return same;
}

static int wait_quiet(struct zk_scenario *s)
{
	struct quiet q = { .s = s };
	phase(s, "waiting until the ensemble is quiet");
	if (sup_wait_until(is_quiet, &q, 300, QUIET_TIMEOUT_MS, NULL)) {
		snprintf(s->err, sizeof(s->err), "the ensemble did not settle on one leader within %u ms",
			 QUIET_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	s->last = q.prev;
	return 0;
}

int zk_scenario_run(struct zk_scenario *s, const char *name)
{
	if (!zk_scenario_known(name)) {
		snprintf(s->err, sizeof(s->err), "unknown scenario '%s' (known: %s)", name, ZK_SCENARIOS);
		return -EINVAL;
	}
	uint64_t rng = s->seed;
	int rc = agree(s, 0, "the first leader");
	if (rc < 0)
		return rc;
	s->first = s->last;
	s->first_ms = (unsigned)(sup_now_ms() - s->e->launched_ms);
	rc = 0;
	if (!strcmp(name, "leader-kill"))
		rc = leader_kill(s);
	else if (!strcmp(name, "leader-restart"))
		rc = leader_restart(s);
	else if (!strcmp(name, "follower-pause"))
		rc = pause_server(s, pick_follower(s, &rng), drop_ms(s));
	else if (!strcmp(name, "rolling-restart"))
		rc = rolling_restart(s);
	else if (!strcmp(name, "random"))
		rc = random_faults(s, &rng);
	else if (!strcmp(name, "quorum-loss"))
		rc = quorum_loss(s, &rng);
	if (rc < 0)
		return rc;
	return wait_quiet(s);
}
