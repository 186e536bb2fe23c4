---- MODULE WindowMap ----
\* Windows written in another value space: counts as an array indexed 1, 2 and the actor as a number.
EXTENDS Spec
Index(n) == IF n = "a" THEN 1 ELSE 2
WindowVars(s) == [count |-> [n \in Node |-> s.count[Index(n)]]]
WindowParams(w) == <<IF w.actor = 1 THEN "a" ELSE "b">>
====
