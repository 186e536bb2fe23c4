---- MODULE InstInner ----
\* Instantiated by InstOuter: its definition Node shares the name of the root's constant (the
\* cfg's Node = {...} assigns that constant, not this), and its Ballot is overridden by the cfg
\* as a definition (TLC's override reaches instantiated modules).
EXTENDS Naturals
CONSTANT N
VARIABLE x
Node == 0 .. N - 1
Ballot == Nat
Pick == CHOOSE i \in Node : TRUE
SmallBallots == {b \in Ballot : b < 2}
====
