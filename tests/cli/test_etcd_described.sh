#!/bin/sh
# etcd recorded from its description (systems/etcd/system.yaml and Events.tla: no etcd C), against
# the C recorder (`record etcd`, systems/etcd/*.c) on the same scenario: the same event
# vocabulary (kinds, and the keys of each kind's state, args and message fields), every window of
# EtcdRaft.tla passing through EtcdBenchMap on both, and the same wrong spec failing on both.
# The runs are not the same run (etcd's timing differs), so events are compared by shape.
. tests/cli/lib.sh
if [ ! -x /usr/bin/etcd ] || [ "$(id -u)" != 0 ]; then
	echo "SKIP: etcd from its description needs root and Debian's etcd-server"
	finish
	exit $?
fi
D=systems/etcd/spec
SPEC=$D/EtcdRaft.tla
MAP=$D/EtcdBenchMap.tla
ns_before=$(ip netns list 2>/dev/null | grep -c '^spt-' || true)
for s in leader-kill partition random; do
	run_status 0 "$T/$s.json" "$T/$s.err" "$SPECTAP" record etcd --described --scenario "$s" -o "$T/$s.spt" --json
	check_eq "$s (data): nothing lost, every receive paired, every put answered" "0 0 true" \
		"$(jq -r '"\(.lost) \(.unpaired_receives) \(.load.acked + .load.failed == .load.ops)"' "$T/$s.json")"
	check_eq "$s (data): every member's trace names etcd's own leader at the end" "true" "$(jq .final_match "$T/$s.json")"
	run_status 0 "$T/$s.chk" "$T/$s.cerr" "$SPECTAP" check --spec "$SPEC" --cfg $D/EtcdRaft.cfg --map "$MAP" "$T/$s.spt" \
		--json --allow-empty
	check_eq "$s (data): every window of EtcdRaft.tla passes" "[]" \
		"$(jq -c '[.actions | to_entries[] | select(.value.passed != .value.windows) | .key]' "$T/$s.chk")"
	check "$s (data): the step actions have windows" test "$(jq '[.actions[] | .windows] | add' "$T/$s.chk")" -ge 500
done
check_eq "partition (data): a new leader after the cut, and in namespaces" "true true" \
	"$(jq -r '.netns' "$T/partition.json") $(jq '.actions.HandleVoteRequest.windows >= 2' "$T/partition.chk")"
run_status 0 "$T/r2.out" "$T/r2.err" "$SPECTAP" record etcd --described --scenario random --seed 2 -o "$T/r2.spt"
check_eq "random (data): three faults the seed picked" 3 "$(grep -c 'picked by the seed' "$T/r2.err" || true)"
run_status 0 "$T/r2.chk" "$T/r2.cerr" "$SPECTAP" check --spec "$SPEC" --cfg $D/EtcdRaft.cfg --map "$MAP" "$T/r2.spt" \
	--json --allow-empty
check_eq "random seed 2 (data): every window of EtcdRaft.tla passes" "[]" \
	"$(jq -c '[.actions | to_entries[] | select(.value.passed != .value.windows) | .key]' "$T/r2.chk")"
check_eq "no network namespace is left" "$ns_before" "$(ip netns list 2>/dev/null | grep -c '^spt-' || true)"

# The C recorder on the same scenario: the same vocabulary.
run_status 0 "$T/c.sum" "$T/c.err" "$SPECTAP" record etcd --scenario leader-kill --puts 400 -o "$T/c.spt" --json
for w in c leader-kill; do
	"$SPECTAP" export --to json "$T/$w.spt" -o "$T/$w.ndjson" 2>/dev/null
	jq -c 'select(.event) | .event | [.kind, (.state // {} | keys), (.args // {} | keys - ["stepBegin", "stepMsg"]),
		(.msg.fields // {} | keys)]' "$T/$w.ndjson" | sort -u >"$T/$w.shapes"
done
common="ApplyConfChange BecomeCandidate BecomeFollower BecomeLeader Commit ReceiveAppendEntriesRequest
ReceiveAppendEntriesResponse ReceiveRequestVoteRequest ReceiveRequestVoteResponse SendAppendEntriesRequest
SendAppendEntriesResponse SendRequestVoteRequest SendRequestVoteResponse SendMessage StepProp StepBeat"
for k in $common; do
	# Replicate's data bytes are the C recorder's alone (a field of every entry: not read as data).
	check_eq "event $k: the same state, args and message fields from data as from C" \
		"$(grep "^\[\"$k\"," "$T/c.shapes" | head -n 1)" "$(grep "^\[\"$k\"," "$T/leader-kill.shapes" | head -n 1)"
done
check_eq "Replicate: the same but the entry's data" '["Replicate",["commit","id","lead","log","logTerm","logTerms","role","term","vote"],["entries","index","step"],[]]' \
	"$(grep '^\["Replicate",' "$T/leader-kill.shapes" | head -n 1)"
run_status 0 "$T/c.chk" "$T/c.cerr" "$SPECTAP" check --spec "$SPEC" --cfg $D/EtcdRaft.cfg --map "$MAP" "$T/c.spt" --json --allow-empty
check_eq "leader-kill (C): every window passes too" "[]" \
	"$(jq -c '[.actions | to_entries[] | select(.value.passed != .value.windows) | .key]' "$T/c.chk")"

# The same wrong spec fails on both: the follower commits all it appended (not capped by m.Commit).
sed 's/!.commit = Max(@, Min(m.commit, lastnewi))/!.commit = Max(@, lastnewi)/' "$SPEC" >"$T/EtcdRaft.tla"
cp $D/EtcdRaft.cfg "$T/EtcdRaft.cfg"
check "the mutant differs from the spec" [ -n "$(diff "$SPEC" "$T/EtcdRaft.tla")" ]
for w in c leader-kill; do
	"$SPECTAP" check --spec "$T/EtcdRaft.tla" --cfg "$T/EtcdRaft.cfg" --map "$MAP" "$T/$w.spt" --json --allow-empty >"$T/$w.m1" 2>/dev/null
	check "mutant (commit not capped) fails HandleAppendEntries windows of the $w trace" \
		[ "$(jq '.actions.HandleAppendEntries | .windows - .passed' "$T/$w.m1")" -gt 0 ]
done
finish
