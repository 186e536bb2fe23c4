/* events: probe hits -> events through a description's events module (events.h). */
#include "events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "fold.h"

#define NGOROUTINES 4096 /* the last entry hit of each goroutine, for morestack repeats */

struct last_hit {
	uint64_t g, ret, sp, ktime;
	uint32_t probe;
};

/* A repeat follows its first hit at once: the prologue only grew the stack in between. */
#define REPEAT_WITHIN_NS 1000000ull

struct hevents {
	struct fold *f;
	const struct hprobes *probes;
	spt_val *out; /* the current hit's events */
	char **nodes;
	size_t nnodes;
	uint64_t *probe_hits; /* per probe */
	struct last_hit last[NGOROUTINES];
	struct hevents_stats st;
};

int hevents_new(const char *module, const struct hprobes *probes, const char *const *nodes, size_t nnodes,
		struct hevents **out, char *err, size_t errsize)
{
	struct check_error ce = { "" };
	struct hevents *e = calloc(1, sizeof(*e));
	*out = NULL;
	if (!e)
		return snprintf(err, errsize, "out of memory"), -ENOMEM;
	int r = fold_new(module, "ShapeInit", "Shape", NULL, &e->f, &ce);
	if (r) {
		snprintf(err, errsize, "%s", ce.msg[0] ? ce.msg : strerror(-r));
		free(e);
		return r;
	}
	e->probes = probes;
	if (!(e->nodes = calloc(nnodes + 1, sizeof(char *))) || !(e->probe_hits = calloc(probes->n + 1, sizeof(uint64_t)))) {
		hevents_free(e);
		return snprintf(err, errsize, "out of memory"), -ENOMEM;
	}
	for (size_t i = 0; i < nnodes; i++)
		if (!(e->nodes[e->nnodes++] = strdup(nodes[i]))) {
			hevents_free(e);
			return snprintf(err, errsize, "out of memory"), -ENOMEM;
		}
	*out = e;
	return 0;
}

void hevents_free(struct hevents *e)
{
	if (!e)
		return;
	fold_free(e->f);
	for (size_t i = 0; i < e->nnodes; i++)
		free(e->nodes[i]);
	free(e->nodes);
	free(e->probe_hits);
	free(e);
}

const struct hevents_stats *hevents_stats(const struct hevents *e) { return &e->st; }

uint64_t hevents_probe_hits(const struct hevents *e, size_t i) { return i < e->probes->n ? e->probe_hits[i] : 0; }

/* x86 flags a prologue's `jbe morestack` jumps on */
#define FLAG_CF 0x1u
#define FLAG_ZF 0x40u

/* An entry hit that the call will repeat: the prologue grows the stack and runtime.morestack
 * jumps back to the entry. At the prologue's jbe the flags say so exactly. At the first
 * instruction (a function without that check) a repeat is told by its goroutine's previous hit:
 * the same probe and return address on a moved stack, right before. (A later call from the same
 * site may also find the stack moved, by a nested call that grew it: that one is missed there.) */
static bool repeat(struct hevents *e, const struct hprobe *p, const struct uprobe_event *ev, uint64_t ktime)
{
	if (p->g_read < 0) /* C: no morestack */
		return false;
	uint64_t g = ev->val[p->g_read];
	struct last_hit *l = &e->last[(g >> 4) * 0x9e3779b97f4a7c15ULL >> 52];
	bool rep;
	if (p->flags_read >= 0) {
		rep = (ev->err >> p->flags_read & 1) == 0 && (ev->val[p->flags_read] & (FLAG_CF | FLAG_ZF));
		*l = (struct last_hit){ g, 0, 0, ktime, p->id };
	} else if (p->ret_read < 0 || p->sp_read < 0) { /* a return probe: it parts two calls */
		rep = false;
		*l = (struct last_hit){ g, 0, 0, ktime, p->id };
	} else {
		uint64_t ret = ev->val[p->ret_read], sp = ev->val[p->sp_read];
		rep = l->g == g && l->probe == p->id && l->ret == ret && l->sp != sp && ktime - l->ktime < REPEAT_WITHIN_NS;
		*l = (struct last_hit){ g, ret, sp, ktime, p->id };
	}
	return rep;
}

static spt_val *read_value(struct spt_arena *a, const struct hread *h, const struct uprobe_event *ev, size_t size)
{
	uint64_t v = ev->val[h->v];
	switch (h->kind) {
	case HREAD_INT:
		return spt_int(a, (int64_t)v);
	case HREAD_BOOL:
		return spt_bool(a, v != 0);
	case HREAD_HEX: {
		char hex[24];
		return spt_str(a, hex, (size_t)snprintf(hex, sizeof(hex), "%" PRIx64, v));
	}
	case HREAD_UINT:
	case HREAD_POINTER:
		if (v > INT64_MAX) {
			char num[24];
			return spt_str(a, num, (size_t)snprintf(num, sizeof(num), "%" PRIu64, v));
		}
		return spt_int(a, (int64_t)v);
	case HREAD_ARRAY: {
		/* the elements read (val[b]), at most 8, 8 bytes each, as integers */
		const uint8_t *b = h->b >= 0 ? uprobe_event_block(ev, size, (unsigned)h->b) : NULL;
		size_t n = b ? (size_t)ev->val[h->b] : 0;
		spt_val *el[UPROBE_MAX_ELEMS];
		n = n < UPROBE_MAX_ELEMS ? n : UPROBE_MAX_ELEMS;
		for (size_t i = 0; i < n; i++) {
			uint64_t x;
			memcpy(&x, b + 8 * i, 8);
			if (!(el[i] = x > INT64_MAX ? spt_cstr(a, "?") : spt_int(a, (int64_t)x)))
				return NULL;
		}
		return spt_seq(a, el, n);
	}
	case HREAD_STRING:
	case HREAD_BYTES: {
		const uint8_t *b = h->b >= 0 ? uprobe_event_block(ev, size, (unsigned)h->b) : NULL;
		size_t n = v < UPROBE_MAX_BLOCK ? (size_t)v : UPROBE_MAX_BLOCK;
		if (!b)
			n = 0;
		if (h->kind == HREAD_STRING)
			return spt_str(a, (const char *)b, n);
		spt_val *el[UPROBE_MAX_BLOCK];
		for (size_t i = 0; i < n; i++)
			if (!(el[i] = spt_int(a, b[i])))
				return NULL;
		return spt_seq(a, el, n);
	}
	}
	return NULL;
}

/* The hit as the module sees it. */
static spt_val *hit_value(struct spt_arena *a, const struct hevents *e, const struct hprobe *p,
			  const struct collect_shape *s)
{
	const struct uprobe_event *ev = s->ev;
	const char *rnames[DESC_MAX_READS];
	spt_val *rvals[DESC_MAX_READS], *faulted[DESC_MAX_READS];
	size_t nr = 0, nf = 0;
	for (size_t i = 0; i < p->nreads; i++) {
		const struct hread *h = &p->reads[i];
		bool bad = (h->v >= 0 && (ev->err & (1u << h->v))) || (h->b >= 0 && (ev->err & (1u << h->b)));
		if (bad) {
			if (!(faulted[nf++] = spt_cstr(a, h->name)))
				return NULL;
			continue;
		}
		rnames[nr] = h->name;
		if (!(rvals[nr++] = read_value(a, h, ev, s->size)))
			return NULL;
	}
	spt_val *r = spt_rec(a, rnames, rvals, nr), *fs = spt_set(a, faulted, nf), **nv;
	if (!(nv = spt_arena_alloc(a, (e->nnodes + 1) * sizeof(*nv))))
		return NULL;
	for (size_t i = 0; i < e->nnodes; i++)
		if (!(nv[i] = spt_cstr(a, e->nodes[i])))
			return NULL;
	/* Who ran it: the goroutine (its g), which a Go step keeps from entry to return whatever
	 * thread runs it. */
	uint64_t g = p->g_read >= 0 ? ev->val[p->g_read] : ev->tid; /* C: the thread */
	/* pid: a node restarted is a new process (a step open in the old one never ends). */
	const char *names[] = { "probe", "node", "pid", "tid", "g", "ts", "r", "faulted", "nodes" };
	spt_val *vals[] = { spt_cstr(a, p->dp->name), spt_cstr(a, s->node), spt_int(a, ev->pid), spt_int(a, ev->tid),
			    spt_int(a, (int64_t)(g & INT64_MAX)), spt_int(a, (int64_t)s->ktime), r, fs,
			    spt_seq(a, nv, e->nnodes) };
	for (size_t i = 0; i < 9; i++)
		if (!vals[i])
			return NULL;
	return spt_rec(a, names, vals, 9);
}

static int bad_event(struct hevents *e, struct collect_shape *s, spt_val *ev, const char *what)
{
	snprintf(s->err, sizeof(s->err), "the events module's Shape gave an event %.200s: %.400s", what,
		 ev_show(&fold_interp(e->f)->ev, ev));
	return -EINVAL;
}

static const char *str_field(spt_val *rec, const char *name)
{
	spt_val *v = spt_rec_get(rec, name);
	return v && v->kind == SPT_STR ? v->u.s : NULL;
}

/* Event k of the current hit into s. */
static int put_event(struct hevents *e, struct collect_shape *s, spt_val *ev)
{
	if (!spt_is_fun(ev))
		return bad_event(e, s, ev, "that is not a record");
	const char *kind = str_field(ev, "kind");
	if (!kind)
		return bad_event(e, s, ev, "without a kind string");
	s->kind = kind;
	s->args = spt_rec_get(ev, "args");
	s->state = spt_rec_get(ev, "state");
	spt_val *m = spt_rec_get(ev, "msg");
	if (!m)
		return 0;
	const char *dir = spt_is_fun(m) ? str_field(m, "dir") : NULL;
	s->msg_buf = (struct spt_msg){ .from = str_field(m, "from"), .to = str_field(m, "to"),
				       .type = str_field(m, "type"), .fields = spt_rec_get(m, "fields") };
	if (!dir || (strcmp(dir, "send") && strcmp(dir, "recv")) || !s->msg_buf.from || !s->msg_buf.to ||
	    !s->msg_buf.type)
		return bad_event(e, s, ev, "whose msg is not [dir |-> \"send\" or \"recv\", from, to, type (strings), fields]");
	s->msg_buf.dir = dir[0] == 's' ? SPT_MSG_SEND : SPT_MSG_RECV;
	s->msg = &s->msg_buf;
	return 0;
}

int hevents_shape(void *ctx, struct collect_shape *s)
{
	struct hevents *e = ctx;
	if (s->part == 0) {
		const struct hprobe *p = hprobes_find(e->probes, s->probe_id);
		if (!p)
			return 1;
		e->st.hits++;
		if (repeat(e, p, s->ev, s->ktime)) {
			e->st.repeats++;
			return 1;
		}
		e->probe_hits[p - e->probes->p]++;
		struct spt_arena *a = fold_begin(e->f);
		spt_val *hit = a ? hit_value(a, e, p, s) : NULL;
		if (!hit) {
			snprintf(s->err, sizeof(s->err), "out of memory shaping a %s hit", p->dp->name);
			return -ENOMEM;
		}
		struct check_error ce = { "" };
		int r = fold_step(e->f, hit, &e->out, &ce);
		if (r) {
			snprintf(s->err, sizeof(s->err), "%.1000s", ce.msg[0] ? ce.msg : strerror(-r));
			return r;
		}
		if (e->out && e->out->kind != SPT_SEQ && !(spt_is_fun(e->out) && e->out->n == 0)) {
			snprintf(s->err, sizeof(s->err), "the events module's Shape gave out = %.400s, not a sequence of events",
				 ev_show(&fold_interp(e->f)->ev, e->out));
			return -EINVAL;
		}
	}
	size_t n = e->out && e->out->kind == SPT_SEQ ? e->out->n : 0;
	if (s->part >= n)
		return 1;
	int r = put_event(e, s, e->out->u.elems[s->part]);
	if (r)
		return r;
	e->st.events++;
	return s->part + 1 < n ? COLLECT_SHAPE_MORE : 0;
}
