#!/bin/sh
# dump's filters and positions, stat's text form, and --help everywhere.
. tests/cli/lib.sh

if have_corpus "dump's filters and seeks on the public corpus"; then
	"$SPECTAP" import --from etcd-ndjson "$CORPUS" -o "$T/c.spt" >/dev/null
	"$SPECTAP" dump "$T/c.spt" >"$T/all"
	check_eq "one line per event" 4888 "$(wc -l <"$T/all" | tr -d ' ')"
	check_eq "first line" '#0      +0.000000s  1    L1     InitState  state [commit |-> 0, conf |-> <<<<>>, <<>>>>, log |-> 0, role |-> "StateFollower", term |-> 0, vote |-> "0"]' "$(head -n 1 "$T/all")"
	check_contains "messages shown with id and endpoints" "$T/all" 'SendRequestVoteRequest  send #'

	"$SPECTAP" dump --from 4000 --count 3 "$T/c.spt" >"$T/mid"
	check_eq "--from/--count" "#4000 #4001 #4002" "$(cut -c1-5 "$T/mid" | tr '\n' ' ' | sed 's/ $//')"
	check_eq "--from gives the same lines as a full dump" "$(sed -n 4001,4003p "$T/all")" "$(cat "$T/mid")"
	"$SPECTAP" dump --from 4888 "$T/c.spt" >"$T/end"
	check_eq "--from at the end prints nothing" 0 "$(wc -l <"$T/end" | tr -d ' ')"
	run_status 1 "$T/o" "$T/e" "$SPECTAP" dump --from 4889 "$T/c.spt"
	check_contains "--from past the end" "$T/e" "the trace has 4888 events"

	"$SPECTAP" dump --kind 'Become*,Commit' "$T/c.spt" >"$T/k"
	check_eq "--kind globs" 252 "$(wc -l <"$T/k" | tr -d ' ')"
	check_eq "--kind selects only those kinds" 0 "$(awk '{print $5}' "$T/k" | grep -cvE '^(Become|Commit$)')"
	"$SPECTAP" dump --node 3 --kind Ready "$T/c.spt" >"$T/n"
	check_eq "--node and --kind together" "$(grep -cE '^#[0-9]+ +[^ ]+  3 +L[0-9]+ +Ready ' "$T/all")" "$(wc -l <"$T/n" | tr -d ' ')"

	ts=$("$SPECTAP" dump --json --from 2000 --count 1 "$T/c.spt" | jq -r .event.ts_ns)
	"$SPECTAP" dump --since "$ts" --count 1 "$T/c.spt" >"$T/s"
	check_eq "--since seeks by time" "$(sed -n 2001p "$T/all" | cut -c1-40)" "$(cut -c1-40 "$T/s")"
	check_eq "dump --json lines are json-dialect events" 4888 "$("$SPECTAP" dump --json "$T/c.spt" | jq -c 'select(.event.kind)' | wc -l | tr -d ' ')"

	"$SPECTAP" stat "$T/c.spt" >"$T/stat"
	check_contains "stat: state of the file" "$T/stat" "(closed cleanly, indexed)"
	check_contains "stat: events" "$T/stat" "4888 in "
	check_contains "stat: messages" "$T/stat" "1787 sends, 1661 receives: 1661 paired"

fi

for cmd in import export dump stat; do
	run_status 0 "$T/h" "$T/e" "$SPECTAP" "$cmd" --help
	check_contains "$cmd --help" "$T/h" "usage: spectap $cmd"
done
run_status 0 "$T/h" "$T/e" "$SPECTAP" --help
check_contains "spectap --help lists commands" "$T/h" "export"
run_status 0 "$T/h" "$T/e" "$SPECTAP" --version
check_contains "--version" "$T/h" "spectap "
finish
