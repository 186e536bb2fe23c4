#!/bin/sh
# Runs every unit test binary given; records "passed failed" per binary for the summary.
set -u
out="${BUILD:-build}/test-results"
mkdir -p "$out"
status=0
for t in "$@"; do
	name=$(basename "$t")
	log="$out/$name.log"
	if "$t" >"$log" 2>&1; then :; else status=1; fi
	cat "$log"
	line=$(grep -E '^[a-z_]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed/\1/')
	[ -n "$line" ] || { p=0; f=1; echo "$name: crashed or printed no result"; status=1; }
	echo "$p $f" >"$out/$name.count"
done
exit $status
