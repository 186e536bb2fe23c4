/* spectap check's tallies and reports: per action, windows, passed, the diagnoses of the first
 * failures, the score (SysMoBench's rule), as text or JSON. */
#ifndef SPECTAP_TOOLS_CHECK_REPORT_H
#define SPECTAP_TOOLS_CHECK_REPORT_H

#include <stdint.h>

#include "check.h"
#include "cli.h"

struct failure {
	uint64_t order;   /* where it comes in the report (window files: the line; traces: the end) */
	char *id;         /* the window's id as JSON */
	char *where;      /* "line 3", "node n2, events 10..12" */
	char *where_json; /* ",\"line\":3", ",\"actor\":\"n2\",\"events\":[10,12]" */
	char *body;       /* the text after "FAILED: " */
	char *body_json;  /* the JSON members after the id and where */
	bool error;       /* the window could not be evaluated (its verdict is an error) */
};

struct tally {
	char *action;
	uint64_t windows, passed, skipped, listed;
	uint64_t errors; /* windows whose verdict is an error (counted in windows, not passed) */
	struct failure *fails;
	size_t n_fails;
	double seconds;
};

/* The diagnosis of a failing window (without its id, which a trace's windows get at the end). */
int check_diagnose(const char *action, const struct window_result *r, struct failure *f);
/* Keeps a failure in t (taking f's strings). 0 or -ENOMEM. */
int tally_add_failure(struct tally *t, struct failure *f);
/* Per action, then the score: the mean over actions that have windows. */
/* One trace of several checked at once. */
struct trace_summary {
	const char *path;
	uint64_t windows, passed, errors;
	struct spt_trace_info info;
	bool failed; /* it could not be checked (said when it was tried) */
};

/* What a report says besides the tallies. */
struct check_extras {
	const struct spt_trace_info *damage; /* the one trace read, or NULL */
	const char *const *unwindowed;       /* mapped actions without a window */
	size_t n_unwindowed;
	const struct trace_summary *traces;  /* several traces: each one's line; NULL for one */
	size_t n_traces;
	uint64_t dropped;                    /* windows the mapping's WindowDrop closed unchecked */
};

/* The verdicts (for several traces: each trace's, then the totals per action). x may be NULL. */
void check_report(struct cli *c, const struct tally *ts, size_t n, const struct check_extras *x);
/* The mapped actions (mapped) without a window in ts, into out (room for n_mapped). */
size_t check_unwindowed(const struct tally *ts, size_t n, const char *const *mapped, size_t n_mapped, const char **out);
/* The exit status the verdicts give: CLI_FAIL when a window could not be evaluated, CLI_EMPTY
 * when nothing (or some mapped action) was checked, unless allow_empty; else CLI_OK. */
int check_exit(struct cli *c, const struct tally *ts, size_t n, const char *const *unwindowed, size_t n_unwindowed,
	       bool allow_empty);
/* The verdicts per action as SysMoBench's transition validation reads them (its
 * tlc_results.json: {action: {passes, total, rate, ...}}), written to path by rename. */
int check_tlc_results(struct cli *c, const char *path, const struct tally *ts, size_t n);
void tally_free(struct tally *t);
/* Appends to an "out of memory" message what ran out and what to try. */
void check_oom_hint(char *msg, size_t size);
void failure_free(struct failure *f);

#endif
