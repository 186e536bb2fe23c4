/*
 * From a trace's events to windows, as a mapping module says (docs/mapping.md).
 *
 * Memory stays flat over a trace of any length: what outlives an event (each node's state, the
 * messages in flight, the open windows, the mapping's own history) lives in one arena that is
 * compacted (its live values copied into a fresh one) whenever it has doubled; everything else
 * an event or a window builds is given back when the event is done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"

#define LIVE_MIN ((size_t)16 << 20) /* compaction only past this */
enum { TAG_LIVE_A = 211, TAG_LIVE_B = 212 };

struct inflight {
	uint64_t id;
	spt_val *msg; /* [id, from, to, type, fields] */
};

/* The messages in flight, in send order. */
struct net {
	struct inflight *m;
	size_t n, cap;
};

struct open_window {
	bool open;
	spt_val *key;   /* WindowActor(ev) of the events it takes in; NULL: the node's */
	const char *action;
	spt_val *pre, *params, *input;
	uint64_t first;
	spt_val **st;   /* every node's state as the window saw it (this node's moves on) */
	struct net net; /* the network as the window saw it */
	spt_val *hist;  /* the mapping's history as the window saw it */
};

struct node {
	char *name;
	spt_val *name_val;
	spt_val *state; /* latest; NULL before its first state */
	/* Its windows: one, or one per WindowActor key (a thread of the node, say). */
	struct open_window *ws;
	size_t n_ws;
};

struct mapping {
	struct checker *ck;
	struct interp *in;
	struct opdef *map_vars, *start, *end, *drop, *params, *input, *branch, *branches, *map_init, *map_next, *actor;
	uint64_t dropped;        /* windows WindowDrop closed unchecked */
	bool vars_hist;          /* MapVars(st, net, hist) */
	bool uses_net;           /* MapVars (or MapNext) reads the network */
	map_branch_fn on_branch; /* coverage: Branch(ev) of every event, when both are defined */
	void *branch_arg;
	struct spt_arena live[2]; /* what outlives an event; live[cur] is in use */
	uint8_t cur;
	size_t live_after;       /* bytes of the live arena after the last compaction */
	struct spt_arena scratch;
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	struct net net;
	spt_val *hist;           /* MapNext's value after every event so far */
	uint64_t next_id;
	uint64_t compactions;
	void (*on_compact)(void *arg);
	void *on_compact_arg;
};

void mapping_live_tags(const struct mapping *m, unsigned char tags[2])
{
	tags[0] = m->live[0].tag;
	tags[1] = m->live[1].tag;
}

void mapping_on_compact(struct mapping *m, void (*fn)(void *arg), void *arg)
{
	m->on_compact = fn;
	m->on_compact_arg = arg;
}

static struct spt_arena *LIVE(struct mapping *m) { return &m->live[m->cur]; }

/* A definition of the mapping module (its own, or one it inherits): name with arity (or
 * alt_arity, when >= 0). */
static struct opdef *op(struct mapping *m, const char *name, uint32_t arity, int alt_arity, bool required,
			struct check_error *err)
{
	struct spec *s = checker_spec(m->ck);
	struct module *root = spec_root(s);
	struct symbol *sym = module_lookup(root, spec_intern(s, name, strlen(name)));
	if (!sym || sym->kind != SYM_DEF) {
		if (required)
			snprintf(err->msg, sizeof(err->msg), "%s: the mapping defines no %s (see docs/mapping.md)", root->path, name);
		return NULL;
	}
	if (sym->def->n_params != arity && (alt_arity < 0 || sym->def->n_params != (uint32_t)alt_arity)) {
		char also[32] = "";
		if (alt_arity >= 0)
			snprintf(also, sizeof(also), " or %d", alt_arity);
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s takes %u%s argument%s in a mapping", sym->def->pos.file,
			 sym->def->pos.line, sym->def->pos.col, name, arity, also, arity == 1 && !also[0] ? "" : "s");
		return NULL;
	}
	return sym->def;
}

/* Whether the body of d names its i-th parameter (directly or in a nested definition). */
static bool names_param(const struct ast *e, uint32_t slot, uint16_t up)
{
	if (!e)
		return false;
	if (e->kind == A_NAME && e->ref == REF_LOCAL && e->slot == slot && e->up == up)
		return true;
	if (e->kind == A_LET)
		for (uint32_t i = 0; i < e->n_defs; i++)
			if (names_param(e->defs[i]->body, slot, (uint16_t)(up + 1)))
				return true;
	if (e->kind == A_LAMBDA && names_param(e->lambda->body, slot, (uint16_t)(up + 1)))
		return true;
	for (uint32_t i = 0; i < e->n_bounds; i++)
		if (names_param(e->bounds[i].set, slot, up))
			return true;
	for (uint32_t i = 0; i < e->n_excepts; i++) {
		for (uint32_t j = 0; j < e->excepts[i].n_steps; j++)
			for (uint32_t k = 0; k < e->excepts[i].steps[j].n_args; k++)
				if (names_param(e->excepts[i].steps[j].args[k], slot, up))
					return true;
		if (names_param(e->excepts[i].value, slot, up))
			return true;
	}
	for (uint32_t i = 0; i < e->n; i++)
		if (names_param(e->a[i], slot, up))
			return true;
	return false;
}

int mapping_new(const char *map_path, const char *spec_path, const char *cfg_path, struct mapping **out,
		struct check_error *err)
{
	struct mapping *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	spt_arena_init(&m->live[0]);
	spt_arena_init(&m->live[1]);
	m->live[0].tag = TAG_LIVE_A;
	m->live[1].tag = TAG_LIVE_B;
	spt_arena_init(&m->scratch);
	int rc = checker_new_mapped(map_path, spec_path, cfg_path, &m->ck, err);
	if (rc) {
		free(m);
		return rc;
	}
	m->in = checker_interp(m->ck);
	err->msg[0] = '\0';
	m->map_vars = op(m, "MapVars", 2, 3, true, err);
	m->start = op(m, "WindowStart", 1, -1, true, err);
	m->end = op(m, "WindowEnd", 2, -1, false, err);
	m->drop = op(m, "WindowDrop", 2, -1, false, err);
	m->params = op(m, "Params", 2, -1, false, err);
	m->input = op(m, "Input", 2, -1, false, err);
	m->branch = op(m, "Branch", 1, -1, false, err);
	m->branches = op(m, "Branches", 0, -1, false, err);
	m->map_init = op(m, "MapInit", 0, -1, false, err);
	m->map_next = op(m, "MapNext", 3, -1, false, err);
	m->actor = op(m, "WindowActor", 1, -1, false, err);
	if (!err->msg[0] && (!m->map_init) != (!m->map_next))
		snprintf(err->msg, sizeof(err->msg), "%s: a mapping's history needs both MapInit and MapNext(ev, st, hist)",
			 map_path);
	if (!m->map_vars || !m->start || err->msg[0]) {
		mapping_free(m);
		return -EINVAL;
	}
	m->vars_hist = m->map_vars->n_params == 3;
	if (m->vars_hist && !m->map_init) {
		snprintf(err->msg, sizeof(err->msg), "%s: MapVars(st, net, hist) needs MapInit and MapNext(ev, st, hist)", map_path);
		mapping_free(m);
		return -EINVAL;
	}
	m->uses_net = names_param(m->map_vars->body, 1, 0);
	/* Values the mapping keeps are not copied into the cache; it forgets them when the
	 * live arena is compacted. */
	memo_set_stable(&m->in->memo, TAG_LIVE_A, TAG_LIVE_B);
	if (m->map_init) {
		spt_val *h;
		m->in->ev.arena = LIVE(m);
		ev_clear_error(&m->in->ev);
		if (eval_call(m->in, m->map_init, NULL, 0, &h)) {
			const struct eval_error *e = &m->in->ev.err;
			snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: in the mapping's MapInit: %s", e->pos.file ? e->pos.file : "?",
				 e->pos.line, e->pos.col, e->msg);
			mapping_free(m);
			return -EINVAL;
		}
		if (!(m->hist = spt_value_move(LIVE(m), h))) {
			mapping_free(m);
			return -ENOMEM;
		}
	}
	*out = m;
	return 0;
}

void mapping_free(struct mapping *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_nodes; i++) {
		free(m->nodes[i].name);
		for (size_t j = 0; j < m->nodes[i].n_ws; j++) {
			free(m->nodes[i].ws[j].st);
			free(m->nodes[i].ws[j].net.m);
		}
		free(m->nodes[i].ws);
	}
	free(m->nodes);
	free(m->net.m);
	checker_free(m->ck);
	spt_arena_fini(&m->live[0]);
	spt_arena_fini(&m->live[1]);
	spt_arena_fini(&m->scratch);
	free(m);
}

struct checker *mapping_checker(struct mapping *m) { return m->ck; }

/* ---- the actions WindowStart can name ---- */

struct name_walk {
	struct checker *ck;
	const struct opdef **seen; /* definitions walked into */
	uint32_t n_seen, cap_seen;
	const char **names;
	uint32_t n, cap;
	int rc;
};

static void walk_keep(struct name_walk *w, const char *text)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (!strcmp(w->names[i], text))
			return;
	uint32_t params;
	struct check_error ignore;
	if (checker_action(w->ck, text, &params, &ignore))
		return; /* a string that is not an action of the spec (an event kind, a field) */
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? w->cap * 2 : 8;
		const char **n = realloc(w->names, cap * sizeof(*n));
		if (!n) {
			w->rc = -ENOMEM;
			return;
		}
		w->names = n;
		w->cap = cap;
	}
	w->names[w->n++] = text;
}

static void walk_def(struct name_walk *w, const struct opdef *d, int depth);

/* The strings e can give as its value: through IF and CASE branches, LET bodies, the bodies of
 * the definitions it calls and the values of tables it applies, not through the conditions
 * (ev.kind = "BecomeCandidate" compares an event's kind, it names no action). */
static void walk_ast(struct name_walk *w, const struct ast *e, int depth)
{
	if (!e || w->rc || depth > 200)
		return;
	switch (e->kind) {
	case A_STR:
		if (e->str && e->str->kind == SPT_STR)
			walk_keep(w, e->str->u.s);
		break;
	case A_IF:
		walk_ast(w, e->a[1], depth + 1);
		walk_ast(w, e->a[2], depth + 1);
		break;
	case A_CASE:
		for (uint32_t i = 1; i < e->n; i += 2)
			walk_ast(w, e->a[i], depth + 1);
		if (e->has_other && e->n % 2)
			walk_ast(w, e->a[e->n - 1], depth + 1);
		break;
	case A_LET:
		walk_ast(w, e->a[0], depth + 1);
		break;
	case A_APPLY: /* Table[ev.kind]: what the table holds */
		walk_ast(w, e->a[0], depth + 1);
		break;
	case A_FUNC:
		walk_ast(w, e->a[0], depth + 1);
		break;
	case A_RECORD:
		for (uint32_t i = 0; i < e->n; i++)
			walk_ast(w, e->a[i], depth + 1);
		break;
	case A_NAME:
		if (e->ref == REF_DEF)
			walk_def(w, e->r.def, depth + 1);
		break;
	default:
		break;
	}
}

static void walk_def(struct name_walk *w, const struct opdef *d, int depth)
{
	for (uint32_t i = 0; i < w->n_seen; i++)
		if (w->seen[i] == d)
			return;
	if (w->n_seen == w->cap_seen) {
		uint32_t cap = w->cap_seen ? w->cap_seen * 2 : 16;
		const struct opdef **n = realloc(w->seen, cap * sizeof(*n));
		if (!n) {
			w->rc = -ENOMEM;
			return;
		}
		w->seen = n;
		w->cap_seen = cap;
	}
	w->seen[w->n_seen++] = d;
	walk_ast(w, d->body, depth);
}

int mapping_actions(struct mapping *m, const char ***names, uint32_t *n)
{
	struct name_walk w = { .ck = m->ck };
	walk_def(&w, m->start, 0);
	free(w.seen);
	if (w.rc) {
		free(w.names);
		return w.rc;
	}
	*names = w.names;
	*n = w.n;
	return 0;
}

static int call(struct mapping *m, struct opdef *d, spt_val *const *args, spt_val **out, struct check_error *err);

void mapping_on_branch(struct mapping *m, map_branch_fn fn, void *arg)
{
	m->on_branch = fn;
	m->branch_arg = arg;
}

int mapping_branches(struct mapping *m, map_branch_fn fn, void *arg, struct check_error *err)
{
	if (!m->branches)
		return 0;
	spt_val *set;
	int rc = call(m, m->branches, NULL, &set, err);
	if (rc)
		return rc;
	if (set->kind != SPT_SET) {
		snprintf(err->msg, sizeof(err->msg), "Branches must be a set of strings, not %s", ev_show(&m->in->ev, set));
		return -EINVAL;
	}
	for (uint32_t i = 0; i < set->n; i++) {
		spt_val *b = set->u.elems[i];
		if (b->kind != SPT_STR) {
			snprintf(err->msg, sizeof(err->msg), "Branches must be a set of strings; it holds %s",
				 ev_show(&m->in->ev, b));
			return -EINVAL;
		}
		if ((rc = fn(arg, b->u.s)))
			return rc;
	}
	return (int)set->n;
}

/* Coverage: the code branch event ev shows, if the mapping names one. */
static int report_branch(struct mapping *m, spt_val *evv, struct check_error *err)
{
	spt_val *b;
	int rc = call(m, m->branch, &evv, &b, err);
	if (rc)
		return rc;
	if (b->kind == SPT_SET) { /* an event that shows several branches */
		for (uint32_t i = 0; i < b->n; i++) {
			spt_val *e = b->u.elems[i];
			if (e->kind != SPT_STR) {
				snprintf(err->msg, sizeof(err->msg), "Branch must give branch names; its set holds %s",
					 ev_show(&m->in->ev, e));
				return -EINVAL;
			}
			if (e->n && (rc = m->on_branch(m->branch_arg, e->u.s)))
				return rc;
		}
		return 0;
	}
	if (b->kind != SPT_STR) {
		snprintf(err->msg, sizeof(err->msg), "Branch must give a branch name, a set of them or \"\", not %s",
			 ev_show(&m->in->ev, b));
		return -EINVAL;
	}
	return b->n ? m->on_branch(m->branch_arg, b->u.s) : 0;
}

/* ---- calling the mapping's operators ---- */

static int call(struct mapping *m, struct opdef *d, spt_val *const *args, spt_val **out, struct check_error *err)
{
	struct interp *in = m->in;
	in->ev.arena = &m->scratch; /* a window check in between may have pointed it elsewhere */
	ev_clear_error(&in->ev);
	/* The step limit is per call, as it is per window: counted on from the calls before, a long
	 * trace would reach it whatever each event costs (with --jobs or without a check at all,
	 * no window check resets the count on this interpreter). */
	in->steps = 0;
	if (eval_call(in, d, args, d->n_params, out)) {
		const struct eval_error *e = &in->ev.err;
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: in the mapping's %s: %s", e->pos.file ? e->pos.file : "?",
			 e->pos.line, e->pos.col, d->name, e->msg);
		return -EINVAL;
	}
	return 0;
}

/* ---- the cluster ---- */

static struct node *node_of(struct mapping *m, const char *name)
{
	for (size_t i = 0; i < m->n_nodes; i++)
		if (!strcmp(m->nodes[i].name, name))
			return &m->nodes[i];
	if (m->n_nodes == m->cap_nodes) {
		size_t cap = m->cap_nodes ? m->cap_nodes * 2 : 8;
		struct node *n = realloc(m->nodes, cap * sizeof(*n));
		if (!n)
			return NULL;
		m->nodes = n;
		m->cap_nodes = cap;
		/* Open windows index nodes by position: grow their snapshots too. */
		for (size_t i = 0; i < m->n_nodes; i++) {
			for (size_t j = 0; j < m->nodes[i].n_ws; j++) {
				struct open_window *w = &m->nodes[i].ws[j];
				if (!w->open)
					continue;
				spt_val **st = realloc(w->st, cap * sizeof(*st));
				if (!st)
					return NULL;
				w->st = st;
			}
		}
	}
	struct node *n = &m->nodes[m->n_nodes];
	memset(n, 0, sizeof(*n));
	if (!(n->name = strdup(name)) || !(n->name_val = spt_cstr(LIVE(m), name)))
		return NULL;
	for (size_t i = 0; i < m->n_nodes; i++)
		for (size_t j = 0; j < m->nodes[i].n_ws; j++)
			if (m->nodes[i].ws[j].open)
				m->nodes[i].ws[j].st[m->n_nodes] = NULL; /* a node new to the window: no state yet */
	m->n_nodes++;
	return n;
}

/* The window of node n that takes in events of actor key (NULL: the node's one window), made
 * (closed) when n has none yet. */
static struct open_window *window_of(struct mapping *m, struct node *n, spt_val *key)
{
	for (size_t j = 0; j < n->n_ws; j++)
		if (n->ws[j].key == key || (key && n->ws[j].key && spt_value_eq(n->ws[j].key, key)))
			return &n->ws[j];
	struct open_window *g = realloc(n->ws, (n->n_ws + 1) * sizeof(*g));
	if (!g)
		return NULL;
	n->ws = g;
	struct open_window *w = &n->ws[n->n_ws++];
	memset(w, 0, sizeof(*w));
	if (key && !(w->key = spt_value_move(LIVE(m), key)))
		return NULL;
	return w;
}

static spt_val *st_value(struct mapping *m, spt_val *const *states)
{
	spt_val **k = spt_arena_alloc(&m->scratch, (m->n_nodes + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(&m->scratch, (m->n_nodes + 1) * sizeof(*v));
	if (!k || !v)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->n_nodes; i++) {
		if (!states[i])
			continue;
		k[n] = m->nodes[i].name_val;
		v[n++] = states[i];
	}
	return n ? spt_fun(&m->scratch, k, v, n, NULL) : spt_empty_fun(&m->scratch, SPT_FUN);
}

/* The network as a set, when the mapping reads it. */
static spt_val *net_value(struct mapping *m, const struct net *net)
{
	if (!m->uses_net)
		return spt_set(&m->scratch, NULL, 0);
	spt_val **e = spt_arena_alloc(&m->scratch, (net->n + 1) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < net->n; i++)
		e[i] = net->m[i].msg;
	return spt_set(&m->scratch, e, net->n);
}

static int net_apply(struct net *net, const struct spt_event *ev, spt_val *msg)
{
	if (!ev->msg)
		return 0;
	if (ev->msg->dir == SPT_MSG_RECV) {
		for (size_t i = 0; i < net->n; i++) {
			if (net->m[i].id == ev->msg->id) {
				memmove(&net->m[i], &net->m[i + 1], (net->n - i - 1) * sizeof(net->m[0]));
				net->n--;
				break;
			}
		}
		return 0;
	}
	if (net->n == net->cap) {
		size_t cap = net->cap ? net->cap * 2 : 64;
		struct inflight *n = realloc(net->m, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		net->m = n;
		net->cap = cap;
	}
	net->m[net->n++] = (struct inflight){ ev->msg->id, msg };
	return 0;
}

static int net_copy(struct net *dst, const struct net *src)
{
	if (dst->cap < src->n + 1) {
		struct inflight *n = realloc(dst->m, (src->n + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		dst->m = n;
		dst->cap = src->n + 1;
	}
	if (src->n)
		memcpy(dst->m, src->m, src->n * sizeof(*dst->m));
	dst->n = src->n;
	return 0;
}

/* ---- events as TLA+ values ---- */

/* ---- compaction of the live arena ---- */

/* Moves v into the fresh live arena; a value kept in several places (a node's state in the
 * windows' snapshots, a message in several networks) is moved once. */
struct fwd {
	spt_val **from, **to;
	size_t n, cap;
};

static spt_val *fwd_move(struct fwd *f, struct spt_arena *a, spt_val *v, bool *oom)
{
	if (!v)
		return NULL;
	size_t mask = f->cap - 1;
	for (size_t j = ((uintptr_t)v >> 4) & mask;; j = (j + 1) & mask) {
		if (f->from[j] == v)
			return f->to[j];
		if (!f->from[j]) {
			spt_val *c = spt_value_move(a, v);
			if (!c) {
				*oom = true;
				return v;
			}
			f->from[j] = v;
			f->to[j] = c;
			f->n++;
			return c;
		}
	}
}

static void move_net(struct fwd *f, struct spt_arena *a, struct net *net, bool *oom)
{
	for (size_t i = 0; i < net->n; i++)
		net->m[i].msg = fwd_move(f, a, net->m[i].msg, oom);
}

static int compact(struct mapping *m)
{
	if (m->on_compact)
		m->on_compact(m->on_compact_arg);
	size_t roots = m->net.n + 2 * m->n_nodes + 8;
	for (size_t i = 0; i < m->n_nodes; i++)
		for (size_t j = 0; j < m->nodes[i].n_ws; j++)
			roots += 1 + (m->nodes[i].ws[j].open ? m->nodes[i].ws[j].net.n + m->n_nodes + 4 : 0);
	size_t cap = 64;
	while (cap < 2 * roots)
		cap *= 2;
	struct fwd f = { calloc(cap, sizeof(spt_val *)), calloc(cap, sizeof(spt_val *)), 0, cap };
	if (!f.from || !f.to) {
		free(f.from);
		free(f.to);
		return -ENOMEM;
	}
	uint8_t next = (uint8_t)(1 - m->cur);
	struct spt_arena *a = &m->live[next];
	spt_arena_reset(a);
	bool oom = false;
	for (size_t i = 0; i < m->n_nodes; i++) {
		struct node *n = &m->nodes[i];
		n->name_val = fwd_move(&f, a, n->name_val, &oom);
		n->state = fwd_move(&f, a, n->state, &oom);
	}
	move_net(&f, a, &m->net, &oom);
	m->hist = fwd_move(&f, a, m->hist, &oom);
	for (size_t i = 0; i < m->n_nodes; i++) {
		for (size_t j = 0; j < m->nodes[i].n_ws; j++) {
			struct open_window *w = &m->nodes[i].ws[j];
			w->key = fwd_move(&f, a, w->key, &oom); /* closed windows keep their actor's key */
			if (!w->open)
				continue;
			w->pre = fwd_move(&f, a, w->pre, &oom);
			w->params = fwd_move(&f, a, w->params, &oom);
			w->input = fwd_move(&f, a, w->input, &oom);
			w->hist = fwd_move(&f, a, w->hist, &oom);
			for (size_t k = 0; k < m->n_nodes; k++)
				w->st[k] = fwd_move(&f, a, w->st[k], &oom);
			move_net(&f, a, &w->net, &oom);
			const char *act = spt_arena_strndup(a, w->action, strlen(w->action));
			if (!act)
				oom = true;
			else
				w->action = act;
		}
	}
	free(f.from);
	free(f.to);
	if (oom)
		return -ENOMEM;
	/* The old arena goes: so do the cache's entries that point into it. */
	memo_forget_stable(&m->in->memo);
	spt_arena_reset(&m->live[m->cur]);
	spt_arena_trim(&m->live[m->cur], a->bytes);
	m->cur = next;
	m->live_after = a->bytes;
	m->compactions++;
	return 0;
}

static int maybe_compact(struct mapping *m)
{
	size_t used = LIVE(m)->bytes;
	if (used < LIVE_MIN || used < 2 * m->live_after)
		return 0;
	return compact(m);
}

/* ---- windows ---- */

static int vars_of(struct mapping *m, spt_val *const *st, const struct net *net, spt_val *hist, spt_val **out,
		   struct check_error *err)
{
	spt_val *args[3] = { st_value(m, st), net_value(m, net), hist };
	if (!args[0] || !args[1])
		return -ENOMEM;
	int rc = call(m, m->map_vars, args, out, err);
	if (rc)
		return rc;
	if (!spt_is_fun(*out) || ((*out)->n && (*out)->kind != SPT_REC)) {
		snprintf(err->msg, sizeof(err->msg), "MapVars must give a record of variables, not %s", ev_show(&m->in->ev, *out));
		return -EINVAL;
	}
	return 0;
}

static int close_window(struct mapping *m, struct node *n, struct open_window *w, uint64_t last, uint64_t at,
			bool by_end, map_window_fn fn, void *arg, struct check_error *err)
{
	w->open = false;
	spt_val *post;
	int rc = vars_of(m, w->st, &w->net, w->hist, &post, err);
	if (rc)
		return rc;
	struct map_window mw = { ++m->next_id, at, by_end, w->action, n->name, w->pre, post, w->params, w->input, w->first, last };
	return fn(arg, &mw);
}

static int open_window(struct mapping *m, struct open_window *w, const char *action, spt_val *evv, uint64_t ord,
		       struct check_error *err)
{
	spt_val **st = realloc(w->st, (m->cap_nodes + 1) * sizeof(*st));
	if (!st)
		return -ENOMEM;
	w->st = st;
	for (size_t i = 0; i < m->n_nodes; i++)
		w->st[i] = m->nodes[i].state;
	if (net_copy(&w->net, &m->net))
		return -ENOMEM;
	w->hist = m->hist;
	spt_val *pre;
	int rc = vars_of(m, w->st, &w->net, w->hist, &pre, err);
	if (rc)
		return rc;
	spt_val *act = spt_cstr(&m->scratch, action), *pa[2] = { evv, act }, *params = NULL, *input = NULL;
	if (m->params && (rc = call(m, m->params, pa, &params, err)))
		return rc;
	if (m->input && (rc = call(m, m->input, pa, &input, err)))
		return rc;
	struct spt_arena *a = LIVE(m);
	w->open = true;
	w->action = spt_arena_strndup(a, action, strlen(action));
	w->pre = spt_value_move(a, pre);
	w->params = params ? spt_value_move(a, params) : NULL;
	w->input = input ? spt_value_move(a, input) : NULL;
	w->first = ord;
	return w->action && w->pre && (!params || w->params) && (!input || w->input) ? 0 : -ENOMEM;
}

/* The mapping's history after ev, from hist, with the cluster st the event leaves. */
static int history_step(struct mapping *m, spt_val *evv, spt_val *const *st, spt_val **hist, struct check_error *err)
{
	spt_val *args[3] = { evv, st_value(m, st), *hist }, *h;
	if (!args[1])
		return -ENOMEM;
	int rc = call(m, m->map_next, args, &h, err);
	if (rc)
		return rc;
	if (!(*hist = spt_value_move(LIVE(m), h)))
		return -ENOMEM;
	return 0;
}

/* The event's effects: on the cluster, and on w, the window of its node (and actor). */
static int apply(struct mapping *m, struct node *n, struct open_window *w, const struct spt_event *ev, spt_val *evv,
		 struct check_error *err)
{
	struct spt_arena *a = LIVE(m);
	spt_val *msg = NULL;
	if (ev->msg && ev->msg->dir == SPT_MSG_SEND && !(msg = spt_value_move(a, spt_msg_value(&m->scratch, ev->msg, false))))
		return -ENOMEM;
	if (ev->state && (!n->state || !spt_value_eq(n->state, ev->state)) && !(n->state = spt_value_move(a, ev->state)))
		return -ENOMEM;
	if (w->open) {
		w->st[n - m->nodes] = n->state;
		if (net_apply(&w->net, ev, msg))
			return -ENOMEM;
	}
	if (net_apply(&m->net, ev, msg))
		return -ENOMEM;
	if (!m->map_next)
		return 0;
	int rc;
	if (w->open && (rc = history_step(m, evv, w->st, &w->hist, err)))
		return rc;
	spt_val **all = spt_arena_alloc(&m->scratch, (m->n_nodes + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_nodes; i++)
		all[i] = m->nodes[i].state;
	return history_step(m, evv, all, &m->hist, err);
}

uint64_t mapping_dropped(const struct mapping *m) { return m->dropped; }

/* WindowEnd or WindowDrop (name: op) of event evv for the open window w: TRUE or FALSE in *out. */
static int window_test(struct mapping *m, struct opdef *op, const char *name, spt_val *evv, const struct open_window *w,
		       bool *out, struct check_error *err)
{
	spt_val *act = spt_cstr(&m->scratch, w->action), *args[2] = { evv, act }, *b;
	int rc = call(m, op, args, &b, err);
	if (rc)
		return rc;
	if (b->kind != SPT_BOOL) {
		snprintf(err->msg, sizeof(err->msg), "%s must give TRUE or FALSE, not %s", name, ev_show(&m->in->ev, b));
		return -EINVAL;
	}
	*out = b->u.b;
	return 0;
}

static size_t open_windows(const struct mapping *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_nodes; i++)
		for (size_t j = 0; j < m->nodes[i].n_ws; j++)
			n += m->nodes[i].ws[j].open;
	return n;
}

int mapping_run(struct mapping *m, struct spt_reader *r, map_window_fn fn, void *arg, struct check_error *err)
{
	return mapping_run_range(m, r, 0, UINT64_MAX, fn, arg, err);
}

int mapping_run_range(struct mapping *m, struct spt_reader *r, uint64_t from, uint64_t to, map_window_fn fn,
		      void *arg, struct check_error *err)
{
	struct interp *in = m->in;
	struct spt_arena *saved = in->ev.arena;
	in->ev.arena = &m->scratch;
	err->msg[0] = '\0';
	const struct spt_event *ev;
	int rc, k;
	uint64_t ord = 0;
	while ((k = spt_reader_next(r, &ev)) == 1) {
		if (ord >= to && !open_windows(m))
			break;
		/* Nothing outside the live arena holds a value of the last event any more. */
		spt_arena_reset(&m->scratch);
		memo_collect(&in->memo);
		if ((rc = maybe_compact(m)))
			goto out;
		struct node *n = node_of(m, ev->node);
		spt_val *evv = n ? spt_event_value(&m->scratch, ev) : NULL, *a, *key = NULL;
		if (!evv) {
			rc = -ENOMEM;
			goto out;
		}
		if (m->actor && (rc = call(m, m->actor, &evv, &key, err)))
			goto out;
		struct open_window *w = window_of(m, n, key);
		if (!w) {
			rc = -ENOMEM;
			goto out;
		}
		/* Before `from` the cluster only moves on; after `to` no window opens. */
		bool starts = ord >= from && (ord < to || w->open);
		if (starts && (rc = call(m, m->start, &evv, &a, err)))
			goto out;
		if (starts && a->kind != SPT_STR) {
			snprintf(err->msg, sizeof(err->msg), "WindowStart must give an action name or \"\", not %s (event %llu)",
				 ev_show(&in->ev, a), (unsigned long long)ord);
			rc = -EINVAL;
			goto out;
		}
		if (starts && a->n) {
			/* A new step of this node (or actor) ends the one still open. */
			if (w->open && (rc = close_window(m, n, w, ord ? ord - 1 : 0, ord, false, fn, arg, err)))
				goto out;
			if (ord < to && (rc = open_window(m, w, a->u.s, evv, ord, err)))
				goto out;
		}
		if (m->on_branch && m->branch && ord >= from && ord < to && (rc = report_branch(m, evv, err)))
			goto out;
		if ((rc = apply(m, n, w, ev, evv, err)))
			goto out;
		bool drop = false;
		if (w->open && m->drop && (rc = window_test(m, m->drop, "WindowDrop", evv, w, &drop, err)))
			goto out;
		if (drop) { /* the step was not seen whole: its window is not checked */
			w->open = false;
			m->dropped++;
		}
		if (w->open) {
			bool end = true;
			if (m->end && (rc = window_test(m, m->end, "WindowEnd", evv, w, &end, err)))
				goto out;
			if (end && (rc = close_window(m, n, w, ord, ord, true, fn, arg, err)))
				goto out;
		}
		ord++;
	}
	if (k < 0) {
		snprintf(err->msg, sizeof(err->msg), "reading the trace: %s", strerror(-k));
		rc = -EIO;
		goto out;
	}
	/* Windows still open at the end of the trace never ended: they are not steps we saw whole. */
	rc = 0;
out:
	if (rc == -ENOMEM && !err->msg[0])
		snprintf(err->msg, sizeof(err->msg), "out of memory reading event %llu of the trace (the mapping keeps %zu MB); "
			 "a smaller trace or a machine with more memory may do", (unsigned long long)ord,
			 (LIVE(m)->bytes + m->scratch.bytes) >> 20);
	in->ev.arena = saved;
	return rc;
}
