#!/bin/sh
# spectap check --model on small specs of our own whose state spaces were counted by hand (the
# comments in tests/replay/model/*.tla say what each exercises): the verdict, TLC's three counts
# (states generated, distinct states, depth), the counterexample and the exit status TLC gives.
. tests/cli/lib.sh

M=tests/replay/model
# model NAME CFG STATUS VERDICT GENERATED DISTINCT DEPTH [EXTRA OPTIONS]
model() {
	name=$1 cfg=$2 status=$3 verdict=$4 gen=$5 dist=$6 depth=$7
	shift 7
	run_status "$status" "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/$name.tla" --cfg "$M/$cfg.cfg" --json "$@"
	check_eq "$cfg: verdict" "$verdict" "$(jq -r .verdict "$T/out.json")"
	check_eq "$cfg: states generated" "$gen" "$(jq -r .generated "$T/out.json")"
	check_eq "$cfg: distinct states" "$dist" "$(jq -r .distinct "$T/out.json")"
	check_eq "$cfg: depth" "$depth" "$(jq -r .depth "$T/out.json")"
}
trace_of() { jq -c '[.trace[] | [.action, .state]]' "$T/out.json"; }

# Deadlock: a state without successors, unless the cfg (or --no-deadlock) says otherwise.
model Counter Counter 11 deadlock 4 4 4
check_eq "Counter: the trace to the deadlock" '[["Initial predicate",{"x":0}],["Step",{"x":1}],["Step",{"x":2}],["Step",{"x":3}]]' "$(trace_of)"
model Counter CounterNoDeadlock 0 ok 4 4 4
model Counter Counter 0 ok 4 4 4 --no-deadlock

# An invariant broken at depth 3; the shortest trace names each action.
model Flips Flips 12 invariant 5 4 3
check_eq "Flips: the invariant named" NotBoth "$(jq -r .violated "$T/out.json")"
check_eq "Flips: the trace" '[["Initial predicate",{"a":false,"b":false}],["FlipA",{"a":true,"b":false}],["FlipB",{"a":true,"b":true}]]' "$(trace_of)"
"$SPECTAP" check --model "$M/Flips.tla" --cfg "$M/Flips.cfg" >"$T/text" 2>&1
check_contains "Flips: TLC's words" "$T/text" "Error: Invariant NotBoth is violated."
check_contains "Flips: TLC's trace lines" "$T/text" "State 2: <FlipA line 5, col 1 of module Flips>"
check_contains "Flips: TLC's state lines" "$T/text" '/\ a = TRUE'
check_contains "Flips: TLC's counts" "$T/text" "5 states generated, 4 distinct states found, 1 states left on queue."

# Constraints: states outside are generated and checked, never kept or explored.
model Bounded Bounded 0 ok 6 5 5
model Bounded BoundedLevel 0 ok 4 3 3
model Bounded BoundedAction 0 ok 9 5 5

# The cfg and instances: a root constant's assignment leaves an instance's definition of the
# same name alone; a definition override reaches into the instance only with [M].
model InstOuter InstOuter 0 ok 2 1 1
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/InstOuter.tla" --cfg "$M/InstOuterRootOnly.cfg" --json
check_contains "without [InstInner], the instance's Ballot stays Nat" "$T/out.json" "Nat is an infinite set"

# Parameterized instances, C(c, Cap) == INSTANCE ParamCounter: C(x, 2)!Inc assigns x, in Init
# and in Next; S(n)!Total has a value per n (a wrong one in an ASSUME is caught).
model ParamInst ParamInst 0 ok 19 12 6
model ParamInst ParamInstTotal 12 invariant 4 4 3
check_eq "ParamInstTotal: S(2)!Total = 3 breaks it at x = 2" 'TotalIsX [0,1,2]' \
	"$(jq -c -r '"\(.violated) \([.trace[].state.x])"' "$T/out.json")"
model ParamInst ParamInstFull 12 invariant 8 7 4
check_eq "ParamInstFull: the trace, each step C!Inc" \
	'[["Initial predicate",{"x":0,"y":0}],["C!Inc",{"x":1,"y":0}],["C!Inc",{"x":2,"y":0}],["C!Inc",{"x":2,"y":1}]]' "$(trace_of)"
cp "$M/ParamCounter.tla" "$M/ParamSum.tla" "$T/"
sed 's/<<1, 3, 10>>/<<1, 3, 6>>/' "$M/ParamInst.tla" >"$T/ParamInst.tla"
run_status 10 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/ParamInst.tla" --cfg "$M/ParamInst.cfg" --json
check_eq "S(4)!Total is not S(2)!Total's" "line 15, col 1 of module ParamInst" "$(jq -r .violated "$T/out.json")"
# What is not supported is an error naming it: a temporal formula through such an instance,
# an operator parameter.
printf 'XSpec == C(x, 2)!Spec\n====\n' >"$T/tail"
{ sed '/^====$/d' "$M/ParamInst.tla"; cat "$T/tail"; } >"$T/ParamInst.tla"
{ sed '/^====$/d' "$M/ParamCounter.tla"; printf 'Spec == Init /\\ [][Inc]_c\n====\n'; } >"$T/ParamCounter.tla"
printf 'INIT Init\nNEXT Next\nPROPERTY XSpec\n' >"$T/XSpec.cfg"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/ParamInst.tla" --cfg "$T/XSpec.cfg" --json
check_contains "a temporal formula of C(x, 2) is refused, named" "$T/out.json" "temporal formulas of a parameterized instance"
sed 's/^C(c, Cap) == INSTANCE ParamCounter$/C(c, F(_)) == INSTANCE ParamCounter/' "$M/ParamInst.tla" >"$T/ParamInst.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/ParamInst.tla" --cfg "$M/ParamInst.cfg" --json
check_contains "an operator parameter is refused, named" "$T/out.json" "operator parameters (I(F(_)) == INSTANCE ...) are not supported"

# \cdot: enumerated through the middle state, and evaluated on a known step.
model Compose Compose 0 ok 4 4 4
# \cdot after a conjunct that assigned a variable: its old value in the middle state (TLC's copyWith)
model ComposeCounted ComposeCounted 0 ok 4 4 4
sed 's/^PROPERTY Composed/PROPERTY ReadsN/' "$M/ComposeCounted.cfg" >"$T/ReadsN.cfg"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/ComposeCounted.tla" --cfg "$T/ReadsN.cfg" --json
check_contains "\\cdot: B reading what A's middle state left unassigned is an error naming it" "$T/out.json" "the value of n is unknown in this state"
run_status 12 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Compose.tla" --cfg "$M/ComposeBackwards.cfg" --json
check_eq "ComposeBackwards: 0 -> 2 is no Double \\cdot Inc step" 'Backwards [0,2]' \
	"$(jq -c -r '"\(.violated) \([.trace[].state.x])"' "$T/out.json")"

# Subexpression names: Inv!2!1, and a named theorem's statement T!: assumed.
model Subexpr Subexpr 0 ok 4 3 3
model Subexpr SubexprFive 12 invariant 1 1 1

# Two modules in one file; membership in an operator's infinite set.
model Embedded Embedded 0 ok 3 3 3

# A random choice in a constant is made once for the run (TLC evaluates constants at start).
model RandomOnce RandomOnce 0 ok 4 2 1

# An override reaches the definitions an instance of an extended module names, not I!Op itself.
model OverRoot OverRoot 0 ok 2 1 1

# Guards hoisted out of \E loops skip whole runs of bindings; the counts stay TLC's, in the
# enumerator (Next) and in the evaluator (the action properties).
model Hoist Hoist 0 ok 19 19 2
run_status 12 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Hoist.tla" --cfg "$M/HoistNarrow.cfg" --json
check_eq "HoistNarrow: the first step with e < 4 breaks Narrow" 'NarrowRefines [[1,2,2,2]]' \
	"$(jq -c -r '"\(.violated) \(.trace[1].state.x)"' "$T/out.json")"

# SYMMETRY: the 8 subsets of three processes are 4 orbits; \A p : WF_s(...) is fairness.
model Grow Grow 0 ok 13 8 4
model Grow GrowSym 0 ok 7 4 4
# Two symmetry classes whose values tie: 42 graphs, 8 orbits; every permutation tried
# (SPECTAP_SYM_ALL) and the ordered few give the same counts.
model Pairs Pairs 0 ok 97 42 4
model Pairs PairsSym 0 ok 24 8 4
SPECTAP_SYM_ALL=1 model Pairs PairsSym 0 ok 24 8 4
# VIEW: y is not seen; three distinct states.
model Viewed Viewed 0 ok 4 3 3

# Properties: a step property on every transition, an initial condition, []P as an invariant.
model Props PropsStep 12 property 4 3 3
check_eq "PropsStep: the step that breaks it" '[0,1,2,0]' "$(jq -c '[.trace[].state.x]' "$T/out.json")"
model Props PropsInit 12 property 1 1 1
model Props PropsBox 0 ok 4 3 3
# <>(x = 5) never holds (x stops at 2): a liveness failure, TLC's exit 13.
model Props PropsLive 13 liveness 4 3 3
check_eq "PropsLive: the property named" Reaches5 "$(jq -r .violated "$T/out.json")"
# A temporal formula of another form is refused, named, never checked.
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Props.tla" --cfg "$M/PropsUnsupported.cfg" --json
check_contains "an unsupported temporal property is refused" "$T/out.json" "unsupported: "
check_contains "an unsupported temporal property is refused, named" "$T/out.json" "EventuallyImplies"

# Liveness on the behaviour graph (a stuttering step at every state), under WF and SF.
model Live LiveNoFair 13 liveness 5 4 4
check_eq "LiveNoFair: Reaches3 fails (a behaviour may stop before 3)" Reaches3 "$(jq -r .violated "$T/out.json")"
model Live LiveFair 0 ok 5 4 4
model Live LiveStays 13 liveness 5 4 4
model Strong StrongWeak 13 liveness 6 4 4
model Strong StrongStrong 0 ok 6 4 4
model Strong StrongWeakProp 0 ok 6 4 4
model Strong StrongSFProp 13 liveness 6 4 4
check_eq "StrongSFProp: SF_v(Go) as a property fails under WF" StrongGo "$(jq -r .violated "$T/out.json")"
model Live LiveForms 0 ok 5 4 4
model Live LiveGuarded 13 liveness 5 4 4
check_eq "LiveGuarded: the state where x < 3 fails" '[0,1,2,3]' "$(jq -c '[.trace[].state.x]' "$T/out.json")"
model Live LiveStutter 13 liveness 5 4 4
model Live LiveStaying 13 liveness 5 4 4
check_eq "LiveStaying: a behaviour that stays at 1" '[0,1]' "$(jq -c '[.trace[].state.x]' "$T/out.json")"

# ASSUME: the false one is named by its position, as TLC does.
run_status 10 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Assumes.tla" --cfg "$M/Assumes.cfg" --json
check_eq "Assumes: the verdict" assumption "$(jq -r .verdict "$T/out.json")"
check_eq "Assumes: the assumption" "line 6, col 1 of module Assumes" "$(jq -r .violated "$T/out.json")"

# An evaluation error: the behaviour that led to it, and TLC's exit status for errors.
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Crash.tla" --cfg "$M/Crash.cfg" --json
check_eq "Crash: the verdict" error "$(jq -r .verdict "$T/out.json")"
check_eq "Crash: the trace to the state that fails" '[2,1,0]' "$(jq -c '[.trace[].state.x]' "$T/out.json")"
check_contains "Crash: what failed, where" "$T/out.json" "Crash.tla:6:"

# The native operators, each an ASSUME of a hand-worked value; a wrong one fails by its line.
run_status 0 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Operators.tla" --cfg "$M/Operators.cfg" --json
check_eq "Operators: every assumption holds" ok "$(jq -r .verdict "$T/out.json")"
sed 's/^ASSUME Remove(<<1, 2, 1, 3>>, 1) = <<2, 3>>$/ASSUME Remove(<<1, 2, 1, 3>>, 1) = <<2, 3, 1>>/; s/MODULE Operators/MODULE Wrong/' \
	"$M/Operators.tla" >"$T/Wrong.tla"
run_status 10 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Wrong.tla" --cfg "$M/Operators.cfg" --json
wrong_line=$(grep -n '^ASSUME Remove(<<1, 2, 1, 3>>, 1) = <<2, 3, 1>>$' "$T/Wrong.tla" | cut -d: -f1)
check_eq "a wrong value is caught, by its line ($wrong_line)" "line $wrong_line, col 1 of module Wrong" "$(jq -r .violated "$T/out.json")"

# TLCExt's AssertError: each ASSUME worked out from TLC's override (a failed Assert's message);
# a wrong expectation is a false ASSUME; an error whose TLC text spectap does not know is an
# error naming AssertError, not an answer.
run_status 0 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/AssertErr.tla" --cfg "$M/AssertErr.cfg" --json
check_eq "AssertErr: every assumption holds" ok "$(jq -r .verdict "$T/out.json")"
sed 's/^ASSUME ~AssertError("boom", Assert(FALSE, "boom"))$/ASSUME AssertError("boom", Assert(FALSE, "boom"))/' \
	"$M/AssertErr.tla" >"$T/AssertErr.tla"
run_status 10 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/AssertErr.tla" --cfg "$M/AssertErr.cfg" --json
check_eq "AssertError(\"boom\", ...) is FALSE: TLC's message is longer" "line 11, col 1 of module AssertErr" \
	"$(jq -r .violated "$T/out.json")"
{ sed '/^====$/d' "$M/AssertErr.tla"; printf 'ASSUME AssertError("x", 1 \\div 0 = 1)\n====\n'; } >"$T/AssertErr.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/AssertErr.tla" --cfg "$M/AssertErr.cfg" --json
check_contains "AssertError of another error: unsupported, named" "$T/out.json" "AssertError is not supported here"
{ sed '/^====$/d' "$M/AssertErr.tla"; printf 'Msg == "boom"\nASSUME AssertError(Msg, Assert(FALSE, "boom"))\n====\n'; } >"$T/AssertErr.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/AssertErr.tla" --cfg "$M/AssertErr.cfg" --json
check_contains "AssertError's err must be a string literal, as in TLC" "$T/out.json" "a non-string expression was used as the err"

# TLCExt's Trace: the path the search keeps to the state checked (an invariant) or stepped from
# (Next), each state found again; in Init it is TLC's error.
model Traced Traced 0 ok 13 9 5
model Traced TracedShort 12 invariant 4 4 3
sed 's/^       \/\\ (a = 1 \/\\ b = 1) => Trace\[2\] = \[a |-> 1, b |-> 0\]$/       \/\\ (a = 1 \/\\ b = 1) => Trace[2] = [a |-> 0, b |-> 1]/' \
	"$M/Traced.tla" >"$T/Traced.tla"
run_status 12 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Traced.tla" --cfg "$M/Traced.cfg" --json
check_eq "Traced: <<1, 1>>'s path is through <<1, 0>>, found first" 'Inv [[0,0],[1,0],[1,1]]' \
	"$(jq -c -r '"\(.violated) \([.trace[].state | [.a, .b]])"' "$T/out.json")"
sed 's/^Init == a = 0 \/\\ b = 0$/Init == a = 0 \/\\ b = Len(Trace) - 1/' "$M/Traced.tla" >"$T/Traced.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Traced.tla" --cfg "$M/Traced.cfg" --json
check_contains "Trace in Init: TLC's error" "$T/out.json" "the state is not completely specified yet"

# TLC's run controls (hand-derived counts in Stopped.tla): TLCSet("exit", TRUE) ends the search
# as a completed one, the postcondition checked; named registers; TLCDefer never evaluated;
# PickSuccessor(FALSE) is TLC's interactive prompt: an error naming it.
model Stopped Stopped 0 ok 42 42 42 --workers 1
check_eq "Stopped: the states left on the queue" 1 "$(jq -r .queue "$T/out.json")"
"$SPECTAP" check --model "$M/Stopped.tla" --cfg "$M/Stopped.cfg" --workers 1 >"$T/text" 2>&1
check_contains "Stopped: a completed run in TLC's words" "$T/text" "Model checking completed. No error has been found."
sed 's/PickSuccessor(x < 100)/PickSuccessor(x < 10)/' "$M/Stopped.tla" >"$T/Stopped.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Stopped.tla" --cfg "$M/Stopped.cfg" --workers 1 --json
check_contains "PickSuccessor(FALSE): an error naming it" "$T/out.json" "PickSuccessor(FALSE) asks the user"
check_eq "PickSuccessor(FALSE): at the step from x = 10" 11 "$(jq -r .distinct "$T/out.json")"
sed 's/TLCGet("s:count") = 41/TLCGet("s:count") = 40/' "$M/Stopped.tla" >"$T/Stopped.tla"
run_status 12 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Stopped.tla" --cfg "$M/Stopped.cfg" --workers 1 --json
check_eq "a stopped run's postcondition is checked" "postcondition Post" "$(jq -r '"\(.verdict) \(.violated)"' "$T/out.json")"

# ALIAS on a counterexample (hand-derived in Aliased.tla), its evaluation errors kept in the trace,
# _format; a POSTCONDITION after a violation is named as not evaluated; CounterExample's empty graph.
model Aliased Aliased 12 invariant 5 4 3
check_eq "Aliased: each state through the alias" \
	'[{"both":false,"len":1,"lvl":1,"next_a":true},{"both":false,"len":2,"lvl":2,"next_a":true},{"both":true,"len":3,"lvl":3,"next_a":true}]' \
	"$(jq -c '[.trace[].alias]' "$T/out.json")"
check_eq "Aliased: the variables too" '{"a":true,"b":true}' "$(jq -c '.trace[2].state' "$T/out.json")"
check_eq "Aliased: the POSTCONDITION not evaluated after the violation, said" "the POSTCONDITION Post was not evaluated" \
	"$(jq -r '.warnings' "$T/out.json" | cut -c1-40)"
"$SPECTAP" check --model "$M/Aliased.tla" --cfg "$M/Aliased.cfg" >"$T/text" 2>&1
check_eq "Aliased: TLC's lines, the fields as written" "$(printf 'State 3: <FlipB line 6, col 1 of module Flips>\n/\\ both = TRUE\n/\\ lvl = 3\n/\\ next_a = TRUE\n/\\ len = 3')" \
	"$(grep -A4 '^State 3' "$T/text")"
sed 's/^ALIAS Alias/ALIAS Bad/' "$M/Aliased.cfg" >"$T/Bad.cfg"
run_status 12 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Aliased.tla" --cfg "$T/Bad.cfg" --json
check_eq "Aliased: an alias that fails keeps the state, with the error" 'true true \div by zero' \
	"$(jq -r '.trace[2].alias | "\(.a) \(.b) \(._ALIASEvalError | test("div by zero") | if . then "\\div by zero" else . end)"' "$T/out.json")"
check_eq "Aliased: the states before it through the alias" '{"a":true,"boom":1}' "$(jq -c '.trace[1].alias' "$T/out.json")"
sed 's/^ALIAS Alias/ALIAS Formatted/' "$M/Aliased.cfg" >"$T/Fmt.cfg"
"$SPECTAP" check --model "$M/Aliased.tla" --cfg "$T/Fmt.cfg" >"$T/text" 2>&1
check_eq "Aliased: _format" "a is TRUE;" "$(grep -A1 '^State 3' "$T/text" | tail -n 1)"
model Aliased AliasedOk 0 ok 9 4 3

# Standard modules through INSTANCE, ToJson, TLCModelValue, TLCGet("config"); a tuple literal of
# 5,000 elements; IOUtils' process operators are an error naming them.
model StdInst StdInst 0 ok 2 2 2
awk 'BEGIN { printf "---- MODULE Wide ----\nEXTENDS Sequences\nT == <<"; for (i = 1; i <= 5000; i++) printf "%s%d", (i > 1 ? ", " : ""), i; printf ">>\nASSUME Len(T) = 5000 /\\ T[4097] = 4097\n====\n" }' >"$T/Wide.tla"
printf '\\* assumptions only\n' >"$T/Wide.cfg"
run_status 0 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Wide.tla" --cfg "$T/Wide.cfg" --json
check_eq "a tuple of 5,000 elements" ok "$(jq -r .verdict "$T/out.json")"
printf -- '---- MODULE Exec ----\nEXTENDS IOUtils\nASSUME IOExec(<<"true">>).exitValue = 0\n====\n' >"$T/Exec.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Exec.tla" --cfg "$T/Wide.cfg" --json
check_contains "IOExec: an error naming it" "$T/out.json" "IOExec is not supported: running programs from a spec is not supported"

# Workers: the same counts with two threads.
model Grow Grow 0 ok 13 8 4 --workers 2
model Bounded Bounded 0 ok 6 5 5 --workers 2

# A LET definition without parameters is evaluated once per evaluation of its LET, as TLC's
# LazyValue: D(40) below doubles a LET value 40 times (2^40 evaluations if each reference
# evaluated it again: --timeout turns that into a failure). One that reads a primed variable is
# evaluated where it is used: both successors are found.
cat >"$T/Let.tla" <<'TLA'
---- MODULE Let ----
EXTENDS Naturals
VARIABLE x
RECURSIVE D(_)
D(k) == LET a == IF k = 0 THEN 1 ELSE D(k - 1) IN a + a
Init == x = 0
Next == \/ x = 0 /\ x' = D(40)
        \/ x = 0 /\ LET b == x' + 1 IN \E v \in {5, 6} : x' = v /\ b = v + 1
====
TLA
printf 'INIT Init\nNEXT Next\n' >"$T/Let.cfg"
run_status 11 "$T/out.json" "$T/err" "$SPECTAP" check --model "$T/Let.tla" --cfg "$T/Let.cfg" --json --timeout 60
check_eq "LET: evaluated once per LET, not per reference (D(40) = 2^41)" "2199023255552" \
	"$(jq -r '.trace[-1].state.x' "$T/out.json")"
check_eq "LET with a prime: evaluated where used (x = 0, D(40), 5, 6)" 4 "$(jq -r .distinct "$T/out.json")"

# Usage and load errors.
run_status 2 "$T/out" "$T/err" "$SPECTAP" check --model "$M/Flips.tla" --spec "$M/Flips.tla"
run_status 1 "$T/out.json" "$T/err" "$SPECTAP" check --model "$M/Flips.tla" --cfg "$M/Counter.cfg" --json
check_contains "a cfg naming what the spec lacks" "$T/out.json" "Spec specified in the configuration file is not defined"
finish
