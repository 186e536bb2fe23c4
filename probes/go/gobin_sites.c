/* gobin: probe sites of a function, by disassembling it with capstone (x86-64): the kind of its
 * first instruction (the uprobe cost class, docs/facts.md) and every RET, as file offsets. Go
 * pads between functions with int3, which decodes as such and is skipped. */
#include "gobin_internal.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gobin_site_kind_name(enum gobin_site_kind k)
{
	switch (k) {
	case GOBIN_SITE_NOP5:
		return "nop5";
	case GOBIN_SITE_NOP1:
		return "nop1";
	case GOBIN_SITE_PUSH_RBP:
		return "push_rbp";
	case GOBIN_SITE_BRANCH:
		return "branch";
	case GOBIN_SITE_OTHER:
		return "other";
	}
	return "?";
}

/* By the exact bytes the measurements in docs/facts.md were made with. */
static enum gobin_site_kind site_kind(const uint8_t *b, size_t len)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	if (len == 5 && !memcmp(b, nop5, 5))
		return GOBIN_SITE_NOP5;
	if (len == 1 && b[0] == 0x90)
		return GOBIN_SITE_NOP1;
	if (len == 1 && b[0] == 0x55)
		return GOBIN_SITE_PUSH_RBP;
	return GOBIN_SITE_OTHER;
}

/* Go's stack-bound check at the entry: instruction i (0-based) of the function. Only `lea r12,
 * [rsp - N]` and `cmp rsp|r12, qword ptr [r14 + 0x10]` may come before the jbe: they leave every
 * argument register and the stack as they were at the entry. Returns 1 at the jbe, 0 while the
 * pattern may still come, -1 when it cannot. */
static int stack_check_step(const cs_insn *insn, size_t i)
{
	if (i == 0 && insn->id == X86_INS_LEA && !strncmp(insn->op_str, "r12, [rsp - ", 12))
		return 0;
	if (i <= 1 && insn->id == X86_INS_CMP &&
	    (!strcmp(insn->op_str, "rsp, qword ptr [r14 + 0x10]") || !strcmp(insn->op_str, "r12, qword ptr [r14 + 0x10]")))
		return 0;
	if (i >= 1 && i <= 2 && insn->id == X86_INS_JBE)
		return 1;
	return -1;
}

int gobin_func_code(const struct gobin *g, const struct gobin_func *f, const uint8_t **code, size_t *len,
		    char *errbuf)
{
	uint64_t off;
	if (f->end <= f->entry || gobin_vaddr_to_off(g, f->entry, &off) ||
	    gobin_vaddr_to_off(g, f->end - 1, &off) || off + 1 - (f->end - f->entry) != f->file_off)
		return gobin_fail(errbuf, g->path, ERANGE, "function %s [0x%llx, 0x%llx) is not in one file-backed segment",
				  f->name, (unsigned long long)f->entry, (unsigned long long)f->end);
	*code = g->map + f->file_off;
	*len = f->end - f->entry;
	return 0;
}

/* Appends one site to a pair of arrays (virtual address, file offset). */
static int add_site(uint64_t **va, uint64_t **off, size_t *n, size_t *cap, uint64_t v, uint64_t o)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4;
		uint64_t *a = realloc(*va, c * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*va = a;
		uint64_t *b = realloc(*off, c * sizeof(*b));
		if (!b)
			return -ENOMEM;
		*off = b;
		*cap = c;
	}
	(*va)[*n] = v;
	(*off)[(*n)++] = o;
	return 0;
}

int gobin_sites(const struct gobin *g, const struct gobin_func *f, struct gobin_sites *s,
		char *errbuf)
{
	int rc = 0;
	csh cs = 0;
	cs_insn *insn = NULL;
	size_t cap_ret = 0, cap_tail = 0;
	int check = 0; /* stack_check_step's state */
	memset(s, 0, sizeof(*s));
	s->entry_va = f->entry;
	s->entry_kind = GOBIN_SITE_OTHER;
	const uint8_t *code;
	size_t left;
	if ((rc = gobin_func_code(g, f, &code, &left, errbuf)))
		goto out;
	s->entry_off = f->file_off;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK || !(insn = cs_malloc(cs))) {
		rc = gobin_fail(errbuf, g->path, ENOMEM, "capstone cannot start (x86-64)");
		goto out;
	}
	uint64_t addr = f->entry;
	while (left) {
		uint64_t at = addr;
		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			/* capstone 4 lacks some AVX2 instructions: skip a byte and resync */
			s->nbad++;
			code++;
			left--;
			addr++;
			continue;
		}
		if (s->ninsn++ == 0) {
			s->entry_kind = site_kind(insn->bytes, insn->size);
			s->entry_len = insn->size;
			snprintf(s->entry_mnemonic, sizeof(s->entry_mnemonic), "%s", insn->mnemonic);
			snprintf(s->entry_text, sizeof(s->entry_text), "%s%s%s", insn->mnemonic,
				 insn->op_str[0] ? " " : "", insn->op_str);
		}
		if (check == 0) {
			check = stack_check_step(insn, s->ninsn - 1);
			if (check == 1) {
				s->entry_branch_va = at;
				s->entry_branch_off = f->file_off + (at - f->entry);
			}
		}
		if (insn->id == X86_INS_INT3)
			continue;
		s->last_va = at;
		snprintf(s->last_mnemonic, sizeof(s->last_mnemonic), "%s", insn->mnemonic);
		uint64_t site_off = f->file_off + (at - f->entry);
		int err = 0;
		if (insn->id == X86_INS_RET || insn->id == X86_INS_RETF || insn->id == X86_INS_RETFQ) {
			err = add_site(&s->ret_va, &s->ret_off, &s->nret, &cap_ret, at, site_off);
		} else if (insn->id == X86_INS_CALL) {
			s->ncall++;
		} else if (insn->id == X86_INS_JMP && !strncmp(insn->op_str, "0x", 2)) {
			char *end;
			uint64_t to = strtoull(insn->op_str, &end, 16);
			if (!*end && (to < f->entry || to >= f->end))
				err = add_site(&s->tail_va, &s->tail_off, &s->ntail, &cap_tail, at,
					       site_off);
		}
		if (err) {
			rc = gobin_fail(errbuf, g->path, ENOMEM, "out of memory");
			goto out;
		}
	}
out:
	if (insn)
		cs_free(insn, 1);
	if (cs)
		cs_close(&cs);
	if (rc)
		gobin_sites_free(s);
	return rc;
}

void gobin_sites_free(struct gobin_sites *s)
{
	free(s->ret_va);
	free(s->ret_off);
	free(s->tail_va);
	free(s->tail_off);
	s->ret_va = s->ret_off = s->tail_va = s->tail_off = NULL;
	s->nret = s->ntail = 0;
}
