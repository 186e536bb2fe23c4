/* bench_sites: what one uprobe hit costs by the first instruction at the probe site, on a C
 * target of ours (bench/targets/sites.c): the kernel emulates a push, a call or a jump, turns a
 * 5-byte nop into a call (no trap), and single-steps anything else out of line. Each kind as an
 * entry probe with 1 and with 22 reads, and as a return probe (uretprobe), rounds in rotating
 * order, the median per kind; the probe program is spectap's own, draining into nothing.
 *
 *	bench_sites [--calls 100000] [--rounds 3] [--target build/bench/sites]
 *
 * Needs root (BPF). Exit status: 0 done, 1 failed, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "uprobe_loader.h"

#define ROUNDS_MAX 9

static const char *const kinds[] = {"push", "r15", "call", "jmp", "nop1", "nop5", "mov"};
static const char *const what[] = {"push %rbp (emulated)",     "push %r15 (emulated)",
				   "call rel32 (emulated)",    "jmp rel8 (emulated)",
				   "1-byte nop (emulated)",    "5-byte nop (a call, no trap)",
				   "mov (single-stepped)"};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

struct setting {
	const char *name;
	unsigned nreads;
	bool ret;
};
static const struct setting settings[] = {{"entry, 1 read", 1, false},
					  {"entry, 22 reads", 22, false},
					  {"return (uretprobe), 1 read", 1, true}};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static int drop(void *ctx, const struct uprobe_event *ev, size_t size)
{
	(void)ctx, (void)ev, (void)size;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Runs argv (no shell: the target path is the user's) and reads the first line it prints. */
static int first_line(const char *const *argv, char *line, size_t size)
{
	int fds[2], status, rc = 0;
	pid_t pid;
	posix_spawn_file_actions_t fa;
	if (pipe(fds))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	int sr = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (sr) {
		close(fds[0]);
		return -sr;
	}
	FILE *f = fdopen(fds[0], "r");
	if (!f || !fgets(line, (int)size, f))
		rc = -EIO;
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		rc = rc ? rc : -EIO;
	return rc;
}

/* ns per call of target's kind k, probed as s (NULL: not probed). */
static int run(const char *target, unsigned k, const struct setting *s, long calls, double *ns)
{
	char err[512], sym[32], line[128] = "";
	struct uprobe_loader *l = NULL;
	struct uprobe_loader_opts o = {.ringbuf_bytes = 64 << 20};
	uint64_t off;
	int rc = 0;

	if (s) {
		struct probe_spec sp;

		if ((rc = uprobe_loader_open(&l, &o, err, sizeof(err)))) {
			fprintf(stderr, "bench_sites: %s\n", err);
			return rc;
		}
		snprintf(sym, sizeof(sym), "site_%s", kinds[k]);
		if ((rc = uprobe_symbol_offset(target, sym, &off, err, sizeof(err)))) {
			fprintf(stderr, "bench_sites: %s\n", err);
			goto out;
		}
		memset(&sp, 0, sizeof(sp));
		sp.nreads = s->nreads;
		sp.flags = s->ret ? UPROBE_SPEC_RETPROBE : 0;
		for (unsigned i = 0; i < sp.nreads; i++)
			sp.reads[i] = (struct uprobe_read){.kind = UPROBE_READ_MEM, .src = UPROBE_SRC_RSP, .size = 8,
							   .off = (int32_t)(8 * (i % 4))};
		if ((rc = uprobe_attach(l, target, off, 1, &sp, -1))) {
			fprintf(stderr, "bench_sites: %s\n", uprobe_loader_error(l));
			goto out;
		}
	}
	char calls_s[24];
	snprintf(calls_s, sizeof(calls_s), "%ld", calls);
	const char *argv[] = { target, calls_s, kinds[k], NULL };
	if (first_line(argv, line, sizeof(line)) || sscanf(line, "%lf", ns) != 1) {
		fprintf(stderr, "bench_sites: %s %s %s printed '%s'\n", target, calls_s, kinds[k], line);
		rc = -EIO;
	}
	if (l)
		uprobe_drain(l, drop, NULL);
out:
	uprobe_loader_close(l);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"calls", required_argument, NULL, 'c'},
					   {"rounds", required_argument, NULL, 'r'},
					   {"target", required_argument, NULL, 't'},
					   {NULL, 0, NULL, 0}};
	char self[PATH_MAX], deftarget[PATH_MAX + 8];
	const char *target = NULL;
	long calls = 100000;
	unsigned rounds = 3;
	double base[ROUNDS_MAX], hit[NSETTINGS][NKINDS][ROUNDS_MAX];
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch == 'c')
			calls = atol(optarg);
		else if (ch == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (ch == 't')
			target = optarg;
		else
			return 2;
	}
	if (calls <= 0 || rounds < 1 || rounds > ROUNDS_MAX) {
		fprintf(stderr, "usage: bench_sites [--calls N] [--rounds 1..%d] [--target PATH]\n", ROUNDS_MAX);
		return 2;
	}
	if (!target) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		snprintf(deftarget, sizeof(deftarget), "%s/sites", self);
		target = deftarget;
	}
	printf("sites: ns per hit by the probe site's first instruction (%s, %ld calls per run, %u rounds, the "
	       "median; spectap's probe program, records drained)\n", target, calls, rounds);
	for (unsigned r = 0; r < rounds; r++) {
		if (run(target, 0, NULL, calls, &base[r]))
			return 1;
		for (unsigned i = 0; i < NSETTINGS * NKINDS; i++) {
			unsigned x = (i + r * 5) % (NSETTINGS * NKINDS), s = x / NKINDS, k = x % NKINDS;
			double ns;
			if (run(target, k, &settings[s], calls, &ns))
				return 1;
			hit[s][k][r] = ns - base[r];
		}
	}
	qsort(base, rounds, sizeof(double), cmp_double);
	printf("  no probe: %.1f ns per call\n", base[rounds / 2]);
	printf("  %-30s", "first instruction");
	for (unsigned s = 0; s < NSETTINGS; s++)
		printf(" %28s", settings[s].name);
	printf("\n");
	for (unsigned k = 0; k < NKINDS; k++) {
		printf("  %-30s", what[k]);
		for (unsigned s = 0; s < NSETTINGS; s++) {
			qsort(hit[s][k], rounds, sizeof(double), cmp_double);
			printf(" %25.0f ns", hit[s][k][rounds / 2]);
		}
		printf("\n");
	}
	return 0;
}
