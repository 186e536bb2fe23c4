/*
 * Reading what JVMTI hands out in class-file format (JVM specification, chapters 4 and 6): the
 * constant pool of GetConstantPool and the bytecode of GetBytecodes. The agent uses it to find
 * code locations by what the code does ("the instruction after the call of java/util/Map.put on
 * line 1042"), so that a hook is verified, not just taken on trust from a line number.
 *
 * Pure C, no JVM: unit-tested on its own (tests/unit/test_zk_agent_parts.c).
 */
#ifndef SPECTAP_ZK_CLASSFILE_H
#define SPECTAP_ZK_CLASSFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Constant pool tags. */
enum {
	CF_UTF8 = 1, CF_INTEGER = 3, CF_FLOAT = 4, CF_LONG = 5, CF_DOUBLE = 6, CF_CLASS = 7,
	CF_STRING = 8, CF_FIELDREF = 9, CF_METHODREF = 10, CF_IMETHODREF = 11,
	CF_NAME_AND_TYPE = 12, CF_METHOD_HANDLE = 15, CF_METHOD_TYPE = 16, CF_DYNAMIC = 17,
	CF_INVOKE_DYNAMIC = 18, CF_MODULE = 19, CF_PACKAGE = 20,
};

/* Opcodes the agent looks for. */
enum {
	CF_OP_PUTFIELD = 0xb5, CF_OP_INVOKEVIRTUAL = 0xb6, CF_OP_INVOKESPECIAL = 0xb7, CF_OP_INVOKESTATIC = 0xb8,
	CF_OP_INVOKEINTERFACE = 0xb9,
};

/* A parsed constant pool: off[i] is the byte offset of entry i (1..count-1) in bytes, or
 * UINT32_MAX for the unusable second slot of a long or double (and for index 0). */
struct cf_pool {
	const unsigned char *bytes; /* not owned */
	size_t len;
	int count;                  /* constant_pool_count: entries + 1 */
	uint32_t *off;
};

/* A counted string inside the pool (modified UTF-8; not NUL-terminated). */
struct cf_str {
	const char *s;
	size_t n;
};

/* count and bytes as GetConstantPool gives them (the entries from index 1 on). 0, or -EINVAL
 * with a message naming the entry (truncated pool, unknown tag), or -ENOMEM. */
int cf_pool_parse(struct cf_pool *p, int count, const unsigned char *bytes, size_t len, char *err,
		  size_t errsize);
void cf_pool_free(struct cf_pool *p);

/* Tag of entry i, or 0 when i is not a valid index. */
int cf_pool_tag(const struct cf_pool *p, int i);
/* The Utf8 entry i. */
int cf_pool_utf8(const struct cf_pool *p, int i, struct cf_str *out);
/* A Fieldref, Methodref or InterfaceMethodref: its class's name, member name and descriptor.
 * 0, or -EINVAL when i is not such an entry (or the pool is inconsistent). */
int cf_pool_member(const struct cf_pool *p, int i, struct cf_str *owner, struct cf_str *name,
		   struct cf_str *desc);
/* True when s holds exactly the NUL-terminated c. */
bool cf_str_eq(struct cf_str s, const char *c);

/* Length of the instruction at bci (tableswitch, lookupswitch and wide included), or -1 when
 * the opcode is unknown or the instruction runs past len. */
int cf_insn_len(const unsigned char *code, size_t len, size_t bci);
/* True when bci is the start of an instruction (decoding from 0). */
bool cf_insn_boundary(const unsigned char *code, size_t len, size_t bci);
bool cf_is_return(unsigned char op);
bool cf_is_invoke(unsigned char op);

#endif
