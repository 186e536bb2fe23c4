---- MODULE OverBase ----
\* Extended and instantiated by OverRoot, whose cfg overrides Zero.
EXTENDS Naturals
VARIABLE x
Zero == 0
Start == x = Zero
====
