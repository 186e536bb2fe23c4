#!/bin/sh
# Replay checker figures: windows per second on one core for a Raft spec, peak memory for 10,000
# windows, and the time to parse and resolve a 900-line spec.
#	BUILD=build sh bench/bench_check.sh
set -eu
build=${BUILD:-build}
spectap="$build/spectap"
spec_dir=tests/replay/raft
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "bench_check: one core, $(nproc) CPUs on the machine"
if [ -d "$spec_dir/windows" ]; then
	for w in "$spec_dir"/windows/*.ndjson; do
		action=$(basename "$w" .ndjson)
		n=$(wc -l <"$w")
		[ "$n" -gt 0 ] || continue
		# Repeat the action's windows up to 10,000: every one is checked in full each time.
		reps=$(((10000 + n - 1) / n))
		i=0
		: >"$tmp/w.ndjson"
		while [ "$i" -lt "$reps" ]; do cat "$w" >>"$tmp/w.ndjson"; i=$((i + 1)); done
		head -n 10000 "$tmp/w.ndjson" >"$tmp/w10k.ndjson"
		taskset -c 0 "$spectap" check --spec "$spec_dir/Raft.tla" --windows "$tmp/w10k.ndjson" \
			--action "$action" --json >"$tmp/out.json" || { echo "  $action: check failed" >&2; continue; }
		sed -n 's/.*"windows":\([0-9]*\),"passed":\([0-9]*\).*"seconds":\([0-9.]*\),.*"peak_rss_kb":\([0-9]*\).*/\1 \2 \3 \4/p' "$tmp/out.json" |
			awk -v a="$action" '{ printf "  %-28s %6d windows  %6d passed  %8.0f windows/s  peak RSS %6.1f MiB\n", a, $1, $2, ($3 > 0 ? $1 / $3 : 0), $4 / 1024 }'
	done
else
	echo "  (no $spec_dir/windows: windows/s not measured)"
fi

# A 900-line spec: parse, resolve and check one trivial window, timed end to end (process start included).
{
	echo "---- MODULE Big ----"
	echo "EXTENDS Naturals, Sequences, FiniteSets"
	echo "VARIABLE x"
	i=0
	while [ "$i" -lt 890 ]; do
		echo "D$i(a) == IF a > $i THEN [f |-> a, g |-> {a, $i}, h |-> <<a, $i>>] ELSE [f |-> $i, g |-> {}, h |-> <<>>]"
		i=$((i + 1))
	done
	echo "Step == x' = D889(x).f"
	echo "Init == x = 0"
	echo "===="
} >"$tmp/Big.tla"
echo '{"pre_state":{"x":1},"post_state":{"x":889}}' >"$tmp/big.ndjson"
lines=$(wc -l <"$tmp/Big.tla")
best=999
for r in 1 2 3 4 5; do
	s=$(date +%s%N)
	"$spectap" check --spec "$tmp/Big.tla" --windows "$tmp/big.ndjson" --action Step --json >/dev/null
	e=$(date +%s%N)
	ms=$(((e - s) / 1000000))
	[ "$ms" -lt "$best" ] && best=$ms
done
echo "  parse + resolve + check of a $lines-line spec: $best ms (best of 5, process start included; target < 100 ms)"
