#!/bin/sh
# spectap check on tests/replay/raft: the spec passes every window of every action, each seeded
# mutant fails some window with the differing variable named, the JSON shape, and the errors.
. tests/cli/lib.sh

R=tests/replay/raft
W=$R/windows
CFG=$R/Raft.cfg
ACTIONS="Timeout RequestVote HandleRequestVoteRequest HandleRequestVoteResponse BecomeLeader
ClientRequest AppendEntries HandleAppendEntriesRequest HandleAppendEntriesResponse AdvanceCommitIndex"

# The correct spec passes every window of every action.
for a in $ACTIONS; do
	run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows $W/$a.ndjson --action $a --json
	n=$(jq -r ".actions.$a.windows" "$T/o")
	check "$a has 10-50 windows ($n)" [ "$n" -ge 10 -a "$n" -le 50 ]
	check_eq "$a: all windows pass" "$n/$n/1/0/1" \
		"$(jq -r "\"\(.actions.$a.windows)/\(.actions.$a.passed)/\(.actions.$a.score)/\(.actions.$a.failures | length)/\(.score)\"" "$T/o")"
done

# --json shape.
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows $W/Timeout.ndjson --action Timeout --json
check_eq "json: one action, windows/passed/score/failures" "Timeout true true true true true" \
	"$(jq -r '[(.actions | keys[0]), (.actions.Timeout | has("windows") and has("passed") and has("score")),
		   (.actions.Timeout.failures | type == "array"), (.score | type == "number"),
		   (.actions.Timeout.windows | type == "number"), (.actions.Timeout.passed | type == "number")] | map(tostring) | join(" ")' "$T/o")"

# Each mutant fails at least one window, and the first diagnosis names the variable.
mutant() { # mutant NAME ACTION VARIABLE
	run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/mutants/$1.tla --cfg $CFG --windows $W/$2.ndjson --action $2 --json
	check "$1 fails some window of $2" [ "$(jq -r ".actions.$2.passed < .actions.$2.windows" "$T/o")" = true ]
	check_eq "$1: score 0" "0" "$(jq -r ".actions.$2.score" "$T/o")"
	check_eq "$1: the closest successor differs in $3" "true" \
		"$(jq -r ".actions.$2.failures[0].differs | index(\"$3\") != null" "$T/o")"
	check_eq "$1: the action is enabled" "true" "$(jq -r ".actions.$2.failures[0].enabled" "$T/o")"
}
mutant RaftDroppedGuard HandleRequestVoteRequest votedFor
mutant RaftFlippedGuard HandleRequestVoteResponse votesGranted
mutant RaftWrongAssign Timeout votedFor
mutant RaftSetVotes Timeout votesGranted
mutant RaftMergedSteps HandleRequestVoteResponse state

# Plain output: the verdict, the closest successor with its parameters and both values.
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/mutants/RaftWrongAssign.tla --cfg $CFG --windows $W/Timeout.ndjson --action Timeout
check_contains "plain: counts" "$T/o" "action Timeout: 30 windows, 0 passed (0.0%), score 0"
check_contains "plain: the closest successor" "$T/o" "no successor of Timeout matches the post-state; the closest (parameters <<\""
check_contains "plain: the differing variable" "$T/o" "votedFor         expected"
check_contains "plain: what was reached" "$T/o" "reached  [s1 |-> "
check_contains "plain: the score line" "$T/o" "score: 0 (mean over 1 action with windows)"
check_eq "plain: nothing on stderr" "" "$(cat "$T/e")"

# A disabled action is a verdict too.
jq -c '.pre_state.state = {"s1":"Leader","s2":"Leader","s3":"Leader"}' $W/Timeout.ndjson | head -n 1 >"$T/dis.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows "$T/dis.ndjson" --action Timeout --json
check_eq "disabled: enabled false, no variable" "false 0" \
	"$(jq -r '"\(.actions.Timeout.failures[0].enabled) \(.actions.Timeout.failures[0].differs | length)"' "$T/o")"

# Windows of other actions are skipped; missing pre variables come from Init.
cat $W/Timeout.ndjson $W/BecomeLeader.ndjson >"$T/mixed.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows "$T/mixed.ndjson" --action BecomeLeader --json
check_eq "other actions skipped" "30 30 30" "$(jq -r '.actions.BecomeLeader | "\(.windows) \(.passed) \(.skipped)"' "$T/o")"
printf '{"window_id":"init","action":"Timeout","pre_state":{"currentTerm":{"s1":0,"s2":0,"s3":0}},"post_state":{"currentTerm":{"s1":0,"s2":1,"s3":0},"votedFor":{"s1":"","s2":"s2","s3":""}}}\n' >"$T/partial.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows "$T/partial.ndjson" --action Timeout --json
check_eq "partial window: the rest from Init" "1" "$(jq -r '.actions.Timeout.passed' "$T/o")"

# A parameter's set may name an outer parameter, whatever the order of the parameters.
cat >"$T/Pair.tla" <<'TLA'
---- MODULE Pair ----
EXTENDS Naturals
VARIABLE x
Init == x = <<0, 0>>
Set(i, j) == x' = <<i, j>>
Next == \E j \in 1..3 : \E i \in (1..3) \ {j} : Set(i, j)
====
TLA
printf '{"pre_state":{"x":[0,0]},"post_state":{"x":[1,2]}}\n{"pre_state":{"x":[0,0]},"post_state":{"x":[2,2]}}\n' >"$T/pair.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/Pair.tla" --windows "$T/pair.ndjson" --action Set --json
check_eq "dependent parameter sets" "2 1 2" \
	"$(jq -r '.actions.Set | "\(.windows) \(.passed) \(.failures[0].line)"' "$T/o")"

# Errors: exit 1, file:line:col.
sed 's/^Quorum(S) == Cardinality(S) \* 2 > Cardinality(Server)/Quorum(S) == Cardinality(S) * * 2/' $R/Raft.tla >"$T/Raft.tla"
cp $CFG "$T/Raft.cfg"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/Raft.tla" --windows $W/Timeout.ndjson --action Timeout
check_contains "syntax error: file:line:col" "$T/e" "$T/Raft.tla:35:31: syntax error"
check_eq "syntax error: no output" "" "$(cat "$T/o")"
# A "(*" in a comment's prose opens a nested comment that never closes: the parser alone could
# only point at the module's first line; the error names where the comment and the "(*" are.
awk 'NR == 3 { print "(* a step of (*raft).Step *)" } { print }' $R/Raft.tla >"$T/Raft.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/Raft.tla" --windows $W/Timeout.ndjson --action Timeout
check_contains "an unclosed nested comment: where it opens and the nested (*" "$T/e" \
	"$T/Raft.tla:3:1: syntax error: the comment opened here is never closed: comments nest, and the \"(*\" at 3:14 opens another"

run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows $W/Timeout.ndjson --action Elect
check_contains "unknown action named" "$T/e" "Elect is not an action (an operator) of module Raft"

head -n 2 $W/Timeout.ndjson >"$T/badjson.ndjson"
sed -n 3p $W/Timeout.ndjson | sed 's/}}$/}/' >>"$T/badjson.ndjson"
col=$(($(sed -n 3p "$T/badjson.ndjson" | wc -c)))
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows "$T/badjson.ndjson" --action Timeout
check_contains "bad JSON: file:line:col" "$T/e" "$T/badjson.ndjson:3:$col:"

printf '{"pre_state":{}}\n' >"$T/nopost.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows "$T/nopost.ndjson" --action Timeout
check_contains "a window without post_state" "$T/e" "nopost.ndjson:1:1: a window needs \"pre_state\" and \"post_state\" objects"

grep -v MaxTerm $CFG >"$T/nomax.cfg"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --cfg "$T/nomax.cfg" --windows $W/Timeout.ndjson --action Timeout
check_contains "missing constant: named, with where it is used" "$T/e" "Raft.tla:57:35: Timeout: the constant MaxTerm has no value (give it in the .cfg)"
# ... and an action that does not use it is fine.
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --cfg "$T/nomax.cfg" --windows $W/BecomeLeader.ndjson --action BecomeLeader --json
check_eq "missing constant unused by the action" "1" "$(jq -r .score "$T/o")"

printf 'CONSTANTS\n  Server = {"s1", "s2", "s3"}\n  Bogus = 3\n' >"$T/bogus.cfg"
# TLC ignores `name = value` for a name the spec lacks; spectap too, with a warning.
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --cfg "$T/bogus.cfg" --windows $W/BecomeLeader.ndjson --action BecomeLeader
check_contains "cfg constant not in the spec" "$T/e" "bogus.cfg:3: Bogus is neither a CONSTANT nor a definition of the spec: ignored, as TLC does"
printf 'CONSTANTS\n  Server = {"s1", "s2", "s3"}\n  Bogus <- Timeout\n' >"$T/bogus2.cfg"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --cfg "$T/bogus2.cfg" --windows $W/Timeout.ndjson --action Timeout
check_contains "cfg substitution of a name not in the spec" "$T/e" "bogus2.cfg:3: Bogus <- Timeout: the identifier Bogus does not appear in the specification"

printf '{"pre_state":{"term":1},"post_state":{}}\n' >"$T/var.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows "$T/var.ndjson" --action Timeout
check_contains "unknown variable in a window" "$T/e" "pre_state has term, which is not a variable of the spec"

# Temporal formulas may be defined (every real spec has Spec == Init /\ [][Next]_vars): checking
# steps works; evaluating one is an error naming the operator and its position.
cat >"$T/Temporal.tla" <<'TLA'
---- MODULE Temporal ----
EXTENDS Naturals
VARIABLE x
vars == <<x>>
Init == x = 0
Inc == x' = x + 1
Next == Inc
Spec == Init /\ [][Next]_vars /\ WF_vars(Next)
Live == <>(x = 3)
Leads == (x = 1) ~> (x = 2)
IncIfLive == Live /\ Inc
====
TLA
printf '%s\n' '{"pre_state":{"x":1},"post_state":{"x":2}}' >"$T/inc.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/Temporal.tla" --windows "$T/inc.ndjson" --action Inc --json
check_eq "a spec defining temporal formulas checks its steps" 1 "$(jq .actions.Inc.passed "$T/o")"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec "$T/Temporal.tla" --windows "$T/inc.ndjson" --action IncIfLive
check_contains "evaluating <> names it and where" "$T/e" "Temporal.tla:9:9: IncIfLive: the temporal operator <> (eventually) is not supported"

finish
