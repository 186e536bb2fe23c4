#!/bin/sh
# make demo: a real 3-member etcd cluster recorded with eBPF (Debian's unmodified binary), the
# trace through etcd-io/raft's NDJSON dialect and back, checked against the bundled spec; then a
# real 3-server ZooKeeper ensemble recorded through the JVMTI agent and checked against the
# faithful Fast Leader Election spec and the wrong candidates (scripts/demo_zk.sh); then a real
# 3-server NATS JetStream cluster, a system described as data only (systems/nats), recorded,
# checked against the spec written from its code and exported in the benchmark's Raft dialect;
# last, etcd again from its description alone (systems/etcd/system.yaml, Events.tla), checked
# against the same spec. Needs nothing outside the repository. Every recording is bounded by operations (puts), not by time,
# so the demo does the same work on any machine.
#	BUILD=build sh scripts/demo.sh   (SPECTAP_DEMO_OUT: where the files go, default build/demo)
set -eu
build=${BUILD:-build}
spectap="$build/spectap"
out=${SPECTAP_DEMO_OUT:-$build/demo}
puts=${SPECTAP_DEMO_PUTS:-1000}
S=systems/etcd/spec

rm -rf "$out"
mkdir -p "$out"
: >"$out/summary"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
step() { printf '\n== %s\n' "$*"; }
say() { echo "\$ $*"; }
summary() { printf '%s\n' "$*" >>"$out/summary"; }
T0=$(now)

if [ "$(id -u)" != 0 ]; then
	echo "demo: recording a real cluster needs root (BPF uprobes, the JVMTI agent's USDT probe): run it as root" >&2
	exit 1
fi

step "record a real 3-member etcd cluster: Debian's unmodified /usr/bin/etcd, eBPF uprobes"
echo "(leader-kill: $puts puts, the leader SIGKILLed after the first quarter is acknowledged)"
say spectap record etcd --scenario leader-kill --seed 1 --puts "$puts" -o "$out/etcd.spt"
t0=$(now)
"$spectap" record etcd --scenario leader-kill --seed 1 --puts "$puts" -o "$out/etcd.spt" --json >"$out/etcd.record.json" \
	2>"$out/etcd.record.log" || { cat "$out/etcd.record.log" >&2; exit 1; }
t1=$(now)
jq -r '"recorded \(.events) events (\(.lost) lost; \(.sends) messages sent, \(.receives) received, \(.unpaired_receives) receives unpaired) of \(.scenario) on 3 members;"
	+ " \(.puts.acked // 0) puts acknowledged; end state agrees with etcdctl: \(.final_match)"' "$out/etcd.record.json"
summary "$(jq -r --arg s "$(secs "$t0" "$t1")" '"recorded   etcd \(.scenario) seed \(.seed): \(.events) events, \(.lost) lost, 3 members, \(.puts.acked // 0) puts acked (\($s) s)"' "$out/etcd.record.json"): $out/etcd.spt"
T_rec_etcd=$(secs "$t0" "$t1")

step "what the trace holds"
say spectap stat "$out/etcd.spt"
"$spectap" stat "$out/etcd.spt"
say spectap dump --kind "'Become*'" "$out/etcd.spt"
"$spectap" dump --kind 'Become*' "$out/etcd.spt" | cut -c1-160

step "through etcd-io/raft's trace dialect and back: export to its NDJSON, import, compare"
t0=$(now)
say spectap export --to etcd-ndjson "$out/etcd.spt" -o "$out/etcd.ndjson"
"$spectap" export --to etcd-ndjson "$out/etcd.spt" -o "$out/etcd.ndjson"
say spectap import --from etcd-ndjson "$out/etcd.ndjson" -o "$out/etcd2.spt"
"$spectap" import --from etcd-ndjson "$out/etcd.ndjson" -o "$out/etcd2.spt"
# The dialect has no message ids and no Lamport clocks: compare what it carries. Steps whose
# post-state was never read (StepUnfinished: the member was killed first) it cannot hold: the
# export leaves them out and says how many.
strip='.event | select(.kind != "StepUnfinished") | {node, kind, state, args, msg: (.msg | if . then {dir, from, to, type, fields} else null end)}'
"$spectap" dump --json "$out/etcd.spt" | jq -S -c "$strip" >"$out/a.json"
"$spectap" dump --json "$out/etcd2.spt" | jq -S -c "$strip" >"$out/b.json"
n=$(wc -l <"$out/a.json" | tr -d ' ')
if cmp -s "$out/a.json" "$out/b.json"; then
	echo "round trip: the re-imported trace has the same $n events (nodes, kinds, states, messages; the unfinished steps left out)"
	summary "round trip etcd-io/raft's NDJSON dialect, export and import: the same $n events"
else
	echo "round trip FAILED: $out/etcd2.spt differs from $out/etcd.spt (see $out/a.json, $out/b.json)" >&2
	exit 1
fi
z3=$(zstd -3 -c "$out/etcd.ndjson" | wc -c)
echo "size: $(wc -c <"$out/etcd.spt") bytes as .spt, $(wc -c <"$out/etcd.ndjson") as NDJSON, $z3 as zstd -3 NDJSON"
rm -f "$out/a.json" "$out/b.json"
t1=$(now)
T_trip=$(secs "$t0" "$t1")

step "check every step of the capture against the bundled spec ($S/EtcdRaft.tla)"
# --allow-empty: a short run need not take every step the mapping knows (those are listed).
say spectap check --map "$S/EtcdBenchMap.tla" --spec "$S/EtcdRaft.tla" "$out/etcd.spt" --allow-empty
t0=$(now)
"$spectap" check --map "$S/EtcdBenchMap.tla" --spec "$S/EtcdRaft.tla" "$out/etcd.spt" --json --max-failures 3 --allow-empty \
	>"$out/etcd.check.json" ||
	{ jq -r '.error // .' "$out/etcd.check.json" >&2; exit 1; }
t1=$(now)
T_chk_etcd=$(secs "$t0" "$t1")
printf '%-26s %9s %9s %6s\n' action windows passed score
jq -r '.actions | to_entries[] | "\(.key) \(.value.windows) \(.value.passed) \(.value.score)"' "$out/etcd.check.json" |
	awk '{ printf "%-26s %9d %9d %6d\n", $1, $2, $3, $4 }'
jq -r 'if (.unwindowed | length) > 0 then "  no windows in this run: \(.unwindowed | join(", "))" else empty end' "$out/etcd.check.json"
jq -r '.actions | to_entries[] | .key as $a | .value.failures[]? | "  \($a) window \(.window_id) (node \(.actor), events \(.events[0])..\(.events[1])) differs in \(.differs | join(", "))"' "$out/etcd.check.json"
summary "$(jq -r --arg s "$T_chk_etcd" --arg spec "$S/EtcdRaft.tla" '([.actions[].windows] | add) as $w | ([.actions[].passed] | add) as $p
	| "checked    etcd against \($spec): \(.actions | length) actions, \($p)/\($w) windows passed, score \(.score) (\($s) s)"' "$out/etcd.check.json")"

step "record a real 3-server ZooKeeper ensemble (Debian's jar, spectap's JVMTI agent) and check it"
t0=$(now)
BUILD="$build" sh scripts/demo_zk.sh "$out/zk"
t1=$(now)
T_zk=$(secs "$t0" "$t1")
cat "$out/zk/summary" >>"$out/summary"

step "record a real 3-server NATS JetStream cluster: a system described as data only (systems/nats)"
N=systems/nats
say spectap record nats --scenario leader-kill --seed 1 -o "$out/nats.spt"
t0=$(now)
"$spectap" record nats --scenario leader-kill --seed 1 -o "$out/nats.spt" --json >"$out/nats.record.json" \
	2>"$out/nats.record.log" || { cat "$out/nats.record.log" >&2; exit 1; }
jq -r '"recorded \(.events) events (\(.lost) lost; \(.sends) messages sent, \(.receives) received, \(.unpaired_receives) receives unpaired) of \(.scenario) on \(.nodes) servers;"
	+ " \(.load.acked) of \(.load.ops) stream creations acknowledged; the leader every live server reports is the trace'"'"'s: \(.final_match)"' "$out/nats.record.json"
say spectap check --map "$N/spec/NatsMap.tla" --spec "$N/spec/NatsRaft.tla" "$out/nats.spt"
"$spectap" check --map "$N/spec/NatsMap.tla" --spec "$N/spec/NatsRaft.tla" "$out/nats.spt" --json --max-failures 3 \
	>"$out/nats.check.json" || { jq -r '.error // .' "$out/nats.check.json" >&2; exit 1; }
printf '%-28s %9s %9s %6s\n' action windows passed score
jq -r '.actions | to_entries[] | "\(.key) \(.value.windows) \(.value.passed) \(.value.score)"' "$out/nats.check.json" |
	awk '{ printf "%-28s %9d %9d %6d\n", $1, $2, $3, $4 }'
say spectap export --to sysmobench "$out/nats.spt" -o "$out/nats.sysmobench.ndjson"
"$spectap" export --to sysmobench "$out/nats.spt" -o "$out/nats.sysmobench.ndjson"
t1=$(now)
T_nats=$(secs "$t0" "$t1")
summary "$(jq -r --arg s "$T_nats" '"recorded   nats \(.scenario) seed \(.seed) (no C: systems/nats is data): \(.events) events, \(.lost) lost, \(.nodes) servers (\($s) s with the checks)"' "$out/nats.record.json"): $out/nats.spt"
summary "$(jq -r '([.actions[].windows] | add) as $w | ([.actions[].passed] | add) as $p
	| "checked    nats against systems/nats/spec/NatsRaft.tla: \(.actions | length) actions, \($p)/\($w) windows passed, score \(.score)"' "$out/nats.check.json")"

step "record etcd again, from its description alone (systems/etcd/system.yaml and Events.tla: no C)"
say spectap record etcd --described --scenario steady-writes --seed 1 -o "$out/etcd-described.spt"
t0=$(now)
"$spectap" record etcd --described --scenario steady-writes --seed 1 -o "$out/etcd-described.spt" --json \
	>"$out/etcd-described.record.json" 2>"$out/etcd-described.record.log" ||
	{ cat "$out/etcd-described.record.log" >&2; exit 1; }
"$spectap" check --map "$S/EtcdBenchMap.tla" --spec "$S/EtcdRaft.tla" "$out/etcd-described.spt" --json --max-failures 3 \
	--allow-empty >"$out/etcd-described.check.json" || { jq -r '.error // .' "$out/etcd-described.check.json" >&2; exit 1; }
t1=$(now)
T_desc=$(secs "$t0" "$t1")
jq -r '"recorded \(.events) events (\(.lost) lost; \(.sends) messages sent, \(.receives) received, \(.unpaired_receives) receives unpaired) of \(.scenario) on \(.nodes) members; \(.load.acked) of \(.load.ops) puts acknowledged"' \
	"$out/etcd-described.record.json"
summary "$(jq -r --arg s "$T_desc" '"recorded   etcd \(.scenario) from systems/etcd/system.yaml (no C): \(.events) events, \(.lost) lost (\($s) s with the check)"' "$out/etcd-described.record.json"): $out/etcd-described.spt"
summary "$(jq -r '([.actions[].windows] | add) as $w | ([.actions[].passed] | add) as $p
	| "checked    etcd (described) against EtcdRaft.tla: \(.actions | length) actions, \($p)/\($w) windows passed, score \(.score)"' "$out/etcd-described.check.json")"

T1=$(now)
printf '\n== summary (files in %s/)\n' "$out"
cat "$out/summary"
echo "times      etcd record $T_rec_etcd s, round trip $T_trip s, etcd check $T_chk_etcd s, ZooKeeper record and checks $T_zk s, NATS record and check $T_nats s, etcd from its description $T_desc s; total $(secs "$T0" "$T1") s"
