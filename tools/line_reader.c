/* The lines of a text, in memory or read a block at a time (line_reader.h). */
#include "line_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK ((size_t)1 << 20)

void line_reader_mem(struct line_reader *r, const char *text, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->mem = text;
	r->mem_len = len;
}

int line_reader_file(struct line_reader *r, const char *path, size_t from, size_t to)
{
	memset(r, 0, sizeof(*r));
	r->off = from;
	r->end = to;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	return 0;
}

/* Reads more after buf[pos, len), moved to the front (the buffer doubled when a line fills it). */
static int fill(struct line_reader *r)
{
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : BLOCK;
		char *b = realloc(r->buf, cap);
		if (!b)
			return -ENOMEM;
		r->buf = b;
		r->cap = cap;
	}
	size_t want = r->cap - r->len;
	if (want > r->end - r->off)
		want = r->end - r->off;
	for (;;) {
		ssize_t k = want ? pread(r->fd, r->buf + r->len, want, (off_t)r->off) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			r->eof = true;
		r->len += (size_t)k;
		r->off += (size_t)k;
		return 0;
	}
}

int line_reader_next(struct line_reader *r, const char **line, size_t *n)
{
	if (r->fd < 0) {
		if (r->pos >= r->mem_len)
			return 0;
		const char *p = r->mem + r->pos, *nl = memchr(p, '\n', r->mem_len - r->pos);
		*line = p;
		*n = nl ? (size_t)(nl - p) : r->mem_len - r->pos;
		r->pos += *n + (nl ? 1 : 0);
		return 1;
	}
	for (size_t from = r->pos;;) {
		const char *nl = r->len > from ? memchr(r->buf + from, '\n', r->len - from) : NULL;
		if (nl || (r->eof && r->pos < r->len)) {
			*line = r->buf + r->pos;
			*n = nl ? (size_t)(nl - *line) : r->len - r->pos;
			r->pos += *n + (nl ? 1 : 0);
			return 1;
		}
		if (r->eof)
			return 0;
		from = r->len - r->pos; /* where the search stopped, once the rest is moved to the front */
		int rc = fill(r);
		if (rc)
			return rc;
	}
}

void line_reader_close(struct line_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int line_reader_count(const char *path, size_t from, size_t to, uint64_t *n)
{
	struct line_reader r;
	int rc = line_reader_file(&r, path, from, to);
	*n = 0;
	while (!rc && !r.eof) {
		r.pos = r.len; /* nothing kept: the block is read over */
		if (!(rc = fill(&r)))
			for (const char *p = r.buf, *end = r.buf + r.len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
				++*n;
	}
	line_reader_close(&r);
	return rc;
}
