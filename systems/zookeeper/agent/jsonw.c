/* The agent's JSON writer; see jsonw.h. */
#include "jsonw.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(struct jw *w, char *buf, size_t size)
{
	w->p = buf;
	w->cap = buf ? size : 0;
	w->n = 0;
	w->heap = false;
	w->oom = false;
	if (w->p && w->cap)
		w->p[0] = '\0';
}

void jw_free(struct jw *w)
{
	if (w->heap)
		free(w->p);
	w->p = NULL;
	w->n = w->cap = 0;
	w->heap = false;
}

void jw_reset(struct jw *w)
{
	w->n = 0;
	w->oom = false;
	if (w->p && w->cap)
		w->p[0] = '\0';
}

/* Room for need more bytes and a NUL. */
static bool grow(struct jw *w, size_t need)
{
	if (w->oom)
		return false;
	if (w->n + need + 1 <= w->cap)
		return true;
	size_t cap = w->cap ? w->cap : 256;
	while (cap < w->n + need + 1) {
		if (cap > SIZE_MAX / 2) {
			w->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *np;
	if (w->heap) {
		np = realloc(w->p, cap);
	} else {
		np = malloc(cap);
		if (np && w->n)
			memcpy(np, w->p, w->n);
	}
	if (!np) {
		w->oom = true;
		return false;
	}
	w->p = np;
	w->cap = cap;
	w->heap = true;
	return true;
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
	if (!grow(w, n))
		return;
	memcpy(w->p + w->n, s, n);
	w->n += n;
	w->p[w->n] = '\0';
}

void jw_rawz(struct jw *w, const char *s) { jw_raw(w, s, strlen(s)); }

static void sep(struct jw *w)
{
	if (w->n == 0)
		return;
	char c = w->p[w->n - 1];
	if (c != '{' && c != '[' && c != ':')
		jw_raw(w, ",", 1);
}

void jw_str(struct jw *w, const char *s, size_t n)
{
	sep(w);
	if (!grow(w, n + 2))
		return;
	w->p[w->n++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		const char *e = NULL;
		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:
			if (c < 0x20) {
				snprintf(esc, sizeof esc, "\\u%04x", c);
				e = esc;
			}
		}
		if (e) {
			jw_raw(w, e, strlen(e));
		} else {
			if (!grow(w, 1))
				return;
			w->p[w->n++] = (char)c;
		}
	}
	if (!grow(w, 1))
		return;
	w->p[w->n++] = '"';
	w->p[w->n] = '\0';
}

void jw_strz(struct jw *w, const char *s) { jw_str(w, s, strlen(s)); }

void jw_obj(struct jw *w)
{
	sep(w);
	jw_raw(w, "{", 1);
}

void jw_end_obj(struct jw *w) { jw_raw(w, "}", 1); }

void jw_key(struct jw *w, const char *k)
{
	jw_strz(w, k);
	jw_raw(w, ":", 1);
}

void jw_i64(struct jw *w, int64_t v)
{
	char b[24];
	sep(w);
	jw_raw(w, b, (size_t)snprintf(b, sizeof b, "%" PRId64, v));
}

void jw_u64(struct jw *w, uint64_t v)
{
	char b[24];
	sep(w);
	jw_raw(w, b, (size_t)snprintf(b, sizeof b, "%" PRIu64, v));
}

void jw_null(struct jw *w)
{
	sep(w);
	jw_raw(w, "null", 4);
}

void jw_bool(struct jw *w, bool b)
{
	sep(w);
	jw_rawz(w, b ? "true" : "false");
}

void jw_kv_i64(struct jw *w, const char *k, int64_t v)
{
	jw_key(w, k);
	jw_i64(w, v);
}

void jw_kv_str(struct jw *w, const char *k, const char *v)
{
	jw_key(w, k);
	if (v)
		jw_strz(w, v);
	else
		jw_null(w);
}

void jw_kv_raw(struct jw *w, const char *k, const char *json, size_t n)
{
	jw_key(w, k);
	jw_raw(w, json, n);
}
