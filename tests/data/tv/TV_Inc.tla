---- MODULE TV_Inc ----
\* A per-action wrapper in the style of SysMoBench's tv-eval skill (written for spectap's tests):
\* the window IOEnv.WINDOW_INDEX names, Init its pre-state, one step of Inc, and an invariant the
\* post-state violates.
EXTENDS Naturals, TLC, Json, IOUtils
CONSTANT Limit
VARIABLES x, resets, step
C == INSTANCE Counter
Windows == ndJsonDeserialize("windows_Inc.ndjson")
w == Windows[atoi(IOEnv.WINDOW_INDEX)]
Init == x = w.pre.x /\ resets = w.pre.resets /\ step = 0
Next == step = 0 /\ C!Inc /\ step' = 1
PostReached == step = 1 /\ x = w.post.x /\ resets = w.post.resets
NeverPost == ~PostReached
\* The same file read both ways gives both readings (check --tv keeps what files it read).
ASSUME JsonDeserialize("first.json") = ndJsonDeserialize("first.json")[1]
====
