---- MODULE Elect ----
(* A coarse leader election: each server proposes a leader, and once it has heard from a   *)
(* quorum it decides to lead (when it proposed itself) or to follow. Two steps per server   *)
(* where ZooKeeper's Fast Leader Election takes dozens of events.                            *)
EXTENDS Integers, FiniteSets
CONSTANT Server
VARIABLES role, vote, heard

Init == /\ role = [s \in Server |-> "LOOKING"]
        /\ vote = [s \in Server |-> 0]
        /\ heard = [s \in Server |-> {}]

\* s proposes l: itself at first, later the highest id it has heard of.
Propose(s, l) == /\ role[s] = "LOOKING"
                 /\ l >= vote[s]
                 /\ vote' = [vote EXCEPT ![s] = l]
                 /\ UNCHANGED <<role, heard>>

\* s hears a vote from t.
Hear(s, t) == /\ role[s] = "LOOKING"
              /\ heard' = [heard EXCEPT ![s] = @ \cup {t}]
              /\ UNCHANGED <<role, vote>>

\* With a quorum heard, s leads if it proposed itself, else follows.
Decide(s) == /\ role[s] = "LOOKING"
             /\ 2 * Cardinality(heard[s]) > Cardinality(Server)
             /\ role' = [role EXCEPT ![s] = IF vote[s] = s THEN "LEADING" ELSE "FOLLOWING"]
             /\ UNCHANGED <<vote, heard>>

Next == \E s \in Server : Decide(s) \/ \E t \in Server : Propose(s, t) \/ Hear(s, t)
====
