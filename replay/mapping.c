/* From a trace's events to windows, as a mapping module says (docs/mapping.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"

struct inflight {
	uint64_t id;
	spt_val *msg; /* [id, from, to, type, fields] */
};

struct net {
	struct inflight *m;
	size_t n, cap;
};

struct open_window {
	bool open;
	const char *action;
	spt_val *pre, *params, *input;
	uint64_t first;
	spt_val **st;   /* every node's state as the window saw it (this node's moves on) */
	struct net net; /* the network as the window saw it */
};

struct node {
	char *name;
	spt_val *name_val;
	spt_val *state; /* latest; NULL before its first state */
	struct open_window w;
};

struct mapping {
	struct checker *ck;
	struct interp *in;
	struct opdef *map_vars, *start, *end, *params, *input, *branch, *branches;
	map_branch_fn on_branch; /* coverage: Branch(ev) of every event, when both are defined */
	void *branch_arg;
	struct spt_arena trace; /* values that outlive an event: states, messages, open windows */
	struct spt_arena scratch;
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	struct net net;
	uint64_t next_id;
};

static struct opdef *op(struct mapping *m, const char *name, uint32_t arity, bool required, struct check_error *err)
{
	struct spec *s = checker_spec(m->ck);
	struct module *root = spec_root(s);
	struct symbol *sym = module_lookup(root, spec_intern(s, name, strlen(name)));
	if (!sym || sym->kind != SYM_DEF || sym->module != root) {
		if (required)
			snprintf(err->msg, sizeof(err->msg), "%s: the mapping defines no %s (see docs/mapping.md)", root->path, name);
		return NULL;
	}
	if (sym->def->n_params != arity) {
		snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: %s takes %u argument%s in a mapping", sym->def->pos.file,
			 sym->def->pos.line, sym->def->pos.col, name, arity, arity == 1 ? "" : "s");
		return NULL;
	}
	return sym->def;
}

int mapping_new(const char *map_path, const char *spec_path, const char *cfg_path, struct mapping **out,
		struct check_error *err)
{
	struct mapping *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	spt_arena_init(&m->trace);
	spt_arena_init(&m->scratch);
	int rc = checker_new_mapped(map_path, spec_path, cfg_path, &m->ck, err);
	if (rc) {
		free(m);
		return rc;
	}
	m->in = checker_interp(m->ck);
	err->msg[0] = '\0';
	m->map_vars = op(m, "MapVars", 2, true, err);
	m->start = op(m, "WindowStart", 1, true, err);
	m->end = op(m, "WindowEnd", 2, false, err);
	m->params = op(m, "Params", 2, false, err);
	m->input = op(m, "Input", 2, false, err);
	m->branch = op(m, "Branch", 1, false, err);
	m->branches = op(m, "Branches", 0, false, err);
	if (!m->map_vars || !m->start || err->msg[0]) {
		mapping_free(m);
		return -EINVAL;
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
		free(m->nodes[i].w.st);
		free(m->nodes[i].w.net.m);
	}
	free(m->nodes);
	free(m->net.m);
	checker_free(m->ck);
	spt_arena_fini(&m->trace);
	spt_arena_fini(&m->scratch);
	free(m);
}

struct checker *mapping_checker(struct mapping *m) { return m->ck; }

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
	if (b->kind != SPT_STR) {
		snprintf(err->msg, sizeof(err->msg), "Branch must give a branch name or \"\", not %s", ev_show(&m->in->ev, b));
		return -EINVAL;
	}
	return b->n ? m->on_branch(m->branch_arg, b->u.s) : 0;
}

/* ---- calling the mapping's operators ---- */

static int call(struct mapping *m, struct opdef *d, spt_val *const *args, spt_val **out, struct check_error *err)
{
	struct interp *in = m->in;
	in->ev.arena = &m->scratch; /* a window check in between may have pointed it elsewhere */
	struct ctx c = { NULL, d->module, NULL, false };
	for (uint32_t i = 0; i < d->n_params; i++)
		if (!(c.env = bind_value(in, c.env, d->params[i], args[i])))
			return -ENOMEM;
	ev_clear_error(&in->ev);
	if (eval(in, c, d->body, out)) {
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
			if (!m->nodes[i].w.open)
				continue;
			spt_val **st = realloc(m->nodes[i].w.st, cap * sizeof(*st));
			if (!st)
				return NULL;
			m->nodes[i].w.st = st;
		}
	}
	struct node *n = &m->nodes[m->n_nodes];
	memset(n, 0, sizeof(*n));
	if (!(n->name = strdup(name)) || !(n->name_val = spt_cstr(&m->trace, name)))
		return NULL;
	for (size_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].w.open)
			m->nodes[i].w.st[m->n_nodes] = NULL; /* a node new to the window: no state yet */
	m->n_nodes++;
	return n;
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

static spt_val *net_value(struct mapping *m, const struct net *net)
{
	spt_val **e = spt_arena_alloc(&m->scratch, (net->n + 1) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < net->n; i++)
		e[i] = net->m[i].msg;
	return spt_set(&m->scratch, e, net->n);
}

static int net_apply(struct mapping *m, struct net *net, const struct spt_event *ev, spt_val *msg)
{
	if (!ev->msg)
		return 0;
	if (ev->msg->dir == SPT_MSG_RECV) {
		for (size_t i = 0; i < net->n; i++) {
			if (net->m[i].id == ev->msg->id) {
				net->m[i] = net->m[--net->n];
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
	(void)m;
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

static spt_val *msg_value(struct spt_arena *a, const struct spt_msg *mm, bool with_dir)
{
	const char *names[6] = { "id", "from", "to", "type", "fields", "dir" };
	spt_val *vals[6] = { spt_int(a, (int64_t)mm->id), spt_cstr(a, mm->from), spt_cstr(a, mm->to), spt_cstr(a, mm->type),
			     mm->fields ? mm->fields : spt_empty_fun(a, SPT_REC),
			     spt_cstr(a, mm->dir == SPT_MSG_SEND ? "send" : "recv") };
	for (int i = 0; i < 6; i++)
		if (!vals[i])
			return NULL;
	return spt_rec(a, names, vals, with_dir ? 6 : 5);
}

static spt_val *event_value(struct spt_arena *a, const struct spt_event *ev)
{
	const char *names[8] = { "node", "kind", "seq", "ts", "lamport", "state", "args", "msg" };
	spt_val *vals[8] = { spt_cstr(a, ev->node), spt_cstr(a, ev->kind), spt_int(a, (int64_t)ev->seq),
			     spt_int(a, (int64_t)ev->ts_ns), spt_int(a, (int64_t)ev->lamport),
			     ev->state ? ev->state : spt_empty_fun(a, SPT_REC), ev->args ? ev->args : spt_empty_fun(a, SPT_REC),
			     ev->msg ? msg_value(a, ev->msg, true) : NULL };
	for (int i = 0; i < (ev->msg ? 8 : 7); i++)
		if (!vals[i])
			return NULL;
	return spt_rec(a, names, vals, ev->msg ? 8 : 7);
}

/* ---- windows ---- */

static int close_window(struct mapping *m, struct node *n, uint64_t last, map_window_fn fn, void *arg,
			struct check_error *err)
{
	struct open_window *w = &n->w;
	w->open = false;
	spt_val *args[2] = { st_value(m, w->st), net_value(m, &w->net) }, *post;
	if (!args[0] || !args[1])
		return -ENOMEM;
	int rc = call(m, m->map_vars, args, &post, err);
	if (rc)
		return rc;
	if (!spt_is_fun(post) || (post->n && post->kind != SPT_REC)) {
		snprintf(err->msg, sizeof(err->msg), "MapVars must give a record of variables, not %s", ev_show(&m->in->ev, post));
		return -EINVAL;
	}
	struct map_window mw = { ++m->next_id, w->action, n->name, w->pre, post, w->params, w->input, w->first, last };
	return fn(arg, &mw);
}

static int open_window(struct mapping *m, struct node *n, const char *action, spt_val *evv, uint64_t ord,
		       struct check_error *err)
{
	struct open_window *w = &n->w;
	spt_val **st = realloc(w->st, (m->cap_nodes + 1) * sizeof(*st));
	if (!st)
		return -ENOMEM;
	w->st = st;
	for (size_t i = 0; i < m->n_nodes; i++)
		w->st[i] = m->nodes[i].state;
	if (net_copy(&w->net, &m->net))
		return -ENOMEM;
	spt_val *args[2] = { st_value(m, w->st), net_value(m, &w->net) }, *pre;
	if (!args[0] || !args[1])
		return -ENOMEM;
	int rc = call(m, m->map_vars, args, &pre, err);
	if (rc)
		return rc;
	if (!spt_is_fun(pre) || (pre->n && pre->kind != SPT_REC)) {
		snprintf(err->msg, sizeof(err->msg), "MapVars must give a record of variables, not %s", ev_show(&m->in->ev, pre));
		return -EINVAL;
	}
	spt_val *act = spt_cstr(&m->scratch, action), *pa[2] = { evv, act }, *params = NULL, *input = NULL;
	if (m->params && (rc = call(m, m->params, pa, &params, err)))
		return rc;
	if (m->input && (rc = call(m, m->input, pa, &input, err)))
		return rc;
	w->open = true;
	w->action = spt_arena_strndup(&m->trace, action, strlen(action));
	w->pre = spt_value_clone(&m->trace, pre);
	w->params = params ? spt_value_clone(&m->trace, params) : NULL;
	w->input = input ? spt_value_clone(&m->trace, input) : NULL;
	w->first = ord;
	return w->action && w->pre && (!params || w->params) && (!input || w->input) ? 0 : -ENOMEM;
}

/* The event's effects: on the cluster, and on the windows open on its own node. */
static int apply(struct mapping *m, struct node *n, const struct spt_event *ev)
{
	spt_val *msg = NULL;
	if (ev->msg && ev->msg->dir == SPT_MSG_SEND && !(msg = spt_value_clone(&m->trace, msg_value(&m->scratch, ev->msg, false))))
		return -ENOMEM;
	if (ev->state && (!n->state || !spt_value_eq(n->state, ev->state)) &&
	    !(n->state = spt_value_clone(&m->trace, ev->state)))
		return -ENOMEM;
	if (n->w.open) {
		n->w.st[n - m->nodes] = n->state;
		if (net_apply(m, &n->w.net, ev, msg))
			return -ENOMEM;
	}
	return net_apply(m, &m->net, ev, msg);
}

int mapping_run(struct mapping *m, struct spt_reader *r, map_window_fn fn, void *arg, struct check_error *err)
{
	struct interp *in = m->in;
	struct spt_arena *saved = in->ev.arena;
	in->ev.arena = &m->scratch;
	const struct spt_event *ev;
	int rc, k;
	uint64_t ord = 0;
	while ((k = spt_reader_next(r, &ev)) == 1) {
		spt_arena_reset(&m->scratch);
		struct node *n = node_of(m, ev->node);
		spt_val *evv = n ? event_value(&m->scratch, ev) : NULL, *a;
		if (!evv) {
			rc = -ENOMEM;
			goto out;
		}
		if ((rc = call(m, m->start, &evv, &a, err)))
			goto out;
		if (a->kind != SPT_STR) {
			snprintf(err->msg, sizeof(err->msg), "WindowStart must give an action name or \"\", not %s (event %llu)",
				 ev_show(&in->ev, a), (unsigned long long)ord);
			rc = -EINVAL;
			goto out;
		}
		if (a->n) {
			/* A new step of this node ends the one still open. */
			if (n->w.open && (rc = close_window(m, n, ord ? ord - 1 : 0, fn, arg, err)))
				goto out;
			if ((rc = open_window(m, n, a->u.s, evv, ord, err)))
				goto out;
		}
		if (m->on_branch && m->branch && (rc = report_branch(m, evv, err)))
			goto out;
		if ((rc = apply(m, n, ev)))
			goto out;
		if (n->w.open) {
			bool end = true;
			if (m->end) {
				spt_val *act = spt_cstr(&m->scratch, n->w.action), *args[2] = { evv, act }, *b;
				if ((rc = call(m, m->end, args, &b, err)))
					goto out;
				if (b->kind != SPT_BOOL) {
					snprintf(err->msg, sizeof(err->msg), "WindowEnd must give TRUE or FALSE, not %s", ev_show(&in->ev, b));
					rc = -EINVAL;
					goto out;
				}
				end = b->u.b;
			}
			if (end && (rc = close_window(m, n, ord, fn, arg, err)))
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
	in->ev.arena = saved;
	return rc;
}
