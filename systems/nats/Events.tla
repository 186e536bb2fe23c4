---- MODULE Events ----
(***************************************************************************)
(* NATS JetStream's meta group as events: what each probe hit of           *)
(* system.yaml means (docs/adding-a-system.md). Shape(hit, acc) is folded  *)
(* over the hits in time order; acc keeps what one hit cannot say: the     *)
(* nodes' Raft ids, the reply inboxes, each node's log of terms and last   *)
(* state, and the step each node is in.                                     *)
(*                                                                         *)
(* A step is a Begin event (kind: the step, with the message it handles)  *)
(* and an End event (the node's state after it), with the messages it     *)
(* sends between them. Steps of one node run under its lock, one at a     *)
(* time, but two goroutines may both have entered theirs (one waiting for *)
(* the lock): a step's Begin is written when its goroutine shows it runs  *)
(* (its first send, or its end), so the events follow the lock's order.   *)
(* A state change seen outside any step (the candidate loop stepping down *)
(* on a vote response's higher term, a restart) is an event of its own,   *)
(* Unobserved, so that no window hides it.                                 *)
(***************************************************************************)
EXTENDS Naturals, Sequences, TLC

Group == "_meta_"

Roles == <<"Leader", "Candidate", "Observer", "Closed">>
Role(s) == IF s = 0 THEN "Follower" ELSE IF s <= 4 THEN Roles[s] ELSE "Unknown"

\* The little-endian integer in bytes i+1..i+k of b.
RECURSIVE LE(_, _, _)
LE(b, i, k) == IF k = 0 THEN 0 ELSE b[i + 1] + 256 * LE(b, i + 1, k - 1)

\* A Raft id (8 bytes) as the node that has it; "" for none; the bytes when not learned yet.
Name(acc, id) == IF id = <<>> THEN "" ELSE IF id \in DOMAIN acc.ids THEN acc.ids[id] ELSE "?"

Meta(hit) == "group" \in DOMAIN hit.r /\ hit.r.group = Group

\* A node's log of terms after it reports its last entry (pterm, pindex): appended to, cut
\* back, or (after a snapshot or a catchup) jumped ahead, the terms it did not show unknown (0).
NewLog(log, pterm, pindex) ==
    IF pindex = 0 THEN <<>>
    ELSE IF pindex = Len(log) /\ log[pindex] = pterm THEN log
    ELSE IF pindex <= Len(log) + 1 THEN Append(SubSeq(log, 1, pindex - 1), pterm)
    ELSE log \o [k \in 1..(pindex - 1 - Len(log)) |-> 0] \o <<pterm>>

\* The node's state from a hit's reads (a read the probe lacks keeps its last value).
StateOf(acc, hit) ==
    LET r == hit.r
        last == acc.st[hit.node]
    IN [term |-> r.term,
        vote |-> IF "vote" \in DOMAIN r THEN Name(acc, r.vote) ELSE last.vote,
        role |-> Role(r.state),
        leader |-> IF "leader" \in DOMAIN r THEN Name(acc, r.leader) ELSE last.leader,
        commit |-> r.commit,
        log |-> NewLog(last.log, r.pterm, r.pindex),
        \* the catchup it is in: <<the term, the index it waits for>> (its fields unread without one)
        catchup |-> IF r.catchup = 0 \/ ~({"cterm", "cindex"} \subseteq DOMAIN r) THEN <<>> ELSE <<r.cterm, r.cindex>>]

NoState == [term |-> 0, vote |-> "", role |-> "Follower", leader |-> "", commit |-> 0, log |-> <<>>, catchup |-> <<>>]

ShapeInit == [ids |-> <<>>, inbox |-> <<>>, st |-> <<>>, ends |-> <<>>, steps |-> <<>>, catching |-> <<>>]

AEFields(b) == [term |-> LE(b, 8, 8), commit |-> LE(b, 16, 8), prevTerm |-> LE(b, 24, 8), prevIndex |-> LE(b, 32, 8),
                entries |-> LE(b, 40, 2)]

\* acc with the node's id learned and its entry in st and open made.
Learn(acc, hit) ==
    LET n == hit.node
        a1 == IF "id" \in DOMAIN hit.r /\ hit.r.id # <<>> /\ hit.r.id \notin DOMAIN acc.ids
              THEN [acc EXCEPT !.ids = @ @@ (hit.r.id :> n)] ELSE acc
    IN IF n \in DOMAIN a1.st THEN a1
       ELSE [a1 EXCEPT !.st = @ @@ (n :> NoState), !.ends = @ @@ (n :> 0)]

Ev(kind, args) == [kind |-> kind, args |-> args]
EvState(kind, st) == [kind |-> kind, state |-> st]
EvMsg(kind, args, m) == [kind |-> kind, args |-> args, msg |-> m]
Msg(dir, from, to, type, fields) == [dir |-> dir, from |-> from, to |-> to, type |-> type, fields |-> fields]

(***************************************************************************)
(* The steps, by the probe at their entry.                                  *)
(***************************************************************************)
Steps == [candidate |-> "BecomeCandidate", request_vote |-> "RequestVote",
          vote_request |-> "HandleVoteRequest", leader |-> "BecomeLeader",
          follower |-> "BecomeFollower", append_send |-> "SendAppendEntries",
          append_entry |-> "HandleAppendEntries", append_response |-> "HandleAppendEntriesResponse"]
Ends == {"candidate_end", "request_vote_end", "vote_request_end", "leader_end", "follower_end",
         "append_send_end", "append_entry_end", "append_response_end"}

\* What a step's Begin event says: its inputs, and the message it handles.
Begin(acc, hit) ==
    LET r == hit.r
        n == hit.node
    IN CASE hit.probe = "vote_request" ->
              LET c == Name(acc, r.vr_candidate)
                  f == [term |-> r.vr_term, lastTerm |-> r.vr_last_term, lastIndex |-> r.vr_last_index,
                        candidate |-> c]
              IN EvMsg("HandleVoteRequest", [from |-> c], Msg("recv", c, n, "VoteRequest", f))
         [] hit.probe = "append_entry" /\ r.sub # 0 /\ r.sub = r.aesub ->
              LET l == Name(acc, r.ae_leader)
                  f == [term |-> r.ae_term, commit |-> r.ae_commit, prevTerm |-> r.ae_pterm,
                        prevIndex |-> r.ae_pindex, entries |-> r.ae_entries]
              IN EvMsg("HandleAppendEntries", [from |-> l], Msg("recv", l, n, "AppendEntries", f))
         [] hit.probe = "append_entry" /\ r.sub # 0 /\ r.sub # r.aesub /\ n \in DOMAIN acc.catching ->
              \* an entry the leader sends to the catchup inbox this node named (stored entries: the
              \* leader field is whoever appended them)
              LET l == acc.catching[n]
                  f == [term |-> r.ae_term, commit |-> r.ae_commit, prevTerm |-> r.ae_pterm,
                        prevIndex |-> r.ae_pindex, entries |-> r.ae_entries]
              IN EvMsg("HandleCatchup", [from |-> l], Msg("recv", l, n, "CatchupEntries", f))
         [] hit.probe = "append_entry" ->
              \* the log's replay at a restart (or a catchup entry of an inbox not seen)
              Ev(IF r.sub = 0 THEN "ReplayEntry" ELSE "HandleUnknownCatchup",
                 [term |-> r.ae_term, prevTerm |-> r.ae_pterm, prevIndex |-> r.ae_pindex, entries |-> r.ae_entries])
         [] hit.probe = "append_response" ->
              LET p == Name(acc, r.ar_peer)
                  f == [term |-> r.ar_term, index |-> r.ar_index, success |-> r.ar_success]
              IN EvMsg("HandleAppendEntriesResponse", [from |-> p], Msg("recv", p, n, "AppendEntriesResponse", f))
         [] hit.probe = "append_send" ->
              Ev(IF r.entries > 0 THEN "SendAppendEntries" ELSE "SendHeartbeat", [entries |-> r.entries])
         [] hit.probe = "follower" -> Ev("BecomeFollower", [leader |-> Name(acc, r.to)])
         [] OTHER -> Ev(Steps[hit.probe], [none |-> TRUE])

(***************************************************************************)
(* Messages on the wire: a Raft subject of the group, or a reply inbox one *)
(* of its requests named.                                                   *)
(***************************************************************************)
VoteSubject == "$NRG.V." \o Group
AppendSubject == "$NRG.AE." \o Group

Sends(acc, hit) ==
    LET r == hit.r
        n == hit.node
        b == r.msg
        others == SelectSeq(hit.nodes, LAMBDA m : m # n)
        To(type, f) == [k \in 1..Len(others) |-> EvMsg("Send", [none |-> TRUE], Msg("send", n, others[k], type, f))]
    IN IF r.subject = VoteSubject THEN
          To("VoteRequest", [term |-> LE(b, 0, 8), lastTerm |-> LE(b, 8, 8), lastIndex |-> LE(b, 16, 8),
                             candidate |-> Name(acc, SubSeq(b, 25, 32))])
       ELSE IF r.subject = AppendSubject THEN
          To("AppendEntries", AEFields(b))
       ELSE IF r.subject \in DOMAIN acc.inbox THEN
          LET to == acc.inbox[r.subject].node
          IN IF acc.inbox[r.subject].kind = "catchup"
             THEN << EvMsg("Send", [none |-> TRUE], Msg("send", n, to, "CatchupEntries", AEFields(b))) >>
             ELSE IF acc.inbox[r.subject].kind = "vote"
             THEN << EvMsg("Send", [none |-> TRUE],
                           Msg("send", n, to, "VoteResponse", [term |-> LE(b, 0, 8), granted |-> b[17] = 1])) >>
             ELSE << EvMsg("Send", [none |-> TRUE],
                           Msg("send", n, to, "AppendEntriesResponse",
                               [term |-> LE(b, 0, 8), index |-> LE(b, 8, 8), success |-> b[25] = 1])) >>
       ELSE <<>>

\* The inbox a broadcast names for its replies; the catchup inbox a follower names in its
\* response, and whom it asks.
Inbox(acc, hit) ==
    LET r == hit.r
    IN IF r.subject \in {VoteSubject, AppendSubject} /\ "reply" \in DOMAIN r
       THEN [acc EXCEPT !.inbox = @ @@ (r.reply :> [node |-> hit.node,
                                          kind |-> IF r.subject = VoteSubject THEN "vote" ELSE "ae"])]
       ELSE IF "reply" \in DOMAIN r /\ r.reply # "" /\ r.subject \in DOMAIN acc.inbox
               /\ acc.inbox[r.subject].kind = "ae"
       THEN [acc EXCEPT !.inbox = (r.reply :> [node |-> hit.node, kind |-> "catchup"]) @@ @,
                        !.catching = (hit.node :> acc.inbox[r.subject].node) @@ @]
       ELSE acc

\* A vote response arrives (on a connection's goroutine, not the Raft one): a receive, no step.
VoteResponse(acc, hit) ==
    LET b == hit.r.msg
        p == Name(acc, SubSeq(b, 9, 16))
    IN EvMsg("ReceiveVoteResponse", [from |-> p],
             Msg("recv", p, hit.node, "VoteResponse", [term |-> LE(b, 0, 8), granted |-> b[17] = 1]))

(***************************************************************************)
(* Steps in progress, by <<node, goroutine>>: the Begin event to write,   *)
(* the state the step started from, how many steps of the node had ended  *)
(* then, and whether the Begin was written.                                *)
(***************************************************************************)
Without(f, k) == [x \in DOMAIN f \ {k} |-> f[x]]

\* Writes step k's Begin if it is not written yet: after an Unobserved event when its starting
\* state differs from the node's last (and no other step of the node ended since it started).
Show(acc, k) ==
    LET s == acc.steps[k]
        n == k[1]
        hidden == s.st # acc.st[n] /\ s.ends = acc.ends[n]
    IN IF s.shown THEN [acc |-> acc, out |-> <<>>]
       ELSE [acc |-> [acc EXCEPT !.steps[k].shown = TRUE, !.st[n] = IF hidden THEN s.st ELSE @],
             out |-> (IF hidden THEN <<EvState("Unobserved", s.st)>> ELSE <<>>) \o <<s.ev>>]

\* Step k ends with the node in state st.
Finish(acc, k, st) ==
    LET n == k[1]
        sh == Show(acc, k)
    IN [acc |-> [sh.acc EXCEPT !.steps = Without(@, k), !.st[n] = st, !.ends[n] = @ + 1],
        out |-> sh.out \o <<EvState("End", st)>>]

(***************************************************************************)
(* One hit.                                                                 *)
(***************************************************************************)
Shape(hit, acc0) ==
    LET k == <<hit.node, hit.g>> IN
    IF hit.probe = "send" THEN
        IF {"msg", "subject"} \subseteq DOMAIN hit.r THEN
            LET sends == Sends(acc0, hit)
                sh == IF sends # <<>> /\ k \in DOMAIN acc0.steps THEN Show(acc0, k) ELSE [acc |-> acc0, out |-> <<>>]
            IN [acc |-> Inbox(sh.acc, hit), out |-> sh.out \o sends]
        ELSE [acc |-> acc0, out |-> <<>>]
    ELSE IF ~Meta(hit) THEN [acc |-> acc0, out |-> <<>>]
    ELSE
    LET acc == Learn(acc0, hit)
        n == hit.node
        st == StateOf(acc, hit)
    IN IF hit.probe = "vote_response" THEN
          \* on a connection's goroutine, outside the Raft steps
          [acc |-> acc, out |-> <<VoteResponse(acc, hit)>>]
       ELSE IF hit.probe \in DOMAIN Steps THEN
          \* A step begins; one of this goroutine still in progress (the call this one is nested
          \* in) ends here.
          LET outer == IF k \in DOMAIN acc.steps THEN Finish(acc, k, st) ELSE [acc |-> acc, out |-> <<>>]
              step == [ev |-> Begin(acc, hit), st |-> st, ends |-> outer.acc.ends[n], shown |-> FALSE]
          IN [acc |-> [outer.acc EXCEPT !.steps = @ @@ (k :> step)], out |-> outer.out]
       ELSE IF hit.probe \in Ends THEN
          IF k \in DOMAIN acc.steps THEN Finish(acc, k, st)
          ELSE \* the rest of a call whose nested step ended it: unobserved if it changed anything
             [acc |-> [acc EXCEPT !.st[n] = st],
              out |-> IF st # acc.st[n] THEN <<EvState("Unobserved", st)>> ELSE <<>>]
       ELSE [acc |-> acc, out |-> <<>>]
====
