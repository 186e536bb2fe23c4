/* The lines of a text: in memory, or read from a file a block at a time. On this kind of VM
 * a mapped file costs a page fault per 64 KB when first read, about twice what read()
 * costs: a big windows file read once from start to end is read. */
#ifndef SPECTAP_LINE_READER_H
#define SPECTAP_LINE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct line_reader {
	int fd;              /* -1: the lines of mem */
	const char *mem;
	size_t mem_len;
	size_t off, end;     /* the file's bytes [off, end) are still to be read */
	char *buf;           /* what was read: buf[pos, len) not returned yet */
	size_t cap, pos, len;
	bool eof;
};

void line_reader_mem(struct line_reader *r, const char *text, size_t len);
/* The lines of bytes [from, to) of the file at path (to: SIZE_MAX for its end). 0, or -errno. */
int line_reader_file(struct line_reader *r, const char *path, size_t from, size_t to);
/* The next line, without its '\n' (valid until the next call): 1; 0 at the end; -errno when
 * the file cannot be read or its line not held. */
int line_reader_next(struct line_reader *r, const char **line, size_t *n);
void line_reader_close(struct line_reader *r);
/* The '\n' among bytes [from, to) of the file at path, in *n. 0, or -errno. */
int line_reader_count(const char *path, size_t from, size_t to, uint64_t *n);

#endif
