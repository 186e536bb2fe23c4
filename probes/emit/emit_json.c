/* spt_jw: a small JSON writer into a fixed buffer, for building emit records. See
 * include/spectap/emit.h. */
#include "spectap/emit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void fail(struct spt_jw *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void put(struct spt_jw *w, const char *s, size_t n)
{
	if (w->err)
		return;
	/* One byte stays free for the terminating NUL. */
	if (n >= w->cap - w->len) {
		fail(w, -ENOBUFS);
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void putc1(struct spt_jw *w, char c)
{
	put(w, &c, 1);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. Rejects overlong forms,
 * surrogates and code points above U+10FFFF (RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t k;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

static void put_escaped_byte(struct spt_jw *w, unsigned char c)
{
	char u[8];

	switch (c) {
	case '"': put(w, "\\\"", 2); return;
	case '\\': put(w, "\\\\", 2); return;
	case '\n': put(w, "\\n", 2); return;
	case '\r': put(w, "\\r", 2); return;
	case '\t': put(w, "\\t", 2); return;
	case '\b': put(w, "\\b", 2); return;
	case '\f': put(w, "\\f", 2); return;
	default:
		snprintf(u, sizeof(u), "\\u%04x", c);
		put(w, u, 6);
	}
}

/* A quoted, escaped UTF-8 string. */
static void put_string(struct spt_jw *w, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	putc1(w, '"');
	while (i < n && !w->err) {
		unsigned char c = p[i];
		size_t k;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			k = utf8_len(p + i, n - i);
			if (!k) {
				fail(w, -EILSEQ);
				return;
			}
			i += k;
			continue;
		}
		put(w, s + run, i - run);
		put_escaped_byte(w, c);
		run = ++i;
	}
	put(w, s + run, n - run);
	putc1(w, '"');
}

/* A quoted string from UTF-16 code units, written as UTF-8. */
static void put_string16(struct spt_jw *w, const uint16_t *s, size_t n)
{
	putc1(w, '"');
	for (size_t i = 0; i < n && !w->err; i++) {
		uint32_t cp = s[i];
		char u[4];

		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (i + 1 >= n || s[i + 1] < 0xdc00 || s[i + 1] > 0xdfff) {
				fail(w, -EILSEQ);
				return;
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (uint32_t)(s[++i] - 0xdc00);
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			fail(w, -EILSEQ);
			return;
		}
		if (cp < 0x80) {
			if (cp < 0x20 || cp == '"' || cp == '\\')
				put_escaped_byte(w, (unsigned char)cp);
			else
				putc1(w, (char)cp);
		} else if (cp < 0x800) {
			u[0] = (char)(0xc0 | cp >> 6);
			u[1] = (char)(0x80 | (cp & 0x3f));
			put(w, u, 2);
		} else if (cp < 0x10000) {
			u[0] = (char)(0xe0 | cp >> 12);
			u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
			u[2] = (char)(0x80 | (cp & 0x3f));
			put(w, u, 3);
		} else {
			u[0] = (char)(0xf0 | cp >> 18);
			u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
			u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
			u[3] = (char)(0x80 | (cp & 0x3f));
			put(w, u, 4);
		}
	}
	putc1(w, '"');
}

/* Before a value: the comma and the key its container wants. */
static void member(struct spt_jw *w, const char *key)
{
	if (w->err)
		return;
	if (w->depth == 0) {
		if (key || w->done)
			fail(w, -EINVAL);
		return;
	}
	uint32_t bit = 1u << (w->depth - 1);
	bool in_array = w->array & bit;

	if (in_array ? key != NULL : key == NULL) {
		fail(w, -EINVAL);
		return;
	}
	if (w->any & bit)
		putc1(w, ',');
	w->any |= bit;
	if (key) {
		put_string(w, key, strlen(key));
		putc1(w, ':');
	}
}

/* After a complete value at depth 0. */
static void value_done(struct spt_jw *w)
{
	if (!w->err && w->depth == 0)
		w->done = true;
}

void spt_jw_init(struct spt_jw *w, char *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	if (!buf || !cap)
		w->err = -ENOBUFS;
	else
		buf[0] = 0;
}

static void open_level(struct spt_jw *w, const char *key, bool array)
{
	member(w, key);
	if (w->err)
		return;
	if (w->depth >= SPT_JW_MAX_DEPTH) {
		fail(w, -E2BIG);
		return;
	}
	putc1(w, array ? '[' : '{');
	if (w->err)
		return;
	uint32_t bit = 1u << w->depth;
	w->depth++;
	w->any &= ~bit;
	if (array)
		w->array |= bit;
	else
		w->array &= ~bit;
}

static void close_level(struct spt_jw *w, bool array)
{
	if (w->err)
		return;
	if (w->depth == 0 || !(w->array & (1u << (w->depth - 1))) != !array) {
		fail(w, -EINVAL);
		return;
	}
	putc1(w, array ? ']' : '}');
	if (w->err)
		return;
	w->depth--;
	value_done(w);
}

void spt_jw_begin(struct spt_jw *w, const char *key)
{
	open_level(w, key, false);
}

void spt_jw_end(struct spt_jw *w)
{
	close_level(w, false);
}

void spt_jw_begin_array(struct spt_jw *w, const char *key)
{
	open_level(w, key, true);
}

void spt_jw_end_array(struct spt_jw *w)
{
	close_level(w, true);
}

void spt_jw_strn(struct spt_jw *w, const char *key, const char *s, size_t n)
{
	if (!s) {
		fail(w, -EINVAL);
		return;
	}
	member(w, key);
	put_string(w, s, n);
	value_done(w);
}

void spt_jw_str(struct spt_jw *w, const char *key, const char *s)
{
	spt_jw_strn(w, key, s, s ? strlen(s) : 0);
}

void spt_jw_str16(struct spt_jw *w, const char *key, const uint16_t *s, size_t n)
{
	if (!s && n) {
		fail(w, -EINVAL);
		return;
	}
	member(w, key);
	put_string16(w, s, n);
	value_done(w);
}

void spt_jw_int(struct spt_jw *w, const char *key, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	member(w, key);
	put(w, num, (size_t)n);
	value_done(w);
}

void spt_jw_bool(struct spt_jw *w, const char *key, bool v)
{
	member(w, key);
	put(w, v ? "true" : "false", v ? 4 : 5);
	value_done(w);
}

void spt_jw_null(struct spt_jw *w, const char *key)
{
	member(w, key);
	put(w, "null", 4);
	value_done(w);
}

int spt_jw_finish(struct spt_jw *w, size_t *len)
{
	if (!w->err && (w->depth || !w->done))
		w->err = -EINVAL;
	*len = 0;
	if (w->err) {
		if (w->buf && w->cap)
			w->buf[0] = 0;
		return w->err;
	}
	w->buf[w->len] = 0;
	*len = w->len;
	return 0;
}
