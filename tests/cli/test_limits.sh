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
check_contains "a recursive action: stopped with its position" "$T/o" "Rec.tla:7:"
check_contains "a recursive action: says why" "$T/o" "more than the stack allows (a RECURSIVE action calling itself?)"
finish
