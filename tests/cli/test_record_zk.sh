#!/bin/sh
# spectap record zookeeper: real ensembles of Debian's ZooKeeper with spectap's JVMTI agent, their
# records captured over BPF (USDT) and LTTng into traces; every scenario, checked against srvr.
. tests/cli/lib.sh

run_status 2 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario nap -o "$T/x.spt"
check_contains "unknown scenario" "$T/e" "unknown scenario 'nap' (known: initial-election, leader-kill"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario leader-kill --via carrier-pigeon -o "$T/x.spt"
check_contains "unknown transport" "$T/e" "--via: 'carrier-pigeon' is neither bpf nor lttng"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario leader-kill --nodes 1 -o "$T/x.spt"
check_contains "a fault needs two servers" "$T/e" "scenario leader-kill needs at least 2 servers"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario leader-kill --flush-events 0 -o "$T/x.spt"
check_contains "--flush-events 0 is refused" "$T/e" "--flush-events: 0 is not in 1..100000000"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario leader-kill
check_contains "the output is required" "$T/e" "-o OUT.spt is required"
run_status 2 "$T/o" "$T/e" "$SPECTAP" record --scenario leader-kill zookeeper -o "$T/x.spt"
check_contains "the system comes first" "$T/e" "the system to record comes first"
if [ "$(id -u)" != 0 ] || [ ! -r /usr/share/java/zookeeper.jar ]; then
	echo "SKIP: recording needs root and Debian's zookeeper"
	finish
	exit $?
fi
run_status 1 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario initial-election --agent /nonexistent.so -o "$T/x.spt"
check_contains "a missing agent is named" "$T/e" "the ZooKeeper agent is not at /nonexistent.so"

# The effects of each "higher electionEpoch" handle, in the code's order, as separate events of
# that server before its next handle: logicalclock raised to the notification's epoch, recvset
# cleared, proposal updated, notifications sent, then the notification's vote put in recvset.
# Prints "handles in_order".
higher_epoch_order() {
	"$SPECTAP" export --to json "$1" 2>/dev/null | jq -s -r '
		[.[] | select(.event) | .event] as $all
		| [ ($all | map(.node) | unique)[] as $n | ($all | map(select(.node == $n))) as $ev
		    | range(0; $ev | length) as $i
		    | select($ev[$i].kind == "zk.notification.handle" and $ev[$i].args.branch == "lookingHigherEpoch")
		    | $ev[$i] as $h | $ev[$i + 1:] as $after
		    | ([$after | map(.kind) | indices("zk.notification.handle")[0], ($after | length)] | map(select(. != null)) | min) as $stop
		    | $after[:$stop] as $r | ($r | map(.kind)) as $k
		    | ($k | indices("zk.logicalclock.bump")[0]) as $b
		    | ($k | indices("zk.recvset.clear")[0]) as $c
		    | ($k | indices("zk.proposal.update")[0]) as $p
		    | ($k | indices("zk.notification.send")[0]) as $s
		    | ([$r | to_entries[] | select(.value.kind == "zk.recvset.put" and .value.args.sid == $h.args.from) | .key][0]) as $u
		    | ($b != null and $c != null and $p != null and $s != null and $u != null
		       and $b < $c and $c < $p and $p < $s and $s < $u
		       and $r[$b].args.old < $r[$b].args.new and $r[$b].args.new == $h.args.fields.electionEpoch
		       and $r[$u].args.vote.electionEpoch == $h.args.fields.electionEpoch) ]
		| "\(length) \(map(select(.)) | length)"'
}

# recvset is a map from sender to vote: after every put the sender's entry is the vote put; and
# a put replaces the sender's earlier, different vote. Prints "puts consistent replacements".
recvset_map() {
	"$SPECTAP" export --to json "$1" 2>/dev/null | jq -s -r '
		[.[] | select(.event) | .event] as $all
		| [ ($all | map(.node) | unique)[] as $n | ($all | map(select(.node == $n))) as $ev
		    | range(1; $ev | length) as $i | select($ev[$i].kind == "zk.recvset.put")
		    | $ev[$i].args as $a | ($ev[$i - 1].state.recvset[$a.sid]) as $before
		    | { ok: ($ev[$i].state.recvset[$a.sid] == $a.vote),
			replaced: ($before != null and $before != $a.vote) } ]
		| "\(length) \(map(select(.ok)) | length) \(map(select(.replaced)) | length)"'
}

replacements=0
for sc in initial-election leader-kill leader-restart follower-pause rolling-restart random quorum-loss; do
	run_status 0 "$T/$sc.json" "$T/$sc.err" "$SPECTAP" record zookeeper --scenario "$sc" --seed 5 -o "$T/$sc.spt" --json
	check_eq "$sc: nothing lost" 0 "$(jq .lost "$T/$sc.json")"
	check_eq "$sc: no record rejected" 0 "$(jq .rejected "$T/$sc.json")"
	check_eq "$sc: every receive pairs with a send" 0 "$(jq .unpaired_receives "$T/$sc.json")"
	check "$sc: notifications were received" [ "$(jq .receives "$T/$sc.json")" -gt 5 ]
	check_eq "$sc: no record came later than the reorder window" 0 "$(jq .late "$T/$sc.json")"
	check_eq "$sc: end state and leader of every live server as srvr reports them" true "$(jq .final_match "$T/$sc.json")"
	check_eq "$sc: live servers compared" "" "$(jq -r '.servers[] | select(.live and (.srvr == null)) | .node' "$T/$sc.json")"
	wd=$(jq -r .work_dir "$T/$sc.json")
	check "$sc: the work directory is removed" test -n "$wd" -a "$wd" != null -a ! -e "$wd"
	check_eq "$sc: nothing of the ensemble left running" "" "$(pgrep -f "$wd/" || true)"
	"$SPECTAP" stat --json "$T/$sc.spt" >"$T/$sc.stat"
	check_eq "$sc: the trace says nothing was lost" 0 "$(jq .lost "$T/$sc.stat")"
	check_eq "$sc: the trace holds every event" "$(jq .events "$T/$sc.json")" "$(jq .events "$T/$sc.stat")"
	check_eq "$sc: the trace's receives all paired" 0 "$(jq .messages.unpaired_receives "$T/$sc.stat")"
	# Causal order: a receive never precedes its send, and its clock is past the send's.
	"$SPECTAP" export --to json "$T/$sc.spt" 2>/dev/null | jq -s -r '
		[.[] | select(.event.msg) | .event] as $m
		| ($m | map(select(.msg.dir == "send")) | map({key: (.msg.id | tostring), value: .}) | from_entries) as $s
		| [$m[] | select(.msg.dir == "recv") | $s[.msg.id | tostring] as $x
		   | select($x == null or $x.ts_ns > .ts_ns or $x.lamport >= .lamport)] | length' >"$T/causal"
	check_eq "$sc: every receive after its send, in time and Lamport clock" 0 "$(cat "$T/causal")"
	set -- $(higher_epoch_order "$T/$sc.spt")
	check_eq "$sc: every higher-epoch handle is followed by raise, clear, proposal, sends, put" "$1" "$2"
	eval "higher_$(echo "$sc" | tr - _)=$1"
	set -- $(recvset_map "$T/$sc.spt")
	check "$sc: recvset puts were captured" [ "$1" -gt 0 ]
	check_eq "$sc: after each put, recvset maps the sender to the vote put" "$1" "$2"
	replacements=$((replacements + $3))
done
# In a leader-kill both survivors start the same new election epoch; the higher-epoch step
# comes when the killed leader returns and hears the epoch it missed (leader-restart).
check "leader-restart: the returning server handles a higher electionEpoch" [ "$higher_leader_restart" -ge 1 ]
check "a later vote from a sender replaced its earlier one in recvset" [ "$replacements" -ge 1 ]
check "leader-kill: a new leader in a higher epoch" [ "$(jq .epoch "$T/leader-kill.json")" -gt 1 ]
check_eq "leader-kill: two agreements" 2 "$(jq .elections "$T/leader-kill.json")"
# quorum-loss: the survivors, left without a quorum in a raised election epoch, hear the
# restarted followers start again from a lower one (twice: the first leader, a quorum again and
# the old leader back, per round).
check_eq "quorum-loss: five agreements" 5 "$(jq .elections "$T/quorum-loss.json")"
check "quorum-loss: a notification from a lower election epoch is handled" [ "$("$SPECTAP" export --to json "$T/quorum-loss.spt" | \
	jq -s '[.[] | select(.event.kind == "zk.notification.handle" and .event.args.branch == "lookingLowerEpoch")] | length')" -ge 1 ]
check "leader-restart: the killed leader is not the new one" [ "$(jq -r .leader "$T/leader-restart.json")" != "$(jq -r .first_leader "$T/leader-restart.json")" ]

# --via lttng: the same scenario gives the same event kinds and state variables (of the same
# types). Which server wins and which steps a late starter takes vary between any two runs, so
# kinds that only some runs have are left out of the comparison; each run's end state is
# checked against srvr instead.
# A session left by a killed capture (its pid gone) is reclaimed by the next one, with its output.
# The lttng command starts a session daemon when none runs: one this test caused is stopped at
# its end (a daemon left behind keeps the sessions of later killed captures active).
daemon_before=$(pgrep -x lttng-sessiond || true)
mkdir -p "$T/spectap-lttng-stale"
lttng create spectap-999999-0 --output "$T/spectap-lttng-stale" >/dev/null 2>&1
run_status 0 "$T/lt.json" "$T/lt.err" "$SPECTAP" record zookeeper --scenario initial-election --seed 5 --via lttng -o "$T/lt.spt" --json
check_eq "a killed capture's LTTng session is reclaimed" "" "$(lttng list 2>/dev/null | grep spectap-999999-0 || true)"
check "and its output directory removed" [ ! -e "$T/spectap-lttng-stale" ]
# The same by a capture over BPF: a stale session would record its programs too.
mkdir -p "$T/spectap-lttng-stale"
lttng create spectap-999999-1 --output "$T/spectap-lttng-stale" >/dev/null 2>&1
lttng enable-event -u spectap:event -s spectap-999999-1 >/dev/null 2>&1
lttng start spectap-999999-1 >/dev/null 2>&1
run_status 0 "$T/bs.json" "$T/bs.err" "$SPECTAP" record zookeeper --scenario initial-election --seed 5 \
	--flush-events 4 -o "$T/bs.spt" --json
check_eq "a capture over BPF reclaims a killed capture's LTTng session too" "" "$(lttng list 2>/dev/null | grep spectap-999999-1 || true)"
check_eq "bpf with a stale session around: nothing lost" 0 "$(jq .lost "$T/bs.json")"
# --flush-events 4: a chunk as soon as four events wait (and each second), so at least one
# chunk per four events.
"$SPECTAP" stat --json "$T/bs.spt" >"$T/bs.stat"
check "--flush-events 4: a chunk per 4 events at least ($(jq -c '[.events, .chunks]' "$T/bs.stat"))" \
	[ "$(jq '.chunks * 4 >= .events' "$T/bs.stat")" = true ]
check "--flush-events 4: and not one per event" [ "$(jq '.chunks < .events' "$T/bs.stat")" = true ]
if [ -z "$daemon_before" ] && pid=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null); then
	kill "$pid" 2>/dev/null
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "the session daemon this test started is stopped" sh -c "! kill -0 $pid 2>/dev/null"
fi
check_eq "lttng: nothing lost" 0 "$(jq .lost "$T/lt.json")"
check_eq "lttng: every receive pairs with a send" 0 "$(jq .unpaired_receives "$T/lt.json")"
check_eq "lttng: end state as srvr reports it" true "$(jq .final_match "$T/lt.json")"
check_eq "lttng: the trace says how it was captured" jvmti+lttng "$("$SPECTAP" stat --json "$T/lt.spt" | jq -r .capture_method)"
for f in initial-election lt; do
	"$SPECTAP" export --to json "$T/$f.spt" 2>/dev/null | jq -s -c '[.[] | select(.event) | .event]
		| { kinds: (map(.kind) | unique - ["zk.election.timeout", "zk.notification.resend", "zk.outofelection.put",
			"zk.recvset.clear", "zk.election.stop"]),
		    vars: (map(.state | to_entries | map({(.key): (.value | type)}) | add) | unique) }' >"$T/$f.shape"
done
check_eq "bpf and lttng: the same kinds and state variables" "$(cat "$T/initial-election.shape")" "$(cat "$T/lt.shape")"

# stat and dump show the trace sensibly.
"$SPECTAP" stat "$T/leader-kill.spt" >"$T/stat.txt"
check_contains "stat names the system" "$T/stat.txt" "zookeeper"
check_contains "stat counts the notifications" "$T/stat.txt" "zk.notification.send"
"$SPECTAP" dump "$T/leader-kill.spt" >"$T/dump.txt"
check_contains "dump shows a handled notification with its branch" "$T/dump.txt" "lookingSameEpoch"
check_contains "dump shows the state" "$T/dump.txt" "recvset"

# Interrupted (SIGTERM) in the middle of a scenario: the servers are stopped, the work directory
# removed, and the trace keeps what was captured, readable and marked incomplete.
"$SPECTAP" record zookeeper --scenario leader-restart -o "$T/int.spt" >"$T/int.out" 2>"$T/int.err" &
rec=$!
i=0
while ! grep -q "leads" "$T/int.err" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $rec
wait $rec
check_eq "interrupted: exit status 128 + SIGTERM" 143 $?
check_contains "interrupted: says what was kept" "$T/int.err" "interrupted by signal 15: $T/int.spt keeps the"
wd=$(sed -n 's/.* started with the agent in \([^ ]*\) .*/\1/p' "$T/int.err")
check "interrupted: the work directory is removed" test -n "$wd" -a ! -e "$wd"
check_eq "interrupted: nothing of the ensemble left running" "" "$(pgrep -f "$wd/" || true)"
"$SPECTAP" stat --json "$T/int.spt" >"$T/int.stat" 2>"$T/int.stat.err"
check "interrupted: the trace keeps the events captured" [ "$(jq .events "$T/int.stat")" -gt 10 ]
check_eq "interrupted: the trace reads as not closed (recovered by scanning)" "false true" \
	"$(jq -r '"\(.indexed) \(.recovered)"' "$T/int.stat")"

# Coverage through a mapping's Branch/Branches: over the corpus of this test's captures, and
# --until-covered (one run covers CovMap's branches; CovMapNever's can never be covered).
C=tests/data/coverage
"$SPECTAP" stat --coverage --map $C/CovMap.tla --spec $C/Cov.tla --json "$T/initial-election.spt" "$T/leader-kill.spt" \
	"$T/leader-restart.spt" >"$T/cov.json"
handles=$(for f in initial-election leader-kill leader-restart; do
	"$SPECTAP" stat --json "$T/$f.spt" | jq '.kinds["zk.notification.handle"]'; done | awk '{ s += $1 } END { print s }')
check_eq "coverage: a window per handled notification, over the three traces" "$handles" "$(jq .windows.Tick "$T/cov.json")"
check_eq "coverage: three traces" 3 "$(jq .traces "$T/cov.json")"
check_eq "coverage: the listed branches are covered" true "$(jq .complete "$T/cov.json")"
check "coverage: the higher-epoch branch is counted" [ "$(jq '.branches.lookingHigherEpoch' "$T/cov.json")" -ge 1 ]
run_status 0 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario initial-election --until-covered \
	--map $C/CovMap.tla --spec $C/Cov.tla --budget 300 -o "$T/corpus"
check_eq "until-covered: one run covers CovMap's branches" 1 "$(jq '.runs | length' "$T/corpus/manifest.json")"
check_eq "until-covered: the manifest says complete" true "$(jq .complete "$T/corpus/manifest.json")"
check "until-covered: the run's trace is in the corpus" test -s "$T/corpus/initial-election-1.spt"
run_status 1 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario initial-election --until-covered \
	--map $C/CovMapNever.tla --spec $C/Cov.tla --budget 1 --seed 4 -o "$T/corpus2"
check_contains "until-covered: a spent budget is an error naming the manifest" "$T/e" "$T/corpus2/manifest.json"
check_eq "until-covered: the manifest names what is missing" '["noSuchBranch"]' \
	"$(jq -c .coverage.missing "$T/corpus2/manifest.json")"
check_eq "until-covered: seeds from --seed" 4 "$(jq '.runs[0].seed' "$T/corpus2/manifest.json")"

# The SysMoBench ZooKeeper dialect, with the state added: one Notification per send or resend
# (a message on the wire, as Remix sees them), one HandleNotification per receive (same msgId),
# a BecomeLeader per leader.
"$SPECTAP" export --to sysmobench "$T/leader-kill.spt" >"$T/lk.smb" 2>"$T/lk.smb.err"
"$SPECTAP" stat --json "$T/leader-kill.spt" >"$T/lk.stat"
check_eq "sysmobench: a Notification per send and per resend" \
	"$(jq '(.kinds["zk.notification.send"] // 0) + (.kinds["zk.notification.resend"] // 0)' "$T/lk.stat")" \
	"$(jq -c 'select(.event.event == "Notification")' "$T/lk.smb" | wc -l)"
check_eq "sysmobench: a HandleNotification per receive" "$(jq '.kinds["zk.notification.recv"]' "$T/lk.stat")" \
	"$(jq -c 'select(.event.event == "HandleNotification")' "$T/lk.smb" | wc -l)"
check_eq "sysmobench: every HandleNotification's msgId is a Notification's" 0 \
	"$(jq -s '[.[] | select(.tag == "trace") | .event] | ([.[] | select(.event == "Notification") | .data.msgId]) as $sent
	  | [.[] | select(.event == "HandleNotification") | .data.msgId | select(. as $m | $sent | index($m) | not)] | length' "$T/lk.smb")"
check_eq "sysmobench: a BecomeLeader per leader" 2 "$(jq -c 'select(.event.event == "BecomeLeader")' "$T/lk.smb" | wc -l)"
check_eq "sysmobench: every event carries the state" 0 "$(jq -c 'select(.tag == "trace" and .event.state.logicalclock == null)' "$T/lk.smb" | wc -l)"
check_eq "sysmobench: servers named s<id>" '["s1","s2","s3"]' "$(jq -c 'select(.tag == "config") | .config.servers' "$T/lk.smb")"
finish
