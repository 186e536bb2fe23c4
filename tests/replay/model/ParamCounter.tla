---- MODULE ParamCounter ----
\* Instantiated with parameters by ParamInst (C(c, Cap) == INSTANCE ParamCounter): c and Cap are
\* substituted by the arguments of each C(x, 2)!Op, a variable and a number.
EXTENDS Naturals
CONSTANT Cap
VARIABLE c
Init == c = 0
Inc == c < Cap /\ c' = c + 1
Reset == c = Cap /\ c' = 0
Stay == UNCHANGED c
Full == c = Cap
Plus(k) == c + k
====
