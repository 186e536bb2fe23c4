/* gobin: reads what uprobes on a Go binary need from the binary itself, generically (it knows
 * no particular program): the function table in .gopclntab (Go 1.18+ layouts), the build
 * information in .go.buildinfo, file offsets to attach at, and, with capstone, the return
 * instructions of a function and the kind of its first instruction (the probe-site cost class).
 *
 * Facts it relies on (docs/facts.md): for Go 1.18+ tables function addresses are relative to
 * runtime.text, the pcHeader field at byte offset 24, not to the .text section; uprobes attach by
 * file offset; never use uretprobes on Go, so post-states are read at the RET sites instead.
 *
 * Only ELF x86-64 little-endian is supported. All functions that can fail return 0 or a negative
 * errno and, when errbuf is not NULL, write a message naming the file and what is missing into
 * errbuf (at least GOBIN_ERRBUF_SIZE bytes). */
#ifndef SPECTAP_GOBIN_H
#define SPECTAP_GOBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GOBIN_ERRBUF_SIZE 512

struct gobin;

/* One function of the pclntab. name points into the opened binary (valid until gobin_close).
 * [entry, end) is the function's code in virtual addresses; end is the next function's entry
 * (so it includes the int3 alignment padding). file_off is entry's offset in the file. */
struct gobin_func {
	const char *name;
	uint64_t entry;
	uint64_t end;
	uint64_t file_off;
	uint8_t funcid; /* the runtime's funcID (0: an ordinary function) */
	uint8_t wrapper; /* 1: compiler-generated wrapper (e.g. the ABI wrapper that shares its
			    name with the real function, or a method wrapper) */
};

/* One module of the build information ("mod" or "dep" line). Strings point into the opened
 * binary's copy of the module information; missing fields are "". replace_* are set when a
 * "=>" line follows. */
struct gobin_module {
	const char *path;
	const char *version;
	const char *sum;
	const char *replace_path;
	const char *replace_version;
};

/* Opens path, reads its ELF headers, .gopclntab (found by section name, or by the pcHeader magic
 * when the section headers are gone) and .go.buildinfo. Refuses files that are not ELF x86-64, not
 * Go, or Go older than 1.18. *out is NULL on failure. */
int gobin_open(const char *path, struct gobin **out, char *errbuf);
void gobin_close(struct gobin *g);

const char *gobin_path(const struct gobin *g);
/* The pclntab layout: "go1.18" (magic 0xfffffff0, Go 1.18-1.19) or "go1.20" (0xfffffff1, 1.20+). */
const char *gobin_pclntab_layout(const struct gobin *g);
/* runtime.text: the base of every function address in the table. */
uint64_t gobin_text_start(const struct gobin *g);
/* 1 when the table was found through the section headers, 0 when found by its magic. */
int gobin_pclntab_from_section(const struct gobin *g);

/* Function table, in address order. */
size_t gobin_func_count(const struct gobin *g);
int gobin_func_at(const struct gobin *g, size_t i, struct gobin_func *f);
/* Looks a function up by its full name, e.g. "go.etcd.io/etcd/raft.(*raft).becomeLeader";
 * -ENOENT (with a message) when it is not there. Names are not unique in a pclntab: a function
 * called across ABIs has a same-named ABI wrapper (then the non-wrapper is returned), and the
 * instances of a generic function all read "F[...]" (then -ENOTUNIQ). */
int gobin_func_find(const struct gobin *g, const char *name, struct gobin_func *f, char *errbuf);
/* Every function with that name (up to max copied into out, in name-index order); returns how
 * many there are. */
size_t gobin_func_find_all(const struct gobin *g, const char *name, struct gobin_func *out,
			   size_t max);
/* The function whose [entry, end) holds va; -ENOENT when none. */
int gobin_func_by_addr(const struct gobin *g, uint64_t va, struct gobin_func *f);

/* Virtual address to file offset through the PT_LOAD program header that maps it with file
 * contents; -ERANGE when no segment holds it in the file. */
int gobin_vaddr_to_off(const struct gobin *g, uint64_t va, uint64_t *off);
/* Reads n bytes of the file image at virtual address va (through the program headers). */
int gobin_read(const struct gobin *g, uint64_t va, void *dst, size_t n);

/* Build information (.go.buildinfo, Go 1.18+ inline-string format). The Go version is always
 * set (e.g. "go1.19.8"). The main module is NULL when the binary records no module information
 * (a GOPATH-mode build). */
const char *gobin_go_version(const struct gobin *g);
const char *gobin_modinfo(const struct gobin *g); /* raw text without the framing, or "" */
/* The main package's import path (the "path" line), or NULL when not recorded. */
const char *gobin_main_path(const struct gobin *g);
const struct gobin_module *gobin_main_module(const struct gobin *g);
size_t gobin_dep_count(const struct gobin *g);
const struct gobin_module *gobin_dep_at(const struct gobin *g, size_t i);
/* The dependency with that module path, or NULL. */
const struct gobin_module *gobin_dep_find(const struct gobin *g, const char *path);
/* The value of a "build" setting (e.g. "-compiler", "GOARCH", "vcs.revision"), or NULL. */
const char *gobin_build_setting(const struct gobin *g, const char *key);

/* The first instruction at a probe site, by what a uprobe on it costs (docs/facts.md). */
enum gobin_site_kind {
	GOBIN_SITE_NOP5,     /* 5-byte nop: the kernel turns the probe into a trampoline call */
	GOBIN_SITE_NOP1,     /* 1-byte nop (as USDT emits) */
	GOBIN_SITE_PUSH_RBP, /* push %rbp: emulated */
	GOBIN_SITE_OTHER,    /* anything else: single-stepped out of line (expensive) */
	GOBIN_SITE_BRANCH,   /* a conditional jump: emulated, not single-stepped (entry_branch) */
};
const char *gobin_site_kind_name(enum gobin_site_kind k);

/* The probe sites of one function: its entry, every RET in [entry, end), and every tail jump
 * (a direct jmp to outside [entry, end): the function leaves through it without a RET). */
struct gobin_sites {
	uint64_t entry_va;
	uint64_t entry_off;
	enum gobin_site_kind entry_kind;
	char entry_mnemonic[32]; /* capstone's mnemonic, e.g. "lea", "cmp", "push" */
	char entry_text[200];    /* mnemonic and operands, e.g. "cmp rsp, qword ptr [r14 + 0x10]" */
	unsigned entry_len;      /* bytes of the first instruction */
	/* The branch of Go's stack-bound check (`cmp rsp|r12, [r14+16]; jbe morestack`, with at
	 * most a `lea r12, [rsp-N]` before), when the function starts with it: the arguments are
	 * still where they are at the entry, and a conditional jump is emulated by the kernel
	 * instead of single-stepped, so a probe there is an entry probe at a fraction of the cost.
	 * 0 when the function does not start so. */
	uint64_t entry_branch_va;
	uint64_t entry_branch_off;
	size_t nret;
	uint64_t *ret_va;  /* nret virtual addresses, ascending */
	uint64_t *ret_off; /* the same as file offsets: where to attach */
	size_t ntail;
	uint64_t *tail_va; /* ntail tail jumps, ascending */
	uint64_t *tail_off;
	size_t ninsn;      /* instructions decoded */
	size_t ncall;      /* call instructions */
	size_t nbad;       /* bytes capstone could not decode (skipped one by one; seen only in
			      hand-written assembly, e.g. AVX2 crypto): sites there are unreliable */
	uint64_t last_va;  /* the last instruction that is not int3 padding */
	char last_mnemonic[32];
};

/* Disassembles f (x86-64) and fills s; free with gobin_sites_free. A function with no RET is not
 * an error (nret is 0): Go functions that never return (panics, endless loops) or leave by a tail
 * jump have none. */
int gobin_sites(const struct gobin *g, const struct gobin_func *f, struct gobin_sites *s,
		char *errbuf);
void gobin_sites_free(struct gobin_sites *s);

/* Whether the register argument reg (DWARF number) is saved in its spill slot (slot: its offset
 * from rsp at the entry) at each RET (ok_ret[i], for s->ret_va[i]) and tail jump (ok_tail[i]) of
 * f: true when every path from the entry stores the argument there, unchanged, before reaching
 * the site (so that a probe there reads it at rsp + slot). gobin_spill.c. */
int gobin_spilled_at(const struct gobin *g, const struct gobin_func *f, const struct gobin_sites *s, int reg,
		     int32_t slot, bool *ok_ret, bool *ok_tail, char *errbuf);

#endif
