/* Read windows (struct uprobe_window): which fields of a probe spec's reads can be copied
 * together. Every memory access of a read is at an offset from an address expression (a
 * register, then a chain of dereferences); the accesses at one expression that fit in
 * UPROBE_WINDOW_BYTES become one window, read once per hit. Pure: knows no system and no BPF. */
#include "uprobe_windows.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN (1 + UPROBE_MAX_DEREFS) /* a stack slot, then the dereferences */
#define MAX_ACCESS (UPROBE_MAX_READS * UPROBE_ACCESSES + UPROBE_MAX_WINDOWS * MAX_CHAIN)

/* v = register root; then v = *(v + chain[k]) for each k < n. */
struct expr {
	uint8_t root;
	uint8_t n;
	int32_t chain[MAX_CHAIN];
};

/* One access: size bytes at expr + off, access a of reads[read] (read < 0: window -1 - read). */
struct access {
	struct expr at;
	int32_t off;
	uint8_t size;
	int read;
	uint8_t a;
};

struct candidate {
	struct expr at;
	int32_t lo, hi;
	unsigned uses;
	unsigned first; /* index of its first access: ties keep the spec's order */
};

static bool expr_eq(const struct expr *x, const struct expr *y)
{
	return x->root == y->root && x->n == y->n && !memcmp(x->chain, y->chain, sizeof(int32_t) * x->n);
}

/* The accesses of read r (index read) into acc; returns how many. A read from a stash, or of
 * the flags, has no address expression windows could share. */
static unsigned accesses_of(const struct uprobe_read *r, int read, struct access *acc)
{
	struct expr e = { 0 };
	unsigned n = 0;

	if (r->kind == UPROBE_READ_NONE || r->src == UPROBE_SRC_STASH || r->src == UPROBE_SRC_FLAGS ||
	    r->nderef > UPROBE_MAX_DEREFS)
		return 0;
	if (r->src == UPROBE_SRC_STACK) {
		e.root = UPROBE_SRC_RSP;
		acc[n++] = (struct access){ e, r->src_off, 8, read, UPROBE_ACCESS_SLOT };
		e.chain[e.n++] = r->src_off;
	} else if (r->src < UPROBE_SRC_FLAGS) {
		e.root = r->src;
	} else {
		return 0;
	}
	for (unsigned k = 0; k < r->nderef; k++) {
		acc[n++] = (struct access){ e, r->deref_off[k], 8, read, (uint8_t)UPROBE_ACCESS_DEREF(k) };
		e.chain[e.n++] = r->deref_off[k];
	}
	if (r->kind == UPROBE_READ_MEM)
		acc[n++] = (struct access){ e, r->off, r->size, read, UPROBE_ACCESS_FINAL };
	return n;
}

static int by_offset(const void *x, const void *y)
{
	const struct access *a = x, *b = y;

	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return (a->read > b->read) - (a->read < b->read);
}

/* The value expression of window w's base, as a VALUE read (what the BPF program computes). */
static struct uprobe_read base_read(const struct expr *e)
{
	struct uprobe_read r = { .kind = UPROBE_READ_VALUE, .size = 8 };
	unsigned k = 0;

	if (e->root == UPROBE_SRC_RSP && e->n > 0) {
		r.src = UPROBE_SRC_STACK;
		r.src_off = e->chain[0];
		k = 1;
	} else {
		r.src = e->root;
	}
	r.nderef = (uint8_t)(e->n - k);
	for (unsigned j = 0; k < e->n; k++, j++)
		r.deref_off[j] = e->chain[k];
	return r;
}

/* Groups acc[0..n) by expression and, within one, by offset into spans of at most
 * UPROBE_WINDOW_BYTES; each span with two or more accesses is a candidate. */
static unsigned find_candidates(struct access *acc, unsigned n, struct candidate *out, unsigned max)
{
	bool *done = calloc(n ? n : 1, sizeof(bool));
	struct access *grp = malloc(sizeof(*grp) * (n ? n : 1));
	unsigned nc = 0;

	if (!done || !grp)
		goto cleanup;
	for (unsigned i = 0; i < n; i++) {
		unsigned g = 0;

		if (done[i])
			continue;
		for (unsigned j = i; j < n; j++)
			if (!done[j] && expr_eq(&acc[i].at, &acc[j].at)) {
				done[j] = true;
				grp[g] = acc[j];
				grp[g++].read = (int)j; /* its position: the tie-break below */
			}
		qsort(grp, g, sizeof(*grp), by_offset);
		for (unsigned s = 0; s < g;) {
			struct candidate c = { .at = grp[s].at, .lo = grp[s].off, .hi = grp[s].off + grp[s].size,
					       .first = (unsigned)grp[s].read };
			unsigned e = s;

			while (e < g && (int64_t)grp[e].off + grp[e].size - c.lo <= UPROBE_WINDOW_BYTES) {
				if (grp[e].off + grp[e].size > c.hi)
					c.hi = grp[e].off + grp[e].size;
				if ((unsigned)grp[e].read < c.first)
					c.first = (unsigned)grp[e].read;
				e++;
			}
			c.uses = e - s;
			if (c.uses >= 2 && nc < max)
				out[nc++] = c;
			s = e;
		}
	}
cleanup:
	free(done);
	free(grp);
	return nc;
}

static int by_benefit(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;

	if (a->uses != b->uses)
		return a->uses > b->uses ? -1 : 1;
	return (a->first > b->first) - (a->first < b->first);
}

/* Windows are read in order: a window's own dereferences may only use shallower ones. */
static int by_depth(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;

	if (a->at.n != b->at.n)
		return a->at.n < b->at.n ? -1 : 1;
	return (a->first > b->first) - (a->first < b->first);
}

/* Points every access of r (read index read, or window) that window w covers at it; a window's
 * own accesses only at windows before it. */
static void assign(struct uprobe_read *r, int read, const struct candidate *c, unsigned nc, unsigned limit)
{
	struct access acc[UPROBE_ACCESSES];
	unsigned n = accesses_of(r, read, acc);

	memset(r->win, 0, sizeof(r->win));
	memset(r->pick, 0, sizeof(r->pick));
	for (unsigned i = 0; i < n; i++)
		for (unsigned w = 0; w < nc && w < limit; w++)
			if (expr_eq(&acc[i].at, &c[w].at) && acc[i].off >= c[w].lo &&
			    acc[i].off + acc[i].size <= c[w].hi) {
				r->win[acc[i].a] = (uint8_t)(w + 1);
				r->pick[acc[i].a] = (uint16_t)(acc[i].off - c[w].lo);
				break;
			}
}

void uprobe_plan_windows(struct probe_spec *s)
{
	struct access acc[MAX_ACCESS];
	struct candidate cand[MAX_ACCESS];
	unsigned n = 0, nc;

	s->nwindows = 0;
	memset(s->windows, 0, sizeof(s->windows));
	for (unsigned i = 0; i < s->nreads && i < UPROBE_MAX_READS; i++) {
		memset(s->reads[i].win, 0, sizeof(s->reads[i].win));
		memset(s->reads[i].pick, 0, sizeof(s->reads[i].pick));
		n += accesses_of(&s->reads[i], (int)i, acc + n);
	}
	nc = find_candidates(acc, n, cand, MAX_ACCESS);
	qsort(cand, nc, sizeof(*cand), by_benefit);
	if (nc > UPROBE_MAX_WINDOWS)
		nc = UPROBE_MAX_WINDOWS;
	qsort(cand, nc, sizeof(*cand), by_depth);
	for (unsigned w = 0; w < nc; w++) {
		struct uprobe_window *win = &s->windows[w];

		win->at = base_read(&cand[w].at);
		win->lo = cand[w].lo;
		win->len = (uint32_t)(cand[w].hi - cand[w].lo);
		assign(&win->at, -1 - (int)w, cand, nc, w);
	}
	s->nwindows = nc;
	for (unsigned i = 0; i < s->nreads && i < UPROBE_MAX_READS; i++)
		assign(&s->reads[i], (int)i, cand, nc, nc);
}
