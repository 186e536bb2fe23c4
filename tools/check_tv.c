/*
 * spectap check --tv TV_A.tla: the benchmark's per-action wrapper modules (SysMoBench's tv-eval
 * skill) checked as they are. Such a module reads its windows itself (ndJsonDeserialize of
 * windows_A.ndjson, the one IOEnv.WINDOW_INDEX names), starts in the window's pre-state, takes
 * one step of the action and has an invariant (NeverPost) that the post-state violates; the
 * skill runs TLC once per window (-dfid 2 -deadlock) and counts a window as passed when TLC
 * reports that violation (exit 12). Here: the same search per window, in one process.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_report.h"
#include "check_tv.h"
#include "eval.h"
#include "model.h"

/* The non-empty lines of path, the windows ndJsonDeserialize gives: how many, or -errno; the
 * file's line number of each into *lines (malloc'd). */
static int64_t count_windows(const char *path, uint64_t **lines)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int64_t n = 0;
	uint64_t line = 1, cap = 0, *l = NULL;
	int ch, blank = 1, rc = 0;
	while (!rc && (ch = getc(f)) != EOF) {
		bool nl = ch == '\n';
		if (!nl && ch != ' ' && ch != '\t' && ch != '\r' && blank) {
			blank = 0;
			if ((uint64_t)n == cap) {
				cap = cap ? 2 * cap : 256;
				uint64_t *g = realloc(l, cap * sizeof(*g));
				if (!g)
					rc = -ENOMEM;
				else
					l = g;
			}
			if (!rc)
				l[n++] = line;
		}
		if (nl) {
			line++;
			blank = 1;
		}
	}
	if (!rc && ferror(f))
		rc = -EIO;
	fclose(f);
	if (rc) {
		free(l);
		return rc;
	}
	*lines = l;
	return n;
}

/* "dir/TV_A.tla" -> A into out; the module's name without TV_ when it has it. */
static void action_of(const char *path, char *out, size_t size)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (!strncmp(b, "TV_", 3))
		b += 3;
	size_t n = strcspn(b, ".");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), b);
}

/* path with its last component replaced by name. */
static void beside(const char *path, const char *name, char *out, size_t size)
{
	const char *b = strrchr(path, '/');
	if (b)
		snprintf(out, size, "%.*s/%s", (int)(b - path), path, name);
	else
		snprintf(out, size, "%s", name);
}

/* One window's verdict into t (a failure kept, with its index as the id and its line). */
static int verdict(struct tally *t, uint64_t idx, uint64_t line, const struct mc_result *r, uint64_t max_failures)
{
	t->windows++;
	if (r->verdict == MC_INVARIANT) {
		t->passed++;
		return 0;
	}
	struct failure f = { .order = idx };
	char buf[2048];
	bool error = r->verdict != MC_OK;
	if (r->verdict == MC_OK && r->distinct == r->init_distinct)
		snprintf(buf, sizeof(buf), "the post-state is not reached: no step is enabled in the pre-state");
	else if (r->verdict == MC_OK)
		snprintf(buf, sizeof(buf), "the post-state is not reached: the %" PRIu64 " states within one step of the "
					   "pre-state all satisfy the wrapper's invariants",
			 r->distinct);
	else if (r->msg[0])
		snprintf(buf, sizeof(buf), "%s", r->msg);
	else
		snprintf(buf, sizeof(buf), "%s%s", r->what[0] ? r->what : "the search ended",
			 " (not the violation of the wrapper's invariant)");
	t->errors += error;
	if (t->listed >= max_failures) {
		t->listed++;
		return 0;
	}
	struct spt_buf j = { 0 };
	spt_buf_puts(&j, error ? ",\"verdict\":\"error\",\"error\":" : ",\"verdict\":\"failed\",\"reason\":");
	spt_buf_json_str(&j, buf, strlen(buf));
	char id[32];
	snprintf(id, sizeof(id), "%" PRIu64, idx);
	f.id = strdup(id);
	if (asprintf(&f.where, "line %" PRIu64, line) < 0)
		f.where = NULL;
	if (asprintf(&f.where_json, ",\"line\":%" PRIu64, line) < 0)
		f.where_json = NULL;
	f.body = malloc(strlen(buf) + 2);
	if (f.body)
		sprintf(f.body, "%s\n", buf);
	f.body_json = j.p;
	f.error = error;
	if (!f.id || !f.where || !f.where_json || !f.body || !f.body_json || j.oom) {
		failure_free(&f);
		return -ENOMEM;
	}
	return tally_add_failure(t, &f);
}

/* path made absolute against the current directory, into out (false: too long). */
static bool absolute(const char *path, char *out, size_t size)
{
	char cwd[4096];
	int n;
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, size, "%s", path);
	else
		n = snprintf(out, size, "%s/%s", cwd, path);
	return n >= 0 && (size_t)n < size;
}

/* The module's directory, where the skill runs TLC (its relative file names are from there). */
static int enter_module_dir(struct cli *c, const char *module, int *back)
{
	char dir[4096];
	const char *b = strrchr(module, '/');
	snprintf(dir, sizeof(dir), "%.*s", b ? (int)(b - module) : 1, b ? module : ".");
	if ((*back = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return cli_fail(c, "cannot open the current directory: %s", strerror(errno));
	if (chdir(dir[0] ? dir : "/")) {
		int e = errno;
		close(*back);
		return cli_fail(c, "cannot enter %s (the wrapper's directory): %s", dir, strerror(e));
	}
	return CLI_OK;
}

int check_tv(struct cli *c, const struct check_tv_opts *given)
{
	char action[256], cfg[4096], windows[4096], name[300], module[4096], results[4096];
	struct check_tv_opts opts = *given, *o = &opts;
	if (!absolute(given->module, module, sizeof(module)) ||
	    (given->tlc_results && !absolute(given->tlc_results, results, sizeof(results))) ||
	    (given->cfg && !absolute(given->cfg, cfg, sizeof(cfg))) ||
	    (given->windows && !absolute(given->windows, windows, sizeof(windows))))
		return cli_fail(c, "--tv: a path is too long");
	o->module = module;
	if (given->tlc_results)
		o->tlc_results = results;
	action_of(o->module, action, sizeof(action));
	size_t ml = strlen(module);
	if (!o->cfg && ml > 4 && !strcmp(module + ml - 4, ".tla"))
		snprintf(cfg, sizeof(cfg), "%.*s.cfg", (int)(ml - 4), module);
	else if (!o->cfg && ml + 4 < sizeof(cfg))
		snprintf(cfg, sizeof(cfg), "%.*s.cfg", (int)ml, module);
	else if (!o->cfg)
		return cli_fail(c, "--tv: a path is too long");
	if (!o->windows) {
		snprintf(name, sizeof(name), "windows_%s.ndjson", action);
		beside(module, name, windows, sizeof(windows));
	}
	uint64_t *lines = NULL;
	int64_t n = count_windows(windows, &lines);
	if (n < 0)
		return cli_fail(c, "cannot read the windows %s: %s (the wrapper's windows file: give it with --windows)",
				windows, strerror((int)-n));
	int back;
	if (enter_module_dir(c, module, &back)) {
		free(lines);
		return CLI_FAIL;
	}
	struct tally t = { 0 };
	int rc = CLI_OK;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!(t.action = strdup(action))) {
		rc = cli_fail(c, "out of memory");
		goto out;
	}
	char idx[32];
	/* Every window's model reads the same windows file: read it once. */
	spt_io_keep_files(true);
	for (uint64_t k = 1; k <= (uint64_t)n; k++) {
		snprintf(idx, sizeof(idx), "%" PRIu64, k);
		if (setenv(o->index_var, idx, 1)) {
			rc = cli_fail(c, "setenv %s: %s", o->index_var, strerror(errno));
			break;
		}
		struct mc_opts mo = { .spec_path = o->module, .cfg_path = cfg, .workers = 1, .deadlock = 0,
				      .no_memo = o->no_memo, .max_states = o->max_states, .max_depth = 2 };
		struct mc_result r;
		struct check_error err;
		int e = mc_run(&mo, &r, &err);
		if (e) {
			rc = e == -ENOTSUP ? cli_fail(c, "unsupported: %s (window %" PRIu64 ")", err.msg, k)
					   : cli_fail(c, "%s (window %" PRIu64 ")", err.msg, k);
			break;
		}
		e = verdict(&t, k, lines[k - 1], &r, o->max_failures);
		mc_result_free(&r);
		if (e) {
			rc = cli_fail(c, "out of memory");
			break;
		}
		cli_progress(c, "%s: %" PRIu64 " of %" PRId64 " windows", action, k, n);
	}
	spt_io_keep_files(false);
	cli_progress_done(c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	unsetenv(o->index_var);
	if (fchdir(back) && rc == CLI_OK)
		rc = cli_fail(c, "cannot return to the directory spectap started in: %s", strerror(errno));
	if (rc == CLI_OK) {
		check_report(c, &t, 1, NULL);
		if (o->tlc_results)
			rc = check_tlc_results(c, o->tlc_results, &t, 1);
		if (rc == CLI_OK)
			rc = check_exit(c, &t, 1, NULL, 0, o->allow_empty);
	}
out:
	close(back);
	free(lines);
	tally_free(&t);
	return rc;
}
