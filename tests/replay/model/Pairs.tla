---- MODULE Pairs ----
\* Up to three edges between processes and values: 42 graphs, 8 up to renaming processes and
\* values (two symmetry classes, whose values often tie).
EXTENDS FiniteSets, TLC
CONSTANTS P, V
VARIABLE m
Init == m = {}
Next == \E p \in P, v \in V : <<p, v>> \notin m /\ Cardinality(m) < 3 /\ m' = m \cup {<<p, v>>}
Sym == Permutations(P) \cup Permutations(V)
====
