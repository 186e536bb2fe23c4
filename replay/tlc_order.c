/* TLC's value order (tlc_order.h): tokens for texts, and comparison and sorting by them. */
#include "tlc_order.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the token table: text -> token, one per process, as TLC's intern table ---- */

struct token_slot {
	char *text; /* NULL: empty slot */
	uint32_t len, token;
	uint64_t hash;
};

static struct {
	pthread_mutex_t lock;
	struct token_slot *slots;
	uint32_t cap, n;
} table = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

static uint64_t text_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int table_grow(void)
{
	uint32_t cap = table.cap ? table.cap * 2 : 1024;
	struct token_slot *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < table.cap; i++) {
		if (!table.slots[i].text)
			continue;
		uint32_t j = (uint32_t)table.slots[i].hash & (cap - 1);
		while (n[j].text)
			j = (j + 1) & (cap - 1);
		n[j] = table.slots[i];
	}
	free(table.slots);
	table.slots = n;
	table.cap = cap;
	return 0;
}

/* The caller holds the lock. */
static int note_locked(const char *text, size_t len, uint32_t *token)
{
	if (len > UINT32_MAX)
		return -EINVAL;
	if ((table.n + 1) * 2 > table.cap && table_grow())
		return -ENOMEM;
	uint64_t h = text_hash(text, len);
	uint32_t j = (uint32_t)h & (table.cap - 1);
	for (; table.slots[j].text; j = (j + 1) & (table.cap - 1)) {
		struct token_slot *s = &table.slots[j];
		if (s->hash == h && s->len == len && !memcmp(s->text, text, len)) {
			*token = s->token;
			return 0;
		}
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = 0;
	table.slots[j] = (struct token_slot){ copy, (uint32_t)len, table.n, h };
	*token = table.n++;
	return 0;
}

/* ---- the texts of modules and cfg files, in the order TLC interns them ---- */

enum scan_what { SCAN_WORDS = 1, SCAN_STRINGS = 2 };

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A string literal's text, escapes undone as SANY undoes them; returns the end of the literal. */
static const char *string_text(const char *p, const char *end, char *buf, size_t cap, size_t *len)
{
	size_t n = 0;
	for (p++; p < end && *p != '"' && *p != '\n'; p++) {
		char c = *p;
		if (c == '\\' && p + 1 < end) {
			c = *++p;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
		}
		if (n < cap)
			buf[n] = c;
		n++;
	}
	*len = n;
	return p < end ? p + 1 : p;
}

/* Notes the words (names, numerals) or the string literals of text, comments skipped. */
static int scan_text(const char *p, size_t size, enum scan_what what)
{
	const char *end = p + size;
	char buf[4096];
	int rc = 0;
	while (p < end && !rc) {
		if (p[0] == '\\' && p + 1 < end && p[1] == '*') {
			while (p < end && *p != '\n')
				p++;
		} else if (p[0] == '(' && p + 1 < end && p[1] == '*') {
			int depth = 1;
			for (p += 2; p < end && depth; p++) {
				if (p[0] == '(' && p + 1 < end && p[1] == '*')
					depth++, p++;
				else if (p[0] == '*' && p + 1 < end && p[1] == ')')
					depth--, p++;
			}
		} else if (*p == '"') {
			size_t len;
			const char *next = string_text(p, end, buf, sizeof(buf), &len);
			uint32_t tok;
			if ((what & SCAN_STRINGS) && len <= sizeof(buf))
				rc = note_locked(buf, len, &tok);
			p = next;
		} else if (*p == '\\' && p + 1 < end && word_char(p[1])) {
			for (p++; p < end && word_char(*p); p++) /* \in, \cup: an operator, not a name */
				;
		} else if (word_char(*p)) {
			const char *w = p;
			while (p < end && word_char(*p))
				p++;
			uint32_t tok;
			if (what & SCAN_WORDS)
				rc = note_locked(w, (size_t)(p - w), &tok);
		} else {
			p++;
		}
	}
	return rc;
}

/* The module's own text: from its first ---- line to the ==== that ends the file's modules
 * (SANY reads nothing outside them). */
static int scan_module(const struct module *m, enum scan_what what)
{
	const char *src = m->source, *start = strstr(src, "----");
	if (!start)
		return 0;
	size_t len = m->source_len - (size_t)(start - src);
	for (const char *q = start; (q = memmem(q, m->source_len - (size_t)(q - src), "====", 4)); q += 4)
		len = (size_t)(q - start);
	return scan_text(start, len, what);
}

static bool own_text(const struct module *m) { return m->source && !m->subst && !m->is_std; }

/* SANY's semantic pass (where string literals are interned) takes a module's extensions
 * before the module. */
static int scan_strings_post(const struct module *m, const struct module **done, uint32_t *n_done, uint32_t cap)
{
	for (uint32_t i = 0; i < *n_done; i++)
		if (done[i] == m)
			return 0;
	if (*n_done == cap)
		return 0;
	done[(*n_done)++] = m;
	for (uint32_t i = 0; i < m->n_ext; i++) {
		int rc = scan_strings_post(m->ext[i], done, n_done, cap);
		if (rc)
			return rc;
	}
	return own_text(m) ? scan_module(m, SCAN_STRINGS) : 0;
}

int tlc_order_note_spec(struct spec *s, const char *cfg_text, size_t cfg_len)
{
	uint32_t n;
	struct module *const *mods = spec_modules(s, &n);
	const struct module **done = calloc(n ? n : 1, sizeof(*done));
	if (!done)
		return -ENOMEM;
	uint32_t n_done = 0;
	pthread_mutex_lock(&table.lock);
	int rc = cfg_text ? scan_text(cfg_text, cfg_len, SCAN_WORDS | SCAN_STRINGS) : 0;
	/* The parser interns every token of every module, root first, before any string. */
	for (uint32_t i = 0; i < n && !rc; i++)
		if (own_text(mods[i]))
			rc = scan_module(mods[i], SCAN_WORDS);
	if (!rc && n)
		rc = scan_strings_post(mods[0], done, &n_done, n);
	for (uint32_t i = 0; i < n && !rc; i++) {
		bool seen = false;
		for (uint32_t j = 0; j < n_done && !seen; j++)
			seen = done[j] == mods[i];
		if (!seen && own_text(mods[i]))
			rc = scan_module(mods[i], SCAN_STRINGS);
	}
	pthread_mutex_unlock(&table.lock);
	free(done);
	return rc;
}

/* ---- comparison ---- */

struct order_ctx {
	struct spt_arena *a;
	char *why;
	size_t why_len;
	int err; /* 0, -ENOMEM or -EDOM */
};

/* v as TLA+, cut to fit buf. */
static const char *show(spt_val *v, char *buf, size_t cap)
{
	memset(buf, 0, cap);
	FILE *f = fmemopen(buf, cap - 1, "w");
	if (!f)
		return "?";
	spt_value_print(f, v);
	fclose(f);
	return buf;
}

static int fail(struct order_ctx *o, int err, const char *what, spt_val *x, spt_val *y)
{
	if (!o->err) {
		o->err = err;
		if (err == -EDOM) {
			char xs[64], ys[64];
			snprintf(o->why, o->why_len, "%s %s and %s", what, show(x, xs, sizeof(xs)), show(y, ys, sizeof(ys)));
		} else {
			snprintf(o->why, o->why_len, "out of memory");
		}
	}
	return 0;
}

static bool has_text(spt_val *v)
{
	switch (v->kind) {
	case SPT_STR:
	case SPT_MODEL:
		return true;
	case SPT_SET:
	case SPT_SEQ:
		for (uint32_t i = 0; i < v->n; i++)
			if (has_text(v->u.elems[i]))
				return true;
		return false;
	case SPT_REC:
		return v->n > 0;
	case SPT_FUN:
		for (uint32_t i = 0; i < v->n; i++)
			if (has_text(v->u.fn.keys[i]) || has_text(v->u.fn.vals[i]))
				return true;
		return false;
	default:
		return false;
	}
}

/* A text's token, or UINT32_MAX for one read only while running. */
static uint32_t token_of(spt_val *v)
{
	uint32_t tok = UINT32_MAX;
	pthread_mutex_lock(&table.lock);
	if (table.cap) {
		uint64_t h = text_hash(v->u.s, v->n);
		for (uint32_t j = (uint32_t)h & (table.cap - 1); table.slots[j].text; j = (j + 1) & (table.cap - 1)) {
			struct token_slot *s = &table.slots[j];
			if (s->hash == h && s->len == v->n && !memcmp(s->text, v->u.s, v->n)) {
				tok = s->token;
				break;
			}
		}
	}
	pthread_mutex_unlock(&table.lock);
	return tok;
}

/* A model value's type: its first letter when its second character is '_' (TLC's typed
 * model values), else 0. */
static char model_type(spt_val *v) { return v->n > 2 && v->u.s[1] == '_' ? v->u.s[0] : 0; }

static int tlc_cmp(struct order_ctx *o, spt_val *x, spt_val *y);
static int sort_vals(struct order_ctx *o, spt_val **v, uint32_t n, uint32_t *perm);

enum tclass { TC_BOOL, TC_INT, TC_STR, TC_MODEL, TC_SET, TC_FUN };

static enum tclass tclass(spt_val *v)
{
	switch (v->kind) {
	case SPT_BOOL: return TC_BOOL;
	case SPT_INT: return TC_INT;
	case SPT_STR: return TC_STR;
	case SPT_MODEL: return TC_MODEL;
	case SPT_SET: return TC_SET;
	default: return TC_FUN;
	}
}

static const char *const tclass_name[] = { "a Boolean", "an integer", "a string", "a model value", "a set", "a function" };

/* A function's keys in TLC's order, and its values in the same order. */
static int fun_sorted(struct order_ctx *o, spt_val *f, spt_val ***keys, spt_val ***vals)
{
	uint32_t n = f->n;
	spt_val **k = spt_arena_alloc(o->a, (n + 1) * sizeof(*k)), **v = spt_arena_alloc(o->a, (n + 1) * sizeof(*v));
	uint32_t *perm = spt_arena_alloc(o->a, (n + 1) * sizeof(*perm));
	if (!k || !v || !perm)
		return fail(o, -ENOMEM, "", f, f), -1;
	for (uint32_t i = 0; i < n; i++) {
		struct spt_value tmp;
		spt_val *key = spt_fun_key(f, i, &tmp);
		k[i] = f->kind == SPT_SEQ ? spt_int(o->a, (int64_t)i + 1) : key;
		if (!k[i])
			return fail(o, -ENOMEM, "", f, f), -1;
		perm[i] = i;
	}
	if (f->kind != SPT_SEQ && has_text(f) && sort_vals(o, k, n, perm))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		v[i] = spt_fun_val(f, perm[i]);
	*keys = k;
	*vals = v;
	return 0;
}

static int tlc_cmp(struct order_ctx *o, spt_val *x, spt_val *y)
{
	if (o->err)
		return 0;
	if (x == y)
		return 0;
	enum tclass cx = tclass(x), cy = tclass(y);
	if (cx == TC_MODEL || cy == TC_MODEL) {
		if (cx == TC_MODEL && cy == TC_MODEL) {
			char tx = model_type(x), ty = model_type(y);
			if (tx && ty && tx != ty)
				return fail(o, -EDOM, "TLC cannot compare the differently-typed model values", x, y);
		} else {
			spt_val *m = cx == TC_MODEL ? x : y;
			if (model_type(m))
				return fail(o, -EDOM, "TLC cannot compare a typed model value with another value:", x, y);
			return cx == TC_MODEL ? -1 : 1; /* an untyped model value precedes every other value */
		}
	}
	if (cx != cy) {
		char what[96];
		snprintf(what, sizeof(what), "TLC cannot compare %s with %s:", tclass_name[cx], tclass_name[cy]);
		return fail(o, -EDOM, what, x, y);
	}
	switch (cx) {
	case TC_BOOL:
		return (int)x->u.b - (int)y->u.b;
	case TC_INT:
		return x->u.i < y->u.i ? -1 : x->u.i > y->u.i;
	case TC_STR:
	case TC_MODEL: {
		/* TLC gives a text made while running (ToString, a trace's JSON) the next token when
		 * it makes it; spectap orders such texts after the spec's, bytewise among themselves. */
		uint32_t a = token_of(x), b = token_of(y);
		if (a != b)
			return a < b ? -1 : 1;
		int c = memcmp(x->u.s, y->u.s, x->n < y->n ? x->n : y->n);
		return c ? (c < 0 ? -1 : 1) : (x->n > y->n) - (x->n < y->n);
	}
	case TC_SET: {
		if (x->n != y->n)
			return x->n < y->n ? -1 : 1;
		spt_val *const *ex, *const *ey;
		if (tlc_order_elems(o->a, x, &ex, o->why, o->why_len) || tlc_order_elems(o->a, y, &ey, o->why, o->why_len)) {
			o->err = o->err ? o->err : -EDOM;
			return 0;
		}
		for (uint32_t i = 0; i < x->n; i++) {
			int c = tlc_cmp(o, ex[i], ey[i]);
			if (c || o->err)
				return c;
		}
		return 0;
	}
	case TC_FUN: {
		if (x->n != y->n)
			return x->n < y->n ? -1 : 1;
		spt_val **kx, **vx, **ky, **vy;
		if (fun_sorted(o, x, &kx, &vx) || fun_sorted(o, y, &ky, &vy))
			return 0;
		for (uint32_t i = 0; i < x->n; i++) { /* the domains first, then the values */
			int c = tlc_cmp(o, kx[i], ky[i]);
			if (c || o->err)
				return c;
		}
		for (uint32_t i = 0; i < x->n; i++) {
			int c = tlc_cmp(o, vx[i], vy[i]);
			if (c || o->err)
				return c;
		}
		return 0;
	}
	}
	return 0;
}

/* Merge sort of v[0..n) by tlc_cmp, perm permuted alongside (NULL: none); stable. */
static int sort_vals(struct order_ctx *o, spt_val **v, uint32_t n, uint32_t *perm)
{
	if (n < 2)
		return 0;
	spt_val **tv = spt_arena_alloc(o->a, n * sizeof(*tv));
	uint32_t *tp = perm ? spt_arena_alloc(o->a, n * sizeof(*tp)) : NULL;
	if (!tv || (perm && !tp))
		return fail(o, -ENOMEM, "", v[0], v[0]), -1;
	for (uint32_t width = 1; width < n && !o->err; width *= 2) {
		for (uint32_t lo = 0; lo < n; lo += 2 * width) {
			uint32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			uint32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				bool right = tlc_cmp(o, v[j], v[i]) < 0;
				if (perm)
					tp[k] = right ? perm[j] : perm[i];
				tv[k++] = right ? v[j++] : v[i++];
			}
			for (; i < mid; i++, k++) {
				tv[k] = v[i];
				if (perm)
					tp[k] = perm[i];
			}
			for (; j < hi; j++, k++) {
				tv[k] = v[j];
				if (perm)
					tp[k] = perm[j];
			}
		}
		memcpy(v, tv, n * sizeof(*v));
		if (perm)
			memcpy(perm, tp, n * sizeof(*perm));
	}
	return o->err ? -1 : 0;
}

int tlc_order_elems(struct spt_arena *a, spt_val *set, spt_val *const **out, char *why, size_t why_len)
{
	*out = set->u.elems;
	if (set->n < 2)
		return 0;
	/* Without text, spectap's order is TLC's, except that TLC refuses mixed kinds. */
	bool text = false;
	enum tclass first = tclass(set->u.elems[0]);
	for (uint32_t i = 0; i < set->n && !text; i++) {
		spt_val *e = set->u.elems[i];
		text = has_text(e) || tclass(e) != first;
	}
	if (!text)
		return 0;
	struct order_ctx o = { a, why, why_len, 0 };
	spt_val **v = spt_arena_alloc(a, set->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, set->u.elems, set->n * sizeof(*v));
	if (sort_vals(&o, v, set->n, NULL))
		return o.err ? o.err : -ENOMEM;
	*out = v;
	return 0;
}
