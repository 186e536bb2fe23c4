---- MODULE Traced ----
\* TLCExt's Trace: the behaviour from an initial state to the current one, each state a record of
\* the variables, as TLC rebuilds it from its trace file (each state's first predecessor found).
\* By hand: a and b count to 2, IncA first. Breadth-first with one worker, <<1, 1>> is first
\* reached from <<1, 0>>, <<2, 1>> from <<2, 0>>, <<1, 2>> from <<1, 1>>, <<2, 2>> from <<2, 1>>.
\* 9 states, 1 + 6 + 6 = 13 generated, depth 5. In Next, Trace ends with the state stepped from
\* (a wrong one there would disable a step: fewer states).
EXTENDS Naturals, Sequences, TLCExt
VARIABLES a, b
Init == a = 0 /\ b = 0
Next == \/ a < 2 /\ Len(Trace) = a + b + 1 /\ a' = a + 1 /\ b' = b
        \/ b < 2 /\ Trace[Len(Trace)] = [a |-> a, b |-> b] /\ b' = b + 1 /\ a' = a
\* In an invariant, Trace ends with the state checked.
Inv == /\ Len(Trace) = a + b + 1
       /\ Trace[Len(Trace)] = [a |-> a, b |-> b]
       /\ Trace[1] = [a |-> 0, b |-> 0]
       /\ (a = 1 /\ b = 1) => Trace[2] = [a |-> 1, b |-> 0]
       /\ (a = 1 /\ b = 2) => Trace[3] = [a |-> 1, b |-> 1]
       /\ (a = 2 /\ b = 2) => Trace = << [a |-> 0, b |-> 0], [a |-> 1, b |-> 0], [a |-> 2, b |-> 0],
                                         [a |-> 2, b |-> 1], [a |-> 2, b |-> 2] >>
\* Broken at the first state two steps from the initial one, <<2, 0>>.
Short == Len(Trace) <= 2
====
