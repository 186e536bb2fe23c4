---- MODULE ZkFleMap ----
(***************************************************************************)
(* From spectap's ZooKeeper traces to windows of ZkFle.tla's fine actions: *)
(* every record of the agent is one step, its own window, of the action    *)
(* ZkTrace.tla's FineStart names (systems/zookeeper/spec/README.md lists   *)
(* them with the code they correspond to).                                 *)
(*                                                                         *)
(*   spectap check --spec ZkFle.tla --map ZkFleMap.tla T.spt               *)
(***************************************************************************)
EXTENDS ZkTrace

MapVars(st, net) == TraceVars(st, net)
WindowStart(ev) == FineStart(ev)
Params(ev, a) == FineParams(ev, a)
Input(ev, a) == TraceInput(ev)
WindowVars(s) == JsonVars(s)
WindowParams(w) == JsonParams(w)

\* Coverage (spectap stat --coverage, spectap record zookeeper --until-covered): which case of
\* lookForLeader handled a notification; a server's own notification counts apart.
Branch(ev) ==
    IF ev.kind = "zk.notification.handle"
    THEN IF ev.args.from = ev.node THEN "ownNotification" ELSE ev.args.branch
    ELSE ""
Branches == {"lookingHigherEpoch", "lookingSameEpochBetter", "lookingSameEpoch", "lookingLowerEpoch",
             "fromFollower", "fromLeader", "ownNotification"}
====
