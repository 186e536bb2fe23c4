---- MODULE Counter ----
\* A counter that counts up to Limit, and a reset that counts the resets: the spec the wrapper
\* TV_Inc.tla checks windows of Inc against (tests/cli/test_tv.sh).
EXTENDS Naturals
CONSTANT Limit
VARIABLES x, resets
Inc == x < Limit /\ x' = x + 1 /\ UNCHANGED resets
Reset == x' = 0 /\ resets' = resets + 1
Next == Inc \/ Reset
====
