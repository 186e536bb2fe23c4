#!/bin/sh
# Mappings: a trace checked through a mapping module, windows written and re-checked, errors.
. tests/cli/lib.sh
D=tests/replay/counter

run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$D/counter.ndjson" -o "$T/c.spt"
run_status 0 "$T/chk.json" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/c.spt" --json
check_eq "Inc windows" "5 4" "$(jq -r '.actions.Inc | "\(.windows) \(.passed)"' "$T/chk.json")"
check_eq "Reset windows" "1 1" "$(jq -r '.actions.Reset | "\(.windows) \(.passed)"' "$T/chk.json")"
check_eq "score: mean over actions" "0.5" "$(jq -r .score "$T/chk.json")"
check_eq "the failing window names its actor and variable" "b count" "$(jq -r '.actions.Inc.failures[0] | "\(.actor) \(.differs | join(","))"' "$T/chk.json")"

run_status 0 "$T/txt" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/c.spt"
check_contains "plain output" "$T/txt" "window 6 (node b, events 5..5) FAILED"
check_contains "plain score" "$T/txt" "score: 0.5 (mean over 2 actions with windows)"

# Windows written per action re-check to the same verdicts.
run_status 0 "$T/o" "$T/e" "$SPECTAP" windows --map "$D/CounterMap.tla" --spec "$D/Counter.tla" "$T/c.spt" -o "$T/w"
check "Inc windows file" [ -f "$T/w/Inc.ndjson" ]
check_eq "Inc window lines" 5 "$(wc -l <"$T/w/Inc.ndjson" | tr -d ' ')"
check_eq "a window's shape" '{"action":"Inc","actor":"a","pre":{"count":{"a":0,"b":0}},"post":{"count":{"a":1,"b":0}},"params":["a"]}' \
	"$(head -n 1 "$T/w/Inc.ndjson" | jq -c '{action, actor, pre: .pre_state, post: .post_state, params}')"
for a in Inc Reset; do
	"$SPECTAP" check --spec "$D/Counter.tla" --windows "$T/w/$a.ndjson" --action "$a" --json >"$T/re.json"
	check_eq "$a: the exported windows give the .spt's verdicts" \
		"$(jq -c ".actions.$a | [.windows, .passed]" "$T/chk.json")" "$(jq -c ".actions.$a | [.windows, .passed]" "$T/re.json")"
done
run_status 1 "$T/o" "$T/e" "$SPECTAP" windows --map "$D/CounterMap.tla" --spec "$D/Counter.tla" "$T/c.spt" -o "$T/w"
check_contains "windows never replace files without -f" "$T/e" "pass --force"

# Errors in the mapping are errors, with positions, never verdicts.
printf -- '---- MODULE NoVars ----\nEXTENDS Spec\nWindowStart(ev) == ""\n====\n' >"$T/NoVars.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/NoVars.tla" "$T/c.spt"
check_contains "a missing MapVars is named" "$T/e" "the mapping defines no MapVars"
printf -- '---- MODULE BadStart ----\nEXTENDS Spec\nMapVars(st, net) == [count |-> st]\nWindowStart(ev) == ev.nosuch\n====\n' >"$T/BadStart.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/BadStart.tla" "$T/c.spt"
check_contains "an evaluation error in the mapping has its position" "$T/e" "BadStart.tla:4:20: in the mapping's WindowStart"
printf -- '---- MODULE NotStr ----\nEXTENDS Spec\nMapVars(st, net) == [count |-> st]\nWindowStart(ev) == 7\n====\n' >"$T/NotStr.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/NotStr.tla" "$T/c.spt"
check_contains "WindowStart must name an action" "$T/e" "WindowStart must give an action name"
run_status 2 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" --action Inc "$T/c.spt"
check_contains "--map on a trace takes no --action" "$T/e" "--action is for window files"
# --map with window files: WindowVars and WindowParams convert another value space.
run_status 0 "$T/wm.json" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/WindowMap.tla" \
	--windows "$D/arrays.ndjson" --action Inc --json
check_eq "converted windows: 2 of 3 pass (window 3's actor is wrong)" "3 2" "$(jq -r '.actions.Inc | "\(.windows) \(.passed)"' "$T/wm.json")"
check_eq "the diagnosis uses the mapped binding" '<<"b">>' "$(jq -r '.actions.Inc.failures[0].closest.binding' "$T/wm.json")"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --windows "$D/arrays.ndjson" --action Inc
check_contains "without the mapping the arrays are not the spec's values" "$T/o" "ERROR: tests/replay/counter/Counter.tla:12:14: Inc: \"a\" is not in the domain"
# The mapping's operators may come from a shared module, extended or instantiated.
cat >"$T/SharedMap.tla" <<'EOM'
---- MODULE SharedMap ----
EXTENDS Naturals
Counts(st, nodes) == [n \in nodes |-> IF n \in DOMAIN st THEN st[n].value ELSE 0]
WindowStart(ev) == CASE ev.kind = "inc" -> "Inc" [] ev.kind = "reset" -> "Reset" [] OTHER -> ""
Params(ev, a) == <<ev.node>>
====
EOM
printf -- '---- MODULE ExtMap ----\nEXTENDS Spec, SharedMap\nMapVars(st, net) == [count |-> Counts(st, Node)]\n====\n' >"$T/ExtMap.tla"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/ExtMap.tla" "$T/c.spt" --json
check_eq "WindowStart and Params inherited through EXTENDS" "5 4 1 1" \
	"$(jq -r '"\(.actions.Inc.windows) \(.actions.Inc.passed) \(.actions.Reset.windows) \(.actions.Reset.passed)"' "$T/o")"
printf -- '---- MODULE InstMap ----\nEXTENDS Spec\nS == INSTANCE SharedMap\nMapVars(st, net) == [count |-> S!Counts(st, Node)]\nWindowStart(ev) == S!WindowStart(ev)\nParams(ev, a) == S!Params(ev, a)\n====\n' >"$T/InstMap.tla"
run_status 0 "$T/o2" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/InstMap.tla" "$T/c.spt" --json
check_eq "the same through INSTANCE" "$(jq -c .actions "$T/o" | jq -c 'map_values({windows, passed})')" \
	"$(jq -c .actions "$T/o2" | jq -c 'map_values({windows, passed})')"
# Windows per thread: a ZooKeeper server steps on two threads (the election's and the one
# receiving notifications). Keyed by node alone, a window opened by the election thread takes
# in the receiving thread's events until it ends; keyed by WindowActor(ev) == <<node, tid>>, it
# takes in its own thread's only. Each window counts the events it took in (its history).
"$SPECTAP" import --from json tests/data/zk/election.ndjson -o "$T/zk.spt" >/dev/null
cat >"$T/Steps.tla" <<'EOM'
---- MODULE Steps ----
EXTENDS Naturals
VARIABLE c
Init == c = 0
Step == c' \in 0..1000
Next == Step
====
EOM
cat >"$T/NodeMap.tla" <<'EOM'
---- MODULE NodeMap ----
EXTENDS Spec
MapInit == 0
MapNext(ev, st, h) == h + 1
MapVars(st, net, h) == [c |-> h]
WindowStart(ev) == IF ev.kind = "zk.logicalclock.bump" THEN "Step" ELSE ""
WindowEnd(ev, a) == ev.kind = "zk.recvset.put"
====
EOM
sed -e 's/NodeMap/ThreadMap/' -e 's/^MapInit == 0$/MapInit == 0\nWindowActor(ev) == <<ev.node, ev.tid>>/' "$T/NodeMap.tla" >"$T/ThreadMap.tla"
for m in NodeMap ThreadMap; do
	run_status 0 "$T/o" "$T/e" "$SPECTAP" windows --map "$T/$m.tla" --spec "$T/Steps.tla" "$T/zk.spt" -o "$T/w-$m"
done
# WindowDrop: a window it says was not seen whole closes there, unchecked and unwritten, counted.
sed 's/^WindowEnd(ev, a) == .*/&\nWindowDrop(ev, a) == ev.kind = "zk.recvset.put" \/\\ ev.node = "2"/' "$T/NodeMap.tla" |
	sed 's/NodeMap/DropMap/' >"$T/DropMap.tla"
run_status 0 "$T/o" "$T/e" "$SPECTAP" windows --json --map "$T/DropMap.tla" --spec "$T/Steps.tla" "$T/zk.spt" -o "$T/w-drop"
all=$(wc -l <"$T/w-NodeMap/Step.ndjson")
check "WindowDrop dropped some windows" test "$(jq .dropped_windows "$T/o")" -gt 0
check_eq "the dropped windows and the written ones are all the windows" "$all" "$(jq '.windows + .dropped_windows' "$T/o")"
check_eq "only node 2's windows are dropped" "$(jq -s '[.[] | select(.actor != "2")] | length' "$T/w-NodeMap/Step.ndjson")" \
	"$(jq -s '[.[] | select(.actor != "2")] | length' "$T/w-drop/Step.ndjson")"
sed -e 's/^WindowDrop(ev, a) == .*/WindowDrop(ev, a) == 1/' -e 's/DropMap/BadDrop/' "$T/DropMap.tla" >"$T/BadDrop.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" windows --map "$T/BadDrop.tla" --spec "$T/Steps.tla" "$T/zk.spt" -o "$T/w-bad"
check_contains "a WindowDrop that is not a Boolean is named" "$T/e" "WindowDrop must give TRUE or FALSE, not 1"
first() { jq -s -r '[.[] | select(.actor == "2")][0] | .post_state.c - .pre_state.c' "$T/w-$1/Step.ndjson"; }
check_eq "per node: node 2's first window takes in the other thread's receive" 9 "$(first NodeMap)"
check_eq "per thread (WindowActor): only its own thread's events" 8 "$(first ThreadMap)"
check_eq "the event record has the thread id" 6714 \
	"$(printf -- '---- MODULE TidMap ----\nEXTENDS Spec\nMapVars(st, net) == [c |-> 0]\nWindowStart(ev) == IF ev.kind = "zk.logicalclock.bump" THEN "Step" ELSE ""\nInput(ev, a) == [tid |-> ev.tid]\n====\n' >"$T/TidMap.tla";
	  "$SPECTAP" windows --map "$T/TidMap.tla" --spec "$T/Steps.tla" "$T/zk.spt" -o "$T/w-tid" >/dev/null 2>&1;
	  jq -s -r '[.[] | select(.actor == "2")][0].input.tid' "$T/w-tid/Step.ndjson")"
finish
