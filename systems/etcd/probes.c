/* The etcd probe set: raft role changes, read at every return of the function (post-state). */
#include "probes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gobin.h"

#define RAFT "go.etcd.io/etcd/raft.(*raft)."
#define GO_VERSION "go1.19.8" /* the build tests/go/offsets measured */

/* raft.raft fields (Debian's etcd 3.4.23, go1.19.8). */
enum { OFF_ID = 0, OFF_TERM = 8, OFF_VOTE = 16, OFF_RAFTLOG = 48, OFF_STATE = 136, OFF_LEAD = 176 };
enum { OFF_RAFTLOG_COMMITTED = 72 };

struct step {
	const char *fn, *kind;
	uint32_t probe_id;
};

/* Every probe reads the same post-state; the kind names the step (etcd-io/raft's trace names). */
static const struct step steps[] = {
	{ RAFT "becomeFollower", "BecomeFollower", 10 },
	{ RAFT "becomeCandidate", "BecomeCandidate", 20 },
	{ RAFT "becomePreCandidate", "BecomePreCandidate", 30 },
	{ RAFT "becomeLeader", "BecomeLeader", 40 },
};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static const struct collect_field state_fields[] = {
	{ "id", COLLECT_STATE, COLLECT_ID },    { "term", COLLECT_STATE, COLLECT_UINT },
	{ "vote", COLLECT_STATE, COLLECT_ID },  { "state", COLLECT_STATE, COLLECT_UINT },
	{ "lead", COLLECT_STATE, COLLECT_ID },  { "commit", COLLECT_STATE, COLLECT_UINT },
};
#define NFIELDS (sizeof(state_fields) / sizeof(state_fields[0]))
static const int32_t field_off[NFIELDS] = { OFF_ID, OFF_TERM, OFF_VOTE, OFF_STATE, OFF_LEAD, OFF_RAFTLOG_COMMITTED };

static struct collect_probe probes[NSTEPS];
static struct collect_table table;

const struct collect_table *etcd_probe_table(void)
{
	for (size_t s = 0; s < NSTEPS; s++) {
		probes[s].probe_id = steps[s].probe_id;
		probes[s].kind = steps[s].kind;
		probes[s].nfields = NFIELDS;
		memcpy(probes[s].fields, state_fields, sizeof(state_fields));
	}
	table.probes = probes;
	table.n = NSTEPS;
	return &table;
}

/* At a RET the frame is gone: the receiver is in its spill slot, rsp+8 (probes/bpf/README.md). */
static void post_state_spec(struct probe_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->nreads = NFIELDS;
	for (size_t i = 0; i < NFIELDS; i++) {
		struct uprobe_read *r = &spec->reads[i];
		r->src = UPROBE_SRC_STACK;
		r->src_off = 8;
		r->kind = UPROBE_READ_MEM;
		r->size = 8;
		if (field_off[i] == OFF_RAFTLOG_COMMITTED) {
			r->nderef = 1;
			r->deref_off[0] = OFF_RAFTLOG;
		}
		r->off = field_off[i];
	}
}

int etcd_probes_attach(struct uprobe_loader *l, const char *etcd_path, char *err, size_t errlen)
{
	char gerr[GOBIN_ERRBUF_SIZE] = "";
	struct gobin *g;
	int rc = gobin_open(etcd_path, &g, gerr);
	if (rc) {
		snprintf(err, errlen, "%s", gerr);
		return rc;
	}
	int sites = 0;
	const char *ver = gobin_go_version(g);
	if (!ver || strcmp(ver, GO_VERSION)) {
		snprintf(err, errlen,
			 "%s was built with %s; spectap's etcd offsets are for Debian's etcd 3.4.23 built with %s "
			 "(measure this build's with tests/go/offsets/run.sh)",
			 etcd_path, ver ? ver : "an unknown Go version", GO_VERSION);
		rc = -EPROTO;
		goto out;
	}
	struct probe_spec spec;
	post_state_spec(&spec);
	for (size_t s = 0; s < NSTEPS; s++) {
		struct gobin_func f;
		struct gobin_sites st;
		if ((rc = gobin_func_find(g, steps[s].fn, &f, gerr)) || (rc = gobin_sites(g, &f, &st, gerr))) {
			snprintf(err, errlen, "%s (%s)", gerr, etcd_path);
			goto out;
		}
		for (size_t i = 0; i < st.nret && !rc; i++) {
			rc = uprobe_attach(l, etcd_path, st.ret_off[i], steps[s].probe_id, &spec, -1);
			if (rc)
				snprintf(err, errlen, "attaching to %s return %zu: %s", steps[s].fn, i, uprobe_loader_error(l));
			else
				sites++;
		}
		if (!rc && st.nret == 0) {
			snprintf(err, errlen, "%s has no return instruction in %s: inlined or changed build?", steps[s].fn, etcd_path);
			rc = -ENOENT;
		}
		gobin_sites_free(&st);
		if (rc)
			goto out;
	}
	rc = sites;
out:
	gobin_close(g);
	return rc;
}
