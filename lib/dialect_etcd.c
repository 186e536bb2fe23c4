/*
 * etcd-io/raft's trace events (its `with_tla` build tag), bare or in an envelope (zap's
 * {"level","ts","caller","msg","tag","event"} or SysMoBench's {"tag","ts","event"}).
 * Event fields map as: name -> kind, nid -> node, state{term,vote,commit} + role + log + conf ->
 * state, msg -> message (Send* events send it, Receive* events receive it), anything else
 * (e.g. prop) -> args; envelope fields -> meta, so that export writes them back as they were.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_internal.h"

/* etcd-io/raft's field order of a message. */
const char *const etcd_msg_order[] = { "type",    "term",  "from",   "to",   "entries",    "logTerm",
				       "index",   "commit", "vote",  "reject", "rejectHint", NULL };

/* Top-level event fields that belong to the node state. */
static const char *const state_outer[] = { "role", "log", "conf", NULL };

static bool starts_with(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* "1712329729.6024537" (seconds) -> ns. Exact up to 9 fractional digits; *exact tells. */
static int seconds_to_ns(const char *s, uint64_t *ns, bool *exact)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0;
	const char *p = s;
	*exact = true;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (sec > (UINT64_MAX / 1000000000u - 9) / 10)
			return -ERANGE;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				digits++;
			} else if (*p != '0') {
				*exact = false;
			}
		}
	}
	if (*p)
		return -EINVAL; /* exponents and signs are not timestamps we know */
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return *ns > INT64_MAX ? -ERANGE : 0; /* times stay within JSON's exact 64-bit integers */
}

static int import_ts(struct spt_import *im, spt_val *ts, uint64_t *ns, const char **fmt,
		     spt_val **text, struct spt_json_error *err)
{
	bool exact = true;
	*text = NULL;
	if (!ts) {
		*fmt = "none";
		return 0;
	}
	if (ts->kind == SPT_STR && ts->hint != SPT_HINT_NUMBER && ts->n > 10 && ts->u.s[4] == '-') {
		/* RFC 3339 (Specula's corpora): the text is kept, so that export writes it back. */
		if (rfc3339_to_ns(ts->u.s, ns))
			return dialect_fail(err, "\"ts\": \"%s\" is not an RFC 3339 time (2026-01-19T04:10:57.129Z)", ts->u.s);
		*fmt = "rfc3339";
		*text = rfc3339_text_to_keep(ts, *ns); /* the text, unless the canonical one */
		return 0;
	}
	if (ts->kind == SPT_STR && ts->hint != SPT_HINT_NUMBER) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(ts->u.s, &end, 10);
		if (errno || end == ts->u.s || *end || ts->u.s[0] == '-' || v > INT64_MAX)
			return dialect_fail(err, "\"ts\": \"%s\" is neither a nanosecond count nor an RFC 3339 time", ts->u.s);
		*ns = v;
		*fmt = "ns";
		return 0;
	}
	char buf[32];
	const char *s = buf;
	if (ts->kind == SPT_INT && ts->u.i >= 0)
		snprintf(buf, sizeof(buf), "%" PRId64, ts->u.i);
	else if (ts->kind == SPT_STR)
		s = ts->u.s;
	else
		return dialect_fail(err, "\"ts\" is neither a number of seconds nor a string of ns");
	if (seconds_to_ns(s, ns, &exact))
		return dialect_fail(err, "\"ts\": %s is not a timestamp in seconds", s);
	*fmt = "s";
	if (!exact) /* keep the text so that export is exact */
		*text = spt_str(import_arena(im), s, strlen(s));
	return 0;
}

static const char *const state_first[] = { "term", "vote", "commit", NULL };
/* The event's keys in export's own order: etcd-io/raft's, then the arguments as written. */
static const char *const event_first[] = { "name", "nid", "state", "role", "log", "conf", "msg", NULL };

/* The state's keys as written, when export's order (state_first, then by name) differs. */
static spt_val *state_keys_if_unusual(struct spt_arena *a, spt_val *state)
{
	if (!state->u.fn.order)
		return NULL;
	spt_val **k = spt_arena_alloc(a, (state->n + 1) * sizeof(*k));
	if (!k)
		return NULL;
	uint32_t n = 0;
	for (const char *const *f = state_first; *f; f++)
		for (uint32_t i = 0; i < state->n; i++)
			if (!strcmp(state->u.fn.keys[i]->u.s, *f))
				k[n++] = (spt_val *)state->u.fn.keys[i];
	for (uint32_t i = 0; i < state->n; i++) {
		bool early = false;
		for (const char *const *f = state_first; *f && !early; f++)
			early = !strcmp(state->u.fn.keys[i]->u.s, *f);
		if (!early)
			k[n++] = (spt_val *)state->u.fn.keys[i];
	}
	bool same = true;
	for (uint32_t i = 0; i < state->n && same; i++)
		same = k[i] == state->u.fn.keys[state->u.fn.order[i]];
	if (same)
		return NULL;
	for (uint32_t i = 0; i < state->n; i++)
		k[i] = (spt_val *)state->u.fn.keys[state->u.fn.order[i]];
	return spt_seq(a, k, state->n);
}

static int etcd_import(struct spt_import *im, spt_val *obj, struct spt_event *ev,
		       struct spt_msg *msg, struct spt_loss *loss, struct spt_json_error *err)
{
	(void)loss;
	struct spt_arena *a = import_arena(im);
	const char *tag = rec_str(obj, "tag");
	if (tag && !strcmp(tag, "config")) {
		int rc = import_config_line(im, obj);
		if (rc == -ENOMEM)
			return dialect_fail(err, "out of memory");
		if (rc)
			return dialect_fail(err, "a config line needs a \"config\" object (whose \"servers\", if given, is a list of strings)");
		return 0;
	}
	spt_val *env = NULL, *e = obj;
	spt_val *inner = spt_rec_get(obj, "event");
	if (inner) {
		if (inner->kind != SPT_REC)
			return dialect_fail(err, "\"event\" is not an object");
		env = obj;
		e = inner;
	}
	if (!(ev->kind = rec_str(e, "name")))
		return dialect_fail(err, "%s\"name\" missing or not a string (not an etcd trace event?)",
				    env ? "event." : "");
	if (!(ev->node = rec_str(e, "nid")))
		return dialect_fail(err, "%s\"nid\" missing or not a string", env ? "event." : "");

	if (env) {
		const char *fmt;
		spt_val *text;
		int rc = import_ts(im, spt_rec_get(env, "ts"), &ev->ts_ns, &fmt, &text, err);
		if (rc)
			return rc;
		static const char *const drop[] = { "event", "ts", NULL };
		/* The envelope's keys in the order written (export writes them so). */
		spt_val **order = spt_arena_alloc(a, (env->n + 1) * sizeof(*order));
		if (!order)
			return dialect_fail(err, "out of memory");
		for (uint32_t i = 0; i < env->n; i++)
			order[i] = (spt_val *)env->u.fn.keys[env->u.fn.order ? env->u.fn.order[i] : i];
		const char *names[] = { "_ts", "_keys", "_ts_text" };
		spt_val *vals[] = { spt_cstr(a, fmt), spt_seq(a, order, env->n), text };
		if (!vals[0] || !vals[1] || !(ev->meta = rec_plus(a, rec_without(a, env, drop), names, vals, text ? 3 : 2)))
			return dialect_fail(err, "envelope has a field named \"_ts\", \"_keys\" or \"_ts_text\"");
	}

	spt_val *state = spt_rec_get(e, "state");
	if (state && state->kind != SPT_REC && !(spt_is_fun(state) && state->n == 0))
		return dialect_fail(err, "\"state\" is not an object");
	const char *names[3];
	spt_val *vals[3];
	size_t n = 0;
	for (const char *const *k = state_outer; *k; k++) {
		spt_val *v = spt_rec_get(e, *k);
		if (v) {
			names[n] = *k;
			vals[n++] = v;
		}
	}
	if (state || n) {
		spt_val *base = state && state->n ? state : NULL;
		if (!(ev->state = rec_plus(a, base, names, vals, n)))
			return dialect_fail(err, "\"state\" repeats one of role, log, conf");
	}
	/* A trace keeps a state's fields, not the order they were written in: where it is not
	 * the order export writes (term, vote, commit, then the rest by name), it goes in meta. */
	spt_val *keys = ev->meta && state && state->kind == SPT_REC ? state_keys_if_unusual(a, state) : NULL;
	if (keys) {
		const char *kn[] = { "_state_keys" };
		if (!(ev->meta = rec_plus(a, ev->meta, kn, &keys, 1)))
			return dialect_fail(err, "envelope has a field named \"_state_keys\"");
	}

	bool msg_used = false;
	spt_val *m = spt_rec_get(e, "msg");
	bool send = starts_with(ev->kind, "Send"), recv = starts_with(ev->kind, "Receive");
	if (m && (send || recv)) {
		if (m->kind != SPT_REC)
			return dialect_fail(err, "\"msg\" is not an object");
		if (!(msg->type = rec_str(m, "type")) || !(msg->from = rec_str(m, "from")) ||
		    !(msg->to = rec_str(m, "to")))
			return dialect_fail(err, "msg.type, msg.from and msg.to must be strings");
		static const char *const header[] = { "type", "from", "to", NULL };
		msg->dir = send ? SPT_MSG_SEND : SPT_MSG_RECV;
		msg->fields = rec_without(a, m, header);
		if (msg->fields && msg->fields->n == 0)
			msg->fields = NULL;
		ev->msg = msg;
		msg_used = true;
	}
	static const char *const known[] = { "name", "nid", "state", "role", "log", "conf", NULL };
	static const char *const known_msg[] = { "name", "nid", "state", "role", "log", "conf", "msg", NULL };
	/* Export writes state, msg and the envelope in etcd-io/raft's field order: a written-order
	 * hint on them would only cost space. Nested values (e.g. prop) keep theirs. */
	if (ev->state && !(ev->state = spt_rec_with_order(a, ev->state, NULL)))
		return -ENOMEM;
	if (msg->fields && !(msg->fields = spt_rec_with_order(a, msg->fields, NULL)))
		return -ENOMEM;
	if (ev->meta && !(ev->meta = spt_rec_with_order(a, ev->meta, NULL)))
		return -ENOMEM;
	ev->args = rec_without(a, e, msg_used ? known_msg : known);
	if (!ev->args)
		return -ENOMEM;
	/* Where the event's own key order is not export's (an argument before msg), meta keeps it. */
	if (ev->meta && e->u.fn.order) {
		spt_val **k = spt_arena_alloc(a, (e->n + 1) * sizeof(*k));
		if (!k)
			return -ENOMEM;
		uint32_t nk = 0;
		for (const char *const *f = event_first; *f; f++) {
			spt_val *key = spt_cstr(a, *f);
			if (!key)
				return -ENOMEM;
			if (spt_rec_get(e, *f) && (strcmp(*f, "msg") || msg_used))
				k[nk++] = key;
		}
		for (uint32_t i = 0; i < ev->args->n; i++)
			k[nk++] = (spt_val *)ev->args->u.fn.keys[ev->args->u.fn.order ? ev->args->u.fn.order[i] : i];
		bool same = nk == e->n;
		for (uint32_t i = 0; i < nk && same; i++)
			same = spt_value_eq(k[i], e->u.fn.keys[e->u.fn.order[i]]);
		if (!same) {
			for (uint32_t i = 0; i < e->n; i++)
				k[i] = (spt_val *)e->u.fn.keys[e->u.fn.order[i]];
			const char *kn[] = { "_event_keys" };
			spt_val *kv = spt_seq(a, k, e->n);
			if (!kv || !(ev->meta = rec_plus(a, ev->meta, kn, &kv, 1)))
				return dialect_fail(err, "envelope has a field named \"_event_keys\"");
		}
	}
	if (ev->args->n == 0)
		ev->args = NULL;
	return 1;
}

static void write_seconds(struct spt_buf *b, uint64_t ns)
{
	uint64_t frac = ns % 1000000000u;
	spt_buf_printf(b, "%" PRIu64, ns / 1000000000u);
	if (!frac)
		return;
	char f[10];
	snprintf(f, sizeof(f), "%09" PRIu64, frac);
	int end = 9;
	while (end > 0 && f[end - 1] == '0')
		end--;
	f[end] = '\0';
	spt_buf_printf(b, ".%s", f);
}

static void write_key(struct spt_buf *b, bool *first, const char *k)
{
	if (!*first)
		spt_buf_putc(b, ',');
	*first = false;
	spt_buf_json_str(b, k, strlen(k));
	spt_buf_putc(b, ':');
}

/* One field of the event object: name, nid, state, role, log, conf, msg or an argument. */
static void write_event_field(struct spt_export *ex, const struct spt_event *ev, const char *k, struct spt_buf *b,
			      bool *first, struct spt_json_loss *loss)
{
	struct spt_arena *a = export_arena(ex);
	if (!strcmp(k, "name") || !strcmp(k, "nid")) {
		write_key(b, first, k);
		const char *v = k[0] == 'n' && k[1] == 'a' ? ev->kind : ev->node;
		spt_buf_json_str(b, v, strlen(v));
	} else if (!strcmp(k, "state")) {
		spt_val *inner = ev->state ? rec_without(a, ev->state, state_outer) : NULL;
		if (!inner)
			return;
		const char *const *order = state_first, *kept[64];
		spt_val *keys = ev->meta ? spt_rec_get(ev->meta, "_state_keys") : NULL;
		if (keys && keys->kind == SPT_SEQ && keys->n < 64) {
			for (uint32_t i = 0; i < keys->n; i++)
				kept[i] = keys->u.elems[i]->kind == SPT_STR ? keys->u.elems[i]->u.s : "";
			kept[keys->n] = NULL;
			order = kept;
		}
		write_key(b, first, "state");
		json_write_rec_ordered(b, inner, order, 0, loss);
	} else if (!strcmp(k, "role") || !strcmp(k, "log") || !strcmp(k, "conf")) {
		spt_val *v = ev->state ? spt_rec_get(ev->state, k) : NULL;
		if (v) {
			write_key(b, first, k);
			spt_json_write(b, v, 0, loss);
		}
	} else if (!strcmp(k, "msg") && ev->msg) {
		const char *names[] = { "type", "from", "to" };
		spt_val *vals[] = { spt_cstr(a, ev->msg->type), spt_cstr(a, ev->msg->from), spt_cstr(a, ev->msg->to) };
		spt_val *m = vals[0] && vals[1] && vals[2] ? rec_plus(a, ev->msg->fields, names, vals, 3) : NULL;
		write_key(b, first, "msg");
		if (m)
			json_write_rec_ordered(b, m, etcd_msg_order, 0, loss);
		else
			spt_buf_puts(b, "null");
		if (ev->msg->id)
			export_drop(ex, "message ids (re-derived on import)", 1);
	} else {
		spt_val *v = ev->args ? spt_rec_get(ev->args, k) : NULL;
		if (v) {
			write_key(b, first, k);
			spt_json_write(b, v, 0, loss);
		}
	}
}

static void write_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *b,
			struct spt_json_loss *loss)
{
	bool first = true;
	spt_buf_putc(b, '{');
	spt_val *keys = ev->meta ? spt_rec_get(ev->meta, "_event_keys") : NULL;
	if (keys && keys->kind == SPT_SEQ) {
		/* The order the imported line had. */
		for (uint32_t i = 0; i < keys->n; i++)
			if (keys->u.elems[i]->kind == SPT_STR)
				write_event_field(ex, ev, keys->u.elems[i]->u.s, b, &first, loss);
	} else {
		for (const char *const *k = event_first; *k; k++)
			if (strcmp(*k, "msg") || ev->msg) /* else an argument named msg, written below */
				write_event_field(ex, ev, *k, b, &first, loss);
		for (uint32_t i = 0; ev->args && i < ev->args->n; i++) {
			uint32_t j = ev->args->u.fn.order ? ev->args->u.fn.order[i] : i;
			write_event_field(ex, ev, ev->args->u.fn.keys[j]->u.s, b, &first, loss);
		}
	}
	spt_buf_putc(b, '}');
}

static int etcd_export_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *b)
{
	struct spt_json_loss loss = { 0 };
	if (export_skip_unfinished(ex, ev))
		return 0;
	const char *tsfmt = rec_str(ev->meta, "_ts");
	if (!tsfmt) {
		write_event(ex, ev, b, &loss);
	} else {
		/* The envelope as it came: zap's field order, or SysMoBench's. */
		static const char *const zap[] = { "level", "ts", "caller", "msg", "tag", NULL };
		static const char *const smb[] = { "tag", "ts", NULL };
		static const char *const hidden[] = { "_ts", "_ts_text", "_keys", "_state_keys", "_event_keys", NULL };
		bool is_zap = spt_rec_get(ev->meta, "level") != NULL;
		struct spt_arena *a = export_arena(ex);
		spt_val *env = rec_without(a, ev->meta, hidden);
		const char *const *order = is_zap ? zap : smb;
		/* A trace imported since the envelope's order was kept: that order. */
		spt_val *keys = spt_rec_get(ev->meta, "_keys");
		const char *kept[32];
		if (keys && keys->kind == SPT_SEQ && keys->n < 32) {
			for (uint32_t i = 0; i < keys->n; i++)
				kept[i] = keys->u.elems[i]->kind == SPT_STR ? keys->u.elems[i]->u.s : "";
			kept[keys->n] = NULL;
			order = kept;
		}
		bool first = true, event_done = false;
		spt_buf_putc(b, '{');
		for (const char *const *k = order; *k; k++) {
			if (!strcmp(*k, "event")) {
				write_key(b, &first, "event");
				write_event(ex, ev, b, &loss);
				event_done = true;
				continue;
			}
			if (!strcmp(*k, "ts")) {
				if (!strcmp(tsfmt, "none"))
					continue;
				write_key(b, &first, "ts");
				spt_val *text = spt_rec_get(ev->meta, "_ts_text");
				if (!strcmp(tsfmt, "ns"))
					spt_buf_printf(b, "\"%" PRIu64 "\"", ev->ts_ns);
				else if (!strcmp(tsfmt, "rfc3339") && text && text->kind == SPT_STR)
					spt_buf_json_str(b, text->u.s, text->n);
				else if (!strcmp(tsfmt, "rfc3339"))
					put_rfc3339(b, ev->ts_ns);
				else if (text && text->kind == SPT_STR)
					spt_buf_put(b, text->u.s, text->n);
				else
					write_seconds(b, ev->ts_ns);
				continue;
			}
			spt_val *v = env ? spt_rec_get(env, *k) : NULL;
			if (v) {
				write_key(b, &first, *k);
				spt_json_write(b, v, 0, &loss);
			}
		}
		for (uint32_t i = 0; env && i < env->n; i++) {
			uint32_t j = env->u.fn.order ? env->u.fn.order[i] : i;
			spt_val *k = env->u.fn.keys[j];
			bool listed = false;
			for (const char *const *o = order; *o; o++)
				listed |= strlen(*o) == k->n && !memcmp(*o, k->u.s, k->n);
			if (listed)
				continue;
			if (!first)
				spt_buf_putc(b, ',');
			first = false;
			spt_buf_json_str(b, k->u.s, k->n);
			spt_buf_putc(b, ':');
			spt_json_write(b, env->u.fn.vals[j], 0, &loss);
		}
		if (!event_done) {
			write_key(b, &first, "event");
			write_event(ex, ev, b, &loss);
		}
		spt_buf_putc(b, '}');
	}
	spt_buf_putc(b, '\n');
	export_drop_common(ex, ev, &loss);
	return 0;
}

/* The config line an imported trace began with, as it came. */
static int etcd_export_begin(struct spt_export *ex, struct spt_buf *b)
{
	const struct spt_header *h = export_header(ex);
	spt_val *line = h->extra ? spt_rec_get(h->extra, "config_line") : NULL;
	if (line) {
		spt_json_write(b, line, 0, NULL);
		spt_buf_putc(b, '\n');
	}
	return 0;
}

const struct dialect_ops dialect_etcd = {
	.name = "etcd-ndjson",
	.derive = true,
	.import = etcd_import,
	.export_begin = etcd_export_begin,
	.export_event = etcd_export_event,
};
