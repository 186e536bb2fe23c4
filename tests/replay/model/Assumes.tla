---- MODULE Assumes ----
EXTENDS Naturals
CONSTANT N
VARIABLE x
ASSUME N \in Nat \ {0}
ASSUME Big == N > 10
Init == x = 0
Next == UNCHANGED x
====
