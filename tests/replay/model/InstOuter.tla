---- MODULE InstOuter ----
\* The cfg's entries and instances (InstInner): by hand, one state, the invariant holds only
\* if I!Node is 0..1 (not the model values) and Ballot, here and in I, is 0..3 (not Nat, which
\* the filter could not enumerate); an INSTANCE in a LET is one too.
EXTENDS Naturals, FiniteSets
CONSTANT Node
VARIABLE y
N == Cardinality(Node)
I == INSTANCE InstInner WITH x <- y
Ballot == Nat
MCBallot == 0 .. 3
Init == y = 0
Next == UNCHANGED y
LetPick == LET J == INSTANCE InstInner WITH x <- y IN J!Pick
Inv == I!Pick = 0 /\ I!SmallBallots = {0, 1} /\ Ballot = 0 .. 3 /\ LetPick = 0
====
