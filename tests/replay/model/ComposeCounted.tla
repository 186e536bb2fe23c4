---- MODULE ComposeCounted ----
\* A \cdot B inside a conjunction that assigned a variable before it, as a trace spec's line
\* counter (CCF's Traceccfraft.tla: IsEvent's l' = l + 1, then UpdateTerm \cdot Handle...). As
\* TLC's copyWith: that variable keeps its old value in the middle state (so Inc, which says
\* n' = n, holds there) and has its new one in the step. By hand, <<x, n>>: <<0, 0>> -> <<2, 1>>
\* -> <<6, 2>> -> <<14, 3>>: 4 distinct states, depth 4. Composed checks each step as a property:
\* IncX says nothing of n, so its middle state leaves n unassigned (TLC's evaluation of \cdot on
\* a known step starts from an empty state), which Double never reads.
EXTENDS Naturals
VARIABLES x, n
Init == x = 0 /\ n = 0
Inc == x' = x + 1 /\ n' = n
Double == x' = 2 * x
Next == x < 10 /\ n' = n + 1 /\ (Inc \cdot Double)
Counted == n = 0 \/ x = 2 * (2 ^ n - 1)
IncX == x' = x + 1
Composed == [][IncX \cdot Double]_x
\* B reads n in that middle state: an error naming n (TLC: n undefined there)
ReadsN == [][IncX \cdot (x' = 2 * x + n - n)]_x
====
