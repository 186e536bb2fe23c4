#!/bin/sh
# make demo: the real etcd-io/raft trace corpus through spectap and back, then a live 3-member
# etcd cluster recorded with eBPF and checked against the bundled spec, then a live 3-server
# ZooKeeper ensemble recorded through the JVMTI agent and checked against the faithful spec and
# the wrong candidates (scripts/demo_zk.sh).
set -eu
build=${BUILD:-build}
spectap="$build/spectap"
corpus=${SPECTAP_CORPUS:-../shared/corpora/etcd-raft-example/example.ndjson}
out=${SPECTAP_DEMO_OUT:-$build/demo}

if [ ! -f "$corpus" ]; then
	echo "demo: corpus not found at $corpus (set SPECTAP_CORPUS to the etcd example.ndjson)" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

step "import the etcd-io/raft trace corpus (zap-wrapped NDJSON, 10 nodes)"
echo "\$ spectap import --from etcd-ndjson $corpus -o $out/etcd.spt"
"$spectap" import --from etcd-ndjson "$corpus" -o "$out/etcd.spt"

step "what the trace holds"
echo "\$ spectap stat $out/etcd.spt"
"$spectap" stat "$out/etcd.spt"

step "the leader election, as recorded"
echo "\$ spectap dump --kind 'Become*,*RequestVote*' --count 24 $out/etcd.spt"
"$spectap" dump --kind 'Become*,*RequestVote*' --count 24 "$out/etcd.spt" | cut -c1-150

step "export back to etcd-ndjson, re-import, compare"
"$spectap" export --to etcd-ndjson "$out/etcd.spt" -o "$out/etcd.ndjson"
if cmp -s "$out/etcd.ndjson" "$corpus"; then
	echo "round trip: the export is byte-identical to the corpus ($(wc -c <"$corpus") bytes)"
else
	echo "round trip FAILED: $out/etcd.ndjson differs from $corpus" >&2
	exit 1
fi
"$spectap" import --from etcd-ndjson "$out/etcd.ndjson" -o "$out/etcd2.spt" >/dev/null
"$spectap" export --to json "$out/etcd.spt" 2>/dev/null | tail -n +2 >"$out/a.json"
"$spectap" export --to json "$out/etcd2.spt" 2>/dev/null | tail -n +2 >"$out/b.json"
if cmp -s "$out/a.json" "$out/b.json"; then
	echo "round trip: re-imported events are identical ($(wc -l <"$out/a.json") events)"
else
	echo "round trip FAILED: re-imported events differ" >&2
	exit 1
fi
spt=$(wc -c <"$out/etcd.spt")
z3=$(zstd -3 -c "$corpus" | wc -c)
echo "size: $spt bytes as .spt vs $(wc -c <"$corpus") as NDJSON and $z3 as zstd -3 NDJSON"
if [ "$(id -u)" = 0 ] && [ -x /usr/bin/etcd ]; then
	step "record a real 3-member etcd cluster (Debian's unmodified binary, eBPF uprobes)"
	echo "\$ spectap record etcd --scenario leader-kill --seed 1 -o $out/live.spt"
	"$spectap" record etcd --scenario leader-kill --seed 1 -o "$out/live.spt"
	echo "\$ spectap dump --kind 'Become*' $out/live.spt"
	"$spectap" dump --kind 'Become*' "$out/live.spt" | cut -c1-170
	step "check the capture against the bundled spec (systems/etcd/spec/EtcdRaft.tla)"
	echo "\$ spectap check --map systems/etcd/spec/EtcdBenchMap.tla --spec systems/etcd/spec/EtcdRaft.tla $out/live.spt"
	"$spectap" check --map systems/etcd/spec/EtcdBenchMap.tla --spec systems/etcd/spec/EtcdRaft.tla "$out/live.spt"
else
	step "(recording a live etcd cluster needs root: skipped)"
fi
if [ "$(id -u)" = 0 ] && [ -r /usr/share/java/zookeeper.jar ]; then
	step "record a real 3-server ZooKeeper ensemble (Debian's jar, spectap's JVMTI agent) and check it"
	BUILD="$build" sh scripts/demo_zk.sh "$out/zk"
else
	step "(recording a live ZooKeeper ensemble needs root and Debian's zookeeper: skipped)"
fi
echo
echo "demo: done; files in $out/"
