---- MODULE ZkFle ----
(***************************************************************************)
(* ZooKeeper 3.8.0's Fast Leader Election, written from the Java code      *)
(* (FastLeaderElection.java: lookForLeader, receivedFollowingNotification, *)
(* receivedLeadingNotification, totalOrderPredicate, getVoteTracker,       *)
(* checkLeader, updateProposal, sendNotifications, WorkerReceiver.run;     *)
(* QuorumPeer.java: setPeerState, loadDataBase, setCurrentEpoch,           *)
(* setAcceptedEpoch; Vote.equals), at the granularity spectap's JVMTI      *)
(* agent records it: one action per recorded step (systems/zookeeper/     *)
(* README.md lists them), and the benchmark's three actions Notification,  *)
(* HandleNotification and BecomeLeader.                                    *)
(*                                                                         *)
(* The variables are what the agent records of each server after every     *)
(* step, in its value space: servers are the strings of their sids ("1"),  *)
(* vote leaders and sids inside votes are numbers, a vote is               *)
(* [leader, zxid, electionEpoch, peerEpoch, state], recvset and            *)
(* outofelection map a sender's sid (a string) to the vote put for it.     *)
(* `net` is the network of notifications in flight (sent, not yet taken by *)
(* the receiver's WorkerReceiver), as a bag: a message [from, to, fields]  *)
(* to the number of copies in flight (sendNotifications repeats identical  *)
(* messages).                                                              *)
(*                                                                         *)
(* Not observed, hence not variables (systems/zookeeper/spec/README.md):   *)
(* the receive queue between WorkerReceiver and lookForLeader, the         *)
(* notification lookForLeader is handling, the server's last logged zxid,  *)
(* QuorumPeer.currentVote, the connection managers' queues. Actions whose  *)
(* step depends on them take the value as a parameter (the mapping binds  *)
(* it from the event) and constrain it by what the code keeps true of it.  *)
(***************************************************************************)
EXTENDS Naturals, Integers, FiniteSets, TLC

CONSTANTS Server   \* the servers' sids as strings, e.g. {"1", "2", "3"}: all voters

VARIABLES logicalclock,   \* [Server -> Int]  FastLeaderElection.logicalclock
          proposedLeader, \* [Server -> Int]  FastLeaderElection.proposedLeader (-1: none)
          proposedZxid,   \* [Server -> Int]  FastLeaderElection.proposedZxid (-1: none)
          proposedEpoch,  \* [Server -> Int]  FastLeaderElection.proposedEpoch
          state,          \* [Server -> State]  QuorumPeer.state
          currentEpoch,   \* [Server -> Int]  QuorumPeer.currentEpoch (-1: not loaded)
          acceptedEpoch,  \* [Server -> Int]  QuorumPeer.acceptedEpoch (-1: not loaded)
          recvset,        \* [Server -> (sid -> Vote)]  lookForLeader's recvset
          outofelection,  \* [Server -> (sid -> Vote)]  lookForLeader's outofelection
          net             \* bag of messages in flight: [from, to, fields] -> copies

vars == <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state, currentEpoch,
          acceptedEpoch, recvset, outofelection, net>>
serverVars == <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state, currentEpoch,
                acceptedEpoch, recvset, outofelection>>

LOOKING == "LOOKING"
FOLLOWING == "FOLLOWING"
LEADING == "LEADING"
OBSERVING == "OBSERVING"
States == {LOOKING, FOLLOWING, LEADING, OBSERVING}

N == Cardinality(Server)
\* The numeric sid of a server (sids are 1..N, as spectap's ensembles number them).
Id(i) == CHOOSE k \in 1..N : ToString(k) = i
Ids == 1..N
\* QuorumMaj.containsQuorum: more than half of the voters.
IsQuorum(S) == 2 * Cardinality(S) > N
Range(f) == {f[x] : x \in DOMAIN f}
EmptyMap == [s \in {} |-> 0]
Put(f, k, v) == (k :> v) @@ f

(***************************************************************************)
(* Votes and their order.                                                  *)
(***************************************************************************)
Vote(l, z, ee, pe, st) == [leader |-> l, zxid |-> z, electionEpoch |-> ee, peerEpoch |-> pe, state |-> st]
\* The vote a server proposes, as lookForLeader compares it (line 1044): Vote(4 args), LOOKING.
ProposalVote(i) == Vote(proposedLeader[i], proposedZxid[i], logicalclock[i], proposedEpoch[i], LOOKING)

\* totalOrderPredicate (line 723): every voter has weight 1.
TOP(newId, newZxid, newEpoch, curId, curZxid, curEpoch) ==
    /\ newId \in Ids
    /\ \/ newEpoch > curEpoch
       \/ newEpoch = curEpoch /\ (newZxid > curZxid \/ (newZxid = curZxid /\ newId > curId))
\* n (a vote or notification's fields) better than i's proposal
Better(n, i) == TOP(n.leader, n.zxid, n.peerEpoch, proposedLeader[i], proposedZxid[i], proposedEpoch[i])

\* Vote.equals(a, b) (Vote.java 107): all four numbers when either is LOOKING; else the leader
\* alone when exactly one of the two has a format version > 0x0 (a peer without ZOOKEEPER-1732),
\* else the leader and peerEpoch. Which votes have a version: recvset's are built by the
\* constructors without one (lines 1042, 1151: version 0x0), outofelection's (1168) and the
\* tracker votes of a notification (1152, 1169) carry the notification's (0x2 from a 3.8 peer).
\* So a learner's vote in recvset matches a learner's notification on the leader alone.
VoteEq(a, aVersioned, b, bVersioned) ==
    IF a.state = LOOKING \/ b.state = LOOKING
    THEN a.leader = b.leader /\ a.zxid = b.zxid /\ a.electionEpoch = b.electionEpoch
         /\ a.peerEpoch = b.peerEpoch
    ELSE IF aVersioned # bVersioned THEN a.leader = b.leader
    ELSE a.leader = b.leader /\ a.peerEpoch = b.peerEpoch

\* getVoteTracker(votes, v).hasAllQuorums(), for a map whose votes are (not) versioned and a
\* tracker vote v that is (not) versioned.
HasQuorum(votes, versioned, v, vVersioned) ==
    IsQuorum({s \in DOMAIN votes : VoteEq(votes[s], versioned, v, vVersioned)})

\* checkLeader(votes, leader, electionEpoch) of server i
CheckLeader(i, votes, l, ee) ==
    IF l # Id(i) THEN ToString(l) \in DOMAIN votes /\ votes[ToString(l)].state = LEADING
    ELSE logicalclock[i] = ee

\* receivedFollowingNotification's quorum on a map (recvset or outofelection), for a vote
\* v put into it from a notification of a FOLLOWING or LEADING server.
LearnerQuorum(i, votes, versioned, v) ==
    /\ v.state \in {FOLLOWING, LEADING}
    /\ HasQuorum(votes, versioned, v, TRUE)
    /\ CheckLeader(i, votes, v.leader, v.electionEpoch)

\* What lets lookForLeader end with `l` as the leader: the proposal has a quorum in recvset
\* (line 1046, after the finalize wait), or a notification of a learner gives a quorum in
\* recvset (line 1153, same election epoch) or in outofelection (line 1171, whose
\* logicalclock.set comes first).
EndsWith(i, l) ==
    \/ proposedLeader[i] = l /\ HasQuorum(recvset[i], FALSE, ProposalVote(i), FALSE)
    \/ \E v \in Range(recvset[i]) :
           v.leader = l /\ v.electionEpoch = logicalclock[i] /\ LearnerQuorum(i, recvset[i], FALSE, v)
    \/ \E v \in Range(outofelection[i]) :
           v.leader = l /\ v.electionEpoch = logicalclock[i] /\ LearnerQuorum(i, outofelection[i], TRUE, v)

(***************************************************************************)
(* The network: a bag of messages.                                         *)
(***************************************************************************)
Msg(from, to, f) == [from |-> from, to |-> to, fields |-> f]
Add(b, m) == IF m \in DOMAIN b THEN [b EXCEPT ![m] = @ + 1] ELSE (m :> 1) @@ b
Remove(b, m) == IF b[m] = 1 THEN [x \in DOMAIN b \ {m} |-> b[x]] ELSE [b EXCEPT ![m] = @ - 1]
\* The notification sendNotifications builds for server i (line 694).
MyNotification(i) == Vote(proposedLeader[i], proposedZxid[i], logicalclock[i], proposedEpoch[i], LOOKING)

(***************************************************************************)
(* Initial state: a QuorumPeer just constructed (what the agent records    *)
(* before anything is loaded).                                             *)
(***************************************************************************)
Init ==
    /\ logicalclock = [i \in Server |-> 0]
    /\ proposedLeader = [i \in Server |-> -1]
    /\ proposedZxid = [i \in Server |-> -1]
    /\ proposedEpoch = [i \in Server |-> 0]
    /\ state = [i \in Server |-> LOOKING]
    /\ currentEpoch = [i \in Server |-> -1]
    /\ acceptedEpoch = [i \in Server |-> -1]
    /\ recvset = [i \in Server |-> EmptyMap]
    /\ outofelection = [i \in Server |-> EmptyMap]
    /\ net = EmptyMap

(***************************************************************************)
(* QuorumPeer: a JVM starts (the constructor's state write), epochs are    *)
(* loaded and written, the peer state changes.                             *)
(***************************************************************************)
\* A server's JVM (re)starts: a new QuorumPeer and FastLeaderElection, nothing loaded yet.
\* The previous JVM, if any, was killed unobserved; what it sent stays in flight.
Restart(i) ==
    /\ logicalclock' = [logicalclock EXCEPT ![i] = 0]
    /\ proposedLeader' = [proposedLeader EXCEPT ![i] = -1]
    /\ proposedZxid' = [proposedZxid EXCEPT ![i] = -1]
    /\ proposedEpoch' = [proposedEpoch EXCEPT ![i] = 0]
    /\ state' = [state EXCEPT ![i] = LOOKING]
    /\ currentEpoch' = [currentEpoch EXCEPT ![i] = -1]
    /\ acceptedEpoch' = [acceptedEpoch EXCEPT ![i] = -1]
    /\ recvset' = [recvset EXCEPT ![i] = EmptyMap]
    /\ outofelection' = [outofelection EXCEPT ![i] = EmptyMap]
    /\ UNCHANGED net

\* FastLeaderElection.<init> / starter (line 644): a fresh logicalclock, no proposal.
InitFle(i) ==
    /\ logicalclock' = [logicalclock EXCEPT ![i] = 0]
    /\ proposedLeader' = [proposedLeader EXCEPT ![i] = -1]
    /\ proposedZxid' = [proposedZxid EXCEPT ![i] = -1]
    /\ UNCHANGED <<proposedEpoch, state, currentEpoch, acceptedEpoch, recvset, outofelection, net>>

\* currentEpoch written: the field initializer (-1), loadDataBase (from the file), Learner
\* and Leader after the new epoch is established. It never goes back, and never passes the
\* accepted epoch once that is loaded; in an election (after the first) it stays.
WriteCurrentEpoch(i, e) ==
    /\ e >= currentEpoch[i]
    /\ acceptedEpoch[i] = -1 \/ e <= acceptedEpoch[i]
    /\ state[i] = LOOKING /\ logicalclock[i] > 0 => e = currentEpoch[i]
    /\ currentEpoch' = [currentEpoch EXCEPT ![i] = e]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state,
                   acceptedEpoch, recvset, outofelection, net>>

\* acceptedEpoch written: initializer, loadDataBase, the discovery of a new epoch.
WriteAcceptedEpoch(i, e) ==
    /\ e >= acceptedEpoch[i]
    /\ e >= currentEpoch[i]
    /\ state[i] = LOOKING /\ logicalclock[i] > 0 => e = acceptedEpoch[i]
    /\ acceptedEpoch' = [acceptedEpoch EXCEPT ![i] = e]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state,
                   currentEpoch, recvset, outofelection, net>>

\* lookForLeader's end, setPeerState (line 899): LEADING when the leader is itself.
BecomeLeader(i) ==
    /\ state[i] = LOOKING
    /\ EndsWith(i, Id(i))
    /\ state' = [state EXCEPT ![i] = LEADING]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, currentEpoch,
                   acceptedEpoch, recvset, outofelection, net>>

BecomeFollower(i) ==
    /\ state[i] = LOOKING
    /\ \E l \in Ids \ {Id(i)} : EndsWith(i, l)
    /\ state' = [state EXCEPT ![i] = FOLLOWING]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, currentEpoch,
                   acceptedEpoch, recvset, outofelection, net>>

\* QuorumPeer.run: following or leading ended (the leader is gone, a quorum lost, ...):
\* back to LOOKING (lines 1584, 1599). Why it ended is ZAB's, not modelled.
StopServing(i) ==
    /\ state[i] \in {FOLLOWING, LEADING}
    /\ state' = [state EXCEPT ![i] = LOOKING]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, currentEpoch,
                   acceptedEpoch, recvset, outofelection, net>>

(***************************************************************************)
(* lookForLeader (line 912).                                               *)
(***************************************************************************)
\* Line 942: a new election: logicalclock.incrementAndGet(), fresh recvset and outofelection.
StartElection(i) ==
    /\ state[i] = LOOKING
    /\ logicalclock' = [logicalclock EXCEPT ![i] = @ + 1]
    /\ recvset' = [recvset EXCEPT ![i] = EmptyMap]
    /\ outofelection' = [outofelection EXCEPT ![i] = EmptyMap]
    /\ UNCHANGED <<proposedLeader, proposedZxid, proposedEpoch, state, currentEpoch,
                   acceptedEpoch, net>>

\* updateProposal (line 816), from one of its three call sites:
\*  - line 943 / 1020: the initial vote: itself, its last logged zxid (not observed: z,
\*    whose epoch is at most the current epoch), getPeerEpoch() = currentEpoch;
\*  - line 1030: a notification of the same election epoch better than the proposal;
\*  - line 1018: after a higher election epoch cleared recvset, a notification better
\*    than the initial vote, whose peerEpoch is then at least the current epoch.
UpdateProposal(i, l, z, e) ==
    /\ state[i] = LOOKING
    /\ l \in Ids
    /\ \/ l = Id(i) /\ e = currentEpoch[i] /\ z >= 0 /\ z \div 4294967296 <= e
       \/ TOP(l, z, e, proposedLeader[i], proposedZxid[i], proposedEpoch[i])
       \/ recvset[i] = EmptyMap /\ e >= currentEpoch[i] /\ z >= 0
    /\ proposedLeader' = [proposedLeader EXCEPT ![i] = l]
    /\ proposedZxid' = [proposedZxid EXCEPT ![i] = z]
    /\ proposedEpoch' = [proposedEpoch EXCEPT ![i] = e]
    /\ UNCHANGED <<logicalclock, state, currentEpoch, acceptedEpoch, recvset, outofelection, net>>

\* sendNotifications (line 691): one ToSend to voter j with the proposal, LOOKING.
SendNotification(i, j) ==
    /\ state[i] = LOOKING
    /\ net' = Add(net, Msg(i, j, MyNotification(i)))
    /\ UNCHANGED serverVars

\* Line 969: no notification within notTimeout: sendNotifications or connectAll follow.
ElectionTimeout(i) ==
    /\ state[i] = LOOKING
    /\ UNCHANGED vars

\* A notification n (a sender sid `from` and its fields) taken from the receive queue.
\* The queue is not observed: n is the parameter, constrained by each branch's condition.
LookingGuard(i, n) == state[i] = LOOKING /\ n.state = LOOKING

\* Lines 1005-1011: a vote for no zxid (-1) is ignored.
HandleIgnored(i, from, n) ==
    /\ state[i] = LOOKING
    /\ n.zxid = -1 \/ proposedZxid[i] = -1
    /\ UNCHANGED vars

\* Line 1014: a higher election epoch. Its effects follow as their own steps: the clock
\* (RaiseLogicalclock), recvset.clear (ClearRecvset), updateProposal, sendNotifications,
\* recvset.put.
HandleHigherEpoch(i, from, n) ==
    /\ LookingGuard(i, n)
    /\ n.electionEpoch > logicalclock[i]
    /\ UNCHANGED vars

\* Line 1015: logicalclock.set(n.electionEpoch)
RaiseLogicalclock(i, e) ==
    /\ state[i] = LOOKING
    /\ e > logicalclock[i]
    /\ logicalclock' = [logicalclock EXCEPT ![i] = e]
    /\ UNCHANGED <<proposedLeader, proposedZxid, proposedEpoch, state, currentEpoch,
                   acceptedEpoch, recvset, outofelection, net>>

\* Line 1016: recvset.clear()
ClearRecvset(i) ==
    /\ state[i] = LOOKING
    /\ recvset' = [recvset EXCEPT ![i] = EmptyMap]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state,
                   currentEpoch, acceptedEpoch, outofelection, net>>

\* Line 1023: a lower election epoch: dropped.
HandleLowerEpoch(i, from, n) ==
    /\ LookingGuard(i, n)
    /\ n.electionEpoch < logicalclock[i]
    /\ UNCHANGED vars

\* Line 1029: the same election epoch, a better vote: updateProposal and sendNotifications
\* follow as their own steps.
HandleSameEpochBetter(i, from, n) ==
    /\ LookingGuard(i, n)
    /\ n.electionEpoch = logicalclock[i]
    /\ Better(n, i)
    /\ UNCHANGED vars

\* The same election epoch, not better: only the vote is put.
HandleSameEpoch(i, from, n) ==
    /\ LookingGuard(i, n)
    /\ n.electionEpoch = logicalclock[i]
    /\ ~Better(n, i)
    /\ UNCHANGED vars

\* Line 1042: recvset.put(n.sid, new Vote(n.leader, n.zxid, n.electionEpoch, n.peerEpoch)).
\* By then the election epoch is n's and the proposal is at least as good as n.
PutVote(i, s, v) ==
    /\ state[i] = LOOKING
    /\ s \in Server
    /\ v.state = LOOKING
    /\ v.electionEpoch = logicalclock[i]
    /\ ~Better(v, i)
    /\ recvset' = [recvset EXCEPT ![i] = Put(@, s, v)]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state,
                   currentEpoch, acceptedEpoch, outofelection, net>>

\* Line 1046: the proposal has a quorum in recvset: the finalize wait begins.
QuorumReached(i) ==
    /\ state[i] = LOOKING
    /\ HasQuorum(recvset[i], FALSE, ProposalVote(i), FALSE)
    /\ UNCHANGED vars

\* Lines 1049-1051: polled in the finalize wait: a vote not better is dropped, a better
\* one is put back into the queue (and handled again).
FinalizeDiscard(i, from, n) ==
    /\ state[i] = LOOKING
    /\ HasQuorum(recvset[i], FALSE, ProposalVote(i), FALSE)
    /\ ~Better(n, i)
    /\ UNCHANGED vars

FinalizeRequeue(i, from, n) ==
    /\ state[i] = LOOKING
    /\ HasQuorum(recvset[i], FALSE, ProposalVote(i), FALSE)
    /\ Better(n, i)
    /\ UNCHANGED vars

\* Lines 1068-1117: a notification of an OBSERVING (ignored), FOLLOWING or LEADING server
\* (receivedFollowingNotification / receivedLeadingNotification follow as their steps).
HandleFromLearner(i, from, n) ==
    /\ state[i] = LOOKING
    /\ n.state \in {FOLLOWING, LEADING, OBSERVING}
    /\ UNCHANGED vars

\* Line 1151: the same election epoch: recvset.put(n.sid, vote with n's state).
PutLearnerVote(i, s, v) ==
    /\ state[i] = LOOKING
    /\ s \in Server
    /\ v.state \in {FOLLOWING, LEADING}
    /\ v.electionEpoch = logicalclock[i]
    /\ recvset' = [recvset EXCEPT ![i] = Put(@, s, v)]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state,
                   currentEpoch, acceptedEpoch, outofelection, net>>

\* Line 1168: outofelection.put(n.sid, vote)
PutOutOfElection(i, s, v) ==
    /\ state[i] = LOOKING
    /\ s \in Server
    /\ v.state \in {FOLLOWING, LEADING}
    /\ outofelection' = [outofelection EXCEPT ![i] = Put(@, s, v)]
    /\ UNCHANGED <<logicalclock, proposedLeader, proposedZxid, proposedEpoch, state,
                   currentEpoch, acceptedEpoch, recvset, net>>

\* Line 1173: a quorum of outofelection follows a leader: logicalclock.set(n.electionEpoch)
\* (setPeerState follows).
JoinOutOfElection(i, e) ==
    /\ state[i] = LOOKING
    /\ \E v \in Range(outofelection[i]) :
           v.electionEpoch = e /\ LearnerQuorum(i, outofelection[i], TRUE, v)
    /\ logicalclock' = [logicalclock EXCEPT ![i] = e]
    /\ UNCHANGED <<proposedLeader, proposedZxid, proposedEpoch, state, currentEpoch,
                   acceptedEpoch, recvset, outofelection, net>>

\* lookForLeader returns the end vote v (lines 1064, 1105, 1116): the peer state is set; the
\* vote's election epoch is the logicalclock; from the looking path (site "looking") it is
\* the proposal; it names the server itself exactly when it leads.
ElectionEnd(i, site, v) ==
    /\ state[i] \in {FOLLOWING, LEADING}
    /\ v.electionEpoch = logicalclock[i]
    /\ (state[i] = LEADING) = (v.leader = Id(i))
    /\ site = "looking" => v = ProposalVote(i)
    /\ UNCHANGED vars

\* Line 1131: lookForLeader stopped (shutdown).
ElectionStop(i) == UNCHANGED vars

(***************************************************************************)
(* WorkerReceiver.run: a notification m taken from the connection manager. *)
(***************************************************************************)
\* WorkerReceiver reads the peer state (lines 408, 433) and the proposal (getVote, 418)
\* before its record is written, and the election thread may change them in between: what it
\* read is not observed. Seen in captures: a `queued` record after the server's FOLLOWING one,
\* an `answered` one (and its reply, state LOOKING) after the server had gone LOOKING and
\* started a new election, a lagging reply with the proposal before an updateProposal
\* recorded earlier. So the receipts are not guarded by the server's recorded state: which of
\* them WorkerReceiver took is checked against the message only.
\* Line 409: this server is LOOKING: the notification is queued for lookForLeader.
ReceiveQueued(i, m) ==
    /\ m \in DOMAIN net /\ m.to = i
    /\ net' = Remove(net, m)
    /\ UNCHANGED serverVars

\* Line 436: not LOOKING, the sender is: it is answered with the current vote (ReplyNotLooking).
ReceiveAnswered(i, m) ==
    /\ m \in DOMAIN net /\ m.to = i
    /\ m.fields.state = LOOKING
    /\ net' = Remove(net, m)
    /\ UNCHANGED serverVars

\* Neither is LOOKING: nothing is done.
ReceiveIgnored(i, m) ==
    /\ m \in DOMAIN net /\ m.to = i
    /\ m.fields.state # LOOKING
    /\ net' = Remove(net, m)
    /\ UNCHANGED serverVars

\* Line 428: a LOOKING sender lags (a lower election epoch): answered with the proposal and
\* logicalclock as WorkerReceiver read them: the current ones, or ones the election thread
\* has replaced since (a proposal only improves within an election epoch).
ReplyLagging(i, j, v) ==
    \* LOOKING as WorkerReceiver read it: the election thread may have ended the election since
    \* (the trace then shows the new state first; the reply still has this election's epoch).
    /\ \/ state[i] = LOOKING
       \/ state[i] \in {FOLLOWING, LEADING} /\ v.electionEpoch = logicalclock[i]
    /\ v.state = LOOKING
    /\ \/ v = MyNotification(i)
       \/ v.electionEpoch = logicalclock[i] /\ v.leader \in Ids /\ ~Better(v, i)
       \/ 0 < v.electionEpoch /\ v.electionEpoch < logicalclock[i] /\ v.leader \in Ids
    /\ net' = Add(net, Msg(i, j, v))
    /\ UNCHANGED serverVars

\* Line 464: not LOOKING (as WorkerReceiver read it, above): answered with
\* QuorumPeer.currentVote (not observed: v), with the peer state read again (461). currentVote is QuorumPeer's initial vote (startLeaderElection, line 1214:
\* itself, its last zxid, its current epoch, election epoch -1) until the first election's
\* end vote is set (line 1509, after lookForLeader returned: a reply can come first); then
\* the last election's end vote (its election epoch the logicalclock, naming the server
\* itself exactly when it leads; its peerEpoch raised by updateElectionVote), or an earlier
\* election's until this one's is set. Back to LOOKING (leading or following ended) and before
\* the next election raises the logicalclock, it is still the election just left's, whoever it
\* named (seen in a random capture: LEADING -> LOOKING, then a reply with the state LOOKING and
\* the vote for itself).
CurrentVoteOK(i, v) ==
    /\ v.leader \in Ids
    /\ \/ v.electionEpoch = -1 /\ v.leader = Id(i) /\ v.peerEpoch <= currentEpoch[i]
       \/ v.electionEpoch = logicalclock[i] /\ (state[i] = LOOKING \/ (state[i] = LEADING) = (v.leader = Id(i)))
       \/ 0 < v.electionEpoch /\ v.electionEpoch < logicalclock[i]

\* WorkerReceiver reads the server's state and vote, then sends: when the election thread leaves
\* FOLLOWING or LEADING for LOOKING in between (a race the trace shows as the state change
\* first), the reply still carries the state and vote of the election the server just left:
\* not this one's, or this one's before its logicalclock is raised.
StaleNotLooking(i, v) ==
    /\ state[i] = LOOKING
    /\ v.state \in {FOLLOWING, LEADING}
    /\ v.leader \in Ids
    /\ (v.state = LEADING) = (v.leader = Id(i))
    /\ 0 < v.electionEpoch /\ v.electionEpoch <= logicalclock[i]

ReplyNotLooking(i, j, v) ==
    /\ \/ v.state = state[i] /\ CurrentVoteOK(i, v)
       \/ StaleNotLooking(i, v)
    /\ net' = Add(net, Msg(i, j, v))
    /\ UNCHANGED serverVars

\* QuorumCnxManager: on a new connection the last message queued for the peer is sent
\* again (the queue is not observed: a message of this server's, of an election epoch it
\* has had).
Resend(i, m) ==
    /\ m.from = i /\ m.to \in Server \ {i}
    /\ m.fields.electionEpoch <= logicalclock[i]
    /\ net' = Add(net, m)
    /\ UNCHANGED serverVars

(***************************************************************************)
(* The benchmark's actions (SysMoBench's ZooKeeper target actions).        *)
(***************************************************************************)
\* Notification: a notification sent, from any site.
Notification(i, m) ==
    /\ m.from = i
    /\ \/ m.fields.state = LOOKING /\ state[i] = LOOKING /\ SendNotification(i, m.to)
          /\ m.fields = MyNotification(i)
       \/ ReplyLagging(i, m.to, m.fields)
       \/ ReplyNotLooking(i, m.to, m.fields)
       \/ Resend(i, m)

\* HandleNotification: WorkerReceiver takes a notification and queues it for lookForLeader,
\* answers it or ignores it (as SysMoBench's Remix instrumentation and spectap's export name
\* the receipt). An answer is a Notification of its own; lookForLeader's handling of a queued
\* notification is its own steps (Handle*, Put*, ... above): the two run on different
\* threads, and their steps interleave.
HandleNotification(i, m) ==
    \/ ReceiveQueued(i, m)
    \/ ReceiveAnswered(i, m)
    \/ ReceiveIgnored(i, m)

\* The next-state relation over the actions whose parameters range over finite sets. The
\* others take values that are not observed (a notification lookForLeader handles, a vote put,
\* an epoch or zxid written, a reply's current vote): the mappings bind them from the record.
Next ==
    \/ \E i \in Server :
        \/ Restart(i) \/ InitFle(i) \/ BecomeLeader(i) \/ BecomeFollower(i) \/ StopServing(i)
        \/ StartElection(i) \/ ElectionTimeout(i) \/ ClearRecvset(i) \/ QuorumReached(i)
        \/ ElectionStop(i)
    \/ \E i, j \in Server : SendNotification(i, j) \/ ReplyLagging(i, j, MyNotification(i))
    \/ \E m \in DOMAIN net : HandleNotification(m.to, m)

(***************************************************************************)
(* Invariants (of every state a trace shows, see the test).                *)
(***************************************************************************)
VoteOK(v) == v.leader \in Ids \/ v.leader = -1
TypeOK ==
    /\ \A i \in Server :
        /\ state[i] \in States
        /\ logicalclock[i] >= 0
        /\ proposedLeader[i] \in Ids \cup {-1}
        /\ currentEpoch[i] >= -1 /\ acceptedEpoch[i] >= -1
        /\ DOMAIN recvset[i] \subseteq Server /\ DOMAIN outofelection[i] \subseteq Server
        /\ \A s \in DOMAIN recvset[i] : VoteOK(recvset[i][s]) /\ recvset[i][s].state \in States
    /\ \A m \in DOMAIN net : m.from \in Server /\ m.to \in Server /\ net[m] >= 1

\* NOT an invariant of FLE at this granularity, kept to say so: at most one server LEADING per
\* election epoch. Two servers can both end one election epoch LEADING: seen in a capture
\* (follower-pause, seed 1): server 2 led with its own early vote and server 1's (1 follows 2),
\* server 3 with server 2's later vote for 3 and its own. ZAB's discovery lets one of them
\* establish the new epoch (3's currentEpoch stayed, it went back to LOOKING and followed 2).
OneLeaderPerEpoch ==
    \A i, j \in Server :
        i # j /\ state[i] = LEADING /\ state[j] = LEADING => logicalclock[i] # logicalclock[j]

\* A leader ended its election with a quorum for itself: in recvset (its proposal, or a
\* learner's vote for it) or in outofelection. lookForLeader does not run while it leads,
\* so this holds as long as it leads.
LeaderHasQuorum == \A i \in Server : state[i] = LEADING => EndsWith(i, Id(i))

\* NOT an invariant, kept to say so: a server's recvset holds no vote of a later election
\* epoch than its logicalclock. receivedFollowingNotification's outofelection path sets
\* logicalclock to the leader's election epoch, which can be lower than the server's own
\* (line 1173), and keeps recvset: seen in a real capture (random, seed 1).
RecvsetOfEpoch ==
    \A i \in Server : \A s \in DOMAIN recvset[i] : recvset[i][s].electionEpoch <= logicalclock[i]

\* The accepted epoch is never behind the current one (once both are loaded).
EpochsOrdered == \A i \in Server : acceptedEpoch[i] >= 0 => currentEpoch[i] <= acceptedEpoch[i]

Invariants == TypeOK /\ LeaderHasQuorum /\ EpochsOrdered

\* A step that changes nothing and holds when the invariants do: with windows whose pre-state
\* and post-state are one observed state, it checks the invariants on that state.
CheckInvariants == Invariants /\ UNCHANGED vars
====
