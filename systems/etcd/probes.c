/* The etcd probe set (probes.h): raft functions, their sites, and the reads as data. */
#include "probes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gobin.h"

#define RAFT "go.etcd.io/etcd/raft."
#define GO_VERSION "go1.19.8" /* the build tests/go/offsets measured */

/* Layout of Debian's etcd 3.4.23 built with go1.19.8 (tests/go/offsets/run.sh). */
enum {
	RAFT_ID = 0, RAFT_TERM = 8, RAFT_VOTE = 16, RAFT_RAFTLOG = 48, RAFT_STATE = 136, RAFT_LEAD = 176,
	LOG_STORAGE_DATA = 8, /* the interface's data word: *MemoryStorage */
	LOG_UNSTABLE_ENTRIES = 16 + 8, LOG_UNSTABLE_OFFSET = 16 + 32, LOG_COMMITTED = 72,
	MEMSTORAGE_ENTS = 272,
	ENTRY_SIZE = 72, ENTRY_TERM = 0, ENTRY_INDEX = 8, ENTRY_DATA = 24,
	MSG_TYPE = 0, MSG_TO = 8, MSG_FROM = 16, MSG_TERM = 24, MSG_LOGTERM = 32, MSG_INDEX = 40,
	MSG_ENTRIES = 48, MSG_COMMIT = 72, MSG_REJECT = 296, MSG_REJECT_HINT = 304,
	MSG_AT = 8, /* the message, passed on the stack: rsp+8 at entry, and again at a RET */
	STEP_RECEIVER_SPILL = 8 + 360, /* Step's receiver spill slot, after the 360-byte message */
	APPLY_CONF_RECEIVER = 0xb8 - 0x1a0, /* applyConfChange keeps r at 0xb8(%rsp) of its 0x1a0 frame */
};

static const char *const msg_types[] = {
	"MsgHup", "MsgBeat", "MsgProp", "MsgApp", "MsgAppResp", "MsgVote", "MsgVoteResp", "MsgSnap",
	"MsgHeartbeat", "MsgHeartbeatResp", "MsgUnreachable", "MsgSnapStatus", "MsgCheckQuorum",
	"MsgTransferLeader", "MsgTimeoutNow", "MsgReadIndex", "MsgReadIndexResp", "MsgPreVote", "MsgPreVoteResp",
};
static const char *const roles[] = { "StateFollower", "StateCandidate", "StateLeader", "StatePreCandidate" };

const char *etcd_msg_type_name(uint64_t t) { return t < sizeof(msg_types) / sizeof(*msg_types) ? msg_types[t] : NULL; }
const char *etcd_role_name(uint64_t s) { return s < sizeof(roles) / sizeof(*roles) ? roles[s] : NULL; }

enum site { AT_ENTRY, AT_RET };

struct probe_def {
	const char *fn, *kind; /* kind: the table's name; the shaper names the events */
	uint32_t id;
	enum site site;
	uint8_t recv_src;      /* where the receiver is at the site */
	int32_t recv_off;      /* UPROBE_SRC_STACK: its offset from rsp */
	bool message;          /* reads the message at rsp+8 too */
	bool verify_only;      /* attached with ETCD_PROBE_VERIFY only */
};

static const struct probe_def defs[] = {
	{ RAFT "(*raft).becomeFollower", "BecomeFollower", ETCD_P_BECOME_FOLLOWER, AT_RET, UPROBE_SRC_STACK, 8, false },
	{ RAFT "(*raft).becomeCandidate", "BecomeCandidate", ETCD_P_BECOME_CANDIDATE, AT_RET, UPROBE_SRC_STACK, 8, false },
	{ RAFT "(*raft).becomePreCandidate", "BecomePreCandidate", ETCD_P_BECOME_PRECANDIDATE, AT_RET, UPROBE_SRC_STACK, 8, false },
	{ RAFT "(*raft).becomeLeader", "BecomeLeader", ETCD_P_BECOME_LEADER, AT_RET, UPROBE_SRC_STACK, 8, false },
	{ RAFT "(*raft).send", "Send", ETCD_P_SEND, AT_ENTRY, UPROBE_SRC_RAX, 0, true },
	{ RAFT "(*raft).Step", "Step", ETCD_P_STEP, AT_RET, UPROBE_SRC_STACK, STEP_RECEIVER_SPILL, true, true },
	{ RAFT "(*raft).Step", "StepBegin", ETCD_P_STEP_BEGIN, AT_ENTRY, UPROBE_SRC_RAX, 0, true },
	{ RAFT "(*raft).tickElection", "Tick", ETCD_P_TICK, AT_ENTRY, UPROBE_SRC_RAX, 0, false },
	{ RAFT "(*raft).tickHeartbeat", "Tick", ETCD_P_TICK, AT_ENTRY, UPROBE_SRC_RAX, 0, false },
	{ RAFT "(*raft).applyConfChange", "ApplyConfChangeBegin", ETCD_P_APPLY_CONF_BEGIN, AT_ENTRY, UPROBE_SRC_RAX, 0,
	  false },
	{ RAFT "(*raftLog).append", "Append", ETCD_P_APPEND, AT_ENTRY, UPROBE_SRC_RAX, 0, false },
	{ RAFT "(*raftLog).commitTo", "CommitTo", ETCD_P_COMMIT_TO, AT_ENTRY, UPROBE_SRC_RAX, 0, false, true },
	{ RAFT "(*raft).applyConfChange", "ApplyConfChange", ETCD_P_APPLY_CONF, AT_RET, UPROBE_SRC_STACK,
	  APPLY_CONF_RECEIVER, false },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static const char *const raft_read_names[ER_NREADS] = {
	"id", "term", "vote", "state", "lead", "commit", "unstable.offset", "unstable.len", "storage.len",
	"storage.first", "msg.type", "msg.to", "msg.from", "msg.term", "msg.logTerm", "msg.index",
	"msg.entries", "msg.entries[0].term", "msg.entries.terms", "msg.commit", "msg.reject", "msg.rejectHint",
};
static const char *const append_read_names[EA_NREADS] = {
	"count", "first.index", "first.term", "terms", "first.data.len", "first.data",
};
static const char *const commit_read_names[EC_NREADS] = { "tocommit", "committed" };


/* The terms of the last (at most 8) of count entries at the pointer src[+src_off]. */
static struct uprobe_read terms(uint8_t src, int32_t src_off, uint8_t count_read)
{
	struct uprobe_read r = uprobe_read_at(src, src_off, UPROBE_READ_ARRAY, UPROBE_MAX_BLOCK / 8, ENTRY_TERM, 0, NULL);
	r.flags = UPROBE_READ_TAIL;
	r.len_read = count_read;
	r.stride = ENTRY_SIZE;
	return r;
}

static void raft_spec(const struct probe_def *d, struct probe_spec *s)
{
	static const int32_t to_log[] = { RAFT_RAFTLOG };
	static const int32_t to_storage[] = { RAFT_RAFTLOG, LOG_STORAGE_DATA };
	static const int32_t to_ents[] = { RAFT_RAFTLOG, LOG_STORAGE_DATA, MEMSTORAGE_ENTS };
	uint8_t src = d->recv_src;
	int32_t so = d->recv_off;
	struct uprobe_read *r = s->reads;

	/* With a register source the value is the receiver itself; with a stack source the u64 at
	 * rsp+off is: either way, MEM at +field reads the field. */
	r[ER_ID] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_ID, 0, NULL);
	r[ER_TERM] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_TERM, 0, NULL);
	r[ER_VOTE] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_VOTE, 0, NULL);
	r[ER_STATE] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_STATE, 0, NULL);
	r[ER_LEAD] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_LEAD, 0, NULL);
	r[ER_COMMIT] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, LOG_COMMITTED, 1, to_log);
	r[ER_UNSTABLE_OFFSET] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, LOG_UNSTABLE_OFFSET, 1, to_log);
	r[ER_UNSTABLE_LEN] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, LOG_UNSTABLE_ENTRIES + 8, 1, to_log);
	r[ER_STORAGE_LEN] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, MEMSTORAGE_ENTS + 8, 2, to_storage);
	r[ER_STORAGE_FIRST] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, ENTRY_INDEX, 3, to_ents);
	s->nreads = ER_NSTATE;
	if (!d->message)
		return;
	r[EM_TYPE] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 4, MSG_AT + MSG_TYPE, 0, NULL);
	r[EM_TO] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_TO, 0, NULL);
	r[EM_FROM] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_FROM, 0, NULL);
	r[EM_TERM] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_TERM, 0, NULL);
	r[EM_LOGTERM] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_LOGTERM, 0, NULL);
	r[EM_INDEX] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_INDEX, 0, NULL);
	r[EM_NENTRIES] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_ENTRIES + 8, 0, NULL);
	r[EM_ENTRY0_TERM] = uprobe_read_at(UPROBE_SRC_STACK, MSG_AT + MSG_ENTRIES, UPROBE_READ_MEM, 8, ENTRY_TERM, 0, NULL);
	r[EM_ENTRY_TERMS] = terms(UPROBE_SRC_STACK, MSG_AT + MSG_ENTRIES, EM_NENTRIES);
	r[EM_COMMIT] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_COMMIT, 0, NULL);
	r[EM_REJECT] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 1, MSG_AT + MSG_REJECT, 0, NULL);
	r[EM_REJECT_HINT] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_REJECT_HINT, 0, NULL);
	s->nreads = ER_NREADS;
}

/* (*raftLog).append(ents ...pb.Entry): rax = l, rbx = ents' data, rcx = len(ents). */
static void append_spec(struct probe_spec *s)
{
	static const int32_t to_data[] = { ENTRY_DATA };
	struct uprobe_read *r = s->reads;

	r[EA_COUNT] = uprobe_read_at(UPROBE_SRC_RCX, 0, UPROBE_READ_VALUE, 8, 0, 0, NULL);
	r[EA_FIRST_INDEX] = uprobe_read_at(UPROBE_SRC_RBX, 0, UPROBE_READ_MEM, 8, ENTRY_INDEX, 0, NULL);
	r[EA_FIRST_TERM] = uprobe_read_at(UPROBE_SRC_RBX, 0, UPROBE_READ_MEM, 8, ENTRY_TERM, 0, NULL);
	r[EA_TERMS] = terms(UPROBE_SRC_RBX, 0, EA_COUNT);
	r[EA_DATA_LEN] = uprobe_read_at(UPROBE_SRC_RBX, 0, UPROBE_READ_MEM, 8, ENTRY_DATA + 8, 0, NULL);
	r[EA_DATA] = uprobe_read_at(UPROBE_SRC_RBX, 0, UPROBE_READ_BLOCK, UPROBE_MAX_BLOCK, 0, 1, to_data);
	s->nreads = EA_NREADS;
}

/* (*raftLog).commitTo(tocommit): rax = l, rbx = tocommit. */
static void commit_spec(struct probe_spec *s)
{
	s->reads[EC_TO] = uprobe_read_at(UPROBE_SRC_RBX, 0, UPROBE_READ_VALUE, 8, 0, 0, NULL);
	s->reads[EC_OLD] = uprobe_read_at(UPROBE_SRC_RAX, 0, UPROBE_READ_MEM, 8, LOG_COMMITTED, 0, NULL);
	s->nreads = EC_NREADS;
}

static void make_spec(const struct probe_def *d, struct probe_spec *s)
{
	memset(s, 0, sizeof(*s));
	if (d->id == ETCD_P_APPEND)
		append_spec(s);
	else if (d->id == ETCD_P_COMMIT_TO)
		commit_spec(s);
	else
		raft_spec(d, s);
	if (d->site == AT_ENTRY) /* the flags at the jbe: etcd_flags_read */
		s->reads[s->nreads++] = uprobe_read_at(UPROBE_SRC_FLAGS, 0, UPROBE_READ_VALUE, 8, 0, 0, NULL);
}

/* After the reads make_spec gives each entry probe (etcd_probes_attach checks that it is so). */
int etcd_flags_read(uint32_t probe_id)
{
	switch (probe_id) {
	case ETCD_P_SEND: case ETCD_P_STEP_BEGIN: return ER_NREADS;
	case ETCD_P_TICK: case ETCD_P_APPLY_CONF_BEGIN: return ER_NSTATE;
	case ETCD_P_APPEND: return EA_NREADS;
	case ETCD_P_COMMIT_TO: return EC_NREADS;
	}
	return -1;
}

static struct collect_probe probes[NDEFS];
static struct collect_table table;

/* Every read is named but placed nowhere: the shaper turns the raw reads into events. */
const struct collect_table *etcd_probe_table(void)
{
	size_t n = 0;
	for (size_t i = 0; i < NDEFS; i++) {
		struct probe_spec s;
		const char *const *names = raft_read_names;
		bool dup = false;

		for (size_t j = 0; j < i; j++)
			dup |= defs[j].id == defs[i].id;
		if (dup) /* one probe of several functions (the two ticks): one row */
			continue;

		make_spec(&defs[i], &s);
		if (defs[i].id == ETCD_P_APPEND)
			names = append_read_names;
		else if (defs[i].id == ETCD_P_COMMIT_TO)
			names = commit_read_names;

		probes[n].probe_id = defs[i].id;
		probes[n].kind = defs[i].kind;
		probes[n].nfields = s.nreads;
		for (unsigned k = 0; k < s.nreads; k++) {
			bool flags = defs[i].site == AT_ENTRY && k == s.nreads - 1;
			probes[n].fields[k] = (struct collect_field){ flags ? "flags" : names[k], COLLECT_SKIP, COLLECT_UINT };
		}
		n++;
	}
	table.probes = probes;
	table.n = n;
	return &table;
}

int etcd_probes_attach(struct uprobe_loader *l, const char *etcd_path, unsigned flags, struct etcd_probe_sites *sites,
		       char *err, size_t errlen)
{
	char gerr[GOBIN_ERRBUF_SIZE] = "";
	struct etcd_probe_sites n = { 0, 0, 0 };
	struct gobin *g;
	int rc = gobin_open(etcd_path, &g, gerr);
	if (rc) {
		snprintf(err, errlen, "%s", gerr);
		return rc;
	}
	const char *ver = gobin_go_version(g);
	if (!ver || strcmp(ver, GO_VERSION)) {
		snprintf(err, errlen,
			 "%s was built with %s; spectap's etcd offsets are for Debian's etcd 3.4.23 built with %s "
			 "(measure this build's with tests/go/offsets/run.sh)",
			 etcd_path, ver ? ver : "an unknown Go version", GO_VERSION);
		rc = -EPROTO;
		goto out;
	}
	for (size_t s = 0; s < NDEFS; s++) {
		const struct probe_def *d = &defs[s];
		struct probe_spec spec;
		struct gobin_func f;
		struct gobin_sites st;

		if (d->verify_only && !(flags & ETCD_PROBE_VERIFY))
			continue;
		make_spec(d, &spec);
		if (d->site == AT_ENTRY && etcd_flags_read(d->id) != (int)spec.nreads - 1) {
			snprintf(err, errlen, "etcd probes: %s's flags read is at %u, etcd_flags_read says %d", d->fn,
				 spec.nreads - 1, etcd_flags_read(d->id));
			rc = -EINVAL;
			goto out;
		}
		if ((rc = gobin_func_find(g, d->fn, &f, gerr)) || (rc = gobin_sites(g, &f, &st, gerr))) {
			snprintf(err, errlen, "%s (%s): inlined or renamed in this build?", gerr, etcd_path);
			goto out;
		}
		if (d->site == AT_ENTRY && !st.entry_branch_off) {
			snprintf(err, errlen, "%s in %s does not begin with Go's stack check (cmp; jbe morestack), where its "
				 "entry probe reads the flags: a changed build?", d->fn, etcd_path);
			rc = -ENOENT;
		} else if (d->site == AT_ENTRY) {
			/* At the stack check's jbe the arguments are as at the entry, and the kernel
			 * emulates the jump instead of single-stepping it: 2.5x cheaper (bench/RESULTS.md);
			 * the flags there tell a hit that morestack will repeat. */
			if ((rc = uprobe_attach(l, etcd_path, st.entry_branch_off, d->id, &spec, -1)))
				snprintf(err, errlen, "attaching to the entry of %s: %s", d->fn, uprobe_loader_error(l));
			else
				n.entry_branch++;
		}
		for (size_t i = 0; d->site == AT_RET && i < st.nret && !rc; i++) {
			if ((rc = uprobe_attach(l, etcd_path, st.ret_off[i], d->id, &spec, -1)))
				snprintf(err, errlen, "attaching to %s return %zu: %s", d->fn, i, uprobe_loader_error(l));
			else
				n.ret++;
		}
		if (!rc && d->site == AT_RET && st.nret == 0) {
			snprintf(err, errlen, "%s has no return instruction in %s: inlined or changed build?", d->fn, etcd_path);
			rc = -ENOENT;
		}
		gobin_sites_free(&st);
		if (rc)
			goto out;
	}
	if (sites)
		*sites = n;
	rc = (int)(n.entry + n.entry_branch + n.ret);
out:
	gobin_close(g);
	return rc;
}
