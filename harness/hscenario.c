/* scenario: the steps of a described scenario (hscenario.h). */
#include "hscenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static uint64_t next_rand(uint64_t *x) /* splitmix64 */
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void phase(struct hscenario *s, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	if (!s->phase)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s->phase(s->ctx, buf);
}

struct leader_wait {
	struct hscenario *s;
	long not;         /* a leader other than this one */
	bool all;         /* named by every reachable node */
	unsigned found;
	uint64_t next_ms; /* when to say again that it is still waiting */
};

static int leader_cond(void *arg)
{
	struct leader_wait *w = arg;
	int r = w->all ? hcluster_agreed(w->s->c, &w->found) : hcluster_leader(w->s->c, &w->found);
	if (r == -EAGAIN || (!r && (long)w->found == w->not)) {
		/* An election can take seconds (NATS: 4 s at least): progress, once a second. */
		if (sup_now_ms() >= w->next_ms) {
			phase(w->s, "waiting for a %sleader%s", w->not >= 0 ? "new " : "", w->all ? " every node names" : "");
			w->next_ms += 1000;
		}
		return 0;
	}
	return r ? r : 1;
}

static int wait_leader(struct hscenario *s, long not, bool all, unsigned timeout_ms, unsigned *leader)
{
	struct leader_wait w = { s, not, all, 0, sup_now_ms() + 1000 };
	unsigned waited = 0;
	int r = sup_wait_until(leader_cond, &w, 100, timeout_ms, &waited);
	if (r == -ETIMEDOUT)
		snprintf(s->err, sizeof(s->err), "no %sleader%s after %u ms", not >= 0 ? "new " : "",
			 all ? " every node names" : "", timeout_ms);
	else if (r)
		snprintf(s->err, sizeof(s->err), "%s", s->c->err);
	else
		*leader = w.found;
	return r;
}

/* The node a fault strikes. */
static int target(struct hscenario *s, const struct desc_step *st, unsigned *node)
{
	struct hcluster *c = s->c;
	unsigned leader;
	int r;
	switch (st->target) {
	case TARGET_NODE:
		if (st->node >= c->n) {
			snprintf(s->err, sizeof(s->err), "node %u: the cluster has %u nodes", st->node + 1, c->n);
			return -EINVAL;
		}
		*node = st->node;
		return 0;
	case TARGET_LAST:
		if (s->last_struck < 0) {
			snprintf(s->err, sizeof(s->err), "'last': no node was struck before");
			return -EINVAL;
		}
		*node = (unsigned)s->last_struck;
		return 0;
	case TARGET_LEADER:
		return wait_leader(s, -1, false, st->timeout_ms, node);
	case TARGET_FOLLOWER: {
		if ((r = wait_leader(s, -1, false, st->timeout_ms, &leader)))
			return r;
		unsigned cand[HCLUSTER_MAX_NODES], n = 0;
		for (unsigned i = 0; i < c->n; i++)
			if (i != leader && hcluster_reachable(c, i))
				cand[n++] = i;
		if (!n) {
			snprintf(s->err, sizeof(s->err), "no running follower to strike");
			return -ESRCH;
		}
		*node = cand[next_rand(&s->seed) % n];
		return 0;
	}
	}
	return -EINVAL;
}

/* A fault the seed picks among st->faults, on a running node the seed picks, undone after
 * st->ms: kill then restart, pause then resume, or cut off then healed. */
static int random_fault(struct hscenario *s, const struct desc_step *st)
{
	static const unsigned bits[] = { FAULT_KILL, FAULT_PAUSE, FAULT_PARTITION };
	struct hcluster *c = s->c;
	unsigned kinds[3], nk = 0, cand[HCLUSTER_MAX_NODES], n = 0;
	for (unsigned k = 0; k < 3; k++)
		if (st->faults & bits[k])
			kinds[nk++] = bits[k];
	for (unsigned i = 0; i < c->n; i++)
		if (hcluster_reachable(c, i))
			cand[n++] = i;
	if (!n || !nk) {
		snprintf(s->err, sizeof(s->err), "no running node to strike");
		return -ESRCH;
	}
	unsigned kind = kinds[next_rand(&s->seed) % nk], node = cand[next_rand(&s->seed) % n];
	static const char *const names[] = { [FAULT_KILL] = "killing", [FAULT_PAUSE] = "pausing",
					     [FAULT_PARTITION] = "cutting off" };
	phase(s, "%s %s for %u ms (picked by the seed)", names[kind], c->names[node], st->ms);
	s->last_struck = node;
	int r = kind == FAULT_KILL ? hcluster_kill(c, node) : kind == FAULT_PAUSE ? hcluster_pause(c, node)
									     : hcluster_partition(c, node);
	if (!r) {
		sup_sleep_ms(st->ms);
		r = kind == FAULT_KILL ? hcluster_restart(c, node) : kind == FAULT_PAUSE ? hcluster_resume(c, node)
										 : hcluster_heal(c, node);
	}
	if (r)
		snprintf(s->err, sizeof(s->err), "%s", c->err);
	return r;
}

struct quiet_wait {
	struct hscenario *s;
	uint64_t last;
	uint64_t since_ms;
	unsigned ms;
};

static int quiet_cond(void *arg)
{
	struct quiet_wait *q = arg;
	uint64_t now = sup_now_ms(), n = q->s->events_so_far ? q->s->events_so_far(q->s->ctx) : 0;
	if (n != q->last) {
		q->last = n;
		q->since_ms = now;
	}
	return now - q->since_ms >= q->ms;
}

static int step(struct hscenario *s, const struct desc_scenario *sc, const struct desc_step *st)
{
	struct hcluster *c = s->c;
	unsigned node = 0, leader;
	int r = 0;

	switch (st->kind) {
	case STEP_START: {
		struct hcluster_opts o = *s->copts;
		o.netns = sc->partitions; /* a node can only be cut off from its own namespace */
		if ((r = hcluster_start(c, s->d, &o))) {
			snprintf(s->err, sizeof(s->err), "%s", c->err);
			return r;
		}
		s->started = true;
		hload_init(&s->load, c);
		phase(s, "%u nodes of %s up%s", c->n, c->d->name, o.netns ? ", each in a network namespace" : "");
		return 0;
	}
	case STEP_WAIT:
		if ((r = wait_leader(s, st->new_leader ? s->last_struck : -1, st->all_agree, st->timeout_ms, &leader)))
			return r;
		phase(s, "%s leads%s", c->names[leader], st->all_agree ? ", every node says so" : "");
		return 0;
	case STEP_LOAD:
		if ((r = hload_run(&s->load, st->count))) {
			snprintf(s->err, sizeof(s->err), "%s", c->err);
			return r;
		}
		phase(s, "load: %" PRIu64 " operations so far, %" PRIu64 " acknowledged", s->load.ops, s->load.acked);
		return 0;
	case STEP_KILL:
	case STEP_PAUSE:
	case STEP_RESTART:
	case STEP_PARTITION:
		if ((r = target(s, st, &node)))
			return r;
		s->last_struck = node;
		if (st->kind == STEP_PARTITION) {
			phase(s, "cutting %s off the network", c->names[node]);
			r = hcluster_partition(c, node);
		} else if (st->kind == STEP_KILL) {
			phase(s, "killing %s", c->names[node]);
			r = hcluster_kill(c, node);
		} else if (st->kind == STEP_RESTART) {
			phase(s, "restarting %s", c->names[node]);
			r = hcluster_restart(c, node);
		} else if (st->hold) {
			phase(s, "pausing %s", c->names[node]);
			r = hcluster_pause(c, node);
		} else {
			phase(s, "pausing %s for %u ms", c->names[node], st->ms);
			if (!(r = hcluster_pause(c, node))) {
				sup_sleep_ms(st->ms);
				r = hcluster_resume(c, node);
			}
		}
		if (r)
			snprintf(s->err, sizeof(s->err), "%s", c->err);
		return r;
	case STEP_RESUME: /* every node still stopped, at once */
		for (unsigned i = 0; i < c->n && !r; i++)
			if (hcluster_running(c, i) && c->sup.procs[c->proc[i]].stopped) {
				phase(s, "resuming %s", c->names[i]);
				if ((r = hcluster_resume(c, i)))
					snprintf(s->err, sizeof(s->err), "%s", c->err);
			}
		return r;
	case STEP_FAULT:
		return random_fault(s, st);
	case STEP_HEAL: /* every node cut off, at once */
		for (unsigned i = 0; i < c->n && !r; i++)
			if (c->cut[i]) {
				phase(s, "reconnecting %s", c->names[i]);
				if ((r = hcluster_heal(c, i)))
					snprintf(s->err, sizeof(s->err), "%s", c->err);
			}
		return r;
	case STEP_QUIET: {
		struct quiet_wait q = { s, (uint64_t)-1, sup_now_ms(), st->ms };
		r = sup_wait_until(quiet_cond, &q, 50, st->timeout_ms, NULL);
		if (r == -ETIMEDOUT) /* a system that never quiets down (heartbeats) is not an error */
			r = 0;
		return r;
	}
	case STEP_SLEEP:
		sup_sleep_ms(st->ms);
		return 0;
	}
	return -EINVAL;
}

int hscenario_run(struct hscenario *s, const struct desc_scenario *sc)
{
	s->last_struck = -1;
	for (size_t i = 0; i < sc->n; i++) {
		int r = step(s, sc, &sc->steps[i]);
		if (sup_interrupted())
			return -EINTR;
		if (!r && s->failed && s->failed(s->ctx)) {
			snprintf(s->err, sizeof(s->err), "the capture failed: the scenario stopped after its step %zu", i + 1);
			return -EIO;
		}
		if (r) {
			char what[HCLUSTER_ERR_SIZE];
			snprintf(what, sizeof(what), "%s", s->err);
			snprintf(s->err, sizeof(s->err), "scenario %.40s, step %zu (%.200s:%u): %.450s", sc->name, i + 1, s->d->path,
				 sc->steps[i].pos.line, what);
			return r;
		}
	}
	return 0;
}

void hscenario_fini(struct hscenario *s)
{
	if (s->started)
		hload_fini(&s->load);
}
