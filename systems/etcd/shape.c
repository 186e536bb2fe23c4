/* The etcd shaper (shape.h): raw reads -> events with each member's whole state. */
#include "shape.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "spectap/value.h"

#define DEFAULT_MAX_LOG_TERMS SIZE_MAX /* the whole log: what a spec's log variable needs */
#define MAX_FIELDS 16
#define NCONSTS 256    /* cached string values: field names, roles, types, node names */
#define NSMALL 256     /* cached integers 0..NSMALL-1: terms, counts */

struct member {
	char *name;
	uint64_t id; /* 0: not seen yet */
	uint64_t term, vote, state, lead, commit;
	uint64_t *terms; /* terms[i] = term of entry i + 1; 0 = unknown (entries have terms >= 1) */
	size_t nterms, cap;
	/* The logTerms value, rebuilt only when the log changed: most events (messages) leave it
	 * as it was, and building a long sequence per event cost most of the collector's time. */
	struct spt_arena log_arena;
	spt_val *log_val;
	size_t unknown; /* entries whose term is unknown (0 in terms), kept as terms change: counting
			 * them per change cost the whole log (a 20,000-entry log: 300 us an event) */
	bool log_dirty;
	spt_val *id_val;       /* id in hex, rebuilt when id changes */
	uint64_t id_val_of;
	uint32_t pid;          /* the process of its last record */
	bool in_step;          /* (*raft).Step entered; its end is read at the next boundary */
	const char *step_type; /* the message type it handles */
	bool step_begun;       /* an event of this step was written */
	union {                /* the Step entry's record: the message it handles */
		struct uprobe_event ev;
		struct uprobe_event_full full;
	} step_rec;
	bool ret_seen;         /* ETCD_PROBE_VERIFY: the state read at this step's RET */
	__u64 ret_vals[ER_NSTATE];
	bool in_conf;          /* inside applyConfChange (it can commit outside any step) */
	/* The record being shaped, in parts: the Commit it shows, then the end of the open step,
	 * then its own event. */
	bool plan_commit, plan_end, plan_restarted;
	uint64_t commit_to;    /* ETCD_PROBE_VERIFY: the last index commitTo raised the commit to, 0: none */
	uint32_t recent[8];    /* ETCD_PROBE_VERIFY: the last records' probes (a ring), for its message */
	unsigned nrecent;
};

/* Values every event repeats (field names, role and type names, small numbers such as terms),
 * built once for the shaper's lifetime instead of per event: the values are immutable, and
 * whoever keeps an event's values copies them. */
struct consts {
	struct spt_arena a;
	struct { const char *s; spt_val *v; } str[NCONSTS]; /* by the string's address */
	spt_val *small[NSMALL];
};

struct etcd_shape {
	struct member *m;
	size_t n, cap;
	size_t max_log_terms;
	struct etcd_shape_stats st;
	struct consts k;
	bool verify; /* ETCD_PROBE_VERIFY's records came */
};

int etcd_shape_new(struct etcd_shape **out, size_t max_log_terms)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->max_log_terms = max_log_terms ? max_log_terms : DEFAULT_MAX_LOG_TERMS;
	spt_arena_init(&(*out)->k.a);
	return 0;
}

void etcd_shape_free(struct etcd_shape *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->m[i].name);
		free(s->m[i].terms);
		spt_arena_fini(&s->m[i].log_arena);
	}
	free(s->m);
	spt_arena_fini(&s->k.a);
	free(s);
}

const struct etcd_shape_stats *etcd_shape_stats(const struct etcd_shape *s) { return &s->st; }

int etcd_shape_member(const struct etcd_shape *s, const char *node, struct etcd_member_view *v)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct member *m = &s->m[i];
		if (strcmp(m->name, node))
			continue;
		*v = (struct etcd_member_view){ m->id, m->term, m->vote, m->commit, m->lead, m->nterms,
						etcd_role_name(m->state) };
		return 0;
	}
	return -ENOENT;
}

static struct member *member_of(struct etcd_shape *s, const char *node)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->m[i].name, node))
			return &s->m[i];
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct member *m = realloc(s->m, cap * sizeof(*m));
		if (!m)
			return NULL;
		s->m = m;
		s->cap = cap;
	}
	struct member *m = &s->m[s->n];
	memset(m, 0, sizeof(*m));
	if (!(m->name = strdup(node)))
		return NULL;
	spt_arena_init(&m->log_arena);
	s->n++;
	return m;
}

/* The string value of str, a string that lives as long as the shaper (a literal, a name from
 * probes.c, a member's name): cached by address; built in a when the cache is full. */
static spt_val *cstr(struct etcd_shape *s, struct spt_arena *a, const char *str)
{
	size_t h = ((uintptr_t)str >> 3) * 0x9e3779b97f4a7c15ULL >> 56; /* 8 bits: NCONSTS */
	for (size_t i = 0; i < NCONSTS; i++) {
		size_t j = (h + i) % NCONSTS;
		if (s->k.str[j].s == str)
			return s->k.str[j].v;
		if (!s->k.str[j].s) {
			spt_val *v = spt_cstr(&s->k.a, str);
			if (v) {
				s->k.str[j].s = str;
				s->k.str[j].v = v;
			}
			return v;
		}
	}
	return spt_cstr(a, str);
}

/* A member id as the trace names it: the node name once known, "0" for none, else hex. */
static spt_val *id_name(struct etcd_shape *s, struct spt_arena *a, uint64_t id)
{
	char hex[24];

	if (id == 0)
		return cstr(s, a, "0");
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].id == id)
			return cstr(s, a, s->m[i].name);
	snprintf(hex, sizeof(hex), "%" PRIx64, id);
	return spt_cstr(a, hex);
}

/* The log cut or grown to n entries; new entries are unknown (counted when count is set). */
static int log_resize(struct etcd_shape *s, struct member *m, size_t n, bool count)
{
	if (n > m->cap) {
		size_t cap = m->cap ? m->cap : 64;
		while (cap < n)
			cap *= 2;
		uint64_t *t = realloc(m->terms, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		m->terms = t;
		m->cap = cap;
	}
	for (size_t i = m->nterms; i < n; i++) {
		m->terms[i] = 0;
		s->st.unknown_terms += count;
		m->unknown++;
	}
	for (size_t i = n; i < m->nterms; i++)
		m->unknown -= m->terms[i] == 0;
	if (n != m->nterms)
		m->log_dirty = true;
	m->nterms = n;
	return 0;
}

/* The terms of n entries from a probe's reads: first term, and the last k <= n in tail. */
static void fill_terms(uint64_t *dst, size_t n, uint64_t first, const uint64_t *tail, size_t k,
		       uint64_t *unknown)
{
	if (!n)
		return;
	dst[0] = first;
	for (size_t j = 0; j < k; j++)
		dst[n - k + j] = tail[j];
	/* Between them the terms are non-decreasing: equal ends fix every term in between. */
	size_t gap_end = n - k;
	for (size_t i = 1; i < gap_end; i++) {
		if (k && first == tail[0]) {
			dst[i] = first;
		} else {
			dst[i] = 0;
			(*unknown)++;
		}
	}
}

static const uint64_t *block_u64(const struct uprobe_event *ev, size_t size, unsigned read, uint64_t *buf, size_t *k)
{
	const uint8_t *b = uprobe_event_block(ev, size, read);
	size_t n = ev->val[read] < UPROBE_MAX_BLOCK / 8 ? (size_t)ev->val[read] : UPROBE_MAX_BLOCK / 8;

	*k = b ? n : 0;
	if (b)
		memcpy(buf, b, n * 8);
	return buf;
}

struct rec {
	struct etcd_shape *s; /* its cached names */
	spt_val *keys[MAX_FIELDS], *vals[MAX_FIELDS];
	size_t n;
	bool oom;
};

static void put_key(struct rec *r, spt_val *key, spt_val *v)
{
	if (!v || !key || r->n == MAX_FIELDS) {
		r->oom = true;
		return;
	}
	r->keys[r->n] = key;
	r->vals[r->n++] = v;
}

/* name: a literal (cached by address). */
static void put(struct rec *r, struct spt_arena *a, const char *name, spt_val *v)
{
	put_key(r, cstr(r->s, a, name), v);
}

/* In written order (kept by exports), for args, messages and meta. */
static spt_val *rec_done(struct rec *r, struct spt_arena *a)
{
	bool dup;
	return r->oom ? NULL : spt_fun_ordered(a, r->keys, r->vals, r->n, &dup);
}

/* In canonical order, for the state: the trace stores a state as the fields that changed since
 * the member's previous event only when it carries no written-order hint. */
static spt_val *rec_canonical(struct rec *r, struct spt_arena *a)
{
	bool dup;
	return r->oom ? NULL : spt_fun(a, r->keys, r->vals, r->n, &dup);
}

static spt_val *uint_val(struct spt_arena *a, uint64_t v)
{
	char d[24];
	if (v <= (uint64_t)INT64_MAX)
		return spt_int(a, (int64_t)v);
	snprintf(d, sizeof(d), "%" PRIu64, v);
	return spt_cstr(a, d);
}

/* uint_val, cached for small numbers (terms repeat in every log). */
static spt_val *small_val(struct etcd_shape *s, struct spt_arena *a, uint64_t v)
{
	if (v >= NSMALL)
		return uint_val(a, v);
	if (!s->k.small[v])
		s->k.small[v] = uint_val(&s->k.a, v);
	return s->k.small[v];
}

static spt_val *terms_seq(struct etcd_shape *s, struct spt_arena *a, const uint64_t *t, size_t n)
{
	spt_val **e = spt_arena_alloc(a, (n ? n : 1) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(e[i] = small_val(s, a, t[i])))
			return NULL;
	return spt_seq(a, e, n);
}

static spt_val *state_rec(struct etcd_shape *s, struct member *m, struct spt_arena *a)
{
	struct rec r = { .s = s };
	char hex[24];
	size_t from = m->nterms > s->max_log_terms ? m->nterms - s->max_log_terms : 0;
	const char *role = etcd_role_name(m->state);

	if (m->log_dirty || !m->log_val) {
		spt_arena_reset(&m->log_arena);
		m->log_val = terms_seq(s, &m->log_arena, m->terms + from, m->nterms - from);
		m->log_dirty = false;
	}
	if (!m->id_val || m->id_val_of != m->id) {
		snprintf(hex, sizeof(hex), "%" PRIx64, m->id);
		m->id_val = spt_cstr(&s->k.a, hex);
		m->id_val_of = m->id;
	}
	/* Put in canonical (sorted) order already, so that building the record sorts nothing. */
	put(&r, a, "commit", uint_val(a, m->commit));
	put(&r, a, "id", m->id_val);
	put(&r, a, "lead", id_name(s, a, m->lead));
	put(&r, a, "log", uint_val(a, m->nterms));
	put(&r, a, "logTerm", small_val(s, a, m->nterms ? m->terms[m->nterms - 1] : 0));
	put(&r, a, "logTerms", m->log_val);
	if (from)
		put(&r, a, "logTermsFrom", uint_val(a, from + 1));
	put(&r, a, "role", role ? cstr(s, a, role) : uint_val(a, m->state));
	put(&r, a, "term", small_val(s, a, m->term));
	put(&r, a, "vote", id_name(s, a, m->vote));
	return rec_canonical(&r, a);
}

/* raftLog.lastIndex() of raft-state reads: the unstable tail if any, else the storage's last entry. */
static uint64_t last_index(const __u64 *v)
{
	if (v[ER_UNSTABLE_LEN])
		return v[ER_UNSTABLE_OFFSET] + v[ER_UNSTABLE_LEN] - 1;
	return v[ER_STORAGE_FIRST] + v[ER_STORAGE_LEN] - 1;
}

/* The raft-state reads of a become/send/boundary record. */
static int take_raft_state(struct etcd_shape *s, struct member *m, struct collect_shape *cs)
{
	const __u64 *v = cs->ev->val;
	uint32_t bad = cs->ev->err & ((1u << ER_NSTATE) - 1);
	uint64_t last;

	if (bad) {
		snprintf(cs->err, sizeof(cs->err), "etcd: %s: a raft state read faulted (mask %#x): wrong offsets for this build?",
			 cs->node, (unsigned)bad);
		return -EPROTO;
	}
	m->id = v[ER_ID];
	m->term = v[ER_TERM];
	m->vote = v[ER_VOTE];
	m->state = v[ER_STATE];
	m->lead = v[ER_LEAD];
	m->commit = v[ER_COMMIT];
	last = last_index(v);
	if (last < m->nterms) /* came back (restart) without entries it had not persisted */
		s->st.restarts_cut += m->nterms - last;
	return log_resize(s, m, (size_t)last, true);
}

static bool is_local(uint64_t type)
{
	switch (type) {
	case 0: case 1: case 10: case 11: case 12: /* Hup, Beat, Unreachable, SnapStatus, CheckQuorum */
		return true;
	}
	return false;
}

/* Handled by Step without coming from another member: the local types, and proposals or
 * read-index requests from this member itself (node.run sets From to the member's id). */
static bool is_local_step(const struct uprobe_event *ev, const struct member *m)
{
	uint64_t type = ev->val[EM_TYPE], from = ev->val[EM_FROM];
	if (is_local(type))
		return true;
	return (type == 2 || type == 15) && (from == 0 || from == m->id);
}

static const char *event_kind(uint64_t type, bool send)
{
	switch (type) {
	case 3: case 8: case 7: /* MsgApp, MsgHeartbeat, MsgSnap */
		return send ? "SendAppendEntriesRequest" : "ReceiveAppendEntriesRequest";
	case 4: case 9:
		return send ? "SendAppendEntriesResponse" : "ReceiveAppendEntriesResponse";
	case 5: case 17:
		return send ? "SendRequestVoteRequest" : "ReceiveRequestVoteRequest";
	case 6: case 18:
		return send ? "SendRequestVoteResponse" : "ReceiveRequestVoteResponse";
	}
	return send ? "SendMessage" : "ReceiveMessage";
}

static const char *step_kind(uint64_t type)
{
	static const char *const k[] = { "StepHup", "StepBeat", "StepProp", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
					 "StepUnreachable", "StepSnapStatus", "StepCheckQuorum", "StepTransferLeader",
					 NULL, "StepReadIndex" };
	return type < sizeof(k) / sizeof(*k) && k[type] ? k[type] : "StepMessage";
}

/* The message of a send or Step record (ev): *out filled, its strings and fields in a.
 * *unknown_terms is set when some entry's term could not be read. */
static int message(struct etcd_shape *s, struct member *m, const struct uprobe_event *ev, size_t size,
		   bool send, struct spt_arena *a, struct spt_msg *out, bool *unknown_terms)
{
	const __u64 *v = ev->val;
	uint64_t type = v[EM_TYPE], term = v[EM_TERM], nent = v[EM_NENTRIES], tail[UPROBE_MAX_BLOCK / 8];
	const char *tname = etcd_msg_type_name(type);
	bool vote_type = type == 5 || type == 6 || type == 17 || type == 18;
	struct rec f = { .s = s };
	size_t k;

	if (ev->err & ((1u << EM_TYPE) | (1u << EM_TERM) | (1u << EM_NENTRIES)))
		return -EPROTO;
	/* send() itself sets From, and Term for all but votes, proposals and read-index requests:
	 * the entry probe sees the message before that. */
	if (send && !vote_type && type != 2 && type != 15 && term == 0)
		term = m->term;
	put(&f, a, "term", uint_val(a, term));
	put(&f, a, "entries", uint_val(a, nent));
	put(&f, a, "logTerm", uint_val(a, v[EM_LOGTERM]));
	put(&f, a, "index", uint_val(a, v[EM_INDEX]));
	put(&f, a, "commit", uint_val(a, v[EM_COMMIT]));
	put(&f, a, "reject", spt_bool(a, v[EM_REJECT] != 0));
	put(&f, a, "rejectHint", uint_val(a, v[EM_REJECT_HINT]));
	if (nent && nent <= 1u << 20) {
		uint64_t *t = spt_arena_alloc(a, nent * sizeof(*t)), unknown = 0;
		if (!t)
			return -ENOMEM;
		block_u64(ev, size, EM_ENTRY_TERMS, tail, &k);
		if (ev->err & ((1u << EM_ENTRY0_TERM) | (1u << EM_ENTRY_TERMS)))
			unknown = nent;
		else
			fill_terms(t, nent, v[EM_ENTRY0_TERM], tail, k, &unknown);
		if (!unknown)
			put(&f, a, "entryTerms", terms_seq(s, a, t, nent));
		else
			*unknown_terms = true;
	} else if (!nent) {
		put(&f, a, "entryTerms", spt_seq(a, NULL, 0));
	}
	out->dir = send ? SPT_MSG_SEND : SPT_MSG_RECV;
	out->type = tname ? tname : "MsgUnknown";
	spt_val *from = send ? cstr(s, a, m->name) : id_name(s, a, v[EM_FROM]);
	spt_val *to = id_name(s, a, v[EM_TO]);
	if (!from || !to || !(out->fields = rec_done(&f, a)))
		return -ENOMEM;
	out->from = from->u.s;
	out->to = to->u.s;
	return 0;
}

/* The message a step handles, as one record: type, from, to and its fields. */
static spt_val *step_message(struct etcd_shape *s, struct member *m, struct spt_arena *a)
{
	const struct uprobe_event *ev = &m->step_rec.ev;
	struct spt_msg msg;
	struct rec r = { .s = s };
	bool unknown = false;

	if (message(s, m, ev, ev->size, false, a, &msg, &unknown))
		return NULL;
	put(&r, a, "type", cstr(s, a, msg.type));
	put(&r, a, "from", spt_cstr(a, msg.from));
	put(&r, a, "to", spt_cstr(a, msg.to));
	for (uint32_t i = 0; msg.fields && i < msg.fields->n; i++) {
		uint32_t j = msg.fields->u.fn.order ? msg.fields->u.fn.order[i] : i;
		put_key(&r, msg.fields->u.fn.keys[j], msg.fields->u.fn.vals[j]);
	}
	return rec_done(&r, a);
}

/* Args of a local Step: the message's type and the fields that mean something locally. */
static void local_args(const struct uprobe_event *ev, struct spt_arena *a, struct rec *args)
{
	const char *t = etcd_msg_type_name(ev->val[EM_TYPE]);
	put(args, a, "type", cstr(args->s, a, t ? t : "MsgUnknown"));
	put(args, a, "entries", uint_val(a, ev->val[EM_NENTRIES]));
}

static int append(struct etcd_shape *s, struct member *m, struct collect_shape *cs, struct rec *args)
{
	const __u64 *v = cs->ev->val;
	uint64_t count = v[EA_COUNT], first = v[EA_FIRST_INDEX], tail[UPROBE_MAX_BLOCK / 8];
	size_t k;
	int r;

	if (!count)
		return 1;
	if (cs->ev->err & ((1u << EA_FIRST_INDEX) | (1u << EA_FIRST_TERM) | (1u << EA_TERMS)) || first == 0 ||
	    count > 1u << 24) {
		snprintf(cs->err, sizeof(cs->err), "etcd: %s: reading appended entries failed (count %" PRIu64 ", first index %" PRIu64 ")",
			 cs->node, count, first);
		return -EPROTO;
	}
	/* truncateAndAppend: the log keeps entries before first, then the new ones. */
	m->log_dirty = true;
	if ((r = log_resize(s, m, (size_t)(first - 1), true)))
		return r;
	size_t at = m->nterms;
	if ((r = log_resize(s, m, at + (size_t)count, false)))
		return r;
	block_u64(cs->ev, cs->size, EA_TERMS, tail, &k);
	fill_terms(m->terms + at, (size_t)count, v[EA_FIRST_TERM], tail, k, &s->st.unknown_terms);
	for (size_t i = 0; i < count; i++) /* log_resize counted them all unknown */
		m->unknown -= m->terms[at + i] != 0;
	if (m->state != 2) /* a follower's append is part of the receive that follows */
		return 1;
	const uint8_t *data = uprobe_event_block(cs->ev, cs->size, EA_DATA);
	size_t dlen = v[EA_DATA_LEN] < UPROBE_MAX_BLOCK ? (size_t)v[EA_DATA_LEN] : UPROBE_MAX_BLOCK;
	char hex[2 * UPROBE_MAX_BLOCK + 1] = "";
	if (!data || (cs->ev->err & (1u << EA_DATA)))
		dlen = 0;
	for (size_t i = 0; i < dlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", data[i]);
	put(args, cs->arena, "index", uint_val(cs->arena, first));
	put(args, cs->arena, "entries", uint_val(cs->arena, count));
	put(args, cs->arena, "dataLen", uint_val(cs->arena, v[EA_DATA_LEN]));
	put(args, cs->arena, "data", spt_cstr(cs->arena, hex));
	cs->kind = "Replicate";
	return 0;
}

/* What every written event ends with: the step it belongs to (args.step; the step's first
 * event also args.stepBegin and args.stepMsg), the member's state (with_state), the meta. */
static int finish_event(struct etcd_shape *s, struct member *m, struct collect_shape *cs, struct rec *args,
			bool with_state, bool unknown_msg_terms, const char *unfinished)
{
	if (m->in_step) {
		put(args, cs->arena, "step", cstr(s, cs->arena, m->step_type));
		if (!m->step_begun) {
			put(args, cs->arena, "stepBegin", spt_bool(cs->arena, true));
			put(args, cs->arena, "stepMsg", step_message(s, m, cs->arena));
		}
		m->step_begun = true;
	}
	if (args->n && !(cs->args = rec_done(args, cs->arena)))
		return -ENOMEM;
	if (with_state && !(cs->state = state_rec(s, m, cs->arena)))
		return -ENOMEM;
	size_t unknown = with_state ? m->unknown : 0;
	if (unknown || unknown_msg_terms || unfinished) {
		struct rec mt = { .s = s };
		if (unknown)
			put(&mt, cs->arena, "logTermsUnknown", uint_val(cs->arena, unknown));
		if (unknown_msg_terms)
			put(&mt, cs->arena, "entryTermsUnknown", spt_bool(cs->arena, true));
		if (unfinished)
			put(&mt, cs->arena, "unfinished", cstr(s, cs->arena, unfinished));
		if (!(cs->meta = rec_done(&mt, cs->arena)))
			return -ENOMEM;
	}
	return 0;
}

/* ETCD_PROBE_VERIFY: the state read at the step's RET against the one read at the boundary that
 * ended it (v), in what the trace keeps of it. */
static void verify(struct etcd_shape *s, struct member *m, const char *node, const __u64 *v)
{
	static const struct { unsigned read; const char *name; } f[] = {
		{ ER_TERM, "term" }, { ER_VOTE, "vote" }, { ER_STATE, "state" }, { ER_LEAD, "lead" }, { ER_COMMIT, "commit" },
	};
	const __u64 *r = m->ret_vals;
	const char *differs = NULL;
	uint64_t a = 0, b = 0;

	if (!m->ret_seen) {
		if (s->verify && !s->st.verify_no_ret++) {
			int n = snprintf(s->st.verify_first_no_ret, sizeof(s->st.verify_first_no_ret),
					 "%s: a %s step ended with no record of Step's return; the member's last probes:", node,
					 m->step_type);
			for (unsigned i = m->nrecent > 8 ? m->nrecent - 8 : 0; i < m->nrecent && n > 0 &&
			     (size_t)n < sizeof(s->st.verify_first_no_ret); i++)
				n += snprintf(s->st.verify_first_no_ret + n, sizeof(s->st.verify_first_no_ret) - (size_t)n, " %u",
					      m->recent[i % 8]);
		}
		return;
	}
	for (size_t i = 0; i < sizeof(f) / sizeof(*f) && !differs; i++)
		if (r[f[i].read] != v[f[i].read]) {
			differs = f[i].name;
			a = r[f[i].read];
			b = v[f[i].read];
		}
	if (!differs && last_index(r) != last_index(v)) {
		differs = "last index";
		a = last_index(r);
		b = last_index(v);
	}
	s->st.verify_compared++;
	if (!differs)
		return;
	if (!s->st.verify_mismatched++)
		snprintf(s->st.verify_first, sizeof(s->st.verify_first),
			 "%s: the %s step's %s was %" PRIu64 " at its return and %" PRIu64 " at the next boundary", node,
			 m->step_type, differs, a, b);
}

/* The end of the member's open step: its Receive<X> or Step<T> event with the state of cs's
 * record (the member's next boundary), or, when no call of the member can follow (its process
 * ended first), a StepUnfinished event without a state, meta.unfinished saying why. */
static int end_step(struct etcd_shape *s, struct member *m, struct collect_shape *cs, const char *unfinished)
{
	const struct uprobe_event *ev = &m->step_rec.ev;
	struct rec args = { .s = s };
	bool unknown_msg_terms = false;
	int r;

	cs->args = cs->state = cs->meta = NULL;
	cs->msg = NULL;
	if (!unfinished) {
		if ((r = take_raft_state(s, m, cs)))
			return r;
		verify(s, m, cs->node, cs->ev->val);
	} else {
		s->st.unfinished++;
	}
	if (is_local_step(ev, m)) {
		cs->kind = step_kind(ev->val[EM_TYPE]);
		local_args(ev, cs->arena, &args);
	} else {
		cs->kind = event_kind(ev->val[EM_TYPE], false);
		r = message(s, m, ev, ev->size, false, cs->arena, &cs->msg_buf, &unknown_msg_terms);
		if (r == -EPROTO)
			snprintf(cs->err, sizeof(cs->err), "etcd: %s: a message read faulted: wrong offsets for this build?",
				 cs->node);
		if (r)
			return r;
		cs->msg = &cs->msg_buf;
	}
	if (unfinished)
		cs->kind = "StepUnfinished";
	r = finish_event(s, m, cs, &args, !unfinished, unknown_msg_terms, unfinished);
	m->in_step = false;
	m->ret_seen = false;
	return r;
}

/* The commit index rose inside the open step (or applyConfChange) to v's: a Commit event, as
 * (*raftLog).commitTo raised it (commitTo is the only writer of raftLog.committed inside a
 * step; each step calls it once at most, before the step's sends: docs/etcd.md). */
static int commit_event(struct etcd_shape *s, struct member *m, struct collect_shape *cs, uint64_t to)
{
	struct rec args = { .s = s };

	cs->args = cs->state = cs->meta = NULL;
	cs->msg = NULL;
	s->st.commits++;
	if (m->commit_to) { /* ETCD_PROBE_VERIFY */
		s->st.verify_commits++;
		if (m->commit_to != to && !s->st.verify_commits_differ++)
			snprintf(s->st.verify_first_commit, sizeof(s->st.verify_first_commit),
				 "%s: commitTo raised the commit index to %" PRIu64 ", the next state read shows %" PRIu64,
				 cs->node, m->commit_to, to);
		m->commit_to = 0;
	}
	m->commit = to;
	put(&args, cs->arena, "tocommit", uint_val(cs->arena, to));
	cs->kind = "Commit";
	return finish_event(s, m, cs, &args, true, false, NULL);
}

/* Probes whose reads begin with the raft state. */
static bool reads_state(uint32_t probe)
{
	return probe != ETCD_P_APPEND && probe != ETCD_P_COMMIT_TO;
}

/* Go's prologue checks the stack bound first; when the stack must grow, or the goroutine is to
 * be preempted, its jbe jumps to runtime.morestack, which runs the function again from its
 * entry: that hit is no call (probes.h, ETCD_FLAG_*). */
static bool reentry(const struct uprobe_event *ev, int flags)
{
	return flags >= 0 && (unsigned)flags < ev->nreads && !(ev->err & (1u << flags)) &&
	       (ev->val[flags] & (ETCD_FLAG_CF | ETCD_FLAG_ZF));
}

/* The calls that begin after the previous step returned: their reads are its post-state. */
static bool is_boundary(uint32_t probe)
{
	return probe == ETCD_P_STEP_BEGIN || probe == ETCD_P_TICK || probe == ETCD_P_APPLY_CONF_BEGIN;
}

int etcd_shape_event(void *ctx, struct collect_shape *cs)
{
	struct etcd_shape *s = ctx;
	struct member *m = member_of(s, cs->node);
	bool unknown_msg_terms = false;
	struct rec args = { .s = s };
	int r = 0;

	if (!m)
		return -ENOMEM;
	if (cs->part == 0) {
		if (reentry(cs->ev, etcd_flags_read(cs->probe_id))) {
			s->st.reentries++;
			return 1;
		}
		m->recent[m->nrecent++ % 8] = cs->probe_id;
		if (cs->probe_id >= 10 && cs->probe_id <= 10 * ETCD_NPROBES && cs->probe_id % 10 == 0)
			s->st.probes_seen[cs->probe_id / 10 - 1]++;
		/* The record ends the open step first, as an event of its own: the record itself is
		 * part 1. A new process (a restart) can never show the old one's post-state. */
		bool restarted = m->pid && cs->ev->pid != m->pid;
		m->pid = cs->ev->pid;
		m->plan_commit = !restarted && (m->in_step || m->in_conf) && reads_state(cs->probe_id) &&
				 !(cs->ev->err & (1u << ER_COMMIT)) && cs->ev->val[ER_COMMIT] > m->commit;
		m->plan_end = m->in_step && (restarted || is_boundary(cs->probe_id));
		m->plan_restarted = restarted;
		if (restarted)
			m->in_conf = false;
	}
	if (m->plan_commit) {
		m->plan_commit = false;
		r = commit_event(s, m, cs, cs->ev->val[ER_COMMIT]);
		return r ? r : COLLECT_SHAPE_MORE;
	}
	if (m->plan_end) {
		m->plan_end = false;
		r = end_step(s, m, cs, m->plan_restarted ? "restarted" : NULL);
		return r ? r : COLLECT_SHAPE_MORE;
	}
	cs->args = cs->state = cs->meta = NULL;
	cs->msg = NULL;
	switch (cs->probe_id) {
	case ETCD_P_STEP_BEGIN: {
		const char *t = etcd_msg_type_name(cs->ev->val[EM_TYPE]);
		if ((r = take_raft_state(s, m, cs)))
			return r;
		m->in_step = true;
		m->step_type = t ? t : "MsgUnknown";
		m->step_begun = false;
		m->ret_seen = false;
		memcpy(&m->step_rec, cs->ev, cs->size < sizeof(m->step_rec) ? cs->size : sizeof(m->step_rec));
		return 1;
	}
	case ETCD_P_APPLY_CONF_BEGIN:
		m->in_conf = true;
		return (r = take_raft_state(s, m, cs)) ? r : 1;
	case ETCD_P_TICK:
		return (r = take_raft_state(s, m, cs)) ? r : 1;
	case ETCD_P_STEP: /* ETCD_PROBE_VERIFY: Step's RET */
		s->verify = true;
		if (m->in_step && !(cs->ev->err & ((1u << ER_NSTATE) - 1))) {
			memcpy(m->ret_vals, cs->ev->val, sizeof(m->ret_vals));
			m->ret_seen = true;
		}
		return 1;
	case ETCD_P_APPEND:
		r = append(s, m, cs, &args);
		break;
	case ETCD_P_COMMIT_TO: /* ETCD_PROBE_VERIFY: what the next state read must show */
		if (!(cs->ev->err & ((1u << EC_TO) | (1u << EC_OLD))) && cs->ev->val[EC_TO] > cs->ev->val[EC_OLD]) {
			s->st.verify_commit_tos++;
			m->commit_to = cs->ev->val[EC_TO];
		}
		return 1;
	case ETCD_P_SEND:
		if ((r = take_raft_state(s, m, cs)))
			break;
		cs->kind = event_kind(cs->ev->val[EM_TYPE], true);
		r = message(s, m, cs->ev, cs->size, true, cs->arena, &cs->msg_buf, &unknown_msg_terms);
		if (r == -EPROTO)
			snprintf(cs->err, sizeof(cs->err), "etcd: %s: a message read faulted: wrong offsets for this build?",
				 cs->node);
		if (!r)
			cs->msg = &cs->msg_buf;
		break;
	case ETCD_P_APPLY_CONF:
		m->in_conf = false;
		r = take_raft_state(s, m, cs);
		break;
	default: /* become* */
		r = take_raft_state(s, m, cs);
		break;
	}
	if (r)
		return r; /* 1: internal, nothing to write */
	return finish_event(s, m, cs, &args, true, unknown_msg_terms, NULL);
}

int etcd_shape_end(void *ctx, struct collect_shape *cs)
{
	struct etcd_shape *s = ctx;

	for (size_t i = 0; i < s->n; i++) {
		struct member *m = &s->m[i];
		if (strcmp(m->name, cs->node) || !m->in_step)
			continue;
		int r = end_step(s, m, cs, "capture-ended");
		return r ? r : 0;
	}
	return 1;
}
