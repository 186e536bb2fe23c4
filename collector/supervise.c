/* supervise: process groups of a cluster under test; see supervise.h.
 *
 * The exit and signal paths work from a fixed table of (owner pid, process group id) pairs in
 * sig_atomic_t slots, so that a signal handler can walk it with async-signal-safe calls only
 * (kill, waitpid, clock_gettime, nanosleep). A slot is filled with SIGINT/SIGTERM/SIGHUP blocked
 * around fork(), so no child is ever untracked, and is released only once its process group is
 * empty. */
#include "supervise.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

static volatile sig_atomic_t g_pgid[SUP_MAX_TRACKED];
static volatile sig_atomic_t g_owner[SUP_MAX_TRACKED];
static volatile sig_atomic_t g_grace_ms = SUP_DEFAULT_GRACE_MS;
static bool g_atexit_done, g_handlers_done;

static const int g_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGS (sizeof g_sigs / sizeof g_sigs[0])
static struct sigaction g_old[NSIGS];

/* ---- time ---- */

uint64_t sup_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sup_sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int fail(char *err, int e, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, SUP_ERR_SIZE, fmt, ap);
		va_end(ap);
	}
	return -e;
}

const char *sup_status_str(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, size, "wait status 0x%x", (unsigned)status);
	return buf;
}

/* ---- the tracking table and the emergency teardown (async-signal-safe) ---- */

static int slot_reserve(void)
{
	for (int k = 0; k < SUP_MAX_TRACKED; k++)
		if (g_pgid[k] == 0)
			return k;
	return -1;
}

static void slot_fill(int k, pid_t pg)
{
	g_owner[k] = (sig_atomic_t)getpid();
	g_pgid[k] = (sig_atomic_t)pg;
}

static void slot_release(int k)
{
	if (k >= 0 && k < SUP_MAX_TRACKED)
		g_pgid[k] = 0;
}

/* Reaps what is reapable in group pg; true when the group is empty. */
static bool group_gone(pid_t pg)
{
	int st;
	while (waitpid(-pg, &st, WNOHANG) > 0)
		;
	return kill(-pg, 0) < 0 && errno == ESRCH;
}

static uint64_t now_ms_safe(void) { return sup_now_ms(); }

static void nap_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Waits until every group of ours is empty or the deadline passes; true when all are gone. */
static bool wait_tracked(pid_t me, uint64_t deadline)
{
	for (;;) {
		bool left = false;
		for (int k = 0; k < SUP_MAX_TRACKED; k++) {
			pid_t pg = (pid_t)g_pgid[k];
			if (pg == 0 || (pid_t)g_owner[k] != me)
				continue;
			if (group_gone(pg))
				g_pgid[k] = 0;
			else
				left = true;
		}
		if (!left)
			return true;
		if (now_ms_safe() >= deadline)
			return false;
		nap_ms(10);
	}
}

/* Stops every group this process started: SIGTERM + SIGCONT, SIGKILL after grace, reap. */
static void kill_tracked(unsigned grace_ms)
{
	pid_t me = getpid();
	bool any = false;
	for (int k = 0; k < SUP_MAX_TRACKED; k++) {
		pid_t pg = (pid_t)g_pgid[k];
		if (pg == 0 || (pid_t)g_owner[k] != me)
			continue;
		any = true;
		kill(-pg, SIGTERM);
		kill(-pg, SIGCONT);
	}
	if (!any || wait_tracked(me, now_ms_safe() + grace_ms))
		return;
	for (int k = 0; k < SUP_MAX_TRACKED; k++) {
		pid_t pg = (pid_t)g_pgid[k];
		if (pg != 0 && (pid_t)g_owner[k] == me)
			kill(-pg, SIGKILL);
	}
	wait_tracked(me, now_ms_safe() + 3000);
}

static void on_exit_teardown(void)
{
	int saved = errno;
	kill_tracked((unsigned)g_grace_ms);
	errno = saved;
}

/* With sup_install_interrupt: the signal that interrupted the program (0: none yet). */
static volatile sig_atomic_t g_interrupted;
static bool g_interrupt_mode;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno;
	kill_tracked((unsigned)g_grace_ms);
	if (g_interrupt_mode && !g_interrupted) {
		/* The program stops by itself: it keeps what it captured and cleans up. A second
		 * signal kills it. */
		g_interrupted = sig;
		errno = saved;
		return;
	}
	for (size_t k = 0; k < NSIGS; k++) {
		if (g_sigs[k] != sig)
			continue;
		struct sigaction *old = &g_old[k];
		if (old->sa_flags & SA_SIGINFO) {
			if (old->sa_sigaction) {
				old->sa_sigaction(sig, info, uctx);
				errno = saved;
				return;
			}
		} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
			old->sa_handler(sig);
			errno = saved;
			return;
		}
	}
	/* Die of the signal: it is blocked while we run, so it is delivered on return. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
	errno = saved;
}

static void ensure_atexit(void)
{
	if (!g_atexit_done) {
		g_atexit_done = true;
		atexit(on_exit_teardown);
	}
}

int sup_install_handlers(void)
{
	ensure_atexit();
	if (g_handlers_done)
		return 0;
	for (size_t k = 0; k < NSIGS; k++) {
		struct sigaction sa;
		if (sigaction(g_sigs[k], NULL, &g_old[k]) < 0)
			return -errno;
		if (!(g_old[k].sa_flags & SA_SIGINFO) && g_old[k].sa_handler == SIG_IGN)
			continue; /* e.g. nohup: stay ignored */
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		for (size_t j = 0; j < NSIGS; j++)
			sigaddset(&sa.sa_mask, g_sigs[j]);
		if (sigaction(g_sigs[k], &sa, NULL) < 0)
			return -errno;
	}
	g_handlers_done = true;
	return 0;
}

int sup_install_interrupt(void)
{
	g_interrupt_mode = true;
	return sup_install_handlers();
}

int sup_interrupted(void) { return g_interrupted; }

/* ---- launching ---- */

static void free_strv(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static char **dup_strv(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	char **r = calloc(n + 1, sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		r[i] = strdup(v[i]);
		if (!r[i]) {
			free_strv(r);
			return NULL;
		}
	}
	return r;
}

/* environ with the additions (each "KEY=VALUE" replaces an inherited KEY). */
static char **build_envp(const char *const *add)
{
	size_t ne = 0, na = 0, n = 0;
	while (environ && environ[ne])
		ne++;
	while (add && add[na])
		na++;
	char **r = calloc(ne + na + 1, sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i < ne; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t klen = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
		bool replaced = false;
		for (size_t j = 0; j < na && !replaced; j++)
			replaced = strncmp(add[j], environ[i], klen) == 0;
		if (replaced)
			continue;
		if (!(r[n++] = strdup(environ[i])))
			goto nomem;
	}
	for (size_t j = 0; j < na; j++)
		if (!(r[n++] = strdup(add[j])))
			goto nomem;
	return r;
nomem:
	free_strv(r);
	return NULL;
}

/* argv0 itself when it holds a '/', else the first executable PATH entry. */
static int resolve_exe(const char *what, const char *argv0, char **out, char *err)
{
	if (!argv0 || !*argv0)
		return fail(err, EINVAL, "%s: empty argv[0]", what);
	if (strchr(argv0, '/')) {
		*out = strdup(argv0);
		return *out ? 0 : fail(err, ENOMEM, "%s: out of memory", what);
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *c = strchr(p, ':');
		size_t dl = c ? (size_t)(c - p) : strlen(p);
		char *cand = malloc(dl + strlen(argv0) + 3);
		if (!cand)
			return fail(err, ENOMEM, "%s: out of memory", what);
		sprintf(cand, "%.*s/%s", (int)dl, dl ? p : ".", argv0);
		if (access(cand, X_OK) == 0) {
			*out = cand;
			return 0;
		}
		free(cand);
		p += dl + (c != NULL);
	}
	return fail(err, ENOENT, "%s: %s not found in PATH (%s)", what, argv0, path);
}

struct launch {
	const char *what; /* for messages */
	const char *exe;
	char *const *argv;
	char *const *envp;
	const char *cwd;
	int fd_in, fd_out, fd_err;
	/* Called in the parent once the child is tracked and before it may exec (sup.on_fork). */
	void (*on_fork)(void *ctx, size_t proc, int pid);
	void *on_fork_ctx;
	size_t proc;
};

struct exec_report {
	int stage; /* 1 chdir, 2 execve */
	int err;
};

/* In the child: only async-signal-safe calls until execve. */
static void child_exec(const struct launch *l, pid_t parent, int report_fd, int go_fd)
{
	struct exec_report rep = {0, 0};
	if (go_fd >= 0) {
		/* Wait until the parent has run its on_fork hook (it closes the pipe then). */
		char c;
		ssize_t r;
		do
			r = read(go_fd, &c, 1);
		while (r < 0 && errno == EINTR);
	}
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(l->fd_in, 0) < 0 || dup2(l->fd_out, 1) < 0 || dup2(l->fd_err, 2) < 0)
		_exit(127);
#ifdef SYS_close_range
	syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
#endif
	if (l->cwd && chdir(l->cwd) < 0) {
		rep.stage = 1;
		rep.err = errno;
	} else {
		execve(l->exe, l->argv, l->envp);
		rep.stage = 2;
		rep.err = errno;
	}
	ssize_t w = write(report_fd, &rep, sizeof rep);
	(void)w;
	_exit(127);
}

/* Forks, puts the child in its own process group, tracks it and checks the exec. */
static int launch(const struct launch *l, pid_t *pidp, int *slotp, char *err)
{
	int rc = 0, pipefd[2] = {-1, -1}, gofd[2] = {-1, -1}, slot;
	pid_t pid = -1, parent = getpid();
	sigset_t block, old;
	bool blocked = false;

	ensure_atexit();
	if (pipe2(pipefd, O_CLOEXEC) < 0 || (l->on_fork && pipe2(gofd, O_CLOEXEC) < 0)) {
		rc = fail(err, errno, "%s: pipe: %s", l->what, strerror(errno));
		goto out;
	}
	slot = slot_reserve();
	if (slot < 0) {
		rc = fail(err, ENOSPC, "%s: more than %d process groups tracked", l->what,
			  SUP_MAX_TRACKED);
		goto out;
	}
	sigemptyset(&block);
	for (size_t k = 0; k < NSIGS; k++)
		sigaddset(&block, g_sigs[k]);
	sigprocmask(SIG_BLOCK, &block, &old);
	blocked = true;
	pid = fork();
	if (pid < 0) {
		rc = fail(err, errno, "%s: fork: %s", l->what, strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(pipefd[0]);
		if (gofd[1] >= 0)
			close(gofd[1]);
		child_exec(l, parent, pipefd[1], gofd[0]);
	}
	if (setpgid(pid, pid) < 0 && errno != EACCES && errno != ESRCH) {
		/* EACCES: it already exec'ed (after its own setpgid); nothing else is expected. */
		rc = fail(err, errno, "%s: setpgid %d: %s", l->what, (int)pid, strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}
	slot_fill(slot, pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	blocked = false;
	close(pipefd[1]);
	pipefd[1] = -1;
	if (l->on_fork) {
		/* The child cannot run the program before this returns: whoever the hook tells
		 * (a collector naming the pid) knows it before its first instruction. */
		l->on_fork(l->on_fork_ctx, l->proc, (int)pid);
		close(gofd[1]);
		gofd[1] = -1;
	}

	struct exec_report rep;
	ssize_t got;
	do
		got = read(pipefd[0], &rep, sizeof rep);
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof rep) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		slot_release(slot);
		rc = fail(err, rep.err, "%s: %s %s: %s", l->what, rep.stage == 1 ? "chdir" : "exec",
			  rep.stage == 1 ? l->cwd : l->exe, strerror(rep.err));
		goto out;
	}
	*pidp = pid;
	*slotp = slot;
out:
	if (blocked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	for (int k = 0; k < 2; k++)
		if (gofd[k] >= 0)
			close(gofd[k]);
	return rc;
}

/* ---- the supervisor ---- */

void sup_init(struct sup *s, unsigned grace_ms)
{
	memset(s, 0, sizeof *s);
	s->grace_ms = grace_ms ? grace_ms : SUP_DEFAULT_GRACE_MS;
	if ((unsigned)g_grace_ms < s->grace_ms)
		g_grace_ms = (sig_atomic_t)s->grace_ms;
	ensure_atexit();
	/* Orphans of our children come to us (not to init), so stops can reap whole groups. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void proc_free(struct sup_proc *p)
{
	free(p->name);
	free_strv(p->argv);
	free(p->exe);
	free_strv(p->envp);
	free(p->cwd);
	free(p->log_path);
}

void sup_fini(struct sup *s)
{
	sup_stop_all(s);
	for (size_t i = 0; i < s->n; i++)
		proc_free(&s->procs[i]);
	free(s->procs);
	s->procs = NULL;
	s->n = s->cap = 0;
}

static bool bad_index(struct sup *s, size_t i, const char *what)
{
	if (i < s->n)
		return false;
	fail(s->err, EINVAL, "%s: no process %zu (%zu defined)", what, i, s->n);
	return true;
}

int sup_add(struct sup *s, const struct sup_spec *spec, size_t *idx)
{
	int rc = 0;
	struct sup_proc p;
	memset(&p, 0, sizeof p);
	p.slot = -1;
	if (!spec->name || !spec->argv || !spec->argv[0]) {
		rc = fail(s->err, EINVAL, "add: a process needs a name and argv");
		goto fail;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct sup_proc *np = realloc(s->procs, cap * sizeof *np);
		if (!np) {
			rc = fail(s->err, ENOMEM, "add %s: out of memory", spec->name);
			goto fail;
		}
		s->procs = np;
		s->cap = cap;
	}
	p.name = strdup(spec->name);
	p.argv = dup_strv(spec->argv);
	p.envp = build_envp(spec->env);
	p.cwd = spec->cwd ? strdup(spec->cwd) : NULL;
	p.log_path = strdup(spec->log_path ? spec->log_path : "/dev/null");
	if (!p.name || !p.argv || !p.envp || (spec->cwd && !p.cwd) || !p.log_path) {
		rc = fail(s->err, ENOMEM, "add %s: out of memory", spec->name);
		goto fail;
	}
	char what[128];
	snprintf(what, sizeof what, "add %s", spec->name);
	rc = resolve_exe(what, p.argv[0], &p.exe, s->err);
	if (rc < 0)
		goto fail;
	s->procs[s->n] = p;
	if (idx)
		*idx = s->n;
	s->n++;
	return 0;
fail:
	proc_free(&p);
	return rc;
}

int sup_set_argv(struct sup *s, size_t i, const char *const *argv)
{
	if (bad_index(s, i, "set argv"))
		return -EINVAL;
	struct sup_proc *p = &s->procs[i];
	char **nv = dup_strv(argv), *exe = NULL, what[128];
	if (!nv)
		return fail(s->err, ENOMEM, "set argv of %s: out of memory", p->name);
	snprintf(what, sizeof what, "set argv of %s", p->name);
	int rc = resolve_exe(what, nv[0], &exe, s->err);
	if (rc < 0) {
		free_strv(nv);
		return rc;
	}
	free_strv(p->argv);
	free(p->exe);
	p->argv = nv;
	p->exe = exe;
	return 0;
}

int sup_start(struct sup *s, size_t i)
{
	if (bad_index(s, i, "start"))
		return -EINVAL;
	struct sup_proc *p = &s->procs[i];
	int rc = 0, logfd = -1, nullfd = -1;
	char what[128];
	snprintf(what, sizeof what, "start %s", p->name);
	if (p->running) {
		rc = fail(s->err, EBUSY, "%s: already running as pid %d", what, (int)p->pid);
		goto out;
	}
	if (p->slot >= 0) { /* leftovers of its previous group */
		kill(-p->pid, SIGKILL);
		if (group_gone(p->pid))
			slot_release(p->slot);
		p->slot = -1;
	}
	logfd = open(p->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		rc = fail(s->err, errno, "%s: open log %s: %s", what, p->log_path, strerror(errno));
		goto out;
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd < 0) {
		rc = fail(s->err, errno, "%s: open /dev/null: %s", what, strerror(errno));
		goto out;
	}
	struct launch l = {what, p->exe, p->argv, p->envp, p->cwd, nullfd, logfd, logfd, s->on_fork, s->on_fork_ctx, i};
	pid_t pid;
	int slot;
	rc = launch(&l, &pid, &slot, s->err);
	if (rc < 0)
		goto out;
	p->pid = pid;
	p->slot = slot;
	p->running = true;
	p->stopped = false;
	p->status = 0;
	p->starts++;
	p->started_ms = sup_now_ms();
out:
	if (logfd >= 0)
		close(logfd);
	if (nullfd >= 0)
		close(nullfd);
	return rc;
}

int sup_spawn(struct sup *s, const struct sup_spec *specs, size_t n)
{
	size_t first = s->n;
	int rc = 0;
	for (size_t k = 0; k < n; k++) {
		size_t idx;
		rc = sup_add(s, &specs[k], &idx);
		if (rc < 0)
			goto fail;
		rc = sup_start(s, idx);
		if (rc < 0)
			goto fail;
	}
	return 0;
fail:;
	char saved[SUP_ERR_SIZE];
	memcpy(saved, s->err, sizeof saved);
	for (size_t k = first; k < s->n; k++)
		if (s->procs[k].running)
			sup_stop(s, k, 0);
	memcpy(s->err, saved, sizeof saved);
	return rc;
}

static void mark_reaped(struct sup_proc *p, int status)
{
	p->running = false;
	p->stopped = false;
	p->status = status;
	if (p->slot >= 0 && group_gone(p->pid)) {
		slot_release(p->slot);
		p->slot = -1;
	}
}

int sup_poll(struct sup *s, size_t i)
{
	if (bad_index(s, i, "poll"))
		return -EINVAL;
	struct sup_proc *p = &s->procs[i];
	if (!p->running)
		return 1;
	int st;
	pid_t r;
	do
		r = waitpid(p->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == p->pid) {
		mark_reaped(p, st);
		return 1;
	}
	if (r < 0) { /* ECHILD: reaped behind our back */
		mark_reaped(p, -1);
		return 1;
	}
	return 0;
}

bool sup_running(struct sup *s, size_t i) { return i < s->n && sup_poll(s, i) == 0; }

int sup_signal(struct sup *s, size_t i, int sig)
{
	if (bad_index(s, i, "signal"))
		return -EINVAL;
	struct sup_proc *p = &s->procs[i];
	if (sup_poll(s, i) != 0)
		return fail(s->err, ESRCH, "signal %d (%s) to %s: not running (last pid %d)", sig,
			    strsignal(sig), p->name, (int)p->pid);
	if (kill(-p->pid, sig) < 0)
		return fail(s->err, errno, "signal %d (%s) to %s (group %d): %s", sig,
			    strsignal(sig), p->name, (int)p->pid, strerror(errno));
	if (sig == SIGSTOP)
		p->stopped = true;
	else if (sig == SIGCONT)
		p->stopped = false;
	return 0;
}

int sup_wait_exit(struct sup *s, size_t i, unsigned timeout_ms, int *status)
{
	if (bad_index(s, i, "wait"))
		return -EINVAL;
	struct sup_proc *p = &s->procs[i];
	uint64_t deadline = sup_now_ms() + timeout_ms;
	unsigned nap = 1;
	for (;;) {
		int r = sup_poll(s, i);
		if (r < 0)
			return r;
		if (r == 1) {
			if (status)
				*status = p->status;
			return 0;
		}
		uint64_t now = sup_now_ms();
		if (now >= deadline)
			return fail(s->err, ETIMEDOUT, "%s (pid %d) still runs after %u ms", p->name,
				    (int)p->pid, timeout_ms);
		sup_sleep_ms((unsigned)(deadline - now < nap ? deadline - now : nap));
		if (nap < 20)
			nap *= 2;
	}
}

int sup_stop(struct sup *s, size_t i, unsigned grace_ms)
{
	if (bad_index(s, i, "stop"))
		return -EINVAL;
	struct sup_proc *p = &s->procs[i];
	if (sup_poll(s, i) == 0) {
		if (grace_ms) {
			kill(-p->pid, SIGTERM);
			kill(-p->pid, SIGCONT);
			if (sup_wait_exit(s, i, grace_ms, NULL) == 0)
				goto leftovers;
		}
		kill(-p->pid, SIGKILL);
		if (sup_wait_exit(s, i, 5000, NULL) < 0)
			return fail(s->err, ETIMEDOUT, "stop %s: pid %d survives SIGKILL for 5 s",
				    p->name, (int)p->pid);
	}
leftovers:
	/* Anything else in its group (e.g. its own children) dies too; as a subreaper we reap
	 * what gets reparented to us, so the group empties within milliseconds. */
	if (p->slot >= 0) {
		kill(-p->pid, SIGKILL);
		for (uint64_t until = sup_now_ms() + 2000; !group_gone(p->pid);) {
			if (sup_now_ms() >= until)
				return fail(s->err, ETIMEDOUT,
					    "stop %s: process group %d not empty 2 s after SIGKILL",
					    p->name, (int)p->pid);
			sup_sleep_ms(2);
		}
		slot_release(p->slot);
		p->slot = -1;
	}
	return 0;
}

int sup_restart(struct sup *s, size_t i)
{
	int rc = sup_stop(s, i, 0);
	return rc < 0 ? rc : sup_start(s, i);
}

void sup_stop_all(struct sup *s)
{
	bool any = false;
	for (size_t i = 0; i < s->n; i++) {
		struct sup_proc *p = &s->procs[i];
		if (sup_poll(s, i) == 0) {
			kill(-p->pid, SIGTERM);
			kill(-p->pid, SIGCONT);
			any = true;
		}
	}
	uint64_t deadline = sup_now_ms() + s->grace_ms;
	while (any) {
		any = false;
		for (size_t i = 0; i < s->n; i++)
			if (sup_poll(s, i) == 0)
				any = true;
		if (!any || sup_now_ms() >= deadline)
			break;
		sup_sleep_ms(5);
	}
	for (size_t i = 0; i < s->n; i++)
		sup_stop(s, i, 0); /* SIGKILL what is left, reap, clear leftover groups */
}

/* ---- waiting on conditions ---- */

int sup_wait_until(sup_cond_fn cond, void *arg, unsigned every_ms, unsigned timeout_ms,
		   unsigned *elapsed_ms)
{
	uint64_t t0 = sup_now_ms(), deadline = t0 + timeout_ms;
	if (every_ms == 0)
		every_ms = 1;
	for (;;) {
		int r = cond(arg);
		uint64_t now = sup_now_ms();
		if (elapsed_ms)
			*elapsed_ms = (unsigned)(now - t0);
		if (r < 0)
			return r;
		if (r > 0)
			return 0;
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - now;
		sup_sleep_ms(left < every_ms ? (unsigned)left : every_ms);
	}
}

/* ---- running a command and capturing its output ---- */

struct grow {
	char *p;
	size_t len, cap;
};

static int grow_read(struct grow *g, int fd)
{
	if (g->cap - g->len < 4097) {
		size_t cap = g->cap ? g->cap * 2 : 8192;
		char *np = realloc(g->p, cap);
		if (!np)
			return -ENOMEM;
		g->p = np;
		g->cap = cap;
	}
	ssize_t r = read(fd, g->p + g->len, g->cap - g->len - 1);
	if (r < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	g->len += (size_t)r;
	g->p[g->len] = '\0';
	return r > 0;
}

void sup_output_free(struct sup_output *o)
{
	free(o->out);
	free(o->err_out);
	memset(o, 0, sizeof *o);
}

int sup_run_capture(const char *const *argv, const char *const *env, unsigned timeout_ms,
		    struct sup_output *o, char *errbuf)
{
	int rc = 0, outp[2] = {-1, -1}, errp[2] = {-1, -1}, nullfd = -1, slot = -1;
	char *exe = NULL, **av = NULL, **envp = NULL, what[160];
	struct grow gout = {0}, gerr = {0};
	pid_t pid = -1;

	memset(o, 0, sizeof *o);
	if (!argv || !argv[0])
		return fail(errbuf, EINVAL, "run: empty argv");
	snprintf(what, sizeof what, "run %s", argv[0]);
	rc = resolve_exe(what, argv[0], &exe, errbuf);
	if (rc < 0)
		goto out;
	av = dup_strv(argv);
	envp = build_envp(env);
	if (!av || !envp) {
		rc = fail(errbuf, ENOMEM, "%s: out of memory", what);
		goto out;
	}
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		rc = fail(errbuf, errno, "%s: pipe: %s", what, strerror(errno));
		goto out;
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd < 0) {
		rc = fail(errbuf, errno, "%s: open /dev/null: %s", what, strerror(errno));
		goto out;
	}
	struct launch l = {what, exe, av, envp, NULL, nullfd, outp[1], errp[1]};
	rc = launch(&l, &pid, &slot, errbuf);
	if (rc < 0) {
		pid = -1;
		goto out;
	}
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;

	uint64_t deadline = sup_now_ms() + timeout_ms;
	bool timed_out = false;
	while (outp[0] >= 0 || errp[0] >= 0) {
		uint64_t now = sup_now_ms();
		if (now >= deadline) {
			timed_out = true;
			break;
		}
		struct pollfd pf[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
		int pr = poll(pf, 2, (int)(deadline - now));
		if (pr < 0 && errno != EINTR) {
			rc = fail(errbuf, errno, "%s: poll: %s", what, strerror(errno));
			goto out;
		}
		if (pr <= 0)
			continue;
		for (int k = 0; k < 2; k++) {
			int *fd = k == 0 ? &outp[0] : &errp[0];
			if (*fd < 0 || !pf[k].revents)
				continue;
			int r = grow_read(k == 0 ? &gout : &gerr, *fd);
			if (r < 0) {
				rc = fail(errbuf, -r, "%s: reading its output: %s", what, strerror(-r));
				goto out;
			}
			if (r == 0) {
				close(*fd);
				*fd = -1;
			}
		}
	}
	if (timed_out) {
		kill(-pid, SIGKILL);
		rc = fail(errbuf, ETIMEDOUT, "%s: killed after %u ms", what, timeout_ms);
	}
	/* Its pipes are closed: it exits now (or was killed); a bounded wait, then SIGKILL. */
	int st = 0;
	for (uint64_t until = sup_now_ms() + 2000;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (sup_now_ms() >= until) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		sup_sleep_ms(1);
	}
	o->status = st;
	kill(-pid, SIGKILL); /* anything it left in its group */
	if (group_gone(pid))
		slot_release(slot);
	pid = -1;
out:
	if (pid > 0) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (group_gone(pid))
			slot_release(slot);
	}
	for (int k = 0; k < 2; k++) {
		if (outp[k] >= 0)
			close(outp[k]);
		if (errp[k] >= 0)
			close(errp[k]);
	}
	if (nullfd >= 0)
		close(nullfd);
	free(exe);
	free_strv(av);
	free_strv(envp);
	if (!gout.p)
		gout.p = calloc(1, 1);
	if (!gerr.p)
		gerr.p = calloc(1, 1);
	o->out = gout.p;
	o->out_len = gout.len;
	o->err_out = gerr.p;
	o->err_len = gerr.len;
	if (rc == 0 && (!o->out || !o->err_out))
		rc = fail(errbuf, ENOMEM, "%s: out of memory", what);
	return rc;
}

/* ---- helpers for launchers ---- */

int sup_mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int sup_port_free(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1, rc = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

int sup_rm_rf(const char *path)
{
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}
