/* A private network of namespaces around a bridge, made with `ip`; see netns.h. */
#include "netns.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"

#define IP_TIMEOUT_MS 10000
#define NETNS_DIR "/run/netns"
#define MAX_SEQ 16
#define CAP_NET_ADMIN_BIT 12
#define CAP_SYS_ADMIN_BIT 21

/* The seqs of the nets this process made and has not destroyed; g_live_pid tells whether the
 * bits are this process's own or were inherited through fork(). */
static unsigned g_live;
static pid_t g_live_pid;
static bool g_atexit;

static int nfail(struct netns_net *net, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(net->err, sizeof net->err, fmt, ap);
	va_end(ap);
	return -e;
}

const char *netns_ip_path(void)
{
	const char *ip = netns_programs[0].path;
	return access(ip, X_OK) == 0 ? ip : NULL;
}

bool netns_exists(const char *ns)
{
	char path[PATH_MAX];
	struct stat sb;
	snprintf(path, sizeof path, NETNS_DIR "/%s", ns);
	return stat(path, &sb) == 0;
}

bool netns_link_exists(const char *ifname) { return if_nametoindex(ifname) != 0; }

static unsigned live_bits(void)
{
	if (g_live_pid != getpid()) {
		g_live = 0; /* inherited from a parent: its nets are not ours */
		g_live_pid = getpid();
	}
	return g_live;
}

/* Runs `ip args...` (NULL-terminated). 0, or a negative errno guessed from ip's message, with
 * "<what>: ip <args>: <message>" in err. */
static int run_ip(char *err, size_t errsize, const char *what, ...)
{
	const char *argv[24];
	size_t k = 0;
	const char *ip = netns_ip_path();
	if (!ip) {
		snprintf(err, errsize, "%s: no ip binary (install iproute2)", what);
		return -ENOENT;
	}
	argv[k++] = ip;
	va_list ap;
	va_start(ap, what);
	for (const char *a; (a = va_arg(ap, const char *)) && k < sizeof argv / sizeof argv[0] - 1;)
		argv[k++] = a;
	va_end(ap);
	argv[k] = NULL;

	struct sup_output o;
	char serr[SUP_ERR_SIZE], sbuf[64], cmd[256];
	size_t off = 0;
	cmd[0] = '\0';
	for (size_t i = 1; i < k && off < sizeof cmd; i++) {
		int w = snprintf(cmd + off, sizeof cmd - off, "%s%s", i > 1 ? " " : "", argv[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	int rc = sup_run_capture(argv, NULL, IP_TIMEOUT_MS, &o, serr);
	if (rc < 0) {
		snprintf(err, errsize, "%s: ip %s: %s", what, cmd, serr);
	} else if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		size_t el = o.err_len;
		while (el && (o.err_out[el - 1] == '\n' || o.err_out[el - 1] == '\r'))
			el--;
		rc = -EIO;
		if (strstr(o.err_out, "Operation not permitted") || strstr(o.err_out, "Permission denied"))
			rc = -EPERM;
		else if (strstr(o.err_out, "File exists"))
			rc = -EEXIST;
		else if (strstr(o.err_out, "Cannot find device") || strstr(o.err_out, "No such"))
			rc = -ENOENT;
		snprintf(err, errsize, "%s: ip %s: %s: %.*s", what, cmd,
			 sup_status_str(o.status, sbuf, sizeof sbuf), (int)(el > 300 ? 300 : el),
			 o.err_out);
	}
	sup_output_free(&o);
	return rc;
}

/* ---- names ---- */

/* "spt-<pid>-<seq>-n<k>": 0 with *pid, *seq set, else -1. */
static int parse_ns_name(const char *name, long *pid, unsigned *seq)
{
	int end = -1;
	unsigned k;
	if (sscanf(name, "spt-%ld-%u-n%u%n", pid, seq, &k, &end) != 3 || end < 0 ||
	    name[end] != '\0' || *pid <= 0)
		return -1;
	return 0;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* "spt<pid:6x><seq:x>{b,r<k>,p<k>}": 0 with *pid, *seq set, else -1. */
static int parse_link_name(const char *name, long *pid, unsigned *seq)
{
	if (strncmp(name, "spt", 3) != 0 || strlen(name) < 11)
		return -1;
	long p = 0;
	for (int i = 3; i < 9; i++) {
		int h = hexval(name[i]);
		if (h < 0)
			return -1;
		p = p * 16 + h;
	}
	int s = hexval(name[9]);
	if (s < 0 || p <= 0)
		return -1;
	const char *rest = name + 10;
	if (strcmp(rest, "b") != 0) {
		if ((rest[0] != 'r' && rest[0] != 'p') || !rest[1])
			return -1;
		for (const char *d = rest + 1; *d; d++)
			if (*d < '0' || *d > '9')
				return -1;
	}
	*pid = p;
	*seq = (unsigned)s;
	return 0;
}

/* Stale: left by a process that is gone, or by this one outside its live nets. */
static bool stale(long pid, unsigned seq)
{
	if (pid == (long)getpid())
		return !(live_bits() & (1u << seq));
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* Deletes the objects named for (pid, seq) — all seqs when seq < 0 — or, with pid 0, the stale
 * ones. Links first (a veth takes its peer along), then namespaces, then bridges. */
static int remove_named(long only_pid, int only_seq, char *err, size_t errsize)
{
	int removed = 0, rc = 0;
	char e[NETNS_ERR_SIZE];
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 1) {
			DIR *d = opendir(NETNS_DIR);
			struct dirent *de;
			while (d && (de = readdir(d))) {
				long pid;
				unsigned seq;
				if (parse_ns_name(de->d_name, &pid, &seq) < 0)
					continue;
				if (only_pid ? pid != only_pid || (only_seq >= 0 && seq != (unsigned)only_seq)
					     : !stale(pid, seq))
					continue;
				int r = run_ip(e, sizeof e, "remove namespace", "netns", "del", de->d_name,
					       NULL);
				if (r < 0 && !rc) {
					rc = r;
					snprintf(err, errsize, "%s", e);
				}
				removed += r == 0;
			}
			if (d)
				closedir(d);
			continue;
		}
		struct if_nameindex *ifs = if_nameindex();
		for (struct if_nameindex *p = ifs; p && p->if_index; p++) {
			long pid;
			unsigned seq;
			if (parse_link_name(p->if_name, &pid, &seq) < 0)
				continue;
			bool bridge = p->if_name[10] == 'b';
			if (bridge != (pass == 2))
				continue;
			if (only_pid ? pid != only_pid || (only_seq >= 0 && seq != (unsigned)only_seq)
				     : !stale(pid, seq))
				continue;
			if (!netns_link_exists(p->if_name)) /* went with its peer */
				continue;
			int r = run_ip(e, sizeof e, "remove link", "link", "del", p->if_name, NULL);
			if (r < 0 && r != -ENOENT && !rc) {
				rc = r;
				snprintf(err, errsize, "%s", e);
			}
			removed += r == 0;
		}
		if (ifs)
			if_freenameindex(ifs);
	}
	return rc < 0 ? rc : removed;
}

int netns_cleanup_stale(char *err)
{
	char e[NETNS_ERR_SIZE];
	int rc = remove_named(0, -1, e, sizeof e);
	if (rc < 0 && err)
		snprintf(err, NETNS_ERR_SIZE, "netns cleanup of leftovers: %.700s", e);
	return rc;
}

static void at_exit(void)
{
	if (g_live_pid != getpid() || !g_live)
		return;
	char e[NETNS_ERR_SIZE];
	for (unsigned s = 0; s < MAX_SEQ; s++)
		if (g_live & (1u << s))
			remove_named((long)getpid(), (int)s, e, sizeof e);
	g_live = 0;
}

/* ---- privileges and addresses ---- */

/* 0 when this process has CAP_SYS_ADMIN and CAP_NET_ADMIN (effective), else -EPERM. */
static int check_caps(struct netns_net *net)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long eff = 0;
	bool found = false;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	if (f)
		fclose(f);
	if (!found) /* cannot tell: let ip find out */
		return 0;
	if ((eff >> CAP_SYS_ADMIN_BIT & 1) && (eff >> CAP_NET_ADMIN_BIT & 1))
		return 0;
	return nfail(net, EPERM,
		     "netns: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN, which this "
		     "process (uid %d) lacks: run as root, or without network namespaces (loopback)",
		     (int)geteuid());
}

/* Marks in used[256] each k with an address 10.231.k.x on some interface. */
static void subnets_in_use(bool *used)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *p = ifa; p; p = p->ifa_next) {
		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET)
			continue;
		uint32_t a = ntohl(((struct sockaddr_in *)(void *)p->ifa_addr)->sin_addr.s_addr);
		if ((a >> 16) == ((10u << 8) | 231u))
			used[(a >> 8) & 0xff] = true;
	}
	freeifaddrs(ifa);
}

/* ---- the net ---- */

void netns_net_destroy(struct netns_net *net)
{
	char e[NETNS_ERR_SIZE];
	int bad = 0;
	net->err[0] = '\0';
	for (unsigned i = 0; i < net->n && i < NETNS_MAX_MEMBERS; i++) {
		struct netns_member *m = &net->m[i];
		if (m->veth_made && netns_link_exists(m->veth_root)) {
			int r = run_ip(e, sizeof e, "remove veth", "link", "del", m->veth_root, NULL);
			if (r < 0 && r != -ENOENT && !bad++)
				snprintf(net->err, sizeof net->err, "%s", e);
		}
		m->veth_made = false;
		if (m->ns_made && netns_exists(m->ns)) {
			int r = run_ip(e, sizeof e, "remove namespace", "netns", "del", m->ns, NULL);
			if (r < 0 && !bad++)
				snprintf(net->err, sizeof net->err, "%s", e);
		}
		m->ns_made = false;
		m->cut = false;
	}
	if (net->bridge_made && netns_link_exists(net->bridge)) {
		int r = run_ip(e, sizeof e, "remove bridge", "link", "del", net->bridge, NULL);
		if (r < 0 && r != -ENOENT && !bad++)
			snprintf(net->err, sizeof net->err, "%s", e);
	}
	net->bridge_made = false;
	if (bad)
		return; /* kept registered: exit() tries again */
	if (net->registered && net->owner == getpid() && net->seq < MAX_SEQ)
		g_live = live_bits() & ~(1u << net->seq);
	net->registered = false;
	net->up = false;
}

int netns_net_create(struct netns_net *net, unsigned n)
{
	int rc;
	char e[NETNS_ERR_SIZE];
	memset(net, 0, sizeof *net);
	net->seq = MAX_SEQ; /* none yet */
	if (n == 0 || n > NETNS_MAX_MEMBERS)
		return nfail(net, EINVAL, "netns: %u members asked, 1..%d allowed", n,
			     NETNS_MAX_MEMBERS);
	if (!netns_ip_path())
		return nfail(net, ENOENT, "netns: no ip binary in /usr/sbin, /sbin, /usr/bin, /bin "
					  "(install iproute2)");
	rc = check_caps(net);
	if (rc < 0)
		return rc;
	net->n = n;
	net->owner = getpid();
	if ((long)net->owner > 0xffffff)
		return nfail(net, ERANGE, "netns: pid %d does not fit the 6 hex digits of link names",
			     (int)net->owner);
	/* Leftovers of dead runs. A failure is not fatal: the names chosen below are checked. */
	(void)netns_cleanup_stale(e);

	/* A seq none of whose names exist. */
	unsigned live = live_bits();
	for (unsigned s = 0; s < MAX_SEQ && net->seq == MAX_SEQ; s++) {
		if (live & (1u << s))
			continue;
		char br[16];
		snprintf(br, sizeof br, "spt%06x%xb", (unsigned)net->owner, s);
		bool taken = netns_link_exists(br);
		for (unsigned i = 0; i < n && !taken; i++) {
			char ns[40];
			snprintf(ns, sizeof ns, "spt-%d-%u-n%u", (int)net->owner, s, i + 1);
			taken = netns_exists(ns);
		}
		if (!taken)
			net->seq = s;
	}
	if (net->seq == MAX_SEQ)
		return nfail(net, EADDRINUSE,
			     "netns: all %d nets of process %d are in use: destroy one first",
			     MAX_SEQ, (int)net->owner);
	bool used[256] = {false};
	subnets_in_use(used);
	unsigned k0 = ((unsigned)net->owner * MAX_SEQ + net->seq) % 250 + 1;
	for (unsigned t = 0; t < 250 && !net->subnet; t++) {
		unsigned k = (k0 - 1 + t) % 250 + 1;
		if (!used[k])
			net->subnet = k;
	}
	if (!net->subnet)
		return nfail(net, EADDRINUSE,
			     "netns: every subnet 10.231.1-250.0/24 has an address in use here");

	snprintf(net->bridge, sizeof net->bridge, "spt%06x%xb", (unsigned)net->owner, net->seq);
	snprintf(net->host_addr, sizeof net->host_addr, "10.231.%u.254", net->subnet);
	for (unsigned i = 0; i < n; i++) {
		struct netns_member *m = &net->m[i];
		snprintf(m->ns, sizeof m->ns, "spt-%d-%u-n%u", (int)net->owner, net->seq, i + 1);
		snprintf(m->veth_root, sizeof m->veth_root, "spt%06x%xr%u", (unsigned)net->owner,
			 net->seq, i + 1);
		snprintf(m->veth_peer, sizeof m->veth_peer, "spt%06x%xp%u", (unsigned)net->owner,
			 net->seq, i + 1);
		snprintf(m->addr, sizeof m->addr, "10.231.%u.%u", net->subnet, i + 1);
	}
	/* From here on, exit() removes what exists. */
	g_live = live_bits() | 1u << net->seq;
	net->registered = true;
	if (!g_atexit) {
		atexit(at_exit);
		g_atexit = true;
	}

	char cidr[24];
	snprintf(cidr, sizeof cidr, "%s/24", net->host_addr);
	rc = run_ip(net->err, sizeof net->err, "netns: make bridge", "link", "add", net->bridge,
		    "type", "bridge", NULL);
	if (rc < 0)
		goto fail;
	net->bridge_made = true;
	rc = run_ip(net->err, sizeof net->err, "netns: bridge address", "addr", "add", cidr, "dev",
		    net->bridge, NULL);
	if (rc == 0)
		rc = run_ip(net->err, sizeof net->err, "netns: bridge up", "link", "set", net->bridge,
			    "up", NULL);
	if (rc < 0)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		struct netns_member *m = &net->m[i];
		snprintf(cidr, sizeof cidr, "%s/24", m->addr);
		rc = run_ip(net->err, sizeof net->err, "netns: make namespace", "netns", "add", m->ns,
			    NULL);
		if (rc < 0)
			goto fail;
		m->ns_made = true;
		rc = run_ip(net->err, sizeof net->err, "netns: make veth", "link", "add",
			    m->veth_root, "type", "veth", "peer", "name", m->veth_peer, "netns", m->ns,
			    NULL);
		if (rc < 0)
			goto fail;
		m->veth_made = true;
		rc = run_ip(net->err, sizeof net->err, "netns: veth to bridge", "link", "set",
			    m->veth_root, "master", net->bridge, "up", NULL);
		if (rc == 0)
			rc = run_ip(net->err, sizeof net->err, "netns: member address", "-n", m->ns,
				    "addr", "add", cidr, "dev", m->veth_peer, NULL);
		if (rc == 0)
			rc = run_ip(net->err, sizeof net->err, "netns: member veth up", "-n", m->ns,
				    "link", "set", m->veth_peer, "up", NULL);
		if (rc == 0)
			rc = run_ip(net->err, sizeof net->err, "netns: member loopback up", "-n", m->ns,
				    "link", "set", "lo", "up", NULL);
		if (rc < 0)
			goto fail;
	}
	net->up = true;
	return 0;

fail:
	if (rc == -EPERM) {
		size_t l = strlen(net->err);
		snprintf(net->err + l, sizeof net->err - l,
			 " (network namespaces need root: run as root, or without netns)");
	}
	char saved[NETNS_ERR_SIZE];
	memcpy(saved, net->err, sizeof saved);
	netns_net_destroy(net);
	memcpy(net->err, saved, sizeof saved);
	return rc;
}

static int set_link(struct netns_net *net, unsigned i, bool up)
{
	if (!net->up || i >= net->n)
		return nfail(net, EINVAL, "netns %s: no member %u (net of %u%s)",
			     up ? "heal" : "cut", i, net->n, net->up ? "" : ", not up");
	char what[64];
	snprintf(what, sizeof what, "netns %s n%u", up ? "heal" : "cut", i + 1);
	int rc = run_ip(net->err, sizeof net->err, what, "link", "set", net->m[i].veth_root,
			up ? "up" : "down", NULL);
	if (rc == 0)
		net->m[i].cut = !up;
	return rc;
}

int netns_net_cut(struct netns_net *net, unsigned i) { return set_link(net, i, false); }
int netns_net_heal(struct netns_net *net, unsigned i) { return set_link(net, i, true); }

void netns_exec_prefix(const struct netns_net *net, unsigned i, const char **argv)
{
	argv[0] = netns_ip_path();
	argv[1] = "netns";
	argv[2] = "exec";
	argv[3] = net->m[i].ns;
}
