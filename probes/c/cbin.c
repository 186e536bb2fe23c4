/* cbin: opening a C binary, indexing its symbols and DWARF, and finding functions (cbin.h). */
#include "cbin_internal.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cbin_err(char *errbuf, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, CBIN_ERRBUF_SIZE, fmt, ap);
	va_end(ap);
}

static int by_name(const void *a, const void *b)
{
	const struct cbin_ent *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	return d ? d : (x->off > y->off) - (x->off < y->off);
}

static int sym_by_name(const void *a, const void *b)
{
	const struct cbin_sym *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	return d ? d : (x->value > y->value) - (x->value < y->value);
}

static int off_cmp(const void *a, const void *b)
{
	Dwarf_Off x = *(const Dwarf_Off *)a, y = *(const Dwarf_Off *)b;

	return (x > y) - (x < y);
}

const struct cbin_ent *cbin_find_ent(const struct cbin_ent *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(v[lo].name, name) == 0 ? &v[lo] : NULL;
}

const struct cbin_sym *cbin_find_sym(const struct cbin *c, const char *name)
{
	size_t lo = 0, hi = c->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(c->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nsyms && strcmp(c->syms[lo].name, name) == 0 ? &c->syms[lo] : NULL;
}

size_t cbin_count_inlined(const struct cbin *c, Dwarf_Off origin)
{
	size_t lo = 0, hi = c->ninl, n = 0;

	if (!origin)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->inl[mid] < origin)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + n < c->ninl && c->inl[lo + n] == origin)
		n++;
	return n;
}

int cbin_vaddr_to_off(const struct cbin *c, uint64_t va, uint64_t *off)
{
	for (size_t i = 0; i < c->nph; i++) {
		const GElf_Phdr *p = &c->ph[i];

		if (p->p_type == PT_LOAD && va >= p->p_vaddr && va < p->p_vaddr + p->p_filesz) {
			*off = va - p->p_vaddr + p->p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

/* Appends to a growing array; -ENOMEM. */
static int push(void **v, size_t *n, size_t *cap, size_t size, const void *item)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		void *p = realloc(*v, nc * size);

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = nc;
	}
	memcpy((char *)*v + *n * size, item, size);
	(*n)++;
	return 0;
}

/* The function symbols of .symtab, or of .dynsym when the file is stripped. */
static int read_syms(struct cbin *c, char *errbuf)
{
	Elf_Scn *scn = NULL, *tab = NULL;
	GElf_Shdr sh, tsh = {0};
	size_t cap = 0, strbytes = 0, used = 0;
	Elf_Data *data;

	while ((scn = elf_nextscn(c->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !tab)) {
			tab = scn;
			tsh = sh;
		}
	}
	if (!tab || !tsh.sh_entsize || !(data = elf_getdata(tab, NULL)))
		return 0; /* no symbols: DWARF addresses are used as they are */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < tsh.sh_size / tsh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			struct cbin_sym cs;

			if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !(name = elf_strptr(c->elf, tsh.sh_link, s.st_name)) || !*name)
				continue;
			if (pass == 0) {
				strbytes += strlen(name) + 1;
				continue;
			}
			/* A copy: the names must outlive nothing but c, yet elf_strptr's may move. */
			cs.name = memcpy(c->strtab + used, name, strlen(name) + 1);
			used += strlen(name) + 1;
			cs.value = s.st_value;
			cs.size = s.st_size;
			cs.global = GELF_ST_BIND(s.st_info) != STB_LOCAL;
			if (push((void **)&c->syms, &c->nsyms, &cap, sizeof(cs), &cs))
				goto nomem;
		}
		if (pass == 0 && !(c->strtab = malloc(strbytes ? strbytes : 1)))
			goto nomem;
	}
	if (c->nsyms)
		qsort(c->syms, c->nsyms, sizeof(*c->syms), sym_by_name);
	return 0;
nomem:
	cbin_err(errbuf, "%s: out of memory reading its symbols", c->base);
	return -ENOMEM;
}

struct index_caps {
	size_t funcs, types, inl;
};

static bool is_named_type(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type ||
	       tag == DW_TAG_typedef || tag == DW_TAG_base_type;
}

/* Indexes die and its children: top-level subprograms and named types, and the origin of
 * every inlined call site anywhere but inside the function's own out-of-line copy (gcc splits a
 * function and inlines a part back into itself: the calls still go through that copy's entry).
 * encl: the origin of the top-level subprogram die is in. */
static int index_die(struct cbin *c, Dwarf_Die *die, bool top, Dwarf_Off encl, struct index_caps *caps)
{
	Dwarf_Die child;
	int tag = dwarf_tag(die), ret = 0;

	if (tag == DW_TAG_inlined_subroutine) {
		Dwarf_Attribute a;
		Dwarf_Die o;

		if (dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &o)) {
			Dwarf_Off off = dwarf_dieoffset(&o);
			if (off != encl && push((void **)&c->inl, &c->ninl, &caps->inl, sizeof(off), &off))
				return -ENOMEM;
		}
	} else if (top && tag == DW_TAG_subprogram) {
		struct cbin_ent e = {.name = cbin_die_name(die), .off = dwarf_dieoffset(die)};
		Dwarf_Attribute a;
		Dwarf_Die o;

		e.concrete = dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
		if (dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &o))
			e.origin = dwarf_dieoffset(&o);
		else if (dwarf_hasattr(die, DW_AT_inline))
			e.origin = e.off; /* the abstract instance itself: inlined sites point here */
		if (e.name && push((void **)&c->funcs, &c->nfuncs, &caps->funcs, sizeof(e), &e))
			return -ENOMEM;
		encl = e.origin ? e.origin : e.off;
	} else if (top && is_named_type(tag)) {
		struct cbin_ent e = {.name = dwarf_diename(die), .off = dwarf_dieoffset(die)};

		e.complete = !dwarf_hasattr(die, DW_AT_declaration);
		if (e.name && push((void **)&c->types, &c->ntypes, &caps->types, sizeof(e), &e))
			return -ENOMEM;
	}
	/* Types nest no inlined calls; only code (subprograms, blocks) is worth descending. */
	if (top && tag != DW_TAG_subprogram)
		return 0;
	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int t = dwarf_tag(&child);

		if (t == DW_TAG_inlined_subroutine || t == DW_TAG_lexical_block || t == DW_TAG_subprogram)
			ret = index_die(c, &child, false, encl, caps);
	} while (!ret && dwarf_siblingof(&child, &child) == 0);
	return ret;
}

static int index_dwarf(struct cbin *c, char *errbuf)
{
	struct index_caps caps = {0};
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(c->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(c->dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				if (index_die(c, &die, true, 0, &caps)) {
					cbin_err(errbuf, "%s: out of memory indexing its debug info", c->base);
					return -ENOMEM;
				}
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	if (!c->nfuncs && !c->ntypes) {
		cbin_err(errbuf, "%s: its DWARF debug info has no functions or types (build with -g, not -g1)",
			 c->base);
		return -ENODATA;
	}
	/* qsort must not see NULL, even with no element: a module built without inlining has none. */
	if (c->nfuncs)
		qsort(c->funcs, c->nfuncs, sizeof(*c->funcs), by_name);
	if (c->ntypes)
		qsort(c->types, c->ntypes, sizeof(*c->types), by_name);
	if (c->ninl)
		qsort(c->inl, c->ninl, sizeof(*c->inl), off_cmp);
	return 0;
}

/* The separate debug file of c's build id, as Debian's -dbgsym packages install it. */
static Dwarf *debug_by_build_id(struct cbin *c)
{
	const void *id = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(c->elf, &id);
	char path[4200];
	size_t len;
	Dwarf *dw;

	if (n < 2)
		return NULL;
	len = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", ((const uint8_t *)id)[0]);
	for (ssize_t i = 1; i < n && len + 3 < sizeof(path); i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", ((const uint8_t *)id)[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	c->dfd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->dfd < 0)
		return NULL;
	c->delf = elf_begin(c->dfd, ELF_C_READ, NULL);
	if (!c->delf || !(dw = dwarf_begin_elf(c->delf, DWARF_C_READ, NULL)))
		return NULL;
	c->debug_path = strdup(path);
	return dw;
}

int cbin_open(const char *path, struct cbin **out, char *errbuf)
{
	struct cbin *c;
	GElf_Ehdr eh;
	int ret = -ENOEXEC;

	*out = NULL;
	cbin_err(errbuf, "%s", "");
	if (!path)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		cbin_err(errbuf, "libelf: %s", elf_errmsg(-1));
		return -ENOEXEC;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		cbin_err(errbuf, "%s: out of memory", path);
		return -ENOMEM;
	}
	c->base = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
	c->dfd = -1;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		ret = -errno;
		cbin_err(errbuf, "%s: %s", path, strerror(errno));
		goto fail;
	}
	c->elf = elf_begin(c->fd, ELF_C_READ, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh)) {
		cbin_err(errbuf, "%s: not an ELF file", path);
		goto fail;
	}
	if (eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		cbin_err(errbuf, "%s: not an x86-64 little-endian ELF file (machine %u)", path, eh.e_machine);
		goto fail;
	}
	if (elf_getphdrnum(c->elf, &c->nph) || !(c->ph = calloc(c->nph ? c->nph : 1, sizeof(*c->ph)))) {
		cbin_err(errbuf, "%s: no program headers", path);
		goto fail;
	}
	for (size_t i = 0; i < c->nph; i++)
		if (!gelf_getphdr(c->elf, (int)i, &c->ph[i]))
			memset(&c->ph[i], 0, sizeof(c->ph[i]));
	if ((ret = read_syms(c, errbuf)))
		goto fail;
	c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
	if (!c->dw)
		c->dw = debug_by_build_id(c);
	if (!c->dw) {
		ret = -ENODATA;
		cbin_err(errbuf, "%s: no DWARF debug info (build with -g; nor a debug file under /usr/lib/debug/.build-id)",
			 c->base);
		goto fail;
	}
	if ((ret = index_dwarf(c, errbuf)))
		goto fail;
	*out = c;
	return 0;
fail:
	cbin_close(c);
	return ret;
}

void cbin_close(struct cbin *c)
{
	if (!c)
		return;
	if (c->dw)
		dwarf_end(c->dw);
	if (c->delf)
		elf_end(c->delf);
	if (c->elf)
		elf_end(c->elf);
	if (c->dfd >= 0)
		close(c->dfd);
	if (c->fd >= 0)
		close(c->fd);
	free(c->ph);
	free(c->syms);
	free(c->strtab);
	free(c->funcs);
	free(c->types);
	free(c->inl);
	free(c->debug_path);
	free(c->path);
	free(c);
}

const char *cbin_path(const struct cbin *c) { return c->path; }
const char *cbin_debug_path(const struct cbin *c) { return c->debug_path ? c->debug_path : c->path; }

const struct cbin_param *cbin_func_param(const struct cbin_func *f, const char *name)
{
	for (unsigned i = 0; i < f->nparams; i++)
		if (strcmp(f->params[i].name, name) == 0)
			return &f->params[i];
	return NULL;
}

/* Where the name an expression of cbin_read starts with is: past a cast, "(T *)name..." or
 * "((T *)name...)...". */
static const char *expr_name(const char *expr)
{
	while (*expr == ' ')
		expr++;
	if (expr[0] == '(' && expr[1] == '(')
		expr++;
	const char *close = *expr == '(' ? strchr(expr, ')') : NULL;
	if (close && memchr(expr, '*', (size_t)(close - expr)))
		for (expr = close + 1; *expr == ' '; expr++)
			;
	return expr;
}

/* Whether p starts with the name name, whole (a step or the end follows). */
static bool names(const char *p, const char *name)
{
	size_t n = strlen(name);
	return n && !strncmp(p, name, n) && (p[n] == 0 || p[n] == '-' || p[n] == '.' || p[n] == '[' || p[n] == ')');
}

int cbin_expr_param(const struct cbin_func *f, const char *expr)
{
	const char *p = expr_name(expr);
	for (unsigned k = 0; k < f->nparams; k++)
		if (names(p, f->params[k].name))
			return (int)k;
	return -1;
}

bool cbin_expr_returns(const char *expr) { return names(expr_name(expr), "return"); }

/* A compiler clone of name ("name.constprop.0"), for the message when only that exists. */
static const struct cbin_sym *find_clone(const struct cbin *c, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < c->nsyms; i++)
		if (strncmp(c->syms[i].name, name, n) == 0 && c->syms[i].name[n] == '.')
			return &c->syms[i];
	return NULL;
}

/* The start of the first address range of d: for a function split in parts (hot and cold),
 * which has ranges and no low pc. */
static bool first_range(Dwarf_Die *d, Dwarf_Addr *a)
{
	Dwarf_Addr base, start, end;

	if (dwarf_ranges(d, 0, &base, &start, &end) <= 0)
		return false;
	*a = start;
	return true;
}

/* The name of the compilation unit (source file) of d, or "?". */
static const char *cu_name(Dwarf_Die *d)
{
	Dwarf_Die cu;
	const char *n = dwarf_diecu(d, &cu, NULL, NULL) ? dwarf_diename(&cu) : NULL;

	return n ? n : "?";
}

/* 1 when the source file of d is file or ends with "/" file (file NULL: any). */
static bool in_file(Dwarf_Die *d, const char *file)
{
	const char *n = cu_name(d);
	size_t ln = strlen(n), lf = file ? strlen(file) : 0;

	return !file || (ln >= lf && strcmp(n + ln - lf, file) == 0 && (ln == lf || n[ln - lf - 1] == '/'));
}

/* Picks the out-of-line copy of name (in source file file, if not NULL) among its concrete DIEs:
 * the one holding the symbol name when there is a symbol table. Fills f's entry, external and
 * ninlined. */
static int pick_copy(const struct cbin *c, const char *name, const char *file, const struct cbin_ent *first,
		     Dwarf_Die *die, struct cbin_func *f, char *errbuf)
{
	const struct cbin_sym *sym = cbin_find_sym(c, name);
	unsigned found = 0, ninl = 0, norigins = 0;
	Dwarf_Off origins[32];
	Dwarf_Addr pc = 0;

	for (const struct cbin_ent *e = first; e < c->funcs + c->nfuncs && strcmp(e->name, name) == 0; e++) {
		Dwarf_Die d;
		Dwarf_Addr a = 0;
		bool seen = false;

		/* The abstract instance and its concrete copies share an origin: count it once. */
		for (unsigned k = 0; k < norigins; k++)
			seen |= origins[k] == e->origin;
		if (!seen && norigins < 32) {
			origins[norigins++] = e->origin;
			ninl += (unsigned)cbin_count_inlined(c, e->origin);
		}
		if (!e->concrete || !dwarf_offdie(c->dw, e->off, &d) || !in_file(&d, file))
			continue;
		if (dwarf_entrypc(&d, &a) != 0 && dwarf_lowpc(&d, &a) != 0 && !first_range(&d, &a))
			continue;
		if (sym) {
			/* The copy holding the symbol; its entry is the symbol (a hot/cold split function's
			 * ranges may not start there). Others are clones (name.part.0, name.constprop.0). */
			const struct cbin_sym *hit = NULL;

			for (const struct cbin_sym *s = sym; s < c->syms + c->nsyms && !strcmp(s->name, name); s++)
				if (s->value == a || dwarf_haspc(&d, s->value) == 1)
					hit = s;
			if (!hit)
				continue;
			a = hit->value;
		}
		if (found++ && pc != a) {
			cbin_err(errbuf, "%s: function %s is defined more than once (static functions in %s and %s): name one as \"file.c:%s\"",
				 c->base, name, cu_name(die), cu_name(&d), name);
			return -ENOTUNIQ;
		}
		pc = a;
		*die = d;
	}
	f->ninlined = ninl;
	if (!found) {
		const struct cbin_sym *clone = find_clone(c, name);

		if (file) {
			cbin_err(errbuf, "%s: no out-of-line function %s in source file %s", c->base, name, file);
			return -ENOENT;
		}
		if (clone)
			cbin_err(errbuf, "%s: function %s exists only as the compiler's clone %s (its arguments may differ); inlined at %u call sites",
				 c->base, name, clone->name, ninl);
		else
			cbin_err(errbuf, "%s: function %s is only inlined (at %u call sites): no out-of-line copy to probe",
				 c->base, name, ninl);
		return -EADDRNOTAVAIL;
	}
	f->entry = pc;
	f->external = dwarf_hasattr_integrate(die, DW_AT_external);
	return 0;
}

int cbin_func_find(const struct cbin *c, const char *name, struct cbin_func *f, char *errbuf)
{
	const struct cbin_ent *first;
	Dwarf_Die die, child, t, decl, *decl_p = &die;
	Dwarf_Attribute a;
	char file[256];
	const char *colon;
	int ret;

	memset(f, 0, sizeof(*f));
	cbin_err(errbuf, "%s", "");
	if (!c || !name)
		return -EINVAL;
	colon = strrchr(name, ':');
	if (colon && (size_t)(colon - name) < sizeof(file)) {
		memcpy(file, name, (size_t)(colon - name));
		file[colon - name] = 0;
		name = colon + 1;
	}
	first = cbin_find_ent(c->funcs, c->nfuncs, name);
	if (!first) {
		if (cbin_find_sym(c, name))
			cbin_err(errbuf, "%s: function %s has no DWARF debug info (its file was built without -g?)",
				 c->base, name);
		else
			cbin_err(errbuf, "%s: no function %s", c->base, name);
		return -ENOENT;
	}
	if ((ret = pick_copy(c, name, colon ? file : NULL, first, &die, f, errbuf)))
		return ret;
	f->name = first->name;
	if (cbin_vaddr_to_off(c, f->entry, &f->file_off)) {
		cbin_err(errbuf, "%s: function %s at 0x%llx is in no loadable segment", c->base, name,
			 (unsigned long long)f->entry);
		return -ENOEXEC;
	}
	cbin_describe(c, cbin_die_type(&die, &t) ? &t : NULL, &f->ret);
	/* Parameters as declared: from the abstract instance when there is one (a concrete copy
	 * may leave out those it optimised away). */
	if (dwarf_attr(&die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &decl))
		decl_p = &decl;
	if (dwarf_child(decl_p, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);
			struct cbin_param *p;
			const char *pn;

			if (tag == DW_TAG_unspecified_parameters)
				f->variadic = 1;
			if (tag != DW_TAG_formal_parameter)
				continue;
			if (f->nparams == CBIN_MAX_PARAMS) {
				cbin_err(errbuf, "%s: function %s has more than %d parameters", c->base, name,
					 CBIN_MAX_PARAMS);
				return -E2BIG;
			}
			p = &f->params[f->nparams++];
			pn = cbin_die_name(&child);
			p->name = pn ? pn : "";
			cbin_describe(c, cbin_die_type(&child, &t) ? &t : NULL, &p->type);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return cbin_abi_params(c, &die, f, errbuf);
}
