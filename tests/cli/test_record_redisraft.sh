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
# nothing left running; across them every probe fires (raft.delete only on a log conflict).
hits="$T/hits"
: >"$hits"
for sc in initial-election leader-kill leader-restart follower-pause; do
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
	jq -r '.probe_hits | to_entries[] | select(.value > 0) | .key' "$T/$sc.json" >>"$hits"
done
for k in $(jq -r '.probe_hits | keys[]' "$T/leader-kill.json"); do
	[ "$k" = raft.delete ] && continue
	check "probe $k fired in some scenario" grep -qx "$k" "$hits"
done
check_eq "leader-kill: a new leader in a higher term" true \
	"$(jq '.term > .first_term and .leader != .first_leader' "$T/leader-kill.json")"
check_eq "leader-kill: the writes were acknowledged" 80 "$(jq .writes.acked "$T/leader-kill.json")"
# Every acknowledged write is a ClientRequest (plus the joins' and no-ops' entries).
n=$("$SPECTAP" dump --kind ClientRequest "$T/leader-kill.spt" | wc -l)
check "leader-kill: a ClientRequest per acknowledged write" test "$n" -ge 80
"$SPECTAP" dump --kind Timeout "$T/leader-kill.spt" >"$T/timeout"
check_contains "leader-kill: the election timeout says it starts a pre-vote" "$T/timeout" "preVote |-> TRUE"
finish
