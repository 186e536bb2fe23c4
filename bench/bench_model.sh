#!/bin/sh
# The breadth-first engine (issue 17), on inputs nobody wrote for spectap, passed by path:
#   1. etcd-io/raft's trace validation (ETCD_RAFT_TLA: a checkout's tla/ directory) of its
#      4,888-line example (CORPUS, default ../shared's copy): as it is, with line 2444's term
#      changed from 2 to 3 (rejected there), and with line 2444 deleted (accepted);
#   2. model checking three models of tlaplus/Examples (EXAMPLES: a checkout) with one and two
#      workers: distinct states per second and peak memory per distinct state, beside the
#      runtime TLC recorded in the model's manifest.
# Each part prints one line saying why it is skipped when its input is missing.
#	BUILD=build ETCD_RAFT_TLA=... EXAMPLES=... sh bench/bench_model.sh
set -eu
build=${BUILD:-build}
spectap=$(realpath "$build/spectap")
corpus=${CORPUS:-../shared/corpora/etcd-raft-example/example.ndjson}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run DIR BIN ARGS...: "seconds peak_KB exit_status" of one run in DIR, its output in $tmp/out
run() {
	dir=$1
	shift
	rc=0
	(cd "$dir" && /usr/bin/time -f "%e %M" -o "$tmp/time" "$@") >"$tmp/out" 2>"$tmp/err" || rc=$?
	echo "$(cat "$tmp/time" | tail -1) $rc"
}
echo "bench_model: $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"

echo "1. etcd-io/raft's Traceetcdraft.tla on its example log"
if [ -z "${ETCD_RAFT_TLA:-}" ] || [ ! -f "${ETCD_RAFT_TLA:-}/Traceetcdraft.tla" ]; then
	echo "  (skipped: set ETCD_RAFT_TLA to a checkout's tla/ directory)"
elif [ ! -f "$corpus" ]; then
	echo "  (skipped: no corpus at $corpus)"
else
	corpus=$(realpath "$corpus")
	cp "$corpus" "$tmp/asis.ndjson"
	sed '2444s/"state":{"term":2,/"state":{"term":3,/' "$corpus" >"$tmp/term3.ndjson"
	sed '2444d' "$corpus" >"$tmp/del2444.ndjson"
	printf '  %-28s %9s %9s  %s\n' log seconds "peak MB" verdict
	for log in asis term3 del2444; do
		r=$(JSON=$tmp/$log.ndjson run "$ETCD_RAFT_TLA" "$spectap" check --trace-spec Traceetcdraft.tla \
			--cfg Traceetcdraft.cfg --json --quiet)
		v=$(jq -r '"\(.trace_spec.verdict) at line \(.trace_spec.line) of \(.trace_spec.log_length); \(.generated) generated, \(.distinct) distinct"' "$tmp/out" 2>/dev/null || echo "error: $(head -c 200 "$tmp/err")")
		echo "$log $r" | awk -v v="$v" '{ printf "  %-28s %9.2f %9.1f  %s\n", $1, $2, $3 / 1024, v }'
	done
fi

echo "2. model checking, tlaplus/Examples"
if [ -z "${EXAMPLES:-}" ] || [ ! -d "${EXAMPLES:-}/specifications" ]; then
	echo "  (skipped: set EXAMPLES to a checkout of github.com/tlaplus/Examples)"
else
	printf '  %-40s %8s %9s %7s %12s %9s %9s\n' model distinct "TLC (s)" workers "distinct/s" "peak MB" "B/state"
	for m in TeachingConcurrency/SimpleRegular SlushProtocol/SlushSmall Bakery-Boulangerie/MCBakery; do
		dir=$EXAMPLES/specifications/$(dirname "$m")
		name=$(basename "$m")
		tla=$name.tla
		[ -f "$dir/$tla" ] || tla=$(jq -r --arg c "$name.cfg" '.modules[] | select(any(.models[]; .path | endswith($c))) | .path' \
			"$dir/manifest.json" | head -1 | xargs basename)
		tlc=$(jq -r --arg c "$name.cfg" '.modules[].models[] | select(.path | endswith($c)) | .runtime' "$dir/manifest.json" |
			head -1 | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }')
		for w in 1 2; do
			r=$(run "$dir" "$spectap" check --model "$tla" --cfg "$name.cfg" --workers $w --json --quiet)
			d=$(jq -r .distinct "$tmp/out" 2>/dev/null || echo 0)
			echo "$m $d $tlc $w $r" | awk '{ printf "  %-40s %8d %9s %7d %12.0f %9.1f %9.0f\n", $1, $2, $3, $4, $2 / $5, $6 / 1024, $6 * 1024 / ($2 ? $2 : 1) }'
		done
	done
fi
