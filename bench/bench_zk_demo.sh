#!/bin/sh
# The ZooKeeper demo's parts timed (issue 5): record a seeded leader-restart (ensemble start,
# scenario, capture drain: from the record's progress lines), then check the trace against the
# faithful spec through both mappings (windows per second). Needs root and Debian's zookeeper.
#	BUILD=build sh bench/bench_zk_demo.sh [RUNS]
set -eu
build=${BUILD:-build}
runs=${1:-3}
S=systems/zookeeper/spec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
i=1
while [ "$i" -le "$runs" ]; do
	t0=$(now)
	"$build/spectap" record zookeeper --scenario leader-restart --seed "$i" -o "$tmp/z$i.spt" 2>"$tmp/p$i" >/dev/null
	t1=$(now)
	up=$(sed -n 's/^spectap record: \[ *\([0-9.]*\)s\] [0-9]* ZooKeeper servers started.*/\1/p' "$tmp/p$i")
	stop=$(sed -n 's/^spectap record: \[ *\([0-9.]*\)s\] stopping the ensemble.*/\1/p' "$tmp/p$i")
	c0=$(now)
	w1=$("$build/spectap" check --spec $S/ZkFle.tla --map $S/ZkFleMap.tla "$tmp/z$i.spt" --json | jq '[.actions[].windows] | add')
	c1=$(now)
	w2=$("$build/spectap" check --spec $S/ZkFle.tla --map $S/ZkBenchMap.tla "$tmp/z$i.spt" --json | jq '[.actions[].windows] | add')
	c2=$(now)
	awk -v t0="$t0" -v t1="$t1" -v up="$up" -v stop="$stop" -v c0="$c0" -v c1="$c1" -v c2="$c2" \
		-v w1="$w1" -v w2="$w2" -v i="$i" 'BEGIN {
		total = t1 - t0
		printf "zk_demo run %d: record %.1f s = ensemble start %.1f s + scenario %.1f s + drain and close %.1f s; ", i, total, up, stop - up, total - stop
		printf "check %d fine windows in %.2f s (%.0f windows/s), %d benchmark windows in %.2f s (%.0f windows/s)\n", w1, c1 - c0, w1 / (c1 - c0), w2, c2 - c1, w2 / (c2 - c1) }'
	i=$((i + 1))
done
