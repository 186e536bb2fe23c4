---- MODULE Aliased ----
\* Flips' counterexample shown through an ALIAS, as TLC's evalAlias: each state is the record
\* evaluated on it and its successor (the last on itself), TLCGet("level") its position, Trace
\* the behaviour to it; the fields in the order written. By hand, on Flips' shortest violation
\* <<F, F>> -> <<T, F>> -> <<T, T>>: both = F, F, T; lvl = 1, 2, 3; next_a = T, T, T; len = 1, 2, 3.
EXTENDS Flips, TLC, TLCExt, Sequences
Alias == [both |-> a /\ b, lvl |-> TLCGet("level"), next_a |-> a', len |-> Len(Trace)]
\* An alias that fails on the last state: that state is its variables and _ALIASEvalError.
Bad == [a |-> a, boom |-> 1 \div (IF b THEN 0 ELSE 1)]
Formatted == [_format |-> "%s is %s;%n", a |-> a]
\* No violation: CounterExample is the empty graph, as TLC gives it.
Post == CounterExample = [action |-> {}, state |-> {}] /\ ToTrace(CounterExample) = <<>>
====
