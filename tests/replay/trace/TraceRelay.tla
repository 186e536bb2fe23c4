---- MODULE TraceRelay ----
\* Trace validation in the style of etcd-io/raft's Traceetcdraft.tla: the log (NDJSON, named
\* by the environment's TRACE) gives one line per step; a "recv" line may leave out which
\* message arrived, so the search carries every possibility (hidden state) until a later
\* line tells them apart.
EXTENDS Relay, Json, IOUtils, Sequences, TLC

Log == ndJsonDeserialize(IF "TRACE" \in DOMAIN IOEnv THEN IOEnv.TRACE ELSE "good.ndjson")

VARIABLE l
TraceInit == Init /\ l = 1
Line == Log[l]
SendStep == Line.op = "send" /\ Send
RecvStep == Line.op = "recv" /\ Recv /\ ("m" \in DOMAIN Line => got' = got \cup {Line.m})
TraceNext == l <= Len(Log) /\ l' = l + 1 /\ (SendStep \/ RecvStep)
TraceSpec == TraceInit /\ [][TraceNext]_<<vars, l>>

TraceMatched == [](l <= Len(Log) => [](TLCGet("queue") = 1 \/ l > Len(Log)))
RelaySpec == Spec
\* As CCF's Traceccfraft.tla ends its search: the first state at the last line stops it.
Termination == l = Len(Log) => TLCSet("exit", TRUE)
TraceAlias == [line |-> l, got |-> got]
\* As CCF's TraceMatchedNonTrivially: the search went as deep as the log is long. TLCGet's
\* diameter after the search is the level of the last states expanded: the one past the last
\* line (Len(Log) + 1) when the search runs out, the last line's when Termination stops it.
TraceAccepted == TLCGet("stats").diameter = Len(Log) + 1
TraceAcceptedExit == TLCGet("stats").diameter = Len(Log)
====
