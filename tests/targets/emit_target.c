/* The program the emit tests trace (tests/unit/test_emit.c): links the emit library
 * (libspectap_emit.a; built with -DEMIT_TARGET_SHARED it uses the library from a shared object,
 * as a JVMTI agent would hold it) and emits records of known contents through spt_emit.
 *
 *   emit_target [-n N] [-t THREADS] [-w none|usdt|lttng|both] [-g] [-o FILE] [-s SIZE]
 *       each thread emits N records (default 1000); -w: wait (at most 20 s, exit 3 after) until
 *       exactly these transports listen, checked again at the end; -g: read one byte from stdin
 *       first (so that a collector can attach to this pid); -o: write every record that
 *       spt_emit accepted to FILE, as "<thread>\t<record>\n", thread by thread, in emit order;
 *       -s: every record SIZE bytes (default: the sizes below, some above the bound)
 *   emit_target -b CALLS [-w ...]   time CALLS spt_emit calls of one 300-byte record, in
 *                                   batches of 100: the mean, and the median batch (without
 *                                   the batches that met a page fault or a full buffer)
 *   emit_target -x [-w ...]         fire the USDT probe directly: a record too large for the
 *                                   collector and one at an unreadable address (then exit)
 *
 * Record i of thread t (node "<t>", state.i = i), built with spt_jw (every third one with
 * escapes, non-ASCII text, a UTF-16 string, a list and a message), padded with printable ASCII to sizes(i): 14 sizes at the ring buffer's
 * size-class bounds, 8192 (the bound) and above it (8193, 9000: spt_emit refuses them with
 * -EMSGSIZE, counted in spt_emit_stats and not written to FILE).
 *
 * Prints on stdout at the end:
 *   listeners=L emitted=E refused=R too_large=T invalid=I
 * (L: spt_emit_listeners() at the start, E: records accepted, R: refused, T and I: the
 * process-wide counters). With -b: listeners=L calls=C ns_per_call=MEAN median_ns=MEDIAN. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spectap/emit.h"

#ifndef EMIT_TARGET_SHARED
/* The probe site itself (probes/emit/emit_internal.h), for -x only: a hidden symbol, so only
 * when the emit library is linked in statically. */
void spt__usdt_fire(const char *record, size_t len);
#endif

static const size_t sizes[] = {
	0 /* the smallest record */, 100, 216, 217, 300, 984, 985, 2000,
	4056, 4057, 6000, 8191, 8192, 8193, 9000, 555,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static long n_records = 1000;
static size_t fixed_size;
static FILE *out;

struct thread {
	pthread_t th;
	int t;
	char *recs;  /* accepted records, each followed by '\n' */
	size_t len, cap;
	long emitted, refused;
	int err;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The optional parts of a rich record: escapes, non-ASCII, UTF-16, a list; a message. */
static void rich_args(struct spt_jw *w, long i)
{
	static const uint16_t u16[] = {'J', 'a', 'v', 'a', ' ', 0xe9, ' ', 0xd83d, 0xde00, '"'};

	spt_jw_str(w, "text", "quote \" backslash \\ tab \t newline \n caf\xc3\xa9 \xe2\x82\xac");
	spt_jw_str16(w, "java", u16, sizeof(u16) / sizeof(u16[0]));
	spt_jw_bool(w, "odd", i % 2 == 1);
	spt_jw_null(w, "none");
	spt_jw_begin_array(w, "list");
	spt_jw_int(w, NULL, -i);
	spt_jw_str(w, NULL, "x");
	spt_jw_end_array(w);
}

static void rich_msg(struct spt_jw *w, const char *node, long i)
{
	spt_jw_begin(w, "msg");
	spt_jw_str(w, "dir", "send");
	spt_jw_str(w, "from", node);
	spt_jw_str(w, "to", "0");
	spt_jw_str(w, "type", "Ping");
	spt_jw_begin(w, "fields");
	spt_jw_int(w, "n", i);
	spt_jw_end(w);
	spt_jw_end(w);
}

/* Builds record i of thread t with a pad of n printable ASCII bytes (no '"' or '\\': one byte
 * each in JSON). */
static int build_padded(char *buf, size_t cap, int t, long i, size_t n, size_t *len)
{
	struct spt_jw w;
	char node[16], *pad = malloc(n + 1);
	int rc;

	if (!pad)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		char c = (char)(' ' + (i * 7 + t * 13 + (long)k) % 95);
		pad[k] = c == '"' || c == '\\' ? '.' : c;
	}
	snprintf(node, sizeof(node), "%d", t);
	spt_jw_init(&w, buf, cap);
	spt_jw_begin(&w, NULL);
	spt_jw_str(&w, "node", node);
	spt_jw_str(&w, "kind", "emit.test");
	spt_jw_begin(&w, "state");
	spt_jw_int(&w, "i", i);
	spt_jw_int(&w, "t", t);
	spt_jw_end(&w);
	spt_jw_begin(&w, "args");
	if (i % 3 == 0)
		rich_args(&w, i);
	spt_jw_strn(&w, "pad", pad, n);
	spt_jw_end(&w);
	if (i % 3 == 0)
		rich_msg(&w, node, i);
	spt_jw_end(&w);
	rc = spt_jw_finish(&w, len);
	free(pad);
	return rc;
}

/* Record i of thread t, padded to want bytes (its natural size if that is larger). */
static int build(char *buf, size_t cap, int t, long i, size_t want, size_t *len)
{
	int rc = build_padded(buf, cap, t, i, 0, len);

	if (rc || *len >= want)
		return rc;
	return build_padded(buf, cap, t, i, want - *len, len);
}

static void *run(void *arg)
{
	struct thread *th = arg;
	size_t cap = 16384;
	char *buf = malloc(cap);

	if (!buf) {
		th->err = -ENOMEM;
		return NULL;
	}
	for (long i = 0; i < n_records; i++) {
		size_t want = fixed_size ? fixed_size : sizes[(size_t)(i + th->t) % NSIZES], len;
		int rc = build(buf, cap, th->t, i, want, &len);

		if (rc) {
			th->err = rc;
			break;
		}
		rc = spt_emit(buf, len);
		if (rc == -EMSGSIZE) {
			th->refused++;
			continue;
		}
		if (rc) {
			th->err = rc;
			break;
		}
		th->emitted++;
		if (out) {
			if (th->len + len + 1 > th->cap) {
				size_t ncap = 2 * (th->cap + len + 1);
				char *p = realloc(th->recs, ncap);

				if (!p) {
					th->err = -ENOMEM;
					break;
				}
				th->recs = p;
				th->cap = ncap;
			}
			memcpy(th->recs + th->len, buf, len);
			th->recs[th->len + len] = '\n';
			th->len += len + 1;
		}
	}
	free(buf);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static unsigned parse_listeners(const char *s)
{
	if (!strcmp(s, "none"))
		return 0;
	if (!strcmp(s, "usdt"))
		return SPT_EMIT_USDT;
	if (!strcmp(s, "lttng"))
		return SPT_EMIT_LTTNG;
	if (!strcmp(s, "both"))
		return SPT_EMIT_USDT | SPT_EMIT_LTTNG;
	return ~0u;
}

/* Waits (at most 20 s, polling every millisecond) until exactly want listens. */
static int wait_listeners(unsigned want)
{
	for (int k = 0; k < 20000; k++) {
		if (spt_emit_listeners() == want)
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "emit_target: listeners are %u after 20 s, want %u\n", spt_emit_listeners(), want);
	return -1;
}

int main(int argc, char **argv)
{
	unsigned want = ~0u, listeners;
	long threads = 1, bench = 0;
	int opt, go = 0, fire = 0, status = 0;
	const char *path = NULL;
	struct spt_emit_stats st;
	struct thread *ths;
	long emitted = 0, refused = 0;

	while ((opt = getopt(argc, argv, "n:t:w:go:s:b:x")) != -1) {
		switch (opt) {
		case 'n': n_records = strtol(optarg, NULL, 10); break;
		case 't': threads = strtol(optarg, NULL, 10); break;
		case 'w':
			want = parse_listeners(optarg);
			if (want == ~0u) {
				fprintf(stderr, "emit_target: -w takes none, usdt, lttng or both, not %s\n", optarg);
				return 2;
			}
			break;
		case 'g': go = 1; break;
		case 'o': path = optarg; break;
		case 's': fixed_size = strtoul(optarg, NULL, 10); break;
		case 'b': bench = strtol(optarg, NULL, 10); break;
		case 'x': fire = 1; break;
		default:
			fprintf(stderr, "usage: %s [-n N] [-t THREADS] [-w none|usdt|lttng|both] [-g] [-o FILE] [-s SIZE] | -b CALLS | -x\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || n_records < 0 || optind < argc) {
		fprintf(stderr, "emit_target: bad arguments\n");
		return 2;
	}
	if (go) {
		char c;
		if (read(0, &c, 1) != 1)
			return 3;
	}
	if (want != ~0u && wait_listeners(want))
		return 3;
	listeners = spt_emit_listeners();
	if (bench > 0) {
		char rec[301];
		size_t len;
		long nb = (bench + 99) / 100;
		double *batch = calloc((size_t)nb, sizeof(*batch)), t0, t1;

		if (!batch || build(rec, sizeof(rec), 0, 0, 300, &len) || len != 300)
			return 4;
		t0 = now_ns();
		for (long b = 0; b < nb; b++) {
			double tb = now_ns();

			for (long i = b * 100; i < bench && i < (b + 1) * 100; i++)
				if (spt_emit(rec, len))
					return 4;
			batch[b] = now_ns() - tb;
		}
		t1 = now_ns();
		qsort(batch, (size_t)nb, sizeof(*batch), cmp_double);
		printf("listeners=%u calls=%ld ns_per_call=%.1f median_ns=%.1f\n", listeners, bench,
		       (t1 - t0) / (double)bench, batch[nb / 2] / 100.0);
		free(batch);
		return 0;
	}
	if (fire) {
#ifndef EMIT_TARGET_SHARED
		static char big[9000];

		memset(big, 'a', sizeof(big));
		spt__usdt_fire(big, sizeof(big));
		spt__usdt_fire((const char *)16, 100);
		printf("listeners=%u fired=2\n", listeners);
		return 0;
#else
		fprintf(stderr, "emit_target: -x needs the emit library linked in statically\n");
		return 2;
#endif
	}
	if (path) {
		out = fopen(path, "w");
		if (!out) {
			perror(path);
			return 4;
		}
	}
	ths = calloc((size_t)threads, sizeof(*ths));
	if (!ths)
		return 4;
	for (long t = 0; t < threads; t++) {
		ths[t].t = (int)t;
		if (pthread_create(&ths[t].th, NULL, run, &ths[t])) {
			fprintf(stderr, "emit_target: pthread_create failed\n");
			return 4;
		}
	}
	for (long t = 0; t < threads; t++) {
		pthread_join(ths[t].th, NULL);
		if (ths[t].err) {
			fprintf(stderr, "emit_target: thread %ld: %s\n", t, strerror(-ths[t].err));
			status = 4;
		}
		emitted += ths[t].emitted;
		refused += ths[t].refused;
		if (out) {
			char *p = ths[t].recs, *end = p + ths[t].len;

			while (p < end) {
				char *nl = memchr(p, '\n', (size_t)(end - p));

				fprintf(out, "%ld\t", t);
				fwrite(p, 1, (size_t)(nl - p) + 1, out);
				p = nl + 1;
			}
		}
		free(ths[t].recs);
	}
	free(ths);
	if (out && fclose(out)) {
		perror(path);
		status = 4;
	}
	if (want != ~0u && spt_emit_listeners() != want) {
		fprintf(stderr, "emit_target: listeners changed to %u during the run\n", spt_emit_listeners());
		status = 3;
	}
	spt_emit_stats(&st);
	printf("listeners=%u emitted=%ld refused=%ld too_large=%llu invalid=%llu\n", listeners, emitted, refused,
	       (unsigned long long)st.too_large, (unsigned long long)st.invalid);
	return status;
}
