/* gobin: ELF image, program headers and the Go 1.18+ function table (.gopclntab).
 *
 * pcHeader (runtime/symtab.go, the same for magic 0xfffffff0 = Go 1.18-1.19 and 0xfffffff1 =
 * Go 1.20+; only _func's tail changed in 1.20, and gobin reads only its first two words):
 *   0 magic u32 | 4 pad1, pad2 u8 (0) | 6 minLC u8 (1 on x86) | 7 ptrSize u8 (8)
 *   8 nfunc | 16 nfiles | 24 textStart (runtime.text) | 32 funcnameOffset | 40 cuOffset
 *   48 filetabOffset | 56 pctabOffset | 64 pclnOffset            (words of ptrSize bytes)
 * At pcln+pclnOffset: the functab, nfunc+1 pairs {entryoff u32, funcoff u32} (entryoff relative
 * to textStart; the last pair's entryoff is the end of the last function), and the _func records
 * at pcln+pclnOffset+funcoff: {entryOff u32, nameOff i32, ...}; names are NUL-terminated at
 * pcln+funcnameOffset+nameOff. */
#include "gobin_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCLN_MAGIC_118 0xfffffff0u
#define PCLN_MAGIC_120 0xfffffff1u
#define PCLN_MAGIC_116 0xfffffffau
#define PCLN_MAGIC_12 0xfffffffbu
#define PCLN_HDR_SIZE 72

static const char buildinfo_magic[14] = "\xff Go buildinf:";

int gobin_fail(char *errbuf, const char *path, int err, const char *fmt, ...)
{
	if (errbuf) {
		int n = snprintf(errbuf, GOBIN_ERRBUF_SIZE, "%s: ", path ? path : "(null)");
		if (n < 0 || n >= GOBIN_ERRBUF_SIZE)
			n = 0;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(errbuf + n, GOBIN_ERRBUF_SIZE - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -err;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Word i (ptrSize 8) of the pcHeader. */
static uint64_t hdr_word(const uint8_t *h, int i) { return rd64(h + 8 + 8 * i); }

int gobin_vaddr_to_off(const struct gobin *g, uint64_t va, uint64_t *off)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gobin_seg *s = &g->segs[i];
		if (va >= s->vaddr && va - s->vaddr < s->filesz) {
			*off = va - s->vaddr + s->off;
			return 0;
		}
	}
	return -ERANGE;
}

int gobin_read(const struct gobin *g, uint64_t va, void *dst, size_t n)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gobin_seg *s = &g->segs[i];
		if (va >= s->vaddr && va - s->vaddr < s->filesz && n <= s->filesz - (va - s->vaddr)) {
			memcpy(dst, g->map + s->off + (va - s->vaddr), n);
			return 0;
		}
	}
	return -ERANGE;
}

/* The file offset of a file-backed virtual address, or -ERANGE. */
static int off_to_vaddr(const struct gobin *g, uint64_t off, uint64_t *va)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gobin_seg *s = &g->segs[i];
		if (off >= s->off && off - s->off < s->filesz) {
			*va = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ERANGE;
}

/* Checks that h (n bytes available) starts a plausible Go 1.18+ pcHeader. */
static bool pcln_header_ok(const uint8_t *h, size_t n)
{
	if (n < PCLN_HDR_SIZE)
		return false;
	uint32_t magic = rd32(h);
	if (magic != PCLN_MAGIC_118 && magic != PCLN_MAGIC_120)
		return false;
	if (h[4] != 0 || h[5] != 0 || h[6] != 1 || h[7] != 8)
		return false;
	uint64_t nfunc = hdr_word(h, 0);
	if (nfunc == 0 || nfunc > n / 8)
		return false;
	for (int i = 3; i <= 7; i++) {
		uint64_t o = hdr_word(h, i);
		if (o < PCLN_HDR_SIZE || o >= n)
			return false;
	}
	return (nfunc + 1) * 8 <= n - hdr_word(h, 7);
}

/* Finds a pcHeader by its magic in the file-backed parts of the PT_LOAD segments (used when
 * the section headers are gone). Also reports an old-layout magic it saw, for the message. */
static int find_pcln_by_magic(struct gobin *g, uint32_t *old_magic)
{
	static const uint8_t old_pat[2][8] = { { 0xfa, 0xff, 0xff, 0xff, 0, 0, 1, 8 },
					       { 0xfb, 0xff, 0xff, 0xff, 0, 0, 1, 8 } };
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gobin_seg *s = &g->segs[i];
		if (s->off > g->size || s->filesz > g->size - s->off)
			continue;
		const uint8_t *base = g->map + s->off;
		for (uint64_t o = (8 - (s->vaddr & 7)) & 7; o + PCLN_HDR_SIZE <= s->filesz; o += 8) {
			const uint8_t *h = base + o;
			if (h[1] != 0xff || h[2] != 0xff || h[3] != 0xff)
				continue;
			if (pcln_header_ok(h, s->filesz - o)) {
				g->pcln = h;
				g->pcln_len = s->filesz - o;
				g->pcln_va = s->vaddr + o;
				return 0;
			}
			for (int k = 0; k < 2; k++)
				if (!memcmp(h, old_pat[k], 8))
					*old_magic = rd32(h);
		}
	}
	return -ENOENT;
}

/* Finds .go.buildinfo by its 16-byte aligned magic (when the section headers are gone). */
static const uint8_t *find_buildinfo_by_magic(const struct gobin *g, size_t *n)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct gobin_seg *s = &g->segs[i];
		if (s->off > g->size || s->filesz > g->size - s->off)
			continue;
		const uint8_t *base = g->map + s->off;
		for (uint64_t o = (16 - (s->vaddr & 15)) & 15; o + 32 <= s->filesz; o += 16)
			if (!memcmp(base + o, buildinfo_magic, sizeof(buildinfo_magic))) {
				*n = s->filesz - o;
				return base + o;
			}
	}
	return NULL;
}

/* For a position-independent binary whose textStart word is left to a dynamic relocation:
 * the addend of the R_X86_64_RELATIVE relocation at va, or 0. */
static uint64_t relative_addend(Elf *elf, uint64_t va)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			if (gelf_getrela(d, (int)i, &r) && r.r_offset == va &&
			    GELF_R_TYPE(r.r_info) == R_X86_64_RELATIVE)
				return (uint64_t)r.r_addend;
		}
	}
	return 0;
}

static int cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct gobin_func *f = arg;
	return strcmp(f[*(const size_t *)a].name, f[*(const size_t *)b].name);
}

/* Reads the function table of g->pcln. */
static int parse_pcln(struct gobin *g, Elf *elf, char *errbuf)
{
	const uint8_t *h = g->pcln;
	size_t n = g->pcln_len;
	const char *path = g->path;
	if (n < PCLN_HDR_SIZE)
		return gobin_fail(errbuf, path, EINVAL, ".gopclntab is too short (%zu bytes)", n);
	uint32_t magic = rd32(h);
	if (magic == PCLN_MAGIC_116 || magic == PCLN_MAGIC_12)
		return gobin_fail(errbuf, path, ENOTSUP,
				  "Go pclntab magic 0x%08x is a layout older than Go 1.18 (supported: "
				  "0xfffffff0 Go 1.18-1.19, 0xfffffff1 Go 1.20+)",
				  magic);
	if (magic != PCLN_MAGIC_118 && magic != PCLN_MAGIC_120)
		return gobin_fail(errbuf, path, ENOTSUP,
				  ".gopclntab has unknown magic 0x%08x (supported: 0xfffffff0 Go "
				  "1.18-1.19, 0xfffffff1 Go 1.20+)",
				  magic);
	if (h[6] != 1 || h[7] != 8)
		return gobin_fail(errbuf, path, ENOTSUP,
				  ".gopclntab is for minLC %u, ptrSize %u (only x86-64: 1, 8)", h[6],
				  h[7]);
	if (!pcln_header_ok(h, n))
		return gobin_fail(errbuf, path, EINVAL,
				  ".gopclntab header is inconsistent (offsets out of its %zu bytes)", n);
	g->layout = magic == PCLN_MAGIC_118 ? "go1.18" : "go1.20";
	g->nfunc = hdr_word(h, 0);
	g->text_start = hdr_word(h, 2);
	if (g->text_start == 0 && g->elf_type == ET_DYN && elf)
		g->text_start = relative_addend(elf, g->pcln_va + 24);
	if (g->text_start == 0)
		return gobin_fail(errbuf, path, EINVAL,
				  ".gopclntab textStart (runtime.text) is 0 and no relocation sets it");
	uint64_t nameoff = hdr_word(h, 3), tabo = hdr_word(h, 7);
	const uint8_t *ftab = h + tabo;
	size_t ftab_len = n - tabo;

	g->funcs = calloc(g->nfunc, sizeof(*g->funcs));
	g->by_name = calloc(g->nfunc, sizeof(*g->by_name));
	if (!g->funcs || !g->by_name)
		return gobin_fail(errbuf, path, ENOMEM, "out of memory for %zu functions", g->nfunc);
	for (size_t i = 0; i < g->nfunc; i++) {
		uint32_t entryoff = rd32(ftab + 8 * i), funcoff = rd32(ftab + 8 * i + 4);
		uint32_t next = rd32(ftab + 8 * (i + 1));
		if (next < entryoff)
			return gobin_fail(errbuf, path, EINVAL,
					  ".gopclntab functab is not sorted at entry %zu", i);
		if (funcoff > ftab_len || ftab_len - funcoff < 8)
			return gobin_fail(errbuf, path, EINVAL,
					  ".gopclntab _func %zu lies outside the table", i);
		const uint8_t *fn = ftab + funcoff;
		if (rd32(fn) != entryoff)
			return gobin_fail(errbuf, path, EINVAL,
					  ".gopclntab _func %zu entry 0x%x differs from functab 0x%x", i,
					  rd32(fn), entryoff);
		int32_t noff = (int32_t)rd32(fn + 4);
		if (noff < 0 || (uint64_t)noff >= n - nameoff ||
		    !memchr(h + nameoff + noff, 0, n - nameoff - (uint64_t)noff))
			return gobin_fail(errbuf, path, EINVAL,
					  ".gopclntab name of function %zu is out of bounds", i);
		struct gobin_func *f = &g->funcs[i];
		size_t idoff = magic == PCLN_MAGIC_118 ? 36 : 40; /* 1.20 added startLine */
		if (ftab_len - funcoff < idoff + 4)
			return gobin_fail(errbuf, path, EINVAL,
					  ".gopclntab _func %zu is truncated", i);
		f->funcid = fn[idoff];
		f->name = (const char *)h + nameoff + noff;
		f->entry = g->text_start + entryoff;
		f->end = g->text_start + next;
		if (gobin_vaddr_to_off(g, f->entry, &f->file_off))
			return gobin_fail(errbuf, path, EINVAL,
					  "function %s at 0x%llx is in no file-backed segment", f->name,
					  (unsigned long long)f->entry);
		g->by_name[i] = i;
	}
	qsort_r(g->by_name, g->nfunc, sizeof(*g->by_name), cmp_by_name, g->funcs);
	return 0;
}

/* Sets funcs[].wrapper from the funcID: funcID_wrapper is the last of the runtime's funcID list,
 * 21 from Go 1.18 to 1.22 and 22 from 1.23 (which added funcID_corostart). */
static void mark_wrappers(struct gobin *g)
{
	unsigned major = 0, minor = 0;
	sscanf(g->go_version, "go%u.%u", &major, &minor);
	uint8_t id = major == 1 && minor < 23 ? 21 : 22;
	for (size_t i = 0; i < g->nfunc; i++)
		g->funcs[i].wrapper = g->funcs[i].funcid == id;
}

/* Reads the program headers and locates .gopclntab and .go.buildinfo (by section name, else by
 * magic). */
static int read_elf(struct gobin *g, int fd, char *errbuf)
{
	const char *path = g->path;
	int rc = 0;
	const uint8_t *bi = NULL;
	size_t bi_len = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = gobin_fail(errbuf, path, ENOEXEC, "not an ELF file");
		goto out;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh)) {
		rc = gobin_fail(errbuf, path, ENOEXEC, "unreadable ELF header: %s", elf_errmsg(-1));
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64) {
		rc = gobin_fail(errbuf, path, ENOTSUP,
				"ELF class %u, data %u, machine %u: only 64-bit little-endian x86-64 "
				"is supported",
				eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA], eh.e_machine);
		goto out;
	}
	g->elf_type = eh.e_type;
	size_t nph = 0;
	if (elf_getphdrnum(elf, &nph) || nph == 0) {
		rc = gobin_fail(errbuf, path, ENOEXEC, "no program headers (not an executable)");
		goto out;
	}
	g->segs = calloc(nph, sizeof(*g->segs));
	if (!g->segs) {
		rc = gobin_fail(errbuf, path, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > g->size || ph.p_filesz > g->size - ph.p_offset) {
			rc = gobin_fail(errbuf, path, EINVAL, "PT_LOAD %zu extends past the file", i);
			goto out;
		}
		g->segs[g->nsegs++] = (struct gobin_seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
							   ph.p_memsz, ph.p_flags };
	}

	size_t shstrndx = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!name || sh.sh_type == SHT_NOBITS || sh.sh_offset > g->size ||
			    sh.sh_size > g->size - sh.sh_offset)
				continue;
			if (!strcmp(name, ".gopclntab")) {
				g->pcln = g->map + sh.sh_offset;
				g->pcln_len = sh.sh_size;
				g->pcln_va = sh.sh_addr;
				g->pcln_from_section = true;
			} else if (!strcmp(name, ".go.buildinfo")) {
				bi = g->map + sh.sh_offset;
				bi_len = sh.sh_size;
			}
		}
	}
	if (!g->pcln) {
		uint32_t old = 0;
		if (find_pcln_by_magic(g, &old)) {
			if (old)
				rc = gobin_fail(errbuf, path, ENOTSUP,
						"Go binary older than Go 1.18 (pclntab magic 0x%08x); "
						"only Go 1.18+ layouts are supported",
						old);
			else
				rc = gobin_fail(errbuf, path, ENOEXEC,
						"not a Go binary (no .gopclntab section and no Go "
						"1.18+ pclntab header in its segments)");
			goto out;
		}
	} else if (g->pcln_va == 0 && off_to_vaddr(g, (uint64_t)(g->pcln - g->map), &g->pcln_va)) {
		rc = gobin_fail(errbuf, path, EINVAL, ".gopclntab is in no loaded segment");
		goto out;
	}
	if (!bi)
		bi = find_buildinfo_by_magic(g, &bi_len);
	rc = parse_pcln(g, elf, errbuf);
	if (rc)
		goto out;
	if (!bi) {
		rc = gobin_fail(errbuf, path, ENOEXEC,
				"no .go.buildinfo (neither the section nor its magic): not a Go 1.18+ "
				"binary");
		goto out;
	}
	rc = gobin_parse_buildinfo(g, bi, bi_len, errbuf);
	if (rc)
		goto out;
	mark_wrappers(g);
out:
	if (elf)
		elf_end(elf);
	return rc;
}

int gobin_open(const char *path, struct gobin **out, char *errbuf)
{
	int rc = 0, fd = -1;
	struct gobin *g = NULL;
	*out = NULL;
	if (errbuf)
		errbuf[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE) {
		rc = gobin_fail(errbuf, path, ENOSYS, "libelf is unusable: %s", elf_errmsg(-1));
		goto out;
	}
	g = calloc(1, sizeof(*g));
	if (!g || !(g->path = strdup(path))) {
		rc = gobin_fail(errbuf, path, ENOMEM, "out of memory");
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = gobin_fail(errbuf, path, errno, "cannot open: %s", strerror(errno));
		goto out;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		rc = gobin_fail(errbuf, path, errno, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 64) {
		rc = gobin_fail(errbuf, path, ENOEXEC, "not an ELF file (%s)",
				S_ISREG(st.st_mode) ? "shorter than an ELF header" : "not a regular file");
		goto out;
	}
	g->size = (size_t)st.st_size;
	/* Read, not mmap: the kernel puts the int3s of live uprobes on this file into every new
	 * mapping of it, which would hide the instructions we disassemble. */
	uint8_t *m = malloc(g->size);
	if (!m) {
		rc = gobin_fail(errbuf, path, ENOMEM, "out of memory reading %zu bytes", g->size);
		goto out;
	}
	for (size_t done = 0; done < g->size;) {
		ssize_t k = pread(fd, m + done, g->size - done, (off_t)done);
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			free(m);
			rc = gobin_fail(errbuf, path, e, "cannot read: %s", strerror(e));
			goto out;
		}
		done += (size_t)k;
	}
	g->map = m;
	rc = read_elf(g, fd, errbuf);
out:
	if (fd >= 0)
		close(fd);
	if (rc) {
		gobin_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

void gobin_close(struct gobin *g)
{
	if (!g)
		return;
	free((void *)g->map);
	free(g->path);
	free(g->segs);
	free(g->funcs);
	free(g->by_name);
	free(g->go_version);
	free(g->modinfo);
	free(g->modtext);
	free(g->deps);
	free(g->settings);
	free(g);
}

const char *gobin_path(const struct gobin *g) { return g->path; }
const char *gobin_pclntab_layout(const struct gobin *g) { return g->layout; }
uint64_t gobin_text_start(const struct gobin *g) { return g->text_start; }
int gobin_pclntab_from_section(const struct gobin *g) { return g->pcln_from_section; }
size_t gobin_func_count(const struct gobin *g) { return g->nfunc; }

int gobin_func_at(const struct gobin *g, size_t i, struct gobin_func *f)
{
	if (i >= g->nfunc)
		return -ERANGE;
	*f = g->funcs[i];
	return 0;
}

/* The range [*lo, *hi) of by_name holding name. */
static void name_range(const struct gobin *g, const char *name, size_t *lo, size_t *hi)
{
	size_t a = 0, b = g->nfunc;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (strcmp(g->funcs[g->by_name[mid]].name, name) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (a < g->nfunc && !strcmp(g->funcs[g->by_name[a]].name, name))
		a++;
	*hi = a;
}

size_t gobin_func_find_all(const struct gobin *g, const char *name, struct gobin_func *out,
			   size_t max)
{
	size_t lo, hi;
	name_range(g, name, &lo, &hi);
	for (size_t i = lo; i < hi && i - lo < max; i++)
		out[i - lo] = g->funcs[g->by_name[i]];
	return hi - lo;
}

int gobin_func_find(const struct gobin *g, const char *name, struct gobin_func *f, char *errbuf)
{
	size_t lo, hi, real = 0, pick = 0;
	name_range(g, name, &lo, &hi);
	if (lo == hi)
		return gobin_fail(errbuf, g->path, ENOENT,
				  "no function named \"%s\" in .gopclntab (%zu functions)", name,
				  g->nfunc);
	for (size_t i = lo; i < hi; i++)
		if (!g->funcs[g->by_name[i]].wrapper && real++ == 0)
			pick = i;
	if (hi - lo == 1 || real == 1) {
		*f = g->funcs[g->by_name[real == 1 ? pick : lo]];
		return 0;
	}
	return gobin_fail(errbuf, g->path, ENOTUNIQ,
			  "%zu functions are named \"%s\" (%zu not wrappers; generic instances "
			  "share a name): use gobin_func_find_all",
			  hi - lo, name, real);
}

int gobin_func_by_addr(const struct gobin *g, uint64_t va, struct gobin_func *f)
{
	size_t lo = 0, hi = g->nfunc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->funcs[mid].end <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->nfunc && g->funcs[lo].entry <= va && va < g->funcs[lo].end) {
		*f = g->funcs[lo];
		return 0;
	}
	return -ENOENT;
}
