#!/bin/sh
# Runs build/bench/bench_trace 3 times (1,000,000 events each, one core) and prints the median
# write and read throughput and the file size per event, against the targets; then
# build/bench/bench_etcd, the cost of capturing etcd (issue 6, about 2 minutes; needs root and
# /usr/bin/etcd, skipped with a message otherwise, or with BENCH_ETCD=0); then the ZooKeeper capture
# (issue 3): build/bench/bench_emit and build/bench/bench_zk_election (about 4 minutes; needs root
# and /usr/share/java/zookeeper.jar, skipped with a message otherwise, or with BENCH_ZK=0;
# BENCH_ZK_RUNS runs per configuration, default 10); then build/bench/bench_redisraft, the cost of
# capturing RedisRaft (issue 7, about 2 minutes; needs SPECTAP_REDISRAFT_MODULE, else skipped).
#	BUILD=build sh bench/run.sh [events]
set -eu
build=${BUILD:-build}
bin="$build/bench/bench_trace"
events=${1:-1000000}
runs=3
[ -x "$bin" ] || { echo "bench: $bin not built (make bench)" >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=1
while [ "$i" -le "$runs" ]; do
	"$bin" "$events" >>"$out" || { echo "bench: run $i failed" >&2; exit 1; }
	i=$((i + 1))
done

median() {
	grep "^$1 " "$out" | awk '{print $2}' | sort -n | sed -n "$(((runs + 1) / 2))p"
}
w=$(median write_events_per_s)
r=$(median read_events_per_s)
b=$(median bytes_per_event)
g=$(median gen_events_per_s)
c=$(median close_s)

verdict() { # value target
	awk -v v="$1" -v t="$2" 'BEGIN { print (v + 0 >= t + 0) ? "ok" : "BELOW TARGET" }'
}
echo "bench_trace: $events etcd-like events, median of $runs runs, one core"
printf '  write  %10.0f events/s  (target >= 500000: %s; encode + zstd + write, close %ss)\n' \
	"$w" "$(verdict "$w" 500000)" "$c"
printf '  read   %10.0f events/s  (target >= 1000000: %s; open + full decode)\n' \
	"$r" "$(verdict "$r" 1000000)"
printf '  size   %10.2f bytes/event\n' "$b"
printf '  (generating the events: %.0f events/s, not counted above)\n' "$g"

# Size on the real etcd corpus: .spt vs its NDJSON and vs zstd -3 of that NDJSON.
corpus=${SPECTAP_CORPUS:-../shared/corpora/etcd-raft-example/example.ndjson}
if [ -f "$corpus" ]; then
	tmp=$(mktemp -d)
	"$build/spectap" import --from etcd-ndjson "$corpus" -o "$tmp/c.spt" >/dev/null
	n=$("$build/spectap" stat --json "$tmp/c.spt" | sed 's/.*"events":\([0-9]*\).*/\1/')
	spt=$(wc -c <"$tmp/c.spt")
	raw=$(wc -c <"$corpus")
	z3=$(zstd -3 -c "$corpus" | wc -c)
	echo "etcd corpus: $n events"
	awk -v s="$spt" -v r="$raw" -v z="$z3" -v n="$n" 'BEGIN {
		printf "  .spt        %8d bytes  %6.2f bytes/event  (1/%.1f of the NDJSON; target <= 1/10)\n", s, s / n, r / s
		printf "  zstd -3     %8d bytes  %6.2f bytes/event  (.spt is %.0f%% of it; target <= 100%%)\n", z, z / n, 100 * s / z
		printf "  NDJSON      %8d bytes  %6.2f bytes/event\n", r, r / n }'
	rm -rf "$tmp"
fi

# The cost of capturing etcd with the probes (issue 6): put throughput off/on, ns per hit, events/s.
if [ "${BENCH_ETCD:-1}" = 0 ]; then
	echo "bench_etcd: skipped (BENCH_ETCD=0)"
elif [ "$(id -u)" != 0 ]; then
	echo "bench_etcd: skipped (needs root: eBPF uprobes)"
elif [ ! -x /usr/bin/etcd ]; then
	echo "bench_etcd: skipped (no /usr/bin/etcd: apt-get install etcd-server)"
else
	for b in bench/bench_etcd bench/hitloop tools/putload; do
		[ -x "$build/$b" ] || { echo "bench: $build/$b not built (make bench)" >&2; exit 1; }
	done
	"$build/bench/bench_etcd" || { echo "bench: bench_etcd failed" >&2; exit 1; }
	# The same at a fixed load, half what the cluster does unprobed (issue 21): latency on/off.
	"$build/bench/bench_etcd" --parts puts --rounds 3 --put-rate half ||
		{ echo "bench: bench_etcd --put-rate half failed" >&2; exit 1; }
fi

# The ZooKeeper capture (issue 3): spt_emit per record (nothing attached, USDT, LTTng), then
# election and re-election time with and without the JVMTI agent and a USDT collector.
if [ "${BENCH_ZK:-1}" = 0 ]; then
	echo "bench_zk: skipped (BENCH_ZK=0)"
elif [ "$(id -u)" != 0 ]; then
	echo "bench_zk: skipped (needs root: BPF, the LTTng session daemon)"
elif [ ! -f /usr/share/java/zookeeper.jar ]; then
	echo "bench_zk: skipped (no /usr/share/java/zookeeper.jar: apt-get install zookeeper)"
else
	for b in bench/bench_emit bench/bench_zk_election libspectap_zk_agent.so; do
		[ -e "$build/$b" ] || { echo "bench: $build/$b not built (make bench)" >&2; exit 1; }
	done
	# Other work on the machine moves these figures: say how busy it was.
	echo "bench_zk: load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
	"$build/bench/bench_emit" || { echo "bench: bench_emit failed" >&2; exit 1; }
	SPECTAP_ZK_AGENT="$build/libspectap_zk_agent.so" "$build/bench/bench_zk_election" \
		--runs "${BENCH_ZK_RUNS:-10}" || { echo "bench: bench_zk_election failed" >&2; exit 1; }
	# Events per election and bytes per event of real captures (spectap record zookeeper).
	tmp=$(mktemp -d)
	for seed in 1 2 3; do
		"$build/spectap" record zookeeper --scenario leader-kill --seed "$seed" -o "$tmp/lk$seed.spt" --json \
			>"$tmp/lk$seed.json" || { echo "bench: record zookeeper failed" >&2; rm -rf "$tmp"; exit 1; }
		jq -r --arg b "$(wc -c <"$tmp/lk$seed.spt")" \
			'"\(.events) \(.elections) \($b) \(.first_leader_ms)"' "$tmp/lk$seed.json" >>"$tmp/sizes"
	done
	awk '{ printf "bench_zk: record zookeeper leader-kill: %d events, %d elections, %.1f events/election, %.1f bytes/event in the trace (launch to leader %d ms)\n", $1, $2, $1 / $2, $3 / $1, $4 }' "$tmp/sizes"
	rm -rf "$tmp"
	# The demo's parts timed, and the faithful spec's check speed on real captures (issue 5).
	BUILD="$build" sh bench/bench_zk_demo.sh 3 || { echo "bench: bench_zk_demo failed" >&2; exit 1; }
	echo "bench_zk: load $(cut -d' ' -f1-3 /proc/loadavg) after"
fi

# What a uprobe hit costs by the site's first instruction (issues 6 and 7), about 1 minute.
if [ "$(id -u)" = 0 ]; then
	"$build/bench/bench_sites" --rounds 3 || { echo "bench: bench_sites failed" >&2; exit 1; }
else
	echo "bench_sites: skipped (needs root)"
fi

# The RedisRaft capture (issue 7): write throughput, latency and CPU per write with and without
# probes, on the module SPECTAP_REDISRAFT_MODULE names (RedisRaft is not packaged: a user's own
# build; skipped with a message without one, or with BENCH_RR=0).
if [ "${BENCH_RR:-1}" = 0 ]; then
	echo "bench_redisraft: skipped (BENCH_RR=0)"
elif [ -z "${SPECTAP_REDISRAFT_MODULE:-}" ] || [ ! -r "${SPECTAP_REDISRAFT_MODULE:-}" ] || [ "$(id -u)" != 0 ] ||
	! command -v redis-benchmark >/dev/null; then
	echo "bench_redisraft: skipped (needs root, redis-benchmark and SPECTAP_REDISRAFT_MODULE naming a redisraft.so built with -g)"
else
	echo "bench_redisraft: load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
	"$build/bench/bench_redisraft" --rounds "${BENCH_RR_ROUNDS:-5}" ||
		{ echo "bench: bench_redisraft failed" >&2; exit 1; }
	echo "bench_redisraft: load $(cut -d' ' -f1-3 /proc/loadavg) after"
fi
