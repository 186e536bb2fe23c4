/* The JVMTI agent (systems/zookeeper/agent, libspectap_zk_agent.so at $SPECTAP_ZK_AGENT, else
 * ZK_AGENT from the build) in Debian's real ZooKeeper 3.8.0: a 3-server ensemble with the agent
 * (file sink per server) elects a leader, loses it to a SIGKILL, elects another, and takes the
 * old one back as a follower. Then every record is checked:
 *   - each line parses as JSON and imports with spectap's json dialect; seq runs 1, 2, ... per
 *     file; every state has all its fields;
 *   - each step changes only the state its kind may change (a missed hook would show as a
 *     change at an unrelated step), and its args agree with the states around it;
 *   - each server's last state says the role `srvr` reports;
 *   - the leader's final proposal is itself, and its recvset has a quorum voting for it; every
 *     election end names the leader the ensemble agreed on;
 *   - every notification received pairs with one sent record of its sender to it with the same
 *     fields (no earlier in time), every notification handled was received, every send from
 *     sendNotifications carries the sender's proposal and logicalclock, and every looking branch
 *     agrees with the epochs it compared.
 * A hook that cannot be placed (an agent option moves one to a line that does not exist) and an
 * unknown option make the JVM exit at start with a message naming it. As root, the same records
 * also arrive through the emit API's USDT probe (libbpf), byte for byte. Election time is
 * measured with and without the agent. Every wait is on a condition with a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ensemble.h"
#include "spectap/arena.h"
#include "spectap/dialect.h"
#include "spectap/json.h"
#include "spectap/value.h"
#include "supervise.h"
#include "usdt_loader.h" /* probes/ */

#ifndef ZK_AGENT
#define ZK_AGENT "build/libspectap_zk_agent.so"
#endif

static char g_tmp[256];
static bool g_ready;
static char g_agent[PATH_MAX];

/* ---- reading a record file ---- */

struct rec {
	spt_val *ev;
	const char *kind, *node;
	uint64_t seq, ts;
	spt_val *state, *args, *msg;
};

struct nlog {
	char path[PATH_MAX];
	unsigned myid;
	struct rec *r;
	size_t n, cap;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	while (b) {
		size_t r = fread(b + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
		if (cap - n < 4096) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (b) {
		b[n] = '\0';
		*len = n;
	}
	return b;
}

static spt_val *get(spt_val *v, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	char *save = NULL;
	for (char *p = strtok_r(buf, ".", &save); p && v; p = strtok_r(NULL, ".", &save))
		v = spt_rec_get(v, p);
	return v;
}

static bool geti(spt_val *v, const char *path, int64_t *out)
{
	spt_val *x = get(v, path);
	if (!x || x->kind != SPT_INT)
		return false;
	*out = x->u.i;
	return true;
}

static const char *gets(spt_val *v, const char *path)
{
	spt_val *x = get(v, path);
	return x && x->kind == SPT_STR ? x->u.s : NULL;
}

static int64_t gi(spt_val *v, const char *path)
{
	int64_t x = INT64_MIN;
	geti(v, path, &x);
	return x;
}

static const char *const state_keys[] = {"logicalclock", "proposedLeader", "proposedZxid",
					 "proposedEpoch", "state", "currentEpoch", "acceptedEpoch",
					 "recvset", "outofelection"};
#define NKEYS (sizeof state_keys / sizeof state_keys[0])

/* Loads and parses one agent file; every line must be JSON and import with the json dialect. */
static bool load(struct nlog *L, const char *path, unsigned myid, struct spt_arena *a)
{
	memset(L, 0, sizeof *L);
	snprintf(L->path, sizeof L->path, "%s", path);
	L->myid = myid;
	size_t len = 0;
	char *text = slurp(path, &len);
	CHECKF(text != NULL, "%s: %s", path, strerror(errno));
	if (!text)
		return false;
	struct spt_import *im = NULL;
	CHECK(spt_import_new(SPT_DIALECT_JSON, &im) == 0);
	char mynode[16];
	snprintf(mynode, sizeof mynode, "%u", myid);
	size_t lineno = 0;
	bool ok = true;
	for (char *line = text; *line && ok;) {
		char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		lineno++;
		char *copy = spt_arena_strndup(a, line, ll);
		spt_val *obj = NULL;
		struct spt_json_error jerr;
		int rc = spt_json_parse(a, copy, ll, SPT_JSON_TAGGED, &obj, &jerr);
		CHECKF(rc == 0, "%s:%zu: not JSON: %s", path, lineno, jerr.msg);
		const struct spt_event *iev = NULL;
		const struct spt_loss *iloss = NULL;
		int irc = im ? spt_import_line(im, line, ll, &iev, &iloss, &jerr) : -1;
		CHECKF(irc == 1 && iev, "%s:%zu: json dialect import: %d %s", path, lineno, irc, jerr.msg);
		spt_val *ev = rc == 0 ? spt_rec_get(obj, "event") : NULL;
		CHECKF(ev != NULL, "%s:%zu: no \"event\"", path, lineno);
		if (rc != 0 || !ev || irc != 1) {
			ok = false;
			break;
		}
		if (L->n == L->cap) {
			L->cap = L->cap ? L->cap * 2 : 256;
			L->r = realloc(L->r, L->cap * sizeof *L->r);
		}
		struct rec *r = &L->r[L->n++];
		r->ev = ev;
		r->kind = gets(ev, "kind");
		r->node = gets(ev, "node");
		int64_t seq = 0, ts = 0;
		CHECKF(geti(ev, "seq", &seq) && geti(ev, "ts_ns", &ts), "%s:%zu", path, lineno);
		r->seq = (uint64_t)seq;
		r->ts = (uint64_t)ts;
		r->state = spt_rec_get(ev, "state");
		r->args = spt_rec_get(ev, "args");
		r->msg = spt_rec_get(ev, "msg");
		CHECKF(r->kind && r->node && !strcmp(r->node, mynode), "%s:%zu: kind/node", path, lineno);
		CHECKF(r->seq == L->n, "%s:%zu: seq %" PRIu64 " (a gap or a reset)", path, lineno, r->seq);
		CHECKF(!strcmp(gets(ev, "source") ? gets(ev, "source") : "", "jvmti"), "%s:%zu", path,
		       lineno);
		for (size_t k = 0; k < NKEYS; k++)
			CHECKF(r->state && spt_rec_get(r->state, state_keys[k]), "%s:%zu: state.%s missing",
			       path, lineno, state_keys[k]);
		line = nl ? nl + 1 : line + ll;
	}
	spt_import_free(im);
	free(text);
	return ok && L->n > 0;
}

/* Which state fields a step of this kind may change. */
static bool may_change(const char *kind, const char *key)
{
	static const struct {
		const char *kind, *keys;
	} t[] = {
		{"zk.logicalclock.bump", "logicalclock recvset outofelection"},
		{"zk.proposal.update", "proposedLeader proposedZxid proposedEpoch"},
		{"zk.recvset.clear", "recvset"},
		{"zk.recvset.put", "recvset"},
		{"zk.outofelection.put", "outofelection"},
		{"zk.peer.state", "state"},
		{"zk.epoch.current", "currentEpoch"},
		{"zk.epoch.accepted", "acceptedEpoch"},
		{"zk.fle.init", "logicalclock proposedLeader proposedZxid proposedEpoch"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		if (strcmp(t[i].kind, kind))
			continue;
		const char *p = strstr(t[i].keys, key);
		size_t kl = strlen(key);
		return p && (p[kl] == ' ' || p[kl] == '\0') && (p == t[i].keys || p[-1] == ' ');
	}
	return false;
}

static bool fields_eq(spt_val *a, spt_val *b) { return a && b && spt_value_eq(a, b); }

struct counts {
	unsigned sends, recvs, handles, bumps, puts, proposals, ends;
};

/* The checks on one server's records alone. */
static void check_one(struct nlog *L, struct counts *c)
{
	char me[16];
	snprintf(me, sizeof me, "%u", L->myid);
	for (size_t i = 0; i < L->n; i++) {
		struct rec *r = &L->r[i], *p = i ? &L->r[i - 1] : NULL;
		/* Frame: only what the step may change changed. */
		for (size_t k = 0; p && k < NKEYS; k++) {
			spt_val *a = spt_rec_get(p->state, state_keys[k]);
			spt_val *b = spt_rec_get(r->state, state_keys[k]);
			if (!may_change(r->kind, state_keys[k]))
				CHECKF(a && b && spt_value_eq(a, b), "%s seq %" PRIu64 " %s changed %s",
				       L->path, r->seq, r->kind, state_keys[k]);
		}
		/* logicalclock goes down only where lookForLeader joins an established ensemble
		 * (logicalclock.set(n.electionEpoch) in receivedFollowingNotification). */
		const char *bsite = !strcmp(r->kind, "zk.logicalclock.bump") ? gets(r->args, "site") : NULL;
		if (p && !(bsite && !strcmp(bsite, "outOfElection")))
			CHECKF(gi(r->state, "logicalclock") >= gi(p->state, "logicalclock"),
			       "%s seq %" PRIu64, L->path, r->seq);
		if (!strcmp(r->kind, "zk.logicalclock.bump")) {
			c->bumps++;
			int64_t old = gi(r->args, "old"), nw = gi(r->args, "new");
			CHECKF(nw == gi(r->state, "logicalclock") && (!p || old == gi(p->state, "logicalclock")),
			       "%s seq %" PRIu64 ": bump %" PRId64 "->%" PRId64, L->path, r->seq, old, nw);
			const char *site = gets(r->args, "site");
			if (site && !strcmp(site, "newElection"))
				CHECKF(nw == old + 1, "%s seq %" PRIu64, L->path, r->seq);
			if (site && !strcmp(site, "higherEpoch"))
				CHECKF(nw > old, "%s seq %" PRIu64, L->path, r->seq);
		} else if (!strcmp(r->kind, "zk.proposal.update")) {
			c->proposals++;
			CHECK(gi(r->args, "leader") == gi(r->state, "proposedLeader") &&
			      gi(r->args, "zxid") == gi(r->state, "proposedZxid") &&
			      gi(r->args, "epoch") == gi(r->state, "proposedEpoch"));
			if (p)
				CHECK(gi(r->args, "old.leader") == gi(p->state, "proposedLeader") &&
				      gi(r->args, "old.zxid") == gi(p->state, "proposedZxid") &&
				      gi(r->args, "old.epoch") == gi(p->state, "proposedEpoch"));
		} else if (!strcmp(r->kind, "zk.recvset.put") || !strcmp(r->kind, "zk.outofelection.put")) {
			c->puts++;
			const char *sid = gets(r->args, "sid");
			const char *map = r->kind[3] == 'r' ? "recvset" : "outofelection";
			spt_val *m = spt_rec_get(r->state, map);
			CHECKF(sid && m && fields_eq(spt_rec_get(m, sid), get(r->args, "vote")),
			       "%s seq %" PRIu64 ": %s[%s] is not the vote put", L->path, r->seq, map,
			       sid ? sid : "?");
		} else if (!strcmp(r->kind, "zk.recvset.clear")) {
			spt_val *m = spt_rec_get(r->state, "recvset");
			CHECK(m && m->n == 0);
		} else if (!strcmp(r->kind, "zk.peer.state")) {
			CHECK(!strcmp(gets(r->args, "new") ? gets(r->args, "new") : "",
				      gets(r->state, "state") ? gets(r->state, "state") : "-"));
			if (p)
				CHECK(!strcmp(gets(r->args, "old") ? gets(r->args, "old") : "",
					      gets(p->state, "state") ? gets(p->state, "state") : "-"));
		} else if (!strcmp(r->kind, "zk.epoch.current") || !strcmp(r->kind, "zk.epoch.accepted")) {
			const char *key = r->kind[9] == 'c' ? "currentEpoch" : "acceptedEpoch";
			CHECK(gi(r->args, "new") == gi(r->state, key));
		} else if (!strcmp(r->kind, "zk.notification.send")) {
			c->sends++;
			CHECK(r->msg && !strcmp(gets(r->msg, "dir"), "send") &&
			      !strcmp(gets(r->msg, "from"), me) &&
			      !strcmp(gets(r->msg, "type"), "Notification"));
			const char *site = gets(r->args, "site");
			CHECKF(site && strcmp(site, "unknown"), "%s seq %" PRIu64 ": send site", L->path, r->seq);
			if (site && !strcmp(site, "sendNotifications"))
				CHECKF(gi(r->msg, "fields.leader") == gi(r->state, "proposedLeader") &&
				       gi(r->msg, "fields.zxid") == gi(r->state, "proposedZxid") &&
				       gi(r->msg, "fields.electionEpoch") == gi(r->state, "logicalclock") &&
				       gi(r->msg, "fields.peerEpoch") == gi(r->state, "proposedEpoch") &&
				       !strcmp(gets(r->msg, "fields.state"), "LOOKING"),
				       "%s seq %" PRIu64 ": a notification that is not the proposal", L->path,
				       r->seq);
		} else if (!strcmp(r->kind, "zk.notification.resend")) {
			c->sends++;
			CHECK(r->msg && !strcmp(gets(r->msg, "dir"), "send") &&
			      !strcmp(gets(r->msg, "from"), me));
		} else if (!strcmp(r->kind, "zk.notification.recv")) {
			c->recvs++;
			const char *action = gets(r->args, "action");
			CHECK(action && (!strcmp(action, "queued") || !strcmp(action, "answered") ||
					 !strcmp(action, "ignored") || !strcmp(action, "dropped")));
			CHECK(r->msg && !strcmp(gets(r->msg, "dir"), "recv") && !strcmp(gets(r->msg, "to"), me));
		} else if (!strcmp(r->kind, "zk.notification.handle")) {
			c->handles++;
			const char *b = gets(r->args, "branch");
			int64_t ee = gi(r->args, "fields.electionEpoch"), lc = gi(r->state, "logicalclock");
			CHECK(b != NULL);
			if (b && !strcmp(b, "lookingHigherEpoch"))
				CHECKF(ee > lc, "%s seq %" PRIu64 ": higher %" PRId64 " vs %" PRId64, L->path, r->seq, ee, lc);
			if (b && (!strcmp(b, "lookingSameEpoch") || !strcmp(b, "lookingSameEpochBetter")))
				CHECKF(ee == lc, "%s seq %" PRIu64 ": same %" PRId64 " vs %" PRId64, L->path, r->seq, ee, lc);
			if (b && !strcmp(b, "lookingLowerEpoch"))
				CHECKF(ee < lc, "%s seq %" PRIu64 ": lower %" PRId64 " vs %" PRId64, L->path, r->seq, ee, lc);
			/* It was received here before. */
			bool found = false;
			for (size_t k = 0; k < i && !found; k++) {
				struct rec *q = &L->r[k];
				found = !strcmp(q->kind, "zk.notification.recv") && q->msg &&
					!strcmp(gets(q->msg, "from"), gets(r->args, "from")) &&
					fields_eq(spt_rec_get(q->msg, "fields"), get(r->args, "fields"));
			}
			CHECKF(found, "%s seq %" PRIu64 ": handled a notification never received", L->path,
			       r->seq);
		} else if (!strcmp(r->kind, "zk.election.end")) {
			c->ends++;
		}
	}
}

/* Every receive pairs with one send of its sender to it, same fields, not later. */
static void check_pairs(struct nlog *logs, size_t nlogs)
{
	size_t total = 0;
	for (size_t i = 0; i < nlogs; i++)
		total += logs[i].n;
	bool *used = calloc(total, 1);
	unsigned recvs = 0, paired = 0;
	for (size_t i = 0; i < nlogs; i++)
		for (size_t j = 0; j < logs[i].n; j++) {
			struct rec *r = &logs[i].r[j];
			if (strcmp(r->kind, "zk.notification.recv") || !r->msg)
				continue;
			recvs++;
			const char *from = gets(r->msg, "from");
			spt_val *f = spt_rec_get(r->msg, "fields");
			bool ok = false;
			size_t base = 0;
			for (size_t a = 0; a < nlogs && !ok; base += logs[a].n, a++) {
				char an[16];
				snprintf(an, sizeof an, "%u", logs[a].myid);
				if (strcmp(an, from))
					continue;
				for (size_t b = 0; b < logs[a].n && !ok; b++) {
					struct rec *s = &logs[a].r[b];
					if (used[base + b] || !s->msg ||
					    (strcmp(s->kind, "zk.notification.send") &&
					     strcmp(s->kind, "zk.notification.resend")) ||
					    strcmp(gets(s->msg, "to"), gets(r->msg, "to")) || s->ts > r->ts ||
					    !fields_eq(spt_rec_get(s->msg, "fields"), f))
						continue;
					used[base + b] = true;
					ok = true;
				}
			}
			paired += ok;
			CHECKF(ok, "%s seq %" PRIu64 ": a notification from %s no send record matches",
			       logs[i].path, r->seq, from);
		}
	printf("    %u notifications received, %u paired with their send\n", recvs, paired);
	free(used);
	/* And every notification handled was sent by its sender to this server, same fields. */
	unsigned handles = 0, found = 0;
	for (size_t i = 0; i < nlogs; i++) {
		char me[16];
		snprintf(me, sizeof me, "%u", logs[i].myid);
		for (size_t j = 0; j < logs[i].n; j++) {
			struct rec *r = &logs[i].r[j];
			if (strcmp(r->kind, "zk.notification.handle"))
				continue;
			handles++;
			const char *from = gets(r->args, "from");
			bool ok = false;
			for (size_t a = 0; a < nlogs && !ok; a++) {
				char an[16];
				snprintf(an, sizeof an, "%u", logs[a].myid);
				for (size_t b = 0; from && !strcmp(an, from) && b < logs[a].n && !ok; b++) {
					struct rec *s = &logs[a].r[b];
					ok = s->msg && !strcmp(gets(s->msg, "dir"), "send") &&
					     !strcmp(gets(s->msg, "to"), me) && s->ts <= r->ts &&
					     fields_eq(spt_rec_get(s->msg, "fields"), get(r->args, "fields"));
				}
			}
			found += ok;
			CHECKF(ok, "%s seq %" PRIu64 ": a notification handled that %s never sent",
			       logs[i].path, r->seq, from ? from : "?");
		}
	}
	printf("    %u notifications handled, %u with their send\n", handles, found);
}

/* The last record of the run whose state names a role: the role srvr reports. */
static const char *role(enum zk_mode m)
{
	return m == ZK_MODE_LEADER ? "LEADING" : m == ZK_MODE_FOLLOWER ? "FOLLOWING" : "?";
}

/* Votes for leader in a vote map of a state with this logicalclock. */
static unsigned votes_for(spt_val *map, int64_t leader, int64_t lc)
{
	unsigned v = 0;
	for (uint32_t k = 0; map && k < map->n; k++) {
		spt_val *x = spt_fun_val(map, k);
		v += gi(x, "leader") == leader && (lc < 0 || gi(x, "electionEpoch") == lc);
	}
	return v;
}

/* A leader's last election (before before_ns): it ended naming itself; when it decided on its
 * own proposal (site "looking") that proposal is itself and a quorum of its recvset votes for
 * it in its logicalclock; when it joined servers that already follow it (receivedFollowing-
 * Notification) a quorum of recvset or outofelection names it. */
static void check_leader(struct nlog *L, unsigned n, uint64_t before_ns)
{
	struct rec *end = NULL;
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->r[i].kind, "zk.election.end") && L->r[i].ts < before_ns)
			end = &L->r[i];
	CHECKF(end != NULL, "%s: no election end", L->path);
	if (!end)
		return;
	int64_t me = (int64_t)L->myid;
	const char *site = gets(end->args, "site");
	CHECK(gi(end->args, "vote.leader") == me);
	CHECK(!strcmp(gets(end->state, "state"), "LEADING"));
	unsigned q = n / 2 + 1;
	if (site && !strcmp(site, "looking")) {
		CHECKF(gi(end->state, "proposedLeader") == me, "%s seq %" PRIu64, L->path, end->seq);
		unsigned v = votes_for(spt_rec_get(end->state, "recvset"), me,
				       gi(end->state, "logicalclock"));
		CHECKF(v >= q, "%s: %u of %u servers vote for the leader in its recvset", L->path, v, n);
	} else {
		unsigned v1 = votes_for(spt_rec_get(end->state, "recvset"), me, -1);
		unsigned v2 = votes_for(spt_rec_get(end->state, "outofelection"), me, -1);
		CHECKF(v1 >= q || v2 >= q, "%s: %u (recvset) and %u (outofelection) of %u servers name "
		       "the leader", L->path, v1, v2, n);
	}
	printf("    %s: leader %u decided at seq %" PRIu64 " (%s)\n", strrchr(L->path, '/') + 1,
	       L->myid, end->seq, site ? site : "?");
}

/* The last election end of a run before before_ns names want. */
static void check_last_end(struct nlog *L, uint64_t before_ns, int64_t want, const char *when)
{
	struct rec *end = NULL;
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->r[i].kind, "zk.election.end") && L->r[i].ts < before_ns)
			end = &L->r[i];
	CHECKF(end && gi(end->args, "vote.leader") == want, "%s: the last election %s ended with "
	       "leader %" PRId64 ", not %" PRId64, L->path, when,
	       end ? gi(end->args, "vote.leader") : -1, want);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ZooKeeper's own "LEADER ELECTION TOOK - N MS" of a log: the largest, or -1. */
static long election_took(const char *log)
{
	size_t len = 0;
	char *t = slurp(log, &len);
	long best = -1;
	for (char *p = t; p && (p = strstr(p, "ELECTION TOOK - "));) {
		p += 16;
		long v = strtol(p, NULL, 10);
		if (v > best)
			best = v;
	}
	free(t);
	return best;
}

static bool log_has(const char *log, const char *what)
{
	size_t len = 0;
	char *t = slurp(log, &len);
	bool r = t && strstr(t, what);
	free(t);
	return r;
}

/* ---- the runs ---- */

static long g_took_agent = -1, g_took_plain = -1;
static unsigned g_wait_agent, g_wait_plain;

static void test_election_with_agent(void)
{
	if (!g_ready)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/agent", g_tmp);
	struct zk_ensemble e;
	struct zk_ensemble_opts o = {.work_dir = dir, .agent = g_agent, .agent_out = true};
	int rc = zk_ensemble_start(&e, &o);
	CHECKF(rc == 0, "%s", e.err);
	if (rc < 0)
		return;
	struct zk_leader l1, l2, l3;
	rc = zk_ensemble_wait_leader(&e, 30000, 0, true, &l1, &g_wait_agent);
	CHECKF(rc == 0, "%s", e.err);
	if (rc < 0) {
		zk_ensemble_stop(&e);
		return;
	}
	printf("    leader zk%u, agreed by all %u ms after start (with the agent)\n", l1.myid,
	       g_wait_agent);
	for (unsigned i = 0; i < e.n; i++) {
		long t = election_took(e.s[i].log_path);
		if (t > g_took_agent)
			g_took_agent = t;
	}
	struct zk_srvr st1[ZK_MAX_SERVERS], st[ZK_MAX_SERVERS];
	CHECK(zk_ensemble_status(&e, st1) == 3);
	unsigned old = (unsigned)l1.index;
	/* Kill the leader: a new one; restart it: it follows. */
	uint64_t t_kill = mono_ns();
	CHECK(zk_ensemble_kill(&e, old) == 0);
	unsigned ms = 0;
	rc = zk_ensemble_wait_leader(&e, 30000, l1.epoch, false, &l2, &ms);
	CHECKF(rc == 0 && l2.index != (int)old, "%s", e.err);
	printf("    new leader zk%u %u ms after SIGKILL of zk%u\n", l2.myid, ms, old + 1);
	CHECK(zk_ensemble_restart(&e, old) == 0);
	rc = zk_ensemble_wait_leader(&e, 30000, l1.epoch, true, &l3, &ms);
	CHECKF(rc == 0 && l3.index == l2.index, "%s", e.err);
	CHECK(zk_ensemble_status(&e, st) == 3);
	char first_old[PATH_MAX + 32];
	snprintf(first_old, sizeof first_old, "%s/zk%u.agent.ndjson", dir, old + 1);
	zk_ensemble_stop(&e);

	/* Records: 3 first runs plus the restarted server's second run. */
	struct spt_arena a;
	spt_arena_init(&a);
	struct nlog logs[4];
	size_t nl = 0;
	bool loaded = true;
	for (unsigned i = 0; i < 3; i++) {
		char p[PATH_MAX + 32];
		snprintf(p, sizeof p, "%s/zk%u.agent.ndjson", dir, i + 1);
		loaded &= load(&logs[nl++], p, i + 1, &a);
	}
	loaded &= load(&logs[nl++], e.s[old].agent_out, old + 1, &a);
	CHECK(strcmp(e.s[old].agent_out, first_old) != 0);
	if (!loaded) {
		spt_arena_fini(&a);
		return;
	}
	struct counts c = {0};
	for (size_t i = 0; i < nl; i++)
		check_one(&logs[i], &c);
	printf("    %zu+%zu+%zu+%zu records: %u sends, %u receives, %u handled, %u logicalclock bumps, "
	       "%u proposals, %u votes put, %u election ends\n",
	       logs[0].n, logs[1].n, logs[2].n, logs[3].n, c.sends, c.recvs, c.handles, c.bumps,
	       c.proposals, c.puts, c.ends);
	CHECK(c.sends > 0 && c.recvs > 0 && c.handles > 0 && c.bumps >= 4 && c.puts > 0 && c.ends >= 5);
	check_pairs(logs, nl);

	/* Final states against srvr: the killed leader's first run ended leading; the others
	 * (and its second run) end as srvr says now. */
	const char *last_old = gets(logs[old].r[logs[old].n - 1].state, "state");
	CHECKF(last_old && !strcmp(last_old, role(st1[old].mode)), "zk%u first run ended %s", old + 1,
	       last_old ? last_old : "?");
	for (unsigned i = 0; i < 3; i++) {
		struct nlog *L = i == old ? &logs[3] : &logs[i];
		const char *s = gets(L->r[L->n - 1].state, "state");
		CHECKF(s && !strcmp(s, role(st[i].mode)), "zk%u ends %s, srvr says %s", i + 1,
		       s ? s : "?", zk_mode_name(st[i].mode));
	}
	/* Leaders: the first one (its first run, before the kill), the new one. A server may end
	 * an election with another leader and then join the agreed one (a race of FLE that the
	 * others' initLimit resolves): what counts is each run's last election end before the
	 * kill, and at the end. */
	check_leader(&logs[old], 3, t_kill);
	check_leader(&logs[l2.index], 3, UINT64_MAX);
	for (unsigned i = 0; i < 3; i++)
		check_last_end(&logs[i], t_kill, (int64_t)l1.myid, "before the kill");
	for (size_t i = 0; i < nl; i++)
		if (i != old)
			check_last_end(&logs[i], UINT64_MAX, (int64_t)l2.myid, "at the end");
	for (size_t i = 0; i < nl; i++)
		free(logs[i].r);
	spt_arena_fini(&a);
}

/* One server elects itself with locals read through JVMTI GetLocal* (the agent's fallback when
 * java.lang.LiveStackFrame is not usable): the same records, the same checks. */
static void test_election_jvmti_locals(void)
{
	if (!g_ready)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/jvmtilocals", g_tmp);
	struct zk_ensemble e;
	struct zk_ensemble_opts o = {.work_dir = dir, .servers = 1, .agent = g_agent,
				     .agent_out = true, .agent_options = "locals=jvmti,verbose"};
	int rc = zk_ensemble_start(&e, &o);
	CHECKF(rc == 0, "%s", e.err);
	if (rc < 0)
		return;
	struct zk_leader l;
	rc = zk_ensemble_wait_leader(&e, 30000, 0, true, &l, NULL);
	CHECKF(rc == 0 && l.myid == 1, "%s", e.err);
	char out[PATH_MAX], log[PATH_MAX];
	snprintf(out, sizeof out, "%s", e.s[0].agent_out);
	snprintf(log, sizeof log, "%s", e.s[0].log_path);
	zk_ensemble_stop(&e);
	CHECK(!log_has(log, "LiveStackFrame not usable")); /* the option, not a failure, chose it */
	struct spt_arena a;
	spt_arena_init(&a);
	struct nlog L;
	if (load(&L, out, 1, &a)) {
		struct counts c = {0};
		check_one(&L, &c);
		check_pairs(&L, 1);
		check_leader(&L, 1, UINT64_MAX);
		CHECK(c.sends >= 1 && c.recvs >= 1 && c.handles >= 1 && c.ends == 1);
		const char *last = gets(L.r[L.n - 1].state, "state");
		CHECK(last && !strcmp(last, "LEADING"));
	}
	free(L.r);
	spt_arena_fini(&a);
}

/* ---- the emit sink, collected through its USDT probe ---- */

struct got {
	char **r;
	size_t n, cap;
	unsigned flagged;
};

static int on_usdt(void *ctx, const struct usdt_record *rec, const uint8_t *data, size_t len)
{
	struct got *g = ctx;
	if (rec->flags || len != rec->len) {
		g->flagged++;
		return 0;
	}
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 256;
		g->r = realloc(g->r, g->cap * sizeof *g->r);
	}
	g->r[g->n] = malloc(len + 1);
	memcpy(g->r[g->n], data, len);
	g->r[g->n++][len] = '\0';
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The records of an agent file as the agent handed them to its sinks: each line is
 * {"event":{"source":..,"seq":..,"ts_ns":..,"tid":..,REST}} and the record {REST}. */
static size_t file_records(const char *path, struct got *g)
{
	size_t len = 0, n = 0;
	char *t = slurp(path, &len);
	for (char *line = t; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		char *tid = strstr(line, "\"tid\":");
		char *rest = tid ? tid + 6 : NULL;
		while (rest && *rest >= '0' && *rest <= '9')
			rest++;
		if (rest && (*rest == ',' || *rest == '}') && ll >= 2) {
			if (*rest == ',')
				rest++;
			size_t rl = (size_t)(line + ll - 1 - rest); /* without the outer '}' */
			struct usdt_record fake = {0};
			char *rec = malloc(rl + 2);
			rec[0] = '{';
			memcpy(rec + 1, rest, rl);
			rec[rl + 1] = '\0';
			fake.len = (uint32_t)(rl + 1);
			on_usdt(g, &fake, (const uint8_t *)rec, rl + 1);
			free(rec);
			n++;
		}
		line = nl ? nl + 1 : line + ll;
	}
	free(t);
	return n;
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->r[i]);
	free(g->r);
	memset(g, 0, sizeof *g);
}

/* The agent with out= and emit: every record written to the files also arrives, byte for byte,
 * through the emit API's USDT probe spectap:event, attached with libbpf before the JVMs start. */
static void test_emit_usdt(void)
{
	if (!g_ready)
		return;
	if (geteuid() != 0) {
		printf("SKIP: not root: the emit sink's USDT path did not run\n");
		return;
	}
	struct usdt_loader *l = NULL;
	char err[512];
	int rc = usdt_loader_open(&l, NULL, err, sizeof err);
	CHECKF(rc == 0, "usdt_loader_open: %s", err);
	if (rc < 0)
		return;
	rc = usdt_attach(l, g_agent, -1);
	CHECKF(rc == 0, "usdt_attach %s: %s (is the agent linked with the emit library?)", g_agent,
	       usdt_loader_error(l));
	if (rc < 0) {
		usdt_loader_close(l);
		return;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/usdt", g_tmp);
	struct zk_ensemble e;
	struct zk_ensemble_opts o = {.work_dir = dir, .agent = g_agent, .agent_out = true,
				     .agent_options = "emit"};
	struct got usdt = {0}, file = {0};
	rc = zk_ensemble_start(&e, &o);
	CHECKF(rc == 0, "%s", e.err);
	if (rc == 0) {
		struct zk_leader ld;
		rc = zk_ensemble_wait_leader(&e, 30000, 0, true, &ld, NULL);
		CHECKF(rc == 0, "%s", e.err);
		for (int k = 0; k < 100 && usdt_drain(l, on_usdt, &usdt) > 0; k++)
			;
		zk_ensemble_stop(&e);
		while (usdt_drain(l, on_usdt, &usdt) > 0)
			;
		size_t lines = 0;
		for (unsigned i = 0; i < e.n; i++) {
			char p[PATH_MAX + 32];
			snprintf(p, sizeof p, "%s/zk%u.agent.ndjson", dir, i + 1);
			lines += file_records(p, &file);
		}
		uint64_t lost = 1;
		CHECK(usdt_losses(l, &lost) == 0 && lost == 0);
		CHECK(usdt.flagged == 0);
		printf("    %zu records through USDT, %zu in the files\n", usdt.n, lines);
		CHECK(usdt.n > 50 && usdt.n == file.n && file.n == lines);
		qsort(usdt.r, usdt.n, sizeof *usdt.r, cmp_str);
		qsort(file.r, file.n, sizeof *file.r, cmp_str);
		size_t same = 0;
		for (size_t i = 0; i < usdt.n && i < file.n; i++)
			same += !strcmp(usdt.r[i], file.r[i]);
		CHECKF(same == file.n, "%zu of %zu records equal", same, file.n);
	}
	got_free(&usdt);
	got_free(&file);
	usdt_loader_close(l);
}

static void test_election_without_agent(void)
{
	if (!g_ready)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/plain", g_tmp);
	struct zk_ensemble e;
	struct zk_ensemble_opts o = {.work_dir = dir};
	int rc = zk_ensemble_start(&e, &o);
	CHECKF(rc == 0, "%s", e.err);
	if (rc < 0)
		return;
	struct zk_leader l;
	rc = zk_ensemble_wait_leader(&e, 30000, 0, true, &l, &g_wait_plain);
	CHECKF(rc == 0, "%s", e.err);
	for (unsigned i = 0; i < e.n; i++) {
		long t = election_took(e.s[i].log_path);
		if (t > g_took_plain)
			g_took_plain = t;
	}
	zk_ensemble_stop(&e);
	printf("    overhead: leader agreed %u ms after start without the agent, %u ms with it; "
	       "ZooKeeper's own LEADER ELECTION TOOK (largest of 3): %ld ms without, %ld ms with\n",
	       g_wait_plain, g_wait_agent, g_took_plain, g_took_agent);
	CHECK(g_took_plain >= 0 && g_took_agent >= 0);
}

/* A one-server ensemble whose agent must refuse to start: the JVM exits 1 before ZooKeeper's
 * main, with a message holding every string of want. */
static void refused_start(const char *name, const char *options, const char *const *want)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%s", g_tmp, name);
	struct zk_ensemble e;
	struct zk_ensemble_opts o = {.work_dir = dir, .servers = 1, .agent = g_agent,
				     .agent_out = true, .agent_options = options};
	int rc = zk_ensemble_start(&e, &o);
	CHECKF(rc == 0, "%s", e.err);
	if (rc < 0)
		return;
	int status = 0;
	uint64_t t0 = sup_now_ms();
	rc = zk_ensemble_wait_exit(&e, 0, 20000, &status);
	CHECKF(rc == 0, "%s", e.err);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x", status);
	printf("    %s: the JVM exited %llu ms after start\n", name,
	       (unsigned long long)(sup_now_ms() - t0));
	for (const char *const *w = want; *w; w++)
		CHECKF(log_has(e.s[0].log_path, *w), "%s lacks \"%s\"", e.s[0].log_path, *w);
	/* ZooKeeper's main never ran. */
	CHECK(!log_has(e.s[0].log_path, "Reading configuration from"));
	struct stat sb;
	CHECK(stat(e.s[0].agent_out, &sb) != 0 || sb.st_size == 0);
	zk_ensemble_stop(&e);
}

static void test_missing_hook_stops_jvm(void)
{
	if (!g_ready)
		return;
	static const char *const want[] = {
		"hook lookForLeader.recvset.put", "FastLeaderElection.lookForLeader",
		"has no line 9999", "the JVM is stopped", NULL};
	refused_start("badline", "hook.lookForLeader.recvset.put=9999", want);
	/* A line that exists but does not do what the hook expects. */
	static const char *const want2[] = {"hook lookForLeader.recvset.clear", "line 1042",
					    "calls java/util/Map.clear 0 times", NULL};
	refused_start("wrongline", "hook.lookForLeader.recvset.clear=1042", want2);
}

static void test_bad_option_stops_jvm(void)
{
	if (!g_ready)
		return;
	static const char *const want[] = {"unknown or incomplete option \"bogus=1\"", NULL};
	refused_start("badopt", "bogus=1", want);
	static const char *const want2[] = {"no hook \"nosuch\"", NULL};
	refused_start("badhook", "hook.nosuch=12", want2);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(sup_install_handlers() == 0);
	snprintf(g_tmp, sizeof g_tmp, "/tmp/spectap-test-zkagent-XXXXXX");
	if (!mkdtemp(g_tmp)) {
		perror("mkdtemp");
		return 1;
	}
	const char *agent = getenv("SPECTAP_ZK_AGENT") ? getenv("SPECTAP_ZK_AGENT") : ZK_AGENT;
	bool have_agent = realpath(agent, g_agent) != NULL;
	CHECKF(have_agent, "agent %s: %s (build it: make %s)", agent, strerror(errno), agent);
	char err[512];
	bool have_zk = zk_available(NULL, NULL, err, sizeof err) == 0;
	CHECKF(have_zk, "%s", err);
	g_ready = have_agent && have_zk;
	uint64_t t0 = sup_now_ms();
	RUN(test_missing_hook_stops_jvm);
	RUN(test_bad_option_stops_jvm);
	RUN(test_election_with_agent);
	RUN(test_election_jvmti_locals);
	RUN(test_emit_usdt);
	RUN(test_election_without_agent);
	printf("    total %llu ms\n", (unsigned long long)(sup_now_ms() - t0));
	if (getenv("SPECTAP_KEEP_TMP")) {
		printf("    kept %s\n", g_tmp);
		TEST_MAIN_END("test_zk_agent");
	}
	struct sup_output o;
	const char *rm[] = {"rm", "-rf", g_tmp, NULL};
	if (sup_run_capture(rm, NULL, 10000, &o, NULL) != 0 || !WIFEXITED(o.status) ||
	    WEXITSTATUS(o.status) != 0)
		fprintf(stderr, "could not remove %s\n", g_tmp);
	sup_output_free(&o);
	TEST_MAIN_END("test_zk_agent");
}
