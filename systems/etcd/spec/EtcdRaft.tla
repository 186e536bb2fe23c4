---- MODULE EtcdRaft ----
(***************************************************************************)
(* etcd 3.4's raft (go.etcd.io/etcd/raft, as Debian's etcd 3.4.23 is built *)
(* from it), one action per raft.Step call, written from the Go code:      *)
(* raft.go (Step, stepLeader, stepCandidate, stepFollower,                 *)
(* handleAppendEntries, handleHeartbeat, becomeX, campaign, poll,          *)
(* bcastAppend, maybeSendAppend, maybeCommit), log.go (maybeAppend,        *)
(* findConflict, commitTo, isUpToDate, term) and log_unstable.go           *)
(* (truncateAndAppend).                                                    *)
(*                                                                         *)
(* The variables are what spectap's etcd traces observe of each member     *)
(* after every step: term, vote, role, leader, commit index and the log as *)
(* the sequence of its entries' terms (logLen and logLastTerm repeat the   *)
(* log's length and last term: SysMoBench's abstraction of logs), and the  *)
(* messages in flight. Values are those of the trace: member names are     *)
(* strings, "0" is none, roles are etcd's StateType names, and a message   *)
(* is the record etcd's pb.Message gives the trace (type, from, to, term,  *)
(* entries, logTerm, index, commit, reject, rejectHint, entryTerms).       *)
(*                                                                         *)
(* What is not observed is not a variable: the leader's progress of each   *)
(* follower (Match, Next, probe/replicate state, inflights, RecentActive), *)
(* the votes a candidate has counted, electionElapsed, the applied index   *)
(* and a pending leadership transfer. Where the code's step depends on     *)
(* them, the action takes every outcome some value of them allows, bound   *)
(* by what the code keeps true of them (e.g. maybeCommit runs after every  *)
(* change of a Match, so the commit index already reflects every Match but *)
(* the one a response changes).                                            *)
(*                                                                         *)
(* The network. etcd loses messages that raft.send queued: etcdserver      *)
(* sends only the last MsgAppResp of each Ready, rafthttp drops what a     *)
(* dead or cut-off peer cannot take, and a forwarded MsgProp reaches the   *)
(* leader's Step as the leader's own proposal (node.run sets From to its   *)
(* own id), so it is never received as sent. A trace therefore never sees  *)
(* those messages received, and a network of everything sent and not yet   *)
(* received only grows. `messages` is instead the *visible* network: for   *)
(* each sender and receiver, the in-flight messages in the order they were *)
(* sent, less the ones Hidden says are stale. Hidden depends on the states *)
(* of a message's two ends only, and only through values that never go     *)
(* back (terms, commit indexes, leaving a candidacy), so a hidden message  *)
(* never shows again; a receiver may take a hidden message (it is in       *)
(* flight or was lost, the view cannot tell) and treats it as the code     *)
(* does. Every message a step sends is checked exactly when it is visible  *)
(* at the end of the step.                                                 *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS Server,      \* the members' names, e.g. {"n1", "n2", "n3"}
          PreVote,     \* Config.PreVote: etcd's --pre-vote, FALSE by default in 3.4
          CheckQuorum, \* Config.CheckQuorum: etcdserver always sets it (TRUE)
          UnlikelyNexts \* a search bound, see BcastTo

VARIABLES currentTerm,  \* [Server -> Nat]            r.Term
          votedFor,     \* [Server -> Server \cup {None}]  r.Vote
          state,        \* [Server -> role name]      r.state
          leader,       \* [Server -> Server \cup {None}]  r.lead
          commitIndex,  \* [Server -> Nat]            r.raftLog.committed
          log,          \* [Server -> Seq(Nat)]       the entries' terms, index 1 first
          logLen,       \* [Server -> Nat]            Len(log[i]) (raftLog.lastIndex())
          logLastTerm,  \* [Server -> Nat]            the last entry's term (raftLog.lastTerm())
          messages      \* [Server -> [Server -> Seq(Message)]]: messages[from][to], the
                        \* visible messages in flight, in send order

vars == <<currentTerm, votedFor, state, leader, commitIndex, log, logLen, logLastTerm, messages>>

None == "0"
Follower == "StateFollower"
Candidate == "StateCandidate"
Leader == "StateLeader"
PreCandidate == "StatePreCandidate"

Min(a, b) == IF a < b THEN a ELSE b
Max(a, b) == IF a > b THEN a ELSE b

\* The voters never change here (no configuration changes are modeled).
N == Cardinality(Server)
Quorum == N \div 2 + 1

(***************************************************************************)
(* Logs.                                                                   *)
(***************************************************************************)
\* raftLog.term(i): the dummy entry 0 and anything past the last index have term 0
\* (term() returns 0 without an error there; the log is never compacted here).
Term(l, k) == IF k = 0 \/ k > Len(l) THEN 0 ELSE l[k]
LastTerm(l) == Term(l, Len(l))
\* raftLog.isUpToDate(lasti, term)
IsUpToDate(l, lasti, t) == t > LastTerm(l) \/ (t = LastTerm(l) /\ lasti >= Len(l))
\* n entries of term t
Entries(n, t) == [k \in 1..n |-> t]

(***************************************************************************)
(* Messages.                                                               *)
(***************************************************************************)
Msg(type, from, to, term, ents, logTerm, index, commit, reject, hint) ==
    [type |-> type, from |-> from, to |-> to, term |-> term, entries |-> Len(ents),
     logTerm |-> logTerm, index |-> index, commit |-> commit, reject |-> reject,
     rejectHint |-> hint, entryTerms |-> ents]

\* Whether a message is left out of the visible network, given the terms, roles and
\* commit indexes of the members (the spec's, or a mapping's from a trace). Each clause
\* stays true once true: terms and commit indexes never go back, and a member leaves a
\* candidacy of a term for good.
HiddenFields(type, from, to, term, index, commit, T, R, C) ==
    \/ from \notin Server \/ to \notin Server
    \* forwarded proposals reach the leader as its own; read-index requests carry no term
    \/ type \in {"MsgProp", "MsgReadIndex"}
    \* one end has moved to a later term
    \/ term < T[to]
    \/ term < T[from]
    \* the leader has committed more since (a newer MsgApp carries it)
    \/ type = "MsgApp" /\ commit < C[from]
    \* min(Match, committed) below either end's commit index
    \/ type = "MsgHeartbeat" /\ (commit < C[from] \/ commit < C[to])
    \* the follower has committed past what it acknowledges (etcdserver drops all but
    \* the last MsgAppResp of a Ready: those are hidden this way); an answer to a MsgApp
    \* of an earlier term shows until its receiver reaches the answer's term
    \/ type = "MsgAppResp" /\ index < C[from] /\ term <= T[to]
    \* the campaign is over
    \/ type \in {"MsgVote", "MsgPreVote"} /\ R[from] \notin {Candidate, PreCandidate}
    \/ type \in {"MsgVoteResp", "MsgPreVoteResp"} /\ R[to] \notin {Candidate, PreCandidate}

Hidden(m, T, R, C) == HiddenFields(m.type, m.from, m.to, m.term, m.index, m.commit, T, R, C)

RECURSIVE Visible(_, _, _, _)
Visible(s, T, R, C) ==
    IF s = <<>> THEN <<>>
    ELSE IF Hidden(Head(s), T, R, C) THEN Visible(Tail(s), T, R, C)
         ELSE <<Head(s)>> \o Visible(Tail(s), T, R, C)

View(net, T, R, C) == [f \in Server |-> [t \in Server |-> Visible(net[f][t], T, R, C)]]

InSeq(s, m) == \E k \in 1..Len(s) : s[k] = m

RECURSIVE RemoveFirst(_, _)
RemoveFirst(s, m) == IF Head(s) = m THEN Tail(s) ELSE <<Head(s)>> \o RemoveFirst(Tail(s), m)

\* No message: local steps (MsgHup, MsgBeat, MsgProp, ...) take none from the network.
NoMsg == [type |-> "none"]

\* m, sent to i, can be received: it is visible, or hidden (in flight or lost: the view
\* cannot tell).
Receivable(i, m) ==
    /\ m.to = i
    /\ m.from \in Server
    /\ \/ InSeq(messages[m.from][i], m)
       \/ Hidden(m, currentTerm, state, commitIndex)

Taken(net, m) ==
    IF m = NoMsg THEN net
    ELSE IF InSeq(net[m.from][m.to], m) THEN [net EXCEPT ![m.from][m.to] = RemoveFirst(@, m)]
    ELSE net

RECURSIVE SendAll(_, _)
SendAll(net, s) ==
    IF s = <<>> THEN net
    ELSE LET m == Head(s) IN
         SendAll(IF m.from \in Server /\ m.to \in Server
                 THEN [net EXCEPT ![m.from][m.to] = Append(@, m)] ELSE net, Tail(s))

(***************************************************************************)
(* A step's outcome for its member: the member's new state and the         *)
(* messages it sent, in order. Apply makes it the next state.              *)
(***************************************************************************)
Cur(i) == [term |-> currentTerm[i], vote |-> votedFor[i], state |-> state[i],
           lead |-> leader[i], commit |-> commitIndex[i], log |-> log[i], sends |-> <<>>]

Send(o, m) == [o EXCEPT !.sends = Append(@, m)]

\* (Values are passed down as operator arguments, which are evaluated once, where a LET
\* definition would be evaluated again wherever it is used.)
ApplyWith(i, o, recv, T, R, C) ==
       /\ currentTerm' = T
       /\ votedFor' = [votedFor EXCEPT ![i] = o.vote]
       /\ state' = R
       /\ leader' = [leader EXCEPT ![i] = o.lead]
       /\ commitIndex' = C
       /\ log' = [log EXCEPT ![i] = o.log]
       /\ logLen' = [logLen EXCEPT ![i] = Len(o.log)]
       /\ logLastTerm' = [logLastTerm EXCEPT ![i] = LastTerm(o.log)]
       /\ messages' = View(SendAll(Taken(messages, recv), o.sends), T, R, C)

Apply(i, o, recv) ==
    ApplyWith(i, o, recv, [currentTerm EXCEPT ![i] = o.term], [state EXCEPT ![i] = o.state],
              [commitIndex EXCEPT ![i] = o.commit])

\* The step changes nothing (the message, if any, is consumed).
Ignore(i, recv) == Apply(i, Cur(i), recv)

(***************************************************************************)
(* Role changes (raft.go: reset, becomeFollower, becomeCandidate,          *)
(* becomePreCandidate, becomeLeader).                                      *)
(***************************************************************************)
\* reset(term) clears the vote only when the term changes.
BecomeFollower(o, term, lead) ==
    [o EXCEPT !.term = term, !.vote = IF o.term # term THEN None ELSE o.vote,
              !.state = Follower, !.lead = lead]

BecomeCandidate(o, i) ==
    [o EXCEPT !.term = o.term + 1, !.vote = i, !.state = Candidate, !.lead = None]

BecomePreCandidate(o) == [o EXCEPT !.state = PreCandidate, !.lead = None]

\* becomeLeader: appendEntry of an empty entry in the leader's term; its maybeCommit can
\* only commit it when the leader alone is a quorum (the others' Match were reset to 0).
BecomeLeader(o, i) ==
    LET l == Append(o.log, o.term)
    IN [o EXCEPT !.state = Leader, !.lead = i, !.log = l,
                 !.commit = IF Quorum = 1 THEN Len(l) ELSE o.commit]

(***************************************************************************)
(* The leader's appends. maybeSendAppend(to) sends MsgApp{Index: Next-1,   *)
(* LogTerm: term(Next-1), Entries: log[Next..], Commit: committed}, or     *)
(* nothing while the progress is paused. Next is not observed: any Next    *)
(* the code allows is taken. A message carries every entry from Next on    *)
(* (MaxSizePerMsg, 1 MiB in etcd, is not reached by the captures' small    *)
(* puts).                                                                  *)
(***************************************************************************)
AppMsg(o, i, p, next) ==
    Msg("MsgApp", i, p, o.term, SubSeq(o.log, next, Len(o.log)), Term(o.log, next - 1),
        next - 1, o.commit, FALSE, 0)

SendApp(o, i, p, next) == Send(o, AppMsg(o, i, p, next))

Others(i) == Server \ {i}

\* Peers in some fixed order (bcastAppend visits them by id: the order of sends to
\* different peers does not show in `messages`).
RECURSIVE SeqOf(_)
SeqOf(S) == IF S = {} THEN <<>> ELSE LET x == CHOOSE x \in S : TRUE IN <<x>> \o SeqOf(S \ {x})

(* The Next values the leader most likely has for p, tried first: the     *)
(* entries appended by this step alone (Next past the log before it),      *)
(* nothing new (an empty MsgApp), and what the visible messages between i  *)
(* and p and the handled message m say of Next. The actions take the other *)
(* Next values too, after these (for a broadcast, within UnlikelyNexts).   *)
Hint(x) ==
    CASE x.type = "MsgApp" -> {x.index + x.entries + 1}
      [] x.type = "MsgAppResp" /\ ~x.reject -> {x.index + 1}
      [] x.type = "MsgAppResp" /\ x.reject -> {Max(Min(x.index, x.rejectHint + 1), 1)}
      [] OTHER -> {}
Likely(i, p, o, m) ==
    {Len(log[i]) + 1, Len(o.log) + 1}
    \cup UNION {Hint(messages[i][p][k]) : k \in 1..Len(messages[i][p])}
    \cup UNION {Hint(messages[p][i][k]) : k \in 1..Len(messages[p][i])}
    \cup (IF m.type # "none" /\ m.from = p THEN Hint(m) ELSE {})

(* bcastAppend then Apply: to each peer in ps an MsgApp with Next in       *)
(* lo[p]..last+1, or nothing (paused). k peers at most take a Next outside *)
(* likely[p]. Bcast tries k = 0, 1, ... up to UnlikelyNexts: the search    *)
(* bound. Every combination of Next values for two or more peers is        *)
(* (last+1)^2 successors at least, too many for real logs (a thousand      *)
(* entries: a million successors, and the checker keeps each one), so the  *)
(* cfg allows one peer per broadcast an unlikely Next. A step that needs   *)
(* more fails its window, reported as any other failure; a larger bound    *)
(* makes the action complete for short logs.                               *)
RECURSIVE BcastTo(_, _, _, _, _, _, _), BcastPeer(_, _, _, _, _, _, _, _, _)
BcastTo(i, o, ps, lo, likely, recv, k) ==
    IF ps = <<>> THEN Apply(i, o, recv)
    ELSE BcastPeer(i, o, Head(ps), Tail(ps), lo[Head(ps)]..(Len(o.log) + 1), lo, likely, recv, k)

BcastPeer(i, o, p, rest, full, lo, likely, recv, k) ==
    \/ \E nx \in likely[p] \cap full : BcastTo(i, SendApp(o, i, p, nx), rest, lo, likely, recv, k)
    \/ BcastTo(i, o, rest, lo, likely, recv, k)
    \/ /\ k > 0
       /\ \E nx \in full \ likely[p] :
            BcastTo(i, SendApp(o, i, p, nx), rest, lo, likely, recv, k - 1)

BcastWith(i, o, ps, lo, likely, recv) ==
    \E k \in 0..Min(UnlikelyNexts, N - 1) : BcastTo(i, o, ps, lo, likely, recv, k)

Bcast(i, o, lo, m, recv) ==
    BcastWith(i, o, SeqOf(Others(i)), lo, [p \in Server |-> Likely(i, p, o, m)], recv)

\* sendAppend(p) (sendIfEmpty) then Apply, Next in lo..last+1, or nothing when paused.
SendAppendLikely(i, o, p, full, likely, recv) ==
    \/ \E nx \in likely : Apply(i, SendApp(o, i, p, nx), recv)
    \/ Apply(i, o, recv)
    \/ \E nx \in full \ likely : Apply(i, SendApp(o, i, p, nx), recv)

SendAppendTo(i, o, p, lo, m, recv) ==
    SendAppendLikely(i, o, p, lo..(Len(o.log) + 1), Likely(i, p, o, m) \cap lo..(Len(o.log) + 1),
                     recv)

(***************************************************************************)
(* Step's handling of the message term, for messages from other members    *)
(* (raft.go, Step, before the switch on the type). For MsgApp,             *)
(* MsgHeartbeat and MsgSnap a later term makes i a follower of the sender; *)
(* other types (but MsgPreVote and a granted MsgPreVoteResp) make it a     *)
(* follower with no leader. An earlier term is ignored, but for MsgApp and *)
(* MsgHeartbeat under CheckQuorum or PreVote, answered with an empty       *)
(* MsgAppResp, and MsgPreVote, rejected.                                   *)
(***************************************************************************)
LaterTermState(o, m) ==
    IF m.type \in {"MsgApp", "MsgHeartbeat", "MsgSnap"} THEN BecomeFollower(o, m.term, m.from)
    ELSE IF m.type = "MsgPreVote" \/ (m.type = "MsgPreVoteResp" /\ ~m.reject) THEN o
    ELSE BecomeFollower(o, m.term, None)

\* The step of a message with an earlier term than i's.
EarlierTermOf(i, m, o) ==
    IF (CheckQuorum \/ PreVote) /\ m.type \in {"MsgHeartbeat", "MsgApp"}
    THEN Apply(i, Send(o, Msg("MsgAppResp", i, m.from, o.term, <<>>, 0, 0, 0, FALSE, 0)), m)
    ELSE IF m.type = "MsgPreVote"
    THEN Apply(i, Send(o, Msg("MsgPreVoteResp", i, m.from, o.term, <<>>, 0, 0, 0, TRUE, 0)), m)
    ELSE Ignore(i, m)

EarlierTerm(i, m) == EarlierTermOf(i, m, Cur(i))

(***************************************************************************)
(* ElectionTimeout: Step(MsgHup) when it campaigns (a follower or          *)
(* candidate, promotable, with no unapplied configuration change).         *)
(* campaign: becomeCandidate (term + 1, vote for itself), or with PreVote  *)
(* becomePreCandidate; its own vote wins a one-member cluster at once      *)
(* (pre-candidate: campaign again for real; candidate: becomeLeader, no    *)
(* bcastAppend); otherwise a MsgVote (MsgPreVote for term + 1) to every    *)
(* other voter with its last index and term.                               *)
(***************************************************************************)
VoteRequests(o, i, type, term) ==
    LET ps == SeqOf(Others(i))
    IN [o EXCEPT !.sends = @ \o [k \in 1..Len(ps) |->
          Msg(type, i, ps[k], term, <<>>, LastTerm(o.log), Len(o.log), 0, FALSE, 0)]]

Campaign(o, i) ==
    LET c == BecomeCandidate(o, i)
    IN IF Quorum = 1 THEN BecomeLeader(c, i) ELSE VoteRequests(c, i, "MsgVote", c.term)

PreCampaign(o, i) ==
    LET c == BecomePreCandidate(o)
    IN IF Quorum = 1 THEN Campaign(c, i) ELSE VoteRequests(c, i, "MsgPreVote", c.term + 1)

ElectionTimeout(i) ==
    /\ state[i] # Leader
    /\ Apply(i, IF PreVote THEN PreCampaign(Cur(i), i) ELSE Campaign(Cur(i), i), NoMsg)

\* Step(MsgHup) without a campaign: a leader ignores it; so does a member with a
\* committed configuration change not yet applied (the applied index is not observed).
IgnoreElectionTimeout(i) == Ignore(i, NoMsg)

(***************************************************************************)
(* HandleVoteRequest: Step of a MsgVote or MsgPreVote. A later term:       *)
(* within the lease (CheckQuorum, a known leader and electionElapsed <     *)
(* electionTimeout: not observed) the message is ignored; otherwise a      *)
(* MsgVote makes i a follower of the new term with no vote and no leader.  *)
(* Then i grants when it can vote (it voted for the candidate already, or  *)
(* has no vote and no leader, or it is a pre-vote for a later term) and    *)
(* the candidate's log is up to date: the response carries the request's   *)
(* term and, for a MsgVote, i records its vote. Otherwise it rejects with  *)
(* its own term.                                                           *)
(***************************************************************************)
VoteResponseType(t) == IF t = "MsgVote" THEN "MsgVoteResp" ELSE "MsgPreVoteResp"

CastVote(i, o, m) ==
    LET canVote == \/ o.vote = m.from
                   \/ o.vote = None /\ o.lead = None
                   \/ m.type = "MsgPreVote" /\ m.term > o.term
    IN IF canVote /\ IsUpToDate(o.log, m.index, m.logTerm)
       THEN Send([o EXCEPT !.vote = IF m.type = "MsgVote" THEN m.from ELSE @],
                 Msg(VoteResponseType(m.type), i, m.from, m.term, <<>>, 0, 0, 0, FALSE, 0))
       ELSE Send(o, Msg(VoteResponseType(m.type), i, m.from, o.term, <<>>, 0, 0, 0, TRUE, 0))

VoteRequest(i, m, o) ==
    CASE m.term > o.term ->
           \/ /\ CheckQuorum /\ o.lead # None     \* in the lease: ignored
              /\ Ignore(i, m)
           \/ Apply(i, CastVote(i, LaterTermState(o, m), m), m)
      [] m.term < o.term -> EarlierTermOf(i, m, o)
      [] OTHER -> Apply(i, CastVote(i, o, m), m)

HandleVoteRequest(i, m) ==
    /\ m.type \in {"MsgVote", "MsgPreVote"}
    /\ Receivable(i, m)
    /\ VoteRequest(i, m, Cur(i))

(***************************************************************************)
(* HandleVoteResponse: Step of a MsgVoteResp or MsgPreVoteResp. A          *)
(* candidate (pre-candidate) counts the vote of its own kind (poll). The   *)
(* votes counted before are not observed: any counts that left the         *)
(* election open before (its own vote granted, yes < Quorum, and a quorum  *)
(* still possible) are taken, and whether the sender had voted already     *)
(* (RecordVote keeps the first). Won: a candidate becomes leader and sends *)
(* every follower the new empty entry (their progress was just reset: Next *)
(* = the old last index + 1, not paused); a pre-candidate campaigns. Lost: *)
(* a follower with no leader. A leader or follower does nothing with it.   *)
(***************************************************************************)
LeaderAppends(o, i) ==
    LET l0 == Len(o.log) - 1     \* the last index before the empty entry
    IN [o EXCEPT !.sends = @ \o [k \in 1..Len(SeqOf(Others(i))) |->
          AppMsg(o, i, SeqOf(Others(i))[k], l0 + 1)]]

VoteOutcomes(i, o, m) ==
    LET others == N - 1
    IN {r \in {"won", "lost", "pending"} :
          \E yes \in 0..others, no \in 0..others, again \in BOOLEAN :
             LET yes2 == yes + IF ~again /\ ~m.reject THEN 1 ELSE 0
                 no2 == no + IF ~again /\ m.reject THEN 1 ELSE 0
             IN /\ yes + no + (IF again THEN 0 ELSE 1) <= others
                /\ again => yes + no > 0
                /\ 1 + yes < Quorum /\ N - no >= Quorum        \* open before
                /\ r = IF 1 + yes2 >= Quorum THEN "won"
                       ELSE IF N - no2 < Quorum THEN "lost" ELSE "pending"}

CountVote(i, m, o) ==
    LET mine == IF o.state = PreCandidate THEN "MsgPreVoteResp" ELSE "MsgVoteResp"
    IN IF o.state \in {Candidate, PreCandidate} /\ m.type = mine
       THEN \E r \in VoteOutcomes(i, o, m) :
              CASE r = "won" /\ o.state = PreCandidate -> Apply(i, Campaign(o, i), m)
                [] r = "won" -> Apply(i, LeaderAppends(BecomeLeader(o, i), i), m)
                [] r = "lost" -> Apply(i, BecomeFollower(o, o.term, None), m)
                [] OTHER -> Apply(i, o, m)
       ELSE Apply(i, o, m)

VoteResponse(i, m, o) ==
    IF m.term < o.term THEN EarlierTermOf(i, m, o)
    ELSE CountVote(i, m, IF m.term > o.term THEN LaterTermState(o, m) ELSE o)

HandleVoteResponse(i, m) ==
    /\ m.type \in {"MsgVoteResp", "MsgPreVoteResp"}
    /\ Receivable(i, m)
    /\ VoteResponse(i, m, Cur(i))

(***************************************************************************)
(* ClientProposal: Step(MsgProp) on the leader, when it takes the proposal *)
(* (etcd gives a proposal forwarded by a follower to the leader's Step as  *)
(* its own). appendEntry gives the entries the leader's term and appends   *)
(* them; its maybeCommit commits only when the leader alone is a quorum    *)
(* (its own Match was already the highest). Then bcastAppend.              *)
(***************************************************************************)
Propose(i, m, o, l) ==
    Bcast(i, [o EXCEPT !.log = l, !.commit = IF Quorum = 1 THEN Len(l) ELSE @],
          [p \in Server |-> 1], m, NoMsg)

ClientProposal(i, m) ==
    /\ m.type = "MsgProp"
    /\ m.entries > 0
    /\ state[i] = Leader
    /\ Propose(i, m, Cur(i), log[i] \o Entries(m.entries, currentTerm[i]))

\* Step(MsgProp) on a follower that knows a leader: the proposal goes to the leader.
ForwardProposal(i, m) ==
    /\ m.type = "MsgProp"
    /\ state[i] = Follower
    /\ leader[i] # None
    /\ Apply(i, Send(Cur(i), Msg("MsgProp", i, leader[i], 0, m.entryTerms, 0, 0, 0, FALSE, 0)),
             NoMsg)

\* Step(MsgProp) dropped: no leader known, a candidate, or a leader transferring its
\* leadership (not observed).
DropProposal(i, m) ==
    /\ m.type = "MsgProp"
    /\ \/ state[i] = Follower /\ leader[i] = None
       \/ state[i] \in {Candidate, PreCandidate, Leader}
    /\ Ignore(i, NoMsg)

(***************************************************************************)
(* HandleAppendEntries: Step of a MsgApp. After the term handling a        *)
(* candidate becomes a follower of the sender and a follower takes the     *)
(* sender as leader (a leader ignores a MsgApp of its own term).           *)
(* handleAppendEntries: below the commit index, answer with the commit     *)
(* index; else maybeAppend: when the entry before the new ones matches,    *)
(* findConflict finds the first new entry whose term differs from the      *)
(* log's (or past its end), the log is cut there and the rest appended (a  *)
(* conflict at or below the commit index panics), the commit index becomes *)
(* max(commit, min(m.Commit, lastnewi)), and the answer is lastnewi; when  *)
(* it does not match, a rejection with the last index as the hint.         *)
(***************************************************************************)
FirstConflict(l, m) ==
    LET cs == {k \in 1..m.entries : Term(l, m.index + k) # m.entryTerms[k]}
    IN IF cs = {} THEN 0 ELSE CHOOSE k \in cs : \A j \in cs : k <= j

\* maybeAppend's success: the log cut at the conflict ci and the rest appended.
Appended(i, o, m, lastnewi, ci) ==
    LET l == IF ci = 0 THEN o.log
             ELSE SubSeq(o.log, 1, m.index + ci - 1) \o SubSeq(m.entryTerms, ci, m.entries)
    IN Send([o EXCEPT !.log = l, !.commit = Max(@, Min(m.commit, lastnewi))],
            Msg("MsgAppResp", i, m.from, o.term, <<>>, 0, lastnewi, 0, FALSE, 0))

AppendEntries(i, o, m) ==
    IF m.index < o.commit
    THEN Send(o, Msg("MsgAppResp", i, m.from, o.term, <<>>, 0, o.commit, 0, FALSE, 0))
    ELSE IF Term(o.log, m.index) = m.logTerm
    THEN Appended(i, o, m, m.index + m.entries, FirstConflict(o.log, m))
    ELSE Send(o, Msg("MsgAppResp", i, m.from, o.term, <<>>, 0, m.index, 0, TRUE, Len(o.log)))

\* No conflict at or below the commit index (raftLog.maybeAppend panics on one).
AppendSafeCi(o, m, ci) ==
    m.index < o.commit \/ Term(o.log, m.index) # m.logTerm \/ ci = 0 \/ m.index + ci > o.commit
AppendSafe(o, m) == AppendSafeCi(o, m, FirstConflict(o.log, m))

\* The state a MsgApp, MsgHeartbeat or MsgSnap of a term not earlier than i's leaves before
\* its handler runs (Step's becomeFollower for a later term, stepCandidate's for the same
\* term, stepFollower's r.lead = m.From); a leader of that term ignores it (the callers).
FollowSender(o, m) ==
    IF m.term > o.term THEN BecomeFollower(o, m.term, m.from)
    ELSE IF o.state \in {Candidate, PreCandidate} THEN BecomeFollower(o, m.term, m.from)
    ELSE [o EXCEPT !.lead = m.from]

AppendStep(i, m, o) == AppendSafe(o, m) /\ Apply(i, AppendEntries(i, o, m), m)

HandleAppendEntries(i, m) ==
    /\ m.type = "MsgApp"
    /\ Receivable(i, m)
    /\ IF m.term < currentTerm[i] THEN EarlierTerm(i, m)
       ELSE IF m.term = currentTerm[i] /\ state[i] = Leader THEN Ignore(i, m)
       ELSE AppendStep(i, m, FollowSender(Cur(i), m))

(***************************************************************************)
(* HandleHeartbeat: Step of a MsgHeartbeat: the term handling as for       *)
(* MsgApp, then handleHeartbeat: commitTo(m.Commit) (never lower; past the *)
(* last index it panics) and a MsgHeartbeatResp.                           *)
(***************************************************************************)
HeartbeatStep(i, m, o) ==
    /\ m.commit <= o.commit \/ m.commit <= Len(o.log)
    /\ Apply(i, Send([o EXCEPT !.commit = Max(@, m.commit)],
                     Msg("MsgHeartbeatResp", i, m.from, o.term, <<>>, 0, 0, 0, FALSE, 0)), m)

HandleHeartbeat(i, m) ==
    /\ m.type = "MsgHeartbeat"
    /\ Receivable(i, m)
    /\ IF m.term < currentTerm[i] THEN EarlierTerm(i, m)
       ELSE IF m.term = currentTerm[i] /\ state[i] = Leader THEN Ignore(i, m)
       ELSE HeartbeatStep(i, m, FollowSender(Cur(i), m))

(***************************************************************************)
(* HandleAppendResponse: Step of a MsgAppResp; only a leader of its term   *)
(* acts on it (a later term makes i a follower with no leader first). A    *)
(* rejection: stale (MaybeDecrTo false: nothing), or Next goes back (to    *)
(* Match + 1 from replicate, to min(rejected, hint + 1) from probe, both   *)
(* at most the rejected index) and sendAppend. An acknowledgement of n:    *)
(* stale (Match >= n: nothing), or Match := n and maybeCommit: mci, the    *)
(* quorum's Match, is at least the Quorum-th largest of what is known (the *)
(* leader's last index and n) and, since maybeCommit ran after every       *)
(* earlier change of a Match, it can only have grown up to n; the commit   *)
(* index becomes mci when mci's entry has the leader's term. Committing    *)
(* broadcasts (bcastAppend); otherwise the follower gets at most one       *)
(* MsgApp (sendAppend when it was paused, then maybeSendAppend), from Next *)
(* >= n + 1.                                                               *)
(***************************************************************************)
\* The commit indexes maybeCommit can reach after Match[p] became n.
CommitChoices(o, n) ==
    LET lb == IF Quorum = 1 THEN Len(o.log) ELSE IF Quorum = 2 THEN n ELSE 0
        up == {k \in Max(lb, o.commit + 1)..Min(n, Len(o.log)) : Term(o.log, k) = o.term}
        must == lb > o.commit /\ Term(o.log, lb) = o.term
    IN up \cup (IF must THEN {} ELSE {o.commit})

Rejected(i, o, m, probe) ==
    \/ Apply(i, o, m)
    \/ Apply(i, SendApp(o, i, m.from, probe), m)
    \/ \E nx \in (1..m.index) \ {probe} : Apply(i, SendApp(o, i, m.from, nx), m)

Acknowledged(i, o, m, p, n) ==
    \/ Apply(i, o, m)
    \/ \E c \in CommitChoices(o, n) :
         IF c > o.commit
         THEN Bcast(i, [o EXCEPT !.commit = c], [q \in Server |-> IF q = p THEN n + 1 ELSE 1], m, m)
         ELSE SendAppendTo(i, o, p, n + 1, m, m)

AppendResponse(i, o, m) ==
    IF m.reject THEN Rejected(i, o, m, Max(Min(m.index, m.rejectHint + 1), 1))
    ELSE Acknowledged(i, o, m, m.from, m.index)

HandleAppendResponse(i, m) ==
    /\ m.type = "MsgAppResp"
    /\ Receivable(i, m)
    /\ IF m.term < currentTerm[i] THEN EarlierTerm(i, m)
       ELSE IF m.term > currentTerm[i] THEN Apply(i, LaterTermState(Cur(i), m), m)
       ELSE IF state[i] = Leader THEN AppendResponse(i, Cur(i), m)
       ELSE Ignore(i, m)

(***************************************************************************)
(* HandleHeartbeatResponse: Step of a MsgHeartbeatResp; a leader of its    *)
(* term sends the follower an MsgApp when its Match is behind the last     *)
(* index (sendAppend: nothing while paused). The read-only context is not  *)
(* observed: no read-index requests are modeled.                           *)
(***************************************************************************)
HandleHeartbeatResponse(i, m) ==
    /\ m.type = "MsgHeartbeatResp"
    /\ Receivable(i, m)
    /\ IF m.term < currentTerm[i] THEN EarlierTerm(i, m)
       ELSE IF m.term > currentTerm[i] THEN Apply(i, LaterTermState(Cur(i), m), m)
       ELSE IF state[i] = Leader THEN SendAppendTo(i, Cur(i), m.from, 1, m, m)
       ELSE Ignore(i, m)

(***************************************************************************)
(* HeartbeatTimeout: Step(MsgBeat) on the leader: bcastHeartbeat, to each  *)
(* peer MsgHeartbeat{Commit: min(Match, committed)}. Match is not          *)
(* observed; every commit below the leader's is hidden (HiddenFields), so  *)
(* the commit is either the leader's or a hidden one, 0 standing for them  *)
(* all.                                                                    *)
(***************************************************************************)
RECURSIVE Heartbeats(_, _, _)
Heartbeats(i, o, ps) ==
    IF ps = <<>> THEN Apply(i, o, NoMsg)
    ELSE \E c \in {o.commit, 0} :
           Heartbeats(i, Send(o, Msg("MsgHeartbeat", i, Head(ps), o.term, <<>>, 0, 0, c, FALSE, 0)),
                      Tail(ps))

HeartbeatTimeout(i) ==
    IF state[i] = Leader THEN Heartbeats(i, Cur(i), SeqOf(Others(i))) ELSE Ignore(i, NoMsg)

(***************************************************************************)
(* CheckQuorumTimeout: Step(MsgCheckQuorum) on the leader: it steps down   *)
(* (a follower of its term with no leader) when no quorum was recently     *)
(* active (RecentActive is not observed).                                  *)
(***************************************************************************)
CheckQuorumTimeout(i) ==
    IF state[i] = Leader
    THEN \/ Ignore(i, NoMsg)
         \/ Apply(i, BecomeFollower(Cur(i), currentTerm[i], None), NoMsg)
    ELSE Ignore(i, NoMsg)

(***************************************************************************)
(* ReportUnreachable: Step(MsgUnreachable) (etcd's transport could not     *)
(* reach a peer): a leader moves the peer's progress to probe (not         *)
(* observed); nothing else.                                                *)
(***************************************************************************)
ReportUnreachable(i) == Ignore(i, NoMsg)

(***************************************************************************)
Init == /\ currentTerm = [i \in Server |-> 0]
        /\ votedFor = [i \in Server |-> None]
        /\ state = [i \in Server |-> Follower]
        /\ leader = [i \in Server |-> None]
        /\ commitIndex = [i \in Server |-> 0]
        /\ log = [i \in Server |-> <<>>]
        /\ logLen = [i \in Server |-> 0]
        /\ logLastTerm = [i \in Server |-> 0]
        /\ messages = [f \in Server |-> [t \in Server |-> <<>>]]

\* The visible messages to i, and the local messages i's Step takes.
InFlight(i) == UNION {{messages[f][i][k] : k \in 1..Len(messages[f][i])} : f \in Server}
Proposals(i) == {Msg("MsgProp", i, None, 0, Entries(1, 0), 0, 0, 0, FALSE, 0)}

Next == \E i \in Server :
          \/ ElectionTimeout(i)
          \/ IgnoreElectionTimeout(i)
          \/ HeartbeatTimeout(i)
          \/ CheckQuorumTimeout(i)
          \/ ReportUnreachable(i)
          \/ \E m \in Proposals(i) :
               ClientProposal(i, m) \/ ForwardProposal(i, m) \/ DropProposal(i, m)
          \/ \E m \in InFlight(i) :
               \/ HandleVoteRequest(i, m)
               \/ HandleVoteResponse(i, m)
               \/ HandleAppendEntries(i, m)
               \/ HandleHeartbeat(i, m)
               \/ HandleAppendResponse(i, m)
               \/ HandleHeartbeatResponse(i, m)

=============================================================================
