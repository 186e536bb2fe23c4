---- MODULE ZkTrace ----
(***************************************************************************)
(* What ZkFleMap and ZkBenchMap share: spectap's ZooKeeper traces (`spectap *)
(* record zookeeper`; the agent's records as systems/zookeeper/README.md   *)
(* describes them) as ZkFle.tla's variables, and each record's fine action *)
(* with its parameters.                                                    *)
(***************************************************************************)
EXTENDS Spec

\* A server with no record yet: a QuorumPeer just constructed.
NoState == [logicalclock |-> 0, proposedLeader |-> -1, proposedZxid |-> -1, proposedEpoch |-> 0,
            state |-> "LOOKING", currentEpoch |-> -1, acceptedEpoch |-> -1,
            recvset |-> EmptyMap, outofelection |-> EmptyMap]
S(st, n) == IF n \in DOMAIN st THEN st[n] ELSE NoState

\* A trace message ([id, from, to, type, fields]) as the spec's, without its id.
Strip(x) == Msg(x.from, x.to, x.fields)

\* The set of messages in flight as a bag (copies of the same content counted).
Bag(net) == LET ms == {Strip(x) : x \in net}
            IN [m \in ms |-> Cardinality({x \in net : Strip(x) = m})]

\* A vote record as the spec writes it (the agent's maps hold the same five fields).
AsVote(r) == Vote(r.leader, r.zxid, r.electionEpoch, r.peerEpoch, r.state)
AsMap(r) == [s \in DOMAIN r |-> AsVote(r[s])]

TraceVars(st, net) ==
    [logicalclock |-> [n \in Server |-> S(st, n).logicalclock],
     proposedLeader |-> [n \in Server |-> S(st, n).proposedLeader],
     proposedZxid |-> [n \in Server |-> S(st, n).proposedZxid],
     proposedEpoch |-> [n \in Server |-> S(st, n).proposedEpoch],
     state |-> [n \in Server |-> S(st, n).state],
     currentEpoch |-> [n \in Server |-> S(st, n).currentEpoch],
     acceptedEpoch |-> [n \in Server |-> S(st, n).acceptedEpoch],
     recvset |-> [n \in Server |-> AsMap(S(st, n).recvset)],
     outofelection |-> [n \in Server |-> AsMap(S(st, n).outofelection)],
     net |-> Bag(net)]

A(ev, k) == IF k \in DOMAIN ev.args THEN ev.args[k] ELSE ""

\* A JVM's first record: QuorumPeer's constructor writes state LOOKING over LOOKING, with
\* nothing of the new JVM loaded yet.
IsStart(ev) ==
    /\ ev.kind = "zk.peer.state" /\ A(ev, "old") = "LOOKING" /\ A(ev, "new") = "LOOKING"
    /\ ev.state.logicalclock = 0 /\ ev.state.currentEpoch = -1 /\ ev.state.acceptedEpoch = -1

BranchArg(ev) == A(ev, "branch")
HandleAction(b) ==
    CASE b \in {"lookingIgnoredOwnZxid", "lookingIgnoredZxid"} -> "HandleIgnored"
      [] b = "lookingHigherEpoch" -> "HandleHigherEpoch"
      [] b = "lookingLowerEpoch" -> "HandleLowerEpoch"
      [] b = "lookingSameEpochBetter" -> "HandleSameEpochBetter"
      [] b = "lookingSameEpoch" -> "HandleSameEpoch"
      [] b \in {"fromObserver", "fromFollower", "fromLeader"} -> "HandleFromLearner"
      [] b = "finalizeDiscarded" -> "FinalizeDiscard"
      [] b = "finalizeRequeued" -> "FinalizeRequeue"
      [] OTHER -> "HandleOther"

FineStart(ev) ==
    LET k == ev.kind IN
    CASE k = "zk.peer.state" ->
           IF IsStart(ev) THEN "Restart"
           ELSE CASE A(ev, "old") = "LOOKING" /\ A(ev, "new") = "LEADING" -> "BecomeLeader"
                  [] A(ev, "old") = "LOOKING" /\ A(ev, "new") = "FOLLOWING" -> "BecomeFollower"
                  [] A(ev, "new") = "LOOKING" -> "StopServing"
                  [] OTHER -> "PeerStateOther"
      [] k = "zk.fle.init" -> "InitFle"
      [] k = "zk.epoch.current" -> "WriteCurrentEpoch"
      [] k = "zk.epoch.accepted" -> "WriteAcceptedEpoch"
      [] k = "zk.logicalclock.bump" ->
           CASE A(ev, "site") = "newElection" -> "StartElection"
             [] A(ev, "site") = "higherEpoch" -> "RaiseLogicalclock"
             [] OTHER -> "JoinOutOfElection"
      [] k = "zk.proposal.update" -> "UpdateProposal"
      [] k = "zk.recvset.clear" -> "ClearRecvset"
      [] k = "zk.recvset.put" -> IF A(ev, "site") = "looking" THEN "PutVote" ELSE "PutLearnerVote"
      [] k = "zk.outofelection.put" -> "PutOutOfElection"
      [] k = "zk.notification.send" ->
           CASE A(ev, "site") = "sendNotifications" -> "SendNotification"
             [] A(ev, "site") = "replyLagging" -> "ReplyLagging"
             [] A(ev, "site") = "replyNotLooking" -> "ReplyNotLooking"
             [] OTHER -> "SendOther"
      [] k = "zk.notification.resend" -> "Resend"
      [] k = "zk.notification.recv" ->
           CASE A(ev, "action") = "queued" -> "ReceiveQueued"
             [] A(ev, "action") = "answered" -> "ReceiveAnswered"
             [] A(ev, "action") = "ignored" -> "ReceiveIgnored"
             [] OTHER -> "ReceiveOther"
      [] k = "zk.notification.handle" -> HandleAction(BranchArg(ev))
      [] k = "zk.election.timeout" -> "ElectionTimeout"
      [] k = "zk.election.quorum" -> "QuorumReached"
      [] k = "zk.election.end" -> "ElectionEnd"
      [] k = "zk.election.stop" -> "ElectionStop"
      [] OTHER -> ""

MsgOf(ev) == Strip(ev.msg)

FineParams(ev, a) ==
    CASE a = "SendNotification" -> <<ev.node, ev.msg.to>>
      [] a \in {"ReplyLagging", "ReplyNotLooking"} -> <<ev.node, ev.msg.to, AsVote(ev.msg.fields)>>
      [] a \in {"Resend", "ReceiveQueued", "ReceiveAnswered", "ReceiveIgnored"} ->
           <<ev.node, MsgOf(ev)>>
      [] a \in {"HandleIgnored", "HandleHigherEpoch", "HandleLowerEpoch", "HandleSameEpochBetter",
                "HandleSameEpoch", "HandleFromLearner", "FinalizeDiscard", "FinalizeRequeue"} ->
           <<ev.node, ev.args.from, AsVote(ev.args.fields)>>
      [] a \in {"WriteCurrentEpoch", "WriteAcceptedEpoch"} -> <<ev.node, ev.args.new>>
      [] a \in {"RaiseLogicalclock", "JoinOutOfElection"} -> <<ev.node, ev.args.new>>
      [] a = "UpdateProposal" -> <<ev.node, ev.args.leader, ev.args.zxid, ev.args.epoch>>
      [] a \in {"PutVote", "PutLearnerVote", "PutOutOfElection"} ->
           <<ev.node, ev.args.sid, AsVote(ev.args.vote)>>
      [] a = "ElectionEnd" -> <<ev.node, ev.args.site, AsVote(ev.args.vote)>>
      [] OTHER -> <<ev.node>>

TraceInput(ev) == IF "msg" \in DOMAIN ev THEN MsgOf(ev) ELSE ev.args
\* Windows re-read from their JSON files (spectap check --map M --windows W --action A): the
\* bag of messages in flight comes back as [[message, count], ...] pairs, and each window
\* carries the parameters its action was checked with.
PairsToBag(p) == LET ps == {p[i] : i \in DOMAIN p}
                 IN [m \in {x[1] : x \in ps} |-> (CHOOSE x \in ps : x[1] = m)[2]]
JsonVars(s) == IF "net" \in DOMAIN s THEN [s EXCEPT !.net = PairsToBag(s.net)] ELSE s
JsonParams(w) == w.params
====
