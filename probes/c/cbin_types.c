/* cbin: types by name, their C spelling, and field paths (cbin.h). */
#include "cbin_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cbin_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

bool cbin_die_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

bool cbin_peel(Dwarf_Die *t, Dwarf_Die *out)
{
	Dwarf_Die cur = *t;

	for (int depth = 0; depth < 64; depth++) {
		int tag = dwarf_tag(&cur);

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type) {
			*out = cur;
			return true;
		}
		if (!cbin_die_type(&cur, &cur))
			return false; /* const void */
	}
	return false;
}

static bool is_aggregate_tag(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

void cbin_complete(const struct cbin *c, Dwarf_Die *t)
{
	const char *name;
	int tag = dwarf_tag(t);

	if (!is_aggregate_tag(tag) || !dwarf_hasattr(t, DW_AT_declaration) || !(name = dwarf_diename(t)))
		return;
	for (const struct cbin_ent *e = cbin_find_ent(c->types, c->ntypes, name);
	     e && e < c->types + c->ntypes && strcmp(e->name, name) == 0; e++) {
		Dwarf_Die d;

		if (e->complete && dwarf_offdie(c->dw, e->off, &d) && dwarf_tag(&d) == tag) {
			*t = d;
			return;
		}
	}
}

/* Bounds of array type a: element count of its first dimension (0 when unknown). */
static uint64_t array_count(Dwarf_Die *a)
{
	Dwarf_Die sub;
	Dwarf_Attribute at;
	Dwarf_Word v;

	if (dwarf_child(a, &sub) != 0 || dwarf_tag(&sub) != DW_TAG_subrange_type)
		return 0;
	if (dwarf_formudata(dwarf_attr(&sub, DW_AT_count, &at), &v) == 0)
		return v;
	if (dwarf_formudata(dwarf_attr(&sub, DW_AT_upper_bound, &at), &v) == 0)
		return v + 1;
	return 0;
}

/* Appends the C spelling of t (NULL: void) to buf. */
static void spell(const struct cbin *c, Dwarf_Die *t, char *buf, size_t n, int depth)
{
	size_t len = strlen(buf);
	const char *name = t ? dwarf_diename(t) : NULL;
	Dwarf_Die sub;
	bool has_sub;
	Dwarf_Word count;

	if (len + 1 >= n)
		return;
	if (!t) {
		snprintf(buf + len, n - len, "void");
		return;
	}
	has_sub = cbin_die_type(t, &sub);
	if (depth > 16) {
		snprintf(buf + len, n - len, "...");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_structure_type:
		snprintf(buf + len, n - len, "struct %s", name ? name : "<anonymous>");
		break;
	case DW_TAG_union_type:
		snprintf(buf + len, n - len, "union %s", name ? name : "<anonymous>");
		break;
	case DW_TAG_enumeration_type:
		snprintf(buf + len, n - len, "enum %s", name ? name : "<anonymous>");
		break;
	case DW_TAG_pointer_type:
		spell(c, has_sub ? &sub : NULL, buf, n, depth + 1);
		len = strlen(buf);
		snprintf(buf + len, n - len, len && buf[len - 1] == '*' ? "*" : " *");
		break;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		snprintf(buf + len, n - len, dwarf_tag(t) == DW_TAG_const_type ? "const " : "volatile ");
		spell(c, has_sub ? &sub : NULL, buf, n, depth + 1);
		break;
	case DW_TAG_array_type:
		spell(c, has_sub ? &sub : NULL, buf, n, depth + 1);
		len = strlen(buf);
		if ((count = array_count(t)))
			snprintf(buf + len, n - len, " [%llu]", (unsigned long long)count);
		else
			snprintf(buf + len, n - len, " []");
		break;
	case DW_TAG_subroutine_type:
		snprintf(buf + len, n - len, "function");
		break;
	default: /* base types, typedefs, restrict and the rest: their name or what they qualify */
		if (name)
			snprintf(buf + len, n - len, "%s", name);
		else
			spell(c, has_sub ? &sub : NULL, buf, n, depth + 1);
	}
}

void cbin_describe(const struct cbin *c, Dwarf_Die *t, struct cbin_type *out)
{
	Dwarf_Die p;
	Dwarf_Word size = 0;
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;

	memset(out, 0, sizeof(*out));
	spell(c, t, out->name, sizeof(out->name), 0);
	if (!t || !cbin_peel(t, &p)) {
		out->kind = CBIN_T_VOID;
		return;
	}
	out->id = dwarf_dieoffset(t);
	cbin_complete(c, &p);
	if (dwarf_aggregate_size(&p, &size) == 0)
		out->size = size;
	switch (dwarf_tag(&p)) {
	case DW_TAG_pointer_type:
		out->kind = CBIN_T_POINTER;
		out->size = 8;
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		out->kind = CBIN_T_STRUCT;
		break;
	case DW_TAG_array_type:
		out->kind = CBIN_T_ARRAY;
		break;
	case DW_TAG_enumeration_type:
		out->kind = CBIN_T_INT;
		/* Signed like its underlying type; gcc picks unsigned int unless a value is negative. */
		if (cbin_die_type(&p, &p) && cbin_peel(&p, &p) && dwarf_formudata(dwarf_attr(&p, DW_AT_encoding, &a), &enc) == 0)
			out->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
		break;
	case DW_TAG_base_type:
		dwarf_formudata(dwarf_attr(&p, DW_AT_encoding, &a), &enc);
		out->kind = enc == DW_ATE_float || enc == DW_ATE_complex_float ? CBIN_T_FLOAT : CBIN_T_INT;
		out->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
		break;
	default:
		out->kind = CBIN_T_OTHER;
	}
}

/* The type named name: "struct x", "union x", "enum x", or a typedef or base type name. */
static int find_type_die(const struct cbin *c, const char *name, Dwarf_Die *out, char *errbuf)
{
	static const struct {
		const char *prefix;
		int tag;
	} kinds[] = {{"struct ", DW_TAG_structure_type}, {"union ", DW_TAG_union_type}, {"enum ", DW_TAG_enumeration_type}};
	const char *bare = name;
	int want = 0;
	bool found = false;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (strncmp(name, kinds[k].prefix, strlen(kinds[k].prefix)) == 0) {
			bare = name + strlen(kinds[k].prefix);
			want = kinds[k].tag;
		}
	while (*bare == ' ')
		bare++;
	for (const struct cbin_ent *e = cbin_find_ent(c->types, c->ntypes, bare);
	     e && e < c->types + c->ntypes && strcmp(e->name, bare) == 0; e++) {
		Dwarf_Die d;
		int tag;

		if (!dwarf_offdie(c->dw, e->off, &d))
			continue;
		tag = dwarf_tag(&d);
		if (want ? tag != want : tag != DW_TAG_typedef && tag != DW_TAG_base_type)
			continue;
		if (!found || e->complete) {
			*out = d;
			found = true;
		}
		if (e->complete)
			break;
	}
	if (!found) {
		cbin_err(errbuf, "%s: no type %s%s", c->base, name,
			 want ? "" : " (a struct, union or enum needs its keyword: \"struct x\")");
		return -ENOENT;
	}
	return 0;
}

int cbin_type_find(const struct cbin *c, const char *name, struct cbin_type *t, char *errbuf)
{
	Dwarf_Die d;
	int ret;

	memset(t, 0, sizeof(*t));
	cbin_err(errbuf, "%s", "");
	if (!c || !name)
		return -EINVAL;
	if ((ret = find_type_die(c, name, &d, errbuf)))
		return ret;
	cbin_describe(c, &d, t);
	return 0;
}

int cbin_enum_value(const struct cbin *c, const char *type, const char *name, int64_t *out, char *errbuf)
{
	Dwarf_Die d, e, child;
	Dwarf_Attribute a;
	Dwarf_Sword v;
	int ret;

	cbin_err(errbuf, "%s", "");
	if (!c || !type || !name || !out)
		return -EINVAL;
	if ((ret = find_type_die(c, type, &d, errbuf)))
		return ret;
	if (!cbin_peel(&d, &e) || dwarf_tag(&e) != DW_TAG_enumeration_type) {
		cbin_err(errbuf, "%s: %s is not an enum", c->base, type);
		return -EINVAL;
	}
	if (dwarf_child(&e, &child) == 0) {
		do {
			const char *n = dwarf_diename(&child);
			if (dwarf_tag(&child) == DW_TAG_enumerator && n && !strcmp(n, name) &&
			    dwarf_attr(&child, DW_AT_const_value, &a) && dwarf_formsdata(&a, &v) == 0) {
				*out = v;
				return 0;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	cbin_err(errbuf, "%s: enum %s has no enumerator %s", c->base, type, name);
	return -ENOENT;
}

int cbin_type_target(const struct cbin *c, const struct cbin_type *t, struct cbin_type *out, char *errbuf)
{
	Dwarf_Die d, p, sub;

	memset(out, 0, sizeof(*out));
	if (!t->id || !dwarf_offdie(c->dw, t->id, &d) || !cbin_peel(&d, &p) ||
	    (dwarf_tag(&p) != DW_TAG_pointer_type && dwarf_tag(&p) != DW_TAG_array_type)) {
		cbin_err(errbuf, "%s: %s is neither a pointer nor an array", c->base, t->name);
		return -EINVAL;
	}
	cbin_describe(c, cbin_die_type(&p, &sub) ? &sub : NULL, out);
	return 0;
}

/* The member name of struct/union s (peeled, complete), looking into anonymous members as C
 * does; adds its offset to *off. */
static bool find_member(const struct cbin *c, Dwarf_Die *s, const char *name, Dwarf_Die *m, uint64_t *off, int depth)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(s, &child) != 0)
		return false;
	do {
		Dwarf_Attribute a;
		Dwarf_Word loc = 0;
		const char *mn;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		/* DWARF 3+ gives a constant; an expression (DW_OP_plus_uconst) only in old DWARF 2. */
		if (dwarf_attr(&child, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &loc) != 0) {
			Dwarf_Op *ops;
			size_t nops;

			if (dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 && ops[0].atom == DW_OP_plus_uconst)
				loc = ops[0].number;
		}
		mn = dwarf_diename(&child);
		if (mn && strcmp(mn, name) == 0) {
			*m = child;
			*off += loc;
			return true;
		}
		if (!mn) {
			Dwarf_Die t, p;

			if (cbin_die_type(&child, &t) && cbin_peel(&t, &p) && is_aggregate_tag(dwarf_tag(&p))) {
				uint64_t inner = *off + loc;

				cbin_complete(c, &p);
				if (find_member(c, &p, name, m, &inner, depth + 1)) {
					*off = inner;
					return true;
				}
			}
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Walks path below type outer: ".f" or "f" members and "[N]" array elements. *last is the
 * field's type DIE. */
int cbin_field_walk(const struct cbin *c, Dwarf_Die *outer, const char *path, struct cbin_field *fld,
		    Dwarf_Die *last, char *errbuf)
{
	Dwarf_Die cur = *outer, p, m;
	const char *s = path;
	char where[CBIN_TYPE_NAME + 64];

	memset(fld, 0, sizeof(*fld));
	where[0] = 0;
	spell(c, outer, where, sizeof(where), 0);
	while (*s) {
		char name[128];
		size_t n;

		if (!cbin_peel(&cur, &p)) {
			cbin_err(errbuf, "%s: %s is void: no field %s", c->base, where, s);
			return -EINVAL;
		}
		cbin_complete(c, &p);
		if (*s == '[') {
			char *end;
			unsigned long long idx = strtoull(s + 1, &end, 10), count;
			Dwarf_Word esize = 0;
			Dwarf_Die et;

			if (end == s + 1 || *end != ']') {
				cbin_err(errbuf, "%s: bad index in %s", c->base, path);
				return -EINVAL;
			}
			if (dwarf_tag(&p) != DW_TAG_array_type || !cbin_die_type(&p, &et) ||
			    dwarf_aggregate_size(&et, &esize) != 0) {
				cbin_err(errbuf, "%s: %s is not an array: cannot index it in %s", c->base, where, path);
				return -EINVAL;
			}
			count = array_count(&p);
			if (count && idx >= count) {
				cbin_err(errbuf, "%s: index %llu of %s is out of bounds (%llu elements)", c->base, idx,
					 where, count);
				return -EINVAL;
			}
			fld->offset += idx * esize;
			cur = et;
			s = end + 1;
		} else {
			if (*s == '.')
				s++;
			n = strcspn(s, ".[");
			if (n == 0 || n >= sizeof(name)) {
				cbin_err(errbuf, "%s: bad field path %s", c->base, path);
				return -EINVAL;
			}
			memcpy(name, s, n);
			name[n] = 0;
			if (!is_aggregate_tag(dwarf_tag(&p))) {
				cbin_err(errbuf, "%s: %s is not a struct or union: no field %s%s", c->base, where, name,
					 dwarf_tag(&p) == DW_TAG_pointer_type ? " (a pointer: use ->)" : "");
				return -EINVAL;
			}
			if (dwarf_hasattr(&p, DW_AT_declaration)) {
				cbin_err(errbuf, "%s: %s is declared but never defined in the debug info", c->base, where);
				return -ENOENT;
			}
			if (!find_member(c, &p, name, &m, &fld->offset, 0)) {
				cbin_err(errbuf, "%s: %s has no field %s", c->base, where, name);
				return -ENOENT;
			}
			if (!cbin_die_type(&m, &cur)) {
				cbin_err(errbuf, "%s: field %s of %s has no type", c->base, name, where);
				return -EINVAL;
			}
			s += n;
			if (dwarf_hasattr(&m, DW_AT_bit_size)) {
				Dwarf_Attribute a;
				Dwarf_Word bits = 0, bitoff = 0;

				dwarf_formudata(dwarf_attr(&m, DW_AT_bit_size, &a), &bits);
				if (dwarf_hasattr(&m, DW_AT_data_bit_offset)) {
					dwarf_formudata(dwarf_attr(&m, DW_AT_data_bit_offset, &a), &bitoff);
				} else {
					/* DWARF 2 style (clang): counted from the most significant bit of a
					 * byte_size unit at the member location. */
					Dwarf_Word unit = 0, msb = 0;

					dwarf_formudata(dwarf_attr(&m, DW_AT_byte_size, &a), &unit);
					dwarf_formudata(dwarf_attr(&m, DW_AT_bit_offset, &a), &msb);
					bitoff = unit * 8 >= msb + bits ? unit * 8 - msb - bits : 0;
				}
				fld->bit_size = (unsigned)bits;
				fld->offset += bitoff / 8;
				fld->bit_offset = (unsigned)(bitoff % 8);
				if (*s) {
					cbin_err(errbuf, "%s: %s is a bit field: nothing below it", c->base, name);
					return -EINVAL;
				}
			}
		}
		where[0] = 0;
		spell(c, &cur, where, sizeof(where), 0);
		snprintf(where + strlen(where), sizeof(where) - strlen(where), " (%.*s)", (int)(s - path), path);
	}
	cbin_describe(c, &cur, &fld->type);
	*last = cur;
	return 0;
}

int cbin_field_in(const struct cbin *c, const struct cbin_type *t, const char *path, struct cbin_field *fld,
		  char *errbuf)
{
	Dwarf_Die d, last;

	cbin_err(errbuf, "%s", "");
	memset(fld, 0, sizeof(*fld));
	if (!c || !t || !path)
		return -EINVAL;
	if (!t->id || !dwarf_offdie(c->dw, t->id, &d)) {
		cbin_err(errbuf, "%s: %s has no fields", c ? c->base : "", t->name);
		return -EINVAL;
	}
	return cbin_field_walk(c, &d, path, fld, &last, errbuf);
}

int cbin_field(const struct cbin *c, const char *type, const char *path, struct cbin_field *fld, char *errbuf)
{
	struct cbin_type t;
	int ret;

	memset(fld, 0, sizeof(*fld));
	if (!c || !type || !path)
		return -EINVAL;
	if ((ret = cbin_type_find(c, type, &t, errbuf)))
		return ret;
	return cbin_field_in(c, &t, path, fld, errbuf);
}
