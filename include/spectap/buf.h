/* Growable byte buffer for encoders. On allocation failure it sets oom and drops further output. */
#ifndef SPECTAP_BUF_H
#define SPECTAP_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spt_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void spt_buf_free(struct spt_buf *b);
static inline void spt_buf_clear(struct spt_buf *b) { b->len = 0; b->oom = false; }
/* Makes room for n more bytes; false on out of memory. */
bool spt_buf_reserve(struct spt_buf *b, size_t n);
void spt_buf_put(struct spt_buf *b, const void *p, size_t n);
void spt_buf_putc(struct spt_buf *b, char c);
void spt_buf_puts(struct spt_buf *b, const char *s);
void spt_buf_printf(struct spt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629), 0 when it is not one. */
size_t spt_utf8_len(const unsigned char *s, size_t n);
/* Whether s[0..n) is UTF-8 throughout. */
bool spt_utf8_valid(const char *s, size_t n);
/* A JSON string literal, with quotes and escapes; a byte that is not UTF-8 (JSON text must be)
 * is written as \u00XX, the code point of its value. */
void spt_buf_json_str(struct spt_buf *b, const char *s, size_t n);

#endif
