/* Where two values differ (value_diff.h). */
#include "value_diff.h"

#include <stdio.h>
#include <string.h>

struct diff {
	struct spt_buf *out;
	const char *indent;
	unsigned max, width, lines, more;
	char path[512];
	size_t len;
};

/* v as TLA+, cut to width characters ("..." at the cut). */
static void put_value(struct diff *d, spt_val *v)
{
	char buf[1024];
	size_t cap = d->width + 1 < sizeof(buf) ? d->width + 1 : sizeof(buf);
	memset(buf, 0, sizeof(buf));
	FILE *f = fmemopen(buf, cap, "w");
	if (!f) {
		spt_buf_puts(d->out, "?");
		return;
	}
	setvbuf(f, NULL, _IONBF, 0);
	spt_value_print(f, v);
	long n = ftell(f);
	fclose(f);
	buf[cap - 1] = 0;
	spt_buf_puts(d->out, buf);
	if (n < 0 || (size_t)n >= cap - 1)
		spt_buf_puts(d->out, "...");
}

static bool line_room(struct diff *d)
{
	if (d->lines < d->max) {
		d->lines++;
		spt_buf_printf(d->out, "%s%s  ", d->indent, d->path);
		return true;
	}
	d->more++;
	return false;
}

static void both(struct diff *d, spt_val *e, spt_val *g)
{
	if (!line_room(d))
		return;
	spt_buf_puts(d->out, "expected ");
	if (e)
		put_value(d, e);
	else
		spt_buf_puts(d->out, "(absent)");
	spt_buf_puts(d->out, ", reached ");
	if (g)
		put_value(d, g);
	else
		spt_buf_puts(d->out, "(absent)");
	spt_buf_putc(d->out, '\n');
}

/* Appends a step to the path; returns the length to restore. */
static size_t push(struct diff *d, spt_val *key, bool field)
{
	size_t was = d->len;
	if (d->len >= sizeof(d->path) - 8)
		return was;
	size_t room = sizeof(d->path) - d->len;
	int n;
	if (field) {
		n = snprintf(d->path + d->len, room, ".%s", key->u.s);
	} else {
		char k[96];
		memset(k, 0, sizeof(k));
		FILE *f = fmemopen(k, sizeof(k) - 1, "w");
		if (f) {
			spt_value_print(f, key);
			fclose(f);
		}
		n = snprintf(d->path + d->len, room, "[%s]", k);
	}
	d->len = n > 0 && (size_t)n < room ? d->len + (size_t)n : sizeof(d->path) - 1;
	return was;
}

static void pop(struct diff *d, size_t was)
{
	d->len = was;
	d->path[was] = 0;
}

static bool plain_name(spt_val *k)
{
	if (k->kind != SPT_STR || !k->n)
		return false;
	for (uint32_t i = 0; i < k->n; i++) {
		char c = k->u.s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

static void walk(struct diff *d, spt_val *e, spt_val *g);

static void walk_seqs(struct diff *d, spt_val *e, spt_val *g)
{
	uint32_t n = e->n < g->n ? e->n : g->n;
	for (uint32_t i = 0; i < n && d->lines < d->max; i++) {
		struct spt_value tmp;
		size_t was = push(d, spt_fun_key(e, i, &tmp), false);
		walk(d, e->u.elems[i], g->u.elems[i]);
		pop(d, was);
	}
	if (e->n != g->n && line_room(d)) {
		spt_buf_printf(d->out, "expected %u elements, reached %u; the first of the %s: ", e->n, g->n,
			       e->n > g->n ? "missing" : "extra");
		put_value(d, e->n > g->n ? e->u.elems[n] : g->u.elems[n]);
		spt_buf_putc(d->out, '\n');
	}
}

static void walk_funs(struct diff *d, spt_val *e, spt_val *g)
{
	bool rec = e->kind == SPT_REC || g->kind == SPT_REC;
	uint32_t i = 0, j = 0;
	while ((i < e->n || j < g->n) && d->lines < d->max) {
		struct spt_value te, tg;
		spt_val *ke = i < e->n ? spt_fun_key(e, i, &te) : NULL, *kg = j < g->n ? spt_fun_key(g, j, &tg) : NULL;
		int c = !ke ? 1 : !kg ? -1 : spt_value_cmp(ke, kg);
		spt_val *key = c <= 0 ? ke : kg;
		size_t was = push(d, key, rec && plain_name(key));
		if (c == 0)
			walk(d, spt_fun_val(e, i++), spt_fun_val(g, j++));
		else if (c < 0)
			both(d, spt_fun_val(e, i++), NULL);
		else
			both(d, NULL, spt_fun_val(g, j++));
		pop(d, was);
	}
}

/* The elements of a that b lacks, as one line. */
static void set_side(struct diff *d, spt_val *a, spt_val *b, const char *what)
{
	uint32_t count = 0;
	for (uint32_t i = 0; i < a->n; i++)
		count += spt_set_find(b, a->u.elems[i]) < 0;
	if (!count || !line_room(d))
		return;
	spt_buf_printf(d->out, "%u element%s %s:", count, count == 1 ? "" : "s", what);
	unsigned shown = 0;
	for (uint32_t i = 0; i < a->n && shown < 3; i++) {
		if (spt_set_find(b, a->u.elems[i]) >= 0)
			continue;
		spt_buf_puts(d->out, shown++ ? ", " : " ");
		put_value(d, a->u.elems[i]);
	}
	if (count > shown)
		spt_buf_puts(d->out, ", ...");
	spt_buf_putc(d->out, '\n');
}

static void walk(struct diff *d, spt_val *e, spt_val *g)
{
	if (spt_value_eq(e, g))
		return;
	if (e->kind == SPT_SET && g->kind == SPT_SET) {
		set_side(d, e, g, "expected, not reached");
		set_side(d, g, e, "reached, not expected");
	} else if (e->kind == SPT_SEQ && g->kind == SPT_SEQ) {
		walk_seqs(d, e, g);
	} else if (spt_is_fun(e) && spt_is_fun(g) && e->n && g->n) {
		walk_funs(d, e, g);
	} else {
		both(d, e, g);
	}
}

void value_diff(struct spt_buf *out, const char *name, spt_val *expected, spt_val *reached, const char *indent,
		unsigned max, unsigned width)
{
	struct diff d = { out, indent, max, width, 0, 0, "", 0 };
	snprintf(d.path, sizeof(d.path), "%s", name);
	d.len = strlen(d.path);
	walk(&d, expected, reached);
	/* What was not walked once the lines ran out is not counted exactly: say so. */
	if (d.more)
		spt_buf_printf(out, "%s... and more differences\n", indent);
}
