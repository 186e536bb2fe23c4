---- MODULE Eval ----
\* Test data for tests/unit/test_eval.c: one definition per construct, expected values there.
EXTENDS Integers, Sequences, FiniteSets, TLC, EvalLib, Bags
CONSTANTS A, B, Procs, N

\* arithmetic
Ar1 == 7 \div 2
Ar2 == (-7) \div 2
Ar2b == -7 \div 2
Ar2c == 7 % -3
Ar2d == <<(-8) \div 4, 7 \div -2, (-7) \div -2, (-7) % 3, (-6) % 3>>
Ar2e == 1 \div 0
Ar3 == -7 % 2
Ar4 == 7 % 3
Ar5 == 2 ^ 10
Ar6 == -(3 - 5) * 4
Ar7 == 1..4
Ar8 == 3..1
Ar9 == <<1 < 2, 2 <= 2, 3 > 4, 4 >= 5, 1 = 1, 1 # 1, 1 /= 2>>
Ar10 == 10 - 3 - 2
Ar11 == 2 * 3 + 4 * 5
Overflow == 9223372036854775807 + 1
OverflowMul == 4611686018427387904 * 2

\* LET
Let1 == LET x == 3
            Sq(y) == y * y
        IN Sq(x) + 1
Let2 == LET a == 2
            Add(p, q) == p + q + a
        IN LET b == Add(a, 10)
               Twice(z) == Add(z, z)
           IN <<b, Twice(b)>>
Let3 == LET f[n \in 0..4] == IF n = 0 THEN 0 ELSE n + f[n - 1] IN f[4]
Scale(k) == LET g[i \in 1..3] == i * k IN g
Let4 == Scale(5)
Let5 == LET x == 1 IN LET x2 == x + 1 IN LET F(y) == y + x2 IN F(10)

\* IF, CASE
If1 == IF 1 < 2 THEN "yes" ELSE "no"
If2 == IF FALSE THEN 1 ELSE IF TRUE THEN 2 ELSE 3
Case1 == CASE 1 > 2 -> "a" [] 2 > 1 -> "b" [] OTHER -> "c"
Case2 == CASE 1 > 2 -> "a" [] OTHER -> "c"
Case3 == CASE 1 = 1 -> 10 [] 2 = 3 -> 20
CaseNone == CASE 1 = 2 -> 10 [] 2 = 3 -> 20

\* CHOOSE, quantifiers
Ch1 == CHOOSE x \in 1..10 : x * x > 20
Ch2 == CHOOSE <<x, y>> \in (1..3) \X (1..3) : x + y = 5 /\ x > y
ChNone == CHOOSE x \in 1..3 : x > 5
Ex1 == \E x \in 1..3 : x = 2
Ex2 == \E x, y \in 1..3 : x + y = 6
Ex3 == \E x \in 1..3, y \in {10} : x + y = 13
Ex4 == \E <<x, y>> \in {<<1, 2>>, <<3, 4>>} : x + y = 7
Ex5 == \E x \in {} : TRUE
All1 == \A x \in 1..3 : x > 0
All2 == \A x, y \in 1..3 : x + y < 6
All3 == \A <<a, b>> \in {<<1, 1>>, <<2, 2>>} : a = b
All4 == \A x \in {} : FALSE
ExNat == \E x \in Nat : x > 3

\* sets
Set1 == {3, 1, 2, 1}
Set2 == {x \in 1..10 : x % 3 = 0}
Set3 == {x * 10 : x \in 1..3}
Set4 == {x + y : x \in 1..2, y \in {10, 20}}
Set5 == {<<x, y>> : x \in 1..2, y \in {"a"}}
Set6 == <<{1, 2} \cup {2, 3}, {1, 2} \cap {2, 3}, {1, 2, 3} \ {2}>>
Set7 == <<{1} \subseteq {1, 2}, {3} \subseteq {1, 2}, 2 \in {1, 2}, 2 \notin {1, 2}>>
Set8 == SUBSET {1, 2}
Set9 == UNION {{1, 2}, {2, 3}, {}}
Set10 == DOMAIN [x \in {"a", "b"} |-> 0]
Set11 == Cardinality({x \in 1..100 : x % 7 = 0})
Set12 == {<<x, y>> \in (1..2) \X (1..2) : x < y}

\* functions
Fn1 == [x \in 1..3 |-> x * x]
Fn2 == [x \in {"a", "b"} |-> x]
Fn3 == [x \in 1..2, y \in {"a", "b"} |-> x]
Fn4 == Fn3[2, "b"]
Fn5 == Fn3[<<1, "a">>]
Fn6 == [{1, 2} -> {"x", "y"}]
Fn7 == <<[a |-> 1] \in [{"a"} -> 1..3], Fn1 \in [1..3 -> Nat], Fn1 \in [1..3 -> 1..4], Fn1 \in [1..2 -> Nat]>>
Fn8 == Fn1[2]
FnOut == Fn1[7]
FnOut2 == Fn3[3, "a"]
Fn9 == (1 :> "a") @@ (2 :> "b") @@ (1 :> "z")
Fn10 == (5 :> 6)

fact[n \in Nat] == IF n = 0 THEN 1 ELSE n * fact[n - 1]
Fn11 == fact[5]
Fn12 == fact[20]
sumTo[n \in 0..10] == IF n = 0 THEN 0 ELSE n + sumTo[n - 1]
Fn13 == sumTo
FnNeg == fact[-1]

\* records
Rec1 == [b |-> 2, a |-> 1]
Rec2 == Rec1.b
Rec3 == [a : {1, 2}, b : {"x"}]
Rec4 == <<[a |-> 1, b |-> "x"] \in [a : Nat, b : STRING], [a |-> -1, b |-> "x"] \in [a : Nat, b : STRING], [a |-> 1] \in [a : Nat, b : STRING]>>
RecMissing == Rec1.c

\* tuples and sequences
Seq1 == <<1, "two", {3}>>
Seq2 == <<Len(<<4, 5, 6>>), Append(<<1>>, 2), Head(<<7, 8>>), Tail(<<7, 8, 9>>)>>
Seq3 == <<1, 2>> \o <<3>> \o <<>>
Seq4 == SubSeq(<<"a", "b", "c", "d">>, 2, 3)
Seq5 == <<10, 20, 30>>[2]
Seq6 == <<>>
Seq7 == [i \in 1..3 |-> i * 2]
Seq8 == SubSeq(<<1, 2>>, 2, 1)

\* EXCEPT
Ex_1 == [Fn1 EXCEPT ![2] = @ + 100]
Ex_2 == [<<1, 2, 3>> EXCEPT ![1] = 0, ![3] = @ * 10]
Ex_3 == [[a |-> 1, b |-> 2] EXCEPT !.a = @ + 1, !.b = 0]
Ex_4 == [[i \in 1..2 |-> [j \in 1..2 |-> [f |-> i * j, g |-> 0]]] EXCEPT ![2][1].f = @ + 7, ![1][2].g = 9]
Ex_5 == [[a |-> [b |-> <<1, 2>>]] EXCEPT !.a.b[2] = 5]
Ex_6 == [Fn1 EXCEPT ![9] = 0]
Ex_7 == [Fn1 EXCEPT ![1] = 5, ![1] = @ + 1]
\* Several updates change one copy: the function updated stays as it was, and so does a value an
\* update reads from it.
Ex_8 == LET f == <<1, 2, 3>>
            g == [f EXCEPT ![1] = 10, ![2] = f[1] + @, ![1] = @ * 2, ![3] = Len(f)]
        IN <<f, g>>
Ex_9 == LET r == [a |-> <<1>>, b |-> 2]
            s == [r EXCEPT !.b = 3, !.a[1] = @ + r.b, !.b = @ + 1]
        IN <<r, s>>

\* strings and model values
Str1 == "hello"
Str2 == <<"a" = "a", "a" = "b", "a\"b">>
Str3 == {"b", "a"}
Mv1 == <<A, B>>
Mv2 == <<A = A, A = B, A \in Procs>>
Mv3 == Procs
Mv4 == N + 1

\* membership in infinite and derived sets
Mem1 == <<3 \in Nat, -3 \in Nat, -3 \in Int, "s" \in Nat>>
Mem2 == <<"s" \in STRING, 1 \in STRING, TRUE \in BOOLEAN, 0 \in BOOLEAN>>
Mem3 == <<<<1, 2>> \in Seq(Nat), <<1, -2>> \in Seq(Nat), <<>> \in Seq({}), 3 \in Seq(Nat)>>
Mem4 == <<{1} \in SUBSET {1, 2}, {3} \in SUBSET {1, 2}, {} \in SUBSET Nat, {-1} \in SUBSET Nat>>
Mem5 == <<<<"a">> \in Seq(STRING), [x \in 1..2 |-> "a"] \in Seq(STRING)>>
Mem6 == BOOLEAN
Mem7 == 1 \notin Nat
Mem8 == <<2 \in 1..3, 1 \in 1..3, 3 \in 1..3, 0 \in 1..3, 4 \in 1..3, 1 \in 2..1, 5 \notin 1..3, -1 \in -2..-1>>
Mem9 == {c \in [b : 0..3, w : 0..3] : c.b + c.w \in 2..3} = {c \in [b : 0..3, w : 0..3] : c.b + c.w \in {2, 3}}

\* operators
Add3(x, y, z) == x + y + z
Op1 == Add3(1, 2, 3)
Apply(F(_), x) == F(x)
Apply2(F(_, _), x, y) == F(x, y)
Double(x) == 2 * x
Op2 == Apply(Double, 21)
Op3 == Apply(LAMBDA x : x + 1, 41)
Op4 == Apply2(LAMBDA x, y : x * y, 6, 7)
Op5 == Apply2(Add3Partial, 1, 2)
Add3Partial(x, y) == Add3(x, y, 100)
Op6 == LET k == 5 IN Apply(LAMBDA x : x + k, 1)
Op7 == LET Inc(x) == x + 1 IN Apply(Inc, 1)
a ++ b == a * 10 + b
Op8 == 1 ++ 2

RECURSIVE Fact(_)
Fact(n) == IF n = 0 THEN 1 ELSE n * Fact(n - 1)
RECURSIVE SetSum(_)
SetSum(S) == IF S = {} THEN 0 ELSE LET x == CHOOSE y \in S : TRUE IN x + SetSum(S \ {x})
Rec_1 == Fact(6)
Rec_2 == SetSum({1, 5, 10, 100})
RECURSIVE Forever(_)
Forever(n) == Forever(n + 1)
RecDeep == Forever(0)

\* EXTENDS and INSTANCE
Ext1 == LibTriple(4)
Ext2 == LibConst
I == INSTANCE EvalInst WITH c <- 5
I2 == INSTANCE EvalInst WITH c <- N * 2
Inst1 == I!Val
Inst2 == I!Plus(10)
Inst3 == I2!Val
Inst4 == I!Nested

UnbEx == \E x : x = 1
UnbCh == CHOOSE x : x = 1
\* Bags, and TLC's registers
Bag1 == SetToBag({"a", "b"}) (+) SetToBag({"a"})
Bag2 == BagCardinality(Bag1)
Bag3 == CopiesIn("a", Bag1 (-) SetToBag({"a"}))
Bag4 == Bag1 (-) Bag1
Bag5 == SetToBag({1}) \sqsubseteq Bag1
Bag6 == BagToSet(Bag1)
Bag7 == BagIn("b", EmptyBag)
Reg1 == TLCSet(3, <<7>>) /\ TLCGet(3) = <<7>>
Reg2 == TLCGet("level")
Ext == INSTANCE TLCExt
Reg3 == Ext!TLCGetOrDefault(5, "none")
\* old value 10 (the default), set to 10 + 2, then 12 + 5: each call gives the value before it
Reg4 == /\ Ext!TLCGetAndSet(6, LAMBDA a, b : a + b, 2, 10) = 10
        /\ Ext!TLCGetAndSet(6, +, 5, 10) = 12
        /\ TLCGet(6) = 17
        /\ Ext!TLCGetOrDefault(6, 0) = 17
\* named registers; "exit" with anything but TRUE does nothing; TLCDefer never evaluates its argument
Reg5 == /\ TLCSet("s:n", <<1>>) /\ TLCGet("s:n") = <<1>> /\ Ext!TLCGetOrDefault("s:m", 4) = 4
        /\ TLCSet("exit", FALSE) /\ TLCSet("exit", 3) /\ Ext!TLCDefer(1 \div 0)
        /\ Ext!PickSuccessor(TRUE)
Reg6 == TLCSet("exit", TRUE)
Reg7 == Ext!PickSuccessor(1 > 2)
Reg8 == TLCGet("s:never")
\* CommunityModules' Relation, hand-derived: < on 1..3 is a strict total order; E's edges 1->2->3
Rel == INSTANCE Relation
RS == {1, 2, 3}
E == [p \in RS \X RS |-> p \in {<<1, 2>>, <<2, 3>>}]
Rel1 == << Rel!IsStrictlyTotallyOrdered([p \in RS \X RS |-> p[1] < p[2]], RS),
           Rel!IsStrictlyTotallyOrderedUnder(<, RS), Rel!IsTotallyOrderedUnder(\leq, RS),
           Rel!IsPartiallyOrderedUnder(\leq, RS), Rel!IsStrictlyPartiallyOrderedUnder(<, RS),
           Rel!IsSymmetricUnder(<, RS), Rel!IsReflexiveUnder(\leq, RS), Rel!IsIrreflexiveUnder(<, RS),
           Rel!IsAntiSymmetricUnder(\leq, RS), Rel!IsAsymmetricUnder(\leq, RS),
           Rel!IsTransitiveUnder(LAMBDA x, y : x # y, RS), Rel!IsTotallyOrderedUnder(<, RS) >>
Rel2 == LET T == Rel!TransitiveClosure(E, RS)
            R == Rel!ReflexiveTransitiveClosure(E, RS)
        IN << T[1, 3], T[3, 1], T[1, 1], R[1, 1], R[3, 1], DOMAIN T = RS \X RS,
              Rel!IsConnected(E, RS), Rel!IsConnected([p \in RS \X RS |-> E[p] \/ E[p[2], p[1]]], RS) >>
Rel3 == Rel!IsReflexive([p \in {1} \X {1} |-> 5], {1})
\* SequencesExt operators CCF's specs use, hand-derived
SX == INSTANCE SequencesExt
Sqx1 == << SX!FoldLeftDomain(LAMBDA acc, i : acc \o <<i>>, <<>>, <<"a", "b", "c">>),
           SX!FoldRightDomain(LAMBDA i, acc : acc \o <<i>>, <<"a", "b", "c">>, <<>>),
           SX!RemoveFirst(<<1, 2, 1>>, 1), SX!RemoveFirst(<<1, 2>>, 3),
           SX!RemoveFirstMatch(<<1, 2, 3>>, LAMBDA x : x > 1), SX!RemoveFirstMatch(<<1>>, LAMBDA x : x > 1),
           SX!SeqMod(5, 5), SX!SeqMod(6, 5), SX!SeqMod(0, 3) >>
Sqx2 == << SX!Prefixes(<<1, 2>>), SX!Suffixes(<<1, 2>>), SX!SubSeqs(<<1, 2, 3>>) = {<<>>, <<1>>, <<2>>, <<3>>, <<1, 2>>, <<2, 3>>, <<1, 2, 3>>},
           SX!AllSubSeqs(<<1, 2, 3>>) = SX!SubSeqs(<<1, 2, 3>>) \cup {<<1, 3>>}, Cardinality(SX!AllSubSeqs(<<1, 1>>)) >>
====
