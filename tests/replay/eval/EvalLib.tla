---- MODULE EvalLib ----
EXTENDS Naturals
LibTriple(x) == 3 * x
LibConst == LibTriple(2) + 1
LOCAL Hidden == 99
====
