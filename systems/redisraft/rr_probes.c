/* The RedisRaft probe set (rr_probes.h): resolved from the module's DWARF, attached as uprobes. */
#include "rr_probes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cbin.h"

enum site { ENTRY, RET };

/* A probe: its function, site, and the expressions of its own reads (after the state). A return
 * probe reads its function's parameters from the stash its entry saved (parameter k in slot k). */
struct probe_def {
	struct rr_probe_info info;
	enum site site;
	int with_state;
	const char *expr[12];
	/* An entry probe on a function whose first instruction the kernel single-steps: attached
	 * at its direct call sites instead when they are all its calls (cbin_call_sites). */
	int callsites;
	/* With callsites: the call sites in this function are left out, because the shaper knows
	 * what they would say from that function's own probe (one trap less per call). */
	const char *skip_caller;
};

#define MSG_RV "prevote", "term", "candidateId", "lastLogIdx", "lastLogTerm"
/* The send callbacks return early, sending nothing, unless ConnIsConnected(node->conn): the
 * connection's state and flags, read at their entry, say whether the message left (rr_shape.c). */
#define CONN_ARGS "connState", "connFlags"
#define CONN_EXPRS "((Node *)raft_node->udata)->conn->state", "((Node *)raft_node->udata)->conn->flags"
#define MSG_AE "term", "leaderId", "msgId", "prevLogIdx", "prevLogTerm", "leaderCommit", "nEntries", "entry0Term"
#define EXPR_AE(m)                                                                                 \
	m "->term", m "->leader_id", m "->msg_id", m "->prev_log_idx", m "->prev_log_term",        \
		m "->leader_commit", m "->n_entries", m "->entries[0]->term"

static const struct probe_def defs[RR_NPROBES] = {
	{{RR_P_ELECTION, "raft_election_start", "Timeout", 1, {"skipPreVote"}}, ENTRY, 1, {"skip_precandidate"}},
	{{RR_P_BECOME_PRECANDIDATE, "raft_become_precandidate", "BecomePreCandidate", 1, {"ret"}}, RET, 1, {"return"}},
	{{RR_P_BECOME_CANDIDATE, "raft_become_candidate", "BecomeCandidate", 1, {"ret"}}, RET, 1, {"return"}},
	{{RR_P_BECOME_LEADER, "raft_become_leader", "BecomeLeader", 1, {"ret"}}, RET, 1, {"return"}},
	{{RR_P_BECOME_FOLLOWER, "raft_become_follower", "BecomeFollower", 0, {0}}, RET, 1, {0}},
	{{RR_P_SEND_RV, "raft.c:raftSendRequestVote", "SendRequestVoteRequest", 8, {"to", MSG_RV, CONN_ARGS}}, ENTRY, 1,
	 {"raft_node->id", "msg->prevote", "msg->term", "msg->candidate_id", "msg->last_log_idx", "msg->last_log_term",
	  CONN_EXPRS}},
	{{RR_P_RECV_RV, "raft_recv_requestvote", "HandleRequestVoteRequest", 7, {"from", MSG_RV, "ret"}}, RET, 1,
	 {"req->candidate_id", "req->prevote", "req->term", "req->candidate_id", "req->last_log_idx",
	  "req->last_log_term", "return"}},
	{{RR_P_SEND_RVR, "raft_recv_requestvote", "SendRequestVoteResponse", 6,
	  {"to", "prevote", "requestTerm", "term", "voteGranted", "ret"}}, RET, 1,
	 {"req->candidate_id", "resp->prevote", "resp->request_term", "resp->term", "resp->vote_granted", "return"}},
	{{RR_P_RECV_RVR, "raft_recv_requestvote_response", "HandleRequestVoteResponse", 6,
	  {"from", "prevote", "requestTerm", "term", "voteGranted", "ret"}}, RET, 1,
	 {"node->id", "resp->prevote", "resp->request_term", "resp->term", "resp->vote_granted", "return"}},
	{{RR_P_SEND_AE, "raft.c:raftSendAppendEntries", "SendAppendEntriesRequest", 11, {"to", MSG_AE, CONN_ARGS}},
	 ENTRY, 1, {"raft_node->id", EXPR_AE("msg"), CONN_EXPRS}},
	{{RR_P_RECV_AE, "raft_recv_appendentries", "HandleAppendEntriesRequest", 10, {"from", MSG_AE, "ret"}}, RET, 1,
	 {"req->leader_id", EXPR_AE("req"), "return"}},
	{{RR_P_SEND_AER, "raft_recv_appendentries", "SendAppendEntriesResponse", 6,
	  {"to", "msgId", "term", "success", "currentIdx", "ret"}}, RET, 1,
	 {"req->leader_id", "resp->msg_id", "resp->term", "resp->success", "resp->current_idx", "return"}},
	{{RR_P_RECV_AER, "raft_recv_appendentries_response", "HandleAppendEntriesResponse", 6,
	  {"from", "msgId", "term", "success", "currentIdx", "ret"}}, RET, 1,
	 {"node->id", "resp->msg_id", "resp->term", "resp->success", "resp->current_idx", "return"}},
		/* RedisRaft passes no response (r is NULL): the entry's index is the post-state's lastLogIndex. */
	{{RR_P_RECV_ENTRY, "raft_recv_entry", "ClientRequest", 4, {"type", "entryId", "entryTerm", "ret"}}, RET, 1,
	 {"ety->type", "ety->id", "ety->term", "return"}},
	/* `mov %rsi,0x20(%rdi); ret`: both single-stepped, on every node for every write. At the
	 * call: the state before, the new commit index (the shaper applies it) and the old one. */
	{{RR_P_COMMIT, "raft_set_commit_idx", "AdvanceCommitIndex", 2, {"to", "from"}}, ENTRY, 1,
	 {"idx", "me->commit_idx"}, 1},
	{{RR_P_VOTE, "raft_vote_for_nodeid", "VoteFor", 2, {"nodeId", "ret"}}, RET, 1, {"nodeid", "return"}},
	{{RR_P_TERM, "raft_set_current_term", "UpdateTerm", 2, {"term", "ret"}}, RET, 1, {"term", "return"}},
	/* At its call sites but the leader's in raft_recv_entry, on every write: ClientRequest's
	 * return says the same (the entry's term, the log's new last index). A call is emulated
	 * like the `push` at the entry, so the other sites cost what the entry did. */
	{{RR_P_APPEND, "raft_append_entry", "raft.append", 4, {"entryTerm", "type", "log0", "log1"}}, ENTRY, 0,
	 {"ety->term", "ety->type", "log0", "log1"}, 1, "raft_recv_entry"},
	{{RR_P_DELETE, "raft_delete_entry_from_idx", "raft.delete", 3, {"idx", "log0", "log1"}}, ENTRY, 0,
	 {"idx", "log0", "log1"}},
	{{RR_P_RESTORE, "raft_restore_metadata", "Restart", 2, {"term", "vote"}}, RET, 1, {"term", "vote"}},
};

/* Window markers (rr_probes.h): the stashing entry of these return probes also writes a record,
 * at no extra trap, so that the shaper knows where the call began and which request it handles.
 * Reads: the stashed parameters, then these. */
#define AE_TERMS(m)                                                                                \
	m "->entries[0]->term", m "->entries[1]->term", m "->entries[2]->term", m "->entries[3]->term", \
		m "->entries[4]->term", m "->entries[5]->term", m "->entries[6]->term",                 \
		m "->entries[7]->term", m "->entries[8]->term", m "->entries[9]->term",                 \
		m "->entries[10]->term", m "->entries[11]->term", m "->entries[12]->term"
static const struct rr_begin_info begins[] = {
	{RR_P_BECOME_CANDIDATE, "BecomeCandidate", 0, {0}, {0}},
	{RR_P_BECOME_LEADER, "BecomeLeader", 0, {0}, {0}},
	{RR_P_RECV_RV, "RecvRequestVote", 5, {MSG_RV},
	 {"req->prevote", "req->term", "req->candidate_id", "req->last_log_idx", "req->last_log_term"}},
	{RR_P_RECV_AE, "RecvAppendEntries", 7 + RR_BEGIN_ENTRY_TERMS,
	 {"term", "leaderId", "msgId", "prevLogIdx", "prevLogTerm", "leaderCommit", "nEntries"},
	 {"req->term", "req->leader_id", "req->msg_id", "req->prev_log_idx", "req->prev_log_term",
	  "req->leader_commit", "req->n_entries", AE_TERMS("req")}},
	{RR_P_RECV_ENTRY, "LogAppend", 0, {0}, {0}},
};
#define NBEGINS (sizeof(begins) / sizeof(begins[0]))

const struct rr_begin_info *rr_begin_info(uint32_t id)
{
	for (size_t i = 0; i < NBEGINS; i++)
		if (begins[i].id + RR_P_STASH_BASE == id)
			return &begins[i];
	return NULL;
}

static const char *const role_names[] = {"None", "Follower", "PreCandidate", "Candidate", "Leader"};

const char *rr_role_name(uint64_t state)
{
	return state < sizeof(role_names) / sizeof(role_names[0]) ? role_names[state] : "Unknown";
}

const struct rr_probe_info *rr_probe_info(uint32_t id)
{
	return id >= 1 && id <= RR_NPROBES ? &defs[id - 1].info : NULL;
}

static const char *const state_names[RS_NSTATE] = {"term", "votedFor", "commitIndex", "state",
						    "leaderId", "self", "log0", "log1"};

static struct collect_probe table_probes[RR_NPROBES + NBEGINS];
static struct collect_table table;

const struct collect_table *rr_probe_table(void)
{
	if (!table.n) {
		for (unsigned i = 0; i < RR_NPROBES; i++) {
			const struct probe_def *d = &defs[i];
			struct collect_probe *p = &table_probes[i];
			unsigned k = 0;

			p->probe_id = d->info.id;
			p->kind = d->info.kind;
			for (unsigned s = 0; d->with_state && s < RS_NSTATE; s++)
				p->fields[k++] = (struct collect_field){state_names[s], COLLECT_SKIP, COLLECT_INT};
			for (unsigned a = 0; a < d->info.nargs; a++)
				p->fields[k++] = (struct collect_field){d->info.args[a], COLLECT_SKIP, COLLECT_INT};
			p->nfields = k;
		}
		/* A marker's reads are the stash and the request: the shaper reads them raw. */
		for (unsigned i = 0; i < NBEGINS; i++) {
			struct collect_probe *p = &table_probes[RR_NPROBES + i];

			p->probe_id = RR_P_STASH_BASE + begins[i].id;
			p->kind = begins[i].step;
			p->nfields = 0;
		}
		table.probes = table_probes;
		table.n = RR_NPROBES + NBEGINS;
	}
	return &table;
}

/* Offsets of RedisRaft's log through me->log (a RedisRaftCtx *). */
struct log_offs {
	uint64_t me_log, page[2], index;
};

static int log_offsets(const struct cbin *c, struct log_offs *o, char *err)
{
	struct cbin_field f;
	int r;

	if ((r = cbin_field(c, "struct raft_server", "log", &f, err)))
		return r;
	o->me_log = f.offset;
	for (int k = 0; k < 2; k++) {
		if ((r = cbin_field(c, "RedisRaftCtx", k ? "log.pages[1]" : "log.pages[0]", &f, err)))
			return r;
		o->page[k] = f.offset;
	}
	if ((r = cbin_field(c, "LogPage", "index", &f, err)))
		return r;
	o->index = f.offset;
	return 0;
}

/* me->log->log.pages[k]->index: from the read of me (a VALUE of a register or stash slot). */
static int log_read(const struct cbin *c, const struct cbin_func *f, int slot, const struct log_offs *o, int k,
		    struct uprobe_read *r, char *err)
{
	int e = cbin_read(c, f, f->params[0].name, slot, r, err);

	if (e)
		return e;
	if (r->kind != UPROBE_READ_VALUE || r->nderef != 0) {
		snprintf(err, CBIN_ERRBUF_SIZE, "%s: parameter %s is not a plain pointer argument", f->name,
			 f->params[0].name);
		return -EINVAL;
	}
	r->kind = UPROBE_READ_MEM;
	r->size = 8;
	r->flags = 0;
	r->nderef = 2;
	r->deref_off[0] = (int32_t)o->me_log;
	r->deref_off[1] = (int32_t)o->page[k];
	r->off = (int32_t)o->index;
	return 0;
}

/* The stash slot of the parameter expr reads: its index, when the entry stashed it. */
static int stash_slot_of(const struct cbin_func *f, const char *expr)
{
	int k = cbin_expr_param(f, expr);
	return k < UPROBE_MAX_STASH ? k : -1;
}

/* One read of probe d: a state read, or one of its expressions. */
static int build_read(const struct cbin *c, const struct cbin_func *f, const struct probe_def *d,
		      const struct log_offs *o, const char *expr, struct uprobe_read *r, char *err)
{
	int ret = d->site == RET;
	int slot = ret ? stash_slot_of(f, expr) : -1;

	memset(r, 0, sizeof(*r));
	if (!strcmp(expr, "log0") || !strcmp(expr, "log1"))
		return log_read(c, f, ret ? 0 : -1, o, expr[3] - '0', r, err);
	if (ret && strcmp(expr, "return") && slot < 0) {
		snprintf(err, CBIN_ERRBUF_SIZE, "%s: %s names no stashed parameter", f->name, expr);
		return -EINVAL;
	}
	return cbin_read(c, f, expr, strcmp(expr, "return") ? slot : -1, r, err);
}

/* The two response probes read the stash of the handler's probe on the same function. */
static uint32_t stash_of(uint32_t id)
{
	return id == RR_P_SEND_RVR ? RR_P_RECV_RV : id == RR_P_SEND_AER ? RR_P_RECV_AE : id;
}

static int build_spec(const struct cbin *c, const struct cbin_func *f, const struct probe_def *d,
		      const struct log_offs *o, struct probe_spec *s, char *err)
{
	static const char *const state_expr[RS_NSTATE] = {"->current_term", "->voted_for", "->commit_idx",
							   "->state", "->leader_id", "->node->id", 0, 0};
	char buf[128];
	int r;

	memset(s, 0, sizeof(*s));
	if (d->site == RET) {
		s->flags = UPROBE_SPEC_RETPROBE;
		s->stash_id = (uint16_t)stash_of(d->info.id);
	}
	for (unsigned i = 0; d->with_state && i < RS_NSTATE; i++) {
		const char *e = state_expr[i] ? buf : i == RS_LOG0 ? "log0" : "log1";

		snprintf(buf, sizeof(buf), "%s%s", f->params[0].name, state_expr[i] ? state_expr[i] : "");
		if ((r = build_read(c, f, d, o, e, &s->reads[s->nreads++], err)))
			return r;
	}
	for (unsigned i = 0; i < d->info.nargs; i++)
		if ((r = build_read(c, f, d, o, d->expr[i], &s->reads[s->nreads++], err)))
			return r;
	return 0;
}

/* The stashing entry of a return probe: its first parameters (up to 4). */
static int build_stash(const struct cbin *c, const struct cbin_func *f, const struct probe_def *d,
		       struct probe_spec *s, char *err)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->flags = UPROBE_SPEC_STASH_ONLY;
	s->stash_id = (uint16_t)d->info.id;
	for (unsigned k = 0; k < f->nparams && k < UPROBE_MAX_STASH; k++)
		if ((r = cbin_read(c, f, f->params[k].name, -1, &s->reads[s->nreads++], err)))
			return r;
	s->nstash = (uint8_t)s->nreads;
	const struct rr_begin_info *b = rr_begin_info(RR_P_STASH_BASE + d->info.id);
	if (!b)
		return 0;
	s->flags = 0; /* a marker: the record too */
	while (s->nreads < RR_BEGIN_MSG_READ)
		s->reads[s->nreads++] = (struct uprobe_read){.kind = UPROBE_READ_NONE};
	for (unsigned k = 0; k < b->nreads; k++)
		if ((r = cbin_read(c, f, b->expr[k], -1, &s->reads[s->nreads++], err)))
			return r;
	return 0;
}

/* Attaches entry probe d at every direct call site of f. Returns the sites attached, 0 when
 * they do not cover every call (f's address is taken, or nothing calls it directly) or f starts
 * with a 5-byte nop (the caller then attaches at the entry), or a negative errno with err
 * filled. */
static int attach_callsites(struct uprobe_loader *l, const struct cbin *c, const struct cbin_func *f,
			    const struct probe_def *d, const struct probe_spec *spec, const char *module, char *err)
{
	struct cbin_sites cs;
	struct probe_spec at = *spec;
	int r;

	if (cbin_entry_is_nop5(c, f))
		return 0; /* the entry is cheaper still */
	if ((r = cbin_call_sites(c, f, &cs, err)))
		return r;
	if (cs.address_taken || !cs.n) {
		cbin_sites_free(&cs);
		return 0;
	}
	if (d->skip_caller) {
		struct cbin_func skip;
		size_t k = 0;

		if ((r = cbin_func_find(c, d->skip_caller, &skip, err))) {
			cbin_sites_free(&cs);
			return r;
		}
		for (size_t i = 0; i < cs.n; i++)
			if (cbin_function_at(c, cs.va[i]) != skip.entry) {
				cs.va[k] = cs.va[i];
				cs.off[k++] = cs.off[i];
			}
		cs.n = k;
	}
	/* rsp is 8 bytes higher at the call than at the entry (no return address yet). */
	for (unsigned i = 0; i < at.nreads; i++)
		if (at.reads[i].src == UPROBE_SRC_STACK)
			at.reads[i].src_off += CBIN_CALLSITE_STACK_ADJ;
	for (size_t i = 0; i < cs.n; i++)
		if ((r = uprobe_attach(l, module, cs.off[i], d->info.id, &at, -1))) {
			snprintf(err, CBIN_ERRBUF_SIZE, "%s (call site %zu of %s)", uprobe_loader_error(l), i + 1,
				 d->info.func);
			cbin_sites_free(&cs);
			return r;
		}
	r = (int)cs.n;
	cbin_sites_free(&cs);
	return r;
}

int rr_probes_attach(struct uprobe_loader *l, const char *module, unsigned *entry_sites, unsigned *ret_sites,
		     int64_t *conn_connected, char *err, size_t errlen)
{
	char e[CBIN_ERRBUF_SIZE] = "";
	struct cbin *c = NULL;
	struct log_offs o;
	unsigned n = 0, ne = 0, nr = 0;
	int r;

	if ((r = cbin_open(module, &c, e)))
		goto out;
	if ((r = log_offsets(c, &o, e)))
		goto out;
	int64_t connected;
	if ((r = cbin_enum_value(c, "ConnState", "CONN_CONNECTED", &connected, e)))
		goto out;
	if (conn_connected)
		*conn_connected = connected;
	for (unsigned i = 0; i < RR_NPROBES; i++) {
		const struct probe_def *d = &defs[i];
		struct probe_spec s;
		struct cbin_func f;

		if ((r = cbin_func_find(c, d->info.func, &f, e)))
			goto out;
		if (f.ninlined) {
			/* Its inlined copies would run without the probe: events lost unseen. */
			snprintf(e, sizeof(e), "%s: %s is inlined at %u call sites in this build, where a probe on its entry "
				 "would miss its calls; build the module with gcc as docs/systems/redisraft.md "
				 "says (or add -fno-inline-functions)", cbin_path(c), f.name, f.ninlined);
			r = -ENOTSUP;
			goto out;
		}
		if ((r = build_spec(c, &f, d, &o, &s, e))) {
			snprintf(err, errlen, "probe %s on %s: %s", d->info.kind, d->info.func, e);
			cbin_close(c);
			return r;
		}
		if (d->callsites) {
			int k = attach_callsites(l, c, &f, d, &s, module, e);
			if (k < 0) {
				r = k;
				goto out;
			}
			if (k > 0) {
				n += (unsigned)k;
				ne += (unsigned)k;
				continue;
			}
		}
		if ((r = uprobe_attach(l, module, f.file_off, d->info.id, &s, -1)))
			goto attach_failed;
		n++;
		if (d->site == ENTRY) {
			ne++;
			continue;
		}
		nr++;
		if (stash_of(d->info.id) != d->info.id)
			continue;
		if ((r = build_stash(c, &f, d, &s, e)))
			goto out;
		if ((r = uprobe_attach(l, module, f.file_off, RR_P_STASH_BASE + d->info.id, &s, -1)))
			goto attach_failed;
		n++;
		ne++;
	}
	if (entry_sites)
		*entry_sites = ne;
	if (ret_sites)
		*ret_sites = nr;
	cbin_close(c);
	return (int)n;
attach_failed:
	snprintf(e, sizeof(e), "%s", uprobe_loader_error(l));
out:
	cbin_close(c);
	snprintf(err, errlen, "%s", e[0] ? e : "redisraft probes: attach failed");
	return r < 0 ? r : -EINVAL;
}
