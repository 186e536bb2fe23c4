---- MODULE StdInst ----
\* What trace-validation modules use that no other spec here exercised, each an ASSUME worked out
\* by hand: standard modules instantiated (named and not), their operators and number sets
\* through the instance (N!+(1, 2), N!Nat), Json's ToJson (TLC's text: no spaces, a record's
\* fields in order, a sequence as an array), TLCExt's TLCModelValue (a model value named by a
\* string, equal to itself only), and TLCGet("config") while model checking.
EXTENDS Naturals, Integers, Sequences, TLC, TLCExt, Json
N == INSTANCE Naturals
I == INSTANCE Integers
S == INSTANCE Sequences
INSTANCE FiniteSets
ASSUME N!+(1, 2) = 3 /\ N!*(2, 3) = 6 /\ I!-.(3) = -3
ASSUME 2 \in N!Nat /\ -1 \notin N!Nat /\ -1 \in I!Int
ASSUME S!Len(<<1, 2>>) = 2 /\ S!Append(<<1>>, 2) = <<1, 2>> /\ Cardinality({1, 2}) = 2
ASSUME ToJson([a |-> 1, b |-> <<TRUE, "x">>]) = "{\"a\":1,\"b\":[true,\"x\"]}"
ASSUME ToJson(<<>>) = "[]"
ASSUME ToString(TLCModelValue("m1")) = "m1" /\ TLCModelValue("m1") = TLCModelValue("m1")
ASSUME TLCModelValue("m1") # TLCModelValue("m2")
VARIABLE x
Init == x = 0
Next == x < 1 /\ x' = x + 1
Inv == TLCGet("config").mode = "bfs" /\ TLCGet("config").deadlock = FALSE
====
