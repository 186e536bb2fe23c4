/* The process supervisor (collector/supervise.c) and the etcd cluster launcher
 * (systems/etcd/cluster.c), on real processes: sh and sleep for the supervisor, a real 3-member
 * etcd cluster on loopback for the launcher, the put load client (tools/go/putload, at the path
 * PUTLOAD) against it, and, as root, a 3-member cluster in network namespaces for partitions.
 * Every wait is on a condition with a deadline. */
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
#include "cluster.h"
#include "netns.h"
#include "supervise.h"

#ifndef PUTLOAD
#define PUTLOAD "build/tools/putload"
#endif

static char g_tmp[256]; /* the test's temp dir */

/* ---- /proc helpers ---- */

/* State letter of pid ('\0' when it does not exist), its process group in *pgrp. */
static char proc_state(pid_t pid, pid_t *pgrp)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '\0';
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	char st = '\0';
	int ppid = 0, pg = 0;
	if (!rp || sscanf(rp + 1, " %c %d %d", &st, &ppid, &pg) != 3)
		return '\0';
	if (pgrp)
		*pgrp = pg;
	return st;
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

/* Alive: exists and is not a zombie. */
static bool alive(pid_t pid)
{
	char st = proc_state(pid, NULL);
	return st != '\0' && st != 'Z' && st != 'X';
}

/* Live (non-zombie) processes whose command line holds needle, or whose process group is one of
 * pgids[0..npg); *first gets one of them. */
static int count_procs(const char *needle, const pid_t *pgids, size_t npg, pid_t *first)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int count = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		pid_t pg = 0;
		char st = proc_state((pid_t)pid, &pg);
		if (st == '\0' || st == 'Z' || st == 'X')
			continue;
		bool hit = false;
		for (size_t k = 0; k < npg; k++)
			hit |= pgids[k] == pg;
		if (needle && !hit) {
			char path[64], buf[4096];
			snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t r = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (r <= 0)
				continue;
			for (ssize_t i = 0; i < r; i++)
				if (buf[i] == '\0')
					buf[i] = ' ';
			buf[r] = '\0';
			hit = strstr(buf, needle) != NULL;
		}
		if (hit) {
			if (first && !count)
				*first = (pid_t)pid;
			count++;
		}
	}
	closedir(d);
	return count;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 65536);
	if (buf) {
		size_t n = fread(buf, 1, 65535, f);
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

/* ---- supervisor tests (sh and sleep) ---- */

struct file_has {
	const char *path, *needle;
};

static int file_has_cond(void *p)
{
	struct file_has *fh = p;
	char *t = read_file(fh->path);
	int r = t && strstr(t, fh->needle) != NULL;
	free(t);
	return r;
}

struct state_is {
	pid_t pid;
	char want;
	bool negate;
};

static int state_cond(void *p)
{
	struct state_is *s = p;
	char st = proc_state(s->pid, NULL);
	return s->negate ? st != s->want : st == s->want;
}


static void test_sup_spawn_signal_restart(void)
{
	struct sup s;
	char log[512], dir[512];
	pid_t pid = 0, pid2 = 0;
	snprintf(log, sizeof log, "%s/sh.log", g_tmp);
	snprintf(dir, sizeof dir, "%s/cwd", g_tmp);
	mkdir(dir, 0755);
	sup_init(&s, 500);
	const char *argv[] = {"sh", "-c",
			      "echo out; echo err >&2; echo \"x=$SPT_X\"; echo \"pwd=$(pwd)\"; "
			      "echo ready; exec sleep 30",
			      NULL};
	const char *env[] = {"SPT_X=hello", NULL};
	struct sup_spec spec = {"shell", argv, env, dir, log};
	int rc = sup_spawn(&s, &spec, 1);
	CHECKF(rc == 0, "%s", s.err);
	if (rc < 0)
		goto out;
	pid = s.procs[0].pid;
	CHECK(pid > 0 && getpgid(pid) == pid); /* its own process group */
	struct file_has fh = {log, "ready"};
	CHECK(sup_wait_until(file_has_cond, &fh, 10, 5000, NULL) == 0);
	char *t = read_file(log);
	char want[600];
	snprintf(want, sizeof want, "pwd=%s\n", dir);
	CHECK(t && strstr(t, "out\n") && strstr(t, "err\n") && strstr(t, "x=hello\n") &&
	      strstr(t, want));
	free(t);

	/* SIGSTOP / SIGCONT are seen in /proc. */
	CHECK(sup_signal(&s, 0, SIGSTOP) == 0 && s.procs[0].stopped);
	struct state_is stopped = {pid, 'T', false};
	CHECK(sup_wait_until(state_cond, &stopped, 5, 3000, NULL) == 0);
	CHECK(sup_signal(&s, 0, SIGCONT) == 0 && !s.procs[0].stopped);
	struct state_is resumed = {pid, 'T', true};
	CHECK(sup_wait_until(state_cond, &resumed, 5, 3000, NULL) == 0);

	/* SIGTERM, wait for the exit, then restart with the same argv. */
	int st = 0;
	CHECK(sup_wait_exit(&s, 0, 50, &st) == -ETIMEDOUT && strstr(s.err, "still runs"));
	CHECK(sup_signal(&s, 0, SIGTERM) == 0);
	CHECK(sup_wait_exit(&s, 0, 3000, &st) == 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	CHECK(!sup_running(&s, 0) && !alive(pid));
	CHECK(sup_signal(&s, 0, SIGKILL) == -ESRCH && strstr(s.err, "shell"));
	CHECK(sup_restart(&s, 0) == 0);
	pid2 = s.procs[0].pid;
	CHECK(pid2 != pid && sup_running(&s, 0) && s.procs[0].starts == 2);
	CHECK(sup_start(&s, 0) == -EBUSY);
out:
	sup_fini(&s);
	CHECK(pid2 == 0 || !alive(pid2));
}

/* sup.on_fork runs before the child may exec: the hook sees the child still running this
 * program (not yet /bin/sleep), however the scheduler orders parent and child; at a restart
 * too. */
struct fork_seen {
	int calls, pid;
	size_t proc;
	bool before_exec;
};

static void on_fork_hook(void *ctx, size_t proc, int pid)
{
	struct fork_seen *f = ctx;
	char link[64], exe[512] = "", self[512] = "";
	snprintf(link, sizeof link, "/proc/%d/exe", pid);
	ssize_t n = readlink(link, exe, sizeof exe - 1), m = readlink("/proc/self/exe", self, sizeof self - 1);
	/* Give the child every chance to run ahead if nothing held it. */
	usleep(20000);
	ssize_t n2 = readlink(link, exe + 256, 255);
	f->before_exec = n > 0 && m > 0 && n2 == n && !strncmp(exe, self, (size_t)n) && !strncmp(exe + 256, self, (size_t)n);
	f->calls++;
	f->pid = pid;
	f->proc = proc;
}

static void test_sup_on_fork_before_exec(void)
{
	struct sup s;
	struct fork_seen f = { 0 };
	char log[512];
	snprintf(log, sizeof log, "%s/fork.log", g_tmp);
	sup_init(&s, 500);
	s.on_fork = on_fork_hook;
	s.on_fork_ctx = &f;
	const char *argv[] = {"/bin/sleep", "30", NULL};
	struct sup_spec spec = {"sleeper", argv, NULL, NULL, log};
	int rc = sup_spawn(&s, &spec, 1);
	CHECKF(rc == 0, "%s", s.err);
	CHECK(f.calls == 1 && f.pid == s.procs[0].pid && f.proc == 0);
	CHECK(f.before_exec);
	CHECK(sup_restart(&s, 0) == 0);
	CHECK(f.calls == 2 && f.pid == s.procs[0].pid && f.before_exec);
	sup_fini(&s);
}

static void test_sup_exec_errors(void)
{
	struct sup s;
	sup_init(&s, 200);
	const char *bad[] = {"/nonexistent/prog", "x", NULL};
	struct sup_spec spec = {"ghost", bad, NULL, NULL, NULL};
	int rc = sup_spawn(&s, &spec, 1);
	CHECKF(rc == -ENOENT && strstr(s.err, "exec /nonexistent/prog") && strstr(s.err, "ghost"),
	       "rc %d: %s", rc, s.err);
	const char *nopath[] = {"no-such-program-spectap", NULL};
	struct sup_spec spec2 = {"nopath", nopath, NULL, NULL, NULL};
	rc = sup_add(&s, &spec2, NULL);
	CHECKF(rc == -ENOENT && strstr(s.err, "not found in PATH"), "rc %d: %s", rc, s.err);
	const char *ok[] = {"true", NULL};
	struct sup_spec spec3 = {"badcwd", ok, NULL, "/nonexistent/dir", NULL};
	rc = sup_spawn(&s, &spec3, 1);
	CHECKF(rc == -ENOENT && strstr(s.err, "chdir /nonexistent/dir"), "rc %d: %s", rc, s.err);
	struct sup_spec spec4 = {"badlog", ok, NULL, NULL, "/nonexistent/dir/x.log"};
	rc = sup_spawn(&s, &spec4, 1);
	CHECKF(rc == -ENOENT && strstr(s.err, "open log /nonexistent/dir/x.log"), "rc %d: %s", rc,
	       s.err);
	sup_fini(&s);
}

/* A process that ignores SIGTERM is killed after the grace; its whole group goes with it. */
static void test_sup_stop_escalates(void)
{
	struct sup s;
	char pidfile[512], script[2048];
	snprintf(pidfile, sizeof pidfile, "%s/grandchild.pid", g_tmp);
	snprintf(script, sizeof script,
		 "trap '' TERM; sleep 30 & echo $! > %s.tmp; mv %s.tmp %s; wait", pidfile, pidfile,
		 pidfile);
	sup_init(&s, 300);
	const char *argv[] = {"sh", "-c", script, NULL};
	struct sup_spec spec = {"stubborn", argv, NULL, NULL, NULL};
	int rc = sup_spawn(&s, &spec, 1);
	CHECKF(rc == 0, "%s", s.err);
	struct file_has fh = {pidfile, "\n"};
	CHECK(sup_wait_until(file_has_cond, &fh, 5, 5000, NULL) == 0);
	char *t = read_file(pidfile);
	pid_t gc = t ? (pid_t)atoi(t) : 0;
	free(t);
	CHECK(gc > 0 && alive(gc) && getpgid(gc) == s.procs[0].pid);
	uint64_t t0 = sup_now_ms();
	CHECK(sup_stop(&s, 0, 300) == 0);
	uint64_t took = sup_now_ms() - t0;
	CHECKF(took >= 290 && took < 3000, "stop took %llu ms", (unsigned long long)took);
	CHECK(WIFSIGNALED(s.procs[0].status) && WTERMSIG(s.procs[0].status) == SIGKILL);
	CHECK(gc > 0 && !alive(gc));
	sup_fini(&s);
}

struct counter {
	int calls, true_at;
};

static int count_cond(void *p)
{
	struct counter *c = p;
	return ++c->calls >= c->true_at;
}

static int err_cond(void *p)
{
	(void)p;
	return -EPIPE;
}

static void test_sup_wait_until(void)
{
	struct counter c = {0, 3};
	unsigned el = 0;
	CHECK(sup_wait_until(count_cond, &c, 10, 2000, &el) == 0 && c.calls == 3);
	CHECK(el >= 15 && el < 1000);
	struct counter never = {0, 1000000};
	CHECK(sup_wait_until(count_cond, &never, 20, 150, &el) == -ETIMEDOUT);
	CHECK(el >= 150 && el < 1000 && never.calls >= 2);
	CHECK(sup_wait_until(err_cond, NULL, 10, 1000, NULL) == -EPIPE);
}

static void test_sup_run_capture(void)
{
	struct sup_output o;
	char err[SUP_ERR_SIZE];
	const char *argv[] = {"sh", "-c", "echo hi; echo \"$SPT_Y\"; echo oops >&2; exit 3", NULL};
	const char *env[] = {"SPT_Y=why", NULL};
	int rc = sup_run_capture(argv, env, 5000, &o, err);
	CHECKF(rc == 0, "%s", err);
	CHECK(strcmp(o.out, "hi\nwhy\n") == 0 && o.out_len == 7);
	CHECK(strcmp(o.err_out, "oops\n") == 0);
	CHECK(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 3);
	sup_output_free(&o);

	/* Large output is read while the command runs (no pipe deadlock). */
	const char *big[] = {"sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo 0123456789abcdef0123456789abcdef; i=$((i+1)); done", NULL};
	rc = sup_run_capture(big, NULL, 10000, &o, err);
	CHECK(rc == 0 && o.out_len == 3000 * 33);
	sup_output_free(&o);

	uint64_t t0 = sup_now_ms();
	const char *slow[] = {"sh", "-c", "echo before; exec sleep 10", NULL};
	rc = sup_run_capture(slow, NULL, 200, &o, err);
	uint64_t took = sup_now_ms() - t0;
	CHECKF(rc == -ETIMEDOUT && strstr(err, "killed after 200 ms"), "rc %d: %s", rc, err);
	CHECK(took >= 190 && took < 2000);
	CHECK(strcmp(o.out, "before\n") == 0);
	CHECK(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGKILL);
	sup_output_free(&o);

	const char *missing[] = {"/nonexistent/etcdctl", NULL};
	rc = sup_run_capture(missing, NULL, 1000, &o, err);
	CHECKF(rc == -ENOENT && strstr(err, "/nonexistent/etcdctl"), "rc %d: %s", rc, err);
	sup_output_free(&o);
}

/* Reads n pids from fd (written by a forked test child). */
static size_t read_pids(int fd, pid_t *pids, size_t max)
{
	size_t got = 0;
	while (got < max * sizeof *pids) {
		ssize_t r = read(fd, (char *)pids + got, max * sizeof *pids - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got / sizeof *pids;
}

static pid_t wait_child(pid_t pid, int *st)
{
	pid_t r;
	while ((r = waitpid(pid, st, 0)) < 0 && errno == EINTR)
		;
	return r;
}

/* exit() of a fork()ed copy tears down only what the copy started; SIGINT likewise. */
static void test_sup_exit_and_signal_paths(void)
{
	struct sup s;
	sup_init(&s, 500);
	const char *argv[] = {"sleep", "30", NULL};
	struct sup_spec spec = {"parent-sleep", argv, NULL, NULL, NULL};
	CHECK(sup_spawn(&s, &spec, 1) == 0);
	pid_t ours = s.procs[0].pid;

	for (int mode = 0; mode < 2; mode++) {
		int fds[2];
		if (pipe2(fds, O_CLOEXEC) < 0) {
			CHECK(0);
			break;
		}
		pid_t child = fork();
		if (child == 0) {
			static struct sup cs; /* static: reachable for the leak checker at exit */
			close(fds[0]);
			sup_init(&cs, 500);
			if (mode == 1)
				sup_install_handlers();
			struct sup_spec sp = {"child-sleep", argv, NULL, NULL, NULL};
			if (sup_spawn(&cs, &sp, 1) < 0)
				_exit(2);
			pid_t p = cs.procs[0].pid;
			if (write(fds[1], &p, sizeof p) != (ssize_t)sizeof p)
				_exit(2);
			close(fds[1]);
			if (mode == 0)
				exit(1); /* atexit path */
			for (;;)
				pause(); /* until SIGINT */
		}
		close(fds[1]);
		pid_t theirs = 0;
		CHECK(read_pids(fds[0], &theirs, 1) == 1);
		close(fds[0]);
		if (mode == 1)
			kill(child, SIGINT);
		int st = 0;
		CHECK(wait_child(child, &st) == child);
		if (mode == 0)
			CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
		else
			CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status 0x%x", st);
		CHECKF(theirs > 0 && !alive(theirs), "mode %d: child's sleep %d still alive", mode,
		       (int)theirs);
		CHECKF(alive(ours), "mode %d: the parent's sleep was killed by the child", mode);
	}
	sup_fini(&s);
	CHECK(!alive(ours));
}

/* ---- etcd ---- */

static const char sample_status[] =
	"[{\"Endpoint\":\"127.0.0.1:22401\",\"Status\":{\"header\":{\"cluster_id\":13643549080651105099,"
	"\"member_id\":11417610130673999598,\"revision\":1,\"raft_term\":2},\"version\":\"3.4.23\","
	"\"dbSize\":24576,\"leader\":2524147691237605803,\"raftIndex\":8,\"raftTerm\":2,"
	"\"raftAppliedIndex\":8,\"dbSizeInUse\":16384}},"
	"{\"Endpoint\":\"127.0.0.1:22402\",\"Status\":{\"header\":{\"cluster_id\":13643549080651105099,"
	"\"member_id\":18446744073709551615,\"revision\":1,\"raft_term\":3},\"version\":\"3.4.23\","
	"\"dbSize\":20480,\"raftIndex\":9,\"raftTerm\":3,\"raftAppliedIndex\":7,\"dbSizeInUse\":1.5e3}}]\n";

static void test_etcd_parse_status(void)
{
	struct etcd_member_status st[4];
	size_t n = 0;
	char err[256] = "";
	int rc = etcd_parse_status(sample_status, strlen(sample_status), st, 4, &n, err, sizeof err);
	CHECKF(rc == 0, "%s", err);
	CHECK(n == 2);
	CHECK(st[0].id == 11417610130673999598ull && st[0].id == 0x9e737febb6b99eeeull);
	CHECK(st[0].cluster_id == 13643549080651105099ull);
	CHECK(st[0].leader == 2524147691237605803ull && st[0].term == 2 && st[0].raft_index == 8);
	CHECK(st[0].applied_index == 8 && st[0].revision == 1 && st[0].reachable);
	CHECK(strcmp(st[0].endpoint, "127.0.0.1:22401") == 0);
	CHECK(st[1].id == UINT64_MAX && st[1].leader == 0 && st[1].term == 3); /* omitted: 0 */
	CHECK(st[1].raft_index == 9 && st[1].applied_index == 7);

	static const char over[] = "[{\"Endpoint\":\"e\",\"Status\":{\"header\":{\"member_id\":"
				   "18446744073709551616},\"raftTerm\":1}}]";
	rc = etcd_parse_status(over, strlen(over), st, 4, &n, err, sizeof err);
	CHECKF(rc == -ERANGE && strstr(err, "member_id"), "rc %d: %s", rc, err);
	static const char broken[] = "[{\"Endpoint\":\"e\",";
	rc = etcd_parse_status(broken, strlen(broken), st, 4, &n, err, sizeof err);
	CHECKF(rc == -EINVAL && strstr(err, "line 1"), "rc %d: %s", rc, err);
	static const char empty[] = "[]";
	CHECK(etcd_parse_status(empty, 2, st, 4, &n, err, sizeof err) == 0 && n == 0);
}

static bool g_have_etcd;
static struct etcd_cluster g_c;
static bool g_up;
static char g_work[PATH_MAX];
static pid_t g_pgids[ETCD_MAX_MEMBERS * 4];
static size_t g_npg;
static int g_killed = -1;
static uint64_t g_term_after_kill;

static void remember_pgids(void)
{
	for (unsigned i = 0; i < g_c.n; i++) {
		pid_t p = etcd_cluster_pid(&g_c, i);
		bool seen = false;
		for (size_t k = 0; k < g_npg; k++)
			seen |= g_pgids[k] == p;
		if (p > 0 && !seen && g_npg < sizeof g_pgids / sizeof g_pgids[0])
			g_pgids[g_npg++] = p;
	}
}

static void test_etcd_busy_port(void)
{
	if (!g_have_etcd)
		return;
	/* A block of 6 free ports below the ephemeral range, then a listener on its 4th. */
	int fd = -1;
	unsigned port = 0;
	for (unsigned base = 29000 + (unsigned)getpid() % 100 * 6; base < 32000 && !port;
	     base += 6) {
		bool free_block = true;
		for (unsigned k = 0; k < 6 && free_block; k++) {
			int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_in ta = {.sin_family = AF_INET,
						 .sin_port = htons((uint16_t)(base + k)),
						 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
			free_block = t >= 0 && bind(t, (struct sockaddr *)&ta, sizeof ta) == 0;
			if (t >= 0)
				close(t);
		}
		if (!free_block)
			continue;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)(base + 3)),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0)
			port = base + 3;
		else if (fd >= 0)
			close(fd);
	}
	CHECK(port != 0);
	if (!port)
		return;
	struct etcd_cluster c;
	char dir[PATH_MAX + 16], want[64];
	snprintf(dir, sizeof dir, "%s/busy", g_tmp);
	/* The listening port is member n2's client port. */
	struct etcd_cluster_opts o = {.work_dir = dir, .base_port = port - 3};
	int rc = etcd_cluster_start(&c, &o);
	snprintf(want, sizeof want, "port %u (n2 client) is busy", port);
	CHECKF(rc == -EADDRINUSE && strstr(c.err, want), "rc %d: %s", rc, c.err);
	etcd_cluster_stop(&c);
	close(fd);
}

static void test_etcd_leader_elected(void)
{
	if (!g_have_etcd)
		return;
	snprintf(g_work, sizeof g_work, "%s/cluster", g_tmp);
	struct etcd_cluster_opts o = {.work_dir = g_work, .members = 3, .grace_ms = 2000};
	int rc = etcd_cluster_start(&g_c, &o);
	CHECKF(rc == 0, "%s", g_c.err);
	if (rc < 0)
		return;
	g_up = true;
	remember_pgids();
	struct etcd_leader l;
	rc = etcd_cluster_wait_leader(&g_c, 10000, 0, true, &l, NULL);
	CHECKF(rc == 0, "%s", g_c.err);
	unsigned ms = (unsigned)(sup_now_ms() - g_c.launched_ms);
	printf("    timing: launch to leader agreed by all 3: %u ms (ports %u..%u)\n", ms,
	       g_c.base_port, g_c.base_port + 2 * g_c.n - 1);
	CHECK(ms < 10000);
	CHECK(l.index >= 0 && l.term >= 2);
}

static void test_etcd_members_agree(void)
{
	if (!g_up)
		return;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	int rc = etcd_cluster_status(&g_c, st);
	CHECKF(rc == 3, "rc %d: %s", rc, g_c.err);
	struct etcd_leader l;
	CHECK(etcd_cluster_find_leader(&g_c, st, &l) == 0);
	CHECK(l.agree == 3 && l.reachable == 3);
	for (unsigned i = 0; i < 3; i++) {
		CHECK(st[i].reachable && st[i].id != 0 && st[i].id == g_c.m[i].id);
		CHECK(st[i].leader == st[0].leader && st[i].term == st[0].term);
		CHECK(etcd_cluster_member_of(&g_c, st[i].id) == (int)i);
		for (unsigned j = 0; j < i; j++)
			CHECK(st[i].id != st[j].id);
	}
	CHECK(l.index >= 0 && st[l.index].leader == st[l.index].id);
	printf("    leader n%d id %llx term %llu\n", l.index + 1, (unsigned long long)l.id,
	       (unsigned long long)l.term);
}

static void test_etcd_puts(void)
{
	if (!g_up)
		return;
	int ok = 0;
	uint64_t t0 = sup_now_ms();
	for (int i = 0; i < 20; i++) {
		char k[32], v[32];
		snprintf(k, sizeof k, "key%d", i);
		snprintf(v, sizeof v, "value%d", i);
		int rc = etcd_cluster_put(&g_c, k, v, 5000);
		CHECKF(rc == 0, "%s", g_c.err);
		ok += rc == 0;
	}
	CHECK(ok == 20);
	printf("    20 puts in %llu ms\n", (unsigned long long)(sup_now_ms() - t0));
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	CHECK(etcd_cluster_status(&g_c, st) == 3);
	CHECK(st[0].revision >= 21);
}

static void test_etcd_kill_leader(void)
{
	if (!g_up)
		return;
	struct etcd_leader old, nl;
	CHECKF(etcd_cluster_wait_leader(&g_c, 5000, 0, true, &old, NULL) == 0, "%s", g_c.err);
	if (old.index < 0)
		return;
	pid_t victim = etcd_cluster_pid(&g_c, (unsigned)old.index);
	uint64_t t0 = sup_now_ms();
	int rc = etcd_cluster_kill(&g_c, (unsigned)old.index);
	CHECKF(rc == 0, "%s", g_c.err);
	CHECK(!alive(victim) && etcd_cluster_pid(&g_c, (unsigned)old.index) == 0);
	g_killed = old.index;
	rc = etcd_cluster_wait_leader(&g_c, 10000, old.term, true, &nl, NULL);
	unsigned ms = (unsigned)(sup_now_ms() - t0);
	CHECKF(rc == 0, "%s", g_c.err);
	CHECK(nl.index >= 0 && nl.index != old.index && nl.term > old.term && nl.agree == 2);
	printf("    timing: SIGKILL of leader n%d (term %llu) to new leader n%d (term %llu): %u ms\n",
	       old.index + 1, (unsigned long long)old.term, nl.index + 1,
	       (unsigned long long)nl.term, ms);
	g_term_after_kill = nl.term;
	/* The survivors still take writes. */
	CHECKF(etcd_cluster_put(&g_c, "after-kill", "1", 5000) == 0, "%s", g_c.err);
}

struct caught_up {
	struct etcd_cluster *c;
	unsigned member;
	uint64_t min_index;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
};

static int caught_up_cond(void *p)
{
	struct caught_up *cu = p;
	int rc = etcd_cluster_status(cu->c, cu->st);
	if (rc < 0)
		return rc;
	struct etcd_leader l;
	if (etcd_cluster_find_leader(cu->c, cu->st, &l) < 0)
		return 0;
	const struct etcd_member_status *m = &cu->st[cu->member];
	return m->reachable && m->term == l.term && m->leader == l.id &&
	       m->applied_index >= cu->min_index;
}

static void test_etcd_restart_rejoins(void)
{
	if (!g_up || g_killed < 0)
		return;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	CHECK(etcd_cluster_status(&g_c, st) == 2);
	uint64_t idx = 0;
	for (unsigned i = 0; i < 3; i++)
		if (st[i].reachable && st[i].raft_index > idx)
			idx = st[i].raft_index;
	uint64_t t0 = sup_now_ms();
	int rc = etcd_cluster_restart(&g_c, (unsigned)g_killed);
	CHECKF(rc == 0, "%s", g_c.err);
	remember_pgids();
	CHECK(etcd_cluster_pid(&g_c, (unsigned)g_killed) > 0);
	struct caught_up cu = {&g_c, (unsigned)g_killed, idx, {{0}}};
	unsigned el = 0;
	rc = sup_wait_until(caught_up_cond, &cu, 20, 15000, &el);
	CHECKF(rc == 0, "n%d did not catch up (rc %d): reachable %d term %llu applied %llu, want %llu",
	       g_killed + 1, rc, cu.st[g_killed].reachable,
	       (unsigned long long)cu.st[g_killed].term,
	       (unsigned long long)cu.st[g_killed].applied_index, (unsigned long long)idx);
	CHECK(cu.st[g_killed].term >= g_term_after_kill);
	printf("    timing: restart of n%d to caught up (term %llu, applied %llu): %llu ms\n",
	       g_killed + 1, (unsigned long long)cu.st[g_killed].term,
	       (unsigned long long)cu.st[g_killed].applied_index,
	       (unsigned long long)(sup_now_ms() - t0));
	struct etcd_leader l;
	CHECKF(etcd_cluster_wait_leader(&g_c, 5000, 0, true, &l, NULL) == 0, "%s", g_c.err);
	CHECK(l.agree == 3);
	/* The restarted member used --initial-cluster-state existing on its own data dir. */
	const struct sup_proc *p = &g_c.sup.procs[g_c.m[g_killed].proc];
	bool existing = false;
	for (char **a = p->argv; *a && a[1]; a++)
		existing |= strcmp(a[0], "--initial-cluster-state") == 0 && strcmp(a[1], "existing") == 0;
	CHECK(existing && p->starts == 2);
}

struct hold {
	struct etcd_cluster *c;
	uint64_t until;
	unsigned leaderless_polls, polls;
};

/* Holds until the deadline, checking on the way that the others keep a leader. */
static int hold_cond(void *p)
{
	struct hold *h = p;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	struct etcd_leader l;
	int rc = etcd_cluster_status(h->c, st);
	if (rc < 0)
		return rc;
	h->polls++;
	if (etcd_cluster_find_leader(h->c, st, &l) < 0 || l.agree < 2)
		h->leaderless_polls++;
	return sup_now_ms() >= h->until;
}

static void test_etcd_pause_follower(void)
{
	if (!g_up)
		return;
	struct etcd_leader l;
	CHECKF(etcd_cluster_wait_leader(&g_c, 5000, 0, true, &l, NULL) == 0, "%s", g_c.err);
	if (l.index < 0)
		return;
	unsigned f = (unsigned)(l.index + 1) % 3;
	pid_t fp = etcd_cluster_pid(&g_c, f);
	CHECKF(etcd_cluster_pause(&g_c, f) == 0, "%s", g_c.err);
	struct state_is stopped = {fp, 'T', false};
	CHECK(sup_wait_until(state_cond, &stopped, 5, 3000, NULL) == 0);
	unsigned hold_ms = 2 * g_c.election_ms;
	struct hold h = {&g_c, sup_now_ms() + hold_ms, 0, 0};
	CHECK(sup_wait_until(hold_cond, &h, 50, hold_ms + 5000, NULL) == 0);
	CHECKF(h.leaderless_polls == 0, "%u of %u polls saw no leader while n%u was stopped",
	       h.leaderless_polls, h.polls, f + 1);
	CHECKF(etcd_cluster_resume(&g_c, f) == 0, "%s", g_c.err);
	struct state_is resumed = {fp, 'T', true};
	CHECK(sup_wait_until(state_cond, &resumed, 5, 3000, NULL) == 0);
	uint64_t t0 = sup_now_ms();
	struct etcd_leader after;
	int rc = etcd_cluster_wait_leader(&g_c, 10000, 0, true, &after, NULL);
	CHECKF(rc == 0, "%s", g_c.err);
	CHECK(after.agree == 3);
	/* Exactly one member calls itself leader. */
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	CHECK(etcd_cluster_status(&g_c, st) == 3);
	int self_leaders = 0;
	for (unsigned i = 0; i < 3; i++)
		self_leaders += st[i].reachable && st[i].leader == st[i].id;
	CHECK(self_leaders == 1);
	printf("    n%u stopped %u ms: leader n%d term %llu before, n%d term %llu after "
	       "(agreed %llu ms after SIGCONT)\n",
	       f + 1, hold_ms, l.index + 1, (unsigned long long)l.term, after.index + 1,
	       (unsigned long long)after.term, (unsigned long long)(sup_now_ms() - t0));
	CHECKF(etcd_cluster_put(&g_c, "after-pause", "1", 5000) == 0, "%s", g_c.err);
}

/* ---- put load (tools/go/putload) ---- */

static bool g_have_putload;

static void test_load_parse_summary(void)
{
	struct etcd_load_result r;
	char err[256] = "";
	static const char out[] =
		"{\"level\":\"error\",\"msg\":\"x\"}\n"
		"{\"puts\":1,\"acked\":1,\"failed\":0,\"seconds\":1,\"per_second\":1,\"p50_ms\":1,"
		"\"p99_ms\":1}\n"
		"{\"puts\":200,\"acked\":190,\"failed\":10,\"seconds\":1.25,\"per_second\":152.5,"
		"\"p50_ms\":2.041,\"p99_ms\":7,\"first_error\":\"put k7: context deadline exceeded\"}\n";
	int rc = etcd_parse_load_summary(out, strlen(out), &r, err, sizeof err);
	CHECKF(rc == 0, "%s", err);
	CHECK(r.puts == 200 && r.acked == 190 && r.failed == 10); /* the last summary line */
	CHECK(r.seconds == 1.25 && r.per_second == 152.5 && r.p50_ms == 2.041 && r.p99_ms == 7);
	CHECK(strcmp(r.first_error, "put k7: context deadline exceeded") == 0);
	static const char none[] = "putload: --endpoints is required\n";
	rc = etcd_parse_load_summary(none, strlen(none), &r, err, sizeof err);
	CHECKF(rc == -ENOENT && strstr(err, "{\"puts\":"), "rc %d: %s", rc, err);
	static const char bad[] = "{\"puts\":-1,\"acked\":0,\"failed\":0}\n";
	rc = etcd_parse_load_summary(bad, strlen(bad), &r, err, sizeof err);
	CHECKF(rc == -EINVAL && strstr(err, "puts"), "rc %d: %s", rc, err);
	static const char nosecs[] = "{\"puts\":1,\"acked\":1,\"failed\":0}";
	rc = etcd_parse_load_summary(nosecs, strlen(nosecs), &r, err, sizeof err);
	CHECKF(rc == -EINVAL && strstr(err, "seconds missing"), "rc %d: %s", rc, err);
}

/* Lines of a file (-1 when it cannot be read). */
static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long n = 0;
	for (int ch; (ch = getc(f)) != EOF;)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* Checks an acked file: n JSON lines with keys <prefix><i>, distinct keys and revisions. */
static void check_acked(const char *path, const char *prefix, uint64_t n)
{
	FILE *f = fopen(path, "r");
	CHECKF(f != NULL, "cannot open %s", path);
	if (!f)
		return;
	char line[256];
	uint64_t lines = 0, dup_keys = 0, dup_revs = 0, bad = 0;
	static unsigned long long revs[8192];
	static long keys[8192];
	while (fgets(line, sizeof line, f)) {
		unsigned long long rev = 0;
		double ms = -1;
		char fmt[64];
		snprintf(fmt, sizeof fmt, "{\"key\":\"%s%%ld\",\"rev\":%%llu,\"ms\":%%lf}", prefix);
		long key = -1;
		if (sscanf(line, fmt, &key, &rev, &ms) != 3 || key < 0 || rev == 0 || ms < 0) {
			if (!bad++)
				fprintf(stderr, "bad acked line: %s", line);
			continue;
		}
		for (uint64_t j = 0; j < lines && j < 8192; j++) {
			dup_keys += keys[j] == key;
			dup_revs += revs[j] == rev;
		}
		if (lines < 8192) {
			keys[lines] = key;
			revs[lines] = rev;
		}
		lines++;
	}
	fclose(f);
	CHECKF(lines == n && bad == 0, "%s: %llu good lines, %llu bad, %llu acked", path,
	       (unsigned long long)lines, (unsigned long long)bad, (unsigned long long)n);
	CHECK(dup_keys == 0 && dup_revs == 0);
}

static void test_etcd_load(void)
{
	if (!g_up)
		return;
	CHECKF(g_have_putload, "%s is missing: build it with `make build/tools/putload`", PUTLOAD);
	if (!g_have_putload)
		return;
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	CHECK(etcd_cluster_status(&g_c, st) == 3);
	uint64_t rev0 = st[0].revision;
	struct etcd_load_opts o = {.count = 200, .concurrency = 4, .prefix = "pl-", .value_size = 32};
	struct etcd_load_result r;
	int rc = etcd_cluster_load(&g_c, PUTLOAD, &o, &r);
	CHECKF(rc == 0, "%s", g_c.err);
	CHECK(r.puts == 200 && r.acked == 200 && r.failed == 0 && r.first_error[0] == '\0');
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	CHECK(r.seconds > 0 && r.per_second > 0 && r.p50_ms > 0 && r.p50_ms <= r.p99_ms);
	printf("    200 puts, 4 at once: %.0f/s, p50 %.2f ms, p99 %.2f ms\n", r.per_second, r.p50_ms,
	       r.p99_ms);
	check_acked(r.acked_path, "pl-", 200);
	CHECK(etcd_cluster_status(&g_c, st) == 3);
	CHECKF(st[0].revision >= rev0 + 200, "revision %llu -> %llu",
	       (unsigned long long)rev0, (unsigned long long)st[0].revision);

	/* Errors name the cause and the way out. */
	rc = etcd_cluster_load(&g_c, "/nonexistent/putload", &o, &r);
	CHECKF(rc == -ENOENT && strstr(g_c.err, "/nonexistent/putload") &&
		       strstr(g_c.err, "make build/tools/putload"),
	       "rc %d: %s", rc, g_c.err);
	struct etcd_load_opts none = {.concurrency = 1};
	rc = etcd_cluster_load(&g_c, PUTLOAD, &none, &r);
	CHECKF(rc == -EINVAL && strstr(g_c.err, "count"), "rc %d: %s", rc, g_c.err);
	/* A deadline shorter than the load: stopped, summary still read. */
	struct etcd_load_opts slow = {.duration_ms = 20000, .timeout_ms = 300};
	rc = etcd_cluster_load(&g_c, PUTLOAD, &slow, &r);
	CHECKF(rc == -ETIMEDOUT && strstr(g_c.err, "deadline"), "rc %d: %s", rc, g_c.err);
	CHECK(r.acked > 0 && r.puts >= r.acked && r.seconds < 10);
}

struct lines_at_least {
	const char *path;
	long n;
};

static int lines_cond(void *p)
{
	struct lines_at_least *l = p;
	return count_lines(l->path) >= l->n;
}

/* The leader is SIGKILLed while a load runs: puts fail for a while, the load goes on and
 * puts are acked again once a new leader is there. */
static void test_etcd_load_kill_leader(void)
{
	if (!g_up || !g_have_putload)
		return;
	struct etcd_leader old, nl;
	CHECKF(etcd_cluster_wait_leader(&g_c, 10000, 0, true, &old, NULL) == 0, "%s", g_c.err);
	if (old.index < 0)
		return;
	struct etcd_load l;
	struct etcd_load_opts o = {.duration_ms = 60000, .concurrency = 4, .put_timeout_ms = 1000};
	int rc = etcd_cluster_load_start(&g_c, PUTLOAD, &o, &l);
	CHECKF(rc == 0, "%s", g_c.err);
	if (rc < 0)
		return;
	struct lines_at_least before = {l.acked_path, 100};
	CHECKF(sup_wait_until(lines_cond, &before, 20, 10000, NULL) == 0, "no 100 acks in %s",
	       l.acked_path);
	CHECKF(etcd_cluster_kill(&g_c, (unsigned)old.index) == 0, "%s", g_c.err);
	long at_kill = count_lines(l.acked_path);
	rc = etcd_cluster_wait_leader(&g_c, 10000, old.term, true, &nl, NULL);
	CHECKF(rc == 0, "%s", g_c.err);
	long at_leader = count_lines(l.acked_path);
	struct lines_at_least after = {l.acked_path, at_leader + 100};
	CHECKF(sup_wait_until(lines_cond, &after, 20, 15000, NULL) == 0,
	       "acks stuck at %ld after the new leader", count_lines(l.acked_path));
	struct etcd_load_result r;
	rc = etcd_cluster_load_stop(&g_c, &l, &r);
	CHECKF(rc == 0, "%s", g_c.err);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	CHECKF(r.failed > 0 && r.first_error[0], "failed %llu", (unsigned long long)r.failed);
	CHECK(r.puts == r.acked + r.failed && r.acked >= (uint64_t)at_leader + 100);
	CHECK(count_lines(r.acked_path) == (long)r.acked);
	printf("    leader n%d killed after %ld acks: %llu puts, %llu acked, %llu failed "
	       "(first: %s), new leader n%d\n",
	       old.index + 1, at_kill, (unsigned long long)r.puts, (unsigned long long)r.acked,
	       (unsigned long long)r.failed, r.first_error, nl.index + 1);
	CHECK(etcd_cluster_load_wait(&g_c, &l, &r) == -EINVAL); /* collected once */
	CHECKF(etcd_cluster_restart(&g_c, (unsigned)old.index) == 0, "%s", g_c.err);
	remember_pgids();
	CHECKF(etcd_cluster_wait_leader(&g_c, 15000, 0, true, NULL, NULL) == 0, "%s", g_c.err);
	CHECK(etcd_cluster_partition(&g_c, 0) == -EOPNOTSUPP && strstr(g_c.err, "netns"));
}

static void test_etcd_teardown(void)
{
	if (!g_up)
		return;
	pid_t pids[ETCD_MAX_MEMBERS];
	for (unsigned i = 0; i < g_c.n; i++)
		pids[i] = etcd_cluster_pid(&g_c, i);
	uint64_t t0 = sup_now_ms();
	etcd_cluster_stop(&g_c);
	g_up = false;
	printf("    timing: teardown (SIGTERM, grace %u ms): %llu ms\n", g_c.sup.grace_ms,
	       (unsigned long long)(sup_now_ms() - t0));
	for (unsigned i = 0; i < g_c.n; i++)
		CHECKF(pids[i] <= 0 || proc_state(pids[i], NULL) == '\0', "n%u pid %d still exists", i + 1,
		       (int)pids[i]);
	pid_t first = 0;
	int left = count_procs(g_work, g_pgids, g_npg, &first);
	CHECKF(left == 0, "%d processes left, e.g. pid %d", left, (int)first);
	CHECK(count_children() == 0);
	etcd_cluster_stop(&g_c); /* twice is fine */
}

/* A test child that starts a cluster and then exits (mode 0) or waits for SIGINT (mode 1). */
static void abort_path(int mode)
{
	if (!g_have_etcd)
		return;
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/abort%d", g_tmp, mode);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		CHECK(0);
		return;
	}
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		static struct etcd_cluster c; /* static: reachable for the leak checker at exit() */
		close(fds[0]);
		if (mode == 1)
			sup_install_handlers();
		struct etcd_cluster_opts o = {.work_dir = dir};
		if (etcd_cluster_start(&c, &o) < 0) {
			fprintf(stderr, "abort child: %s\n", c.err);
			_exit(3);
		}
		if (etcd_cluster_wait_leader(&c, 10000, 0, false, NULL, NULL) < 0)
			fprintf(stderr, "abort child: %s\n", c.err);
		pid_t pids[3];
		for (unsigned i = 0; i < 3; i++)
			pids[i] = etcd_cluster_pid(&c, i);
		if (write(fds[1], pids, sizeof pids) != (ssize_t)sizeof pids)
			_exit(3);
		close(fds[1]);
		if (mode == 0)
			exit(1); /* an error path: no stop called */
		for (;;)
			pause();
	}
	close(fds[1]);
	pid_t pids[3] = {0, 0, 0};
	size_t n = read_pids(fds[0], pids, 3);
	close(fds[0]);
	CHECK(n == 3 && pids[0] > 0 && alive(pids[0]) && alive(pids[2]));
	uint64_t t0 = sup_now_ms();
	if (mode == 1)
		kill(child, SIGINT);
	int st = 0;
	CHECK(wait_child(child, &st) == child);
	if (mode == 0)
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
	else
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status 0x%x", st);
	printf("    %s: child gone after %llu ms\n", mode ? "SIGINT" : "exit(1)",
	       (unsigned long long)(sup_now_ms() - t0));
	for (size_t i = 0; i < n; i++)
		CHECKF(!alive(pids[i]), "etcd pid %d survived", (int)pids[i]);
	pid_t first = 0;
	int left = count_procs(dir, pids, n, &first);
	CHECKF(left == 0, "%d processes left, e.g. pid %d", left, (int)first);
}

static void test_etcd_abort_exit(void) { abort_path(0); }
static void test_etcd_abort_sigint(void) { abort_path(1); }

/* ---- a cluster in network namespaces (root only) ---- */

static bool g_nup;
static struct etcd_cluster g_n;
static char g_nwork[PATH_MAX];
static int g_cut = -1;          /* the partitioned former leader */
static uint64_t g_cut_term;     /* its term as leader */
static uint64_t g_part_term;    /* the majority's leader's term */
static uint64_t g_part_index;   /* raft index after a put during the partition */

/* Inode of a namespace file. */
static unsigned long ns_ino(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (unsigned long)sb.st_ino : 0;
}

static void test_netns_leader_elected(void)
{
	if (!g_have_etcd)
		return;
	if (geteuid() != 0) {
		printf("SKIP: not root: the netns cluster tests did not run\n");
		return;
	}
	snprintf(g_nwork, sizeof g_nwork, "%s/netns", g_tmp);
	struct etcd_cluster_opts o = {.work_dir = g_nwork, .members = 3, .netns = true};
	int rc = etcd_cluster_start(&g_n, &o);
	CHECKF(rc == 0, "%s", g_n.err);
	if (rc < 0)
		return;
	g_nup = true;
	struct etcd_leader l;
	rc = etcd_cluster_wait_leader(&g_n, 10000, 0, true, &l, NULL);
	CHECKF(rc == 0, "%s", g_n.err);
	printf("    leader n%d term %llu after %llu ms; members on %s, %s, %s\n", l.index + 1,
	       (unsigned long long)l.term, (unsigned long long)(sup_now_ms() - g_n.launched_ms),
	       g_n.m[0].host, g_n.m[1].host, g_n.m[2].host);
	char eps[256], want[32];
	etcd_cluster_endpoints(&g_n, true, eps, sizeof eps);
	snprintf(want, sizeof want, "10.231.%u.1:%u", g_n.net.subnet, g_n.m[0].client_port);
	CHECKF(strncmp(eps, want, strlen(want)) == 0, "endpoints %s", eps);
	CHECK(!strstr(eps, "127.0.0.1"));
	/* The supervised pid is etcd itself, inside its own namespace. */
	for (unsigned i = 0; i < 3; i++) {
		pid_t pid = etcd_cluster_pid(&g_n, i);
		char path[64], exe[PATH_MAX] = "", nsf[128];
		snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
		ssize_t n = readlink(path, exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = '\0';
		CHECKF(pid > 0 && strcmp(exe, etcd_programs[ETCD_PROG_ETCD].path) == 0, "n%u pid %d exe %s", i + 1,
		       (int)pid, exe);
		snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
		snprintf(nsf, sizeof nsf, "/run/netns/%s", g_n.net.m[i].ns);
		CHECK(ns_ino(path) != 0 && ns_ino(path) == ns_ino(nsf) &&
		      ns_ino(path) != ns_ino("/proc/self/ns/net"));
	}
	CHECKF(etcd_cluster_put(&g_n, "netns-key", "1", 5000) == 0, "%s", g_n.err);
	if (g_have_putload) {
		struct etcd_load_opts lo = {.count = 50, .concurrency = 2};
		struct etcd_load_result r;
		rc = etcd_cluster_load(&g_n, PUTLOAD, &lo, &r);
		CHECKF(rc == 0 && r.acked == 50, "rc %d acked %llu: %s", rc,
		       (unsigned long long)r.acked, g_n.err);
	}
}

struct stepped_down {
	struct etcd_cluster *c;
	unsigned member;
	uint64_t term;
	struct etcd_member_status st;
};

/* The partitioned member no longer calls itself leader of its old term. */
static int stepped_down_cond(void *p)
{
	struct stepped_down *s = p;
	int rc = etcd_cluster_member_status(s->c, s->member, &s->st);
	if (rc < 0)
		return rc;
	return rc == 1 && (s->st.leader != s->st.id || s->st.term > s->term);
}

static void test_netns_partition_leader(void)
{
	if (!g_nup)
		return;
	struct etcd_leader old, nl;
	CHECKF(etcd_cluster_wait_leader(&g_n, 5000, 0, true, &old, NULL) == 0, "%s", g_n.err);
	if (old.index < 0)
		return;
	unsigned li = (unsigned)old.index;
	pid_t pid = etcd_cluster_pid(&g_n, li);
	uint64_t t0 = sup_now_ms();
	int rc = etcd_cluster_partition(&g_n, li);
	CHECKF(rc == 0, "%s", g_n.err);
	if (rc < 0)
		return;
	g_cut = old.index;
	g_cut_term = old.term;
	CHECK(g_n.m[li].partitioned && etcd_cluster_pid(&g_n, li) == pid && alive(pid));
	rc = etcd_cluster_wait_leader(&g_n, 15000, old.term, true, &nl, NULL);
	unsigned ms = (unsigned)(sup_now_ms() - t0);
	CHECKF(rc == 0, "%s", g_n.err);
	CHECK(nl.index >= 0 && nl.index != old.index && nl.term > old.term && nl.agree == 2);
	printf("    leader n%d (term %llu) partitioned: n%d leads in term %llu after %u ms\n",
	       old.index + 1, (unsigned long long)old.term, nl.index + 1,
	       (unsigned long long)nl.term, ms);
	g_part_term = nl.term;
	/* The majority takes writes; this namespace no longer reaches the partitioned member. */
	CHECKF(etcd_cluster_put(&g_n, "during-partition", "1", 5000) == 0, "%s", g_n.err);
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	CHECK(etcd_cluster_status(&g_n, st) == 2 && !st[li].reachable);
	for (unsigned i = 0; i < 3; i++)
		if (st[i].reachable && st[i].raft_index > g_part_index)
			g_part_index = st[i].raft_index;
	/* From inside its namespace, the old leader answers: it stepped down (check quorum) or
	 * campaigns in higher terms, and never saw the put. */
	struct stepped_down sd = {&g_n, li, old.term, {0}};
	rc = sup_wait_until(stepped_down_cond, &sd, 50, 10000, NULL);
	CHECKF(rc == 0, "n%u still leader: leader %llx term %llu", li + 1,
	       (unsigned long long)sd.st.leader, (unsigned long long)sd.st.term);
	CHECK(sd.st.raft_index < g_part_index);
	printf("    isolated n%u: leader %llx, term %llu, raft index %llu (majority at %llu)\n",
	       li + 1, (unsigned long long)sd.st.leader, (unsigned long long)sd.st.term,
	       (unsigned long long)sd.st.raft_index, (unsigned long long)g_part_index);
	CHECK(etcd_cluster_partition(&g_n, li) == 0); /* idempotent */
	CHECK(etcd_cluster_partition(&g_n, 7) == -EINVAL);
}

static void test_netns_heal(void)
{
	if (!g_nup || g_cut < 0)
		return;
	uint64_t t0 = sup_now_ms();
	int rc = etcd_cluster_heal(&g_n, (unsigned)g_cut);
	CHECKF(rc == 0, "%s", g_n.err);
	CHECK(!g_n.m[g_cut].partitioned);
	/* All three agree on a leader, the old leader follows and has the partition's put. */
	struct caught_up cu = {&g_n, (unsigned)g_cut, g_part_index, {{0}}};
	rc = sup_wait_until(caught_up_cond, &cu, 50, 20000, NULL);
	CHECKF(rc == 0, "n%d did not rejoin: reachable %d leader %llx term %llu applied %llu",
	       g_cut + 1, cu.st[g_cut].reachable, (unsigned long long)cu.st[g_cut].leader,
	       (unsigned long long)cu.st[g_cut].term,
	       (unsigned long long)cu.st[g_cut].applied_index);
	struct etcd_leader l;
	rc = etcd_cluster_wait_leader(&g_n, 10000, 0, true, &l, NULL);
	CHECKF(rc == 0, "%s", g_n.err);
	CHECK(l.agree == 3 && l.index >= 0 && l.index != g_cut && l.term >= g_part_term);
	printf("    healed n%d: follows n%d in term %llu, %llu ms after the heal\n", g_cut + 1,
	       l.index + 1, (unsigned long long)l.term, (unsigned long long)(sup_now_ms() - t0));
	CHECKF(etcd_cluster_put(&g_n, "after-heal", "1", 5000) == 0, "%s", g_n.err);

	/* kill and restart keep working in a namespace. */
	unsigned f = (unsigned)(l.index + 1) % 3;
	CHECKF(etcd_cluster_kill(&g_n, f) == 0, "%s", g_n.err);
	CHECKF(etcd_cluster_restart(&g_n, f) == 0, "%s", g_n.err);
	pid_t pid = etcd_cluster_pid(&g_n, f);
	char path[64], nsf[128];
	snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
	snprintf(nsf, sizeof nsf, "/run/netns/%s", g_n.net.m[f].ns);
	CHECK(pid > 0 && ns_ino(path) == ns_ino(nsf));
	struct etcd_member_status st[ETCD_MAX_MEMBERS];
	CHECK(etcd_cluster_status(&g_n, st) >= 2);
	struct caught_up cu2 = {&g_n, f, st[l.index].raft_index, {{0}}};
	CHECKF(sup_wait_until(caught_up_cond, &cu2, 50, 15000, NULL) == 0,
	       "restarted n%u did not catch up", f + 1);
}

/* Output of `ip netns list` and `ip -o link` lines naming this process's objects. */
static int netns_leftovers(void)
{
	char cmd[200];
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

static void test_netns_teardown(void)
{
	if (!g_nup)
		return;
	pid_t pids[3];
	for (unsigned i = 0; i < 3; i++)
		pids[i] = etcd_cluster_pid(&g_n, i);
	CHECK(netns_leftovers() == 3 + 3 + 1); /* namespaces, veths, bridge */
	g_n.err[0] = '\0';
	etcd_cluster_stop(&g_n);
	g_nup = false;
	CHECKF(g_n.err[0] == '\0', "%s", g_n.err);
	for (unsigned i = 0; i < 3; i++)
		CHECKF(pids[i] <= 0 || !alive(pids[i]), "n%u pid %d alive", i + 1, (int)pids[i]);
	int left = netns_leftovers();
	CHECKF(left == 0, "%d namespaces or links left after stop", left);
	etcd_cluster_stop(&g_n); /* twice is fine */
	CHECK(netns_leftovers() == 0);
	CHECK(count_children() == 0);
}

/* A start that fails after the namespaces were made removes them. */
static void test_netns_start_fails_clean(void)
{
	if (!g_have_etcd || geteuid() != 0)
		return;
	char dir[PATH_MAX + 16], dd[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/netns-fail", g_tmp);
	snprintf(dd, sizeof dd, "%s/n2.etcd", dir);
	mkdir(dir, 0755);
	mkdir(dd, 0755); /* an existing data dir: start refuses */
	struct etcd_cluster c;
	struct etcd_cluster_opts o = {.work_dir = dir, .netns = true};
	int rc = etcd_cluster_start(&c, &o);
	CHECKF(rc == -EEXIST && strstr(c.err, "n2.etcd"), "rc %d: %s", rc, c.err);
	CHECK(netns_leftovers() == 0);
	etcd_cluster_stop(&c);
	CHECK(netns_leftovers() == 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A test run in the background inherits SIGINT ignored, and the supervisor leaves an
	 * ignored signal ignored: the SIGINT path is tested as a user's Ctrl-C, not ignored. */
	signal(SIGINT, SIG_DFL);
	CHECK(sup_install_handlers() == 0);
	snprintf(g_tmp, sizeof g_tmp, "/tmp/spectap-test-cluster-XXXXXX");
	if (!mkdtemp(g_tmp)) {
		perror("mkdtemp");
		return 1;
	}
	uint64_t t0 = sup_now_ms();
	RUN(test_sup_spawn_signal_restart);
	RUN(test_sup_on_fork_before_exec);
	RUN(test_sup_exec_errors);
	RUN(test_sup_stop_escalates);
	RUN(test_sup_wait_until);
	RUN(test_sup_run_capture);
	RUN(test_sup_exit_and_signal_paths);
	RUN(test_etcd_parse_status);
	RUN(test_load_parse_summary);

	g_have_etcd = etcd_available(NULL) && access(etcd_programs[ETCD_PROG_ETCDCTL].path, X_OK) == 0;
	g_have_putload = access(PUTLOAD, X_OK) == 0;
	if (!g_have_etcd)
		printf("SKIP: /usr/bin/etcd or /usr/bin/etcdctl missing: the etcd cluster tests "
		       "did not run\n");
	RUN(test_etcd_busy_port);
	RUN(test_etcd_leader_elected);
	RUN(test_etcd_members_agree);
	RUN(test_etcd_puts);
	RUN(test_etcd_kill_leader);
	RUN(test_etcd_restart_rejoins);
	RUN(test_etcd_pause_follower);
	RUN(test_etcd_load);
	RUN(test_etcd_load_kill_leader);
	RUN(test_etcd_teardown);
	RUN(test_etcd_abort_exit);
	RUN(test_etcd_abort_sigint);
	RUN(test_netns_leader_elected);
	RUN(test_netns_partition_leader);
	RUN(test_netns_heal);
	RUN(test_netns_teardown);
	RUN(test_netns_start_fails_clean);
	if (g_up)
		etcd_cluster_stop(&g_c);
	if (g_nup)
		etcd_cluster_stop(&g_n);
	printf("    total %llu ms\n", (unsigned long long)(sup_now_ms() - t0));

	if (getenv("SPECTAP_KEEP_TMP")) {
		printf("    kept %s\n", g_tmp);
		TEST_MAIN_END("test_cluster");
	}
	struct sup_output o;
	const char *rm[] = {"rm", "-rf", g_tmp, NULL};
	if (sup_run_capture(rm, NULL, 10000, &o, NULL) == 0 && WIFEXITED(o.status) &&
	    WEXITSTATUS(o.status) == 0)
		;
	else
		fprintf(stderr, "could not remove %s\n", g_tmp);
	sup_output_free(&o);
	TEST_MAIN_END("test_cluster");
}
