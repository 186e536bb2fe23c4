/* A ZooKeeper ensemble on loopback, run by the generic supervisor; see ensemble.h. */
#include "ensemble.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SRVR_TIMEOUT_MS 1500

static int efail(struct zk_ensemble *e, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, sizeof e->err, fmt, ap);
	va_end(ap);
	return -err;
}

static int sfail(char *err, size_t size, int e, const char *fmt, ...)
{
	if (err && size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return -e;
}

const char *zk_mode_name(enum zk_mode m)
{
	switch (m) {
	case ZK_MODE_LEADER: return "leader";
	case ZK_MODE_FOLLOWER: return "follower";
	case ZK_MODE_OBSERVER: return "observer";
	case ZK_MODE_STANDALONE: return "standalone";
	case ZK_MODE_READ_ONLY: return "read-only";
	case ZK_MODE_UNKNOWN: break;
	}
	return "unknown";
}

/* The jar (its manifest's Class-Path brings the rest of /usr/share/java) and a logger. */
static const char *default_classpath(void)
{
	static char cp[2 * PATH_MAX + 2];
	if (!cp[0])
		snprintf(cp, sizeof cp, "%s:%s", zk_programs[ZK_PROG_JAR].path, zk_programs[ZK_PROG_SLF4J].path);
	return cp;
}

int zk_available(const char *java, const char *jar, char *err, size_t errsize)
{
	if (!jar)
		jar = zk_programs[ZK_PROG_JAR].path;
	if (access(jar, R_OK) < 0)
		return sfail(err, errsize, errno,
			     "ZooKeeper jar %s: %s (install Debian's ZooKeeper: apt-get install -y zookeeper)",
			     jar, strerror(errno));
	if (!java)
		java = ZK_DEFAULT_JAVA;
	const char *argv[] = {java, "-version", NULL};
	struct sup_output o;
	char serr[SUP_ERR_SIZE] = "";
	int rc = sup_run_capture(argv, NULL, 20000, &o, serr);
	if (rc < 0)
		return sfail(err, errsize, -rc, "%s -version: %s (install a JRE: apt-get install -y openjdk-17-jre-headless)",
			     java, serr);
	int st = o.status;
	sup_output_free(&o);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char sb[64];
		return sfail(err, errsize, ENOEXEC, "%s -version ended with %s", java,
			     sup_status_str(st, sb, sizeof sb));
	}
	return 0;
}

static const char *const port_use[3] = {"client", "quorum", "election"};

/* The first busy port of the block at base (0 when all are free); *what names its use. */
static unsigned block_busy(unsigned base, unsigned n, char *what, size_t size, int *err)
{
	for (unsigned i = 0; i < 3 * n; i++) {
		int rc = sup_port_free(base + i);
		if (rc < 0) {
			snprintf(what, size, "zk%u %s", i / 3 + 1, port_use[i % 3]);
			*err = -rc;
			return base + i;
		}
	}
	return 0;
}

static int write_file(const char *path, const char *text, char *err, size_t errsize)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return sfail(err, errsize, errno, "create %s: %s", path, strerror(errno));
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			return sfail(err, errsize, e, "write %s: %s", path, strerror(e));
		}
		off += (size_t)w;
	}
	if (close(fd) < 0)
		return sfail(err, errsize, errno, "close %s: %s", path, strerror(errno));
	return 0;
}

/* zoo.cfg of server i. */
static int write_config(struct zk_ensemble *e, unsigned i)
{
	const struct zk_server *s = &e->s[i];
	char text[4096];
	size_t off = 0;
#define PUT(...) (off += (size_t)snprintf(text + off, off < sizeof text ? sizeof text - off : 0, __VA_ARGS__))
	PUT("# written by spectap (systems/zookeeper/ensemble.c)\n");
	PUT("tickTime=%u\ninitLimit=%u\nsyncLimit=%u\n", e->tick_ms, e->init_limit, e->sync_limit);
	PUT("dataDir=%s\n", s->data_dir);
	PUT("clientPort=%u\nclientPortAddress=127.0.0.1\n", s->client_port);
	PUT("admin.enableServer=false\n4lw.commands.whitelist=*\nstandaloneEnabled=false\n");
	for (unsigned k = 0; k < e->n; k++)
		PUT("server.%u=127.0.0.1:%u:%u\n", e->s[k].myid, e->s[k].quorum_port,
		    e->s[k].election_port);
#undef PUT
	if (off >= sizeof text)
		return efail(e, ENAMETOOLONG, "zookeeper ensemble: %s: configuration too long",
			     s->cfg_path);
	char err[512];
	int rc = write_file(s->cfg_path, text, err, sizeof err);
	if (rc < 0)
		return efail(e, -rc, "zookeeper ensemble: %s", err);
	char myid[16];
	char path[PATH_MAX + 8];
	snprintf(myid, sizeof myid, "%u\n", s->myid);
	snprintf(path, sizeof path, "%s/myid", s->data_dir);
	rc = write_file(path, myid, err, sizeof err);
	if (rc < 0)
		return efail(e, -rc, "zookeeper ensemble: %s", err);
	return 0;
}

#define ZK_ARGC 64

/* argv of server i; strings in bufs. */
static int build_argv(struct zk_ensemble *e, unsigned i, char *agentarg, size_t agentsize,
		      const char **argv)
{
	const struct zk_server *s = &e->s[i];
	size_t k = 0;
	argv[k++] = e->java;
	if (e->agent[0]) {
		int w = snprintf(agentarg, agentsize, "-agentpath:%s=node=%u%s%s%s%s", e->agent,
				 s->myid, s->agent_out[0] ? ",out=" : "", s->agent_out,
				 e->agent_options[0] ? "," : "", e->agent_options);
		if (w < 0 || (size_t)w >= agentsize)
			return efail(e, ENAMETOOLONG, "zookeeper ensemble: -agentpath argument too long");
		argv[k++] = agentarg;
	}
	for (char **a = e->jvm_args; a && *a; a++) {
		if (k >= ZK_ARGC - 5)
			return efail(e, E2BIG, "zookeeper ensemble: too many JVM arguments (at most %d)",
				     ZK_ARGC - 6);
		argv[k++] = *a;
	}
	argv[k++] = "-cp";
	argv[k++] = e->classpath;
	argv[k++] = ZK_MAIN_CLASS;
	argv[k++] = s->cfg_path;
	argv[k] = NULL;
	return 0;
}

void zk_ensemble_stop(struct zk_ensemble *e)
{
	sup_fini(&e->sup); /* SIGTERM to all at once, SIGKILL after the grace, reaped */
	e->started = false;
	for (unsigned i = 0; i < e->n; i++)
		e->s[i].killed = e->s[i].paused = false;
	if (e->jvm_args) {
		for (char **a = e->jvm_args; *a; a++)
			free(*a);
		free(e->jvm_args);
		e->jvm_args = NULL;
	}
}

static int copy_str(struct zk_ensemble *e, char *dst, size_t size, const char *src, const char *what)
{
	if (snprintf(dst, size, "%s", src) >= (int)size)
		return efail(e, ENAMETOOLONG, "zookeeper ensemble: %s %s: too long", what, src);
	return 0;
}

/* The supervisor's fork hook: a server's pid, before its JVM runs (ensemble.h: spawned). */
static void server_forked(void *ctx, size_t proc, int pid)
{
	struct zk_ensemble *e = ctx;
	for (unsigned i = 0; i < e->n; i++)
		if (e->s[i].proc == proc && e->spawned)
			e->spawned(e->spawned_ctx, i, pid);
}

int zk_ensemble_start(struct zk_ensemble *e, const struct zk_ensemble_opts *o)
{
	int rc = 0;
	memset(e, 0, sizeof *e);
	sup_init(&e->sup, o->grace_ms);
	e->sup.on_fork = server_forked;
	e->sup.on_fork_ctx = e;
	e->n = o->servers ? o->servers : 3;
	e->tick_ms = o->tick_ms ? o->tick_ms : 2000;
	e->init_limit = o->init_limit ? o->init_limit : 10;
	e->sync_limit = o->sync_limit ? o->sync_limit : 5;
	e->spawned = o->spawned;
	e->spawned_ctx = o->spawned_ctx;
	if (e->n > ZK_MAX_SERVERS) {
		rc = efail(e, EINVAL, "zookeeper ensemble: %u servers asked, at most %d", e->n,
			   ZK_MAX_SERVERS);
		e->n = 0;
		goto fail;
	}
	if (!o->work_dir || !*o->work_dir) {
		rc = efail(e, EINVAL, "zookeeper ensemble: no work dir given");
		goto fail;
	}
	const char *java = o->java ? o->java : ZK_DEFAULT_JAVA;
	if ((rc = copy_str(e, e->java, sizeof e->java, java, "java")) ||
	    (rc = copy_str(e, e->classpath, sizeof e->classpath,
			   o->classpath ? o->classpath : default_classpath(), "class path")) ||
	    (rc = copy_str(e, e->work_dir, sizeof e->work_dir, o->work_dir, "work dir")) ||
	    (rc = copy_str(e, e->agent_options, sizeof e->agent_options,
			   o->agent_options ? o->agent_options : "", "agent options")))
		goto fail;
	if (o->agent) {
		if (!realpath(o->agent, e->agent)) {
			rc = efail(e, errno, "zookeeper ensemble: agent %s: %s (build it first)",
				   o->agent, strerror(errno));
			goto fail;
		}
		if (strchr(e->agent, '=') || strchr(e->agent, ',')) {
			rc = efail(e, EINVAL, "zookeeper ensemble: agent path %s holds '=' or ','",
				   e->agent);
			goto fail;
		}
	}
	if (o->jvm_args) {
		size_t n = 0;
		while (o->jvm_args[n])
			n++;
		e->jvm_args = calloc(n + 1, sizeof *e->jvm_args);
		if (!e->jvm_args) {
			rc = efail(e, ENOMEM, "zookeeper ensemble: out of memory");
			goto fail;
		}
		for (size_t k = 0; k < n; k++)
			if (!(e->jvm_args[k] = strdup(o->jvm_args[k]))) {
				rc = efail(e, ENOMEM, "zookeeper ensemble: out of memory");
				goto fail;
			}
	}
	/* The jar must be there; each element of the class path is checked. */
	{
		char cp[PATH_MAX], *save = NULL;
		snprintf(cp, sizeof cp, "%s", e->classpath);
		for (char *p = strtok_r(cp, ":", &save); p; p = strtok_r(NULL, ":", &save))
			if (access(p, R_OK) < 0) {
				rc = efail(e, errno,
					   "zookeeper ensemble: class path element %s: %s (install Debian's "
					   "zookeeper: apt-get install -y zookeeper)",
					   p, strerror(errno));
				goto fail;
			}
	}
	rc = sup_mkdir_p(e->work_dir);
	struct stat wsb;
	if (rc == 0 && (stat(e->work_dir, &wsb) < 0 || !S_ISDIR(wsb.st_mode)))
		rc = -ENOTDIR;
	if (rc < 0) {
		efail(e, -rc, "zookeeper ensemble: work dir %s: %s", e->work_dir, strerror(-rc));
		goto fail;
	}

	/* Ports: the given block must be free; without one, find a free block. */
	char what[32];
	int perr = 0;
	if (o->base_port) {
		if (o->base_port + 3 * e->n - 1 > 65535) {
			rc = efail(e, EINVAL, "zookeeper ensemble: ports %u..%u out of range",
				   o->base_port, o->base_port + 3 * e->n - 1);
			goto fail;
		}
		unsigned busy = block_busy(o->base_port, e->n, what, sizeof what, &perr);
		if (busy) {
			rc = efail(e, EADDRINUSE,
				   "zookeeper ensemble: port %u (%s) is busy: %s (choose another base port)",
				   busy, what, strerror(perr));
			goto fail;
		}
		e->base_port = o->base_port;
	} else {
		unsigned step = 3 * e->n, span = 9000 / step;
		unsigned first = (unsigned)getpid() % span;
		for (unsigned t = 0; t < span && !e->base_port; t++) {
			unsigned base = 21000 + ((first + t) % span) * step;
			if (!block_busy(base, e->n, what, sizeof what, &perr))
				e->base_port = base;
		}
		if (!e->base_port) {
			rc = efail(e, EADDRINUSE,
				   "zookeeper ensemble: no free block of %u ports in 21000..29999", step);
			goto fail;
		}
	}

	for (unsigned i = 0; i < e->n; i++) {
		struct zk_server *s = &e->s[i];
		snprintf(s->name, sizeof s->name, "zk%u", (i + 1) % 100);
		s->myid = i + 1;
		s->client_port = e->base_port + 3 * i;
		s->quorum_port = e->base_port + 3 * i + 1;
		s->election_port = e->base_port + 3 * i + 2;
		int w1 = snprintf(s->dir, sizeof s->dir, "%s/zk%u", e->work_dir, i + 1);
		int w2 = snprintf(s->data_dir, sizeof s->data_dir, "%s/zk%u/data", e->work_dir, i + 1);
		int w3 = snprintf(s->cfg_path, sizeof s->cfg_path, "%s/zk%u/zoo.cfg", e->work_dir, i + 1);
		int w4 = snprintf(s->log_path, sizeof s->log_path, "%s/zk%u.log", e->work_dir, i + 1);
		int w5 = 0;
		if (e->agent[0] && o->agent_out)
			w5 = snprintf(s->agent_out, sizeof s->agent_out, "%s/zk%u.agent.ndjson",
				      e->work_dir, i + 1);
		if (w1 >= (int)sizeof s->dir || w2 >= (int)sizeof s->data_dir ||
		    w3 >= (int)sizeof s->cfg_path || w4 >= (int)sizeof s->log_path ||
		    w5 >= (int)sizeof s->agent_out) {
			rc = efail(e, ENAMETOOLONG, "zookeeper ensemble: work dir %s: name too long",
				   e->work_dir);
			goto fail;
		}
		if (s->agent_out[0] && (strchr(s->agent_out, ',') || strchr(s->agent_out, '='))) {
			rc = efail(e, EINVAL, "zookeeper ensemble: agent output %s holds '=' or ','",
				   s->agent_out);
			goto fail;
		}
		struct stat sb;
		if (stat(s->dir, &sb) == 0) {
			rc = efail(e, EEXIST,
				   "zookeeper ensemble: %s already exists (use a fresh work dir)", s->dir);
			goto fail;
		}
		rc = sup_mkdir_p(s->data_dir);
		if (rc < 0) {
			efail(e, -rc, "zookeeper ensemble: create %s: %s", s->data_dir, strerror(-rc));
			goto fail;
		}
	}
	for (unsigned i = 0; i < e->n; i++)
		if ((rc = write_config(e, i)) < 0)
			goto fail;

	for (unsigned i = 0; i < e->n; i++) {
		struct zk_server *s = &e->s[i];
		char agentarg[PATH_MAX * 2 + 600];
		const char *argv[ZK_ARGC];
		if ((rc = build_argv(e, i, agentarg, sizeof agentarg, argv)) < 0)
			goto fail;
		struct sup_spec spec = {s->name, argv, NULL, s->dir, s->log_path};
		rc = sup_add(&e->sup, &spec, &s->proc);
		if (rc < 0)
			goto sup_failed;
	}
	for (unsigned i = 0; i < e->n; i++) {
		rc = sup_start(&e->sup, e->s[i].proc);
		if (rc < 0)
			goto sup_failed;
		e->s[i].runs = 1;
	}
	e->launched_ms = sup_now_ms();
	e->started = true;
	return 0;

sup_failed:
	efail(e, -rc, "zookeeper ensemble: %s", e->sup.err);
fail:;
	char saved[ZK_ERR_SIZE];
	memcpy(saved, e->err, sizeof saved);
	zk_ensemble_stop(e);
	memcpy(e->err, saved, sizeof saved);
	return rc;
}

/* ---- the four-letter-word client ---- */

static int remaining_ms(uint64_t deadline)
{
	uint64_t now = sup_now_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

int zk_four_letter(unsigned port, const char *word, unsigned timeout_ms, char **out, size_t *len,
		   char *err, size_t errsize)
{
	*out = NULL;
	*len = 0;
	if (strlen(word) != 4)
		return sfail(err, errsize, EINVAL, "four-letter word \"%s\" is not 4 letters", word);
	uint64_t deadline = sup_now_ms() + timeout_ms;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return sfail(err, errsize, errno, "%s to 127.0.0.1:%u: socket: %s", word, port,
			     strerror(errno));
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int rc = 0;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (errno != EINPROGRESS) {
			rc = sfail(err, errsize, errno, "%s to 127.0.0.1:%u: connect: %s", word, port,
				   strerror(errno));
			goto out;
		}
		struct pollfd p = {fd, POLLOUT, 0};
		int pr;
		do
			pr = poll(&p, 1, remaining_ms(deadline));
		while (pr < 0 && errno == EINTR);
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (pr == 0) {
			rc = sfail(err, errsize, ETIMEDOUT, "%s to 127.0.0.1:%u: connect timed out after %u ms",
				   word, port, timeout_ms);
			goto out;
		}
		if (pr < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			int e2 = soerr ? soerr : errno;
			rc = sfail(err, errsize, e2, "%s to 127.0.0.1:%u: connect: %s", word, port,
				   strerror(e2));
			goto out;
		}
	}
	for (size_t off = 0; off < 4;) {
		ssize_t w = send(fd, word + off, 4 - off, MSG_NOSIGNAL);
		if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
			struct pollfd p = {fd, POLLOUT, 0};
			if (poll(&p, 1, remaining_ms(deadline)) == 0) {
				rc = sfail(err, errsize, ETIMEDOUT, "%s to 127.0.0.1:%u: send timed out",
					   word, port);
				goto out;
			}
			continue;
		}
		if (w < 0) {
			rc = sfail(err, errsize, errno, "%s to 127.0.0.1:%u: send: %s", word, port,
				   strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	for (;;) {
		if (cap - n < 4096) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				rc = sfail(err, errsize, ENOMEM, "%s to 127.0.0.1:%u: out of memory", word, port);
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
		if (r > 0) {
			n += (size_t)r;
			continue;
		}
		if (r == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			struct pollfd p = {fd, POLLIN, 0};
			int ms = remaining_ms(deadline);
			int pr = ms ? poll(&p, 1, ms) : 0;
			if (pr == 0) {
				rc = sfail(err, errsize, ETIMEDOUT,
					   "%s to 127.0.0.1:%u: no complete answer within %u ms (%zu bytes)",
					   word, port, timeout_ms, n);
				goto out;
			}
			continue;
		}
		if (errno == ECONNRESET && n > 0)
			break; /* ZooKeeper may reset after answering */
		rc = sfail(err, errsize, errno, "%s to 127.0.0.1:%u: recv: %s", word, port,
			   strerror(errno));
		goto out;
	}
	if (!buf && !(buf = malloc(1))) {
		rc = sfail(err, errsize, ENOMEM, "%s to 127.0.0.1:%u: out of memory", word, port);
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

/* The value after "key:" on a line of text, NUL-terminated into v; false when absent. */
static bool line_value(const char *text, size_t len, const char *key, char *v, size_t vsize)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		if (j - i > kl && !memcmp(text + i, key, kl) && text[i + kl] == ':') {
			size_t s = i + kl + 1;
			while (s < j && text[s] == ' ')
				s++;
			size_t e = j;
			while (e > s && (text[e - 1] == '\r' || text[e - 1] == ' '))
				e--;
			size_t l = e - s < vsize - 1 ? e - s : vsize - 1;
			memcpy(v, text + s, l);
			v[l] = '\0';
			return true;
		}
		i = j + 1;
	}
	return false;
}

int zk_parse_srvr(const char *text, size_t len, struct zk_srvr *out, char *err, size_t errsize)
{
	memset(out, 0, sizeof *out);
	out->node_count = -1;
	out->reachable = true;
	static const char not_serving[] = "This ZooKeeper instance is not currently serving requests";
	if (len >= sizeof not_serving - 1 && !memcmp(text, not_serving, sizeof not_serving - 1))
		return 0;
	char v[128];
	if (!line_value(text, len, "Mode", v, sizeof v))
		return sfail(err, errsize, EINVAL, "srvr answer has no \"Mode:\" line: \"%.80s\"", text);
	out->serving = true;
	if (!strcmp(v, "leader"))
		out->mode = ZK_MODE_LEADER;
	else if (!strcmp(v, "follower"))
		out->mode = ZK_MODE_FOLLOWER;
	else if (!strcmp(v, "observer"))
		out->mode = ZK_MODE_OBSERVER;
	else if (!strcmp(v, "standalone"))
		out->mode = ZK_MODE_STANDALONE;
	else if (!strcmp(v, "read-only"))
		out->mode = ZK_MODE_READ_ONLY;
	else
		return sfail(err, errsize, EINVAL, "srvr answer: unknown mode \"%s\"", v);
	if (!line_value(text, len, "Zxid", v, sizeof v))
		return sfail(err, errsize, EINVAL, "srvr answer has no \"Zxid:\" line");
	char *end = NULL;
	errno = 0;
	unsigned long long z = strtoull(v, &end, 16);
	if (errno || end == v || *end)
		return sfail(err, errsize, EINVAL, "srvr answer: bad zxid \"%s\"", v);
	out->zxid = (uint64_t)z;
	out->epoch = out->zxid >> 32;
	if (line_value(text, len, "Node count", v, sizeof v))
		out->node_count = strtoll(v, NULL, 10);
	if (line_value(text, len, "Zookeeper version", v, sizeof v))
		snprintf(out->version, sizeof out->version, "%.95s", v);
	return 0;
}

int zk_ensemble_srvr(struct zk_ensemble *e, unsigned i, struct zk_srvr *st)
{
	memset(st, 0, sizeof *st);
	st->node_count = -1;
	if (i >= e->n)
		return efail(e, EINVAL, "srvr: no server %u (ensemble of %u)", i, e->n);
	if (e->s[i].killed || e->s[i].paused || !sup_running(&e->sup, e->s[i].proc))
		return 0;
	char *text = NULL, err[256];
	size_t len = 0;
	int rc = zk_four_letter(e->s[i].client_port, "srvr", SRVR_TIMEOUT_MS, &text, &len, err,
				sizeof err);
	if (rc < 0) /* not listening yet, or busy: not an error of ours */
		return 0;
	if (len == 0) { /* closed without a word (starting up, or shutting down) */
		free(text);
		return 0;
	}
	rc = zk_parse_srvr(text, len, st, err, sizeof err);
	free(text);
	if (rc < 0) {
		memset(st, 0, sizeof *st);
		return efail(e, -rc, "srvr of %s (127.0.0.1:%u): %s", e->s[i].name,
			     e->s[i].client_port, err);
	}
	return 1;
}

int zk_ensemble_status(struct zk_ensemble *e, struct zk_srvr *st)
{
	int answered = 0;
	for (unsigned i = 0; i < e->n; i++) {
		int rc = zk_ensemble_srvr(e, i, &st[i]);
		if (rc < 0)
			return rc;
		answered += rc;
	}
	return answered;
}

/* zk_synced_followers from the leader's `mntr`, or -1. */
static long synced_followers(struct zk_ensemble *e, unsigned i)
{
	char *text = NULL, err[256], v[64];
	size_t len = 0;
	if (zk_four_letter(e->s[i].client_port, "mntr", SRVR_TIMEOUT_MS, &text, &len, err,
			   sizeof err) < 0)
		return -1;
	long r = -1;
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (!strncmp(p, "zk_synced_followers\t", 20)) {
			size_t l = nl ? (size_t)(nl - p - 20) : strlen(p + 20);
			if (l >= sizeof v)
				l = sizeof v - 1;
			memcpy(v, p + 20, l);
			v[l] = '\0';
			r = strtol(v, NULL, 10);
			break;
		}
		p = nl ? nl + 1 : NULL;
	}
	free(text);
	return r;
}

int zk_ensemble_find_leader(const struct zk_ensemble *e, const struct zk_srvr *st,
			    struct zk_leader *l)
{
	memset(l, 0, sizeof *l);
	l->index = -1;
	for (unsigned i = 0; i < e->n; i++) {
		if (!st[i].reachable)
			continue;
		l->reachable++;
		if (st[i].mode == ZK_MODE_LEADER && (l->index < 0 || st[i].epoch > l->epoch)) {
			l->index = (int)i;
			l->epoch = st[i].epoch;
			l->zxid = st[i].zxid;
			l->myid = e->s[i].myid;
		}
	}
	if (l->index < 0)
		return -EAGAIN;
	/* Followers report their own last zxid (0 before the first write), not the epoch: those
	 * serving count, and the leader's synced followers (wait_leader asks) bound them. */
	for (unsigned i = 0; i < e->n; i++)
		if (st[i].reachable && st[i].serving &&
		    (st[i].mode == ZK_MODE_FOLLOWER || (int)i == l->index))
			l->agree++;
	return l->agree >= e->n / 2 + 1 ? 0 : -EAGAIN;
}

struct wait_arg {
	struct zk_ensemble *e;
	uint64_t min_epoch;
	bool all_agree;
	struct zk_leader l;
	struct zk_srvr st[ZK_MAX_SERVERS];
	long synced;
	bool seen;
	int died; /* index of a server that exited, or -1 */
};

static int leader_ready(void *p)
{
	struct wait_arg *w = p;
	struct zk_ensemble *e = w->e;
	for (unsigned i = 0; i < e->n; i++)
		if (!e->s[i].killed && sup_poll(&e->sup, e->s[i].proc) == 1) {
			w->died = (int)i;
			return -ECHILD;
		}
	int rc = zk_ensemble_status(e, w->st);
	if (rc < 0)
		return rc;
	w->seen = true;
	w->synced = -1;
	if (zk_ensemble_find_leader(e, w->st, &w->l) < 0 || w->l.epoch <= w->min_epoch)
		return 0;
	/* The leader itself counts the followers synced with it: a quorum must be, and with
	 * all_agree every live server must serve as its follower. */
	w->synced = synced_followers(e, (unsigned)w->l.index);
	if (w->synced < 0 || (unsigned long)w->synced + 1 < e->n / 2 + 1)
		return 0;
	w->l.agree = (unsigned)w->synced + 1;
	if (w->all_agree) {
		unsigned live = 0;
		for (unsigned i = 0; i < e->n; i++) {
			if (e->s[i].killed || e->s[i].paused)
				continue;
			live++;
			if (!w->st[i].serving ||
			    (w->st[i].mode != ZK_MODE_FOLLOWER && (int)i != w->l.index))
				return 0;
		}
		if ((unsigned long)w->synced + 1 < live)
			return 0;
	}
	return 1;
}

int zk_ensemble_wait_leader(struct zk_ensemble *e, unsigned timeout_ms, uint64_t min_epoch,
			    bool all_agree, struct zk_leader *l, unsigned *elapsed_ms)
{
	struct wait_arg *w = calloc(1, sizeof *w);
	if (!w)
		return efail(e, ENOMEM, "wait for a leader: out of memory");
	w->e = e;
	w->min_epoch = min_epoch;
	w->all_agree = all_agree;
	w->died = -1;
	w->l.index = -1;
	int rc = sup_wait_until(leader_ready, w, 25, timeout_ms, elapsed_ms);
	if (l)
		*l = w->l;
	if (rc == -ECHILD && w->died >= 0) {
		const struct zk_server *s = &e->s[w->died];
		char sb[64];
		efail(e, ECHILD, "wait for a leader: %s exited (%s): see %s", s->name,
		      sup_status_str(e->sup.procs[s->proc].status, sb, sizeof sb), s->log_path);
	} else if (rc == -ETIMEDOUT) {
		size_t off = (size_t)snprintf(e->err, sizeof e->err,
					      "no leader%s with epoch > %" PRIu64
					      " agreed by a quorum after %u ms; last seen:",
					      all_agree ? " followed by every live server" : "",
					      min_epoch, timeout_ms);
		for (unsigned i = 0; w->seen && i < e->n && off < sizeof e->err; i++) {
			const struct zk_srvr *s = &w->st[i];
			int k;
			if (e->s[i].killed || e->s[i].paused)
				k = snprintf(e->err + off, sizeof e->err - off, " %s: %s;", e->s[i].name,
					     e->s[i].killed ? "killed" : "paused");
			else if (!s->reachable)
				k = snprintf(e->err + off, sizeof e->err - off, " %s: no answer;",
					     e->s[i].name);
			else if (!s->serving)
				k = snprintf(e->err + off, sizeof e->err - off, " %s: not serving;",
					     e->s[i].name);
			else
				k = snprintf(e->err + off, sizeof e->err - off, " %s: %s zxid 0x%" PRIx64 ";",
					     e->s[i].name, zk_mode_name(s->mode), s->zxid);
			if (k < 0)
				break;
			off += (size_t)k;
		}
		if (w->synced >= 0 && off < sizeof e->err)
			snprintf(e->err + off, sizeof e->err - off, " leader's synced followers: %ld",
				 w->synced);
		if (off < sizeof e->err && (size_t)snprintf(e->err + off, sizeof e->err - off,
							    " (see the logs in %s)", e->work_dir) >=
						   sizeof e->err - off)
			e->err[sizeof e->err - 1] = '\0';
	}
	free(w);
	return rc;
}

static int bad_server(struct zk_ensemble *e, unsigned i, const char *what)
{
	if (i >= e->n)
		return efail(e, EINVAL, "%s: no server %u (ensemble of %u)", what, i, e->n);
	if (!e->started)
		return efail(e, EINVAL, "%s %s: the ensemble is not started", what, e->s[i].name);
	return 0;
}

int zk_ensemble_kill(struct zk_ensemble *e, unsigned i)
{
	int rc = bad_server(e, i, "kill");
	if (rc < 0)
		return rc;
	rc = sup_stop(&e->sup, e->s[i].proc, 0);
	if (rc < 0)
		return efail(e, -rc, "kill %s: %s", e->s[i].name, e->sup.err);
	e->s[i].killed = true;
	e->s[i].paused = false;
	return 0;
}

static int send_signal(struct zk_ensemble *e, unsigned i, int sig, const char *what)
{
	int rc = bad_server(e, i, what);
	if (rc < 0)
		return rc;
	rc = sup_signal(&e->sup, e->s[i].proc, sig);
	if (rc < 0)
		return efail(e, -rc, "%s %s: %s", what, e->s[i].name, e->sup.err);
	e->s[i].paused = sig == SIGSTOP;
	return 0;
}

int zk_ensemble_pause(struct zk_ensemble *e, unsigned i) { return send_signal(e, i, SIGSTOP, "pause"); }
int zk_ensemble_resume(struct zk_ensemble *e, unsigned i) { return send_signal(e, i, SIGCONT, "resume"); }

int zk_ensemble_restart(struct zk_ensemble *e, unsigned i)
{
	int rc = bad_server(e, i, "restart");
	if (rc < 0)
		return rc;
	struct zk_server *s = &e->s[i];
	if (s->agent_out[0]) {
		/* A new JVM, a new agent: its records go to a file of their own. */
		char agentarg[PATH_MAX * 2 + 600];
		const char *argv[ZK_ARGC];
		if (snprintf(s->agent_out, sizeof s->agent_out, "%s/zk%u.agent.%u.ndjson", e->work_dir,
			     i + 1, s->runs + 1) >= (int)sizeof s->agent_out)
			return efail(e, ENAMETOOLONG, "restart %s: work dir %s: name too long", s->name,
				     e->work_dir);
		if ((rc = build_argv(e, i, agentarg, sizeof agentarg, argv)) < 0)
			return rc;
		if ((rc = sup_set_argv(&e->sup, s->proc, argv)) < 0)
			return efail(e, -rc, "restart %s: %s", s->name, e->sup.err);
	}
	rc = sup_restart(&e->sup, e->s[i].proc);
	if (rc == 0)
		s->runs++;
	if (rc < 0)
		return efail(e, -rc, "restart %s: %s", e->s[i].name, e->sup.err);
	e->s[i].killed = false;
	e->s[i].paused = false;
	return 0;
}

int zk_ensemble_pid(struct zk_ensemble *e, unsigned i)
{
	if (i >= e->n || !sup_running(&e->sup, e->s[i].proc))
		return 0;
	return (int)e->sup.procs[e->s[i].proc].pid;
}

int zk_ensemble_wait_exit(struct zk_ensemble *e, unsigned i, unsigned timeout_ms, int *status)
{
	if (i >= e->n)
		return efail(e, EINVAL, "wait for exit: no server %u (ensemble of %u)", i, e->n);
	int rc = sup_wait_exit(&e->sup, e->s[i].proc, timeout_ms, status);
	if (rc == -ETIMEDOUT)
		return efail(e, ETIMEDOUT, "%s still runs after %u ms", e->s[i].name, timeout_ms);
	if (rc < 0)
		return efail(e, -rc, "wait for %s to exit: %s", e->s[i].name, e->sup.err);
	e->s[i].killed = true; /* not running: not asked, not waited for */
	return 0;
}
