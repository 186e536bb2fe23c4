---- MODULE Events ----
(* Each probe hit of etcd-described as one event: the probe's name as its kind and its reads   *)
(* as its state (systems/etcd/shape.c is what turns them into the etcd trace, in C).           *)
EXTENDS Naturals
ShapeInit == 0
Shape(hit, acc) == [acc |-> acc + 1, out |-> <<[kind |-> hit.probe, state |-> hit.r]>>]
====
