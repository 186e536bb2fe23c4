/* The namespace network of systems/etcd/netns.c, with TCP listeners and probes in forked
 * children (setns into a member's namespace): reachability root <-> member and member <->
 * member, a cut and a heal, teardown (also at exit() and after a SIGKILL), and the error without
 * privileges. Needs root; every wait is on a condition with a deadline. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "netns.h"
#include "supervise.h"

#define PORT 24680

static pid_t wait_child(pid_t pid, int *st)
{
	pid_t r;
	while ((r = waitpid(pid, st, 0)) < 0 && errno == EINTR)
		;
	return r;
}

/* In a child: enter namespace ns (NULL: stay here). */
static void enter(const char *ns)
{
	if (!ns)
		return;
	char path[128];
	snprintf(path, sizeof path, "/run/netns/%s", ns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
		_exit(90);
	close(fd);
}

/* A child listening on addr:PORT inside ns; returns its pid once it listens (0 on failure). */
static pid_t listener(const char *ns, const char *addr)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		enter(ns);
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0)
			_exit(91);
		if (write(p[1], "x", 1) != 1)
			_exit(92);
		for (;;)
			pause();
	}
	close(p[1]);
	char ch;
	ssize_t r;
	while ((r = read(p[0], &ch, 1)) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (r != 1) {
		wait_child(pid, NULL);
		return 0;
	}
	return pid;
}

static void stop_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		wait_child(pid, NULL);
	}
}

/* True when a TCP connection from inside ns (NULL: here) to addr:PORT completes within
 * timeout_ms. */
static bool reach(const char *ns, const char *addr, unsigned timeout_ms)
{
	pid_t pid = fork();
	if (pid == 0) {
		enter(ns);
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
		if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1)
			_exit(93);
		if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)
			_exit(1);
		struct pollfd pf = {fd, POLLOUT, 0};
		if (poll(&pf, 1, (int)timeout_ms) != 1)
			_exit(1);
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		_exit(soerr ? 1 : 0);
	}
	int st = 0;
	return pid > 0 && wait_child(pid, &st) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

struct reach_arg {
	const char *ns, *addr;
	bool want;
};

static int reach_cond(void *p)
{
	struct reach_arg *r = p;
	return reach(r->ns, r->addr, 300) == r->want;
}

/* Names of every object of net. */
static bool anything_left(const struct netns_net *net)
{
	bool left = netns_link_exists(net->bridge);
	for (unsigned i = 0; i < net->n; i++)
		left |= netns_exists(net->m[i].ns) || netns_link_exists(net->m[i].veth_root);
	return left;
}

static void test_net_reach_cut_heal(void)
{
	struct netns_net net;
	int rc = netns_net_create(&net, 3);
	CHECKF(rc == 0, "%s", net.err);
	if (rc < 0)
		return;
	printf("    bridge %s %s/24, namespaces %s %s %s\n", net.bridge, net.host_addr, net.m[0].ns,
	       net.m[1].ns, net.m[2].ns);
	CHECK(net.up && net.n == 3 && net.subnet >= 1 && net.subnet <= 250);
	CHECK(netns_link_exists(net.bridge));
	for (unsigned i = 0; i < 3; i++) {
		char want[16];
		snprintf(want, sizeof want, "10.231.%u.%u", net.subnet, i + 1);
		CHECK(strcmp(net.m[i].addr, want) == 0);
		CHECK(netns_exists(net.m[i].ns) && netns_link_exists(net.m[i].veth_root));
		CHECK(!netns_link_exists(net.m[i].veth_peer)); /* it lives in the namespace */
		CHECK(strlen(net.m[i].veth_root) < 16 && strlen(net.bridge) < 16);
	}
	pid_t l[3] = {0, 0, 0};
	for (unsigned i = 0; i < 3; i++) {
		l[i] = listener(net.m[i].ns, net.m[i].addr);
		CHECKF(l[i] > 0, "no listener in %s", net.m[i].ns);
	}
	pid_t host = listener(NULL, net.host_addr);
	CHECK(host > 0);
	for (unsigned i = 0; i < 3; i++) {
		CHECKF(reach(NULL, net.m[i].addr, 2000), "root -> n%u", i + 1);
		CHECKF(reach(net.m[i].ns, net.host_addr, 2000), "n%u -> root", i + 1);
		CHECKF(reach(net.m[i].ns, net.m[(i + 1) % 3].addr, 2000), "n%u -> n%u", i + 1,
		       (i + 1) % 3 + 1);
	}
	/* Nothing listens on 127.0.0.1:PORT inside n1: its loopback is its own. */
	CHECK(!reach(net.m[0].ns, "127.0.0.1", 300));

	/* Cut n2 off: nobody reaches it, it reaches nobody; n1 <-> n3 still fine. */
	CHECKF(netns_net_cut(&net, 1) == 0, "%s", net.err);
	CHECK(net.m[1].cut);
	CHECK(!reach(NULL, net.m[1].addr, 300));
	CHECK(!reach(net.m[0].ns, net.m[1].addr, 300));
	CHECK(!reach(net.m[1].ns, net.m[2].addr, 300));
	CHECK(!reach(net.m[1].ns, net.host_addr, 300));
	CHECK(reach(net.m[0].ns, net.m[2].addr, 2000));
	CHECK(reach(NULL, net.m[2].addr, 2000));
	CHECKF(netns_net_cut(&net, 1) == 0, "cut twice: %s", net.err);

	/* Heal: reachable again (wait for it: the bridge relearns the port). */
	CHECKF(netns_net_heal(&net, 1) == 0, "%s", net.err);
	CHECK(!net.m[1].cut);
	struct reach_arg ra = {NULL, net.m[1].addr, true};
	unsigned el = 0;
	CHECK(sup_wait_until(reach_cond, &ra, 20, 5000, &el) == 0);
	struct reach_arg rb = {net.m[0].ns, net.m[1].addr, true};
	CHECK(sup_wait_until(reach_cond, &rb, 20, 5000, NULL) == 0);
	printf("    n2 reachable %u ms after the heal\n", el);

	CHECK(netns_net_cut(&net, 3) == -EINVAL && strstr(net.err, "no member 3"));

	for (unsigned i = 0; i < 3; i++)
		stop_child(l[i]);
	stop_child(host);
	struct netns_net copy = net;
	netns_net_destroy(&net);
	CHECKF(net.err[0] == '\0', "%s", net.err);
	CHECK(!net.up && !anything_left(&copy));
	netns_net_destroy(&net); /* twice is fine */
	CHECK(net.err[0] == '\0');
	CHECK(netns_net_cut(&net, 0) == -EINVAL);
}

/* Two nets of one process: distinct names and subnets. Destroying with a process still inside
 * a namespace works too (the namespace goes when it leaves). */
static void test_two_nets(void)
{
	struct netns_net a, b;
	int rc = netns_net_create(&a, 2);
	CHECKF(rc == 0, "%s", a.err);
	rc = netns_net_create(&b, 1);
	CHECKF(rc == 0, "%s", b.err);
	CHECK(strcmp(a.bridge, b.bridge) != 0 && a.subnet != b.subnet && a.seq != b.seq);
	CHECK(strcmp(a.m[0].ns, b.m[0].ns) != 0);
	pid_t inside = listener(b.m[0].ns, b.m[0].addr);
	CHECK(inside > 0);
	CHECK(reach(NULL, b.m[0].addr, 2000));
	struct netns_net ca = a, cb = b;
	netns_net_destroy(&a);
	netns_net_destroy(&b);
	CHECKF(a.err[0] == '\0' && b.err[0] == '\0', "%s %s", a.err, b.err);
	CHECK(!anything_left(&ca) && !anything_left(&cb));
	stop_child(inside);
	CHECK(netns_net_create(&a, 0) == -EINVAL && strstr(a.err, "0 members"));
	CHECK(netns_net_create(&a, NETNS_MAX_MEMBERS + 1) == -EINVAL);
}

/* A child makes a net, then exits (mode 0: exit(), its atexit removes the net) or is
 * SIGKILLed (mode 1: the net stays until netns_cleanup_stale sees its pid gone). */
static void test_child_paths(void)
{
	for (int mode = 0; mode < 2; mode++) {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			CHECK(0);
			return;
		}
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			static struct netns_net net; /* static: reachable at exit() */
			close(p[0]);
			if (netns_net_create(&net, 2) < 0) {
				fprintf(stderr, "child: %s\n", net.err);
				_exit(3);
			}
			if (write(p[1], &net, sizeof net) != (ssize_t)sizeof net)
				_exit(3);
			close(p[1]);
			if (mode == 0)
				exit(1);
			for (;;)
				pause();
		}
		close(p[1]);
		struct netns_net net;
		size_t got = 0;
		while (got < sizeof net) {
			ssize_t r = read(p[0], (char *)&net + got, sizeof net - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		close(p[0]);
		CHECKF(got == sizeof net, "mode %d: the child made no net", mode);
		if (got != sizeof net) {
			wait_child(pid, NULL);
			continue;
		}
		CHECK(anything_left(&net));
		if (mode == 1)
			kill(pid, SIGKILL);
		int st = 0;
		CHECK(wait_child(pid, &st) == pid);
		if (mode == 0) {
			CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
			CHECKF(!anything_left(&net), "the child's exit() left %s", net.bridge);
		} else {
			CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
			CHECK(anything_left(&net)); /* nothing runs on SIGKILL */
			char err[NETNS_ERR_SIZE] = "";
			int n = netns_cleanup_stale(err);
			CHECKF(n >= 3, "cleanup removed %d (%s)", n, err); /* 2 veths, 2 ns, bridge */
			CHECKF(!anything_left(&net), "cleanup left %s", net.bridge);
		}
	}
}

/* Without privileges: a clear error, nothing made. */
static void test_unprivileged(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		CHECK(0);
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct netns_net net;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(4);
		int rc = netns_net_create(&net, 3);
		if (write(p[1], net.err, sizeof net.err) < 0)
			_exit(4);
		_exit(rc == -EPERM ? 0 : 5);
	}
	close(p[1]);
	char err[NETNS_ERR_SIZE] = "";
	ssize_t r;
	while ((r = read(p[0], err, sizeof err - 1)) < 0 && errno == EINTR)
		;
	close(p[0]);
	int st = 0;
	CHECK(wait_child(pid, &st) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s", st, err);
	CHECKF(strstr(err, "CAP_SYS_ADMIN") && strstr(err, "run as root"), "%s", err);
	printf("    as uid 65534: %s\n", err);
}

static int count_our_leftovers(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd,
		 "{ ip netns list; ip -o link; } 2>/dev/null | grep -c 'spt-%d-\\|spt%06x' || true",
		 (int)getpid(), (unsigned)getpid());
	const char *argv[] = {"sh", "-c", cmd, NULL};
	struct sup_output o;
	int n = -1;
	if (sup_run_capture(argv, NULL, 5000, &o, NULL) == 0)
		n = atoi(o.out);
	sup_output_free(&o);
	return n;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0 || !netns_ip_path()) {
		printf("SKIP: not root or no ip binary: the netns tests did not run\n");
		TEST_MAIN_END("test_netns");
	}
	RUN(test_net_reach_cut_heal);
	RUN(test_two_nets);
	RUN(test_child_paths);
	RUN(test_unprivileged);
	int left = count_our_leftovers();
	CHECKF(left == 0, "%d namespaces or links of pid %d left", left, (int)getpid());
	TEST_MAIN_END("test_netns");
}
