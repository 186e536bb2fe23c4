/*
 * The RedisRaft dialect of the SysMoBench envelope: what the Specula/SysMoBench harness for
 * RedisRaft writes from its instrumentation of the raft core (deps/raft/src/raft_server.c; see
 * SysMoBench tla_eval/tasks/redisraft/INSTRUMENTATION.md),
 *   {"tag":"trace","ts":"<ns>","event":{"name":"HandleAppendEntriesRequest","nid":"s2",
 *    "state":{"term":1,"role":"Follower","commitIndex":3,"lastLogIndex":3,"lastLogTerm":1,
 *             "votedFor":""},
 *    "msg":{"from":"s1","to":"s2","term":1,"prevLogIndex":2,"prevLogTerm":1,"leaderCommit":3}}}
 *
 *   BecomeCandidate                -> Timeout (the harness's Timeout is raft_become_candidate:
 *                                     term incremented, vote for itself)
 *   BecomeLeader                   -> BecomeLeader
 *   HandleRequestVoteRequest       -> the same, msg {from, to, term, voteGranted}; voteGranted is
 *                                     that of the node's SendRequestVoteResponse to the candidate,
 *                                     which the capture writes just before
 *   HandleRequestVoteResponse      -> the same, msg {from, to, term, voteGranted}
 *   HandleAppendEntriesRequest     -> the same, msg {from, to, term, prevLogIndex, prevLogTerm,
 *                                     leaderCommit}
 *   HandleAppendEntriesResponse    -> the same, msg {from, to, term, success, matchIndex}
 *   ClientRequest (a normal entry) -> ClientRequest
 *   AdvanceCommitIndex             -> AdvanceCommitIndex
 *
 * The dialect models no pre-vote: pre-vote requests and responses are dropped, as are the
 * membership entries (its ProposeAddServer/ProposeRemoveServer need the target server, which
 * the capture does not read) and every event it has no name for. Drops are counted by kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_internal.h"

/* A node's last SendRequestVoteResponse, waiting for its HandleRequestVoteRequest. */
struct rv_resp {
	char *node, *to;
	bool granted;
	bool pending;
};

struct smb_rr {
	struct rv_resp *resp;
	size_t n, cap;
};

int smb_rr_new(struct smb_rr **out)
{
	return (*out = calloc(1, sizeof(**out))) ? 0 : -ENOMEM;
}

void smb_rr_free(struct smb_rr *rr)
{
	if (!rr)
		return;
	for (size_t i = 0; i < rr->n; i++) {
		free(rr->resp[i].node);
		free(rr->resp[i].to);
	}
	free(rr->resp);
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

bool smb_rr_event_is(const struct spt_event *ev)
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

int smb_rr_put_node(struct spt_export *ex, struct spt_buf *b, const char *name)
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
			return smb_rr_put_node(ex, b, v->u.s);
		return 0;
	}
	spt_json_write(b, v, 0, loss);
	export_drop(ex, "votedFor values neither a node nor none (written as they are)", 1);
	return 0;
}

static const char *const state_fields[] = { "term", "role", "commitIndex", "lastLogIndex", "lastLogTerm",
					     "votedFor", NULL };

static int put_state(struct spt_export *ex, struct spt_buf *b, spt_val *st, struct spt_json_loss *loss)
{
	if (!st || st->kind != SPT_REC) {
		if (st && st->n)
			export_drop(ex, "states that are not records", 1);
		return 0;
	}
	spt_buf_puts(b, ",\"state\":{");
	uint32_t written = 0;
	int rc;
	for (const char *const *f = state_fields; *f; f++) {
		spt_val *v = spt_rec_get(st, *f);
		if (!v)
			continue;
		spt_buf_printf(b, "%s\"%s\":", written++ ? "," : "", *f);
		if (strcmp(*f, "votedFor"))
			spt_json_write(b, v, 0, loss);
		else if ((rc = put_voted_for(ex, b, v, loss)))
			return rc;
	}
	spt_buf_putc(b, '}');
	export_drop(ex, "state fields with no name in the dialect (leaderId, logTerms, ...)", st->n - written);
	return 0;
}

/* A message field of the dialect and the names it has in a capture. */
struct mfield {
	const char *name, *alt;
};

static const struct mfield rv_fields[] = { { "term", NULL }, { "voteGranted", NULL }, { NULL, NULL } };
static const struct mfield ae_fields[] = { { "term", NULL },
					   { "prevLogIndex", "prevLogIdx" },
					   { "prevLogTerm", NULL },
					   { "leaderCommit", NULL },
					   { NULL, NULL } };
static const struct mfield aer_fields[] = { { "term", NULL },
					    { "success", NULL },
					    { "matchIndex", "currentIdx" },
					    { NULL, NULL } };

/* msg {from, to, <fields>}; granted: voteGranted of a HandleRequestVoteRequest (-1 unknown). */
static int put_msg(struct spt_export *ex, struct spt_buf *b, const struct spt_msg *m,
		   const struct mfield *fields, int granted, struct spt_json_loss *loss)
{
	spt_val *f = m->fields && m->fields->kind == SPT_REC ? m->fields : NULL;
	uint32_t used = 0;
	int rc;
	spt_buf_puts(b, ",\"msg\":{\"from\":");
	if ((rc = smb_rr_put_node(ex, b, m->from)))
		return rc;
	spt_buf_puts(b, ",\"to\":");
	if ((rc = smb_rr_put_node(ex, b, m->to)))
		return rc;
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
	export_drop(ex, "message fields with no name in the dialect (msgId, prevote, candidateId, ...)",
		    f ? f->n - used : 0);
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

static struct rv_resp *resp_of(struct smb_rr *rr, const char *node, bool add)
{
	for (size_t i = 0; i < rr->n; i++)
		if (!strcmp(rr->resp[i].node, node))
			return &rr->resp[i];
	if (!add)
		return NULL;
	if (rr->n == rr->cap) {
		size_t cap = rr->cap ? 2 * rr->cap : 8;
		struct rv_resp *r = realloc(rr->resp, cap * sizeof(*r));
		if (!r)
			return NULL;
		rr->resp = r;
		rr->cap = cap;
	}
	struct rv_resp *r = &rr->resp[rr->n];
	memset(r, 0, sizeof(*r));
	if (!(r->node = strdup(node)))
		return NULL;
	rr->n++;
	return r;
}

/* Remembers a node's vote response for the HandleRequestVoteRequest that follows it. */
static int remember_response(struct smb_rr *rr, const struct spt_event *ev)
{
	const struct spt_msg *m = ev->msg;
	if (!m || m->dir != SPT_MSG_SEND || !m->fields || m->fields->kind != SPT_REC)
		return 0;
	spt_val *g = spt_rec_get(m->fields, "voteGranted");
	struct rv_resp *r = resp_of(rr, ev->node, true);
	char *to = strdup(m->to);
	if (!r || !to) {
		free(to);
		return -ENOMEM;
	}
	free(r->to);
	r->to = to;
	r->granted = truthy(g);
	r->pending = g != NULL;
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

/* The dialect's name for ev and its message fields, or NULL (counted) when it has none. */
static const char *rr_name(struct spt_export *ex, const struct spt_event *ev, const struct mfield **fields)
{
	static const struct {
		const char *kind;
		const struct mfield *fields;
	} handled[] = {
		{ "HandleRequestVoteRequest", rv_fields },
		{ "HandleRequestVoteResponse", rv_fields },
		{ "HandleAppendEntriesRequest", ae_fields },
		{ "HandleAppendEntriesResponse", aer_fields },
	};
	const char *k = ev->kind;
	*fields = NULL;
	if (!strcmp(k, "BecomeCandidate"))
		return "Timeout";
	if (!strcmp(k, "BecomeLeader") || !strcmp(k, "AdvanceCommitIndex"))
		return k;
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
		if (handled[i].fields == rv_fields && prevote(ev->msg)) {
			export_drop(ex, "HandleRequestVoteRequest/Response events of a pre-vote (the dialect "
					"models none)", 1);
			return NULL;
		}
		*fields = handled[i].fields;
		return k;
	}
	drop_unnamed(ex, k);
	return NULL;
}

int smb_rr_export_event(struct spt_export *ex, struct smb_rr *rr, const struct spt_event *ev,
			struct spt_buf *b)
{
	struct spt_json_loss loss = { 0 };
	const struct mfield *fields;
	int rc, granted = -1;
	const char *name = rr_name(ex, ev, &fields);
	if (!name)
		return strcmp(ev->kind, "SendRequestVoteResponse") ? 0 : remember_response(rr, ev);
	if (!strcmp(name, "HandleRequestVoteRequest")) {
		struct rv_resp *r = resp_of(rr, ev->node, false);
		if (r && r->pending && !strcmp(r->to, ev->msg->from)) {
			granted = r->granted;
			r->pending = false;
		} else {
			export_drop(ex, "voteGranted of HandleRequestVoteRequest events without their "
					"SendRequestVoteResponse (left out)", 1);
		}
	}
	smb_line_start(b, ev->ts_ns);
	spt_buf_puts(b, "{\"name\":");
	spt_buf_json_str(b, name, strlen(name));
	spt_buf_puts(b, ",\"nid\":");
	if ((rc = smb_rr_put_node(ex, b, ev->node)) || (rc = put_state(ex, b, ev->state, &loss)))
		return rc;
	if (fields && (rc = put_msg(ex, b, ev->msg, fields, granted, &loss)))
		return rc;
	spt_buf_puts(b, "}}\n");
	export_drop(ex, "args of written events (msg has the dialect's fields)", ev->args ? 1 : 0);
	export_drop(ex, "meta fields", ev->meta ? 1 : 0);
	export_drop_common(ex, ev, &loss);
	return 0;
}
