---- MODULE OverRoot ----
\* A cfg override as TLC applies it (etcd-io/raft's trace spec relies on it): Zero <- Seven
\* replaces the Zero OverBase's bodies name, in the root and in B (B!Start is x = 7), but B!Zero
\* itself is B's own copy (0), as CheckpointCoordination's LET instance needs. One state.
EXTENDS OverBase
B == INSTANCE OverBase
Seven == 7
Init == x = 7
Next == UNCHANGED x
Inv == Start /\ B!Start /\ B!Zero = 0
====
