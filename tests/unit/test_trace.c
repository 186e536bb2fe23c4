/*
 * The trace file: round trip, seeking, recovery without an index, truncation at every byte,
 * bit flips, a writer killed mid-stream, and clear errors for files that are no trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "gen_event.h"
#include "spectap/json.h"
#include "spectap/trace.h"

static char tmpdir[64];

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* ---- equality ---- */

static bool val_eq_rec(spt_val *x, spt_val *y)
{
	/* NULL args/state/meta/fields mean the empty record. */
	if (!x && !y)
		return true;
	if (!x)
		return spt_is_fun(y) && y->n == 0;
	if (!y)
		return spt_is_fun(x) && x->n == 0;
	return spt_value_eq(x, y);
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool event_eq(const struct spt_event *a, const struct spt_event *b)
{
	if (!str_eq(a->node, b->node) || !str_eq(a->source, b->source) || a->seq != b->seq ||
	    a->ts_ns != b->ts_ns || a->lamport != b->lamport || a->tid != b->tid ||
	    !str_eq(a->kind, b->kind))
		return false;
	if (!val_eq_rec(a->args, b->args) || !val_eq_rec(a->state, b->state) ||
	    !val_eq_rec(a->meta, b->meta))
		return false;
	if (!a->msg || !b->msg)
		return !a->msg && !b->msg;
	const struct spt_msg *m = a->msg, *n = b->msg;
	return m->id == n->id && m->dir == n->dir && str_eq(m->from, n->from) &&
	       str_eq(m->to, n->to) && str_eq(m->type, n->type) &&
	       val_eq_rec(m->fields, n->fields);
}

/* ---- fixture: a trace written from the generator, with the byte offset of every chunk end ---- */

struct chunk_end {
	uint64_t bytes;  /* file size after the chunk was written */
	uint64_t events; /* events in the file after it */
};

struct fixture {
	char path[128];
	struct gen g;
	struct spt_arena arena; /* every generated event's values */
	struct spt_event *evs;
	size_t n_evs;
	struct chunk_end *ends;
	size_t n_ends;
	uint64_t header_end; /* bytes after the magic and header frames */
	uint64_t data_end;   /* bytes after the last chunk */
	uint64_t lost;
	struct spt_loss losses[8];
	size_t n_losses;
	uint8_t *bytes; /* the whole file */
	size_t size;
};

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

static bool spill(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok;
}

static void note_end(struct fixture *fx, struct spt_writer *w, uint64_t *last)
{
	uint64_t b = spt_writer_bytes(w);
	if (b != *last) {
		fx->ends[fx->n_ends++] = (struct chunk_end){ b, spt_writer_events(w) };
		*last = b;
	}
}

enum finish { FINISH_CLOSE, FINISH_ABANDON };

/*
 * Writes n events of seed with chunks of chunk_bytes; every flush_every events an explicit
 * flush (0: none). with_losses adds a few loss records, one of them alone in its chunk.
 */
static bool fixture_write(struct fixture *fx, const char *name, uint64_t seed, size_t n,
			  size_t chunk_bytes, size_t flush_every, bool with_losses, enum finish fin)
{
	memset(fx, 0, sizeof(*fx));
	tmp_path(fx->path, sizeof(fx->path), name);
	unlink(fx->path);
	gen_init(&fx->g, seed);
	spt_arena_init(&fx->arena);
	fx->evs = calloc(n ? n : 1, sizeof(*fx->evs));
	fx->ends = calloc(n + 16, sizeof(*fx->ends));
	if (!fx->evs || !fx->ends)
		return false;

	struct spt_header h;
	gen_header(&fx->g, &h);
	struct spt_writer_opts o = { .sz = sizeof(o), .chunk_bytes = chunk_bytes };
	struct spt_writer *w;
	struct spt_diag d = { "" };
	int rc = spt_writer_open(fx->path, &h, &o, &w, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (rc)
		return false;
	fx->header_end = spt_writer_bytes(w);
	uint64_t last = fx->header_end;
	static const char *const loss_nodes[] = { "1", "2", "3" };
	for (size_t i = 0; i < n; i++) {
		if (!gen_next(&fx->g, &fx->arena, &fx->evs[i]))
			return false;
		rc = spt_writer_append(w, &fx->evs[i]);
		CHECK(rc == 0);
		fx->n_evs++;
		note_end(fx, w, &last);
		if (with_losses && (i == n / 4 || i == n / 2 || i == n - 2) &&
		    fx->n_losses < sizeof(fx->losses) / sizeof(fx->losses[0])) {
			struct spt_loss l = { loss_nodes[fx->n_losses % 3], "bpf", 3 + fx->n_losses * 5,
					      100 + i, 102 + i + fx->n_losses * 5 };
			CHECK(spt_writer_add_loss(w, &l) == 0);
			fx->losses[fx->n_losses++] = l;
			fx->lost += l.count;
			if (i == n / 2) {
				/* A chunk holding nothing but a loss record. */
				CHECK(spt_writer_flush(w) == 0);
				note_end(fx, w, &last);
				struct spt_loss l2 = { "3", "import", 7, 0, 0 };
				CHECK(spt_writer_add_loss(w, &l2) == 0);
				fx->losses[fx->n_losses++] = l2;
				fx->lost += l2.count;
				CHECK(spt_writer_flush(w) == 0);
				note_end(fx, w, &last);
			}
		}
		if (flush_every && (i + 1) % flush_every == 0) {
			CHECK(spt_writer_flush(w) == 0);
			note_end(fx, w, &last);
		}
	}
	CHECK(spt_writer_flush(w) == 0);
	note_end(fx, w, &last);
	fx->data_end = spt_writer_bytes(w);
	CHECK(spt_writer_events(w) == n);
	if (fin == FINISH_CLOSE) {
		rc = spt_writer_close(w, &d);
		CHECKF(rc == 0, "%s", d.msg);
	} else {
		spt_writer_abandon(w);
	}
	fx->bytes = slurp(fx->path, &fx->size);
	return fx->bytes != NULL;
}

static void fixture_free(struct fixture *fx)
{
	unlink(fx->path);
	spt_arena_fini(&fx->arena);
	free(fx->evs);
	free(fx->ends);
	free(fx->bytes);
}

/* Events in the file when it is cut after `bytes` bytes (whole chunks only). */
static uint64_t events_before(const struct fixture *fx, uint64_t bytes)
{
	uint64_t e = 0;
	for (size_t i = 0; i < fx->n_ends; i++)
		if (fx->ends[i].bytes <= bytes)
			e = fx->ends[i].events;
	return e;
}

/* Index of the chunk holding byte off, or -1 outside the chunks. */
static long chunk_at(const struct fixture *fx, uint64_t off)
{
	uint64_t start = fx->header_end;
	for (size_t i = 0; i < fx->n_ends; i++) {
		if (off >= start && off < fx->ends[i].bytes)
			return (long)i;
		start = fx->ends[i].bytes;
	}
	return -1;
}

/*
 * Opens path and reads every event, checking each against fx->evs. Returns the number read,
 * or -1 when open failed (diag in d); *mismatch counts events that differ.
 */
static long read_all(const struct fixture *fx, const char *path, struct spt_trace_info *info,
		     struct spt_diag *d, size_t *mismatch)
{
	struct spt_reader *r;
	*mismatch = 0;
	d->msg[0] = 0;
	int rc = spt_reader_open(path, &r, d);
	if (rc)
		return rc < 0 ? -1 : -2;
	long n = 0;
	const struct spt_event *ev;
	/* Each event is compared with the one written at its ordinal: damage may skip some. */
	while ((rc = spt_reader_next(r, &ev)) == 1) {
		uint64_t ord = spt_reader_tell(r) - 1;
		if (ord >= fx->n_evs || !event_eq(ev, &fx->evs[ord]))
			(*mismatch)++;
		n++;
	}
	if (rc < 0)
		(*mismatch)++;
	if (info)
		*info = *spt_reader_info(r);
	spt_reader_close(r);
	return n;
}

/* The magic frame's length (lib/trace_frame.h, docs/format.md): 8 + "SPECTAP\0" + u32 version. */
#define MAGIC_FRAME_LEN 20

/* ---- tests ---- */

static spt_val *exotic_value(struct spt_arena *a);

static void test_round_trip(void)
{
	struct fixture fx;
	CHECK(fixture_write(&fx, "rt.spt", 1, 5000, 4096, 0, true, FINISH_CLOSE));
	CHECKF(fx.n_ends > 20, "%zu chunks", fx.n_ends);

	struct spt_reader *r;
	struct spt_diag d = { "" };
	int rc = spt_reader_open(fx.path, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (rc) {
		fixture_free(&fx);
		return;
	}
	const struct spt_header *h = spt_reader_header(r);
	struct spt_header want;
	gen_header(&fx.g, &want);
	CHECK(str_eq(h->system, want.system));
	CHECK(str_eq(h->system_version, want.system_version));
	CHECK(h->n_nodes == want.n_nodes);
	for (size_t i = 0; i < h->n_nodes && i < want.n_nodes; i++)
		CHECK(str_eq(h->nodes[i], want.nodes[i]));
	CHECK(str_eq(h->capture_method, want.capture_method));
	CHECK(str_eq(h->scenario, want.scenario));
	CHECK(h->has_seed && h->seed == want.seed);
	CHECK(h->clock_realtime_ns == want.clock_realtime_ns);
	CHECK(h->clock_monotonic_ns == want.clock_monotonic_ns);
	CHECK(str_eq(h->command_line, want.command_line));
	CHECK(h->format_version == SPT_FORMAT_VERSION);
	CHECK(h->writer && strncmp(h->writer, "spectap", 7) == 0);
	CHECK(h->extra == NULL);

	const struct spt_trace_info *info = spt_reader_info(r);
	CHECK(info->indexed);
	CHECK(!info->recovered);
	CHECK(!info->damaged);
	CHECK(info->events == 5000);
	CHECK(info->lost == fx.lost);
	CHECK(info->chunks == fx.n_ends);
	CHECK(info->file_bytes == fx.size);
	CHECK(info->data_bytes == fx.data_end);

	const struct spt_loss *ls;
	size_t nl = spt_reader_losses(r, &ls);
	CHECKF(nl == fx.n_losses, "%zu losses, wrote %zu", nl, fx.n_losses);
	for (size_t i = 0; i < nl && i < fx.n_losses; i++) {
		CHECK(str_eq(ls[i].node, fx.losses[i].node));
		CHECK(str_eq(ls[i].source, fx.losses[i].source));
		CHECK(ls[i].count == fx.losses[i].count);
		CHECK(ls[i].first_seq == fx.losses[i].first_seq);
		CHECK(ls[i].last_seq == fx.losses[i].last_seq);
	}

	const struct spt_event *ev;
	size_t n = 0, bad = 0;
	while ((rc = spt_reader_next(r, &ev)) == 1) {
		if (n >= fx.n_evs || !event_eq(ev, &fx.evs[n])) {
			if (bad++ < 3)
				fprintf(stderr, "round trip: event %zu differs\n", n);
		}
		n++;
	}
	CHECK(rc == 0);
	CHECKF(n == 5000, "read %zu events", n);
	CHECKF(bad == 0, "%zu events differ", bad);
	CHECK(spt_reader_next(r, &ev) == 0); /* stays at the end */
	CHECK(spt_reader_tell(r) == 5000);
	spt_reader_close(r);

	/* The same file read by scanning (footer cut off) gives the same losses. */
	char cut[160];
	tmp_path(cut, sizeof(cut), "rt-cut.spt");
	CHECK(spill(cut, fx.bytes, (size_t)fx.data_end));
	rc = spt_reader_open(cut, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (!rc) {
		CHECK(spt_reader_info(r)->recovered);
		CHECK(spt_reader_info(r)->lost == fx.lost);
		CHECK(spt_reader_losses(r, &ls) == fx.n_losses);
		spt_reader_close(r);
	}
	unlink(cut);
	fixture_free(&fx);
}

static void check_seek_at(struct spt_reader *r, const struct fixture *fx, uint64_t n)
{
	int rc = spt_reader_seek_event(r, n);
	CHECKF(rc == 0, "seek_event(%llu) = %d", (unsigned long long)n, rc);
	CHECKF(spt_reader_tell(r) == n, "tell %llu after seek to %llu",
	       (unsigned long long)spt_reader_tell(r), (unsigned long long)n);
	const struct spt_event *ev;
	rc = spt_reader_next(r, &ev);
	if (n == fx->n_evs) {
		CHECKF(rc == 0, "next at the end = %d", rc);
		return;
	}
	CHECKF(rc == 1 && event_eq(ev, &fx->evs[n]), "event %llu after seek",
	       (unsigned long long)n);
	CHECK(spt_reader_tell(r) == n + 1);
}

static void seek_checks(const struct fixture *fx, const char *path)
{
	struct spt_reader *r;
	struct spt_diag d = { "" };
	int rc = spt_reader_open(path, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (rc)
		return;
	CHECK(spt_reader_tell(r) == 0);
	uint64_t n = fx->n_evs;
	check_seek_at(r, fx, 0);
	check_seek_at(r, fx, n - 1);
	check_seek_at(r, fx, n);
	check_seek_at(r, fx, 0);
	for (size_t i = 0; i < fx->n_ends; i++) {
		uint64_t e = fx->ends[i].events;
		if (e > 0)
			check_seek_at(r, fx, e - 1);
		check_seek_at(r, fx, e);
		if (e + 1 <= n)
			check_seek_at(r, fx, e + 1 > n ? n : e + 1);
	}
	struct gen rng;
	gen_init(&rng, 99);
	for (int i = 0; i < 300; i++)
		check_seek_at(r, fx, gen_rand(&rng) % (n + 1));
	/* Out of range: an error, and the reader still works. */
	CHECK(spt_reader_seek_event(r, n + 1) < 0);
	check_seek_at(r, fx, 7);

	/* seek_time: to each event's ts and just past it. */
	for (int i = 0; i < 200; i++) {
		uint64_t k = gen_rand(&rng) % n;
		uint64_t ts = fx->evs[k].ts_ns + (i & 1);
		uint64_t want = 0;
		while (want < n && fx->evs[want].ts_ns < ts)
			want++;
		CHECK(spt_reader_seek_time(r, ts) == 0);
		CHECKF(spt_reader_tell(r) == want, "seek_time: tell %llu, want %llu",
		       (unsigned long long)spt_reader_tell(r), (unsigned long long)want);
		const struct spt_event *ev;
		rc = spt_reader_next(r, &ev);
		if (want == n)
			CHECK(rc == 0);
		else
			CHECK(rc == 1 && event_eq(ev, &fx->evs[want]));
	}
	CHECK(spt_reader_seek_time(r, 0) == 0);
	CHECK(spt_reader_tell(r) == 0);
	CHECK(spt_reader_seek_time(r, fx->evs[n - 1].ts_ns + 1) == 0);
	CHECK(spt_reader_tell(r) == n);
	const struct spt_event *ev;
	CHECK(spt_reader_next(r, &ev) == 0);
	spt_reader_close(r);
}

static void test_seek(void)
{
	struct fixture fx;
	CHECK(fixture_write(&fx, "seek.spt", 2, 5000, 4096, 0, true, FINISH_CLOSE));
	seek_checks(&fx, fx.path);
	/* The same by scanning, without the index. */
	char cut[160];
	tmp_path(cut, sizeof(cut), "seek-cut.spt");
	CHECK(spill(cut, fx.bytes, (size_t)fx.data_end));
	seek_checks(&fx, cut);
	unlink(cut);
	fixture_free(&fx);
}

static void test_no_index(void)
{
	struct fixture fx;
	CHECK(fixture_write(&fx, "abandon.spt", 3, 3000, 4096, 250, true, FINISH_ABANDON));
	CHECK(fx.size == fx.data_end);
	struct spt_trace_info info;
	struct spt_diag d;
	size_t bad;
	long n = read_all(&fx, fx.path, &info, &d, &bad);
	CHECKF(n == 3000, "read %ld: %s", n, d.msg);
	CHECK(bad == 0);
	CHECK(info.recovered);
	CHECK(!info.indexed);
	CHECK(!info.damaged);
	CHECK(info.events == 3000);
	CHECK(info.lost == fx.lost);
	fixture_free(&fx);

	/* A closed file whose footer is cut off: the scan finds the index frame and stops there. */
	CHECK(fixture_write(&fx, "nofooter.spt", 4, 1000, 4096, 0, false, FINISH_CLOSE));
	char cut[160];
	tmp_path(cut, sizeof(cut), "nofooter-cut.spt");
	CHECK(spill(cut, fx.bytes, fx.size - 24));
	n = read_all(&fx, cut, &info, &d, &bad);
	CHECKF(n == 1000, "read %ld: %s", n, d.msg);
	CHECK(bad == 0);
	CHECK(info.recovered && !info.indexed);
	CHECK(!info.damaged);
	unlink(cut);
	fixture_free(&fx);
}

/*
 * The small trace of the every-byte tests: ~20 chunks in ~16 KB. Each cut or flip reads the file
 * again, so its size squared bounds the time these tests take under the sanitizers.
 */
#define SMALL_EVENTS 160
#define SMALL_CHUNK 1536

static void test_truncate_every_byte(void)
{
	struct fixture fx;
	CHECK(fixture_write(&fx, "trunc.spt", 5, SMALL_EVENTS, SMALL_CHUNK, 0, true, FINISH_CLOSE));
	CHECKF(fx.n_ends >= 10, "%zu chunks", fx.n_ends);
	if (getenv("SPT_TEST_TIMES"))
		fprintf(stderr, "    (%zu bytes, %zu chunks, header %llu)\n", fx.size, fx.n_ends, (unsigned long long)fx.header_end);
	char cut[160];
	tmp_path(cut, sizeof(cut), "trunc-cut.spt");
	CHECK(spill(cut, fx.bytes, fx.size));
	int fd = open(cut, O_WRONLY);
	CHECK(fd >= 0);
	size_t failures = 0;
	/* From the whole file down to nothing, cutting one more byte each time. */
	for (size_t c = fx.size + 1; c-- > 0;) {
		if (ftruncate(fd, (off_t)c)) {
			CHECK(!"ftruncate");
			break;
		}
		struct spt_trace_info info;
		struct spt_diag d;
		size_t bad;
		long n = read_all(&fx, cut, &info, &d, &bad);
		bool ok;
		if (c < fx.header_end) {
			ok = n == -1 && d.msg[0];
		} else {
			uint64_t want = c >= fx.data_end ? fx.n_evs : events_before(&fx, c);
			ok = n == (long)want && bad == 0 && info.events == want && !info.damaged &&
			     info.indexed == (c == fx.size) && info.recovered == (c != fx.size);
		}
		if (!ok && failures++ < 5)
			fprintf(stderr, "cut at %zu of %zu: read %ld, %zu bad (%s)\n", c, fx.size, n,
				bad, d.msg);
	}
	CHECKF(failures == 0, "%zu cuts misread", failures);
	close(fd);
	unlink(cut);
	fixture_free(&fx);
}

/* Whether a frame damaged by a flip still decodes to the very same bytes (zstd can't tell). */
static bool frame_same_content(const uint8_t *orig, const uint8_t *flipped, size_t len)
{
	size_t cap = 1 << 20;
	char *a = malloc(cap), *b = malloc(cap);
	size_t na = ZSTD_decompress(a, cap, orig, len);
	size_t nb = ZSTD_decompress(b, cap, flipped, len);
	bool same = !ZSTD_isError(na) && !ZSTD_isError(nb) && na == nb && !memcmp(a, b, na);
	free(a);
	free(b);
	return same;
}

static void test_bit_flips(void)
{
	struct fixture fx;
	CHECK(fixture_write(&fx, "flip.spt", 6, SMALL_EVENTS, SMALL_CHUNK, 0, true, FINISH_CLOSE));
	char bad_path[160];
	tmp_path(bad_path, sizeof(bad_path), "flip-bad.spt");
	uint8_t *copy = malloc(fx.size);
	memcpy(copy, fx.bytes, fx.size);
	CHECK(spill(bad_path, fx.bytes, fx.size));
	int fd = open(bad_path, O_WRONLY);
	CHECK(fd >= 0);
	struct gen rng;
	gen_init(&rng, 7);
	size_t failures = 0, same_content = 0;
	for (size_t off = 0; off < fx.size; off++) {
		if (off)
			copy[off - 1] = fx.bytes[off - 1];
		copy[off] ^= (uint8_t)(1u << gen_below(&rng, 8));
		/* Repair the previous byte and flip this one. */
		size_t from = off ? off - 1 : 0;
		if (pwrite(fd, copy + from, off + 1 - from, (off_t)from) != (ssize_t)(off + 1 - from)) {
			CHECK(!"pwrite");
			break;
		}
		struct spt_trace_info info;
		struct spt_diag d;
		size_t bad;
		long n = read_all(&fx, bad_path, &info, &d, &bad);
		long k = chunk_at(&fx, off);
		bool ok;
		if (n == -1) {
			ok = off < MAGIC_FRAME_LEN && d.msg[0]; /* only a damaged magic frame stops the open */
		} else if (off < MAGIC_FRAME_LEN) {
			ok = false;
		} else if (off < fx.header_end) {
			/* A damaged header costs the header only: every event is read, the damage said. */
			ok = bad == 0 && (size_t)n == fx.n_evs && !info.damaged_chunks &&
			     (!info.damaged || (info.header_lost && info.damage_offset == MAGIC_FRAME_LEN));
		} else if (k >= 0) {
			/* Only chunk k is lost: every other one is read, before it and after it. */
			uint64_t start = k ? fx.ends[k - 1].bytes : fx.header_end;
			uint64_t before = k ? fx.ends[k - 1].events : 0;
			uint64_t in_k = fx.ends[k].events - before;
			ok = bad == 0 && (uint64_t)n == fx.n_evs - in_k && info.damaged &&
			     info.damaged_events == in_k && info.damage_offset == start &&
			     info.events == fx.n_evs && !info.damaged_tail;
			if (!ok && bad == 0 && (uint64_t)n == fx.n_evs &&
			    frame_same_content(fx.bytes + start, copy + start,
					       fx.ends[k].bytes - start)) {
				ok = true;
				same_content++;
				if (getenv("FLIPDBG"))
					fprintf(stderr, "same content: off %zu, frame start %llu, len %llu, byte %02x->%02x\n", off, (unsigned long long)start, (unsigned long long)(fx.ends[k].bytes - start), fx.bytes[off], copy[off]);
			}
		} else {
			ok = bad == 0 && (size_t)n == fx.n_evs; /* index or footer */
		}
		if (n > (long)fx.n_evs)
			ok = false;
		if (!ok && failures++ < 5)
			fprintf(stderr, "flip at %zu (chunk %ld): read %ld, %zu bad (%s)\n", off, k, n,
				bad, d.msg);
	}
	CHECKF(failures == 0, "%zu flips misread", failures);
	if (same_content)
		printf("  (%zu flips left a frame's content intact)\n", same_content);
	close(fd);
	free(copy);
	unlink(bad_path);
	fixture_free(&fx);
}

/*
 * Damage in one chunk costs that chunk only, for every chunk, with and without the index: every
 * other event is read, at its own ordinal, and seeking finds the same events as reading on.
 */
static void damage_every_chunk(enum finish fin)
{
	struct fixture fx;
	CHECK(fixture_write(&fx, "dmg.spt", 8, SMALL_EVENTS, SMALL_CHUNK, 0, true, fin));
	CHECKF(fx.n_ends >= 7, "%zu chunks", fx.n_ends);
	char bad_path[160];
	tmp_path(bad_path, sizeof(bad_path), "dmg-bad.spt");
	uint8_t *copy = malloc(fx.size);
	size_t failures = 0;
	for (size_t k = 0; k < fx.n_ends && copy; k++) {
		uint64_t start = k ? fx.ends[k - 1].bytes : fx.header_end, end = fx.ends[k].bytes;
		uint64_t before = k ? fx.ends[k - 1].events : 0, in_k = fx.ends[k].events - before;
		memcpy(copy, fx.bytes, fx.size);
		for (uint64_t b = start + (end - start) / 2; b < end && b < start + (end - start) / 2 + 8; b++)
			copy[b] ^= 0xA5;
		CHECK(spill(bad_path, copy, fx.size));
		struct spt_trace_info info;
		struct spt_diag d;
		size_t bad;
		long n = read_all(&fx, bad_path, &info, &d, &bad);
		/* Without the index, damage in the last chunk is a torn end: how much it held is unknown. */
		bool tail = fin == FINISH_ABANDON && k + 1 == fx.n_ends;
		bool ok = n == (long)(fx.n_evs - in_k) && bad == 0 && info.damaged &&
			  info.damaged_chunks == !tail && info.damaged_events == (tail ? 0 : in_k) &&
			  info.damage_offset == start && info.damaged_bytes == end - start &&
			  info.damaged_tail == tail && info.events == (tail ? before : fx.n_evs);
		if (!ok && getenv("DMGDBG"))
			fprintf(stderr, "n %ld bad %zu bytes %" PRIu64 "/%" PRIu64 " events %" PRIu64 " tail %d\n", n, bad,
				info.damaged_bytes, end - start, info.events, info.damaged_tail);
		/* Seeking to each chunk's first event: that event, or past a damaged one the next chunk's. */
		struct spt_reader *r;
		if (ok && spt_reader_open(bad_path, &r, &d) == 0) {
			for (size_t j = 0; j < fx.n_ends; j++) {
				uint64_t first = j ? fx.ends[j - 1].events : 0;
				uint64_t want = first >= before && first < fx.ends[k].events ? fx.ends[k].events : first;
				const struct spt_event *ev;
				int rc = spt_reader_seek_event(r, first);
				if (want >= spt_reader_info(r)->events) {
					ok = ok && rc == 0 && spt_reader_next(r, &ev) == 0;
					continue;
				}
				ok = ok && rc == 0 && spt_reader_next(r, &ev) == 1 &&
				     spt_reader_tell(r) - 1 == want && event_eq(ev, &fx.evs[want]);
			}
			ok = ok && spt_reader_info(r)->damaged_events == (tail ? 0 : in_k);
			spt_reader_close(r);
		}
		if (!ok && failures++ < 5)
			fprintf(stderr, "%s, damage in chunk %zu of %zu: read %ld of %zu, %zu bad, %" PRIu64
				" chunks/%" PRIu64 " events lost at %" PRIu64 " (%s)\n",
				fin == FINISH_CLOSE ? "indexed" : "scanned", k, fx.n_ends, n, fx.n_evs, bad,
				info.damaged_chunks, info.damaged_events, info.damage_offset, d.msg);
	}
	CHECKF(failures == 0, "%zu damaged chunks misread", failures);
	free(copy);
	unlink(bad_path);
	fixture_free(&fx);
}

static void test_damaged_chunk(void)
{
	damage_every_chunk(FINISH_CLOSE);
	damage_every_chunk(FINISH_ABANDON);
}

static void test_crash(void)
{
	char path[160];
	tmp_path(path, sizeof(path), "crash.spt");
	unlink(path);
	const uint64_t seed = 11;
	const int every = 40;
	int fds[2];
	CHECK(pipe(fds) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		struct gen g;
		gen_init(&g, seed);
		struct spt_header h;
		gen_header(&g, &h);
		struct spt_writer_opts o = { .sz = sizeof(o), .chunk_bytes = 64u << 20 };
		struct spt_writer *w;
		if (spt_writer_open(path, &h, &o, &w, NULL))
			_exit(2);
		struct spt_arena a;
		spt_arena_init(&a);
		for (uint64_t i = 0; i < 10000000; i++) {
			struct spt_event ev;
			spt_arena_reset(&a);
			if (!gen_next(&g, &a, &ev) || spt_writer_append(w, &ev))
				_exit(3);
			if ((i + 1) % (uint64_t)every == 0) {
				if (spt_writer_flush(w))
					_exit(4);
				uint64_t n = spt_writer_events(w);
				if (write(fds[1], &n, sizeof(n)) != sizeof(n))
					_exit(5);
			}
		}
		_exit(0);
	}
	close(fds[1]);
	CHECK(pid > 0);
	uint64_t flushed = 0, got;
	int reports = 0;
	while (reports < 25 && read(fds[0], &got, sizeof(got)) == sizeof(got)) {
		flushed = got;
		reports++;
	}
	/* Kill it somewhere in the middle of the next chunk or its write. */
	struct timespec ts = { 0, 300000 };
	nanosleep(&ts, NULL);
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	while (read(fds[0], &got, sizeof(got)) == sizeof(got))
		flushed = got; /* reports written before the kill */
	close(fds[0]);
	CHECK(reports == 25 && flushed >= 25u * (unsigned)every);

	struct spt_reader *r;
	struct spt_diag d = { "" };
	int rc = spt_reader_open(path, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (!rc) {
		const struct spt_trace_info *info = spt_reader_info(r);
		CHECK(info->recovered && !info->indexed);
		CHECKF(info->events >= flushed, "%llu events, %llu flushed",
		       (unsigned long long)info->events, (unsigned long long)flushed);
		struct gen g;
		gen_init(&g, seed);
		struct spt_arena a;
		spt_arena_init(&a);
		const struct spt_event *ev;
		uint64_t n = 0, bad = 0;
		while ((rc = spt_reader_next(r, &ev)) == 1) {
			struct spt_event want;
			spt_arena_reset(&a);
			if (!gen_next(&g, &a, &want) || !event_eq(ev, &want))
				bad++;
			n++;
		}
		CHECK(rc == 0);
		CHECK(bad == 0);
		CHECKF(n >= flushed && n == info->events, "read %llu, flushed %llu",
		       (unsigned long long)n, (unsigned long long)flushed);
		CHECK(n % (uint64_t)every == 0);
		spt_arena_fini(&a);
		spt_reader_close(r);
	}
	unlink(path);
}

/* Empty strings, values of every kind, clocks going backwards and extreme numbers. */
static void test_odd_events(void)
{
	char path[160];
	tmp_path(path, sizeof(path), "odd.spt");
	struct spt_arena a;
	spt_arena_init(&a);
	struct spt_header h = { .system = "", .nodes = NULL, .n_nodes = 0 };
	h.extra = exotic_value(&a);
	struct spt_event evs[6];
	static const char *const names[] = { "", "vote", "x" };
	spt_val *vals[3] = { spt_cstr(&a, ""), spt_cstr(&a, ""), exotic_value(&a) };
	spt_val *state = spt_rec(&a, names, vals, 3);
	struct spt_msg msg = { 0, SPT_MSG_RECV, "", "", "", spt_empty_fun(&a, SPT_REC) };
	memset(evs, 0, sizeof(evs));
	evs[0] = (struct spt_event){ "", "", 0, 0, 0, 0, "", NULL, NULL, NULL, NULL };
	evs[1] = (struct spt_event){ "n", "s", UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, "k",
				     exotic_value(&a), state, &msg, spt_empty_fun(&a, SPT_REC) };
	evs[2] = (struct spt_event){ "n", "s", 1, 5, 1, 0, "k", NULL, state, NULL, NULL };
	evs[3] = (struct spt_event){ "n", "s", 2, 3, 0, 0, "k", NULL, NULL, NULL, state };
	evs[4] = (struct spt_event){ "n", "s", 2, 3, 0, 0, "k", NULL, exotic_value(&a), NULL, NULL };
	evs[5] = (struct spt_event){ "", "", 0, 0, 0, 0, "", NULL, state, &msg, NULL };
	struct spt_writer *w;
	struct spt_diag d = { "" };
	struct spt_writer_opts o = { .sz = sizeof(o), .overwrite = true };
	int rc = spt_writer_open(path, &h, &o, &w, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (rc) {
		spt_arena_fini(&a);
		return;
	}
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < 6; i++)
			CHECK(spt_writer_append(w, &evs[i]) == 0);
		CHECK(spt_writer_flush(w) == 0);
	}
	CHECK(spt_writer_close(w, &d) == 0);

	struct spt_reader *r;
	rc = spt_reader_open(path, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (!rc) {
		CHECK(spt_value_eq(spt_reader_header(r)->extra, h.extra));
		CHECK(str_eq(spt_reader_header(r)->system, ""));
		const struct spt_event *ev;
		size_t n = 0;
		while ((rc = spt_reader_next(r, &ev)) == 1) {
			CHECKF(n < 12 && event_eq(ev, &evs[n % 6]), "odd event %zu", n);
			n++;
		}
		CHECK(rc == 0 && n == 12);
		spt_reader_close(r);
	}
	unlink(path);
	spt_arena_fini(&a);
}

/* A state whose log grows, is cut and grows again, or is a window that moves on, is written as
 * sequence edits (format 2) and
 * reads back exactly; the file is smaller than one that writes every log whole. */
static spt_val *log_state(struct spt_arena *a, const int64_t *terms, size_t n, int64_t commit)
{
	static const char *const names[] = { "commit", "log" };
	spt_val **el = spt_arena_alloc(a, (n ? n : 1) * sizeof(*el));
	for (size_t i = 0; i < n; i++)
		el[i] = spt_int(a, terms[i]);
	spt_val *vals[2] = { spt_int(a, commit), spt_seq(a, el, n) };
	return spt_rec(a, names, vals, 2);
}

static long write_logs(const char *path, struct spt_event *evs, size_t n)
{
	struct spt_header h = { .system = "t", .nodes = NULL, .n_nodes = 0 };
	struct spt_writer *w;
	struct spt_diag d = { "" };
	struct spt_writer_opts o = { .sz = sizeof(o), .overwrite = true };
	struct stat st;
	if (spt_writer_open(path, &h, &o, &w, &d))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (spt_writer_append(w, &evs[i]))
			return -1;
	if (spt_writer_close(w, &d) || stat(path, &st))
		return -1;
	return (long)st.st_size;
}

static void test_seq_edits(void)
{
	enum { N = 400, LEN = 600 };
	char path[160];
	tmp_path(path, sizeof(path), "edits.spt");
	struct spt_arena a;
	spt_arena_init(&a);
	static struct spt_event evs[N];
	int64_t terms[LEN + N];
	size_t len = LEN;
	for (size_t i = 0; i < LEN + N; i++)
		terms[i] = (int64_t)(i / 50) + 1;
	size_t from = 0;
	for (size_t i = 0; i < N; i++) {
		const char *node = i % 2 ? "n2" : "n1";
		if (i == 150)
			len = 300;           /* cut */
		else if (i == 250)
			terms[len - 1] = 99; /* the last entry replaced: keep len - 1 */
		else if (i == 300)
			len = 3;             /* shorter than an edit keeps: written whole */
		else if (i >= 320)
			from += i % 4 == 0, len = 200; /* a window of the last 200 that moves on */
		else
			len += i % 3 == 0;  /* grows, or stays */
		evs[i] = (struct spt_event){ node, "s", i / 2 + 1, i, i + 1, 0, "k", NULL,
					     log_state(&a, terms + from, len, (int64_t)i), NULL, NULL };
	}
	long with = write_logs(path, evs, N);
	CHECKF(with > 0, "writing %s", path);
	struct spt_reader *r;
	struct spt_diag d = { "" };
	int rc = spt_reader_open(path, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (!rc) {
		const struct spt_event *ev;
		size_t n = 0;
		while ((rc = spt_reader_next(r, &ev)) == 1) {
			CHECKF(n < N && event_eq(ev, &evs[n]), "event %zu reads back as written", n);
			n++;
		}
		CHECK(rc == 0 && n == N);
		CHECK(spt_reader_header(r)->format_version == SPT_FORMAT_VERSION);
		spt_reader_close(r);
	}
	/* The same logs, each event a different node: no previous value, every log whole. */
	static struct spt_event whole[N];
	char names[N][8];
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "w%zu", i);
		whole[i] = evs[i];
		whole[i].node = names[i];
	}
	long without = write_logs(path, whole, N);
	/* zstd finds repeats in whole logs too: the edits still save a good part of the file */
	CHECKF(without > 0 && with * 4 < without * 3, "edits: %ld bytes, whole logs: %ld bytes", with, without);
	unlink(path);
	spt_arena_fini(&a);
}

/* An event's meta as JSON, fields in the order they are kept (malloc'd). */
static char *meta_text(spt_val *m)
{
	struct spt_buf b = { 0 };
	if (m)
		spt_json_write(&b, m, SPT_JSON_TAGGED, NULL);
	char *t = strndup(b.p ? b.p : "", b.len);
	spt_buf_free(&b);
	return t;
}

/* An event whose meta is its node's last one is written once per node and chunk (meta_same),
 * and reads back the same, field order included; a change, another order, none, or a new chunk
 * writes it again. */
static void test_meta_repeats(void)
{
	enum { N = 3000 };
	char path[160];
	tmp_path(path, sizeof(path), "meta.spt");
	struct spt_arena a;
	spt_arena_init(&a);
	static const char *const texts[] = { "{\"_keys\":[\"ts\",\"tag\",\"event\"],\"scenario\":\"basic\",\"tag\":\"trace\"}",
					     "{\"scenario\":\"basic\",\"_keys\":[\"ts\",\"tag\",\"event\"],\"tag\":\"trace\"}",
					     "{\"_keys\":[\"ts\",\"event\"],\"scenario\":\"other\"}" };
	spt_val *metas[3];
	for (int k = 0; k < 3; k++) {
		struct spt_json_error err;
		CHECK(spt_json_parse(&a, texts[k], strlen(texts[k]), SPT_JSON_TAGGED, &metas[k], &err) == 0);
	}
	static struct spt_event evs[N];
	for (size_t i = 0; i < N; i++) {
		/* n1: always the first; n2: runs of each of the three (two differ only in order), and none */
		spt_val *m = i % 2 == 0 ? metas[0] : (i / 20) % 4 == 3 ? NULL : metas[(i / 20) % 4];
		evs[i] = (struct spt_event){ i % 2 ? "n2" : "n1", "s", i / 2 + 1, i, i + 1, 0, "k", NULL, NULL, NULL, m };
	}
	long with = write_logs(path, evs, N);
	CHECKF(with > 0, "writing %s", path);
	struct spt_reader *r;
	struct spt_diag d = { "" };
	int rc = spt_reader_open(path, &r, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (!rc) {
		const struct spt_event *ev;
		size_t n = 0, bad = 0;
		while ((rc = spt_reader_next(r, &ev)) == 1) {
			char *got = meta_text(ev->meta), *want = meta_text(evs[n].meta);
			bad += n >= N || strcmp(got, want) || !event_eq(ev, &evs[n]);
			free(got);
			free(want);
			n++;
		}
		CHECKF(rc == 0 && n == N && bad == 0, "%zu events, %zu read back otherwise", n, bad);
		/* and when read from the middle, by seeking */
		CHECK(spt_reader_seek_event(r, N / 2 + 1) == 0 && spt_reader_next(r, &ev) == 1);
		char *got = meta_text(ev->meta), *want = meta_text(evs[N / 2 + 1].meta);
		CHECKF(!strcmp(got, want), "after a seek: %s, want %s", got, want);
		free(got);
		free(want);
		spt_reader_close(r);
	}
	unlink(path);
	spt_arena_fini(&a);
}

/* Events read from path; -1 when it does not open. */
static long count_events(const char *path)
{
	struct spt_reader *r;
	struct spt_diag d;
	if (spt_reader_open(path, &r, &d))
		return -1;
	long n = 0;
	const struct spt_event *ev;
	while (spt_reader_next(r, &ev) == 1)
		n++;
	spt_reader_close(r);
	return n;
}

/*
 * Replacing a trace never destroys it before the new one is complete: the new one is written to
 * PATH.partial, renamed when closed or abandoned, removed when discarded, refused when a killed
 * writer left one. And the flush interval puts pending events in the file without a close.
 */
static void test_replace_and_flush(void)
{
	char path[160], partial[200];
	tmp_path(path, sizeof(path), "replace.spt");
	snprintf(partial, sizeof(partial), "%s.partial", path);
	unlink(path);
	unlink(partial);
	struct gen g;
	gen_init(&g, 3);
	struct spt_header h;
	gen_header(&g, &h);
	struct spt_arena a;
	spt_arena_init(&a);
	struct spt_event ev;
	struct spt_diag d = { "" };
	struct spt_writer *w;
	struct spt_writer_opts o = { .sz = sizeof(o), .overwrite = true, .flush_ms = 50 };

	/* The first trace: 10 events. */
	CHECK(spt_writer_open(path, &h, &o, &w, &d) == 0);
	for (int i = 0; i < 10 && gen_next(&g, &a, &ev); i++)
		CHECK(spt_writer_append(w, &ev) == 0);
	CHECK(spt_writer_close(w, &d) == 0);
	CHECK(count_events(path) == 10);

	/* Replacing it: while the new one is written the old one is whole; the flush interval puts
	 * the new events in PATH.partial (a kill now would keep both). */
	CHECK(spt_writer_open(path, &h, &o, &w, &d) == 0);
	CHECK(access(partial, F_OK) == 0);
	for (int i = 0; i < 3 && gen_next(&g, &a, &ev); i++)
		CHECK(spt_writer_append(w, &ev) == 0);
	CHECK(count_events(partial) == 0);
	usleep(60 * 1000);
	CHECK(spt_writer_tick(w) == 0);
	CHECK(count_events(partial) == 3);
	CHECK(count_events(path) == 10);
	/* A second writer refuses to take the partial trace over. */
	struct spt_writer *w2 = NULL;
	d.msg[0] = 0;
	CHECK(spt_writer_open(path, &h, &o, &w2, &d) == -EEXIST);
	CHECKF(strstr(d.msg, ".partial") && strstr(d.msg, "was killed"), "%s", d.msg);
	/* Discarded: the old trace stays, the partial goes. */
	spt_writer_discard(w);
	CHECK(count_events(path) == 10 && access(partial, F_OK) != 0);

	/* Abandoned (an interrupted recording): renamed into place, readable, not closed. */
	CHECK(spt_writer_open(path, &h, &o, &w, &d) == 0);
	for (int i = 0; i < 4 && gen_next(&g, &a, &ev); i++)
		CHECK(spt_writer_append(w, &ev) == 0);
	CHECK(spt_writer_flush(w) == 0);
	spt_writer_abandon(w);
	CHECK(count_events(path) == 4 && access(partial, F_OK) != 0);

	/* flush_events: every N events reach the file. */
	struct spt_writer_opts on = { .sz = sizeof(on), .overwrite = true, .flush_events = 2 };
	CHECK(spt_writer_open(path, &h, &on, &w, &d) == 0);
	for (int i = 0; i < 5 && gen_next(&g, &a, &ev); i++)
		CHECK(spt_writer_append(w, &ev) == 0);
	CHECK(count_events(partial) == 4);
	CHECK(spt_writer_close(w, &d) == 0);
	CHECK(count_events(path) == 5);

	/* Through a symlink: the link is replaced, its target left alone. */
	char target[160];
	tmp_path(target, sizeof(target), "replace-target.spt");
	CHECK(spill(target, "keep", 4));
	unlink(path);
	CHECK(symlink(target, path) == 0);
	CHECK(spt_writer_open(path, &h, &o, &w, &d) == 0);
	CHECK(spt_writer_close(w, &d) == 0);
	struct stat st;
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	size_t len;
	uint8_t *p = slurp(target, &len);
	CHECK(p && len == 4 && !memcmp(p, "keep", 4));
	free(p);
	unlink(target);
	unlink(path);
	spt_arena_fini(&a);
}

static void test_errors(void)
{
	char path[160];
	struct spt_diag d = { "" };
	struct spt_reader *r = NULL;
	struct spt_writer *w = NULL;
	struct gen g;
	gen_init(&g, 1);
	struct spt_header h;
	gen_header(&g, &h);

	/* The writer refuses to replace a file unless told to. */
	tmp_path(path, sizeof(path), "exists.spt");
	CHECK(spill(path, "hello", 5));
	int rc = spt_writer_open(path, &h, NULL, &w, &d);
	CHECK(rc == -EEXIST);
	CHECK(strstr(d.msg, "exists.spt") != NULL);
	size_t len;
	uint8_t *p = slurp(path, &len);
	CHECK(p && len == 5 && !memcmp(p, "hello", 5)); /* untouched */
	free(p);
	struct spt_writer_opts o = { .sz = sizeof(o), .overwrite = true };
	rc = spt_writer_open(path, &h, &o, &w, &d);
	CHECKF(rc == 0, "%s", d.msg);
	if (!rc) {
		CHECK(spt_writer_close(w, &d) == 0);
		rc = spt_reader_open(path, &r, &d);
		CHECK(rc == 0 && spt_reader_info(r)->events == 0 && spt_reader_info(r)->indexed);
		const struct spt_event *ev;
		if (!rc)
			CHECK(spt_reader_next(r, &ev) == 0);
		spt_reader_close(r);
	}
	unlink(path);

	/* Missing file. */
	tmp_path(path, sizeof(path), "missing.spt");
	d.msg[0] = 0;
	rc = spt_reader_open(path, &r, &d);
	CHECK(rc == -ENOENT);
	CHECK(strstr(d.msg, "missing.spt") && strstr(d.msg, "No such file"));

	/* Empty file. */
	tmp_path(path, sizeof(path), "empty.spt");
	CHECK(spill(path, "", 0));
	d.msg[0] = 0;
	rc = spt_reader_open(path, &r, &d);
	CHECK(rc < 0);
	CHECKF(strstr(d.msg, "not a spectap trace") != NULL, "%s", d.msg);
	unlink(path);

	/* A plain zstd file. */
	tmp_path(path, sizeof(path), "plain.zst");
	const char text[] = "{\"not\": \"a trace\", \"padding\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n";
	char z[256];
	size_t zn = ZSTD_compress(z, sizeof(z), text, sizeof(text) - 1, 3);
	CHECK(!ZSTD_isError(zn));
	CHECK(spill(path, z, zn));
	d.msg[0] = 0;
	rc = spt_reader_open(path, &r, &d);
	CHECK(rc == -EBADMSG);
	CHECKF(strstr(d.msg, "not a spectap trace") != NULL, "%s", d.msg);
	unlink(path);

	/* A directory. */
	d.msg[0] = 0;
	rc = spt_reader_open(tmpdir, &r, &d);
	CHECK(rc < 0 && d.msg[0]);

	/* The writer cannot create a file in a missing directory. */
	tmp_path(path, sizeof(path), "no/such/dir.spt");
	d.msg[0] = 0;
	rc = spt_writer_open(path, &h, NULL, &w, &d);
	CHECK(rc == -ENOENT && d.msg[0]);
}

/* ---- fuzz seeds: SPT_FUZZ_SEEDS=dir writes small traces for tests/fuzz/fuzz_reader ---- */

/* Values of every kind, for the seeds to reach every decoder path. */
static spt_val *exotic_value(struct spt_arena *a)
{
	spt_val *ints[3] = { spt_int(a, -5), spt_int(a, 7), spt_int(a, 1LL << 40) };
	spt_val *keys[2] = { spt_int(a, 2), spt_int(a, 5) };
	spt_val *vals[2] = { spt_cstr(a, "two"), spt_bool(a, false) };
	static const char *const names[] = { "set", "fun", "model", "num", "empty_set", "empty_fun",
					     "empty_rec" };
	spt_val *v[7];
	v[0] = spt_set(a, ints, 3);
	v[1] = spt_fun(a, keys, vals, 2, NULL);
	v[2] = spt_model(a, "Nil");
	v[3] = spt_number_text(a, "1.5", 3);
	v[4] = spt_set(a, NULL, 0);
	v[5] = spt_empty_fun(a, SPT_FUN);
	v[6] = spt_empty_fun(a, SPT_REC);
	return spt_rec(a, names, v, 7);
}

/* The file as "SPTF" segments: every zstd data frame's content, u16 length first. */
static bool write_segments(const char *spt, const char *out)
{
	size_t len;
	uint8_t *p = slurp(spt, &len);
	FILE *f = fopen(out, "wb");
	if (!p || !f || len < 20) {
		free(p);
		if (f)
			fclose(f);
		return false;
	}
	fwrite("SPTF", 1, 4, f);
	bool ok = true;
	for (size_t off = 20; off < len && ok;) {
		size_t fl = ZSTD_findFrameCompressedSize(p + off, len - off);
		if (ZSTD_isError(fl))
			break;
		unsigned long long n = ZSTD_getFrameContentSize(p + off, fl);
		if (n != ZSTD_CONTENTSIZE_UNKNOWN && n != ZSTD_CONTENTSIZE_ERROR && n < 65536) {
			char *c = malloc(n + 1);
			size_t got = ZSTD_decompress(c, n, p + off, fl);
			ok = !ZSTD_isError(got) && got == n;
			uint8_t hdr[2] = { (uint8_t)n, (uint8_t)(n >> 8) };
			ok = ok && fwrite(hdr, 1, 2, f) == 2 && fwrite(c, 1, n, f) == n;
			free(c);
		}
		off += fl;
	}
	free(p);
	return fclose(f) == 0 && ok;
}

static bool write_seed(const char *dir, const char *name, uint64_t seed, size_t n, size_t every,
		       bool close_it)
{
	char path[512], seg[520];
	snprintf(path, sizeof(path), "%s/%s.spt", dir, name);
	snprintf(seg, sizeof(seg), "%s/%s.sptf", dir, name);
	struct gen g;
	gen_init_nodes(&g, seed, 3);
	struct spt_arena a;
	spt_arena_init(&a);
	struct spt_header h;
	gen_header(&g, &h);
	h.extra = exotic_value(&a);
	struct spt_writer_opts o = { .sz = sizeof(o), .overwrite = true, .level = 19 };
	struct spt_writer *w;
	struct spt_diag d = { "" };
	if (spt_writer_open(path, &h, &o, &w, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		struct spt_event ev;
		if (!gen_next(&g, &a, &ev))
			return false;
		if (i == 3)
			ev.args = exotic_value(&a);
		spt_writer_append(w, &ev);
		if (i == 5) {
			struct spt_loss l = { "2", "bpf", 4, 10, 13 };
			spt_writer_add_loss(w, &l);
		}
		if ((i + 1) % every == 0)
			spt_writer_flush(w);
	}
	if (close_it) {
		if (spt_writer_close(w, &d))
			return false;
	} else {
		spt_writer_flush(w);
		spt_writer_abandon(w);
	}
	spt_arena_fini(&a);
	return write_segments(path, seg);
}

static int write_fuzz_seeds(const char *dir)
{
	bool ok = write_seed(dir, "closed", 21, 14, 5, true) &&
		  write_seed(dir, "crashed", 22, 10, 4, false);
	fprintf(stderr, "fuzz seeds %s in %s\n", ok ? "written" : "NOT written", dir);
	return ok ? 0 : 1;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* SPT_TEST_TIMES=1 prints how long each test took. */
#define TIMED(stmt)                                                                                \
	do {                                                                                       \
		double t0_ = now_s();                                                              \
		stmt;                                                                              \
		if (getenv("SPT_TEST_TIMES"))                                                      \
			fprintf(stderr, "    (%.1f s)\n", now_s() - t0_);                            \
	} while (0)

int main(void)
{
	if (getenv("SPT_FUZZ_SEEDS"))
		return write_fuzz_seeds(getenv("SPT_FUZZ_SEEDS"));
	strcpy(tmpdir, "/tmp/spectap-test-trace-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	TIMED(RUN(test_round_trip));
	TIMED(RUN(test_seek));
	TIMED(RUN(test_no_index));
	TIMED(RUN(test_truncate_every_byte));
	TIMED(RUN(test_bit_flips));
	TIMED(RUN(test_damaged_chunk));
	TIMED(RUN(test_replace_and_flush));
	TIMED(RUN(test_crash));
	TIMED(RUN(test_odd_events));
	TIMED(RUN(test_seq_edits));
	TIMED(RUN(test_meta_repeats));
	TIMED(RUN(test_errors));
	rmdir(tmpdir);
	TEST_MAIN_END("test_trace");
}
