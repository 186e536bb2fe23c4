---- MODULE Sysmobench ----
(***************************************************************************)
(* spectap export --to sysmobench of a NATS trace: the events in the      *)
(* benchmark's Raft dialect, etcd-io/raft's trace vocabulary (the names    *)
(* and fields its trace specs read: Send/Receive of RequestVote and        *)
(* AppendEntries requests and responses, Become*, Commit, Replicate), each *)
(* line with the node's Raft state (term, vote, commit), role and last log *)
(* index. Export(ev, acc) is folded over the trace's events                *)
(* (tools/export_module.h); acc: each node's last state and the step it   *)
(* is in.                                                                   *)
(***************************************************************************)
EXTENDS Naturals, Sequences, TLC

Roles == [Follower |-> "StateFollower", Candidate |-> "StateCandidate", Leader |-> "StateLeader"]
NoState == [term |-> 0, vote |-> "", role |-> "Follower", leader |-> "", commit |-> 0, log |-> <<>>]

Id(n) == IF n = "" THEN "0" ELSE n
Line(name, n, st) ==
    [name |-> name, nid |-> n, state |-> [term |-> st.term, vote |-> Id(st.vote), commit |-> st.commit],
     role |-> IF st.role \in DOMAIN Roles THEN Roles[st.role] ELSE "State" \o st.role, log |-> Len(st.log)]
WithMsg(l, m) == [f \in DOMAIN l \cup {"msg"} |-> IF f = "msg" THEN m ELSE l[f]]

LastTerm(l) == IF l = <<>> THEN 0 ELSE l[Len(l)]

\* A message in etcd's fields.
Msg(m) ==
    LET f == m.fields
        base == [from |-> m.from, to |-> m.to, term |-> f.term]
    IN CASE m.type = "VoteRequest" ->
              base @@ [type |-> "MsgVote", logTerm |-> f.lastTerm, index |-> f.lastIndex]
         [] m.type = "VoteResponse" -> base @@ [type |-> "MsgVoteResp", reject |-> ~f.granted]
         [] m.type \in {"AppendEntries", "CatchupEntries"} ->
              base @@ [type |-> "MsgApp", entries |-> f.entries, logTerm |-> f.prevTerm, index |-> f.prevIndex,
                       commit |-> f.commit]
         [] m.type = "AppendEntriesResponse" -> base @@ [type |-> "MsgAppResp", index |-> f.index, reject |-> ~f.success]

SendName == [VoteRequest |-> "SendRequestVoteRequest", VoteResponse |-> "SendRequestVoteResponse",
             AppendEntries |-> "SendAppendEntriesRequest", CatchupEntries |-> "SendAppendEntriesRequest",
             AppendEntriesResponse |-> "SendAppendEntriesResponse"]
RecvName == [VoteRequest |-> "ReceiveRequestVoteRequest", VoteResponse |-> "ReceiveRequestVoteResponse",
             AppendEntries |-> "ReceiveAppendEntriesRequest", CatchupEntries |-> "ReceiveAppendEntriesRequest",
             AppendEntriesResponse |-> "ReceiveAppendEntriesResponse"]
\* The steps whose end writes a line of their own.
EndName == [BecomeCandidate |-> "BecomeCandidate", BecomeLeader |-> "BecomeLeader",
            BecomeFollower |-> "BecomeFollower", SendAppendEntries |-> "Replicate"]

ExportInit == [st |-> <<>>, step |-> <<>>]

Export(ev, acc0) ==
    LET n == ev.node
        acc == IF n \in DOMAIN acc0.st THEN acc0
               ELSE [acc0 EXCEPT !.st = @ @@ (n :> NoState), !.step = @ @@ (n :> "")]
        before == acc.st[n]
        after == IF ev.state # [x \in {} |-> 0] THEN ev.state ELSE before
        acc1 == [acc EXCEPT !.st[n] = after,
                            !.step[n] = IF ev.kind \in {"End", "Send", "Unobserved", "ReceiveVoteResponse"}
                                        THEN IF ev.kind = "End" THEN "" ELSE @ ELSE ev.kind]
        msgLine == IF "msg" \in DOMAIN ev /\ ev.msg.type \in DOMAIN SendName
                   THEN << WithMsg(Line(IF ev.msg.dir = "send" THEN SendName[ev.msg.type] ELSE RecvName[ev.msg.type],
                                        n, before), Msg(ev.msg)) >>
                   ELSE <<>>
        endLine == IF ev.kind = "End" /\ acc.step[n] \in DOMAIN EndName
                      /\ (acc.step[n] # "SendAppendEntries" \/ Len(after.log) > Len(before.log))
                   THEN << Line(EndName[acc.step[n]], n, after) >> ELSE <<>>
        commitLine == IF after.commit > before.commit THEN << Line("Commit", n, after) >> ELSE <<>>
    IN [acc |-> acc1, out |-> msgLine \o endLine \o commitLine]
====
