/* The contract between the USDT BPF program (probes/bpf/usdt.bpf.c), attached to the probe
 * spectap:event(const char *record, size_t len) of the emit library (include/spectap/emit.h),
 * and user space (probes/usdt_loader.c): the record it writes into the ring buffer and its
 * per-CPU counters. */
#ifndef SPECTAP_PROBES_USDT_H
#define SPECTAP_PROBES_USDT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define USDT_MAX_DATA 8192 /* record bytes copied at most (= SPT_EMIT_MAX) */

/* Ring buffer reservations are of constant size, so a record goes into the smallest of these
 * data areas that holds it: with the 40-byte header, slots of 256, 512, ... 4096 bytes, and
 * 8232 for the largest records (a record of 300 bytes takes a 512-byte slot). */
#define USDT_CLASS0 216
#define USDT_CLASS1 472
#define USDT_CLASS2 984
#define USDT_CLASS3 2008
#define USDT_CLASS4 4056
#define USDT_CLASS5 USDT_MAX_DATA

/* struct usdt_record.flags */
#define USDT_REC_TOO_LARGE 0x1u /* len > USDT_MAX_DATA: no data copied (counted: too_large) */
#define USDT_REC_FAULT 0x2u     /* the record's memory could not be read: data zeroed (faults) */
#define USDT_REC_BAD_ARGS 0x4u  /* the probe's arguments could not be fetched: len 0 (faults) */

/* One record in the ring buffer: this header, then the data: len bytes unless flagged. */
struct usdt_record {
	__u32 len;      /* the record's length as the probe gave it */
	__u32 cpu;      /* the CPU the probe ran on (whose counters and seq apply) */
	__u32 pid;      /* thread group id */
	__u32 tid;
	__u32 flags;    /* USDT_REC_* */
	__u32 reserved; /* 0 */
	__u64 ktime_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 seq;      /* per-CPU sequence: advances on every hit, also when the record is lost */
	/* the data follows the header (40 bytes) */
};

/* Per-CPU counters (one PERCPU_ARRAY entry). For every CPU: records received + lost = seq. */
struct usdt_counters {
	__u64 seq;       /* hits on this CPU = next sequence number */
	__u64 lost;      /* ring buffer reservations that failed: records lost */
	__u64 too_large; /* records sent flagged USDT_REC_TOO_LARGE */
	__u64 faults;    /* records sent flagged USDT_REC_FAULT or USDT_REC_BAD_ARGS */
};

#endif
