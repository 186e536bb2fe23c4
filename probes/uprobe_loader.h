/* Generic, data-driven uprobes: one BPF program whose reads are described by a probe spec
 * (probes/bpf/uprobe.h), attached by binary path and file offset, records drained from a ring
 * buffer on the caller's timer. Knows no particular system. All int returns: 0 or a count on
 * success, -errno on failure, with a message saying what failed on what in
 * uprobe_loader_error(). */
#ifndef SPECTAP_PROBES_UPROBE_LOADER_H
#define SPECTAP_PROBES_UPROBE_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/uprobe.h"

struct uprobe_loader;

/* A read (kind: UPROBE_READ_MEM, _ARRAY, ...) of size bytes at off from the address in src
 * (+ src_off), after following nderef pointers at derefs[0..nderef) (at most UPROBE_MAX_DEREFS). */
static inline struct uprobe_read uprobe_read_at(uint8_t src, int32_t src_off, uint8_t kind, uint8_t size,
						int32_t off, unsigned nderef, const int32_t *derefs)
{
	struct uprobe_read r = { .src = src, .kind = kind, .size = size, .nderef = (uint8_t)nderef,
				 .src_off = src_off, .off = off };
	for (unsigned k = 0; k < nderef; k++)
		r.deref_off[k] = derefs[k];
	return r;
}

struct uprobe_loader_opts {
	size_t ringbuf_bytes; /* power of two, multiple of the page size; 0: 8 MiB */
	/* Read every field on its own instead of through read windows (uprobe_windows.h): the
	 * same records, for comparing the two; also set by SPECTAP_NO_READ_WINDOWS in the
	 * environment. */
	bool no_read_windows;
};

/* Loads the BPF program and maps. On failure *out is NULL; if err is not NULL the message is
 * copied there (errlen bytes). -EPERM: not root / BPF not permitted. */
int uprobe_loader_open(struct uprobe_loader **out, const struct uprobe_loader_opts *opts, char *err,
		       size_t errlen);
void uprobe_loader_close(struct uprobe_loader *l);

/* The message of the last failure on l ("" if none). */
const char *uprobe_loader_error(const struct uprobe_loader *l);

/* Attaches the generic program at file_offset of binary_path (an ELF file), for process pid or
 * for every process (pid -1), with probe_id as the cookie; spec says what to read. Several
 * attachments may share a probe id if they share the spec. -ENOENT: no such binary;
 * -EINVAL: bad spec, or the offset is not inside an executable segment of the binary;
 * -EEXIST: probe_id already has a different spec. Returns 0. */
int uprobe_attach(struct uprobe_loader *l, const char *binary_path, uint64_t file_offset,
		  uint32_t probe_id, const struct probe_spec *spec, int pid);

/* Called once per record; size is ev->size. Return 0 to go on; a negative errno stops the drain
 * and uprobe_drain returns it (the records after it stay in the ring buffer). */
typedef int (*uprobe_event_fn)(void *ctx, const struct uprobe_event *ev, size_t size);

/* Consumes every record in the ring buffer now (no waiting, no epoll). Returns the number of
 * records consumed, or -errno. Drain on a timer (e.g. every 10 ms). */
int uprobe_drain(struct uprobe_loader *l, uprobe_event_fn fn, void *ctx);

/* The block of read i of a full record, or NULL (compact record or i out of range). */
const uint8_t *uprobe_event_block(const struct uprobe_event *ev, size_t size, unsigned i);

/* Records lost to failed ring buffer reservations, summed over CPUs, into *lost. Returns 0. */
int uprobe_losses(struct uprobe_loader *l, uint64_t *lost);

/* Per-CPU counters: fills up to n entries (indexed by CPU) and returns the number of possible
 * CPUs, or -errno. */
int uprobe_counters_per_cpu(struct uprobe_loader *l, struct uprobe_counters *out, size_t n);

/* The file offset at which a uprobe on function symbol of the ELF file path must be attached
 * (symbol value -> the loadable segment holding it -> file offset). Looks in .symtab, then
 * .dynsym. -ENOENT: no such file or no such function; -ENOEXEC: not an ELF file or the symbol
 * is in no loadable segment. err (errlen bytes) receives the message if not NULL. */
int uprobe_symbol_offset(const char *path, const char *symbol, uint64_t *file_offset, char *err,
			 size_t errlen);

#endif
