---- MODULE Counter ----
\* A counter per node, for the checker's own tests.
EXTENDS Naturals, Sequences, FiniteSets
CONSTANTS Node, Max
VARIABLES count, log

vars == <<count, log>>

Init == /\ count = [n \in Node |-> 0]
        /\ log = <<>>

Inc(n) == /\ count[n] < Max
          /\ count' = [count EXCEPT ![n] = @ + 1]
          /\ log' = Append(log, n)

Reset(n) == /\ count[n] = Max
            /\ count' = [count EXCEPT ![n] = 0]
            /\ UNCHANGED log

Jump(n) == \E k \in 1..2 : /\ count[n] + k <= Max
                           /\ count' = [count EXCEPT ![n] = count[n] + k]
                           /\ log' = log \o <<n, n>>

Next == \E n \in Node : Inc(n) \/ Reset(n) \/ Jump(n)

TypeOK == /\ count \in [Node -> 0..Max]
          /\ log \in Seq(Node)
====
