#!/bin/sh
# NATS described as data (systems/nats): the cost of capture on JetStream's meta group. The
# throughput scenario (1,000 stream creations, one at a time) with and without the probes, in
# alternating rounds: operations per second, p50/p99 latency, events per second of the capture,
# losses. Needs root and Debian's nats-server.
#	BUILD=build ROUNDS=3 sh bench/bench_nats.sh
set -eu
build=${BUILD:-build}
rounds=${ROUNDS:-3}
spectap=$(realpath "$build/spectap")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$(id -u)" != 0 ] || [ ! -x /usr/sbin/nats-server ]; then
	echo "bench_nats: SKIP (needs root and /usr/sbin/nats-server)"
	exit 0
fi
echo "bench_nats: $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC'); $rounds rounds of 1,000 operations"
off=""
on=""
i=1
while [ $i -le "$rounds" ]; do
	"$spectap" record nats --scenario throughput --no-probes --seed $i --json >"$tmp/off.json" 2>/dev/null
	"$spectap" record nats --scenario throughput --seed $i -o "$tmp/on.spt" -f --json >"$tmp/on.json" 2>/dev/null
	a=$(jq .load.per_second "$tmp/off.json")
	b=$(jq .load.per_second "$tmp/on.json")
	echo "  round $i: off $a ops/s (p50 $(jq .load.p50_ms "$tmp/off.json") ms, p99 $(jq .load.p99_ms "$tmp/off.json") ms);" \
		"on $b ops/s (p50 $(jq .load.p50_ms "$tmp/on.json") ms, p99 $(jq .load.p99_ms "$tmp/on.json") ms)," \
		"$(jq .events "$tmp/on.json") events, $(jq .lost "$tmp/on.json") lost, $(jq .hits "$tmp/on.json") hits"
	off="$off $a"
	on="$on $b"
	i=$((i + 1))
done
echo "$off" | awk -v on="$on" '{ n = split(on, b, " "); s = 0; t = 0; for (i = 1; i <= NF; i++) { s += $i; t += b[i] }
	printf "  mean: off %.1f ops/s, on %.1f ops/s, ratio on/off %.3f\n", s / NF, t / n, (t / n) / (s / NF) }'
