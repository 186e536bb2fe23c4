/* The hook table for Debian's ZooKeeper 3.8.0 (zookeeper 3.8.0-11, /usr/share/java/zookeeper.jar);
 * see hooks.h. Lines and code shapes were read with `javap -c -l -p` from that jar. */
#include "hooks.h"

#include <string.h>

#define PKG "org/apache/zookeeper/server/quorum/"

const char *const zk_class_names[ZC_COUNT] = {
	[ZC_FLE] = PKG "FastLeaderElection",
	[ZC_RECEIVER] = PKG "FastLeaderElection$Messenger$WorkerReceiver",
	[ZC_TOSEND] = PKG "FastLeaderElection$ToSend",
	[ZC_NOTIFICATION] = PKG "FastLeaderElection$Notification",
	[ZC_PEER] = PKG "QuorumPeer",
	[ZC_VOTE] = PKG "Vote",
	[ZC_MESSAGE] = PKG "QuorumCnxManager$Message",
	[ZC_SENDWORKER] = PKG "QuorumCnxManager$SendWorker",
};

#define STATE_SIG "L" PKG "QuorumPeer$ServerState;"

const struct zk_field_spec zk_fields[ZF_COUNT] = {
	[ZF_FLE_LOGICALCLOCK] = {ZC_FLE, "logicalclock", "Ljava/util/concurrent/atomic/AtomicLong;"},
	[ZF_FLE_PLEADER] = {ZC_FLE, "proposedLeader", "J"},
	[ZF_FLE_PZXID] = {ZC_FLE, "proposedZxid", "J"},
	[ZF_FLE_PEPOCH] = {ZC_FLE, "proposedEpoch", "J"},
	[ZF_FLE_SELF] = {ZC_FLE, "self", "L" PKG "QuorumPeer;"},
	[ZF_PEER_STATE] = {ZC_PEER, "state", STATE_SIG},
	[ZF_PEER_CUREPOCH] = {ZC_PEER, "currentEpoch", "J"},
	[ZF_PEER_ACCEPOCH] = {ZC_PEER, "acceptedEpoch", "J"},
	[ZF_PEER_MYID] = {ZC_PEER, "myid", "J"},
	[ZF_N_LEADER] = {ZC_NOTIFICATION, "leader", "J"},
	[ZF_N_ZXID] = {ZC_NOTIFICATION, "zxid", "J"},
	[ZF_N_EEPOCH] = {ZC_NOTIFICATION, "electionEpoch", "J"},
	[ZF_N_PEPOCH] = {ZC_NOTIFICATION, "peerEpoch", "J"},
	[ZF_N_STATE] = {ZC_NOTIFICATION, "state", STATE_SIG},
	[ZF_N_SID] = {ZC_NOTIFICATION, "sid", "J"},
	[ZF_TS_LEADER] = {ZC_TOSEND, "leader", "J"},
	[ZF_TS_ZXID] = {ZC_TOSEND, "zxid", "J"},
	[ZF_TS_EEPOCH] = {ZC_TOSEND, "electionEpoch", "J"},
	[ZF_TS_PEPOCH] = {ZC_TOSEND, "peerEpoch", "J"},
	[ZF_TS_STATE] = {ZC_TOSEND, "state", STATE_SIG},
	[ZF_TS_SID] = {ZC_TOSEND, "sid", "J"},
	[ZF_V_ID] = {ZC_VOTE, "id", "J"},
	[ZF_V_ZXID] = {ZC_VOTE, "zxid", "J"},
	[ZF_V_EEPOCH] = {ZC_VOTE, "electionEpoch", "J"},
	[ZF_V_PEPOCH] = {ZC_VOTE, "peerEpoch", "J"},
	[ZF_V_STATE] = {ZC_VOTE, "state", STATE_SIG},
	[ZF_MSG_SID] = {ZC_MESSAGE, "sid", "J"},
	[ZF_SW_SID] = {ZC_SENDWORKER, "sid", "Ljava/lang/Long;"},
};

#define FLE_INIT_SIG "(L" PKG "QuorumPeer;L" PKG "QuorumCnxManager;)V"
#define LFL "lookForLeader", "()L" PKG "Vote;"
#define RFN "receivedFollowingNotification", \
	"(Ljava/util/Map;Ljava/util/Map;L" PKG "SyncedLearnerTracker;L" PKG \
	"FastLeaderElection$Notification;)L" PKG "Vote;"
#define RUN "run", "()V"
#define TOSEND_INIT_SIG "(L" PKG "FastLeaderElection$ToSend$mType;JJJ" STATE_SIG "JJ[B)V"
#define ALONG "java/util/concurrent/atomic/AtomicLong"
#define LBQ "java/util/concurrent/LinkedBlockingQueue"
#define TOSEND PKG "FastLeaderElection$ToSend"
#define RAW_LOCALS {"response", "rstate", "rleader", "rzxid", "relectionEpoch", "rpeerepoch"}

const struct zk_hook zk_hooks[] = {
	/* The election object and its proposal. */
	{"fle.init", ZC_FLE, "<init>", FLE_INIT_SIG, 632, ZA_RETURN, 0, 0, A_FLE_INIT, 0, {0}},
	{"fle.updateProposal", ZC_FLE, "updateProposal", "(JJJ)V", 827, ZA_RETURN, 0, 0, A_PROPOSAL,
	 0, {"leader", "zxid", "epoch"}},

	/* lookForLeader: a new election, then one loop iteration per notification polled. */
	{"lookForLeader.clock.newElection", ZC_FLE, LFL, 942, ZA_AFTER_CALL, ALONG, "incrementAndGet",
	 A_CLOCK, "newElection", {"recvset", "outofelection"}},
	{"lookForLeader.poll", ZC_FLE, LFL, 969, ZA_LINE, 0, 0, A_POLL, 0, {0}},
	{"lookForLeader.timeout.resend", ZC_FLE, LFL, 971, ZA_LINE, PKG "FastLeaderElection", "sendNotifications", A_TIMEOUT,
	 "sendNotifications", {"notTimeout"}},
	{"lookForLeader.timeout.connect", ZC_FLE, LFL, 973, ZA_LINE, PKG "QuorumCnxManager", "connectAll", A_TIMEOUT, "connectAll",
	 {"notTimeout"}},
	{"lookForLeader.end.oracle", ZC_FLE, LFL, 993, ZA_LINE, 0, 0, A_END, "oracle", {"endVote"}},
	{"lookForLeader.handle.ownZxid", ZC_FLE, LFL, 1006, ZA_LINE, 0, 0, A_HANDLE,
	 "lookingIgnoredOwnZxid", {"n"}},
	{"lookForLeader.handle.zxid", ZC_FLE, LFL, 1010, ZA_LINE, 0, 0, A_HANDLE,
	 "lookingIgnoredZxid", {"n"}},
	{"lookForLeader.handle.higherEpoch", ZC_FLE, LFL, 1015, ZA_LINE, ALONG, "set", A_HANDLE,
	 "lookingHigherEpoch", {"n"}},
	{"lookForLeader.clock.higherEpoch", ZC_FLE, LFL, 1015, ZA_AFTER_CALL, ALONG, "set", A_CLOCK,
	 "higherEpoch", {"recvset", "outofelection"}},
	{"lookForLeader.recvset.clear", ZC_FLE, LFL, 1016, ZA_AFTER_CALL, "java/util/Map", "clear",
	 A_RS_CLEAR, 0, {"recvset"}},
	{"lookForLeader.handle.lowerEpoch", ZC_FLE, LFL, 1024, ZA_LINE, 0, 0, A_HANDLE,
	 "lookingLowerEpoch", {"n"}},
	{"lookForLeader.handle.better", ZC_FLE, LFL, 1030, ZA_LINE, PKG "FastLeaderElection", "updateProposal", A_HANDLE,
	 "lookingSameEpochBetter", {"n"}},
	{"lookForLeader.handle.sameEpoch", ZC_FLE, LFL, 1034, ZA_LINE, 0, 0, A_HANDLE_JOIN,
	 "lookingSameEpoch", {"n"}},
	{"lookForLeader.recvset.put", ZC_FLE, LFL, 1042, ZA_AFTER_CALL, "java/util/Map", "put",
	 A_RS_PUT, "looking", {"recvset", "n"}},
	{"lookForLeader.finalize.wait", ZC_FLE, LFL, 1049, ZA_LINE, LBQ, "poll", A_FIN_TOP, 0, {"n"}},
	{"lookForLeader.finalize.polled", ZC_FLE, LFL, 1050, ZA_LINE, PKG "FastLeaderElection", "totalOrderPredicate", A_FIN_POLLED, 0, {0}},
	{"lookForLeader.handle.requeue", ZC_FLE, LFL, 1051, ZA_LINE, LBQ, "put", A_HANDLE,
	 "finalizeRequeued", {"n"}},
	{"lookForLeader.end.looking", ZC_FLE, LFL, 1064, ZA_LINE, 0, 0, A_END, "looking",
	 {"endVote"}},
	{"lookForLeader.handle.observing", ZC_FLE, LFL, 1069, ZA_LINE, 0, 0, A_HANDLE,
	 "fromObserver", {"n"}},
	{"lookForLeader.handle.following", ZC_FLE, LFL, 1101, ZA_LINE, PKG "FastLeaderElection", "receivedFollowingNotification", A_HANDLE,
	 "fromFollower", {"n"}},
	{"lookForLeader.end.following", ZC_FLE, LFL, 1105, ZA_LINE, 0, 0, A_END, "following",
	 {"resultFN"}},
	{"lookForLeader.handle.leading", ZC_FLE, LFL, 1112, ZA_LINE, PKG "FastLeaderElection", "receivedLeadingNotification", A_HANDLE, "fromLeader",
	 {"n"}},
	{"lookForLeader.end.leading", ZC_FLE, LFL, 1116, ZA_LINE, 0, 0, A_END, "leading",
	 {"resultLN"}},
	{"lookForLeader.handle.unknownState", ZC_FLE, LFL, 1119, ZA_LINE, 0, 0, A_HANDLE,
	 "unknownState", {"n"}},
	{"lookForLeader.handle.invalidVoter", ZC_FLE, LFL, 1123, ZA_LINE, 0, 0, A_HANDLE,
	 "invalidVoter", {"n"}},
	{"lookForLeader.stop", ZC_FLE, LFL, 1131, ZA_LINE, 0, 0, A_STOP, 0, {0}},

	/* receivedFollowingNotification (also the LEADING case): votes of servers that already
	 * follow or lead. */
	{"following.recvset.put", ZC_FLE, RFN, 1151, ZA_AFTER_CALL, "java/util/Map", "put", A_RS_PUT,
	 "following", {"recvset", "n"}},
	{"following.outofelection.put", ZC_FLE, RFN, 1168, ZA_AFTER_CALL, "java/util/Map", "put",
	 A_OOE_PUT, 0, {"outofelection", "n"}},
	{"following.clock.outOfElection", ZC_FLE, RFN, 1173, ZA_AFTER_CALL, ALONG, "set", A_CLOCK,
	 "outOfElection", {"recvset", "outofelection"}},

	/* WorkerReceiver.run: each message from the connection manager. */
	{"receiver.malformed", ZC_RECEIVER, RUN, 335, ZA_LINE, 0, 0, A_WR_MALFORMED, 0,
	 {"response"}},
	{"receiver.nonVoter", ZC_RECEIVER, RUN, 344, ZA_LINE, PKG "QuorumPeer", "getCurrentVote", A_WR_RAW, "answered:nonVoter",
	 RAW_LOCALS},
	{"receiver.badState", ZC_RECEIVER, RUN, 377, ZA_LINE, 0, 0, A_WR_RAW, "dropped:badState",
	 RAW_LOCALS},
	/* Before the offer: once n is in recvqueue the election thread may handle it at once. */
	{"receiver.queued", ZC_RECEIVER, RUN, 409, ZA_LINE, LBQ, "offer", A_WR_QUEUED, 0, {"n"}},
	{"receiver.notLooking", ZC_RECEIVER, RUN, 436, ZA_LINE, PKG "QuorumPeer", "getCurrentVote", A_WR_NOTLOOKING, 0,
	 {"n", "ackstate"}},

	/* Notifications sent: every ToSend built, and where it was built. */
	{"send", ZC_TOSEND, "<init>", TOSEND_INIT_SIG, 172, ZA_RETURN, 0, 0, A_SEND, 0, {0}},
	{"send.site.sendNotifications", ZC_FLE, "sendNotifications", "()V", 702, ZA_AT_CALL, TOSEND,
	 "<init>", A_SITE, "sendNotifications", {0}},
	{"send.site.nonVoter", ZC_RECEIVER, RUN, 354, ZA_AT_CALL, TOSEND, "<init>", A_SITE,
	 "replyNonVoter", {0}},
	{"send.site.lagging", ZC_RECEIVER, RUN, 428, ZA_AT_CALL, TOSEND, "<init>", A_SITE,
	 "replyLagging", {0}},
	{"send.site.notLooking", ZC_RECEIVER, RUN, 464, ZA_AT_CALL, TOSEND, "<init>", A_SITE,
	 "replyNotLooking", {0}},

	/* The connection manager sends the last message to a server again when a new connection
	 * to it starts with nothing queued (QuorumCnxManager$SendWorker.run): a second delivery of
	 * a notification that no ToSend stands for. Before the send, so before its receipt. */
	{"transport.resendLast", ZC_SENDWORKER, RUN, 1261, ZA_LINE, PKG "QuorumCnxManager$SendWorker",
	 "send", A_RESEND, 0, {"b"}},

	/* QuorumPeer: every write of its state and epochs (setPeerState, the constructor,
	 * loadDataBase, get/setCurrentEpoch, get/setAcceptedEpoch in 3.8.0). */
	{"peer.state", ZC_PEER, 0, 0, 0, ZA_PUTFIELD, PKG "QuorumPeer", "state", A_PEER_STATE, 0,
	 {0}},
	{"peer.currentEpoch", ZC_PEER, 0, 0, 0, ZA_PUTFIELD, PKG "QuorumPeer", "currentEpoch",
	 A_EPOCH, "currentEpoch", {0}},
	{"peer.acceptedEpoch", ZC_PEER, 0, 0, 0, ZA_PUTFIELD, PKG "QuorumPeer", "acceptedEpoch",
	 A_EPOCH, "acceptedEpoch", {0}},
};

const size_t zk_nhooks = sizeof zk_hooks / sizeof zk_hooks[0];

const char *zk_class_short(enum zk_class c)
{
	const char *n = zk_class_names[c], *slash = strrchr(n, '/');
	return slash ? slash + 1 : n;
}

int zk_hook_find(const char *id)
{
	for (size_t i = 0; i < zk_nhooks; i++)
		if (!strcmp(zk_hooks[i].id, id))
			return (int)i;
	return -1;
}

int zk_parse_wire(const unsigned char *b, size_t n, int64_t out[5])
{
	if (n < 36)
		return -1;
	for (int k = 0; k < 5; k++) {
		size_t at = k == 0 ? 0 : 4 + 8 * (size_t)(k - 1), len = k == 0 ? 4 : 8;
		uint64_t x = 0;
		for (size_t i = 0; i < len; i++)
			x = x << 8 | b[at + i];
		out[k] = k == 0 ? (int64_t)(int32_t)(uint32_t)x : (int64_t)x;
	}
	return 0;
}
