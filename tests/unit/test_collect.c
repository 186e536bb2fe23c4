/* The generic collector end to end: uprobes on tests/targets/uprobe_target's step() (path:
 * argv[1], else $UPROBE_TARGET, else UPROBE_TARGET_DEFAULT from the build), records turned into
 * spectap events by collector/collect.c, written to a .spt trace and read back. Without BPF (not
 * root) the tests print "SKIP: ..." and count as skipped. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect.h" /* collector/: built with -Icollector -Iprobes */
#include "spectap/trace.h"
#include "check.h"

#ifndef UPROBE_TARGET_DEFAULT
#define UPROBE_TARGET_DEFAULT "build/tests/uprobe_target"
#endif

#define CALLS 5000
#define P_STEP 1

static const char *target;
static unsigned long skipped;
static bool bpf_usable;

static struct uprobe_read rd(uint8_t src, uint8_t kind, uint8_t size, int32_t off, uint8_t flags)
{
	struct uprobe_read r;

	memset(&r, 0, sizeof(r));
	r.src = src;
	r.kind = kind;
	r.size = size;
	r.off = off;
	r.flags = flags;
	return r;
}

/* step(int node, long term, struct state *s), as in test_uprobe.c. */
static struct probe_spec spec_step(void)
{
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = 8;
	s.reads[0] = rd(UPROBE_SRC_RDI, UPROBE_READ_VALUE, 4, 0, UPROBE_READ_SIGNED); /* node */
	s.reads[1] = rd(UPROBE_SRC_RSI, UPROBE_READ_VALUE, 8, 0, 0);                  /* term */
	s.reads[2] = rd(UPROBE_SRC_RDX, UPROBE_READ_VALUE, 8, 0, 0);                  /* s */
	s.reads[3] = rd(UPROBE_SRC_RDX, UPROBE_READ_MEM, 8, 16, 0);                   /* s->commit */
	s.reads[4] = rd(UPROBE_SRC_RDX, UPROBE_READ_MEM, 8, 0, 0);                    /* s->leader->id */
	s.reads[4].nderef = 1;
	s.reads[4].deref_off[0] = 24;
	s.reads[5] = rd(UPROBE_SRC_RDX, UPROBE_READ_MEM, 2, 6, UPROBE_READ_SIGNED);   /* s->delta */
	s.reads[6] = rd(UPROBE_SRC_RDX, UPROBE_READ_MEM, 1, 4, 0);                    /* s->role */
	s.reads[7] = rd(UPROBE_SRC_RDX, UPROBE_READ_BLOCK, 48, 32, 0);                /* s->log */
	return s;
}

static const struct collect_probe step_probe = {
	.probe_id = P_STEP,
	.kind = "target.step",
	.nfields = 8,
	.fields = {
		{"node", COLLECT_ARGS, COLLECT_INT},
		{"term", COLLECT_ARGS, COLLECT_UINT},
		{"s", COLLECT_SKIP, COLLECT_UINT},
		{"commit", COLLECT_STATE, COLLECT_INT},
		{"leader_id", COLLECT_STATE, COLLECT_UINT},
		{"delta", COLLECT_STATE, COLLECT_INT},
		{"role", COLLECT_STATE, COLLECT_UINT},
		{"log", COLLECT_STATE, COLLECT_HEX},
	},
};

static bool need_bpf(const char *test)
{
	if (!bpf_usable) {
		printf("SKIP: %s: BPF not usable here (need root or CAP_BPF+CAP_PERFMON)\n", test);
		skipped++;
	}
	return bpf_usable;
}

static int spawn_held(int *go_fd, long calls)
{
	char n[32];
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -errno;
	snprintf(n, sizeof(n), "%ld", calls);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execl(target, target, "-w", "-n", n, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

/* Releases the held target; drains every 10 ms (unless at_end) until it has exited, then until
 * the ring buffer is empty. Returns the target's exit status or -1. */
static int run_and_collect(struct collect *c, int pid, int go_fd, bool at_end)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};
	int status = -1, r, errors = 0;
	time_t deadline = time(NULL) + 60;

	if (write(go_fd, "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go_fd);
	for (;;) {
		if (!at_end) {
			r = collect_drain(c);
			if (r < 0 && errors++ == 0)
				fprintf(stderr, "  drain: %s\n", collect_error(c));
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (time(NULL) > deadline) {
			fprintf(stderr, "  target did not finish within 60 s: killed\n");
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&tick, NULL);
	}
	while ((r = collect_drain(c)) > 0)
		;
	CHECKF(r == 0, "final drain: %d %s", r, collect_error(c));
	CHECKF(errors == 0, "%d timer drains failed", errors);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct fixture {
	char dir[64], path[128];
	struct uprobe_loader *l;
	struct spt_writer *w;
	struct collect *c;
	int pid, go;
};

static bool setup(struct fixture *fx, size_t ringbuf_bytes, const struct collect_opts *co)
{
	static const char *const nodes[] = {"t1"};
	struct uprobe_loader_opts lo = {.ringbuf_bytes = ringbuf_bytes};
	struct spt_header h = {.system = "uprobe_target", .nodes = nodes, .n_nodes = 1, .capture_method = "bpf"};
	struct spt_writer_opts wo = {.sz = sizeof(wo)};
	struct collect_table t = {&step_probe, 1};
	struct probe_spec s = spec_step();
	struct spt_diag d = {""};
	char err[300];
	uint64_t off;

	memset(fx, 0, sizeof(*fx));
	fx->go = -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_collect.XXXXXX");
	CHECK(mkdtemp(fx->dir) != NULL);
	snprintf(fx->path, sizeof(fx->path), "%s/t.spt", fx->dir);
	CHECKF(uprobe_loader_open(&fx->l, &lo, err, sizeof(err)) == 0, "%s", err);
	if (!fx->l)
		return false;
	CHECKF(spt_writer_open(fx->path, &h, &wo, &fx->w, &d) == 0, "%s", d.msg);
	if (!fx->w)
		return false;
	CHECKF(collect_new(fx->w, &t, fx->l, co, &fx->c, err, sizeof(err)) == 0, "%s", err);
	if (!fx->c)
		return false;
	fx->pid = spawn_held(&fx->go, CALLS);
	CHECK(fx->pid > 0);
	if (fx->pid <= 0)
		return false;
	CHECK(collect_set_node(fx->c, fx->pid, "t1") == 0);
	CHECKF(uprobe_symbol_offset(target, "step", &off, err, sizeof(err)) == 0, "%s", err);
	CHECKF(uprobe_attach(fx->l, target, off, P_STEP, &s, fx->pid) == 0, "%s", uprobe_loader_error(fx->l));
	return true;
}

static void teardown(struct fixture *fx)
{
	if (fx->go >= 0 && fx->pid > 0) { /* setup failed after the spawn */
		kill(fx->pid, SIGKILL);
		waitpid(fx->pid, NULL, 0);
		close(fx->go);
	}
	collect_free(fx->c);
	if (fx->w)
		spt_writer_abandon(fx->w);
	uprobe_loader_close(fx->l);
	unlink(fx->path);
	rmdir(fx->dir);
}

static int64_t get_int(spt_val *rec, const char *name)
{
	spt_val *v = rec ? spt_rec_get(rec, name) : NULL;

	return v && v->kind == SPT_INT ? v->u.i : INT64_MIN;
}

static unsigned long mismatches;

#define EXPECT(what, i, got, want)                                                                 \
	do {                                                                                       \
		if ((long long)(got) != (long long)(want) && mismatches++ < 10)                    \
			fprintf(stderr, "  mismatch: %s at call %ld: got %lld, want %lld\n", what, \
				(long)(i), (long long)(got), (long long)(want));                   \
	} while (0)

static void check_event(const struct spt_event *e, long i)
{
	bool null = i % 1000 == 999;
	spt_val *log, *faulted;
	char want[97];

	EXPECT("kind", i, strcmp(e->kind, "target.step"), 0);
	EXPECT("source", i, strcmp(e->source, "bpf"), 0);
	EXPECT("args.node", i, get_int(e->args, "node"), i % 7 - 3);
	EXPECT("args.term", i, get_int(e->args, "term"), i * 1000003L + 7);
	faulted = e->meta ? spt_rec_get(e->meta, "faulted") : NULL;
	if (null) {
		EXPECT("no state (every state read faulted: s == NULL)", i, e->state == NULL, 1);
		EXPECT("meta.faulted lists 5 reads", i, faulted && faulted->kind == SPT_SET ? faulted->n : 0, 5);
		return;
	}
	EXPECT("no meta", i, e->meta == NULL, 1);
	EXPECT("state is a record", i, e->state != NULL, 1);
	if (!e->state)
		return;
	EXPECT("state.commit", i, get_int(e->state, "commit"), 3 * i);
	EXPECT("state.leader_id", i, get_int(e->state, "leader_id"), i ^ 0x5a5a);
	EXPECT("state.delta", i, get_int(e->state, "delta"), -(i % 30000));
	EXPECT("state.role", i, get_int(e->state, "role"), i % 3);
	for (int k = 0; k < 48; k++)
		snprintf(want + 2 * k, 3, "%02x", (unsigned)((i + k) & 0xff));
	log = spt_rec_get(e->state, "log");
	EXPECT("state.log", i, log && log->kind == SPT_STR && !strcmp(log->u.s, want), 1);
}

/* Reads the trace back; returns the number of step events (checking each against its call when
 * complete, i.e. no loss). */
static uint64_t read_back(const char *path, bool complete, const struct spt_trace_info **info_out,
			  struct spt_reader **rp)
{
	struct spt_diag d = {""};
	const struct spt_event *e;
	uint64_t n = 0, prev_ts = 0, prev_lamport = 0, bad_order = 0;
	int r;

	*rp = NULL;
	CHECKF(spt_reader_open(path, rp, &d) == 0, "%s", d.msg);
	if (!*rp)
		return 0;
	*info_out = spt_reader_info(*rp);
	CHECK((*info_out)->indexed && !(*info_out)->damaged);
	mismatches = 0;
	while ((r = spt_reader_next(*rp, &e)) == 1) {
		EXPECT("node", n, strcmp(e->node, "t1"), 0);
		EXPECT("seq", n, e->seq, n + 1);
		if (e->ts_ns < prev_ts || e->lamport <= prev_lamport)
			bad_order++;
		prev_ts = e->ts_ns;
		prev_lamport = e->lamport;
		if (complete)
			check_event(e, (long)n);
		n++;
	}
	CHECKF(r == 0, "reader: %d", r);
	CHECKF(bad_order == 0, "%llu events out of ts/lamport order", (unsigned long long)bad_order);
	CHECKF(mismatches == 0, "%lu mismatched fields", mismatches);
	return n;
}

static void test_collect_step(void)
{
	const struct spt_trace_info *info = NULL;
	const struct collect_stats *st;
	struct spt_reader *r = NULL;
	const struct spt_loss *losses;
	struct spt_diag d = {""};
	struct fixture fx;
	uint64_t lost = 1, n;
	int status;

	if (!need_bpf(__func__))
		return;
	if (!setup(&fx, 0, NULL))
		goto cleanup;
	status = run_and_collect(fx.c, fx.pid, fx.go, false);
	fx.go = -1;
	CHECKF(status == 0, "target exit status %d", status);
	CHECKF(collect_finish(fx.c, &lost) == 0, "%s", collect_error(fx.c));
	CHECK(lost == 0);
	st = collect_stats(fx.c);
	CHECKF(st->records == CALLS && st->events == CALLS, "records %llu events %llu",
	       (unsigned long long)st->records, (unsigned long long)st->events);
	CHECK(st->late == 0 && st->late_fill == 0 && st->unknown_probe == 0 && st->counter_mismatch == 0);
	CHECK(st->faulted_reads == 5 * (CALLS / 1000));
	CHECKF(spt_writer_close(fx.w, &d) == 0, "%s", d.msg);
	fx.w = NULL;
	n = read_back(fx.path, true, &info, &r);
	CHECKF(n == CALLS, "%llu events read back", (unsigned long long)n);
	if (info) {
		CHECK(info->lost == 0);
		CHECK(info->events == CALLS);
	}
	if (r)
		CHECK(spt_reader_losses(r, &losses) == 0);
cleanup:
	spt_reader_close(r);
	teardown(&fx);
}

/* Spool mode (collect_opts.spool) gives the same trace as live shaping: drained inline, and
 * with the drain and shaping threads; the pid's node is given through the spool (only named
 * pids are kept), and the spool leaves no file behind. */
static void test_collect_step_spooled(void)
{
	static const char *const modes[] = {"collect_drain inline", "threads, shaped at the stop",
					    "threads, shaped along (backlog of 1 byte)"};
	for (int threads = 0; threads <= 2; threads++) {
		const struct spt_trace_info *info = NULL;
		struct spt_reader *r = NULL;
		struct spt_diag d = {""};
		struct fixture fx;
		uint64_t lost = 1, n;
		int status = -1;

		if (!need_bpf(__func__))
			return;
		printf("  %s\n", modes[threads]);
		if (!setup(&fx, 0, &(struct collect_opts){.sz = sizeof(struct collect_opts), .named_pids_only = true,
							   .spool = true, .spool_dir = "/tmp",
							   .spool_backlog = threads == 2 ? 1 : 0}))
			goto cleanup;
		if (threads) {
			CHECKF(collect_bg_start(fx.c, 10) == 0, "%s", collect_error(fx.c));
			if (write(fx.go, "g", 1) != 1)
				kill(fx.pid, SIGKILL);
			close(fx.go);
			fx.go = -1;
			for (int i = 0; i < 6000 && waitpid(fx.pid, &status, WNOHANG) != fx.pid; i++)
				nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
			status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
			/* The drain thread empties the ring every 10 ms: wait for it, not a fixed time. */
			struct collect_stats live = {0};
			for (int i = 0; i < 500 && live.spooled < CALLS; i++) {
				nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
				collect_bg_stats(fx.c, &live);
			}
			CHECKF(live.spooled == CALLS, "spooled %llu while running", (unsigned long long)live.spooled);
			/* Shaped along: every record is taken while the capture runs (the last ones wait in
			 * the reorder window for the stop); else none is before the stop. */
			for (int i = 0; i < 500 && threads == 2 && live.records < CALLS; i++) {
				nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
				collect_bg_stats(fx.c, &live);
			}
			if (threads == 2)
				CHECKF(live.records == CALLS && live.events > 0, "%llu records shaped, %llu events before the stop",
				       (unsigned long long)live.records, (unsigned long long)live.events);
			else
				CHECKF(live.records == 0 && live.events == 0, "%llu records shaped before the stop",
				       (unsigned long long)live.records);
			CHECKF(collect_bg_stop(fx.c) == 0, "%s", collect_error(fx.c));
			CHECK(collect_drain(fx.c) == 0);
		} else {
			status = run_and_collect(fx.c, fx.pid, fx.go, false);
			fx.go = -1;
		}
		CHECKF(status == 0, "target exit status %d", status);
		CHECKF(collect_finish(fx.c, &lost) == 0, "%s", collect_error(fx.c));
		CHECK(lost == 0);
		const struct collect_stats *st = collect_stats(fx.c);
		CHECKF(st->spooled == CALLS && st->records == CALLS && st->events == CALLS && st->foreign == 0,
		       "spooled %llu records %llu events %llu foreign %llu", (unsigned long long)st->spooled,
		       (unsigned long long)st->records, (unsigned long long)st->events, (unsigned long long)st->foreign);
		CHECK(st->faulted_reads == 5 * (CALLS / 1000));
		CHECKF(spt_writer_close(fx.w, &d) == 0, "%s", d.msg);
		fx.w = NULL;
		n = read_back(fx.path, true, &info, &r);
		CHECKF(n == CALLS, "%llu events read back", (unsigned long long)n);
		spt_reader_close(r);
	cleanup:
		teardown(&fx);
	}
}

/* A one-page ring buffer drained only at the end: most records are lost, and every loss is in
 * the trace as a loss record. */
static void test_collect_forced_loss(void)
{
	const struct spt_trace_info *info = NULL;
	struct spt_reader *r = NULL;
	const struct spt_loss *losses;
	struct spt_diag d = {""};
	struct fixture fx;
	uint64_t lost = 0, bpf_lost = 0, loss_sum = 0, n;
	size_t nl = 0;
	int status;

	if (!need_bpf(__func__))
		return;
	if (!setup(&fx, (size_t)sysconf(_SC_PAGESIZE), NULL))
		goto cleanup;
	status = run_and_collect(fx.c, fx.pid, fx.go, true);
	fx.go = -1;
	CHECKF(status == 0, "target exit status %d", status);
	CHECKF(collect_finish(fx.c, &lost) == 0, "%s", collect_error(fx.c));
	CHECK(uprobe_losses(fx.l, &bpf_lost) == 0);
	CHECKF(lost == bpf_lost, "collector lost %llu, BPF counted %llu", (unsigned long long)lost,
	       (unsigned long long)bpf_lost);
	CHECK(collect_stats(fx.c)->counter_mismatch == 0);
	CHECKF(spt_writer_close(fx.w, &d) == 0, "%s", d.msg);
	fx.w = NULL;
	n = read_back(fx.path, false, &info, &r);
	if (r)
		nl = spt_reader_losses(r, &losses);
	for (size_t i = 0; i < nl; i++) {
		CHECK(losses[i].node && !strcmp(losses[i].node, "") && !strncmp(losses[i].source, "bpf:cpu", 7));
		loss_sum += losses[i].count;
	}
	CHECKF(n + loss_sum == CALLS, "%llu events + %llu lost != %d calls", (unsigned long long)n,
	       (unsigned long long)loss_sum, CALLS);
	CHECKF(n > 0 && loss_sum > 0, "events %llu lost %llu", (unsigned long long)n, (unsigned long long)loss_sum);
	if (info)
		CHECKF(info->lost == lost, "trace says %llu lost, collector %llu", (unsigned long long)info->lost,
		       (unsigned long long)lost);
	printf("  (one-page ring buffer: %llu events + %llu lost in %zu loss records = %d calls)\n",
	       (unsigned long long)n, (unsigned long long)loss_sum, nl, CALLS);
cleanup:
	spt_reader_close(r);
	teardown(&fx);
}

/* Table validation needs no BPF. */
static void test_bad_tables(void)
{
	struct collect_probe p[2] = {step_probe, step_probe};
	struct collect_table t = {p, 2};
	struct spt_writer_opts wo = {.sz = sizeof(wo)};
	struct spt_header h = {.system = "x"};
	struct spt_writer *w = NULL;
	struct collect *c = NULL;
	char dir[] = "/tmp/test_collect.XXXXXX", path[64], err[300];
	struct spt_diag d = {""};

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/bad.spt", dir);
	CHECKF(spt_writer_open(path, &h, &wo, &w, &d) == 0, "%s", d.msg);
	if (!w)
		goto cleanup;
	CHECK(collect_new(w, &t, NULL, NULL, &c, err, sizeof(err)) == -EINVAL && !c);
	CHECKF(strstr(err, "twice") != NULL, "%s", err);
	p[1].probe_id = 2;
	p[1].fields[2].place = COLLECT_NODE;
	p[1].fields[3].place = COLLECT_NODE;
	CHECK(collect_new(w, &t, NULL, NULL, &c, err, sizeof(err)) == -EINVAL && !c);
	CHECKF(strstr(err, "node read") != NULL, "%s", err);
	p[1] = step_probe;
	p[1].probe_id = 2;
	p[1].fields[4].name = "commit";
	CHECK(collect_new(w, &t, NULL, NULL, &c, err, sizeof(err)) == -EINVAL && !c);
	CHECKF(strstr(err, "\"commit\" twice in state") != NULL, "%s", err);
	p[1].fields[4].name = "leader_id";
	p[1].fields[4].type = 9;
	CHECK(collect_new(w, &t, NULL, NULL, &c, err, sizeof(err)) == -EINVAL && !c);
	CHECKF(strstr(err, "unknown type") != NULL, "%s", err);
	p[1].fields[4].type = COLLECT_UINT;
	CHECKF(collect_new(w, &t, NULL, NULL, &c, err, sizeof(err)) == 0 && c, "%s", err);
	collect_free(c);
	spt_writer_abandon(w);
cleanup:
	unlink(path);
	rmdir(dir);
}

/* Synthetic records, no BPF: two CPUs out of time order, a late record filling a gap, a lost
 * one, a UINT >= 2^63 and a node read. */
static struct uprobe_event synth(uint32_t cpu, uint64_t seq, uint64_t ktime, uint64_t v0)
{
	struct uprobe_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 7;
	ev.cpu = cpu;
	ev.pid = 42;
	ev.tid = 43;
	ev.ktime_ns = ktime;
	ev.seq = seq;
	ev.size = sizeof(ev);
	ev.nreads = 2;
	ev.val[0] = v0;
	ev.val[1] = 5;
	return ev;
}

static void test_synthetic_order_and_gaps(void)
{
	static const struct collect_probe p = {
		.probe_id = 7, .kind = "synth", .nfields = 2,
		.fields = {{"x", COLLECT_ARGS, COLLECT_UINT}, {"n", COLLECT_NODE, COLLECT_INT}},
	};
	struct collect_table t = {&p, 1};
	struct collect_opts o = {.sz = sizeof(o), .window_ns = 100};
	struct spt_writer_opts wo = {.sz = sizeof(wo)};
	struct spt_header h = {.system = "synth"};
	const struct spt_trace_info *info;
	const struct spt_event *e;
	const struct spt_loss *losses;
	struct spt_writer *w = NULL;
	struct spt_reader *r = NULL;
	struct collect *c = NULL;
	char dir[] = "/tmp/test_collect.XXXXXX", path[64], err[300];
	struct spt_diag d = {""};
	uint64_t lost = 0, want_ts[] = {10, 20, 30, 40, 50, 60}, n = 0;
	struct uprobe_event ev;
	size_t nl;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s.spt", dir);
	CHECKF(spt_writer_open(path, &h, &wo, &w, &d) == 0, "%s", d.msg);
	if (!w)
		goto cleanup;
	CHECKF(collect_new(w, &t, NULL, &o, &c, err, sizeof(err)) == 0, "%s", err);
	if (!c)
		goto cleanup;
	/* cpu 0: seq 0 (t 20), 2 (t 40), 3 (t 60); seq 1 arrives late (t 30); cpu 1: seq 0 (t 10),
	 * seq 2 (t 50): seq 1 of cpu 1 is lost. */
	ev = synth(0, 0, 20, 1); CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	ev = synth(1, 0, 10, UINT64_MAX); CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	ev = synth(0, 2, 40, 3); CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	ev = synth(1, 2, 50, 4); CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	CHECK(collect_tick(c) == 0); /* gaps seen: none declared yet; t <= 50 - 100: nothing released */
	ev = synth(0, 1, 30, 2); CHECK(collect_record(c, &ev, sizeof(ev)) == 0); /* fills the gap */
	ev = synth(0, 3, 60, 5); CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	CHECK(collect_tick(c) == 0); /* cpu 1 seq 1 declared lost */
	CHECK(collect_stats(c)->lost == 1);
	ev = synth(0, 2, 40, 3); ev.size = 3;
	CHECK(collect_record(c, &ev, sizeof(ev)) == -EPROTO);
	CHECKF(collect_finish(c, &lost) == 0, "%s", collect_error(c));
	CHECK(lost == 1 && collect_stats(c)->big_uints == 1 && collect_stats(c)->late_fill == 0);
	CHECKF(spt_writer_close(w, &d) == 0, "%s", d.msg);
	w = NULL;
	CHECKF(spt_reader_open(path, &r, &d) == 0, "%s", d.msg);
	if (!r)
		goto cleanup;
	while (spt_reader_next(r, &e) == 1 && n < 6) {
		spt_val *x = spt_rec_get(e->args, "x");

		CHECKF(e->ts_ns == want_ts[n], "event %llu ts %llu", (unsigned long long)n, (unsigned long long)e->ts_ns);
		CHECK(!strcmp(e->node, "5") && e->seq == n + 1 && e->lamport == n + 1 && e->tid == 43);
		if (n == 0)
			CHECK(x && x->kind == SPT_STR && !strcmp(x->u.s, "18446744073709551615"));
		else
			CHECK(x && x->kind == SPT_INT && x->u.i == (int64_t)n);
		n++;
	}
	CHECK(n == 6);
	info = spt_reader_info(r);
	CHECK(info->lost == 1 && info->events == 6);
	nl = spt_reader_losses(r, &losses);
	CHECK(nl == 1);
	if (nl == 1)
		CHECK(!strcmp(losses[0].source, "bpf:cpu1") && losses[0].count == 1 && losses[0].first_seq == 1 &&
		      losses[0].last_seq == 1);
cleanup:
	spt_reader_close(r);
	collect_free(c);
	if (w)
		spt_writer_abandon(w);
	unlink(path);
	rmdir(dir);
}

/* A shaper that makes val[0] == 1 a send n1 -> n2, val[0] == 2 the receive of it, val[0] == 3
 * an internal record (not written), and val[0] == 9 a failure. */
static int toy_shape(void *ctx, struct collect_shape *s)
{
	unsigned *calls = ctx;
	(*calls)++;
	switch (s->ev->val[0]) {
	case 1:
	case 2: {
		static const char *const names[] = {"term"};
		spt_val *v = spt_int(s->arena, (int64_t)s->ev->val[1]);
		s->msg_buf = (struct spt_msg){ .dir = s->ev->val[0] == 1 ? SPT_MSG_SEND : SPT_MSG_RECV, .from = "n1",
					       .to = "n2", .type = "Ping", .fields = spt_rec(s->arena, names, &v, 1) };
		s->msg = &s->msg_buf;
		s->kind = s->ev->val[0] == 1 ? "SendPing" : "ReceivePing";
		s->state = NULL;
		return 0;
	}
	case 3:
		return 1;
	case 9:
		snprintf(s->err, sizeof(s->err), "toy: value 9 refused");
		return -EPROTO;
	}
	return 0;
}

static void test_shaper_messages_and_pids(void)
{
	static const struct collect_probe p = {
		.probe_id = 7, .kind = "raw", .nfields = 2,
		.fields = {{"x", COLLECT_ARGS, COLLECT_UINT}, {"y", COLLECT_SKIP, COLLECT_UINT}},
	};
	struct collect_table t = {&p, 1};
	unsigned calls = 0;
	struct collect_opts o = {.sz = sizeof(o), .window_ns = 1, .shape = toy_shape, .shape_ctx = &calls,
				 .named_pids_only = true};
	struct spt_writer_opts wo = {.sz = sizeof(wo)};
	struct spt_header h = {.system = "toy"};
	const struct spt_event *e;
	struct spt_writer *w = NULL;
	struct spt_reader *r = NULL;
	struct collect *c = NULL;
	char dir[] = "/tmp/test_collect.XXXXXX", path[64], err[300];
	struct spt_diag d = {""};
	struct uprobe_event ev;
	uint64_t seq = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s.spt", dir);
	CHECKF(spt_writer_open(path, &h, &wo, &w, &d) == 0, "%s", d.msg);
	if (!w)
		goto cleanup;
	CHECKF(collect_new(w, &t, NULL, &o, &c, err, sizeof(err)) == 0, "%s", err);
	if (!c)
		goto cleanup;
	CHECK(collect_set_node(c, 100, "n1") == 0 && collect_set_node(c, 200, "n2") == 0);
	/* n2 steps (lamport 1, 2), n1 sends twice (lamport 1, 2); n2 receives: the first send's
	 * id, clock past max(2, 1) + 1; an internal record and a foreign pid's record are not
	 * written; the second send stays unreceived. */
	struct { int pid; uint64_t kind, term; } recs[] = {
		{200, 0, 0}, {200, 0, 0}, {100, 1, 5}, {100, 1, 5}, {100, 3, 0}, {300, 1, 5}, {200, 2, 5},
	};
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		ev = synth(0, seq++, 10 * (i + 1), recs[i].kind);
		ev.pid = (uint32_t)recs[i].pid;
		ev.val[1] = recs[i].term;
		CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	}
	CHECKF(collect_finish(c, NULL) == 0, "%s", collect_error(c));
	const struct collect_stats *st = collect_stats(c);
	CHECK(calls == 6); /* the foreign record never reaches the shaper */
	CHECK(st->events == 5 && st->internal == 1 && st->foreign == 1);
	CHECK(st->sends == 2 && st->receives == 1 && st->paired == 1 && st->unpaired_receives == 0 &&
	      st->unpaired_sends == 1);
	CHECKF(spt_writer_close(w, &d) == 0, "%s", d.msg);
	w = NULL;
	CHECKF(spt_reader_open(path, &r, &d) == 0, "%s", d.msg);
	if (!r)
		goto cleanup;
	static const char *const want_kind[] = {"raw", "raw", "SendPing", "SendPing", "ReceivePing"};
	static const char *const want_node[] = {"n2", "n2", "n1", "n1", "n2"};
	static const uint64_t want_lamport[] = {1, 2, 1, 2, 3}, want_id[] = {0, 0, 1, 2, 1};
	for (size_t n = 0; spt_reader_next(r, &e) == 1; n++) {
		CHECKF(n < 5, "event %zu too many", n);
		if (n >= 5)
			break;
		CHECKF(!strcmp(e->kind, want_kind[n]) && !strcmp(e->node, want_node[n]) && e->lamport == want_lamport[n],
		       "event %zu: %s %s lamport %llu", n, e->kind, e->node, (unsigned long long)e->lamport);
		CHECKF((e->msg ? e->msg->id : 0) == want_id[n], "event %zu: message id %llu", n,
		       (unsigned long long)(e->msg ? e->msg->id : 0));
	}
	spt_reader_close(r);
	r = NULL;
	/* A shaper failure stops the collector with the shaper's message. */
	CHECKF(spt_writer_open(path, &h, &(struct spt_writer_opts){.sz = sizeof(wo), .overwrite = true}, &w, &d) == 0,
	       "%s", d.msg);
	collect_free(c);
	c = NULL;
	CHECKF(collect_new(w, &t, NULL, &o, &c, err, sizeof(err)) == 0, "%s", err);
	if (!c)
		goto cleanup;
	CHECK(collect_set_node(c, 100, "n1") == 0);
	ev = synth(0, 0, 10, 9);
	ev.pid = 100;
	CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	CHECK(collect_finish(c, NULL) == -EPROTO);
	CHECKF(strstr(collect_error(c), "toy: value 9 refused") != NULL, "%s", collect_error(c));
cleanup:
	spt_reader_close(r);
	collect_free(c);
	if (w)
		spt_writer_abandon(w);
	unlink(path);
	rmdir(dir);
}

/* A shaper that holds a node's "open" record back: collect_finish asks for it at the end
 * (COLLECT_SHAPE_END), once per node, after every record. */
struct held_ctx {
	unsigned ends; /* end calls */
	bool open[2];  /* by node: n1, n2 */
};

static int held_shape(void *ctx, struct collect_shape *s)
{
	struct held_ctx *h = ctx;
	h->open[strcmp(s->node, "n1") != 0] = s->ev->val[0] == 4;
	return s->ev->val[0] == 4 ? 1 : 0;
}

static int held_end(void *ctx, struct collect_shape *s)
{
	struct held_ctx *h = ctx;
	bool *open = &h->open[strcmp(s->node, "n1") != 0];
	h->ends++;
	if (s->probe_id != COLLECT_SHAPE_END || s->ev || !*open)
		return 1;
	*open = false;
	s->kind = "Unfinished";
	s->args = s->state = s->meta = NULL;
	return 0;
}

static void test_shaper_end(void)
{
	static const struct collect_probe p = {
		.probe_id = 7, .kind = "raw", .nfields = 1, .fields = {{"x", COLLECT_ARGS, COLLECT_UINT}},
	};
	struct collect_table t = {&p, 1};
	struct held_ctx hc = { 0 };
	struct collect_opts o = {.sz = sizeof(o), .window_ns = 1, .shape = held_shape, .shape_end = held_end,
				 .shape_ctx = &hc, .named_pids_only = true};
	struct spt_writer_opts wo = {.sz = sizeof(wo)};
	struct spt_header h = {.system = "toy"};
	const struct spt_event *e;
	struct spt_writer *w = NULL;
	struct spt_reader *r = NULL;
	struct collect *c = NULL;
	char dir[] = "/tmp/test_collect.XXXXXX", path[64], err[300];
	struct spt_diag d = {""};

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/e.spt", dir);
	CHECKF(spt_writer_open(path, &h, &wo, &w, &d) == 0, "%s", d.msg);
	if (!w)
		goto cleanup;
	CHECKF(collect_new(w, &t, NULL, &o, &c, err, sizeof(err)) == 0, "%s", err);
	if (!c)
		goto cleanup;
	CHECK(collect_set_node(c, 100, "n1") == 0 && collect_set_node(c, 200, "n2") == 0);
	/* n1: an event, then a held record; n2: a held record, then an event (nothing held). */
	struct { int pid; uint64_t kind; } recs[] = { {100, 0}, {200, 4}, {100, 4}, {200, 0} };
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		struct uprobe_event ev = synth(0, i, 10 * (i + 1), recs[i].kind);
		ev.pid = (uint32_t)recs[i].pid;
		CHECK(collect_record(c, &ev, sizeof(ev)) == 0);
	}
	CHECKF(collect_finish(c, NULL) == 0, "%s", collect_error(c));
	CHECK(hc.ends == 2); /* once per node */
	CHECK(collect_stats(c)->events == 3);
	CHECKF(spt_writer_close(w, &d) == 0, "%s", d.msg);
	w = NULL;
	CHECKF(spt_reader_open(path, &r, &d) == 0, "%s", d.msg);
	if (!r)
		goto cleanup;
	/* The held event last, on n1, after n1's other event: seq 2, n1's last time. */
	static const char *const want_kind[] = {"raw", "raw", "Unfinished"}, *const want_node[] = {"n1", "n2", "n1"};
	static const uint64_t want_seq[] = {1, 1, 2}, want_ts[] = {10, 40, 10};
	size_t n = 0;
	for (; spt_reader_next(r, &e) == 1; n++) {
		if (n >= 3)
			break;
		CHECKF(!strcmp(e->kind, want_kind[n]) && !strcmp(e->node, want_node[n]) && e->seq == want_seq[n] &&
		       e->ts_ns == want_ts[n], "event %zu: %s %s seq %llu ts %llu", n, e->kind, e->node,
		       (unsigned long long)e->seq, (unsigned long long)e->ts_ns);
	}
	CHECKF(n == 3, "%zu events", n);
cleanup:
	spt_reader_close(r);
	collect_free(c);
	if (w)
		spt_writer_abandon(w);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	struct uprobe_loader *l = NULL;
	char err[300];

	target = argc > 1 ? argv[1] : getenv("UPROBE_TARGET");
	if (!target || !*target)
		target = UPROBE_TARGET_DEFAULT;
	if (access(target, X_OK) != 0) {
		fprintf(stderr, "test_collect: target %s: %s\n", target, strerror(errno));
		check_failed++;
		TEST_MAIN_END("test_collect");
	}
	bpf_usable = uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0;
	if (!bpf_usable)
		printf("BPF not usable: %s\n", err);
	uprobe_loader_close(l);

	RUN(test_collect_step);
	RUN(test_collect_step_spooled);
	RUN(test_collect_forced_loss);
	RUN(test_bad_tables);
	RUN(test_synthetic_order_and_gaps);
	RUN(test_shaper_messages_and_pids);
	RUN(test_shaper_end);
	if (skipped)
		printf("test_collect: %lu skipped\n", skipped);
	TEST_MAIN_END("test_collect");
}
