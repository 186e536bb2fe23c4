/* cbin: what uprobes on a C program or shared object need, read from its DWARF debug info (libdw)
 * and ELF headers, generically (it knows no particular program): a function's entry address and
 * the file offset to attach at, whether it has an out-of-line copy at all, where its parameters
 * are at the entry (x86-64 System V), struct and union field offsets and sizes by path, and the
 * uprobe reads (probes/bpf/uprobe.h) for expressions such as "me->log->count".
 *
 * Debug info comes from the file itself or, when it has none, from the separate debug file of
 * its build id (/usr/lib/debug/.build-id/xx/rest.debug, what Debian's -dbgsym packages install).
 * The file is read, never mapped: while uprobes are attached, new mappings of it carry their
 * int3s (probes/bpf/README.md).
 *
 * Only ELF x86-64 little-endian. Functions that can fail return 0 or a negative errno and, when
 * errbuf is not NULL, write a message naming the file and what is missing into errbuf (at least
 * CBIN_ERRBUF_SIZE bytes), e.g. "redisraft.so: no DWARF debug info (build with -g)". */
#ifndef SPECTAP_CBIN_H
#define SPECTAP_CBIN_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/uprobe.h"

#define CBIN_ERRBUF_SIZE 512
#define CBIN_MAX_PARAMS 16
#define CBIN_TYPE_NAME 128

struct cbin;

/* Opens path (an executable or shared object) and indexes its debug info. -ENOENT: no such
 * file; -ENOEXEC: not ELF x86-64; -ENODATA: no DWARF debug info. *out is NULL on failure. */
int cbin_open(const char *path, struct cbin **out, char *errbuf);
void cbin_close(struct cbin *c);

const char *cbin_path(const struct cbin *c);
/* The file the debug info was read from: path itself or its separate debug file. */
const char *cbin_debug_path(const struct cbin *c);

/* A type as the program declares it. */
enum cbin_type_kind {
	CBIN_T_VOID,
	CBIN_T_INT,     /* integers, _Bool, char, enums */
	CBIN_T_FLOAT,   /* float, double, long double, complex */
	CBIN_T_POINTER,
	CBIN_T_STRUCT,  /* struct or union */
	CBIN_T_ARRAY,
	CBIN_T_OTHER,   /* functions and the like */
};

struct cbin_type {
	uint64_t id;    /* opaque (a DIE offset) for cbin_type_* lookups; 0: void */
	enum cbin_type_kind kind; /* after typedefs and qualifiers */
	uint64_t size;  /* bytes (0: void or incomplete) */
	int is_signed;  /* CBIN_T_INT only */
	char name[CBIN_TYPE_NAME]; /* as C spells it: "raft_term_t", "struct raft_server *" */
};

/* Where a parameter is when the function's first instruction runs (System V x86-64). */
enum cbin_loc {
	CBIN_LOC_REG,   /* register reg (struct uprobe_read numbering: rdi 5, rsi 4, rdx 1, ...) */
	CBIN_LOC_REG2,  /* 9..16 bytes (__int128, small struct): low 8 bytes in reg, high in reg2 */
	CBIN_LOC_STACK, /* at rsp + stack_off (the first stack argument is at rsp + 8) */
	CBIN_LOC_SSE,   /* in an xmm register (float, double, float-only small struct): a uprobe
			 * cannot read it */
	CBIN_LOC_MIXED, /* small struct split between an integer and an xmm register */
};

struct cbin_param {
	const char *name; /* "" when unnamed; valid until cbin_close */
	struct cbin_type type;
	enum cbin_loc loc;
	uint8_t reg, reg2;
	int32_t stack_off;
};

struct cbin_func {
	const char *name;   /* valid until cbin_close */
	uint64_t entry;     /* virtual address of the first instruction */
	uint64_t file_off;  /* entry's offset in the file: where a uprobe attaches (also for .so) */
	unsigned ninlined;  /* call sites where it was inlined: a probe on the entry misses those
			       calls (build with -fno-inline-functions-called-once, or probe callers) */
	int external;       /* 1: a global symbol; 0: static */
	int variadic;
	struct cbin_type ret; /* kind CBIN_T_VOID for void */
	int ret_in_memory;  /* returns a struct above 16 bytes through a hidden pointer: rdi at the
			       entry (so the parameters start at rsi), rax at the return */
	unsigned nparams;
	struct cbin_param params[CBIN_MAX_PARAMS];
};

/* Looks up a function that has an out-of-line copy: "raft_become_leader", or "file.c:name" for
 * a static function of source file file.c (its path's tail: "src/raft_server.c" matches
 * "raft_server.c"). -ENOENT: no such function, or no debug info for it; -EADDRNOTAVAIL: it
 * exists only inlined, or only as a compiler clone ("f.constprop.0", "f.isra.0": different
 * arguments), so there is nothing to probe under its name; -ENOTUNIQ: several static functions
 * share the name (the message names their files); -E2BIG: more than CBIN_MAX_PARAMS
 * parameters. */
int cbin_func_find(const struct cbin *c, const char *name, struct cbin_func *f, char *errbuf);
/* The parameter named name, or NULL. */
const struct cbin_param *cbin_func_param(const struct cbin_func *f, const char *name);
/* The index of the parameter an expression of cbin_read starts with ("me->log.count": me's;
 * past a cast, "((T *)n->udata)->x": n's), or -1. */
int cbin_expr_param(const struct cbin_func *f, const char *expr);
/* Whether such an expression reads through the return value ("return", "return->x"). */
bool cbin_expr_returns(const char *expr);

/* A named type: "struct raft_server", "union u", "enum e", or a typedef or base type name
 * ("raft_server_t", "long int"). A complete definition wins over a declaration. -ENOENT. */
int cbin_type_find(const struct cbin *c, const char *name, struct cbin_type *t, char *errbuf);
/* What a pointer or array type points to / holds (-EINVAL when it is neither). */
/* The value of the enumerator name of the enum type (a typedef or "enum x"): "ConnState",
 * "CONN_CONNECTED". -ENOENT when the type or the enumerator is not there. */
int cbin_enum_value(const struct cbin *c, const char *type, const char *name, int64_t *out, char *errbuf);
int cbin_type_target(const struct cbin *c, const struct cbin_type *t, struct cbin_type *out, char *errbuf);

struct cbin_field {
	uint64_t offset;     /* bytes from the start of the outer type */
	unsigned bit_size;   /* a bit field: its width, and its first bit counted from the least */
	unsigned bit_offset; /* significant bit of the byte at offset; both 0 otherwise */
	struct cbin_type type;
};

/* The field at path in the struct or union named type (see cbin_type_find): "current_term",
 * nested "log.count", array elements "peers[2].id". Typedefs and qualifiers are looked
 * through; members of anonymous structs and unions are found as C finds them; a path does not
 * go through pointers (see cbin_read). -ENOENT: "struct raft_server has no field
 * current_termx"; -EINVAL: a path through a non-struct or an index out of bounds. */
int cbin_field(const struct cbin *c, const char *type, const char *path, struct cbin_field *fld, char *errbuf);
/* The same below a type already found. */
int cbin_field_in(const struct cbin *c, const struct cbin_type *t, const char *path, struct cbin_field *fld,
		  char *errbuf);

/* The direct call sites of f: every call (and tail jmp) to its entry from another function,
 * ascending, as virtual addresses and file offsets. A call site is where an entry probe's reads
 * hold (the arguments are in their registers, rsp points 8 bytes higher than at the entry: stack
 * reads need -8 (CBIN_CALLSITE_STACK_ADJ)), and the kernel emulates a call where it must
 * single-step most first instructions (a `mov`, a `cmp`), about 3x cheaper on this VM. The
 * sites cover every call only when address_taken is 0: f's address is in no instruction
 * operand but a direct call and in no relocation (a function pointer, the GOT, the PLT). */
struct cbin_sites {
	size_t n;
	uint64_t *va, *off;
	int address_taken;
};
#define CBIN_CALLSITE_STACK_ADJ (-8)
int cbin_call_sites(const struct cbin *c, const struct cbin_func *f, struct cbin_sites *s, char *errbuf);
void cbin_sites_free(struct cbin_sites *s);
/* The entry of the function (symbol) whose code holds va, e.g. a call site's caller; 0: none. */
uint64_t cbin_function_at(const struct cbin *c, uint64_t va);
/* 1 when f starts with a 5-byte nop (`nopl 0(%rax,%rax,1)`, with any displacement: what
 * clang's -fpatchable-function-entry=5 puts there): the kernel turns a uprobe on it into a
 * call, no trap, the cheapest site there is (docs/systems/redisraft.md). */
int cbin_entry_is_nop5(const struct cbin *c, const struct cbin_func *f);

/* One uprobe read of expr at f's entry, or at its return:
 *   expr  := [ "(" type " *)" ] name steps     name taken as a type * (a void * parameter)
 *          | "((" type " *)" name steps ")" steps   a pointer reached by the first steps (a
 *                                                void * field) taken as a type *
 *   steps := ( "->" field | "." field | "[" N "]" )*
 *   name  := a parameter of f, or "return": the return value (rax) in a return probe.
 * "->" and "[N]" on a pointer dereference (at most UPROBE_MAX_DEREFS times in all), "." and
 * "[N]" on an array add offsets. A scalar result of 1, 2, 4 or 8 bytes is a VALUE or MEM read
 * (UPROBE_READ_SIGNED when signed); an aggregate of up to UPROBE_MAX_BLOCK bytes a BLOCK.
 * stash_slot >= 0: name's value is read from that stash slot (UPROBE_SRC_STASH), for a return
 * probe whose entry saved it (cbin_read(c, f, name, -1, ...) in slot stash_slot of the entry
 * spec); -1: from where the ABI puts it at the entry. -EINVAL with a message: a parameter in an
 * xmm register, a by-value struct in registers, a bit field, too many dereferences. */
int cbin_read(const struct cbin *c, const struct cbin_func *f, const char *expr, int stash_slot,
	      struct uprobe_read *r, char *errbuf);

#endif
