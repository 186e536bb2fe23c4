/* template: expansion and checking of description strings (template.h). One walker does both:
 * with an output buffer it expands, without one it checks names against a list. */
#include "template.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *s;
	size_t n, cap;
};

static int put(struct out *o, const char *p, size_t n)
{
	if (!o)
		return 0;
	if (o->n + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 64;
		while (cap < o->n + n + 1)
			cap *= 2;
		char *s = realloc(o->s, cap);
		if (!s)
			return -ENOMEM;
		o->s = s;
		o->cap = cap;
	}
	memcpy(o->s + o->n, p, n);
	o->n += n;
	o->s[o->n] = 0;
	return 0;
}

struct walk {
	const char *base;              /* the whole template, for offsets */
	const struct tmpl_scope *scope; /* expanding */
	const char *const *known;       /* checking */
	size_t nknown;
	bool each_ok;
	char *err;
	size_t err_off;
};

static int bad(struct walk *w, const char *at, const char *fmt, const char *name, size_t len)
{
	w->err_off = (size_t)(at - w->base);
	snprintf(w->err, TMPL_ERR_SIZE, fmt, (int)len, name);
	return -EINVAL;
}

static bool known(const struct walk *w, const char *name, size_t len)
{
	for (size_t i = 0; i < w->nknown; i++) {
		size_t k = strlen(w->known[i]);
		if (k && w->known[i][k - 1] == '.' ? len > k && !strncmp(name, w->known[i], k)
						    : k == len && !strncmp(name, w->known[i], len))
			return true;
	}
	return false;
}

/* The '}' closing the placeholder that starts at p (just after "${"), nesting included. */
static const char *closing(const char *p)
{
	unsigned depth = 1;
	for (; *p; p++) {
		if (p[0] == '$' && p[1] == '{') {
			depth++;
			p++;
		} else if (*p == '}' && --depth == 0) {
			return p;
		}
	}
	return NULL;
}

static int walk(struct walk *w, const char *t, size_t len, long node, struct out *o);

static int variable(struct walk *w, const char *name, size_t len, long node, bool length, struct out *o)
{
	static const char ok_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
	const char *at = memchr(name, '@', len);
	size_t vlen = len; /* the variable's name, without @K */
	if (at) { /* NAME@K: node K's (1-based) */
		char *end;
		unsigned long k = strtoul(at + 1, &end, 10);
		if (at + 1 == name + len || end != name + len || !k || (w->scope && k > w->scope->nnodes))
			return bad(w, name, "'%.*s': @ takes a node's number (1 to the number of nodes)", name, len);
		node = (long)k - 1;
		vlen = (size_t)(at - name);
	}
	if (!vlen || strspn(name, ok_chars) < vlen)
		return bad(w, name, "'%.*s' is not a variable name", name, len);
	if (!w->scope)
		return known(w, name, vlen) ? 0 : bad(w, name, "unknown variable '%.*s'", name, len);
	const char *v = w->scope->lookup(w->scope->ctx, node, name, vlen);
	if (!v)
		return bad(w, name, "variable '%.*s' has no value here", name, len);
	if (!length)
		return put(o, v, strlen(v));
	char num[24];
	return put(o, num, (size_t)snprintf(num, sizeof(num), "%zu", strlen(v)));
}

static int each(struct walk *w, const char *body, size_t len, struct out *o)
{
	const char *sep = body, *colon = memchr(body, ':', len);
	if (!colon)
		return bad(w, body, "${each:SEP:TEXT} needs a separator and a text: '%.*s'", body, len);
	size_t seplen = (size_t)(colon - sep);
	const char *text = colon + 1;
	size_t tlen = len - seplen - 1;
	if (!w->scope) {
		if (!w->each_ok)
			return bad(w, body - 7, "%.*s${each} is not allowed here", "", 0);
		return walk(w, text, tlen, -1, NULL);
	}
	if (!w->scope->nnodes)
		return bad(w, body - 7, "%.*s${each} is not allowed here", "", 0);
	for (size_t k = 0; k < w->scope->nnodes; k++) {
		int r;
		if (k && (r = put(o, sep, seplen)))
			return r;
		if ((r = walk(w, text, tlen, (long)k, o)))
			return r;
	}
	return 0;
}

/* The '|' at the top level of t (not inside a nested placeholder), or NULL. */
static const char *top_bar(const char *t, const char *end)
{
	unsigned depth = 0;
	for (const char *p = t; p < end; p++) {
		if (p[0] == '$' && p + 1 < end && p[1] == '{') {
			depth++;
			p++;
		} else if (*p == '}' && depth) {
			depth--;
		} else if (*p == '|' && !depth) {
			return p;
		}
	}
	return NULL;
}

/* ${first|TEXT|OTHER}: TEXT for the first node, OTHER for the rest. */
static int first(struct walk *w, const char *body, size_t len, long node, struct out *o)
{
	const char *end = body + len, *bar = top_bar(body, end);
	if (!bar)
		return bad(w, body, "${first|TEXT|OTHER} needs two texts: '%.*s'", body, len);
	if (!w->scope) {
		int r = walk(w, body, (size_t)(bar - body), node, NULL);
		return r ? r : walk(w, bar + 1, (size_t)(end - bar - 1), node, NULL);
	}
	if (node < 0)
		return bad(w, body, "%.*s${first|...} is only for a node's strings", "", 0);
	return node == 0 ? walk(w, body, (size_t)(bar - body), node, o) : walk(w, bar + 1, (size_t)(end - bar - 1), node, o);
}

static int walk(struct walk *w, const char *t, size_t len, long node, struct out *o)
{
	const char *end = t + len;
	int r;

	while (t < end) {
		const char *d = memchr(t, '$', (size_t)(end - t));
		if (!d)
			return put(o, t, (size_t)(end - t));
		if ((r = put(o, t, (size_t)(d - t))))
			return r;
		if (d + 1 < end && d[1] == '$') {
			if ((r = put(o, "$", 1)))
				return r;
			t = d + 2;
			continue;
		}
		if (d + 1 >= end || d[1] != '{')
			return bad(w, d, "a '$' must start ${name}, ${#name} or ${each:...}, or be doubled: '%.*s'", d,
				   (size_t)(end - d) < 12 ? (size_t)(end - d) : 12);
		const char *body = d + 2, *close = closing(body);
		if (!close || close >= end)
			return bad(w, d, "'%.*s' is not closed by '}'", d, (size_t)(end - d) < 24 ? (size_t)(end - d) : 24);
		size_t blen = (size_t)(close - body);
		if (blen >= 5 && !strncmp(body, "each:", 5))
			r = each(w, body + 5, blen - 5, o);
		else if (blen >= 6 && !strncmp(body, "first|", 6))
			r = first(w, body + 6, blen - 6, node, o);
		else if (blen >= 1 && body[0] == '#')
			r = variable(w, body + 1, blen - 1, node, true, o);
		else
			r = variable(w, body, blen, node, false, o);
		if (r)
			return r;
		t = close + 1;
	}
	return 0;
}

int tmpl_expand(const char *t, const struct tmpl_scope *s, char **out, char *err)
{
	struct walk w = { .base = t, .scope = s, .err = err };
	struct out o = { 0 };
	int r = walk(&w, t, strlen(t), s->node, &o);

	if (!r && !o.s)
		r = put(&o, "", 0);
	if (r) {
		if (r == -EINVAL) {
			size_t k = strlen(err);
			snprintf(err + k, TMPL_ERR_SIZE - k, " (at byte %zu)", w.err_off);
		}
		free(o.s);
		*out = NULL;
		return r;
	}
	*out = o.s;
	return 0;
}

int tmpl_check(const char *t, const char *const *names, size_t nknown, bool each_ok, char *err, size_t *err_off)
{
	struct walk w = { .base = t, .known = names, .nknown = nknown, .each_ok = each_ok, .err = err };
	int r = walk(&w, t, strlen(t), -1, NULL);
	if (err_off)
		*err_off = w.err_off;
	return r;
}
