/* cbin: uprobe reads (probes/bpf/uprobe.h) for C expressions over a function's parameters and
 * return value, e.g. "me->log->count", "(struct raft_server *)me_->current_term" or, through a
 * void * field, "((Node *)raft_node->udata)->conn->state" (cbin.h). */
#include "cbin_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the expression's value is so far: v (after the read's source and derefs) itself, or the
 * memory at v + off. type: the value's type; pointee_cast: type is what v points to (a cast). */
struct walk {
	struct uprobe_read *r;
	bool in_mem, pointee_cast;
	int64_t off;
	Dwarf_Die type;
	const char *expr;
};

static int bad(const struct cbin *c, const struct walk *w, char *errbuf, int err, const char *why)
{
	cbin_err(errbuf, "%s: %s: %s", c->base, w->expr, why);
	return err;
}

/* v = *(v + off): the pointer stored in memory becomes the value. */
static int deref(const struct cbin *c, struct walk *w, char *errbuf)
{
	if (!w->in_mem)
		return 0;
	if (w->r->nderef == UPROBE_MAX_DEREFS)
		return bad(c, w, errbuf, -EINVAL, "more than 3 pointer dereferences in one read");
	w->r->deref_off[w->r->nderef++] = (int32_t)w->off;
	w->in_mem = false;
	w->off = 0;
	return 0;
}

/* The type the current pointer value points to, into *out. */
static int pointee(const struct cbin *c, struct walk *w, Dwarf_Die *out, char *errbuf)
{
	Dwarf_Die p;

	if (w->pointee_cast) {
		*out = w->type;
		return 0;
	}
	if (!cbin_peel(&w->type, &p) || dwarf_tag(&p) != DW_TAG_pointer_type)
		return bad(c, w, errbuf, -EINVAL, "dereferences something that is not a pointer");
	if (!cbin_die_type(&p, out))
		return bad(c, w, errbuf, -EINVAL, "dereferences a void pointer: cast it, e.g. \"(struct x *)p->f\"");
	return 0;
}

/* One step: "->f", ".f" or "[N]"; comp is the field name or "[N]". */
static int step(const struct cbin *c, struct walk *w, bool arrow, const char *comp, char *errbuf)
{
	struct cbin_field fld;
	Dwarf_Die p, base, last;
	int ret;
	bool index = comp[0] == '[', through_ptr = arrow;

	if (index && !w->pointee_cast && cbin_peel(&w->type, &p) && dwarf_tag(&p) == DW_TAG_pointer_type)
		through_ptr = true;
	if (through_ptr || w->pointee_cast) {
		if ((ret = pointee(c, w, &base, errbuf)) || (ret = deref(c, w, errbuf)))
			return ret;
		if (index) {
			/* p[N]: an array of the pointee type; walk it as one. */
			Dwarf_Word esize = 0;
			char *end;
			unsigned long long n = strtoull(comp + 1, &end, 10);

			if (dwarf_aggregate_size(&base, &esize) != 0)
				return bad(c, w, errbuf, -EINVAL, "indexes a pointer to an incomplete type");
			w->in_mem = true;
			w->off = (int64_t)(n * esize);
			w->type = base;
			w->pointee_cast = false;
			return 0;
		}
		w->in_mem = true;
		w->off = 0;
	} else {
		if (!w->in_mem)
			return bad(c, w, errbuf, -EINVAL,
				   "a struct passed by value in registers: read its registers instead");
		base = w->type;
	}
	w->pointee_cast = false;
	if ((ret = cbin_field_walk(c, &base, comp, &fld, &last, errbuf)))
		return ret;
	if (fld.bit_size)
		return bad(c, w, errbuf, -EINVAL, "a bit field: read its bytes with cbin_field and mask");
	w->off += (int64_t)fld.offset;
	w->type = last;
	return 0;
}

/* The pointer the walk holds points to a `cast` (the type named in "(cast *)"). */
static int take_as(const struct cbin *c, struct walk *w, const char *cast, char *errbuf)
{
	struct cbin_type t;
	Dwarf_Die d;
	int ret = cbin_type_find(c, cast, &t, errbuf);

	if (ret)
		return ret;
	if (!dwarf_offdie(c->dw, t.id, &d))
		return -EINVAL;
	w->type = d;
	w->pointee_cast = true;
	return 0;
}

/* Starts the walk at name (a parameter, or "return"), optionally cast to "type *". */
static int start(const struct cbin *c, const struct cbin_func *f, struct walk *w, const char *name,
		 const char *cast, int stash_slot, char *errbuf)
{
	const struct cbin_param *p = NULL;
	uint64_t id;

	if (strcmp(name, "return") == 0) {
		if (stash_slot >= 0)
			return bad(c, w, errbuf, -EINVAL, "the return value is never stashed");
		if (f->ret_in_memory) {
			w->in_mem = true; /* rax: the address of the returned struct */
		} else if (f->ret.kind != CBIN_T_INT && f->ret.kind != CBIN_T_POINTER) {
			return bad(c, w, errbuf, -EINVAL, "the return value is not an integer or pointer in rax");
		} else if (f->ret.size > 8) {
			return bad(c, w, errbuf, -EINVAL, "a 16-byte return value: rax and rdx");
		}
		w->r->src = UPROBE_SRC_RAX;
		id = f->ret.id;
	} else {
		if (!(p = cbin_func_param(f, name))) {
			cbin_err(errbuf, "%s: function %s has no parameter %s", c->base, f->name, name);
			return -ENOENT;
		}
		id = p->type.id;
		if (stash_slot >= 0) {
			if (stash_slot >= UPROBE_MAX_STASH)
				return bad(c, w, errbuf, -EINVAL, "stash slot out of range");
			w->r->src = UPROBE_SRC_STASH;
			w->r->src_off = stash_slot;
		} else if (p->loc == CBIN_LOC_REG) {
			w->r->src = p->reg;
		} else if (p->loc == CBIN_LOC_STACK) {
			w->r->src = UPROBE_SRC_RSP;
			w->in_mem = true;
			w->off = p->stack_off;
		} else if (p->loc == CBIN_LOC_REG2) {
			return bad(c, w, errbuf, -EINVAL, "a 16-byte parameter in two registers (reg and reg2)");
		} else {
			return bad(c, w, errbuf, -EINVAL, "a parameter in an xmm register: a uprobe cannot read it");
		}
	}
	if (!id || !dwarf_offdie(c->dw, id, &w->type))
		return bad(c, w, errbuf, -EINVAL, "has type void");
	return cast ? take_as(c, w, cast, errbuf) : 0;
}

/* Sets the read's kind from where the walk ended. */
static int finish(const struct cbin *c, struct walk *w, char *errbuf)
{
	struct cbin_type t;

	if (w->pointee_cast)
		return bad(c, w, errbuf, -EINVAL, "a cast needs a dereference after it (\"->f\" or \"[N]\")");
	cbin_describe(c, &w->type, &t);
	if (w->off < INT32_MIN || w->off > INT32_MAX)
		return bad(c, w, errbuf, -ERANGE, "offset out of range");
	w->r->off = (int32_t)w->off;
	if ((t.kind == CBIN_T_INT || t.kind == CBIN_T_POINTER || t.kind == CBIN_T_FLOAT) &&
	    (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8)) {
		w->r->kind = w->in_mem ? UPROBE_READ_MEM : UPROBE_READ_VALUE;
		w->r->size = (uint8_t)t.size;
		w->r->flags = t.is_signed ? UPROBE_READ_SIGNED : 0;
		if (!w->in_mem)
			w->r->off = 0;
		return 0;
	}
	if (!w->in_mem)
		return bad(c, w, errbuf, -EINVAL, "not a 1, 2, 4 or 8-byte value");
	if (t.size == 0 || t.size > UPROBE_MAX_BLOCK) {
		char why[CBIN_TYPE_NAME + 64];

		snprintf(why, sizeof(why), "%s is %llu bytes: a block holds 1..%d", t.name,
			 (unsigned long long)t.size, UPROBE_MAX_BLOCK);
		return bad(c, w, errbuf, -EINVAL, why);
	}
	w->r->kind = UPROBE_READ_BLOCK;
	w->r->size = (uint8_t)t.size;
	return 0;
}

/* "(type *)" at *sp into cast (without the " *"); *sp moves past it. */
static int parse_cast(const struct cbin *c, struct walk *w, const char **sp, char *cast, size_t size, char *errbuf)
{
	const char *s = *sp, *close = strchr(s, ')'), *star = close;
	size_t n;

	while (star && star > s && isspace((unsigned char)star[-1]))
		star--;
	if (!close || star <= s + 1 || star[-1] != '*' || (size_t)(star - s) >= size)
		return bad(c, w, errbuf, -EINVAL, "a cast must be \"(type *)\"");
	memcpy(cast, s + 1, (size_t)(star - s - 2));
	cast[star - s - 2] = 0;
	for (n = strlen(cast); n && isspace((unsigned char)cast[n - 1]); n--)
		cast[n - 1] = 0;
	s = close + 1;
	while (isspace((unsigned char)*s))
		s++;
	*sp = s;
	return 0;
}

/* The steps of s: "->f", ".f", "[N]", to its end. */
static int walk_steps(const struct cbin *c, struct walk *w, const char *s, char *errbuf)
{
	char comp[130];
	size_t n;
	int ret;

	while (*s) {
		bool arrow = strncmp(s, "->", 2) == 0;

		if (arrow)
			s += 2;
		else if (*s == '.')
			s++;
		else if (*s != '[')
			return bad(c, w, errbuf, -EINVAL, "expected ->, . or [ (syntax: name->f.g[N])");
		n = *s == '[' ? strcspn(s, "]") + 1 : strcspn(s, "-.[");
		if (n == 0 || n >= sizeof(comp) || (s[0] == '[' && s[n - 1] != ']'))
			return bad(c, w, errbuf, -EINVAL, "bad field or index");
		memcpy(comp, s, n);
		comp[n] = 0;
		s += n;
		if ((ret = step(c, w, arrow, comp, errbuf)))
			return ret;
	}
	return 0;
}

/* The pointer the walk has reached taken as a "type *" (a void * field, say). */
static int cast_here(const struct cbin *c, struct walk *w, const char *cast, char *errbuf)
{
	Dwarf_Die p;

	if (w->pointee_cast || !cbin_peel(&w->type, &p) || dwarf_tag(&p) != DW_TAG_pointer_type)
		return bad(c, w, errbuf, -EINVAL, "casts something that is not a pointer");
	return take_as(c, w, cast, errbuf);
}

int cbin_read(const struct cbin *c, const struct cbin_func *f, const char *expr, int stash_slot,
	      struct uprobe_read *r, char *errbuf)
{
	struct walk w = {.r = r, .expr = expr};
	char name[128], cast[CBIN_TYPE_NAME] = "", inner_cast[CBIN_TYPE_NAME] = "", inner[256];
	const char *s = expr, *rest = NULL;
	size_t n;
	int ret;

	memset(r, 0, sizeof(*r));
	cbin_err(errbuf, "%s", "");
	if (!c || !f || !expr)
		return -EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '(' && s[1] == '(') { /* "((struct x *)name->f)->g": a pointer field cast */
		const char *close;

		s++;
		if ((ret = parse_cast(c, &w, &s, inner_cast, sizeof(inner_cast), errbuf)))
			return ret;
		if (!(close = strchr(s, ')')) || (size_t)(close - s) >= sizeof(inner))
			return bad(c, &w, errbuf, -EINVAL, "a cast of a field must be \"((type *)p->f)->g\"");
		memcpy(inner, s, (size_t)(close - s));
		inner[close - s] = 0;
		rest = close + 1;
		s = inner;
	} else if (*s == '(') { /* "(struct x *)name" */
		if ((ret = parse_cast(c, &w, &s, cast, sizeof(cast), errbuf)))
			return ret;
	}
	n = strcspn(s, "-.[ ");
	if (n == 0 || n >= sizeof(name))
		return bad(c, &w, errbuf, -EINVAL, "no parameter name");
	memcpy(name, s, n);
	name[n] = 0;
	s += n;
	if ((ret = start(c, f, &w, name, cast[0] ? cast : NULL, stash_slot, errbuf)) ||
	    (ret = walk_steps(c, &w, s, errbuf)))
		return ret;
	if (rest && ((ret = cast_here(c, &w, inner_cast, errbuf)) || (ret = walk_steps(c, &w, rest, errbuf))))
		return ret;
	return finish(c, &w, errbuf);
}
