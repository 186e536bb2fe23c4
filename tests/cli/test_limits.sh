#!/bin/sh
# The front end and the evaluator at their limits: what the TLA+ grammar's scanner cannot hold is
# refused by position before it parses (deep /\ lists, bullets past column 32767), a recursive
# action stops at the stack's limit with a message, and depths below the limits still check.
. tests/cli/lib.sh

# spec NAME BODY: a module with one variable, Init, Next and the body's definitions.
spec() {
	printf -- '---- MODULE %s ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n%s\n====\n' "$1" "$2" >"$T/$1.tla"
	printf 'INIT Init\nNEXT Next\nINVARIANT Inv\n' >"$T/$1.cfg"
}
# nested N: an invariant of /\ lists nested N deep (each list's second item opens the next).
nested() {
	awk -v n="$1" 'BEGIN { print "Inv =="; for (d = 0; d < n; d++) { p = sprintf("%*s", 2 + 3 * d, ""); print p "/\\ TRUE"; printf "%s/\\ ", p }; print "TRUE" }'
}

spec Deep "Next == x' = x
$(nested 400)"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Deep.tla" --cfg "$T/Deep.cfg"
check_contains "lists nested 400 deep: refused at the 301st" "$T/e" "Deep.tla:307:"
check_contains "lists nested 400 deep: says why and what to do" "$T/e" "nested more than 300 deep, which the TLA+ grammar cannot hold"

spec Fine "Next == x' = x
$(nested 250)"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Fine.tla" --cfg "$T/Fine.cfg"
check_contains "lists nested 250 deep: checked" "$T/o" "No error has been found"

# A malformed cfg is an error with its line, never a crash: an unknown keyword, an unclosed brace,
# 10,000 nested braces (each once freed twice: the loader's failure path and the checker's).
spec Cfg "Next == x' = x
Inv == TRUE"
printf 'INIT Init\nNEXT Next\nBOGUS Inv\n' >"$T/bad1.cfg"
printf 'INIT Init\nNEXT Next\nCONSTANT S = {1, 2\n' >"$T/bad2.cfg"
awk 'BEGIN { printf "INIT Init\nNEXT Next\nCONSTANT S = "; for (i = 0; i < 10000; i++) printf "{"; print "" }' >"$T/bad3.cfg"
for k in 1 2 3; do
	run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Cfg.tla" --cfg "$T/bad$k.cfg"
	check "bad cfg $k: an error naming the cfg and its line" grep -q "bad$k.cfg:[0-9]" "$T/e"
done

# 100,000 definitions each calling the next: the resolver's recursion groups are found without
# recursing (a chain of about 23,000 overflowed the stack). The release binary when there is one
# beside the sanitized one (ASan takes 20 s over this module, the release build half a second).
rel=$(dirname "$SPECTAP")/../spectap
[ -x "$rel" ] || rel=$SPECTAP
awk 'BEGIN { n = 100000; print "---- MODULE Chain ----\nEXTENDS Naturals\nVARIABLE x"; print "D" n " == 0";
	for (i = n - 1; i >= 1; i--) print "D" i " == D" (i + 1) " + 1";
	print "Init == x = 0\nNext == x'"'"' = x\nInv == TRUE\n====" }' >"$T/Chain.tla"
printf 'INIT Init\nNEXT Next\nINVARIANT Inv\n' >"$T/Chain.cfg"
run_status 0 "$T/o" "$T/e" "$rel" check --model "$T/Chain.tla" --cfg "$T/Chain.cfg"
check_contains "100,000 chained definitions: loaded and checked" "$T/o" "No error has been found"

pad=$(awk 'BEGIN { printf "%*s", 33000, "" }')
spec Wide "Next == x' = x
Inv == $pad/\\ TRUE
       $pad/\\ TRUE"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Wide.tla" --cfg "$T/Wide.cfg"
check_contains "a bullet past column 32767: refused at it" "$T/e" "Wide.tla:6:33008: a /\\ or \\/ bullet past column 32767"

spec Rec 'RECURSIVE Act(_)
Act(n) == /\ x'"'"' = 1
          /\ \E i \in {n} : Act(i)
Next == Act(0)
Inv == TRUE'
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Rec.tla" --cfg "$T/Rec.cfg"
# Where the stack runs out depends on the frames' sizes: somewhere in Act's body (lines 6-7).
check "a recursive action: stopped with its position in Act" grep -Eq "Rec.tla:[67]:[0-9]+: evaluating" "$T/o"
check_contains "a recursive action: says why" "$T/o" "more than the stack allows (a RECURSIVE action calling itself?)"
# Limits a user sets: a window's evaluation steps (that window's verdict is an error, the next
# window goes on), the time and the memory (each stops the check with an error naming where).
R=tests/replay/raft
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows $R/windows/Timeout.ndjson --action Timeout --max-steps 5
check_contains "--max-steps: the window's verdict names the limit" "$T/o" \
	'window "Timeout-1" (line 1) ERROR: tests/replay/raft/Raft.tla:56:31: Timeout: evaluation budget of 5 steps exhausted (--max-steps)'
check_contains "--max-steps: every window was still checked" "$T/o" "30 windows, 0 passed (0.0%), score 0; 30 could not be evaluated"
check_contains "--max-steps: the exit status is explained" "$T/e" "30 windows could not be evaluated"
run_status 2 "$T/o" "$T/e" "$SPECTAP" check --model $R/Raft.tla --max-steps 5
check_contains "--max-steps with --model: refused, not ignored" "$T/e" "--max-steps bounds one window's evaluation"
# The limit is per window and per event the mapping reads, never the trace's sum: 400 events that
# open no window, a few steps each, are read under a limit of 200, with and without workers.
C=tests/replay/counter
{
	echo '{"header":{"system":"counter","nodes":["a"],"capture_method":"test"}}'
	i=1
	while [ $i -le 400 ]; do
		echo '{"event":{"node":"a","source":"t","seq":'$i',"ts_ns":'$i',"lamport":'$i',"kind":"noop","state":{"value":0}}}'
		i=$((i + 1))
	done
} >"$T/noop.ndjson"
run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$T/noop.ndjson" -o "$T/noop.spt"
for jobs in 1 2; do
	run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $C/Counter.tla --map $C/CounterMap.tla "$T/noop.spt" --allow-empty \
		--max-steps 200 --jobs $jobs
	check_contains "--max-steps 200 --jobs $jobs: 400 events of a few steps each are read" "$T/o" "action Inc: no windows"
done
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --spec $R/Raft.tla --windows $R/windows/Timeout.ndjson --action Timeout
spec Slow "Next == x' = x
Inv == \A a \in 1..100000 : \A b \in 1..100000 : a + b > 0"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Slow.tla" --cfg "$T/Slow.cfg" --timeout 1
check_contains "--timeout: stopped where it was" "$T/o" "Slow.tla:6:"
check_contains "--timeout: says why" "$T/o" "the time limit (--timeout) was reached"
# The grammar's scanner is quadratic in a line's length: --timeout stops the reading of a module
# too (80,000 characters on one line take about 20 s to read).
awk 'BEGIN { printf "---- MODULE LongLine ----\nEXTENDS Naturals\nX == 1"; for (i = 0; i < 40000; i++) printf "+1"; printf "\n====\n" }' >"$T/LongLine.tla"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/LongLine.tla" --timeout 1
check_contains "--timeout while reading a module: says why, and which line is long" "$T/e" \
	"the time limit (--timeout) was reached while reading this module (its longest line has 80006 characters"
spec Big "Next == x' = x
Inv == LET f == [i \in 1..2000 |-> [j \in 1..2000 |-> i + j]] IN f[1][1] = 2"
# An address-space limit and AddressSanitizer's shadow memory exclude each other: this one runs
# the build's plain binary.
run_status 1 "$T/o" "$T/e" "${BUILD:-build}/spectap" check --model "$T/Big.tla" --cfg "$T/Big.cfg" --max-memory 150
check_contains "--max-memory: out of memory where it was" "$T/o" "evaluating the invariant Inv: out of memory"
# In a window check, running out of memory is that window's verdict (an error), as --max-steps
# is: what it built goes with it, and the next window is checked.
printf -- '---- MODULE Mem ----\nEXTENDS Naturals, FiniteSets\nVARIABLE x\nInit == x = 0\n%s\n%s\n====\n' \
	'Step(n) == x'"'"' = Cardinality({<<a, b>> : a \in 1..n, b \in 1..n})' 'Next == \E n \in {10, 3000} : Step(n)' >"$T/Mem.tla"
printf '{"pre_state":{"x":0},"post_state":{"x":100}}\n{"pre_state":{"x":0},"post_state":{"x":9000000}}\n{"pre_state":{"x":0},"post_state":{"x":100}}\n' \
	>"$T/mem.ndjson"
run_status 1 "$T/o" "$T/e" "${BUILD:-build}/spectap" check --spec "$T/Mem.tla" --windows "$T/mem.ndjson" --action Step \
	--max-memory 300
check_contains "--max-memory in a window: that window's error" "$T/o" "window 2 (line 2) ERROR: $T/Mem.tla:5:30: Step: out of memory"
check_contains "--max-memory in a window: the others are checked" "$T/o" "3 windows, 2 passed (66.7%), score 0; 1 could not be evaluated"
# Without --max-memory the limit is 90% of the memory available at the start (past it the
# kernel's OOM killer would end the check without a word); 0 lifts it.
run_status 0 "$T/o" "$T/e" "${BUILD:-build}/spectap" check --spec $R/Raft.tla --windows $R/windows/Timeout.ndjson \
	--action Timeout --max-memory 0
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --help
check_contains "--max-memory: the default is said" "$T/o" "default: 90% of the memory available"
finish
