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
finish
