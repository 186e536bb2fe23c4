#!/bin/sh
# What the fuzz targets' seed corpora buy (tests/fuzz/corpus): each target runs FUZZ_SECONDS
# (default 60) from an empty corpus, then as long from its seeds; printed per run are the
# executions and the coverage libFuzzer reports at the end (cov: edges, ft: features). A
# markdown table, for bench/RESULTS.md.
set -u
seconds=${FUZZ_SECONDS:-60}
build=${BUILD:-build}
# run BIN DIR: fuzzes in DIR for $seconds; prints "execs cov ft".
run() {
	log=$(mktemp)
	(cd "$2" && "$1" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 . >"$log" 2>&1)
	status=$?
	execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
	last=$(grep -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	[ $status = 0 ] || { echo "$(basename "$1"): FAILED (exit $status), its log follows" >&2; tail -n 20 "$log" >&2; }
	rm -f "$log"
	echo "${execs:-?} ${cov:-?} ${ft:-?}"
}
echo "| target | seeds | empty: execs | empty: cov / ft | seeded: execs | seeded: cov / ft |"
echo "|---|---|---|---|---|---|"
for bin in "$build"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	seeds="tests/fuzz/corpus/${name#fuzz_}"
	bin=$(cd "$(dirname "$bin")" && pwd)/$name
	empty=$(mktemp -d)
	set -- $(run "$bin" "$empty")
	e_execs=$1 e_cov=$2 e_ft=$3
	rm -rf "$empty"
	seeded=$(mktemp -d)
	n=0
	if [ -d "$seeds" ]; then
		cp -r "$seeds"/. "$seeded"/
		n=$(ls "$seeds" | wc -l)
	fi
	set -- $(run "$bin" "$seeded")
	rm -rf "$seeded"
	echo "| $name | $n | $e_execs | $e_cov / $e_ft | $1 | $2 / $3 |"
done
