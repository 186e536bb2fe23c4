#!/bin/sh
# The lossless json dialect, loss records, and the SysMoBench envelope.
. tests/cli/lib.sh

# json: export -> import -> export is the identity, header included (the project's sample).
"$SPECTAP" import --from etcd-ndjson "$SAMPLE" -o "$T/e.spt" >/dev/null
run_status 0 "$T/j1" "$T/e" "$SPECTAP" export --to json "$T/e.spt"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/j1" -o "$T/j.spt" --force
"$SPECTAP" export --to json "$T/j.spt" >"$T/j2" 2>/dev/null
check "json round trip of the sample is the identity" cmp -s "$T/j1" "$T/j2"

# Values of every kind survive, and loss records come back with their counts.
cat >"$T/kinds.ndjson" <<'JSON'
{"header":{"system":"toy","nodes":["a","b"],"scenario":"unit","seed":42}}
{"event":{"node":"a","source":"bpf","seq":1,"ts_ns":100,"lamport":1,"tid":7,"kind":"step","state":{"s":{"$set":[3,1,2]},"f":{"$fun":[[1,"x"],[{"$model":"m1"},true]]},"r":{"$rec":{"$odd":1}},"e":[],"n":1.5,"z":null,"big":-9223372036854775808}}}
{"event":{"node":"b","source":"bpf","seq":1,"ts_ns":150,"lamport":2,"kind":"recv","msg":{"id":9,"dir":"recv","from":"a","to":"b","type":"T","fields":{"k":[1,[2,[3]]]}}}}
{"loss":{"node":"a","source":"bpf","count":5,"first_seq":2,"last_seq":6}}
JSON
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/kinds.ndjson" -o "$T/k.spt"
"$SPECTAP" export --to json "$T/k.spt" 2>/dev/null >"$T/k.back"
check_eq "set canonical, model values and functions kept" \
	'{"e":[],"s":{"$set":[1,2,3]},"f":{"$fun":[[1,"x"],[{"$model":"m1"},true]]},"r":{"$rec":{"$odd":1}},"n":1.5,"z":null}' \
	"$(sed -n 2p "$T/k.back" | sed 's/.*"state":\({.*}\)}}$/\1/' | jq -cS . | jq -c '{e,s,f,r,n,z}')"
check_contains "INT64_MIN exact (jq would round it)" "$T/k.back" '"big":-9223372036854775808' 
check_eq "loss record" '{"node":"a","source":"bpf","count":5,"first_seq":2,"last_seq":6}' "$(sed -n 4p "$T/k.back" | jq -c .loss)"
"$SPECTAP" stat --json "$T/k.spt" >"$T/ks"
check_eq "lost" 5 "$(jq .lost "$T/ks")"
check_eq "seed" 42 "$(jq .seed "$T/ks")"
check_eq "message pairing sees a receive without send" 1 "$(jq .messages.unpaired_receives "$T/ks")"
"$SPECTAP" stat "$T/k.spt" >"$T/kplain"
check_contains "plain stat shouts loss" "$T/kplain" "5 events (LOSS AT CAPTURE)"

if have_corpus "the json and sysmobench round trips of the public corpus"; then
	"$SPECTAP" import --from etcd-ndjson "$CORPUS" -o "$T/c.spt" >/dev/null
	# json: export -> import -> export is the identity, header included.
	run_status 0 "$T/j1" "$T/e" "$SPECTAP" export --to json "$T/c.spt"
	run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/j1" -o "$T/j.spt" --force
	"$SPECTAP" export --to json "$T/j.spt" >"$T/j2" 2>/dev/null
	check "json round trip is the identity" cmp -s "$T/j1" "$T/j2"
	check_eq "header line" "etcd-raft" "$(head -n 1 "$T/j1" | jq -r .header.system)"

	# sysmobench: config line with the servers, ts in ns as a string, messages as "msg".
	run_status 0 "$T/s.ndjson" "$T/e" "$SPECTAP" export --to sysmobench "$T/c.spt"
	check_eq "config line" '["1","2","3","4","5","6","7","8","9","10"]' "$(head -n 1 "$T/s.ndjson" | jq -c .config.servers)"
	check_eq "ts in ns" '"1712329729602453700"' "$(sed -n 2p "$T/s.ndjson" | jq -c .ts)"
	check_eq "message fields" '{"type":"MsgVote","term":2,"from":"2","to":"1","entries":0,"logTerm":1,"index":5,"commit":0,"vote":"0","reject":false,"rejectHint":0}' \
		"$(sed -n 78p "$T/s.ndjson" | jq -c .event.msg)"
	check_contains "says what it cannot hold" "$T/e" "message direction and id (the envelope has none): 3448"
	run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from sysmobench "$T/s.ndjson" -o "$T/s.spt"
	"$SPECTAP" stat --json "$T/s.spt" >"$T/ss"
	check_eq "sysmobench re-import: events" 4888 "$(jq .events "$T/ss")"
	check_eq "sysmobench re-import: nodes from the config line" 10 "$(jq '.nodes | length' "$T/ss")"
	"$SPECTAP" dump --json "$T/s.spt" | jq -c '[.event.node, .event.ts_ns, .event.kind, .event.state]' >"$T/s.ev"
	"$SPECTAP" dump --json "$T/c.spt" | jq -c '[.event.node, .event.ts_ns, .event.kind, .event.state]' >"$T/c.ev"
	check "sysmobench keeps nodes, times, kinds and states" cmp -s "$T/s.ev" "$T/c.ev"
fi
# Specula's corpora: a config line without servers, RFC 3339 times, a "scenario" in every
# envelope, keys in their own order (an argument before msg, state fields by their own order).
# Both dialects read them, and both write them back byte for byte. (Written for the project, in
# the shape of those files.)
cat >"$T/specula.ndjson" <<'JSON'
{"ts":"2026-03-01T10:00:00.000000001Z","scenario":"toy","tag":"config","config":{"MaxInflight":4}}
{"ts":"2026-03-01T10:00:00.5Z","scenario":"toy","tag":"trace","event":{"name":"InitState","nid":"1","state":{"term":0,"vote":"0","commit":0,"zeta":1,"alpha":2},"role":"StateFollower","log":0,"conf":[["1","2"],[]]}}
{"ts":"2026-03-01T10:00:00.750000000Z","scenario":"toy","tag":"trace","event":{"name":"BecomeCandidate","nid":"1","state":{"term":1,"vote":"1","commit":0,"zeta":1,"alpha":2},"role":"StateCandidate","log":0,"conf":[["1","2"],[]]}}
{"ts":"2026-03-01T11:00:00.25+01:00","scenario":"toy","tag":"trace","event":{"name":"SendRequestVoteRequest","nid":"1","state":{"term":1,"vote":"1","commit":0,"zeta":1,"alpha":2},"role":"StateCandidate","log":0,"conf":[["1","2"],[]],"extra":["x"],"msg":{"type":"MsgVote","term":1,"from":"1","to":"2","entries":0,"logTerm":0,"index":0,"commit":0,"vote":"0","reject":false,"rejectHint":0}}}
JSON
for dl in etcd-ndjson sysmobench; do
	run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from $dl "$T/specula.ndjson" -o "$T/sp-$dl.spt"
	run_status 0 "$T/sp-$dl.out" "$T/e" "$SPECTAP" export --to $dl "$T/sp-$dl.spt"
	check "$dl: a Specula-style file round-trips byte for byte" cmp -s "$T/specula.ndjson" "$T/sp-$dl.out"
	check_eq "$dl: RFC 3339 times, offsets and fractions to ns" "1772359200500000000 1772359200750000000 1772359200250000000" \
		"$("$SPECTAP" dump --json "$T/sp-$dl.spt" 2>/dev/null | jq -r .event.ts_ns | tr '\n' ' ' | sed 's/ $//')"
	# The text is kept only where it is not what ns written back as Go's RFC3339Nano gives.
	check_eq "$dl: a time's text kept only when not the canonical one" 'null "2026-03-01T10:00:00.750000000Z" "2026-03-01T11:00:00.25+01:00"' \
		"$("$SPECTAP" export --to json "$T/sp-$dl.spt" 2>/dev/null | jq -c 'select(.event) | .event.meta._ts_text' | paste -sd' ')"
done
printf '%s\n' '{"ts":"2026-13-01T10:00:00Z","tag":"trace","event":{"name":"InitState","nid":"1"}}' >"$T/badts.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/badts.ndjson" -o "$T/bad.spt"
check_contains "a bad RFC 3339 time: where and what" "$T/e" 'badts.ndjson:1:1: "ts": "2026-13-01T10:00:00Z" is not an RFC 3339 time'
finish
