/*
 * The hook points of the ZooKeeper agent, as data: for Debian's ZooKeeper 3.8.0, which code
 * location is which step of Fast Leader Election, and which locals and fields are read there.
 *
 * A code hook names a method (class, name, descriptor), a source line of that method, and an
 * anchor within the line:
 *   LINE        the first instruction of the line (a branch taken: nothing of it ran yet);
 *               with OWNER.NAME given, the line must call it exactly once (a check that the
 *               line is the code the hook means);
 *   AFTER_CALL  the instruction after the call of OWNER.NAME on that line (the call's effect is
 *               done: a post-state);
 *   AT_CALL     the call itself (not a breakpoint: a location that a stack frame is compared
 *               with, e.g. which call site built a ToSend);
 *   RETURN      the return instruction(s) on that line;
 *   PUTFIELD    the instruction after every putfield of the field OWNER.NAME in any method of
 *               the class (no line: every write of the field is a step).
 * The agent resolves every hook when the VM starts, from the method's line table, bytecode and
 * constant pool; locals are found by name in the local variable table (and must be live at the
 * location). A hook that cannot be resolved stops the JVM with a message naming the class,
 * method, line and what was looked for. The agent option hook.<id>=<line> moves a hook to
 * another line (to adapt to another build, and to test the failure).
 *
 * JVMTI field-modification watches would catch the same writes, but on OpenJDK 17 a thread with
 * a field watch enabled runs in interpreter-only mode: every thread of ZooKeeper, all its code
 * (measured: a HashMap loop 7-10x slower). Breakpoints only keep the methods that hold them
 * interpreted.
 */
#ifndef SPECTAP_ZK_HOOKS_H
#define SPECTAP_ZK_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Classes the agent needs, loaded (not initialized) at VM start. */
enum zk_class {
	ZC_FLE,          /* org/apache/zookeeper/server/quorum/FastLeaderElection */
	ZC_RECEIVER,     /* ...FastLeaderElection$Messenger$WorkerReceiver */
	ZC_TOSEND,       /* ...FastLeaderElection$ToSend */
	ZC_NOTIFICATION, /* ...FastLeaderElection$Notification */
	ZC_PEER,         /* ...QuorumPeer */
	ZC_VOTE,         /* ...Vote */
	ZC_MESSAGE,      /* ...QuorumCnxManager$Message */
	ZC_SENDWORKER,   /* ...QuorumCnxManager$SendWorker */
	ZC_COUNT
};

enum zk_anchor { ZA_LINE, ZA_AFTER_CALL, ZA_AT_CALL, ZA_RETURN, ZA_PUTFIELD };

/* What a hook does when it is hit (see zk_agent.c). */
enum zk_action {
	A_FLE_INIT,     /* FLE constructed: its initial state */
	A_PROPOSAL,     /* updateProposal returned */
	A_CLOCK,        /* logicalclock changed (arg: site) */
	A_POLL,         /* lookForLeader polled recvqueue: a new loop iteration (no record) */
	A_TIMEOUT,      /* no notification within notTimeout (arg: what is done) */
	A_HANDLE,       /* a notification's branch in lookForLeader (arg: branch) */
	A_HANDLE_JOIN,  /* where branches join: the branch, when no branch hook said it (arg) */
	A_FIN_TOP,      /* the finalize wait loop: begins, or discarded the last notification */
	A_FIN_POLLED,   /* the finalize wait polled a notification (no record) */
	A_RS_CLEAR,     /* recvset.clear() */
	A_RS_PUT,       /* recvset.put() (arg: site) */
	A_OOE_PUT,      /* outofelection.put() */
	A_END,          /* lookForLeader returns a vote (arg: site) */
	A_STOP,         /* lookForLeader returns null (stopped) */
	A_WR_RAW,       /* WorkerReceiver: a notification before it became n (arg: action:reason) */
	A_WR_MALFORMED, /* WorkerReceiver: a message too short to parse */
	A_WR_QUEUED,    /* WorkerReceiver: n offered to recvqueue */
	A_WR_NOTLOOKING,/* WorkerReceiver: this server is not looking: answers a looking sender */
	A_SEND,         /* a ToSend was constructed: one notification to one server */
	A_SITE,         /* a ToSend call site (arg: its name; not a breakpoint) */
	A_PEER_STATE,   /* QuorumPeer.state written */
	A_EPOCH,        /* QuorumPeer.currentEpoch or acceptedEpoch written (arg: which) */
	A_RESEND,       /* a new connection's SendWorker sends the last message again */
};

#define ZK_HOOK_LOCALS 6

struct zk_hook {
	const char *id;            /* unique; the option hook.<id>=<line> moves it */
	enum zk_class cls;
	const char *method, *sig;  /* NULL for PUTFIELD: every method */
	int line;                  /* 0 for PUTFIELD */
	enum zk_anchor anchor;
	const char *call_owner;    /* AFTER_CALL, AT_CALL (and LINE, optional): the called
				    * method's class; PUTFIELD: the field's class */
	const char *call_name;     /* and its name (PUTFIELD: the field's) */
	enum zk_action action;
	const char *arg;
	const char *locals[ZK_HOOK_LOCALS]; /* names in the local variable table, NULL-ended */
};

enum zk_field {
	ZF_FLE_LOGICALCLOCK, ZF_FLE_PLEADER, ZF_FLE_PZXID, ZF_FLE_PEPOCH, ZF_FLE_SELF,
	ZF_PEER_STATE, ZF_PEER_CUREPOCH, ZF_PEER_ACCEPOCH, ZF_PEER_MYID,
	ZF_N_LEADER, ZF_N_ZXID, ZF_N_EEPOCH, ZF_N_PEPOCH, ZF_N_STATE, ZF_N_SID,
	ZF_TS_LEADER, ZF_TS_ZXID, ZF_TS_EEPOCH, ZF_TS_PEPOCH, ZF_TS_STATE, ZF_TS_SID,
	ZF_V_ID, ZF_V_ZXID, ZF_V_EEPOCH, ZF_V_PEPOCH, ZF_V_STATE,
	ZF_MSG_SID,
	ZF_SW_SID,
	ZF_COUNT
};

struct zk_field_spec {
	enum zk_class cls;
	const char *name, *sig;
};

extern const char *const zk_class_names[ZC_COUNT];
extern const struct zk_field_spec zk_fields[ZF_COUNT];
extern const struct zk_hook zk_hooks[];
extern const size_t zk_nhooks;

/* "FastLeaderElection$ToSend" for messages: the class name after the package. */
const char *zk_class_short(enum zk_class c);
/* Index of the hook with this id, or -1. */
int zk_hook_find(const char *id);

/* A notification as FastLeaderElection.buildMsg writes it (3.8: big-endian int state, longs
 * leader, zxid, electionEpoch, peerEpoch, then version and config): out[0..4] in that order.
 * 0, or -1 when n is shorter than those 36 bytes. */
int zk_parse_wire(const unsigned char *b, size_t n, int64_t out[5]);

#endif
