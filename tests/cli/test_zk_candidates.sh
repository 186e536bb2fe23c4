#!/bin/sh
# Wrong candidate specs of ZooKeeper's Fast Leader Election (systems/zookeeper/spec/candidates/),
# each a copy of ZkFle.tla with one classic mistake, checked through the same mappings as the
# faithful spec on real captures: the faithful spec passes every window, each candidate fails, and
# the failing windows' diagnoses name what the mistake breaks (textbook-set: recvset,
# merged-guard: logicalclock).
. tests/cli/lib.sh
D=systems/zookeeper/spec
C=$D/candidates
# Every candidate; each must fail on the test's captures.
CANDIDATES="textbook-set merged-guard no-clear lower-sid keep-first no-adopt"
MAPS="ZkFleMap ZkBenchMap"

# Without a trace: every candidate loads and has the spec's action names.
printf '%s\n' '{"window_id":1,"action":"ElectionStop","pre_state":{},"post_state":{}}' >"$T/empty.ndjson"
for c in $CANDIDATES; do
	run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$C/$c/ZkFle.tla" --windows "$T/empty.ndjson" --action ElectionStop --json
	check_eq "candidate $c loads" 1 "$(jq '.actions.ElectionStop.passed' "$T/o")"
	check "candidate $c is marked as one" grep -q 'CANDIDATE, WRONG ON PURPOSE' "$C/$c/ZkFle.tla"
done

if [ "$(id -u)" != 0 ] || [ ! -f /usr/share/java/zookeeper.jar ]; then
	echo "SKIP: recording ZooKeeper traces needs root and /usr/share/java/zookeeper.jar"
	finish
	exit $?
fi

# Two captures with the higher-election-epoch path (a restarted server catches up).
TRACES=""
for x in leader-restart:1 rolling-restart:2; do
	s=${x%:*} n=${x#*:}
	run_status 0 "$T/$s-$n.sum" "$T/$s-$n.err" "$SPECTAP" record zookeeper --scenario "$s" --seed "$n" -o "$T/$s-$n.spt" --json
	[ -f "$T/$s-$n.spt" ] && TRACES="$TRACES $T/$s-$n.spt"
done

# check_all SPEC NAME: checks SPEC on every trace through both mappings; the failures of all of
# them, one JSON object a line ({map, trace, action, window_id, enabled, differs}), in $T/NAME.fail
check_all() {
	: >"$T/$2.fail"
	: >"$T/$2.all"
	for t in $TRACES; do
		for m in $MAPS; do
			o="$T/$2-$(basename "$t" .spt)-$m.json"
			run_status 0 "$o" "$T/e" "$SPECTAP" check --spec "$1" --map "$D/$m.tla" "$t" --json --max-failures 1000000 --allow-empty
			jq -c --arg m "$m" --arg t "$(basename "$t" .spt)" '.actions | to_entries[] | .key as $a |
				.value.failures[] | {map: $m, trace: $t, action: $a, window_id, enabled, differs, actor, events}' "$o" >>"$T/$2.fail"
			cat "$o" >>"$T/$2.all"
		done
	done
}
# fails_in NAME [ACTION]: number of failing windows (of ACTION)
fails_in() { jq -s --arg a "${2:-}" '[.[] | select($a == "" or .action == $a)] | length' "$T/$1.fail"; }
# all_name NAME ACTION VAR: every failure of ACTION is enabled and its differs names VAR
all_name() {
	jq -s --arg a "$2" --arg v "$3" '[.[] | select(.action == $a) | .enabled and (.differs | index($v) != null)] | all' "$T/$1.fail"
}

# The faithful spec: every window passes.
check_all "$D/ZkFle.tla" faithful
while read -r f; do
	bad "faithful spec: window fails: $f"
	# What the code did there, so that a capture that cannot be made again can still be read.
	first=$(echo "$f" | jq '.events[0]') last=$(echo "$f" | jq '.events[1]')
	"$SPECTAP" dump "$T/$(echo "$f" | jq -r .trace).spt" --from "$((first > 5 ? first - 5 : 0))" \
		--count "$((last - first + 8))" 2>&1 | sed 's/^/      /' >&2
done <"$T/faithful.fail"
check_eq "the faithful spec passes every window" 0 "$(fails_in faithful)"
check "the captures took the higher-epoch path" \
	[ "$(jq -s '[.[].actions.HandleHigherEpoch.windows // 0] | add' "$T/faithful.all")" -gt 0 ]

for c in $CANDIDATES; do
	check_all "$C/$c/ZkFle.tla" "$c"
	n=$(fails_in "$c")
	echo "  $c: $n failing windows (2 captures x 2 mappings): $(jq -rs 'group_by(.action)[] | "\(.[0].action) \(length) [\([.[] | if .enabled then (.differs | join("+")) else "not enabled" end] | unique | join(", "))]"' "$T/$c.fail" | tr '\n' ';')"
	check "candidate $c fails on some window" [ "$n" -gt 0 ]
done

# textbook-set: a set is never the trace's map: every window that writes recvset fails, on
# recvset alone; the quorum guards read the map as its pairs, so nothing else fails.
check "textbook-set: PutVote windows fail" [ "$(fails_in textbook-set PutVote)" -gt 0 ]
check_eq "textbook-set: every failure names recvset only" true \
	"$(jq -s '[.[] | .enabled and .differs == ["recvset"]] | all' "$T/textbook-set.fail")"
check_eq "textbook-set: only the actions writing recvset fail" "" \
	"$(jq -rs '[.[].action] | unique - ["Restart", "StartElection", "ClearRecvset", "PutVote", "PutLearnerVote"] | join(" ")' "$T/textbook-set.fail")"

# merged-guard: the handling of a higher election epoch moves the clock, the code's separate
# logicalclock.set step does not.
check "merged-guard: HandleHigherEpoch windows fail" [ "$(fails_in merged-guard HandleHigherEpoch)" -gt 0 ]
check "merged-guard: RaiseLogicalclock windows fail" [ "$(fails_in merged-guard RaiseLogicalclock)" -gt 0 ]
check_eq "merged-guard: HandleHigherEpoch failures name logicalclock" true "$(all_name merged-guard HandleHigherEpoch logicalclock)"
check_eq "merged-guard: RaiseLogicalclock failures name logicalclock" true "$(all_name merged-guard RaiseLogicalclock logicalclock)"

# no-clear: a recvset.clear() that leaves the old round's votes.
check_eq "no-clear: only ClearRecvset fails" "ClearRecvset" "$(jq -rs '[.[].action] | unique | join(" ")' "$T/no-clear.fail")"
check_eq "no-clear: ClearRecvset failures name recvset" true "$(all_name no-clear ClearRecvset recvset)"

# keep-first: a later vote from the same sender does not replace the earlier one.
check_eq "keep-first: every failure names recvset" true \
	"$(jq -s '[.[] | .enabled and .differs == ["recvset"]] | all' "$T/keep-first.fail")"

# lower-sid, no-adopt: the better vote is refused: the windows are not enabled.
check "lower-sid: HandleSameEpochBetter windows fail" [ "$(fails_in lower-sid HandleSameEpochBetter)" -gt 0 ]
check_eq "no-adopt: only UpdateProposal fails" "UpdateProposal" "$(jq -rs '[.[].action] | unique | join(" ")' "$T/no-adopt.fail")"
finish
