/*
 * The SysMoBench/Specula envelope: {"tag":"config","config":{"servers":[...]}} first, then
 * {"tag":"trace","ts":"<ns>","event":{"name","nid","state":{...},"msg":{...}}} per event.
 * The envelope has no message direction or id: on export a message is written as "msg" with its
 * type, from and to; on import "msg" and any other event field are kept in args.
 * A trace of a system that has a dialect of its own (ZooKeeper's, RedisRaft's: added by the
 * systems' shims with spt_sysmobench_add_system) is exported in that dialect instead.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_internal.h"

static int smb_import(struct spt_import *im, spt_val *obj, struct spt_event *ev,
		      struct spt_msg *msg, struct spt_loss *loss, struct spt_json_error *err)
{
	(void)msg;
	(void)loss;
	struct spt_arena *a = import_arena(im);
	const char *tag = rec_str(obj, "tag");
	if (!tag)
		return dialect_fail(err, "\"tag\" missing or not a string (expected \"config\" or \"trace\")");
	if (!strcmp(tag, "config")) {
		int rc = import_config_line(im, obj);
		if (rc == -ENOMEM)
			return dialect_fail(err, "out of memory");
		if (rc)
			return dialect_fail(err, "a config line needs a \"config\" object (whose \"servers\", if given, is a list of strings)");
		return 0;
	}
	if (strcmp(tag, "trace"))
		return dialect_fail(err, "unknown tag \"%s\" (expected \"config\" or \"trace\")", tag);
	spt_val *e = spt_rec_get(obj, "event");
	if (!e || e->kind != SPT_REC)
		return dialect_fail(err, "\"event\" missing or not an object");
	spt_val *ts = spt_rec_get(obj, "ts");
	bool rfc3339 = false;
	if (ts) {
		char *end;
		if (ts->kind == SPT_STR && ts->hint != SPT_HINT_NUMBER && ts->n > 10 && ts->u.s[4] == '-') {
			if (rfc3339_to_ns(ts->u.s, &ev->ts_ns))
				return dialect_fail(err, "\"ts\": \"%s\" is not an RFC 3339 time", ts->u.s);
			rfc3339 = true;
		} else if (ts->kind != SPT_STR || ts->hint == SPT_HINT_NUMBER ||
			   (ev->ts_ns = strtoull(ts->u.s, &end, 10), *end) || !ts->n || ts->u.s[0] == '-' ||
			   ev->ts_ns > INT64_MAX) {
			return dialect_fail(err, "\"ts\" is neither a string of nanoseconds nor an RFC 3339 time");
		}
	}
	/* The envelope's other fields (Specula's "scenario"), its key order and an RFC 3339
	 * time's text: kept, for export. */
	static const char *const envelope[] = { "tag", "ts", "event", NULL };
	spt_val *rest = rec_without(a, obj, envelope);
	if (!rest)
		return dialect_fail(err, "out of memory");
	if (rest->n || rfc3339) {
		spt_val **order = spt_arena_alloc(a, (obj->n + 1) * sizeof(*order));
		if (!order)
			return dialect_fail(err, "out of memory");
		for (uint32_t i = 0; i < obj->n; i++)
			order[i] = (spt_val *)obj->u.fn.keys[obj->u.fn.order ? obj->u.fn.order[i] : i];
		/* An RFC 3339 time: "_ts" says so, "_ts_text" keeps a text that is not the canonical one. */
		spt_val *text = rfc3339 ? rfc3339_text_to_keep(ts, ev->ts_ns) : NULL;
		const char *names[] = { "_keys", "_ts", "_ts_text" };
		spt_val *vals[] = { spt_seq(a, order, obj->n), spt_cstr(a, "rfc3339"), text };
		if (!vals[0] || !vals[1] || !(ev->meta = rec_plus(a, rest, names, vals, rfc3339 ? (text ? 3 : 2) : 1)))
			return dialect_fail(err, "the envelope has a field named \"_keys\", \"_ts\" or \"_ts_text\"");
	}
	if (!(ev->kind = rec_str(e, "name")))
		return dialect_fail(err, "event.name missing or not a string");
	if (!(ev->node = rec_str(e, "nid")) && !(ev->node = rec_str(e, "node")))
		return dialect_fail(err, "event.nid (or event.node) missing or not a string");
	spt_val *state = spt_rec_get(e, "state");
	if (state) {
		if (!spt_is_fun(state) || (state->n && state->kind != SPT_REC))
			return dialect_fail(err, "event.state is not an object");
		ev->state = state->n ? state : NULL;
	}
	static const char *const known[] = { "name", "nid", "node", "state", NULL };
	if (!(ev->args = rec_without(a, e, known)))
		return dialect_fail(err, "out of memory");
	if (!ev->args->n)
		ev->args = NULL;
	return 1;
}

/* The systems with a dialect of their own, as their shims added them. */
static const struct smb_system *systems[16];
static unsigned n_systems;

void spt_sysmobench_add_system(const struct smb_system *s)
{
	for (unsigned i = 0; i < n_systems; i++)
		if (systems[i] == s)
			return;
	if (n_systems < sizeof(systems) / sizeof(systems[0]))
		systems[n_systems++] = s;
}

/*
 * What an export remembers between lines (kept with the export): which system's dialect the
 * trace is written in (none: the generic envelope), known from the header or, when it names no
 * system (an imported file), from the first event; and that dialect's own state.
 */
struct smb_state {
	bool decided;
	bool config_pending; /* begin left the config line to the first event */
	const struct smb_system *sys; /* NULL: the generic envelope */
	void *sys_state;
};

static void state_free(void *p)
{
	struct smb_state *st = p;
	if (st && st->sys && st->sys_state)
		st->sys->state_free(st->sys_state);
	free(st);
}

/* The export's state, made at its first line. NULL: out of memory. */
static struct smb_state *state_of(struct spt_export *ex)
{
	struct smb_state *st = export_state(ex);
	if (st)
		return st;
	if (!(st = calloc(1, sizeof(*st))))
		return NULL;
	const char *sys = export_header(ex)->system;
	if (sys && *sys) {
		st->decided = true;
		for (unsigned i = 0; i < n_systems; i++)
			if (!strcmp(sys, systems[i]->system))
				st->sys = systems[i];
	}
	export_set_state(ex, st, state_free);
	return st;
}

void smb_line_start(struct spt_buf *b, uint64_t ts_ns)
{
	spt_buf_printf(b, "{\"tag\":\"trace\",\"ts\":\"%" PRIu64 "\",\"event\":", ts_ns);
}

/* ZooKeeper's and RedisRaft's servers are "s<id>", as their events' nodes. */
static int put_config(struct spt_export *ex, const struct smb_state *st, struct spt_buf *b)
{
	const struct spt_header *h = export_header(ex);
	spt_val *line = h->extra ? spt_rec_get(h->extra, "config_line") : NULL;
	if (line && !st->sys) { /* an imported trace's, as it came */
		spt_json_write(b, line, 0, NULL);
		spt_buf_putc(b, '\n');
		return 0;
	}
	spt_buf_puts(b, "{\"tag\":\"config\",\"ts\":\"0\",\"config\":{\"servers\":[");
	for (size_t i = 0; i < h->n_nodes; i++) {
		if (i)
			spt_buf_putc(b, ',');
		if (st->sys) {
			if (st->sys->put_node(ex, b, h->nodes[i]))
				return -ENOMEM;
		} else {
			spt_buf_json_str(b, h->nodes[i], strlen(h->nodes[i]));
		}
	}
	spt_buf_puts(b, "]}}\n");
	return 0;
}

static int smb_export_begin(struct spt_export *ex, struct spt_buf *b)
{
	struct smb_state *st = state_of(ex);
	if (!st)
		return -ENOMEM;
	if (st->decided)
		return put_config(ex, st, b);
	st->config_pending = true;
	return 0;
}

static void put_field(struct spt_buf *b, const char *k, spt_val *v, struct spt_json_loss *loss)
{
	spt_buf_putc(b, ',');
	spt_buf_json_str(b, k, strlen(k));
	spt_buf_putc(b, ':');
	spt_json_write(b, v, 0, loss);
}

static int generic_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *b)
{
	struct spt_arena *a = export_arena(ex);
	struct spt_json_loss loss = { 0 };
	spt_val *keys = ev->meta ? spt_rec_get(ev->meta, "_keys") : NULL;
	if (keys && keys->kind == SPT_SEQ) {
		/* The envelope's fields in the order they came; the event follows them (it is last in
		 * the files of this dialect). */
		spt_val *text = spt_rec_get(ev->meta, "_ts_text");
		bool first = true;
		spt_buf_putc(b, '{');
		for (uint32_t i = 0; i < keys->n; i++) {
			spt_val *k = keys->u.elems[i];
			if (k->kind != SPT_STR)
				continue;
			if (!strcmp(k->u.s, "event"))
				continue;
			spt_val *v = !strcmp(k->u.s, "tag") ? spt_cstr(a, "trace") : spt_rec_get(ev->meta, k->u.s);
			if (!first)
				spt_buf_putc(b, ',');
			first = false;
			spt_buf_json_str(b, k->u.s, k->n);
			spt_buf_putc(b, ':');
			if (!strcmp(k->u.s, "ts")) {
				const char *fmt = rec_str(ev->meta, "_ts");
				if (text && text->kind == SPT_STR) {
					spt_buf_json_str(b, text->u.s, text->n);
				} else if (fmt && !strcmp(fmt, "rfc3339")) {
					put_rfc3339(b, ev->ts_ns);
				} else {
					spt_buf_printf(b, "\"%" PRIu64 "\"", ev->ts_ns);
				}
			} else if (v) {
				spt_json_write(b, v, 0, &loss);
			} else {
				spt_buf_puts(b, "null");
			}
		}
		spt_buf_puts(b, first ? "\"event\":" : ",\"event\":");
	} else {
		smb_line_start(b, ev->ts_ns);
	}
	spt_buf_puts(b, "{\"name\":");
	spt_buf_json_str(b, ev->kind, strlen(ev->kind));
	spt_buf_puts(b, ",\"nid\":");
	spt_buf_json_str(b, ev->node, strlen(ev->node));
	if (ev->state)
		put_field(b, "state", ev->state, &loss);
	if (ev->msg) {
		const char *names[] = { "type", "from", "to" };
		spt_val *vals[] = { spt_cstr(a, ev->msg->type), spt_cstr(a, ev->msg->from),
				    spt_cstr(a, ev->msg->to) };
		spt_val *m = vals[0] && vals[1] && vals[2] ? rec_plus(a, ev->msg->fields, names, vals, 3) : NULL;
		if (!m)
			return -ENOMEM;
		spt_buf_puts(b, ",\"msg\":");
		json_write_rec_ordered(b, m, etcd_msg_order, 0, &loss);
		export_drop(ex, "message direction and id (the envelope has none)", 1);
	}
	for (uint32_t i = 0; ev->args && i < ev->args->n; i++) {
		uint32_t j = ev->args->u.fn.order ? ev->args->u.fn.order[i] : i;
		spt_val *k = ev->args->u.fn.keys[j];
		if (ev->msg && k->n == 3 && !memcmp(k->u.s, "msg", 3)) {
			export_drop(ex, "args.msg (the event's message takes the name)", 1);
			continue;
		}
		spt_buf_putc(b, ',');
		spt_buf_json_str(b, k->u.s, k->n);
		spt_buf_putc(b, ':');
		spt_json_write(b, ev->args->u.fn.vals[j], 0, &loss);
	}
	spt_buf_puts(b, "}}\n");
	export_drop(ex, "meta fields", ev->meta && !keys ? 1 : 0);
	export_drop_common(ex, ev, &loss);
	return 0;
}

static int smb_export_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *b)
{
	int rc;
	struct smb_state *st = state_of(ex);
	if (!st)
		return -ENOMEM;
	if (export_skip_unfinished(ex, ev))
		return 0;
	if (!st->decided) {
		st->decided = true;
		for (unsigned i = 0; i < n_systems && !st->sys; i++)
			if (systems[i]->event_is(ev))
				st->sys = systems[i];
	}
	if (st->config_pending) {
		st->config_pending = false;
		if ((rc = put_config(ex, st, b)))
			return rc;
	}
	if (!st->sys)
		return generic_event(ex, ev, b);
	if (!st->sys_state && (rc = st->sys->state_new(&st->sys_state)))
		return rc;
	return st->sys->export_event(ex, st->sys_state, ev, b);
}

static int smb_export_end(struct spt_export *ex, struct spt_buf *b)
{
	struct smb_state *st = export_state(ex);
	return st && st->sys && st->sys_state && st->sys->export_end ? st->sys->export_end(st->sys_state, b) : 0;
}

const struct dialect_ops dialect_sysmobench = {
	.name = "sysmobench",
	.derive = true,
	.import = smb_import,
	.export_begin = smb_export_begin,
	.export_event = smb_export_event,
	.export_end = smb_export_end,
};
