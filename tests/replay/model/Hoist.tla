---- MODULE Hoist ----
\* Guards hoisted out of \E loops (replay/hoist.c): Add's first conjuncts do not depend on the
\* inner loops (x = {}, i # j) or on the outer one only (r[1] = 2, through the argument
\* <<b, e>>), so whole runs of b and e are skipped, and the counts must stay TLC's. By hand:
\* from {}, 6 ordered pairs i # j, b = 2, e \in {2, 3, 4}: 18 successors, none of which has
\* one (x # {}); 19 states generated, 19 distinct, depth 2. Pick, the same action checked as
\* a property on every step, goes through the evaluator's \E instead of the enumerator's.
EXTENDS Naturals
VARIABLE x

Add(i, j, r) ==
    /\ x = {}
    /\ i # j
    /\ r[1] = 2
    /\ r[1] <= r[2]
    /\ x' = {<<i, j, r[1], r[2]>>}

Init == x = {}
Next == \E i, j \in 1..3 : \E b, e \in 1..4 : Add(i, j, <<b, e>>)
Pick == \E i, j \in 1..3 : \E b, e \in 1..4 : Add(i, j, <<b, e>>)
PickRefines == [][Pick]_x
\* Narrow: only e = 4; every step with e < 4 breaks it.
Narrow == \E i, j \in 1..3 : \E b, e \in 1..4 : Add(i, j, <<b, e>>) /\ e = 4
NarrowRefines == [][Narrow]_x
====
