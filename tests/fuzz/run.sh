#!/bin/sh
# Runs every fuzz target on each of its seeds whole, then for $1 seconds from its seed corpus
# (copied, so the checked-in corpus stays as it is). Any crash, leak or sanitizer report fails
# the run.
set -u
seconds=${1:-20}
build=${BUILD:-build}
out="$build/test-results"
mkdir -p "$out"
pass=0
fail=0
for bin in "$build"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	corpus_src="tests/fuzz/corpus/${name#fuzz_}"
	work=$(mktemp -d)
	[ -d "$corpus_src" ] && cp -r "$corpus_src"/. "$work"/
	log="$out/$name.log"
	# Every seed whole first (fuzzing below reads the corpus cut at -max_len: a seed of a deep or
	# long input, such as the crash it was added for, would not be what it says).
	if [ -d "$corpus_src" ] && ! "$bin" -timeout=60 -rss_limit_mb=4096 "$corpus_src"/* >"$log.seeds" 2>&1; then
		echo "  $name: a seed FAILED whole (see $log.seeds)"
		tail -n 30 "$log.seeds"
		fail=$((fail + 1))
		rm -rf "$work"
		continue
	fi
	if (cd "$work" && "$OLDPWD/$bin" -max_total_time="$seconds" -max_len=16384 \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 . >"$OLDPWD/$log" 2>&1); then
		runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
		echo "  $name: ${runs:-?} runs in ${seconds}s, no crash"
		pass=$((pass + 1))
	else
		echo "  $name: FAILED (see $log; the crashing input is in $work)"
		tail -n 30 "$log"
		fail=$((fail + 1))
		continue
	fi
	rm -rf "$work"
done
echo "$pass $fail" >"$out/fuzz.count"
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
