---- MODULE Bounded ----
\* An unbounded counter cut by a CONSTRAINT, a TLCGet("level") constraint, an ACTION_CONSTRAINT.
EXTENDS Naturals, TLC
VARIABLE x
Init == x = 0
Next == x' = x + 1
Jump == x < 4 /\ x' \in {x + 1, x + 2}
Small == x < 5
Shallow == TLCGet("level") < 4
OneStep == x' = x + 1
Typed == x \in Nat
====
