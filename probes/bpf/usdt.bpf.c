// SPDX-License-Identifier: GPL-2.0
/* The USDT program for spectap:event(const char *record, size_t len) (include/spectap/emit.h):
 * copies the record (at most USDT_MAX_DATA bytes) with pid, tid, CPU, ktime and a per-CPU
 * sequence number into a ring buffer, without wakeups (user space drains on a timer). A failed
 * reservation is counted per CPU and leaves a gap in that CPU's sequence; a record too large or
 * unreadable is still sent, flagged and counted: loss is never silent. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>
#include "usdt.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* user space may resize before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct usdt_counters);
} counters SEC(".maps");

static __always_inline void header(struct usdt_record *h, __u64 seq, __u32 len, __u32 flags)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	h->len = len;
	h->cpu = bpf_get_smp_processor_id();
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->flags = flags;
	h->reserved = 0;
	h->ktime_ns = bpf_ktime_get_ns();
	h->seq = seq;
}

/* Reserves a record of class cap, copies len (<= cap) bytes from rec, submits. */
#define SEND_CLASS(cap)                                                                            \
	do {                                                                                       \
		struct usdt_record *e = bpf_ringbuf_reserve(&events, sizeof(*e) + (cap), 0);       \
		__u32 n = len;                                                                     \
		if (!e) {                                                                          \
			__sync_fetch_and_add(&c->lost, 1);                                         \
			return 0;                                                                  \
		}                                                                                  \
		asm volatile("" : "+r"(n)); /* one register: the check below bounds it */       \
		if (n > (cap))                                                                     \
			n = 0; /* not reached: len <= cap */                                       \
		if (bpf_probe_read_user(e + 1, n, (const void *)rec)) {                            \
			flags |= USDT_REC_FAULT;                                                   \
			__sync_fetch_and_add(&c->faults, 1);                                       \
		}                                                                                  \
		header(e, seq, (__u32)len, flags);                                                 \
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);                                           \
		return 0;                                                                          \
	} while (0)

SEC("usdt")
int spectap_usdt(struct pt_regs *ctx)
{
	__u32 zero = 0, flags = 0;
	struct usdt_counters *c = bpf_map_lookup_elem(&counters, &zero);
	long rec = 0, arg_len = 0;
	__u64 seq, len;

	if (!c)
		return 0;
	/* Atomic even though per CPU: a uprobe program can be preempted by another task's hit. */
	seq = __sync_fetch_and_add(&c->seq, 1);
	if (bpf_usdt_arg_cnt(ctx) != 2 || bpf_usdt_arg(ctx, 0, &rec) || bpf_usdt_arg(ctx, 1, &arg_len)) {
		flags = USDT_REC_BAD_ARGS;
		arg_len = 0;
		__sync_fetch_and_add(&c->faults, 1);
	}
	len = (__u64)arg_len;
	if (len > USDT_MAX_DATA) {
		struct usdt_record *h = bpf_ringbuf_reserve(&events, sizeof(*h), 0);

		if (!h) {
			__sync_fetch_and_add(&c->lost, 1);
			return 0;
		}
		__sync_fetch_and_add(&c->too_large, 1);
		header(h, seq, len > 0xffffffffull ? 0xffffffffu : (__u32)len, USDT_REC_TOO_LARGE);
		bpf_ringbuf_submit(h, BPF_RB_NO_WAKEUP);
		return 0;
	}
	if (len <= USDT_CLASS0)
		SEND_CLASS(USDT_CLASS0);
	if (len <= USDT_CLASS1)
		SEND_CLASS(USDT_CLASS1);
	if (len <= USDT_CLASS2)
		SEND_CLASS(USDT_CLASS2);
	if (len <= USDT_CLASS3)
		SEND_CLASS(USDT_CLASS3);
	if (len <= USDT_CLASS4)
		SEND_CLASS(USDT_CLASS4);
	SEND_CLASS(USDT_CLASS5);
}
