---- MODULE Counter ----
\* A counter that stops at 3: a deadlock unless the cfg turns the check off.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Step == x < 3 /\ x' = x + 1
Spec == Init /\ [][Step]_x
====
