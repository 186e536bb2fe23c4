/* The ZooKeeper ensemble launcher (systems/zookeeper/ensemble.c) on Debian's real ZooKeeper
 * 3.8.0 on loopback: srvr parsing, 3 servers elect a leader, a SIGKILL of the leader brings a
 * new one in a higher epoch, the restarted old leader follows, a paused follower leaves the
 * quorum standing, errors name what failed, and nothing is left running after a stop, an exit()
 * or a SIGINT. Every wait is on a condition with a deadline. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "check.h"
#include "ensemble.h"
#include "supervise.h"

static char g_tmp[256];
static bool g_have_zk;
static struct zk_ensemble g_e;
static bool g_up;
static int g_leader = -1;     /* index of the current leader */
static int g_old_leader = -1; /* the leader killed by test_kill_leader */
static uint64_t g_epoch;
static pid_t g_pids[ZK_MAX_SERVERS * 2];
static size_t g_npids;

static bool alive(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char buf[512];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z';
}

/* Live processes whose parent is this process. */
static int count_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int count = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *rp = strrchr(buf, ')'), st = '\0';
		int ppid = 0;
		if (rp && sscanf(rp + 1, " %c %d", &st, &ppid) == 2 && ppid == getpid() && st != 'Z')
			count++;
	}
	closedir(d);
	return count;
}

/* Processes whose command line names dir (the ensemble's config paths). */
static int count_procs_naming(const char *dir)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int count = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[8192];
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, dir) && alive((pid_t)atoi(e->d_name)))
			count++;
	}
	closedir(d);
	return count;
}

static bool port_bindable(unsigned port) { return sup_port_free(port) == 0; }

static void remember_pids(void)
{
	for (unsigned i = 0; i < g_e.n && g_npids < sizeof g_pids / sizeof g_pids[0]; i++) {
		pid_t p = zk_ensemble_pid(&g_e, i);
		bool known = false;
		for (size_t k = 0; k < g_npids; k++)
			known |= g_pids[k] == p;
		if (p > 0 && !known)
			g_pids[g_npids++] = p;
	}
}

/* ---- parsing, no server needed ---- */

static void test_parse_srvr(void)
{
	const char leader[] = "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n"
			      "Latency min/avg/max: 0/0.0/0\nReceived: 1\nSent: 0\nConnections: 1\n"
			      "Outstanding: 0\nZxid: 0x100000002\nMode: leader\nNode count: 5\n"
			      "Proposal sizes last/min/max: -1/-1/-1\n";
	struct zk_srvr s;
	char err[256];
	CHECK(zk_parse_srvr(leader, strlen(leader), &s, err, sizeof err) == 0);
	CHECK(s.reachable && s.serving && s.mode == ZK_MODE_LEADER);
	CHECK(s.zxid == 0x100000002ULL && s.epoch == 1 && s.node_count == 5);
	CHECK(!strncmp(s.version, "3.8.0", 5));

	const char follower[] = "Zookeeper version: 3.8.0\nZxid: 0xffffffff00000000\nMode: follower\n";
	CHECK(zk_parse_srvr(follower, strlen(follower), &s, err, sizeof err) == 0);
	CHECK(s.mode == ZK_MODE_FOLLOWER && s.epoch == 0xffffffffULL && s.node_count == -1);

	const char idle[] = "This ZooKeeper instance is not currently serving requests\n";
	CHECK(zk_parse_srvr(idle, strlen(idle), &s, err, sizeof err) == 0);
	CHECK(s.reachable && !s.serving && s.mode == ZK_MODE_UNKNOWN);

	const char junk[] = "ruok? imok\n";
	CHECK(zk_parse_srvr(junk, strlen(junk), &s, err, sizeof err) == -EINVAL);
	CHECKF(strstr(err, "Mode"), "%s", err);
	const char badmode[] = "Zxid: 0x1\nMode: sleeping\n";
	CHECK(zk_parse_srvr(badmode, strlen(badmode), &s, err, sizeof err) == -EINVAL);
	CHECKF(strstr(err, "sleeping"), "%s", err);
	const char badzxid[] = "Zxid: 0xZZ\nMode: leader\n";
	CHECK(zk_parse_srvr(badzxid, strlen(badzxid), &s, err, sizeof err) == -EINVAL);
	CHECKF(strstr(err, "zxid"), "%s", err);

	/* The client names what failed: nothing listens on a port we just found free. */
	unsigned port = 0;
	for (unsigned p = 29990; p > 29900 && !port; p--)
		if (port_bindable(p))
			port = p;
	char *out = NULL;
	size_t len = 0;
	CHECK(zk_four_letter(port, "srvr", 1000, &out, &len, err, sizeof err) == -ECONNREFUSED);
	CHECKF(strstr(err, "srvr") && strstr(err, "connect"), "%s", err);
	CHECK(out == NULL);
	CHECK(zk_four_letter(port, "stat!", 1000, &out, &len, err, sizeof err) == -EINVAL);
}

/* ---- errors that name what failed ---- */

static void test_start_errors(void)
{
	struct zk_ensemble e;
	char dir[PATH_MAX];
	struct zk_ensemble_opts o = {0};
	CHECK(zk_ensemble_start(&e, &o) == -EINVAL);
	CHECKF(strstr(e.err, "work dir"), "%s", e.err);

	snprintf(dir, sizeof dir, "%s/err1", g_tmp);
	o.work_dir = dir;
	o.servers = ZK_MAX_SERVERS + 1;
	CHECK(zk_ensemble_start(&e, &o) == -EINVAL);
	CHECKF(strstr(e.err, "at most"), "%s", e.err);

	o.servers = 1;
	o.classpath = "/nonexistent/zookeeper.jar";
	CHECK(zk_ensemble_start(&e, &o) == -ENOENT);
	CHECKF(strstr(e.err, "/nonexistent/zookeeper.jar") && strstr(e.err, "apt-get install"), "%s",
	       e.err);

	o.classpath = NULL;
	o.agent = "/nonexistent/agent.so";
	CHECK(zk_ensemble_start(&e, &o) == -ENOENT);
	CHECKF(strstr(e.err, "/nonexistent/agent.so"), "%s", e.err);
	o.agent = NULL;

	/* A busy port is named with its use. */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	unsigned base = 0;
	for (unsigned p = 28900; p < 29500 && !base; p += 10)
		if (port_bindable(p) && port_bindable(p + 1) && port_bindable(p + 2)) {
			a.sin_port = htons((uint16_t)(p + 2));
			if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0)
				base = p;
		}
	CHECK(base != 0);
	o.base_port = base;
	CHECK(zk_ensemble_start(&e, &o) == -EADDRINUSE);
	char want[64];
	snprintf(want, sizeof want, "port %u (zk1 election) is busy", base + 2);
	CHECKF(strstr(e.err, want), "%s", e.err);
	close(fd);
	o.base_port = 0;

	/* A used work dir is refused: a server's data must start fresh. */
	snprintf(dir, sizeof dir, "%s/err2/zk1", g_tmp);
	CHECK(mkdir(g_tmp, 0755) == 0 || errno == EEXIST);
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s/err2", g_tmp);
	CHECK(mkdir(parent, 0755) == 0 && mkdir(dir, 0755) == 0);
	o.work_dir = parent;
	CHECK(zk_ensemble_start(&e, &o) == -EEXIST);
	CHECKF(strstr(e.err, "already exists"), "%s", e.err);
	CHECK(count_children() == 0);
}

/* ---- a live ensemble ---- */

static void test_leader_elected(void)
{
	if (!g_have_zk)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/ens", g_tmp);
	struct zk_ensemble_opts o = {.work_dir = dir};
	int rc = zk_ensemble_start(&g_e, &o);
	CHECKF(rc == 0, "%s", g_e.err);
	if (rc < 0)
		return;
	g_up = true;
	remember_pids();
	CHECK(g_e.n == 3 && g_npids == 3);
	/* Each server has its configuration and its myid. */
	for (unsigned i = 0; i < g_e.n; i++) {
		char path[PATH_MAX + 8], buf[16] = "";
		snprintf(path, sizeof path, "%s/myid", g_e.s[i].data_dir);
		FILE *f = fopen(path, "r");
		CHECK(f && fgets(buf, sizeof buf, f) && (unsigned)atoi(buf) == i + 1);
		if (f)
			fclose(f);
		CHECK(access(g_e.s[i].cfg_path, R_OK) == 0);
	}
	struct zk_leader l;
	unsigned ms = 0;
	rc = zk_ensemble_wait_leader(&g_e, 30000, 0, true, &l, &ms);
	CHECKF(rc == 0, "%s", g_e.err);
	if (rc < 0)
		return;
	printf("    timing: leader zk%u (epoch %llu) agreed by all %u ms after start\n", l.myid,
	       (unsigned long long)l.epoch, ms);
	CHECK(l.index >= 0 && l.agree == 3 && l.reachable == 3 && l.epoch >= 1);
	g_leader = l.index;
	g_epoch = l.epoch;
	/* Exactly one leader; the others follow. */
	struct zk_srvr st[ZK_MAX_SERVERS];
	CHECK(zk_ensemble_status(&g_e, st) == 3);
	unsigned leaders = 0, followers = 0;
	for (unsigned i = 0; i < 3; i++) {
		leaders += st[i].mode == ZK_MODE_LEADER;
		followers += st[i].mode == ZK_MODE_FOLLOWER;
	}
	CHECK(leaders == 1 && followers == 2 && st[g_leader].mode == ZK_MODE_LEADER);
}

static void test_kill_leader(void)
{
	if (!g_up || g_leader < 0)
		return;
	pid_t old = zk_ensemble_pid(&g_e, (unsigned)g_leader);
	CHECK(zk_ensemble_kill(&g_e, (unsigned)g_leader) == 0);
	CHECK(!alive(old) && zk_ensemble_pid(&g_e, (unsigned)g_leader) == 0);
	struct zk_leader l;
	unsigned ms = 0;
	int rc = zk_ensemble_wait_leader(&g_e, 30000, g_epoch, false, &l, &ms);
	CHECKF(rc == 0, "%s", g_e.err);
	if (rc < 0)
		return;
	printf("    timing: new leader zk%u (epoch %llu) %u ms after SIGKILL of zk%d\n", l.myid,
	       (unsigned long long)l.epoch, ms, g_leader + 1);
	CHECK(l.index >= 0 && l.index != g_leader && l.epoch > g_epoch && l.agree >= 2);
	/* The killed server is not asked. */
	struct zk_srvr st;
	CHECK(zk_ensemble_srvr(&g_e, (unsigned)g_leader, &st) == 0 && !st.reachable);
	g_epoch = l.epoch;
	g_old_leader = g_leader;
	g_leader = l.index;
}

static void test_restart_follows(void)
{
	if (!g_up || g_leader < 0 || g_old_leader < 0)
		return;
	unsigned now = (unsigned)g_leader, old = (unsigned)g_old_leader;
	CHECK(zk_ensemble_restart(&g_e, old) == 0);
	CHECK(zk_ensemble_pid(&g_e, old) > 0);
	remember_pids();
	struct zk_leader l;
	unsigned ms = 0;
	int rc = zk_ensemble_wait_leader(&g_e, 30000, g_epoch - 1, true, &l, &ms);
	CHECKF(rc == 0, "%s", g_e.err);
	if (rc < 0)
		return;
	printf("    timing: restarted zk%u follows zk%u %u ms after restart\n", old + 1, now + 1, ms);
	CHECK(l.index == (int)now && l.epoch == g_epoch && l.agree == 3);
	struct zk_srvr st;
	CHECK(zk_ensemble_srvr(&g_e, old, &st) == 1 && st.serving && st.mode == ZK_MODE_FOLLOWER);
}

static void test_pause_follower(void)
{
	if (!g_up || g_leader < 0)
		return;
	unsigned f = ((unsigned)g_leader + 1) % g_e.n;
	CHECK(zk_ensemble_pause(&g_e, f) == 0);
	struct zk_srvr st;
	CHECK(zk_ensemble_srvr(&g_e, f, &st) == 0 && !st.reachable); /* paused: not asked */
	/* The leader keeps a quorum with the other follower. */
	struct zk_leader l;
	int rc = zk_ensemble_wait_leader(&g_e, 20000, g_epoch - 1, true, &l, NULL);
	CHECKF(rc == 0 && l.index == g_leader, "%s", g_e.err);
	CHECK(zk_ensemble_resume(&g_e, f) == 0);
	unsigned ms = 0;
	rc = zk_ensemble_wait_leader(&g_e, 30000, g_epoch - 1, true, &l, &ms);
	CHECKF(rc == 0 && l.agree == 3, "%s", g_e.err);
	printf("    timing: resumed zk%u serves again after %u ms\n", f + 1, ms);
	CHECK(zk_ensemble_srvr(&g_e, f, &st) == 1 && st.serving);
}

static void test_wait_names_exit(void)
{
	if (!g_up)
		return;
	/* A timeout names what each server said. */
	struct zk_leader l;
	int rc = zk_ensemble_wait_leader(&g_e, 300, 1000000, false, &l, NULL);
	CHECK(rc == -ETIMEDOUT);
	CHECKF(strstr(g_e.err, "zk1:") && strstr(g_e.err, "epoch > 1000000"), "%s", g_e.err);
	CHECK(zk_ensemble_kill(&g_e, 99) == -EINVAL);
	CHECKF(strstr(g_e.err, "no server 99"), "%s", g_e.err);
}

static void test_stop_leaves_nothing(void)
{
	if (!g_up)
		return;
	unsigned ports[ZK_MAX_SERVERS * 3], np = 0;
	for (unsigned i = 0; i < g_e.n; i++) {
		ports[np++] = g_e.s[i].client_port;
		ports[np++] = g_e.s[i].quorum_port;
		ports[np++] = g_e.s[i].election_port;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", g_e.work_dir);
	uint64_t t0 = sup_now_ms();
	zk_ensemble_stop(&g_e);
	g_up = false;
	printf("    timing: stop %llu ms\n", (unsigned long long)(sup_now_ms() - t0));
	for (size_t k = 0; k < g_npids; k++)
		CHECKF(!alive(g_pids[k]), "pid %d survived", (int)g_pids[k]);
	CHECK(count_children() == 0);
	CHECK(count_procs_naming(dir) == 0);
	for (unsigned k = 0; k < np; k++)
		CHECKF(port_bindable(ports[k]), "port %u still bound", ports[k]);
	zk_ensemble_stop(&g_e); /* twice is fine */
}

/* A child starts a one-server ensemble, then exit()s (mode 0) or is sent SIGINT (mode 1): the
 * supervisor's exit and signal paths take the JVM down. */
static void abort_path(int mode)
{
	if (!g_have_zk)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/abort%d", g_tmp, mode);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		CHECK(0);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t child = fork();
	if (child == 0) {
		static struct zk_ensemble e; /* static: reachable for the leak checker at exit() */
		close(fds[0]);
		if (mode == 1)
			sup_install_handlers();
		struct zk_ensemble_opts o = {.work_dir = dir, .servers = 1};
		if (zk_ensemble_start(&e, &o) < 0) {
			fprintf(stderr, "abort child: %s\n", e.err);
			_exit(3);
		}
		if (zk_ensemble_wait_leader(&e, 30000, 0, true, NULL, NULL) < 0)
			fprintf(stderr, "abort child: %s\n", e.err);
		pid_t pid = zk_ensemble_pid(&e, 0);
		if (write(fds[1], &pid, sizeof pid) != (ssize_t)sizeof pid)
			_exit(3);
		close(fds[1]);
		if (mode == 0)
			exit(1); /* an error path: no stop called */
		for (;;)
			pause();
	}
	close(fds[1]);
	pid_t pid = 0;
	ssize_t r;
	do
		r = read(fds[0], &pid, sizeof pid);
	while (r < 0 && errno == EINTR);
	close(fds[0]);
	CHECK(r == (ssize_t)sizeof pid && pid > 0 && alive(pid));
	if (mode == 1)
		kill(child, SIGINT);
	int st = 0;
	pid_t w;
	do
		w = waitpid(child, &st, 0);
	while (w < 0 && errno == EINTR);
	CHECK(w == child);
	if (mode == 0)
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
	else
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status 0x%x", st);
	CHECKF(pid <= 0 || !alive(pid), "java pid %d survived", (int)pid);
	CHECK(count_procs_naming(dir) == 0);
}

static void test_abort_exit(void) { abort_path(0); }
static void test_abort_sigint(void) { abort_path(1); }

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(sup_install_handlers() == 0);
	snprintf(g_tmp, sizeof g_tmp, "/tmp/spectap-test-zk-XXXXXX");
	if (!mkdtemp(g_tmp)) {
		perror("mkdtemp");
		return 1;
	}
	uint64_t t0 = sup_now_ms();
	RUN(test_parse_srvr);
	RUN(test_start_errors);
	char err[512];
	g_have_zk = zk_available(NULL, NULL, err, sizeof err) == 0;
	CHECKF(g_have_zk, "%s", err);
	RUN(test_leader_elected);
	RUN(test_kill_leader);
	RUN(test_restart_follows);
	RUN(test_pause_follower);
	RUN(test_wait_names_exit);
	RUN(test_stop_leaves_nothing);
	RUN(test_abort_exit);
	RUN(test_abort_sigint);
	if (g_up)
		zk_ensemble_stop(&g_e);
	printf("    total %llu ms\n", (unsigned long long)(sup_now_ms() - t0));
	if (getenv("SPECTAP_KEEP_TMP")) {
		printf("    kept %s\n", g_tmp);
		TEST_MAIN_END("test_zk_ensemble");
	}
	struct sup_output o;
	const char *rm[] = {"rm", "-rf", g_tmp, NULL};
	if (sup_run_capture(rm, NULL, 10000, &o, NULL) != 0 || !WIFEXITED(o.status) ||
	    WEXITSTATUS(o.status) != 0)
		fprintf(stderr, "could not remove %s\n", g_tmp);
	sup_output_free(&o);
	TEST_MAIN_END("test_zk_ensemble");
}
