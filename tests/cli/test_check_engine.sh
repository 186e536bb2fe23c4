#!/bin/sh
# The checker's engine is invisible to its verdicts: on every spec, mapping and trace of the
# repository, the cache of definition applications (--no-cache evaluates everything) and the
# threads (--jobs) change nothing in the report but its timings.
. tests/cli/lib.sh

strip='del(.peak_rss_kb) | .actions |= map_values(del(.seconds))'
same() { # DESCRIPTION COMMAND... : the JSON report with and without the cache, and with 3 jobs
	d=$1
	shift
	"$@" --json >"$T/a.json" 2>"$T/a.err"
	st_a=$?
	"$@" --json --no-cache >"$T/b.json" 2>"$T/b.err"
	st_b=$?
	check_eq "$d: exit status without the cache" "$st_a" "$st_b"
	if [ "$st_a" != 0 ]; then
		check_eq "$d: the same error without the cache" "$(jq -r .error "$T/a.json")" "$(jq -r .error "$T/b.json")"
		return
	fi
	check_eq "$d: report without the cache" "$(jq -cS "$strip" "$T/a.json")" "$(jq -cS "$strip" "$T/b.json")"
	check "$d: a report with windows" [ "$(jq '[.actions[].windows] | add // 0' "$T/a.json")" -gt 0 ]
	case "$*" in
	*--map*.spt*)
		"$@" --json --jobs 3 >"$T/c.json" 2>"$T/c.err"
		check_eq "$d: report with --jobs 3" "$(jq -cS "$strip" "$T/a.json")" "$(jq -cS "$strip" "$T/c.json")"
		;;
	esac
}

# Window files: the Raft-like spec and its mutants, every action.
R=tests/replay/raft
for w in "$R"/windows/*.ndjson; do
	act=$(basename "$w" .ndjson)
	for s in "$R/Raft.tla" "$R"/mutants/*.tla; do
		same "$(basename "$s" .tla) $act" "$SPECTAP" check --spec "$s" --cfg "$R/Raft.cfg" --windows "$w" --action "$act" --max-failures 100
	done
done
# A window file cut into parts (--jobs): the same report, failures in line order.
for i in 1 2 3 4 5 6 7 8 9 10; do cat "$R/windows/HandleRequestVoteRequest.ndjson"; done >"$T/many.ndjson"
check "the window file is large enough to be cut" [ "$(wc -c <"$T/many.ndjson")" -gt 65536 ]
for s in "$R/Raft.tla" "$R/mutants/RaftDroppedGuard.tla"; do
	"$SPECTAP" check --spec "$s" --cfg "$R/Raft.cfg" --windows "$T/many.ndjson" --action HandleRequestVoteRequest --json --max-failures 7 >"$T/j1.json"
	"$SPECTAP" check --spec "$s" --cfg "$R/Raft.cfg" --windows "$T/many.ndjson" --action HandleRequestVoteRequest --json --max-failures 7 --jobs 3 >"$T/j3.json"
	check_eq "$(basename "$s"): a window file in 3 parts" "$(jq -cS "$strip" "$T/j1.json")" "$(jq -cS "$strip" "$T/j3.json")"
done
check "a mutant fails some of the many windows" [ "$(jq '.actions[].failures | length' "$T/j1.json")" -gt 0 ]
# Read a block of 1 MB at a time (one part or three, or from a pipe): lines across blocks and
# parts, a line longer than a block (an extra field of 1.5 MB), the last one without its '\n'.
{
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "$T/many.ndjson"; done
	printf '{"padding":"'
	head -c 1500000 /dev/zero | tr '\0' x
	printf '",'
	head -n 1 "$R/windows/HandleRequestVoteRequest.ndjson" | tail -c +2
	cat "$T/many.ndjson"
	head -n 1 "$R/windows/HandleRequestVoteRequest.ndjson" | tr -d '\n'
} >"$T/blocks.ndjson"
check "the file is over 8 MB" [ "$(wc -c <"$T/blocks.ndjson")" -gt 8000000 ]
m="$R/mutants/RaftDroppedGuard.tla"
for how in "--jobs 1" "--jobs 3"; do
	"$SPECTAP" check --spec "$m" --cfg "$R/Raft.cfg" --windows "$T/blocks.ndjson" --action HandleRequestVoteRequest --json --max-failures 100000 $how >"$T/b.json"
	check_eq "blocks, $how: every window" "3902" "$(jq '.actions[].windows' "$T/b.json")"
	[ "$how" = "--jobs 1" ] && cp "$T/b.json" "$T/b1.json"
	check_eq "blocks, $how: the report of --jobs 1" "$(jq -cS "$strip" "$T/b1.json")" "$(jq -cS "$strip" "$T/b.json")"
done
"$SPECTAP" check --spec "$m" --cfg "$R/Raft.cfg" --windows - --action HandleRequestVoteRequest --json --max-failures 100000 --jobs 3 <"$T/blocks.ndjson" >"$T/b.json"
check_eq "blocks from a pipe: the same report" "$(jq -cS "$strip" "$T/b1.json")" "$(jq -cS "$strip" "$T/b.json")"
C=tests/replay/counter
same "Counter Inc" "$SPECTAP" check --spec $C/Counter.tla --windows $C/inc.ndjson --action Inc

# Traces through mappings: the counter, ZooKeeper's election (the faithful spec and every
# candidate, both mappings) and RedisRaft's leader kill.
"$SPECTAP" import --from json $C/counter.ndjson -o "$T/counter.spt" >/dev/null
same "Counter trace" "$SPECTAP" check --spec $C/Counter.tla --map $C/CounterMap.tla "$T/counter.spt"
Z=systems/zookeeper/spec
"$SPECTAP" import --from json tests/data/zk/election.ndjson -o "$T/zk.spt" >/dev/null
for s in $Z/ZkFle.tla $Z/candidates/*/ZkFle.tla; do
	for m in ZkFleMap ZkBenchMap; do
		same "$(basename "$(dirname "$s")") $m" "$SPECTAP" check --spec "$s" --cfg $Z/ZkFle.cfg --map $Z/$m.tla "$T/zk.spt" --max-failures 100
	done
done
"$SPECTAP" import --from json tests/data/rr/leader-kill.ndjson -o "$T/rr.spt" >/dev/null
same "RedisRaft" "$SPECTAP" check --spec systems/redisraft/spec/RedisRaft.tla --map systems/redisraft/spec/RrBenchMap.tla "$T/rr.spt"
finish
