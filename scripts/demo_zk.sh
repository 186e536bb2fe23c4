#!/bin/sh
# The ZooKeeper part of make demo: record a seeded leader-restart on a real 3-server ensemble,
# check it against the faithful Fast Leader Election spec and the candidate specs that make the
# classic mistakes, print one table and the first diagnosis of each failing spec, and write the
# canonical windows and a SysMoBench-dialect NDJSON of the trace.
#	BUILD=build sh scripts/demo_zk.sh OUT_DIR
set -eu
build=${BUILD:-build}
spectap="$build/spectap"
out=${1:?usage: demo_zk.sh OUT_DIR}
S=systems/zookeeper/spec
MAP=$S/ZkBenchMap.tla
ACTIONS="Notification HandleNotification BecomeLeader"
mkdir -p "$out"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "\$ spectap record zookeeper --scenario leader-restart --seed 1 -o $out/zk.spt"
t0=$(now)
"$spectap" record zookeeper --scenario leader-restart --seed 1 -o "$out/zk.spt" -f --json >"$out/zk.record.json" \
	2>"$out/zk.record.log" || { cat "$out/zk.record.log" >&2; exit 1; }
t1=$(now)
jq -r '"recorded \(.events) events (\(.lost) lost) of \(.scenario); leader \(.leader // "?")"' "$out/zk.record.json"

echo
echo "\$ spectap windows --map $MAP --spec $S/ZkFle.tla $out/zk.spt -o $out/windows"
"$spectap" windows --map "$MAP" --spec "$S/ZkFle.tla" "$out/zk.spt" -o "$out/windows" --force | tail -n 1
"$spectap" export --to sysmobench "$out/zk.spt" -o "$out/zk.sysmobench.ndjson" --force 2>/dev/null
echo "SysMoBench ZooKeeper dialect (state added): $out/zk.sysmobench.ndjson"

# Every spec against the same trace, through the same mapping (Spec stands for --spec).
specs="faithful=$S/ZkFle.tla"
for d in "$S"/candidates/*/; do
	[ -f "$d/ZkFle.tla" ] && specs="$specs $(basename "$d")=$d/ZkFle.tla"
done
t2=$(now)
for kv in $specs; do
	name=${kv%%=*}
	"$spectap" check --map "$MAP" --spec "${kv#*=}" "$out/zk.spt" --json --max-failures 1 --allow-empty >"$out/check-$name.json"
done
t3=$(now)

echo
echo "Transition Validation of the capture, per spec: windows passed / windows of each benchmark"
echo "action; code steps = the finer actions of the code (every other event); score = SysMoBench's"
echo "(mean over the benchmark actions of 1 when all their windows pass); verdict: every window"
printf '%-16s' spec
for a in $ACTIONS; do printf ' %19s' "$a"; done
printf ' %11s %6s %8s\n' "code steps" score verdict
for kv in $specs; do
	name=${kv%%=*}
	jq -r --arg name "$name" --arg acts "$ACTIONS" '
		($acts | split(" ")) as $bench | .actions as $a
		| [$bench[] | select($a[.] != null and $a[.].windows > 0) | if $a[.].passed == $a[.].windows then 1 else 0 end] as $s
		| [$a | to_entries[] | select(.key as $k | $bench | index($k) | not) | .value] as $other
		| "\($name)|" + ([$bench[] | if $a[.] then "\($a[.].passed)/\($a[.].windows)" else "-" end] | join("|"))
		  + "|\($other | map(.passed) | add // 0)/\($other | map(.windows) | add // 0)"
		  + "|\(if ($s | length) > 0 then ($s | add) / ($s | length) else 0 end)"
		  + "|\(if ([$a[] | .windows - .passed] | add) == 0 then "PASS" else "FAIL" end)"' "$out/check-$name.json" |
		awk -F'|' '{ printf "%-16s %19s %19s %19s %11s %6.2f %8s\n", $1, $2, $3, $4, $5, $6, $7 }'
done
echo "(the three benchmark actions are coarse: a send, a receipt, a leader; the mistakes show in the"
echo "steps that change recvset, logicalclock and the proposal, which the code steps check)"

echo
for kv in $specs; do
	name=${kv%%=*}
	jq -r --arg name "$name" '
		# A long value is shown around where expected and reached first differ.
		def at($x; $y): ([$x, $y] | map(length) | min) as $n
			| ([range(0; $n) | select($x[.:. + 1] != $y[.:. + 1])] | first // $n) as $i
			| ([$i - 40, 0] | max) as $from
			| (if $from > 0 then "..." else "" end) + $x[$from:$from + 100] + (if ($x | length) > $from + 100 then "..." else "" end);
		# The earliest failing window, preferring one whose values are not all empty (a
		# fresh server'"'"'s empty recvset says less than a vote put).
		[.actions | to_entries[] | .key as $k | .value.failures[]? | . + {action: $k}] | sort_by(.window_id)
		| (map(select(.closest.vars // {} | tostring | test("\\["))) + .) | first
		| select(. != null)
		| "\($name): first diagnosis: action \(.action), window \(.window_id), node \(.actor), events \(.events[0])..\(.events[1])"
		  + (if (.differs | length) > 0 then ", variables that differ: \(.differs | join(", "))" else ", the action is not enabled" end)
		  + ([.closest.vars // {} | to_entries[] | .value as $v
		      | "\n    \(.key) expected \(at($v.expected_tla; $v.reached_tla))\n    \(" " * (.key | length)) reached  \(at($v.reached_tla; $v.expected_tla))"]
		     | first // "")' \
		"$out/check-$name.json"
done

echo
echo "times: ensemble start + scenario + capture drain $(secs "$t0" "$t1") s (record), check of $(echo "$specs" | wc -w) specs $(secs "$t2" "$t3") s"

# For make demo's summary: what was recorded and what the checks told apart.
fails=0
for kv in $specs; do
	name=${kv%%=*}
	[ "$name" = faithful ] && continue
	jq -e '[.actions[] | .windows - .passed] | add > 0' "$out/check-$name.json" >/dev/null && fails=$((fails + 1))
done
faithful=$(jq -r 'if ([.actions[] | .windows - .passed] | add) == 0 then "every window passes" else "FAILS" end' "$out/check-faithful.json")
{
	jq -r --arg s "$(secs "$t0" "$t1")" --arg f "$out/zk.spt" '"recorded   zookeeper \(.scenario) seed \(.seed): \(.events) events, \(.lost) lost, 3 servers (\($s) s): \($f)"' "$out/zk.record.json"
	echo "checked    zookeeper against $S/ZkFle.tla: $faithful; $fails of $(($(echo "$specs" | wc -w) - 1)) wrong candidates told apart ($(secs "$t2" "$t3") s)"
} >"$out/summary"
echo "windows per action: $out/windows/ (canonical Transition Validation windows, one NDJSON per action)"
