#!/bin/sh
# spectap record redisraft: a RedisRaft cluster (the module SPECTAP_REDISRAFT_MODULE names, in
# Debian's redis-server), probed with DWARF-resolved eBPF uprobes. Skipped, visibly, without a
# module: CI has none (RedisRaft is not packaged; users build it with -g).
. tests/cli/lib.sh

run_status 2 "$T/o" "$T/e" env -u SPECTAP_REDISRAFT_MODULE "$SPECTAP" record redisraft --scenario leader-kill -o "$T/x.spt"
check_contains "the module is required" "$T/e" "--module PATH (a redisraft.so built with -g) is required"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record redisraft --module /nonexistent.so --scenario leader-kill -o "$T/x.spt"
check_contains "a missing module is named" "$T/e" "--module /nonexistent.so: No such file or directory"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record redisraft --module /bin/sh --scenario nap -o "$T/x.spt"
check_contains "unknown scenario" "$T/e" "unknown scenario 'nap' (known: initial-election, steady-writes, leader-kill"
M=${SPECTAP_REDISRAFT_MODULE:-}
if [ -z "$M" ] || [ ! -r "$M" ] || [ "$(id -u)" != 0 ] || ! command -v redis-server >/dev/null; then
	echo "SKIP: RedisRaft recording needs root, redis-server and SPECTAP_REDISRAFT_MODULE naming a redisraft.so built with -g"
	finish
	exit $?
fi
# A module without debug info is refused with what is missing.
strip -g -o "$T/stripped.so" "$M"
run_status 1 "$T/o" "$T/e" "$SPECTAP" record redisraft --module "$T/stripped.so" --scenario initial-election -o "$T/x.spt"
check_contains "no debug info is named" "$T/e" "no DWARF debug info"

# Each scenario: no loss, every receive paired with its send, the end state equal to INFO raft,
# nothing left running, every acknowledged write committed on a quorum, every window of the
# benchmark's actions passing RedisRaft.tla; across them every probe fires.
SPEC=systems/redisraft/spec/RedisRaft.tla
MAP=systems/redisraft/spec/RrBenchMap.tla
hits="$T/hits"
actions="$T/actions"
: >"$hits"
: >"$actions"
for sc in initial-election steady-writes leader-kill follower-pause leader-restart random; do
	run_status 0 "$T/$sc.json" "$T/$sc.err" "$SPECTAP" record redisraft --scenario "$sc" --seed 7 -o "$T/$sc.spt" --json
	check_eq "$sc: nothing lost" 0 "$(jq .lost "$T/$sc.json")"
	check_eq "$sc: every receive pairs with a send" 0 "$(jq .unpaired_receives "$T/$sc.json")"
	check_eq "$sc: end state of every live node as INFO raft reports it" true "$(jq .final_match "$T/$sc.json")"
	check_eq "$sc: live nodes compared" "" "$(jq -r '.nodes_end[] | select(.live and (.info_raft == null)) | .node' "$T/$sc.json")"
	wd=$(jq -r .work_dir "$T/$sc.json")
	check "$sc: the work directory is removed" test ! -e "$wd"
	check_eq "$sc: nothing of the cluster left running" "" "$(pgrep -f "$wd/" || true)"
	"$SPECTAP" stat --json "$T/$sc.spt" >"$T/$sc.stat"
	check_eq "$sc: the trace says nothing was lost" 0 "$(jq .lost "$T/$sc.stat")"
	check_eq "$sc: the trace's receives all paired" 0 "$(jq .messages.unpaired_receives "$T/$sc.stat")"
	# Only sends that reached the wire are messages: a callback that found its peer not
	# connected sent nothing, and its event says so, with the peer, and has no message.
	"$SPECTAP" export --to json "$T/$sc.spt" -o "$T/$sc.all" 2>/dev/null
	check_eq "$sc: unsent sends ($(jq .sends_unconnected "$T/$sc.json")) have no message and name the peer" \
		"$(jq .sends_unconnected "$T/$sc.json")" \
		"$(jq -s '[.[] | .event | select(.args.connected == false and (has("msg") | not) and (.args.to | test("^s[0-9]+$")) and (.kind | test("^Send.*Request$")))] | length' "$T/$sc.all")"
	# The benchmark's RedisRaft dialect, read the way its trace spec reads it.
	"$SPECTAP" export --to sysmobench "$T/$sc.spt" -o "$T/$sc.smb" 2>/dev/null
	jq -c 'select(.tag == "trace") | .event' "$T/$sc.smb" >"$T/$sc.ev"
	check_eq "$sc: roles the trace spec maps" "[]" \
		"$(jq -s -c 'map(.state.role) | unique - ["Follower","Candidate","Leader"]' "$T/$sc.ev")"
	check_eq "$sc: commit advances on a leader only" "[]" \
		"$(jq -s -c 'map(select(.name == "AdvanceCommitIndex") | .state.role) | unique - ["Leader"]' "$T/$sc.ev")"
	check_eq "$sc: vote responses written as a candidate (or as the follower one of a higher term makes)" "[]" \
		"$(jq -s -c 'map(select(.name == "HandleRequestVoteResponse") | .state.role) | unique - ["Candidate","Follower"]' "$T/$sc.ev")"
	check_eq "$sc: a leader elected by votes is written after the granted vote that made it" "[]" \
		"$(jq -s -c '. as $l | [range(length) | select($l[.].name == "BecomeLeader" and $l[.].state.term > 1) | . as $i
		  | [$l[:$i][] | select(.nid == $l[$i].nid)] | last | select(.name != "HandleRequestVoteResponse" or .msg.voteGranted != true) | $l[$i].nid]' "$T/$sc.ev")"
	jq -r '.probe_hits | to_entries[] | select(.value > 0) | .key' "$T/$sc.json" >>"$hits"
	# Acknowledged writes: each a normal entry a leader appended (ClientRequest) that a quorum
	# of the nodes held committed (commitIndex past its index, its term there).
	"$SPECTAP" export --to json "$T/$sc.spt" -o "$T/$sc.ndjson" 2>"$T/e"
	jq -n -c -f tests/cli/redisraft_quorum.jq "$T/$sc.ndjson" >"$T/$sc.q"
	acked=$(jq .writes.acked "$T/$sc.json")
	check "$sc: every acknowledged write ($acked) is a ClientRequest committed on a quorum ($(cat "$T/$sc.q"))" \
		test "$(jq .on_quorum "$T/$sc.q")" -ge "$acked"
	# The windows of the benchmark's actions all pass the spec written from the code.
	# A scenario exercises some of the actions (every one is seen over all of them, below).
	run_status 0 "$T/$sc.chk" "$T/e" "$SPECTAP" check --map "$MAP" --spec "$SPEC" "$T/$sc.spt" --json --max-failures 100 --allow-empty
	check_eq "$sc: every window passes RedisRaft.tla" "" \
		"$(jq -r '.actions | to_entries[] | select(.value.passed != .value.windows) | "\(.key) \(.value.passed)/\(.value.windows)"' "$T/$sc.chk")"
	echo "  $sc: $(jq -r '[.actions | to_entries[] | "\(.key) \(.value.passed)/\(.value.windows)"] | join(", ")' "$T/$sc.chk")"
	jq -r '.actions | to_entries[] | select(.value.windows > 0) | .key' "$T/$sc.chk" >>"$actions"
done
for k in $(jq -r '.probe_hits | keys[]' "$T/leader-kill.json"); do
	check "probe $k fired in some scenario" grep -qx "$k" "$hits"
done
for a in ElectionTimeout BecomeCandidate BecomeLeader RecvRequestVote RecvAppendEntries LogAppend; do
	check "benchmark action $a has windows" grep -qx "$a" "$actions"
done
check_eq "leader-kill: a new leader in a higher term" true \
	"$(jq '.term > .first_term and .leader != .first_leader' "$T/leader-kill.json")"
check_eq "leader-kill: the writes were acknowledged" 80 "$(jq .writes.acked "$T/leader-kill.json")"
"$SPECTAP" dump --kind Timeout "$T/leader-kill.spt" >"$T/timeout"
check_contains "leader-kill: the election timeout says it starts a pre-vote" "$T/timeout" "preVote |-> TRUE"
# leader-restart: the old leader comes back with an entry nobody else has and cuts it.
check_eq "leader-restart: one write left unacknowledged on the cut-off leader" 1 "$(jq .writes.unacked "$T/leader-restart.json")"
check_eq "leader-restart: the returning node truncates its log" true "$(jq '.probe_hits["raft.delete"] >= 1' "$T/leader-restart.json")"
check_eq "leader-restart: the orphan entry is not on a quorum" 1 \
	"$(jq '.entries - .on_quorum' "$T/leader-restart.q")"
check_eq "leader-restart: three restarts" 3 "$("$SPECTAP" dump --kind Restart "$T/leader-restart.spt" | wc -l | tr -d ' ')"
# spectap windows writes one file per action, the same windows check counted.
run_status 0 "$T/w.json" "$T/e" "$SPECTAP" windows --map "$MAP" --spec "$SPEC" "$T/random.spt" -o "$T/w" --json
check_eq "windows and check agree on the count" "$(jq '[.actions[].windows] | add' "$T/random.chk")" "$(jq .windows "$T/w.json")"
check "a window file for AppendEntries" test -s "$T/w/RecvAppendEntries.ndjson"
check_eq "a RecvAppendEntries window: whole-cluster states, the request as input" "s1,s2,s3 true" \
	"$(head -1 "$T/w/RecvAppendEntries.ndjson" | jq -r '"\(.pre_state.currentTerm | keys | join(",")) \(.input | has("prevLogIdx"))"')"
finish
