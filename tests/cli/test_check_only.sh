#!/bin/sh
# make check-only: spectap without the capture stack. It links none of libbpf, LTTng, libdw,
# libelf, capstone or babeltrace; it checks, imports and exports as the whole tool does (the
# systems' export dialects included); record and doctor say they are not in this build.
. tests/cli/lib.sh
CO=${BUILD:-build}/spectap-check
if [ ! -x "$CO" ]; then
	bad "$CO is not built (make all builds it)"
	finish
	exit $?
fi
check_eq "no capture library is linked" "" \
	"$(ldd "$CO" | grep -E 'libbpf|lttng|libdw|libelf|capstone|babeltrace' || true)"
run_status 2 "$T/o" "$T/e" "$CO" record nats --scenario leader-kill -o "$T/x.spt"
check_contains "record: not in this build, and what to do" "$T/e" "built without the capture stack (make check-only)"
run_status 2 "$T/o" "$T/e" "$CO" doctor
check_contains "doctor: not in this build" "$T/e" "built without the capture stack"

# The same answers as the whole tool.
D=tests/replay/counter
for bin in "$SPECTAP" "$CO"; do
	n=$(basename "$bin")
	run_status 0 "$T/o" "$T/e" "$bin" import --from json "$D/counter.ndjson" -o "$T/c-$n.spt"
	run_status 0 "$T/check-$n.json" "$T/e" "$bin" check --spec "$D/Counter.tla" --map "$D/CounterMap.tla" \
		"$T/c-$n.spt" --json
	run_status 0 "$T/o" "$T/e" "$bin" import --from json tests/data/zk/election.ndjson -o "$T/z-$n.spt"
	run_status 0 "$T/zk-$n.ndjson" "$T/e" "$bin" export --to sysmobench "$T/z-$n.spt"
	run_status 0 "$T/o" "$T/e" "$bin" import --from json tests/data/rr/leader-kill.ndjson -o "$T/r-$n.spt"
	run_status 0 "$T/rr-$n.ndjson" "$T/e" "$bin" export --to sysmobench "$T/r-$n.spt"
done
check_eq "check: the same verdicts" "$(jq -c '.actions | del(.[].seconds)' "$T/check-spectap.json")" \
	"$(jq -c '.actions | del(.[].seconds)' "$T/check-spectap-check.json")"
check "check: windows were checked" [ "$(jq '.actions.Inc.windows' "$T/check-spectap-check.json")" -gt 0 ]
check "export: ZooKeeper's dialect, as the whole tool writes it" cmp -s "$T/zk-spectap.ndjson" "$T/zk-spectap-check.ndjson"
check_contains "export: the ZooKeeper dialect is known to it" "$T/zk-spectap-check.ndjson" '"event":"Notification"'
check "export: RedisRaft's dialect, as the whole tool writes it" cmp -s "$T/rr-spectap.ndjson" "$T/rr-spectap-check.ndjson"
check_contains "export: the RedisRaft dialect is known to it" "$T/rr-spectap-check.ndjson" '"name":"HandleAppendEntriesRequest"'
finish
