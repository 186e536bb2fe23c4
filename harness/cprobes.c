/* cprobes: a description's probes on a C binary, through its DWARF (goprobes.h, DESC_LANG_C). */
#include "goprobes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbin.h"

_Static_assert(DESC_MAX_READS <= UPROBE_MAX_READS, "a described probe's reads fit one record");

#define FAIL(...) hprobes_fail(err, 0, __VA_ARGS__)

/* The value of one read, as the events module sees it: a scalar's signedness from the read,
 * anything wider than 8 bytes as its bytes. */
static enum hread_kind kind_of(const struct uprobe_read *u)
{
	if (u->kind == UPROBE_READ_BLOCK)
		return HREAD_BYTES;
	return u->flags & UPROBE_READ_SIGNED ? HREAD_INT : HREAD_UINT;
}

static int attach_one(struct uprobe_loader *l, const struct cbin *c, const char *binary, const struct desc *d,
		      size_t i, struct hprobes *out, char *err)
{
	const struct desc_probe *dp = &d->probes[i];
	struct hprobe *hp = &out->p[i];
	struct probe_spec spec;
	struct cbin_func f;
	char cerr[512];
	int r;

	memset(&spec, 0, sizeof(spec));
	hp->dp = dp;
	hp->id = HPROBES_ID_BASE + (uint32_t)i;
	/* No goroutine, and a C entry is never run twice for one call: the thread says who ran it. */
	hp->g_read = hp->flags_read = hp->ret_read = hp->sp_read = -1;
	if ((r = cbin_func_find(c, dp->func, &f, cerr))) {
		FAIL("%s:%u:%u: %s: %s", d->path, dp->pos.line, dp->pos.col, dp->func, cerr);
		return r;
	}
	bool at_return = dp->at == DESC_AT_RETURN, used[UPROBE_MAX_STASH] = { false };
	int last_slot = -1;
	for (size_t k = 0; k < dp->nreads; k++) {
		const struct desc_read *rd = &dp->reads[k];
		/* At a return the parameters' registers are gone: the entry saves the first ones (the
		 * stash, per thread and frame) and the return reads through them. */
		int slot = at_return ? cbin_expr_param(&f, rd->expr) : -1;
		if (!at_return && cbin_expr_returns(rd->expr)) {
			FAIL("%s:%u:%u: %s, read %s (%s): `return` is read at a return (at: return), not at the entry",
			     d->path, rd->pos.line, rd->pos.col, dp->func, rd->name, rd->expr);
			return -EINVAL;
		}
		if (at_return && slot < 0 && !cbin_expr_returns(rd->expr)) {
			FAIL("%s:%u:%u: %s, read %s (%s): at a return, read `return` (the value it returns) or through "
			     "one of the first %d parameters", d->path, rd->pos.line, rd->pos.col, dp->func, rd->name,
			     rd->expr, UPROBE_MAX_STASH);
			return -EINVAL;
		}
		if (slot >= UPROBE_MAX_STASH) {
			FAIL("%s:%u:%u: %s, read %s (%s): at a return only the first %d parameters are kept (this is "
			     "parameter %d): read it at the entry", d->path, rd->pos.line, rd->pos.col, dp->func,
			     rd->name, rd->expr, UPROBE_MAX_STASH, slot + 1);
			return -EINVAL;
		}
		if (slot >= 0) {
			used[slot] = true;
			last_slot = slot > last_slot ? slot : last_slot;
		}
		if ((r = cbin_read(c, &f, rd->expr, slot, &spec.reads[k], cerr))) {
			FAIL("%s:%u:%u: %s, read %s: %s", d->path, rd->pos.line, rd->pos.col, dp->func, rd->name, cerr);
			return r;
		}
		struct hread *h = &hp->reads[hp->nreads++];
		h->name = rd->name;
		h->kind = kind_of(&spec.reads[k]);
		h->v = (int)k;
		h->b = h->kind == HREAD_BYTES ? (int)k : -1;
	}
	spec.nreads = (uint32_t)dp->nreads;
	if (at_return)
		spec.flags = UPROBE_SPEC_RETPROBE;
	hp->nsites = 1;
	if (last_slot >= 0) { /* the entry that saves the parameters read: no record of its own */
		struct probe_spec save;
		memset(&save, 0, sizeof(save));
		save.flags = UPROBE_SPEC_STASH_ONLY;
		save.stash_id = spec.stash_id = (uint16_t)hp->id;
		/* Slot k is parameter k: one no read uses keeps a placeholder (it may be unreadable:
		 * a double, a struct passed by value). */
		for (int k = 0; k <= last_slot && !r; k++) {
			struct uprobe_read *u = &save.reads[save.nreads++];
			*u = (struct uprobe_read){ .src = UPROBE_SRC_RAX, .kind = UPROBE_READ_VALUE, .size = 8 };
			if (used[k] && (r = cbin_read(c, &f, f.params[k].name, -1, u, cerr)))
				FAIL("%s:%u:%u: %s: its parameter %s cannot be kept for the return: %s", d->path,
				     dp->pos.line, dp->pos.col, dp->func, f.params[k].name, cerr);
		}
		save.nstash = (uint8_t)save.nreads;
		if (r)
			return r;
		if ((r = uprobe_attach(l, binary, f.file_off, hp->id + HPROBES_STASH_OFF, &save, -1))) {
			FAIL("attaching %s's entry, which keeps its parameters for the return: %s", dp->func,
			     uprobe_loader_error(l));
			return r;
		}
		out->entry_sites++;
		hp->nsites++;
	}
	if ((r = uprobe_attach(l, binary, f.file_off, hp->id, &spec, -1))) {
		FAIL("attaching %s at its %s: %s", dp->func, at_return ? "return" : "entry", uprobe_loader_error(l));
		return r;
	}
	if (at_return)
		out->ret_sites++;
	else
		out->entry_sites++;
	return 0;
}

int hprobes_attach_c(struct uprobe_loader *l, const struct desc *d, const char *binary, struct hprobes *out,
		     char *err)
{
	struct cbin *c = NULL;
	char cerr[512];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = cbin_open(binary, &c, cerr))) {
		FAIL("%s: %s (a C binary's probes need its DWARF: build it with -g, or install its debug symbols)",
		     binary, cerr);
		return r;
	}
	snprintf(out->go_version, sizeof(out->go_version), "C, DWARF");
	if (d->nprobes >= HPROBES_STASH_OFF) {
		FAIL("%s: more than %d probes", d->path, HPROBES_STASH_OFF - 1);
		cbin_close(c);
		return -E2BIG;
	}
	out->p = calloc(d->nprobes ? d->nprobes : 1, sizeof(*out->p));
	out->table = calloc(d->nprobes ? d->nprobes : 1, sizeof(*out->table));
	if (!out->p || !out->table) {
		FAIL("out of memory");
		r = -ENOMEM;
		goto out;
	}
	out->n = d->nprobes;
	for (size_t i = 0; i < d->nprobes && !r; i++) {
		r = attach_one(l, c, binary, d, i, out, err);
		out->table[i] = (struct collect_probe){ .probe_id = out->p[i].id, .kind = d->probes[i].name };
		out->sites += out->p[i].nsites;
	}
	out->ctable = (struct collect_table){ out->table, out->n };
out:
	cbin_close(c);
	if (r)
		hprobes_free(out);
	return r;
}
