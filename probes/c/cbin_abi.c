/* cbin: where the x86-64 System V calling convention puts each parameter at a function's first
 * instruction (the psABI's classification, for what C passes: integers, pointers, floats and
 * small aggregates). The debug info's own location lists describe the code after the prologue
 * and are absent at -O0, so the ABI is the reliable source at the entry. */
#include "cbin_internal.h"

#include <errno.h>
#include <string.h>

enum cls { C_NONE, C_INT, C_SSE, C_MEM };

/* Integer argument registers in order, in struct uprobe_read numbering. */
static const uint8_t int_regs[6] = {UPROBE_SRC_RDI, UPROBE_SRC_RSI, UPROBE_SRC_RDX,
				    UPROBE_SRC_RCX, UPROBE_SRC_R8,  UPROBE_SRC_R9};

struct classes {
	enum cls eb[2]; /* per eightbyte */
	bool memory;
	uint64_t align;
};

static void merge(struct classes *k, uint64_t off, uint64_t size, enum cls cl, uint64_t align)
{
	if (align > k->align)
		k->align = align;
	if (cl == C_MEM || (align && off % align) || off + size > 16) {
		k->memory = true;
		return;
	}
	for (uint64_t b = off / 8; b <= (off + (size ? size : 1) - 1) / 8 && b < 2; b++)
		if (k->eb[b] != C_INT)
			k->eb[b] = cl == C_INT || k->eb[b] == C_NONE ? cl : k->eb[b];
}

/* Classifies the scalar leaves of t (peeled) placed at off. */
static void classify(const struct cbin *c, Dwarf_Die *t, uint64_t off, struct classes *k, int depth)
{
	Dwarf_Die p, child, sub;
	Dwarf_Word size = 0;
	struct cbin_type d;

	if (depth > 16 || k->memory || !cbin_peel(t, &p))
		return;
	cbin_complete(c, &p);
	dwarf_aggregate_size(&p, &size);
	switch (dwarf_tag(&p)) {
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		if (dwarf_child(&p, &child) != 0)
			return;
		do {
			Dwarf_Attribute a;
			Dwarf_Word loc = 0;

			if (dwarf_tag(&child) != DW_TAG_member || !cbin_die_type(&child, &sub))
				continue;
			dwarf_formudata(dwarf_attr(&child, DW_AT_data_member_location, &a), &loc);
			if (dwarf_hasattr(&child, DW_AT_bit_size)) {
				Dwarf_Word bitoff = 0;

				dwarf_formudata(dwarf_attr(&child, DW_AT_data_bit_offset, &a), &bitoff);
				merge(k, off + bitoff / 8, 1, C_INT, 1);
				continue;
			}
			classify(c, &sub, off + loc, k, depth + 1);
		} while (dwarf_siblingof(&child, &child) == 0);
		return;
	case DW_TAG_array_type: {
		Dwarf_Word esize = 0;

		if (!cbin_die_type(&p, &sub) || dwarf_aggregate_size(&sub, &esize) != 0 || esize == 0)
			return;
		for (uint64_t o = 0; o + esize <= size && !k->memory; o += esize)
			classify(c, &sub, off + o, k, depth + 1);
		return;
	}
	default:
		cbin_describe(c, &p, &d);
		if (d.kind == CBIN_T_FLOAT) {
			/* long double and its complex are x87 classes: passed in memory. */
			bool x87 = d.size == 16 && !strstr(d.name, "complex");
			merge(k, off, size, x87 || d.size > 16 ? C_MEM : C_SSE, strstr(d.name, "complex") ? size / 2 : size);
			if (d.size == 16 && !x87)
				merge(k, off + 8, 8, C_SSE, 8);
		} else {
			merge(k, off, size, C_INT, size > 16 ? 16 : size ? size : 1);
		}
	}
}

/* Classes of a value of type t (NULL: void); true when it goes in memory. */
static bool classes_of(const struct cbin *c, Dwarf_Die *t, struct classes *k, uint64_t *size)
{
	struct cbin_type d;

	memset(k, 0, sizeof(*k));
	cbin_describe(c, t, &d);
	*size = d.size;
	if (!t || d.kind == CBIN_T_VOID)
		return false;
	if (d.size > 16) {
		k->memory = true;
		k->align = 8;
		return true;
	}
	classify(c, t, 0, k, 0);
	if (k->align < 8)
		k->align = 8;
	return k->memory;
}

int cbin_abi_params(const struct cbin *c, Dwarf_Die *fn, struct cbin_func *f, char *errbuf)
{
	unsigned nint = 0, nsse = 0;
	int32_t stack = 8; /* rsp + 8: the first stack argument, above the return address */
	Dwarf_Die t;
	struct classes k;
	uint64_t size;

	(void)errbuf;
	if (f->ret.kind == CBIN_T_STRUCT && cbin_die_type(fn, &t) && classes_of(c, &t, &k, &size)) {
		f->ret_in_memory = 1;
		nint = 1; /* rdi holds the address to return into */
	}
	for (unsigned i = 0; i < f->nparams; i++) {
		struct cbin_param *p = &f->params[i];
		unsigned want_int = 0, want_sse = 0;
		Dwarf_Die pt;
		bool mem;

		if (!p->type.id || !dwarf_offdie(c->dw, p->type.id, &pt)) {
			p->loc = CBIN_LOC_STACK; /* no type: nothing sensible; keep it out of registers */
			p->stack_off = stack;
			continue;
		}
		mem = classes_of(c, &pt, &k, &size);
		for (int b = 0; b < 2 && !mem; b++) {
			want_int += k.eb[b] == C_INT;
			want_sse += k.eb[b] == C_SSE;
		}
		if (mem || nint + want_int > 6 || nsse + want_sse > 8 || (!want_int && !want_sse)) {
			/* In memory, or no registers left for all of it: all of it on the stack. */
			if (k.align > 8)
				stack = (int32_t)((stack + 15) & ~15);
			p->loc = CBIN_LOC_STACK;
			p->stack_off = stack;
			stack += (int32_t)((size + 7) & ~7ull);
			continue;
		}
		if (want_sse && want_int)
			p->loc = CBIN_LOC_MIXED;
		else if (want_sse)
			p->loc = CBIN_LOC_SSE;
		else
			p->loc = want_int == 2 ? CBIN_LOC_REG2 : CBIN_LOC_REG;
		if (want_int) {
			p->reg = int_regs[nint];
			p->reg2 = want_int == 2 ? int_regs[nint + 1] : 0;
		}
		nint += want_int;
		nsse += want_sse;
	}
	return 0;
}
