/*
 * The ZooKeeper dialect of the SysMoBench envelope: what SysMoBench's Remix instrumentation
 * writes for Fast Leader Election (tla_eval/tasks/zookeeper/INSTRUMENTATION.md there),
 *   {"event":"Notification","step":N,"node":"s<id>","subnode":S,
 *    "data":{"msgId":M,"from":1,"to":2,"electionEpoch":E,"leader":L,"payload":"from=1, ..."}}
 * with spectap's node state added as "state", inside {"tag":"trace","ts":"<ns>","event":...}.
 *
 *   zk.notification.send        -> Notification (node: the sender)
 *   zk.notification.resend      -> Notification (the last message sent again on a new
 *                                  connection: a message on the wire of its own id)
 *   zk.notification.recv        -> HandleNotification (node: the receiver; Remix emits it when
 *                                  the receiver's WorkerReceiver takes the message)
 *   zk.peer.state, new LEADING  -> BecomeLeader (data {"role":"LEADING"}, subnode -1)
 *
 * Remix's numbers are numbers (msgId, from, to, epochs, leader) and its subnode is the thread
 * of the node that took the step: the capture's thread id here, -1 when none. Messages without
 * an id (a trace imported from the agent's own files) are paired by content, as import does.
 * Every other event is dropped and counted by kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_internal.h"
#include "spectap/msgpair.h"

struct smb_zk {
	uint64_t step;             /* lines written: Remix numbers its events from 0 */
	struct spt_msgpair *pairs; /* ids for messages the trace gives none */
	struct spt_buf payload;    /* scratch for the payload text */
};

static int zk_state_new(void **out)
{
	struct smb_zk *zk = calloc(1, sizeof(*zk));
	if (!zk || spt_msgpair_new(&zk->pairs)) {
		free(zk);
		return -ENOMEM;
	}
	*out = zk;
	return 0;
}

static void zk_state_free(void *p)
{
	struct smb_zk *zk = p;
	if (!zk)
		return;
	spt_msgpair_free(zk->pairs);
	spt_buf_free(&zk->payload);
	free(zk);
}

static bool zk_event_is(const struct spt_event *ev) { return ev->kind && !strncmp(ev->kind, "zk.", 3); }

static int zk_put_node(struct spt_export *ex, struct spt_buf *b, const char *name)
{
	size_t n = strlen(name);
	char *s = spt_arena_alloc(export_arena(ex), n + 2);
	if (!s)
		return -ENOMEM;
	s[0] = 's';
	memcpy(s + 1, name, n + 1);
	spt_buf_json_str(b, s, n + 1);
	return 0;
}

/* What the drop report says per kind; the strings must outlive the export. */
#define UNNAMED(k) { k, k " events (no event of the ZooKeeper dialect)" }
static const struct {
	const char *kind, *what;
} unnamed[] = {
	UNNAMED("zk.notification.handle"),  UNNAMED("zk.logicalclock.bump"),
	UNNAMED("zk.proposal.update"),      UNNAMED("zk.recvset.put"),
	UNNAMED("zk.recvset.clear"),        UNNAMED("zk.outofelection.put"),
	UNNAMED("zk.election.timeout"),     UNNAMED("zk.election.quorum"),
	UNNAMED("zk.election.end"),         UNNAMED("zk.election.stop"),
	UNNAMED("zk.epoch.current"),        UNNAMED("zk.epoch.accepted"),
	UNNAMED("zk.fle.init"),
};

static void drop_unnamed(struct spt_export *ex, const char *kind)
{
	for (size_t i = 0; i < sizeof(unnamed) / sizeof(unnamed[0]); i++) {
		if (!strcmp(kind, unnamed[i].kind)) {
			export_drop(ex, unnamed[i].what, 1);
			return;
		}
	}
	export_drop(ex, "other events (no event of the ZooKeeper dialect)", 1);
}

/* The message id: the capture's, else one from pairing by content. */
static int msg_id(struct smb_zk *zk, const struct spt_msg *m, uint64_t *id)
{
	uint64_t lamport;
	if (m->id) {
		*id = m->id;
		return 0;
	}
	int rc = m->dir == SPT_MSG_SEND ? spt_msgpair_send(zk->pairs, m, 0, id)
					: spt_msgpair_recv(zk->pairs, m, id, &lamport);
	return rc < 0 ? rc : 0;
}

/* A server id as Remix writes it: a number (sids are decimal), else the name as a string. */
static void put_sid(struct spt_export *ex, struct spt_buf *b, const char *name)
{
	char *end;
	errno = 0;
	long long v = strtoll(name, &end, 10);
	if (*name && !*end && !errno && name[0] != '+' && !(name[0] == '0' && name[1])) {
		spt_buf_printf(b, "%lld", v);
		return;
	}
	spt_buf_json_str(b, name, strlen(name));
	export_drop(ex, "server ids that are not numbers (from, to written as strings)", 1);
}

/* One "name=value" of the payload: integers in decimal (zxid in hex), strings bare. */
static void payload_part(struct spt_buf *p, const char *name, spt_val *v, bool hex)
{
	spt_buf_printf(p, "%s%s=", p->len ? ", " : "", name);
	if (!v)
		spt_buf_puts(p, "?");
	else if (v->kind == SPT_INT && hex)
		spt_buf_printf(p, "0x%" PRIx64, (uint64_t)v->u.i);
	else if (v->kind == SPT_INT)
		spt_buf_printf(p, "%" PRId64, v->u.i);
	else if (v->kind == SPT_STR)
		spt_buf_puts(p, v->u.s);
	else
		spt_json_write(p, v, 0, NULL);
}

/* data of a Notification or HandleNotification. Remix's HandleNotification has only msgId,
 * from and to; the message's content is added, the same as on its Notification. */
static int put_msg_data(struct spt_export *ex, struct smb_zk *zk, const struct spt_msg *m,
			struct spt_buf *b, struct spt_json_loss *loss)
{
	uint64_t id;
	int rc = msg_id(zk, m, &id);
	if (rc)
		return rc;
	spt_val *f = m->fields && m->fields->kind == SPT_REC ? m->fields : NULL;
	spt_val *epoch = f ? spt_rec_get(f, "electionEpoch") : NULL;
	spt_val *leader = f ? spt_rec_get(f, "leader") : NULL;
	spt_buf_printf(b, ",\"data\":{\"msgId\":%" PRIu64 ",\"from\":", id);
	put_sid(ex, b, m->from);
	spt_buf_puts(b, ",\"to\":");
	put_sid(ex, b, m->to);
	if (epoch) {
		spt_buf_puts(b, ",\"electionEpoch\":");
		spt_json_write(b, epoch, 0, loss);
	}
	if (leader) {
		spt_buf_puts(b, ",\"leader\":");
		spt_json_write(b, leader, 0, loss);
	}
	/* Remix's payload text of a ToSend, from the same fields. */
	struct spt_buf *p = &zk->payload;
	spt_buf_clear(p);
	spt_buf_printf(p, "from=%s, to=%s", m->from, m->to);
	payload_part(p, "leader", leader, false);
	payload_part(p, "state", f ? spt_rec_get(f, "state") : NULL, false);
	payload_part(p, "zxid", f ? spt_rec_get(f, "zxid") : NULL, true);
	payload_part(p, "electionEpoch", epoch, false);
	payload_part(p, "peerEpoch", f ? spt_rec_get(f, "peerEpoch") : NULL, false);
	if (p->oom)
		return -ENOMEM;
	spt_buf_puts(b, ",\"payload\":");
	spt_buf_json_str(b, p->p, p->len);
	spt_buf_putc(b, '}');
	return 0;
}

/* The dialect's name for ev, or NULL (counted) when it has none. */
static const char *zk_name(struct spt_export *ex, const struct spt_event *ev)
{
	const char *k = ev->kind;
	/* A resend (the connection manager's last message again, on a new connection) is a
	 * message on the wire as Remix sees them: a Notification of its own id, so that its
	 * receive's HandleNotification has one. */
	bool send = !strcmp(k, "zk.notification.send") || !strcmp(k, "zk.notification.resend");
	if (send || !strcmp(k, "zk.notification.recv")) {
		if (ev->msg && ev->msg->dir == (send ? SPT_MSG_SEND : SPT_MSG_RECV))
			return send ? "Notification" : "HandleNotification";
		export_drop(ex, "zk.notification.send/resend/recv events without their message", 1);
		return NULL;
	}
	if (!strcmp(k, "zk.peer.state")) {
		const char *old = rec_str(ev->args, "old"), *new = rec_str(ev->args, "new");
		if (new && !strcmp(new, "LEADING") && !(old && !strcmp(old, "LEADING")))
			return "BecomeLeader";
		export_drop(ex, "zk.peer.state events other than becoming LEADING", 1);
		return NULL;
	}
	drop_unnamed(ex, k);
	return NULL;
}

static int zk_export_event(struct spt_export *ex, void *st, const struct spt_event *ev, struct spt_buf *b)
{
	struct smb_zk *zk = st;
	struct spt_json_loss loss = { 0 };
	const char *name = zk_name(ex, ev);
	if (!name)
		return 0;
	bool leader = name[0] == 'B';
	smb_line_start(b, ev->ts_ns);
	spt_buf_puts(b, "{\"event\":");
	spt_buf_json_str(b, name, strlen(name));
	spt_buf_printf(b, ",\"step\":%" PRIu64 ",\"node\":", zk->step++);
	int rc = zk_put_node(ex, b, ev->node);
	if (rc)
		return rc;
	/* Remix: the thread of the node that took the step; -1 for BecomeLeader. */
	if (leader || !ev->tid)
		spt_buf_puts(b, ",\"subnode\":-1");
	else
		spt_buf_printf(b, ",\"subnode\":%" PRIu32, ev->tid);
	if (leader)
		spt_buf_puts(b, ",\"data\":{\"role\":\"LEADING\"}");
	else if ((rc = put_msg_data(ex, zk, ev->msg, b, &loss)))
		return rc;
	if (ev->state) {
		spt_buf_puts(b, ",\"state\":");
		spt_json_write(b, ev->state, 0, &loss);
	}
	spt_buf_puts(b, "}}\n");
	export_drop(ex, "args of written events (data has the dialect's fields)", ev->args ? 1 : 0);
	export_drop(ex, "meta fields", ev->meta ? 1 : 0);
	struct spt_event counted = *ev;
	if (!leader)
		counted.tid = 0; /* written as the subnode */
	export_drop_common(ex, &counted, &loss);
	return 0;
}

static const struct smb_system zookeeper = {
	.system = "zookeeper",
	.event_is = zk_event_is,
	.state_new = zk_state_new,
	.state_free = zk_state_free,
	.put_node = zk_put_node,
	.export_event = zk_export_event,
};

/* Linked into spectap, the dialect is known to `export --to sysmobench`. */
__attribute__((constructor)) static void add_zookeeper(void) { spt_sysmobench_add_system(&zookeeper); }
