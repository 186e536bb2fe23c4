---- MODULE Stopped ----
\* TLC's run controls: TLCSet("exit", TRUE) ends the search as a completed one once the state
\* being expanded is done; named registers ("s:..."); TLCDefer's expression is never evaluated
\* by a breadth-first search; PickSuccessor(TRUE) takes the step. By hand, one worker: x = 0..41
\* are found (Next from x = 40 asks to exit; its successor 41 is kept, not expanded): 42 states
\* generated, 42 distinct, 1 left on the queue, depth 42.
EXTENDS Naturals, TLC, TLCExt
VARIABLE x
ASSUME TLCSet("s:label", "start")
Init == x = 0 /\ TLCSet("s:count", 0)
Next == /\ x' = x + 1
        /\ TLCSet("exit", x = 40)
        /\ TLCGet("s:count") = x
        /\ TLCSet("s:count", x + 1)
        /\ TLCDefer(Assert(FALSE, "a deferred expression was evaluated"))
        /\ PickSuccessor(x < 100)
Inv == x <= 41
Post == TLCGet("s:label") = "start" /\ TLCGet("s:count") = 41 /\ TLCGetOrDefault("s:none", 7) = 7
====
