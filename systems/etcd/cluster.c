/* An etcd cluster on loopback or in network namespaces, run by the generic supervisor; see
 * cluster.h. */
#include "cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spectap/arena.h"
#include "spectap/json.h"
#include "spectap/value.h"

#define STATUS_TIMEOUT_MS 5000

static int cfail(struct etcd_cluster *c, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
	return -e;
}

bool etcd_available(const char *path)
{
	struct stat sb;
	if (!path)
		path = etcd_programs[ETCD_PROG_ETCD].path;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* The first busy port of the block at base (0 when all are free); *what names its use. */
static unsigned block_busy(unsigned base, unsigned n, char *what, size_t size, int *err)
{
	for (unsigned i = 0; i < 2 * n; i++) {
		int rc = sup_port_free(base + i);
		if (rc < 0) {
			snprintf(what, size, "n%u %s", i / 2 + 1, i % 2 ? "client" : "peer");
			*err = -rc;
			return base + i;
		}
	}
	return 0;
}

static void build_argv(const struct etcd_cluster *c, unsigned i, bool existing,
		       char bufs[][PATH_MAX + 64], const char **argv)
{
	const struct etcd_member *m = &c->m[i];
	size_t k = 0, b = 0;
#define ARG(s) (argv[k++] = (s))
#define ARGF(...) (snprintf(bufs[b], sizeof bufs[b], __VA_ARGS__), argv[k++] = bufs[b++])
	if (c->netns) {
		netns_exec_prefix(&c->net, i, argv);
		k = NETNS_EXEC_ARGC;
	}
	ARG(c->etcd);
	ARG("--name"), ARG(m->name);
	ARG("--data-dir"), ARG(m->data_dir);
	ARG("--listen-peer-urls"), ARGF("http://%s:%u", m->host, m->peer_port);
	ARG("--initial-advertise-peer-urls"), ARGF("http://%s:%u", m->host, m->peer_port);
	ARG("--listen-client-urls"), ARGF("http://%s:%u", m->host, m->client_port);
	ARG("--advertise-client-urls"), ARGF("http://%s:%u", m->host, m->client_port);
	ARG("--initial-cluster"), ARG(c->initial_cluster);
	ARG("--initial-cluster-state"), ARG(existing ? "existing" : "new");
	ARG("--initial-cluster-token"), ARGF("spectap-%u", c->base_port);
	ARG("--heartbeat-interval"), ARGF("%u", c->heartbeat_ms);
	ARG("--election-timeout"), ARGF("%u", c->election_ms);
	if (c->pre_vote)
		ARG("--pre-vote");
	ARG("--logger"), ARG("zap");
	ARG("--log-outputs"), ARG("stderr");
	argv[k] = NULL;
#undef ARG
#undef ARGF
}

#define ETCD_ARGC (40 + NETNS_EXEC_ARGC)

struct exec_wait {
	struct etcd_cluster *c;
	unsigned i;
	char etcd[PATH_MAX]; /* c->etcd, resolved */
};

static int etcd_execed(void *p)
{
	struct exec_wait *w = p;
	size_t proc = w->c->m[w->i].proc;
	if (sup_poll(&w->c->sup, proc) == 1)
		return -ECHILD;
	char path[64], exe[PATH_MAX];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)w->c->sup.procs[proc].pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	return strcmp(exe, w->etcd) == 0;
}

/* With netns, member i starts as `ip netns exec`, which enters the namespace and then execs
 * etcd: waits for that exec, so that etcd_cluster_pid names etcd's image from the start (for
 * /proc/<pid>/exe readers and uprobe attachment). */
static int wait_etcd_exec(struct etcd_cluster *c, unsigned i, const char *what)
{
	if (!c->netns)
		return 0;
	struct exec_wait w = {c, i, ""};
	if (!realpath(c->etcd, w.etcd))
		snprintf(w.etcd, sizeof w.etcd, "%s", c->etcd);
	int rc = sup_wait_until(etcd_execed, &w, 1, 5000, NULL);
	char sbuf[64];
	if (rc == -ECHILD)
		return cfail(c, ECHILD,
			     "%s %s: `ip netns exec %s %s` ended (%s) before etcd ran: see %s",
			     what, c->m[i].name, c->net.m[i].ns, c->etcd,
			     sup_status_str(c->sup.procs[c->m[i].proc].status, sbuf, sizeof sbuf),
			     c->m[i].log_path);
	if (rc < 0)
		return cfail(c, -rc, "%s %s: `ip netns exec %s` had not run %s after 5 s (see %s)",
			     what, c->m[i].name, c->net.m[i].ns, w.etcd, c->m[i].log_path);
	return 0;
}
#define ETCD_ARGBUFS 10

void etcd_cluster_stop(struct etcd_cluster *c)
{
	/* One member at a time: SIGTERM makes a leader hand its leadership over first, which
	 * stalls for seconds when every peer is shutting down at once, and takes tens of ms when
	 * they are up (docs/facts.md: SIGTERM of the leader causes no election). */
	/* Loads (added after the members) first: they would only see the members go. */
	for (size_t p = c->n; p < c->sup.n; p++)
		if (sup_running(&c->sup, p))
			sup_stop(&c->sup, p, c->sup.grace_ms);
	for (unsigned i = 0; i < c->n && i < c->sup.n; i++)
		sup_stop(&c->sup, c->m[i].proc, c->sup.grace_ms);
	sup_fini(&c->sup);
	c->started = false;
	for (unsigned i = 0; i < c->n; i++)
		c->m[i].killed = c->m[i].paused = c->m[i].partitioned = false;
	/* After the members: a namespace with processes in it outlives its deletion. */
	netns_net_destroy(&c->net);
	if (c->net.err[0])
		snprintf(c->err, sizeof c->err, "etcd cluster stop: %.700s", c->net.err);
}

/* The supervisor's fork hook: a member's pid, before its etcd runs (cluster.h: spawned). */
static void member_forked(void *ctx, size_t proc, int pid)
{
	struct etcd_cluster *c = ctx;
	for (unsigned i = 0; i < c->n; i++)
		if (c->m[i].proc == proc && c->spawned)
			c->spawned(c->spawned_ctx, i, pid);
}

int etcd_cluster_start(struct etcd_cluster *c, const struct etcd_cluster_opts *o)
{
	int rc = 0;
	memset(c, 0, sizeof *c);
	sup_init(&c->sup, o->grace_ms);
	c->sup.on_fork = member_forked;
	c->sup.on_fork_ctx = c;
	c->n = o->members ? o->members : 3;
	c->heartbeat_ms = o->heartbeat_ms ? o->heartbeat_ms : 100;
	c->election_ms = o->election_ms ? o->election_ms : 1000;
	c->pre_vote = o->pre_vote;
	c->spawned = o->spawned;
	c->spawned_ctx = o->spawned_ctx;
	if (c->n > ETCD_MAX_MEMBERS) {
		rc = cfail(c, EINVAL, "etcd cluster: %u members asked, at most %d", c->n,
			   ETCD_MAX_MEMBERS);
		goto fail;
	}
	if (!o->work_dir || !*o->work_dir) {
		rc = cfail(c, EINVAL, "etcd cluster: no work dir given");
		goto fail;
	}
	snprintf(c->etcd, sizeof c->etcd, "%s", o->etcd ? o->etcd : etcd_programs[ETCD_PROG_ETCD].path);
	snprintf(c->etcdctl, sizeof c->etcdctl, "%s", o->etcdctl ? o->etcdctl : etcd_programs[ETCD_PROG_ETCDCTL].path);
	if (snprintf(c->work_dir, sizeof c->work_dir, "%s", o->work_dir) >= (int)sizeof c->work_dir) {
		rc = cfail(c, ENAMETOOLONG, "etcd cluster: work dir %s: name too long", o->work_dir);
		goto fail;
	}
	if (!etcd_available(c->etcd)) {
		rc = cfail(c, ENOENT, "etcd cluster: %s is not an executable file", c->etcd);
		goto fail;
	}
	rc = sup_mkdir_p(c->work_dir);
	struct stat wsb;
	if (rc == 0 && (stat(c->work_dir, &wsb) < 0 || !S_ISDIR(wsb.st_mode)))
		rc = -ENOTDIR;
	if (rc < 0) {
		cfail(c, -rc, "etcd cluster: work dir %s: %s", c->work_dir, strerror(-rc));
		goto fail;
	}

	/* Ports: the given block must be free; without one, find a free block. Members in their
	 * own namespaces have addresses of their own: any block is free there. */
	char what[32];
	int perr = 0;
	unsigned busy;
	if (o->netns) {
		unsigned base = o->base_port ? o->base_port : 20000;
		if (base + 2 * c->n - 1 > 65535) {
			rc = cfail(c, EINVAL, "etcd cluster: ports %u..%u out of range", base,
				   base + 2 * c->n - 1);
			goto fail;
		}
		c->base_port = base;
	} else if (o->base_port) {
		if (o->base_port + 2 * c->n - 1 > 65535) {
			rc = cfail(c, EINVAL, "etcd cluster: ports %u..%u out of range", o->base_port,
				   o->base_port + 2 * c->n - 1);
			goto fail;
		}
		busy = block_busy(o->base_port, c->n, what, sizeof what, &perr);
		if (busy) {
			rc = cfail(c, EADDRINUSE, "etcd cluster: port %u (%s) is busy: %s", busy, what,
				   strerror(perr));
			goto fail;
		}
		c->base_port = o->base_port;
	} else {
		unsigned step = 2 * c->n, span = 10000 / step;
		unsigned first = (unsigned)getpid() % span;
		for (unsigned t = 0; t < span && !c->base_port; t++) {
			unsigned base = 20000 + ((first + t) % span) * step;
			if (!block_busy(base, c->n, what, sizeof what, &perr))
				c->base_port = base;
		}
		if (!c->base_port) {
			rc = cfail(c, EADDRINUSE, "etcd cluster: no free block of %u ports in 20000..29999",
				   step);
			goto fail;
		}
	}

	if (o->netns) {
		rc = netns_net_create(&c->net, c->n);
		if (rc < 0) {
			cfail(c, -rc, "etcd cluster: %s", c->net.err);
			goto fail;
		}
		c->netns = true;
	}

	size_t off = 0;
	for (unsigned i = 0; i < c->n; i++) {
		struct etcd_member *m = &c->m[i];
		char dd[PATH_MAX], lp[PATH_MAX];
		snprintf(m->name, sizeof m->name, "n%u", (i + 1) % 100);
		snprintf(m->host, sizeof m->host, "%s", c->netns ? c->net.m[i].addr : "127.0.0.1");
		m->peer_port = c->base_port + 2 * i;
		m->client_port = c->base_port + 2 * i + 1;
		if (snprintf(dd, sizeof dd, "%s/n%u.etcd", o->work_dir, i + 1) >= (int)sizeof dd ||
		    snprintf(lp, sizeof lp, "%s/n%u.log", o->work_dir, i + 1) >= (int)sizeof lp) {
			rc = cfail(c, ENAMETOOLONG, "etcd cluster: work dir %s: name too long",
				   c->work_dir);
			goto fail;
		}
		memcpy(m->data_dir, dd, sizeof dd);
		memcpy(m->log_path, lp, sizeof lp);
		struct stat sb;
		if (stat(m->data_dir, &sb) == 0) {
			rc = cfail(c, EEXIST,
				   "etcd cluster: data dir %s already exists (use a fresh work dir)",
				   m->data_dir);
			goto fail;
		}
		off += (size_t)snprintf(c->initial_cluster + off, sizeof c->initial_cluster - off,
					"%s%s=http://%s:%u", i ? "," : "", m->name, m->host, m->peer_port);
	}

	for (unsigned i = 0; i < c->n; i++) {
		struct etcd_member *m = &c->m[i];
		char bufs[ETCD_ARGBUFS][PATH_MAX + 64];
		const char *argv[ETCD_ARGC];
		build_argv(c, i, false, bufs, argv);
		struct sup_spec spec = {m->name, argv, NULL, c->work_dir, m->log_path};
		rc = sup_add(&c->sup, &spec, &m->proc);
		if (rc < 0)
			goto sup_failed;
	}
	for (unsigned i = 0; i < c->n; i++) {
		rc = sup_start(&c->sup, c->m[i].proc);
		if (rc < 0)
			goto sup_failed;
	}
	for (unsigned i = 0; i < c->n; i++) {
		rc = wait_etcd_exec(c, i, "etcd cluster: start");
		if (rc < 0)
			goto fail;
	}
	c->launched_ms = sup_now_ms();
	c->started = true;
	return 0;

sup_failed:
	cfail(c, -rc, "etcd cluster: %s", c->sup.err);
fail:;
	char saved[ETCD_ERR_SIZE];
	memcpy(saved, c->err, sizeof saved);
	etcd_cluster_stop(c);
	memcpy(c->err, saved, sizeof saved);
	return rc;
}

/* True when host:port accepts a TCP connection (instant either way on loopback, and on the
 * bridge to a member that is not partitioned: its address answers with RST). */
static bool port_listening(const char *host, unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true; /* cannot tell: let etcdctl find out */
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		close(fd);
		return true;
	}
	int rc;
	do
		rc = connect(fd, (struct sockaddr *)&a, sizeof a);
	while (rc < 0 && errno == EINTR);
	close(fd);
	return rc == 0;
}

static void endpoints(const struct etcd_cluster *c, bool all, bool probe, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < c->n; i++) {
		if (!all && (c->m[i].killed || c->m[i].paused || c->m[i].partitioned))
			continue;
		if (probe && !port_listening(c->m[i].host, c->m[i].client_port))
			continue;
		int w = snprintf(buf + off, size - off, "%s%s:%u", off ? "," : "", c->m[i].host,
				 c->m[i].client_port);
		if (w < 0 || (size_t)w >= size - off)
			return;
		off += (size_t)w;
	}
}

void etcd_cluster_endpoints(const struct etcd_cluster *c, bool all, char *buf, size_t size)
{
	endpoints(c, all, false, buf, size);
}

/* ---- parsing `endpoint status -w json` ---- */

/* Copies text with every bare integer (digits only, outside strings) quoted. */
static char *quote_integers(const char *s, size_t len, size_t *outlen)
{
	char *o = malloc(2 * len + 1);
	size_t k = 0;
	if (!o)
		return NULL;
	for (size_t i = 0; i < len;) {
		char ch = s[i];
		if (ch == '"') {
			o[k++] = s[i++];
			while (i < len && s[i] != '"') {
				if (s[i] == '\\' && i + 1 < len)
					o[k++] = s[i++];
				o[k++] = s[i++];
			}
			if (i < len)
				o[k++] = s[i++];
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			size_t j = i;
			bool plain = true;
			while (j < len && (strchr("+-.eE", s[j]) || (s[j] >= '0' && s[j] <= '9'))) {
				if (s[j] < '0' || s[j] > '9')
					plain = false;
				j++;
			}
			if (plain)
				o[k++] = '"';
			memcpy(o + k, s + i, j - i);
			k += j - i;
			if (plain)
				o[k++] = '"';
			i = j;
		} else {
			o[k++] = s[i++];
		}
	}
	o[k] = '\0';
	*outlen = k;
	return o;
}

/* An exact unsigned 64-bit field: a quoted decimal, or a non-negative int. Absent: 0
 * (etcd omits zero fields). */
static int get_u64(spt_val *rec, const char *name, uint64_t *out)
{
	*out = 0;
	spt_val *v = rec ? spt_rec_get(rec, name) : NULL;
	if (!v)
		return 0;
	if (v->kind == SPT_INT) {
		if (v->u.i < 0)
			return -ERANGE;
		*out = (uint64_t)v->u.i;
		return 0;
	}
	if (v->kind != SPT_STR || v->n == 0 || v->n > 20)
		return -EINVAL;
	uint64_t x = 0;
	for (uint32_t i = 0; i < v->n; i++) {
		unsigned d = (unsigned)(v->u.s[i] - '0');
		if (d > 9)
			return -EINVAL;
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

int etcd_parse_status(const char *text, size_t len, struct etcd_member_status *out, size_t max,
		      size_t *n, char *err, size_t errsize)
{
	struct spt_arena a;
	struct spt_json_error je;
	spt_val *root = NULL;
	size_t qlen = 0;
	int rc = 0;
	char *q = quote_integers(text, len, &qlen);
	spt_arena_init(&a);
	*n = 0;
	if (!q) {
		rc = -ENOMEM;
		snprintf(err, errsize, "endpoint status: out of memory");
		goto out;
	}
	memset(&je, 0, sizeof je);
	rc = spt_json_parse(&a, q, qlen, 0, &root, &je);
	if (rc < 0) {
		spt_json_locate(q, qlen, &je);
		snprintf(err, errsize, "endpoint status JSON, line %u col %u: %s", je.line, je.col,
			 je.msg);
		goto out;
	}
	size_t count = root->kind == SPT_SEQ ? root->n : 1;
	if (root->kind == SPT_REC && root->n == 0)
		count = 0;
	else if (root->kind != SPT_SEQ && root->kind != SPT_REC) {
		rc = -EINVAL;
		snprintf(err, errsize, "endpoint status JSON: an array of endpoints expected");
		goto out;
	}
	for (size_t i = 0; i < count && *n < max; i++) {
		spt_val *e = root->kind == SPT_SEQ ? root->u.elems[i] : root;
		spt_val *ep = e->kind == SPT_REC ? spt_rec_get(e, "Endpoint") : NULL;
		spt_val *stv = e->kind == SPT_REC ? spt_rec_get(e, "Status") : NULL;
		if (!ep || ep->kind != SPT_STR || !stv || stv->kind != SPT_REC) {
			rc = -EINVAL;
			snprintf(err, errsize,
				 "endpoint status JSON: entry %zu lacks Endpoint or Status", i);
			goto out;
		}
		struct etcd_member_status *s = &out[*n];
		memset(s, 0, sizeof *s);
		snprintf(s->endpoint, sizeof s->endpoint, "%s", ep->u.s);
		spt_val *hdr = spt_rec_get(stv, "header");
		if (hdr && hdr->kind != SPT_REC)
			hdr = NULL;
		struct {
			spt_val *rec;
			const char *name;
			uint64_t *dst;
		} f[] = {
			{hdr, "member_id", &s->id},          {hdr, "cluster_id", &s->cluster_id},
			{hdr, "revision", &s->revision},     {stv, "leader", &s->leader},
			{stv, "raftTerm", &s->term},         {stv, "raftIndex", &s->raft_index},
			{stv, "raftAppliedIndex", &s->applied_index},
		};
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
			rc = get_u64(f[k].rec, f[k].name, f[k].dst);
			if (rc < 0) {
				snprintf(err, errsize,
					 "endpoint status JSON: %s of %s is not an unsigned 64-bit integer",
					 f[k].name, s->endpoint);
				goto out;
			}
		}
		if (!hdr || s->id == 0) {
			rc = -EINVAL;
			snprintf(err, errsize, "endpoint status JSON: no member id for %s",
				 s->endpoint);
			goto out;
		}
		s->reachable = true;
		(*n)++;
	}
out:
	spt_arena_fini(&a);
	free(q);
	return rc;
}

/* ---- queries ---- */

int etcd_cluster_member_of(const struct etcd_cluster *c, uint64_t id)
{
	for (unsigned i = 0; id && i < c->n; i++)
		if (c->m[i].id == id)
			return (int)i;
	return -1;
}

int etcd_cluster_status(struct etcd_cluster *c, struct etcd_member_status *st)
{
	char eps[ETCD_MAX_MEMBERS * 24], arg[sizeof eps + 16];
	struct etcd_member_status got[ETCD_MAX_MEMBERS];
	struct sup_output o;
	size_t ngot = 0;
	int rc, reachable = 0;

	for (unsigned i = 0; i < c->n; i++) {
		memset(&st[i], 0, sizeof st[i]);
		snprintf(st[i].endpoint, sizeof st[i].endpoint, "%s:%u", c->m[i].host,
			 c->m[i].client_port);
	}
	/* A member that refuses connections (not listening yet, or gone) would cost etcdctl its
	 * whole timeout: leave it out, it is unreachable. */
	endpoints(c, false, true, eps, sizeof eps);
	if (!eps[0])
		return 0;
	snprintf(arg, sizeof arg, "--endpoints=%s", eps);
	const char *argv[] = {c->etcdctl, arg, "--dial-timeout=1s", "--command-timeout=2s",
			      "endpoint", "status", "-w", "json", NULL};
	const char *env[] = {"ETCDCTL_API=3", NULL};
	rc = sup_run_capture(argv, env, STATUS_TIMEOUT_MS, &o, c->err);
	if (rc < 0)
		goto out;
	/* Unreachable members only go to stderr: parse whatever stdout holds. */
	size_t i = 0;
	while (i < o.out_len && (o.out[i] == ' ' || o.out[i] == '\n' || o.out[i] == '\r'))
		i++;
	if (i == o.out_len)
		goto out;
	rc = etcd_parse_status(o.out, o.out_len, got, ETCD_MAX_MEMBERS, &ngot, c->err,
			       sizeof c->err);
	if (rc < 0)
		goto out;
	for (size_t k = 0; k < ngot; k++) {
		for (unsigned m = 0; m < c->n; m++) {
			if (strcmp(got[k].endpoint, st[m].endpoint) != 0)
				continue;
			st[m] = got[k];
			c->m[m].id = got[k].id;
			reachable++;
		}
	}
	rc = reachable;
out:
	sup_output_free(&o);
	return rc;
}

int etcd_cluster_find_leader(const struct etcd_cluster *c, const struct etcd_member_status *st,
			     struct etcd_leader *l)
{
	memset(l, 0, sizeof *l);
	l->index = -1;
	for (unsigned i = 0; i < c->n; i++) {
		if (!st[i].reachable)
			continue;
		l->reachable++;
		if (!st[i].leader)
			continue;
		unsigned agree = 0;
		for (unsigned j = 0; j < c->n; j++)
			agree += st[j].reachable && st[j].leader == st[i].leader &&
				 st[j].term == st[i].term;
		if (agree > l->agree || (agree == l->agree && st[i].term > l->term)) {
			l->agree = agree;
			l->id = st[i].leader;
			l->term = st[i].term;
		}
	}
	int idx = etcd_cluster_member_of(c, l->id);
	if (idx < 0 || !st[idx].reachable || st[idx].leader != st[idx].id)
		return -EAGAIN;
	l->index = idx;
	return 0;
}

struct wait_leader_arg {
	struct etcd_cluster *c;
	uint64_t min_term;
	bool all_agree;
	struct etcd_leader l;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	bool seen;
};

static int leader_ready(void *p)
{
	struct wait_leader_arg *w = p;
	struct etcd_cluster *c = w->c;
	int rc = etcd_cluster_status(c, w->st);
	if (rc < 0)
		return rc;
	w->seen = true;
	if (etcd_cluster_find_leader(c, w->st, &w->l) < 0)
		return 0;
	if (w->l.term <= w->min_term || 2 * w->l.agree <= c->n)
		return 0;
	if (w->all_agree) {
		unsigned live = 0;
		for (unsigned i = 0; i < c->n; i++)
			live += !c->m[i].killed && !c->m[i].paused && !c->m[i].partitioned;
		if (w->l.agree < live)
			return 0;
	}
	return 1;
}

int etcd_cluster_wait_leader(struct etcd_cluster *c, unsigned timeout_ms, uint64_t min_term,
			     bool all_agree, struct etcd_leader *l, unsigned *elapsed_ms)
{
	struct wait_leader_arg w;
	memset(&w, 0, sizeof w);
	w.c = c;
	w.min_term = min_term;
	w.all_agree = all_agree;
	int rc = sup_wait_until(leader_ready, &w, 20, timeout_ms, elapsed_ms);
	if (l)
		*l = w.l;
	if (rc == -ETIMEDOUT) {
		size_t off = (size_t)snprintf(c->err, sizeof c->err,
					      "no leader%s with term > %llu after %u ms; last seen:",
					      all_agree ? " agreed by all live members" : "",
					      (unsigned long long)min_term, timeout_ms);
		for (unsigned i = 0; w.seen && i < c->n && off < sizeof c->err; i++) {
			const struct etcd_member_status *s = &w.st[i];
			int k;
			if (s->reachable)
				k = snprintf(c->err + off, sizeof c->err - off,
					     " %s: leader %llx term %llu;", c->m[i].name,
					     (unsigned long long)s->leader,
					     (unsigned long long)s->term);
			else
				k = snprintf(c->err + off, sizeof c->err - off, " %s: %s;",
					     c->m[i].name,
					     c->m[i].killed        ? "killed"
					     : c->m[i].paused      ? "paused"
					     : c->m[i].partitioned ? "partitioned"
								   : "unreachable");
			if (k < 0)
				break;
			off += (size_t)k;
		}
	}
	return rc;
}

/* ---- faults ---- */

static int bad_member(struct etcd_cluster *c, unsigned i, const char *what)
{
	if (i < c->n && c->started)
		return 0;
	return cfail(c, EINVAL, "%s: no member %u (cluster of %u%s)", what, i, c->n,
		     c->started ? "" : ", not started");
}

int etcd_cluster_kill(struct etcd_cluster *c, unsigned i)
{
	int rc = bad_member(c, i, "kill");
	if (rc < 0)
		return rc;
	rc = sup_stop(&c->sup, c->m[i].proc, 0);
	if (rc < 0)
		return cfail(c, -rc, "kill %s: %s", c->m[i].name, c->sup.err);
	c->m[i].killed = true;
	c->m[i].paused = false;
	return 0;
}

static int send_signal(struct etcd_cluster *c, unsigned i, int sig, const char *what)
{
	int rc = bad_member(c, i, what);
	if (rc < 0)
		return rc;
	rc = sup_signal(&c->sup, c->m[i].proc, sig);
	if (rc < 0)
		return cfail(c, -rc, "%s %s: %s", what, c->m[i].name, c->sup.err);
	c->m[i].paused = sig == SIGSTOP;
	return 0;
}

int etcd_cluster_pause(struct etcd_cluster *c, unsigned i) { return send_signal(c, i, SIGSTOP, "pause"); }
int etcd_cluster_resume(struct etcd_cluster *c, unsigned i) { return send_signal(c, i, SIGCONT, "resume"); }

int etcd_cluster_restart(struct etcd_cluster *c, unsigned i)
{
	int rc = bad_member(c, i, "restart");
	if (rc < 0)
		return rc;
	char bufs[ETCD_ARGBUFS][PATH_MAX + 64];
	const char *argv[ETCD_ARGC];
	build_argv(c, i, true, bufs, argv);
	rc = sup_set_argv(&c->sup, c->m[i].proc, argv);
	if (rc == 0)
		rc = sup_restart(&c->sup, c->m[i].proc);
	if (rc < 0)
		return cfail(c, -rc, "restart %s: %s", c->m[i].name, c->sup.err);
	c->m[i].killed = false;
	c->m[i].paused = false;
	/* A partitioned member stays cut off: its namespace's link is still down. */
	return wait_etcd_exec(c, i, "restart");
}

int etcd_cluster_pid(struct etcd_cluster *c, unsigned i)
{
	if (i >= c->n || !c->started || !sup_running(&c->sup, c->m[i].proc))
		return 0;
	return (int)c->sup.procs[c->m[i].proc].pid;
}

int etcd_cluster_put(struct etcd_cluster *c, const char *key, const char *value,
		     unsigned timeout_ms)
{
	char eps[ETCD_MAX_MEMBERS * 24], arg[sizeof eps + 16], ct[32];
	struct sup_output o;
	char sbuf[64];
	etcd_cluster_endpoints(c, false, eps, sizeof eps);
	if (!eps[0])
		return cfail(c, ENOTCONN, "put %s: no live member", key);
	if (!timeout_ms)
		timeout_ms = 5000;
	snprintf(arg, sizeof arg, "--endpoints=%s", eps);
	snprintf(ct, sizeof ct, "--command-timeout=%ums", timeout_ms);
	const char *argv[] = {c->etcdctl, arg, "--dial-timeout=1s", ct, "put", "--", key, value, NULL};
	const char *env[] = {"ETCDCTL_API=3", NULL};
	int rc = sup_run_capture(argv, env, timeout_ms + 2000, &o, c->err);
	if (rc == 0 && !(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 &&
			 strncmp(o.out, "OK", 2) == 0)) {
		size_t el = o.err_len;
		while (el && (o.err_out[el - 1] == '\n' || o.err_out[el - 1] == '\r'))
			el--;
		const char *tail = o.err_out + (el > 200 ? el - 200 : 0);
		rc = cfail(c, EIO, "put %s: etcdctl %s: %.*s", key,
			   sup_status_str(o.status, sbuf, sizeof sbuf),
			   (int)(el > 200 ? 200 : el), tail);
	}
	sup_output_free(&o);
	return rc;
}

int etcd_cluster_member_status(struct etcd_cluster *c, unsigned i, struct etcd_member_status *st)
{
	int rc = bad_member(c, i, "member status");
	if (rc < 0)
		return rc;
	struct etcd_member *m = &c->m[i];
	memset(st, 0, sizeof *st);
	snprintf(st->endpoint, sizeof st->endpoint, "%s:%u", m->host, m->client_port);
	if (m->killed || m->paused) /* a stopped one would cost the whole timeout */
		return 0;
	char arg[96];
	const char *argv[16];
	size_t k = 0;
	if (c->netns) {
		netns_exec_prefix(&c->net, i, argv);
		k = NETNS_EXEC_ARGC;
	}
	snprintf(arg, sizeof arg, "--endpoints=%s", st->endpoint);
	const char *tail[] = {c->etcdctl, arg, "--dial-timeout=1s", "--command-timeout=2s",
			      "endpoint", "status", "-w", "json", NULL};
	for (size_t t = 0; t < sizeof tail / sizeof tail[0]; t++)
		argv[k++] = tail[t];
	const char *env[] = {"ETCDCTL_API=3", NULL};
	struct sup_output o;
	struct etcd_member_status got;
	size_t n = 0;
	rc = sup_run_capture(argv, env, STATUS_TIMEOUT_MS, &o, c->err);
	if (rc == 0) {
		size_t p = 0;
		while (p < o.out_len && (o.out[p] == ' ' || o.out[p] == '\n' || o.out[p] == '\r'))
			p++;
		if (p < o.out_len)
			rc = etcd_parse_status(o.out, o.out_len, &got, 1, &n, c->err, sizeof c->err);
	}
	sup_output_free(&o);
	if (rc < 0)
		return cfail(c, -rc, "member status %s: %.600s", m->name, c->err);
	if (n == 0)
		return 0;
	*st = got;
	m->id = got.id;
	return 1;
}

/* ---- partitions ---- */

static int partition_op(struct etcd_cluster *c, unsigned i, bool cut)
{
	const char *what = cut ? "partition" : "heal";
	int rc = bad_member(c, i, what);
	if (rc < 0)
		return rc;
	if (!c->netns)
		return cfail(c, EOPNOTSUPP,
			     "%s %s: the cluster runs on loopback; start it with opts.netns (as root) "
			     "to partition members",
			     what, c->m[i].name);
	rc = cut ? netns_net_cut(&c->net, i) : netns_net_heal(&c->net, i);
	if (rc < 0)
		return cfail(c, -rc, "%s %s: %s", what, c->m[i].name, c->net.err);
	c->m[i].partitioned = cut;
	return 0;
}

int etcd_cluster_partition(struct etcd_cluster *c, unsigned i) { return partition_op(c, i, true); }
int etcd_cluster_heal(struct etcd_cluster *c, unsigned i) { return partition_op(c, i, false); }

/* ---- put load ---- */

/* A number field as a double: an int, or a non-integer number kept as text. */
static int get_double(spt_val *rec, const char *name, double *out)
{
	spt_val *v = spt_rec_get(rec, name);
	*out = 0;
	if (!v)
		return -ENOENT;
	if (v->kind == SPT_INT) {
		*out = (double)v->u.i;
		return 0;
	}
	if (v->kind != SPT_STR || v->hint != SPT_HINT_NUMBER)
		return -EINVAL;
	char *end;
	*out = strtod(v->u.s, &end);
	return *end ? -EINVAL : 0;
}

int etcd_parse_load_summary(const char *text, size_t len, struct etcd_load_result *r, char *err,
			    size_t errsize)
{
	static const char head[] = "{\"puts\":";
	const char *line = NULL;
	size_t llen = 0;
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		if (j - i >= sizeof head - 1 && memcmp(text + i, head, sizeof head - 1) == 0) {
			line = text + i;
			llen = j - i;
		}
		i = j + 1;
	}
	r->puts = r->acked = r->failed = 0;
	r->seconds = r->per_second = r->p50_ms = r->p99_ms = 0;
	r->first_error[0] = '\0';
	if (!line) {
		snprintf(err, errsize, "putload summary: no line starting with {\"puts\": in its output");
		return -ENOENT;
	}
	struct spt_arena a;
	struct spt_json_error je;
	spt_val *root = NULL;
	int rc;
	spt_arena_init(&a);
	memset(&je, 0, sizeof je);
	rc = spt_json_parse(&a, line, llen, 0, &root, &je);
	if (rc < 0) {
		snprintf(err, errsize, "putload summary: col %zu: %s", je.offset + 1, je.msg);
		goto out;
	}
	if (root->kind != SPT_REC) {
		rc = -EINVAL;
		snprintf(err, errsize, "putload summary: not a JSON object");
		goto out;
	}
	struct {
		const char *name;
		uint64_t *dst;
	} ints[] = {{"puts", &r->puts}, {"acked", &r->acked}, {"failed", &r->failed}};
	for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
		rc = spt_rec_get(root, ints[k].name) ? get_u64(root, ints[k].name, ints[k].dst)
						     : -ENOENT;
		if (rc < 0) {
			snprintf(err, errsize, "putload summary: %s %s", ints[k].name,
				 rc == -ENOENT ? "missing" : "is not a non-negative integer");
			rc = -EINVAL;
			goto out;
		}
	}
	struct {
		const char *name;
		double *dst;
	} dbl[] = {{"seconds", &r->seconds}, {"per_second", &r->per_second},
		   {"p50_ms", &r->p50_ms}, {"p99_ms", &r->p99_ms}};
	for (size_t k = 0; k < sizeof dbl / sizeof dbl[0]; k++) {
		rc = get_double(root, dbl[k].name, dbl[k].dst);
		if (rc < 0) {
			snprintf(err, errsize, "putload summary: %s %s", dbl[k].name,
				 rc == -ENOENT ? "missing" : "is not a number");
			rc = -EINVAL;
			goto out;
		}
	}
	spt_val *fe = spt_rec_get(root, "first_error");
	if (fe && fe->kind == SPT_STR)
		snprintf(r->first_error, sizeof r->first_error, "%s", fe->u.s);
	rc = 0;
out:
	spt_arena_fini(&a);
	return rc;
}

/* The last max bytes of a file (malloc'ed, NUL-terminated), or NULL. */
static char *read_tail(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat sb;
	char *buf = NULL;
	if (fstat(fd, &sb) == 0 && (buf = malloc(max + 1))) {
		off_t from = sb.st_size > (off_t)max ? sb.st_size - (off_t)max : 0;
		ssize_t r = pread(fd, buf, max, from);
		*len = r > 0 ? (size_t)r : 0;
		buf[*len] = '\0';
	}
	close(fd);
	return buf;
}

#define LOAD_LOG_MAX (1 << 20)

/* Fills r from the load's log once putload is reaped. */
static int load_collect(struct etcd_cluster *c, struct etcd_load *l, struct etcd_load_result *r)
{
	char sbuf[64], perr[256];
	size_t len = 0;
	memset(r, 0, sizeof *r);
	snprintf(r->acked_path, sizeof r->acked_path, "%s", l->acked_path);
	snprintf(r->log_path, sizeof r->log_path, "%s", l->log_path);
	r->status = c->sup.procs[l->proc].status;
	l->running = false;
	char *text = read_tail(l->log_path, LOAD_LOG_MAX, &len);
	int terr = errno;
	int prc = text ? etcd_parse_load_summary(text, len, r, perr, sizeof perr) : -ENOENT;
	if (!text)
		snprintf(perr, sizeof perr, "cannot read the log: %s", strerror(terr));
	int rc = 0;
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0 || prc < 0) {
		/* The last line of the log says why. */
		size_t e = len, b;
		while (e && (text[e - 1] == '\n' || text[e - 1] == '\r'))
			e--;
		for (b = e; b && text[b - 1] != '\n'; b--)
			;
		rc = cfail(c, EIO, "load%u: putload %s%s%s; last line of %s: %.*s", l->id,
			   sup_status_str(r->status, sbuf, sizeof sbuf), prc < 0 ? ", " : "",
			   prc < 0 ? perr : "", l->log_path, (int)(e - b > 300 ? 300 : e - b),
			   text ? text + b : "");
	}
	free(text);
	return rc;
}

int etcd_cluster_load_start(struct etcd_cluster *c, const char *putload_path,
			    const struct etcd_load_opts *o, struct etcd_load *l)
{
	memset(l, 0, sizeof *l);
	if (!c->started)
		return cfail(c, EINVAL, "load: the cluster is not started");
	if (!putload_path || !*putload_path)
		return cfail(c, EINVAL, "load: no putload binary given (build it with "
					"`make build/tools/putload`)");
	struct stat sb;
	if (stat(putload_path, &sb) < 0 || !S_ISREG(sb.st_mode) || access(putload_path, X_OK) < 0)
		return cfail(c, ENOENT,
			     "load: %s is not an executable file (build it with "
			     "`make build/tools/putload`)",
			     putload_path);
	if (!o->count && !o->duration_ms)
		return cfail(c, EINVAL, "load: give a count of puts or a duration");
	char eps[ETCD_MAX_MEMBERS * 24];
	endpoints(c, o->all_endpoints, false, eps, sizeof eps);
	if (!eps[0])
		return cfail(c, ENOTCONN, "load: no live member to send puts to");
	unsigned conc = o->concurrency ? o->concurrency : 1;
	unsigned pt = o->put_timeout_ms ? o->put_timeout_ms : 2000;
	uint64_t total = o->timeout_ms;
	if (!total)
		total = (o->count ? (uint64_t)o->count * pt / conc : (uint64_t)o->duration_ms + pt) +
			(o->rate && o->count ? (uint64_t)o->count * 1000 / o->rate : 0) + 10000;
	l->id = ++c->loads;
	l->put_timeout_ms = pt;
	if (snprintf(l->log_path, sizeof l->log_path, "%s/load%u.log", c->work_dir, l->id) >=
		    (int)sizeof l->log_path ||
	    snprintf(l->acked_path, sizeof l->acked_path, "%s/load%u.acked", c->work_dir, l->id) >=
		    (int)sizeof l->acked_path)
		return cfail(c, ENAMETOOLONG, "load%u: work dir %s: name too long", l->id,
			     c->work_dir);
	unlink(l->log_path);
	unlink(l->acked_path);

	char name[16], a_eps[sizeof eps + 16], a_n[32], a_c[32], a_p[128], a_v[32], a_t[32], a_r[32];
	snprintf(name, sizeof name, "load%u", l->id);
	snprintf(a_eps, sizeof a_eps, "--endpoints=%s", eps);
	if (o->count)
		snprintf(a_n, sizeof a_n, "--count=%u", o->count);
	else
		snprintf(a_n, sizeof a_n, "--duration=%ums", o->duration_ms);
	snprintf(a_c, sizeof a_c, "--concurrency=%u", conc);
	if (o->prefix)
		snprintf(a_p, sizeof a_p, "--prefix=%s", o->prefix);
	else
		snprintf(a_p, sizeof a_p, "--prefix=load%u-", l->id);
	snprintf(a_v, sizeof a_v, "--value-size=%u", o->value_size ? o->value_size : 16);
	snprintf(a_t, sizeof a_t, "--timeout=%ums", pt);
	snprintf(a_r, sizeof a_r, "--rate=%u", o->rate);
	const char *argv[] = {putload_path, a_eps, a_n, a_c, a_p, a_v, a_t, "--json", "--acked",
			      l->acked_path, o->rate ? a_r : NULL, NULL};
	struct sup_spec spec = {name, argv, NULL, c->work_dir, l->log_path};
	int rc = sup_add(&c->sup, &spec, &l->proc);
	if (rc == 0)
		rc = sup_start(&c->sup, l->proc);
	if (rc < 0)
		return cfail(c, -rc, "load%u: %s", l->id, c->sup.err);
	l->running = true;
	l->deadline_ms = sup_now_ms() + total;
	return 0;
}

/* SIGTERM (putload then stops issuing puts and prints its summary), SIGKILL if it lingers. */
static void load_end(struct etcd_cluster *c, struct etcd_load *l)
{
	if (sup_signal(&c->sup, l->proc, SIGTERM) == 0 &&
	    sup_wait_exit(&c->sup, l->proc, l->put_timeout_ms + 3000, NULL) == 0)
		return;
	sup_stop(&c->sup, l->proc, 0);
}

int etcd_cluster_load_wait(struct etcd_cluster *c, struct etcd_load *l, struct etcd_load_result *r)
{
	memset(r, 0, sizeof *r);
	if (!l->running || l->proc >= c->sup.n)
		return cfail(c, EINVAL, "load%u: not running (never started, or already collected)",
			     l->id);
	uint64_t now = sup_now_ms();
	unsigned left = l->deadline_ms > now ? (unsigned)(l->deadline_ms - now) : 0;
	int rc = sup_wait_exit(&c->sup, l->proc, left, NULL);
	if (rc == -ETIMEDOUT) {
		load_end(c, l);
		int crc = load_collect(c, l, r);
		char why[ETCD_ERR_SIZE];
		snprintf(why, sizeof why, "%s", crc < 0 ? c->err : "");
		return cfail(c, ETIMEDOUT,
			     "load%u: still running at its deadline: stopped (give a larger "
			     "timeout_ms)%s%.500s",
			     l->id, crc < 0 ? "; " : "", why);
	}
	if (rc < 0) {
		l->running = false;
		return cfail(c, -rc, "load%u: %s", l->id, c->sup.err);
	}
	return load_collect(c, l, r);
}

int etcd_cluster_load_stop(struct etcd_cluster *c, struct etcd_load *l, struct etcd_load_result *r)
{
	memset(r, 0, sizeof *r);
	if (!l->running || l->proc >= c->sup.n)
		return cfail(c, EINVAL, "load%u: not running (never started, or already collected)",
			     l->id);
	load_end(c, l);
	return load_collect(c, l, r);
}

int64_t etcd_cluster_load_acked(const struct etcd_load *l)
{
	int fd = open(l->acked_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	char buf[65536];
	int64_t lines = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < r; i++)
			lines += buf[i] == '\n';
	int err = r < 0 ? -errno : 0;
	close(fd);
	return err ? err : lines;
}

int etcd_cluster_load(struct etcd_cluster *c, const char *putload_path,
		      const struct etcd_load_opts *o, struct etcd_load_result *r)
{
	struct etcd_load l;
	memset(r, 0, sizeof *r);
	int rc = etcd_cluster_load_start(c, putload_path, o, &l);
	return rc < 0 ? rc : etcd_cluster_load_wait(c, &l, r);
}
