/* The collector's spool of raw records (spool.h). */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD_BYTES offsetof(struct uprobe_event, val)
#define FRAME_MAX (4 + 1 + 2 + sizeof(struct uprobe_event_full) + 4)
#define READ_CHUNK (1u << 20)
#define COMMIT_AT (1u << 20) /* the writer's buffer is written out at least this often */
#define PUNCH_AT (4u << 20)  /* bytes read before they are given back to the file system */

struct spool {
	int fd;
	/* writer */
	uint8_t *wbuf;
	size_t wlen, wcap;
	uint64_t wfile; /* bytes written to the file */
	_Atomic uint64_t committed;
	_Atomic uint64_t frames_written;
	uint64_t frames_buffered;
	/* reader */
	uint8_t *rbuf;
	size_t rlen, rpos; /* bytes in rbuf, next frame at rpos */
	uint64_t roff;     /* file offset of rbuf[rlen] */
	uint64_t punched;  /* bytes from the start given back (a hole) */
	_Atomic uint64_t frames_read, bytes_read;
	struct uprobe_event_full scratch;
	char err[256];
};

static int fail(struct spool *s, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct spool *s, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return e;
}

const char *spool_error(const struct spool *s) { return s ? s->err : ""; }

static int open_unnamed(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	char path[4096];

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
		return fd;
	/* A file system without O_TMPFILE: a named file, unlinked at once. */
	if (snprintf(path, sizeof(path), "%s/.spectap-spool-XXXXXX", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int spool_open(const char *dir, struct spool **out, char *err, size_t errlen)
{
	struct spool *s = calloc(1, sizeof(*s));
	int e;

	*out = NULL;
	if (!s || !(s->rbuf = malloc(READ_CHUNK + FRAME_MAX))) {
		e = -ENOMEM;
		snprintf(err, errlen, "spool: out of memory");
		goto fail;
	}
	s->fd = open_unnamed(dir && *dir ? dir : "/tmp");
	if (s->fd < 0) {
		e = -errno;
		snprintf(err, errlen, "spool: cannot create a temporary file in %s: %s (name a writable directory)",
			 dir && *dir ? dir : "/tmp", strerror(errno));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s)
		free(s->rbuf);
	free(s);
	return e;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->wbuf);
	free(s->rbuf);
	free(s);
}

/* ---- writer --------------------------------------------------------------------------------- */

static uint8_t *frame_begin(struct spool *s, uint8_t kind, size_t max_payload)
{
	size_t need = s->wlen + 5 + max_payload;

	if (need > s->wcap) {
		size_t cap = s->wcap ? s->wcap : 64 * 1024;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(s->wbuf, cap);
		if (!p)
			return NULL;
		s->wbuf = p;
		s->wcap = cap;
	}
	s->wbuf[s->wlen + 4] = kind;
	return s->wbuf + s->wlen + 5;
}

static int frame_end(struct spool *s, size_t payload)
{
	uint32_t len = (uint32_t)(1 + payload);

	memcpy(s->wbuf + s->wlen, &len, 4);
	s->wlen += 4 + len;
	s->frames_buffered++;
	return s->wlen >= COMMIT_AT ? spool_commit(s) : 0;
}

static bool all_zero(const uint8_t *b)
{
	uint64_t acc = 0, w;

	for (size_t i = 0; i < UPROBE_MAX_BLOCK; i += 8) {
		memcpy(&w, b + i, 8);
		acc |= w;
	}
	return acc == 0;
}

int spool_add_record(struct spool *s, const struct uprobe_event *ev, size_t size)
{
	bool full = size == sizeof(struct uprobe_event_full);
	unsigned n = ev->nreads > UPROBE_MAX_READS ? UPROBE_MAX_READS : ev->nreads;
	uint16_t sz = (uint16_t)size;
	uint8_t *p, *q;

	if (size != sizeof(struct uprobe_event) && !full)
		return fail(s, -EPROTO, "spool: a record of %zu bytes is neither compact nor full", size);
	if (!(p = frame_begin(s, SPOOL_RECORD, 2 + sizeof(struct uprobe_event_full) + 4)))
		return fail(s, -ENOMEM, "spool: out of memory");
	q = p;
	memcpy(q, &sz, 2);
	q += 2;
	memcpy(q, ev, HEAD_BYTES);
	q += HEAD_BYTES;
	memcpy(q, ev->val, n * 8u);
	q += n * 8u;
	if (full) {
		const struct uprobe_event_full *f = (const void *)ev;
		uint8_t *maskp = q;
		uint32_t mask = 0;

		q += 4;
		for (unsigned i = 0; i < UPROBE_MAX_READS; i++) {
			if (all_zero(f->block[i]))
				continue;
			mask |= 1u << i;
			memcpy(q, f->block[i], UPROBE_MAX_BLOCK);
			q += UPROBE_MAX_BLOCK;
		}
		memcpy(maskp, &mask, 4);
	}
	return frame_end(s, (size_t)(q - p));
}

int spool_add_tick(struct spool *s)
{
	if (!frame_begin(s, SPOOL_TICK, 0))
		return fail(s, -ENOMEM, "spool: out of memory");
	return frame_end(s, 0);
}

int spool_add_node(struct spool *s, int pid, const char *node)
{
	size_t n = strlen(node);
	int32_t p32 = pid;
	uint8_t *p;

	if (n > 4096)
		return fail(s, -EINVAL, "spool: node name of %zu bytes is too long", n);
	if (!(p = frame_begin(s, SPOOL_NODE, 4 + n)))
		return fail(s, -ENOMEM, "spool: out of memory");
	memcpy(p, &p32, 4);
	memcpy(p + 4, node, n);
	return frame_end(s, 4 + n);
}

int spool_commit(struct spool *s)
{
	size_t done = 0;

	while (done < s->wlen) {
		ssize_t w = pwrite(s->fd, s->wbuf + done, s->wlen - done, (off_t)(s->wfile + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(s, w < 0 ? -errno : -EIO, "spool: writing %zu bytes: %s (is the disk full?)",
				    s->wlen - done, w < 0 ? strerror(errno) : "nothing written");
		done += (size_t)w;
	}
	s->wfile += s->wlen;
	s->wlen = 0;
	atomic_fetch_add(&s->frames_written, s->frames_buffered);
	s->frames_buffered = 0;
	atomic_store_explicit(&s->committed, s->wfile, memory_order_release);
	return 0;
}

uint64_t spool_committed(const struct spool *s)
{
	return atomic_load_explicit(&((struct spool *)s)->committed, memory_order_acquire);
}

/* ---- reader --------------------------------------------------------------------------------- */

/* Frees the disk (or, on tmpfs, the memory) of what was read: the spool then holds only the
 * backlog, however long the capture. Best effort: a file system without holes keeps it all. */
static void give_back(struct spool *s)
{
	uint64_t upto = (s->roff - s->rlen) & ~(uint64_t)(PUNCH_AT - 1);

	if (upto >= s->punched + PUNCH_AT &&
	    fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->punched,
		      (off_t)(upto - s->punched)) == 0)
		s->punched = upto;
}

/* Refills rbuf with published bytes after what it holds; returns the bytes added or -errno. */
static int refill(struct spool *s)
{
	uint64_t end = spool_committed(s);
	size_t keep = s->rlen - s->rpos, want;
	ssize_t r;

	memmove(s->rbuf, s->rbuf + s->rpos, keep);
	s->rlen = keep;
	s->rpos = 0;
	if (end <= s->roff)
		return 0;
	want = READ_CHUNK + FRAME_MAX - keep;
	if (end - s->roff < want)
		want = (size_t)(end - s->roff);
	do
		r = pread(s->fd, s->rbuf + keep, want, (off_t)s->roff);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return fail(s, -errno, "spool: reading at byte %" PRIu64 ": %s", s->roff, strerror(errno));
	s->rlen += (size_t)r;
	s->roff += (uint64_t)r;
	give_back(s);
	return (int)r;
}

static int decode_record(struct spool *s, const uint8_t *p, size_t len, uint64_t at, struct spool_frame *f)
{
	struct uprobe_event *ev = &s->scratch.ev;
	const uint8_t *end = p + len;
	uint16_t sz;
	unsigned n;

	if (len < 2 + HEAD_BYTES)
		goto bad;
	memcpy(&sz, p, 2);
	p += 2;
	if (sz != sizeof(struct uprobe_event) && sz != sizeof(struct uprobe_event_full))
		goto bad;
	memset(&s->scratch, 0, sz);
	memcpy(ev, p, HEAD_BYTES);
	p += HEAD_BYTES;
	n = ev->nreads > UPROBE_MAX_READS ? UPROBE_MAX_READS : ev->nreads;
	if ((size_t)(end - p) < n * 8u)
		goto bad;
	memcpy(ev->val, p, n * 8u);
	p += n * 8u;
	if (sz == sizeof(struct uprobe_event_full)) {
		uint32_t mask;

		if (end - p < 4)
			goto bad;
		memcpy(&mask, p, 4);
		p += 4;
		for (unsigned i = 0; i < UPROBE_MAX_READS; i++) {
			if (!(mask & (1u << i)))
				continue;
			if (end - p < UPROBE_MAX_BLOCK)
				goto bad;
			memcpy(s->scratch.block[i], p, UPROBE_MAX_BLOCK);
			p += UPROBE_MAX_BLOCK;
		}
	}
	if (p != end)
		goto bad;
	f->ev = ev;
	f->size = sz;
	return 0;
bad:
	return fail(s, -EPROTO, "spool: malformed record frame at byte %" PRIu64 " (%zu bytes)", at, len);
}

int spool_read(struct spool *s, size_t max, spool_frame_fn fn, void *ctx)
{
	char name[4097];
	int count = 0;

	if (max == 0 || max > INT_MAX)
		max = INT_MAX; /* the count is an int: "all" is read in bites of this many */
	for (;;) {
		uint64_t at = 0;
		uint32_t len = 0;
		struct spool_frame f = {0};
		const uint8_t *p;
		int r;

		if ((size_t)count >= max)
			return count;
		if (s->rlen - s->rpos >= 4) {
			memcpy(&len, s->rbuf + s->rpos, 4);
			at = s->roff - (s->rlen - s->rpos);
			if (len < 1 || len > FRAME_MAX)
				return fail(s, -EPROTO, "spool: frame of %" PRIu32 " bytes at byte %" PRIu64, len, at);
		}
		if (s->rlen - s->rpos < 4 || s->rlen - s->rpos < 4 + (size_t)len) {
			r = refill(s);
			if (r < 0)
				return r;
			if (r == 0)
				return count;
			continue;
		}
		p = s->rbuf + s->rpos + 4;
		f.kind = p[0];
		switch (f.kind) {
		case SPOOL_RECORD:
			if ((r = decode_record(s, p + 1, len - 1, at, &f)))
				return r;
			break;
		case SPOOL_TICK:
			break;
		case SPOOL_NODE:
			if (len < 5 || len - 5 >= sizeof(name))
				return fail(s, -EPROTO, "spool: malformed node frame at byte %" PRIu64, at);
			memcpy(&f.pid, p + 1, 4);
			memcpy(name, p + 5, len - 5);
			name[len - 5] = '\0';
			f.node = name;
			break;
		default:
			return fail(s, -EPROTO, "spool: unknown frame kind %u at byte %" PRIu64, p[0], at);
		}
		s->rpos += 4 + (size_t)len;
		atomic_fetch_add(&s->frames_read, 1);
		atomic_fetch_add(&s->bytes_read, 4 + (uint64_t)len);
		if ((r = fn(ctx, &f)))
			return r;
		count++;
	}
}

uint64_t spool_disk_bytes(const struct spool *s)
{
	struct stat st;

	return fstat(s->fd, &st) ? 0 : (uint64_t)st.st_blocks * 512u;
}

void spool_stats(const struct spool *s, struct spool_stats *out)
{
	struct spool *m = (struct spool *)s;

	out->frames_written = atomic_load(&m->frames_written);
	out->bytes_written = spool_committed(s);
	out->frames_read = atomic_load(&m->frames_read);
	out->bytes_read = atomic_load(&m->bytes_read);
}
