#!/bin/sh
# spectap record nats: Debian's unmodified nats-server, described as data only (systems/nats:
# system.yaml, Events.tla, spec/; no C), recorded on loopback and checked against the spec
# written from its code. Bad descriptions are refused with file:line:col before anything starts.
. tests/cli/lib.sh
N=systems/nats
differ() { ! cmp -s "$1" "$2"; }

run_status 2 "$T/o" "$T/e" "$SPECTAP" record nosuch --scenario x -o "$T/x.spt"
check_contains "an unknown system says where it looked" "$T/e" "no description of a system named 'nosuch': looked for"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record nats --scenario nap -o "$T/x.spt"
check_contains "an unknown scenario names the known ones" "$T/e" "unknown scenario 'nap' of nats (known: initial-election, leader-kill"
run_status 0 "$T/o" "$T/e" "$SPECTAP" record nats --help
check_contains "--help lists the description's scenarios" "$T/o" "scenarios: initial-election, leader-kill"

# A copy of the description with one mistake, found by SPECTAP_SYSTEMS.
bad_copy() {
	rm -rf "$T/sys"
	mkdir -p "$T/sys"
	cp -r "$N" "$T/sys/nats"
	sed -i "$1" "$T/sys/nats/system.yaml"
}
bad_copy 's/server_name: ${node}/server_name: ${nod}/'
run_status 1 "$T/o" "$T/e" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record nats --scenario initial-election -o "$T/x.spt"
line=$(grep -n 'server_name: ${nod}' "$T/sys/nats/system.yaml" | cut -d: -f1)
check_contains "an unknown placeholder: file, line, column" "$T/e" "system.yaml:$line:20: files: unknown variable 'nod'"
check "nothing was written" test ! -e "$T/x.spt"
if [ "$(id -u)" != 0 ] || [ ! -x /usr/sbin/nats-server ]; then
	echo "SKIP: recording NATS needs root and Debian's nats-server"
	finish
	exit $?
fi
bad_copy 's/(\*raft).switchToLeader", name: leader,/(*raft).switchToLeeder", name: leader,/'
run_status 1 "$T/o" "$T/e" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record nats --scenario initial-election -o "$T/x.spt"
line=$(grep -n 'switchToLeeder' "$T/sys/nats/system.yaml" | cut -d: -f1)
check_contains "a function the source lacks: its line" "$T/e" "system.yaml:$line:7: function (*raft).switchToLeeder is not in package"
bad_copy 's/commit: n.commit, pterm: n.pterm, pindex: n.pindex, catchup/commit: n.comit, pterm: n.pterm, pindex: n.pindex, catchup/'
run_status 1 "$T/o" "$T/e" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record nats --scenario initial-election -o "$T/x.spt"
check_contains "a field path that does not resolve: its line" "$T/e" "read commit (n.comit): server.raft has no field comit"
check "nothing was left running" test -z "$(pgrep -f "$T/sys" || true)"

# Each scenario: nothing lost, every receive paired, the leader each live node reports is the
# trace's, the work directory gone, every window of the faithful spec passing; across them every
# probe fires.
SPEC=$N/spec/NatsRaft.tla
MAP=$N/spec/NatsMap.tla
: >"$T/hits"
ip netns list 2>/dev/null | grep -c '^spt-' >"$T/ns.before" || true
for sc in initial-election leader-kill leader-restart leader-pause split-vote leader-partition; do
	run_status 0 "$T/$sc.json" "$T/$sc.err" "$SPECTAP" record nats --scenario "$sc" --seed 3 -o "$T/$sc.spt" --json
	check_eq "$sc: nothing lost" 0 "$(jq .lost "$T/$sc.json")"
	check_eq "$sc: every receive pairs with a send" 0 "$(jq .unpaired_receives "$T/$sc.json")"
	check_eq "$sc: the leader every live node reports is the trace's" true "$(jq .final_match "$T/$sc.json")"
	check "$sc: the work directory is removed" test ! -e "$(jq -r .work_dir "$T/$sc.json")"
	check_eq "$sc: the load was acknowledged" "$(jq .load.ops "$T/$sc.json")" "$(jq '.load.acked + .load.failed' "$T/$sc.json")"
	jq -r '.probe_hits | to_entries[] | select(.value > 0) | .key' "$T/$sc.json" >>"$T/hits"
	run_status 0 "$T/$sc.check" "$T/$sc.cerr" "$SPECTAP" check --map "$MAP" --spec "$SPEC" "$T/$sc.spt" --json
	check_eq "$sc: every window passes NatsRaft.tla" "[]" "$(jq -c '[.actions[] | select(.passed != .windows)]' "$T/$sc.check")"
done
for p in $(jq -r '.probe_hits | keys[]' "$T/initial-election.json"); do
	check "probe $p fires in some scenario" grep -qx "$p" "$T/hits"
done
check_eq "a leader was elected again after the kill" 2 "$(jq '.probe_hits.leader' "$T/leader-kill.json")"
# A partition (data only: systems/nats/system.yaml's leader-partition): the nodes ran in network
# namespaces, the two the leader was cut off from elected another, and once healed the old
# leader stepped down and every node named the same leader; the namespaces are gone.
check_eq "leader-partition: the nodes ran in network namespaces (and only there)" "true false" \
	"$(jq .netns "$T/leader-partition.json") $(jq .netns "$T/leader-kill.json")"
check_eq "leader-partition: at the end every node names the same leader" 1 \
	"$(jq '[.final[].node_says] | unique | length' "$T/leader-partition.json")"
# (at least: the cut-off node may come back with a higher term of its own and force one more)
check "leader-partition: a leader was elected while the old one was cut off" \
	test "$(jq '.probe_hits.leader' "$T/leader-partition.json")" -ge 2
check "leader-partition: the cut-off leader stepped down after the heal" \
	test "$(jq '.probe_hits.follower' "$T/leader-partition.json")" -ge 1
check_eq "leader-partition: BecomeFollower and a second BecomeLeader have windows (all pass: above)" "true" \
	"$(jq '.actions.BecomeFollower.windows >= 1 and .actions.BecomeLeader.windows >= 2' "$T/leader-partition.check")"
check_eq "no network namespace is left" "$(cat "$T/ns.before")" "$(ip netns list 2>/dev/null | grep -c '^spt-' || true)"
check "a paused leader steps down when it wakes" test "$(jq '.probe_hits.follower' "$T/leader-pause.json")" -ge 1
# A call whose prologue grows the stack runs its entry twice; only the jbe that goes on counts:
# each call is seen once (begins and ends differ by at most a call in progress per node).
check "leader-pause: each processAppendEntry call is seen once" \
	test "$(jq '.probe_hits.append_entry - .probe_hits.append_entry_end | fabs' "$T/leader-pause.json")" -le 3
check "leader-pause: each processAppendEntryResponse call is seen once" \
	test "$(jq '.probe_hits.append_response - .probe_hits.append_response_end | fabs' "$T/leader-pause.json")" -le 3

# The benchmark's Raft dialect, written by systems/nats/Sysmobench.tla (data, not code).
run_status 0 "$T/smb.out" "$T/smb.err" "$SPECTAP" export --to sysmobench "$T/leader-kill.spt" -o "$T/smb.ndjson"
check_contains "export names the dialect's module" "$T/smb.err" "sysmobench lines by"
check_eq "the config line names the servers" '["n1","n2","n3"]' "$(head -1 "$T/smb.ndjson" | jq -c .config.servers)"
for name in BecomeCandidate BecomeLeader SendRequestVoteRequest ReceiveRequestVoteResponse SendAppendEntriesRequest \
	ReceiveAppendEntriesRequest SendAppendEntriesResponse ReceiveAppendEntriesResponse Commit Replicate; do
	check "the export has $name lines" grep -q "\"name\":\"$name\"" "$T/smb.ndjson"
done
check_eq "every line has the node's term, vote and commit and its role" 0 \
	"$(tail -n +2 "$T/smb.ndjson" | jq -c 'select(.event.state.term == null or .event.state.vote == null or .event.state.commit == null or (.event.role | startswith("State") | not))' | wc -l)"
check_eq "every MsgApp names its previous index and term" 0 \
	"$(jq -c 'select(.event.msg.type == "MsgApp" and (.event.msg.index == null or .event.msg.logTerm == null))' "$T/smb.ndjson" | wc -l)"

# --until-covered: seeded runs until the mapping's branches are covered (here two of them, so
# that one run does it); a corpus directory with a manifest.
sed 's/^Branches == .*/Branches == {"BecomeLeader", "AppendAccepted"}/' $N/spec/NatsMap.tla >"$T/NatsMap.tla"
run_status 0 "$T/uc.out" "$T/uc.err" "$SPECTAP" record nats --scenario initial-election --until-covered \
	--map "$T/NatsMap.tla" --spec "$SPEC" --min 1 --budget 120 -o "$T/corpus" --json
check_eq "the corpus is complete after one run" "true 1" \
	"$(jq -r '"\(.coverage.complete) \(.runs | length)"' "$T/corpus/manifest.json" 2>/dev/null || echo none)"

# Specs that say what textbook Raft does, not what this code does, fail where they differ.
sed 's/Reply(m, Msg(i, m.from, "VoteResponse", \[term |-> term\[i\], granted |-> grant\]))/Reply(m, Msg(i, m.from, "VoteResponse", [term |-> t, granted |-> grant]))/' \
	"$SPEC" >"$T/NatsRaft.tla"
cp $N/spec/NatsRaft.cfg "$T/"
check "the textbook vote response is a change of the spec" differ "$SPEC" "$T/NatsRaft.tla"
run_status 0 "$T/tb.check" "$T/tb.err" "$SPECTAP" check --map "$MAP" --spec "$T/NatsRaft.tla" "$T/leader-kill.spt" --json
check_eq "a vote response with the raised term fails HandleVoteRequest" true \
	"$(jq '.actions.HandleVoteRequest.passed < .actions.HandleVoteRequest.windows' "$T/tb.check")"
sed 's/       \/\\ UNCHANGED <<vote, commit, log, msgs, votes, catchup>>/       \/\\ vote'"'"' = [vote EXCEPT ![i] = i] \/\\ UNCHANGED <<commit, log, msgs, votes, catchup>>/' \
	"$SPEC" >"$T/NatsRaft.tla"
check "the textbook self-vote at the timeout is a change of the spec" differ "$SPEC" "$T/NatsRaft.tla"
run_status 0 "$T/sv.check" "$T/sv.err" "$SPECTAP" check --map "$MAP" --spec "$T/NatsRaft.tla" "$T/leader-kill.spt" --json
check_eq "a candidate that votes for itself as it times out fails BecomeCandidate" true \
	"$(jq '.actions.BecomeCandidate.passed < .actions.BecomeCandidate.windows' "$T/sv.check")"

# A full disk under the spool: the recording stops at the step it failed in (not at the end of
# the scenario) and says what failed; nothing is left running.
mkdir -p "$T/full"
if mount -t tmpfs -o size=12k tmpfs "$T/full" 2>/dev/null; then
	run_status 1 "$T/o" "$T/full.err" "$SPECTAP" record nats --scenario leader-kill --seed 1 -o "$T/full/n.spt"
	check_contains "full disk: the collector says what failed" "$T/full.err" "No space left on device (is the disk full?)"
	check_contains "full disk: the scenario stopped there" "$T/full.err" "the capture failed: the scenario stopped after its step"
	check "full disk: the new leader was not waited for" sh -c "! grep -q 'waiting for a new leader' '$T/full.err'"
	umount "$T/full"
	check "full disk: nothing was left running" test -z "$(pgrep -f "nats-server.*spectap-record" || true)"
else
	echo "SKIP: the full-disk recording needs a tmpfs mount"
fi
finish
