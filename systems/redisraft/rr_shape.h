/*
 * The RedisRaft shaper: turns the raw reads of the probe set (rr_probes.h) into events in the
 * RedisRaft trace vocabulary (SysMoBench's RedisRaft dialect), each with the node's state after
 * the step:
 *   state: term, role (Follower, PreCandidate, Candidate, Leader), votedFor ("" = none, else
 *          "s<id>"), commitIndex, lastLogIndex, lastLogTerm, leaderId ("" = none), logTerms
 *          (the terms of the last max_log_terms entries, logTermsFrom the index of the first)
 * Entry terms come from raft_append_entry (index = last index + 1) and truncations from
 * raft_delete_entry_from_idx; entries the node had before the capture (a restart loads its
 * log from disk) have unknown terms, written as 0 and counted.
 *
 * Messages: Send<X> and Handle<X> with X in RequestVoteRequest, RequestVoteResponse,
 * AppendEntriesRequest, AppendEntriesResponse, type X, from/to node names and the fields the
 * wire carries (RAFT.REQUESTVOTE / RAFT.AE and their replies), so that a send and its handling
 * have the same content and the collector pairs them. Pre-vote messages have prevote = TRUE.
 * A SendRequestVoteRequest or SendAppendEntriesRequest to a peer RedisRaft is not connected to
 * (its callback returns before sending) has no message and args.connected = FALSE.
 * Role changes: Timeout (raft_election_start: args.preVote), BecomePreCandidate,
 * BecomeCandidate, BecomeLeader, BecomeFollower; ClientRequest (raft_recv_entry: args entryTerm,
 * type, entryId; the entry's index is the state's lastLogIndex), AdvanceCommitIndex (args from, to), VoteFor, UpdateTerm.
 *
 * Steps: the first event after a window marker (rr_probes.h) of raft_become_candidate,
 * raft_become_leader, raft_recv_requestvote, raft_recv_appendentries or raft_recv_entry has
 * args.step (BecomeCandidate, BecomeLeader, RecvRequestVote, RecvAppendEntries, LogAppend),
 * args.stepBegin = TRUE and, for the two request handlers, args.stepMsg: the request's fields
 * (prevote, term, candidateId, lastLogIdx, lastLogTerm; or term, leaderId, msgId, prevLogIdx,
 * prevLogTerm, leaderCommit, nEntries and entryTerms, the first 13 entries' terms). The call's
 * return event (HandleRequestVoteRequest, ...) ends the step (systems/redisraft/spec/).
 */
#ifndef SPECTAP_REDISRAFT_SHAPE_H
#define SPECTAP_REDISRAFT_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "rr_probes.h"

struct rr_shape;

struct rr_shape_stats {
	uint64_t probes_seen[RR_NPROBES + 1]; /* records per probe id */
	uint64_t unknown_terms;               /* log entries whose term was not seen */
	uint64_t begins_seen;                 /* window markers (rr_probes.h) */
	uint64_t sends_unconnected;           /* Send*Request events with no message (peer not connected) */
};

int rr_shape_new(struct rr_shape **out, size_t max_log_terms);
/* ConnState's CONN_CONNECTED in the module probed (rr_probes_attach): until it is set, every
 * send is taken as made. */
void rr_shape_set_conn_connected(struct rr_shape *s, int64_t conn_connected);
void rr_shape_free(struct rr_shape *s);
const struct rr_shape_stats *rr_shape_stats(const struct rr_shape *s);

/* A node's state after its last event. -ENOENT when it had none. */
struct rr_node_view {
	int64_t term, voted_for, commit, leader, last_index, last_term;
	uint64_t state;
};
int rr_shape_node(const struct rr_shape *s, const char *node, struct rr_node_view *v);

/* The collect_shape_fn (ctx: the struct rr_shape). */
int rr_shape_event(void *ctx, struct collect_shape *cs);

#endif
