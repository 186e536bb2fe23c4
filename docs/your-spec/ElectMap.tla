---- MODULE ElectMap ----
(* Maps spectap's ZooKeeper traces onto Elect.tla. The trace's nodes are "1", "2", "3"; the *)
(* spec's servers are 1, 2, 3.                                                               *)
EXTENDS Spec, TLC
Id(n) == CHOOSE s \in Server : ToString(s) = n
Of(st, s, f(_), none) == IF ToString(s) \in DOMAIN st THEN f(st[ToString(s)]) ELSE none
MapVars(st, net) ==
    [role |-> [s \in Server |-> Of(st, s, LAMBDA x : x.state, "LOOKING")],
     vote |-> [s \in Server |-> Of(st, s, LAMBDA x : IF x.proposedLeader < 0 THEN 0 ELSE x.proposedLeader, 0)],
     heard |-> [s \in Server |-> Of(st, s, LAMBDA x : {Id(t) : t \in DOMAIN x.recvset}, {})]]
WindowStart(ev) ==
    CASE ev.kind = "zk.proposal.update" -> "Propose"
      [] ev.kind = "zk.recvset.put" -> "Hear"
      [] ev.kind = "zk.peer.state" /\ ev.args.new # "LOOKING" -> "Decide"
      [] OTHER -> ""
Params(ev, a) ==
    CASE a = "Propose" -> <<Id(ev.node), ev.state.proposedLeader>>
      [] a = "Hear" -> <<Id(ev.node), Id(ev.args.sid)>>
      [] OTHER -> <<Id(ev.node)>>
====
