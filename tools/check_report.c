/* spectap check's tallies and reports (check_report.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check_report.h"
#include "spectap/buf.h"
#include "spectap/json.h"

static char *show(spt_val *v)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);
	if (!f)
		return NULL;
	spt_value_print(f, v);
	fclose(f);
	return t;
}

int check_diagnose(const char *action, const struct window_result *r, struct failure *f)
{
	struct spt_buf t = { 0 }, j = { 0 };
	if (r->no_successor) {
		spt_buf_printf(&t, "%s is not enabled in the pre-state (no binding of its parameters has a successor)\n", action);
		spt_buf_puts(&j, ",\"enabled\":false,\"differs\":[]");
	} else {
		spt_buf_printf(&t, "no successor of %s matches the post-state; the closest", action);
		if (r->binding)
			spt_buf_printf(&t, " (parameters %s)", r->binding);
		spt_buf_printf(&t, " differs in %u variable%s:\n", r->n_diffs, r->n_diffs == 1 ? "" : "s");
		spt_buf_puts(&j, ",\"enabled\":true,\"differs\":[");
		for (uint32_t i = 0; i < r->n_diffs; i++)
			spt_buf_printf(&j, "%s\"%s\"", i ? "," : "", r->diffs[i].var);
		spt_buf_puts(&j, "],\"closest\":{");
		if (r->binding) {
			spt_buf_puts(&j, "\"binding\":");
			spt_buf_json_str(&j, r->binding, strlen(r->binding));
			spt_buf_putc(&j, ',');
		}
		spt_buf_puts(&j, "\"vars\":{");
		for (uint32_t i = 0; i < r->n_diffs; i++) {
			char *e = show(r->diffs[i].expected), *g = show(r->diffs[i].reached);
			spt_buf_printf(&t, "    %-16s expected %s\n    %-16s reached  %s\n", r->diffs[i].var, e ? e : "?", "", g ? g : "?");
			spt_buf_printf(&j, "%s\"%s\":{\"expected\":", i ? "," : "", r->diffs[i].var);
			spt_buf_json_str(&j, e ? e : "", e ? strlen(e) : 0);
			spt_buf_puts(&j, ",\"reached\":");
			spt_buf_json_str(&j, g ? g : "", g ? strlen(g) : 0);
			spt_buf_putc(&j, '}');
			free(e);
			free(g);
		}
		spt_buf_puts(&j, "}}");
	}
	if (t.oom || j.oom) {
		spt_buf_free(&t);
		spt_buf_free(&j);
		return -ENOMEM;
	}
	f->body = t.p;
	f->body_json = j.p;
	return 0;
}

void failure_free(struct failure *f)
{
	free(f->id);
	free(f->where);
	free(f->where_json);
	free(f->body);
	free(f->body_json);
	memset(f, 0, sizeof(*f));
}

int tally_add_failure(struct tally *t, struct failure *f)
{
	struct failure *n = realloc(t->fails, (t->n_fails + 1) * sizeof(*n));
	if (!n) {
		failure_free(f);
		return -ENOMEM;
	}
	t->fails = n;
	t->fails[t->n_fails++] = *f;
	memset(f, 0, sizeof(*f));
	t->listed++;
	return 0;
}

void tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->n_fails; i++)
		failure_free(&t->fails[i]);
	free(t->fails);
	free(t->action);
	memset(t, 0, sizeof(*t));
}

static void report_json(const struct tally *t)
{
	double rate = t->windows ? (double)t->passed / (double)t->windows : 0.0;
	int score = t->windows && t->passed == t->windows;
	cli_json_str(stdout, t->action);
	printf(":{\"windows\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"rate\":%.4f,\"score\":%d,\"skipped\":%" PRIu64
	       ",\"seconds\":%.3f,\"failures\":[",
	       t->windows, t->passed, rate, score, t->skipped, t->seconds);
	for (size_t i = 0; i < t->n_fails; i++) {
		const struct failure *f = &t->fails[i];
		printf("%s{\"window_id\":%s%s%s}", i ? "," : "", f->id ? f->id : "null", f->where_json ? f->where_json : "",
		       f->body_json ? f->body_json : "");
	}
	printf("]}");
}

static void report_text(const struct tally *t)
{
	double rate = t->windows ? (double)t->passed / (double)t->windows : 0.0;
	int score = t->windows && t->passed == t->windows;
	printf("action %s: %" PRIu64 " windows, %" PRIu64 " passed (%.1f%%), score %d", t->action, t->windows, t->passed,
	       100.0 * rate, score);
	if (t->skipped)
		printf("; %" PRIu64 " windows of other actions skipped", t->skipped);
	printf("  [%.3f s, %.0f windows/s]\n", t->seconds, t->seconds > 0 ? (double)t->windows / t->seconds : 0.0);
	for (size_t i = 0; i < t->n_fails; i++) {
		const struct failure *f = &t->fails[i];
		printf("  window %s (%s) FAILED: %s", f->id ? f->id : "?", f->where ? f->where : "?", f->body ? f->body : "?\n");
	}
	if (t->windows > t->passed && t->n_fails < t->windows - t->passed)
		printf("  ... %" PRIu64 " more failing windows (--max-failures)\n", t->windows - t->passed - t->n_fails);
}

void check_report(struct cli *c, const struct tally *ts, size_t n, const struct spt_trace_info *damage)
{
	double sum = 0;
	size_t with = 0;
	for (size_t i = 0; i < n; i++) {
		if (ts[i].windows) {
			with++;
			sum += ts[i].passed == ts[i].windows;
		}
	}
	if (c->json) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("{\"actions\":{");
		for (size_t i = 0; i < n; i++) {
			printf(i ? "," : "");
			report_json(&ts[i]);
		}
		printf("},\"peak_rss_kb\":%ld", ru.ru_maxrss);
		if (damage)
			cli_json_damage(stdout, damage);
		if (with)
			printf(",\"score\":%g}\n", sum / (double)with);
		else
			printf(",\"score\":null}\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		report_text(&ts[i]);
	if (!with)
		printf("score: none (no windows: actions without windows are left out)\n");
	else
		printf("score: %g (mean over %zu action%s with windows)\n", sum / (double)with, with, with == 1 ? "" : "s");
	if (damage && damage->damaged)
		printf("trace DAMAGED: %" PRIu64 " chunks (%" PRIu64 " events)%s could not be read: their windows are "
		       "missing from these verdicts\n",
		       damage->damaged_chunks, damage->damaged_events,
		       damage->damaged_tail ? " and the end of the file" : "");
}

void check_oom_hint(char *msg, size_t size)
{
	if (!strstr(msg, "out of memory"))
		return;
	size_t n = strlen(msg);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	snprintf(msg + n, size - n, "; spectap had %ld MB when memory ran out: check fewer windows at a time (a shorter "
		 "trace, fewer --jobs) or give it more memory", ru.ru_maxrss / 1024);
}
