/* Constant pool and bytecode reading; see classfile.h. */
#include "classfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cfail(char *err, size_t size, const char *fmt, ...)
{
	if (err && size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static unsigned u2(const unsigned char *b) { return (unsigned)b[0] << 8 | b[1]; }

static int32_t s4(const unsigned char *b)
{
	return (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
}

/* Bytes after the tag, for fixed-size entries; -1 for Utf8 (variable) and unknown tags. */
static int entry_size(int tag)
{
	switch (tag) {
	case CF_INTEGER: case CF_FLOAT: case CF_FIELDREF: case CF_METHODREF: case CF_IMETHODREF:
	case CF_NAME_AND_TYPE: case CF_DYNAMIC: case CF_INVOKE_DYNAMIC:
		return 4;
	case CF_LONG: case CF_DOUBLE:
		return 8;
	case CF_CLASS: case CF_STRING: case CF_METHOD_TYPE: case CF_MODULE: case CF_PACKAGE:
		return 2;
	case CF_METHOD_HANDLE:
		return 3;
	default:
		return -1;
	}
}

int cf_pool_parse(struct cf_pool *p, int count, const unsigned char *bytes, size_t len, char *err,
		  size_t errsize)
{
	memset(p, 0, sizeof *p);
	if (count < 1 || count > 65535)
		return cfail(err, errsize, "constant pool count %d out of range", count);
	p->off = malloc((size_t)count * sizeof *p->off);
	if (!p->off) {
		if (err && errsize)
			snprintf(err, errsize, "constant pool of %d entries: out of memory", count);
		return -ENOMEM;
	}
	p->bytes = bytes;
	p->len = len;
	p->count = count;
	p->off[0] = UINT32_MAX;
	size_t at = 0;
	for (int i = 1; i < count; i++) {
		if (at >= len) {
			cf_pool_free(p);
			return cfail(err, errsize, "constant pool ends at entry %d of %d (%zu bytes)", i,
				     count - 1, len);
		}
		int tag = bytes[at];
		size_t size;
		if (tag == CF_UTF8) {
			if (at + 3 > len) {
				cf_pool_free(p);
				return cfail(err, errsize, "constant pool entry %d (Utf8) truncated", i);
			}
			size = 2 + u2(bytes + at + 1);
		} else {
			int s = entry_size(tag);
			if (s < 0) {
				cf_pool_free(p);
				return cfail(err, errsize, "constant pool entry %d has unknown tag %d", i,
					     tag);
			}
			size = (size_t)s;
		}
		if (at + 1 + size > len) {
			cf_pool_free(p);
			return cfail(err, errsize, "constant pool entry %d (tag %d) runs past the end",
				     i, tag);
		}
		p->off[i] = (uint32_t)at;
		at += 1 + size;
		if (tag == CF_LONG || tag == CF_DOUBLE) {
			if (i + 1 < count)
				p->off[i + 1] = UINT32_MAX;
			i++;
		}
	}
	if (at != len) {
		cf_pool_free(p);
		return cfail(err, errsize, "constant pool has %zu bytes after its %d entries",
			     len - at, count - 1);
	}
	return 0;
}

void cf_pool_free(struct cf_pool *p)
{
	free(p->off);
	p->off = NULL;
	p->count = 0;
}

int cf_pool_tag(const struct cf_pool *p, int i)
{
	if (!p->off || i < 1 || i >= p->count || p->off[i] == UINT32_MAX)
		return 0;
	return p->bytes[p->off[i]];
}

int cf_pool_utf8(const struct cf_pool *p, int i, struct cf_str *out)
{
	if (cf_pool_tag(p, i) != CF_UTF8)
		return -EINVAL;
	const unsigned char *b = p->bytes + p->off[i];
	out->s = (const char *)b + 3;
	out->n = u2(b + 1);
	return 0;
}

int cf_pool_member(const struct cf_pool *p, int i, struct cf_str *owner, struct cf_str *name,
		   struct cf_str *desc)
{
	int tag = cf_pool_tag(p, i);
	if (tag != CF_FIELDREF && tag != CF_METHODREF && tag != CF_IMETHODREF)
		return -EINVAL;
	const unsigned char *b = p->bytes + p->off[i];
	int cls = (int)u2(b + 1), nat = (int)u2(b + 3);
	if (cf_pool_tag(p, cls) != CF_CLASS || cf_pool_tag(p, nat) != CF_NAME_AND_TYPE)
		return -EINVAL;
	const unsigned char *c = p->bytes + p->off[cls], *t = p->bytes + p->off[nat];
	if (cf_pool_utf8(p, (int)u2(c + 1), owner) < 0 || cf_pool_utf8(p, (int)u2(t + 1), name) < 0 ||
	    cf_pool_utf8(p, (int)u2(t + 3), desc) < 0)
		return -EINVAL;
	return 0;
}

bool cf_str_eq(struct cf_str s, const char *c)
{
	return strlen(c) == s.n && !memcmp(s.s, c, s.n);
}

/* Fixed instruction lengths by opcode; 0: variable (switches, wide); -1: unknown. */
static int fixed_len(unsigned op)
{
	if (op <= 0x0f)
		return 1; /* nop .. dconst_1 */
	switch (op) {
	case 0x10: return 2; /* bipush */
	case 0x11: return 3; /* sipush */
	case 0x12: return 2; /* ldc */
	case 0x13: case 0x14: return 3; /* ldc_w, ldc2_w */
	case 0x84: return 3; /* iinc */
	case 0xa9: return 2; /* ret */
	case 0xaa: case 0xab: case 0xc4: return 0; /* tableswitch, lookupswitch, wide */
	case 0xb9: case 0xba: return 5; /* invokeinterface, invokedynamic */
	case 0xbb: return 3; /* new */
	case 0xbc: return 2; /* newarray */
	case 0xbd: return 3; /* anewarray */
	case 0xc0: case 0xc1: return 3; /* checkcast, instanceof */
	case 0xc5: return 4; /* multianewarray */
	case 0xc6: case 0xc7: return 3; /* ifnull, ifnonnull */
	case 0xc8: case 0xc9: return 5; /* goto_w, jsr_w */
	default: break;
	}
	if (op >= 0x15 && op <= 0x19)
		return 2; /* iload .. aload */
	if (op >= 0x1a && op <= 0x35)
		return 1; /* iload_0 .. saload */
	if (op >= 0x36 && op <= 0x3a)
		return 2; /* istore .. astore */
	if (op >= 0x3b && op <= 0x83)
		return 1; /* istore_0 .. lxor */
	if (op >= 0x85 && op <= 0x98)
		return 1; /* i2l .. dcmpg */
	if (op >= 0x99 && op <= 0xa8)
		return 3; /* ifeq .. jsr */
	if (op >= 0xac && op <= 0xb1)
		return 1; /* ireturn .. return */
	if (op >= 0xb2 && op <= 0xb8)
		return 3; /* getstatic .. invokestatic */
	if (op >= 0xbe && op <= 0xbf)
		return 1; /* arraylength, athrow */
	if (op >= 0xc2 && op <= 0xc3)
		return 1; /* monitorenter, monitorexit */
	return -1;
}

int cf_insn_len(const unsigned char *code, size_t len, size_t bci)
{
	if (bci >= len)
		return -1;
	unsigned op = code[bci];
	int f = fixed_len(op);
	size_t n;
	if (f < 0)
		return -1;
	if (f > 0) {
		n = (size_t)f;
	} else if (op == 0xc4) { /* wide: iinc takes 6 bytes, the loads and stores 4 */
		if (bci + 1 >= len)
			return -1;
		n = code[bci + 1] == 0x84 ? 6 : 4;
	} else {
		size_t at = (bci + 4) & ~(size_t)3; /* operands are 4-byte aligned from the method start */
		if (at + 12 > len)
			return -1;
		if (op == 0xaa) {
			int32_t lo = s4(code + at + 4), hi = s4(code + at + 8);
			if (hi < lo)
				return -1;
			n = at + 12 + ((size_t)((int64_t)hi - lo + 1)) * 4 - bci;
		} else {
			int32_t pairs = s4(code + at + 4);
			if (pairs < 0)
				return -1;
			n = at + 8 + (size_t)pairs * 8 - bci;
		}
	}
	if (bci + n > len || n > 1u << 20)
		return -1;
	return (int)n;
}

bool cf_insn_boundary(const unsigned char *code, size_t len, size_t bci)
{
	for (size_t at = 0; at < len;) {
		if (at == bci)
			return true;
		if (at > bci)
			return false;
		int l = cf_insn_len(code, len, at);
		if (l <= 0)
			return false;
		at += (size_t)l;
	}
	return false;
}

bool cf_is_return(unsigned char op) { return op >= 0xac && op <= 0xb1; }

bool cf_is_invoke(unsigned char op) { return op >= CF_OP_INVOKEVIRTUAL && op <= CF_OP_INVOKEINTERFACE; }
