---- MODULE ZkBenchMap ----
(***************************************************************************)
(* From spectap's ZooKeeper traces to windows of ZkFle.tla named by the    *)
(* benchmark's three ZooKeeper actions (SysMoBench: Notification,          *)
(* HandleNotification, BecomeLeader), where they apply, as spectap's       *)
(* SysMoBench export names the events (docs/dialects.md):                  *)
(*                                                                         *)
(*   Notification        a notification sent: zk.notification.send (any    *)
(*                       site) or zk.notification.resend                   *)
(*   HandleNotification  WorkerReceiver takes a notification:              *)
(*                       zk.notification.recv (queued, answered, ignored)  *)
(*   BecomeLeader        lookForLeader ends leading: zk.peer.state to      *)
(*                       LEADING through its zk.election.end (setPeerState, *)
(*                       leaveInstance, return: one window)                *)
(*                                                                         *)
(* Every other record is its own window of the fine action ZkFleMap gives  *)
(* it, so that each step of the trace is checked once.                     *)
(*                                                                         *)
(*   spectap check --spec ZkFle.tla --map ZkBenchMap.tla T.spt             *)
(***************************************************************************)
EXTENDS ZkTrace

MapVars(st, net) == TraceVars(st, net)
Fine(ev) == FineStart(ev)

\* lookForLeader's end record of a leader: part of its BecomeLeader window.
LeaderEnd(ev) == ev.kind = "zk.election.end" /\ ev.state.state = "LEADING"

WindowStart(ev) ==
    LET f == Fine(ev) IN
    CASE f \in {"SendNotification", "ReplyLagging", "ReplyNotLooking", "Resend"} -> "Notification"
      [] f \in {"ReceiveQueued", "ReceiveAnswered", "ReceiveIgnored"} -> "HandleNotification"
      [] f = "BecomeLeader" -> "BecomeLeader"
      [] LeaderEnd(ev) -> ""
      [] OTHER -> f

WindowEnd(ev, a) == a # "BecomeLeader" \/ ev.kind = "zk.election.end"

Params(ev, a) ==
    CASE a = "Notification" -> <<ev.node, MsgOf(ev)>>
      [] a = "HandleNotification" -> <<ev.node, MsgOf(ev)>>
      [] OTHER -> FineParams(ev, a)
Input(ev, a) == TraceInput(ev)
WindowVars(s) == JsonVars(s)
WindowParams(w) == JsonParams(w)
====
