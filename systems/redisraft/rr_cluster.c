/* A RedisRaft cluster under the supervisor (rr_cluster.h). */
#include "rr_cluster.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_TIMEOUT_MS 3000

static int fail(struct rr_cluster *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -err;
}

/* redis-cli -p port args...: 0 with o filled (free it), or a negative errno. */
static int cli_timeout(struct rr_cluster *c, unsigned port, const char *const *args, unsigned timeout_ms,
		       struct sup_output *o)
{
	const char *argv[16];
	char p[16], e[SUP_ERR_SIZE];
	size_t k = 0;
	int r;

	snprintf(p, sizeof(p), "%u", port);
	argv[k++] = c->redis_cli;
	argv[k++] = "-p";
	argv[k++] = p;
	for (size_t i = 0; args[i] && k < 15; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	memset(o, 0, sizeof(*o));
	r = sup_run_capture(argv, NULL, timeout_ms, o, e);
	if (r < 0) {
		sup_output_free(o);
		return fail(c, -r, "%s -p %u %s: %s", c->redis_cli, port, args[0], e);
	}
	return 0;
}

static int cli(struct rr_cluster *c, unsigned port, const char *const *args, struct sup_output *o)
{
	return cli_timeout(c, port, args, CLI_TIMEOUT_MS, o);
}

static int start_node(struct rr_cluster *c, unsigned i)
{
	int r = sup_start(&c->sup, c->node[i].proc);

	if (r)
		return fail(c, -r, "%s", c->sup.err);
	c->node[i].killed = c->node[i].paused = false;
	return 0;
}

static void on_fork(void *ctx, size_t proc, int pid)
{
	struct rr_cluster *c = ctx;

	for (unsigned i = 0; i < c->n; i++)
		if (c->node[i].proc == proc && c->spawned)
			c->spawned(c->spawned_ctx, i, pid);
}

static int answers_ping(void *arg)
{
	struct rr_cluster *c = ((void **)arg)[0];
	unsigned i = *(unsigned *)((void **)arg)[1];
	const char *args[] = {"PING", NULL};
	struct sup_output o;
	int up;

	if (sup_interrupted())
		return fail(c, EINTR, "interrupted by signal %d", sup_interrupted());
	if (!sup_running(&c->sup, c->node[i].proc))
		return fail(c, ECHILD, "%s exited during start (see %s)", c->node[i].name, c->node[i].log_path);
	if (cli(c, c->node[i].port, args, &o))
		return 0;
	up = strstr(o.out, "PONG") != NULL;
	sup_output_free(&o);
	return up;
}

/* RAFT.CLUSTER INIT or JOIN on node i: OK expected. */
static int form(struct rr_cluster *c, unsigned i)
{
	char to[32];
	const char *init[] = {"RAFT.CLUSTER", "INIT", NULL};
	const char *join[] = {"RAFT.CLUSTER", "JOIN", to, NULL};
	struct sup_output o;
	int r, ok;

	snprintf(to, sizeof(to), "127.0.0.1:%u", c->node[0].port);
	for (int tries = 0; tries < 20; tries++) {
		if ((r = cli(c, c->node[i].port, i ? join : init, &o)))
			return r;
		ok = strncmp(o.out, "OK", 2) == 0;
		if (!ok)
			fail(c, EPROTO, "%s: RAFT.CLUSTER %s answered: %.200s", c->node[i].name, i ? "JOIN" : "INIT",
			     o.out);
		sup_output_free(&o);
		if (ok)
			return 0;
		sup_sleep_ms(250);
	}
	return -EPROTO;
}

int rr_cluster_start(struct rr_cluster *c, const struct rr_cluster_opts *o)
{
	char idbuf[16], addr[32], port[16], el[16];
	int r;

	memset(c, 0, sizeof(*c));
	sup_init(&c->sup, 2000);
	c->sup.on_fork = on_fork;
	c->sup.on_fork_ctx = c;
	c->n = o->nodes ? o->nodes : 3;
	c->election_ms = o->election_ms;
	c->spawned = o->spawned;
	c->spawned_ctx = o->spawned_ctx;
	if (c->n > RR_MAX_NODES || !o->work_dir || !o->module)
		return fail(c, EINVAL, "redisraft cluster: need a work dir, a module and 1..%d nodes", RR_MAX_NODES);
	snprintf(c->work_dir, sizeof(c->work_dir), "%s", o->work_dir);
	snprintf(c->module, sizeof(c->module), "%s", o->module);
	snprintf(c->redis_cli, sizeof(c->redis_cli), "%s", o->redis_cli ? o->redis_cli : rr_programs[RR_PROG_CLI].path);
	if ((r = sup_mkdir_p(c->work_dir)))
		return fail(c, -r, "redisraft cluster: mkdir %s: %s", c->work_dir, strerror(-r));
	/* A block of n free ports. */
	for (unsigned base = o->base_port ? o->base_port : 21000; !c->base_port && base + c->n <= 65535;
	     base += c->n) {
		unsigned k = 0;

		while (k < c->n && sup_port_free(base + k) == 0)
			k++;
		if (k == c->n)
			c->base_port = base;
		else if (o->base_port)
			return fail(c, EADDRINUSE, "redisraft cluster: port %u (s%u) is busy", base + k, k + 1);
	}
	if (!c->base_port)
		return fail(c, EADDRINUSE, "redisraft cluster: no block of %u free ports", c->n);
	for (unsigned i = 0; i < c->n; i++) {
		struct rr_node *nd = &c->node[i];
		const char *argv[24];
		size_t k = 0;

		snprintf(nd->name, sizeof(nd->name), "s%c", (char)('1' + i));
		nd->port = c->base_port + i;
		snprintf(nd->dir, sizeof(nd->dir), "%.4000s/s%c", o->work_dir, (char)('1' + i));
		snprintf(nd->log_path, sizeof(nd->log_path), "%.4000s/s%c.log", o->work_dir, (char)('1' + i));
		if ((r = sup_mkdir_p(nd->dir)))
			return fail(c, -r, "redisraft cluster: mkdir %s: %s", nd->dir, strerror(-r));
		snprintf(port, sizeof(port), "%u", nd->port);
		snprintf(idbuf, sizeof(idbuf), "%u", i + 1);
		snprintf(addr, sizeof(addr), "127.0.0.1:%u", nd->port);
		argv[k++] = o->redis_server ? o->redis_server : rr_programs[RR_PROG_SERVER].path;
		argv[k++] = "--port", argv[k++] = port;
		argv[k++] = "--bind", argv[k++] = "127.0.0.1";
		argv[k++] = "--save", argv[k++] = "";
		argv[k++] = "--appendonly", argv[k++] = "no";
		argv[k++] = "--dir", argv[k++] = nd->dir;
		argv[k++] = "--loadmodule", argv[k++] = c->module;
		argv[k++] = "--raft.id", argv[k++] = idbuf;
		argv[k++] = "--raft.addr", argv[k++] = addr;
		argv[k++] = "--raft.log-filename", argv[k++] = "raftlog.db";
		if (c->election_ms) {
			snprintf(el, sizeof(el), "%u", c->election_ms);
			argv[k++] = "--raft.election-timeout", argv[k++] = el;
		}
		argv[k] = NULL;
		struct sup_spec spec = {.name = nd->name, .argv = argv, .cwd = nd->dir, .log_path = nd->log_path};
		if ((r = sup_add(&c->sup, &spec, &nd->proc)))
			return fail(c, -r, "%s", c->sup.err);
	}
	c->started = true;
	for (unsigned i = 0; i < c->n; i++)
		if ((r = start_node(c, i)))
			goto failed;
	for (unsigned i = 0; i < c->n; i++) {
		void *arg[2] = {c, &i};

		r = sup_wait_until(answers_ping, arg, 50, 10000, NULL);
		if (r == -ETIMEDOUT)
			fail(c, ETIMEDOUT, "%s (port %u) did not answer PING in 10 s (see %s)", c->node[i].name,
			     c->node[i].port, c->node[i].log_path);
		if (r)
			goto failed;
	}
	for (unsigned i = 0; i < c->n; i++) {
		if ((r = form(c, i)))
			goto failed;
		/* One membership change at a time: wait until the leader committed it. */
		if (i + 1 < c->n && (r = rr_cluster_wait_leader(c, 10000, 0, false, NULL, NULL)))
			goto failed;
	}
	return 0;
failed:
	sup_stop_all(&c->sup);
	return r;
}

void rr_cluster_stop(struct rr_cluster *c)
{
	if (!c->started)
		return;
	sup_fini(&c->sup);
	c->started = false;
}

static int64_t field_int(const char *text, const char *name, int64_t dflt)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
	return dflt;
}

static void field_str(const char *text, const char *name, char *out, size_t size)
{
	size_t n = strlen(name), k = 0;

	out[0] = 0;
	for (const char *p = text; (p = strstr(p, name)); p += n) {
		if ((p == text || p[-1] == '\n') && p[n] == ':') {
			p += n + 1;
			while (p[k] && p[k] != '\r' && p[k] != '\n' && k + 1 < size) {
				out[k] = p[k];
				k++;
			}
			out[k] = 0;
			return;
		}
	}
}

int rr_parse_info(const char *text, struct rr_info *st, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	field_str(text, "raft_role", st->role, sizeof(st->role));
	if (!st->role[0]) {
		snprintf(err, errlen, "INFO raft: no raft_role in \"%.100s\"", text);
		return -EPROTO;
	}
	field_str(text, "raft_state", st->state, sizeof(st->state));
	st->node_id = field_int(text, "raft_node_id", -1);
	st->leader_id = field_int(text, "raft_leader_id", -1);
	st->voted_for = field_int(text, "raft_voted_for", -1);
	st->term = field_int(text, "raft_current_term", -1);
	st->commit_index = field_int(text, "raft_commit_index", -1);
	st->current_index = field_int(text, "raft_current_index", -1);
	st->applied_index = field_int(text, "raft_last_applied_index", -1);
	st->reachable = true;
	return 0;
}

int rr_cluster_info(struct rr_cluster *c, unsigned i, struct rr_info *st)
{
	const char *args[] = {"INFO", "raft", NULL};
	struct sup_output o;
	int r;

	memset(st, 0, sizeof(*st));
	if (c->node[i].killed || c->node[i].paused || !sup_running(&c->sup, c->node[i].proc))
		return 0;
	if ((r = cli(c, c->node[i].port, args, &o)))
		return r;
	r = WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && rr_parse_info(o.out, st, c->err, sizeof(c->err)) == 0;
	sup_output_free(&o);
	return r;
}

struct leader_wait {
	struct rr_cluster *c;
	int64_t min_term;
	bool all;
	int leader;
	int64_t term;
	char seen[256];
};

static int leader_agreed(void *arg)
{
	struct leader_wait *w = arg;
	struct rr_info st[RR_MAX_NODES];
	int lead = -1;
	size_t k = 0;

	w->seen[0] = 0;
	if (sup_interrupted())
		return fail(w->c, EINTR, "interrupted by signal %d", sup_interrupted());
	for (unsigned i = 0; i < w->c->n; i++) {
		int r = rr_cluster_info(w->c, i, &st[i]);

		if (r < 0)
			return r;
		if (st[i].reachable) {
			k += (size_t)snprintf(w->seen + k, k < sizeof(w->seen) ? sizeof(w->seen) - k : 0,
					      "%s%s %s term %" PRId64 " leader %" PRId64, k ? ", " : "",
					      w->c->node[i].name, st[i].role, st[i].term, st[i].leader_id);
			if (k >= sizeof(w->seen))
				k = sizeof(w->seen) - 1;
		}
		if (st[i].reachable && !strcmp(st[i].role, "leader") && st[i].term > w->min_term &&
		    !strcmp(st[i].state, "up"))
			lead = (int)i;
	}
	if (lead < 0)
		return 0;
	for (unsigned i = 0; w->all && i < w->c->n; i++) {
		if (!st[i].reachable && (w->c->node[i].killed || w->c->node[i].paused))
			continue;
		if (!st[i].reachable || st[i].term != st[lead].term || st[i].leader_id != st[lead].node_id ||
		    st[i].commit_index != st[lead].commit_index || st[i].applied_index != st[i].commit_index)
			return 0;
	}
	/* The leader committed its whole log (the membership change or the no-op of its term). */
	if (st[lead].commit_index != st[lead].current_index)
		return 0;
	w->leader = lead;
	w->term = st[lead].term;
	return 1;
}

int rr_cluster_wait_leader(struct rr_cluster *c, unsigned timeout_ms, int64_t min_term, bool all_agree,
			   int *leader, int64_t *term)
{
	struct leader_wait w = {c, min_term, all_agree, -1, 0, ""};
	int r = sup_wait_until(leader_agreed, &w, 50, timeout_ms, NULL);

	if (r == -ETIMEDOUT)
		return fail(c, ETIMEDOUT, "no leader%s in a term above %" PRId64 " after %u ms (seen: %s)",
			    all_agree ? " agreed by every live node" : "", min_term, timeout_ms, w.seen);
	if (r)
		return r;
	if (leader)
		*leader = w.leader;
	if (term)
		*term = w.term;
	return 0;
}

int rr_cluster_kill(struct rr_cluster *c, unsigned i)
{
	int r = sup_stop(&c->sup, c->node[i].proc, 0);

	if (r)
		return fail(c, -r, "%s", c->sup.err);
	c->node[i].killed = true;
	c->node[i].paused = false;
	return 0;
}

int rr_cluster_pause(struct rr_cluster *c, unsigned i)
{
	int r = sup_signal(&c->sup, c->node[i].proc, SIGSTOP);

	if (r)
		return fail(c, -r, "%s", c->sup.err);
	c->node[i].paused = true;
	return 0;
}

int rr_cluster_resume(struct rr_cluster *c, unsigned i)
{
	int r = sup_signal(&c->sup, c->node[i].proc, SIGCONT);

	if (r)
		return fail(c, -r, "%s", c->sup.err);
	c->node[i].paused = false;
	return 0;
}

int rr_cluster_restart(struct rr_cluster *c, unsigned i)
{
	int r;

	if (sup_running(&c->sup, c->node[i].proc) && (r = rr_cluster_kill(c, i)))
		return r;
	return start_node(c, i);
}

int rr_cluster_pid(struct rr_cluster *c, unsigned i)
{
	return sup_running(&c->sup, c->node[i].proc) ? (int)c->sup.procs[c->node[i].proc].pid : 0;
}

int rr_cluster_incr(struct rr_cluster *c, unsigned i, const char *key, unsigned n, unsigned *acked,
		    unsigned *failed)
{
	char rep[16];
	const char *args[] = {"-r", rep, "INCR", key, NULL};
	struct sup_output o;
	unsigned ok = 0;
	int r;

	snprintf(rep, sizeof(rep), "%u", n);
	if ((r = cli(c, c->node[i].port, args, &o)))
		return r;
	for (const char *p = o.out; *p;) {
		const char *e = strchr(p, '\n');
		char *end;

		strtoll(p, &end, 10);
		ok += end != p && (*end == '\n' || *end == 0 || *end == '\r');
		if (!e)
			break;
		p = e + 1;
	}
	sup_output_free(&o);
	*acked = ok > n ? n : ok;
	*failed = n - *acked;
	return 0;
}

int rr_cluster_write_unacked(struct rr_cluster *c, unsigned i, const char *key, unsigned wait_ms)
{
	const char *args[] = {"INCR", key, NULL};
	struct sup_output o;
	int r = cli_timeout(c, c->node[i].port, args, wait_ms, &o);

	if (r == -ETIMEDOUT)
		return 0; /* as expected: the node could not commit it */
	if (r)
		return r;
	sup_output_free(&o);
	return fail(c, EPROTO, "INCR %s on %s was answered within %u ms: it should have waited for a quorum", key,
		    c->node[i].name, wait_ms);
}
