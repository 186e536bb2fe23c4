---- MODULE Subexpr ----
\* Subexpression names: Inv!2!1 is the first disjunct of Inv's second conjunct, T!: a named
\* theorem's statement (assumed, as Paxos' MCVoting does). By hand: x in 0..2, 3 states.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 3
Inv == /\ x >= 0
       /\ \/ x < 3
          \/ x = 5
THEOREM Small == \A n \in 0 .. 2 : n < 3
ASSUME Small!:
Parts == Inv!1 /\ Inv!2!1
Five == Inv!2!2
====
