/* What the parts of cbin share (not an API): the opened file, its index, and DWARF helpers. */
#ifndef SPECTAP_CBIN_INTERNAL_H
#define SPECTAP_CBIN_INTERNAL_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>

#include "cbin.h"

/* An ELF function symbol. */
struct cbin_sym {
	const char *name;
	uint64_t value, size;
	bool global;
};

/* A top-level DWARF subprogram (concrete, abstract or declared) or named type. */
struct cbin_ent {
	const char *name;
	Dwarf_Off off;
	Dwarf_Off origin; /* subprogram: its abstract origin, else 0 */
	bool concrete;    /* subprogram: has code (a low pc or ranges) */
	bool complete;    /* type: not only a declaration */
};

struct cbin {
	char *path, *debug_path;
	const char *base; /* path's basename, for messages */
	int fd, dfd;
	Elf *elf, *delf;  /* delf: the separate debug file, or NULL */
	Dwarf *dw;
	GElf_Phdr *ph;
	size_t nph;
	struct cbin_sym *syms; /* by name */
	size_t nsyms;
	char *strtab;          /* the symbol names' copy */
	struct cbin_ent *funcs, *types; /* by name */
	size_t nfuncs, ntypes;
	Dwarf_Off *inl;        /* abstract origins of every inlined call site, sorted */
	size_t ninl;
};

void cbin_err(char *errbuf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Index lookups: the first entry named name (entries with it follow), or NULL. */
const struct cbin_ent *cbin_find_ent(const struct cbin_ent *v, size_t n, const char *name);
const struct cbin_sym *cbin_find_sym(const struct cbin *c, const char *name);
size_t cbin_count_inlined(const struct cbin *c, Dwarf_Off origin);
int cbin_vaddr_to_off(const struct cbin *c, uint64_t va, uint64_t *off);

/* The name of a DIE, through its abstract origin or specification; NULL when unnamed. */
const char *cbin_die_name(Dwarf_Die *die);
/* The DIE of die's DW_AT_type into *out; false for void. */
bool cbin_die_type(Dwarf_Die *die, Dwarf_Die *out);
/* Strips typedefs and qualifiers; false when that leaves void. */
bool cbin_peel(Dwarf_Die *t, Dwarf_Die *out);
/* When *t is a struct/union declaration, the complete definition of that name (in place). */
void cbin_complete(const struct cbin *c, Dwarf_Die *t);
/* Describes type t (NULL: void) into *out. */
void cbin_describe(const struct cbin *c, Dwarf_Die *t, struct cbin_type *out);

/* Walks path ("a.b[2].c") below type outer into fld; *last is the field's type DIE. */
int cbin_field_walk(const struct cbin *c, Dwarf_Die *outer, const char *path, struct cbin_field *fld,
		    Dwarf_Die *last, char *errbuf);

/* System V classification of the parameters of f (types already filled in). */
int cbin_abi_params(const struct cbin *c, Dwarf_Die *fn, struct cbin_func *f, char *errbuf);

#endif
