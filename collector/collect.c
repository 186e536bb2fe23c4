/* The generic collector core: uprobe records -> spectap events. See collect.h for the design
 * (reorder window, loss accounting, value types). */
#include "collect_priv.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectap/arena.h"
#include "spectap/msgpair.h"
#include "spectap/value.h"

int collect_fail(struct collect *c, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->fails++;
	return e;
}

const char *collect_error(const struct collect *c) { return c ? c->err : ""; }
const struct collect_stats *collect_stats(const struct collect *c) { return &c->st; }

static const struct probe *find_probe(const struct collect *c, uint32_t id)
{
	size_t lo = 0, hi = c->nprobes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->probes[mid].id == id)
			return &c->probes[mid];
		if (c->probes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_probe(const void *a, const void *b)
{
	uint32_t x = ((const struct probe *)a)->id, y = ((const struct probe *)b)->id;

	return x < y ? -1 : x > y;
}

static int check_table(struct collect *c, const struct collect_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct collect_probe *p = &t->probes[i];
		int nodes = 0;

		if (!p->kind || !*p->kind)
			return collect_fail(c, -EINVAL, "probe %" PRIu32 ": no event kind", p->probe_id);
		if (p->nfields > UPROBE_MAX_READS)
			return collect_fail(c, -EINVAL, "probe %" PRIu32 " (%s): %u fields, at most %d", p->probe_id,
				    p->kind, p->nfields, UPROBE_MAX_READS);
		for (size_t j = 0; j < i; j++)
			if (t->probes[j].probe_id == p->probe_id)
				return collect_fail(c, -EINVAL, "probe id %" PRIu32 " is in the table twice (%s, %s)",
					    p->probe_id, t->probes[j].kind, p->kind);
		for (unsigned k = 0; k < p->nfields; k++) {
			const struct collect_field *f = &p->fields[k];

			if (f->place == COLLECT_SKIP)
				continue;
			if (f->place > COLLECT_NODE)
				return collect_fail(c, -EINVAL, "probe %" PRIu32 " (%s) read %u: unknown place %u",
					    p->probe_id, p->kind, k, f->place);
			if (f->type < COLLECT_INT || f->type > COLLECT_ID)
				return collect_fail(c, -EINVAL, "probe %" PRIu32 " (%s) read %u: unknown type %u",
					    p->probe_id, p->kind, k, f->type);
			if (!f->name || !*f->name)
				return collect_fail(c, -EINVAL, "probe %" PRIu32 " (%s) read %u: no field name",
					    p->probe_id, p->kind, k);
			if (f->place == COLLECT_NODE && ++nodes > 1)
				return collect_fail(c, -EINVAL, "probe %" PRIu32 " (%s): more than one node read",
					    p->probe_id, p->kind);
			for (unsigned m = 0; m < k; m++)
				if (p->fields[m].place == f->place && f->place != COLLECT_NODE &&
				    p->fields[m].name && !strcmp(p->fields[m].name, f->name))
					return collect_fail(c, -EINVAL, "probe %" PRIu32 " (%s): field \"%s\" twice in %s",
						    p->probe_id, p->kind, f->name,
						    f->place == COLLECT_ARGS ? "args" : "state");
		}
	}
	return 0;
}

int collect_new(struct spt_writer *w, const struct collect_table *t, struct uprobe_loader *l,
		const struct collect_opts *o, struct collect **out, char *err, size_t errlen)
{
	struct collect *c = calloc(1, sizeof(*c));
	int r = 0;

	*out = NULL;
	if (!c) {
		if (err && errlen)
			snprintf(err, errlen, "collector: out of memory");
		return -ENOMEM;
	}
	spt_arena_init(&c->arena);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->spool_lock, NULL);
	pthread_mutex_init(&c->snap_lock, NULL);
	c->w = w;
	c->l = l;
	c->window_ns = DEFAULT_WINDOW_NS;
	c->max_pending = DEFAULT_MAX_PENDING;
	if (o && o->sz >= offsetof(struct collect_opts, window_ns) + sizeof(o->window_ns) && o->window_ns)
		c->window_ns = o->window_ns;
	if (o && o->sz >= offsetof(struct collect_opts, max_pending) + sizeof(o->max_pending) && o->max_pending)
		c->max_pending = o->max_pending;
	if (o && o->sz >= offsetof(struct collect_opts, shape_ctx) + sizeof(o->shape_ctx)) {
		c->shape = o->shape;
		c->shape_ctx = o->shape_ctx;
	}
	if (o && o->sz >= offsetof(struct collect_opts, shape_end) + sizeof(o->shape_end))
		c->shape_end = o->shape_end;
	if (o && o->sz >= offsetof(struct collect_opts, named_pids_only) + sizeof(o->named_pids_only))
		c->named_pids_only = o->named_pids_only;
	c->spool_backlog = DEFAULT_SPOOL_BACKLOG;
	if (o && o->sz >= offsetof(struct collect_opts, spool_backlog) + sizeof(o->spool_backlog) && o->spool_backlog)
		c->spool_backlog = o->spool_backlog;
	if (o && o->sz >= offsetof(struct collect_opts, flush_ms) + sizeof(o->flush_ms))
		c->flush_ms = o->flush_ms;
	if (o && o->sz >= offsetof(struct collect_opts, spool_dir) + sizeof(o->spool_dir) && o->spool &&
	    (r = spool_open(o->spool_dir, &c->spool, c->err, sizeof(c->err))))
		goto cleanup;
	if (spt_msgpair_new(&c->pairs)) {
		r = collect_fail(c, -ENOMEM, "collector: out of memory");
		goto cleanup;
	}
	if (!w || !t || (t->n && !t->probes)) {
		r = collect_fail(c, -EINVAL, "collector: no writer or no probe table");
		goto cleanup;
	}
	r = check_table(c, t);
	if (r)
		goto cleanup;
	c->probes = calloc(t->n ? t->n : 1, sizeof(*c->probes));
	if (!c->probes) {
		r = collect_fail(c, -ENOMEM, "collector: out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct collect_probe *p = &t->probes[i];
		struct probe *q = &c->probes[i];

		c->nprobes++;
		q->id = p->probe_id;
		q->nfields = p->nfields;
		q->node_read = -1;
		q->kind = strdup(p->kind);
		if (!q->kind) {
			r = collect_fail(c, -ENOMEM, "collector: out of memory");
			goto cleanup;
		}
		for (unsigned k = 0; k < p->nfields; k++) {
			q->f[k] = p->fields[k];
			q->f[k].name = NULL;
			if (p->fields[k].place == COLLECT_SKIP)
				continue;
			if (p->fields[k].place == COLLECT_NODE)
				q->node_read = (int)k;
			q->f[k].name = strdup(p->fields[k].name);
			if (!q->f[k].name) {
				r = collect_fail(c, -ENOMEM, "collector: out of memory");
				goto cleanup;
			}
		}
	}
	qsort(c->probes, c->nprobes, sizeof(*c->probes), cmp_probe);
	c->ctrs = calloc(MAX_CPUS, sizeof(*c->ctrs));
	if (!c->ctrs) {
		r = collect_fail(c, -ENOMEM, "collector: out of memory");
		goto cleanup;
	}
cleanup:
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "%s", c->err);
		collect_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void collect_free(struct collect *c)
{
	if (!c)
		return;
	collect_bg_stop(c);
	spool_close(c->spool);
	for (size_t i = 0; i < c->nprobes; i++) {
		free(c->probes[i].kind);
		for (unsigned k = 0; k < c->probes[i].nfields; k++)
			free((char *)c->probes[i].f[k].name);
	}
	free(c->probes);
	for (size_t i = 0; i < c->nnodes; i++)
		free(c->nodes[i].name);
	free(c->nodes);
	free(c->pids);
	for (size_t i = 0; i < c->ncpus; i++)
		free(c->cpus[i].gaps);
	free(c->cpus);
	for (size_t i = 0; i < c->nheap; i++)
		free(c->heap[i]);
	free(c->heap);
	free(c->ctrs);
	spt_msgpair_free(c->pairs);
	spt_arena_fini(&c->arena);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->spool_lock);
	pthread_mutex_destroy(&c->snap_lock);
	free(c);
}

/* ---- nodes ---------------------------------------------------------------------------------- */

/* Index of the node called name (len bytes), added if new; -ENOMEM. */
static long node_index(struct collect *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->nnodes; i++)
		if (strlen(c->nodes[i].name) == len && !memcmp(c->nodes[i].name, name, len))
			return (long)i;
	if (c->nnodes == c->capnodes) {
		size_t cap = c->capnodes ? 2 * c->capnodes : 8;
		struct node *n = realloc(c->nodes, cap * sizeof(*n));

		if (!n)
			return collect_fail(c, -ENOMEM, "collector: out of memory");
		c->nodes = n;
		c->capnodes = cap;
	}
	memset(&c->nodes[c->nnodes], 0, sizeof(c->nodes[0]));
	c->nodes[c->nnodes].name = strndup(name, len);
	if (!c->nodes[c->nnodes].name)
		return collect_fail(c, -ENOMEM, "collector: out of memory");
	return (long)c->nnodes++;
}

int collect_set_node(struct collect *c, int pid, const char *node)
{
	int r;

	if (!c->spool) {
		pthread_mutex_lock(&c->lock);
		r = collect_set_node_locked(c, pid, node);
		pthread_mutex_unlock(&c->lock);
		return r;
	}
	/* Spool mode: the mapping takes effect where it stands among the records, as it would
	 * live; the shaping thread applies it. */
	if (!node || !*node)
		return collect_fail(c, -EINVAL, "collector: empty node name for pid %d", pid);
	pthread_mutex_lock(&c->spool_lock);
	r = spool_add_node(c->spool, pid, node);
	pthread_mutex_unlock(&c->spool_lock);
	return r ? collect_fail(c, r, "collector: %s", spool_error(c->spool)) : 0;
}

int collect_set_node_locked(struct collect *c, int pid, const char *node)
{
	long n;

	if (!node || !*node)
		return collect_fail(c, -EINVAL, "collector: empty node name for pid %d", pid);
	n = node_index(c, node, strlen(node));
	if (n < 0)
		return (int)n;
	for (size_t i = 0; i < c->npids; i++) {
		if (c->pids[i].pid == pid) {
			c->pids[i].node = (size_t)n;
			return 0;
		}
	}
	if (c->npids == c->cappids) {
		size_t cap = c->cappids ? 2 * c->cappids : 8;
		struct pidmap *p = realloc(c->pids, cap * sizeof(*p));

		if (!p)
			return collect_fail(c, -ENOMEM, "collector: out of memory");
		c->pids = p;
		c->cappids = cap;
	}
	c->pids[c->npids++] = (struct pidmap){pid, (size_t)n};
	return 0;
}

/* ---- loss accounting ------------------------------------------------------------------------ */

static struct cpu *cpu_get(struct collect *c, uint32_t cpu)
{
	if (cpu >= MAX_CPUS)
		return NULL;
	if (cpu >= c->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct cpu *p = realloc(c->cpus, n * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + c->ncpus, 0, (n - c->ncpus) * sizeof(*p));
		c->cpus = p;
		c->ncpus = n;
	}
	return &c->cpus[cpu];
}

static int gap_add(struct collect *c, struct cpu *cp, uint64_t first, uint64_t last)
{
	if (cp->ngaps == cp->capgaps) {
		size_t cap = cp->capgaps ? 2 * cp->capgaps : 8;
		struct gap *g = realloc(cp->gaps, cap * sizeof(*g));

		if (!g)
			return collect_fail(c, -ENOMEM, "collector: out of memory");
		cp->gaps = g;
		cp->capgaps = cap;
	}
	cp->gaps[cp->ngaps++] = (struct gap){first, last, c->tick_no + 1};
	return 0;
}

/* Notes seq as received on cpu: extends hi (a jump is a new gap) or fills a pending gap. */
static int seq_seen(struct collect *c, uint32_t cpu, uint64_t seq)
{
	struct cpu *cp = cpu_get(c, cpu);

	if (!cp)
		return collect_fail(c, cpu >= MAX_CPUS ? -EPROTO : -ENOMEM, "collector: record from cpu %" PRIu32 "%s",
			    cpu, cpu >= MAX_CPUS ? ": cpu number out of range" : ": out of memory");
	if (seq >= cp->hi) {
		int r = seq > cp->hi ? gap_add(c, cp, cp->hi, seq - 1) : 0;

		cp->hi = seq + 1;
		cp->seen = true;
		return r;
	}
	for (size_t i = 0; i < cp->ngaps; i++) {
		struct gap *g = &cp->gaps[i];

		if (seq < g->first || seq > g->last)
			continue;
		if (g->first == g->last) {
			*g = cp->gaps[--cp->ngaps];
		} else if (seq == g->first) {
			g->first++;
		} else if (seq == g->last) {
			g->last--;
		} else {
			uint64_t last = g->last;

			g->last = seq - 1;
			return gap_add(c, cp, seq + 1, last);
		}
		return 0;
	}
	c->st.late_fill++;
	return 0;
}

static int write_loss(struct collect *c, uint32_t cpu, uint64_t count, uint64_t first, uint64_t last)
{
	char src[32];
	struct spt_loss loss = {"", src, count, first, last};
	int r;

	snprintf(src, sizeof(src), "bpf:cpu%" PRIu32, cpu);
	r = spt_writer_add_loss(c->w, &loss);
	if (r)
		return collect_fail(c, r, "collector: writing a loss record (%s, %" PRIu64 " events): %s", src, count,
			    strerror(-r));
	c->st.lost += count;
	c->cpus[cpu].declared += count;
	return 0;
}

/* Declares lost the gaps seen before this tick's drain (or all of them). */
static int declare_gaps(struct collect *c, bool all)
{
	for (size_t cpu = 0; cpu < c->ncpus; cpu++) {
		struct cpu *cp = &c->cpus[cpu];

		for (size_t i = 0; i < cp->ngaps;) {
			struct gap g = cp->gaps[i];
			int r;

			if (!all && g.born >= c->tick_no) {
				i++;
				continue;
			}
			cp->gaps[i] = cp->gaps[--cp->ngaps];
			r = write_loss(c, (uint32_t)cpu, g.last - g.first + 1, g.first, g.last);
			if (r)
				return r;
		}
	}
	return 0;
}

/* Reads the BPF per-CPU counters into c->ctrs; returns the number of CPUs, 0 without loader. */
static int read_counters(struct collect *c)
{
	int n;

	if (!c->l)
		return 0;
	n = uprobe_counters_per_cpu(c->l, c->ctrs, MAX_CPUS);
	if (n < 0)
		return collect_fail(c, n, "collector: reading the BPF counters: %s", uprobe_loader_error(c->l));
	return n > MAX_CPUS ? MAX_CPUS : n;
}

/* ---- events --------------------------------------------------------------------------------- */

static bool held_less(const struct held *a, const struct held *b)
{
	if (a->ktime != b->ktime)
		return a->ktime < b->ktime;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->order < b->order;
}

static int heap_push(struct collect *c, struct held *h)
{
	size_t i;

	if (c->nheap == c->capheap) {
		size_t cap = c->capheap ? 2 * c->capheap : 1024;
		struct held **p = realloc(c->heap, cap * sizeof(*p));

		if (!p)
			return collect_fail(c, -ENOMEM, "collector: out of memory");
		c->heap = p;
		c->capheap = cap;
	}
	i = c->nheap++;
	while (i > 0) {
		size_t up = (i - 1) / 2;

		if (!held_less(h, c->heap[up]))
			break;
		c->heap[i] = c->heap[up];
		i = up;
	}
	c->heap[i] = h;
	return 0;
}

static struct held *heap_pop(struct collect *c)
{
	struct held *top = c->heap[0], *last = c->heap[--c->nheap];
	size_t i = 0;

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= c->nheap)
			break;
		if (k + 1 < c->nheap && held_less(c->heap[k + 1], c->heap[k]))
			k++;
		if (!held_less(c->heap[k], last))
			break;
		c->heap[i] = c->heap[k];
		i = k;
	}
	if (c->nheap)
		c->heap[i] = last;
	return top;
}

/* The value of read i, or NULL (out of memory). */
static spt_val *read_value(struct collect *c, const struct uprobe_event *ev, size_t size, unsigned i,
			   uint8_t type)
{
	const uint8_t *blk;
	char buf[2 * UPROBE_MAX_BLOCK + 1];
	uint64_t v = ev->val[i];
	size_t n;

	switch (type) {
	case COLLECT_INT:
		return spt_int(&c->arena, (int64_t)v);
	case COLLECT_UINT:
		if (v <= (uint64_t)INT64_MAX)
			return spt_int(&c->arena, (int64_t)v);
		c->st.big_uints++;
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		return spt_cstr(&c->arena, buf);
	case COLLECT_BOOL:
		return spt_bool(&c->arena, v != 0);
	case COLLECT_ID:
		snprintf(buf, sizeof(buf), "%" PRIx64, v);
		return spt_cstr(&c->arena, buf);
	case COLLECT_CSTR:
	case COLLECT_HEX:
		blk = uprobe_event_block(ev, size, i);
		n = v < UPROBE_MAX_BLOCK ? (size_t)v : UPROBE_MAX_BLOCK;
		if (!blk)
			n = 0;
		if (type == COLLECT_CSTR)
			return spt_str(&c->arena, (const char *)blk, n ? strnlen((const char *)blk, n) : 0);
		for (size_t k = 0; k < n; k++)
			snprintf(buf + 2 * k, 3, "%02x", blk[k]);
		return spt_str(&c->arena, buf, 2 * n);
	}
	return NULL;
}

/* A record of the non-faulted reads placed at place; NULL in *out if the probe has none. */
static int build_rec(struct collect *c, const struct probe *p, const struct uprobe_event *ev, size_t size,
		     uint8_t place, spt_val **out)
{
	const char *names[UPROBE_MAX_READS];
	spt_val *vals[UPROBE_MAX_READS];
	size_t n = 0;

	*out = NULL;
	for (unsigned k = 0; k < p->nfields; k++) {
		if (p->f[k].place != place)
			continue;
		if (ev->err & (1u << k))
			continue;
		names[n] = p->f[k].name;
		vals[n] = read_value(c, ev, size, k, p->f[k].type);
		if (!vals[n])
			return collect_fail(c, -ENOMEM, "collector: out of memory");
		n++;
	}
	if (!n)
		return 0; /* none placed there, or all of them faulted: no record */
	*out = spt_rec(&c->arena, names, vals, n);
	return *out ? 0 : collect_fail(c, -ENOMEM, "collector: out of memory");
}

/* rec (a record, or NULL) with one more field name = v. */
static spt_val *rec_with(struct spt_arena *a, spt_val *rec, const char *name, spt_val *v)
{
	size_t n = rec && rec->kind == SPT_REC ? rec->n : 0;
	spt_val **keys = spt_arena_alloc(a, (n + 1) * sizeof(*keys));
	spt_val **vals = spt_arena_alloc(a, (n + 1) * sizeof(*vals));
	bool dup;

	if (!keys || !vals)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		keys[i] = rec->u.fn.keys[i];
		vals[i] = rec->u.fn.vals[i];
	}
	if (!(keys[n] = spt_cstr(a, name)))
		return NULL;
	vals[n] = v;
	return spt_fun(a, keys, vals, n + 1, &dup);
}

/* The message's id and the receive's Lamport clock (past its send's). */
static int pair_message(struct collect *c, struct spt_msg *m, uint64_t *lamport)
{
	uint64_t sent;
	int r;

	if (m->dir == SPT_MSG_SEND) {
		if ((r = spt_msgpair_send(c->pairs, m, *lamport, &m->id)))
			return collect_fail(c, r, "collector: out of memory");
		c->st.sends++;
		return 0;
	}
	if ((r = spt_msgpair_recv(c->pairs, m, &m->id, &sent)) < 0)
		return collect_fail(c, r, "collector: out of memory");
	c->st.receives++;
	if (r) {
		c->st.paired++;
		if (sent + 1 > *lamport)
			*lamport = sent + 1;
	} else {
		c->st.unpaired_receives++;
	}
	return 0;
}

static int write_event(struct collect *c, const struct probe *p, const struct uprobe_event *ev, const struct held *h,
		       struct node *nd, struct spt_event *ee);

/* What the shaper made of a record (or of the end), into the event e; its message in c->msg. */
static void take_shaped(struct collect *c, const struct collect_shape *sh, struct spt_event *e)
{
	e->kind = sh->kind;
	e->args = sh->args;
	e->state = sh->state;
	e->meta = sh->meta;
	if (sh->msg) {
		c->msg = *sh->msg;
		e->msg = &c->msg;
	}
}

/* The events of one record: as the table says, or as the shaper makes them (none, one, or
 * several: COLLECT_SHAPE_MORE asks to be called again for the next). */
static int emit(struct collect *c, const struct held *h)
{
	const struct uprobe_event *ev = &h->u.ev;
	const struct probe *p = find_probe(c, ev->probe_id);
	struct spt_event e;
	struct node *nd;
	long ni = -1;
	int r;

	spt_arena_reset(&c->arena);
	memset(&e, 0, sizeof(e));
	if (p->node_read >= 0 && !(ev->err & (1u << p->node_read))) {
		spt_val *v = read_value(c, ev, h->size, (unsigned)p->node_read, p->f[p->node_read].type);
		char num[32];

		if (!v)
			return collect_fail(c, -ENOMEM, "collector: out of memory");
		if (v->kind == SPT_INT)
			ni = node_index(c, num, (size_t)snprintf(num, sizeof(num), "%" PRId64, v->u.i));
		else if (v->kind == SPT_BOOL)
			ni = node_index(c, v->u.b ? "TRUE" : "FALSE", v->u.b ? 4 : 5);
		else
			ni = node_index(c, v->u.s, v->n);
		if (ni < 0)
			return (int)ni;
	}
	for (size_t i = 0; ni < 0 && i < c->npids; i++)
		if (c->pids[i].pid == (int)ev->pid)
			ni = (long)c->pids[i].node;
	if (ni < 0 && c->named_pids_only) {
		c->st.foreign++;
		return 0;
	}
	if (ni < 0) {
		char name[32];

		ni = node_index(c, name, (size_t)snprintf(name, sizeof(name), "pid:%" PRIu32, ev->pid));
		if (ni < 0)
			return (int)ni;
	}
	nd = &c->nodes[ni];
	e.kind = p->kind;
	r = build_rec(c, p, ev, h->size, COLLECT_ARGS, &e.args);
	if (!r)
		r = build_rec(c, p, ev, h->size, COLLECT_STATE, &e.state);
	if (r)
		return r;
	spt_val *table_args = e.args, *table_state = e.state;
	for (unsigned part = 0;; part++) {
		bool more = false;
		e.kind = p->kind;
		e.args = table_args;
		e.state = table_state;
		e.meta = NULL;
		e.msg = NULL;
		if (c->shape) {
			struct collect_shape sh = { .probe_id = ev->probe_id, .ev = ev, .size = h->size, .node = nd->name,
						    .kind = e.kind, .args = e.args, .state = e.state, .arena = &c->arena,
						    .part = part, .ktime = h->ktime };

			r = c->shape(c->shape_ctx, &sh);
			if (r < 0)
				return collect_fail(c, r, "collector: %s", sh.err[0] ? sh.err : strerror(-r));
			if (r == 1) {
				if (!part)
					c->st.internal++;
				return 0;
			}
			more = r == COLLECT_SHAPE_MORE;
			take_shaped(c, &sh, &e);
		}
		if ((r = write_event(c, p, ev, h, nd, &e)))
			return r;
		if (!more)
			return 0;
	}
}

/* Writes one event of record ev (held as h) of node nd: sequence, clocks, message pairing, the
 * reads that faulted. */
static int write_event(struct collect *c, const struct probe *p, const struct uprobe_event *ev, const struct held *h,
		       struct node *nd, struct spt_event *ee)
{
	struct spt_event e = *ee;
	spt_val *faulted[UPROBE_MAX_READS];
	size_t nf = 0;
	int r;

	if (nd->any && h->ktime < nd->last_ts)
		c->st.late++;
	else
		nd->last_ts = h->ktime;
	nd->any = true;
	e.node = nd->name;
	e.source = "bpf";
	e.seq = ++nd->seq;
	e.lamport = nd->lamport + 1;
	e.ts_ns = h->ktime;
	e.tid = ev->tid;
	if (e.msg && (r = pair_message(c, &c->msg, &e.lamport)))
		return r;
	nd->lamport = e.lamport;
	for (unsigned k = 0; k < p->nfields; k++) {
		if (p->f[k].place == COLLECT_SKIP || !(ev->err & (1u << k)))
			continue;
		c->st.faulted_reads++;
		if (!(faulted[nf++] = spt_cstr(&c->arena, p->f[k].name)))
			return collect_fail(c, -ENOMEM, "collector: out of memory");
	}
	if (nf) {
		spt_val *set = spt_set(&c->arena, faulted, nf);

		if (!set || !(e.meta = rec_with(&c->arena, e.meta, "faulted", set)))
			return collect_fail(c, -ENOMEM, "collector: out of memory");
	}
	r = spt_writer_append(c->w, &e);
	if (r)
		return collect_fail(c, r, "collector: appending a %s event of node %s: %s", p->kind, nd->name, strerror(-r));
	c->st.events++;
	return 0;
}

/* collect_finish's last call of the shaper per node (COLLECT_SHAPE_END): what it held back. */
static int shape_end(struct collect *c)
{
	static const struct probe end = { .id = COLLECT_SHAPE_END, .kind = "end", .node_read = -1 };

	for (size_t i = 0; c->shape_end && i < c->nnodes; i++) {
		struct node *nd = &c->nodes[i];
		struct held h;
		memset(&h, 0, sizeof(h));
		h.ktime = nd->last_ts;
		h.size = sizeof(h.u.ev);
		for (unsigned part = 0;; part++) {
			struct collect_shape sh = { .probe_id = COLLECT_SHAPE_END, .size = 0, .node = nd->name,
						    .arena = &c->arena, .part = part, .ktime = h.ktime };
			struct spt_event e;
			int r;

			if (!part)
				spt_arena_reset(&c->arena);
			r = c->shape_end(c->shape_ctx, &sh);
			if (r < 0)
				return collect_fail(c, r, "collector: %s", sh.err[0] ? sh.err : strerror(-r));
			if (r == 1)
				break;
			bool more = r == COLLECT_SHAPE_MORE;
			memset(&e, 0, sizeof(e));
			take_shaped(c, &sh, &e);
			if ((r = write_event(c, &end, &h.u.ev, &h, nd, &e)))
				return r;
			if (!more)
				break;
		}
	}
	return 0;
}

/* Releases held events: all, or those older than the window. */
static int release(struct collect *c, bool all)
{
	while (c->nheap) {
		struct held *h = c->heap[0];
		int r;

		if (!all && c->nheap <= c->max_pending && h->ktime + c->window_ns > c->max_ktime)
			break;
		h = heap_pop(c);
		r = emit(c, h);
		free(h);
		if (r)
			return r;
	}
	return 0;
}

int collect_record(void *ctx, const struct uprobe_event *ev, size_t size)
{
	struct collect *c = ctx;
	const struct probe *p;
	struct held *h;
	int r;

	if (c->finished)
		return collect_fail(c, -EINVAL, "collector: record after collect_finish");
	if (size < sizeof(*ev) || ev->size != size ||
	    (size != sizeof(struct uprobe_event) && size != sizeof(struct uprobe_event_full)) ||
	    ev->nreads > UPROBE_MAX_READS)
		return collect_fail(c, -EPROTO, "collector: malformed record (%zu bytes, size field %u, %u reads)", size,
			    (unsigned)(size >= sizeof(*ev) ? ev->size : 0), (unsigned)(size >= sizeof(*ev) ? ev->nreads : 0));
	c->st.records++;
	r = seq_seen(c, ev->cpu, ev->seq);
	if (r)
		return r;
	p = find_probe(c, ev->probe_id);
	if (!p) {
		c->st.unknown_probe++;
		return 0;
	}
	if (p->nfields > ev->nreads)
		return collect_fail(c, -EPROTO, "collector: probe %" PRIu32 " (%s): the table names %u reads, the record has %u",
			    p->id, p->kind, p->nfields, (unsigned)ev->nreads);
	for (unsigned k = 0; k < p->nfields; k++)
		if (p->f[k].place != COLLECT_SKIP && (p->f[k].type == COLLECT_CSTR || p->f[k].type == COLLECT_HEX) &&
		    size != sizeof(struct uprobe_event_full))
			return collect_fail(c, -EPROTO, "collector: probe %" PRIu32 " (%s) field %s wants a block but the record is compact",
				    p->id, p->kind, p->f[k].name);
	h = malloc(offsetof(struct held, u) + size);
	if (!h)
		return collect_fail(c, -ENOMEM, "collector: out of memory");
	h->ktime = ev->ktime_ns;
	h->seq = ev->seq;
	h->cpu = ev->cpu;
	h->order = c->arrivals++;
	h->size = size;
	memcpy(&h->u, ev, size);
	if (ev->ktime_ns > c->max_ktime)
		c->max_ktime = ev->ktime_ns;
	r = heap_push(c, h);
	if (r) {
		free(h);
		return r;
	}
	if (c->nheap > c->max_pending)
		return release(c, false);
	return 0;
}

int collect_tick(struct collect *c)
{
	int r, n;

	if (c->finished)
		return collect_fail(c, -EINVAL, "collector: tick after collect_finish");
	c->tick_no++;
	r = declare_gaps(c, false);
	if (r)
		return r;
	n = read_counters(c);
	if (n < 0)
		return n;
	for (int cpu = 0; cpu < n && (size_t)cpu < c->ncpus; cpu++)
		if (c->ctrs[cpu].lost < c->cpus[cpu].declared)
			c->st.counter_mismatch++;
	r = release(c, false);
	collect_publish_stats(c);
	return r;
}

int collect_drain_live(struct collect *c)
{
	int n, r;

	if (!c->l)
		return collect_fail(c, -EINVAL, "collector: collect_drain without a loader");
	unsigned fails = c->fails;
	n = uprobe_drain(c->l, collect_record, c);
	if (n < 0) {
		if (c->fails == fails)
			collect_fail(c, n, "collector: drain: %s", uprobe_loader_error(c->l));
		return n;
	}
	r = collect_tick(c);
	return r ? r : n;
}

int collect_finish(struct collect *c, uint64_t *lost)
{
	int r, n;

	if (c->finished)
		return collect_fail(c, -EINVAL, "collector: collect_finish called twice");
	if (c->shaper_running)
		return collect_fail(c, -EINVAL, "collector: collect_finish while the drain threads run (collect_bg_stop first)");
	if (c->spool) {
		pthread_mutex_lock(&c->spool_lock);
		r = spool_commit(c->spool);
		pthread_mutex_unlock(&c->spool_lock);
		if (r)
			return collect_fail(c, r, "collector: %s", spool_error(c->spool));
		r = collect_shape_spool(c, 0);
		if (r < 0)
			return r;
	}
	c->finished = true;
	r = release(c, true);
	if (!r)
		r = shape_end(c);
	if (r)
		goto cleanup;
	r = declare_gaps(c, true);
	if (r)
		goto cleanup;
	n = read_counters(c);
	if (n < 0) {
		r = n;
		goto cleanup;
	}
	for (int cpu = 0; cpu < n; cpu++) {
		struct cpu *cp;
		uint64_t extra, tail;

		if (c->ctrs[cpu].lost == 0 && c->ctrs[cpu].seq == 0)
			continue;
		cp = cpu_get(c, (uint32_t)cpu);
		if (!cp) {
			r = collect_fail(c, -ENOMEM, "collector: out of memory");
			goto cleanup;
		}
		if (c->ctrs[cpu].lost <= cp->declared) {
			if (c->ctrs[cpu].lost < cp->declared)
				c->st.counter_mismatch++;
			continue;
		}
		extra = c->ctrs[cpu].lost - cp->declared;
		tail = c->ctrs[cpu].seq > cp->hi ? c->ctrs[cpu].seq - cp->hi : 0;
		if (tail && extra >= tail) {
			r = write_loss(c, (uint32_t)cpu, tail, cp->hi, cp->hi + tail - 1);
			if (r)
				goto cleanup;
			cp->hi += tail;
			extra -= tail;
		}
		if (extra) {
			r = write_loss(c, (uint32_t)cpu, extra, 0, 0);
			if (r)
				goto cleanup;
		}
	}
	r = spt_writer_flush(c->w);
	if (r)
		r = collect_fail(c, r, "collector: flushing the trace: %s", strerror(-r));
cleanup:
	c->st.unpaired_sends = spt_msgpair_unpaired_sends(c->pairs);
	c->st.spooled = atomic_load(&c->spooled);
	collect_publish_stats(c);
	if (lost)
		*lost = c->st.lost;
	return r;
}

