---- MODULE InstInner ----
\* Instantiated by InstOuter: its definition Node shares the name of the root's constant (the
\* cfg's Node = {...} assigns that constant, not this); its Ballot is overridden only by an
\* entry that names the module (Ballot <- [InstInner]MCBallot), as TLC does.
EXTENDS Naturals
CONSTANT N
VARIABLE x
Node == 0 .. N - 1
Ballot == Nat
Pick == CHOOSE i \in Node : TRUE
SmallBallots == {b \in Ballot : b < 2}
====
