/* The contract between the generic uprobe BPF program (probes/bpf/uprobe.bpf.c) and user space
 * (probes/uprobe_loader.c): the probe spec that user space writes into the spec map, and the event
 * record that the BPF program writes into the ring buffer. Knows no particular system.
 * See probes/bpf/README.md for the format in prose. */
#ifndef SPECTAP_PROBES_UPROBE_H
#define SPECTAP_PROBES_UPROBE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define UPROBE_MAX_READS 24  /* reads per probe; err has one bit per read */
#define UPROBE_MAX_DEREFS 3  /* pointer dereferences per read */
#define UPROBE_MAX_BLOCK 64  /* bytes of one block read */
#define UPROBE_MAX_ELEMS (UPROBE_MAX_BLOCK / 8) /* u64 elements of one ARRAY read */
#define UPROBE_MAX_PROBES 4096 /* distinct probe ids (spec map entries) */
#define UPROBE_MAX_STASH 4     /* values an entry probe saves for its function's return */
#define UPROBE_MAX_STASHED 16384 /* (thread, stash id, frame) entries live at once (LRU) */
#define UPROBE_MAX_WINDOWS 4      /* read windows per probe (struct uprobe_window) */
#define UPROBE_WINDOW_BYTES 512   /* bytes of one read window, a power of two */
/* The memory accesses of one read, each of which a window may serve: the stack slot (source
 * UPROBE_SRC_STACK), each dereference, the final MEM read. */
#define UPROBE_ACCESS_SLOT 0
#define UPROBE_ACCESS_DEREF(k) (1 + (k))
#define UPROBE_ACCESS_FINAL (1 + UPROBE_MAX_DEREFS)
#define UPROBE_ACCESSES (2 + UPROBE_MAX_DEREFS)

/* Read sources. Registers use the DWARF x86-64 register numbers (what DW_OP_reg<n> and
 * DW_OP_breg<n> name), so locations taken from debug info need no translation. */
enum uprobe_src {
	UPROBE_SRC_RAX = 0,
	UPROBE_SRC_RDX = 1,
	UPROBE_SRC_RCX = 2,
	UPROBE_SRC_RBX = 3,
	UPROBE_SRC_RSI = 4,
	UPROBE_SRC_RDI = 5,
	UPROBE_SRC_RBP = 6,
	UPROBE_SRC_RSP = 7,
	UPROBE_SRC_R8 = 8,
	UPROBE_SRC_R9 = 9,
	UPROBE_SRC_R10 = 10,
	UPROBE_SRC_R11 = 11,
	UPROBE_SRC_R12 = 12,
	UPROBE_SRC_R13 = 13,
	UPROBE_SRC_R14 = 14,
	UPROBE_SRC_R15 = 15,
	UPROBE_SRC_RIP = 16,
	/* The flags register: at a conditional jump, which way it goes (a Go prologue's jbe to
	 * runtime.morestack is taken when CF or ZF is set). */
	UPROBE_SRC_FLAGS = 17,
	UPROBE_SRC_STACK = 32, /* the u64 at rsp + src_off (rsp as at the probe site) */
	/* Value src_off (0..UPROBE_MAX_STASH-1) that this thread's entry probe saved for the same
	 * call (spec stash_id, frame): what a uretprobe reads instead of the clobbered arguments.
	 * No saved value: the read faults. */
	UPROBE_SRC_STASH = 33,
};

/* What a read produces (struct uprobe_read.kind). */
enum uprobe_read_kind {
	UPROBE_READ_NONE = 0,  /* unused slot: val 0, never an error */
	UPROBE_READ_VALUE = 1, /* the value itself after the dereference chain, cut to size bytes */
	UPROBE_READ_MEM = 2,   /* size (1, 2, 4, 8) bytes at value + off, zero-extended into val */
	UPROBE_READ_BLOCK = 3, /* size (1..64) bytes at value + off into block[i]; val = size */
	/* v is the address of element 0 of an array whose element count is val[len_read]:
	 * n = min(count, size) elements (the first n, or the last n with UPROBE_READ_TAIL); the
	 * u64 at v + (start + j) * stride + off goes to block[i] at 8 * j; val = n. */
	UPROBE_READ_ARRAY = 4,
};

#define UPROBE_READ_SIGNED 0x1u /* VALUE/MEM: sign-extend from size bytes instead of zero-extend */
#define UPROBE_READ_TAIL 0x2u   /* ARRAY: the last n elements instead of the first n */
#define UPROBE_READ_LEN 0x4u    /* BLOCK: at most val[len_read] bytes (an earlier read), not size */

/* One read: v = source; then nderef times v = *(u64 *)(v + deref_off[k]); then the kind's read. */
struct uprobe_read {
	__u8 src;      /* enum uprobe_src */
	__u8 kind;     /* enum uprobe_read_kind */
	__u8 size;     /* bytes: 1, 2, 4, 8 (VALUE, MEM), 1..UPROBE_MAX_BLOCK (BLOCK);
			* elements: 1..UPROBE_MAX_ELEMS (ARRAY) */
	__u8 nderef;   /* 0..UPROBE_MAX_DEREFS */
	__u8 flags;    /* UPROBE_READ_* */
	__u8 len_read; /* ARRAY: index (< this read's) of the read whose val is the element count;
			* BLOCK with UPROBE_READ_LEN: of the read whose val bounds the bytes read */
	__u16 stride;  /* ARRAY: bytes from one element to the next, > 0 */
	__s32 src_off; /* UPROBE_SRC_STACK: offset from rsp; otherwise 0 */
	__s32 deref_off[UPROBE_MAX_DEREFS];
	__s32 off; /* MEM, BLOCK: offset of the final read; ARRAY: of the field in an element */
	/* Set by the loader (uprobe_plan_windows), never by a spec's author: access a (an
	 * UPROBE_ACCESS_*) takes its 8 bytes at pick[a] of window win[a] - 1 when win[a] > 0 and
	 * that window was read at this hit; otherwise it reads user memory itself. */
	__u8 win[UPROBE_ACCESSES];
	__u8 block_slot; /* set by the loader: BLOCK, ARRAY: where its block is in a packed record */
	__u16 pick[UPROBE_ACCESSES];
};

/* A read window, planned by the loader from a spec's reads: the len bytes at v + lo, where v is
 * what the VALUE read at computes (a register or stack slot, then its dereferences), read in one
 * bpf_probe_read_user at the start of a hit; the reads whose accesses fall inside it take them
 * from there. One copy instead of one per field: on a virtualized guest a user read costs about
 * 0.1 us, a dozen a record (bench/RESULTS.md). A window that faults serves nothing: every read
 * then reads (and faults) on its own, as without windows. */
struct uprobe_window {
	struct uprobe_read at; /* kind VALUE, size 8; its own accesses may use earlier windows */
	__s32 lo;
	__u32 len; /* 1..UPROBE_WINDOW_BYTES */
};

#define UPROBE_SPEC_RETPROBE 0x1u /* attach at function return (uretprobe); registers at return */
#define UPROBE_SPEC_STASH_ONLY 0x2u /* with nstash: save the stash, emit no record (not in seq) */

/* The probe spec, stored in the spec map under the probe id (= the attach cookie).
 *
 * Stash (entry -> return, per thread): a spec with nstash > 0 (an entry probe, or a probe on a
 * RET instruction) saves the values of its reads 0..nstash-1 (VALUE or MEM) under (thread,
 * stash_id, frame), also when its record is lost; a spec whose reads use UPROBE_SRC_STASH
 * reads them back under (thread, stash_id, frame). frame is the caller's rsp after the return:
 * rsp + 8 at the entry or at a RET instruction, rsp in a uretprobe; so recursive calls each
 * have their own stash. A later call at the same frame overwrites it. */
struct probe_spec {
	__u32 nreads; /* 0..UPROBE_MAX_READS */
	__u32 flags;  /* UPROBE_SPEC_*; set by the loader: has_block below is derived */
	__u32 has_block; /* set by the loader: 1 if any read is BLOCK or ARRAY (full records) */
	__u16 stash_id;  /* with nstash or UPROBE_SRC_STASH reads: which stash, > 0 */
	__u8 nstash;     /* 0..UPROBE_MAX_STASH reads to save; 0 in a spec that reads a stash */
	__u8 reads_stash; /* set by the loader: 1 if any read's source is UPROBE_SRC_STASH */
	struct uprobe_read reads[UPROBE_MAX_READS];
	__u32 nwindows; /* set by the loader: 0..UPROBE_MAX_WINDOWS */
	__u32 block_mask; /* set by the loader: bit i: read i is BLOCK or ARRAY */
	struct uprobe_window windows[UPROBE_MAX_WINDOWS];
};

/* A saved stash, in the LRU hash map stash_map. */
struct uprobe_stash_key {
	__u32 tid;
	__u32 stash_id;
	__u64 frame;
};

struct uprobe_stash {
	__u64 val[UPROBE_MAX_STASH];
	__u32 err; /* bit k: read k faulted at the entry, so reading slot k faults too */
	__u32 reserved;
};

/* One record in the ring buffer. A probe with no BLOCK or ARRAY read emits struct uprobe_event
 * (compact); a probe with one emits struct uprobe_event_full. size says which. */
struct uprobe_event {
	__u32 probe_id; /* the attach cookie */
	__u32 cpu;
	__u32 pid;      /* thread group id (what user space calls the pid) */
	__u32 tid;
	__u64 ktime_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 seq;      /* per-CPU sequence: advances on every hit, also when the record is lost */
	__u16 size;     /* sizeof(struct uprobe_event) or sizeof(struct uprobe_event_full) */
	__u8 nreads;
	__u8 reserved8;
	__u32 err;      /* bit i set: read i faulted: val[i] is 0 and block[i] zeroed (ARRAY: val[i]
			 * may be n, block[i] zeroed from the faulting element on) */
	__u64 val[UPROBE_MAX_READS];
};

struct uprobe_event_full {
	struct uprobe_event ev;
	__u8 block[UPROBE_MAX_READS][UPROBE_MAX_BLOCK];
};

/* What the program writes to the ring for a probe with BLOCK or ARRAY reads: the record, then
 * the blocks of those reads only, in read order (uprobe_read.block_slot); ev.size is
 * sizeof(struct uprobe_event_full) and ev.reserved8 UPROBE_RING_PACKED. The loader expands it
 * into a struct uprobe_event_full before any caller sees it. Why: under a virtualized MMU every
 * ring page the program touches costs, and a full record's unused blocks were 87% of its bytes
 * (bench/RESULTS.md). A hit that runs nested in another on its CPU writes the full record. */
#define UPROBE_RING_PACKED 1
struct uprobe_ring_packed {
	struct uprobe_event ev;
	__u32 block_mask; /* the spec's block_mask */
	__u32 reserved;
	__u8 block[UPROBE_MAX_READS][UPROBE_MAX_BLOCK];
};

/* Per-CPU counters (one PERCPU_ARRAY entry). */
struct uprobe_counters {
	__u64 seq;     /* hits on this CPU = next sequence number */
	__u64 lost;    /* ring buffer reservations that failed: records lost */
	__u64 no_spec; /* hits whose cookie had no spec (not recorded, not in seq) */
};

#endif
