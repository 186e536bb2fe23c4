---- MODULE Viewed ----
\* y grows without bound, but the VIEW sees x only: three distinct states.
EXTENDS Naturals
VARIABLES x, y
Init == x = 0 /\ y = 0
Next == x' = (x + 1) % 3 /\ y' = y + 1
View == x
====
