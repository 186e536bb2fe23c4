/* cbin: a function's direct call sites (cbin.h), by disassembling every function of the file
 * with capstone, and whether its address is taken anywhere (then calls may bypass them). */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cbin_internal.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int add(struct cbin_sites *s, size_t *cap, uint64_t va, uint64_t off)
{
	if (s->n == *cap) {
		size_t nc = *cap ? 2 * *cap : 8;
		uint64_t *v = realloc(s->va, nc * sizeof(*v)), *o;

		if (!v)
			return -ENOMEM;
		s->va = v;
		if (!(o = realloc(s->off, nc * sizeof(*o))))
			return -ENOMEM;
		s->off = o;
		*cap = nc;
	}
	s->va[s->n] = va;
	s->off[s->n++] = off;
	return 0;
}

/* Relocations that hold target's address (a function pointer in data, a GOT slot). */
static int taken_by_relocation(const struct cbin *c, uint64_t target, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(d = elf_getdata(scn, NULL)))
			continue;
		Elf_Scn *symscn = elf_getscn(c->elf, sh.sh_link);
		GElf_Shdr ssh;
		Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (symscn && !gelf_getshdr(symscn, &ssh))
			syms = NULL;
		for (size_t i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			unsigned type = (unsigned)GELF_R_TYPE(r.r_info), si = (unsigned)GELF_R_SYM(r.r_info);
			if (type == R_X86_64_RELATIVE && (uint64_t)r.r_addend == target)
				return 1;
			if (si && syms && gelf_getsym(syms, (int)si, &sym)) {
				const char *sn = elf_strptr(c->elf, ssh.sh_link, sym.st_name);
				if (sn && !strcmp(sn, name))
					return 1; /* R_X86_64_64, GLOB_DAT, JUMP_SLOT: through a pointer or the PLT */
			}
		}
	}
	return 0;
}

int cbin_call_sites(const struct cbin *c, const struct cbin_func *f, struct cbin_sites *s, char *errbuf)
{
	csh cs = 0;
	cs_insn *insn = NULL;
	uint8_t *buf = NULL;
	size_t cap = 0, bufcap = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	/* detail (operands) before cs_malloc, which allocates it only when it is on */
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK || cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) ||
	    !(insn = cs_malloc(cs))) {
		cbin_err(errbuf, "%s: capstone cannot start (x86-64)", c->base);
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < c->nsyms; k++) {
		const struct cbin_sym *sym = &c->syms[k];
		uint64_t off;

		if (!sym->size || cbin_vaddr_to_off(c, sym->value, &off))
			continue;
		if (sym->size > bufcap) {
			uint8_t *b = realloc(buf, sym->size);
			if (!b) {
				rc = -ENOMEM;
				goto out;
			}
			buf = b;
			bufcap = sym->size;
		}
		if (pread(c->fd, buf, sym->size, (off_t)off) != (ssize_t)sym->size)
			continue; /* not all in the file (e.g. past a segment's end): nothing to scan */
		const uint8_t *code = buf;
		size_t left = sym->size;
		uint64_t addr = sym->value;
		while (left) {
			uint64_t at = addr;
			if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
				code++, left--, addr++; /* an instruction capstone does not know: resync */
				continue;
			}
			const cs_x86 *x = &insn->detail->x86;
			bool branch = insn->id == X86_INS_CALL || insn->id == X86_INS_JMP;
			for (unsigned o = 0; o < x->op_count; o++) {
				const cs_x86_op *op = &x->operands[o];
				uint64_t t = op->type == X86_OP_IMM ? (uint64_t)op->imm
					   : op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP
						   ? addr + (uint64_t)op->mem.disp
						   : 0;
				if (t != f->entry)
					continue;
				if (branch && op->type == X86_OP_IMM) {
					/* a call, or a tail call (a jmp from another function): the
					 * arguments are in place and the kernel emulates the branch */
					if (sym->value != f->entry && (rc = add(s, &cap, at, off + (at - sym->value))))
						goto out;
				} else {
					s->address_taken = 1; /* lea/mov of its address: called through a pointer */
				}
			}
		}
	}
	if (!s->address_taken)
		s->address_taken = taken_by_relocation(c, f->entry, f->name);
	/* Aliases (two symbols, one function) were scanned twice: one site each. */
	if (s->n) {
		qsort(s->va, s->n, sizeof(*s->va), cmp_u64);
		qsort(s->off, s->n, sizeof(*s->off), cmp_u64);
	}
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!k || s->va[i] != s->va[k - 1]) {
			s->va[k] = s->va[i];
			s->off[k++] = s->off[i];
		}
	s->n = k;
out:
	free(buf);
	if (insn)
		cs_free(insn, 1);
	if (cs)
		cs_close(&cs);
	if (rc)
		cbin_sites_free(s);
	return rc;
}

uint64_t cbin_function_at(const struct cbin *c, uint64_t va)
{
	for (size_t k = 0; k < c->nsyms; k++)
		if (c->syms[k].size && va >= c->syms[k].value && va - c->syms[k].value < c->syms[k].size)
			return c->syms[k].value;
	return 0;
}

void cbin_sites_free(struct cbin_sites *s)
{
	free(s->va);
	free(s->off);
	memset(s, 0, sizeof(*s));
}

int cbin_entry_is_nop5(const struct cbin *c, const struct cbin_func *f)
{
	uint8_t b[5];

	return pread(c->fd, b, sizeof(b), (off_t)f->file_off) == (ssize_t)sizeof(b) && b[0] == 0x0f && b[1] == 0x1f &&
	       b[2] == 0x44 && b[3] == 0x00;
}
