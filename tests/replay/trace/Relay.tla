---- MODULE Relay ----
\* A relay that sends numbered messages and receives them in any order: the spec a trace spec
\* of ours (TraceRelay.tla) validates logs against (tests/cli/test_trace_spec.sh).
EXTENDS Naturals
CONSTANT N
VARIABLES sent, net, got
vars == <<sent, net, got>>

Init == sent = 0 /\ net = {} /\ got = {}
Send == sent < N /\ sent' = sent + 1 /\ net' = net \cup {sent + 1} /\ UNCHANGED got
Recv == \E m \in net : net' = net \ {m} /\ got' = got \cup {m} /\ UNCHANGED sent
Next == Send \/ Recv
Spec == Init /\ [][Next]_vars

NoLoss == got \cap net = {}
====
