---- MODULE Grow ----
\* A set of processes growing one at a time: 8 subsets, 4 up to symmetry.
EXTENDS FiniteSets, TLC
CONSTANT Procs
VARIABLE s
Init == s = {}
Add(p) == s' = s \cup {p}
Next == \E p \in Procs \ s : Add(p)
Sym == Permutations(Procs)
Spec == Init /\ [][Next]_s /\ \A p \in Procs : WF_s(Add(p))
====
