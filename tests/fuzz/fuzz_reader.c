/*
 * libFuzzer target for the trace reader: the input is taken as a whole *.spt file (kept in a
 * memfd, opened through /proc/self/fd). Whatever opens must read to the end without a crash or
 * leak, print, and seek consistently: ordinals increase (a damaged chunk is a gap of exactly the
 * events it is said to have lost), and seeking to an event's ordinal and reading gives the same
 * event as the sequential read did. A file that does not open must say why. Any broken law is an
 * abort().
 *
 * Frames carry checksums the fuzzer cannot forge, so an input may also be "SPTF" followed by
 * segments (u16 little-endian length, then the bytes): the target then builds the file itself,
 * the magic frame followed by one checksummed zstd frame per segment (the first one holds the
 * header), which lets the fuzzer reach the record decoder. Any other input is the file as is.
 *
 * Seeds (tests/fuzz/corpus/reader/) come from `SPT_FUZZ_SEEDS=dir build/tests/test_trace`:
 * small traces as files (*.spt) and as segments (*.sptf).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "spectap/trace.h"
#include "spectap/value.h"
#include "trace_frame.h"

static void die(const char *what)
{
	fprintf(stderr, "fuzz_reader: %s\n", what);
	abort();
}

static void print_val(FILE *f, spt_val *v)
{
	if (v && spt_value_print(f, v) != 0)
		die("spt_value_print failed");
	fputc('\n', f);
}

static void print_event(FILE *f, const struct spt_event *ev)
{
	if (!ev->node || !ev->source || !ev->kind)
		die("event without node, source or kind");
	fprintf(f, "%s %s %llu %llu %llu %u %s\n", ev->node, ev->source, (unsigned long long)ev->seq,
		(unsigned long long)ev->ts_ns, (unsigned long long)ev->lamport, ev->tid, ev->kind);
	print_val(f, ev->args);
	print_val(f, ev->state);
	print_val(f, ev->meta);
	if (ev->msg) {
		const struct spt_msg *m = ev->msg;
		if (!m->from || !m->to || !m->type || (m->dir != SPT_MSG_SEND && m->dir != SPT_MSG_RECV))
			die("malformed message");
		fprintf(f, "msg %llu %d %s %s %s\n", (unsigned long long)m->id, (int)m->dir, m->from,
			m->to, m->type);
		print_val(f, m->fields);
	}
}

/* What identifies the k-th event read, to check seeks against, and its ordinal. */
struct seen {
	uint64_t seq, ts, lamport, hash, ord;
};

static struct seen identify(const struct spt_event *ev)
{
	uint64_t h = spt_hash_bytes(ev->node, strlen(ev->node), 1);
	h = spt_hash_mix(h, spt_hash_bytes(ev->kind, strlen(ev->kind), 2));
	if (ev->state)
		h = spt_hash_mix(h, spt_value_hash(ev->state));
	if (ev->args)
		h = spt_hash_mix(h, spt_value_hash(ev->args));
	return (struct seen){ ev->seq, ev->ts_ns, ev->lamport, h, 0 };
}

static bool same(struct seen a, struct seen b)
{
	return a.seq == b.seq && a.ts == b.ts && a.lamport == b.lamport && a.hash == b.hash;
}

/* Seeks to the ordinal of the k-th event read (k == n: to the end). */
static void check_seek(struct spt_reader *r, const struct seen *seen, uint64_t n, uint64_t k, uint64_t end)
{
	uint64_t ord = k == n ? end : seen[k].ord;
	int rc = spt_reader_seek_event(r, ord);
	if (rc < 0)
		die("seek_event to a read event failed");
	const struct spt_event *ev;
	rc = spt_reader_next(r, &ev);
	if (k == n) {
		if (rc != 0)
			die("an event after the end");
		return;
	}
	if (rc != 1 || !same(identify(ev), seen[k]) || spt_reader_tell(r) != ord + 1)
		die("seek_event gives another event than the sequential read");
}

/* An "SPTF" input made into a file: magic frame, then a checksummed frame per segment. */
static void build_file(const uint8_t *data, size_t size, struct spt_buf *out)
{
	static ZSTD_CCtx *cctx;
	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (!cctx)
			die("ZSTD_createCCtx");
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	}
	frame_put_magic(out, SPT_FORMAT_VERSION);
	size_t pos = 4;
	while (pos + 2 <= size) {
		size_t n = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
		pos += 2;
		if (n > size - pos)
			n = size - pos;
		size_t bound = ZSTD_compressBound(n);
		if (!spt_buf_reserve(out, bound))
			die("out of memory");
		size_t k = ZSTD_compress2(cctx, out->p + out->len, bound, data + pos, n);
		if (ZSTD_isError(k))
			die("ZSTD_compress2");
		out->len += k;
		pos += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz_reader.spt", MFD_CLOEXEC);
		if (fd < 0)
			die("memfd_create");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	struct spt_buf file = { 0 };
	if (size >= 4 && !memcmp(data, "SPTF", 4)) {
		build_file(data, size, &file);
		data = (const uint8_t *)file.p;
		size = file.len;
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		die("cannot store the input");
	spt_buf_free(&file);

	struct spt_reader *r;
	struct spt_diag d = { "" };
	int rc = spt_reader_open(path, &r, &d);
	if (rc) {
		if (rc > 0 || !d.msg[0])
			die("open failed without a negative errno and a reason");
		return 0;
	}

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		die("open_memstream");

	const struct spt_header *h = spt_reader_header(r);
	fprintf(f, "%s %s %s %zu\n", h->system, h->system_version, h->writer, h->n_nodes);
	for (size_t i = 0; i < h->n_nodes; i++)
		fprintf(f, "node %s\n", h->nodes[i]);
	print_val(f, h->extra);
	const struct spt_loss *ls;
	size_t nl = spt_reader_losses(r, &ls);
	for (size_t i = 0; i < nl; i++)
		fprintf(f, "loss %s %s %llu\n", ls[i].node, ls[i].source,
			(unsigned long long)ls[i].count);

	const struct spt_trace_info *info = spt_reader_info(r);
	uint64_t announced = info->events;
	if (info->indexed == info->recovered)
		die("a trace is either indexed or recovered");
	if (info->data_bytes > info->file_bytes || info->file_bytes != size)
		die("info sizes out of range");

	/* Sequential read; the reader may find damage on the way and skip it. */
	size_t cap = 64, n = 0;
	struct seen *seen = malloc(cap * sizeof(*seen));
	if (!seen)
		die("malloc");
	const struct spt_event *ev;
	uint64_t prev_ord = 0;
	while ((rc = spt_reader_next(r, &ev)) == 1) {
		uint64_t ord = spt_reader_tell(r) - 1;
		if ((n && ord <= prev_ord) || ord >= spt_reader_info(r)->events)
			die("ordinals do not increase within the trace");
		prev_ord = ord;
		print_event(f, ev);
		if (n == cap) {
			cap *= 2;
			struct seen *s = realloc(seen, cap * sizeof(*seen));
			if (!s)
				die("realloc");
			seen = s;
		}
		seen[n] = identify(ev);
		seen[n++].ord = ord;
	}
	if (rc < 0 && rc != -ENOMEM)
		die("next failed with something else than out of memory");
	if (info->events < announced || n + info->damaged_events != info->events)
		die("events read and lost disagree with the trace info");
	if (!info->damaged && n && prev_ord + 1 != n)
		die("a gap in the ordinals of an undamaged trace");
	if (spt_reader_next(r, &ev) != 0)
		die("next after the end");

	/* Seeks to a few ordinals, and by time. */
	uint64_t end = info->events;
	check_seek(r, seen, n, 0, end);
	check_seek(r, seen, n, n, end);
	if (n) {
		check_seek(r, seen, n, n - 1, end);
		check_seek(r, seen, n, n / 2, end);
		check_seek(r, seen, n, n / 3, end);
		if (spt_reader_seek_time(r, seen[n / 2].ts) != 0)
			die("seek_time failed");
		uint64_t ord = spt_reader_tell(r), k = 0;
		while (k < n && seen[k].ord < ord)
			k++;
		if (ord > end)
			die("seek_time beyond the end");
		for (uint64_t i = 0; i < k; i++)
			if (seen[i].ts >= seen[n / 2].ts)
				die("seek_time skipped an event at or after the time");
		if (k < n && seen[k].ts < seen[n / 2].ts)
			die("seek_time stopped before the time");
	}
	if (spt_reader_seek_event(r, end + 1) == 0)
		die("seek_event beyond the end succeeded");

	free(seen);
	fclose(f);
	free(buf);
	spt_reader_close(r);
	return 0;
}
