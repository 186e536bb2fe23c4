#!/bin/sh
# CHOOSE picks the element TLC picks. TLC orders integers by value and strings, model values and
# record fields by the token each text got when TLC first read it: the .cfg's text first, then
# every name of the modules (root first), then their string literals, then texts met while
# running. Each expected value below is derived by hand from that rule and TLC's compareTo
# (sets and functions: size first; functions: the domain, then the values), written beside it.
. tests/cli/lib.sh

cat >"$T/Order.tla" <<'EOF'
---- MODULE Order ----
EXTENDS Integers, Sequences, SequencesExt, TLC, FiniteSets
CONSTANTS Srv, Other
VARIABLE x
Show(tag, v) == PrintT(<<tag, v>>)
ASSUME Show("str", CHOOSE s \in {"zeta", "alpha", "mid"} : TRUE)
ASSUME Show("str-name", CHOOSE s \in {"alpha", "Other"} : TRUE)
ASSUME Show("model", CHOOSE s \in Srv : TRUE)
ASSUME Show("model-str", CHOOSE s \in {"s1", "s3"} : TRUE)
ASSUME Show("model-first", CHOOSE v \in {1, 2} \cup {Other} : TRUE)
ASSUME Show("int", CHOOSE i \in {3, -1, 2} : TRUE)
ASSUME Show("rec", CHOOSE r \in {[kb |-> 1, ka |-> 2], [kb |-> 2, ka |-> 1]} : TRUE)
ASSUME Show("rec-domain", CHOOSE r \in {[ka |-> 1], [kb |-> 1]} : TRUE)
ASSUME Show("tuple", CHOOSE t \in {<<2, 1>>, <<1, 3>>, <<1>>} : TRUE)
ASSUME Show("set", CHOOSE t \in {{"mid"}, {"zeta"}, {"alpha", "zeta"}} : TRUE)
ASSUME Show("set-elems", CHOOSE t \in {{"mid", "alpha"}, {"zeta", "mid"}} : TRUE)
ASSUME Show("pred", CHOOSE s \in {"zeta", "alpha", "mid"} : s # "zeta")
ASSUME Show("seq", SetToSeq({"mid", "alpha", "zeta"}))
ASSUME Show("numeral", CHOOSE s \in {ToString(20), ToString(10)} : TRUE)
ASSUME Show("runtime", CHOOSE s \in {ToString(<<2>>), "mid", ToString(<<1>>)} : TRUE)
Init == x = 0
Next == x' = x
====
EOF
cat >"$T/Order.cfg" <<'EOF'
CONSTANTS Srv = {s3, s1, s2}
Other = Other
INIT Init
NEXT Next
EOF
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Order.tla" --cfg "$T/Order.cfg"
shows() { check_contains "$1" "$T/e" "$2"; } # PrintT writes to stderr
# the strings' first reading is their literal: zeta, alpha, mid in the text's order
shows "strings by first reading, not bytewise" '<<"str", "zeta">>'
# Other is a name of the cfg (read first): its token precedes alpha's
shows "a string named in the cfg" '<<"str-name", "Other">>'
# the cfg lists s3, s1, s2
shows "model values in the cfg's order" '<<"model", s3>>'
# the strings "s1", "s3" share the cfg's tokens of the model values s1, s3 (s3 first)
shows "a string and a model value of one text share a token" '<<"model-str", "s3">>'
# an untyped model value precedes every other value
shows "a model value before integers" '<<"model-first", Other>>'
shows "integers by value" '<<"int", -1>>'
# the field names kb, ka are read in that order: [kb |-> 1, ka |-> 2] has the smaller values
shows "records: fields in TLC's order, then values" '<<"rec", [ka |-> 2, kb |-> 1]>>'
shows "records: the domain first" '<<"rec-domain", [kb |-> 1]>>'
shows "tuples: length first, then elements" '<<"tuple", <<1>>>>'
shows "sets: size first, then elements in TLC's order" '<<"set", {"zeta"}>>'
# in TLC's order (zeta, alpha, mid) the sets are <<alpha, mid>> and <<zeta, mid>>: the second
shows "sets: elements compared in TLC's order" '<<"set-elems", {"mid", "zeta"}>>'
shows "the first in TLC's order that satisfies the predicate" '<<"pred", "alpha">>'
shows "SetToSeq lists the set in TLC's order" '<<"seq", <<"zeta", "alpha", "mid">>>>'
# the texts "20" and "10" are the numerals' tokens (the parser reads every token): 20 first
shows "a string with a numeral's text" '<<"numeral", "20">>'
# "<<1>>" and "<<2>>" are made while running: after every text of the spec, bytewise
shows "texts made while running come after the spec's" '<<"runtime", "mid">>'

# TLC cannot order a set mixing kinds: CHOOSE over it is an error, as in TLC
cat >"$T/Mixed.tla" <<'EOF'
---- MODULE Mixed ----
EXTENDS Integers
VARIABLE x
Init == x = CHOOSE v \in {1, "a"} : TRUE
Next == x' = x
====
EOF
printf 'INIT Init\nNEXT Next\n' >"$T/Mixed.cfg"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/Mixed.tla" --cfg "$T/Mixed.cfg"
check_contains "a mixed set: TLC cannot order it" "$T/o" "TLC cannot compare a string with an integer"
check_contains "a mixed set: the position" "$T/o" "Mixed.tla:4:26:"

# an unbounded CHOOSE loads, and a cfg value overrides the definition it is in
cat >"$T/None.tla" <<'EOF'
---- MODULE None ----
EXTENDS Integers
CONSTANT Server
VARIABLE leader
NoLeader == CHOOSE p : p \notin Server
Init == leader = NoLeader
Next == leader' \in Server
Inv == leader = NoLeader \/ leader \in Server
====
EOF
printf 'CONSTANTS Server = {a1, a2}\nNoLeader = NoLeader\nINIT Init\nNEXT Next\nINVARIANT Inv\n' >"$T/None.cfg"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --model "$T/None.tla" --cfg "$T/None.cfg"
check_contains "unbounded CHOOSE overridden by a model value" "$T/o" "3 distinct states found"
printf 'CONSTANTS Server = {a1, a2}\nINIT Init\nNEXT Next\nINVARIANT Inv\n' >"$T/None2.cfg"
run_status 1 "$T/o" "$T/e" "$SPECTAP" check --model "$T/None.tla" --cfg "$T/None2.cfg"
check_contains "unbounded CHOOSE evaluated: an error naming it" "$T/o" "None.tla:5:13: evaluating the initial predicate: CHOOSE p : P without a set"
check_contains "unbounded CHOOSE evaluated: what to do" "$T/o" "give the definition it is in a value in the .cfg"
cat >"$T/MC.tla" <<'EOF'
---- MODULE MC ----
EXTENDS None
FirstServer == CHOOSE s \in Server : TRUE
====
EOF
printf 'CONSTANTS Server = {a2, a1}\nNoLeader <- FirstServer\nINIT Init\nNEXT Next\nINVARIANT Inv\n' >"$T/MC.cfg"
run_status 0 "$T/o" "$T/e" "$SPECTAP" check --model "$T/MC.tla" --cfg "$T/MC.cfg"
check_contains "Def <- Other of an MC module" "$T/o" "2 distinct states found"
finish
