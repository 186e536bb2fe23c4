#!/bin/sh
# spectap record etcd: a real cluster of Debian's etcd, probed with eBPF, into a trace.
. tests/cli/lib.sh

run_status 2 "$T/o" "$T/e" "$SPECTAP" record etcd --scenario nap -o "$T/x.spt"
check_contains "unknown scenario" "$T/e" "unknown scenario 'nap' (known: initial-election, leader-kill)"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario initial-election -o "$T/x.spt"
check_contains "systems not yet supported are named" "$T/e" "recording zookeeper is not supported yet"
if [ "$(id -u)" != 0 ] || [ ! -x /usr/bin/etcd ]; then
	echo "SKIP: recording needs root and /usr/bin/etcd"
	finish
	exit $?
fi

run_status 0 "$T/sum.json" "$T/e" "$SPECTAP" record etcd --scenario leader-kill --seed 7 -o "$T/r.spt" --json
check_eq "nothing lost" 0 "$(jq .lost "$T/sum.json")"
check "a new leader in a higher term" [ "$(jq .term "$T/sum.json")" -gt "$(jq .first_term "$T/sum.json")" ]
check_eq "no etcd left running" "" "$(pgrep -f "$T" || true)"

"$SPECTAP" stat --json "$T/r.spt" >"$T/stat.json"
check_eq "three nodes" '["n1","n2","n3"]' "$(jq -c '.nodes | keys' "$T/stat.json")"
check_eq "trace lost" 0 "$(jq .lost "$T/stat.json")"
check_eq "seed in the header" 7 "$(jq .seed "$T/stat.json")"
check "two elections: two BecomeLeader at least" [ "$(jq '.kinds.BecomeLeader' "$T/stat.json")" -ge 2 ]
check "campaigns: BecomeCandidate" [ "$(jq '.kinds.BecomeCandidate' "$T/stat.json")" -ge 2 ]

"$SPECTAP" dump --json --kind BecomeLeader "$T/r.spt" | jq -c '.event | {node, term: .state.term, ok: (.state.lead == .state.id and .state.state == 2 and .state.vote == .state.id)}' >"$T/leaders"
check_eq "every BecomeLeader's post-state says so" "" "$(grep -v '"ok":true' "$T/leaders" || true)"
check_eq "the first leader in the trace is the one etcdctl saw" "$(jq -r .first_leader "$T/sum.json")" "$(head -n 1 "$T/leaders" | jq -r .node)"
check_eq "the last leader and its term, as etcdctl saw them" "$(jq -c '[.leader, .term]' "$T/sum.json")" "$(tail -n 1 "$T/leaders" | jq -c '[.node, .term]')"
"$SPECTAP" dump --json --kind BecomeCandidate "$T/r.spt" | jq -c '.event.state | select(.state != 1 or .vote != .id)' >"$T/bad"
check_eq "every BecomeCandidate votes for itself" "" "$(cat "$T/bad")"
finish
