/* etcd scenarios (scenario.h). */
#include "scenario.h"
#include "seedrand.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LEADER_TIMEOUT_MS 30000
#define QUIET_TIMEOUT_MS 30000
#define ACKED_TIMEOUT_MS 60000

static const char *const names[] = { "initial-election", "steady-writes", "leader-kill", "follower-pause",
				     "leader-restart", "partition", "random" };

bool etcd_scenario_known(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

bool etcd_scenario_needs_netns(const char *name) { return !strcmp(name, "partition") || !strcmp(name, "random"); }
bool etcd_scenario_pre_vote(const char *name) { return !strcmp(name, "partition"); }
bool etcd_scenario_needs_load(const char *name) { return strcmp(name, "initial-election") != 0; }


static void phase(struct etcd_scenario *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void phase(struct etcd_scenario *s, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->phase)
		s->phase(s->ctx, buf);
}

static int fail_cluster(struct etcd_scenario *s, int rc, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, s->cl->err);
	return rc ? rc : -EIO;
}

/* A leader agreed by every live member, in a term above min_term. */
static int wait_leader(struct etcd_scenario *s, uint64_t min_term, struct etcd_leader *l, const char *after)
{
	int rc = etcd_cluster_wait_leader(s->cl, LEADER_TIMEOUT_MS, min_term, true, l, NULL);
	if (rc)
		return fail_cluster(s, rc, after);
	phase(s, "leader n%d in term %" PRIu64, l->index + 1, l->term);
	return 0;
}

/* The scenario's put load: s->puts puts (or the scenario's default), never a duration, so that
 * a run does the same work on a fast machine and on a slow one. */
static unsigned puts_of(const struct etcd_scenario *s, unsigned dflt) { return s->puts ? s->puts : dflt; }

static int load_start(struct etcd_scenario *s, unsigned count, unsigned concurrency, struct etcd_load *ld)
{
	struct etcd_load_opts o = { .count = count, .concurrency = concurrency, .all_endpoints = true };
	if (!s->putload) {
		snprintf(s->err, sizeof(s->err), "this scenario drives puts and needs putload (build/tools/putload)");
		return -ENOENT;
	}
	int rc = etcd_cluster_load_start(s->cl, s->putload, &o, ld);
	if (rc)
		return fail_cluster(s, rc, "starting the put load");
	phase(s, "%u puts, %u in flight", count, concurrency);
	return 0;
}

struct acked_wait {
	const struct etcd_load *ld;
	int64_t want, got;
};

static int enough_acked(void *arg)
{
	struct acked_wait *w = arg;
	w->got = etcd_cluster_load_acked(w->ld);
	return w->got < 0 || w->got >= w->want;
}

/* Waits until `want` puts of the load were acknowledged: faults strike after a number of
 * operations, not after a time. */
static int wait_acked(struct etcd_scenario *s, const struct etcd_load *ld, unsigned want)
{
	struct acked_wait w = { ld, want, 0 };
	if (sup_wait_until(enough_acked, &w, 20, ACKED_TIMEOUT_MS, NULL) || w.got < 0) {
		snprintf(s->err, sizeof(s->err), "%u puts were not acknowledged within %u s (%lld were)%s%s", want,
			 ACKED_TIMEOUT_MS / 1000, (long long)(w.got < 0 ? 0 : w.got), w.got < 0 ? ": " : "",
			 w.got < 0 ? strerror((int)-w.got) : "");
		return -ETIMEDOUT;
	}
	phase(s, "%lld puts acknowledged", (long long)w.got);
	return 0;
}

static int load_end(struct etcd_scenario *s, struct etcd_load *ld)
{
	int rc = etcd_cluster_load_wait(s->cl, ld, &s->load);
	if (rc && rc != -ETIMEDOUT)
		return fail_cluster(s, rc, "the put load");
	s->has_load = true;
	phase(s, "puts: %" PRIu64 " acknowledged, %" PRIu64 " failed", s->load.acked, s->load.failed);
	return 0;
}

static unsigned other_member(struct etcd_scenario *s, unsigned not, uint64_t *rng)
{
	unsigned i = (unsigned)(seedrand_next(rng) % (s->cl->n - 1));
	return i >= not ? i + 1 : i;
}

/* One fault on member i and its repair, then a leader agreed by all. kind: 0 kill+restart,
 * 1 pause+resume, 2 cut+heal. */
static int fault(struct etcd_scenario *s, unsigned i, unsigned kind, unsigned hold_ms)
{
	struct etcd_cluster *c = s->cl;
	struct etcd_leader l;
	int rc;

	switch (kind) {
	case 0:
		phase(s, "SIGKILL n%u", i + 1);
		if ((rc = etcd_cluster_kill(c, i)))
			return fail_cluster(s, rc, "kill");
		sup_sleep_ms(hold_ms);
		phase(s, "restarting n%u", i + 1);
		if ((rc = etcd_cluster_restart(c, i)))
			return fail_cluster(s, rc, "restart");
		break;
	case 1:
		phase(s, "SIGSTOP n%u for %u ms", i + 1, hold_ms);
		if ((rc = etcd_cluster_pause(c, i)))
			return fail_cluster(s, rc, "pause");
		sup_sleep_ms(hold_ms);
		if ((rc = etcd_cluster_resume(c, i)))
			return fail_cluster(s, rc, "resume");
		phase(s, "SIGCONT n%u", i + 1);
		break;
	default:
		phase(s, "cutting n%u off for %u ms", i + 1, hold_ms);
		if ((rc = etcd_cluster_partition(c, i)))
			return fail_cluster(s, rc, "partition");
		sup_sleep_ms(hold_ms);
		if ((rc = etcd_cluster_heal(c, i)))
			return fail_cluster(s, rc, "heal");
		phase(s, "healed n%u", i + 1);
		break;
	}
	if ((rc = wait_leader(s, 0, &l, "after the fault")))
		return rc;
	s->last = l;
	return 0;
}

struct quiet {
	struct etcd_scenario *s;
	struct etcd_member_status prev[ETCD_MAX_MEMBERS];
	bool have_prev;
};

static bool same_view(const struct etcd_member_status *a, const struct etcd_member_status *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].reachable != b[i].reachable ||
		    (a[i].reachable && (a[i].term != b[i].term || a[i].leader != b[i].leader ||
					a[i].raft_index != b[i].raft_index || a[i].applied_index != b[i].applied_index)))
			return false;
	return true;
}

/* Quiet: every live member answers, names the same leader and term, has applied all it
 * committed, and the view did not change since the previous poll. */
static int is_quiet(void *arg)
{
	struct quiet *q = arg;
	struct etcd_cluster *c = q->s->cl;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	uint64_t leader = 0, term = 0;
	bool ok = etcd_cluster_status(c, st) > 0;

	for (unsigned i = 0; ok && i < c->n; i++) {
		bool live = !c->m[i].killed && !c->m[i].paused && !c->m[i].partitioned;
		if (!live)
			continue;
		if (!st[i].reachable || !st[i].leader || st[i].raft_index != st[i].applied_index ||
		    (leader && (st[i].leader != leader || st[i].term != term)))
			ok = false;
		leader = st[i].leader;
		term = st[i].term;
	}
	ok = ok && q->have_prev && same_view(st, q->prev, c->n);
	memcpy(q->prev, st, sizeof(st));
	q->have_prev = true;
	return ok;
}

static int wait_quiet(struct etcd_scenario *s)
{
	struct quiet q = { .s = s, .have_prev = false };
	phase(s, "waiting until the cluster is quiet");
	if (sup_wait_until(is_quiet, &q, 200, QUIET_TIMEOUT_MS, NULL)) {
		snprintf(s->err, sizeof(s->err), "the cluster did not settle within %u s (same leader, term and applied index on every live member)",
			 QUIET_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	memcpy(s->final, q.prev, sizeof(s->final));
	return 0;
}

static int run(struct etcd_scenario *s, const char *name, uint64_t *rng)
{
	struct etcd_cluster *c = s->cl;
	struct etcd_load ld;
	int rc;

	if ((rc = wait_leader(s, 0, &s->first, "waiting for the first leader")))
		return rc;
	s->last = s->first;
	unsigned leader = (unsigned)s->first.index, election_ms = c->election_ms;
	if (!strcmp(name, "initial-election"))
		return 0;
	if (!strcmp(name, "steady-writes")) {
		struct etcd_load_opts o = { .count = puts_of(s, 300), .concurrency = 4 };
		if (!s->putload)
			return load_start(s, o.count, o.concurrency, &ld); /* names what is missing */
		phase(s, "%u puts, 4 in flight", o.count);
		if ((rc = etcd_cluster_load(c, s->putload, &o, &s->load)))
			return fail_cluster(s, rc, "the put load");
		s->has_load = true;
		phase(s, "puts: %" PRIu64 " acknowledged, %" PRIu64 " failed", s->load.acked, s->load.failed);
		return 0;
	}
	if (!strcmp(name, "leader-kill") || !strcmp(name, "leader-restart")) {
		unsigned n = puts_of(s, ETCD_FAULT_PUTS);
		if ((rc = load_start(s, n, 2, &ld)) || (rc = wait_acked(s, &ld, n / 4)))
			return rc;
		phase(s, "SIGKILL the leader n%u", leader + 1);
		if ((rc = etcd_cluster_kill(c, leader)))
			return fail_cluster(s, rc, "killing the leader");
		if ((rc = wait_leader(s, s->first.term, &s->last, "waiting for a new leader")))
			return rc;
		if (!strcmp(name, "leader-restart")) {
			phase(s, "restarting n%u", leader + 1);
			if ((rc = etcd_cluster_restart(c, leader)))
				return fail_cluster(s, rc, "restarting the old leader");
			if ((rc = wait_leader(s, 0, &s->last, "waiting for the old leader to follow")))
				return rc;
		}
		return load_end(s, &ld);
	}
	if (!strcmp(name, "follower-pause")) {
		unsigned f = other_member(s, leader, rng), n = puts_of(s, ETCD_FAULT_PUTS);
		if ((rc = load_start(s, n, 2, &ld)) || (rc = wait_acked(s, &ld, n / 4)) ||
		    (rc = fault(s, f, 1, 3 * election_ms)))
			return rc;
		return load_end(s, &ld);
	}
	if (!strcmp(name, "partition")) {
		unsigned n = puts_of(s, ETCD_FAULT_PUTS);
		if ((rc = load_start(s, n, 2, &ld)) || (rc = wait_acked(s, &ld, n / 4)))
			return rc;
		phase(s, "cutting the leader n%u off", leader + 1);
		if ((rc = etcd_cluster_partition(c, leader)))
			return fail_cluster(s, rc, "partition");
		if ((rc = wait_leader(s, s->first.term, &s->last, "waiting for a leader among the others")))
			return rc;
		sup_sleep_ms(election_ms); /* how long the cut lasts once the others have a leader */
		if ((rc = etcd_cluster_heal(c, leader)))
			return fail_cluster(s, rc, "heal");
		phase(s, "healed n%u", leader + 1);
		if ((rc = wait_leader(s, 0, &s->last, "waiting for all to agree after the heal")))
			return rc;
		return load_end(s, &ld);
	}
	/* random: a fault after each quarter of the puts */
	unsigned n = puts_of(s, 2 * ETCD_FAULT_PUTS);
	if ((rc = load_start(s, n, 2, &ld)))
		return rc;
	for (unsigned k = 0; k < 3; k++) {
		unsigned i = (unsigned)(seedrand_next(rng) % c->n), kind = (unsigned)(seedrand_next(rng) % 3);
		unsigned hold = election_ms + (unsigned)(seedrand_next(rng) % (2 * election_ms));
		if ((rc = wait_acked(s, &ld, n * (k + 1) / 4)) || (rc = fault(s, i, kind, hold))) {
			struct etcd_load_result ignored;
			etcd_cluster_load_stop(c, &ld, &ignored);
			return rc;
		}
	}
	return load_end(s, &ld);
}

int etcd_scenario_run(struct etcd_scenario *s, const char *name)
{
	uint64_t rng = s->seed;
	int rc;

	s->err[0] = 0;
	s->has_load = false;
	if (!etcd_scenario_known(name)) {
		snprintf(s->err, sizeof(s->err), "unknown scenario '%s' (known: %s)", name, ETCD_SCENARIOS);
		return -EINVAL;
	}
	if (etcd_scenario_needs_netns(name) && !s->cl->netns) {
		snprintf(s->err, sizeof(s->err), "scenario %s needs the members in network namespaces", name);
		return -EINVAL;
	}
	if ((rc = run(s, name, &rng)))
		return rc;
	return wait_quiet(s);
}
