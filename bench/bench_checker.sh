#!/bin/sh
# The checker at real sizes (issue 16):
#   1. the scaling curve: one bounded etcd recording (leader-kill, BENCH_ETCD_PUTS puts, default
#      4000: about 60,000 events), cut at 1k, 2k, 4k, ... events, each cut checked with the
#      bundled mapping and spec: time and peak memory, per event;
#   2. window files of the Raft-like spec: windows/s on one core and with --jobs 2;
#   3. the ZooKeeper specs (the faithful one and the six candidates, both mappings) and the
#      RedisRaft spec on the bundled traces;
#   4. one window searching an index over a long log: \E i \in 1..Len(log) : log' = [log EXCEPT
#      ![i] = t], the match at the last index, logs of 1,000 and 10,000 entries.
# SPECTAP_BASE=path/to/another/spectap prints its figures beside (the same run, the same inputs),
# with the specs of SPECTAP_BASE_DIR (its source tree; default this one) and, for the etcd curve,
# up to BENCH_BASE_MAX_EVENTS events (default 8000: an engine that is not linear takes hours).
# The etcd part needs root and /usr/bin/etcd (BENCH_ETCD_TRACE=T.spt uses a recorded trace instead).
#	BUILD=build sh bench/bench_checker.sh
set -eu
build=${BUILD:-build}
spectap=$(realpath "$build/spectap")
base=${SPECTAP_BASE:-}
base_dir=${SPECTAP_BASE_DIR:-.}
base_max=${BENCH_BASE_MAX_EVENTS:-8000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
E=systems/etcd/spec

# run BIN ARGS...: seconds and peak KB of one run, "s kb" ("fail" on an error)
run() {
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || { echo fail; return; }
	cat "$tmp/time"
}
echo "bench_checker: $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"

echo "1. etcd scaling curve (EtcdBenchMap.tla, EtcdRaft.tla)"
trace=${BENCH_ETCD_TRACE:-}
if [ -z "$trace" ] && [ "$(id -u)" = 0 ] && [ -x /usr/bin/etcd ]; then
	"$spectap" record etcd --scenario leader-kill --seed 1 --puts "${BENCH_ETCD_PUTS:-4000}" -o "$tmp/lk.spt" >/dev/null 2>&1 &&
		trace=$tmp/lk.spt
fi
if [ -n "$trace" ]; then
	"$spectap" export --to json "$trace" -o "$tmp/lk.json" 2>/dev/null
	total=$(($(wc -l <"$tmp/lk.json") - 1))
	printf '  %8s %8s %9s %9s %10s %9s' events windows seconds "peak MB" "us/event" "KB/event"
	[ -n "$base" ] && printf '   | base: %7s %9s' seconds "peak MB"
	echo
	n=1000
	while :; do
		[ "$n" -gt "$total" ] && n=$total
		head -n $((n + 1)) "$tmp/lk.json" >"$tmp/cut.json"
		"$spectap" import --from json "$tmp/cut.json" -o "$tmp/cut.spt" --force >/dev/null
		# the base reads the traces it writes (another format version, maybe): its own import
		[ -n "$base" ] && "$base" import --from json "$tmp/cut.json" -o "$tmp/cut.base.spt" --force >/dev/null
		r=$(run "$spectap" check --map $E/EtcdBenchMap.tla --spec $E/EtcdRaft.tla "$tmp/cut.spt" --json --allow-empty)
		w=$(jq '[.actions[].windows] | add' "$tmp/out" 2>/dev/null || echo 0)
		echo "$n $w $r" | awk '{ printf "  %8d %8d %9.2f %9.1f %10.1f %9.2f", $1, $2, $3, $4 / 1024, 1e6 * $3 / $1, $4 / $1 }'
		if [ -n "$base" ] && [ "$n" -le "$base_max" ]; then
			b=$(run "$base" check --map "$base_dir/$E/EtcdBenchMap.tla" --spec "$base_dir/$E/EtcdRaft.tla" "$tmp/cut.base.spt" --json --allow-empty)
			echo "$b" | awk '{ if ($1 == "fail") printf "   | base: failed"; else printf "   | base: %7.2f %9.1f", $1, $2 / 1024 }'
		fi
		echo
		[ "$n" -ge "$total" ] && break
		n=$((n * 2))
	done
else
	echo "  (no etcd trace: needs root and /usr/bin/etcd, or BENCH_ETCD_TRACE)"
fi

echo "2. window files, Raft-like spec (tests/replay/raft), 10,000 windows per action"
R=tests/replay/raft
for a in HandleRequestVoteRequest AppendEntries HandleAppendEntriesRequest; do
	: >"$tmp/w.ndjson"
	while [ "$(wc -l <"$tmp/w.ndjson")" -lt 10000 ]; do cat "$R/windows/$a.ndjson" >>"$tmp/w.ndjson"; done
	head -n 10000 "$tmp/w.ndjson" >"$tmp/w10k.ndjson"
	line="  $a"
	for j in 1 2; do
		r=$(run "$spectap" check --spec $R/Raft.tla --windows "$tmp/w10k.ndjson" --action "$a" --json --jobs $j)
		line="$line$(echo "$r" | awk -v j=$j '{ printf "  jobs %d: %7.0f windows/s", j, 10000 / $1 }')"
	done
	if [ -n "$base" ]; then
		r=$(run "$base" check --spec $R/Raft.tla --windows "$tmp/w10k.ndjson" --action "$a" --json)
		line="$line$(echo "$r" | awk '{ printf "  | base: %7.0f windows/s", 10000 / $1 }')"
	fi
	echo "$line"
done

# --jobs 2 against what two cores of this machine give at all: two --jobs 1 processes at once on
# the same file (a VM's two vCPUs are rarely two whole cores). Best of 3, the runs alternating.
echo "2b. 100,000 HandleAppendEntriesRequest windows: --jobs 1, --jobs 2, two --jobs 1 processes at once"
a=HandleAppendEntriesRequest
: >"$tmp/w.ndjson"
while [ "$(wc -l <"$tmp/w.ndjson")" -lt 10000 ]; do cat "$R/windows/$a.ndjson" >>"$tmp/w.ndjson"; done
head -n 10000 "$tmp/w.ndjson" >"$tmp/w10k.ndjson"
for i in 1 2 3 4 5 6 7 8 9 10; do cat "$tmp/w10k.ndjson"; done >"$tmp/w100k.ndjson"
rm -f "$tmp/w.ndjson" "$tmp/w10k.ndjson"
ck100k() { "$spectap" check --spec $R/Raft.tla --windows "$tmp/w100k.ndjson" --action $a --json "$@" >/dev/null; }
secs() { s=$(date +%s%N); "$@"; echo $((($(date +%s%N) - s) / 1000000)); }
pair() { ck100k --jobs 1 & ck100k --jobs 1; wait; }
b1= b2= bp=
for rep in 1 2 3; do
	t=$(secs ck100k --jobs 1); [ -z "$b1" ] || [ "$t" -lt "$b1" ] && b1=$t
	t=$(secs ck100k --jobs 2); [ -z "$b2" ] || [ "$t" -lt "$b2" ] && b2=$t
	t=$(secs pair); [ -z "$bp" ] || [ "$t" -lt "$bp" ] && bp=$t
done
awk -v b1="$b1" -v b2="$b2" -v bp="$bp" 'BEGIN {
	printf "  jobs 1: %d ms (%.0f windows/s)  jobs 2: %d ms (%.0f windows/s, %.2fx)\n", b1, 1e8 / b1, b2, 1e8 / b2, b1 / b2
	printf "  two processes at once: %d ms for 200,000 windows (%.0f windows/s, %.2fx): jobs 2 reaches %.0f%% of it\n",
		bp, 2e8 / bp, 2 * b1 / bp, 100 * (2e8 / bp > 0 ? (1e8 / b2) / (2e8 / bp) : 0) }'

echo "3. ZooKeeper (7 specs x 2 mappings) and RedisRaft on the bundled traces"
Z=systems/zookeeper/spec
"$spectap" import --from json tests/data/zk/election.ndjson -o "$tmp/zk.spt" >/dev/null
"$spectap" import --from json tests/data/rr/leader-kill.ndjson -o "$tmp/rr.spt" >/dev/null
if [ -n "$base" ]; then
	"$base" import --from json tests/data/zk/election.ndjson -o "$tmp/zk.base.spt" >/dev/null
	"$base" import --from json tests/data/rr/leader-kill.ndjson -o "$tmp/rr.base.spt" >/dev/null
fi
zk_all() { # BIN TRACE [OPTION...]: seconds for all 14 checks
	bin=$1 zt=$2
	shift 2
	s=$(date +%s%N)
	for spec in $Z/ZkFle.tla $Z/candidates/*/ZkFle.tla; do
		for m in ZkFleMap ZkBenchMap; do
			"$bin" check --spec "$spec" --cfg $Z/ZkFle.cfg --map $Z/$m.tla "$zt" --json "$@" >/dev/null || true
		done
	done
	e=$(date +%s%N)
	awk -v d=$((e - s)) 'BEGIN { printf "%.2f", d / 1e9 }'
}
line="  ZooKeeper: $(zk_all "$spectap" "$tmp/zk.spt" --allow-empty) s" # one short trace: not every mapped action
[ -n "$base" ] && line="$line  | base: $(zk_all "$base" "$tmp/zk.base.spt" --allow-empty) s"
echo "$line"
rr=$(run "$spectap" check --spec systems/redisraft/spec/RedisRaft.tla --map systems/redisraft/spec/RrBenchMap.tla "$tmp/rr.spt" --json --allow-empty)
line="  RedisRaft ($(grep -c . tests/data/rr/leader-kill.ndjson) events): $(echo "$rr" | awk '{ printf "%.2f s, %.1f MB", $1, $2 / 1024 }')"
if [ -n "$base" ]; then
	rr=$(run "$base" check --spec systems/redisraft/spec/RedisRaft.tla --map systems/redisraft/spec/RrBenchMap.tla "$tmp/rr.base.spt" --json --allow-empty)
	line="$line  | base: $(echo "$rr" | awk '{ printf "%.2f s, %.1f MB", $1, $2 / 1024 }')"
fi
echo "$line"

echo "4. one window searching an index over a long log"
cat >"$tmp/Search.tla" <<'EOF'
---- MODULE Search ----
EXTENDS Naturals, Sequences
VARIABLE log
Init == log = <<>>
Put(t) == \E i \in 1..Len(log) : log' = [log EXCEPT ![i] = t]
Next == \E t \in {7} : Put(t)
====
EOF
for n in 1000 10000; do
	awk -v n=$n 'BEGIN { printf "{\"pre_state\":{\"log\":["; for (i = 1; i <= n; i++) printf "%s1", (i > 1 ? "," : "");
		printf "]},\"post_state\":{\"log\":["; for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? "," : ""), (i == n ? 7 : 1); print "]}}" }' >"$tmp/search.ndjson"
	r=$(run "$spectap" check --spec "$tmp/Search.tla" --windows "$tmp/search.ndjson" --action Put --json)
	line="  $n entries: $(echo "$r" | awk '{ printf "%.3f s, %.1f MB", $1, $2 / 1024 }')"
	if [ -n "$base" ]; then
		r=$(run "$base" check --spec "$tmp/Search.tla" --windows "$tmp/search.ndjson" --action Put --json)
		line="$line  | base: $(echo "$r" | awk '{ if ($1 == "fail") print "failed"; else printf "%.3f s, %.1f MB", $1, $2 / 1024 }')"
	fi
	echo "$line"
done
