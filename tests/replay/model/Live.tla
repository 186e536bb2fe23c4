---- MODULE Live ----
\* Liveness on a 4-state cycle (0 -> 1 -> 2 -> 3 -> 0): without fairness a behaviour may stutter
\* at 0 for ever, so <>(x = 3) fails; with WF it holds, and so do []<>(x = 0) and
\* (x = 1) ~> (x = 3); <>[](x = 3) fails (x leaves 3). By hand: 4 distinct states, 5 generated
\* (the initial one and 4 steps), depth 4.
EXTENDS Naturals
VARIABLE x
vars == x
Init == x = 0
Inc == x < 3 /\ x' = x + 1
Reset == x = 3 /\ x' = 0
Next == Inc \/ Reset
Spec == Init /\ [][Next]_vars
FairSpec == Spec /\ WF_vars(Next)
Reaches3 == <>(x = 3)
InfinitelyOften0 == []<>(x = 0)
OneLeadsTo3 == (x = 1) ~> (x = 3)
Live == Reaches3 /\ InfinitelyOften0 /\ \A k \in 0..2 : (x = k) ~> (x = k + 1)
StaysAt3 == <>[](x = 3)
\* More forms: steps for ever (fails without fairness: a behaviour may stutter), a disjunction
\* of []<>, c => []P (the states reachable from initial states in c), []A => <>B.
StepsForever == []<><<Next>>_vars
EitherOften == []<>(x = 3) \/ []<><<Inc>>_vars
GuardedBelow4 == (x = 0) => [](x < 4)
GuardedBelow3 == (x = 0) => [](x < 3)
StayingBelow3Reaches2 == [](x < 3) => <>(x = 2)
====
