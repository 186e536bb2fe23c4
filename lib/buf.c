#include "spectap/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spt_buf_free(struct spt_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

bool spt_buf_reserve(struct spt_buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->cap - b->len > n)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len <= n) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void spt_buf_put(struct spt_buf *b, const void *p, size_t n)
{
	if (!spt_buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void spt_buf_putc(struct spt_buf *b, char c) { spt_buf_put(b, &c, 1); }
void spt_buf_puts(struct spt_buf *b, const char *s) { spt_buf_put(b, s, strlen(s)); }

void spt_buf_printf(struct spt_buf *b, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		spt_buf_put(b, small, (size_t)n);
		return;
	}
	if (!spt_buf_reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), 0 when it is not one. */
size_t spt_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < len; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	return len;
}

bool spt_utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t u = (unsigned char)s[i] < 0x80 ? 1 : spt_utf8_len((const unsigned char *)s + i, n - i);
		if (!u)
			return false;
		i += u;
	}
	return true;
}

void spt_buf_json_str(struct spt_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	if (!spt_buf_reserve(b, n + 2))
		return;
	spt_buf_putc(b, '"');
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) {
			size_t u = spt_utf8_len((const unsigned char *)s + i, n - i);
			if (u) {
				i += u - 1;
				continue;
			}
		} else if (c >= 0x20 && c != '"' && c != '\\') {
			continue;
		}
		spt_buf_put(b, s + start, i - start);
		start = i + 1;
		switch (c) {
		case '"': spt_buf_put(b, "\\\"", 2); break;
		case '\\': spt_buf_put(b, "\\\\", 2); break;
		case '\n': spt_buf_put(b, "\\n", 2); break;
		case '\t': spt_buf_put(b, "\\t", 2); break;
		case '\r': spt_buf_put(b, "\\r", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			spt_buf_put(b, u, 6);
		}
		}
	}
	spt_buf_put(b, s + start, n - start);
	spt_buf_putc(b, '"');
}
