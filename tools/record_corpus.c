/* spectap record SYSTEM --until-covered: seeded runs of one scenario, one trace each, until a
 * mapping's listed branches are covered (tools/coverage.h) or a time budget is spent; a
 * manifest describes the corpus. Each run is this program again (`record SYSTEM --scenario S
 * --seed K -o DIR/S-K.spt --json`), so a run's failure or crash stays its own. */
#include "record_corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coverage.h"

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs this program with argv, stdout to out_path. Returns its exit status (128+N for a
 * signal), or -errno when it could not be started. */
static int run_self(char *const *argv, const char *out_path)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return -rc;
	unlink(out_path); /* one a killed run left, or a symlink planted there: never written through */
	rc = posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	if (!rc)
		rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -rc;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The run's summary (its --json output), one line, or "{}" when it wrote none. */
static void copy_summary(FILE *to, const char *path)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	if (f && fgets(line, sizeof(line), f) && line[0] == '{') {
		line[strcspn(line, "\n")] = 0;
		fputs(line, to);
	} else {
		fputs("{}", to);
	}
	if (f)
		fclose(f);
}

int record_until_covered(struct cli *c, const struct corpus_opts *o)
{
	if (mkdir(o->dir, 0755) && errno != EEXIST)
		return cli_fail(c, "cannot create the corpus directory %s: %s", o->dir, strerror(errno));
	/* The manifest and each run's summary are written beside and renamed into place whole: a
	 * crash never leaves half of one, nor destroys the one of an earlier corpus. */
	char manifest[PATH_MAX];
	snprintf(manifest, sizeof(manifest), "%s/manifest.json", o->dir);
	FILE *mf = cli_create_output(c, manifest, true);
	if (!mf)
		return CLI_FAIL;
	struct coverage cv;
	coverage_init(&cv, o->map, o->spec, o->cfg);
	double t0 = now_s();
	int rc = CLI_OK, runs = 0;
	bool complete = false;
	fprintf(mf, "{\"system\":\"%s\",\"scenario\":\"%s\",\"map\":", o->system, o->scenario);
	cli_json_str(mf, o->map);
	fputs(",\"spec\":", mf);
	cli_json_str(mf, o->spec);
	fprintf(mf, ",\"min\":%" PRIu64 ",\"budget_s\":%u,\"runs\":[", o->min, o->budget_s);
	for (uint64_t seed = o->seed; !complete; seed++) {
		if (runs && now_s() - t0 >= o->budget_s)
			break;
		char trace[PATH_MAX], json[PATH_MAX], json_tmp[PATH_MAX + 16], seed_s[32], *argv[32];
		int n = 0;
		snprintf(trace, sizeof(trace), "%s/%s-%" PRIu64 ".spt", o->dir, o->scenario, seed);
		snprintf(json, sizeof(json), "%s/%s-%" PRIu64 ".json", o->dir, o->scenario, seed);
		snprintf(json_tmp, sizeof(json_tmp), "%s.partial", json);
		snprintf(seed_s, sizeof(seed_s), "%" PRIu64, seed);
		argv[n++] = "spectap";
		argv[n++] = "record";
		argv[n++] = (char *)o->system;
		argv[n++] = "--scenario";
		argv[n++] = (char *)o->scenario;
		argv[n++] = "--seed";
		argv[n++] = seed_s;
		argv[n++] = "-o";
		argv[n++] = trace;
		argv[n++] = "-f";
		argv[n++] = "--json";
		for (size_t i = 0; o->pass[i] && n < 31; i++)
			argv[n++] = (char *)o->pass[i];
		argv[n] = NULL;
		if (!c->json)
			fprintf(stderr, "spectap record: [%6.1fs] run %d: %s seed %" PRIu64 "\n", now_s() - t0, runs + 1,
				o->scenario, seed);
		int st = run_self(argv, json_tmp);
		if (st < 0) {
			unlink(json_tmp);
			rc = cli_fail(c, "cannot run %s record: %s", o->system, strerror(-st));
			break;
		}
		if (rename(json_tmp, json)) {
			rc = cli_fail(c, "cannot rename %s to %s: %s", json_tmp, json, strerror(errno));
			break;
		}
		fprintf(mf, "%s{\"seed\":%" PRIu64 ",\"trace\":", runs ? "," : "", seed);
		cli_json_str(mf, trace);
		fprintf(mf, ",\"status\":%d,\"summary\":", st);
		copy_summary(mf, json);
		fputc('}', mf);
		runs++;
		if (st > 128) { /* interrupted: stop here, the corpus so far is kept */
			rc = cli_fail(c, "run %d was interrupted (signal %d); the corpus so far is in %s", runs, st - 128, o->dir);
			break;
		}
		if (st != 0) {
			rc = cli_fail(c, "run %d (seed %" PRIu64 ") failed with status %d: see %s", runs, seed, st, json);
			break;
		}
		if ((rc = coverage_add(&cv, c, trace)) != CLI_OK)
			break;
		size_t miss = coverage_missing(&cv, o->min);
		complete = miss == 0;
		if (!c->json)
			fprintf(stderr, "spectap record: [%6.1fs] %zu of %zu listed branches below %" PRIu64 "\n", now_s() - t0,
				miss, cv.n_listed, o->min);
	}
	fprintf(mf, "],\"seconds\":%.1f,\"complete\":%s,\"coverage\":", now_s() - t0, complete ? "true" : "false");
	coverage_print(&cv, o->min, true, mf);
	fputs("}\n", mf);
	int wrote = cli_close_output(c, mf, manifest, !ferror(mf));
	if (rc == CLI_OK)
		rc = wrote;
	if (rc == CLI_OK) {
		if (c->json) {
			coverage_print(&cv, o->min, true, stdout);
		} else {
			coverage_print(&cv, o->min, false, stdout);
			printf("%d run(s) in %.1f s; corpus and manifest in %s\n", runs, now_s() - t0, o->dir);
		}
		if (!complete)
			rc = cli_fail(c, "the time budget (%u s) ran out before every listed branch had %" PRIu64
				      " events (see %s)", o->budget_s, o->min, manifest);
	}
	coverage_fini(&cv);
	return rc;
}
