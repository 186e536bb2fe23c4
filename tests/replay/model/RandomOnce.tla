---- MODULE RandomOnce ----
\* A constant with a random choice is one value for the whole run, as TLC evaluates constant
\* definitions once: membership in it (looked up, not re-chosen) agrees with its value, 30
\* times over. By hand: x \in {1, 2}, 2 states, each its own successor.
EXTENDS Naturals, TLC
VARIABLE x
S == RandomElement({{1}, {2}})
Init == x \in {1, 2}
Next == UNCHANGED x
Consistent == \A i \in 1 .. 30 : (x \in S) = (S = {x})
====
