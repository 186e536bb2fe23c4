/* The emit collector core (collector/emit_collect.c): records as the emit API sends them, in
 * and out of order, from named and foreign pids, with gaps and malformed ones, written to a real
 * trace and read back. (The transports themselves are tested with real programs in test_emit and
 * test_zk_agent; here the core's ordering, pairing and loss accounting are pinned down.) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_collect.h" /* collector/: built with -Icollector */
#include "spectap/trace.h"
#include "spectap/value.h"
#include "check.h"

static char dir[] = "/tmp/spectap-test-ecol-XXXXXX";

struct run {
	struct spt_writer *w;
	struct ecol *c;
	char path[256];
	unsigned seen; /* on_event calls */
};

static void on_event(void *ctx, const struct spt_event *ev, int pid)
{
	struct run *r = ctx;
	(void)ev;
	(void)pid;
	r->seen++;
}

static void open_run(struct run *r, const char *name)
{
	static const char *const nodes[] = { "1", "2" };
	struct spt_header h = { .system = "test", .nodes = nodes, .n_nodes = 2, .capture_method = "test" };
	struct spt_writer_opts wo = { .sz = sizeof(wo), .overwrite = true };
	struct spt_diag d = { "" };
	char err[256] = "";
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s/%s.spt", dir, name);
	CHECKF(spt_writer_open(r->path, &h, &wo, &r->w, &d) == 0, "%s", d.msg);
	struct ecol_opts o = { .sz = sizeof(o), .source = "usdt", .on_event = on_event, .ctx = r };
	CHECKF(ecol_new(r->w, &o, &r->c, err, sizeof(err)) == 0, "%s", err);
}

static void add(struct run *r, uint64_t ts, int pid, const char *rec)
{
	struct ecol_rec e = { ts, pid, pid + 1, rec, strlen(rec) };
	CHECK(ecol_add(r->c, &e) == 0);
}

/* Finishes and reads the trace back into evs (kind, node, seq, lamport, msg id). */
struct got {
	char kind[32], node[8];
	uint64_t seq, lamport, ts, msg_id;
};

static size_t finish(struct run *r, uint64_t transport_lost, uint64_t *lost, struct got *g, size_t max,
		     struct spt_loss *losses, size_t *n_losses)
{
	struct spt_diag d = { "" };
	CHECKF(ecol_finish(r->c, transport_lost, lost) == 0, "%s", ecol_error(r->c));
	CHECKF(spt_writer_close(r->w, &d) == 0, "%s", d.msg);
	struct spt_reader *rd = NULL;
	CHECKF(spt_reader_open(r->path, &rd, &d) == 0, "%s", d.msg);
	size_t n = 0;
	const struct spt_event *ev;
	while (rd && spt_reader_next(rd, &ev) == 1 && n < max) {
		snprintf(g[n].kind, sizeof(g[n].kind), "%s", ev->kind);
		snprintf(g[n].node, sizeof(g[n].node), "%s", ev->node);
		g[n].seq = ev->seq;
		g[n].lamport = ev->lamport;
		g[n].ts = ev->ts_ns;
		g[n].msg_id = ev->msg ? ev->msg->id : 0;
		CHECK(!strcmp(ev->source, "usdt"));
		n++;
	}
	const struct spt_loss *l;
	size_t nl = rd ? spt_reader_losses(rd, &l) : 0;
	for (size_t i = 0; i < nl && i < *n_losses; i++) {
		losses[i] = l[i];
		losses[i].node = strdup(l[i].node); /* valid after close */
		losses[i].source = NULL;
	}
	*n_losses = nl;
	spt_reader_close(rd);
	return n;
}

static void free_losses(struct spt_loss *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((void *)l[i].node);
}

#define SEND(from, to, epoch)                                                                      \
	"{\"node\":\"" from "\",\"kind\":\"send\",\"msg\":{\"dir\":\"send\",\"from\":\"" from          \
	"\",\"to\":\"" to "\",\"type\":\"N\",\"fields\":{\"e\":" epoch "}}}"
#define RECV(from, to, epoch)                                                                      \
	"{\"node\":\"" to "\",\"kind\":\"recv\",\"msg\":{\"dir\":\"recv\",\"from\":\"" from            \
	"\",\"to\":\"" to "\",\"type\":\"N\",\"fields\":{\"e\":" epoch "}}}"

/* Records added out of order come out in time order; a receive pairs with its send (same id,
 * Lamport past it) even when both were added receive first; foreign pids are dropped. */
static void test_order_and_pairing(void)
{
	struct run r;
	open_run(&r, "order");
	CHECK(ecol_name_pid(r.c, 100) == 0);
	CHECK(ecol_name_pid(r.c, 200) == 0);
	add(&r, 30, 200, RECV("1", "2", "7"));
	add(&r, 10, 100, "{\"node\":\"1\",\"kind\":\"a\",\"state\":{\"x\":1}}");
	add(&r, 20, 100, SEND("1", "2", "7"));
	add(&r, 25, 300, "{\"node\":\"1\",\"kind\":\"foreign\"}");
	add(&r, 40, 200, "{\"node\":\"2\",\"kind\":\"b\"}");
	CHECK(ecol_release(r.c, 21) == 2); /* ts 10 and 20 only */
	CHECK(ecol_stats(r.c)->held == 3);
	struct got g[8];
	struct spt_loss l[4];
	size_t nl = 4;
	uint64_t lost = 99;
	size_t n = finish(&r, 0, &lost, g, 8, l, &nl);
	CHECK(n == 4);
	CHECK(lost == 0 && nl == 0);
	const char *kinds[] = { "a", "send", "recv", "b" };
	for (size_t i = 0; i < n && i < 4; i++)
		CHECKF(!strcmp(g[i].kind, kinds[i]), "event %zu is %s", i, g[i].kind);
	CHECK(g[1].msg_id != 0 && g[1].msg_id == g[2].msg_id);
	CHECK(g[2].lamport > g[1].lamport);
	CHECK(g[0].seq == 1 && g[1].seq == 2 && g[2].seq == 1 && g[3].seq == 2);
	const struct ecol_stats *st = ecol_stats(r.c);
	CHECK(st->foreign == 1 && st->events == 4 && st->paired == 1 && st->unpaired_receives == 0);
	CHECK(st->sends == 1 && st->receives == 1 && st->unpaired_sends == 0 && st->late == 0);
	CHECK(r.seen == 4);
	ecol_free(r.c);
}

/* A gap in a process's meta.seq is a loss record of its node, whose range is the gap left in
 * the node's trace seq; a new process (a restart) starts its own numbering. */
static void test_gaps(void)
{
	struct run r;
	open_run(&r, "gaps");
	CHECK(ecol_name_pid(r.c, 100) == 0);
	CHECK(ecol_name_pid(r.c, 101) == 0);
	add(&r, 1, 100, "{\"node\":\"1\",\"kind\":\"k\",\"meta\":{\"seq\":1}}");
	add(&r, 2, 100, "{\"node\":\"1\",\"kind\":\"k\",\"meta\":{\"seq\":2}}");
	add(&r, 3, 100, "{\"node\":\"1\",\"kind\":\"k\",\"meta\":{\"seq\":5}}"); /* 3, 4 lost */
	add(&r, 4, 101, "{\"node\":\"1\",\"kind\":\"k\",\"meta\":{\"seq\":1}}"); /* restarted */
	add(&r, 5, 101, "{\"node\":\"1\",\"kind\":\"k\",\"meta\":{\"seq\":2}}");
	struct got g[8];
	struct spt_loss l[4];
	size_t nl = 4;
	uint64_t lost = 0;
	size_t n = finish(&r, 1, &lost, g, 8, l, &nl); /* the transport lost 1: within the gaps */
	CHECK(n == 5);
	CHECK(lost == 2);
	CHECK(nl == 1);
	if (nl == 1)
		CHECK(!strcmp(l[0].node, "1") && l[0].count == 2 && l[0].first_seq == 3 && l[0].last_seq == 4);
	uint64_t want[] = { 1, 2, 5, 6, 7 };
	for (size_t i = 0; i < n && i < 5; i++)
		CHECKF(g[i].seq == want[i], "event %zu has seq %llu", i, (unsigned long long)g[i].seq);
	CHECK(ecol_stats(r.c)->gap_lost == 2);
	free_losses(l, nl);
	ecol_free(r.c);
}

/* Transport loss no gap shows (a process's last records) is written unattributed; a record that
 * does not parse is rejected, counted lost, and named with its byte offset. */
static void test_unseen_loss_and_rejects(void)
{
	struct run r;
	open_run(&r, "rejects");
	CHECK(ecol_name_pid(r.c, 100) == 0);
	add(&r, 1, 100, "{\"node\":\"1\",\"kind\":\"k\",\"meta\":{\"seq\":1}}");
	add(&r, 2, 100, "{\"node\":\"1\",\"kind\":\"k\",\"state\":{\"x\":}}");
	add(&r, 3, 100, "{\"kind\":\"no node\"}");
	add(&r, 4, 100, "[1,2]");
	struct got g[8];
	struct spt_loss l[4];
	size_t nl = 4;
	uint64_t lost = 0;
	size_t n = finish(&r, 2, &lost, g, 8, l, &nl);
	CHECK(n == 1);
	CHECK(ecol_stats(r.c)->rejected == 3);
	CHECK(lost == 5); /* 2 counted by the transport + 3 rejected, no gap seen */
	CHECK(nl == 1);
	if (nl == 1)
		CHECK(!strcmp(l[0].node, "") && l[0].count == 5 && l[0].first_seq == 0);
	const char *why = ecol_first_rejection(r.c);
	CHECKF(strstr(why, "pid 100") && strstr(why, "at byte offset 36: unexpected character"), "%s", why);
	free_losses(l, nl);
	ecol_free(r.c);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_order_and_pairing);
	RUN(test_gaps);
	RUN(test_unseen_loss_and_rejects);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	TEST_MAIN_END("test_emit_collect");
}
