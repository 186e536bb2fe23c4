---- MODULE EtcdBenchMap ----
(***************************************************************************)
(* From spectap's etcd traces (`spectap record etcd`, events as            *)
(* systems/etcd/shape.h describes them) to windows of EtcdRaft.tla, one    *)
(* per raft.Step call, named by the message type the step handles (the     *)
(* benchmark's five etcd actions and the spec's others).                   *)
(*                                                                         *)
(*   spectap windows --map EtcdBenchMap.tla --spec EtcdRaft.tla T.spt -o D *)
(*   spectap check   --map EtcdBenchMap.tla --spec EtcdRaft.tla T.spt      *)
(*                                                                         *)
(* (with --cfg EtcdRaftPreVote.cfg for clusters run with --pre-vote, as    *)
(* the partition scenario runs them).                                      *)
(*                                                                         *)
(* A step's events carry args.step (the type handled); its first event     *)
(* args.stepBegin and args.stepMsg (the message), its last is the          *)
(* Receive<X> or Step<T> event. The window runs from the first to the      *)
(* last: its pre-state is the cluster before the step, its post-state the  *)
(* cluster with the step's events applied.                                 *)
(***************************************************************************)
EXTENDS Spec

\* A member with no event yet: newRaft's state before its first becomeFollower.
NoState == [term |-> 0, vote |-> None, commit |-> 0, role |-> Follower, lead |-> None,
            log |-> 0, logTerms |-> <<>>]
S(st, n) == IF n \in DOMAIN st THEN st[n] ELSE NoState

\* The entry terms as a sequence from index 1. A state holds the last --log-terms of them
\* (logTermsFrom: the index of the first one held); earlier ones are unknown, 0 (as the
\* trace writes entries whose term it could not read).
LogOf(r) ==
    IF "logTermsFrom" \in DOMAIN r
    THEN [k \in 1..r.log |-> IF k < r.logTermsFrom THEN 0 ELSE r.logTerms[k - r.logTermsFrom + 1]]
    ELSE r.logTerms

\* A trace message ([id, from, to, type, fields]) as the spec's record, without its id.
\* entryTerms is missing when an entry's term could not be read: 0 for each.
Flat(x) ==
    [type |-> x.type, from |-> x.from, to |-> x.to, term |-> x.fields.term,
     entries |-> x.fields.entries, logTerm |-> x.fields.logTerm, index |-> x.fields.index,
     commit |-> x.fields.commit, reject |-> x.fields.reject, rejectHint |-> x.fields.rejectHint,
     entryTerms |-> IF "entryTerms" \in DOMAIN x.fields THEN x.fields.entryTerms
                    ELSE [k \in 1..x.fields.entries |-> 0]]

\* The messages of a set in send order (message ids grow with the trace).
RECURSIVE ById(_)
ById(M) == IF M = {} THEN <<>>
           ELSE LET x == CHOOSE x \in M : \A y \in M : x.id <= y.id
                IN <<Flat(x)>> \o ById(M \ {x})

\* (Values are passed down as operator arguments, which are evaluated once; a LET
\* definition is evaluated again wherever it is used.)
VisibleNet(net, T, R, C) ==
    {x \in net : ~HiddenFields(x.type, x.from, x.to, x.fields.term, x.fields.index, x.fields.commit,
                               T, R, C)}

Vars(st, T, R, C, L, V) ==
    [currentTerm |-> T,
     votedFor |-> [n \in Server |-> S(st, n).vote],
     state |-> R,
     leader |-> [n \in Server |-> S(st, n).lead],
     commitIndex |-> C,
     log |-> L,
     logLen |-> [n \in Server |-> Len(L[n])],
     logLastTerm |-> [n \in Server |-> LastTerm(L[n])],
     messages |-> [f \in Server |-> [t \in Server |-> ById({x \in V : x.from = f /\ x.to = t})]]]

VarsOf(st, net, T, R, C) ==
    Vars(st, T, R, C, [n \in Server |-> LogOf(S(st, n))], VisibleNet(net, T, R, C))

Terms(st) == [n \in Server |-> S(st, n).term]
Roles(st) == [n \in Server |-> S(st, n).role]
Commits(st) == [n \in Server |-> S(st, n).commit]

(***************************************************************************)
(* The visible network, kept as the mapping's history (docs/mapping.md)    *)
(* instead of filtered from every message ever sent at every window: the   *)
(* message an event sends joins it, the one it receives leaves it, and     *)
(* what the cluster's terms, roles and commit indexes now hide drops out   *)
(* for good (HiddenFields stays true once true, see EtcdRaft.tla), so it   *)
(* is the set VisibleNet would give over the whole network.                *)
(***************************************************************************)
MapInit == [vis |-> {}]

Sent(ev) ==
    IF "msg" \in DOMAIN ev /\ ev.msg.dir = "send"
    THEN {[id |-> ev.msg.id, from |-> ev.msg.from, to |-> ev.msg.to, type |-> ev.msg.type,
           fields |-> ev.msg.fields]}
    ELSE {}
Received(ev, M) ==
    IF "msg" \in DOMAIN ev /\ ev.msg.dir = "recv" THEN {x \in M : x.id = ev.msg.id} ELSE {}

MapNext(ev, st, h) ==
    LET M == h.vis \cup Sent(ev)
    IN [vis |-> VisibleNet(M \ Received(ev, M), Terms(st), Roles(st), Commits(st))]

MapVars(st, net, h) == VarsOf(st, h.vis, Terms(st), Roles(st), Commits(st))

Step(ev) == IF "step" \in DOMAIN ev.args THEN ev.args.step ELSE ""
Begins(ev) == "stepBegin" \in DOMAIN ev.args

(***************************************************************************)
(* The action of the step an event begins. MsgHup: ElectionTimeout when    *)
(* the member campaigned (the step's first event is its becomeCandidate or *)
(* becomePreCandidate), else IgnoreElectionTimeout. MsgProp: the leader    *)
(* appends (Replicate first: ClientProposal), a follower forwards it (a    *)
(* send first: ForwardProposal), or it is dropped (the step's end first:   *)
(* DropProposal).                                                          *)
(***************************************************************************)
WindowStart(ev) ==
    IF ~Begins(ev) THEN ""
    ELSE LET t == Step(ev) IN
         CASE t = "MsgHup" ->
                IF ev.kind \in {"BecomeCandidate", "BecomePreCandidate"}
                THEN "ElectionTimeout" ELSE "IgnoreElectionTimeout"
           [] t \in {"MsgVote", "MsgPreVote"} -> "HandleVoteRequest"
           [] t \in {"MsgVoteResp", "MsgPreVoteResp"} -> "HandleVoteResponse"
           [] t = "MsgProp" ->
                CASE ev.kind = "Replicate" -> "ClientProposal"
                  [] ev.kind = "SendMessage" -> "ForwardProposal"
                  [] OTHER -> "DropProposal"
           [] t = "MsgApp" -> "HandleAppendEntries"
           [] t = "MsgHeartbeat" -> "HandleHeartbeat"
           [] t = "MsgAppResp" -> "HandleAppendResponse"
           [] t = "MsgHeartbeatResp" -> "HandleHeartbeatResponse"
           [] t = "MsgBeat" -> "HeartbeatTimeout"
           [] t = "MsgCheckQuorum" -> "CheckQuorumTimeout"
           [] t = "MsgUnreachable" -> "ReportUnreachable"
           [] OTHER -> ""

\* The step's last event: its Receive<X> (a message from another member) or Step<T> (local).
EndKinds == {"ReceiveAppendEntriesRequest", "ReceiveAppendEntriesResponse",
             "ReceiveRequestVoteRequest", "ReceiveRequestVoteResponse", "ReceiveMessage",
             "StepHup", "StepBeat", "StepProp", "StepUnreachable", "StepSnapStatus",
             "StepCheckQuorum", "StepTransferLeader", "StepReadIndex", "StepMessage"}
WindowEnd(ev, a) == Step(ev) # "" /\ ev.kind \in EndKinds

\* A step whose post-state was never read (the member's process ended before its next call):
\* not a step seen whole, so not checked.
WindowDrop(ev, a) == ev.kind = "StepUnfinished"

\* The message the step handles, as the spec's record.
StepMsg(ev) ==
    LET r == ev.args.stepMsg
    IN [type |-> r.type, from |-> r.from, to |-> r.to, term |-> r.term, entries |-> r.entries,
        logTerm |-> r.logTerm, index |-> r.index, commit |-> r.commit, reject |-> r.reject,
        rejectHint |-> r.rejectHint,
        entryTerms |-> IF "entryTerms" \in DOMAIN r THEN r.entryTerms
                       ELSE [k \in 1..r.entries |-> 0]]

LocalActions == {"ElectionTimeout", "IgnoreElectionTimeout", "HeartbeatTimeout",
                 "CheckQuorumTimeout", "ReportUnreachable"}
Params(ev, a) == IF a \in LocalActions THEN <<ev.node>> ELSE <<ev.node, StepMsg(ev)>>
Input(ev, a) == StepMsg(ev)

(***************************************************************************)
(* Coverage (spectap stat --coverage, record etcd --until-covered): the    *)
(* action each step begins, and the answers to votes and appends a member *)
(* sends, refusals as well as grants (a refusal may be its step's first    *)
(* event too: a set).                                                      *)
(***************************************************************************)
Answers(ev) ==
    IF "msg" \in DOMAIN ev /\ ev.msg.dir = "send"
    THEN CASE ev.msg.type \in {"MsgVoteResp", "MsgPreVoteResp"} ->
                {IF ev.msg.fields.reject THEN "VoteRejected" ELSE "VoteGranted"}
           [] ev.msg.type = "MsgAppResp" ->
                {IF ev.msg.fields.reject THEN "AppendRejected" ELSE "AppendAccepted"}
           [] OTHER -> {}
    ELSE {}
Branch(ev) == (IF WindowStart(ev) = "" THEN {} ELSE {WindowStart(ev)}) \cup Answers(ev)
Branches == {"ElectionTimeout", "HandleVoteRequest", "HandleVoteResponse", "ClientProposal",
             "HandleAppendEntries", "HandleAppendResponse", "HandleHeartbeat",
             "HandleHeartbeatResponse", "VoteGranted", "VoteRejected", "AppendAccepted",
             "AppendRejected"}
=============================================================================
