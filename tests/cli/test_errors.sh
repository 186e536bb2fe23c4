#!/bin/sh
# Bad input: a clear message naming file, line and column (or byte), a non-zero exit, no output.
. tests/cli/lib.sh

head -n 5 "$SAMPLE" >"$T/good.ndjson"
# Line 3 loses a closing brace; line 4 is fine.
head -n 2 "$SAMPLE" >"$T/bad.ndjson"
sed -n 3p "$SAMPLE" | sed 's/}}$/}/' >>"$T/bad.ndjson"
sed -n 4p "$SAMPLE" >>"$T/bad.ndjson"
col=$(($(sed -n 3p "$T/bad.ndjson" | wc -c)))
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/bad.ndjson" -o "$T/bad.spt"
check_contains "names file, line and column" "$T/e" "$T/bad.ndjson:3:$col:"
check_contains "says what was wrong" "$T/e" "expected"
check "no output file on bad input" [ ! -e "$T/bad.spt" ]

printf '{"name":"X","nid":7}\n' >"$T/nid.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/nid.ndjson" -o "$T/x.spt"
check_contains "wrong field type is named" "$T/e" "nid.ndjson:1:1: \"nid\" missing or not a string"

printf '[1,2]\n' >"$T/arr.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from sysmobench "$T/arr.ndjson" -o "$T/x.spt"
check_contains "non-object line" "$T/e" "a JSON object expected"

printf '{"event":{"node":"a","kind":"k","bogus":1}}\n' >"$T/unk.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/unk.ndjson" -o "$T/x.spt"
check_contains "unknown field in the lossless dialect" "$T/e" "unknown event field \"bogus\""

printf '{"name":"A","nid":"1"}\n{"name":"B","nid":"1","state":{"term":99999999999999999999}}\n' >"$T/big.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/big.ndjson" -o "$T/x.spt"
check_contains "64-bit overflow is an error with its position" "$T/e" "big.ndjson:2:39: integer 99999999999999999999 does not fit in 64 bits"

run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/missing.ndjson" -o "$T/x.spt"
check_contains "missing file" "$T/e" "cannot open $T/missing.ndjson: No such file or directory"
run_status 2 "$T/o" "$T/e" "$SPECTAP" import --from yaml "$T/good.ndjson" -o "$T/x.spt"
check_contains "unknown dialect lists the known ones" "$T/e" "unknown dialect 'yaml' (known: json, etcd-ndjson, sysmobench)"
run_status 2 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/good.ndjson"
check_contains "missing -o" "$T/e" "-o OUT.spt is required"
run_status 2 "$T/o" "$T/e" "$SPECTAP" frobnicate
check_contains "unknown command" "$T/e" "unknown command 'frobnicate'"
run_status 2 "$T/o" "$T/e" "$SPECTAP" dump --count many "$T/x.spt"
check_contains "malformed number option" "$T/e" "--count: \"many\" is not a non-negative integer"

# An existing output is never replaced without --force.
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/good.ndjson" -o "$T/g.spt"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/good.ndjson" -o "$T/g.spt"
check_contains "refuses to overwrite" "$T/e" "pass --force"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from etcd-ndjson "$T/good.ndjson" -o "$T/g.spt" --force

# The json dialect's promises: seq increases per node and source, one header first.
H='{"header":{"format_version":2,"system":"s","nodes":["a"]}}'
printf '%s\n%s\n%s\n' "$H" '{"event":{"node":"a","seq":2,"ts_ns":1,"kind":"K"}}' \
	'{"event":{"node":"a","seq":2,"ts_ns":2,"kind":"K"}}' >"$T/seq.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/seq.ndjson" -o "$T/seq.spt"
check_contains "a repeated seq is refused at its line" "$T/e" "seq.ndjson:3:1: event.seq 2 of node \"a\" (source \"\") does not increase"
check "a refused import writes nothing" test ! -e "$T/seq.spt"
printf '%s\n%s\n%s\n' "$H" '{"event":{"node":"a","seq":1,"ts_ns":1,"kind":"K"}}' "$H" >"$T/hdr.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/hdr.ndjson" -o "$T/hdr.spt"
check_contains "a second header is refused" "$T/e" "hdr.ndjson:3:1: a second header"

# Outputs are written beside and renamed into place: -f replaces a symlink, never its target.
echo keep >"$T/target.txt"
ln -s "$T/target.txt" "$T/out.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" export --to json "$T/g.spt" -o "$T/out.ndjson" -f
check "export -f replaced the link with the export" [ ! -L "$T/out.ndjson" ] && [ -s "$T/out.ndjson" ]
check_eq "export -f left the link's target alone" keep "$(cat "$T/target.txt")"
check "export left no partial file" [ ! -e "$T/out.ndjson.partial" ]
run_status 1 "$T/o" "$T/e" "$SPECTAP" export --to json "$T/g.spt" -o "$T/out.ndjson"
check_contains "export refuses to replace without -f" "$T/e" "remove it or pass --force"

# --json errors are JSON on stdout.
run_status 1 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/missing.spt"
check_eq "JSON error" "cannot open $T/missing.spt: No such file or directory" "$(jq -r .error "$T/o")"

# Not a trace, and a trace with damage.
run_status 1 "$T/o" "$T/e" "$SPECTAP" stat "$T/good.ndjson"
check_contains "not a trace" "$T/e" "not a spectap trace"
zstd -q -c "$T/good.ndjson" >"$T/plain.zst"
run_status 1 "$T/o" "$T/e" "$SPECTAP" dump "$T/plain.zst"
check_contains "a zstd file that is no trace" "$T/e" "not a spectap trace (no spectap magic frame at byte 0)"

if have_corpus "torn and damaged traces of the public corpus (several chunks)"; then
	"$SPECTAP" import --from etcd-ndjson "$CORPUS" -o "$T/c.spt" >/dev/null
	size=$(stat -c %s "$T/c.spt")
	head -c $((size - 40)) "$T/c.spt" >"$T/torn.spt"
	run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/torn.spt"
	check_eq "torn file: recovered" true "$(jq .recovered "$T/o")"
	check_eq "torn file: every chunk before the tear is kept" 4888 "$(jq .events "$T/o")"

	# Flip a byte in the middle of the data: the chunk is lost and said to be (test_damage.sh
	# covers every reader and chunk).
	cp "$T/c.spt" "$T/flip.spt"
	printf '\377' | dd of="$T/flip.spt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	run_status 3 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/flip.spt"
	check_eq "flipped byte: damaged" true "$(jq .damaged "$T/o")"
	check "flipped byte: fewer events, none invented" [ "$(jq .events "$T/o")" -lt 4888 ]
	run_status 3 "$T/o" "$T/e" "$SPECTAP" dump "$T/flip.spt"
	check_contains "dump warns where the damage is" "$T/e" "could not be read, the first at byte"
fi
# A module that is neither a file nor a standard module: the message lists every standard
# module spectap implements (the list once overran its buffer: fuzz_spec, under the sanitizer).
printf -- '---- MODULE NoFile ----\nEXTENDS NoSuchModule\n====\n' >"$T/NoFile.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/NoFile.tla"
check_contains "a missing module: where and which" "$T/e" "NoFile.tla:2:9: cannot read module NoSuchModule"
check_contains "a missing module: the whole list of standard ones" "$T/e" "WellFoundedInduction, SequencesExtTheorems, FoldsTheorems, BagsTheorems)"

# JSON text is UTF-8: a string that is not is refused where it stands, nothing written; a capture
# string that is not UTF-8 survives spectap's own dialect ({"$bytes":hex}) and is counted by others.
printf '{"event":{"node":"a","seq":1,"ts_ns":1,"kind":"x"}}\n{"event":{"node":"a","seq":2,"ts_ns":2,"kind":"k\303("}}\n' >"$T/u8.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/u8.ndjson" -o "$T/u8.spt"
check_contains "invalid UTF-8: file, line, column, byte" "$T/e" "u8.ndjson:2:49: invalid UTF-8 in a string (byte 0xc3)"
check "invalid UTF-8: no output" test ! -e "$T/u8.spt"
printf '{"event":{"node":"a","seq":1,"ts_ns":1,"kind":"x","args":{"raw":{"$bytes":"ff00c328"}}}}\n' >"$T/b.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/b.ndjson" -o "$T/b.spt"
"$SPECTAP" export --to json "$T/b.spt" 2>/dev/null | tail -n 1 >"$T/b2.ndjson"
check_eq "bytes that are not UTF-8: kept by the json dialect" '{"$bytes":"ff00c328"}' "$(jq -c .event.args.raw "$T/b2.ndjson")"
run_status 0 "$T/o" "$T/e" "$SPECTAP" export --to sysmobench "$T/b.spt"
check_contains "and counted by a dialect that cannot hold them" "$T/e" "strings that are not UTF-8 (their stray bytes written as \\u00XX): 1"
check "and written as valid JSON" jq -e . "$T/o"
finish
