/*
 * The etcd shaper: turns the raw reads of the etcd probe set (probes.h) into events in
 * etcd-io/raft's trace vocabulary, each with the member's whole state after the step.
 *
 * It keeps, per member, the last raft state read and the log as a sequence of entry terms: the
 * raft-state probes give term, vote, role, lead, commit and the last log index; every append
 * (*raftLog).append gives the appended entries' first index, count, first term and last 8
 * terms (terms never decrease along a raft log, so the middle of a longer append is known
 * when its first and 8th-from-last terms agree; otherwise those terms are unknown, written as
 * 0 and counted in the event's meta.logTermsUnknown). Member ids become node names as soon as
 * a member's own probe reveals its id; an id never seen stays hex.
 *
 * Events:
 *   BecomeFollower, BecomeCandidate, BecomePreCandidate, BecomeLeader   (post-state)
 *   Send<X>       a message appended to the member's outbox by (*raft).send
 *   Receive<X>    a message from another member, after (*raft).Step handled it (the state
 *                 read at the member's next boundary: its next Step, tick or applyConfChange)
 *       X: AppendEntriesRequest (MsgApp, MsgHeartbeat, MsgSnap), AppendEntriesResponse
 *       (MsgAppResp, MsgHeartbeatResp), RequestVoteRequest (MsgVote, MsgPreVote),
 *       RequestVoteResponse (MsgVoteResp, MsgPreVoteResp), Message (any other type)
 *   Step<T>       a local message handled by Step (T = the type without "Msg": Hup, Beat,
 *                 Prop, CheckQuorum, ReadIndex, Unreachable, SnapStatus, TransferLeader)
 *   Replicate     the leader appended entries to its log (args index, entries, dataLen, data)
 *   Commit        the commit index advanced within a step (args tocommit): written before the
 *                 event whose state read first shows it
 *   ApplyConfChange  a configuration change applied (at bootstrap, and as committed)
 *   StepUnfinished   the end of a step whose post-state was never read: the member's process
 *                 ended (killed, or the capture ended) before its next boundary. What the
 *                 Receive<X>/Step<T> event would have had but the state (none): args, the
 *                 message received; meta.unfinished = "restarted" (a new process of the member
 *                 came first) or "capture-ended".
 *
 * State record: id (member id, hex), term, vote, commit, role, lead, log (last index), logTerm
 * (its term), logTerms (the entry terms, the last max_log_terms of them; logTermsFrom is the
 * index of the first one held when the log is longer). vote/lead: node names, "0" for none.
 * Message fields: term, entries (count), logTerm, index, commit, reject, rejectHint, and
 * entryTerms when every entry's term is known.
 */
#ifndef SPECTAP_ETCD_SHAPE_H
#define SPECTAP_ETCD_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "probes.h"

struct etcd_shape;

struct etcd_shape_stats {
	uint64_t unknown_terms;  /* log entries whose term could not be read */
	uint64_t restarts_cut;   /* log entries dropped because a member came back with a shorter log */
	uint64_t probes_seen[ETCD_NPROBES]; /* records per probe (index = probe id / 10 - 1), for the coverage check */
	uint64_t reentries;       /* entry-probe records dropped as a re-run of the prologue after
				   * the goroutine's stack grew (morestack), not a second call */
	uint64_t unfinished;      /* StepUnfinished events */
	/* ETCD_PROBE_VERIFY: steps whose state at Step's RET was compared with the one at the next
	 * boundary, those that differed, and the first difference. */
	uint64_t verify_compared, verify_mismatched, verify_no_ret;
	char verify_first[256], verify_first_no_ret[256];
	uint64_t commits;         /* Commit events: the commit index rose within a step */
	/* ETCD_PROBE_VERIFY: the commits (*raftLog).commitTo raised, the Commit events that
	 * followed one, those whose index differs from commitTo's, the first such. */
	uint64_t verify_commit_tos, verify_commits, verify_commits_differ;
	char verify_first_commit[256];
};

/* max_log_terms: 0 = the whole log. */
int etcd_shape_new(struct etcd_shape **out, size_t max_log_terms);
void etcd_shape_free(struct etcd_shape *s);
const struct etcd_shape_stats *etcd_shape_stats(const struct etcd_shape *s);

/* A member's state after its last event, as the trace has it (ids raw). */
struct etcd_member_view {
	uint64_t id, term, vote, commit, lead, last_index;
	const char *role;
};
/* 0 with *v filled, or -ENOENT when the node had no event. */
int etcd_shape_member(const struct etcd_shape *s, const char *node, struct etcd_member_view *v);

/* The collect_shape_fn: ctx is the struct etcd_shape. */
int etcd_shape_event(void *ctx, struct collect_shape *cs);
/* collect_opts.shape_end: the StepUnfinished event of a member whose last step is still open. */
int etcd_shape_end(void *ctx, struct collect_shape *cs);

#endif
