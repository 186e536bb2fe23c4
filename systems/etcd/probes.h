/*
 * The etcd probe set, as data: which raft functions of Debian's etcd 3.4.23 to probe, where,
 * and what to read there. Offsets are those tests/go/offsets/run.sh prints for that build.
 *
 *   probe                         site       reads
 *   (*raft).become{Follower,...}  every RET  raft state (receiver in its spill slot, rsp+8)
 *   (*raft).send                  entry      raft state (rax) + the message (stack, rsp+8)
 *   (*raft).Step                  entry      raft state (rax) + the message: a step begins,
 *                                            and the member's previous step has ended
 *   (*raft).tickElection,         entry      raft state (rax): the previous step has ended
 *     (*raft).tickHeartbeat
 *   (*raftLog).append             entry      the appended entries: first index, count, terms
 *   (*raftLog).commitTo           entry      the commit index asked for and the current one;
 *                                            only with ETCD_PROBE_VERIFY (below)
 *   (*raft).applyConfChange       entry      raft state (rax): the previous step has ended
 *   (*raft).applyConfChange       every RET  raft state (the receiver, kept in the frame at
 *                                            rsp-232 when the RET runs)
 *   (*raft).Step                  every RET  raft state (spill slot rsp+368) + the message;
 *                                            only with ETCD_PROBE_VERIFY (below)
 *
 * A step's post-state is read at the member's next boundary (the entry of its next Step, tick
 * or applyConfChange), not at Step's own RETs: raft's state changes only on the goroutine
 * that runs node.run, and between a Step's return and those calls it changes nothing the trace
 * keeps (docs/etcd.md). A RET is single-stepped (about 3x an emulated entry, bench/RESULTS.md)
 * and Step returns once per message handled; the ticks add ten hits a second per member. A
 * step's Commit is the rise of the commit index the next state read shows (commitTo is the
 * only writer of raftLog.committed within a step), which saves commitTo's hits.
 *
 * Entry probes sit on the jbe of Go's stack check when the function starts with one (the
 * arguments are still in place there, and the kernel emulates a conditional jump instead of
 * single-stepping the first instruction).
 *
 * What the reads mean is the shaper's business (shape.h): it keeps each member's state and
 * writes events in etcd-io/raft's trace vocabulary.
 */
#ifndef SPECTAP_ETCD_PROBES_H
#define SPECTAP_ETCD_PROBES_H

#include <stddef.h>

#include "collect.h"

enum etcd_probe_id {
	ETCD_P_BECOME_FOLLOWER = 10,
	ETCD_P_BECOME_CANDIDATE = 20,
	ETCD_P_BECOME_PRECANDIDATE = 30,
	ETCD_P_BECOME_LEADER = 40,
	ETCD_P_SEND = 50,
	ETCD_P_STEP = 60,
	ETCD_P_APPEND = 70,
	ETCD_P_COMMIT_TO = 80,
	ETCD_P_STEP_BEGIN = 90,
	ETCD_P_APPLY_CONF = 100,
	ETCD_P_TICK = 110,
	ETCD_P_APPLY_CONF_BEGIN = 120,
};
#define ETCD_NPROBES 12 /* probe ids are 10, 20, ..., 10 * ETCD_NPROBES */

/* Reads of the raft-state probes (become*, send, Step): raft state first, then the message
 * (send and Step only). */
enum etcd_raft_read {
	ER_ID, ER_TERM, ER_VOTE, ER_STATE, ER_LEAD, ER_COMMIT,
	ER_UNSTABLE_OFFSET, ER_UNSTABLE_LEN, ER_STORAGE_LEN, ER_STORAGE_FIRST,
	ER_NSTATE,
	EM_TYPE = ER_NSTATE, EM_TO, EM_FROM, EM_TERM, EM_LOGTERM, EM_INDEX, EM_NENTRIES,
	EM_ENTRY0_TERM, EM_ENTRY_TERMS, EM_COMMIT, EM_REJECT, EM_REJECT_HINT,
	ER_NREADS,
};

/* Entry probes sit on the jbe of Go's stack check and read the flags there last: when the jump
 * is taken (CF or ZF set), runtime.morestack grows the stack or preempts the goroutine, and the
 * call runs again from its entry: that first hit is no call. The index of that read: */
#define ETCD_FLAG_CF 0x1u
#define ETCD_FLAG_ZF 0x40u
int etcd_flags_read(uint32_t probe_id); /* -1: the probe has none (a RET probe) */

/* Reads of (*raftLog).append: the entries appended. */
enum etcd_append_read { EA_COUNT, EA_FIRST_INDEX, EA_FIRST_TERM, EA_TERMS, EA_DATA_LEN, EA_DATA, EA_NREADS };

/* Reads of (*raftLog).commitTo. */
enum etcd_commit_read { EC_TO, EC_OLD, EC_NREADS };

/* raftpb.MessageType / raft.StateType names by value, or NULL. */
const char *etcd_msg_type_name(uint64_t t);
const char *etcd_role_name(uint64_t s);

/* The collector's table for the probes etcd_probes_attach attaches. */
const struct collect_table *etcd_probe_table(void);

/* One line per probe site kind and function, for --json summaries and tests. */
struct etcd_probe_sites {
	unsigned entry;        /* at a function's first instruction (single-stepped) */
	unsigned entry_branch; /* entry probes at the stack check's jbe (emulated: cheaper) */
	unsigned ret;          /* at RET instructions */
};

/* ETCD_PROBE_VERIFY: also Step's RETs and commitTo, so that the shaper compares the post-state
 * read there with the one read at the next boundary, and each Commit with commitTo's index
 * (etcd_shape_stats' verify_*), for tests; costs those hits. */
#define ETCD_PROBE_VERIFY 1u

/*
 * Checks that the binary is the build the offsets are for (refusing another one, by name and
 * version), finds each probed function's sites in its .gopclntab and attaches the probes.
 * Returns the number of probe sites attached (sites, if not NULL, split by kind), or a
 * negative errno with err filled.
 */
int etcd_probes_attach(struct uprobe_loader *l, const char *etcd_path, unsigned flags, struct etcd_probe_sites *sites,
		       char *err, size_t errlen);

#endif
