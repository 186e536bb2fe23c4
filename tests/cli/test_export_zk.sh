#!/bin/sh
# export --to sysmobench of a ZooKeeper trace: the ZooKeeper dialect of SysMoBench's Remix
# instrumentation (Notification, HandleNotification, BecomeLeader), with the node state added.
# tests/data/zk/election.ndjson: the JVMTI agent's files of a real 3-server election (Debian's
# ZooKeeper 3.8.0), merged by ts_ns; its messages carry no ids.
. tests/cli/lib.sh
ZK=tests/data/zk/election.ndjson

run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$ZK" -o "$T/z.spt"
run_status 0 "$T/z.ndjson" "$T/e" "$SPECTAP" export --to sysmobench "$T/z.spt"
tail -n +2 "$T/z.ndjson" >"$T/ev"
jq -c .event "$T/ev" >"$T/in"

# Found by its zk.* kinds (an imported file names no system); servers named as its nodes.
check_eq "config servers" '["s1","s2","s3"]' "$(head -n 1 "$T/z.ndjson" | jq -c '.config.servers | sort')"
check_eq "events by name" '{"BecomeLeader":1,"HandleNotification":20,"Notification":21}' \
	"$(jq -s -c 'group_by(.event) | map({(.[0].event): length}) | add' "$T/in")"
check_eq "sends and receives of the capture" "21 20" \
	"$(grep -c '"dir":"send"' "$ZK") $(grep -c '"dir":"recv"' "$ZK")"
check_eq "envelope of every line" "42" "$(jq -s '[.[] | select(.tag == "trace" and (.ts | test("^[0-9]+$")))] | length' "$T/ev")"
check_eq "steps count from 0" "$(seq -s, 0 41)" "$(jq -r .step "$T/in" | paste -sd,)"
check_eq "nodes s1..s3" '["s1","s2","s3"]' "$(jq -s -c 'map(.node) | unique' "$T/in")"
check_eq "event fields in Remix's order" '["event","step","node","subnode","data","state"]' \
	"$(head -n 1 "$T/in" | jq -c keys_unsorted)"
check_eq "a Notification as Remix writes it" \
	'{"msgId":1,"from":2,"to":1,"electionEpoch":1,"leader":2,"payload":"from=2, to=1, leader=2, state=LOOKING, zxid=0x0, electionEpoch=1, peerEpoch=0"}' \
	"$(head -n 1 "$T/in" | jq -c .data)"
check_eq "numbers are numbers, the payload a string" "41" \
	"$(jq -s '[.[] | .data | select([.msgId, .from, .to, .electionEpoch, .leader | type] == ["number","number","number","number","number"] and (.payload | type) == "string")] | length' "$T/in")"
check_eq "subnode: the thread of the step" "6714" "$(head -n 1 "$T/in" | jq .subnode)"

# Each HandleNotification carries its Notification's msgId (paired by content on export).
check_eq "msgIds of Notifications are unique" "21" \
	"$(jq -s '[.[] | select(.event == "Notification") | .data.msgId] | unique | length' "$T/in")"
check_eq "every HandleNotification has its Notification's msgId and content" '[true]' \
	"$(jq -s -c '(map(select(.event == "Notification") | {key: (.data.msgId | tostring), value: .data}) | from_entries) as $n
	  | [.[] | select(.event == "HandleNotification") | .data == $n[.data.msgId | tostring]] | unique' "$T/in")"
check_eq "a HandleNotification is on the receiver" "[true]" \
	"$(jq -s -c '[.[] | select(.event == "HandleNotification") | .node == "s\(.data.to)"] | unique' "$T/in")"

# The node state after the step, on every event; BecomeLeader for the server that became LEADING.
check_eq "state on every event" "42" "$(jq -s '[.[] | select(.state.logicalclock != null and .state.recvset != null)] | length' "$T/in")"
leader=$(jq -r '.event | select(.kind == "zk.peer.state" and .args.new == "LEADING") | .node' "$ZK")
check_eq "BecomeLeader of the server whose state became LEADING" "s$leader -1 LEADING LEADING" \
	"$(jq -r 'select(.event == "BecomeLeader") | "\(.node) \(.subnode) \(.data.role) \(.state.state)"' "$T/in")"

# What the dialect has no name for is dropped and counted by kind.
check_contains "drops handle" "$T/e" "zk.notification.handle events (no event of the ZooKeeper dialect): 20"
check_contains "drops other peer states" "$T/e" "zk.peer.state events other than becoming LEADING: 5"
check_contains "drops epochs" "$T/e" "zk.epoch.current events (no event of the ZooKeeper dialect): 18"
run_status 0 "$T/s" "$T/e" "$SPECTAP" export --to sysmobench --json "$T/z.spt" -o "$T/z2.ndjson"
check_eq "written + dropped events = all" "132" \
	"$(jq '42 + ([.dropped | to_entries[] | select(.key | test("^zk[.]")) | .value] | add)' "$T/s")"

# A header that names the system gives the same lines.
"$SPECTAP" import --from json --system zookeeper "$ZK" -o "$T/h.spt" >/dev/null
"$SPECTAP" export --to sysmobench "$T/h.spt" >"$T/h.ndjson" 2>/dev/null
check "system zookeeper in the header: same output" cmp -s "$T/h.ndjson" "$T/z.ndjson"

# Ids the capture gave are kept; a resend is a Notification of its own (Remix sees every message
# on the wire), so the receive of the resent copy has one; a send without its message is counted.
cat >"$T/ids.ndjson" <<'JSON'
{"event":{"node":"1","seq":1,"ts_ns":10,"tid":7,"kind":"zk.notification.send","msg":{"id":77,"dir":"send","from":"1","to":"2","type":"Notification","fields":{"leader":1,"zxid":4294967296,"electionEpoch":2,"peerEpoch":1,"state":"LOOKING"}}}}
{"event":{"node":"1","seq":2,"ts_ns":20,"kind":"zk.notification.resend","msg":{"id":78,"dir":"send","from":"1","to":"2","type":"Notification","fields":{"leader":1,"zxid":4294967296,"electionEpoch":2,"peerEpoch":1,"state":"LOOKING"}}}}
{"event":{"node":"2","seq":1,"ts_ns":30,"tid":9,"kind":"zk.notification.recv","msg":{"id":77,"dir":"recv","from":"1","to":"2","type":"Notification","fields":{"leader":1,"zxid":4294967296,"electionEpoch":2,"peerEpoch":1,"state":"LOOKING"}}}}
{"event":{"node":"2","seq":2,"ts_ns":40,"kind":"zk.notification.send"}}
{"event":{"node":"2","seq":3,"ts_ns":50,"tid":9,"kind":"zk.notification.recv","msg":{"id":78,"dir":"recv","from":"1","to":"2","type":"Notification","fields":{"leader":1,"zxid":4294967296,"electionEpoch":2,"peerEpoch":1,"state":"LOOKING"}}}}
JSON
"$SPECTAP" import --from json "$T/ids.ndjson" -o "$T/ids.spt" >/dev/null
run_status 0 "$T/ids.out" "$T/e" "$SPECTAP" export --to sysmobench "$T/ids.spt"
check_eq "the capture's msg ids" "Notification:77 Notification:78 HandleNotification:77 HandleNotification:78" \
	"$(tail -n +2 "$T/ids.out" | jq -r '"\(.event.event):\(.event.data.msgId)"' | paste -sd' ')"
check_eq "every HandleNotification's msgId is an earlier Notification's" "[true,true]" \
	"$(tail -n +2 "$T/ids.out" | jq -s -c '. as $l | [range(length) | select($l[.].event.event == "HandleNotification")
	  | . as $i | any($l[:$i][]; .event.event == "Notification" and .event.data.msgId == $l[$i].event.data.msgId)]')"
check_eq "zxid in hex in the payload" '"from=1, to=2, leader=1, state=LOOKING, zxid=0x100000000, electionEpoch=2, peerEpoch=1"' \
	"$(sed -n 2p "$T/ids.out" | jq -c .event.data.payload)"
check "a resend is not dropped" sh -c "! grep -q zk.notification.resend '$T/e'"
check_contains "a send without its message is counted" "$T/e" "zk.notification.send/resend/recv events without their message: 1"

# Not a trace: an error that names the file.
run_status 1 "$T/o" "$T/e" "$SPECTAP" export --to sysmobench "$ZK"
check_contains "error names the file" "$T/e" "$ZK: not a spectap trace"
finish
