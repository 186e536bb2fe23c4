/* cluster: a described system's nodes on loopback (hcluster.h). */
#include "hcluster.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net.h"
#include "spectap/json.h"
#include "template.h"

#define PORT_LOW 20000
#define PORT_HIGH 29999
#define QUERY_TIMEOUT_MS 3000

static int cfail(struct hcluster *c, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -err;
}

struct vars {
	struct hcluster *c;
	const char *const *names, *const *values;
	size_t n;
	char num[8][24];
	unsigned next;
};

static const char *num(struct vars *v, unsigned long x)
{
	char *b = v->num[v->next++ % 8];
	snprintf(b, 24, "%lu", x);
	return b;
}

static const char *lookup(void *ctx, long node, const char *name, size_t len)
{
	struct vars *v = ctx;
	struct hcluster *c = v->c;
#define IS(s) (len == sizeof(s) - 1 && !strncmp(name, s, len))
	for (size_t i = 0; i < v->n; i++)
		if (strlen(v->names[i]) == len && !strncmp(name, v->names[i], len))
			return v->values[i];
	if (IS("dir"))
		return c->dir;
	if (IS("binary"))
		return c->binary;
	if (IS("tools"))
		return c->tools[0] ? c->tools : NULL;
	if (IS("nodes"))
		return num(v, c->n);
	if (node < 0 || (unsigned long)node >= c->n)
		return NULL;
	if (IS("node"))
		return c->names[node];
	if (IS("i"))
		return num(v, (unsigned long)node + 1);
	if (IS("host"))
		return c->netns ? c->net.m[node].addr : "127.0.0.1";
	if (len > 5 && !strncmp(name, "port.", 5))
		for (size_t k = 0; k < c->d->nports; k++)
			if (strlen(c->d->ports[k]) == len - 5 && !strncmp(name + 5, c->d->ports[k], len - 5))
				return num(v, hcluster_port(c, (unsigned)node, k));
	return NULL;
#undef IS
}

int hcluster_expand(struct hcluster *c, const char *tmpl, long node, const char *const *names,
		    const char *const *values, size_t nextra, char **out)
{
	struct vars v = { .c = c, .names = names, .values = values, .n = nextra };
	struct tmpl_scope s = { .lookup = lookup, .ctx = &v, .node = node, .nnodes = c->n };
	char err[TMPL_ERR_SIZE];
	int r = tmpl_expand(tmpl, &s, out, err);
	if (r == -EINVAL)
		return cfail(c, EINVAL, "%s: '%s': %s", c->d->path, tmpl, err);
	return r == -ENOMEM ? cfail(c, ENOMEM, "out of memory") : r;
}

unsigned hcluster_port(const struct hcluster *c, unsigned node, size_t k)
{
	return c->base_port + node * (unsigned)c->d->nports + (unsigned)k;
}

int hcluster_pid(const struct hcluster *c, unsigned node)
{
	return node < c->n && c->sup_ready ? c->sup.procs[c->proc[node]].pid : 0;
}

bool hcluster_running(struct hcluster *c, unsigned node)
{
	return node < c->n && c->sup_ready && sup_running(&c->sup, c->proc[node]);
}

bool hcluster_reachable(struct hcluster *c, unsigned node)
{
	return hcluster_running(c, node) && !c->sup.procs[c->proc[node]].stopped && !c->cut[node];
}

static int pick_ports(struct hcluster *c)
{
	unsigned span = c->n * (unsigned)c->d->nports;
	if (!span)
		return 0;
	/* Start somewhere of our own (pid) so that parallel runs rarely collide. */
	unsigned slots = (PORT_HIGH - PORT_LOW + 1) / span, first = (unsigned)getpid() % slots;
	for (unsigned t = 0; t < slots; t++) {
		unsigned base = PORT_LOW + ((first + t) % slots) * span, k;
		for (k = 0; k < span && sup_port_free(base + k) == 0; k++)
			;
		if (k == span) {
			c->base_port = base;
			return 0;
		}
	}
	return cfail(c, EADDRINUSE, "no block of %u free ports in %u..%u", span, PORT_LOW, PORT_HIGH);
}

static int write_file(struct hcluster *c, const char *rel, const char *text)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->dir, rel) >= sizeof(path))
		return cfail(c, ENAMETOOLONG, "%s/%s: path too long", c->dir, rel);
	char *slash = strrchr(path, '/');
	*slash = 0;
	int r = sup_mkdir_p(path);
	*slash = '/';
	if (r)
		return cfail(c, -r, "creating the directory of %s: %s", path, strerror(-r));
	FILE *f = fopen(path, "wx");
	if (!f)
		return cfail(c, errno, "writing %s: %s", path, strerror(errno));
	bool ok = fputs(text, f) >= 0;
	if (fclose(f) || !ok)
		return cfail(c, EIO, "writing %s: %s", path, strerror(errno));
	return 0;
}

static void on_fork(void *ctx, size_t proc, int pid)
{
	struct hcluster *c = ctx;
	for (unsigned i = 0; i < c->n; i++)
		if (c->proc[i] == proc && c->spawned)
			c->spawned(c->spawned_ctx, i, pid);
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Expands a list of node templates into a NULL-terminated vector. */
static int expand_strv(struct hcluster *c, char *const *t, size_t n, long node, char ***out)
{
	char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return cfail(c, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int r = hcluster_expand(c, t[i], node, NULL, NULL, 0, &v[i]);
		if (r) {
			free_strv(v, n);
			return r;
		}
	}
	*out = v;
	return 0;
}

static int add_node(struct hcluster *c, unsigned i)
{
	const struct desc *d = c->d;
	char **argv = NULL, **env = NULL, log[PATH_MAX];
	const char **nsargv = NULL;
	int r;

	for (size_t k = 0; k < d->nfiles; k++) {
		char *path = NULL, *text = NULL;
		r = hcluster_expand(c, d->files[k].path, i, NULL, NULL, 0, &path);
		if (!r)
			r = hcluster_expand(c, d->files[k].text, i, NULL, NULL, 0, &text);
		if (!r)
			r = write_file(c, path, text);
		free(path);
		free(text);
		if (r)
			return r;
	}
	if ((r = expand_strv(c, d->run.v, d->run.n, i, &argv)) || (r = expand_strv(c, d->env, d->nenv, i, &env)))
		goto out;
	const char *const *run = (const char *const *)argv;
	if (c->netns) { /* `ip netns exec NS command...`, which execs the command: the same pid */
		if (!(nsargv = calloc(NETNS_EXEC_ARGC + d->run.n + 1, sizeof(*nsargv)))) {
			r = cfail(c, ENOMEM, "out of memory");
			goto out;
		}
		netns_exec_prefix(&c->net, i, nsargv);
		for (size_t k = 0; k < d->run.n; k++)
			nsargv[NETNS_EXEC_ARGC + k] = argv[k];
		run = nsargv;
	}
	if ((size_t)snprintf(log, sizeof(log), "%s/%s.log", c->dir, c->names[i]) >= sizeof(log)) {
		r = cfail(c, ENAMETOOLONG, "%s: path too long", c->dir);
		goto out;
	}
	struct sup_spec spec = { .name = c->names[i], .argv = run,
				 .env = d->nenv ? (const char *const *)env : NULL, .cwd = c->dir, .log_path = log };
	if ((r = sup_add(&c->sup, &spec, &c->proc[i])))
		r = cfail(c, -r, "%s", c->sup.err);
out:
	free(nsargv);
	if (argv)
		free_strv(argv, d->run.n);
	if (env)
		free_strv(env, d->nenv);
	return r;
}

int hcluster_query(struct hcluster *c, unsigned node, const struct desc_query *q, unsigned timeout_ms, char **answer)
{
	char err[NET_ERR_SIZE];
	int r;

	*answer = NULL;
	if (q->tcp) {
		char *addr = NULL, *text = NULL;
		int fd = -1;
		struct net_inbox in = { 0 };
		size_t end;
		if ((r = hcluster_expand(c, q->tcp, node, NULL, NULL, 0, &addr)) ||
		    (r = hcluster_expand(c, q->send, node, NULL, NULL, 0, &text))) {
			free(addr);
			return r;
		}
		if ((r = net_connect(addr, timeout_ms, &fd, err)) || (r = net_send(fd, text, strlen(text), err)))
			r = cfail(c, -r, "%s: %s", c->names[node], err);
		/* until expect arrives, or the server closes (its whole answer) */
		if (!r && (r = net_expect(fd, &in, q->expect ? q->expect : "\x01never", timeout_ms, &end, err)) &&
		    !(r == -ECONNRESET && in.len))
			r = cfail(c, -r, "%s: %s", c->names[node], err);
		else
			r = 0;
		if (fd >= 0)
			close(fd);
		if (!r) {
			*answer = in.buf ? in.buf : strdup("");
			in.buf = NULL;
		}
		net_inbox_free(&in);
		free(addr);
		free(text);
	} else if (q->http) {
		char *url = NULL;
		int status = 0;
		if ((r = hcluster_expand(c, q->http, node, NULL, NULL, 0, &url)))
			return r;
		r = net_http_get(url, timeout_ms, &status, answer, err);
		if (r)
			r = cfail(c, -r, "%s: %s", c->names[node], err);
		else if (status != 200)
			r = cfail(c, EPROTO, "%s: GET http://%s: HTTP status %d", c->names[node], url, status);
		free(url);
	} else {
		char **argv;
		struct sup_output o = { 0 };
		char serr[SUP_ERR_SIZE] = "";
		if ((r = expand_strv(c, q->run.v, q->run.n, node, &argv)))
			return r;
		r = sup_run_capture((const char *const *)argv, NULL, timeout_ms, &o, serr);
		if (r)
			r = cfail(c, -r, "%s: %s: %s", c->names[node], argv[0], serr);
		else if (!WIFEXITED(o.status) || WEXITSTATUS(o.status))
			r = cfail(c, EPROTO, "%s: %s exited with %d: %.200s", c->names[node], argv[0],
				  WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1, o.err_out ? o.err_out : "");
		else
			*answer = o.out, o.out = NULL;
		sup_output_free(&o);
		free_strv(argv, q->run.n);
	}
	if (!r && q->expect && !strstr(*answer, q->expect))
		r = cfail(c, EAGAIN, "%s: the answer does not hold '%s': %.200s", c->names[node], q->expect, *answer);
	if (r) {
		free(*answer);
		*answer = NULL;
	}
	return r;
}

struct ready_arg {
	struct hcluster *c;
	unsigned node;
	int last;
};

static int ready_cond(void *arg)
{
	struct ready_arg *a = arg;
	char *answer;
	if (!hcluster_running(a->c, a->node) && sup_poll(&a->c->sup, a->c->proc[a->node]) == 1)
		return -ECHILD;
	a->last = hcluster_query(a->c, a->node, &a->c->d->ready, 1000, &answer);
	free(answer);
	return a->last == 0 ? 1 : 0;
}

static int wait_ready(struct hcluster *c, unsigned i)
{
	struct ready_arg a = { c, i, 0 };
	int r = sup_wait_until(ready_cond, &a, 100, c->d->ready_timeout_ms, NULL);
	if (r == -ECHILD) {
		char st[64];
		return cfail(c, ECHILD, "%s exited (%s) before it was ready: see %s/%s.log", c->names[i],
			     sup_status_str(c->sup.procs[c->proc[i]].status, st, sizeof(st)), c->dir, c->names[i]);
	}
	if (r) {
		char last[HCLUSTER_ERR_SIZE];
		snprintf(last, sizeof(last), "%s", c->err);
		return cfail(c, ETIMEDOUT, "%s was not ready after %u ms (%s); its log: %s/%s.log", c->names[i],
			     c->d->ready_timeout_ms, last, c->dir, c->names[i]);
	}
	return 0;
}

int hcluster_start(struct hcluster *c, const struct desc *d, const struct hcluster_opts *o)
{
	int r;
	memset(c, 0, sizeof(*c));
	c->d = d;
	c->n = o->nodes ? o->nodes : d->nodes_default;
	c->spawned = o->spawned;
	c->spawned_ctx = o->spawned_ctx;
	if (c->n < d->nodes_min || c->n > d->nodes_max || c->n > HCLUSTER_MAX_NODES)
		return cfail(c, EINVAL, "%s runs %u..%u nodes, not %u", d->name, d->nodes_min, d->nodes_max, c->n);
	snprintf(c->dir, sizeof(c->dir), "%s", o->work_dir);
	snprintf(c->binary, sizeof(c->binary), "%s", o->binary ? o->binary : d->binary);
	snprintf(c->tools, sizeof(c->tools), "%s", o->tools ? o->tools : "");
	if ((r = sup_mkdir_p(c->dir)))
		return cfail(c, -r, "creating %s: %s", c->dir, strerror(-r));
	for (unsigned i = 0; i < c->n; i++)
		if ((r = desc_node_name(d, i, c->names[i], sizeof(c->names[i]))))
			return cfail(c, -r, "out of memory");
	if ((r = pick_ports(c)))
		return r;
	if (o->netns) {
		if (c->n > NETNS_MAX_MEMBERS)
			return cfail(c, EINVAL, "partitions run at most %d nodes in namespaces, not %u", NETNS_MAX_MEMBERS,
				     c->n);
		if ((r = netns_net_create(&c->net, c->n)))
			return cfail(c, -r, "%s", c->net.err);
		c->netns = true;
	}
	sup_init(&c->sup, 0);
	c->sup_ready = true;
	c->sup.on_fork = on_fork;
	c->sup.on_fork_ctx = c;
	for (unsigned i = 0; i < c->n; i++)
		if ((r = add_node(c, i)))
			goto fail;
	for (unsigned i = 0; i < c->n; i++)
		if ((r = sup_start(&c->sup, c->proc[i]))) {
			r = cfail(c, -r, "%s", c->sup.err);
			goto fail;
		}
	for (unsigned i = 0; i < c->n; i++)
		if ((r = wait_ready(c, i)))
			goto fail;
	return 0;
fail:
	sup_fini(&c->sup);
	c->sup_ready = false;
	if (c->netns)
		netns_net_destroy(&c->net);
	c->netns = false;
	return r;
}

void hcluster_stop(struct hcluster *c)
{
	if (c->sup_ready)
		sup_fini(&c->sup);
	c->sup_ready = false;
	if (c->netns) /* after the nodes: nothing runs in the namespaces any more */
		netns_net_destroy(&c->net);
	c->netns = false;
	memset(c->cut, 0, sizeof(c->cut));
}

int hcluster_kill(struct hcluster *c, unsigned node)
{
	int r = sup_stop(&c->sup, c->proc[node], 0);
	return r ? cfail(c, -r, "killing %s: %s", c->names[node], c->sup.err) : 0;
}

int hcluster_pause(struct hcluster *c, unsigned node)
{
	int r = sup_signal(&c->sup, c->proc[node], SIGSTOP);
	return r ? cfail(c, -r, "pausing %s: %s", c->names[node], c->sup.err) : 0;
}

int hcluster_resume(struct hcluster *c, unsigned node)
{
	int r = sup_signal(&c->sup, c->proc[node], SIGCONT);
	return r ? cfail(c, -r, "resuming %s: %s", c->names[node], c->sup.err) : 0;
}

int hcluster_restart(struct hcluster *c, unsigned node)
{
	int r = sup_restart(&c->sup, c->proc[node]);
	if (r)
		return cfail(c, -r, "restarting %s: %s", c->names[node], c->sup.err);
	/* A node cut off stays cut off (its namespace's link is down): nothing can ask it yet. */
	return c->cut[node] ? 0 : wait_ready(c, node);
}

static int cut_op(struct hcluster *c, unsigned node, bool cut)
{
	const char *what = cut ? "partitioning" : "healing";
	if (!c->netns)
		return cfail(c, EINVAL, "%s %s: the nodes run on loopback, not in network namespaces", what,
			     c->names[node]);
	int r = cut ? netns_net_cut(&c->net, node) : netns_net_heal(&c->net, node);
	if (r)
		return cfail(c, -r, "%s %s: %s", what, c->names[node], c->net.err);
	c->cut[node] = cut;
	return 0;
}

int hcluster_partition(struct hcluster *c, unsigned node) { return cut_op(c, node, true); }
int hcluster_heal(struct hcluster *c, unsigned node) { return cut_op(c, node, false); }

/* The string at a dotted path of a JSON record, or NULL. */
static const char *json_path(spt_val *v, const char *path)
{
	char part[128];
	while (v && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		if (len >= sizeof(part))
			return NULL;
		memcpy(part, path, len);
		part[len] = 0;
		v = spt_is_fun(v) ? spt_rec_get(v, part) : NULL;
		path += len + (dot ? 1 : 0);
	}
	return v && v->kind == SPT_STR ? v->u.s : NULL;
}

int hcluster_leader_of(struct hcluster *c, unsigned node, long *leader)
{
	char *answer;
	*leader = -1;
	if (!c->d->status_leader && !c->d->status_leader_if)
		return cfail(c, ENOTSUP, "%s: the description's status names no leader", c->d->path);
	if (!hcluster_reachable(c, node))
		return 0;
	if (hcluster_query(c, node, &c->d->status, QUERY_TIMEOUT_MS, &answer))
		return 0; /* no answer: it names none */
	if (c->d->status_leader_if) { /* it names itself, or none */
		*leader = strstr(answer, c->d->status_leader_if) ? (long)node : -1;
		free(answer);
		return 0;
	}
	struct spt_arena a;
	struct spt_json_error je;
	spt_val *v;
	spt_arena_init(&a);
	if (!spt_json_parse(&a, answer, strlen(answer), 0, &v, &je)) {
		const char *name = json_path(v, c->d->status_leader);
		for (unsigned i = 0; name && i < c->n; i++)
			if (!strcmp(c->names[i], name))
				*leader = i;
	}
	spt_arena_fini(&a);
	free(answer);
	return 0;
}

int hcluster_leader(struct hcluster *c, unsigned *leader)
{
	unsigned votes[HCLUSTER_MAX_NODES] = { 0 }, live = 0;
	if (c->d->status_leader_if) { /* the one running node that says it leads */
		long found = -1;
		for (unsigned i = 0; i < c->n; i++) {
			long l;
			int r = hcluster_leader_of(c, i, &l);
			if (r)
				return r;
			if (l >= 0 && found >= 0)
				return -EAGAIN;
			if (l >= 0)
				found = l;
		}
		if (found < 0)
			return -EAGAIN;
		*leader = (unsigned)found;
		return 0;
	}
	for (unsigned i = 0; i < c->n; i++) {
		long l;
		int r = hcluster_leader_of(c, i, &l);
		if (r)
			return r;
		if (!hcluster_reachable(c, i))
			continue;
		live++;
		if (l >= 0 && hcluster_reachable(c, (unsigned)l))
			votes[l]++;
	}
	for (unsigned i = 0; i < c->n; i++)
		if (live && 2 * votes[i] > live) {
			*leader = i;
			return 0;
		}
	return -EAGAIN;
}

int hcluster_agreed(struct hcluster *c, unsigned *leader)
{
	if (c->d->status_leader_if) /* the followers' view is not asked */
		return hcluster_leader(c, leader);
	long agreed = -1;
	for (unsigned i = 0; i < c->n; i++) {
		long l;
		int r;
		if (!hcluster_reachable(c, i))
			continue;
		if ((r = hcluster_leader_of(c, i, &l)))
			return r;
		if (l < 0 || (agreed >= 0 && l != agreed) || !hcluster_reachable(c, (unsigned)l))
			return -EAGAIN;
		agreed = l;
	}
	if (agreed < 0)
		return -EAGAIN;
	*leader = (unsigned)agreed;
	return 0;
}
