---- MODULE CounterMap ----
\* Maps the test trace counter.ndjson onto Counter.tla: each "inc"/"reset" event is one step.
EXTENDS Spec
MapVars(st, net) == [count |-> [n \in Node |-> IF n \in DOMAIN st THEN st[n].value ELSE 0]]
WindowStart(ev) == CASE ev.kind = "inc" -> "Inc"
                   [] ev.kind = "reset" -> "Reset"
                   [] OTHER -> ""
Params(ev, a) == <<ev.node>>
Input(ev, a) == [node |-> ev.node, kind |-> ev.kind]
====
