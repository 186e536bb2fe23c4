#!/bin/sh
# etcd's raft against systems/etcd/spec/EtcdRaft.tla: real traces (leader-kill, steady-writes)
# mapped to Transition Validation windows by EtcdBenchMap.tla, every window checked.
. tests/cli/lib.sh
D=systems/etcd/spec
SPEC=$D/EtcdRaft.tla
MAP=$D/EtcdBenchMap.tla
BENCH="ElectionTimeout HandleVoteRequest ClientProposal HandleAppendEntries HandleHeartbeat"

# Without a trace: the mapping and the spec load, and a window naming an action checks.
printf '%s\n' '{"window_id":1,"action":"CheckQuorumTimeout","pre_state":{},"post_state":{}}' >"$T/empty.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$SPEC" --windows "$T/empty.ndjson" --action CheckQuorumTimeout --json
check_eq "the spec loads: Init's state steps to itself" 1 "$(jq '.actions.CheckQuorumTimeout.passed' "$T/o")"

if [ "$(id -u)" != 0 ] || [ ! -x /usr/bin/etcd ]; then
	echo "SKIP: recording etcd traces needs root and /usr/bin/etcd"
	finish
	exit $?
fi

# Why a window fails, when the trace itself shows a capture defect (systems/etcd/README.md),
# for the failure message:
#   duplicate-send:   the actor sends the same message twice in a row within the step (an
#                     entry uprobe firing twice for one call)
#   bootstrap-unseen: the actor's log is empty before the step: RawNode.Bootstrap's entries
#                     and commit index have no event, the step shows them appear
#   unknown-terms:    the actor's log has entries whose term the capture could not read (0)
#   unpaired-receive: the message the step receives was never sent as the trace has it (a
#                     send before the receiver's id was known names it in hex)
explain() { # TRACE_EVENTS WINDOWS_DIR FAILURE_JSON
	a=$(echo "$3" | jq -r .action)
	w=$(echo "$3" | jq -r .window_id)
	win=$(jq -c --argjson w "$w" 'select(.window_id == $w)' "$2/$a.ndjson")
	n=$(echo "$win" | jq -r .actor)
	lo=$(echo "$win" | jq '.events[0]')
	hi=$(echo "$win" | jq '.events[1]')
	why=""
	dup=$(sed -n "$((lo + 1)),$((hi + 1))p" "$1" | jq -c --arg n "$n" 'select(.node == $n and .msg.dir == "send") | [.msg.to, .msg.type, .msg.fields]' | uniq -d)
	[ -n "$dup" ] && [ "$(echo "$3" | jq -c .differs)" = '["messages"]' ] && why="$why duplicate-send"
	echo "$win" | jq -e --arg n "$n" '.pre_state.logLen[$n] == 0' >/dev/null && why="$why bootstrap-unseen"
	echo "$win" | jq -e --arg n "$n" '[.pre_state.log[$n][], .post_state.log[$n][]] | any(. == 0)' >/dev/null && why="$why unknown-terms"
	id=$(sed -n "$((hi + 1))p" "$1" | jq 'select(.msg.dir == "recv") | .msg.id')
	[ -n "$id" ] && [ -z "$(jq --argjson id "$id" 'select(.msg.dir == "send" and .msg.id == $id) | 1' "$1")" ] &&
		why="$why unpaired-receive"
	echo "$why"
}

record_and_check() { # SCENARIO SEED PUTS
	s=$1
	# Bounded by puts, so that every machine checks the same amount of work.
	run_status 0 "$T/$s.sum" "$T/$s.err" "$SPECTAP" record etcd --scenario "$s" --seed "$2" --puts "$3" \
		-o "$T/$s.spt" --json
	[ -f "$T/$s.spt" ] || return
	"$SPECTAP" dump --json "$T/$s.spt" | jq -c .event >"$T/$s.events"

	run_status 0 "$T/$s.chk" "$T/e" "$SPECTAP" check --map "$MAP" --spec "$SPEC" "$T/$s.spt" --json --max-failures 1000000 --allow-empty
	# The engine's cache and threads change nothing: the same report without the cache, with 2 jobs.
	"$SPECTAP" check --map "$MAP" --spec "$SPEC" "$T/$s.spt" --json --max-failures 1000000 --allow-empty --no-cache --jobs 2 >"$T/$s.nc"
	strip='del(.peak_rss_kb) | .actions |= map_values(del(.seconds))'
	check_eq "$s: the same report without the cache and with 2 jobs" "$(jq -cS "$strip" "$T/$s.chk")" "$(jq -cS "$strip" "$T/$s.nc")"
	run_status 0 "$T/$s.win" "$T/e" "$SPECTAP" windows --map "$MAP" --spec "$SPEC" "$T/$s.spt" -o "$T/$s.w" --json
	check_eq "$s: check and windows agree on the windows" "$(jq '[.actions[].windows] | add' "$T/$s.chk")" "$(jq .windows "$T/$s.win")"
	echo "  $s: $(jq -r '[.actions | to_entries[] | "\(.key) \(.value.passed)/\(.value.windows)"] | join(", ")' "$T/$s.chk")"

	# Every benchmark action the scenario exercises has windows: all five in both.
	for a in $BENCH; do
		check "$s: $a has windows" [ "$(jq ".actions.$a.windows // 0" "$T/$s.chk")" -gt 0 ]
	done

	# Every window passes.
	check_eq "$s: every failing window is listed" "$(jq '[.actions[] | .windows - .passed] | add' "$T/$s.chk")" \
		"$(jq '[.actions[].failures | length] | add' "$T/$s.chk")"
	jq -c '.actions | to_entries[] | .key as $a | .value.failures[] | {action: $a, window_id, actor, differs}' "$T/$s.chk" >"$T/$s.fail"
	while read -r f; do
		why=$(explain "$T/$s.events" "$T/$s.w" "$f")
		bad "$s: window fails: $f${why:+ (the trace shows a capture defect:$why)}"
	done <"$T/$s.fail"
	check_eq "$s: every window passes" 0 "$(wc -l <"$T/$s.fail" | tr -d ' ')"
	# Every step is in a window: no step's events come without its first (stepBegin) event
	# (they did when an entry uprobe on Step fired twice and the shaper's nesting never closed).
	unwindowed=$(jq -s '[.[] | select(.args.step != null)] | group_by(.node) | map(
		reduce .[] as $e ({open: false, n: 0};
			if $e.args.stepBegin then .open = true else (if .open then . else .n += 1 end) end
			| if ($e.kind | test("^(Receive|Step)")) then .open = false else . end) | .n) | add' "$T/$s.events")
	check_eq "$s: step events outside any window" 0 "$unwindowed"

	# Windows hold the whole cluster before and after, and the message handled.
	for a in $(ls "$T/$s.w" | sed 's/\.ndjson$//'); do
		check_eq "$s $a: whole-cluster states and input" "" "$(jq -c '["n1", "n2", "n3"] as $ns | select(
			([.pre_state, .post_state] | any(.[];
				keys != ["commitIndex", "currentTerm", "leader", "log", "logLastTerm", "logLen", "messages", "state", "votedFor"]
				or any(.[]; keys != $ns) or any(.messages[]; keys != $ns)))
			or (.input | [.type, .from, .to] | any(type != "string"))
			or (.actor | IN($ns[]) | not)) | .window_id' "$T/$s.w/$a.ndjson" | head -n 3 | tr '\n' ' ')"
		# Re-read, the windows give the trace's verdicts.
		"$SPECTAP" check --spec "$SPEC" --windows "$T/$s.w/$a.ndjson" --action "$a" --json --max-failures 1000000 >"$T/re.json"
		check_eq "$s $a: the window file gives the trace's verdicts" \
			"$(jq -c ".actions.$a | [.windows, .passed, [.failures[].window_id]]" "$T/$s.chk")" \
			"$(jq -c ".actions.$a | [.windows, .passed, [.failures[].window_id]]" "$T/re.json")"
	done
}

record_and_check leader-kill 7 "${SPECTAP_TEST_PUTS:-1000}"
record_and_check steady-writes 3 300
s=leader-kill
[ -d "$T/$s.w" ] || { finish; exit $?; }

# A wrong spec fails. 1: the follower commits all it appended (min(m.Commit, lastnewi) without
# m.Commit): HandleAppendEntries windows fail, naming commitIndex.
sed 's/!.commit = Max(@, Min(m.commit, lastnewi))/!.commit = Max(@, lastnewi)/' "$SPEC" >"$T/EtcdRaft.tla"
cp "$D/EtcdRaft.cfg" "$T/EtcdRaft.cfg"
check "mutant 1 differs from the spec" [ -n "$(diff "$SPEC" "$T/EtcdRaft.tla")" ]
"$SPECTAP" check --spec "$T/EtcdRaft.tla" --windows "$T/$s.w/HandleAppendEntries.ndjson" --action HandleAppendEntries --json >"$T/m1.json"
check "mutant 1 (commit not capped by m.Commit) fails windows" [ "$(jq '.actions.HandleAppendEntries | .windows - .passed' "$T/m1.json")" -gt 0 ]
check_eq "mutant 1's failures name commitIndex" "true" "$(jq '[.actions.HandleAppendEntries.failures[].differs | index("commitIndex") != null] | all' "$T/m1.json")"

# 2: votes granted without the log up-to-date check. A granted vote of the trace, its
# candidate's log made stale (lastIndex 1, lastTerm 1): the spec rejects that vote, so the
# window fails naming votedFor; the mutant grants it.
sed 's/IF canVote \/\\ IsUpToDate(o.log, m.index, m.logTerm)/IF canVote/' "$SPEC" >"$T/EtcdRaft.tla"
check "mutant 2 differs from the spec" [ -n "$(diff "$SPEC" "$T/EtcdRaft.tla")" ]
jq -c 'select(.post_state.votedFor[.actor] == .input.from and .pre_state.logLen[.actor] > 1)
	| .input as $m | ($m | .index = 1 | .logTerm = 1) as $s
	| .input = $s | .params[1] = $s | .window_id = 1
	| .pre_state.messages[$m.from][$m.to] |= map(if . == $m then $s else . end)' \
	"$T/$s.w/HandleVoteRequest.ndjson" | head -n 1 >"$T/stale.ndjson"
if [ -s "$T/stale.ndjson" ]; then
	"$SPECTAP" check --spec "$SPEC" --windows "$T/stale.ndjson" --action HandleVoteRequest --json >"$T/v.json"
	check_eq "a vote granted to a stale log fails, naming votedFor" "0 true" \
		"$(jq -r '.actions.HandleVoteRequest | "\(.passed) \(.failures[0].differs | index("votedFor") != null)"' "$T/v.json")"
	"$SPECTAP" check --spec "$T/EtcdRaft.tla" --windows "$T/stale.ndjson" --action HandleVoteRequest --json >"$T/v2.json"
	check_eq "mutant 2 (no log check) grants it" 1 "$(jq '.actions.HandleVoteRequest.passed' "$T/v2.json")"
else
	echo "  SKIP: no granted vote in the leader-kill trace to make stale"
fi

# Coverage through the mapping's Branch (record etcd --until-covered counts the same): the step
# actions and the answers; a vote answer is also its step's first event, so Branch gives both.
run_status 0 "$T/cov.json" "$T/e" "$SPECTAP" stat --coverage --map "$MAP" --spec "$SPEC" "$T/$s.spt" --json
check_eq "coverage: twelve listed branches" 12 "$(jq '.listed | length' "$T/cov.json")"
check_eq "coverage: a leader-kill has a vote request, a granted vote and an accepted append" "true" \
	"$(jq '.branches.HandleVoteRequest > 0 and .branches.VoteGranted > 0 and .branches.AppendAccepted > 0' "$T/cov.json")"
# A Branch may name several branches of one event (a set), each counted; a set must hold names.
mkdir -p "$T/set"
sed '/^Branch(ev) ==/,$d' "$MAP" >"$T/set/EtcdBenchMap.tla"
printf '%s\n' 'Branch(ev) == IF WindowStart(ev) = "ClientProposal" THEN {"P1", "P2"} ELSE ""' \
	'Branches == {"P1", "P2"}' '====' >>"$T/set/EtcdBenchMap.tla"
run_status 0 "$T/set.json" "$T/e" "$SPECTAP" stat --coverage --map "$T/set/EtcdBenchMap.tla" --spec "$SPEC" "$T/$s.spt" --json
# Branch counts events, not windows: a proposal on a member killed before its step ended has an
# event but no window, so compare with the same Branch giving one name.
sed '/^Branch(ev)/s/{"P1", "P2"}/"P1"/' "$T/set/EtcdBenchMap.tla" >"$T/set/one.tla"
mkdir -p "$T/one" && mv "$T/set/one.tla" "$T/one/EtcdBenchMap.tla"
run_status 0 "$T/one.json" "$T/e" "$SPECTAP" stat --coverage --map "$T/one/EtcdBenchMap.tla" --spec "$SPEC" "$T/$s.spt" --json
check_eq "coverage: one name counts every proposal event, at least its windows" "true" \
	"$(jq --slurpfile c "$T/cov.json" '.branches.P1 >= $c[0].windows.ClientProposal and .branches.P1 > 0' "$T/one.json")"
check_eq "coverage: a set-valued Branch counts each of its names" \
	"$(jq -c '[.branches.P1, .branches.P1]' "$T/one.json")" \
	"$(jq -c '[.branches.P1, .branches.P2]' "$T/set.json")"
sed -i '/^Branch(ev)/s/{"P1", "P2"}/{"P1", 2}/' "$T/set/EtcdBenchMap.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" stat --coverage --map "$T/set/EtcdBenchMap.tla" --spec "$SPEC" "$T/$s.spt"
check_contains "coverage: a set of Branch with a non-name is an error naming it" "$T/e" "its set holds 2"
# A step the capture saw whole has one answer; one whose member was killed may have none.
check_eq "coverage: no more vote answers than vote requests handled" "true" \
	"$(jq '.branches.VoteGranted + .branches.VoteRejected <= .branches.HandleVoteRequest' "$T/cov.json")"
check_eq "coverage: no more append answers than appends handled" "true" \
	"$(jq '.branches.AppendAccepted + .branches.AppendRejected <= .branches.HandleAppendEntries' "$T/cov.json")"
finish
