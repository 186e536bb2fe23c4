---- MODULE Strong ----
\* Weak and strong fairness apart: Go is enabled only while b, and Toggle flips b for ever, so
\* WF_v(Go) allows never going (Go is not continuously enabled) and SF_v(Go) does not. By hand:
\* states (x, b) = (0, F), (0, T), (1, T), (1, F); 6 generated (1 initial, 5 steps), depth 4.
VARIABLES x, b
v == <<x, b>>
Init == x = 0 /\ b = FALSE
Toggle == b' = ~b /\ UNCHANGED x
Go == b /\ x = 0 /\ x' = 1 /\ UNCHANGED b
Next == Toggle \/ Go
WeakSpec == Init /\ [][Next]_v /\ WF_v(Toggle) /\ WF_v(Go)
StrongSpec == Init /\ [][Next]_v /\ WF_v(Toggle) /\ SF_v(Go)
Goes == <>(x = 1)
\* As properties: WeakSpec's behaviours satisfy WF_v(Toggle) and not SF_v(Go).
WeakToggle == WF_v(Toggle)
StrongGo == SF_v(Go)
====
