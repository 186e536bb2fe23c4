---- MODULE Props ----
\* Properties: a step property broken by the wrap-around, an initial condition, a liveness one
\* (violated: x never reaches 5), and one of a form spectap does not check.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = IF x = 2 THEN 0 ELSE x + 1
Spec == Init /\ [][Next]_x
Increasing == [][x' > x]_x
StartsAtOne == x = 1
AlwaysSmall == [](x < 3)
Reaches5 == <>(x = 5)
EventuallyImplies == <>(x = 1) => <>(x = 2)
ASSUME 2 + 2 = 4
====
