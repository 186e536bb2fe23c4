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
};

struct tally {
	char *action;
	uint64_t windows, passed, skipped, listed;
	struct failure *fails;
	size_t n_fails;
	double seconds;
};

/* The diagnosis of a failing window (without its id, which a trace's windows get at the end). */
int check_diagnose(const char *action, const struct window_result *r, struct failure *f);
/* Keeps a failure in t (taking f's strings). 0 or -ENOMEM. */
int tally_add_failure(struct tally *t, struct failure *f);
/* Per action, then the score: the mean over actions that have windows. */
/* The verdicts; damage (NULL when no trace was read) is said in them. */
void check_report(struct cli *c, const struct tally *ts, size_t n, const struct spt_trace_info *damage);
void tally_free(struct tally *t);
/* Appends to an "out of memory" message what ran out and what to try. */
void check_oom_hint(char *msg, size_t size);
void failure_free(struct failure *f);

#endif
