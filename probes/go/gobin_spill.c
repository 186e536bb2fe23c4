/* gobin: whether a register argument is in its spill slot at a function's return sites. Go's
 * register ABI reserves a spill slot for every register argument in the caller's frame; a
 * function that needs an argument after a call saves it there, and at a RET (the frame gone,
 * rsp at the return address) the slot is at rsp + its offset, as at the entry. That holds on
 * the paths that saved it: a must-analysis over the function's instructions tells which RET
 * (and tail jump) sites every path reaches with the argument saved and not overwritten since. */
#include "gobin_internal.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* capstone register -> DWARF number of its 64-bit register (sub-registers too), or -1. */
static int dwarf_of(unsigned r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH: return 0;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH: return 1;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH: return 2;
	case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH: return 3;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL: return 4;
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL: return 5;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B: return 8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B: return 9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B: return 10;
	case X86_REG_R11: case X86_REG_R11D: case X86_REG_R11W: case X86_REG_R11B: return 11;
	}
	return -1;
}

struct ins {
	uint64_t at;
	uint32_t size;
	bool ret, jmp, jcc, indirect, call;
	uint64_t target;  /* direct jumps: the destination (0: none) */
	bool spill;       /* stores the argument register into the slot */
	bool clobber_slot; /* stores anything else into the slot */
	bool writes_reg;  /* writes the argument register */
};

/* Bit 0: saved in the slot; bit 1: the register still holds the argument. */
enum { SAVED = 1, INTACT = 2 };

static unsigned step(const struct ins *x, unsigned s)
{
	if (x->spill && (s & INTACT))
		s |= SAVED;
	else if (x->clobber_slot || x->spill)
		s &= ~(unsigned)SAVED;
	if (x->writes_reg || x->call)
		s &= ~(unsigned)INTACT;
	return s;
}

int gobin_spilled_at(const struct gobin *g, const struct gobin_func *f, const struct gobin_sites *s, int reg,
		     int32_t slot, bool *ok_ret, bool *ok_tail, char *errbuf)
{
	csh cs = 0;
	cs_insn *insn = NULL;
	struct ins *xs = NULL;
	unsigned *in = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	int64_t frame = -1;

	const uint8_t *code;
	size_t left;
	if ((rc = gobin_func_code(g, f, &code, &left, errbuf)))
		goto out;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK || cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK ||
	    !(insn = cs_malloc(cs))) {
		rc = gobin_fail(errbuf, g->path, ENOMEM, "capstone cannot start (x86-64)");
		goto out;
	}
	uint64_t addr = f->entry;
	while (left) {
		uint64_t at = addr;
		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			rc = gobin_fail(errbuf, g->path, ENOTSUP, "%s: an instruction at 0x%llx cannot be decoded, so its "
				       "return sites cannot be checked", f->name, (unsigned long long)at);
			goto out;
		}
		if (insn->id == X86_INS_INT3)
			continue;
		if (n == cap) {
			struct ins *t = realloc(xs, (cap = cap ? 2 * cap : 256) * sizeof(*t));
			if (!t) {
				rc = gobin_fail(errbuf, g->path, ENOMEM, "out of memory");
				goto out;
			}
			xs = t;
		}
		struct ins *x = &xs[n++];
		memset(x, 0, sizeof(*x));
		x->at = at;
		x->size = insn->size;
		const cs_x86 *d = &insn->detail->x86;
		x->ret = insn->id == X86_INS_RET;
		x->call = insn->id == X86_INS_CALL;
		x->jmp = insn->id == X86_INS_JMP;
		x->jcc = !x->jmp && cs_insn_group(cs, insn, CS_GRP_JUMP);
		if ((x->jmp || x->jcc) && d->op_count == 1) {
			if (d->operands[0].type == X86_OP_IMM)
				x->target = (uint64_t)d->operands[0].imm;
			else
				x->indirect = true;
		}
		/* The frame: Go's prologue is `sub rsp, F` once. */
		if (frame < 0 && insn->id == X86_INS_SUB && d->op_count == 2 && d->operands[0].type == X86_OP_REG &&
		    d->operands[0].reg == X86_REG_RSP && d->operands[1].type == X86_OP_IMM)
			frame = d->operands[1].imm;
		/* A store to [rsp + disp] of the slot, with the frame in place. */
		if (d->op_count == 2 && d->operands[0].type == X86_OP_MEM && d->operands[0].mem.base == X86_REG_RSP &&
		    d->operands[0].mem.index == X86_REG_INVALID && (insn->id == X86_INS_MOV || insn->id == X86_INS_MOVUPS ||
								       insn->id == X86_INS_MOVQ)) {
			int64_t disp = d->operands[0].mem.disp, size = d->operands[0].size ? d->operands[0].size : 8;
			int64_t want = (frame < 0 ? 0 : frame) + slot;
			if (disp < want + 8 && disp + size > want) {
				if (insn->id == X86_INS_MOV && disp == want && size == 8 && d->operands[1].type == X86_OP_REG &&
				    dwarf_of(d->operands[1].reg) == reg)
					x->spill = true;
				else
					x->clobber_slot = true;
			}
		}
		cs_regs rr, ww;
		uint8_t nr, nw;
		if (cs_regs_access(cs, insn, rr, &nr, ww, &nw) == CS_ERR_OK)
			for (uint8_t k = 0; k < nw; k++)
				if (dwarf_of(ww[k]) == reg)
					x->writes_reg = true;
	}
	if (!n) {
		rc = gobin_fail(errbuf, g->path, ENOENT, "%s has no instructions", f->name);
		goto out;
	}
	/* Must-analysis to a fixed point: a state is the meet (and) of its predecessors' states. */
	if (!(in = malloc(n * sizeof(*in)))) {
		rc = gobin_fail(errbuf, g->path, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		in[i] = SAVED | INTACT;
	in[0] = INTACT;
	for (bool changed = true; changed;) {
		changed = false;
		unsigned indirect = SAVED | INTACT;
		for (size_t i = 0; i < n; i++)
			if (xs[i].indirect)
				indirect &= step(&xs[i], in[i]);
		for (size_t i = 0; i < n; i++) {
			unsigned out = step(&xs[i], in[i]);
			size_t succ[2];
			unsigned ns = 0;
			if (!xs[i].ret && !xs[i].jmp && i + 1 < n)
				succ[ns++] = i + 1;
			if (xs[i].target >= f->entry && xs[i].target < f->end)
				for (size_t k = 0; k < n; k++) /* linear: functions are a few thousand instructions */
					if (xs[k].at == xs[i].target) {
						succ[ns++] = k;
						break;
					}
			for (unsigned k = 0; k < ns; k++) {
				/* The entry's state is fixed: the only jump back to it is runtime.morestack's,
				 * which saves the arguments and loads them back as they were. */
				if (succ[k] == 0)
					continue;
				unsigned v = in[succ[k]] & out & indirect;
				if (v != in[succ[k]]) {
					in[succ[k]] = v;
					changed = true;
				}
			}
		}
	}
	for (size_t j = 0; j < s->nret; j++) {
		ok_ret[j] = false;
		for (size_t i = 0; i < n; i++)
			if (xs[i].at == s->ret_va[j])
				ok_ret[j] = in[i] & SAVED;
	}
	for (size_t j = 0; j < s->ntail; j++) {
		ok_tail[j] = false;
		for (size_t i = 0; i < n; i++)
			if (xs[i].at == s->tail_va[j])
				ok_tail[j] = in[i] & SAVED;
	}
out:
	free(in);
	free(xs);
	if (insn)
		cs_free(insn, 1);
	if (cs)
		cs_close(&cs);
	return rc;
}
