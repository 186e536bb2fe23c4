---- MODULE CovMapNever ----
\* As CovMap, listing a branch no trace can show: coverage is never complete.
EXTENDS Spec
MapVars(st, net) == [clock |-> 0]
WindowStart(ev) == ""
Branch(ev) == IF ev.kind = "zk.notification.handle" THEN ev.args.branch ELSE ""
Branches == {"lookingSameEpoch", "noSuchBranch"}
====
