/*
 * The RedisRaft probe set, as data: which functions of a RedisRaft module (built with -g) to
 * probe and what to read there, resolved from the module's DWARF by probes/c/cbin. Return
 * probes are uretprobes whose entry probe stashes the arguments (me, node, req, resp).
 *
 *   function                          site     event (rr_shape.h)
 *   raft_election_start               entry    Timeout (pre-state; args.preVote)
 *   raft_become_precandidate/candidate/leader/follower  return  Become<Role>
 *   raftSendRequestVote (raft.c)      entry    SendRequestVoteRequest (the module's send callback)
 *   raft_recv_requestvote             return   HandleRequestVoteRequest, SendRequestVoteResponse
 *   raft_recv_requestvote_response    return   HandleRequestVoteResponse
 *   raftSendAppendEntries (raft.c)    entry    SendAppendEntriesRequest
 *   raft_recv_appendentries           return   HandleAppendEntriesRequest, SendAppendEntriesResponse
 *   raft_recv_appendentries_response  return   HandleAppendEntriesResponse
 *   raft_recv_entry                   return   ClientRequest
 *   raft_set_commit_idx               calls    AdvanceCommitIndex (args from, to): at its direct
 *                                              call sites (its first instruction would be
 *                                              single-stepped), or its entry if it has others
 *   raft_vote_for_nodeid              return   VoteFor
 *   raft_set_current_term             return   UpdateTerm
 *   raft_append_entry                 entry    (internal: the log's entry terms)
 *   raft_delete_entry_from_idx        entry    (internal: log truncation)
 *   raft_restore_metadata             return   Restart (a restarted node loaded its log and
 *                                              its term and vote: its state before any step)
 *
 * Every event probe reads the node's state first (reads 0..RS_NSTATE-1): current_term,
 * voted_for, commit_idx, state, leader_id, own node id, and the last log index from RedisRaft's
 * own log (me->log is the RedisRaftCtx: log.pages[0], or pages[1] while compacting, ->index).
 */
#ifndef SPECTAP_REDISRAFT_PROBES_H
#define SPECTAP_REDISRAFT_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "uprobe_loader.h"

enum rr_probe_id {
	RR_P_ELECTION = 1,
	RR_P_BECOME_PRECANDIDATE,
	RR_P_BECOME_CANDIDATE,
	RR_P_BECOME_LEADER,
	RR_P_BECOME_FOLLOWER,
	RR_P_SEND_RV,
	RR_P_RECV_RV,
	RR_P_SEND_RVR, /* the response raft_recv_requestvote filled in */
	RR_P_RECV_RVR,
	RR_P_SEND_AE,
	RR_P_RECV_AE,
	RR_P_SEND_AER, /* the response raft_recv_appendentries filled in */
	RR_P_RECV_AER,
	RR_P_RECV_ENTRY,
	RR_P_COMMIT,
	RR_P_VOTE,
	RR_P_TERM,
	RR_P_APPEND,
	RR_P_DELETE,
	RR_P_RESTORE,
	RR_NPROBES = RR_P_RESTORE, /* event probe ids are 1..RR_NPROBES */
	RR_P_STASH_BASE = 100,    /* + the return probe's id: its entry (stash only, no record) */
};

/* The state reads every probe but APPEND and DELETE starts with. */
enum rr_state_read { RS_TERM, RS_VOTED_FOR, RS_COMMIT, RS_STATE, RS_LEADER, RS_SELF, RS_LOG0, RS_LOG1, RS_NSTATE };
#define RS_ARG(i) (RS_NSTATE + (i)) /* the probe's own reads follow */

/*
 * Window markers: the stashing entries of raft_become_candidate, raft_become_leader,
 * raft_recv_requestvote, raft_recv_appendentries and raft_recv_entry also write a record (probe
 * id RR_P_STASH_BASE + the return probe's id): where the call began, and for the two request
 * handlers the request (the first RR_BEGIN_ENTRY_TERMS entry terms of an AppendEntries). Reads
 * 0..RR_BEGIN_MSG_READ-1 are the stash (unused slots read nothing), then the nreads below.
 */
#define RR_BEGIN_MSG_READ 4
#define RR_BEGIN_ENTRY_TERMS 13
struct rr_begin_info {
	uint32_t id;        /* the return probe's id */
	const char *step;   /* the benchmark action the call is (mapping: args.step) */
	unsigned nreads;    /* request reads; the first nfields are named, then entry terms */
	const char *names[8];
	const char *expr[20];
};
/* The marker with that probe id, or NULL. */
const struct rr_begin_info *rr_begin_info(uint32_t probe_id);

/* raft_state_e at the supported commit (deps/raft/include/raft.h). */
const char *rr_role_name(uint64_t state);

struct rr_probe_info {
	uint32_t id;
	const char *func;  /* "raft_recv_entry", or "raft.c:raftSendAppendEntries" */
	const char *kind;  /* the event kind (the shaper may rename) */
	unsigned nargs;    /* reads after the state (or all reads, for APPEND and DELETE) */
	const char *args[12]; /* their names */
};
/* The probe set, indexed by id - 1. */
const struct rr_probe_info *rr_probe_info(uint32_t id);

/* The collector's table (event probes only; every read is shaped by shape.c). */
const struct collect_table *rr_probe_table(void);

/*
 * Resolves every probe in the module's DWARF and attaches it (entry probes, and uretprobes with
 * their stashing entry). Returns the number of probe sites attached, or a negative errno with
 * err naming what is missing: "redisraft.so: no DWARF debug info (build with -g)", "function
 * raftSendAppendEntries ...", "struct raft_server has no field ...". conn_connected (may be
 * NULL): ConnState's CONN_CONNECTED in this build, for the shaper (rr_shape_new).
 */
int rr_probes_attach(struct uprobe_loader *l, const char *module, unsigned *entry_sites, unsigned *ret_sites,
		     int64_t *conn_connected, char *err, size_t errlen);
/* Connection.flags: a connection being torn down is not connected (RedisRaft's redisraft.h
 * defines it; a macro, so not in DWARF). */
#define RR_CONN_TERMINATING 1u

#endif
