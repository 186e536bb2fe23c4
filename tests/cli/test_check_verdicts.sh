#!/bin/sh
# Verdicts as data: a window whose action cannot be evaluated gets the verdict "error" and the
# other windows are checked; --json diagnoses carry values as JSON; the text report shows the
# paths where large values differ; a check that checked nothing (or no window of an action the
# mapping names) says so and exits 4 unless --allow-empty.
. tests/cli/lib.sh
D=tests/replay/counter

cat >"$T/W.tla" <<'EOF'
---- MODULE W ----
EXTENDS Integers
VARIABLE x
Init == x = 1
Div == x' = 10 \div x
Next == Div
====
EOF
printf '%s\n' '{"pre_state":{"x":1},"post_state":{"x":10}}' '{"pre_state":{"x":0},"post_state":{"x":0}}' \
	'{"pre_state":{"x":2},"post_state":{"x":5}}' '{"pre_state":{"x":3},"post_state":{"x":4}}' >"$T/w.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/w.ndjson" --action Div
check_contains "the erring window's verdict, with its position" "$T/o" \
	'window 2 (line 2) ERROR: '"$T"'/W.tla:5:13: Div: \div by zero: 10 \div 0'
check_contains "the windows after it are checked" "$T/o" "window 4 (line 4) FAILED"
check_contains "the counts" "$T/o" "action Div: 4 windows, 2 passed (50.0%), score 0; 1 could not be evaluated"
check_contains "the exit status is explained" "$T/e" "1 window could not be evaluated"
run_status 1 "$T/j" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/w.ndjson" --action Div --json
check_eq "--json: windows, passed, failed, errors" "4 2 1 1" \
	"$(jq -r '.actions.Div | "\(.windows) \(.passed) \(.failed) \(.errors)"' "$T/j")"
check_eq "--json: the error verdict" "error 2" "$(jq -r '.actions.Div.failures[0] | "\(.verdict) \(.window_id)"' "$T/j")"
check_contains "--json: the error message" "$T/j" '"error":"'"$T"'/W.tla:5:13: Div: \\div by zero'
check_eq "--json: a failure's values are JSON" "4 3 number" \
	"$(jq -r '.actions.Div.failures[1].closest.vars.x | "\(.expected) \(.reached) \(.expected | type)"' "$T/j")"
check_eq "--json: and their TLA+ beside" '"4"' "$(jq -c '.actions.Div.failures[1].closest.vars.x.expected_tla' "$T/j")"
check_eq "--json: a failure's verdict" "failed" "$(jq -r '.actions.Div.failures[1].verdict' "$T/j")"

# An unsupported construct is no window's verdict: it stops the check.
cat >"$T/U.tla" <<'EOF'
---- MODULE U ----
EXTENDS Integers
CONSTANT Limit
VARIABLE x
Init == x = 1
Up == x < Limit /\ x' = x + 1
Next == Up
====
EOF
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/U.tla" --windows "$T/w.ndjson" --action Up
check_contains "a constant without a value stops the check" "$T/e" "U.tla:6:11: Up: the constant Limit has no value"

# Large values: the text report shows the paths where they differ, JSON the whole values.
cat >"$T/L.tla" <<'EOF'
---- MODULE L ----
EXTENDS Integers, Sequences
VARIABLE st
Init == st = [n1 |-> [log |-> <<>>, term |-> 0], n2 |-> [log |-> <<>>, term |-> 0]]
Add(n) == st' = [st EXCEPT ![n].log = Append(@, 99), ![n].term = @ + 1]
Next == \E n \in {"n1", "n2"} : Add(n)
====
EOF
log=$(seq -s, 1 59)
printf '{"pre_state":{"st":{"n1":{"log":[%s],"term":3},"n2":{"log":[%s],"term":3}}},' "$log" "$log" >"$T/l.ndjson"
printf '"post_state":{"st":{"n1":{"log":[%s,98],"term":5},"n2":{"log":[%s],"term":3},"n3":{"log":[],"term":0}}}}\n' \
	"$log" "$(seq -s, 1 50)" >>"$T/l.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/L.tla" --windows "$T/l.ndjson" --action Next
check_contains "a large value: where it differs" "$T/o" "st.n1.log[60]  expected 98, reached 99"
check_contains "a field" "$T/o" "st.n1.term  expected 5, reached 4"
check_contains "a sequence of another length" "$T/o" "st.n2.log  expected 50 elements, reached 59; the first of the extra: 51"
check_contains "a key only one side has" "$T/o" "st.n3  expected [log |-> <<>>, term |-> 0], reached (absent)"
run_status 0 "$T/j" "$T/e" "$SPECTAP" check --spec "$T/L.tla" --windows "$T/l.ndjson" --action Next --json
check_eq "--json: the whole values, as JSON" "60 98" \
	"$(jq -r '.actions.Next.failures[0].closest.vars.st.expected.n1.log | "\(length) \(.[59])"' "$T/j")"

# A check of nothing: no window at all, or none of an action the mapping can name.
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$D/counter.ndjson" -o "$T/c.spt"
cat >"$T/NoneMap.tla" <<'EOF'
---- MODULE NoneMap ----
EXTENDS Spec
MapVars(st, net) == [count |-> [n \in Node |-> 0]]
WindowStart(ev) == IF ev.kind = "never" THEN "Inc" ELSE ""
====
EOF
run_status 4 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/NoneMap.tla" "$T/c.spt"
check_contains "no window: said" "$T/e" "no window was checked, so nothing was verified"
check_contains "no window: the action the mapping names" "$T/o" "action Inc: no windows (the mapping's WindowStart can name it)"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/NoneMap.tla" "$T/c.spt" --allow-empty
cat >"$T/JumpMap.tla" <<'EOF'
---- MODULE JumpMap ----
EXTENDS Spec
MapVars(st, net) == [count |-> [n \in Node |-> IF n \in DOMAIN st THEN st[n].value ELSE 0]]
WindowStart(ev) == CASE ev.kind = "inc" -> "Inc"
                   [] ev.kind = "jump" -> "Jump"
                   [] OTHER -> ""
Params(ev, a) == <<ev.node>>
====
EOF
run_status 4 "$T/j" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/JumpMap.tla" "$T/c.spt" --json
check_contains "an action without windows: named" "$T/e" "no window of Jump, which the mapping's WindowStart can name"
check_eq "--json: the unwindowed actions" '["Jump"]' "$(jq -c .unwindowed "$T/j")"
check_eq "--json: the rest was checked" 5 "$(jq .actions.Inc.windows "$T/j")"
run_status 0 "$T/j" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$T/JumpMap.tla" "$T/c.spt" --json --allow-empty
printf '{"pre_state":{"x":1},"post_state":{"x":10},"action":"Other"}\n' >"$T/other.ndjson"
run_status 4 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/other.ndjson" --action Div
check_contains "a window file without a window of the action" "$T/e" "no window was checked"

# Several traces, or a directory of them: each trace's line, then totals per action.
mkdir "$T/corpus"
cp "$T/c.spt" "$T/corpus/one.spt"
cp "$T/c.spt" "$T/corpus/two.spt"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/corpus/one.spt" "$T/corpus/two.spt"
check_contains "several traces: each one's line" "$T/o" "trace $T/corpus/two.spt: 6 windows, 5 passed"
check_contains "several traces: the totals" "$T/o" "action Inc: 10 windows, 8 passed (80.0%), score 0"
check_contains "several traces: a failure names its trace" "$T/o" "window 6 ($T/corpus/one.spt: node b, events 5..5) FAILED"
run_status 0 "$T/j" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/corpus" --json
check_eq "a directory: its .spt traces in name order" "$T/corpus/one.spt $T/corpus/two.spt" \
	"$(jq -r '.traces | keys_unsorted | join(" ")' "$T/j")"
check_eq "a directory: totals" "10 8 0.5" "$(jq -r '"\(.actions.Inc.windows) \(.actions.Inc.passed) \(.score)"' "$T/j")"
check_eq "a directory: failures in trace order, named" "$T/corpus/one.spt $T/corpus/two.spt" \
	"$(jq -r '[.actions.Inc.failures[].trace] | join(" ")' "$T/j")"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/corpus" \
	--tlc-results "$T/corpus.tlc.json"
check_eq "a corpus's totals in tlc_results.json, every action" \
	"$(jq -c '[.actions | to_entries[] | {(.key): {passes: .value.passed, total: .value.windows}}] | add' "$T/j")" \
	"$(jq -c '[to_entries[] | {(.key): {passes: .value.passes, total: .value.total}}] | add' "$T/corpus.tlc.json")"
printf 'junk' >"$T/corpus/three.spt"
run_status 1 "$T/j" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/corpus" --json
check_contains "a bad trace of a corpus: said" "$T/e" "three.spt: not a spectap trace"
check_contains "a bad trace of a corpus: the others counted" "$T/e" "1 of 3 traces could not be checked"
check_eq "a bad trace of a corpus: stdout is one report" "false 10" "$(jq -r '"\(.traces["'"$T"'/corpus/three.spt"].checked) \(.actions.Inc.windows)"' "$T/j")"
mkdir "$T/empty"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" "$T/empty"
check_contains "a directory without traces" "$T/e" "holds no .spt trace"
# The benchmark's window files as they are: pre/post and id spellings, and the stream form (a
# state per record, each window from the record before), mixed in one file.
printf '%s\n' '{"state":{"x":1}}' '{"action":"Div","state":{"x":10}}' '{"action":"Div","state":{"x":1}}' \
	'{"action":"Other","state":{"x":3}}' '{"action":"Div","id":"w5","state":{"x":4}}' \
	'{"pre":{"x":2},"post":{"x":5},"action":"Div","id":"ev"}' '{"action":"Div","state":{"x":2}}' >"$T/s.ndjson"
run_status 0 "$T/j" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/s.ndjson" --action Div --json
check_eq "stream and event forms: windows, passed, skipped" "5 4 1" \
	"$(jq -r '.actions.Div | "\(.windows) \(.passed) \(.skipped)"' "$T/j")"
check_eq "the stream window after another action's starts at its state; ids as spelt" '"w5" 4 3' \
	"$(jq -r '.actions.Div.failures[0] | "\(.window_id | tojson) \(.closest.vars.x.expected) \(.closest.vars.x.reached)"' "$T/j")"
# Results as the benchmark's transition validation reads them: tlc_results.json, per action
# {passes, total, rate}; its score is the passes over the totals.
run_status 0 "$T/j" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/s.ndjson" --action Div --json \
	--tlc-results "$T/tlc_results.json"
check_eq "tlc_results.json" '{"Div":{"passes":4,"total":5,"rate":0.8,"failures":1,"errors":0}}' \
	"$(jq -c . "$T/tlc_results.json")"
check_eq "read as the benchmark reads it" "4/5 0.8" \
	"$(jq -r '[to_entries[] | .value] | "\(map(.passes) | add)/\(map(.total) | add) \(.[0].rate)"' "$T/tlc_results.json")"
check "no temporary file left" test ! -e "$T/tlc_results.json.partial"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/s.ndjson" --action Div \
	--tlc-results "$T/nodir/tlc_results.json"
check_contains "an unwritable results file: named, exit 1" "$T/e" "cannot create $T/nodir/tlc_results.json.partial"
# A symlink where the temporary file goes is removed, never written through.
echo precious >"$T/victim"
ln -s "$T/victim" "$T/tlc_results.json.partial"
run_status 0 "$T/j" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/s.ndjson" --action Div --json \
	--tlc-results "$T/tlc_results.json"
check_eq "a symlink at the temporary file's name is not followed" precious "$(cat "$T/victim")"
check_eq "the results are written all the same" 4 "$(jq .Div.passes "$T/tlc_results.json")"
printf '%s\n' '{"pre":{"x":2},"post":{"x":5},"action":"Div"}' '{"action":"Div","state":{"x":2}}' >"$T/late.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/late.ndjson" --action Div
check_contains "a state record after windows: refused, not skipped" "$T/e" "late.ndjson:2:1: a \"state\" record in a file whose first record is a window"
printf '{"action":"Div","pre":{"x":1}}\n' >"$T/bad.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/W.tla" --windows "$T/bad.ndjson" --action Div
check_contains "a record of neither form: where and what" "$T/e" "bad.ndjson:1:1: a window needs"
finish
