/* desc: reads and checks a system description (desc.h; the format: docs/adding-a-system.md). */
#include "desc.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "template.h"
#include "ydoc.h"

struct rd {
	struct ydoc doc;
	struct desc *d;
	char *err;
};

static int fail_at(struct rd *r, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(r->err, DESC_ERR_SIZE, "%s:%u:%u: ", r->doc.path, line, col);

	va_start(ap, fmt);
	vsnprintf(r->err + k, DESC_ERR_SIZE - (size_t)k, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

#define FAIL(r, node, ...) fail_at((r), (node)->line, (node)->col, __VA_ARGS__)

static struct desc_pos pos_of(const struct ynode *n) { return (struct desc_pos){ n->line, n->col }; }

/* Every key of m must be one of keys (NULL-terminated). */
static int only_keys(struct rd *r, const struct ynode *m, const char *what, const char *const *keys)
{
	for (size_t i = 0; i < m->n; i++) {
		bool ok = false;
		for (const char *const *k = keys; *k && !ok; k++)
			ok = !strcmp(*k, m->keys[i]);
		if (ok)
			continue;
		char list[512] = "";
		size_t len = 0;
		for (const char *const *k = keys; *k; k++)
			len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%s",
						k == keys ? "" : ", ", *k);
		return fail_at(r, m->key_line[i], m->key_col[i], "%s: unknown key '%s' (known: %s)", what, m->keys[i], list);
	}
	return 0;
}

static int want(struct rd *r, const struct ynode *n, enum ynode_kind kind, const char *what)
{
	if (n->kind != kind)
		return FAIL(r, n, "%s must be %s, not %s", what, ynode_kind_name(kind), ynode_kind_name(n->kind));
	return 0;
}

static int str_of(struct rd *r, const struct ynode *n, const char *what, char **out)
{
	int e = want(r, n, YNODE_SCALAR, what);
	if (e)
		return e;
	if (memchr(n->str, 0, n->len))
		return FAIL(r, n, "%s holds a NUL byte", what);
	return (*out = strdup(n->str)) ? 0 : -ENOMEM;
}

/* A required string key of m. */
static int req_str(struct rd *r, const struct ynode *m, const char *key, const char *what, char **out)
{
	const struct ynode *n = ynode_get(m, key);
	if (!n)
		return FAIL(r, m, "%s: '%s' is missing", what, key);
	return str_of(r, n, key, out);
}

static int opt_str(struct rd *r, const struct ynode *m, const char *key, char **out)
{
	const struct ynode *n = ynode_get(m, key);
	*out = NULL;
	return n && !ynode_is_null(n) ? str_of(r, n, key, out) : 0;
}

static int uint_of(struct rd *r, const struct ynode *n, const char *what, uint64_t max, uint64_t *out)
{
	char *end;
	int e = want(r, n, YNODE_SCALAR, what);
	if (e)
		return e;
	errno = 0;
	unsigned long long v = strtoull(n->str, &end, 10);
	if (!n->len || *end || errno || n->str[0] == '-' || v > max)
		return FAIL(r, n, "%s: '%s' is not a whole number in 0..%llu", what, n->str, (unsigned long long)max);
	*out = v;
	return 0;
}

/* "250ms", "3s", "2m" (or a number of milliseconds). */
static int duration_of(struct rd *r, const struct ynode *n, const char *what, unsigned *ms)
{
	char *end;
	int e = want(r, n, YNODE_SCALAR, what);
	if (e)
		return e;
	errno = 0;
	double v = strtod(n->str, &end);
	double mul = !strcmp(end, "ms") || !*end ? 1 : !strcmp(end, "s") ? 1000 : !strcmp(end, "m") ? 60000 : -1;
	if (!n->len || errno || end == n->str || mul < 0 || v < 0 || v * mul > 24.0 * 3600 * 1000)
		return FAIL(r, n, "%s: '%s' is not a duration such as 500ms, 3s or 2m (at most a day)", what, n->str);
	*ms = (unsigned)(v * mul + 0.5);
	return 0;
}

/* Template checking: the variables each kind of string may use. */
static const char *const node_vars[] = { "node", "i", "host", "dir", "binary", "tools", "nodes", "port." };
#define NNODE_VARS (sizeof(node_vars) / sizeof(*node_vars))

static int check_tmpl(struct rd *r, const struct ynode *n, const char *s, const char *const *known, size_t nknown,
		      bool each_ok, const char *what)
{
	char e[TMPL_ERR_SIZE];
	size_t off = 0;
	if (!tmpl_check(s, known, nknown, each_ok, e, &off))
		return 0;
	unsigned line, col;
	ydoc_scalar_pos(&r->doc, n, off, &line, &col);
	return fail_at(r, line, col, "%s: %s", what, e);
}

/* The node variables plus the description's ports (port.NAME must name one). */
static int check_node_tmpl(struct rd *r, const struct ynode *n, const char *s, const char *what,
			   const char *const *extra, size_t nextra)
{
	const char *known[NNODE_VARS + DESC_MAX_PORTS + DESC_MAX_READS + 8];
	char names[DESC_MAX_PORTS][64];
	size_t k = 0;
	for (size_t i = 0; i < NNODE_VARS; i++)
		if (strcmp(node_vars[i], "port."))
			known[k++] = node_vars[i];
	for (size_t i = 0; i < r->d->nports; i++) {
		snprintf(names[i], sizeof(names[i]), "port.%s", r->d->ports[i]);
		known[k++] = names[i];
	}
	for (size_t i = 0; i < nextra && k < sizeof(known) / sizeof(*known); i++)
		known[k++] = extra[i];
	return check_tmpl(r, n, s, known, k, true, what);
}

static int strv_of(struct rd *r, const struct ynode *n, const char *what, struct desc_strv *v, bool node_tmpl,
		   const char *const *extra, size_t nextra)
{
	int e = want(r, n, YNODE_SEQ, what);
	if (e)
		return e;
	if (!n->n)
		return FAIL(r, n, "%s: the list is empty", what);
	if (!(v->v = calloc(n->n + 1, sizeof(*v->v))))
		return -ENOMEM;
	v->n = n->n;
	v->pos = pos_of(n);
	for (size_t i = 0; i < n->n; i++) {
		if ((e = str_of(r, n->items[i], what, &v->v[i])))
			return e;
		if (node_tmpl && (e = check_node_tmpl(r, n->items[i], v->v[i], what, extra, nextra)))
			return e;
		if (!node_tmpl && (e = check_tmpl(r, n->items[i], v->v[i], extra, nextra, false, what)))
			return e;
	}
	return 0;
}

static void strv_free(struct desc_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
}

static int read_query(struct rd *r, const struct ynode *n, const char *what, struct desc_query *q)
{
	static const char *const keys[] = { "http", "tcp", "send", "run", "expect", "timeout", "leader", "leader_if",
					    "state", NULL };
	int e = want(r, n, YNODE_MAP, what);
	if (e || (e = only_keys(r, n, what, keys)))
		return e;
	q->pos = pos_of(n);
	const struct ynode *h = ynode_get(n, "http"), *c = ynode_get(n, "run"), *t = ynode_get(n, "tcp");
	if ((h != NULL) + (c != NULL) + (t != NULL) != 1)
		return FAIL(r, n, "%s: give one of http (host:port/path), tcp (host:port, with send) or run (a command)", what);
	if (t) {
		if ((e = str_of(r, t, "tcp", &q->tcp)) || (e = check_node_tmpl(r, t, q->tcp, "tcp", NULL, 0)) ||
		    (e = req_str(r, n, "send", what, &q->send)) ||
		    (e = check_node_tmpl(r, ynode_get(n, "send"), q->send, "send", NULL, 0)))
			return e;
	} else if (h) {
		if ((e = str_of(r, h, "http", &q->http)) || (e = check_node_tmpl(r, h, q->http, "http", NULL, 0)))
			return e;
		if (!strchr(q->http, '/'))
			return FAIL(r, h, "http: '%s' is not host:port/path", q->http);
	} else if ((e = strv_of(r, c, "run", &q->run, true, NULL, 0))) {
		return e;
	}
	return opt_str(r, n, "expect", &q->expect);
}

static int read_nodes(struct rd *r, const struct ynode *top)
{
	static const char *const keys[] = { "default", "min", "max", "name", NULL };
	struct desc *d = r->d;
	const struct ynode *n = ynode_get(top, "nodes");
	uint64_t v;
	int e;

	d->nodes_default = 3;
	d->nodes_min = 1;
	d->nodes_max = 9;
	if (n) {
		if ((e = want(r, n, YNODE_MAP, "nodes")) || (e = only_keys(r, n, "nodes", keys)))
			return e;
		const struct ynode *x;
		if ((x = ynode_get(n, "min")) && !(e = uint_of(r, x, "nodes.min", 64, &v)))
			d->nodes_min = (unsigned)v;
		if (!e && (x = ynode_get(n, "max")) && !(e = uint_of(r, x, "nodes.max", 64, &v)))
			d->nodes_max = (unsigned)v;
		if (!e && (x = ynode_get(n, "default")) && !(e = uint_of(r, x, "nodes.default", 64, &v)))
			d->nodes_default = (unsigned)v;
		if (!e)
			e = opt_str(r, n, "name", &d->node_name);
		if (e)
			return e;
		if (d->nodes_min < 1 || d->nodes_min > d->nodes_max || d->nodes_default < d->nodes_min ||
		    d->nodes_default > d->nodes_max)
			return FAIL(r, n, "nodes: need 1 <= min <= default <= max");
	}
	if (!d->node_name && !(d->node_name = strdup("n${i}")))
		return -ENOMEM;
	static const char *const i_only[] = { "i" };
	const struct ynode *at = n ? ynode_get(n, "name") ? ynode_get(n, "name") : n : top;
	if ((e = check_tmpl(r, at, d->node_name, i_only, 1, false, "nodes.name")))
		return e;
	char name[DESC_NODE_NAME_SIZE];
	for (unsigned k = 0; k < d->nodes_max; k++)
		if ((e = desc_node_name(d, k, name, sizeof(name))) == -ENAMETOOLONG)
			return FAIL(r, at, "nodes.name: node %u's name is longer than %d bytes", k + 1, DESC_NODE_NAME_SIZE - 1);
		else if (e)
			return e;
	return 0;
}

static int read_ports(struct rd *r, const struct ynode *top)
{
	const struct ynode *n = ynode_get(top, "ports");
	int e;
	if (!n)
		return 0;
	if ((e = want(r, n, YNODE_SEQ, "ports")))
		return e;
	if (n->n > DESC_MAX_PORTS)
		return FAIL(r, n, "ports: at most %d per node", DESC_MAX_PORTS);
	for (size_t i = 0; i < n->n; i++) {
		if ((e = str_of(r, n->items[i], "ports", &r->d->ports[i])))
			return e;
		r->d->nports++;
		if (strspn(r->d->ports[i], "abcdefghijklmnopqrstuvwxyz0123456789_") != n->items[i]->len || !n->items[i]->len)
			return FAIL(r, n->items[i], "ports: '%s' is not a name (lower case letters, digits, _)", r->d->ports[i]);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(r->d->ports[j], r->d->ports[i]))
				return FAIL(r, n->items[i], "ports: '%s' is named twice", r->d->ports[i]);
	}
	return 0;
}

static int read_files(struct rd *r, const struct ynode *top)
{
	const struct ynode *n = ynode_get(top, "files");
	int e;
	if (!n)
		return 0;
	if ((e = want(r, n, YNODE_MAP, "files")))
		return e;
	if (!(r->d->files = calloc(n->n, sizeof(*r->d->files))))
		return -ENOMEM;
	for (size_t i = 0; i < n->n; i++) {
		struct desc_file *f = &r->d->files[i];
		r->d->nfiles++;
		f->pos = (struct desc_pos){ n->key_line[i], n->key_col[i] };
		if (!(f->path = strdup(n->keys[i])))
			return -ENOMEM;
		if (strstr(f->path, "..") || f->path[0] == '/')
			return fail_at(r, f->pos.line, f->pos.col, "files: '%s' must be a path inside the run's directory",
				       f->path);
		struct ynode key = { .kind = YNODE_SCALAR, .line = f->pos.line, .col = f->pos.col, .plain = true,
				     .str = f->path, .len = strlen(f->path) };
		if ((e = check_node_tmpl(r, &key, f->path, "files", NULL, 0)) ||
		    (e = str_of(r, n->items[i], "files", &f->text)) ||
		    (e = check_node_tmpl(r, n->items[i], f->text, "files", NULL, 0)))
			return e;
	}
	return 0;
}

static int read_load(struct rd *r, const struct ynode *top)
{
	static const char *const keys[] = { "tcp", "hello", "vars", "send", "expect", "fail", "timeout", "run", NULL };
	const struct ynode *n = ynode_get(top, "load");
	struct desc_load *l = &r->d->load;
	int e;
	if (!n)
		return 0;
	r->d->has_load = true;
	if ((e = want(r, n, YNODE_MAP, "load")) || (e = only_keys(r, n, "load", keys)))
		return e;
	l->pos = pos_of(n);
	l->timeout_ms = 5000;
	const struct ynode *x;
	if ((x = ynode_get(n, "timeout")) && (e = duration_of(r, x, "load.timeout", &l->timeout_ms)))
		return e;
	const char *extra[DESC_MAX_READS + 1] = { "op" };
	size_t nextra = 1;
	if ((x = ynode_get(n, "run"))) {
		static const char *const ops[] = { "ops" };
		return strv_of(r, x, "load.run", &l->run, true, ops, 1);
	}
	if ((x = ynode_get(n, "vars"))) {
		if ((e = want(r, x, YNODE_MAP, "load.vars")))
			return e;
		if (x->n > DESC_MAX_READS)
			return FAIL(r, x, "load.vars: at most %d", DESC_MAX_READS);
		if (!(l->var_names = calloc(x->n, sizeof(char *))) || !(l->var_values = calloc(x->n, sizeof(char *))))
			return -ENOMEM;
		for (size_t i = 0; i < x->n; i++) {
			l->nvars++;
			if (!(l->var_names[i] = strdup(x->keys[i])))
				return -ENOMEM;
			/* A variable may use the ones before it. */
			if ((e = str_of(r, x->items[i], "load.vars", &l->var_values[i])) ||
			    (e = check_node_tmpl(r, x->items[i], l->var_values[i], "load.vars", extra, nextra)))
				return e;
			extra[nextra++] = l->var_names[i];
		}
	}
	if ((e = req_str(r, n, "tcp", "load (tcp, or run)", &l->tcp)) ||
	    (e = check_node_tmpl(r, ynode_get(n, "tcp"), l->tcp, "load.tcp", NULL, 0)) ||
	    (e = req_str(r, n, "send", "load", &l->send)) ||
	    (e = check_node_tmpl(r, ynode_get(n, "send"), l->send, "load.send", extra, nextra)) ||
	    (e = req_str(r, n, "expect", "load", &l->expect)) || (e = opt_str(r, n, "fail", &l->fail)) ||
	    (e = opt_str(r, n, "hello", &l->hello)))
		return e;
	if (l->hello && (e = check_node_tmpl(r, ynode_get(n, "hello"), l->hello, "load.hello", NULL, 0)))
		return e;
	return 0;
}

static int read_probes(struct rd *r, const struct ynode *top)
{
	static const char *const keys[] = { "go", "c", "read_sets", "functions", NULL };
	static const char *const go_keys[] = { "package", "gopath", "debian", NULL };
	static const char *const fkeys[] = { "func", "at", "name", "with", "reads", NULL };
	const struct ynode *n = ynode_get(top, "probes"), *g, *fs, *sets;
	struct desc *d = r->d;
	int e;
	if (!n)
		return 0;
	if ((e = want(r, n, YNODE_MAP, "probes")) || (e = only_keys(r, n, "probes", keys)))
		return e;
	const struct ynode *cl = ynode_get(n, "c");
	g = ynode_get(n, "go");
	if (!g == !cl)
		return FAIL(r, n, "probes: say the language of the binary: go: {package: ...} (fields from the "
				  "package's source) or c: {} (fields through the binary's DWARF), one of them");
	if (cl) { /* the binary (or its debug file) describes itself: nothing to say */
		d->lang = DESC_LANG_C;
		if ((e = want(r, cl, YNODE_MAP, "probes.c")) || (e = only_keys(r, cl, "probes.c", (const char *const[]){ NULL })))
			return e;
	} else {
		d->lang = DESC_LANG_GO;
		if ((e = want(r, g, YNODE_MAP, "probes.go")) || (e = only_keys(r, g, "probes.go", go_keys)) ||
		    (e = req_str(r, g, "package", "probes.go", &d->go_package)) ||
		    (e = opt_str(r, g, "gopath", &d->go_path)) || (e = opt_str(r, g, "debian", &d->go_debian)))
			return e;
		if (!d->go_path && !(d->go_path = strdup("/usr/share/gocode")))
			return -ENOMEM;
	}
	if ((sets = ynode_get(n, "read_sets")) && (e = want(r, sets, YNODE_MAP, "probes.read_sets")))
		return e;
	for (size_t i = 0; sets && i < sets->n; i++)
		if ((e = want(r, sets->items[i], YNODE_MAP, "a read set")))
			return e;
	if (!(fs = ynode_get(n, "functions")))
		return FAIL(r, n, "probes: 'functions' is missing");
	if ((e = want(r, fs, YNODE_SEQ, "probes.functions")))
		return e;
	if (!(d->probes = calloc(fs->n, sizeof(*d->probes))))
		return -ENOMEM;
	for (size_t i = 0; i < fs->n; i++) {
		const struct ynode *f = fs->items[i], *rs, *at;
		struct desc_probe *p = &d->probes[i];
		d->nprobes++;
		p->pos = pos_of(f);
		if ((e = want(r, f, YNODE_MAP, "a probe")) || (e = only_keys(r, f, "a probe", fkeys)) ||
		    (e = req_str(r, f, "func", "a probe", &p->func)) || (e = req_str(r, f, "name", "a probe", &p->name)))
			return e;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(d->probes[j].name, p->name))
				return FAIL(r, ynode_get(f, "name"), "probe name '%s' is used twice", p->name);
		p->at = DESC_AT_ENTRY;
		if ((at = ynode_get(f, "at"))) {
			if ((e = want(r, at, YNODE_SCALAR, "at")))
				return e;
			if (!strcmp(at->str, "return"))
				p->at = DESC_AT_RETURN;
			else if (strcmp(at->str, "entry"))
				return FAIL(r, at, "at: '%s' is not entry or return", at->str);
		}
		/* The read sets it names (with: [a, b]), then its own reads. */
		const struct ynode *with = ynode_get(f, "with"), *lists[DESC_MAX_READS + 1];
		size_t nlists = 0;
		if (with) {
			if ((e = want(r, with, YNODE_SEQ, "with")))
				return e;
			for (size_t j = 0; j < with->n && nlists < DESC_MAX_READS; j++) {
				const struct ynode *w = with->items[j], *set;
				if ((e = want(r, w, YNODE_SCALAR, "with")))
					return e;
				if (!(set = ynode_get(sets, w->str)))
					return FAIL(r, w, "with: no read set named '%s' in probes.read_sets", w->str);
				lists[nlists++] = set;
			}
		}
		if ((rs = ynode_get(f, "reads")))
			lists[nlists++] = rs;
		for (size_t q = 0; q < nlists; q++) {
			rs = lists[q];
			if ((e = want(r, rs, YNODE_MAP, "reads")))
				return e;
			for (size_t j = 0; j < rs->n; j++) {
				struct desc_read *rd = &p->reads[p->nreads];
				if (p->nreads == DESC_MAX_READS)
					return FAIL(r, rs, "reads: at most %d per probe", DESC_MAX_READS);
				for (size_t k = 0; k < p->nreads; k++)
					if (!strcmp(p->reads[k].name, rs->keys[j]))
						return fail_at(r, rs->key_line[j], rs->key_col[j], "read '%s' is given twice in "
							       "probe %s", rs->keys[j], p->name);
				p->nreads++;
				rd->pos = (struct desc_pos){ rs->key_line[j], rs->key_col[j] };
				if (!(rd->name = strdup(rs->keys[j])))
					return -ENOMEM;
				if ((e = str_of(r, rs->items[j], "a read", &rd->expr)))
					return e;
			}
		}
	}
	return 0;
}

static const char *index_only(void *ctx, long node, const char *name, size_t len)
{
	(void)node;
	return len == 1 && *name == 'i' ? ctx : NULL;
}

int desc_node_name(const struct desc *d, unsigned node, char *name, size_t size)
{
	char idx[16], *s = NULL, err[TMPL_ERR_SIZE];
	snprintf(idx, sizeof(idx), "%u", node + 1);
	struct tmpl_scope sc = { .lookup = index_only, .ctx = idx, .node = -1 };
	int r = tmpl_expand(d->node_name, &sc, &s, err); /* checked when read: ${i} only */
	if (!r && (size_t)snprintf(name, size, "%s", s) >= size)
		r = -ENAMETOOLONG;
	free(s);
	return r;
}

/* The 1-based node whose nodes.name is name, or 0. */
static unsigned node_named(const struct desc *d, const char *name)
{
	char s[DESC_NODE_NAME_SIZE];
	for (unsigned k = 1; k <= d->nodes_max && k <= 64; k++)
		if (!desc_node_name(d, k - 1, s, sizeof(s)) && !strcmp(s, name))
			return k;
	return 0;
}

static int target_of(struct rd *r, const struct ynode *n, struct desc_step *s)
{
	if (n->kind != YNODE_SCALAR)
		return FAIL(r, n, "a fault's target is leader, follower, last or a node name such as n2");
	if (!strcmp(n->str, "leader"))
		s->target = TARGET_LEADER;
	else if (!strcmp(n->str, "follower"))
		s->target = TARGET_FOLLOWER;
	else if (!strcmp(n->str, "last"))
		s->target = TARGET_LAST;
	else { /* a node's name (nodes.name), or nK for node K */
		char *end = NULL;
		unsigned long k = node_named(r->d, n->str);
		if (!k && n->str[0] == 'n' && ((k = strtoul(n->str + 1, &end, 10)) == 0 || *end || k > 64))
			k = 0;
		if (!k)
			return FAIL(r, n, "'%s' is not leader, follower, last or a node such as n2 (nodes.name's)", n->str);
		s->target = TARGET_NODE;
		s->node = (unsigned)(k - 1);
	}
	return 0;
}

static int read_step(struct rd *r, const struct ynode *n, struct desc_step *s)
{
	static const struct { const char *name; enum desc_step_kind kind; } kinds[] = {
		{ "start", STEP_START }, { "wait", STEP_WAIT }, { "load", STEP_LOAD }, { "kill", STEP_KILL },
		{ "pause", STEP_PAUSE }, { "resume", STEP_RESUME }, { "restart", STEP_RESTART }, { "quiet", STEP_QUIET },
		{ "sleep", STEP_SLEEP }, { "partition", STEP_PARTITION }, { "heal", STEP_HEAL }, { "fault", STEP_FAULT },
	};
	const char *kind = n->kind == YNODE_SCALAR ? n->str : n->kind == YNODE_MAP && n->n ? n->keys[0] : "";
	const struct ynode *arg = n->kind == YNODE_MAP && n->n ? n->items[0] : NULL, *x;
	size_t k;
	int e;

	s->pos = pos_of(n);
	for (k = 0; k < sizeof(kinds) / sizeof(*kinds) && strcmp(kinds[k].name, kind); k++)
		;
	if (k == sizeof(kinds) / sizeof(*kinds))
		return FAIL(r, n, "a step is start, {wait: leader}, {load: N}, {kill|pause|restart|partition: TARGET}, "
				  "{resume: paused}, {heal: partitioned}, {fault: random, for: DURATION}, {quiet: DURATION} "
				  "or {sleep: DURATION}; not '%s'", kind);
	s->kind = kinds[k].kind;
	s->timeout_ms = 30000;
	if (s->kind == STEP_START)
		return n->kind == YNODE_SCALAR ? 0 : FAIL(r, n, "start takes nothing: write it plainly");
	if (!arg)
		return FAIL(r, n, "%s needs a value, e.g. {%s: ...}", kind, kind);
	static const char *const keys_wait[] = { "wait", "timeout", NULL }, *const keys_pause[] = { "pause", "for", NULL },
			 *const keys_quiet[] = { "quiet", "timeout", NULL }, *const keys_fault[] = { "fault", "of", "for", NULL };
	const char *const one[] = { kind, NULL };
	const char *const *keys = s->kind == STEP_WAIT ? keys_wait : s->kind == STEP_PAUSE ? keys_pause
				: s->kind == STEP_QUIET ? keys_quiet : s->kind == STEP_FAULT ? keys_fault : one;
	if ((e = only_keys(r, n, kind, keys)))
		return e;
	if ((x = ynode_get(n, "timeout")) && (e = duration_of(r, x, "timeout", &s->timeout_ms)))
		return e;
	switch (s->kind) {
	case STEP_WAIT:
		if (arg->kind != YNODE_SCALAR ||
		    (strcmp(arg->str, "leader") && strcmp(arg->str, "new-leader") && strcmp(arg->str, "all")))
			return FAIL(r, arg, "wait: leader, new-leader (another than the node last struck) or all (every "
				    "node names the same leader; with status.leader_if, as leader)");
		s->new_leader = !strcmp(arg->str, "new-leader");
		s->all_agree = !strcmp(arg->str, "all");
		return 0;
	case STEP_LOAD:
		if (!r->d->has_load)
			return FAIL(r, arg, "load: the description has no load");
		return uint_of(r, arg, "load", 100000000, &s->count);
	case STEP_PAUSE:
		if (!(x = ynode_get(n, "for")))
			s->hold = true; /* until {resume: paused} */
		else if ((e = duration_of(r, x, "for", &s->ms)))
			return e;
		return target_of(r, arg, s);
	case STEP_RESUME:
		if (arg->kind != YNODE_SCALAR || strcmp(arg->str, "paused"))
			return FAIL(r, arg, "resume: paused (every node a pause without 'for' stopped)");
		return 0;
	case STEP_FAULT: {
		if (arg->kind != YNODE_SCALAR || strcmp(arg->str, "random"))
			return FAIL(r, arg, "fault: random (a fault picked by the seed, on a node picked by the seed)");
		if (!(x = ynode_get(n, "for")))
			return FAIL(r, n, "fault: say how long it lasts before it is undone ({fault: random, for: 2s})");
		if ((e = duration_of(r, x, "for", &s->ms)))
			return e;
		const struct ynode *of = ynode_get(n, "of");
		if (!of) {
			s->faults = FAULT_KILL | FAULT_PAUSE | FAULT_PARTITION;
			return 0;
		}
		if ((e = want(r, of, YNODE_SEQ, "of")))
			return e;
		for (size_t q = 0; q < of->n; q++) {
			const struct ynode *f = of->items[q];
			unsigned bit = f->kind != YNODE_SCALAR ? 0 : !strcmp(f->str, "kill") ? FAULT_KILL
				     : !strcmp(f->str, "pause") ? FAULT_PAUSE : !strcmp(f->str, "partition") ? FAULT_PARTITION : 0;
			if (!bit)
				return FAIL(r, f, "of: kill, pause or partition");
			s->faults |= bit;
		}
		return s->faults ? 0 : FAIL(r, of, "of: name at least one of kill, pause, partition");
	}
	case STEP_HEAL:
		if (arg->kind != YNODE_SCALAR || strcmp(arg->str, "partitioned"))
			return FAIL(r, arg, "heal: partitioned (every node a partition step cut off)");
		return 0;
	case STEP_KILL:
	case STEP_RESTART:
	case STEP_PARTITION:
		return target_of(r, arg, s);
	case STEP_QUIET:
	case STEP_SLEEP:
		return duration_of(r, arg, kind, &s->ms);
	default:
		return 0;
	}
}

static int read_scenarios(struct rd *r, const struct ynode *top)
{
	const struct ynode *n = ynode_get(top, "scenarios");
	struct desc *d = r->d;
	int e;
	if (!n)
		return FAIL(r, top, "'scenarios' is missing: a description needs at least one");
	if ((e = want(r, n, YNODE_MAP, "scenarios")))
		return e;
	if (!n->n)
		return FAIL(r, n, "scenarios: none given");
	if (!(d->scenarios = calloc(n->n, sizeof(*d->scenarios))))
		return -ENOMEM;
	for (size_t i = 0; i < n->n; i++) {
		struct desc_scenario *sc = &d->scenarios[i];
		const struct ynode *steps = n->items[i];
		d->nscenarios++;
		sc->pos = (struct desc_pos){ n->key_line[i], n->key_col[i] };
		if (!(sc->name = strdup(n->keys[i])))
			return -ENOMEM;
		if (steps->kind == YNODE_MAP) { /* {about: ..., steps: [...]} */
			static const char *const keys[] = { "about", "steps", NULL };
			if ((e = only_keys(r, steps, sc->name, keys)) || (e = opt_str(r, steps, "about", &sc->about)))
				return e;
			if (!(steps = ynode_get(steps, "steps")))
				return fail_at(r, sc->pos.line, sc->pos.col, "scenario %s: 'steps' is missing", sc->name);
		}
		if ((e = want(r, steps, YNODE_SEQ, "a scenario's steps")))
			return e;
		if (!(sc->steps = calloc(steps->n ? steps->n : 1, sizeof(*sc->steps))))
			return -ENOMEM;
		bool started = false;
		const struct ynode *held = NULL; /* a pause without 'for' not resumed yet */
		const struct ynode *cut = NULL;  /* a partition not healed yet */
		for (size_t j = 0; j < steps->n; j++) {
			if ((e = read_step(r, steps->items[j], &sc->steps[j])))
				return e;
			sc->n++;
			if (sc->steps[j].kind == STEP_START)
				started = true;
			else if (!started)
				return FAIL(r, steps->items[j], "scenario %s: the first step must be start", sc->name);
			if (sc->steps[j].kind == STEP_PAUSE && sc->steps[j].hold && !held)
				held = steps->items[j];
			else if (sc->steps[j].kind == STEP_RESUME) {
				if (!held)
					return FAIL(r, steps->items[j], "scenario %s: resume, but no pause without 'for' "
						    "before it", sc->name);
				held = NULL;
			} else if (sc->steps[j].kind == STEP_FAULT && (sc->steps[j].faults & FAULT_PARTITION)) {
				sc->partitions = true;
			} else if (sc->steps[j].kind == STEP_PARTITION) {
				sc->partitions = true;
				cut = cut ? cut : steps->items[j];
			} else if (sc->steps[j].kind == STEP_HEAL) {
				if (!cut)
					return FAIL(r, steps->items[j], "scenario %s: heal, but no partition before it",
						    sc->name);
				cut = NULL;
			}
		}
		if (!started)
			return fail_at(r, sc->pos.line, sc->pos.col, "scenario %s: no start step", sc->name);
		if (held)
			return FAIL(r, held, "scenario %s: this pause has no 'for' and no {resume: paused} follows it: "
				    "add one, or say for how long ({pause: follower, for: 3s})", sc->name);
		if (sc->partitions && r->d->nodes_min > 9)
			return fail_at(r, sc->pos.line, sc->pos.col, "scenario %s partitions: at most 9 nodes run in "
				       "network namespaces, and nodes.min is %u", sc->name, r->d->nodes_min);
		/* The end state is read from every node: one still cut off would not answer. */
		if (cut)
			return FAIL(r, cut, "scenario %s: this partition is not healed: add {heal: partitioned} "
				    "after it", sc->name);
	}
	return 0;
}

static int read_top(struct rd *r)
{
	static const char *const keys[] = { "system", "about", "binary", "package", "version", "nodes", "ports", "files",
					    "run", "env", "ready", "status", "load", "probes", "events", "spec",
					    "dialects", "scenarios", NULL };
	const struct ynode *top = r->doc.root, *x;
	struct desc *d = r->d;
	int e;

	if (!top)
		return fail_at(r, 1, 1, "the description is empty");
	if ((e = want(r, top, YNODE_MAP, "a system description")) || (e = only_keys(r, top, "the description", keys)) ||
	    (e = req_str(r, top, "system", "the description", &d->name)) || (e = opt_str(r, top, "about", &d->about)) ||
	    (e = req_str(r, top, "binary", "the description", &d->binary)) ||
	    (e = opt_str(r, top, "package", &d->package)) || (e = read_nodes(r, top)) || (e = read_ports(r, top)) ||
	    (e = read_files(r, top)))
		return e;
	if ((x = ynode_get(top, "version"))) {
		static const char *const vkeys[] = { "run", "match", NULL };
		static const char *const bin[] = { "binary" };
		if ((e = want(r, x, YNODE_MAP, "version")) || (e = only_keys(r, x, "version", vkeys)) ||
		    (e = strv_of(r, ynode_get(x, "run") ? ynode_get(x, "run") : x, "version.run", &d->version_run, false, bin,
				 1)) ||
		    (e = req_str(r, x, "match", "version", &d->version_match)))
			return e;
		regex_t re;
		if (regcomp(&re, d->version_match, REG_EXTENDED))
			return FAIL(r, ynode_get(x, "match"), "version.match: '%s' is not a POSIX extended regular expression",
				    d->version_match);
		size_t groups = re.re_nsub;
		regfree(&re);
		if (groups < 1)
			return FAIL(r, ynode_get(x, "match"), "version.match: needs a group ( ) around the version");
	}
	if (!(x = ynode_get(top, "run")))
		return FAIL(r, top, "'run' (each node's command line) is missing");
	if ((e = strv_of(r, x, "run", &d->run, true, NULL, 0)))
		return e;
	if ((x = ynode_get(top, "env"))) {
		struct desc_strv env = { 0 };
		if ((e = strv_of(r, x, "env", &env, true, NULL, 0)))
			return e;
		d->env = env.v;
		d->nenv = env.n;
		for (size_t i = 0; i < env.n; i++)
			if (!strchr(env.v[i], '=') || env.v[i][0] == '=')
				return FAIL(r, x->items[i], "env: '%s' is not KEY=VALUE", env.v[i]);
	}
	if (!(x = ynode_get(top, "ready")))
		return FAIL(r, top, "'ready' (how to tell a node is up) is missing");
	if ((e = read_query(r, x, "ready", &d->ready)))
		return e;
	d->ready_timeout_ms = 30000;
	const struct ynode *t = ynode_get(x, "timeout");
	if (t && (e = duration_of(r, t, "ready.timeout", &d->ready_timeout_ms)))
		return e;
	if ((x = ynode_get(top, "status"))) {
		if ((e = read_query(r, x, "status", &d->status)) || (e = opt_str(r, x, "leader", &d->status_leader)) ||
		    (e = opt_str(r, x, "leader_if", &d->status_leader_if)) || (e = opt_str(r, x, "state", &d->status_field)))
			return e;
		if (d->status_leader && d->status_leader_if)
			return FAIL(r, x, "status: give leader (a JSON path) or leader_if (the leader's answer holds it), not both");
		if (d->status_field && !d->status_leader && !d->status_leader_if)
			return FAIL(r, x, "status: 'state' needs 'leader' or 'leader_if' (how the answers tell the leader)");
	}
	if ((e = read_load(r, top)) || (e = read_probes(r, top)) || (e = opt_str(r, top, "events", &d->events)))
		return e;
	if (d->nprobes && !d->events)
		return FAIL(r, top, "'events' (the module that turns probe hits into events) is missing");
	if ((x = ynode_get(top, "dialects"))) {
		static const char *const dkeys[] = { "sysmobench", NULL };
		if ((e = want(r, x, YNODE_MAP, "dialects")) || (e = only_keys(r, x, "dialects", dkeys)) ||
		    (e = opt_str(r, x, "sysmobench", &d->sysmobench)))
			return e;
	}
	if ((x = ynode_get(top, "spec"))) {
		static const char *const skeys[] = { "spec", "map", "cfg", NULL };
		if ((e = want(r, x, YNODE_MAP, "spec")) || (e = only_keys(r, x, "spec", skeys)) ||
		    (e = req_str(r, x, "spec", "spec", &d->spec)) || (e = req_str(r, x, "map", "spec", &d->map)) ||
		    (e = opt_str(r, x, "cfg", &d->cfg)))
			return e;
	}
	return read_scenarios(r, top);
}

int desc_load(const char *path, struct desc *d, char *err)
{
	struct rd r = { .d = d, .err = err };
	char ydoc_err[YDOC_ERR_SIZE], buf[PATH_MAX];
	int e;

	memset(d, 0, sizeof(*d));
	err[0] = 0;
	if ((e = ydoc_load(path, &r.doc, ydoc_err))) {
		snprintf(err, DESC_ERR_SIZE, "%s", ydoc_err);
		return e;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	if (!(d->path = strdup(path)) || !(d->dir = strdup(dirname(buf))))
		e = -ENOMEM;
	else
		e = read_top(&r);
	if (e == -ENOMEM && !err[0])
		snprintf(err, DESC_ERR_SIZE, "%s: out of memory", path);
	ydoc_free(&r.doc);
	if (e)
		desc_free(d);
	return e;
}

void desc_free(struct desc *d)
{
	free(d->path);
	free(d->dir);
	free(d->name);
	free(d->about);
	free(d->binary);
	free(d->package);
	strv_free(&d->version_run);
	free(d->version_match);
	free(d->node_name);
	for (size_t i = 0; i < d->nports; i++)
		free(d->ports[i]);
	for (size_t i = 0; i < d->nfiles; i++) {
		free(d->files[i].path);
		free(d->files[i].text);
	}
	free(d->files);
	strv_free(&d->run);
	for (size_t i = 0; i < d->nenv; i++)
		free(d->env[i]);
	free(d->env);
	struct desc_query *qs[] = { &d->ready, &d->status };
	for (size_t i = 0; i < 2; i++) {
		free(qs[i]->http);
		free(qs[i]->tcp);
		free(qs[i]->send);
		strv_free(&qs[i]->run);
		free(qs[i]->expect);
	}
	free(d->status_leader);
	free(d->status_leader_if);
	free(d->status_field);
	struct desc_load *l = &d->load;
	free(l->tcp);
	free(l->hello);
	for (size_t i = 0; i < l->nvars; i++) {
		free(l->var_names ? l->var_names[i] : NULL);
		free(l->var_values ? l->var_values[i] : NULL);
	}
	free(l->var_names);
	free(l->var_values);
	free(l->send);
	free(l->expect);
	free(l->fail);
	strv_free(&l->run);
	free(d->go_package);
	free(d->go_path);
	free(d->go_debian);
	for (size_t i = 0; i < d->nprobes; i++) {
		free(d->probes[i].func);
		free(d->probes[i].name);
		for (size_t j = 0; j < d->probes[i].nreads; j++) {
			free(d->probes[i].reads[j].name);
			free(d->probes[i].reads[j].expr);
		}
	}
	free(d->probes);
	free(d->events);
	free(d->spec);
	free(d->sysmobench);
	free(d->map);
	free(d->cfg);
	for (size_t i = 0; i < d->nscenarios; i++) {
		free(d->scenarios[i].name);
		free(d->scenarios[i].about);
		free(d->scenarios[i].steps);
	}
	free(d->scenarios);
	memset(d, 0, sizeof(*d));
}

const struct desc_scenario *desc_scenario(const struct desc *d, const char *name)
{
	for (size_t i = 0; i < d->nscenarios; i++)
		if (!strcmp(d->scenarios[i].name, name))
			return &d->scenarios[i];
	return NULL;
}

void desc_scenario_names(const struct desc *d, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = 0;
	for (size_t i = 0; i < d->nscenarios && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", d->scenarios[i].name);
}

/* desc_find's places for name ("" for the directory itself): up to 3 paths. */
static size_t places(const char *name, char tried[3][PATH_MAX])
{
	char self[PATH_MAX];
	const char *env = getenv("SPECTAP_SYSTEMS");
	size_t n = 0;
	const char *sep = *name ? "/" : "", *file = *name ? "/system.yaml" : "";
	if (env && *env)
		snprintf(tried[n++], PATH_MAX, "%s%s%s%s", env, sep, name, file);
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k > 0) {
		self[k] = 0;
		/* spectap lives in BUILD/ of the source tree: systems/ is beside BUILD. */
		snprintf(tried[n++], PATH_MAX, "%s/../systems%s%s%s", dirname(self), sep, name, file);
	}
	snprintf(tried[n++], PATH_MAX, "systems%s%s%s", sep, name, file);
	return n;
}

int desc_dir(char *dir, size_t size)
{
	char tried[3][PATH_MAX];
	size_t n = places("", tried);
	for (size_t i = 0; i < n; i++)
		if (!access(tried[i], R_OK | X_OK)) {
			snprintf(dir, size, "%s", tried[i]);
			return 0;
		}
	return -ENOENT;
}

int desc_find(const char *name, char *path, size_t size, char *err, size_t errsize)
{
	char tried[3][PATH_MAX];
	size_t n;
	if (!*name || strchr(name, '/') || name[0] == '.') {
		snprintf(err, errsize, "'%s' is not a system name", name);
		return -EINVAL;
	}
	n = places(name, tried);
	for (size_t i = 0; i < n; i++)
		if (!access(tried[i], R_OK)) {
			if (!realpath(tried[i], path)) /* PATH_MAX bytes */
				snprintf(path, size, "%s", tried[i]);
			return 0;
		}
	size_t len = (size_t)snprintf(err, errsize, "no description of a system named '%s': looked for", name);
	for (size_t i = 0; i < n && len < errsize; i++)
		len += (size_t)snprintf(err + len, errsize - len, "%s %s", i ? "," : "", tried[i]);
	return -ENOENT;
}
