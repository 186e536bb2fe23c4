#!/bin/sh
# Damage is contained and loud: a flipped bit costs the chunk it hits and no other, whether the
# trace is read on or by seeking; stat, dump, export and check say so (stderr and --json) and
# exit 3 unless --allow-damage; a file cut short by a stopped writer is recovered, not damaged.
. tests/cli/lib.sh

# A synthetic trace of several chunks (512 KiB of records each): 3 nodes, 60,000 steps.
awk 'BEGIN {
	print "{\"header\":{\"format_version\":2,\"system\":\"synthetic\",\"nodes\":[\"a\",\"b\",\"c\"]}}"
	for (i = 0; i < 60000; i++) {
		n = substr("abc", i % 3 + 1, 1); s[n]++
		printf "{\"event\":{\"node\":\"%s\",\"seq\":%d,\"ts_ns\":%d,\"kind\":\"Tick\",\"state\":{\"i\":%d,\"pad\":\"%08x-%d\"}}}\n",
			n, s[n], 1000 + i * 10, i, (i * 2654435761) % 4294967296, i * i
	}
}' >"$T/g.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/g.ndjson" -o "$T/g.spt"
run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/g.spt"
chunks=$(jq .chunks "$T/o")
check "the trace has at least 7 chunks ($chunks)" [ "$chunks" -ge 7 ]
check_eq "intact: no damage" null "$(jq -c .damage "$T/o")"
size=$(stat -c %s "$T/g.spt")

# 20 flips spread over the data: each loses one chunk at most; every other event is read, at
# its own ordinal (event i has state.i = i), sequentially and by seeking past the damage.
max_lost=0
total_lost=0
flips=0
i=1
while [ $i -le 20 ]; do
	off=$((300 + (size - 800) * i / 21))
	cp "$T/g.spt" "$T/f.spt"
	printf '\125' | dd of="$T/f.spt" bs=1 seek=$off conv=notrunc 2>/dev/null
	"$SPECTAP" stat --json "$T/f.spt" >"$T/o" 2>"$T/e"
	st=$?
	dchunks=$(jq '.damage.chunks // 0' "$T/o")
	lost=$(jq '.damage.events // 0' "$T/o")
	if [ "$(jq .damage "$T/o")" = null ]; then
		check_eq "flip at $off left the content intact: exit 0" 0 $st
	else
		check_eq "flip at $off: exit 3" 3 $st
		check "flip at $off: one chunk lost at most ($dchunks)" [ "$dchunks" -le 1 ]
		check_eq "flip at $off: the warning says what was lost" 1 "$(grep -c 'is damaged: 1 chunk' "$T/e")"
	fi
	"$SPECTAP" dump --json --allow-damage "$T/f.spt" 2>/dev/null | jq -r '.event.state.i' >"$T/seq"
	check_eq "flip at $off: every event outside the lost chunk is read" $((60000 - lost)) "$(wc -l <"$T/seq")"
	# Ordinals are the writer's: line k of the dump is event state.i, in order, with a gap of
	# exactly the lost events.
	gaps=$(awk 'BEGIN { prev = -1 } $1 != prev + 1 { g += $1 - prev - 1 } { prev = $1 } END { g += 59999 - prev; print g }' "$T/seq")
	check_eq "flip at $off: the gap is the lost chunk" "$lost" "$gaps"
	if [ "$lost" -gt 0 ]; then
		first_gap=$(awk 'BEGIN { prev = -1 } $1 != prev + 1 { print prev + 1; exit } { prev = $1 }' "$T/seq")
		if [ -n "$first_gap" ] && [ $((first_gap + lost)) -lt 60000 ]; then
			want=$((first_gap + lost))
			got=$("$SPECTAP" dump --json --allow-damage --from "$first_gap" --count 1 "$T/f.spt" 2>/dev/null | jq .event.state.i)
			check_eq "flip at $off: --from the lost chunk seeks to the next intact event" "$want" "$got"
		fi
		[ "$lost" -gt "$max_lost" ] && max_lost=$lost
		total_lost=$((total_lost + lost))
		flips=$((flips + 1))
	fi
	i=$((i + 1))
done
check "the flips hit chunks ($flips of 20)" [ "$flips" -ge 10 ]
echo "  FIGURE: one flipped byte over $chunks chunks: $flips of 20 flips damaged a chunk; at most $max_lost of 60000 events lost (one chunk), $total_lost in all"

# The readers agree, report in --json, and --allow-damage exits 0.
off=$((size / 2))
cp "$T/g.spt" "$T/f.spt"
printf '\125' | dd of="$T/f.spt" bs=1 seek=$off conv=notrunc 2>/dev/null
run_status 3 "$T/o" "$T/e" "$SPECTAP" export --to json "$T/f.spt" -o "$T/f.ndjson" --json
check_eq "export --json says damage" 1 "$(jq .damage.chunks "$T/o")"
check_contains "export says what to do" "$T/e" "--allow-damage exits 0"
run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --allow-damage "$T/f.spt"
check_contains "stat names the damage" "$T/o" "DAMAGED"

# A flip in the header frame (it starts at byte 20, after the magic frame) costs the header only:
# every event is read, through the index, and the damage says the header is lost.
for off in 24 40; do
	cp "$T/g.spt" "$T/h.spt"
	printf '\125' | dd of="$T/h.spt" bs=1 seek=$off conv=notrunc 2>/dev/null
	run_status 3 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/h.spt"
	check_eq "header flip at $off: the header is lost, nothing else" "true 20 0 60000 true" \
		"$(jq -r '"\(.damage.header_lost) \(.damage.offset) \(.damage.chunks) \(.events) \(.indexed)"' "$T/o")"
	check_contains "header flip at $off: the warning says so" "$T/e" "its header frame"
	check_eq "header flip at $off: every event is read" 60000 \
		"$("$SPECTAP" dump --json --allow-damage "$T/h.spt" 2>/dev/null | jq -r '.event.state.i' | wc -l)"
done
# Cut inside the header frame: nothing to read, said so.
head -c 40 "$T/g.spt" >"$T/hcut.spt"
run_status 1 "$T/o" "$T/e" "$SPECTAP" stat "$T/hcut.spt"
check_contains "cut inside the header: said so" "$T/e" "the header frame is cut short"

# Cut short, as a writer stopped mid-chunk leaves it: recovered, not damaged.
head -c $((size - 1000)) "$T/g.spt" >"$T/torn.spt"
run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/torn.spt"
check_eq "cut short: recovered" true "$(jq .recovered "$T/o")"
check_eq "cut short: not damage" null "$(jq -c .damage "$T/o")"
check "cut short: the torn frame is counted" [ "$(jq .torn_bytes "$T/o")" -gt 0 ]

# check on a damaged trace says so in its verdict.
if have_corpus "check on a damaged corpus trace"; then
	"$SPECTAP" import --from etcd-ndjson "$CORPUS" -o "$T/c.spt" >/dev/null
	csize=$(stat -c %s "$T/c.spt")
	printf '\377' | dd of="$T/c.spt" bs=1 seek=$((csize / 2)) conv=notrunc 2>/dev/null
	run_status 3 "$T/o" "$T/e" "$SPECTAP" check --map systems/etcd/spec/EtcdBenchMap.tla \
		--spec systems/etcd/spec/EtcdRaft.tla "$T/c.spt" --json
	lost=$(jq .damage.events "$T/o")
	"$SPECTAP" stat --allow-damage --json "$T/c.spt" >"$T/s" 2>/dev/null
	check_eq "check --json reports the damage stat reports" "$(jq .damage.events "$T/s")" "$lost"
	check "the damage is some of the trace's 4888 events ($lost)" [ "$lost" -gt 0 -a "$lost" -le 4888 ]
	run_status 0 "$T/o" "$T/e" "$SPECTAP" check --map systems/etcd/spec/EtcdBenchMap.tla \
		--spec systems/etcd/spec/EtcdRaft.tla "$T/c.spt" --allow-damage --allow-empty
	check_contains "check's verdict says the trace is damaged" "$T/o" "trace DAMAGED"
fi
finish
