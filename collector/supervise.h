/*
 * supervise: a generic supervisor for the processes of a cluster under test (it knows no
 * particular system). It starts each process in its own process group with stdin on /dev/null
 * and stdout+stderr appended to a log file, signals, waits for, restarts and stops them, and
 * guarantees that nothing is left running:
 *   - sup_fini / sup_stop_all send SIGTERM (and SIGCONT, for stopped ones) to every process
 *     group, SIGKILL after a grace period, and reap;
 *   - the same is done on exit() (atexit) and, once sup_install_handlers() was called, on
 *     SIGINT, SIGTERM and SIGHUP of this process (the signal is then re-raised with its default
 *     action, so the exit status still tells it);
 *   - each child gets PR_SET_PDEATHSIG=SIGKILL, so even a SIGKILL of this process (which no
 *     handler sees) takes the direct children down. The kernel ties that signal to the thread
 *     that forked: start processes from a thread that outlives them (e.g. the main thread).
 * The exit and signal paths only touch processes started by this very process (a fork()ed copy
 * of the program never kills its parent's children). sup_init makes this process a child
 * subreaper (PR_SET_CHILD_SUBREAPER), so the orphaned descendants of its children are reaped
 * by the stops here instead of by init, and a stop returns once the whole group is gone.
 *
 * Not thread-safe: one thread drives a supervisor. Every function that can fail returns 0 or a
 * negative errno and writes a message naming what failed on what into s->err.
 */
#ifndef SPECTAP_SUPERVISE_H
#define SPECTAP_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SUP_ERR_SIZE 512
/* Process groups that the exit and signal paths can track at once, across all supervisors and
 * sup_run_capture calls of the process. */
#define SUP_MAX_TRACKED 256
#define SUP_DEFAULT_GRACE_MS 2000

/* What to run. Strings are copied by sup_add. */
struct sup_spec {
	const char *name;            /* for messages, e.g. "n1"; required */
	const char *const *argv;     /* NULL-terminated; argv[0] a path, or a name looked up in PATH */
	const char *const *env;      /* "KEY=VALUE" added to (or replacing in) the environment; or NULL */
	const char *cwd;             /* working directory; NULL: this process's */
	const char *log_path;        /* stdout and stderr appended here; NULL: /dev/null */
};

struct sup_proc {
	char *name;
	char **argv;     /* as given (argv[0] unresolved) */
	char *exe;       /* argv[0] resolved through PATH */
	char **envp;     /* full environment for execve */
	char *cwd;
	char *log_path;
	pid_t pid;       /* the process (and its process group id); 0 when never started */
	bool running;    /* started and not yet reaped */
	bool stopped;    /* SIGSTOP sent and no SIGCONT since */
	int status;      /* wait status once reaped (running == false, pid != 0) */
	unsigned starts; /* how many times started */
	uint64_t started_ms; /* sup_now_ms() at the last start */
	int slot;        /* index in the exit/signal tracking table, or -1 */
};

struct sup {
	struct sup_proc *procs;
	size_t n, cap;
	unsigned grace_ms; /* SIGTERM -> SIGKILL grace for stops and teardown */
	/* Optional: called with each started process's pid after the fork and before the child
	 * may exec (it waits on a pipe), at every start and restart: a capture names the pid
	 * before the program runs a single instruction, however the scheduler orders them. */
	void (*on_fork)(void *ctx, size_t proc, int pid);
	void *on_fork_ctx;
	char err[SUP_ERR_SIZE];
};

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t sup_now_ms(void);
/* Sleeps ms milliseconds (restarting on EINTR). */
void sup_sleep_ms(unsigned ms);

/* mkdir -p (mode 0755). 0 or -errno. */
int sup_mkdir_p(const char *dir);
/* rm -rf path (not following symbolic links). 0 or -errno. */
int sup_rm_rf(const char *path);
/* 0 when 127.0.0.1:port can be bound (as servers bind it, with SO_REUSEADDR), else -errno. */
int sup_port_free(unsigned port);

/* Registers the exit() teardown (always, once per process) and, for SIGINT, SIGTERM and SIGHUP,
 * a handler that stops every tracked process group and then dies of the signal. Idempotent.
 * Signals that were ignored stay ignored. */
int sup_install_handlers(void);
/* The same, except that the first SIGINT, SIGTERM or SIGHUP, once every tracked process group
 * is stopped, only marks the program interrupted (sup_interrupted) and returns: a capture then
 * fails its waits (its processes are gone), keeps what it captured and cleans up by itself. A
 * second signal acts as with sup_install_handlers. */
int sup_install_interrupt(void);
/* The signal that interrupted the program, or 0. */
int sup_interrupted(void);

/* grace_ms 0: SUP_DEFAULT_GRACE_MS. Registers the exit() teardown too. */
void sup_init(struct sup *s, unsigned grace_ms);
/* Stops everything (sup_stop_all) and frees. The supervisor may be reused after sup_init. */
void sup_fini(struct sup *s);

/* Defines a process without starting it; *idx (may be NULL) receives its index. */
int sup_add(struct sup *s, const struct sup_spec *spec, size_t *idx);
/* Replaces the argv used by the next start of process i. */
int sup_set_argv(struct sup *s, size_t i, const char *const *argv);
/* Starts process i (-EBUSY when it is running). The exec is checked: a missing binary or a bad
 * working directory fails here, with the reason. */
int sup_start(struct sup *s, size_t i);
/* sup_add + sup_start for each spec, in order; on failure stops the ones it started. */
int sup_spawn(struct sup *s, const struct sup_spec *specs, size_t n);

/* Sends sig to process i's whole process group (-ESRCH when it is not running). Tracks
 * SIGSTOP/SIGCONT in proc->stopped. */
int sup_signal(struct sup *s, size_t i, int sig);
/* Reaps process i if it exited, without waiting: 1 when it is (now) not running, 0 when it
 * still runs. */
int sup_poll(struct sup *s, size_t i);
/* Waits up to timeout_ms for process i to exit and reaps it; *status (may be NULL) gets the wait
 * status. -ETIMEDOUT when it still runs. A process that is not running returns 0 at once. */
int sup_wait_exit(struct sup *s, size_t i, unsigned timeout_ms, int *status);
/* Stops process i: SIGTERM + SIGCONT to its group, SIGKILL after grace_ms, reaps. A grace of 0
 * sends SIGKILL at once. */
int sup_stop(struct sup *s, size_t i, unsigned grace_ms);
/* sup_stop (with SIGKILL when it still runs) and sup_start again with the current argv. */
int sup_restart(struct sup *s, size_t i);
/* Stops every process of s at once (SIGTERM, then SIGKILL after s->grace_ms) and reaps them. */
void sup_stop_all(struct sup *s);
bool sup_running(struct sup *s, size_t i);

/* Polls cond every every_ms milliseconds until it returns > 0 (then 0 is returned), it returns
 * a negative errno (returned as is), or timeout_ms passed (-ETIMEDOUT, after one last call).
 * *elapsed_ms (may be NULL) gets the time waited. */
typedef int (*sup_cond_fn)(void *arg);
int sup_wait_until(sup_cond_fn cond, void *arg, unsigned every_ms, unsigned timeout_ms,
		   unsigned *elapsed_ms);

/* The result of sup_run_capture. out and err_out are NUL-terminated (malloc'ed; free with
 * sup_output_free). */
struct sup_output {
	char *out;
	size_t out_len;
	char *err_out;
	size_t err_len;
	int status; /* wait status */
};

/* Runs argv (argv[0] looked up in PATH when it has no '/') with env additions, stdin on
 * /dev/null, in its own process group, and captures its stdout and stderr. Returns 0 when it
 * ran to completion (whatever its exit status), -ETIMEDOUT when it had to be killed after
 * timeout_ms (output so far kept), or another negative errno; errbuf (SUP_ERR_SIZE bytes, may be
 * NULL) names what failed. */
int sup_run_capture(const char *const *argv, const char *const *env, unsigned timeout_ms,
		    struct sup_output *o, char *errbuf);
void sup_output_free(struct sup_output *o);

/* Human-readable wait status: "exit 1", "signal 9 (Killed)". */
const char *sup_status_str(int status, char *buf, size_t size);

#endif
