/* The emit API end to end (as root): the JSON writer, spt_emit's errors and counters, and both
 * transports with real collectors: the USDT probe through probes/bpf/usdt.bpf.c (libbpf USDT
 * attach, ring buffer drained on a 10 ms timer) and the LTTng tracepoint through a real LTTng
 * session read back with libbabeltrace2 (collector/lttng_reader.c). The traced program is
 * tests/targets/emit_target (path: argv[1], else $EMIT_TARGET, else EMIT_TARGET_DEFAULT from the
 * build; beside it emit_target_so, the same program using the emit library from
 * libspectap_emit_test.so); this binary also links the emit library (sanitized) and emits
 * in-process.
 *
 * Checked exactly: every record arrives byte for byte, in order per thread, with the right pid
 * and one tid per thread; counts are exact and the loss counters 0; with a one-page ring buffer
 * (and with a discarding LTTng channel) what arrived is an in-order subsequence of what was
 * emitted and received + counted lost = emitted. Without root the collector tests print
 * "SKIP: ..." and count as skipped. Prints the cost of spt_emit per transport. */
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

#include <lttng/lttng.h>

#include "check.h"
#include "lttng_reader.h" /* collector/ */
#include "spectap/arena.h"
#include "spectap/emit.h"
#include "spectap/json.h"
#include "spectap/value.h"
#include "usdt_loader.h" /* probes/ */

#ifndef EMIT_TARGET_DEFAULT
#define EMIT_TARGET_DEFAULT "build/tests/emit_target"
#endif

#define MAXT 8 /* threads of the target at most */
/* Ring buffer of the tests that want no loss: what a run emits within a few drain periods of a
 * loaded machine fits (the default 8 MiB holds about 10 ms of the target at full speed). */
#define RING_EXACT (64u << 20)

extern char **environ;

static const char *target;
static const char *target_path; /* what spawn runs: target, or a variant of it */
static bool root;
static unsigned long skipped;
static struct spt_arena A;

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool skip(const char *what)
{
	if (root)
		return false;
	printf("  SKIP: %s needs root (BPF, LTTng session daemon)\n", what);
	skipped++;
	return true;
}

/* ---- the JSON writer ------------------------------------------------------------------------ */

static spt_val *parse(const char *text, size_t len)
{
	spt_val *v = NULL;
	struct spt_json_error err = {0};
	int rc = spt_json_parse(&A, text, len, SPT_JSON_TAGGED, &v, &err);

	CHECKF(rc == 0, "parse %.*s: %s at %zu", (int)len, text, err.msg, err.offset);
	return rc == 0 ? v : NULL;
}

static void test_writer(void)
{
	static const uint16_t u16[] = {'a', 0xe9, 0x20ac, 0xd83d, 0xde00, '\n', 0};
	static const uint16_t lone_hi[] = {'x', 0xd800, 'y'}, lone_lo[] = {0xdc00};
	char buf[512];
	struct spt_jw w;
	size_t len = 99;
	spt_val *v, *f;

	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_begin(&w, NULL);
	spt_jw_str(&w, "node", "n\"1\\");
	spt_jw_str(&w, "kind", "k");
	spt_jw_begin(&w, "state");
	spt_jw_int(&w, "min", INT64_MIN);
	spt_jw_int(&w, "max", INT64_MAX);
	spt_jw_bool(&w, "t", true);
	spt_jw_null(&w, "z");
	spt_jw_strn(&w, "ctl", "\x01\x1f\t\r\n\b\f/", 8);
	spt_jw_str16(&w, "u16", u16, 7);
	spt_jw_begin_array(&w, "a");
	spt_jw_int(&w, NULL, 1);
	spt_jw_begin(&w, NULL);
	spt_jw_end(&w);
	spt_jw_begin_array(&w, NULL);
	spt_jw_end_array(&w);
	spt_jw_end_array(&w);
	spt_jw_str(&w, "caf\xc3\xa9", "\xf0\x9f\x98\x80");
	spt_jw_end(&w);
	spt_jw_end(&w);
	CHECK(spt_jw_finish(&w, &len) == 0);
	CHECK(len == strlen(buf));
	CHECKF(!strcmp(buf, "{\"node\":\"n\\\"1\\\\\",\"kind\":\"k\",\"state\":{\"min\":-9223372036854775808,"
			    "\"max\":9223372036854775807,\"t\":true,\"z\":null,"
			    "\"ctl\":\"\\u0001\\u001f\\t\\r\\n\\b\\f/\",\"u16\":\"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\n\\u0000\","
			    "\"a\":[1,{},[]],\"caf\xc3\xa9\":\"\xf0\x9f\x98\x80\"}}"),
	       "got %s", buf);
	v = parse(buf, len);
	if (v) {
		CHECK((f = spt_rec_get(v, "node")) && f->kind == SPT_STR && !strcmp(f->u.s, "n\"1\\"));
		f = spt_rec_get(v, "state");
		CHECK(f && spt_rec_get(f, "ctl") && spt_rec_get(f, "ctl")->n == 8 &&
		      !memcmp(spt_rec_get(f, "ctl")->u.s, "\x01\x1f\t\r\n\b\f/", 8));
		CHECK(f && spt_rec_get(f, "min") && spt_rec_get(f, "min")->u.i == INT64_MIN);
		CHECK(f && spt_rec_get(f, "u16") && spt_rec_get(f, "u16")->n == 12);
	}

	/* Exactly full: the record and its NUL fit in cap; one byte less is -ENOBUFS, not cut. */
	spt_jw_init(&w, buf, 9);
	spt_jw_str(&w, NULL, "abcdef");
	CHECK(spt_jw_finish(&w, &len) == 0 && len == 8 && !strcmp(buf, "\"abcdef\""));
	spt_jw_init(&w, buf, 8);
	spt_jw_str(&w, NULL, "abcdef");
	CHECK(spt_jw_finish(&w, &len) == -ENOBUFS && len == 0 && buf[0] == 0);

	/* Misuse and bad text: the first error sticks. */
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_begin(&w, NULL);
	spt_jw_int(&w, NULL, 1); /* no key inside an object */
	spt_jw_end(&w);
	CHECK(spt_jw_finish(&w, &len) == -EINVAL);
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_begin_array(&w, NULL);
	spt_jw_int(&w, "k", 1); /* a key inside an array */
	CHECK(spt_jw_finish(&w, &len) == -EINVAL);
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_begin(&w, NULL);
	spt_jw_end_array(&w); /* unbalanced */
	CHECK(spt_jw_finish(&w, &len) == -EINVAL);
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_begin(&w, NULL);
	CHECK(spt_jw_finish(&w, &len) == -EINVAL); /* still open */
	spt_jw_init(&w, buf, sizeof(buf));
	CHECK(spt_jw_finish(&w, &len) == -EINVAL); /* nothing */
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_int(&w, NULL, 1);
	spt_jw_int(&w, NULL, 2); /* two outermost values */
	CHECK(spt_jw_finish(&w, &len) == -EINVAL);
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_begin(&w, NULL);
	spt_jw_str(&w, "k", NULL);
	spt_jw_end(&w);
	CHECK(spt_jw_finish(&w, &len) == -EINVAL);
	static const char *const bad_utf8[] = {"\xc0\x80" /* JNI's NUL */, "\xed\xa0\x80" /* surrogate */,
					       "\xe0\x80\x80" /* overlong */, "\xf4\x90\x80\x80" /* > 10FFFF */,
					       "\x80", "a\xc3", "\xff"};
	for (size_t i = 0; i < sizeof(bad_utf8) / sizeof(bad_utf8[0]); i++) {
		spt_jw_init(&w, buf, sizeof(buf));
		spt_jw_str(&w, NULL, bad_utf8[i]);
		CHECKF(spt_jw_finish(&w, &len) == -EILSEQ, "bad UTF-8 #%zu accepted", i);
		spt_jw_init(&w, buf, sizeof(buf));
		spt_jw_begin(&w, NULL);
		spt_jw_int(&w, bad_utf8[i], 1); /* as a key */
		spt_jw_end(&w);
		CHECKF(spt_jw_finish(&w, &len) == -EILSEQ, "bad UTF-8 key #%zu accepted", i);
	}
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_str16(&w, NULL, lone_hi, 3);
	CHECK(spt_jw_finish(&w, &len) == -EILSEQ);
	spt_jw_init(&w, buf, sizeof(buf));
	spt_jw_str16(&w, NULL, lone_lo, 1);
	CHECK(spt_jw_finish(&w, &len) == -EILSEQ);
	spt_jw_init(&w, buf, sizeof(buf));
	for (int d = 0; d < SPT_JW_MAX_DEPTH; d++)
		spt_jw_begin_array(&w, NULL);
	for (int d = 0; d < SPT_JW_MAX_DEPTH; d++)
		spt_jw_end_array(&w);
	CHECK(spt_jw_finish(&w, &len) == 0 && len == 2 * SPT_JW_MAX_DEPTH);
	spt_jw_init(&w, buf, sizeof(buf));
	for (int d = 0; d <= SPT_JW_MAX_DEPTH; d++)
		spt_jw_begin_array(&w, NULL);
	CHECK(spt_jw_finish(&w, &len) == -E2BIG);
	spt_jw_init(&w, NULL, 0);
	spt_jw_int(&w, NULL, 1);
	CHECK(spt_jw_finish(&w, &len) == -ENOBUFS);
	spt_arena_reset(&A);
}

/* spt_emit in this process, nobody listening: errors are counted, nothing else happens. */
static void test_emit_errors(void)
{
	char big[SPT_EMIT_MAX + 1];
	struct spt_emit_stats s0, s1;

	memset(big, 'x', sizeof(big));
	spt_emit_stats(&s0);
	CHECK(spt_emit_listeners() == 0 && !spt_emit_enabled());
	CHECK(spt_emit("{}", 2) == 0);
	CHECK(spt_emit(big, SPT_EMIT_MAX) == 0);
	CHECK(spt_emit(big, SPT_EMIT_MAX + 1) == -EMSGSIZE);
	CHECK(spt_emit(big, SIZE_MAX) == -EMSGSIZE);
	CHECK(spt_emit(NULL, 3) == -EINVAL);
	CHECK(spt_emit(big, 0) == -EINVAL);
	CHECK(spt_emit("a\0b", 3) == 0); /* NUL bytes are refused only when a transport listens */
	spt_emit_stats(&s1);
	CHECK(s1.too_large - s0.too_large == 2);
	CHECK(s1.invalid - s0.invalid == 2);
}

/* ---- running the target --------------------------------------------------------------------- */

struct proc {
	pid_t pid;
	int in, out;
	int status;
	char output[512];
};

/* Starts the target with args (NULL-terminated, without argv[0]); stdin and stdout are pipes. */
static int spawn(struct proc *p, const char *const *args, bool allow_blocking)
{
	const char *argv[24];
	char **envp;
	size_t n = 0, ne = 0;
	int pin[2], pout[2];

	memset(p, 0, sizeof(*p));
	argv[n++] = target_path;
	for (; args[n - 1] && n < 23; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	while (environ[ne])
		ne++;
	envp = calloc(ne + 2, sizeof(*envp));
	if (!envp || pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC)) {
		free(envp);
		return -errno;
	}
	ne = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LTTNG_UST_ALLOW_BLOCKING=", 25) != 0)
			envp[ne++] = *e;
	if (allow_blocking)
		envp[ne++] = "LTTNG_UST_ALLOW_BLOCKING=1";
	envp[ne] = NULL;
	p->pid = fork();
	if (p->pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		execve(target_path, (char *const *)argv, envp);
		_exit(127);
	}
	free(envp);
	close(pin[0]);
	close(pout[1]);
	p->in = pin[1];
	p->out = pout[0];
	if (p->pid < 0) {
		close(p->in);
		close(p->out);
		return -errno;
	}
	return 0;
}

/* Lets a target started with -g go. */
static void go(struct proc *p)
{
	CHECK(write(p->in, "g", 1) == 1);
}

/* Non-blocking: true once the target exited (status and output collected). */
static bool exited(struct proc *p)
{
	ssize_t n;
	size_t len = 0;

	if (waitpid(p->pid, &p->status, WNOHANG) != p->pid)
		return false;
	close(p->in);
	while (len + 1 < sizeof(p->output) && (n = read(p->out, p->output + len, sizeof(p->output) - 1 - len)) > 0)
		len += (size_t)n;
	p->output[len] = 0;
	close(p->out);
	return true;
}

/* Waits for the target to exit (at most 120 s, then kills it), draining the USDT ring buffer
 * every 10 ms meanwhile if l is not NULL. Returns the target's exit status (-1: killed). */
typedef int (*drain_fn)(struct usdt_loader *l, void *ctx);
static int finish(struct proc *p, struct usdt_loader *l, drain_fn drain, void *ctx, unsigned drain_ms)
{
	double t0 = now_s();

	for (;;) {
		if (l)
			CHECK(drain(l, ctx) >= 0);
		if (exited(p))
			break;
		if (now_s() - t0 > 120) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &p->status, 0);
			fprintf(stderr, "emit target did not finish within 120 s: killed\n");
			return -1;
		}
		sleep_ms(drain_ms); /* the drain timer */
	}
	if (l)
		CHECK(drain(l, ctx) >= 0);
	if (!WIFEXITED(p->status))
		return -1;
	if (WEXITSTATUS(p->status))
		fprintf(stderr, "emit target exited with status %d\n", WEXITSTATUS(p->status));
	return WEXITSTATUS(p->status);
}

struct report {
	unsigned listeners;
	long emitted, refused;
	unsigned long long too_large, invalid;
};

/* Records the target refuses (above the bound) among n per thread: sizes cycle through 16 per
 * thread, from index t, and sizes 13 and 14 (8193 and 9000 bytes) are above it. */
static long refused_of(long n, int threads)
{
	long r = 0;

	for (int t = 0; t < threads; t++)
		for (long i = 0; i < n; i++)
			r += (i + t) % 16 == 13 || (i + t) % 16 == 14;
	return r;
}

static bool parse_report(const char *s, struct report *r)
{
	return sscanf(s, "listeners=%u emitted=%ld refused=%ld too_large=%llu invalid=%llu", &r->listeners,
		      &r->emitted, &r->refused, &r->too_large, &r->invalid) == 5;
}

/* ---- records -------------------------------------------------------------------------------- */

struct rec {
	uint32_t pid, tid, cpu, flags;
	uint64_t seq, ts;
	char *data;
	size_t len;
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static void recs_add(struct recs *rs, const struct rec *r, const void *data, size_t len)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 1024;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
		if (!rs->v)
			abort();
	}
	rs->v[rs->n] = *r;
	rs->v[rs->n].data = malloc(len + 1);
	if (!rs->v[rs->n].data)
		abort();
	memcpy(rs->v[rs->n].data, data, len);
	rs->v[rs->n].data[len] = 0;
	rs->v[rs->n].len = len;
	rs->n++;
}

static void recs_free(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].data);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static int on_usdt(void *ctx, const struct usdt_record *r, const uint8_t *data, size_t len)
{
	struct rec x = {.pid = r->pid, .tid = r->tid, .cpu = r->cpu, .flags = r->flags, .seq = r->seq,
			.ts = r->ktime_ns};

	recs_add(ctx, &x, data, len);
	return 0;
}

static int drain_usdt(struct usdt_loader *l, void *ctx)
{
	int n = usdt_drain(l, on_usdt, ctx);

	if (n < 0)
		fprintf(stderr, "%s\n", usdt_loader_error(l));
	return n;
}

static int on_lttng(void *ctx, const struct lttng_reader_record *r)
{
	struct rec x = {.pid = (uint32_t)r->pid, .tid = (uint32_t)r->tid, .cpu = (uint32_t)r->cpu, .ts = r->ts_ns};

	recs_add(ctx, &x, r->data, r->len);
	return 0;
}

/* What the target wrote with -o: per thread, the records spt_emit accepted, in order. */
struct expect {
	struct recs t[MAXT];
	size_t total;
	char path[64];
};

static void expect_free(struct expect *e)
{
	for (int t = 0; t < MAXT; t++)
		recs_free(&e->t[t]);
	unlink(e->path);
}

static bool expect_load(struct expect *e)
{
	FILE *f = fopen(e->path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		CHECKF(0, "%s: %s", e->path, strerror(errno));
		return false;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		char *tab = memchr(line, '\t', (size_t)n);
		long t = strtol(line, NULL, 10);
		struct rec x = {0};

		if (!tab || line[n - 1] != '\n' || t < 0 || t >= MAXT) {
			CHECKF(0, "%s: bad line", e->path);
			break;
		}
		recs_add(&e->t[t], &x, tab + 1, (size_t)(line + n - 1 - (tab + 1)));
		e->total++;
	}
	free(line);
	fclose(f);
	return e->total > 0;
}

/* The thread (node) a record belongs to: its "node" field, through lib's JSON reader (what the
 * collector will use); -1 if it does not parse as an event record. */
static int node_of(const struct rec *r)
{
	spt_val *v = NULL, *node, *kind;
	struct spt_json_error err = {0};
	int t = -1;

	if (spt_json_parse(&A, r->data, r->len, SPT_JSON_TAGGED, &v, &err) == 0 && v->kind == SPT_REC &&
	    (node = spt_rec_get(v, "node")) && node->kind == SPT_STR && (kind = spt_rec_get(v, "kind")) &&
	    kind->kind == SPT_STR && !strcmp(kind->u.s, "emit.test"))
		t = atoi(node->u.s);
	spt_arena_reset(&A);
	return t >= 0 && t < MAXT ? t : -1;
}

/*
 * Checks got against the expected records: every record is one of the target's, of pid, one tid
 * per thread; per thread they come in emit order. all: every expected record arrived exactly
 * once (else got is an in-order subsequence). Returns the records matched.
 */
/* Records of pid in got. */
static size_t recs_of(const struct recs *got, pid_t pid)
{
	size_t n = 0;
	for (size_t i = 0; i < got->n; i++)
		n += got->v[i].pid == (uint32_t)pid;
	return n;
}

static size_t check_records(const char *what, const struct recs *got, const struct expect *e, pid_t pid, bool all)
{
	size_t next[MAXT] = {0}, matched = 0, foreign = 0;
	uint32_t tid[MAXT] = {0};
	unsigned long bad = 0;

	for (size_t i = 0; i < got->n; i++) {
		const struct rec *r = &got->v[i];
		/* Another program emitting through the library while an LTTng session (which every
		 * process of the user registers with) or a USDT probe listens: not the target's. A
		 * target record with a wrong pid still shows as a record missing below. */
		if (r->pid != (uint32_t)pid) {
			foreign++;
			continue;
		}
		int t = node_of(r);
		bool ok = t >= 0 && (!tid[t] || tid[t] == r->tid);

		if (ok) {
			const struct recs *x = &e->t[t];

			tid[t] = r->tid;
			if (all) {
				ok = next[t] < x->n && x->v[next[t]].len == r->len &&
				     !memcmp(x->v[next[t]].data, r->data, r->len);
				next[t]++;
			} else {
				while (next[t] < x->n && (x->v[next[t]].len != r->len ||
							  memcmp(x->v[next[t]].data, r->data, r->len)))
					next[t]++;
				ok = next[t] < x->n;
				next[t]++;
			}
		}
		if (ok) {
			matched++;
		} else if (++bad <= 3) {
			fprintf(stderr, "%s: record %zu (pid %u tid %u, %zu bytes) is not the expected one: %.120s\n", what,
				i, r->pid, r->tid, r->len, r->data);
		}
	}
	CHECKF(bad == 0, "%s: %lu of %zu records wrong", what, bad, got->n);
	for (int t = 0; t < MAXT; t++) {
		for (int u = 0; u < t; u++)
			CHECKF(!tid[t] || tid[t] != tid[u], "%s: threads %d and %d share tid %u", what, u, t, tid[t]);
		if (all)
			CHECKF(next[t] == e->t[t].n, "%s: thread %d: %zu records arrived, %zu emitted", what, t, next[t],
			       e->t[t].n);
	}
	if (all)
		CHECKF(got->n - foreign == e->total, "%s: %zu records arrived, %zu emitted", what, got->n - foreign,
		       e->total);
	if (foreign)
		printf("  %s: %zu records of other processes ignored\n", what, foreign);
	return matched;
}

static bool make_expect(struct expect *e)
{
	int fd;

	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "/tmp/spectap-emit-XXXXXX");
	fd = mkstemp(e->path);
	if (fd < 0) {
		CHECKF(0, "mkstemp: %s", strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

/* ---- nothing attached ----------------------------------------------------------------------- */

static void test_nothing_attached(void)
{
	const char *args[] = {"-n", "400", "-t", "2", "-w", "none", NULL};
	const char *bench[] = {"-b", "2000000", "-w", "none", NULL};
	struct proc p;
	struct report rep;
	unsigned l;
	double ns = -1, median = -1;

	CHECK(spawn(&p, args, false) == 0);
	CHECK(finish(&p, NULL, NULL, NULL, 1) == 0);
	CHECKF(parse_report(p.output, &rep), "output: %s", p.output);
	CHECKF(rep.listeners == 0 && rep.refused == refused_of(400, 2) && rep.refused == 100 && rep.emitted == 700 &&
		       rep.too_large == 100 && rep.invalid == 0,
	       "output: %s", p.output);

	CHECK(spawn(&p, bench, false) == 0);
	CHECK(finish(&p, NULL, NULL, NULL, 1) == 0);
	CHECKF(sscanf(p.output, "listeners=%u calls=%*d ns_per_call=%lf median_ns=%lf", &l, &ns, &median) == 3 &&
		       l == 0,
	       "output: %s", p.output);
	/* A length check and two loads: a few ns; 50 leaves room for a loaded machine. */
	CHECKF(median >= 0 && median < 50, "spt_emit costs %.1f ns with nothing attached", median);
	printf("  cost: spt_emit of 300 bytes with nothing attached: %.1f ns (median %.1f)\n", ns, median);
}

/* ---- USDT ----------------------------------------------------------------------------------- */

static struct usdt_loader *open_usdt(size_t ringbuf_bytes)
{
	struct usdt_loader_opts o = {.ringbuf_bytes = ringbuf_bytes};
	struct usdt_loader *l = NULL;
	char err[512];
	int rc = usdt_loader_open(&l, &o, err, sizeof(err));

	CHECKF(rc == 0, "usdt_loader_open: %s", err);
	return l;
}

static void check_usdt_counters(const char *what, struct usdt_loader *l, size_t received, uint64_t lost)
{
	struct usdt_counters c;

	CHECK(usdt_counters_sum(l, &c) == 0);
	CHECKF(c.lost == lost && c.seq == received + lost && c.too_large == 0 && c.faults == 0,
	       "%s: counters seq %llu lost %llu too_large %llu faults %llu, received %zu", what,
	       (unsigned long long)c.seq, (unsigned long long)c.lost, (unsigned long long)c.too_large,
	       (unsigned long long)c.faults, received);
}

/* In this (sanitized) process: attach to our own binary, emit, receive. */
static void test_usdt_self(void)
{
	struct usdt_loader *l;
	struct recs got = {0};
	char exe[4096], rec[64];
	ssize_t n;
	int len;

	if (skip("test_usdt_self"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	if (n <= 0 || !(l = open_usdt(0)))
		return;
	exe[n] = 0;
	CHECKF(usdt_attach(l, exe, getpid()) == 0, "%s", usdt_loader_error(l));
	CHECK(spt_emit_listeners() == SPT_EMIT_USDT && spt_emit_enabled());
	for (int i = 0; i < 100; i++) {
		len = snprintf(rec, sizeof(rec), "{\"node\":\"self\",\"kind\":\"k\",\"state\":{\"i\":%d}}", i);
		CHECK(spt_emit(rec, (size_t)len) == 0);
	}
	CHECK(spt_emit("a\0b", 3) == -EINVAL); /* a NUL byte, now that a transport listens */
	CHECK(usdt_drain(l, on_usdt, &got) == 100);
	CHECK(got.n == 100);
	for (size_t i = 0; i < got.n; i++) {
		len = snprintf(rec, sizeof(rec), "{\"node\":\"self\",\"kind\":\"k\",\"state\":{\"i\":%zu}}", i);
		CHECKF(got.v[i].len == (size_t)len && !memcmp(got.v[i].data, rec, (size_t)len) &&
			       got.v[i].pid == (uint32_t)getpid() && got.v[i].tid == (uint32_t)getpid() && !got.v[i].flags,
		       "record %zu: %s", i, got.v[i].data);
	}
	check_usdt_counters("self", l, got.n, 0);
	usdt_loader_close(l);
	CHECK(spt_emit_listeners() == 0); /* detaching cleared the semaphore */
	recs_free(&got);
}

/* The target, 4 threads, every size: everything arrives exactly, nothing lost. */
static void test_usdt_exact(void)
{
	const char *args[] = {"-n", "600", "-t", "4", "-w", "usdt", "-g", "-o", NULL, NULL};
	struct usdt_loader *l;
	struct recs got = {0};
	struct expect e;
	struct report rep;
	struct proc p;

	if (skip("test_usdt_exact") || !(l = open_usdt(RING_EXACT)))
		return;
	if (!make_expect(&e))
		goto out;
	args[8] = e.path;
	CHECK(spawn(&p, args, false) == 0);
	CHECKF(usdt_attach(l, target, p.pid) == 0, "%s", usdt_loader_error(l));
	go(&p);
	CHECK(finish(&p, l, drain_usdt, &got, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.listeners == SPT_EMIT_USDT && rep.refused == refused_of(600, 4) &&
		       rep.emitted == 2400 - rep.refused && rep.too_large == (unsigned long long)rep.refused &&
		       rep.invalid == 0,
	       "output: %s", p.output);
	if (expect_load(&e)) {
		CHECK(e.total == (size_t)rep.emitted);
		check_records("usdt", &got, &e, p.pid, true);
	}
	check_usdt_counters("usdt", l, got.n, 0);
	for (size_t i = 0; i < got.n; i++)
		CHECK(got.v[i].flags == 0);
	expect_free(&e);
out:
	recs_free(&got);
	usdt_loader_close(l);
}

/* The emit library in a shared object (as in a JVMTI agent), attached by the object's path for
 * every process before the program starts: the semaphore is set when the object is mapped. */
static void test_usdt_shared(void)
{
	const char *args[] = {"-n", "300", "-t", "2", "-w", "usdt", "-o", NULL, NULL};
	char so[4096], exe[4096];
	const char *slash = strrchr(target, '/');
	int dirlen = slash ? (int)(slash - target) : 1;
	struct usdt_loader *l;
	struct recs got = {0};
	struct expect e;
	struct report rep;
	struct proc p;

	if (skip("test_usdt_shared") || !(l = open_usdt(RING_EXACT)))
		return;
	snprintf(so, sizeof(so), "%.*s/libspectap_emit_test.so", dirlen, slash ? target : ".");
	snprintf(exe, sizeof(exe), "%s_so", target);
	if (!make_expect(&e))
		goto out;
	args[7] = e.path;
	CHECKF(usdt_attach(l, so, -1) == 0, "%s", usdt_loader_error(l));
	target_path = exe;
	CHECK(spawn(&p, args, false) == 0);
	target_path = target;
	CHECK(finish(&p, l, drain_usdt, &got, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.listeners == SPT_EMIT_USDT &&
		       rep.emitted == 600 - refused_of(300, 2),
	       "output: %s", p.output);
	if (expect_load(&e))
		check_records("usdt shared", &got, &e, p.pid, true);
	check_usdt_counters("usdt shared", l, got.n, 0);
	expect_free(&e);
out:
	recs_free(&got);
	usdt_loader_close(l);
}

/* The probe fired by hand with a record above the bound and one at an unreadable address: both
 * arrive flagged and are counted. */
static void test_usdt_flags(void)
{
	const char *args[] = {"-x", "-w", "usdt", "-g", NULL};
	struct usdt_loader *l;
	struct usdt_counters c;
	struct recs got = {0};
	struct proc p;

	if (skip("test_usdt_flags") || !(l = open_usdt(0)))
		return;
	CHECK(spawn(&p, args, false) == 0);
	CHECKF(usdt_attach(l, target, p.pid) == 0, "%s", usdt_loader_error(l));
	go(&p);
	CHECK(finish(&p, l, drain_usdt, &got, 10) == 0);
	CHECK(got.n == 2);
	if (got.n == 2) {
		bool zero = true;

		CHECK(got.v[0].flags == USDT_REC_TOO_LARGE && got.v[0].len == 0);
		CHECK(got.v[1].flags == USDT_REC_FAULT && got.v[1].len == 100);
		for (size_t i = 0; i < got.v[1].len; i++)
			zero &= got.v[1].data[i] == 0;
		CHECK(zero);
	}
	CHECK(usdt_counters_sum(l, &c) == 0);
	CHECK(c.seq == 2 && c.lost == 0 && c.too_large == 1 && c.faults == 1);
	recs_free(&got);
	usdt_loader_close(l);
}

/* A one-page ring buffer drained every 10 ms: most records cannot be reserved (those above 4 KiB
 * never). What arrives is exact and in order; received + lost = emitted, per CPU too, and each
 * CPU's missing sequence numbers are exactly its losses. */
static void test_usdt_one_page(void)
{
	const char *args[] = {"-n", "1500", "-t", "4", "-w", "usdt", "-g", "-o", NULL, NULL};
	struct usdt_loader *l;
	struct usdt_counters per[1024], sum;
	struct recs got = {0};
	struct expect e;
	struct report rep;
	struct proc p;
	int ncpu;

	if (skip("test_usdt_one_page") || !(l = open_usdt((size_t)sysconf(_SC_PAGESIZE))))
		return;
	if (!make_expect(&e))
		goto out;
	args[8] = e.path;
	CHECK(spawn(&p, args, false) == 0);
	CHECKF(usdt_attach(l, target, p.pid) == 0, "%s", usdt_loader_error(l));
	go(&p);
	CHECK(finish(&p, l, drain_usdt, &got, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.emitted == 6000 - refused_of(1500, 4), "output: %s", p.output);
	CHECK(usdt_counters_sum(l, &sum) == 0);
	CHECKF(got.n + sum.lost == (uint64_t)rep.emitted && sum.seq == (uint64_t)rep.emitted && sum.lost > 0,
	       "received %zu + lost %llu != emitted %ld (seq %llu)", got.n, (unsigned long long)sum.lost, rep.emitted,
	       (unsigned long long)sum.seq);
	ncpu = usdt_counters_per_cpu(l, per, 1024);
	CHECK(ncpu > 0 && ncpu <= 1024);
	for (int c = 0; c < ncpu && c < 1024; c++) {
		/* Sequence numbers seen on CPU c: distinct, below its seq; the rest are its losses. */
		uint8_t *seen = calloc(per[c].seq + 1, 1);
		uint64_t n = 0, dup = 0, out_of_range = 0;

		if (!seen)
			break;
		for (size_t i = 0; i < got.n; i++) {
			if (got.v[i].cpu != (uint32_t)c)
				continue;
			if (got.v[i].seq >= per[c].seq)
				out_of_range++;
			else if (seen[got.v[i].seq]++)
				dup++;
			else
				n++;
		}
		CHECKF(!dup && !out_of_range && n + per[c].lost == per[c].seq,
		       "cpu %d: %llu received (%llu duplicate, %llu out of range) + %llu lost != seq %llu", c,
		       (unsigned long long)n, (unsigned long long)dup, (unsigned long long)out_of_range,
		       (unsigned long long)per[c].lost, (unsigned long long)per[c].seq);
		free(seen);
	}
	if (expect_load(&e))
		CHECK(check_records("usdt one page", &got, &e, p.pid, false) == recs_of(&got, p.pid));
	printf("  one-page ring buffer: %zu received, %llu lost, %ld emitted\n", got.n, (unsigned long long)sum.lost,
	       rep.emitted);
	expect_free(&e);
out:
	recs_free(&got);
	usdt_loader_close(l);
}

/* ---- LTTng ---------------------------------------------------------------------------------- */

static struct lttng_reader *open_lttng(const struct lttng_reader_opts *o)
{
	struct lttng_reader *r = NULL;
	char err[768];
	int rc = lttng_reader_open(&r, o, err, sizeof(err));

	CHECKF(rc == 0, "lttng_reader_open: %s", err);
	if (r)
		CHECKF(lttng_reader_start(r) == 0, "%s", lttng_reader_error(r));
	return r;
}

/* Stops, reads every record into got; checks that nothing was discarded unless allowed. */
static void stop_and_read(struct lttng_reader *r, struct recs *got, bool discards_allowed)
{
	const struct lttng_reader_stats *s = lttng_reader_stats(r);
	int n;

	CHECKF(lttng_reader_stop(r) == 0, "%s", lttng_reader_error(r));
	n = lttng_reader_read(r, on_lttng, got);
	CHECKF(n >= 0 && (size_t)n == got->n, "lttng_reader_read: %d: %s", n, lttng_reader_error(r));
	CHECK(s->records == got->n && s->traces >= 1 && s->other_events == 0 && s->discarded_unknown == 0);
	if (!discards_allowed)
		CHECKF(s->discarded_events == 0 && s->discarded_packets == 0 && s->channel_discarded == 0 &&
			       s->channel_lost_packets == 0,
		       "discarded: %llu events, %llu packets (channel: %llu, %llu)",
		       (unsigned long long)s->discarded_events, (unsigned long long)s->discarded_packets,
		       (unsigned long long)s->channel_discarded, (unsigned long long)s->channel_lost_packets);
}

/* Closes r and checks that nothing it started is left: no session, no daemon it started. */
static void close_lttng(struct lttng_reader *r)
{
	bool owned = lttng_reader_owns_daemon(r);
	char session[64];

	snprintf(session, sizeof(session), "%s", lttng_reader_session(r));
	lttng_reader_close(r);
	if (owned) {
		CHECK(lttng_session_daemon_alive() == 0);
	} else {
		struct lttng_session *ss = NULL;
		int n = lttng_list_sessions(&ss);

		for (int i = 0; i < n; i++)
			CHECKF(strcmp(ss[i].name, session) != 0, "session %s left behind", session);
		free(ss);
	}
}

/* The session first, then the target (the order spectap uses: a capture starts its session
 * before the system): every record arrives, byte-exact, in order per thread, nothing discarded.
 * (A process that was already running when the session started can lose its first records
 * silently while lttng-ust sets up its per-CPU buffers: seen here under CPU load; see
 * collector/lttng_reader.h.) */
static void test_lttng_exact(void)
{
	const char *args[] = {"-n", "600", "-t", "4", "-w", "lttng", "-o", NULL, NULL};
	struct lttng_reader *r;
	struct recs got = {0};
	struct expect e;
	struct report rep;
	struct proc p;

	if (skip("test_lttng_exact") || !make_expect(&e))
		return;
	args[7] = e.path;
	if (!(r = open_lttng(NULL))) {
		expect_free(&e);
		return;
	}
	CHECK(spawn(&p, args, true) == 0);
	CHECK(finish(&p, NULL, NULL, NULL, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.listeners == SPT_EMIT_LTTNG &&
		       rep.emitted == 2400 - refused_of(600, 4),
	       "output: %s", p.output);
	stop_and_read(r, &got, false);
	if (expect_load(&e))
		check_records("lttng", &got, &e, p.pid, true);
	for (size_t i = 1; i < got.n; i++)
		CHECK(got.v[i].ts >= got.v[i - 1].ts);
	expect_free(&e);
	recs_free(&got);
	close_lttng(r);
}

/* Rotations while the target emits, then one after it exited: together with the read after stop
 * they pass every record once (byte-exact, in order per thread), the last rotation holds what
 * the earlier ones had not, and the read after stop finds nothing new. */
static void test_lttng_rotate(void)
{
	const char *args[] = {"-n", "20000", "-t", "4", "-w", "lttng", "-g", "-o", NULL, NULL};
	struct lttng_reader *r;
	struct recs got = {0};
	struct expect e;
	struct report rep;
	struct proc p;
	int n, rotations = 0;
	const struct lttng_reader_stats *s;

	if (skip("test_lttng_rotate") || !make_expect(&e))
		return;
	args[8] = e.path;
	if (!(r = open_lttng(NULL))) {
		expect_free(&e);
		return;
	}
	CHECK(spawn(&p, args, true) == 0);
	CHECKF((n = lttng_reader_rotate(r, on_lttng, &got)) == 0, "a rotation before any record: %d: %s", n,
	       lttng_reader_error(r));
	go(&p);
	bool ended = false;
	for (double t0 = now_s(); !(ended = exited(&p)) && now_s() - t0 < 120;) {
		n = lttng_reader_rotate(r, on_lttng, &got);
		CHECKF(n >= 0, "lttng_reader_rotate: %s", lttng_reader_error(r));
		if (n < 0)
			break;
		rotations++;
	}
	if (!ended)
		CHECK(finish(&p, NULL, NULL, NULL, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.listeners == SPT_EMIT_LTTNG &&
		       rep.emitted == 80000 - refused_of(20000, 4),
	       "output: %s", p.output);
	n = lttng_reader_rotate(r, on_lttng, &got);
	CHECKF(n >= 0 && got.n == (size_t)rep.emitted, "after the exit: %d more, %zu of %ld: %s", n, got.n,
	       rep.emitted, lttng_reader_error(r));
	CHECKF(lttng_reader_stop(r) == 0, "%s", lttng_reader_error(r));
	n = lttng_reader_read(r, on_lttng, &got);
	s = lttng_reader_stats(r);
	CHECKF(n == 0 && s->records == got.n, "the read after stop: %d (stats %llu, got %zu)", n,
	       (unsigned long long)s->records, got.n);
	CHECK(s->traces >= 2 && s->discarded_events == 0 && s->channel_discarded == 0);
	if (expect_load(&e))
		check_records("lttng rotated", &got, &e, p.pid, true);
	printf("  %d rotations while it ran: %zu records\n", rotations, got.n);
	expect_free(&e);
	recs_free(&got);
	close_lttng(r);
}

/* Both transports at once: the same records, byte-identical, and each USDT hit (fired first) no
 * later than its LTTng event, on the same clock. */
static void test_both(void)
{
	const char *args[] = {"-n", "600", "-t", "4", "-w", "both", "-g", "-o", NULL, NULL};
	struct lttng_reader *r;
	struct usdt_loader *l;
	struct recs ug = {0}, lg = {0};
	struct expect e;
	struct report rep;
	struct proc p;

	if (skip("test_both") || !(l = open_usdt(RING_EXACT)))
		return;
	if (!(r = open_lttng(NULL))) {
		usdt_loader_close(l);
		return;
	}
	if (!make_expect(&e))
		goto out;
	args[8] = e.path;
	CHECK(spawn(&p, args, true) == 0);
	CHECKF(usdt_attach(l, target, -1) == 0, "%s", usdt_loader_error(l)); /* every process */
	go(&p);
	CHECK(finish(&p, l, drain_usdt, &ug, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.listeners == (SPT_EMIT_USDT | SPT_EMIT_LTTNG) &&
		       rep.emitted == 2400 - refused_of(600, 4),
	       "output: %s", p.output);
	stop_and_read(r, &lg, false);
	check_usdt_counters("both/usdt", l, ug.n, 0);
	if (expect_load(&e)) {
		check_records("both/usdt", &ug, &e, p.pid, true);
		check_records("both/lttng", &lg, &e, p.pid, true);
	}
	/* Pair them per thread, in order (both are in emit order per thread). */
	if (ug.n == lg.n) {
		uint32_t tids[MAXT] = {0};
		size_t cur[MAXT] = {0};
		unsigned long bad = 0;

		for (size_t i = 0; i < ug.n; i++) {
			int k = 0;
			size_t j;

			while (k < MAXT && tids[k] && tids[k] != ug.v[i].tid)
				k++;
			if (k == MAXT) {
				bad++;
				continue;
			}
			tids[k] = ug.v[i].tid;
			for (j = cur[k]; j < lg.n && lg.v[j].tid != ug.v[i].tid; j++)
				;
			cur[k] = j + 1;
			if (j == lg.n || lg.v[j].len != ug.v[i].len || memcmp(lg.v[j].data, ug.v[i].data, ug.v[i].len) ||
			    ug.v[i].ts > lg.v[j].ts || lg.v[j].ts - ug.v[i].ts > 1000000000ull) {
				if (++bad <= 3)
					fprintf(stderr, "pair %zu: usdt ts %llu, lttng ts %llu\n", i,
						(unsigned long long)ug.v[i].ts,
						j < lg.n ? (unsigned long long)lg.v[j].ts : 0ull);
			}
		}
		CHECKF(bad == 0, "%lu USDT/LTTng pairs differ", bad);
	}
	expect_free(&e);
out:
	recs_free(&ug);
	recs_free(&lg);
	close_lttng(r);
	usdt_loader_close(l);
}

/* A discarding channel of 2 x 4 KiB sub-buffers per CPU and a program not allowed to block:
 * LTTng discards; what arrives is exact and in order, and received + discarded = emitted, as
 * the trace and the session daemon both count it. */
static void test_lttng_discard(void)
{
	const char *args[] = {"-n", "5000", "-t", "2", "-s", "1000", "-w", "lttng", "-o", NULL, NULL};
	struct lttng_reader_opts o = {.discard = true, .subbuf_size = 4096, .num_subbuf = 2};
	const struct lttng_reader_stats *s;
	struct lttng_reader *r;
	struct recs got = {0};
	struct expect e;
	struct report rep;
	struct proc p;

	if (skip("test_lttng_discard") || !(r = open_lttng(&o)))
		return;
	if (!make_expect(&e))
		goto out;
	args[9] = e.path;
	CHECK(spawn(&p, args, false) == 0);
	CHECK(finish(&p, NULL, NULL, NULL, 10) == 0);
	CHECKF(parse_report(p.output, &rep) && rep.emitted == 10000, "output: %s", p.output);
	stop_and_read(r, &got, true);
	s = lttng_reader_stats(r);
	CHECKF(got.n + s->channel_discarded == (uint64_t)rep.emitted && s->discarded_events == s->channel_discarded &&
		       s->channel_discarded > 0 && s->discarded_packets == 0 && s->channel_lost_packets == 0,
	       "received %zu, discarded %llu (trace) %llu (daemon), emitted %ld", got.n,
	       (unsigned long long)s->discarded_events, (unsigned long long)s->channel_discarded, rep.emitted);
	if (expect_load(&e))
		CHECK(check_records("lttng discard", &got, &e, p.pid, false) == recs_of(&got, p.pid));
	printf("  discarding LTTng channel: %zu received, %llu discarded, %ld emitted\n", got.n,
	       (unsigned long long)s->channel_discarded, rep.emitted);
	expect_free(&e);
out:
	recs_free(&got);
	close_lttng(r);
}

/* ---- errors and costs ----------------------------------------------------------------------- */

static void test_errors(void)
{
	struct lttng_reader_opts o = {.output_dir = "/tmp"};
	struct usdt_loader *l;
	struct lttng_reader *r = NULL;
	char err[768];

	if (skip("test_errors") || !(l = open_usdt(0)))
		return;
	CHECK(usdt_attach(l, "/nonexistent/agent.so", -1) == -ENOENT);
	CHECKF(strstr(usdt_loader_error(l), "/nonexistent/agent.so"), "%s", usdt_loader_error(l));
	CHECK(usdt_attach(l, "/bin/true", -1) == -ENOENT);
	CHECKF(strstr(usdt_loader_error(l), "no USDT probe spectap:event"), "%s", usdt_loader_error(l));
	usdt_loader_close(l);
	CHECK(usdt_loader_open(&l, &(struct usdt_loader_opts){.ringbuf_bytes = 3000}, err, sizeof(err)) == -EINVAL &&
	      !l && strstr(err, "3000"));
	CHECK(lttng_reader_open(&r, &o, err, sizeof(err)) == -EEXIST && !r);
	CHECKF(strstr(err, "/tmp exists"), "%s", err);
	o.output_dir = NULL;
	o.subbuf_size = 1000;
	CHECK(lttng_reader_open(&r, &o, err, sizeof(err)) == -EINVAL && !r && strstr(err, "1000"));
}

/* ns per spt_emit of a 300-byte record from the target's -b mode (mean; median of batches of
 * 100), with l drained meanwhile. */
static void bench(const char *listen, long calls, struct usdt_loader *l, struct recs *got, double *mean,
		  double *median)
{
	char n[24];
	const char *args[] = {"-b", n, "-w", listen, "-g", NULL};
	struct proc p;
	unsigned lis;

	*mean = *median = -1;
	snprintf(n, sizeof(n), "%ld", calls);
	if (spawn(&p, args, !strcmp(listen, "lttng")))
		return;
	if (l)
		CHECKF(usdt_attach(l, target, p.pid) == 0, "%s", usdt_loader_error(l));
	go(&p);
	CHECK(finish(&p, l, drain_usdt, got, 10) == 0);
	CHECKF(sscanf(p.output, "listeners=%u calls=%*d ns_per_call=%lf median_ns=%lf", &lis, mean, median) == 3,
	       "output: %s", p.output);
}

static void test_costs(void)
{
	struct usdt_loader *l;
	struct lttng_reader *r;
	struct recs got = {0};
	double mean, median;

	if (skip("test_costs"))
		return;
	if ((l = open_usdt(RING_EXACT))) {
		bench("usdt", 20000, l, &got, &mean, &median);
		check_usdt_counters("bench/usdt", l, got.n, 0);
		CHECK(got.n == 20000);
		printf("  cost: spt_emit of 300 bytes, USDT attached: %.1f ns (median %.1f)\n", mean, median);
		recs_free(&got);
		usdt_loader_close(l);
	}
	if ((r = open_lttng(NULL))) {
		/* 4000 records fit in the buffers: the tracepoint's own cost (the median) and with the
		 * first touch of the buffer pages (the mean). */
		bench("lttng", 4000, NULL, NULL, &mean, &median);
		stop_and_read(r, &got, false);
		CHECK(got.n == 4000);
		printf("  cost: spt_emit of 300 bytes, LTTng enabled: %.1f ns (median %.1f)\n", mean, median);
		recs_free(&got);
		close_lttng(r);
	}
	if ((r = open_lttng(NULL))) {
		/* 100000 records (33 MB) through buffers of 8 MiB per CPU: the program blocks whenever
		 * they are full (lttng-ust retries every 100 ms) until the consumer daemon has written
		 * them out. */
		bench("lttng", 100000, NULL, NULL, &mean, &median);
		stop_and_read(r, &got, false);
		CHECK(got.n == 100000);
		printf("  cost: spt_emit of 300 bytes, LTTng enabled, 100000 in a row (blocking): %.1f ns (median %.1f)\n",
		       mean, median);
		recs_free(&got);
		close_lttng(r);
	}
}

int main(int argc, char **argv)
{
	const char *env = getenv("EMIT_TARGET");
	struct stat st;

	target = argc > 1 ? argv[1] : env && *env ? env : EMIT_TARGET_DEFAULT;
	target_path = target;
	root = geteuid() == 0;
	spt_arena_init(&A);
	if (stat(target, &st) || !(st.st_mode & S_IXUSR)) {
		fprintf(stderr, "test_emit: target %s not found (build it, or set EMIT_TARGET)\n", target);
		printf("test_emit: 0 passed, 1 failed\n");
		return 1;
	}
	printf("test_emit (target %s)\n", target);
	/* "Nothing attached" needs no session of a killed capture still enabling spectap:event. */
	if (root)
		lttng_reclaim_stale_sessions();
	RUN(test_writer);
	RUN(test_emit_errors);
	RUN(test_nothing_attached);
	RUN(test_usdt_self);
	RUN(test_usdt_exact);
	RUN(test_usdt_shared);
	RUN(test_usdt_flags);
	RUN(test_usdt_one_page);
	RUN(test_lttng_exact);
	RUN(test_lttng_rotate);
	RUN(test_both);
	RUN(test_lttng_discard);
	RUN(test_errors);
	RUN(test_costs);
	spt_arena_fini(&A);
	if (skipped)
		printf("test_emit: %lu skipped\n", skipped);
	TEST_MAIN_END("test_emit");
}
