#!/bin/sh
# Crash testing of record: SIGKILL of `spectap record zookeeper` at seeded points of real runs.
# Every event captured a flush interval before the kill is in the trace, the trace reads back
# (recovered, not damaged), nothing is left running, and with -f the previous trace survives.
. tests/cli/lib.sh
if [ "$(id -u)" != 0 ] || [ ! -r /usr/share/java/zookeeper.jar ]; then
	echo "SKIP: recording needs root and Debian's zookeeper"
	finish
	exit $?
fi
FLUSH=400
# What a captured record may take to reach the file: the collector's 200 ms reorder window, the
# flush interval and 300 ms to spare; over LTTng also the session's rotation period (1 s: a record
# is read when the chunk holding it is archived).
REACH_MS=$((200 + FLUSH + 300))

# events_so_far FILE: the count in the last progress line of record's stderr.
events_so_far() {
	sed -n 's/.*(\([0-9]*\) events so far)$/\1/p' "$1" | tail -1
}

# kill_run SEED OUT [record options...]: starts a recording, waits until the first leader is
# elected, then a seeded 0..0.6 s longer, notes the events captured, waits what a captured record
# may take to reach the file (the collector's 200 ms reorder window, the flush interval, and
# 300 ms to spare), and kills record with SIGKILL: at most 1.5 s after the first leader, while
# the scenario (five servers restarted one after the other) has about 3 s to go (over LTTng 1 s
# more); the kill must find record running. Sets captured (events captured at the note).
kill_run() {
	seed=$1 out=$2
	shift 2
	: >"$T/k.err"
	"$SPECTAP" record zookeeper --scenario rolling-restart --nodes 5 --seed "$seed" --flush-ms $FLUSH -o "$out" "$@" \
		>"$T/k.out" 2>"$T/k.err" &
	rec=$!
	i=0
	while ! grep -q "leads (epoch 1)" "$T/k.err" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	sleep "$(awk -v s="$seed" 'BEGIN { srand(s); printf "%.2f", rand() * 0.6 }')"
	captured=$(events_so_far "$T/k.err")
	sleep "$(awk -v w="$REACH_MS" 'BEGIN { printf "%.2f", w / 1000 }')"
	wd=$(sed -n 's/.* started with the agent in \([^ ]*\) .*/\1/p' "$T/k.err")
	if kill -KILL $rec; then ok; else
		wait $rec
		bad "seed $seed: record was still running when killed (it exited with $?; its stderr follows)"
		sed 's/^/    /' "$T/k.err"
	fi
	wait $rec 2>/dev/null
	# The servers die with record (PR_SET_PDEATHSIG); wait for it rather than assume it.
	i=0
	while [ -n "$wd" ] && pgrep -f "$wd/" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "seed $seed: record named the ensemble's directory" [ -n "$wd" ]
	echo "$wd" >>"$T/killed_dirs"
	[ -z "$wd" ] || check_eq "seed $seed: nothing of the ensemble left running after the kill" "" "$(pgrep -f "$wd/" || true)"
}

# kill_series LABEL PREFIX "SEEDS" [record options...]: kill_run at each seed, each trace checked:
# written while the cluster ran, every event captured REACH_MS before the kill in it, read back
# as recovered; the figure is how many more than captured each trace holds.
kill_series() {
	label=$1 prefix=$2 seeds=$3
	shift 3
	dist=""
	for seed in $seeds; do
		kill_run $seed "$T/$prefix$seed.spt" "$@"
		run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/$prefix$seed.spt"
		got=$(jq .events "$T/o")
		check "${label}seed $seed: the trace was written while the cluster ran ($captured captured before the kill)" \
			[ "${captured:-0}" -gt 0 ]
		check "${label}seed $seed: every event captured $REACH_MS ms before the kill is in the trace ($got >= $captured)" \
			[ "$got" -ge "${captured:-1}" ]
		check_eq "${label}seed $seed: killed before its end, read back as recovered, not damaged" "true null" \
			"$(jq -c -r '"\(.recovered) \(.damage)"' "$T/o")"
		dist="$dist $((got - captured))"
	done
	opts="$*"
	echo "  FIGURE: SIGKILL of record zookeeper ${opts:---via bpf} (--flush-ms $FLUSH): events in the trace beyond those captured $REACH_MS ms before the kill:$dist"
}
kill_series "" k "1 2 3"
# The same over LTTng: the session is rotated every second and each archived chunk written, so
# a kill loses at most the last rotation period's records (with the flush interval).
REACH_MS=$((1000 + 200 + FLUSH + 300))
kill_series "lttng " l "1 2" --via lttng
REACH_MS=$((200 + FLUSH + 300))

# -f over an existing trace: a kill leaves the previous trace whole, the new events in
# OUT.partial, and the next -f refuses to lose them silently.
cp "$T/k1.spt" "$T/prev.spt"
before=$("$SPECTAP" stat --json "$T/prev.spt" | jq .events)
kill_run 4 "$T/prev.spt" -f
check_eq "-f killed: the previous trace is whole" "$before true" \
	"$("$SPECTAP" stat --json "$T/prev.spt" | jq -r '"\(.events) \(.indexed // .recovered)"')"
check "-f killed: the new events are in OUT.partial" [ "$("$SPECTAP" stat --json "$T/prev.spt.partial" | jq .events)" -ge "$captured" ]
run_status 1 "$T/o" "$T/e" "$SPECTAP" record zookeeper --scenario initial-election -f -o "$T/prev.spt"
check_contains "-f after a killed -f: the partial trace is named" "$T/e" "prev.spt.partial: File exists (an earlier writer of this trace was killed"

# A completed -f replaces the trace by rename, never through a symlink.
rm -f "$T/prev.spt.partial"
ln -s "$T/k2.spt" "$T/link.spt"
k2=$(sha256sum <"$T/k2.spt")
run_status 0 "$T/o" "$T/link.err" "$SPECTAP" record zookeeper --scenario initial-election -f -o "$T/link.spt"
check "-f replaced the link, not its target" [ ! -L "$T/link.spt" ]
check_eq "-f left the link's target alone" "$k2" "$(sha256sum <"$T/k2.spt")"
run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/link.spt"
check_eq "-f: the new trace is closed cleanly" true "$(jq .indexed "$T/o")"
# The work directories the killed recorders left were reclaimed by a later recording.
while read -r d; do
	check "the work directory $d of a killed recorder is gone" test ! -e "$d"
done <"$T/killed_dirs"
check_contains "and the recording that reclaimed them said so" "$T/link.err" "the work directory of a recorder that was killed"

# The same for a spooled capture (a system described as data, over uprobes: the records are
# spooled and turned into events every --flush-ms while the cluster runs): SIGKILL while NATS
# waits for a new leader (4 s at least), noted at its first "waiting" line a second after the
# kill of the leader; every event written by then is in the trace.
if command -v nats-server >/dev/null 2>&1; then
	for seed in 1 2; do
		: >"$T/n.err"
		"$SPECTAP" record nats --scenario leader-kill --seed $seed --flush-ms $FLUSH -o "$T/n$seed.spt" \
			>"$T/n.out" 2>"$T/n.err" &
		rec=$!
		i=0
		while ! grep -q "waiting for a new leader" "$T/n.err" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
		written=$(sed -n 's/.*waiting for a new leader (.* \([0-9]*\) events written)$/\1/p' "$T/n.err" | head -1)
		sleep "$(awk -v w="$REACH_MS" 'BEGIN { printf "%.2f", w / 1000 }')"
		if kill -KILL $rec; then ok; else
			wait $rec
			bad "nats seed $seed: record was still running when killed (it exited with $?; its stderr follows)"
			sed 's/^/    /' "$T/n.err"
		fi
		wait $rec 2>/dev/null
		run_status 0 "$T/o" "$T/e" "$SPECTAP" stat --json "$T/n$seed.spt"
		got=$(jq .events "$T/o")
		check "nats seed $seed: events were written while the cluster ran (${written:-none})" [ "${written:-0}" -gt 0 ]
		check "nats seed $seed: every event written $REACH_MS ms before the kill is in the trace ($got >= ${written:-?})" \
			[ "$got" -ge "${written:-1}" ]
		check_eq "nats seed $seed: killed before its end, read back as recovered, not damaged" "true null" \
			"$(jq -c -r '"\(.recovered) \(.damage)"' "$T/o")"
		echo "  FIGURE: SIGKILL of record nats (spooled, --flush-ms $FLUSH) seed $seed: $written events written $REACH_MS ms before the kill, $got in the trace"
	done
else
	echo "SKIP: the spooled capture's kill test needs Debian's nats-server"
fi
finish
