#!/bin/sh
# spectap check --trace-spec: trace specs in the style of etcd-io/raft's, as their authors wrote
# them. Ours (tests/replay/trace/TraceRelay.tla) has hidden state: a "recv" line that does not
# say which message arrived leaves two states until a later line tells them apart.
. tests/cli/lib.sh
D=tests/replay/trace

TRACE=$D/good.ndjson run_status 0 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla
check_contains "a log every line of which some behaviour matches is accepted" "$T/o" \
	"accepted: a behaviour matches all 5 lines of Log (2 states at the end)"
check_contains "TLC's counts: 9 distinct states (the two receive orders)" "$T/o" "9 distinct states found"

TRACE=$D/good.ndjson run_status 0 "$T/j" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --json
check_eq "json: accepted" accepted "$(jq -r .trace_spec.verdict "$T/j")"
check_eq "json: the cursor and the log" "l Log 5 6" "$(jq -r '.trace_spec | "\(.cursor) \(.log) \(.log_length) \(.line)"' "$T/j")"

# Line 4 says message 3 arrived before it was sent.
TRACE=$D/bad.ndjson run_status 12 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla
check_contains "rejected at the line no successor matches" "$T/o" \
	"rejected at log line 4 of 5 (Log[4]): no successor of the 2 states that matched line 3 matches it"
check_contains "the line is shown" "$T/o" 'line 4: {"op":"recv","m":3}'
check_contains "the closest miss names the conjunct" "$T/o" "TraceRelay.tla:14:65: got' = got \\cup {Line.m} is false"
check_contains "and both sides" "$T/o" "right: {1, 3}"
TRACE=$D/bad.ndjson run_status 12 "$T/j" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --json
check_eq "json: rejected at line 4, 2 states at line 3" "rejected 4 2" \
	"$(jq -r '.trace_spec | "\(.verdict) \(.line) \(.frontier)"' "$T/j")"
check_eq "json: the closest miss" "Recv = {1, 2} {1, 3}" \
	"$(jq -r '.trace_spec.closest | "\(.action) \(.op) \(.left) \(.right)"' "$T/j")"
check_eq "json: the log entry is JSON" 3 "$(jq -r .trace_spec.entry.m "$T/j")"
check_eq "json: the behaviour to line 4" 4 "$(jq -r '.trace | length' "$T/j")"

# CCF's way of ending the search (Traceccfraft.tla's Termination): an ACTION_CONSTRAINT that
# TLCSet("exit", TRUE)s once a state at the last line is expanded. By hand: the first of the two
# states at line 5 is expanded (its successor kept), the other is not: 8 states generated, 8
# distinct, 2 left on the queue, one state past the last line. The ALIAS shows the behaviour.
TRACE=$D/good.ndjson run_status 0 "$T/j" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --cfg $D/TraceRelayExit.cfg --json
check_eq "exit at the last line: accepted, TLC's counts" "accepted 8 8 2 6" \
	"$(jq -r '"\(.trace_spec.verdict) \(.generated) \(.distinct) \(.queue) \(.depth)"' "$T/j")"
TRACE=$D/bad.ndjson run_status 12 "$T/j" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --cfg $D/TraceRelayExit.cfg --json
check_eq "the rejected behaviour through the ALIAS" '[{"got":[],"line":1},{"got":[],"line":2},{"got":[],"line":3},{"got":[1],"line":4}]' \
	"$(jq -c '[.trace[].alias]' "$T/j")"

# A POSTCONDITION that the search went as deep as the log (CCF's TraceMatchedNonTrivially):
# holds on the good log; on the bad one it is false, and the line no successor matched is named.
TRACE=$D/good.ndjson run_status 0 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --cfg $D/TraceRelayPost.cfg
check_contains "the depth postcondition holds on a matched log" "$T/o" "accepted: a behaviour matches all 5 lines of Log"
TRACE=$D/bad.ndjson run_status 12 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --cfg $D/TraceRelayPost.cfg
check_contains "the depth postcondition fails" "$T/o" "Error: Postcondition TraceAccepted is false."
check_contains "and the line no successor matched is named" "$T/o" \
	"rejected at log line 4 of 5 (Log[4]): no successor of the 2 states that matched line 3 matches it"

# An assumption the log breaks (CCF's trace spec assumes a non-empty log): no search, a verdict
# that says so (its --json once crashed on the cursor not yet named).
sed 's/^====$/ASSUME Len(Log) > 0\n====/' $D/TraceRelay.tla >"$T/TraceRelay.tla"
cp $D/Relay.tla $D/TraceRelay.cfg "$T/"
: >"$T/empty.ndjson"
TRACE=$T/empty.ndjson run_status 10 "$T/j" "$T/e" "$SPECTAP" check --trace-spec "$T/TraceRelay.tla" --json
check_eq "an assumption the log breaks: rejected, nothing searched" "assumption rejected l Log 0" \
	"$(jq -r '"\(.verdict) \(.trace_spec.verdict) \(.trace_spec.cursor) \(.trace_spec.log) \(.distinct)"' "$T/j")"
TRACE=$T/empty.ndjson run_status 10 "$T/o" "$T/e" "$SPECTAP" check --trace-spec "$T/TraceRelay.tla"
check_contains "an assumption the log breaks, in words" "$T/o" "rejected: the error above (an assumption is false: no log line was checked)"

# The spec's properties and invariants hold on every state reached, as with --model.
printf '%s\n' '{"op":"send"}' '{"op":"recv","m":1}' '{"op":"recv","m":1}' >"$T/twice.ndjson"
TRACE=$T/twice.ndjson run_status 12 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla
check_contains "a message received twice is rejected at line 3" "$T/o" "rejected at log line 3 of 3"

# A spec without a log cursor is no trace spec.
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/Relay.tla --cfg tests/replay/model/Counter.cfg
check_contains "no cursor: the error says what a trace spec needs" "$T/e" "no log cursor"
run_status 2 "$T/o" "$T/e" "$SPECTAP" check --trace-spec $D/TraceRelay.tla --model $D/Relay.tla
check_contains "--model and --trace-spec together are a usage error" "$T/e" "give one"

# Whole-trace validation of a state trace (--whole --states), the spec unchanged: the trace
# gives sent and got, never net (hidden, searched); a JSON array stands for a set.
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --whole --spec $D/Relay.tla --states $D/states-good.json
check_contains "a state trace some behaviour goes through is accepted" "$T/o" \
	"accepted: a behaviour goes through all 6 states of $D/states-good.json"
# State 5 says message 3 arrived, which was never sent.
run_status 12 "$T/j" "$T/e" "$SPECTAP" check --whole --spec $D/Relay.tla --states $D/states-bad.json --json
check_eq "states: rejected at state 5, one state matched state 4" "rejected 5 1" \
	"$(jq -r '.trace_spec | "\(.verdict) \(.line) \(.frontier)"' "$T/j")"
check_eq "states: the closest successor's differing variable" "got <<1, 3>> {1, 2}" \
	"$(jq -r '.trace_spec.differs[0] | "\(.var) \(.expected) \(.reached)"' "$T/j")"
echo '[{"snt":0}]' >"$T/typo.json"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --whole --spec $D/Relay.tla --states "$T/typo.json"
check_contains "states: a field that names no variable is an error" "$T/e" "state 1: snt is not a variable of the spec"
printf '[{"sent":0},\n' >"$T/cut.json"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --whole --spec $D/Relay.tla --states "$T/cut.json"
check_contains "states: a broken file is an error with its position" "$T/e" "cut.json:2:1:"
run_status 2 "$T/o" "$T/e" "$SPECTAP" check --whole --spec $D/Relay.tla
check_contains "states: --whole without --states or --map is a usage error" "$T/e" "--whole checks a trace as one behaviour"

# A spectap trace as one behaviour (--whole --map): the mapping gives count, log is hidden. The
# window check fails b's 1 -> 3 as an Inc (it is a Jump); as a behaviour of Next it passes.
C=tests/replay/counter
"$SPECTAP" import --from json $C/counter.ndjson -o "$T/counter.spt" >/dev/null
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --whole --spec $C/Counter.tla --map $C/CounterMap.tla "$T/counter.spt"
check_contains "whole trace: accepted as one behaviour" "$T/o" "accepted: a behaviour goes through all 7 states"
# a's count going 2 -> 1 is no step of the spec.
sed '5s/"value":3/"value":1/' $C/counter.ndjson >"$T/down.ndjson"
"$SPECTAP" import --from json "$T/down.ndjson" -o "$T/down.spt" >/dev/null
run_status 12 "$T/j" "$T/e" "$SPECTAP" check --whole --spec $C/Counter.tla --map $C/CounterMap.tla "$T/down.spt" --json
check_eq "whole trace: rejected at the 5th state, count differs" "rejected 5 count" \
	"$(jq -r '.trace_spec | "\(.verdict) \(.line) \(.differs[0].var)"' "$T/j")"

# etcd-io/raft's own trace validation on its example log (the corpus), unchanged, when a
# checkout of its tla/ directory is given (ETCD_RAFT_TLA) and the corpus is beside this clone.
if [ -z "${ETCD_RAFT_TLA:-}" ] || [ ! -f "${ETCD_RAFT_TLA:-}/Traceetcdraft.tla" ]; then
	echo "SKIP: etcd-io/raft's Traceetcdraft.tla: set ETCD_RAFT_TLA to a checkout's tla/ directory"
elif have_corpus "etcd-io/raft's trace validation"; then
	corpus=$(cd "$(dirname "$CORPUS")" && pwd)/$(basename "$CORPUS")
	sed '2444s/"state":{"term":2,/"state":{"term":3,/' "$corpus" >"$T/term3.ndjson"
	spectap=$(cd "$(dirname "$SPECTAP")" && pwd)/$(basename "$SPECTAP")
	(cd "$ETCD_RAFT_TLA" && MAX_TRACE=2600 JSON=$T/term3.ndjson "$spectap" check --trace-spec Traceetcdraft.tla \
		--cfg Traceetcdraft.cfg --json --quiet) >"$T/j" 2>"$T/e"
	check_eq "etcd: line 2444's term 2 -> 3 is rejected there (as TLC)" "rejected 2444" \
		"$(jq -r '.trace_spec | "\(.verdict) \(.line)"' "$T/j")"
	check_eq "etcd: the closest miss is the term" "2 3" "$(jq -r '.trace_spec.closest | "\(.left) \(.right)"' "$T/j")"
	sed '2444d' "$corpus" >"$T/del.ndjson"
	(cd "$ETCD_RAFT_TLA" && MAX_TRACE=2600 JSON=$T/del.ndjson "$spectap" check --trace-spec Traceetcdraft.tla \
		--cfg Traceetcdraft.cfg --json --quiet) >"$T/j" 2>"$T/e"
	check_eq "etcd: line 2444 (a Commit) deleted is accepted (as TLC)" accepted "$(jq -r .trace_spec.verdict "$T/j")"
fi
finish
