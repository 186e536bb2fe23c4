/* spectap record SYSTEM --until-covered: seeded runs of a scenario (or of a list of them, each
 * run steered to the one that has given most of what is missing), one trace each, until a
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

/* One scenario of the list: what its runs cost and gave, to steer the next choice. */
struct corpus_pick {
	char name[64];
	unsigned runs;
	double seconds;  /* the wall time of its runs */
	uint64_t *gave;  /* events of each listed branch over its runs (n_listed) */
};

enum { CORPUS_MAX_SCENARIOS = 16 };

/* Splits the comma-separated list into p (at most CORPUS_MAX_SCENARIOS). The count, or 0 after
 * reporting a list too long or a name too long. */
static size_t split_scenarios(struct cli *c, const char *list, struct corpus_pick *p)
{
	size_t n = 0;
	for (const char *s = list;; s++) {
		size_t len = strcspn(s, ",");
		if (n == CORPUS_MAX_SCENARIOS || len >= sizeof(p[n].name))
			return cli_fail(c, "--scenario %s: at most %d scenarios of at most %zu bytes each", list,
					CORPUS_MAX_SCENARIOS, sizeof(p[0].name) - 1), 0;
		memset(&p[n], 0, sizeof(p[n]));
		memcpy(p[n].name, s, len);
		n++;
		s += len;
		if (!*s)
			return n;
	}
}

/* The next scenario to run: each once, in the order given; then the one expected to close the
 * most of what is missing per second (for each listed branch below min, the share of its deficit
 * one run of the scenario gave on average), the one run least when none has given anything that
 * is missing. */
static size_t choose_scenario(const struct corpus_pick *p, size_t n, const struct coverage *cv, uint64_t min)
{
	size_t best = 0, least = 0;
	double best_score = 0;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].runs)
			return i;
		if (p[i].runs < p[least].runs)
			least = i;
		double score = 0;
		for (size_t b = 0; p[i].gave && b < cv->n_listed; b++) {
			uint64_t have = cv->branches.counts[b];
			if (have >= min)
				continue;
			double deficit = (double)(min - have), per_run = (double)p[i].gave[b] / p[i].runs;
			score += (per_run < deficit ? per_run : deficit) / deficit;
		}
		score /= p[i].seconds / p[i].runs + 1.0;
		if (score > best_score) {
			best_score = score;
			best = i;
		}
	}
	return best_score > 0 ? best : least;
}

/* The listed branches' counts before the last run (prev) and what the last run gave (last). */
struct corpus_tally {
	uint64_t *prev, *last;
};

/* After coverage_add: what the run gave each listed branch (its counts against t->prev, which
 * is then brought up to date), into t->last and added to the scenario's. -ENOMEM or 0. */
static int credit_run(struct corpus_pick *p, const struct coverage *cv, struct corpus_tally *t)
{
	if (!t->prev && !(t->prev = calloc(cv->n_listed + 1, sizeof(*t->prev))))
		return -ENOMEM;
	if (!t->last && !(t->last = calloc(cv->n_listed + 1, sizeof(*t->last))))
		return -ENOMEM;
	if (!p->gave && !(p->gave = calloc(cv->n_listed + 1, sizeof(*p->gave))))
		return -ENOMEM;
	for (size_t b = 0; b < cv->n_listed; b++) {
		t->last[b] = cv->branches.counts[b] - t->prev[b];
		p->gave[b] += t->last[b];
		t->prev[b] = cv->branches.counts[b];
	}
	return 0;
}

/* The end of a run's manifest entry: the events it gave each listed branch (those it gave) and
 * how many listed branches are still below min. */
static void write_gave(FILE *mf, const struct coverage *cv, const struct corpus_tally *t, size_t miss)
{
	fputs(",\"gave\":{", mf);
	for (size_t b = 0, k = 0; b < cv->n_listed; b++) {
		if (!t->last[b])
			continue;
		fputs(k++ ? "," : "", mf);
		cli_json_str(mf, cv->branches.names[b]);
		fprintf(mf, ":%" PRIu64, t->last[b]);
	}
	fprintf(mf, "},\"missing\":%zu}", miss);
}

int record_until_covered(struct cli *c, const struct corpus_opts *o)
{
	struct corpus_pick picks[CORPUS_MAX_SCENARIOS];
	size_t npicks = split_scenarios(c, o->scenario, picks);
	if (!npicks)
		return CLI_FAIL;
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
	struct corpus_tally tally = { NULL, NULL };
	double t0 = now_s();
	int rc = CLI_OK, runs = 0;
	bool complete = false;
	fprintf(mf, "{\"system\":\"%s\",\"scenario\":", o->system);
	cli_json_str(mf, o->scenario);
	fputs(",\"map\":", mf);
	cli_json_str(mf, o->map);
	fputs(",\"spec\":", mf);
	cli_json_str(mf, o->spec);
	fprintf(mf, ",\"min\":%" PRIu64 ",\"budget_s\":%u,\"runs\":[", o->min, o->budget_s);
	for (uint64_t seed = o->seed; !complete; seed++) {
		if (runs && now_s() - t0 >= o->budget_s)
			break;
		struct corpus_pick *p = &picks[choose_scenario(picks, npicks, &cv, o->min)];
		char trace[PATH_MAX], json[PATH_MAX], json_tmp[PATH_MAX + 16], seed_s[32], *argv[32];
		int n = 0;
		snprintf(trace, sizeof(trace), "%s/%s-%" PRIu64 ".spt", o->dir, p->name, seed);
		snprintf(json, sizeof(json), "%s/%s-%" PRIu64 ".json", o->dir, p->name, seed);
		snprintf(json_tmp, sizeof(json_tmp), "%s.partial", json);
		snprintf(seed_s, sizeof(seed_s), "%" PRIu64, seed);
		argv[n++] = "spectap";
		argv[n++] = "record";
		argv[n++] = (char *)o->system;
		argv[n++] = "--scenario";
		argv[n++] = p->name;
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
				p->name, seed);
		double started = now_s();
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
		fprintf(mf, "%s{\"scenario\":", runs ? "," : "");
		cli_json_str(mf, p->name);
		fprintf(mf, ",\"seed\":%" PRIu64 ",\"trace\":", seed);
		cli_json_str(mf, trace);
		fprintf(mf, ",\"status\":%d,\"seconds\":%.1f,\"summary\":", st, now_s() - started);
		copy_summary(mf, json); /* the entry is closed below, with what the run gave */
		runs++;
		p->runs++;
		p->seconds += now_s() - started;
		if (st > 128) { /* interrupted: stop here, the corpus so far is kept */
			fputc('}', mf);
			rc = cli_fail(c, "run %d was interrupted (signal %d); the corpus so far is in %s", runs, st - 128, o->dir);
			break;
		}
		if (st != 0) {
			fputc('}', mf);
			rc = cli_fail(c, "run %d (%s, seed %" PRIu64 ") failed with status %d: see %s", runs, p->name, seed, st,
				      json);
			break;
		}
		if ((rc = coverage_add(&cv, c, trace)) != CLI_OK) {
			fputc('}', mf);
			break;
		}
		if (credit_run(p, &cv, &tally)) {
			fputc('}', mf);
			rc = cli_fail(c, "out of memory counting the coverage of %s", trace);
			break;
		}
		size_t miss = coverage_missing(&cv, o->min);
		write_gave(mf, &cv, &tally, miss);
		complete = miss == 0;
		if (!c->json)
			fprintf(stderr, "spectap record: [%6.1fs] %zu of %zu listed branches below %" PRIu64 "\n", now_s() - t0,
				miss, cv.n_listed, o->min);
	}
	fprintf(mf, "],\"seconds\":%.1f,\"complete\":%s,\"scenarios\":{", now_s() - t0, complete ? "true" : "false");
	for (size_t i = 0; i < npicks; i++) {
		fprintf(mf, "%s", i ? "," : "");
		cli_json_str(mf, picks[i].name);
		fprintf(mf, ":{\"runs\":%u,\"seconds\":%.1f}", picks[i].runs, picks[i].seconds);
	}
	fputs("},\"coverage\":", mf);
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
			printf("%d run(s) in %.1f s", runs, now_s() - t0);
			for (size_t i = 0; npicks > 1 && i < npicks; i++)
				printf("%s%s %u", i ? ", " : " (", picks[i].name, picks[i].runs);
			printf("%s; corpus and manifest in %s\n", npicks > 1 ? ")" : "", o->dir);
		}
		if (!complete)
			rc = cli_fail(c, "the time budget (%u s) ran out before every listed branch had %" PRIu64
				      " events (see %s)", o->budget_s, o->min, manifest);
	}
	for (size_t i = 0; i < npicks; i++)
		free(picks[i].gave);
	free(tally.prev);
	free(tally.last);
	coverage_fini(&cv);
	return rc;
}

int corpus_opt(struct cli *c, int opt, const char *arg, struct corpus_args *a)
{
	switch (opt) {
	case CORPUS_OPT_UNTIL: a->until_covered = true; return 1;
	case CORPUS_OPT_MAP: a->map = arg; return 1;
	case CORPUS_OPT_SPEC: a->spec = arg; return 1;
	case CORPUS_OPT_CFG: a->cfg = arg; return 1;
	case CORPUS_OPT_MIN:
		if (!cli_parse_u64(c, "--min", arg, &a->min))
			return -1;
		if (a->min < 1)
			return cli_usage_error(c, "--min: 0 events would cover nothing; give 1 or more"), -1;
		return 1;
	case CORPUS_OPT_BUDGET:
		if (!cli_parse_u64(c, "--budget", arg, &a->budget_s))
			return -1;
		if (a->budget_s < 1 || a->budget_s > 86400)
			return cli_usage_error(c, "--budget: %" PRIu64 " is not in 1..86400 seconds", a->budget_s), -1;
		return 1;
	default: return 0;
	}
}

int corpus_check(struct cli *c, const struct record_common *rc, const struct corpus_args *a)
{
	if (a->until_covered && !rc->out)
		return cli_usage_error(c, "-o DIR (the corpus directory) is required with --until-covered");
	if (!a->until_covered && (a->map || a->spec || a->cfg || a->min || a->budget_s))
		return cli_usage_error(c, "--map, --spec, --cfg, --min and --budget go with --until-covered");
	if (!a->until_covered && rc->scenario && strchr(rc->scenario, ','))
		return cli_usage_error(c, "--scenario %s: a list of scenarios goes with --until-covered; one run "
					  "records one scenario", rc->scenario);
	return CLI_OK;
}

int corpus_run(struct cli *c, const struct record_common *rc, const char *system, const struct corpus_args *a,
	       const char *def_map, const char *def_spec, const char *def_cfg, const char *const *extra)
{
	const char *map = a->map ? a->map : def_map, *spec = a->spec ? a->spec : def_spec;
	const char *cfg = a->cfg ? a->cfg : def_cfg;
	const char *pass[24];
	char nodes[16], flush[2][24], terms[24];
	size_t n = 0;

	if (!map || !spec)
		return cli_usage_error(c, "--until-covered needs --map M.tla and --spec S.tla");
	snprintf(nodes, sizeof(nodes), "%u", rc->nodes);
	pass[n++] = "--nodes";
	pass[n++] = nodes;
	if (rc->allow_loss)
		pass[n++] = "--allow-loss";
	if (rc->log_terms) {
		snprintf(terms, sizeof(terms), "%zu", rc->log_terms);
		pass[n++] = "--log-terms";
		pass[n++] = terms;
	}
	record_pass_flush(rc, pass, &n, flush);
	for (size_t k = 0; extra && extra[k] && k < 10; k++)
		pass[n++] = extra[k];
	pass[n] = NULL;
	struct corpus_opts co = { .system = system, .scenario = rc->scenario, .map = map, .spec = spec, .cfg = cfg,
				  .dir = rc->out, .seed = rc->seed, .min = a->min ? a->min : 1,
				  .budget_s = (unsigned)(a->budget_s ? a->budget_s : 600), .pass = pass };
	return record_until_covered(c, &co);
}
