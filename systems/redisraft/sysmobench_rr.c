/*
 * The RedisRaft dialect of the SysMoBench envelope: what the Specula/SysMoBench harness for
 * RedisRaft writes from its instrumentation of the raft core (deps/raft/src/raft_server.c; see
 * SysMoBench tla_eval/tasks/redisraft/INSTRUMENTATION.md and the harness's tla_trace.c),
 *   {"tag":"trace","ts":"<ns>","event":{"name":"HandleAppendEntriesRequest","nid":"s2",
 *    "state":{"term":1,"role":"Follower","commitIndex":3,"lastLogIndex":3,"lastLogTerm":1,
 *             "votedFor":""},
 *    "msg":{"from":"s1","to":"s2","term":1,"prevLogIndex":2,"prevLogTerm":1,"leaderCommit":3}}}
 *
 *   BecomeCandidate                -> Timeout (the harness's Timeout is raft_become_candidate:
 *                                     term incremented, vote for itself)
 *   BecomeLeader                   -> BecomeLeader, after the vote response that made it leader
 *   HandleRequestVoteRequest       -> the same, msg {from, to, term, voteGranted}: term is the
 *                                     receiver's after the step, voteGranted that of the node's
 *                                     SendRequestVoteResponse to the candidate (written just before)
 *   HandleRequestVoteResponse      -> the same, weak state {term, role}, msg {from, to, voteGranted}
 *   HandleAppendEntriesRequest     -> the same, msg {from, to, term, prevLogIndex, prevLogTerm,
 *                                     leaderCommit}
 *   HandleAppendEntriesResponse    -> the same, weak state, msg {from, to, success, matchIndex}
 *   ClientRequest (a normal entry) -> ClientRequest
 *   AdvanceCommitIndex (a leader)  -> AdvanceCommitIndex, state {term, role, commitIndex}
 *
 * Where the harness writes its line decides what this one holds. It writes a vote response
 * before counting the vote, so before the BecomeLeader the vote causes and with the role
 * Candidate (the capture, at the function's return, has them the other way round); it writes
 * none for a response raft_recv_requestvote_response ignores (stale, or not a candidate), none
 * for an append response to a node that is no leader, and a commit advance on the leader only
 * (raft_update_commit_idx). PreCandidate is written as Candidate, as the harness does. The
 * dialect models no pre-vote: pre-vote requests and responses are dropped, as are the
 * membership entries (its ProposeAddServer/ProposeRemoveServer need the target server, which
 * the capture does not read) and every event it has no name for. Drops are counted by kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_internal.h"

/* What the export remembers of a node between its events. */
struct rr_node {
	char *name;
	/* Its state after its last event: the state before its next. */
	bool known;
	int64_t term;
	char role[16];
	/* Its last SendRequestVoteResponse, waiting for its HandleRequestVoteRequest. */
	char *resp_to;
	bool granted, pending;
	/* A BecomeLeader line held for the vote response that goes before it. */
	struct spt_buf held;
	bool holding;
};

struct smb_rr {
	struct rr_node *nodes;
	size_t n, cap;
};

static int rr_state_new(void **out)
{
	return (*out = calloc(1, sizeof(struct smb_rr))) ? 0 : -ENOMEM;
}

static void rr_state_free(void *p)
{
	struct smb_rr *rr = p;
	if (!rr)
		return;
	for (size_t i = 0; i < rr->n; i++) {
		free(rr->nodes[i].name);
		free(rr->nodes[i].resp_to);
		spt_buf_free(&rr->nodes[i].held);
	}
	free(rr->nodes);
	free(rr);
}

/* Kinds only RedisRaft's traces have (etcd's share Become* and Send*). */
static const char *const rr_only_kinds[] = {
	"Timeout", "HandleRequestVoteRequest", "HandleRequestVoteResponse", "HandleAppendEntriesRequest",
	"HandleAppendEntriesResponse", "ClientRequest", "AdvanceCommitIndex", "VoteFor", "UpdateTerm", NULL,
};

static bool in(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static bool rr_event_is(const struct spt_event *ev)
{
	if (ev->kind && in(ev->kind, rr_only_kinds))
		return true;
	/* A Become* or Send* event with RedisRaft's state. */
	spt_val *s = ev->state && ev->state->kind == SPT_REC ? ev->state : NULL;
	return s && spt_rec_get(s, "votedFor") && spt_rec_get(s, "commitIndex") && spt_rec_get(s, "lastLogIndex");
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int rr_put_node(struct spt_export *ex, struct spt_buf *b, const char *name)
{
	if (!all_digits(name)) {
		if (!(name[0] == 's' && all_digits(name + 1)))
			export_drop(ex, "node names neither s<id> nor a number (written as they are)", 1);
		spt_buf_json_str(b, name, strlen(name));
		return 0;
	}
	size_t n = strlen(name);
	char *s = spt_arena_alloc(export_arena(ex), n + 2);
	if (!s)
		return -ENOMEM;
	s[0] = 's';
	memcpy(s + 1, name, n + 1);
	spt_buf_json_str(b, s, n + 1);
	return 0;
}

/* votedFor as the dialect writes it: "" for none, else the node. */
static int put_voted_for(struct spt_export *ex, struct spt_buf *b, spt_val *v, struct spt_json_loss *loss)
{
	if (v->kind == SPT_INT) {
		if (v->u.i <= 0)
			spt_buf_puts(b, "\"\"");
		else
			spt_buf_printf(b, "\"s%" PRId64 "\"", v->u.i);
		return 0;
	}
	if (v->kind == SPT_STR && v->hint != SPT_HINT_NUMBER) {
		if (!*v->u.s || !strcmp(v->u.s, "0"))
			spt_buf_puts(b, "\"\"");
		else
			return rr_put_node(ex, b, v->u.s);
		return 0;
	}
	spt_json_write(b, v, 0, loss);
	export_drop(ex, "votedFor values neither a node nor none (written as they are)", 1);
	return 0;
}

/* What of the node's state the harness writes for an event: tla_trace.c's state_full,
 * state_weak and state_commit. */
enum shape { FULL = 6, WEAK = 2, COMMIT = 3 };
static const char *const state_fields[] = { "term", "role", "commitIndex", "lastLogIndex", "lastLogTerm",
					     "votedFor" };

/* The role as the harness names it: PreCandidate is Candidate. */
static const char *role_name(const char *role)
{
	return !strcmp(role, "PreCandidate") ? "Candidate" : role;
}

/* role: written instead of the state's own (NULL: the state's). */
static int put_state(struct spt_export *ex, struct spt_buf *b, spt_val *st, enum shape shape,
		     const char *role, struct spt_json_loss *loss)
{
	if (!st || st->kind != SPT_REC) {
		if (st && st->n)
			export_drop(ex, "states that are not records", 1);
		return 0;
	}
	spt_buf_puts(b, ",\"state\":{");
	uint32_t written = 0, named = 0;
	int rc;
	for (int i = 0; i < FULL; i++) {
		const char *f = state_fields[i];
		spt_val *v = spt_rec_get(st, f);
		if (!v)
			continue;
		named++;
		if (i >= (int)shape)
			continue;
		spt_buf_printf(b, "%s\"%s\":", written++ ? "," : "", f);
		if (!strcmp(f, "votedFor")) {
			if ((rc = put_voted_for(ex, b, v, loss)))
				return rc;
		} else if (!strcmp(f, "role") && (role || (v->kind == SPT_STR && v->hint != SPT_HINT_NUMBER))) {
			const char *r = role_name(role ? role : v->u.s);
			spt_buf_json_str(b, r, strlen(r));
		} else {
			spt_json_write(b, v, 0, loss);
		}
	}
	spt_buf_putc(b, '}');
	export_drop(ex, "state fields with no name in the dialect (leaderId, logTerms, ...)", st->n - named);
	export_drop(ex, "state fields the harness leaves out of a response's weak state or a commit's "
			"(lastLogIndex, lastLogTerm, votedFor, ...)", named - written);
	return 0;
}

/* A message field of the dialect and the names it has in a capture. */
struct mfield {
	const char *name, *alt;
};

static const struct mfield no_fields[] = { { NULL, NULL } };
static const struct mfield rvr_fields[] = { { "voteGranted", NULL }, { NULL, NULL } };
static const struct mfield ae_fields[] = { { "term", NULL },
					   { "prevLogIndex", "prevLogIdx" },
					   { "prevLogTerm", NULL },
					   { "leaderCommit", NULL },
					   { NULL, NULL } };
static const struct mfield aer_fields[] = { { "success", NULL }, { "matchIndex", "currentIdx" }, { NULL, NULL } };

/* msg {from, to, [term], <fields>, [voteGranted]}: term (NULL: none) and granted (-1: none) as a
 * HandleRequestVoteRequest has them. */
static int put_msg(struct spt_export *ex, struct spt_buf *b, const struct spt_msg *m,
		   const struct mfield *fields, spt_val *term, int granted, struct spt_json_loss *loss)
{
	spt_val *f = m->fields && m->fields->kind == SPT_REC ? m->fields : NULL;
	uint32_t used = 0;
	int rc;
	spt_buf_puts(b, ",\"msg\":{\"from\":");
	if ((rc = rr_put_node(ex, b, m->from)))
		return rc;
	spt_buf_puts(b, ",\"to\":");
	if ((rc = rr_put_node(ex, b, m->to)))
		return rc;
	if (term) {
		spt_buf_puts(b, ",\"term\":");
		spt_json_write(b, term, 0, loss);
	}
	for (; fields->name; fields++) {
		spt_val *v = f ? spt_rec_get(f, fields->name) : NULL;
		if (!v && f && fields->alt)
			v = spt_rec_get(f, fields->alt);
		if (!v)
			continue;
		used++;
		spt_buf_printf(b, ",\"%s\":", fields->name);
		spt_json_write(b, v, 0, loss);
	}
	if (granted >= 0)
		spt_buf_printf(b, ",\"voteGranted\":%s", granted ? "true" : "false");
	spt_buf_putc(b, '}');
	export_drop(ex, "message fields the harness does not write (term of a response, msgId, prevote, "
			"candidateId, ...)", f ? f->n - used : 0);
	export_drop(ex, "message types, directions and ids (the event's name says which message)", 1);
	return 0;
}

static bool truthy(spt_val *v)
{
	return v && ((v->kind == SPT_BOOL && v->u.b) || (v->kind == SPT_INT && v->u.i));
}

static bool prevote(const struct spt_msg *m)
{
	return m->fields && m->fields->kind == SPT_REC && truthy(spt_rec_get(m->fields, "prevote"));
}

static bool int_field(spt_val *rec, const char *name, int64_t *out)
{
	spt_val *v = rec && rec->kind == SPT_REC ? spt_rec_get(rec, name) : NULL;
	if (!v || v->kind != SPT_INT)
		return false;
	*out = v->u.i;
	return true;
}

static struct rr_node *node_of(struct smb_rr *rr, const char *name)
{
	for (size_t i = 0; i < rr->n; i++)
		if (!strcmp(rr->nodes[i].name, name))
			return &rr->nodes[i];
	if (rr->n == rr->cap) {
		size_t cap = rr->cap ? 2 * rr->cap : 8;
		struct rr_node *r = realloc(rr->nodes, cap * sizeof(*r));
		if (!r)
			return NULL;
		rr->nodes = r;
		rr->cap = cap;
	}
	struct rr_node *r = &rr->nodes[rr->n];
	memset(r, 0, sizeof(*r));
	if (!(r->name = strdup(name)))
		return NULL;
	rr->n++;
	return r;
}

/* The node's state after ev, the state before its next event. */
static void remember_state(struct rr_node *n, const struct spt_event *ev)
{
	int64_t term;
	const char *role = rec_str(ev->state, "role");
	if (!int_field(ev->state, "term", &term) || !role)
		return;
	n->known = true;
	n->term = term;
	snprintf(n->role, sizeof(n->role), "%s", role_name(role));
}

/* Remembers a node's vote response for the HandleRequestVoteRequest that follows it. */
static int remember_response(struct rr_node *n, const struct spt_event *ev)
{
	const struct spt_msg *m = ev->msg;
	if (!m || m->dir != SPT_MSG_SEND || !m->fields || m->fields->kind != SPT_REC)
		return 0;
	spt_val *g = spt_rec_get(m->fields, "voteGranted");
	char *to = strdup(m->to);
	if (!to)
		return -ENOMEM;
	free(n->resp_to);
	n->resp_to = to;
	n->granted = truthy(g);
	n->pending = g != NULL;
	return 0;
}

/* What the drop report says per kind; the strings must outlive the export. */
#define UNNAMED(k, why) { k, k " events (" why ")" }
static const struct {
	const char *kind, *what;
} unnamed[] = {
	UNNAMED("Timeout", "an election starts; the dialect's Timeout is BecomeCandidate"),
	UNNAMED("BecomePreCandidate", "no event of the RedisRaft dialect"),
	UNNAMED("BecomeFollower", "no event of the RedisRaft dialect"),
	UNNAMED("SendRequestVoteRequest", "the dialect traces receives only"),
	UNNAMED("SendRequestVoteResponse", "the dialect traces receives only"),
	UNNAMED("SendAppendEntriesRequest", "the dialect traces receives only"),
	UNNAMED("SendAppendEntriesResponse", "the dialect traces receives only"),
	UNNAMED("VoteFor", "no event of the RedisRaft dialect"),
	UNNAMED("UpdateTerm", "no event of the RedisRaft dialect"),
};

static void drop_unnamed(struct spt_export *ex, const char *kind)
{
	for (size_t i = 0; i < sizeof(unnamed) / sizeof(unnamed[0]); i++) {
		if (!strcmp(kind, unnamed[i].kind)) {
			export_drop(ex, unnamed[i].what, 1);
			return;
		}
	}
	export_drop(ex, "other events (no event of the RedisRaft dialect)", 1);
}

/* Where the harness writes no line for an event the capture has (pre: the node's state before
 * it, from the node's previous event; pre->known false when there was none). */
static bool harness_skips(struct spt_export *ex, const struct spt_event *ev, const char *k,
			  const struct rr_node *pre)
{
	if (!strcmp(k, "AdvanceCommitIndex")) {
		const char *role = rec_str(ev->state, "role");
		if (role && strcmp(role, "Leader")) {
			export_drop(ex, "AdvanceCommitIndex events of a node that is no leader (the harness "
					"writes them in raft_update_commit_idx, the leader's)", 1);
			return true;
		}
		return false;
	}
	if (!pre->known)
		return false;
	if (!strcmp(k, "HandleAppendEntriesResponse") && strcmp(pre->role, "Leader")) {
		export_drop(ex, "HandleAppendEntriesResponse events of a node that is no leader (the "
				"function returns before the harness's line)", 1);
		return true;
	}
	if (!strcmp(k, "HandleRequestVoteResponse")) {
		int64_t term, req;
		spt_val *f = ev->msg->fields;
		if (int_field(f, "term", &term) && term > pre->term)
			return false; /* the node steps down, and the harness writes that */
		bool stale = int_field(f, "requestTerm", &req) && req != pre->term;
		if (stale || strcmp(pre->role, "Candidate")) {
			export_drop(ex, "HandleRequestVoteResponse events the function ignores (stale, or "
					"the node no candidate): the harness writes none", 1);
			return true;
		}
	}
	return false;
}

/* The dialect's name for ev and its message fields, or NULL (counted) when it has none. */
static const char *rr_name(struct spt_export *ex, const struct spt_event *ev, const struct rr_node *pre,
			   const struct mfield **fields)
{
	static const struct {
		const char *kind;
		const struct mfield *fields;
	} handled[] = {
		{ "HandleRequestVoteRequest", no_fields },
		{ "HandleRequestVoteResponse", rvr_fields },
		{ "HandleAppendEntriesRequest", ae_fields },
		{ "HandleAppendEntriesResponse", aer_fields },
	};
	const char *k = ev->kind;
	*fields = NULL;
	if (!strcmp(k, "BecomeCandidate"))
		return "Timeout";
	if (!strcmp(k, "BecomeLeader"))
		return k;
	if (!strcmp(k, "AdvanceCommitIndex"))
		return harness_skips(ex, ev, k, pre) ? NULL : k;
	if (!strcmp(k, "ClientRequest")) {
		spt_val *t = ev->args ? spt_rec_get(ev->args, "type") : NULL;
		if (t && !(t->kind == SPT_INT && t->u.i == 0)) {
			export_drop(ex, "ClientRequest events of membership entries (the dialect's "
					"ProposeAddServer/ProposeRemoveServer need the target server)", 1);
			return NULL;
		}
		return k;
	}
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
		if (strcmp(k, handled[i].kind))
			continue;
		if (!ev->msg || ev->msg->dir != SPT_MSG_RECV) {
			export_drop(ex, "Handle* events without their received message", 1);
			return NULL;
		}
		if (!strncmp(k, "HandleRequestVote", 17) && prevote(ev->msg)) {
			export_drop(ex, "HandleRequestVoteRequest/Response events of a pre-vote (the dialect "
					"models none)", 1);
			return NULL;
		}
		if (harness_skips(ex, ev, k, pre))
			return NULL;
		*fields = handled[i].fields;
		return k;
	}
	drop_unnamed(ex, k);
	return NULL;
}

/* Writes a held BecomeLeader line. */
static void release(struct rr_node *n, struct spt_buf *b)
{
	if (!n->holding)
		return;
	spt_buf_put(b, n->held.p, n->held.len);
	spt_buf_clear(&n->held);
	n->holding = false;
}

/* A receive on another node of a message the new leader sent: its BecomeLeader goes first. */
static void release_for_receive(struct smb_rr *rr, const struct spt_event *ev, struct spt_buf *b)
{
	if (!ev->msg || ev->msg->dir != SPT_MSG_RECV)
		return;
	for (size_t i = 0; i < rr->n; i++)
		if (rr->nodes[i].holding && !strcmp(rr->nodes[i].name, ev->msg->from))
			release(&rr->nodes[i], b);
}

static int rr_export_event(struct spt_export *ex, void *st, const struct spt_event *ev, struct spt_buf *b)
{
	struct smb_rr *rr = st;
	struct spt_json_loss loss = { 0 };
	const struct mfield *fields;
	int rc, granted = -1;
	struct rr_node *n = node_of(rr, ev->node);
	if (!n)
		return -ENOMEM;
	release_for_receive(rr, ev, b);
	/* Before a held BecomeLeader, the node was what it was before it. */
	struct rr_node pre = *n;
	if (n->holding)
		snprintf(pre.role, sizeof(pre.role), "Candidate");
	const char *name = rr_name(ex, ev, &pre, &fields);
	bool moved = name && n->holding && !strcmp(name, "HandleRequestVoteResponse");
	if (!moved)
		release(n, b);
	if (!name) {
		remember_state(n, ev);
		return strcmp(ev->kind, "SendRequestVoteResponse") ? 0 : remember_response(n, ev);
	}
	spt_val *term = NULL;
	if (!strcmp(name, "HandleRequestVoteRequest")) {
		term = ev->state && ev->state->kind == SPT_REC ? spt_rec_get(ev->state, "term") : NULL;
		if (n->pending && !strcmp(n->resp_to, ev->msg->from)) {
			granted = n->granted;
			n->pending = false;
		} else {
			export_drop(ex, "voteGranted of HandleRequestVoteRequest events without their "
					"SendRequestVoteResponse (left out)", 1);
		}
	}
	bool leader = !strcmp(name, "BecomeLeader");
	struct spt_buf *out = leader ? &n->held : b;
	enum shape shape = !strcmp(name, "AdvanceCommitIndex")	   ? COMMIT
			   : !strncmp(name, "Handle", 6) && strstr(name, "Response") ? WEAK
										     : FULL;
	smb_line_start(out, ev->ts_ns);
	spt_buf_puts(out, "{\"name\":");
	spt_buf_json_str(out, name, strlen(name));
	spt_buf_puts(out, ",\"nid\":");
	if ((rc = rr_put_node(ex, out, ev->node)) ||
	    (rc = put_state(ex, out, ev->state, shape, moved ? pre.role : NULL, &loss)))
		return rc;
	if (fields && (rc = put_msg(ex, out, ev->msg, fields, term, granted, &loss)))
		return rc;
	spt_buf_puts(out, "}}\n");
	if (out->oom)
		return -ENOMEM;
	/* Only a candidate becomes leader (the sends inside raft_become_leader already have the
	 * role Leader, so the node's last state does not say it). */
	if (leader)
		n->holding = true;
	if (moved)
		release(n, b);
	remember_state(n, ev);
	export_drop(ex, "args of written events (msg has the dialect's fields)", ev->args ? 1 : 0);
	export_drop(ex, "meta fields", ev->meta ? 1 : 0);
	export_drop_common(ex, ev, &loss);
	return 0;
}

static int rr_export_end(void *st, struct spt_buf *b)
{
	struct smb_rr *rr = st;
	for (size_t i = 0; i < rr->n; i++)
		release(&rr->nodes[i], b);
	return b->oom ? -ENOMEM : 0;
}

static const struct smb_system redisraft = {
	.system = "redisraft",
	.event_is = rr_event_is,
	.state_new = rr_state_new,
	.state_free = rr_state_free,
	.put_node = rr_put_node,
	.export_event = rr_export_event,
	.export_end = rr_export_end,
};

/* Linked into spectap, the dialect is known to `export --to sysmobench`. */
__attribute__((constructor)) static void add_redisraft(void) { spt_sysmobench_add_system(&redisraft); }
