/* RedisRaft scenarios (rr_scenario.h). */
#include "rr_scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seedrand.h"

#define LEADER_TIMEOUT_MS 15000
#define BATCH 20

static const char *const names[] = {"initial-election", "steady-writes", "leader-kill",
				    "follower-pause",   "leader-restart", "random"};

bool rr_scenario_known(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void phase(struct rr_scenario *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void phase(struct rr_scenario *s, const char *fmt, ...)
{
	char b[256];
	va_list ap;

	if (!s->phase)
		return;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	s->phase(s->ctx, b);
}

static unsigned below(uint64_t *rng, unsigned n)
{
	return (unsigned)(seedrand_next(rng) % n);
}

static int cfail(struct rr_scenario *s, int r, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, s->cl->err);
	return r;
}

static int leader(struct rr_scenario *s, int64_t min_term, bool all, const char *what)
{
	int r = rr_cluster_wait_leader(s->cl, LEADER_TIMEOUT_MS, min_term, all, &s->last_leader, &s->last_term);

	if (r)
		return cfail(s, r, what);
	phase(s, "leader %s in term %" PRId64, s->cl->node[s->last_leader].name, s->last_term);
	return 0;
}

/* n writes to the current leader; a failed batch looks for the leader again. */
static int writes(struct rr_scenario *s, unsigned n)
{
	char key[32];

	snprintf(key, sizeof(key), "spectap-%" PRIu64, s->seed);
	for (unsigned done = 0; done < n; done += BATCH) {
		unsigned ok = 0, bad = 0;
		int r = rr_cluster_incr(s->cl, (unsigned)s->last_leader, key, BATCH, &ok, &bad);

		if (r)
			return cfail(s, r, "writes");
		s->writes_acked += ok;
		s->writes_failed += bad;
		if (bad && (r = leader(s, 0, false, "writes: the leader changed")))
			return r;
	}
	return 0;
}

static int kill_leader(struct rr_scenario *s, int *who)
{
	int r;

	*who = s->last_leader;
	phase(s, "SIGKILL the leader %s", s->cl->node[*who].name);
	if ((r = rr_cluster_kill(s->cl, (unsigned)*who)))
		return cfail(s, r, "kill");
	return leader(s, s->last_term, true, "a new leader after the kill");
}

static int pause_node(struct rr_scenario *s, unsigned i, unsigned ms)
{
	int r;

	phase(s, "SIGSTOP %s for %u ms", s->cl->node[i].name, ms);
	if ((r = rr_cluster_pause(s->cl, i)))
		return cfail(s, r, "pause");
	uint64_t until = sup_now_ms() + ms;
	if (i != (unsigned)s->last_leader && (r = writes(s, 40)))
		return r;
	while (sup_now_ms() < until)
		sup_sleep_ms(50);
	phase(s, "SIGCONT %s", s->cl->node[i].name);
	if ((r = rr_cluster_resume(s->cl, i)))
		return cfail(s, r, "resume");
	return 0;
}

/* The leader appends an entry no follower gets, then dies: both followers are killed while it
 * takes a write (which it cannot commit; the client gives up), it is killed, and they come back
 * and elect a leader among themselves, whose log holds another entry at that index. When the
 * old leader then comes back it truncates its log (raft_delete_entry_from_idx). Killed rather
 * than paused: a paused follower would still read the entry from its socket on resume. */
static int orphan_entry(struct rr_scenario *s, int *old)
{
	char key[40];
	int r;

	*old = s->last_leader;
	snprintf(key, sizeof(key), "spectap-orphan-%" PRIu64, s->seed);
	phase(s, "SIGKILL every follower; one write to the leader %s that it cannot commit; SIGKILL it",
	      s->cl->node[*old].name);
	for (unsigned i = 0; i < s->cl->n; i++)
		if (i != (unsigned)*old && (r = rr_cluster_kill(s->cl, i)))
			return cfail(s, r, "kill");
	if ((r = rr_cluster_write_unacked(s->cl, (unsigned)*old, key, 500)))
		return cfail(s, r, "the orphan write");
	s->writes_unacked++;
	if ((r = rr_cluster_kill(s->cl, (unsigned)*old)))
		return cfail(s, r, "kill");
	phase(s, "restart the followers on their dirs");
	for (unsigned i = 0; i < s->cl->n; i++)
		if (i != (unsigned)*old && (r = rr_cluster_restart(s->cl, i)))
			return cfail(s, r, "restart");
	return leader(s, s->last_term, true, "a new leader among the followers");
}

static int restart(struct rr_scenario *s, unsigned i)
{
	int r;

	phase(s, "restart %s on its dir", s->cl->node[i].name);
	if ((r = rr_cluster_restart(s->cl, i)))
		return cfail(s, r, "restart");
	return leader(s, 0, true, "the restarted node follows");
}

static int quiet(struct rr_scenario *s)
{
	int r;

	for (int k = 0; k < 2; k++)
		if ((r = rr_cluster_wait_leader(s->cl, LEADER_TIMEOUT_MS, 0, true, &s->last_leader, &s->last_term)))
			return cfail(s, r, "waiting for the cluster to be quiet");
	for (unsigned i = 0; i < s->cl->n; i++)
		if ((r = rr_cluster_info(s->cl, i, &s->final[i])) < 0)
			return cfail(s, r, "INFO raft at the end");
	return 0;
}

int rr_scenario_run(struct rr_scenario *s, const char *name)
{
	uint64_t rng = s->seed;
	int r = 0, who;

	if ((r = leader(s, 0, true, "the formed cluster")))
		return r;
	s->first_leader = s->last_leader;
	s->first_term = s->last_term;
	if (!strcmp(name, "initial-election")) {
		r = 0;
	} else if (!strcmp(name, "steady-writes")) {
		r = writes(s, 200);
	} else if (!strcmp(name, "leader-kill")) {
		if (!(r = writes(s, 40)) && !(r = kill_leader(s, &who)))
			r = writes(s, 40);
	} else if (!strcmp(name, "follower-pause")) {
		unsigned f = ((unsigned)s->last_leader + 1 + (unsigned)below(&rng, s->cl->n - 1)) % s->cl->n;

		if (!(r = writes(s, 40)))
			r = pause_node(s, f, 3000);
	} else if (!strcmp(name, "leader-restart")) {
		if (!(r = writes(s, 40)) && !(r = orphan_entry(s, &who)) && !(r = restart(s, (unsigned)who)))
			r = writes(s, 40);
	} else if (!strcmp(name, "random")) {
		for (int k = 0; k < 3 && !r; k++) {
			unsigned i = (unsigned)below(&rng, s->cl->n);

			if ((r = writes(s, 20)))
				break;
			if (below(&rng, 2)) {
				phase(s, "SIGKILL %s", s->cl->node[i].name);
				if ((r = rr_cluster_kill(s->cl, i)))
					return cfail(s, r, "kill");
				if ((r = leader(s, 0, true, "a leader after the kill")) || (r = restart(s, i)))
					break;
			} else {
				r = pause_node(s, i, 2000);
				if (!r)
					r = leader(s, 0, true, "a leader after the pause");
			}
		}
	} else {
		snprintf(s->err, sizeof(s->err), "unknown scenario '%s' (known: %s)", name, RR_SCENARIOS);
		return -EINVAL;
	}
	return r ? r : quiet(s);
}
