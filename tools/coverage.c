/* Coverage of traces through a mapping; see coverage.h. */
#include "coverage.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"

void coverage_init(struct coverage *cv, const char *map, const char *spec, const char *cfg)
{
	memset(cv, 0, sizeof(*cv));
	cv->map = map;
	cv->spec = spec;
	cv->cfg = cfg;
}

void coverage_fini(struct coverage *cv)
{
	cli_counts_free(&cv->windows);
	cli_counts_free(&cv->branches);
}

static int count_listed(void *arg, const char *branch) { return cli_count(arg, branch, 0) ? -ENOMEM : 0; }
static int count_branch(void *arg, const char *branch) { return cli_count(arg, branch, 1) ? -ENOMEM : 0; }

static int count_window(void *arg, const struct map_window *w)
{
	struct coverage *cv = arg;
	return cli_count(&cv->windows, w->action, 1) ? -ENOMEM : 0;
}

int coverage_add(struct coverage *cv, struct cli *c, const char *trace)
{
	struct mapping *m;
	struct check_error err;
	if (mapping_new(cv->map, cv->spec, cv->cfg, &m, &err))
		return cli_fail(c, "%s", err.msg);
	int rc;
	if (!cv->listed_read) {
		if ((rc = mapping_branches(m, count_listed, &cv->branches, &err)) < 0) {
			mapping_free(m);
			return cli_fail(c, "%s", rc == -ENOMEM ? "out of memory" : err.msg);
		}
		cv->n_listed = cv->branches.n;
		cv->listed_read = true;
	}
	struct spt_reader *r;
	if ((rc = cli_open_trace(c, trace, &r))) {
		mapping_free(m);
		return rc;
	}
	mapping_on_branch(m, count_branch, &cv->branches);
	rc = mapping_run(m, r, count_window, cv, &err);
	spt_reader_close(r);
	mapping_free(m);
	if (rc)
		return cli_fail(c, "%s: %s", trace, rc == -ENOMEM ? "out of memory" : err.msg);
	cv->traces++;
	return CLI_OK;
}

size_t coverage_missing(const struct coverage *cv, uint64_t min)
{
	size_t n = 0;
	for (size_t i = 0; i < cv->n_listed; i++)
		n += cv->branches.counts[i] < min;
	return n;
}

static void json_counts(FILE *f, const struct cli_counts *m, size_t from, size_t to)
{
	fputc('{', f);
	for (size_t i = from; i < to; i++) {
		if (i > from)
			fputc(',', f);
		cli_json_str(f, m->names[i]);
		fprintf(f, ":%" PRIu64, m->counts[i]);
	}
	fputc('}', f);
}

void coverage_print(const struct coverage *cv, uint64_t min, bool json, FILE *f)
{
	const struct cli_counts *b = &cv->branches;
	if (json) {
		fprintf(f, "{\"traces\":%" PRIu64 ",\"windows\":", cv->traces);
		json_counts(f, &cv->windows, 0, cv->windows.n);
		fputs(",\"branches\":", f);
		json_counts(f, b, 0, b->n);
		fputs(",\"listed\":[", f);
		for (size_t i = 0; i < cv->n_listed; i++) {
			fputs(i ? "," : "", f);
			cli_json_str(f, b->names[i]);
		}
		fputs("],\"missing\":[", f);
		for (size_t i = 0, k = 0; i < cv->n_listed; i++)
			if (b->counts[i] < min) {
				fputs(k++ ? "," : "", f);
				cli_json_str(f, b->names[i]);
			}
		fprintf(f, "],\"min\":%" PRIu64 ",\"complete\":%s}\n", min, coverage_missing(cv, min) ? "false" : "true");
		return;
	}
	fprintf(f, "%" PRIu64 " trace(s)\nwindows per action:\n", cv->traces);
	for (size_t i = 0; i < cv->windows.n; i++)
		fprintf(f, "  %-28s %8" PRIu64 "\n", cv->windows.names[i], cv->windows.counts[i]);
	if (!cv->n_listed && !b->n) {
		fputs("branches: the mapping defines no Branch/Branches\n", f);
		return;
	}
	fprintf(f, "branches (events; listed ones need at least %" PRIu64 "):\n", min);
	for (size_t i = 0; i < b->n; i++)
		fprintf(f, "  %-28s %8" PRIu64 "%s\n", b->names[i], b->counts[i],
			i >= cv->n_listed ? "  (not listed)" : b->counts[i] < min ? "  NOT COVERED" : "");
	size_t miss = coverage_missing(cv, min);
	if (miss)
		fprintf(f, "%zu of %zu listed branches below %" PRIu64 "\n", miss, cv->n_listed, min);
	else
		fprintf(f, "every listed branch covered (%zu)\n", cv->n_listed);
}
