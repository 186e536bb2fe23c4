---- MODULE Events ----
(***************************************************************************)
(* etcd's raft (go.etcd.io/etcd/raft, Debian's etcd 3.4) as events: what   *)
(* each probe hit of system.yaml means. The same vocabulary as spectap's C *)
(* shaper of `record etcd` (docs/etcd.md): a step is what raft.Step        *)
(* does with one message; it begins at Step's entry and ends at the next   *)
(* call that reads the member's state at its entry (the next Step, a tick, *)
(* applyConfChange): raft's state only changes inside these calls, one at  *)
(* a time. Its end is an event (Receive* for a message from another        *)
(* member, Step* for a local one) with the state after it; the messages it *)
(* sends, the entries it appends as leader (Replicate) and the commit      *)
(* index it raises (Commit) are events inside it. A become* call is shown  *)
(* with the state read next (its entry has no state after it).              *)
(***************************************************************************)
EXTENDS Naturals, Sequences, TLC

Types == <<"MsgHup", "MsgBeat", "MsgProp", "MsgApp", "MsgAppResp", "MsgVote", "MsgVoteResp", "MsgSnap",
           "MsgHeartbeat", "MsgHeartbeatResp", "MsgUnreachable", "MsgSnapStatus", "MsgCheckQuorum",
           "MsgTransferLeader", "MsgTimeoutNow", "MsgReadIndex", "MsgReadIndexResp", "MsgPreVote",
           "MsgPreVoteResp">>
Roles == <<"StateFollower", "StateCandidate", "StateLeader", "StatePreCandidate">>
TypeName(t) == IF t < Len(Types) THEN Types[t + 1] ELSE "MsgUnknown"
RoleName(s) == IF s < Len(Roles) THEN Roles[s + 1] ELSE s

StepKinds == [t \in {0, 1, 2, 10, 11, 12, 13, 15} |->
                CASE t = 0 -> "StepHup" [] t = 1 -> "StepBeat" [] t = 2 -> "StepProp"
                  [] t = 10 -> "StepUnreachable" [] t = 11 -> "StepSnapStatus"
                  [] t = 12 -> "StepCheckQuorum" [] t = 13 -> "StepTransferLeader"
                  [] t = 15 -> "StepReadIndex"]
StepKind(t) == IF t \in DOMAIN StepKinds THEN StepKinds[t] ELSE "StepMessage"

MsgKind(t, send) ==
    LET k == CASE t \in {3, 7, 8} -> "AppendEntriesRequest"
               [] t \in {4, 9} -> "AppendEntriesResponse"
               [] t \in {5, 17} -> "RequestVoteRequest"
               [] t \in {6, 18} -> "RequestVoteResponse"
               [] OTHER -> "Message"
    IN (IF send THEN "Send" ELSE "Receive") \o k

Zeros(n) == [i \in 1..n |-> 0]
(* The terms of n entries from the first one's (<<t>>, or <<>>) and the last ones': a log's     *)
(* terms never fall, so those between are the first's when it equals the tail's first, else      *)
(* unknown (0).                                                                                   *)
Fill(n, first, tail) ==
    IF n <= Len(tail) THEN tail
    ELSE LET mid == IF first # <<>> /\ tail # <<>> /\ first[1] = tail[1] THEN [i \in 1..(n - Len(tail) - 1) |-> first[1]]
                    ELSE Zeros(n - Len(tail) - 1)
         IN (IF first = <<>> THEN <<0>> ELSE first) \o mid \o tail
\* A log cut or grown (with unknown terms) to n entries.
Resize(log, n) == IF n <= Len(log) THEN SubSeq(log, 1, n) ELSE log \o Zeros(n - Len(log))

(* One member as the shaper knows it: raft's fields, its log of terms (0 = unknown), the step in *)
(* progress (<<>>: none), whether applyConfChange runs, and a become* call not shown yet.         *)
Member0 == [term |-> 0, vote |-> "0", role |-> 0, lead |-> "0", commit |-> 0, id |-> "0", log |-> <<>>,
            step |-> <<>>, conf |-> FALSE, become |-> "", pid |-> 0]

ShapeInit == [ids |-> <<>>, m |-> <<>>]

Mem(acc, n) == IF n \in DOMAIN acc.m THEN acc.m[n] ELSE Member0
\* ids are read as hex strings ("0": none), as the C shaper writes them; a member's becomes its name
Name(acc, id) == IF id \in DOMAIN acc.ids THEN acc.ids[id] ELSE id

HasState(hit) == "uoff" \in DOMAIN hit.r

(* The member after a state read: raft's fields, and its log cut or grown to the last index.     *)
Take(mem, r) ==
    LET log == Resize(mem.log, r.uoff + r.ulen - 1)
    IN [mem EXCEPT !.term = r.term, !.vote = r.vote, !.role = r.role, !.lead = r.lead, !.commit = r.commit,
                   !.id = r.id, !.log = log]

State(acc, mem) ==
    [commit |-> mem.commit, id |-> mem.id, lead |-> Name(acc, mem.lead), log |-> Len(mem.log),
     logTerm |-> IF mem.log = <<>> THEN 0 ELSE mem.log[Len(mem.log)], logTerms |-> mem.log,
     role |-> RoleName(mem.role), term |-> mem.term, vote |-> Name(acc, mem.vote)]

(* A message's entries' terms: all of them when at most 8 (what the probe reads), else from       *)
(* the first's and the last 8 when the first equals the tail's first; else unknown (no           *)
(* entryTerms, as the C shaper).                                                                  *)
TermsKnown(r) == r.nent <= 8 \/ (r.eterm0 # <<>> /\ r.eterms # <<>> /\ r.eterm0[1] = r.eterms[1])
EntryTerms(r) == Fill(r.nent, r.eterm0, r.eterms)
FieldsOf(r, mem, send) ==
    LET vote == r.type \in {5, 6, 17, 18}
        \* send() sets Term itself for all but votes, proposals and read-index requests
        term == IF send /\ ~vote /\ r.type \notin {2, 15} /\ r.mterm = 0 THEN mem.term ELSE r.mterm
        f == [term |-> term, entries |-> r.nent, logTerm |-> r.logterm, index |-> r.index,
              commit |-> r.mcommit, reject |-> r.reject, rejectHint |-> r.hint]
    IN IF TermsKnown(r) THEN f @@ [entryTerms |-> EntryTerms(r)] ELSE f
Msg(acc, r, mem, n, send) ==
    [dir |-> IF send THEN "send" ELSE "recv", from |-> IF send THEN n ELSE Name(acc, r.from),
     to |-> Name(acc, r.to), type |-> TypeName(r.type), fields |-> FieldsOf(r, mem, send)]

(* Handled by Step without coming from another member: local types, and proposals or read-index  *)
(* requests from the member itself.                                                              *)
IsLocal(r, mem) == r.type \in {0, 1, 10, 11, 12} \/ (r.type \in {2, 15} /\ r.from \in {"0", mem.id})

(* An event of a member: args gain the step it belongs to (and the step's message at its first). *)
Ev(acc, mem, kind, args, msg, withState) ==
    LET inStep == mem.step # <<>>
        a1 == IF inStep THEN args @@ [step |-> TypeName(mem.step.r.type)] ELSE args
        a2 == IF inStep /\ ~mem.step.begun
              THEN a1 @@ [stepBegin |-> TRUE,
                          stepMsg |-> [type |-> TypeName(mem.step.r.type), from |-> Name(acc, mem.step.r.from),
                                       to |-> Name(acc, mem.step.r.to)] @@ FieldsOf(mem.step.r, mem, FALSE)]
              ELSE a1
        e0 == [kind |-> kind] @@ (IF withState THEN [state |-> State(acc, mem)] ELSE <<>>)
        e1 == IF a2 = <<>> THEN e0 ELSE e0 @@ [args |-> a2]
    IN IF msg = <<>> THEN e1 ELSE e1 @@ [msg |-> msg]
Shown(mem) == IF mem.step # <<>> THEN [mem EXCEPT !.step.begun = TRUE] ELSE mem

(* The commit index rose inside the step (or applyConfChange) to r's: Commit, with the member's   *)
(* state as it was but for the commit.                                                            *)
CommitPart(acc, n, mem, r) ==
    IF (mem.step # <<>> \/ mem.conf) /\ r.commit > mem.commit
    THEN LET m2 == [mem EXCEPT !.commit = r.commit]
         IN [mem |-> Shown(m2), out |-> <<Ev(acc, m2, "Commit", [tocommit |-> r.commit], <<>>, TRUE)>>]
    ELSE [mem |-> mem, out |-> <<>>]

(* A become* call seen at its entry: shown with the state read next.                              *)
BecomePart(acc, mem) ==
    IF mem.become = "" THEN [mem |-> mem, out |-> <<>>]
    ELSE [mem |-> Shown([mem EXCEPT !.become = ""]), out |-> <<Ev(acc, mem, mem.become, <<>>, <<>>, TRUE)>>]

(* The open step ends with the member in the state just taken.                                    *)
EndPart(acc, n, mem) ==
    IF mem.step = <<>> THEN [mem |-> mem, out |-> <<>>]
    ELSE LET r == mem.step.r
             ev == IF IsLocal(r, mem)
                   THEN Ev(acc, mem, StepKind(r.type), [type |-> TypeName(r.type), entries |-> r.nent], <<>>, TRUE)
                   ELSE Ev(acc, mem, MsgKind(r.type, FALSE), <<>>, Msg(acc, r, mem, n, FALSE), TRUE)
         IN [mem |-> [mem EXCEPT !.step = <<>>], out |-> <<ev>>]

Put(acc, n, mem) == [acc EXCEPT !.m = (n :> mem) @@ @]
Learn(acc, hit) ==
    IF "id" \in DOMAIN hit.r /\ hit.r.id # "0" THEN [acc EXCEPT !.ids = (hit.r.id :> hit.node) @@ @] ELSE acc

(* A member restarted (a new process): a step open in the old one never ends. It is written as  *)
(* StepUnfinished, without a state (the mapping drops its window), as the C shaper does.          *)
RestartPart(acc, mem, pid) ==
    LET new == mem.pid # 0 /\ mem.pid # pid
    IN [mem |-> IF new THEN [mem EXCEPT !.step = <<>>, !.conf = FALSE, !.become = "", !.pid = pid]
                ELSE [mem EXCEPT !.pid = pid],
        out |-> IF new /\ mem.step # <<>> THEN <<Ev(acc, mem, "StepUnfinished", <<>>, <<>>, FALSE)>> ELSE <<>>]

ShapeOne(hit, acc, mem0) ==
    LET n == hit.node
        r == hit.r
    IN
    IF hit.probe \in {"follower", "candidate", "precandidate", "leader"} THEN
        LET k == CASE hit.probe = "follower" -> "BecomeFollower" [] hit.probe = "candidate" -> "BecomeCandidate"
                   [] hit.probe = "precandidate" -> "BecomePreCandidate" [] OTHER -> "BecomeLeader"
            pend == BecomePart(acc, mem0) \* one still pending shows with the state known
        IN [acc |-> Put(acc, n, [pend.mem EXCEPT !.become = k]), out |-> pend.out]
    ELSE IF hit.probe = "append" THEN
        LET f == IF r.first = <<>> THEN Len(mem0.log) + 1 ELSE r.first[1]
            kept == Resize(mem0.log, f - 1)
            new == Fill(r.count, r.term0, r.terms)
            mem == [mem0 EXCEPT !.log = kept \o new]
        IN IF r.count > 0 /\ mem.role = 2
           THEN [acc |-> Put(acc, n, Shown(mem)),
                 out |-> <<Ev(acc, mem, "Replicate", [index |-> f, entries |-> r.count], <<>>, TRUE)>>]
           ELSE [acc |-> Put(acc, n, mem), out |-> <<>>]
    ELSE IF HasState(hit) THEN
        LET c == CommitPart(acc, n, mem0, r)
            boundary == hit.probe \in {"step", "tick", "tick_hb", "conf"}
            taken == Take(IF boundary THEN [c.mem EXCEPT !.conf = FALSE] ELSE c.mem, r)
            b == BecomePart(acc, taken)
            e == IF boundary THEN EndPart(acc, n, b.mem) ELSE [mem |-> b.mem, out |-> <<>>]
            mem == e.mem
            pre == c.out \o b.out \o e.out
        IN CASE hit.probe = "step" ->
                  [acc |-> Put(acc, n, [mem EXCEPT !.step = [r |-> r, begun |-> FALSE]]), out |-> pre]
             [] hit.probe = "conf" ->
                  [acc |-> Put(acc, n, [mem EXCEPT !.conf = TRUE]),
                   out |-> pre \o <<Ev(acc, mem, "ApplyConfChange", <<>>, <<>>, TRUE)>>]
             [] hit.probe = "send" ->
                  [acc |-> Put(acc, n, Shown(mem)),
                   out |-> pre \o <<Ev(acc, mem, MsgKind(r.type, TRUE), <<>>, Msg(acc, r, mem, n, TRUE), TRUE)>>]
             [] OTHER -> [acc |-> Put(acc, n, mem), out |-> pre]
    ELSE [acc |-> Put(acc, n, mem0), out |-> <<>>]

Shape(hit, acc0) ==
    LET acc == Learn(acc0, hit)
        rs == RestartPart(acc, Mem(acc, hit.node), hit.pid)
        one == ShapeOne(hit, acc, rs.mem)
    IN [acc |-> one.acc, out |-> rs.out \o one.out]
====
