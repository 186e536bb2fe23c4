---- MODULE CovMap ----
\* Branches of ZooKeeper's notification handling, as spectap's agent names them in
\* zk.notification.handle events (args.branch), for the coverage test.
EXTENDS Spec
MapVars(st, net) == [clock |-> 0]
WindowStart(ev) == IF ev.kind = "zk.notification.handle" THEN "Tick" ELSE ""
Branch(ev) == IF ev.kind = "zk.notification.handle" THEN ev.args.branch ELSE ""
Branches == {"lookingSameEpoch", "lookingSameEpochBetter"}
====
