/*
 * spectap's own NDJSON: lossless. A {"header":{...}} line, then {"event":{...}} and
 * {"loss":{...}} lines; values in the tagged JSON of json.h. See docs/format.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "dialect_internal.h"

static int get_u64(spt_val *rec, const char *name, uint64_t *out, struct spt_json_error *err)
{
	spt_val *v = spt_rec_get(rec, name);
	if (!v) {
		*out = 0;
		return 0;
	}
	if (v->kind != SPT_INT || v->u.i < 0)
		return dialect_fail(err, "\"%s\" is not a non-negative integer", name);
	*out = (uint64_t)v->u.i;
	return 0;
}

static int get_rec(spt_val *rec, const char *name, spt_val **out, struct spt_json_error *err)
{
	spt_val *v = spt_rec_get(rec, name);
	*out = NULL;
	if (!v)
		return 0;
	if (!spt_is_fun(v) || (v->n && v->kind != SPT_REC))
		return dialect_fail(err, "\"%s\" is not an object", name);
	*out = v->n ? v : NULL;
	return 0;
}

/* Rejects fields the dialect does not define: a typo must not lose data silently. */
static int only_known(spt_val *rec, const char *const *known, const char *what,
		      struct spt_json_error *err)
{
	for (uint32_t i = 0; i < rec->n; i++) {
		spt_val *k = rec->u.fn.keys[i];
		bool ok = false;
		for (const char *const *n = known; *n && !ok; n++)
			ok = strlen(*n) == k->n && !memcmp(*n, k->u.s, k->n);
		if (!ok)
			return dialect_fail(err, "unknown %s field \"%s\"", what, k->u.s);
	}
	return 0;
}

static int import_header(struct spt_import *im, spt_val *h, struct spt_json_error *err)
{
	static const char *const known[] = { "format_version", "system", "system_version", "nodes",
					     "capture_method", "scenario", "seed", "clock_realtime_ns",
					     "clock_monotonic_ns", "command_line", "writer", "extra", NULL };
	int rc;
	if (!import_header_allowed(im))
		return dialect_fail(err, "a second header, or a header after events: a trace has one header, on its first line");
	if ((rc = only_known(h, known, "header", err)))
		return rc;
	struct spt_header hd = { 0 };
	hd.system = rec_str(h, "system");
	hd.system_version = rec_str(h, "system_version");
	hd.capture_method = rec_str(h, "capture_method");
	hd.scenario = rec_str(h, "scenario");
	hd.command_line = rec_str(h, "command_line");
	hd.has_seed = spt_rec_get(h, "seed") != NULL;
	if ((rc = get_u64(h, "seed", &hd.seed, err)) ||
	    (rc = get_u64(h, "clock_realtime_ns", &hd.clock_realtime_ns, err)) ||
	    (rc = get_u64(h, "clock_monotonic_ns", &hd.clock_monotonic_ns, err)) ||
	    (rc = get_rec(h, "extra", &hd.extra, err)))
		return rc;
	if ((rc = import_set_header(im, &hd)))
		return rc;
	spt_val *nodes = spt_rec_get(h, "nodes");
	if (nodes && import_set_nodes(im, nodes))
		return dialect_fail(err, "header.nodes is not a list of strings");
	return 0;
}

static int import_event(spt_val *e, struct spt_event *ev, struct spt_msg *msg,
			struct spt_json_error *err)
{
	static const char *const known[] = { "node", "source", "seq", "ts_ns", "lamport", "tid", "kind",
					     "args", "state", "msg", "meta", NULL };
	int rc;
	uint64_t tid = 0;
	if ((rc = only_known(e, known, "event", err)))
		return rc;
	if (!(ev->node = rec_str(e, "node")) || !(ev->kind = rec_str(e, "kind")))
		return dialect_fail(err, "event.node and event.kind must be strings");
	ev->source = rec_str(e, "source");
	if (!ev->source)
		ev->source = "";
	if ((rc = get_u64(e, "seq", &ev->seq, err)) || (rc = get_u64(e, "ts_ns", &ev->ts_ns, err)) ||
	    (rc = get_u64(e, "lamport", &ev->lamport, err)) || (rc = get_u64(e, "tid", &tid, err)) ||
	    (rc = get_rec(e, "args", &ev->args, err)) || (rc = get_rec(e, "state", &ev->state, err)) ||
	    (rc = get_rec(e, "meta", &ev->meta, err)))
		return rc;
	if (tid > UINT32_MAX)
		return dialect_fail(err, "event.tid does not fit in 32 bits");
	ev->tid = (uint32_t)tid;
	spt_val *m = spt_rec_get(e, "msg");
	if (!m)
		return 1;
	static const char *const mknown[] = { "id", "dir", "from", "to", "type", "fields", NULL };
	if (m->kind != SPT_REC)
		return dialect_fail(err, "event.msg is not an object");
	if ((rc = only_known(m, mknown, "msg", err)))
		return rc;
	const char *dir = rec_str(m, "dir");
	if (!dir || (strcmp(dir, "send") && strcmp(dir, "recv")))
		return dialect_fail(err, "msg.dir must be \"send\" or \"recv\"");
	msg->dir = dir[0] == 's' ? SPT_MSG_SEND : SPT_MSG_RECV;
	if (!(msg->from = rec_str(m, "from")) || !(msg->to = rec_str(m, "to")) ||
	    !(msg->type = rec_str(m, "type")))
		return dialect_fail(err, "msg.from, msg.to and msg.type must be strings");
	if ((rc = get_u64(m, "id", &msg->id, err)) || (rc = get_rec(m, "fields", &msg->fields, err)))
		return rc;
	ev->msg = msg;
	return 1;
}

static int json_import(struct spt_import *im, spt_val *obj, struct spt_event *ev,
		       struct spt_msg *msg, struct spt_loss *loss, struct spt_json_error *err)
{
	if (obj->n != 1)
		return dialect_fail(err, "a line holds one of \"header\", \"event\", \"loss\"");
	const char *what = obj->u.fn.keys[0]->u.s;
	spt_val *body = obj->u.fn.vals[0];
	if (body->kind != SPT_REC)
		return dialect_fail(err, "\"%s\" is not an object", what);
	if (!strcmp(what, "event"))
		return import_event(body, ev, msg, err);
	if (!strcmp(what, "header"))
		return import_header(im, body, err);
	if (!strcmp(what, "loss")) {
		static const char *const known[] = { "node", "source", "count", "first_seq", "last_seq", NULL };
		int rc;
		if ((rc = only_known(body, known, "loss", err)))
			return rc;
		if (!(loss->node = rec_str(body, "node")) || !(loss->source = rec_str(body, "source")))
			return dialect_fail(err, "loss.node and loss.source must be strings");
		if ((rc = get_u64(body, "count", &loss->count, err)) ||
		    (rc = get_u64(body, "first_seq", &loss->first_seq, err)) ||
		    (rc = get_u64(body, "last_seq", &loss->last_seq, err)))
			return rc;
		return 2;
	}
	return dialect_fail(err, "unknown line type \"%s\" (expected header, event or loss)", what);
}

static void key(struct spt_buf *b, const char *k, bool comma)
{
	if (comma)
		spt_buf_putc(b, ',');
	spt_buf_json_str(b, k, strlen(k));
	spt_buf_putc(b, ':');
}

static void str_field(struct spt_buf *b, const char *k, const char *v)
{
	key(b, k, true);
	spt_buf_json_str(b, v ? v : "", v ? strlen(v) : 0);
}

static void u64_field(struct spt_buf *b, const char *k, uint64_t v)
{
	key(b, k, true);
	spt_buf_printf(b, "%" PRIu64, v);
}

static void val_field(struct spt_buf *b, const char *k, spt_val *v)
{
	if (!v)
		return;
	key(b, k, true);
	spt_json_write(b, v, SPT_JSON_TAGGED, NULL);
}

/* args, state, meta and message fields: an empty record is the same as none. */
static void rec_field(struct spt_buf *b, const char *k, spt_val *v)
{
	if (v && v->n)
		val_field(b, k, v);
}

static int json_export_begin(struct spt_export *ex, struct spt_buf *b)
{
	const struct spt_header *h = export_header(ex);
	spt_buf_printf(b, "{\"header\":{\"format_version\":%u", h->format_version);
	str_field(b, "system", h->system);
	str_field(b, "system_version", h->system_version);
	key(b, "nodes", true);
	spt_buf_putc(b, '[');
	for (size_t i = 0; i < h->n_nodes; i++) {
		if (i)
			spt_buf_putc(b, ',');
		spt_buf_json_str(b, h->nodes[i], strlen(h->nodes[i]));
	}
	spt_buf_putc(b, ']');
	str_field(b, "capture_method", h->capture_method);
	str_field(b, "scenario", h->scenario);
	if (h->has_seed)
		u64_field(b, "seed", h->seed);
	u64_field(b, "clock_realtime_ns", h->clock_realtime_ns);
	u64_field(b, "clock_monotonic_ns", h->clock_monotonic_ns);
	str_field(b, "command_line", h->command_line);
	str_field(b, "writer", h->writer);
	val_field(b, "extra", h->extra);
	spt_buf_puts(b, "}}\n");
	return 0;
}

static int json_export_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *b)
{
	(void)ex;
	spt_buf_puts(b, "{\"event\":{\"node\":");
	spt_buf_json_str(b, ev->node, strlen(ev->node));
	str_field(b, "source", ev->source);
	u64_field(b, "seq", ev->seq);
	u64_field(b, "ts_ns", ev->ts_ns);
	u64_field(b, "lamport", ev->lamport);
	if (ev->tid)
		u64_field(b, "tid", ev->tid);
	str_field(b, "kind", ev->kind);
	rec_field(b, "state", ev->state);
	rec_field(b, "args", ev->args);
	if (ev->msg) {
		key(b, "msg", true);
		spt_buf_printf(b, "{\"id\":%" PRIu64 ",\"dir\":\"%s\"", ev->msg->id,
			       ev->msg->dir == SPT_MSG_SEND ? "send" : "recv");
		str_field(b, "from", ev->msg->from);
		str_field(b, "to", ev->msg->to);
		str_field(b, "type", ev->msg->type);
		rec_field(b, "fields", ev->msg->fields);
		spt_buf_putc(b, '}');
	}
	rec_field(b, "meta", ev->meta);
	spt_buf_puts(b, "}}\n");
	return 0;
}

static int json_export_loss(struct spt_export *ex, const struct spt_loss *l, struct spt_buf *b)
{
	(void)ex;
	spt_buf_puts(b, "{\"loss\":{\"node\":");
	spt_buf_json_str(b, l->node, strlen(l->node));
	str_field(b, "source", l->source);
	u64_field(b, "count", l->count);
	u64_field(b, "first_seq", l->first_seq);
	u64_field(b, "last_seq", l->last_seq);
	spt_buf_puts(b, "}}\n");
	return 0;
}

const struct dialect_ops dialect_json = {
	.name = "json",
	.json_flags = SPT_JSON_TAGGED,
	.import = json_import,
	.export_begin = json_export_begin,
	.export_event = json_export_event,
	.export_loss = json_export_loss,
};
