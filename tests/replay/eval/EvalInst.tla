---- MODULE EvalInst ----
EXTENDS Naturals
CONSTANT c
Val == c * 2
Plus(x) == x + c
Helper == c + 1
Nested == Helper * 100
====
