---- MODULE RedisRaft ----
(***************************************************************************)
(* RedisRaft's raft core (deps/raft of RedisLabs/redisraft at 5945c02, the *)
(* version docs/systems/redisraft.md names), one action per call spectap   *)
(* captures as a step, written from raft_server.c: raft_election_start,    *)
(* raft_become_precandidate, raft_become_candidate, raft_become_leader,    *)
(* raft_recv_requestvote, raft_recv_appendentries, raft_recv_entry, and    *)
(* raft_set_current_term, raft_accept_leader, raft_become_follower, which  *)
(* they call; and a restart (raft_restore_metadata).                       *)
(*                                                                         *)
(* The variables are what `spectap record redisraft` observes of a node    *)
(* after every step: term, vote, role, leader, commit index and the log as *)
(* the sequence of its entries' terms (logLen and logLastTerm repeat its   *)
(* length and last term: SysMoBench's abstraction of logs). Values are the *)
(* trace's: nodes are "s1".."sN", None is "", roles are RedisRaft's state  *)
(* names.                                                                  *)
(*                                                                         *)
(* Not observed, so not variables: the votes a (pre-)candidate counted,    *)
(* the election timer, the leader's per-node progress, msg ids, snapshots  *)
(* and the configuration (who votes). Where a step depends on them, the    *)
(* action allows every outcome some value of them allows: BecomeCandidate  *)
(* and BecomeLeader do not check that a quorum granted its vote (the       *)
(* caller, raft_recv_requestvote_response, counted it). Responses are not  *)
(* checked either: a window's state is the nodes', not the network's.      *)
(* Snapshots are not modelled: the log is taken to start at index 1        *)
(* (RedisRaft compacts its log only past the scenarios' sizes).            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Server,  \* the nodes' names, e.g. {"s1", "s2", "s3"}
          None     \* no node: ""

VARIABLES currentTerm,  \* [Server -> Nat]                me->current_term
          votedFor,     \* [Server -> Server \cup {None}] me->voted_for
          state,        \* [Server -> role]               me->state
          leaderId,     \* [Server -> Server \cup {None}] me->leader_id
          commitIndex,  \* [Server -> Nat]                me->commit_idx
          log,          \* [Server -> Seq(Nat)]           the entries' terms, index 1 first
          logLen,       \* [Server -> Nat]                Len(log[i])
          logLastTerm   \* [Server -> Nat]                the last entry's term, 0 if none

vars == <<currentTerm, votedFor, state, leaderId, commitIndex, log, logLen, logLastTerm>>

Roles == {"Follower", "PreCandidate", "Candidate", "Leader"}
Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b
LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)]

Init ==
    /\ currentTerm = [i \in Server |-> 0]
    /\ votedFor = [i \in Server |-> None]
    /\ state = [i \in Server |-> "Follower"]
    /\ leaderId = [i \in Server |-> None]
    /\ commitIndex = [i \in Server |-> 0]
    /\ log = [i \in Server |-> <<>>]
    /\ logLen = [i \in Server |-> 0]
    /\ logLastTerm = [i \in Server |-> 0]

\* i's log becomes l; its two abstractions follow.
SetLog(i, l) ==
    /\ log' = [log EXCEPT ![i] = l]
    /\ logLen' = [logLen EXCEPT ![i] = Len(l)]
    /\ logLastTerm' = [logLastTerm EXCEPT ![i] = LastTerm(l)]

\* raft_become_candidate: a new term, its own vote, no leader.
Candidacy(i) ==
    /\ currentTerm' = [currentTerm EXCEPT ![i] = currentTerm[i] + 1]
    /\ votedFor' = [votedFor EXCEPT ![i] = i]
    /\ leaderId' = [leaderId EXCEPT ![i] = None]
    /\ state' = [state EXCEPT ![i] = "Candidate"]
    /\ UNCHANGED <<commitIndex, log, logLen, logLastTerm>>

(***************************************************************************)
(* raft_periodic -> raft_election_start(me, 0): a node that is not the     *)
(* leader and whose timer ran out forgets its leader and becomes a         *)
(* pre-candidate (its term unchanged; it asks for pre-votes for term + 1). *)
(* With skip_precandidate (a leadership transfer's timeout_now) it becomes *)
(* a candidate at once.                                                    *)
(***************************************************************************)
ElectionTimeout(i) ==
    /\ state[i] # "Leader"
    /\ \/ /\ state' = [state EXCEPT ![i] = "PreCandidate"]
          /\ leaderId' = [leaderId EXCEPT ![i] = None]
          /\ UNCHANGED <<currentTerm, votedFor, commitIndex, log, logLen, logLastTerm>>
       \/ Candidacy(i)

\* raft_recv_requestvote_response: a pre-candidate that a quorum pre-voted for.
BecomeCandidate(i) ==
    /\ state[i] = "PreCandidate"
    /\ Candidacy(i)

(***************************************************************************)
(* raft_become_leader: a candidate that a quorum voted for appends a no-op *)
(* entry of its term and leads. RAFT.CLUSTER INIT makes the first node     *)
(* leader the same way, from a follower alone in its configuration with    *)
(* an empty log (term 1 set just before).                                  *)
(***************************************************************************)
BecomeLeader(i) ==
    /\ \/ state[i] = "Candidate"
       \/ state[i] = "Follower" /\ log[i] = <<>> /\ currentTerm[i] = 1
    /\ state' = [state EXCEPT ![i] = "Leader"]
    /\ leaderId' = [leaderId EXCEPT ![i] = i]
    /\ SetLog(i, Append(log[i], currentTerm[i]))
    /\ UNCHANGED <<currentTerm, votedFor, commitIndex>>

\* raft_recv_entry on the leader: the entry gets its term and is appended.
LogAppend(i) ==
    /\ state[i] = "Leader"
    /\ SetLog(i, Append(log[i], currentTerm[i]))
    /\ UNCHANGED <<currentTerm, votedFor, state, leaderId, commitIndex>>

(***************************************************************************)
(* raft_recv_requestvote(i, m), m = [prevote, term, candidate, lastLogIdx, *)
(* lastLogTerm]. A real vote request of a higher term first moves i to     *)
(* that term as a follower with no vote and no leader. The vote is granted *)
(* when i is in the request's term, has not voted for another, and the     *)
(* candidate's log is at least as up to date; a granted real vote records  *)
(* it and forgets the leader. A pre-vote changes nothing (whether it is    *)
(* granted, and the refusal while a leader is known, show only in the      *)
(* response).                                                              *)
(***************************************************************************)
UpToDate(i, m) ==
    \/ m.lastLogTerm > LastTerm(log[i])
    \/ m.lastLogTerm = LastTerm(log[i]) /\ m.lastLogIdx >= Len(log[i])

RecvRequestVote(i, m) ==
    LET higher == ~m.prevote /\ currentTerm[i] < m.term
        term == IF higher THEN m.term ELSE currentTerm[i]
        vote == IF higher THEN None ELSE votedFor[i]
        lead == IF higher THEN None ELSE leaderId[i]
        grant == ~m.prevote /\ term = m.term /\ vote \in {None, m.candidate} /\ UpToDate(i, m)
    IN /\ currentTerm' = [currentTerm EXCEPT ![i] = term]
       /\ votedFor' = [votedFor EXCEPT ![i] = IF grant THEN m.candidate ELSE vote]
       /\ state' = [state EXCEPT ![i] = IF higher THEN "Follower" ELSE state[i]]
       /\ leaderId' = [leaderId EXCEPT ![i] = IF grant THEN None ELSE lead]
       /\ UNCHANGED <<commitIndex, log, logLen, logLastTerm>>

(***************************************************************************)
(* raft_recv_appendentries(i, m), m = [term, leader, prevLogIdx,           *)
(* prevLogTerm, leaderCommit, entries] (entries: their terms). A request   *)
(* of an older term changes nothing. Otherwise i takes the request's term  *)
(* (its vote cleared if the term is new), follows m.leader, and checks     *)
(* the entry before the new ones: none there (the log is too short) fails; *)
(* another term there fails and cuts the log before it. On success the     *)
(* entries are merged (the first whose term differs from the log's cuts    *)
(* the log there; entries already held are kept, and so is what follows    *)
(* them) and the commit index moves up to leaderCommit, bounded by the     *)
(* last index (at least 1).                                                *)
(***************************************************************************)
RECURSIVE Merge(_, _, _)
Merge(l, p, e) ==
    IF e = <<>> THEN l
    ELSE IF p + 1 > Len(l) THEN l \o e
    ELSE IF l[p + 1] # Head(e) THEN SubSeq(l, 1, p) \o e
    ELSE Merge(l, p + 1, Tail(e))

RecvAppendEntries(i, m) ==
    IF m.term < currentTerm[i]
    THEN UNCHANGED vars
    ELSE LET l == log[i]
             p == m.prevLogIdx
             match == p = 0 \/ (p <= Len(l) /\ l[p] = m.prevLogTerm)
             cut == p > 0 /\ p <= Len(l) /\ l[p] # m.prevLogTerm
             new == IF match THEN Merge(l, p, m.entries)
                    ELSE IF cut THEN SubSeq(l, 1, p - 1) ELSE l
         IN /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
            /\ votedFor' = [votedFor EXCEPT ![i] = IF m.term > currentTerm[i] THEN None ELSE votedFor[i]]
            /\ state' = [state EXCEPT ![i] = "Follower"]
            /\ leaderId' = [leaderId EXCEPT ![i] = m.leader]
            /\ SetLog(i, new)
            /\ commitIndex' = [commitIndex EXCEPT ![i] =
                   IF match /\ commitIndex[i] < m.leaderCommit
                   THEN Min(Max(Len(new), 1), m.leaderCommit) ELSE commitIndex[i]]

(***************************************************************************)
(* A node killed and started again on its directory (raft_restore_metadata *)
(* after the log is loaded): the term and vote it persisted before every   *)
(* change and the log it wrote stay; it is a follower with no leader and   *)
(* commit index 0 (RedisRaft does not persist it).                         *)
(***************************************************************************)
Restart(i) ==
    /\ state' = [state EXCEPT ![i] = "Follower"]
    /\ leaderId' = [leaderId EXCEPT ![i] = None]
    /\ commitIndex' = [commitIndex EXCEPT ![i] = 0]
    /\ UNCHANGED <<currentTerm, votedFor, log, logLen, logLastTerm>>

(***************************************************************************)
(* The requests a node may receive, for Next (a window check is given its  *)
(* request by the mapping): those its peers' current states would send.    *)
(***************************************************************************)
VoteRequests(i) ==
    {[prevote |-> pv, term |-> currentTerm[j] + (IF pv THEN 1 ELSE 0), candidate |-> j,
      lastLogIdx |-> Len(log[j]), lastLogTerm |-> LastTerm(log[j])] :
        j \in Server \ {i}, pv \in BOOLEAN}
AppendRequests(i) ==
    UNION {{[term |-> currentTerm[j], leader |-> j, prevLogIdx |-> p,
             prevLogTerm |-> IF p = 0 THEN 0 ELSE log[j][p], leaderCommit |-> commitIndex[j],
             entries |-> SubSeq(log[j], p + 1, Len(log[j]))] : p \in 0..Len(log[j])} :
           j \in {k \in Server \ {i} : state[k] = "Leader"}}

Next ==
    \E i \in Server :
        \/ ElectionTimeout(i) \/ BecomeCandidate(i) \/ BecomeLeader(i) \/ LogAppend(i) \/ Restart(i)
        \/ \E m \in VoteRequests(i) : RecvRequestVote(i, m)
        \/ \E m \in AppendRequests(i) : RecvAppendEntries(i, m)

Spec == Init /\ [][Next]_vars
=============================================================================
