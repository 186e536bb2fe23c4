---- MODULE RrBenchMap ----
(***************************************************************************)
(* From spectap's RedisRaft traces (`spectap record redisraft`, events as  *)
(* systems/redisraft/rr_shape.h describes them) to windows of the          *)
(* benchmark's six RedisRaft actions in RedisRaft.tla:                     *)
(*                                                                         *)
(*   spectap windows --map RrBenchMap.tla --spec RedisRaft.tla T.spt -o D  *)
(*   spectap check   --map RrBenchMap.tla --spec RedisRaft.tla T.spt       *)
(*                                                                         *)
(* A step is one call of RedisRaft's raft core: its first event carries    *)
(* args.step (the action) and args.stepBegin, and for a request handler    *)
(* args.stepMsg (the request); its return event ends it. ElectionTimeout  *)
(* runs from the Timeout event (raft_election_start) to the pre-candidacy  *)
(* (or candidacy) it starts; a Restart event is a step of its own (not a   *)
(* benchmark action). An AppendEntries whose entries' terms were    *)
(* not all read (more than 13 entries) gives no window: its new log could  *)
(* not be told from the request.                                          *)
(***************************************************************************)
EXTENDS Spec, TLC

\* A node with no event yet: a fresh follower.
NoState == [term |-> 0, role |-> "Follower", votedFor |-> "", commitIndex |-> 0,
            lastLogIndex |-> 0, lastLogTerm |-> 0, leaderId |-> "", logTerms |-> <<>>]
S(st, n) == IF n \in DOMAIN st THEN st[n] ELSE NoState

\* The entry terms from index 1. A state holds the last terms only (logTermsFrom: the index
\* of the first one held); earlier ones are unknown, 0 (as the trace writes terms it could not
\* read).
LogOf(r) ==
    IF "logTermsFrom" \in DOMAIN r
    THEN [k \in 1..r.lastLogIndex |-> IF k < r.logTermsFrom THEN 0 ELSE r.logTerms[k - r.logTermsFrom + 1]]
    ELSE r.logTerms

MapVars(st, net) ==
    [currentTerm |-> [n \in Server |-> S(st, n).term],
     votedFor |-> [n \in Server |-> S(st, n).votedFor],
     state |-> [n \in Server |-> S(st, n).role],
     leaderId |-> [n \in Server |-> S(st, n).leaderId],
     commitIndex |-> [n \in Server |-> S(st, n).commitIndex],
     log |-> [n \in Server |-> LogOf(S(st, n))],
     logLen |-> [n \in Server |-> S(st, n).lastLogIndex],
     logLastTerm |-> [n \in Server |-> S(st, n).lastLogTerm]]

\* RedisRaft's node ids are numbers; the trace's nodes are s<id>.
Name(id) == "s" \o ToString(id)

Begins(ev) == "stepBegin" \in DOMAIN ev.args
HasMsg(ev) == "stepMsg" \in DOMAIN ev.args

WindowStart(ev) ==
    IF ev.kind = "Timeout" THEN "ElectionTimeout"
    ELSE IF ev.kind = "Restart" THEN "Restart"
    ELSE IF ~Begins(ev) THEN ""
    ELSE LET a == ev.args.step IN
         CASE a = "RecvRequestVote" -> IF HasMsg(ev) THEN a ELSE ""
           [] a = "RecvAppendEntries" ->
                IF HasMsg(ev) /\ Len(ev.args.stepMsg.entryTerms) = ev.args.stepMsg.nEntries THEN a ELSE ""
           \* raft_recv_entry refused (not the leader, a transfer going on): nothing changed
           [] a = "LogAppend" -> IF ev.kind = "ClientRequest" /\ ev.args.ret = 0 THEN a ELSE ""
           [] OTHER -> a

EndKind == [ElectionTimeout |-> {"BecomePreCandidate", "BecomeCandidate"},
            BecomeCandidate |-> {"BecomeCandidate"},
            BecomeLeader |-> {"BecomeLeader"},
            RecvRequestVote |-> {"HandleRequestVoteRequest"},
            RecvAppendEntries |-> {"HandleAppendEntriesRequest"},
            LogAppend |-> {"ClientRequest"},
            Restart |-> {"Restart"}]
WindowEnd(ev, a) == ev.kind \in EndKind[a]

\* The request a handler's step began with, as RedisRaft.tla's record.
Request(ev, a) ==
    LET r == ev.args.stepMsg
    IN IF a = "RecvRequestVote"
       THEN [prevote |-> r.prevote, term |-> r.term, candidate |-> Name(r.candidateId),
             lastLogIdx |-> r.lastLogIdx, lastLogTerm |-> r.lastLogTerm]
       ELSE [term |-> r.term, leader |-> Name(r.leaderId), prevLogIdx |-> r.prevLogIdx,
             prevLogTerm |-> r.prevLogTerm, leaderCommit |-> r.leaderCommit,
             entries |-> r.entryTerms]

Handlers == {"RecvRequestVote", "RecvAppendEntries"}
Params(ev, a) == IF a \in Handlers THEN <<ev.node, Request(ev, a)>> ELSE <<ev.node>>
Input(ev, a) == IF a \in Handlers THEN Request(ev, a) ELSE [node |-> ev.node]

\* Coverage (spectap stat --coverage, record redisraft --until-covered): the step each window
\* checks, and the answers a node sends to votes and appends, refusals as well as grants.
Answers(ev) ==
    IF ev.kind = "SendRequestVoteResponse"
    THEN {IF ev.msg.fields.voteGranted THEN "VoteGranted" ELSE "VoteRejected"}
    ELSE IF ev.kind = "SendAppendEntriesResponse"
    THEN {IF ev.msg.fields.success THEN "AppendAccepted" ELSE "AppendRejected"}
    ELSE {}
Branch(ev) == (IF WindowStart(ev) = "" THEN {} ELSE {WindowStart(ev)}) \cup Answers(ev)
Branches == {"ElectionTimeout", "BecomeCandidate", "BecomeLeader", "RecvRequestVote",
             "RecvAppendEntries", "LogAppend", "VoteGranted", "VoteRejected", "AppendAccepted",
             "AppendRejected"}
=============================================================================
