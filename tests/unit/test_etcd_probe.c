/*
 * The whole probe chain on Debian's unmodified etcd: functions and RET sites from .gopclntab
 * (probes/go), the generic uprobe program (probes/bpf), a real 3-member cluster on loopback
 * (systems/etcd). Entry probes read raft state through the receiver in rax; RET probes read it
 * through the receiver's spill slot at rsp+8, i.e. the state after the step. Offsets are those
 * tests/go/offsets/run.sh prints for Debian's etcd 3.4.23 (go1.19.8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cluster.h"
#include "gobin.h"
#include "supervise.h"
#include "uprobe_loader.h"

#define ETCD (etcd_programs[ETCD_PROG_ETCD].path)
#define RAFT "go.etcd.io/etcd/raft.(*raft)."

/* raft.raft fields read: id, Term, Vote, state, lead, raftLog->committed. */
static const int32_t field_off[] = { 0, 8, 16, 136, 176, 72 };
enum { F_ID, F_TERM, F_VOTE, F_STATE, F_LEAD, F_COMMIT, NFIELDS };
enum { STATE_FOLLOWER = 0, STATE_CANDIDATE = 1, STATE_LEADER = 2 };

enum step { BECOME_FOLLOWER, BECOME_CANDIDATE, BECOME_LEADER, NSTEPS };
static const char *const step_fn[NSTEPS] = { RAFT "becomeFollower", RAFT "becomeCandidate", RAFT "becomeLeader" };

struct rec {
	enum step step;
	bool ret;
	uint32_t tid;
	uint64_t f[NFIELDS];
	uint32_t err;
};

static struct rec *recs;
static size_t nrecs, caprecs;

static void spec_for(struct probe_spec *s, bool at_ret)
{
	memset(s, 0, sizeof(*s));
	s->nreads = NFIELDS;
	for (int i = 0; i < NFIELDS; i++) {
		struct uprobe_read *r = &s->reads[i];
		r->src = at_ret ? UPROBE_SRC_STACK : UPROBE_SRC_RAX;
		r->src_off = at_ret ? 8 : 0; /* at a RET, the receiver's spill slot */
		r->kind = UPROBE_READ_MEM;
		r->size = 8;
		if (i == F_COMMIT) { /* raftLog (+48) -> committed (+72) */
			r->nderef = 1;
			r->deref_off[0] = 48;
		}
		r->off = field_off[i];
	}
}

static int collect(void *ctx, const struct uprobe_event *ev, size_t size)
{
	(void)ctx;
	(void)size;
	if (nrecs == caprecs) {
		size_t cap = caprecs ? caprecs * 2 : 256;
		struct rec *n = realloc(recs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		recs = n;
		caprecs = cap;
	}
	struct rec *r = &recs[nrecs++];
	r->step = (enum step)(ev->probe_id / 100);
	r->ret = ev->probe_id % 100 != 0;
	r->tid = ev->tid;
	r->err = ev->err;
	for (int i = 0; i < NFIELDS; i++)
		r->f[i] = ev->val[i];
	return 0;
}

struct drain_until {
	struct uprobe_loader *l;
	struct etcd_cluster *c;
	uint64_t min_term;
	struct etcd_leader leader;
};

static int leader_elected(void *arg)
{
	struct drain_until *d = arg;
	uprobe_drain(d->l, collect, NULL);
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	if (etcd_cluster_status(d->c, st) < 0 || etcd_cluster_find_leader(d->c, st, &d->leader) < 0)
		return 0;
	return d->leader.index >= 0 && d->leader.term >= d->min_term && d->leader.agree == d->leader.reachable;
}

static size_t count(enum step s, bool ret, uint64_t id)
{
	size_t n = 0;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].step == s && recs[i].ret == ret && (!id || recs[i].f[F_ID] == id))
			n++;
	return n;
}

static void test_elections_through_probes(void)
{
	if (geteuid() != 0 || access(ETCD, X_OK) != 0) {
		printf("SKIP: test_elections_through_probes needs root and %s\n", ETCD);
		return;
	}
	char err[768] = "";
	struct gobin *g = NULL;
	struct uprobe_loader *l = NULL;
	struct etcd_cluster c;
	bool started = false;
	CHECKF(gobin_open(ETCD, &g, err) == 0, "%s", err);
	CHECKF(uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0, "%s", err);
	if (!g || !l)
		goto out;
	/* Sites first: reading the binary while probes are attached would show their int3s. */
	for (int s = 0; s < NSTEPS; s++) {
		struct gobin_func f;
		struct gobin_sites sites;
		CHECKF(gobin_func_find(g, step_fn[s], &f, err) == 0, "%s", err);
		CHECKF(gobin_sites(g, &f, &sites, err) == 0, "%s", err);
		struct probe_spec entry, ret;
		spec_for(&entry, false);
		spec_for(&ret, true);
		CHECKF(uprobe_attach(l, ETCD, f.file_off, (uint32_t)s * 100, &entry, -1) == 0, "%s", uprobe_loader_error(l));
		CHECK(sites.nret >= 1);
		for (size_t i = 0; i < sites.nret; i++)
			CHECKF(uprobe_attach(l, ETCD, sites.ret_off[i], (uint32_t)s * 100 + 1, &ret, -1) == 0, "%s",
			       uprobe_loader_error(l));
		gobin_sites_free(&sites);
	}

	char dir[] = "/tmp/spectap-test-etcd-probe-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	struct etcd_cluster_opts o = { .work_dir = dir };
	int rc = etcd_cluster_start(&c, &o);
	CHECKF(rc == 0, "%s", c.err);
	if (rc)
		goto out;
	started = true;

	struct drain_until d = { l, &c, 1, { 0 } };
	CHECK(sup_wait_until(leader_elected, &d, 20, 15000, NULL) == 0);
	struct etcd_leader first = d.leader;
	uprobe_drain(l, collect, NULL);
	CHECKF(count(BECOME_LEADER, true, first.id) >= 1, "no becomeLeader return of %llx", (unsigned long long)first.id);

	/* Kill the leader: the survivors elect a new one in a higher term. */
	CHECK(etcd_cluster_kill(&c, (unsigned)first.index) == 0);
	d.min_term = first.term + 1;
	CHECK(sup_wait_until(leader_elected, &d, 20, 15000, NULL) == 0);
	struct etcd_leader second = d.leader;
	CHECK(second.id != first.id && second.term > first.term);
	uprobe_drain(l, collect, NULL);
	CHECKF(count(BECOME_LEADER, true, second.id) >= 1, "no becomeLeader return of %llx", (unsigned long long)second.id);

	/* What the probes saw: each step's post-state is what the step says. */
	uint64_t last_leader_term = 0;
	for (size_t i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		CHECKF(r->err == 0, "probe read faults %#x", r->err);
		CHECKF(etcd_cluster_member_of(&c, r->f[F_ID]) >= 0, "unknown raft id %llx", (unsigned long long)r->f[F_ID]);
		if (!r->ret)
			continue;
		if (r->step == BECOME_LEADER) {
			CHECK(r->f[F_STATE] == STATE_LEADER && r->f[F_LEAD] == r->f[F_ID] && r->f[F_VOTE] == r->f[F_ID]);
			if (r->f[F_ID] == second.id)
				last_leader_term = r->f[F_TERM];
		} else if (r->step == BECOME_CANDIDATE) {
			CHECK(r->f[F_STATE] == STATE_CANDIDATE && r->f[F_VOTE] == r->f[F_ID] && r->f[F_LEAD] == 0);
		} else {
			CHECK(r->f[F_STATE] == STATE_FOLLOWER);
		}
	}
	/* A candidate's return has the term its entry had plus one (paired by thread). */
	size_t paired = 0;
	for (size_t i = 0; i < nrecs; i++) {
		if (recs[i].step != BECOME_CANDIDATE || recs[i].ret)
			continue;
		for (size_t j = i + 1; j < nrecs; j++) {
			if (recs[j].step == BECOME_CANDIDATE && recs[j].ret && recs[j].tid == recs[i].tid) {
				CHECK(recs[j].f[F_TERM] == recs[i].f[F_TERM] + 1);
				paired++;
				break;
			}
		}
	}
	CHECK(paired >= 2); /* at least one campaign per election */
	CHECKF(last_leader_term == second.term, "probe term %llu, etcdctl term %llu", (unsigned long long)last_leader_term,
	       (unsigned long long)second.term);
	CHECK(count(BECOME_FOLLOWER, true, 0) >= 3);
	uint64_t lost = 1;
	CHECK(uprobe_losses(l, &lost) == 0 && lost == 0);
	printf("  %zu records; leaders %llx (term %llu), then %llx (term %llu)\n", nrecs, (unsigned long long)first.id,
	       (unsigned long long)first.term, (unsigned long long)second.id, (unsigned long long)second.term);
out:
	if (started)
		etcd_cluster_stop(&c);
	uprobe_loader_close(l);
	gobin_close(g);
	free(recs);
}

int main(void)
{
	RUN(test_elections_through_probes);
	TEST_MAIN_END("test_etcd_probe");
}
