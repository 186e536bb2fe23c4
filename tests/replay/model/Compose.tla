---- MODULE Compose ----
\* Action composition, A \cdot B: a step of Inc then one of Double from the state Inc reached.
\* By hand: 0 -> 2 -> 6 -> 14 (x < 10 stops there): 4 states generated, 4 distinct, depth 4.
\* Composed is checked as a property on each step (the evaluator's \cdot: some middle state).
EXTENDS Naturals
VARIABLE x
Init == x = 0
Inc == x' = x + 1
Double == x' = 2 * x
Next == x < 10 /\ (Inc \cdot Double)
Composed == [][Inc \cdot Double]_x
Backwards == [][Double \cdot Inc]_x
====
