---- MODULE ParamInst ----
\* Parameterized instances, I(x) == INSTANCE M: I(a)!Op is Op with M's parameters substituted by
\* the arguments. By hand: x counts to 2 and y to 3 through C(x, 2) and C(y, 3) (c' = c + 1 is
\* x' = x + 1), both reset when both are full: the 12 pairs of 0..2 \X 0..3 are reached from
\* <<0, 0>>; each state has a successor per counter below its cap, and <<2, 3>> one more (the
\* reset): 8 + 9 + 1 = 18 successors, 19 states generated with the initial one; the farthest,
\* <<2, 3>>, is 5 steps away (depth 6).
EXTENDS Naturals
VARIABLES x, y
C(c, Cap) == INSTANCE ParamCounter
S(N) == INSTANCE ParamSum
T(a) == INSTANCE ParamSum WITH N <- a + 1

\* Totals 0, 1, 3, 6, 10 for N = 0 .. 4: a value kept for one S(n) would break these.
ASSUME <<S(1)!Total, S(2)!Total, S(4)!Total>> = <<1, 3, 10>>
ASSUME {S(n)!Scaled(2) : n \in 0 .. 3} = {0, 2, 6, 12}
ASSUME T(1)!Total = 3 /\ \A n \in 1 .. 3 : T(n - 1)!Total = S(n)!Total

Init == C(x, 2)!Init /\ C(y, 3)!Init
Next == \/ C(x, 2)!Inc /\ C(y, 3)!Stay
        \/ C(y, 3)!Inc /\ C(x, 2)!Stay
        \/ C(x, 2)!Full /\ C(y, 3)!Full /\ C(x, 2)!Reset /\ C(y, 3)!Reset
Inv == x \in 0 .. 2 /\ y \in 0 .. 3 /\ C(x, 2)!Plus(1) = x + 1 /\ C(y, 3)!Full = (y = 3)
\* Broken first at <<2, 0>> (S(2)!Total = 3), 2 steps from <<0, 0>>.
TotalIsX == S(x)!Total = x
\* Broken first at <<2, 1>>, through <<1, 0>> and <<2, 0>> (x's counter steps first).
NotFullAndOne == ~(C(x, 2)!Full /\ y = 1)
====
