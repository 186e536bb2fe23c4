#!/bin/sh
# The real etcd corpus: import, statistics, export back byte for byte, re-import to the same events.
. tests/cli/lib.sh
have_corpus "the corpus's import, statistics and byte-identical export" || { finish; exit $?; }

run_status 0 "$T/imp.out" "$T/imp.err" "$SPECTAP" import --from etcd-ndjson "$CORPUS" -o "$T/c.spt"
"$SPECTAP" stat --json "$T/c.spt" >"$T/stat.json"
check_eq "events" 4888 "$(jq .events "$T/stat.json")"
check_eq "lost" 0 "$(jq .lost "$T/stat.json")"
check_eq "recovered" false "$(jq .recovered "$T/stat.json")"
check_eq "nodes" 10 "$(jq '.nodes | length' "$T/stat.json")"
check_eq "kinds" 17 "$(jq '.kinds | length' "$T/stat.json")"
check_eq "SendAppendEntriesResponse count" 931 "$(jq '.kinds.SendAppendEntriesResponse' "$T/stat.json")"
check_eq "events of node 2" 2505 "$(jq '.nodes."2"' "$T/stat.json")"
check_eq "paired receives" 1661 "$(jq '.messages.paired' "$T/stat.json")"
check_eq "receives before their send" 0 "$(jq '.messages.received_before_sent' "$T/stat.json")"
# Size: at most a tenth of the input, and no larger than zstd -3 of it.
size=$(stat -c %s "$T/c.spt")
check "spt at most 1/10 of the NDJSON ($size bytes)" [ $((size * 10)) -le "$(stat -c %s "$CORPUS")" ]
check "spt no larger than zstd -3 ($size bytes)" [ "$size" -le "$(zstd -3 -c "$CORPUS" | wc -c)" ]

# Export is byte-identical to the corpus; what the dialect cannot hold is reported.
run_status 0 "$T/back.ndjson" "$T/exp.err" "$SPECTAP" export --to etcd-ndjson "$T/c.spt"
check "export is byte-identical to the corpus" cmp -s "$T/back.ndjson" "$CORPUS"
check_contains "dropped list" "$T/exp.err" "message ids (re-derived on import): 3448"

# Re-import gives identical events (header lines differ: command line, clock).
"$SPECTAP" import --from etcd-ndjson "$T/back.ndjson" -o "$T/c2.spt" >/dev/null
"$SPECTAP" export --to json "$T/c.spt" 2>/dev/null | tail -n +2 >"$T/a.json"
"$SPECTAP" export --to json "$T/c2.spt" 2>/dev/null | tail -n +2 >"$T/b.json"
check_eq "events in the json export" 4888 "$(wc -l <"$T/a.json" | tr -d ' ')"
check "re-imported events are identical" cmp -s "$T/a.json" "$T/b.json"

# Bare events (no zap envelope) import too, and export back bare.
jq -c .event "$CORPUS" >"$T/bare.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/bare.ndjson" -o "$T/bare.spt"
"$SPECTAP" export --to etcd-ndjson "$T/bare.spt" 2>/dev/null >"$T/bare.back"
check "bare events export back byte-identical" cmp -s "$T/bare.ndjson" "$T/bare.back"
# Same states and messages as the wrapped import: only meta and times differ.
"$SPECTAP" dump --json "$T/bare.spt" | jq -c '.event | del(.meta, .ts_ns)' >"$T/bare.ev"
"$SPECTAP" dump --json "$T/c.spt" | jq -c '.event | del(.meta, .ts_ns)' >"$T/zap.ev"
check "bare and wrapped imports hold the same events" cmp -s "$T/bare.ev" "$T/zap.ev"

# Message identity: every receive carries the id of a send with the same payload.
"$SPECTAP" dump --json "$T/c.spt" | jq -c 'select(.event.msg) | .event.msg' >"$T/msgs"
unmatched=$(jq -s '[.[] | select(.dir=="send")] as $s | ($s | map({key: (.id|tostring), value: .}) | from_entries) as $by
	| [.[] | select(.dir=="recv") | select($by[(.id|tostring)] == null or $by[(.id|tostring)].fields != .fields)] | length' "$T/msgs")
check_eq "receives without a matching send" 0 "$unmatched"
finish
