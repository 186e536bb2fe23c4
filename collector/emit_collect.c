/* The emit-record collector core; see emit_collect.h. */
#include "emit_collect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectap/dialect.h"
#include "spectap/value.h"

struct held {
	uint64_t ts_ns, order; /* order: arrival, for a stable sort */
	int pid, tid;
	char *data;
	size_t len;
};

struct pid_seen {
	int pid;
	uint64_t next_seq; /* the meta.seq expected next from this process (0: none seen yet) */
};

struct node_off {
	char *name;
	uint64_t skipped; /* trace seq numbers left for lost events so far */
};

struct ecol {
	struct spt_writer *w;
	struct spt_import *im;
	char *source;
	void (*on_event)(void *ctx, const struct spt_event *ev, int pid);
	void *ctx;
	struct held *held;
	size_t n_held, cap_held;
	uint64_t arrivals, last_ts;
	struct pid_seen *pids;
	size_t n_pids, cap_pids;
	struct node_off *nodes;
	size_t n_nodes, cap_nodes;
	char *line;
	size_t cap_line;
	struct ecol_stats st;
	char first_reject[512];
	char err[512];
};

static int fail(struct ecol *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* Grows *p (of *cap elements of size sz) to hold n; 0 or -ENOMEM. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
	if (n <= *cap)
		return 0;
	size_t cap2 = *cap ? *cap * 2 : 64;
	while (cap2 < n)
		cap2 *= 2;
	void *q = realloc(*p, cap2 * sz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = cap2;
	return 0;
}

int ecol_new(struct spt_writer *w, const struct ecol_opts *o, struct ecol **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!o || o->sz < sizeof(*o) || !o->source || !*o->source) {
		snprintf(err, errlen, "emit collector: options without a source");
		return -EINVAL;
	}
	struct ecol *c = calloc(1, sizeof(*c));
	if (!c || !(c->source = strdup(o->source)) || spt_import_new(SPT_DIALECT_JSON, &c->im)) {
		if (c)
			free(c->source);
		free(c);
		snprintf(err, errlen, "emit collector: out of memory");
		return -ENOMEM;
	}
	spt_import_set_derive(c->im);
	c->w = w;
	c->on_event = o->on_event;
	c->ctx = o->ctx;
	*out = c;
	return 0;
}

void ecol_free(struct ecol *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_held; i++)
		free(c->held[i].data);
	for (size_t i = 0; i < c->n_nodes; i++)
		free(c->nodes[i].name);
	free(c->held);
	free(c->pids);
	free(c->nodes);
	free(c->line);
	free(c->source);
	spt_import_free(c->im);
	free(c);
}

const char *ecol_error(const struct ecol *c) { return c->err; }
const char *ecol_first_rejection(const struct ecol *c) { return c->first_reject; }
const struct ecol_stats *ecol_stats(const struct ecol *c) { return &c->st; }

static struct pid_seen *pid_find(struct ecol *c, int pid)
{
	for (size_t i = 0; i < c->n_pids; i++)
		if (c->pids[i].pid == pid)
			return &c->pids[i];
	return NULL;
}

int ecol_name_pid(struct ecol *c, int pid)
{
	if (pid <= 0)
		return fail(c, -EINVAL, "emit collector: pid %d named", pid);
	if (pid_find(c, pid))
		return 0;
	if (grow((void **)&c->pids, &c->cap_pids, c->n_pids + 1, sizeof(*c->pids)))
		return fail(c, -ENOMEM, "emit collector: out of memory");
	c->pids[c->n_pids++] = (struct pid_seen){ .pid = pid };
	return 0;
}

int ecol_add(struct ecol *c, const struct ecol_rec *r)
{
	if (grow((void **)&c->held, &c->cap_held, c->n_held + 1, sizeof(*c->held)))
		return fail(c, -ENOMEM, "emit collector: out of memory");
	char *data = malloc(r->len + 1);
	if (!data)
		return fail(c, -ENOMEM, "emit collector: out of memory");
	memcpy(data, r->data, r->len);
	data[r->len] = 0;
	c->held[c->n_held++] = (struct held){ r->ts_ns, c->arrivals++, r->pid, r->tid, data, r->len };
	c->st.records++;
	c->st.held = c->n_held;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static struct node_off *node_of(struct ecol *c, const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		if (!strcmp(c->nodes[i].name, name))
			return &c->nodes[i];
	if (grow((void **)&c->nodes, &c->cap_nodes, c->n_nodes + 1, sizeof(*c->nodes)))
		return NULL;
	struct node_off *n = &c->nodes[c->n_nodes];
	if (!(n->name = strdup(name)))
		return NULL;
	n->skipped = 0;
	c->n_nodes++;
	return n;
}

static void reject(struct ecol *c, const struct held *h, size_t offset, const char *why)
{
	c->st.rejected++;
	if (!c->first_reject[0])
		snprintf(c->first_reject, sizeof(c->first_reject),
			 "a record of pid %d (%zu bytes, at ts %" PRIu64 ") is not a valid event at byte offset %zu: %s",
			 h->pid, h->len, h->ts_ns, offset, why);
}

/* meta.seq of the event, 0 when it has none (or it is not a positive integer). */
static uint64_t emitter_seq(const struct spt_event *ev)
{
	spt_val *s = ev->meta ? spt_rec_get(ev->meta, "seq") : NULL;
	return s && s->kind == SPT_INT && s->u.i > 0 ? (uint64_t)s->u.i : 0;
}

static int write_one(struct ecol *c, const struct held *h)
{
	struct pid_seen *p = pid_find(c, h->pid);
	if (!p) {
		c->st.foreign++;
		return 0;
	}
	/* The record as a json-dialect line: {"event":{"source":..,"ts_ns":..,"tid":.., + the
	 * record after its '{', + '}'. */
	char head[128];
	int hl = snprintf(head, sizeof(head), "{\"event\":{\"source\":\"\",\"ts_ns\":%" PRIu64 ",\"tid\":%d%s", h->ts_ns,
			  h->tid, h->len > 1 && h->data[1] != '}' ? "," : "");
	if (h->len < 2 || h->data[0] != '{') {
		reject(c, h, 0, "not a JSON object");
		return 0;
	}
	size_t n = (size_t)hl + h->len - 1 + 1; /* the record's own '}' closes "event" */
	if (grow((void **)&c->line, &c->cap_line, n + 1, 1))
		return fail(c, -ENOMEM, "emit collector: out of memory");
	memcpy(c->line, head, (size_t)hl);
	memcpy(c->line + hl, h->data + 1, h->len - 1);
	c->line[n - 1] = '}';
	c->line[n] = 0;

	const struct spt_event *ev = NULL;
	const struct spt_loss *loss = NULL;
	struct spt_json_error je = { 0 };
	int rc = spt_import_line(c->im, c->line, n, &ev, &loss, &je);
	if (rc == -ENOMEM)
		return fail(c, rc, "emit collector: out of memory");
	if (rc != 1) {
		size_t at = je.offset > (size_t)hl ? je.offset - (size_t)hl + 1 : 0;
		reject(c, h, at, rc < 0 ? je.msg : "not an event");
		return 0;
	}
	struct spt_event e = *ev;
	e.source = c->source;
	struct node_off *no = node_of(c, e.node);
	if (!no)
		return fail(c, -ENOMEM, "emit collector: out of memory");
	uint64_t s = emitter_seq(&e);
	if (s && p->next_seq && s > p->next_seq) {
		uint64_t gap = s - p->next_seq;
		struct spt_loss l = { e.node, c->source, gap, e.seq + no->skipped, e.seq + no->skipped + gap - 1 };
		if ((rc = spt_writer_add_loss(c->w, &l)) < 0)
			return fail(c, rc, "emit collector: cannot write a loss record: %s", strerror(-rc));
		no->skipped += gap;
		c->st.gap_lost += gap;
	}
	if (s >= p->next_seq)
		p->next_seq = s + 1;
	e.seq += no->skipped;
	if (e.ts_ns < c->last_ts)
		c->st.late++;
	else
		c->last_ts = e.ts_ns;
	if ((rc = spt_writer_append(c->w, &e)) < 0)
		return fail(c, rc, "emit collector: cannot write an event: %s", strerror(-rc));
	c->st.events++;
	if (e.msg) {
		if (e.msg->dir == SPT_MSG_SEND)
			c->st.sends++;
		else
			c->st.receives++;
	}
	const struct spt_import_stats *is = spt_import_stats(c->im);
	c->st.paired = is->paired;
	c->st.unpaired_receives = is->unpaired_receives;
	if (c->on_event)
		c->on_event(c->ctx, &e, h->pid);
	return 0;
}

int ecol_release(struct ecol *c, uint64_t before_ns)
{
	if (!c->n_held)
		return 0;
	qsort(c->held, c->n_held, sizeof(*c->held), by_time);
	size_t k = 0;
	int rc = 0;
	while (k < c->n_held && c->held[k].ts_ns < before_ns && rc == 0)
		rc = write_one(c, &c->held[k++]);
	for (size_t i = 0; i < k; i++)
		free(c->held[i].data);
	if (k) {
		memmove(c->held, c->held + k, (c->n_held - k) * sizeof(*c->held));
		c->n_held -= k;
	}
	c->st.held = c->n_held;
	if (rc == 0)
		rc = spt_writer_tick(c->w); /* the writer's flush interval, if it has one */
	return rc < 0 ? rc : (int)k;
}

int ecol_finish(struct ecol *c, uint64_t transport_lost, uint64_t *lost)
{
	int rc = ecol_release(c, UINT64_MAX);
	if (rc < 0)
		return rc;
	uint64_t unseen = transport_lost + c->st.rejected;
	uint64_t total = c->st.gap_lost;
	if (unseen > c->st.gap_lost) {
		/* Lost where no gap shows it (a process's last records, a rejected one): no node
		 * and no range known. */
		struct spt_loss l = { "", c->source, unseen - c->st.gap_lost, 0, 0 };
		if ((rc = spt_writer_add_loss(c->w, &l)) < 0)
			return fail(c, rc, "emit collector: cannot write a loss record: %s", strerror(-rc));
		total = unseen;
	}
	if ((rc = spt_writer_flush(c->w)) < 0)
		return fail(c, rc, "emit collector: cannot flush the trace: %s", strerror(-rc));
	c->st.unpaired_sends = c->st.sends - c->st.paired;
	if (lost)
		*lost = total;
	return 0;
}
