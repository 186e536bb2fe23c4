---- MODULE Events ----
\* First look: every hit as an event of its own kind, with its reads as args.
EXTENDS Naturals, Sequences
ShapeInit == 0
Shape(hit, acc) == [acc |-> acc + 1, out |-> << [kind |-> hit.probe, args |-> hit.r] >>]
====
