/* The RedisRaft shaper (rr_shape.h): raw reads -> events with each node's whole state. */
#include "rr_shape.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectap/arena.h"
#include "spectap/value.h"

#define DEFAULT_MAX_LOG_TERMS SIZE_MAX /* the whole log: what a spec's log variable needs */
#define MAX_FIELDS 24

struct node {
	char *name;
	int64_t term, voted_for, commit, leader;
	uint64_t state;
	int64_t *terms; /* terms[i]: entry i + 1; 0 = unknown */
	size_t nterms, cap;
	/* The logTerms value, rebuilt only when the log changed: most events leave it as it was,
	 * and building a long sequence per event cost most of the collector's time. */
	struct spt_arena log_arena;
	spt_val *log_val;
	bool log_dirty;
	/* The marker of the call whose first event is still to come (rr_probes.h), with its reads. */
	const struct rr_begin_info *begin;
	uint64_t begin_val[UPROBE_MAX_READS];
	uint32_t begin_err;
	/* After a Timeout that skips the pre-vote, raft_become_candidate is part of that election
	 * (raft_election_start calls it), not a step of its own. */
	bool election_skips_prevote;
};

struct rr_shape {
	struct node *n;
	size_t nn, cap;
	size_t max_log_terms;
	int64_t conn_connected;
	struct rr_shape_stats st;
};

int rr_shape_new(struct rr_shape **out, size_t max_log_terms)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return -ENOMEM;
	(*out)->max_log_terms = max_log_terms ? max_log_terms : DEFAULT_MAX_LOG_TERMS;
	(*out)->conn_connected = -1;
	return 0;
}

void rr_shape_set_conn_connected(struct rr_shape *s, int64_t conn_connected)
{
	s->conn_connected = conn_connected;
}

void rr_shape_free(struct rr_shape *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nn; i++) {
		free(s->n[i].name);
		free(s->n[i].terms);
		spt_arena_fini(&s->n[i].log_arena);
	}
	free(s->n);
	free(s);
}

const struct rr_shape_stats *rr_shape_stats(const struct rr_shape *s) { return &s->st; }

static struct node *node_of(struct rr_shape *s, const char *name)
{
	for (size_t i = 0; i < s->nn; i++)
		if (!strcmp(s->n[i].name, name))
			return &s->n[i];
	if (s->nn == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct node *n = realloc(s->n, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->n = n;
		s->cap = cap;
	}
	memset(&s->n[s->nn], 0, sizeof(s->n[0]));
	if (!(s->n[s->nn].name = strdup(name)))
		return NULL;
	s->n[s->nn].voted_for = s->n[s->nn].leader = -1;
	spt_arena_init(&s->n[s->nn].log_arena);
	return &s->n[s->nn++];
}

int rr_shape_node(const struct rr_shape *s, const char *name, struct rr_node_view *v)
{
	for (size_t i = 0; i < s->nn; i++) {
		const struct node *n = &s->n[i];

		if (strcmp(n->name, name))
			continue;
		*v = (struct rr_node_view){n->term, n->voted_for, n->commit, n->leader, (int64_t)n->nterms,
					   n->nterms ? n->terms[n->nterms - 1] : 0, n->state};
		return 0;
	}
	return -ENOENT;
}

/* The log cut or grown to len entries (new ones unknown). */
static int log_resize(struct rr_shape *s, struct node *n, size_t len)
{
	if (len > n->cap) {
		size_t cap = n->cap ? n->cap : 64;

		while (cap < len)
			cap *= 2;
		int64_t *t = realloc(n->terms, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		n->terms = t;
		n->cap = cap;
	}
	for (size_t i = n->nterms; i < len; i++) {
		n->terms[i] = 0;
		s->st.unknown_terms++;
	}
	n->nterms = len;
	n->log_dirty = true;
	return 0;
}

static bool faulted(const struct uprobe_event *ev, unsigned i) { return ev->err & (1u << i); }

/* The last log index from the two page reads: pages[1] while a compaction runs. */
static int64_t last_index(const struct uprobe_event *ev, unsigned log0, unsigned log1)
{
	if (!faulted(ev, log1))
		return (int64_t)ev->val[log1];
	return faulted(ev, log0) ? -1 : (int64_t)ev->val[log0];
}

static spt_val *node_name(struct spt_arena *a, int64_t id)
{
	char b[24];

	if (id <= 0)
		return spt_cstr(a, "");
	snprintf(b, sizeof(b), "s%" PRId64, id);
	return spt_cstr(a, b);
}

static spt_val *terms_seq(struct spt_arena *a, const int64_t *t, size_t k)
{
	spt_val **e = spt_arena_alloc(a, (k ? k : 1) * sizeof(*e));

	if (!e)
		return NULL;
	for (size_t i = 0; i < k; i++)
		if (!(e[i] = spt_int(a, t[i])))
			return NULL;
	return spt_seq(a, e, k);
}

/* In canonical (sorted) field order: the trace then stores a state as the fields that changed. */
static spt_val *state_rec(struct rr_shape *s, struct node *n, struct spt_arena *a)
{
	const char *names[9] = {"commitIndex", "lastLogIndex", "lastLogTerm", "leaderId", "logTerms",
				"logTermsFrom", "role", "term", "votedFor"};
	spt_val *v[9];
	size_t k = n->nterms > s->max_log_terms ? s->max_log_terms : n->nterms, from = n->nterms - k, nv = 0;

	if (n->log_dirty || !n->log_val) {
		spt_arena_reset(&n->log_arena);
		if (!(n->log_val = terms_seq(&n->log_arena, n->terms + from, k)))
			return NULL;
		n->log_dirty = false;
	}
	v[nv++] = spt_int(a, n->commit);
	v[nv++] = spt_int(a, (int64_t)n->nterms);
	v[nv++] = spt_int(a, n->nterms ? n->terms[n->nterms - 1] : 0);
	v[nv++] = node_name(a, n->leader);
	v[nv++] = n->log_val;
	if (from)
		v[nv++] = spt_int(a, (int64_t)from + 1);
	names[nv] = "role";
	v[nv++] = spt_cstr(a, rr_role_name(n->state));
	names[nv] = "term";
	v[nv++] = spt_int(a, n->term);
	names[nv] = "votedFor";
	v[nv++] = node_name(a, n->voted_for);
	for (size_t i = 0; i < nv; i++)
		if (!v[i])
			return NULL;
	return spt_rec(a, names, v, nv);
}

struct msg_kind {
	uint32_t id;
	int dir;          /* SPT_MSG_SEND or SPT_MSG_RECV */
	const char *type; /* message type */
};

static const struct msg_kind msgs[] = {
	{RR_P_SEND_RV, SPT_MSG_SEND, "RequestVoteRequest"},
	{RR_P_RECV_RV, SPT_MSG_RECV, "RequestVoteRequest"},
	{RR_P_SEND_RVR, SPT_MSG_SEND, "RequestVoteResponse"},
	{RR_P_RECV_RVR, SPT_MSG_RECV, "RequestVoteResponse"},
	{RR_P_SEND_AE, SPT_MSG_SEND, "AppendEntriesRequest"},
	{RR_P_RECV_AE, SPT_MSG_RECV, "AppendEntriesRequest"},
	{RR_P_SEND_AER, SPT_MSG_SEND, "AppendEntriesResponse"},
	{RR_P_RECV_AER, SPT_MSG_RECV, "AppendEntriesResponse"},
};

static bool is_bool_field(const char *name)
{
	return !strcmp(name, "prevote") || !strcmp(name, "voteGranted") || !strcmp(name, "success");
}

/* The request a marked handler began with, as a record: its named fields, and for an
 * AppendEntries entryTerms, the terms of its first (at most RR_BEGIN_ENTRY_TERMS) entries. */
static spt_val *begin_msg(const struct node *n, struct spt_arena *a)
{
	const struct rr_begin_info *b = n->begin;
	const char *names[10];
	spt_val *vals[10], *terms[RR_BEGIN_ENTRY_TERMS];
	size_t nf = 0, nt = 0;
	int64_t nentries = -1;

	for (unsigned k = 0; k < b->nreads && k < 8 && b->names[k]; k++) {
		unsigned r = RR_BEGIN_MSG_READ + k;

		if (n->begin_err & (1u << r))
			return NULL; /* a request we could not read: no message, the mapping sees none */
		if (!strcmp(b->names[k], "nEntries"))
			nentries = (int64_t)n->begin_val[r];
		names[nf] = b->names[k];
		if (!(vals[nf++] = is_bool_field(b->names[k]) ? spt_bool(a, n->begin_val[r] != 0)
							      : spt_int(a, (int64_t)n->begin_val[r])))
			return NULL;
	}
	if (nentries >= 0) {
		for (unsigned k = 0; k < RR_BEGIN_ENTRY_TERMS && (int64_t)k < nentries; k++) {
			unsigned r = RR_BEGIN_MSG_READ + 7 + k;

			if (n->begin_err & (1u << r))
				break;
			if (!(terms[nt++] = spt_int(a, (int64_t)n->begin_val[r])))
				return NULL;
		}
		names[nf] = "entryTerms";
		if (!(vals[nf++] = spt_seq(a, terms, nt)))
			return NULL;
	}
	return spt_rec(a, names, vals, nf);
}

/* args (and the message's fields) from the probe's own reads; the first event of a marked call
 * also gets step (the action), stepBegin and, for a request handler, stepMsg. A send callback's
 * connection state and flags become args.connected = FALSE when the callback sent nothing
 * (*unsent; with both unread, the message is taken as sent). */
static int shape_args(struct rr_shape *s, struct collect_shape *cs, struct node *node,
		      const struct rr_probe_info *pi, const struct msg_kind *mk, int64_t *peer, bool *unsent)
{
	const char *an[MAX_FIELDS], *fn[MAX_FIELDS];
	spt_val *av[MAX_FIELDS], *fv[MAX_FIELDS];
	size_t na = 0, nf = 0;
	struct spt_arena *a = cs->arena;
	int conn_read = 0;
	int64_t conn_state = 0, conn_flags = 0;

	*peer = -1;
	*unsent = false;
	for (unsigned i = 0; i < pi->nargs; i++) {
		unsigned r = RS_ARG(i);
		const char *name = pi->args[i];
		int64_t x = (int64_t)cs->ev->val[r];
		spt_val *v;

		if (faulted(cs->ev, r))
			continue;
		if (!strcmp(name, "connState") || !strcmp(name, "connFlags")) {
			*(name[4] == 'S' ? &conn_state : &conn_flags) = x;
			conn_read++;
			continue;
		}
		if (!strcmp(name, "to") || !strcmp(name, "from")) {
			if (mk) {
				*peer = x;
				continue;
			}
		}
		if (pi->id == RR_P_ELECTION) {
			name = "preVote";
			v = spt_bool(a, x == 0);
		} else {
			v = is_bool_field(name) ? spt_bool(a, x != 0) : spt_int(a, x);
		}
		if (!v)
			return -ENOMEM;
		an[na] = name;
		av[na++] = v;
		if (mk && strcmp(name, "ret")) {
			fn[nf] = name;
			fv[nf++] = v;
		}
	}
	if (conn_read == 2 && s->conn_connected >= 0 &&
	    (conn_state != s->conn_connected || (conn_flags & RR_CONN_TERMINATING))) {
		char to[24];

		*unsent = true;
		an[na] = "connected";
		if (!(av[na++] = spt_bool(a, false)))
			return -ENOMEM;
		if (*peer >= 0) { /* no message says to whom: the args do */
			snprintf(to, sizeof(to), "s%" PRId64, *peer);
			an[na] = "to";
			if (!(av[na++] = spt_cstr(a, to)))
				return -ENOMEM;
		}
	}
	if (node->begin) {
		spt_val *m = node->begin->nreads ? begin_msg(node, a) : NULL;

		an[na] = "step";
		if (!(av[na++] = spt_cstr(a, node->begin->step)))
			return -ENOMEM;
		an[na] = "stepBegin";
		if (!(av[na++] = spt_bool(a, true)))
			return -ENOMEM;
		if (m) {
			an[na] = "stepMsg";
			av[na++] = m;
		}
		node->begin = NULL;
	}
	if (na && !(cs->args = spt_rec(a, an, av, na)))
		return -ENOMEM;
	if (!na)
		cs->args = NULL;
	if (mk) {
		cs->msg_buf.fields = nf ? spt_rec(a, fn, fv, nf) : NULL;
		if (nf && !cs->msg_buf.fields)
			return -ENOMEM;
	}
	return 0;
}

int rr_shape_event(void *ctx, struct collect_shape *cs)
{
	struct rr_shape *s = ctx;
	const struct uprobe_event *ev = cs->ev;
	const struct rr_probe_info *pi = rr_probe_info(cs->probe_id);
	const struct msg_kind *mk = NULL;
	struct node *n;
	int64_t last, peer;
	int r;

	if (!pi) {
		const struct rr_begin_info *b = rr_begin_info(cs->probe_id);

		if (!b) {
			snprintf(cs->err, sizeof(cs->err), "redisraft shaper: unknown probe id %u", cs->probe_id);
			return -EPROTO;
		}
		if (!(n = node_of(s, cs->node)))
			return -ENOMEM;
		s->st.begins_seen++;
		if (b->id == RR_P_BECOME_CANDIDATE && n->election_skips_prevote) {
			n->election_skips_prevote = false;
			return 1;
		}
		n->begin = b;
		n->begin_err = ev->err;
		memcpy(n->begin_val, ev->val, sizeof(n->begin_val));
		return 1;
	}
	s->st.probes_seen[pi->id]++;
	if (!(n = node_of(s, cs->node)))
		return -ENOMEM;
	if (pi->id == RR_P_RESTORE) {
		/* A new process: a call the killed one began never returns. */
		n->begin = NULL;
		n->election_skips_prevote = false;
	}
	if (pi->id == RR_P_ELECTION)
		n->election_skips_prevote = !faulted(ev, RS_ARG(0)) && ev->val[RS_ARG(0)] != 0;
	else if (pi->id == RR_P_BECOME_PRECANDIDATE || pi->id == RR_P_BECOME_CANDIDATE)
		n->election_skips_prevote = false;
	if (pi->id == RR_P_APPEND) {
		/* reads: entryTerm, type, log0, log1: the entry goes at the last index + 1 */
		last = last_index(ev, 2, 3);
		if (last < 0 || faulted(ev, 0))
			return 1;
		if ((r = log_resize(s, n, (size_t)last)) || (r = log_resize(s, n, (size_t)last + 1)))
			return r;
		s->st.unknown_terms--; /* the entry just added is known */
		n->terms[last] = (int64_t)ev->val[0];
		n->log_dirty = true;
		return 1;
	}
	if (pi->id == RR_P_DELETE) {
		int64_t from = (int64_t)ev->val[0];

		if (!faulted(ev, 0) && from >= 1 && (size_t)from - 1 < n->nterms) {
			n->nterms = (size_t)from - 1;
			n->log_dirty = true;
		}
		return 1;
	}
	/* The state every event probe reads first. */
	n->term = (int64_t)ev->val[RS_TERM];
	n->voted_for = (int64_t)ev->val[RS_VOTED_FOR];
	n->commit = (int64_t)ev->val[RS_COMMIT];
	n->state = ev->val[RS_STATE];
	n->leader = (int64_t)ev->val[RS_LEADER];
	if (pi->id == RR_P_COMMIT && !faulted(ev, RS_ARG(0)))
		n->commit = (int64_t)ev->val[RS_ARG(0)]; /* read at the call: the index it sets */
	last = last_index(ev, RS_LOG0, RS_LOG1);
	if (last >= 0 && (size_t)last != n->nterms && (r = log_resize(s, n, (size_t)last)))
		return r;
	/* The leader's append inside raft_recv_entry is not probed (rr_probes.c): the entry it
	 * added is the last one, with the term the call gave it (args: type, entryId, entryTerm,
	 * ret). */
	if (pi->id == RR_P_RECV_ENTRY && last >= 1 && (size_t)last == n->nterms && !faulted(ev, RS_ARG(2)) &&
	    !faulted(ev, RS_ARG(3)) && ev->val[RS_ARG(3)] == 0 && n->terms[last - 1] == 0) {
		n->terms[last - 1] = (int64_t)ev->val[RS_ARG(2)];
		s->st.unknown_terms--;
		n->log_dirty = true;
	}
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (msgs[i].id == pi->id)
			mk = &msgs[i];
	bool unsent;
	if ((r = shape_args(s, cs, n, pi, mk, &peer, &unsent)))
		return r;
	if (unsent) {
		/* The callback returned before sending: an event of the step, no message. */
		s->st.sends_unconnected++;
		mk = NULL;
	}
	if (!(cs->state = state_rec(s, n, cs->arena)))
		return -ENOMEM;
	cs->kind = pi->kind;
	cs->meta = NULL;
	cs->msg = NULL;
	if (mk) {
		char b[24];
		const char *p;

		snprintf(b, sizeof(b), "s%" PRId64, peer);
		if (!(p = spt_arena_strndup(cs->arena, b, strlen(b))))
			return -ENOMEM;
		cs->msg_buf.id = 0;
		cs->msg_buf.dir = mk->dir;
		cs->msg_buf.type = mk->type;
		cs->msg_buf.from = mk->dir == SPT_MSG_SEND ? cs->node : p;
		cs->msg_buf.to = mk->dir == SPT_MSG_SEND ? p : cs->node;
		cs->msg = &cs->msg_buf;
	}
	return 0;
}
