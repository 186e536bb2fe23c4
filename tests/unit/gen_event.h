/*
 * Deterministic generator of realistic trace events, shaped like an etcd Raft trace: 3-10 nodes
 * named "1".."N", per-node sequence numbers, timestamps 10-50 us apart, Lamport clocks, a node
 * state record after every step and a message on about 70% of the steps. The same seed always
 * gives the same events (the generator only uses its own PRNG).
 *
 * Usage:
 *	struct gen g;
 *	gen_init(&g, seed);
 *	struct spt_event ev;
 *	if (gen_next(&g, arena, &ev)) ...   // values and the msg live in the arena
 *
 * Node names, kinds and sources point into the generator or to string literals: the events
 * stay valid as long as the generator and the arena do.
 */
#ifndef SPECTAP_TEST_GEN_EVENT_H
#define SPECTAP_TEST_GEN_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "spectap/arena.h"
#include "spectap/event.h"
#include "spectap/value.h"

#define GEN_MAX_NODES 10

enum gen_role { GEN_FOLLOWER, GEN_CANDIDATE, GEN_PRE_CANDIDATE, GEN_LEADER };

struct gen_node {
	uint64_t seq, lamport, term, commit, log;
	int vote; /* 0 = none, else node number */
	enum gen_role role;
};

struct gen {
	uint64_t rng;
	int n_nodes;
	char names[GEN_MAX_NODES][12];
	const char *name_ptrs[GEN_MAX_NODES];
	struct gen_node nodes[GEN_MAX_NODES];
	uint64_t ts_ns;
	uint64_t next_msg_id;
	uint64_t pending_id[GEN_MAX_NODES]; /* last message sent to each node, for its receive */
	uint64_t count;
};

static const char *const gen_kinds[] = {
	"BecomeFollower",
	"BecomeCandidate",
	"BecomePreCandidate",
	"BecomeLeader",
	"SendAppendEntriesRequest",
	"ReceiveAppendEntriesRequest",
	"SendAppendEntriesResponse",
	"ReceiveAppendEntriesResponse",
	"SendRequestVoteRequest",
	"ReceiveRequestVoteRequest",
	"SendRequestVoteResponse",
	"ReceiveRequestVoteResponse",
	"Commit",
	"Ready",
	"ApplyConfChange",
	"ClientRequest",
};
#define GEN_N_KINDS (sizeof(gen_kinds) / sizeof(gen_kinds[0]))

static const char *const gen_role_names[] = { "StateFollower", "StateCandidate",
					      "StatePreCandidate", "StateLeader" };

static inline uint64_t gen_rand(struct gen *g)
{
	/* splitmix64 */
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t gen_below(struct gen *g, uint32_t n) { return (uint32_t)(gen_rand(g) % n); }

static inline void gen_init_nodes(struct gen *g, uint64_t seed, int n_nodes)
{
	memset(g, 0, sizeof(*g));
	g->rng = seed * 0x2545F4914F6CDD1DULL + 1;
	g->n_nodes = n_nodes;
	for (int i = 0; i < n_nodes; i++) {
		snprintf(g->names[i], sizeof(g->names[i]), "%d", i + 1);
		g->name_ptrs[i] = g->names[i];
		g->nodes[i].term = 1;
	}
	g->ts_ns = 1000000000ULL + gen_below(g, 1000000);
	g->next_msg_id = 1;
}

/* 3-10 nodes, chosen by the seed. */
static inline void gen_init(struct gen *g, uint64_t seed)
{
	struct gen tmp;
	tmp.rng = seed * 0x2545F4914F6CDD1DULL + 1;
	int n = 3 + (int)(gen_rand(&tmp) % 8);
	gen_init_nodes(g, seed, n);
}

/* A header describing the generated cluster; points into g. */
static inline void gen_header(struct gen *g, struct spt_header *h)
{
	memset(h, 0, sizeof(*h));
	h->system = "etcd";
	h->system_version = "3.5.9";
	h->nodes = g->name_ptrs;
	h->n_nodes = (size_t)g->n_nodes;
	h->capture_method = "import:etcd-ndjson";
	h->scenario = "gen_event";
	h->has_seed = true;
	h->seed = 42;
	h->clock_realtime_ns = 1700000000000000000ULL;
	h->clock_monotonic_ns = 1000000000ULL;
	h->command_line = "spectap record --gen";
}

#define GEN_REC(a, names, vals) spt_rec((a), (names), (vals), sizeof(names) / sizeof((names)[0]))

static inline spt_val *gen_conf(struct spt_arena *a, int n_nodes)
{
	spt_val *ids[3];
	int k = n_nodes < 3 ? n_nodes : 3;
	static const char *const nm[] = { "1", "2", "3" };
	for (int i = 0; i < k; i++)
		ids[i] = spt_cstr(a, nm[i]);
	spt_val *outer[2];
	outer[0] = spt_seq(a, ids, (size_t)k);
	outer[1] = spt_seq(a, NULL, 0);
	return spt_seq(a, outer, 2);
}

static inline spt_val *gen_state(struct gen *g, struct spt_arena *a, int i)
{
	const struct gen_node *n = &g->nodes[i];
	static const char *const names[] = { "term", "vote", "commit", "role", "log", "conf" };
	spt_val *vals[6];
	vals[0] = spt_int(a, (int64_t)n->term);
	vals[1] = spt_cstr(a, n->vote ? g->names[n->vote - 1] : "0");
	vals[2] = spt_int(a, (int64_t)n->commit);
	vals[3] = spt_cstr(a, gen_role_names[n->role]);
	vals[4] = spt_int(a, (int64_t)n->log);
	vals[5] = gen_conf(a, g->n_nodes);
	return GEN_REC(a, names, vals);
}

static inline spt_val *gen_msg_fields(struct gen *g, struct spt_arena *a, int from, bool reject)
{
	const struct gen_node *n = &g->nodes[from];
	static const char *const names[] = { "term",    "logTerm", "index",     "commit",
					     "entries", "reject",  "rejectHint" };
	spt_val *vals[7];
	uint32_t n_ent = gen_below(g, 4);
	spt_val *ents[3];
	for (uint32_t k = 0; k < n_ent; k++)
		ents[k] = spt_int(a, (int64_t)n->term);
	vals[0] = spt_int(a, (int64_t)n->term);
	vals[1] = spt_int(a, (int64_t)(n->term > 1 ? n->term - gen_below(g, 2) : 1));
	vals[2] = spt_int(a, (int64_t)n->log);
	vals[3] = spt_int(a, (int64_t)n->commit);
	vals[4] = spt_seq(a, ents, n_ent);
	vals[5] = spt_bool(a, reject);
	vals[6] = spt_int(a, reject ? (int64_t)gen_below(g, (uint32_t)n->log + 1) : 0);
	return GEN_REC(a, names, vals);
}

static inline spt_val *gen_args(struct gen *g, struct spt_arena *a, int other)
{
	static const char *const inner_names[] = { "from", "term", "index" };
	spt_val *inner[3];
	inner[0] = spt_cstr(a, g->names[other]);
	inner[1] = spt_int(a, (int64_t)g->nodes[other].term);
	inner[2] = spt_int(a, (int64_t)g->nodes[other].log);
	static const char *const names[] = { "reason", "step", "elapsed" };
	static const char *const reasons[] = { "tick", "campaign", "transferLeader", "propose" };
	spt_val *vals[3];
	vals[0] = spt_cstr(a, reasons[gen_below(g, 4)]);
	vals[1] = GEN_REC(a, inner_names, inner);
	vals[2] = spt_int(a, (int64_t)gen_below(g, 10));
	return GEN_REC(a, names, vals);
}

static inline spt_val *gen_meta(struct gen *g, struct spt_arena *a)
{
	static const char *const names[] = { "line", "file", "level" };
	static const char *const files[] = { "raft.go", "node.go", "log.go" };
	spt_val *vals[3];
	vals[0] = spt_int(a, (int64_t)(g->count * 3 + 17));
	vals[1] = spt_cstr(a, files[gen_below(g, 3)]);
	vals[2] = spt_cstr(a, gen_below(g, 5) ? "debug" : "info");
	return GEN_REC(a, names, vals);
}

static inline const char *gen_msg_type(int kind)
{
	switch (kind) {
	case 4: case 5: return "MsgApp";
	case 6: case 7: return "MsgAppResp";
	case 8: case 9: return "MsgVote";
	case 10: case 11: return "MsgVoteResp";
	case 15: return "MsgProp";
	default: return "MsgHeartbeat";
	}
}

/*
 * The next event. Its values and msg are allocated in a; returns false only when out of memory.
 */
static inline bool gen_next(struct gen *g, struct spt_arena *a, struct spt_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	int i = (int)gen_below(g, (uint32_t)g->n_nodes);
	int other = (i + 1 + (int)gen_below(g, (uint32_t)g->n_nodes - 1)) % g->n_nodes;
	struct gen_node *n = &g->nodes[i];
	int kind;
	/* ~70% of the steps send or receive a message. */
	if (gen_below(g, 10) < 7)
		kind = 4 + (int)gen_below(g, 8);
	else {
		static const int others[] = { 0, 1, 2, 3, 12, 13, 14, 15 };
		kind = others[gen_below(g, 8)];
	}
	switch (kind) {
	case 0: n->role = GEN_FOLLOWER; n->term += gen_below(g, 2); n->vote = 0; break;
	case 1: n->role = GEN_CANDIDATE; n->term++; n->vote = i + 1; break;
	case 2: n->role = GEN_PRE_CANDIDATE; break;
	case 3: n->role = GEN_LEADER; break;
	case 12: if (n->commit < n->log) n->commit += 1 + gen_below(g, (uint32_t)(n->log - n->commit)); break;
	case 15: n->log++; break;
	default: break;
	}
	if (kind == 5 && gen_below(g, 3) == 0)
		n->log++;
	if (n->term < g->nodes[other].term && (kind & 1))
		n->term = g->nodes[other].term;

	g->ts_ns += 10000 + gen_below(g, 40001);
	n->seq++;
	n->lamport++;
	ev->node = g->names[i];
	ev->source = gen_below(g, 4) ? "import" : "bpf";
	ev->seq = n->seq;
	ev->ts_ns = g->ts_ns;
	ev->tid = 1000 + (uint32_t)i * 7 + gen_below(g, 3);
	ev->kind = gen_kinds[kind];

	if (kind >= 4 && kind <= 11) {
		struct spt_msg *m = spt_arena_alloc(a, sizeof(*m));
		if (!m)
			return false;
		memset(m, 0, sizeof(*m));
		bool send = !(kind & 1);
		m->dir = send ? SPT_MSG_SEND : SPT_MSG_RECV;
		m->from = send ? g->names[i] : g->names[other];
		m->to = send ? g->names[other] : g->names[i];
		m->type = gen_msg_type(kind);
		if (send) {
			m->id = g->next_msg_id++;
			g->pending_id[other] = m->id;
		} else {
			m->id = g->pending_id[i];
			g->pending_id[i] = 0;
			uint64_t lo = g->nodes[other].lamport;
			if (lo > n->lamport)
				n->lamport = lo + 1;
		}
		m->fields = gen_msg_fields(g, a, send ? i : other, gen_below(g, 8) == 0);
		if (!m->fields)
			return false;
		ev->msg = m;
	}
	ev->lamport = n->lamport;
	if (gen_below(g, 4) == 0 && !(ev->args = gen_args(g, a, other)))
		return false;
	if (gen_below(g, 6) == 0 && !(ev->meta = gen_meta(g, a)))
		return false;
	ev->state = gen_state(g, a, i);
	g->count++;
	return ev->state != NULL;
}

#endif
