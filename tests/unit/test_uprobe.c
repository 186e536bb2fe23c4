/* Generic uprobes end to end: attach the data-driven BPF program to tests/targets/uprobe_target
 * (path: argv[1], else $UPROBE_TARGET, else UPROBE_TARGET_DEFAULT from the build), run it, drain
 * on a 10 ms timer and check every value read, the per-CPU sequences and the loss accounting.
 * Without BPF (not root) the tests print "SKIP: ..." and count as skipped. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uprobe_loader.h" /* probes/: built with -Iprobes */
#include "check.h"

#ifndef UPROBE_TARGET_DEFAULT
#define UPROBE_TARGET_DEFAULT "build/tests/uprobe_target"
#endif

#define CALLS 10000
#define MAX_CPUS 1024

enum { P_STEP = 1, P_MANY = 2, P_RET = 3, P_CHAIN = 4, P_GATHER = 5, P_WIDE = 6 };

static const char *target;
static unsigned long skipped;
static bool bpf_usable;
/* Loader options of the value tests: run with the read windows the loader plans, then without,
 * and every value must be the same. */
static struct uprobe_loader_opts value_opts;

/* ---- specs ---------------------------------------------------------------------------------- */

static struct uprobe_read rd(uint8_t src, uint8_t kind, uint8_t size)
{
	struct uprobe_read r;

	memset(&r, 0, sizeof(r));
	r.src = src;
	r.kind = kind;
	r.size = size;
	return r;
}

static struct uprobe_read rd_mem(uint8_t src, int32_t off, uint8_t size, uint8_t flags)
{
	struct uprobe_read r = rd(src, UPROBE_READ_MEM, size);

	r.off = off;
	r.flags = flags;
	return r;
}

/* step(int node, long term, struct state *s): arguments, fields, a chased pointer, a block. */
static struct probe_spec spec_step(void)
{
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = 8;
	s.reads[0] = rd(UPROBE_SRC_RDI, UPROBE_READ_VALUE, 4);
	s.reads[0].flags = UPROBE_READ_SIGNED;                          /* node */
	s.reads[1] = rd(UPROBE_SRC_RSI, UPROBE_READ_VALUE, 8);          /* term */
	s.reads[2] = rd(UPROBE_SRC_RDX, UPROBE_READ_VALUE, 8);          /* s */
	s.reads[3] = rd_mem(UPROBE_SRC_RDX, 16, 8, 0);                  /* s->commit */
	s.reads[4] = rd_mem(UPROBE_SRC_RDX, 0, 8, 0);                   /* s->leader->id */
	s.reads[4].nderef = 1;
	s.reads[4].deref_off[0] = 24;
	s.reads[5] = rd_mem(UPROBE_SRC_RDX, 6, 2, UPROBE_READ_SIGNED);  /* s->delta */
	s.reads[6] = rd_mem(UPROBE_SRC_RDX, 4, 1, 0);                   /* s->role */
	s.reads[7] = rd(UPROBE_SRC_RDX, UPROBE_READ_BLOCK, 48);         /* s->log */
	s.reads[7].off = 32;
	return s;
}

/* A second probe on step: three dereferences, a block behind a pointer, rsp, a stack slot. */
static struct probe_spec spec_chain(void)
{
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = 6;
	s.reads[0] = rd_mem(UPROBE_SRC_RDX, 0, 8, 0); /* s->leader->next->next->id */
	s.reads[0].nderef = 3;
	s.reads[0].deref_off[0] = 24;
	s.reads[0].deref_off[1] = 24;
	s.reads[0].deref_off[2] = 24;
	s.reads[1] = rd(UPROBE_SRC_RDX, UPROBE_READ_BLOCK, 16); /* s->leader->name */
	s.reads[1].nderef = 1;
	s.reads[1].deref_off[0] = 24;
	s.reads[1].off = 8;
	s.reads[2] = rd(UPROBE_SRC_RSP, UPROBE_READ_VALUE, 8);
	s.reads[3] = rd(UPROBE_SRC_STACK, UPROBE_READ_VALUE, 8); /* return address */
	s.reads[4] = rd_mem(UPROBE_SRC_RDX, 0, 4, UPROBE_READ_SIGNED); /* s->node */
	s.reads[5] = rd(UPROBE_SRC_RDI, UPROBE_READ_VALUE, 8);          /* raw rdi */
	return s;
}

/* many(a..h): six register arguments and two stack slots; a compact record. */
static struct probe_spec spec_many(void)
{
	static const uint8_t regs[6] = {UPROBE_SRC_RDI, UPROBE_SRC_RSI, UPROBE_SRC_RDX,
					UPROBE_SRC_RCX, UPROBE_SRC_R8,  UPROBE_SRC_R9};
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = 8;
	for (int i = 0; i < 6; i++)
		s.reads[i] = rd(regs[i], UPROBE_READ_VALUE, 8);
	s.reads[6] = rd(UPROBE_SRC_STACK, UPROBE_READ_VALUE, 8);
	s.reads[6].src_off = 8;
	s.reads[7] = rd(UPROBE_SRC_STACK, UPROBE_READ_VALUE, 8);
	s.reads[7].src_off = 16;
	return s;
}

/* twice_plus_one's return value, at return. */
static struct probe_spec spec_ret(void)
{
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = 1;
	s.flags = UPROBE_SPEC_RETPROBE;
	s.reads[0] = rd(UPROBE_SRC_RAX, UPROBE_READ_VALUE, 4);
	s.reads[0].flags = UPROBE_READ_SIGNED;
	return s;
}

static struct uprobe_read rd_array(uint8_t src, uint8_t len_read, uint8_t n, int32_t off, uint8_t flags)
{
	struct uprobe_read r = rd(src, UPROBE_READ_ARRAY, n);

	r.len_read = len_read;
	r.stride = 24; /* sizeof(struct item) in the target */
	r.off = off;
	r.flags = flags;
	return r;
}

/* gather(items, count, sl): every slot used, ARRAY in 19 of them: first and last n elements, n
 * capped, the count from a register or from memory (sl->len), the array behind a pointer
 * (sl->data), a count that is not a length (rsp), one NONE slot. */
static struct probe_spec spec_gather(void)
{
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = UPROBE_MAX_READS;
	s.reads[0] = rd(UPROBE_SRC_RSI, UPROBE_READ_VALUE, 8);                 /* count */
	s.reads[1] = rd_array(UPROBE_SRC_RDI, 0, 5, 8, 0);                      /* first 5 keys */
	s.reads[2] = rd_array(UPROBE_SRC_RDI, 0, 5, 8, UPROBE_READ_TAIL);       /* last 5 keys */
	s.reads[3] = rd_mem(UPROBE_SRC_RDX, 8, 8, 0);                           /* sl->len */
	s.reads[4] = rd_array(UPROBE_SRC_RDX, 3, 8, 8, UPROBE_READ_TAIL);       /* sl->data[..] */
	s.reads[4].nderef = 1;
	s.reads[5] = rd_array(UPROBE_SRC_RDI, 3, 8, 8, 0);                      /* count sl->len */
	s.reads[6] = rd(UPROBE_SRC_RSP, UPROBE_READ_VALUE, 8);                  /* > 2^31 */
	s.reads[7] = rd_array(UPROBE_SRC_RDI, 6, 2, 8, 0);                      /* always faults */
	for (int k = 8; k < 22; k++)
		s.reads[k] = rd_array(UPROBE_SRC_RDI, 0, (uint8_t)(1 + k % 8), 8, k % 2 ? UPROBE_READ_TAIL : 0);
	s.reads[23] = rd_array(UPROBE_SRC_RDI, 0, 8, 0, 0);                     /* first 8 items[k].a */
	return s;
}

/* step again, 24 values in a compact record: node, term, s->log[0..19], s->commit, leader id. */
static struct probe_spec spec_wide(void)
{
	struct probe_spec s;

	memset(&s, 0, sizeof(s));
	s.nreads = UPROBE_MAX_READS;
	s.reads[0] = rd(UPROBE_SRC_RDI, UPROBE_READ_VALUE, 4);
	s.reads[0].flags = UPROBE_READ_SIGNED;
	s.reads[1] = rd(UPROBE_SRC_RSI, UPROBE_READ_VALUE, 8);
	for (int k = 2; k < 22; k++)
		s.reads[k] = rd_mem(UPROBE_SRC_RDX, 32 + k - 2, 1, 0);
	s.reads[22] = rd_mem(UPROBE_SRC_RDX, 16, 8, 0);
	s.reads[23] = rd_mem(UPROBE_SRC_RDX, 0, 8, 0);
	s.reads[23].nderef = 1;
	s.reads[23].deref_off[0] = 24;
	return s;
}

/* ---- running the target --------------------------------------------------------------------- */

struct seen {
	unsigned long n[8];         /* records per probe id */
	unsigned long mismatches;   /* first few are printed */
	unsigned long records;
	uint64_t ret_addr;          /* of probe P_CHAIN read 3: the same call site every time */
	int pid;
	uint64_t *seqs[MAX_CPUS];   /* sequence numbers seen per CPU */
	size_t nseq[MAX_CPUS], capseq[MAX_CPUS];
	unsigned long bad_cpu, bad_pid;
	/* gather calls seen per case (the target's comment lists them) */
	unsigned long count0, capped, edge, unmapped, no_slice;
};

static void mismatch(struct seen *sn, const char *what, long i, long long got, long long want)
{
	if (sn->mismatches++ < 10)
		fprintf(stderr, "  mismatch: %s at call %ld: got %lld, want %lld\n", what, i, got, want);
}

#define EXPECT(sn, what, i, got, want)                                                             \
	do {                                                                                       \
		if ((long long)(got) != (long long)(want))                                         \
			mismatch(sn, what, i, (long long)(got), (long long)(want));                \
	} while (0)

static void check_step(struct seen *sn, const struct uprobe_event *ev, size_t size, long i)
{
	const uint8_t *log = uprobe_event_block(ev, size, 7);
	bool null = i % 1000 == 999;

	EXPECT(sn, "step node", i, (int64_t)ev->val[0], i % 7 - 3);
	EXPECT(sn, "step term", i, ev->val[1], i * 1000003L + 7);
	EXPECT(sn, "step err", i, ev->err, null ? 0xf8 : 0);
	EXPECT(sn, "step nreads", i, ev->nreads, 8);
	if (null) {
		EXPECT(sn, "step s (NULL)", i, ev->val[2], 0);
		for (int k = 3; k < 8; k++)
			EXPECT(sn, "faulted read is 0", i, ev->val[k], 0);
	} else {
		EXPECT(sn, "step s != NULL", i, ev->val[2] != 0, 1);
		EXPECT(sn, "s->commit", i, ev->val[3], 3 * i);
		EXPECT(sn, "s->leader->id", i, ev->val[4], i ^ 0x5a5a);
		EXPECT(sn, "s->delta", i, (int64_t)ev->val[5], -(i % 30000));
		EXPECT(sn, "s->role", i, ev->val[6], i % 3);
		EXPECT(sn, "block size", i, ev->val[7], 48);
	}
	if (!log) {
		mismatch(sn, "step record has a block", i, 0, 1);
		return;
	}
	for (int k = 0; k < 48; k++)
		EXPECT(sn, "s->log[k]", i, log[k], null ? 0 : (i + k) & 0xff);
}

static void check_chain(struct seen *sn, const struct uprobe_event *ev, size_t size, long i)
{
	const uint8_t *name = uprobe_event_block(ev, size, 1);
	bool null = i % 1000 == 999;
	char want[16] = {0};

	EXPECT(sn, "chain err", i, ev->err, null ? 0x13 : 0);
	EXPECT(sn, "rsp != 0", i, ev->val[2] != 0, 1);
	EXPECT(sn, "return address != 0", i, ev->val[3] != 0, 1);
	if (!sn->ret_addr)
		sn->ret_addr = ev->val[3];
	EXPECT(sn, "return address is the call site", i, ev->val[3], sn->ret_addr);
	EXPECT(sn, "rdi low 32 bits", i, (uint32_t)ev->val[5], (uint32_t)(int32_t)(i % 7 - 3));
	if (!null) {
		EXPECT(sn, "s->leader->next->next->next->id (3 derefs)", i, ev->val[0], i ^ 0x5a5a);
		EXPECT(sn, "s->node", i, (int64_t)ev->val[4], i % 7 - 3);
		snprintf(want, sizeof(want), "node-%ld", i % 7);
	}
	if (!name) {
		mismatch(sn, "chain record has a block", i, 0, 1);
		return;
	}
	EXPECT(sn, "leader name", i, memcmp(name, want, sizeof(want)), 0);
}

/* What the target's gather() was given at call i: see tests/targets/uprobe_target.c. */
enum gather_mem { MEM_GOOD, MEM_EDGE, MEM_BAD };

static enum gather_mem gather_mem(long i)
{
	return i % 1000 == 995 ? MEM_EDGE : i % 1000 == 998 ? MEM_BAD : MEM_GOOD;
}

/* Checks ARRAY read k: up to max elements (the last ones if tail) of count (-1: the count
 * faulted) at memory m, the key fields, or the a fields (~key) if field_a. Returns 1 if the read
 * must have faulted. */
static unsigned check_array(struct seen *sn, const struct uprobe_event *ev, size_t size, long i, unsigned k,
			    long count, long max, bool tail, bool field_a, enum gather_mem m)
{
	const uint8_t *blk = uprobe_event_block(ev, size, k);
	long n = count < 0 ? 0 : count < max ? count : max, start = tail ? count - n : 0;
	unsigned fault = count < 0;
	char what[64];

	snprintf(what, sizeof(what), "gather read %u: n", k);
	EXPECT(sn, what, i, ev->val[k], n);
	if (!blk) {
		mismatch(sn, "gather record has blocks", i, 0, 1);
		return fault;
	}
	snprintf(what, sizeof(what), "gather read %u: element", k);
	for (long j = 0; j < UPROBE_MAX_ELEMS; j++) {
		long idx = start + j, key = i * 100 + idx;
		uint64_t got, want = 0;

		memcpy(&got, blk + 8 * j, sizeof(got));
		if (j < n && !fault) {
			if (m == MEM_GOOD || (m == MEM_EDGE && idx < 2))
				want = (uint64_t)(field_a ? ~key : key);
			else
				fault = 1; /* this element and all after it are 0 */
		}
		EXPECT(sn, what, i * 100 + j, got, want);
	}
	return fault;
}

static void check_gather(struct seen *sn, const struct uprobe_event *ev, size_t size, long i)
{
	long count = i % 12, sl_count = i % 1000 == 997 ? -1 : count;
	enum gather_mem m = gather_mem(i);
	uint32_t err = 1u << 7; /* read 7's count is rsp: never a length */

	EXPECT(sn, "gather record size", i, size, sizeof(struct uprobe_event_full));
	EXPECT(sn, "gather nreads", i, ev->nreads, UPROBE_MAX_READS);
	EXPECT(sn, "gather count", i, ev->val[0], count);
	EXPECT(sn, "gather sl->len", i, ev->val[3], sl_count < 0 ? 0 : count);
	EXPECT(sn, "gather rsp > 2^31", i, ev->val[6] > (1ull << 31), 1);
	EXPECT(sn, "gather NONE read", i, ev->val[22], 0);
	err |= (uint32_t)(sl_count < 0) << 3;
	err |= check_array(sn, ev, size, i, 1, count, 5, false, false, m) << 1;
	err |= check_array(sn, ev, size, i, 2, count, 5, true, false, m) << 2;
	err |= check_array(sn, ev, size, i, 4, sl_count, 8, true, false, m) << 4;
	err |= check_array(sn, ev, size, i, 5, sl_count, 8, false, false, m) << 5;
	check_array(sn, ev, size, i, 7, -1, 2, false, false, m);
	for (unsigned k = 8; k < 22; k++)
		err |= check_array(sn, ev, size, i, k, count, 1 + k % 8, k % 2, false, m) << k;
	err |= check_array(sn, ev, size, i, 23, count, 8, false, true, m) << 23;
	EXPECT(sn, "gather err", i, ev->err, err);
	sn->count0 += count == 0;
	sn->capped += count > 8;
	sn->edge += m == MEM_EDGE;
	sn->unmapped += m == MEM_BAD;
	sn->no_slice += sl_count < 0;
}

static void check_wide(struct seen *sn, const struct uprobe_event *ev, size_t size, long i)
{
	bool null = i % 1000 == 999;

	EXPECT(sn, "wide record size", i, size, sizeof(struct uprobe_event));
	EXPECT(sn, "wide nreads", i, ev->nreads, UPROBE_MAX_READS);
	EXPECT(sn, "wide err", i, ev->err, null ? 0xfffffc : 0); /* reads 2..23 behind s */
	EXPECT(sn, "wide node", i, (int64_t)ev->val[0], i % 7 - 3);
	EXPECT(sn, "wide term", i, ev->val[1], i * 1000003L + 7);
	for (int k = 2; k < 22; k++)
		EXPECT(sn, "wide s->log[k]", i, ev->val[k], null ? 0 : (i + k - 2) & 0xff);
	EXPECT(sn, "wide s->commit", i, ev->val[22], null ? 0 : 3 * i);
	EXPECT(sn, "wide s->leader->id", i, ev->val[23], null ? 0 : i ^ 0x5a5a);
}

static int on_event(void *ctx, const struct uprobe_event *ev, size_t size)
{
	struct seen *sn = ctx;
	long i;

	sn->records++;
	if (ev->cpu >= MAX_CPUS) {
		sn->bad_cpu++;
		return 0;
	}
	if (sn->nseq[ev->cpu] == sn->capseq[ev->cpu]) {
		size_t cap = sn->capseq[ev->cpu] ? 2 * sn->capseq[ev->cpu] : 1024;
		uint64_t *p = realloc(sn->seqs[ev->cpu], cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		sn->seqs[ev->cpu] = p;
		sn->capseq[ev->cpu] = cap;
	}
	sn->seqs[ev->cpu][sn->nseq[ev->cpu]++] = ev->seq;
	if (sn->pid && ((int)ev->pid != sn->pid || (int)ev->tid != sn->pid))
		sn->bad_pid++;
	if (ev->probe_id >= 8) {
		mismatch(sn, "probe id", -1, ev->probe_id, 0);
		return 0;
	}
	/* The target is one thread: a probe's records arrive in call order. */
	i = (long)sn->n[ev->probe_id]++;
	switch (ev->probe_id) {
	case P_STEP:
		EXPECT(sn, "step record size", i, size, sizeof(struct uprobe_event_full));
		check_step(sn, ev, size, i);
		break;
	case P_CHAIN:
		check_chain(sn, ev, size, i);
		break;
	case P_MANY:
		EXPECT(sn, "many record size", i, size, sizeof(struct uprobe_event));
		for (int k = 0; k < 8; k++)
			EXPECT(sn, "many argument", i, ev->val[k], (k + 1) * i);
		EXPECT(sn, "many err", i, ev->err, 0);
		break;
	case P_RET:
		EXPECT(sn, "twice_plus_one return value", i, (int64_t)ev->val[0], 2 * i + 1);
		break;
	case P_GATHER:
		check_gather(sn, ev, size, i);
		break;
	case P_WIDE:
		check_wide(sn, ev, size, i);
		break;
	default:
		mismatch(sn, "probe id", i, ev->probe_id, 0);
	}
	return 0;
}

static void seen_free(struct seen *sn)
{
	for (int c = 0; c < MAX_CPUS; c++)
		free(sn->seqs[c]);
}

/* Forks the target held on a pipe (-w), so probes can be attached for its pid before it runs. */
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Releases the held target, drains every 10 ms (unless drain_at_end) until the target has exited
 * and the ring buffer is empty. Returns the target's exit status, or -1. */
static int run_and_drain(struct uprobe_loader *l, int pid, int go_fd, bool drain_at_end, struct seen *sn)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};
	double deadline = now_s() + 120;
	int status = -1, r, drain_errors = 0;
	bool exited = false;

	if (write(go_fd, "g", 1) != 1) {
		kill(pid, SIGKILL);
	}
	close(go_fd);
	while (!exited) {
		if (!drain_at_end) {
			r = uprobe_drain(l, on_event, sn);
			if (r < 0 && drain_errors++ == 0)
				fprintf(stderr, "  drain: %s\n", uprobe_loader_error(l));
		}
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid) {
			exited = true;
			break;
		}
		if (now_s() > deadline) {
			fprintf(stderr, "  target did not finish within 120 s: killed\n");
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&tick, NULL);
	}
	/* The target has exited, so every hit has been written: drain until empty. */
	while ((r = uprobe_drain(l, on_event, sn)) > 0)
		;
	CHECKF(r == 0, "final drain: %d %s", r, uprobe_loader_error(l));
	CHECKF(drain_errors == 0, "%d timer drains failed", drain_errors);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool need_bpf(const char *test)
{
	if (!bpf_usable) {
		printf("SKIP: %s: BPF not usable here (need root or CAP_BPF+CAP_PERFMON)\n", test);
		skipped++;
	}
	return bpf_usable;
}

static int attach_sym(struct uprobe_loader *l, const char *sym, uint32_t id, const struct probe_spec *s, int pid)
{
	char err[300];
	uint64_t off;
	int r = uprobe_symbol_offset(target, sym, &off, err, sizeof(err));

	CHECKF(r == 0, "%s", err);
	if (r)
		return r;
	r = uprobe_attach(l, target, off, id, s, pid);
	CHECKF(r == 0, "%s", uprobe_loader_error(l));
	return r;
}

/* Per CPU: the sequence numbers seen plus the counted losses are exactly 0..hits-1. Returns the
 * number of gaps (= unaccounted or lost sequence numbers). */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_sequences(struct uprobe_loader *l, struct seen *sn, uint64_t *total_lost)
{
	static struct uprobe_counters c[MAX_CPUS];
	int ncpu = uprobe_counters_per_cpu(l, c, MAX_CPUS);
	uint64_t lost = 0;

	CHECKF(ncpu > 0, "%s", uprobe_loader_error(l));
	*total_lost = 0;
	for (int cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		uint64_t gaps = 0, dups = 0;
		size_t n = sn->nseq[cpu];

		if (n)
			qsort(sn->seqs[cpu], n, sizeof(uint64_t), cmp_u64);
		for (size_t k = 0; k < n; k++) {
			uint64_t prev = k ? sn->seqs[cpu][k - 1] : (uint64_t)-1;

			if (sn->seqs[cpu][k] == prev)
				dups++;
			else
				gaps += sn->seqs[cpu][k] - prev - 1;
		}
		if (n)
			gaps += c[cpu].seq - 1 - sn->seqs[cpu][n - 1];
		else
			gaps += c[cpu].seq;
		CHECKF(dups == 0, "cpu %d: %llu duplicate sequence numbers", cpu, (unsigned long long)dups);
		CHECKF(gaps == c[cpu].lost, "cpu %d: %llu sequence gaps but %llu counted losses", cpu,
		       (unsigned long long)gaps, (unsigned long long)c[cpu].lost);
		CHECKF(n + c[cpu].lost == c[cpu].seq, "cpu %d: %zu records + %llu lost != %llu hits", cpu, n,
		       (unsigned long long)c[cpu].lost, (unsigned long long)c[cpu].seq);
		CHECK(c[cpu].no_spec == 0);
		lost += c[cpu].lost;
	}
	*total_lost = lost;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_values_and_sequences(void)
{
	struct probe_spec s1 = spec_step(), s2 = spec_many(), s3 = spec_ret(), s4 = spec_chain();
	struct uprobe_loader *l = NULL;
	struct seen *sn = calloc(1, sizeof(*sn));
	uint64_t lost = 1, lost_sum = 1;
	char err[300];
	int go = -1, pid, status;

	if (!need_bpf(__func__) || !sn)
		goto cleanup;
	CHECKF(uprobe_loader_open(&l, &value_opts, err, sizeof(err)) == 0, "%s", err);
	if (!l)
		goto cleanup;
	pid = spawn_held(&go, CALLS);
	CHECK(pid > 0);
	if (pid <= 0)
		goto cleanup;
	sn->pid = pid;
	attach_sym(l, "step", P_STEP, &s1, pid);
	attach_sym(l, "step", P_CHAIN, &s4, pid);
	attach_sym(l, "many", P_MANY, &s2, pid);
	attach_sym(l, "twice_plus_one", P_RET, &s3, pid);
	status = run_and_drain(l, pid, go, false, sn);
	CHECKF(status == 0, "target exit status %d", status);
	CHECKF(sn->n[P_STEP] == CALLS, "step records %lu", sn->n[P_STEP]);
	CHECKF(sn->n[P_CHAIN] == CALLS, "chain records %lu", sn->n[P_CHAIN]);
	CHECKF(sn->n[P_MANY] == CALLS, "many records %lu", sn->n[P_MANY]);
	CHECKF(sn->n[P_RET] == CALLS, "return records %lu", sn->n[P_RET]);
	CHECKF(sn->records == 4 * CALLS, "records %lu", sn->records);
	CHECKF(sn->mismatches == 0, "%lu mismatched values", sn->mismatches);
	CHECK(sn->bad_cpu == 0);
	CHECKF(sn->bad_pid == 0, "%lu records from another pid/tid", sn->bad_pid);
	check_sequences(l, sn, &lost_sum);
	CHECK(uprobe_losses(l, &lost) == 0);
	CHECKF(lost == 0 && lost_sum == 0, "lost %llu", (unsigned long long)lost);
cleanup:
	uprobe_loader_close(l);
	if (sn)
		seen_free(sn);
	free(sn);
}

/* ARRAY reads and all 24 slots, on gather() and step() of the target. */
static void test_arrays_and_wide(void)
{
	struct probe_spec sg = spec_gather(), sw = spec_wide();
	struct uprobe_loader *l = NULL;
	struct seen *sn = calloc(1, sizeof(*sn));
	uint64_t lost = 1, lost_sum = 1;
	char err[300];
	int go = -1, pid, status;

	if (!need_bpf(__func__) || !sn)
		goto cleanup;
	CHECKF(uprobe_loader_open(&l, &value_opts, err, sizeof(err)) == 0, "%s", err);
	if (!l)
		goto cleanup;
	pid = spawn_held(&go, CALLS);
	CHECK(pid > 0);
	if (pid <= 0)
		goto cleanup;
	sn->pid = pid;
	attach_sym(l, "gather", P_GATHER, &sg, pid);
	attach_sym(l, "step", P_WIDE, &sw, pid);
	status = run_and_drain(l, pid, go, false, sn);
	CHECKF(status == 0, "target exit status %d", status);
	CHECKF(sn->n[P_GATHER] == CALLS, "gather records %lu", sn->n[P_GATHER]);
	CHECKF(sn->n[P_WIDE] == CALLS, "wide records %lu", sn->n[P_WIDE]);
	CHECKF(sn->records == 2 * CALLS, "records %lu", sn->records);
	CHECKF(sn->mismatches == 0, "%lu mismatched values", sn->mismatches);
	/* Every case ran: i % 12 == 0, i % 12 > 8, and i % 1000 == 995, 998, 997 for i < CALLS. */
	CHECKF(sn->count0 == (CALLS + 11) / 12, "count 0: %lu calls", sn->count0);
	CHECKF(sn->capped == CALLS / 12 * 3 + (CALLS % 12 > 9 ? CALLS % 12 - 9 : 0), "count > 8: %lu calls",
	       sn->capped);
	CHECKF(sn->edge == CALLS / 1000 && sn->unmapped == CALLS / 1000 && sn->no_slice == CALLS / 1000,
	       "edge %lu, unmapped %lu, no slice %lu calls", sn->edge, sn->unmapped, sn->no_slice);
	CHECKF(sn->bad_pid == 0, "%lu records from another pid/tid", sn->bad_pid);
	check_sequences(l, sn, &lost_sum);
	CHECK(uprobe_losses(l, &lost) == 0);
	CHECKF(lost == 0 && lost_sum == 0, "lost %llu", (unsigned long long)lost);
cleanup:
	uprobe_loader_close(l);
	if (sn)
		seen_free(sn);
	free(sn);
}

/* A one-page ring buffer drained only after the target exits: most records cannot be reserved.
 * Every call is either a record or a counted loss, and the per-CPU gaps are exactly the losses. */
static void test_forced_loss(void)
{
	struct uprobe_loader_opts o = {.ringbuf_bytes = (size_t)sysconf(_SC_PAGESIZE)};
	struct probe_spec s1 = spec_step(), s2 = spec_many();
	struct uprobe_loader *l = NULL;
	struct seen *sn = calloc(1, sizeof(*sn));
	uint64_t lost = 0, lost_sum = 0;
	char err[300];
	int go = -1, pid, status;

	if (!need_bpf(__func__) || !sn)
		goto cleanup;
	CHECKF(uprobe_loader_open(&l, &o, err, sizeof(err)) == 0, "%s", err);
	if (!l)
		goto cleanup;
	pid = spawn_held(&go, CALLS);
	CHECK(pid > 0);
	if (pid <= 0)
		goto cleanup;
	sn->pid = pid;
	attach_sym(l, "step", P_STEP, &s1, pid);
	attach_sym(l, "many", P_MANY, &s2, pid);
	status = run_and_drain(l, pid, go, true, sn);
	CHECKF(status == 0, "target exit status %d", status);
	CHECK(uprobe_losses(l, &lost) == 0);
	check_sequences(l, sn, &lost_sum);
	CHECK(lost == lost_sum);
	CHECKF(sn->records + lost == 2 * CALLS, "%lu records + %llu lost != %d calls", sn->records,
	       (unsigned long long)lost, 2 * CALLS);
	CHECKF(lost > 0 && sn->records > 0, "records %lu lost %llu", sn->records, (unsigned long long)lost);
	printf("  (one-page ring buffer: %lu records + %llu counted losses = %d calls)\n", sn->records,
	       (unsigned long long)lost, 2 * CALLS);
	/* The records that made it are the first calls, intact. */
	CHECKF(sn->mismatches == 0, "%lu mismatched values", sn->mismatches);
cleanup:
	uprobe_loader_close(l);
	if (sn)
		seen_free(sn);
	free(sn);
}

/* uprobe_attach refuses spec with -EINVAL and a message containing msg. */
static void reject(struct uprobe_loader *l, uint64_t off, const struct probe_spec *spec, const char *msg)
{
	int r = uprobe_attach(l, target, off, 1, spec, -1);

	CHECKF(r == -EINVAL, "got %d, want -EINVAL for \"%s\"", r, msg);
	CHECKF(strstr(uprobe_loader_error(l), msg) != NULL, "message \"%s\" lacks \"%s\"", uprobe_loader_error(l),
	       msg);
}

static void test_attach_errors(void)
{
	struct probe_spec s = spec_many(), bad;
	struct uprobe_loader_opts o = {.ringbuf_bytes = 5000};
	struct uprobe_loader *l = NULL;
	char err[300], notelf[] = "/tmp/test_uprobe_notelf.XXXXXX";
	uint64_t off = 0;
	struct stat st;
	int fd, r;

	/* ELF lookups need no BPF. */
	CHECK(uprobe_symbol_offset("/nonexistent/uprobe_target", "step", &off, err, sizeof(err)) == -ENOENT);
	CHECKF(strstr(err, "/nonexistent/uprobe_target") != NULL, "%s", err);
	CHECK(uprobe_symbol_offset(target, "no_such_function", &off, err, sizeof(err)) == -ENOENT);
	CHECKF(strstr(err, "no_such_function") != NULL, "%s", err);
	CHECK(uprobe_symbol_offset(target, "sink", &off, err, sizeof(err)) == -ENOENT); /* not a function */
	CHECK(uprobe_symbol_offset(target, "step", &off, err, sizeof(err)) == 0 && off > 0);
	CHECK(uprobe_loader_open(&l, &o, err, sizeof(err)) == -EINVAL && !l);
	CHECKF(strstr(err, "5000") != NULL, "%s", err);
	if (!need_bpf(__func__))
		return;
	CHECKF(uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0, "%s", err);
	if (!l)
		return;
	CHECK(stat(target, &st) == 0);

	r = uprobe_attach(l, "/nonexistent/uprobe_target", off, 1, &s, -1);
	CHECKF(r == -ENOENT, "%d %s", r, uprobe_loader_error(l));
	CHECKF(strstr(uprobe_loader_error(l), "/nonexistent/uprobe_target") != NULL, "%s", uprobe_loader_error(l));

	r = uprobe_attach(l, target, (uint64_t)st.st_size + 4096, 1, &s, -1);
	CHECKF(r == -EINVAL, "%d %s", r, uprobe_loader_error(l));
	CHECKF(strstr(uprobe_loader_error(l), "beyond the end") != NULL, "%s", uprobe_loader_error(l));

	r = uprobe_attach(l, target, 0, 1, &s, -1); /* the ELF header: not executable */
	CHECKF(r == -EINVAL, "%d %s", r, uprobe_loader_error(l));
	CHECKF(strstr(uprobe_loader_error(l), "not in an executable segment") != NULL, "%s", uprobe_loader_error(l));

	fd = mkstemp(notelf);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "#!/bin/sh\necho not an ELF file\n", 31) == 31);
		close(fd);
		r = uprobe_attach(l, notelf, 4, 1, &s, -1);
		CHECKF(r == -ENOEXEC, "%d %s", r, uprobe_loader_error(l));
		CHECKF(strstr(uprobe_loader_error(l), "not an ELF file") != NULL, "%s", uprobe_loader_error(l));
		unlink(notelf);
	}

	bad = s;
	bad.reads[0].nderef = 4;
	CHECK(uprobe_attach(l, target, off, 1, &bad, -1) == -EINVAL);
	CHECKF(strstr(uprobe_loader_error(l), "dereferences") != NULL, "%s", uprobe_loader_error(l));
	bad = s;
	bad.reads[1] = rd(UPROBE_SRC_RDI, UPROBE_READ_BLOCK, 65);
	CHECK(uprobe_attach(l, target, off, 1, &bad, -1) == -EINVAL);
	bad = s;
	bad.reads[2].src = 20;
	CHECK(uprobe_attach(l, target, off, 1, &bad, -1) == -EINVAL);
	bad = s;
	bad.reads[3].size = 3;
	CHECK(uprobe_attach(l, target, off, 1, &bad, -1) == -EINVAL);
	bad = s;
	bad.nreads = UPROBE_MAX_READS + 1;
	CHECK(uprobe_attach(l, target, off, 1, &bad, -1) == -EINVAL);

	/* ARRAY: the count must come from an earlier, used read; 1..8 elements; a stride. */
	bad = s;
	bad.reads[1] = rd_array(UPROBE_SRC_RDI, 1, 4, 8, 0);
	reject(l, off, &bad, "read 1: array length read 1 is not an earlier read");
	bad = s;
	bad.reads[3] = rd_array(UPROBE_SRC_RDI, 5, 4, 8, 0);
	reject(l, off, &bad, "read 3: array length read 5 is not an earlier read");
	bad = s;
	bad.reads[0] = rd_array(UPROBE_SRC_RDI, 0, 4, 8, 0);
	reject(l, off, &bad, "read 0: array length read 0 is not an earlier read");
	bad = s;
	bad.reads[2] = rd_array(UPROBE_SRC_RDI, 0, 4, 8, 0);
	bad.reads[2].stride = 0;
	reject(l, off, &bad, "read 2: array stride is 0");
	bad = s;
	bad.reads[4] = rd_array(UPROBE_SRC_RDI, 0, 9, 8, 0);
	reject(l, off, &bad, "read 4: array size 9 not in 1..8 elements");
	bad = s;
	bad.reads[4] = rd_array(UPROBE_SRC_RDI, 0, 0, 8, 0);
	reject(l, off, &bad, "read 4: array size 0 not in 1..8 elements");
	bad = s;
	bad.reads[1].kind = UPROBE_READ_NONE;
	bad.reads[6] = rd_array(UPROBE_SRC_RDI, 1, 4, 8, 0);
	reject(l, off, &bad, "read 6: array length read 1 is unused (NONE)");
	bad = s;
	bad.reads[6] = rd_array(UPROBE_SRC_RDI, 0, 4, 8, UPROBE_READ_SIGNED);
	reject(l, off, &bad, "read 6: UPROBE_READ_SIGNED is not for ARRAY reads");
	bad = s;
	bad.reads[5].flags = UPROBE_READ_TAIL;
	reject(l, off, &bad, "read 5: UPROBE_READ_TAIL is for ARRAY reads only");
	bad = s;
	bad.reads[5].flags = 0x8;
	reject(l, off, &bad, "read 5: unknown flags 0x8");
	/* UPROBE_READ_LEN: a BLOCK read's bound, an earlier read that is used. */
	bad = s;
	bad.reads[5].flags = UPROBE_READ_LEN;
	reject(l, off, &bad, "read 5: UPROBE_READ_LEN is for a BLOCK read");
	bad = s;
	bad.nreads = 3;
	bad.reads[0] = rd(UPROBE_SRC_RSI, UPROBE_READ_VALUE, 8);
	bad.reads[1] = rd(UPROBE_SRC_RDI, UPROBE_READ_BLOCK, 16);
	bad.reads[1].flags = UPROBE_READ_LEN;
	bad.reads[1].len_read = 2;
	reject(l, off, &bad, "read 1: UPROBE_READ_LEN is for a BLOCK read whose length read 2 is an earlier, used read");
	bad.reads[1].len_read = 0;
	bad.reads[0].kind = UPROBE_READ_NONE;
	reject(l, off, &bad, "read 1: UPROBE_READ_LEN is for a BLOCK read whose length read 0 is an earlier, used read");
	/* The largest valid ARRAY, in the last slot, is accepted. */
	bad = s;
	bad.nreads = UPROBE_MAX_READS;
	bad.reads[UPROBE_MAX_READS - 1] = rd_array(UPROBE_SRC_RDI, UPROBE_MAX_READS - 2, UPROBE_MAX_ELEMS, 0, 0);
	bad.reads[UPROBE_MAX_READS - 1].stride = 0xffff;
	bad.reads[UPROBE_MAX_READS - 2] = rd(UPROBE_SRC_RSI, UPROBE_READ_VALUE, 8);
	CHECKF(uprobe_attach(l, target, off, 5, &bad, -1) == 0, "%s", uprobe_loader_error(l));
	/* len_read and stride mean nothing outside ARRAY: they do not make a spec different. */
	bad = s;
	bad.reads[0].len_read = 7;
	bad.reads[0].stride = 24;
	CHECKF(uprobe_attach(l, target, off, 6, &s, -1) == 0, "%s", uprobe_loader_error(l));
	CHECKF(uprobe_attach(l, target, off, 6, &bad, -1) == 0, "%s", uprobe_loader_error(l));

	/* A probe id keeps its spec: the same spec may be attached again, a different one not. */
	CHECKF(uprobe_attach(l, target, off, 1, &s, -1) == 0, "%s", uprobe_loader_error(l));
	CHECKF(uprobe_attach(l, target, off, 1, &s, -1) == 0, "%s", uprobe_loader_error(l));
	bad = s;
	bad.nreads = 2;
	CHECK(uprobe_attach(l, target, off, 1, &bad, -1) == -EEXIST);
	uprobe_loader_close(l);
	l = NULL;

	/* Without privileges, loading says so. */
	if (geteuid() == 0) {
		int p[2], status = 0;
		pid_t pid;

		CHECK(pipe(p) == 0);
		pid = fork();
		if (pid == 0) {
			struct uprobe_loader *ul = NULL;
			char e[300];
			int ret;

			close(p[0]);
			fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, 2); /* libbpf's own complaint is expected here */
			if (setgid(65534) || setuid(65534))
				_exit(2);
			ret = uprobe_loader_open(&ul, NULL, e, sizeof(e));
			uprobe_loader_close(ul);
			if (write(p[1], e, strlen(e) + 1) < 0)
				_exit(3);
			_exit(ret == -EPERM ? 0 : 1);
		}
		close(p[1]);
		memset(err, 0, sizeof(err));
		r = (int)read(p[0], err, sizeof(err) - 1);
		close(p[0]);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unprivileged load: status %d: %s", status, err);
		CHECKF(r > 0 && strstr(err, "not permitted") != NULL, "%s", err);
	}
}

static void test_values_without_windows(void) { test_values_and_sequences(); }
static void test_arrays_without_windows(void) { test_arrays_and_wide(); }

int main(int argc, char **argv)
{
	struct uprobe_loader *l = NULL;
	char err[300];

	target = argc > 1 ? argv[1] : getenv("UPROBE_TARGET");
	if (!target || !*target)
		target = UPROBE_TARGET_DEFAULT;
	if (access(target, X_OK) != 0) {
		fprintf(stderr, "test_uprobe: target %s: %s\n", target, strerror(errno));
		check_failed++;
		TEST_MAIN_END("test_uprobe");
	}
	bpf_usable = uprobe_loader_open(&l, NULL, err, sizeof(err)) == 0;
	if (!bpf_usable)
		printf("BPF not usable: %s\n", err);
	uprobe_loader_close(l);

	RUN(test_values_and_sequences);
	RUN(test_arrays_and_wide);
	value_opts.no_read_windows = true;
	RUN(test_values_without_windows);
	RUN(test_arrays_without_windows);
	RUN(test_forced_loss);
	RUN(test_attach_errors);
	if (skipped)
		printf("test_uprobe: %lu skipped\n", skipped);
	TEST_MAIN_END("test_uprobe");
}
