---- MODULE Operators ----
\* The standard and community operators spectap implements natively, each against a value
\* worked out by hand from the module's definition (or from TLC's Java override where the two
\* differ: the order in which folds combine, absolute indices of SelectInSubSeq). A wrong one
\* is a false ASSUME: `spectap check --model` names its line.
EXTENDS Integers, Sequences, SequencesExt, FiniteSets, FiniteSetsExt, Functions, Folds, Bags, BagsExt, TLC,
        UndirectedGraphs, Bitwise, SVG, VectorClocks

\* VectorClocks' IsCausalOrder: each entry happened after, or is concurrent with, every one before
\* (clocks filled with 0 over the union of their domains).
VC(l) == l.vc
ASSUME IsCausalOrder(<< [vc |-> [a |-> 1]], [vc |-> [a |-> 2]], [vc |-> [a |-> 2, b |-> 1]] >>, VC)
ASSUME ~IsCausalOrder(<< [vc |-> [a |-> 2]], [vc |-> [a |-> 1]] >>, VC)
ASSUME IsCausalOrder(<< [vc |-> [a |-> 1, b |-> 0]], [vc |-> [a |-> 0, b |-> 1]] >>, VC)
ASSUME ~IsCausalOrder(<< [vc |-> [a |-> 1]], [vc |-> [a |-> 1]] >>, VC)
ASSUME IsCausalOrder(<< [vc |-> [a |-> 1]], [vc |-> [b |-> 1]] >>, VC)
ASSUME ~IsCausalOrder(<< [vc |-> [a |-> 1]], [vc |-> [b |-> 0]] >>, VC)
ASSUME IsCausalOrder(<< [vc |-> [a |-> -1]], [vc |-> [b |-> 0]] >>, VC)
ASSUME IsCausalOrder(<< >>, VC) /\ IsCausalOrder(<< [vc |-> [a |-> 5]] >>, VC)
ASSUME IsCausalOrder(<< (0 :> 1), (0 :> 1 @@ 1 :> 1), <<2, 1>> >>, LAMBDA c : c)
ASSUME ~IsCausalOrder(<< <<1, 1>>, <<2, 2>>, <<1, 2>> >>, LAMBDA c : c)

\* Sequences, SequencesExt
ASSUME SelectSeq(<<1, 2, 3, 4>>, LAMBDA x : x % 2 = 0) = <<2, 4>>
ASSUME SelectSeq(<<>>, LAMBDA x : TRUE) = <<>>
ASSUME SelectInSeq(<<5, 6, 7, 6>>, LAMBDA x : x = 6) = 2
ASSUME SelectLastInSeq(<<5, 6, 7, 6>>, LAMBDA x : x = 6) = 4
ASSUME SelectInSeq(<<5>>, LAMBDA x : x = 6) = 0
ASSUME SelectInSubSeq(<<5, 6, 7, 6>>, 3, 4, LAMBDA x : x = 6) = 4
ASSUME SelectLastInSubSeq(<<5, 6, 7, 6>>, 1, 3, LAMBDA x : x = 6) = 2
ASSUME SelectLastInSubSeq(<<5, 6>>, 1, 0, LAMBDA x : TRUE) = 0
ASSUME SortSeq(<<3, 1, 2>>, <) = <<1, 2, 3>>
ASSUME SortSeq(<<3, 1, 2>>, LAMBDA a, b : a > b) = <<3, 2, 1>>
ASSUME Remove(<<1, 2, 1, 3>>, 1) = <<2, 3>>
ASSUME ReplaceAll(<<1, 2, 1>>, 1, 9) = <<9, 2, 9>>
ASSUME InsertAt(<<1, 3>>, 2, 2) = <<1, 2, 3>>
ASSUME InsertAt(<<1>>, 2, 2) = <<1, 2>>
ASSUME ReplaceAt(<<1, 2>>, 2, 5) = <<1, 5>>
ASSUME RemoveAt(<<1, 2, 3>>, 2) = <<1, 3>>
ASSUME FlattenSeq(<<<<1>>, <<>>, <<2, 3>>>>) = <<1, 2, 3>>
ASSUME Zip(<<1, 2, 3>>, <<"a", "b">>) = <<<<1, "a">>, <<2, "b">>>>
ASSUME LongestCommonPrefix({<<1, 2, 3>>, <<1, 2>>, <<1, 2, 4>>}) = <<1, 2>>
ASSUME LongestCommonPrefix({<<1>>, <<2>>}) = <<>>
ASSUME SeqOf({0, 1}, 2) = {<<>>, <<0>>, <<1>>, <<0, 0>>, <<0, 1>>, <<1, 0>>, <<1, 1>>}
ASSUME BoundedSeq({"a"}, 1) = {<<>>, <<"a">>}
ASSUME TupleOf({0, 1}, 2) = {<<0, 0>>, <<0, 1>>, <<1, 0>>, <<1, 1>>}
ASSUME SetToSeqs({1, 2}) = {<<1, 2>>, <<2, 1>>}
ASSUME SetToSeqs({}) = {<<>>}
ASSUME SetToSortSeq({3, 1, 2}, <) = <<1, 2, 3>>
ASSUME IsSorted(<<1, 2, 2>>, <=) /\ ~IsSorted(<<2, 1>>, <=)
\* Folds: FoldSeq/FoldFunction/FoldSet give op(element, accumulator), elements in order.
ASSUME FoldSeq(LAMBDA x, acc : acc \o <<x>>, <<>>, <<1, 2, 3>>) = <<1, 2, 3>>
ASSUME FoldLeft(LAMBDA acc, x : acc - x, 10, <<1, 2, 3>>) = 4
ASSUME FoldRight(LAMBDA x, acc : x - acc, <<1, 2, 3>>, 0) = 2
ASSUME FoldFunction(LAMBDA x, acc : acc \o <<x>>, <<>>, [i \in {1, 2, 3} |-> 10 * i]) = <<10, 20, 30>>
ASSUME FoldFunctionOnSet(+, 0, <<5, 6, 7>>, {1, 3}) = 12
ASSUME FoldSet(LAMBDA x, acc : acc \o <<x>>, <<>>, {3, 1, 2}) = <<1, 2, 3>>
ASSUME ReduceSet(+, {1, 2, 3}, 10) = 16
ASSUME MapThenFoldSet(LAMBDA x, acc : acc \o <<x>>, <<>>, LAMBDA x : 2 * x, LAMBDA s : CHOOSE x \in s : TRUE, {1, 2, 3})
       = <<6, 4, 2>>
ASSUME MapThenFoldSet(+, 0, LAMBDA x : x, LAMBDA s : CHOOSE x \in s : \A y \in s : x >= y, {}) = 0
\* FiniteSetsExt
ASSUME Quantify({1, 2, 3, 4}, LAMBDA x : x > 2) = 2
ASSUME MapThenSumSet(LAMBDA x : x * x, {1, 2, 3}) = 14
ASSUME ChooseUnique({1, 2, 3}, LAMBDA x : x > 2) = 3
ASSUME kSubset(2, {1, 2, 3}) = {{1, 2}, {1, 3}, {2, 3}}
ASSUME kSubset(0, {1}) = {{}} /\ kSubset(3, {1}) = {}
ASSUME SymDiff({1, 2}, {2, 3}) = {1, 3}
ASSUME FlattenSet({{1}, {2, 3}}) = {1, 2, 3}
ASSUME ProductSet({2, 3, 4}) = 24 /\ SumSet({2, 3, 4}) = 9
ASSUME Max({3, 9, 1}) = 9 /\ Min({3, 9, 1}) = 1
\* Functions
ASSUME Inverse([x \in {1, 2} |-> 3 - x], {1, 2}, {1, 2}) = [y \in {1, 2} |-> 3 - y]
ASSUME AntiFunction(<<"a", "b">>) = [s \in {"a", "b"} |-> IF s = "a" THEN 1 ELSE 2]
ASSUME ExistsBijection({1, 2}, {"a", "b"}) /\ ~ExistsBijection({1}, {"a", "b"})
ASSUME ExistsInjection({1}, {"a", "b"}) /\ ~ExistsInjection({1, 2, 3}, {"a", "b"})
ASSUME ExistsSurjection({1, 2, 3}, {"a", "b"}) /\ ~ExistsSurjection({1}, {}) /\ ExistsSurjection({}, {})
ASSUME RestrictDomain(<<5, 6, 7>>, LAMBDA i : i > 1) = (2 :> 6 @@ 3 :> 7)
ASSUME RestrictValues(<<5, 6, 7>>, LAMBDA v : v # 6) = (1 :> 5 @@ 3 :> 7)
ASSUME Pointwise(<<1, 2>>, <<10, 20>>, +) = <<11, 22>>
\* Bags, BagsExt: FoldBag gives op(accumulator, element), each copy
ASSUME BagUnion({SetToBag({1, 2}), SetToBag({2})}) = (1 :> 1 @@ 2 :> 2)
ASSUME SubBag(1 :> 2) = {EmptyBag, 1 :> 1, 1 :> 2}
ASSUME BagOfAll(LAMBDA x : x % 2, (1 :> 1 @@ 2 :> 1 @@ 3 :> 2)) = (0 :> 1 @@ 1 :> 3)
ASSUME BagAdd(1 :> 1, 1) = (1 :> 2) /\ BagAdd(1 :> 1, 2) = (1 :> 1 @@ 2 :> 1)
ASSUME BagRemove(1 :> 2, 1) = (1 :> 1) /\ BagRemove(1 :> 1, 1) = EmptyBag /\ BagRemove(1 :> 1, 2) = (1 :> 1)
ASSUME BagRemoveAll(1 :> 3 @@ 2 :> 1, 1) = (2 :> 1)
ASSUME FoldBag(LAMBDA acc, x : acc \o <<x>>, <<>>, (1 :> 2 @@ 2 :> 1)) = <<1, 1, 2>>
\* Sets that are never built: membership and \subseteq on infinite ones
ASSUME 3 \in Nat \ {0} /\ 0 \notin Nat \ {0}
ASSUME -1 \in Int \cap {x \in Int : x < 0}
ASSUME {1, 2} \subseteq Nat /\ ~({-1} \subseteq Nat)
ASSUME [a |-> 1] \in [a : {n \in Nat : n > 0}]
ASSUME <<1, 2>> \in Seq(Nat \ {0}) \cup {<<>>}
ASSUME <<1, 2>> \in UNION {Seq(Nat), {<<-1>>}} /\ <<-1>> \in UNION {Seq(Nat), {<<-1>>}}
\* SVG: elements as records, their own attributes as strings first
ASSUME Rect(1, 2, 3, 4, [fill |-> "red", x |-> "9"]) =
         [name |-> "rect", attrs |-> [x |-> "1", y |-> "2", width |-> "3", height |-> "4", fill |-> "red"],
          children |-> <<>>, innerText |-> ""]
ASSUME Group(<<Text(5, 6, "hi", <<>>)>>, <<>>).children[1] =
         [name |-> "text", attrs |-> [x |-> "5", y |-> "6"], children |-> <<>>, innerText |-> "hi"]
\* Bitwise
ASSUME (12 & 10) = 8 /\ (12 | 10) = 14 /\ (12 ^^ 10) = 6 /\ shiftR(12, 2) = 3 /\ (0 & 5) = 0
\* UndirectedGraphs: a path 1 - 2 - 3, a loop at 3, and 4 alone
G1 == [node |-> {1, 2, 3, 4}, edge |-> {{1, 2}, {2, 3}, {3}}]
ASSUME IsUndirectedGraph(G1) /\ ~IsLoopFreeUndirectedGraph(G1)
ASSUME IsLoopFreeUndirectedGraph([node |-> {1, 2}, edge |-> {{1, 2}}])
ASSUME ~IsUndirectedGraph([node |-> {1}, edge |-> {{1, 2}}]) /\ ~IsUndirectedGraph([node |-> {1}])
ASSUME AreConnectedIn(1, 3, G1) /\ ~AreConnectedIn(1, 4, G1) /\ AreConnectedIn(4, 4, G1)
ASSUME ConnectedComponents(G1) = {{1, 2, 3}, {4}}
ASSUME ~IsStronglyConnected(G1) /\ IsStronglyConnected([node |-> {1, 2}, edge |-> {{1, 2}}])
ASSUME ~IsStronglyConnected([node |-> {}, edge |-> {}]) /\ ConnectedComponents([node |-> {}, edge |-> {}]) = {}
\* Recursive functions over infinite domains: applied without being built
Binom[n \in Nat, k \in Nat] == IF k = 0 \/ k = n THEN 1 ELSE Binom[n - 1, k - 1] + Binom[n - 1, k]
ASSUME Binom[5, 2] = 10 /\ Binom[<<6, 3>>] = 20
====
