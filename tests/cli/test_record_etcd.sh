#!/bin/sh
# spectap record etcd: real clusters of Debian's etcd, probed with eBPF, into traces; every
# scenario, checked against what etcdctl and the put client saw.
. tests/cli/lib.sh

run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario nap -o "$T/x.spt"
check_contains "unknown scenario" "$T/e" "unknown scenario 'nap' (known: initial-election, steady-writes, leader-kill"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record cassandra --scenario initial-election -o "$T/x.spt"
check_contains "a system with neither a recorder nor a description says where it looked" "$T/e" "no description of a system named 'cassandra': looked for"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario leader-kill --nodes 2 -o "$T/x.spt"
check_contains "too few members" "$T/e" "--nodes: 2 is not in 3..9"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario random --until-covered -o "$T/corpus"
check_contains "--until-covered needs a mapping and a spec" "$T/e" "--until-covered needs --map M.tla and --spec S.tla"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario random --min 5 -o "$T/x.spt"
check_contains "--min only with --until-covered" "$T/e" "go with --until-covered"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario random --until-covered --map M --spec S \
	--verify-steps -o "$T/corpus"
check_contains "--verify-steps is for one run" "$T/e" "not --until-covered"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario initial-election,leader-kill -o "$T/x.spt"
check_contains "a list of scenarios only with --until-covered" "$T/e" "a list of scenarios goes with --until-covered"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario initial-election,leader-kil --until-covered --map M \
	--spec S -o "$T/corpus"
check_contains "an unknown scenario in the list is named" "$T/e" "unknown scenario 'leader-kil'"
if [ "$(id -u)" != 0 ] || [ ! -x /usr/bin/etcd ]; then
	echo "SKIP: recording needs root and /usr/bin/etcd"
	finish
	exit $?
fi
run_status 1 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario steady-writes --putload /nonexistent -o "$T/x.spt"
check_contains "a missing put client is named" "$T/e" "putload, which is not at /nonexistent"

# Every scenario: no loss, every receive paired with its send, the end state equal to etcdctl's,
# nothing left running.
hits="$T/hits"
: >"$hits"
for sc in initial-election steady-writes leader-kill follower-pause leader-restart partition random; do
	run_status 0 "$T/$sc.json" "$T/$sc.err" "$SPECTAP" record etcd --scenario "$sc" --seed 7 -o "$T/$sc.spt" \
		--acked "$T/$sc.acked" --json
	check_eq "$sc: nothing lost" 0 "$(jq .lost "$T/$sc.json")"
	check_eq "$sc: every receive pairs with a send" 0 "$(jq .unpaired_receives "$T/$sc.json")"
	check_eq "$sc: no record came later than the reorder window" 0 "$(jq .late "$T/$sc.json")"
	check_eq "$sc: end state of every live member as etcdctl reports it" true "$(jq .final_match "$T/$sc.json")"
	check_eq "$sc: live members compared" "" "$(jq -r '.members[] | select(.live and (.etcdctl == null)) | .node' "$T/$sc.json")"
	wd=$(jq -r .work_dir "$T/$sc.json")
	check "$sc: the summary names the work directory" test -n "$wd" -a "$wd" != null
	check "$sc: the work directory is removed" test ! -e "$wd"
	check_eq "$sc: nothing of the cluster left running" "" "$(pgrep -f "$wd/" || true)"
	check_eq "$sc: no network namespace left" "" "$(ip netns list 2>/dev/null | grep "^spt-$$-" || true)"
	"$SPECTAP" stat --json "$T/$sc.spt" >"$T/$sc.stat"
	check_eq "$sc: the trace says nothing was lost" 0 "$(jq .lost "$T/$sc.stat")"
	check_eq "$sc: seed in the header" 7 "$(jq .seed "$T/$sc.stat")"
	check_eq "$sc: the trace's receives all paired" 0 "$(jq .messages.unpaired_receives "$T/$sc.stat")"
	jq -c '.probe_hits' "$T/$sc.json" >>"$hits"
	# Log Matching on the rebuilt logs: the committed prefixes of all members are equal (a state
	# holds the last --log-terms terms, from index logTermsFrom: compare what all of them hold; a
	# member killed early may hold no committed index that the others still hold).
	"$SPECTAP" dump --json "$T/$sc.spt" | jq -c 'select(.event.state != null) | .event | {node, s: .state}' |
		jq -s -c 'group_by(.node) | map(last.s) | (map(.commit) | min) as $c | (map(.logTermsFrom // 1) | max) as $f |
			if $f > $c then 1 else map((.logTermsFrom // 1) as $o | .logTerms[($f - $o):($c - $o + 1)]) | unique | length end' >"$T/lm"
	check_eq "$sc: the members' committed log prefixes agree" 1 "$(cat "$T/lm")"
	check_eq "$sc: every entry term known" 0 "$(jq .unknown_log_terms "$T/$sc.json")"
done
# --until-covered: seeded runs until EtcdBenchMap's branches (here two, so that one run covers
# them) have events; a corpus directory with its manifest.
sed 's/^Branches == .*/Branches == {"ElectionTimeout", "VoteGranted"}/; /^ *"HandleAppendEntries", "HandleAppendResponse"/d; /^ *"HandleHeartbeatResponse", "VoteGranted"/d; /^ *"AppendRejected"}/d' \
	systems/etcd/spec/EtcdBenchMap.tla >"$T/EtcdBenchMap.tla"
run_status 0 "$T/uc.out" "$T/uc.err" "$SPECTAP" record etcd --scenario initial-election --seed 7 --until-covered \
	--map "$T/EtcdBenchMap.tla" --spec systems/etcd/spec/EtcdRaft.tla --budget 300 -o "$T/corpus" --json
check_eq "until-covered: one run covers ElectionTimeout and VoteGranted" "true 1" \
	"$(jq -r '"\(.coverage.complete) \(.runs | length)"' "$T/corpus/manifest.json" 2>/dev/null || echo none)"
check "until-covered: the run's trace is in the corpus" test -s "$T/corpus/initial-election-7.spt"
# A list of scenarios: each runs once, then the runs go where the missing events come from. Only
# a killed leader makes its peers report it unreachable (about 15-20 a run), so once
# initial-election gave none, every further run is leader-kill until 40 are there.
awk '/^Branch\(ev\) ==/ { exit } { print }' systems/etcd/spec/EtcdBenchMap.tla >"$T/Unreachable.tla"
printf '%s\n' 'Branch(ev) == IF ev.kind = "StepUnreachable" THEN {"Unreachable"} ELSE {}' \
	'Branches == {"Unreachable"}' '====' >>"$T/Unreachable.tla"
sed -i '1s/MODULE EtcdBenchMap/MODULE Unreachable/' "$T/Unreachable.tla"
run_status 0 "$T/ul.out" "$T/ul.err" "$SPECTAP" record etcd --scenario initial-election,leader-kill --until-covered \
	--map "$T/Unreachable.tla" --spec systems/etcd/spec/EtcdRaft.tla --min 40 --budget 300 -o "$T/corpus-list"
M="$T/corpus-list/manifest.json"
check_eq "scenario list: each once in the order given, then leader-kill again" "initial-election leader-kill leader-kill" \
	"$(jq -r '[.runs[:3][].scenario] | join(" ")' "$M" 2>/dev/null || echo none)"
check_eq "scenario list: never initial-election again" 1 \
	"$(jq '[.runs[] | select(.scenario == "initial-election")] | length' "$M" 2>/dev/null || echo none)"
check_eq "scenario list: complete, the runs of each counted" "true $(jq '.runs | length' "$M")" \
	"$(jq -r '"\(.complete) \(.scenarios["initial-election"].runs + .scenarios["leader-kill"].runs)"' "$M")"
check_contains "scenario list: the summary names the runs of each" "$T/ul.out" "(initial-election 1, leader-kill"
check_eq "scenario list: each run says what it gave; initial-election nothing" "{} true 0" \
	"$(jq -r '"\(.runs[0].gave | tojson) \(.runs[1].gave.Unreachable > 0) \(.runs[-1].missing)"' "$M")"

# A step's post-state is read at the member's next call (its next Step, tick or applyConfChange),
# not at Step's return (docs/etcd.md): --verify-steps also probes every return and compares the
# two reads of each step on a live cluster; every Step entry either is compared or ends
# unfinished (its member's process gone first), and a StepUnfinished has no state.
vs="$T/verify"
run_status 0 "$vs.json" "$vs.err" "$SPECTAP" record etcd --scenario leader-restart --seed 3 --verify-steps -o "$vs.spt" --json
check "verify-steps: steps compared" test "$(jq .verify_steps.compared "$vs.json")" -gt 1000
check_eq "verify-steps: the two reads agree on every step" "0 \"\"" "$(jq -r '"\(.verify_steps.differ) \"\(.verify_steps.first)\""' "$vs.json")"
check_eq "verify-steps: every step begun is compared or unfinished" "$(jq '.probe_hits["90"]' "$vs.json")" \
	"$(jq '.verify_steps.compared + .unfinished_steps' "$vs.json")"
check_eq "verify-steps: no step ended without its return recorded" "0 \"\"" "$(jq -r '"\(.verify_steps.no_return) \"\(.verify_steps.first_no_return)\""' "$vs.json")"
# Commit events come from the state reads too (the commit index rose within a step): each one
# where commitTo raised it, to the same index.
check "verify-steps: commits compared" test "$(jq .verify_steps.commit_tos "$vs.json")" -gt 100
check_eq "verify-steps: one Commit event per commitTo that raised the index, the same index" "0 0 \"\"" \
	"$(jq -r '"\(.verify_steps.commit_tos - .verify_steps.commits) \(.verify_steps.commits_differ) \"\(.verify_steps.first_commit)\""' "$vs.json")"
check_eq "verify-steps: the restarted member's open step is unfinished, not guessed" "restarted" \
	"$("$SPECTAP" dump --json --kind StepUnfinished "$vs.spt" | jq -r '.event.meta.unfinished' | sort -u | grep -x restarted || true)"
check_eq "StepUnfinished events carry no state" "" \
	"$(for t in "$T/leader-kill.spt" "$vs.spt"; do "$SPECTAP" dump --json --kind StepUnfinished "$t"; done |
		jq -c 'select(.event.state != null)' | head -n 1)"
check_eq "without --verify-steps Step's returns and commitTo are not probed" "null null" \
	"$(jq -r '"\(.probe_hits["60"]) \(.probe_hits["80"])"' "$T/leader-kill.json")"

# Go inlining can silently disable a probe: each one must have fired in some scenario.
check_eq "every probe fired across the scenarios" "[]" \
	"$(jq -s -c 'reduce .[] as $h ({}; reduce ($h | keys[]) as $k (.; .[$k] += $h[$k])) | to_entries | map(select(.value == 0) | .key)' "$hits")"

# leader-kill: a new leader in a higher term; every acknowledged put is a Replicate on a leader
# (its key is in the entry's data) and committed on a quorum (a Commit at or past its index on
# at least 2 of the 3 members).
lk="$T/leader-kill"
check "leader-kill: a new leader in a higher term" [ "$(jq .term "$lk.json")" -gt "$(jq .first_term "$lk.json")" ]
check "leader-kill: puts were acknowledged" [ "$(wc -l <"$lk.acked")" -gt 50 ]
"$SPECTAP" dump --json --kind BecomeLeader "$lk.spt" | jq -c '.event | {node, term: .state.term, ok: (.state.lead == .node and .state.role == "StateLeader" and .state.vote == .node)}' >"$T/leaders"
check_eq "every BecomeLeader's post-state says so" "" "$(grep -v '"ok":true' "$T/leaders" || true)"
check_eq "the last leader and its term, as etcdctl saw them" "$(jq -c '[.leader, .term]' "$lk.json")" "$(tail -n 1 "$T/leaders" | jq -c '[.node, .term]')"
"$SPECTAP" dump --json --kind Replicate "$lk.spt" | jq -c '.event | select(.state.role == "StateLeader") | {node, index: .args.index, data: .args.data}' >"$T/repl"
"$SPECTAP" dump --json --kind Commit "$lk.spt" | jq -c '.event | {node, commit: .state.commit}' >"$T/commits"
jq -r '.key' "$lk.acked" | while read -r key; do
	hex=$(printf '%s' "$key" | od -An -tx1 | tr -d ' \n')
	idx=$(jq -r --arg h "$hex" 'select(.data | contains($h)) | .index' "$T/repl" | head -n 1)
	if [ -z "$idx" ]; then
		echo "$key: no Replicate"
		continue
	fi
	q=$(jq -s --argjson i "$idx" 'map(select(.commit >= $i) | .node) | unique | length' "$T/commits")
	[ "$q" -ge 2 ] || echo "$key: index $idx committed on $q members"
done >"$T/unreplicated"
check_eq "every acknowledged put: Replicate on the leader, Commit on a quorum" "" "$(head -n 5 "$T/unreplicated")"

# Every BecomeCandidate votes for itself in a new term.
"$SPECTAP" dump --json --kind BecomeCandidate "$lk.spt" | jq -c '.event | select(.state.role != "StateCandidate" or .state.vote != .node)' >"$T/bad"
check_eq "every BecomeCandidate votes for itself" "" "$(cat "$T/bad")"
# The log in the state: as long as its last index, and its last term is logTerm.
"$SPECTAP" dump --json "$lk.spt" | jq -c '.event.state | select(. != null) | select((.logTerms | length) != .log - (.logTermsFrom // 1) + 1 or (.log > 0 and .logTerms[-1] != .logTerm))' | head -n 3 >"$T/bad"
check_eq "logTerms agree with log and logTerm" "" "$(cat "$T/bad")"

# Export to etcd-io/raft's NDJSON and import it back: the same events (but the unfinished steps,
# which that vocabulary cannot hold without a state: left out and counted).
run_status 0 "$T/o" "$T/e" "$SPECTAP" export --to etcd-ndjson "$lk.spt" -o "$T/lk.ndjson" --json
check_eq "the export counts the unfinished steps it leaves out" "$(jq .unfinished_steps "$lk.json")" \
	"$(jq '.dropped | to_entries[] | select(.key | startswith("steps whose post-state")) | .value' "$T/o")"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/lk.ndjson" -o "$T/lk2.spt"
strip='.event | select(.kind != "StepUnfinished") | {node, kind, state, args, msg: (.msg | if . then {dir, from, to, type, fields} else null end)}'
"$SPECTAP" dump --json "$lk.spt" | jq -S -c "$strip" >"$T/a"
"$SPECTAP" dump --json "$T/lk2.spt" | jq -S -c "$strip" >"$T/b"
check "the export re-imports to the same events" cmp -s "$T/a" "$T/b"
check_eq "re-imported receives pair with their sends" 0 "$("$SPECTAP" stat --json "$T/lk2.spt" | jq .messages.unpaired_receives)"
finish
