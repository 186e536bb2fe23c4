---- MODULE Embedded ----
\* A file of two modules (as braf's): the first instantiates the second, which follows it in
\* the file. Membership in an operator's infinite set (Arr(T) == [elems : Seq(T)]) is decided
\* without building it. By hand: a = <<>>, <<1>>, <<1, 1>>: 3 states, depth 3.
EXTENDS Naturals, Sequences
VARIABLE a
H == INSTANCE Helpers
Init == a = <<>>
Next == Len(a) < 2 /\ a' = Append(a, 1)
TypeOK == H!Wrap(a) \in H!Arr(Nat)
====

---- MODULE Helpers ----
EXTENDS Sequences
Arr(T) == [elems : Seq(T)]
Wrap(s) == [elems |-> s]
====
