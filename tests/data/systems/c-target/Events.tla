---- MODULE Events ----
(* Every probe hit of the C test target as one event: its probe's name as the kind, and its    *)
(* reads as the event's state, so the test sees each value the probe read.                     *)
EXTENDS Naturals
ShapeInit == 0
Shape(hit, acc) == [acc |-> acc + 1, out |-> <<[kind |-> hit.probe, state |-> hit.r]>>]
====
