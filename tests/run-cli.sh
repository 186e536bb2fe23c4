#!/bin/sh
# Runs every tests/cli/test_*.sh against $SPECTAP; records the counts for the summary.
set -u
build=${BUILD:-build}
out="$build/test-results"
mkdir -p "$out"
status=0
for t in tests/cli/test_*.sh; do
	name=$(basename "$t" .sh)
	RESULTS="$out/cli_$name.count" sh "$t" || status=1
	[ -f "$out/cli_$name.count" ] || { echo "0 1" >"$out/cli_$name.count"; echo "$name: crashed"; }
done
exit $status
