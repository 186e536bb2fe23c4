/* goprobes: a description's Go probes (desc_probe) attached to a Go binary: tools/go/goprobe
 * resolves the functions' arguments and field paths from the package's source (Debian's -dev
 * package), probes/go/gobin finds the functions and their sites in the binary, and one generic
 * BPF program performs the reads. It knows no particular program.
 *
 * Sites: an entry probe sits on the stack check's conditional branch when the function starts
 * with one (emulated by the kernel, not single-stepped), else on the first instruction; a return
 * probe on every RET and tail jump. At a return, register arguments are read from their spill
 * slots, which is only right when the function saves them there: the prologue is checked for
 * the store of every argument a return probe reads, and a function that does not is refused
 * with its name.
 *
 * Every probe also reads the goroutine (r14), the return address and the stack pointer: an entry
 * probe fires twice when the prologue grows the stack (runtime.morestack jumps back to the
 * entry, on the new stack), and the shaper drops such a repeat (hprobes_repeat). */
#ifndef SPECTAP_HARNESS_GOPROBES_H
#define SPECTAP_HARNESS_GOPROBES_H

#include <stdbool.h>
#include <stdint.h>

#include "collect.h"
#include "desc.h"
#include "uprobe_loader.h"

#define HPROBES_ERR_SIZE 1024
#define HPROBES_ID_BASE 0x5000
#define HPROBES_STASH_OFF 0x800 /* a C return probe's stashing entry: its id + this (no record) */

/* HREAD_HEX: an integer as a hex string ("0" for 0), of one type whatever its value: ids. */
enum hread_kind { HREAD_INT, HREAD_UINT, HREAD_BOOL, HREAD_STRING, HREAD_BYTES, HREAD_POINTER, HREAD_ARRAY, HREAD_HEX };

/* Where one described read landed in the record: its value (or a string's or slice's length) in
 * val[v], a string's bytes or a slice's elements (8 bytes each) in block[b] (b < 0: none). */
struct hread {
	const char *name;
	enum hread_kind kind;
	int v, b;
};

struct hprobe {
	const struct desc_probe *dp;
	uint32_t id;
	unsigned nsites;
	struct hread reads[DESC_MAX_READS];
	size_t nreads;
	int g_read, ret_read, sp_read; /* the goroutine, return address and stack pointer */
	int flags_read;                /* at a prologue's jbe: the flags (-1 elsewhere) */
};

struct hprobes {
	struct hprobe *p;
	size_t n;
	struct collect_probe *table; /* for the collector: one entry per probe, no fields */
	struct collect_table ctable;
	char go_version[32];
	unsigned sites, entry_sites, ret_sites;
};

/* Resolves and attaches every probe of d to binary (goprobe: the tools/go/goprobe program, for
 * Go; a C binary's probes go to hprobes_attach_c). */
int hprobes_attach(struct uprobe_loader *l, const struct desc *d, const char *binary, const char *goprobe,
		   struct hprobes *out, char *err);
/* A C binary's (harness/cprobes.c): functions by name and reads as C expressions of their
 * parameters (`me->current_term`, `e->term`, `return`) resolved through its DWARF (probes/c);
 * entry probes on the first instruction, return probes as uretprobes, which read what the
 * function returns and, through a stash its entry saves, fields of its first parameters. No g,
 * flags, return-address or stack reads (-1): a C call is seen once. */
int hprobes_attach_c(struct uprobe_loader *l, const struct desc *d, const char *binary, struct hprobes *out,
		     char *err);
void hprobes_free(struct hprobes *p);
const struct hprobe *hprobes_find(const struct hprobes *p, uint32_t id);
/* The message of a failure into err (HPROBES_ERR_SIZE); returns -e. */
int hprobes_fail(char *err, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
