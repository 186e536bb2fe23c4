---- MODULE Crash ----
\* Divides by zero two steps in: an evaluation error, with the behaviour that led to it.
EXTENDS Integers
VARIABLE x
Init == x = 2
Next == x' = (10 \div x) * 0 + x - 1
====
