---- MODULE NatsRaft ----
(***************************************************************************)
(* NATS JetStream's Raft (nats-server 2.9, server/raft.go as Debian ships *)
(* it), written from the code at the granularity of the steps             *)
(* systems/nats/system.yaml probes: one action per step of one node.      *)
(* Where the code departs from textbook Raft the spec follows the code,   *)
(* and says so:                                                            *)
(*  - a vote response carries the voter's term from before the request    *)
(*    raised it (processVoteRequest builds it first);                      *)
(*  - a vote is granted when the candidate's last term and last index are *)
(*    both at least the voter's (not the usual lexicographic order);       *)
(*  - a candidate votes for itself when it sends its requests, not when   *)
(*    it becomes a candidate;                                              *)
(*  - a follower whose log does not match resets its term to its last     *)
(*    entry's term;                                                        *)
(*  - stepping down on a higher term is queued: the role changes in a     *)
(*    later BecomeFollower step, not in the step that saw the term.       *)
(* The log holds each index's term (a NATS log index is one append entry, *)
(* of any number of proposals); catchup the catchup a follower is in (the *)
(* term and index it waits for, <<>> for none). Hidden (not in the trace): *)
(* which peers acknowledged which index, the timers (a catchup that       *)
(* stalled), the leader's catchup goroutines.                               *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, Bags

CONSTANTS Server

VARIABLES term, vote, role, leader, commit, log, msgs, votes, catchup

vars == <<term, vote, role, leader, commit, log, msgs, votes, catchup>>

Nil == ""
Quorum == Cardinality(Server) \div 2 + 1
LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)]

\* Messages as the trace gives them: [from, to, type, fields].
Msg(f, t, type, fields) == [from |-> f, to |-> t, type |-> type, fields |-> fields]
Send(m) == msgs' = msgs (+) SetToBag({m})
Reply(m, r) == msgs' = (msgs (-) SetToBag({m})) (+) SetToBag({r})
Drop(m) == msgs' = msgs (-) SetToBag({m})
Broadcast(i, type, fields) ==
    msgs' = msgs (+) [x \in {Msg(i, j, type, fields) : j \in Server \ {i}} |-> 1]

Init ==
    /\ term = [i \in Server |-> 0]
    /\ vote = [i \in Server |-> Nil]
    /\ role = [i \in Server |-> "Follower"]
    /\ leader = [i \in Server |-> Nil]
    /\ commit = [i \in Server |-> 0]
    /\ log = [i \in Server |-> <<>>]
    /\ msgs = EmptyBag
    /\ votes = [i \in Server |-> {}]
    /\ catchup = [i \in Server |-> <<>>]

(***************************************************************************)
(* switchToCandidate: the election timer of a follower or a candidate.     *)
(* (An observer or paused node returns without a change.)                   *)
(***************************************************************************)
BecomeCandidate(i) ==
    \/ /\ role[i] # "Leader"
       /\ term' = [term EXCEPT ![i] = @ + 1]
       /\ role' = [role EXCEPT ![i] = "Candidate"]
       /\ leader' = [leader EXCEPT ![i] = Nil]
       /\ UNCHANGED <<vote, commit, log, msgs, votes, catchup>>
    \/ UNCHANGED vars

(***************************************************************************)
(* requestVote: a candidate votes for itself and asks every other server. *)
(***************************************************************************)
RequestVote(i) ==
    \/ /\ role[i] = "Candidate"
       /\ vote' = [vote EXCEPT ![i] = i]
       /\ Broadcast(i, "VoteRequest", [term |-> term[i], lastTerm |-> LastTerm(log[i]),
                                        lastIndex |-> Len(log[i]), candidate |-> i])
       /\ UNCHANGED <<term, role, leader, commit, log, votes, catchup>>
    \/ /\ role[i] # "Candidate"
       /\ UNCHANGED vars

(***************************************************************************)
(* processVoteRequest.                                                      *)
(***************************************************************************)
HandleVoteRequest(i, m) ==
    /\ BagIn(m, msgs)
    /\ m.type = "VoteRequest" /\ m.to = i
    /\ LET r == m.fields
           newer == r.term > term[i]
           t == IF newer THEN r.term ELSE term[i]
           v == IF newer THEN Nil ELSE vote[i]
           grant == r.term >= term[i] /\ (v = Nil \/ v = r.candidate)
                    /\ r.lastTerm >= LastTerm(log[i]) /\ r.lastIndex >= Len(log[i])
       IN /\ term' = [term EXCEPT ![i] = t]
          /\ vote' = [vote EXCEPT ![i] = IF grant THEN r.candidate ELSE v]
          /\ Reply(m, Msg(i, m.from, "VoteResponse", [term |-> term[i], granted |-> grant]))
    /\ UNCHANGED <<role, leader, commit, log, votes, catchup>>

(***************************************************************************)
(* switchToLeader: a candidate with a quorum of granted responses          *)
(* (votes: the servers whose granted responses it received since it asked; *)
(* the trace's receives give them).                                         *)
(***************************************************************************)
BecomeLeader(i) ==
    /\ role[i] = "Candidate"
    /\ Cardinality(votes[i] \cup {i}) >= Quorum
    /\ role' = [role EXCEPT ![i] = "Leader"]
    /\ leader' = [leader EXCEPT ![i] = i]
    /\ UNCHANGED <<term, vote, commit, log, msgs, votes, catchup>>

(***************************************************************************)
(* switchToFollower(l): the queued step down, or a leader's own.           *)
(***************************************************************************)
BecomeFollower(i, l) ==
    /\ role' = [role EXCEPT ![i] = "Follower"]
    /\ leader' = [leader EXCEPT ![i] = l]
    /\ UNCHANGED <<term, vote, commit, log, msgs, votes, catchup>>

(***************************************************************************)
(* sendAppendEntry: a leader's append of k proposals as one index (k > 0),  *)
(* or a heartbeat (k = 0), to every other server.                          *)
(***************************************************************************)
AppendFields(i, k) == [term |-> term[i], commit |-> commit[i], prevTerm |-> LastTerm(log[i]),
                       prevIndex |-> Len(log[i]), entries |-> k]
SendAppendEntries(i, k) ==
    /\ k > 0
    /\ log' = [log EXCEPT ![i] = Append(@, term[i])]
    /\ Broadcast(i, "AppendEntries", AppendFields(i, k))
    /\ UNCHANGED <<term, vote, role, leader, commit, votes, catchup>>
SendHeartbeat(i) ==
    /\ Broadcast(i, "AppendEntries", AppendFields(i, 0))
    /\ UNCHANGED <<term, vote, role, leader, commit, log, votes, catchup>>

(***************************************************************************)
(* processAppendEntry: of a message on the group's subject (isNew), or of *)
(* an entry the leader sends to the catchup inbox the node named (a       *)
(* catchup entry: stored entries, acknowledged to the leader's inbox).    *)
(* The cases in the code's order; c is the catchup after its check (<<>>  *)
(* once the node has what it waited for), t, v, l the term, vote and      *)
(* leader after the term checks.                                           *)
(***************************************************************************)
Response(i, m, t, idx, ok) == Msg(i, m.from, "AppendEntriesResponse", [term |-> t, index |-> idx, success |-> ok])

Set(i, t, v, l, c) ==
    /\ term' = [term EXCEPT ![i] = t]
    /\ vote' = [vote EXCEPT ![i] = v]
    /\ leader' = [leader EXCEPT ![i] = l]
    /\ catchup' = [catchup EXCEPT ![i] = c]

\* storeToWAL, the commits the leader's commit index allows (applyCommit stops at the first
\* index it cannot load), and the success response.
Store(i, m, t, v, l, c) ==
    LET a == m.fields
        nl == IF a.entries > 0 THEN Append(log[i], a.term) ELSE log[i]
    IN /\ Set(i, t, v, l, c)
       /\ log' = [log EXCEPT ![i] = nl]
       /\ commit' = [commit EXCEPT ![i] = IF a.commit > @ /\ Len(nl) > @
                                          THEN IF a.commit <= Len(nl) THEN a.commit ELSE Len(nl)
                                          ELSE @]
       /\ Reply(m, Response(i, m, LastTerm(nl), Len(nl), TRUE))

\* After the term and catchup checks: the log matching and the append.
AppendMatching(i, m, new, t, v, l, c) ==
    LET a == m.fields
        lg == log[i]
    IN IF a.prevTerm # LastTerm(lg) \/ a.prevIndex # Len(lg) THEN
          IF a.prevIndex < Len(lg) THEN
             \* An older index. The entry stored there is loaded and compared by the term before
             \* it (its own prevTerm): if the leader's is newer the log is cut back to that index
             \* and takes the leader's term there (and a catchup ends); else the node only takes
             \* the leader's prevTerm as its last term. Index 0 cannot be loaded: nothing changes.
             IF a.prevIndex = 0 THEN
                /\ Set(i, t, v, l, c)
                /\ UNCHANGED <<log, commit>>
                /\ Reply(m, Response(i, m, a.prevTerm, a.prevIndex, FALSE))
             ELSE
                LET before == IF a.prevIndex = 1 THEN 0 ELSE lg[a.prevIndex - 1]
                    cut == a.prevTerm > before
                IN /\ Set(i, t, v, l, IF cut THEN <<>> ELSE c)
                   /\ log' = [log EXCEPT ![i] = IF cut THEN Append(SubSeq(lg, 1, a.prevIndex - 1), a.prevTerm)
                                                ELSE Append(SubSeq(lg, 1, Len(lg) - 1), a.prevTerm)]
                   /\ UNCHANGED commit
                   /\ Reply(m, Response(i, m, a.prevTerm, a.prevIndex, ~cut))
          ELSE IF c # <<>> THEN
             \* A catchup entry that does not follow the log: at the same index the log takes its
             \* prevTerm; else (a snapshot and peer state expected first) the catchup ends.
             /\ Set(i, t, v, l, <<>>)
             /\ log' = [log EXCEPT ![i] = IF a.prevIndex = Len(lg) THEN Append(SubSeq(lg, 1, Len(lg) - 1), a.prevTerm)
                                          ELSE @]
             /\ UNCHANGED commit
             /\ Drop(m)
          ELSE IF a.prevIndex > Len(lg) THEN
             \* Behind: the term goes back to the last entry's, and a catchup starts (from the
             \* leader's prevTerm and prevIndex).
             /\ Set(i, LastTerm(lg), v, l, <<a.prevTerm, a.prevIndex>>)
             /\ UNCHANGED <<log, commit>>
             /\ Reply(m, Response(i, m, LastTerm(lg), Len(lg), FALSE))
          ELSE
             \* Same index, another term: the term goes back, and the entries are stored anyway.
             Store(i, m, LastTerm(lg), v, l, c)
       ELSE Store(i, m, t, v, l, c)

FollowerAppend(i, m, new) ==
    LET a == m.fields
        \* a candidate takes a higher term at once (and queues its step down)
        t0 == IF role[i] = "Candidate" /\ a.term > term[i] THEN a.term ELSE term[i]
        v0 == IF role[i] = "Candidate" /\ a.term > term[i] THEN Nil ELSE vote[i]
        lg == log[i]
        \* a catchup ends once the log has what it waited for
        done == catchup[i] # <<>> /\ LastTerm(lg) >= catchup[i][1] /\ Len(lg) >= catchup[i][2]
        c == IF done THEN <<>> ELSE catchup[i]
        t == IF a.term > t0 THEN a.term ELSE t0
        v == IF a.term > t0 THEN Nil ELSE v0
        l == IF new /\ role[i] = "Follower" /\ leader[i] # m.from THEN m.from ELSE leader[i]
    IN IF new /\ a.term < t0 THEN
          \* an older term: refused
          /\ Set(i, t0, v0, leader[i], catchup[i])
          /\ UNCHANGED <<log, commit>>
          /\ Reply(m, Response(i, m, t0, Len(lg), FALSE))
       ELSE IF new /\ c # <<>> THEN
          \* new entries while catching up are ignored; when the catchup stalled (no progress
          \* for 2 s, hidden) it starts again from this entry
          \/ /\ Set(i, t0, v0, leader[i], c)
             /\ UNCHANGED <<log, commit>>
             /\ Drop(m)
          \/ /\ Set(i, t0, v0, leader[i], <<a.prevTerm, a.prevIndex>>)
             /\ UNCHANGED <<log, commit>>
             /\ Reply(m, Response(i, m, LastTerm(lg), Len(lg), FALSE))
       ELSE AppendMatching(i, m, new, t, v, l, c)

HandleAppendEntries(i, m) ==
    /\ BagIn(m, msgs)
    /\ m.type = "AppendEntries" /\ m.to = i
    /\ LET a == m.fields
       IN IF role[i] = "Leader" THEN
             IF a.term > term[i] THEN
                \* Another leader's higher term: take it; the step down is queued.
                /\ term' = [term EXCEPT ![i] = a.term]
                /\ vote' = [vote EXCEPT ![i] = Nil]
                /\ Drop(m)
                /\ UNCHANGED <<leader, commit, log, catchup>>
             ELSE
                /\ Reply(m, Response(i, m, term[i], Len(log[i]), FALSE))
                /\ UNCHANGED <<term, vote, leader, commit, log, catchup>>
          ELSE FollowerAppend(i, m, TRUE)
    /\ UNCHANGED <<role, votes>>

\* A catchup entry (the response, if any, goes to the leader's inbox: an AppendEntriesResponse).
HandleCatchup(i, m) ==
    /\ BagIn(m, msgs)
    /\ m.type = "CatchupEntries" /\ m.to = i
    /\ role[i] # "Leader"
    /\ FollowerAppend(i, m, FALSE)
    /\ UNCHANGED <<role, votes>>

(***************************************************************************)
(* processAppendEntryResponse at a leader. Which peers acknowledged which  *)
(* index is not in the trace: a success may commit up to its index.        *)
(***************************************************************************)
HandleAppendEntriesResponse(i, m) ==
    /\ BagIn(m, msgs)
    /\ m.type = "AppendEntriesResponse" /\ m.to = i
    /\ Drop(m)
    /\ LET r == m.fields
       IN IF r.success THEN
             /\ \/ commit' = commit
                \/ /\ r.index > commit[i] /\ r.index <= Len(log[i])
                   /\ commit' = [commit EXCEPT ![i] = r.index]
             /\ UNCHANGED <<term, vote>>
          ELSE IF r.term > term[i] THEN
             /\ term' = [term EXCEPT ![i] = r.term]
             /\ vote' = [vote EXCEPT ![i] = Nil]
             /\ UNCHANGED commit
          ELSE UNCHANGED <<term, vote, commit>>
    /\ UNCHANGED <<role, leader, log, votes, catchup>>

Next ==
    \E i \in Server :
        \/ BecomeCandidate(i)
        \/ RequestVote(i)
        \/ BecomeLeader(i)
        \/ \E l \in Server \cup {Nil} : BecomeFollower(i, l)
        \/ \E k \in 1..64 : SendAppendEntries(i, k)
        \/ SendHeartbeat(i)
        \/ \E m \in BagToSet(msgs) : HandleVoteRequest(i, m)
        \/ \E m \in BagToSet(msgs) : HandleAppendEntries(i, m)
        \/ \E m \in BagToSet(msgs) : HandleCatchup(i, m)
        \/ \E m \in BagToSet(msgs) : HandleAppendEntriesResponse(i, m)

Spec == Init /\ [][Next]_vars
====
