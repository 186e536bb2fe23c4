---- MODULE NatsMap ----
(***************************************************************************)
(* spectap record nats traces (systems/nats/Events.tla's events) as       *)
(* windows of NatsRaft.tla (docs/mapping.md). A window is a step: from its *)
(* Begin event to its End. The candidate's received votes, which no        *)
(* node's state shows, come from the history: the granted responses it     *)
(* received since it last asked.                                            *)
(***************************************************************************)
EXTENDS Spec

Actions == {"BecomeCandidate", "RequestVote", "HandleVoteRequest", "BecomeLeader", "BecomeFollower",
            "SendAppendEntries", "SendHeartbeat", "HandleAppendEntries", "HandleAppendEntriesResponse",
            "HandleCatchup"}
Receives == {"HandleVoteRequest", "HandleAppendEntries", "HandleAppendEntriesResponse", "HandleCatchup"}

Plain(m) == [from |-> m.from, to |-> m.to, type |-> m.type, fields |-> m.fields]

Get(st, n, f, d) == IF n \in DOMAIN st THEN st[n][f] ELSE d

MapInit == [n \in Server |-> {}]
MapNext(ev, st, hist) ==
    IF ev.kind = "RequestVote" THEN [hist EXCEPT ![ev.node] = {}]
    ELSE IF ev.kind = "ReceiveVoteResponse" /\ ev.msg.fields.granted
    THEN [hist EXCEPT ![ev.node] = @ \cup {ev.msg.from}]
    ELSE hist

MapVars(st, net, hist) ==
    LET plain == {Plain(m) : m \in net}
    IN [term |-> [n \in Server |-> Get(st, n, "term", 0)],
        vote |-> [n \in Server |-> Get(st, n, "vote", "")],
        role |-> [n \in Server |-> Get(st, n, "role", "Follower")],
        leader |-> [n \in Server |-> Get(st, n, "leader", "")],
        commit |-> [n \in Server |-> Get(st, n, "commit", 0)],
        log |-> [n \in Server |-> Get(st, n, "log", <<>>)],
        msgs |-> [p \in plain |-> Cardinality({m \in net : Plain(m) = p})],
        votes |-> hist,
        catchup |-> [n \in Server |-> Get(st, n, "catchup", <<>>)]]

WindowStart(ev) == IF ev.kind \in Actions THEN ev.kind ELSE ""
\* Vote responses arrive on a connection's goroutine, between the Raft steps' events.
WindowActor(ev) == <<ev.node, IF ev.kind = "ReceiveVoteResponse" THEN "connection" ELSE "raft">>
WindowEnd(ev, a) == ev.kind = "End"
Params(ev, a) ==
    IF a \in Receives THEN <<ev.node, Plain(ev.msg)>>
    ELSE IF a = "BecomeFollower" THEN <<ev.node, ev.args.leader>>
    ELSE IF a = "SendAppendEntries" THEN <<ev.node, ev.args.entries>>
    ELSE <<ev.node>>

\* Coverage (spectap stat --coverage, record --until-covered): every step, and the answers that
\* refuse as well as those that accept.
Branch(ev) ==
    IF ev.kind \in Actions THEN ev.kind
    ELSE IF ev.kind = "Send" /\ ev.msg.type = "VoteResponse"
    THEN IF ev.msg.fields.granted THEN "VoteGranted" ELSE "VoteRejected"
    ELSE IF ev.kind = "Send" /\ ev.msg.type = "AppendEntriesResponse"
    THEN IF ev.msg.fields.success THEN "AppendAccepted" ELSE "AppendRejected"
    ELSE IF ev.kind = "Unobserved" THEN "Unobserved"
    ELSE ""
Branches == Actions \cup {"VoteGranted", "VoteRejected", "AppendAccepted", "AppendRejected"}
====
