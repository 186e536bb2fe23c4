---- MODULE Flips ----
\* Two bits flipped one at a time; the invariant forbids both set.
VARIABLES a, b
Init == a = FALSE /\ b = FALSE
FlipA == a' = ~a /\ UNCHANGED b
FlipB == b' = ~b /\ UNCHANGED a
Next == FlipA \/ FlipB
NotBoth == ~(a /\ b)
====
