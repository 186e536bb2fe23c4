#!/bin/sh
# check --tv: the benchmark's per-action wrapper modules (SysMoBench's tv-eval skill: a module
# that reads its windows with ndJsonDeserialize, picks the one IOEnv.WINDOW_INDEX names, starts
# in its pre-state, takes one step of the action and has an invariant the post-state violates)
# run as they are, one search per window as TLC -dfid 2 -deadlock makes it; a window passes when
# the invariant is violated (the skill counts TLC's exit 12). tests/data/tv is such a wrapper of
# our own, with windows that pass, fail, are not enabled, or cannot be evaluated.
. tests/cli/lib.sh
TV=tests/data/tv

run_status 1 "$T/o" "$T/e" "$SPECTAP" check --tv "$TV/TV_Inc.tla" --json --tlc-results "$T/tlc.json"
check_eq "verdicts: windows passed failed errors" "5 2 2 1" \
	"$(jq -r '.actions.Inc | "\(.windows) \(.passed) \(.failed) \(.errors)"' "$T/o")"
check_eq "failures: the window's index and line (an empty line is no window)" "3:3 4:5 5:6" \
	"$(jq -r '[.actions.Inc.failures[] | "\(.window_id):\(.line)"] | join(" ")' "$T/o")"
check_eq "a window whose action is not enabled" "the post-state is not reached: no step is enabled in the pre-state" \
	"$(jq -r '.actions.Inc.failures[0].reason' "$T/o")"
check_eq "a step that reaches another state" "failed" "$(jq -r '.actions.Inc.failures[1].verdict' "$T/o")"
check_contains "an evaluation error names where" "$T/o" 'Counter.tla:7:8: evaluating the next-state action: < applies to integers, not \"one\"'
check_eq "tlc_results.json" '{"Inc":{"passes":2,"total":5,"rate":0.4,"failures":2,"errors":1}}' "$(jq -c . "$T/tlc.json")"

# From another directory: the module's relative file names are the module directory's, as the
# skill runs TLC there; the windows file and cfg default to the ones beside the module.
mkdir "$T/elsewhere"
here=$(pwd)
case "$SPECTAP" in /*) bin=$SPECTAP ;; *) bin=$here/$SPECTAP ;; esac
(cd "$T/elsewhere" && "$bin" check --tv "$here/$TV/TV_Inc.tla" --json >"$T/o2" 2>"$T/e2")
check_eq "the same verdicts from elsewhere" "5 2" "$(jq -r '.actions.Inc | "\(.windows) \(.passed)"' "$T/o2")"

# Only the windows that pass: exit 0.
head -n 2 "$TV/windows_Inc.ndjson" >"$T/two.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --tv "$TV/TV_Inc.tla" --windows "$T/two.ndjson" --json
check_eq "a windows file given: its count" "2 2" "$(jq -r '.actions.Inc | "\(.windows) \(.passed)"' "$T/o")"

# Errors: no windows file, a wrapper that does not load, options that do not go with --tv.
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --tv "$TV/TV_Inc.tla" --windows "$T/none.ndjson"
check_contains "a missing windows file is named" "$T/e" "cannot read the windows $T/none.ndjson"
printf -- '---- MODULE TV_Bad ----\nVARIABLE x\nInit == x = Undefined\nNext == x'"'"' = x\n====\n' >"$T/TV_Bad.tla"
printf 'INIT Init\nNEXT Next\n' >"$T/TV_Bad.cfg"
printf '{}\n' >"$T/windows_Bad.ndjson"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --tv "$T/TV_Bad.tla"
check_contains "a wrapper that does not load: the error and the window" "$T/e" "Undefined"
run_status 2 "$T/o" "$T/e" "$SPECTAP" check --tv "$TV/TV_Inc.tla" --spec "$TV/Counter.tla"
check_contains "--tv with --spec: usage" "$T/e" "--tv TV_A.tla takes"
finish
