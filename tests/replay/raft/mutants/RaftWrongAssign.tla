---- MODULE RaftWrongAssign ----
\* MUTANT: wrong assignment: a server that times out does not vote for itself
(***************************************************************************)
(* A small Raft: leader election and log replication, for spectap's own    *)
(* tests. Every variable holds JSON-expressible values only (integers,     *)
(* strings, booleans, records keyed by server names, sequences), so that   *)
(* canonical windows written in JSON are in the spec's value space. The    *)
(* network is a sequence of message records: any message may be received   *)
(* (by its index), a receiver removes it, and a reply is appended.          *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Server, Value, MaxTerm, MaxLogLen, MaxMessages

VARIABLES currentTerm,  \* [Server -> Nat]
          state,        \* [Server -> {"Follower", "Candidate", "Leader"}]
          votedFor,     \* [Server -> Server \cup {Nil}]
          votesGranted, \* [Server -> [Server -> BOOLEAN]]: who granted i its vote
          log,          \* [Server -> Seq([term : Nat, value : Value])]
          commitIndex,  \* [Server -> Nat]
          nextIndex,    \* [Server -> [Server -> Nat]]
          matchIndex,   \* [Server -> [Server -> Nat]]
          messages      \* Seq(Message)

vars == <<currentTerm, state, votedFor, votesGranted, log, commitIndex, nextIndex, matchIndex, messages>>
leaderVars == <<nextIndex, matchIndex>>

Nil == ""
Follower == "Follower"
Candidate == "Candidate"
Leader == "Leader"

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b
SetMax(S) == CHOOSE x \in S : \A y \in S : y <= x
Quorum(S) == Cardinality(S) * 2 > Cardinality(Server)

LastTerm(l) == IF Len(l) = 0 THEN 0 ELSE l[Len(l)].term

\* The network.
Sent(m) == \E k \in 1..Len(messages) : messages[k] = m
Remove(k) == [n \in 1..(Len(messages) - 1) |-> IF n < k THEN messages[n] ELSE messages[n + 1]]
Reply(k, m) == messages' = Append(Remove(k), m)
Discard(k) == messages' = Remove(k)

Init == /\ currentTerm = [i \in Server |-> 0]
        /\ state = [i \in Server |-> Follower]
        /\ votedFor = [i \in Server |-> Nil]
        /\ votesGranted = [i \in Server |-> [j \in Server |-> FALSE]]
        /\ log = [i \in Server |-> <<>>]
        /\ commitIndex = [i \in Server |-> 0]
        /\ nextIndex = [i \in Server |-> [j \in Server |-> 1]]
        /\ matchIndex = [i \in Server |-> [j \in Server |-> 0]]
        /\ messages = <<>>

\* Server i times out and starts an election.
Timeout(i) == /\ state[i] \in {Follower, Candidate}
              /\ currentTerm[i] < MaxTerm
              /\ state' = [state EXCEPT ![i] = Candidate]
              /\ currentTerm' = [currentTerm EXCEPT ![i] = @ + 1]
              /\ votedFor' = [votedFor EXCEPT ![i] = Nil]
              /\ votesGranted' = [votesGranted EXCEPT ![i] = [j \in Server |-> j = i]]
              /\ UNCHANGED <<log, commitIndex, leaderVars, messages>>

\* Candidate i asks j for its vote.
RequestVote(i, j) ==
    LET m == [type |-> "RequestVoteRequest", term |-> currentTerm[i],
              lastLogTerm |-> LastTerm(log[i]), lastLogIndex |-> Len(log[i]),
              source |-> i, dest |-> j]
    IN /\ state[i] = Candidate
       /\ ~votesGranted[i][j]
       /\ ~Sent(m)
       /\ Len(messages) < MaxMessages
       /\ messages' = Append(messages, m)
       /\ UNCHANGED <<currentTerm, state, votedFor, votesGranted, log, commitIndex, leaderVars>>

\* A server receives a vote request (adopting a newer term first) and answers it.
HandleRequestVoteRequest(k) ==
    LET m == messages[k]
        i == m.dest
        j == m.source
        newer == m.term > currentTerm[i]
        term == IF newer THEN m.term ELSE currentTerm[i]
        vf == IF newer THEN Nil ELSE votedFor[i]
        logOk == \/ m.lastLogTerm > LastTerm(log[i])
                 \/ /\ m.lastLogTerm = LastTerm(log[i])
                    /\ m.lastLogIndex >= Len(log[i])
        grant == /\ m.term = term
                 /\ logOk
                 /\ vf \in {Nil, j}
    IN /\ m.type = "RequestVoteRequest"
       /\ currentTerm' = [currentTerm EXCEPT ![i] = term]
       /\ state' = [state EXCEPT ![i] = IF newer THEN Follower ELSE @]
       /\ votedFor' = [votedFor EXCEPT ![i] = IF grant THEN j ELSE vf]
       /\ Reply(k, [type |-> "RequestVoteResponse", term |-> term, voteGranted |-> grant,
                    source |-> i, dest |-> j])
       /\ UNCHANGED <<votesGranted, log, commitIndex, leaderVars>>

\* A candidate counts a vote; a newer term makes it step down.
HandleRequestVoteResponse(k) ==
    LET m == messages[k]
        i == m.dest
        j == m.source
    IN /\ m.type = "RequestVoteResponse"
       /\ Discard(k)
       /\ UNCHANGED <<log, commitIndex, leaderVars>>
       /\ CASE m.term > currentTerm[i] ->
                 /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
                 /\ state' = [state EXCEPT ![i] = Follower]
                 /\ votedFor' = [votedFor EXCEPT ![i] = Nil]
                 /\ UNCHANGED votesGranted
            [] m.term = currentTerm[i] /\ state[i] = Candidate ->
                 /\ IF m.voteGranted
                    THEN votesGranted' = [votesGranted EXCEPT ![i][j] = TRUE]
                    ELSE UNCHANGED votesGranted
                 /\ UNCHANGED <<currentTerm, state, votedFor>>
            [] OTHER -> UNCHANGED <<currentTerm, state, votedFor, votesGranted>>

\* A candidate with a quorum of votes becomes leader.
BecomeLeader(i) ==
    /\ state[i] = Candidate
    /\ Quorum({j \in Server : votesGranted[i][j]})
    /\ state' = [state EXCEPT ![i] = Leader]
    /\ nextIndex' = [nextIndex EXCEPT ![i] = [j \in Server |-> Len(log[i]) + 1]]
    /\ matchIndex' = [matchIndex EXCEPT ![i] = [j \in Server |-> 0]]
    /\ UNCHANGED <<currentTerm, votedFor, votesGranted, log, commitIndex, messages>>

\* The leader takes a client's value into its log.
ClientRequest(i, v) ==
    /\ state[i] = Leader
    /\ Len(log[i]) < MaxLogLen
    /\ log' = [log EXCEPT ![i] = Append(@, [term |-> currentTerm[i], value |-> v])]
    /\ UNCHANGED <<currentTerm, state, votedFor, votesGranted, commitIndex, leaderVars, messages>>

\* The leader sends j the entry at nextIndex (at most one) with what precedes it.
AppendEntries(i, j) ==
    LET prevLogIndex == nextIndex[i][j] - 1
        prevLogTerm == IF prevLogIndex > 0 THEN log[i][prevLogIndex].term ELSE 0
        last == Min(Len(log[i]), nextIndex[i][j])
        m == [type |-> "AppendEntriesRequest", term |-> currentTerm[i],
              prevLogIndex |-> prevLogIndex, prevLogTerm |-> prevLogTerm,
              entries |-> SubSeq(log[i], nextIndex[i][j], last),
              commitIndex |-> Min(commitIndex[i], last),
              source |-> i, dest |-> j]
    IN /\ state[i] = Leader
       /\ ~Sent(m)
       /\ Len(messages) < MaxMessages
       /\ messages' = Append(messages, m)
       /\ UNCHANGED <<currentTerm, state, votedFor, votesGranted, log, commitIndex, leaderVars>>

\* A server receives entries: rejects a stale term or a log that does not match, else
\* appends (replacing a conflicting entry) and advances its commit index.
HandleAppendEntriesRequest(k) ==
    LET m == messages[k]
        i == m.dest
        j == m.source
        newer == m.term > currentTerm[i]
        term == IF newer THEN m.term ELSE currentTerm[i]
        logOk == \/ m.prevLogIndex = 0
                 \/ /\ m.prevLogIndex <= Len(log[i])
                    /\ log[i][m.prevLogIndex].term = m.prevLogTerm
        index == m.prevLogIndex + 1
        present == /\ m.entries # <<>>
                   /\ Len(log[i]) >= index
                   /\ log[i][index].term = m.entries[1].term
        newLog == IF m.entries = <<>> \/ present THEN log[i]
                  ELSE SubSeq(log[i], 1, m.prevLogIndex) \o m.entries
        resp(ok, mi) == [type |-> "AppendEntriesResponse", term |-> term, success |-> ok,
                         matchIndex |-> mi, source |-> i, dest |-> j]
    IN /\ m.type = "AppendEntriesRequest"
       /\ currentTerm' = [currentTerm EXCEPT ![i] = term]
       /\ votedFor' = [votedFor EXCEPT ![i] = IF newer THEN Nil ELSE @]
       /\ UNCHANGED <<votesGranted, leaderVars>>
       /\ IF m.term < currentTerm[i]
          THEN /\ Reply(k, resp(FALSE, 0))
               /\ UNCHANGED <<state, log, commitIndex>>
          ELSE /\ state' = [state EXCEPT ![i] = Follower]
               /\ IF logOk
                  THEN /\ log' = [log EXCEPT ![i] = newLog]
                       /\ commitIndex' = [commitIndex EXCEPT ![i] = Max(@, m.commitIndex)]
                       /\ Reply(k, resp(TRUE, m.prevLogIndex + Len(m.entries)))
                  ELSE /\ Reply(k, resp(FALSE, 0))
                       /\ UNCHANGED <<log, commitIndex>>

\* The leader learns how far j's log matches its own.
HandleAppendEntriesResponse(k) ==
    LET m == messages[k]
        i == m.dest
        j == m.source
    IN /\ m.type = "AppendEntriesResponse"
       /\ Discard(k)
       /\ UNCHANGED <<votesGranted, log, commitIndex>>
       /\ IF m.term > currentTerm[i]
          THEN /\ currentTerm' = [currentTerm EXCEPT ![i] = m.term]
               /\ state' = [state EXCEPT ![i] = Follower]
               /\ votedFor' = [votedFor EXCEPT ![i] = Nil]
               /\ UNCHANGED leaderVars
          ELSE /\ UNCHANGED <<currentTerm, state, votedFor>>
               /\ IF m.term = currentTerm[i] /\ state[i] = Leader
                  THEN IF m.success
                       THEN /\ nextIndex' = [nextIndex EXCEPT ![i][j] = m.matchIndex + 1]
                            /\ matchIndex' = [matchIndex EXCEPT ![i][j] = m.matchIndex]
                       ELSE /\ nextIndex' = [nextIndex EXCEPT ![i][j] = Max(@ - 1, 1)]
                            /\ UNCHANGED matchIndex
                  ELSE UNCHANGED leaderVars

\* The leader commits the highest entry of its term that a quorum has.
AdvanceCommitIndex(i) ==
    LET Agree(n) == {i} \cup {j \in Server : matchIndex[i][j] >= n}
        agreed == {n \in 1..Len(log[i]) : Quorum(Agree(n))}
        newCommit == IF agreed # {} /\ log[i][SetMax(agreed)].term = currentTerm[i]
                     THEN SetMax(agreed) ELSE commitIndex[i]
    IN /\ state[i] = Leader
       /\ newCommit > commitIndex[i]
       /\ commitIndex' = [commitIndex EXCEPT ![i] = newCommit]
       /\ UNCHANGED <<currentTerm, state, votedFor, votesGranted, log, leaderVars, messages>>

Next == \/ \E i \in Server : \/ Timeout(i)
                             \/ BecomeLeader(i)
                             \/ AdvanceCommitIndex(i)
                             \/ \E v \in Value : ClientRequest(i, v)
                             \/ \E j \in Server \ {i} : RequestVote(i, j) \/ AppendEntries(i, j)
        \/ \E k \in 1..Len(messages) : \/ HandleRequestVoteRequest(k)
                                      \/ HandleRequestVoteResponse(k)
                                      \/ HandleAppendEntriesRequest(k)
                                      \/ HandleAppendEntriesResponse(k)

TypeOK == /\ currentTerm \in [Server -> Nat]
          /\ state \in [Server -> {Follower, Candidate, Leader}]
          /\ votedFor \in [Server -> Server \cup {Nil}]
          /\ commitIndex \in [Server -> Nat]
====
