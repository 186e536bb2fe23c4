// SPDX-License-Identifier: GPL-2.0
/* The one generic uprobe program: what it reads is data (the probe spec in spec_map, keyed by
 * the attach cookie = probe id), so attaching to a new function needs no new BPF code.
 * Records go to the ring buffer without wakeups (user space drains on a timer); failed
 * reservations are counted per CPU and the per-CPU sequence still advances, so loss is never
 * silent. Faulting reads set an error bit; they never drop the record. An entry probe may save
 * values (a stash) for the return probe of the same call: uretprobes see no arguments. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "uprobe.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* user space may resize before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UPROBE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct probe_spec);
} spec_map SEC(".maps");

/* LRU: a call whose return never comes (longjmp, exit) must not fill the map for good. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UPROBE_MAX_STASHED);
	__type(key, struct uprobe_stash_key);
	__type(value, struct uprobe_stash);
} stash_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uprobe_counters);
} counters SEC(".maps");

/* What one hit builds before its record goes into the ring: its read windows and the record. */
struct scratch {
	__u8 data[UPROBE_MAX_WINDOWS][UPROBE_WINDOW_BYTES + 8]; /* + 8: a pick reads 8 bytes */
	struct uprobe_ring_packed rec;
};

/* A uprobe program runs with migration, not preemption, disabled: another task's hit may run on
 * this CPU in the middle of ours. Each takes the next level; one nested deeper than that loses
 * its record (counted, as a full ring would). */
#define UPROBE_NEST 3
struct cpu_scratch {
	__u64 busy; /* hits running on this CPU */
	struct scratch level[UPROBE_NEST];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_scratch);
} scratch_map SEC(".maps");

/* What the accesses of one hit may use: the windows' data and which of them were read. */
struct win_use {
	const struct scratch *w;
	__u32 ok; /* bit w: window w was read at this hit */
};

/* A context field read the compiler must keep as written: without the barrier clang may merge
 * the switch below into one load at ctx + variable offset, which the verifier rejects. */
#define CTX_REG(regs, f)                                                                           \
	({                                                                                         \
		__u64 r_ = (regs)->f;                                                              \
		asm volatile("" : "+r"(r_));                                                       \
		r_;                                                                                \
	})

/* No process maps the lowest 64 KiB (vm.mmap_min_addr's default): an address there is a NULL
 * pointer plus a field offset (a heartbeat without entries, an empty slot). Reading it would
 * fault, and a fault taken inside the probe costs microseconds (about 7 us on a PVM guest,
 * bench/RESULTS.md), more than all the other reads of a record together: count it as the
 * faulted read it would be without taking the fault. */
#define LOW_ADDR 0x10000ull

/* Access a of read r: size (1..8) bytes at addr, from r's window when it has one that was read
 * (8 bytes there: extend() cuts them to size), else from user memory. Returns 1 on a fault. */
static __always_inline int access(const struct uprobe_read *r, __u32 a, __u64 addr, __u32 size,
				  const struct win_use *wu, __u64 *out)
{
	__u32 w = r->win[a]; /* a is a constant below UPROBE_ACCESSES at every call */

	if (w) {
		w = (w - 1) & (UPROBE_MAX_WINDOWS - 1);
		if ((wu->ok >> w) & 1) {
			__u32 p = r->pick[a] & (UPROBE_WINDOW_BYTES - 1);
			*out = *(const __u64 *)&wu->w->data[w][p];
			return 0;
		}
	}
	*out = 0;
	if (addr < LOW_ADDR)
		return 1;
	return bpf_probe_read_user(out, size & 15, (const void *)addr) ? 1 : 0;
}

static __always_inline __u64 reg_value(const struct pt_regs *regs, const struct uprobe_read *r,
				       const struct uprobe_stash *stash, const struct win_use *wu, int *fault)
{
	__u32 src = r->src;
	__s32 src_off = r->src_off;
	__u64 v = 0;

	switch (src) {
	case UPROBE_SRC_RAX: return CTX_REG(regs, ax);
	case UPROBE_SRC_RDX: return CTX_REG(regs, dx);
	case UPROBE_SRC_RCX: return CTX_REG(regs, cx);
	case UPROBE_SRC_RBX: return CTX_REG(regs, bx);
	case UPROBE_SRC_RSI: return CTX_REG(regs, si);
	case UPROBE_SRC_RDI: return CTX_REG(regs, di);
	case UPROBE_SRC_RBP: return CTX_REG(regs, bp);
	case UPROBE_SRC_RSP: return CTX_REG(regs, sp);
	case UPROBE_SRC_R8: return CTX_REG(regs, r8);
	case UPROBE_SRC_R9: return CTX_REG(regs, r9);
	case UPROBE_SRC_R10: return CTX_REG(regs, r10);
	case UPROBE_SRC_R11: return CTX_REG(regs, r11);
	case UPROBE_SRC_R12: return CTX_REG(regs, r12);
	case UPROBE_SRC_R13: return CTX_REG(regs, r13);
	case UPROBE_SRC_R14: return CTX_REG(regs, r14);
	case UPROBE_SRC_R15: return CTX_REG(regs, r15);
	case UPROBE_SRC_RIP: return CTX_REG(regs, ip);
	case UPROBE_SRC_FLAGS: return CTX_REG(regs, flags);
	case UPROBE_SRC_STACK:
		if (access(r, UPROBE_ACCESS_SLOT, CTX_REG(regs, sp) + (__s64)src_off, 8, wu, &v))
			*fault = 1;
		return v;
	case UPROBE_SRC_STASH:
		/* No stash: a window's base (the loader plans none from a stash). */
		if (!stash || (__u32)src_off >= UPROBE_MAX_STASH || ((stash->err >> (src_off & 31)) & 1)) {
			*fault = 1;
			return 0;
		}
		return stash->val[src_off & (UPROBE_MAX_STASH - 1)];
	default:
		*fault = 1; /* the loader rejects these; never trust the map blindly */
		return 0;
	}
}

static __always_inline __u64 extend(__u64 v, __u32 size, __u32 flags)
{
	__u32 shift = 64 - 8 * (size & 15);

	if (size >= 8)
		return v;
	if (flags & UPROBE_READ_SIGNED)
		return (__u64)(((__s64)(v << shift)) >> shift);
	return (v << shift) >> shift;
}

/* ARRAY read i: the u64 at off of up to size elements from v, the element count being the
 * value of the earlier read len_read (already in e). block is zeroed. Returns 1 if it faulted. */

static __always_inline int read_array(const struct uprobe_read *r, const struct uprobe_event *e, __u32 i,
				      __u64 v, __u64 *val, __u64 *block)
{
	__u32 lr = r->len_read, size = r->size, stride = r->stride;
	__u64 count, n, base;

	if (lr >= i || size == 0 || size > UPROBE_MAX_ELEMS || stride == 0)
		return 1;
	if (e->err & (1u << lr))
		return 1; /* no count */
	count = e->val[lr];
	if (count > (1ull << 31))
		return 1; /* not a length: garbage, or a negative one */
	n = count < size ? count : size;
	base = v + (__s64)r->off;
	if (r->flags & UPROBE_READ_TAIL)
		base += (count - n) * stride;
	*val = n;
#pragma unroll
	for (int j = 0; j < UPROBE_MAX_ELEMS; j++) {
		if ((__u64)j >= n)
			break;
		if (base + (__u64)j * stride < LOW_ADDR)
			return 1;
		if (bpf_probe_read_user(&block[j], sizeof(block[j]), (const void *)(base + (__u64)j * stride)))
			return 1; /* the helper zeroed element j; the later ones are still 0 */
	}
	return 0;
}

/* Performs read i of spec into e; block is e's (zeroed) block area for this read, or NULL in a
 * compact record. Returns 1 if the read faulted. */
/* The value of r's source after its dereferences into *v. Returns 1 if it faulted. */
static __always_inline int base_value(const struct pt_regs *regs, const struct uprobe_read *r,
				      const struct uprobe_stash *stash, const struct win_use *wu, __u64 *v)
{
	int fault = 0;

	*v = reg_value(regs, r, stash, wu, &fault);
	if (fault)
		return 1;
#pragma unroll
	for (int k = 0; k < UPROBE_MAX_DEREFS; k++) {
		if (k >= r->nderef)
			break;
		if (access(r, UPROBE_ACCESS_DEREF(k), *v + (__s64)r->deref_off[k], 8, wu, v))
			return 1;
	}
	return 0;
}

static __always_inline int do_read(const struct pt_regs *regs, const struct uprobe_read *r,
				   const struct uprobe_event *e, __u32 i, __u64 *val, __u8 *block,
				   const struct uprobe_stash *stash, const struct win_use *wu)
{
	__u32 kind = r->kind, size = r->size;
	__u64 v;

	*val = 0;
	if (kind == UPROBE_READ_NONE)
		return 0;
	if (base_value(regs, r, stash, wu, &v))
		return 1;
	if (kind == UPROBE_READ_VALUE) {
		*val = extend(v, size, r->flags);
		return 0;
	}
	if (kind == UPROBE_READ_MEM) {
		__u64 m = 0;
		if (size == 0 || size > 8)
			return 1;
		if (access(r, UPROBE_ACCESS_FINAL, v + (__s64)r->off, size, wu, &m))
			return 1;
		*val = extend(m, size, r->flags);
		return 0;
	}
	if (kind == UPROBE_READ_BLOCK && block) {
		if (size == 0 || size > UPROBE_MAX_BLOCK)
			return 1;
		if (r->flags & UPROBE_READ_LEN) {
			/* At most the length an earlier read gave: a short string's bytes, without
			 * reading past it into memory that may not be mapped; an empty one (whose
			 * pointer may be nil) reads nothing. */
			__u32 lr = r->len_read;
			if (lr >= i || (e->err & (1u << lr)))
				return 1;
			if (e->val[lr] < size)
				size = (__u32)e->val[lr];
			if (size == 0) {
				*val = 0;
				return 0;
			}
		}
		if (v + (__s64)r->off < LOW_ADDR)
			return 1;
		if (bpf_probe_read_user(block, size & (2 * UPROBE_MAX_BLOCK - 1),
					(const void *)(v + (__s64)r->off)))
			return 1; /* the helper zeroed the destination */
		*val = size;
		return 0;
	}
	if (kind == UPROBE_READ_ARRAY && block)
		return read_array(r, e, i, v, val, (__u64 *)block);
	return 1;
}

/* err lives in the record, not in a register: ARRAY reads look up their count's bit, and the
 * verifier need not tell apart 2^24 error patterns. */
static __always_inline void fill(const struct pt_regs *regs, const struct probe_spec *spec,
				 struct uprobe_event *e, __u8 (*blocks)[UPROBE_MAX_BLOCK],
				 const struct uprobe_stash *stash, const struct win_use *wu)
{
	__u32 n = spec->nreads;

	e->err = 0;
#pragma unroll
	for (int i = 0; i < UPROBE_MAX_READS; i++) {
		__u8 *blk = 0;

		if (blocks && (spec->block_mask >> i) & 1) {
			__u32 slot = spec->reads[i].block_slot;
			if (slot < UPROBE_MAX_READS)
				blk = blocks[slot];
		}
		if (blk) {
			/* The scratch holds the last hit's record: a block not (fully) written,
			 * e.g. behind a faulting pointer, must read as zeros, not as old data. */
#pragma unroll
			for (int j = 0; j < UPROBE_MAX_BLOCK / 8; j++)
				((__u64 *)blk)[j] = 0;
		}
		if ((__u32)i >= n) {
			e->val[i] = 0;
			continue;
		}
		if (do_read(regs, &spec->reads[i], e, i, &e->val[i], blk, stash, wu))
			e->err |= 1u << i;
	}
	e->nreads = n > UPROBE_MAX_READS ? UPROBE_MAX_READS : n;
}

/* The caller's rsp once this call has returned: the same at the entry, at a RET instruction
 * (rsp + 8: the return address is still on the stack) and in a uretprobe (rsp: popped). */
static __always_inline __u64 frame_of(const struct pt_regs *regs, const struct probe_spec *spec)
{
	return CTX_REG(regs, sp) + (spec->flags & UPROBE_SPEC_RETPROBE ? 0 : 8);
}

static __always_inline void stash_key(const struct pt_regs *regs, const struct probe_spec *spec,
				      struct uprobe_stash_key *k)
{
	k->tid = (__u32)bpf_get_current_pid_tgid();
	k->stash_id = spec->stash_id;
	k->frame = frame_of(regs, spec);
}

/* Saves the stash: from the record e, or, when there is no record (lost, or STASH_ONLY), by
 * doing the reads here. A failed update must not leave an older call's stash to be read as
 * this one's. */
static __always_inline void stash_save(const struct pt_regs *regs, const struct probe_spec *spec,
				       const struct uprobe_event *e, const struct win_use *wu)
{
	struct uprobe_stash_key k = {};
	struct uprobe_stash st = {};

	stash_key(regs, spec, &k);
#pragma unroll
	for (int i = 0; i < UPROBE_MAX_STASH; i++) {
		if ((__u32)i >= spec->nstash)
			break;
		if (e) {
			st.val[i] = e->val[i];
			st.err |= e->err & (1u << i);
		} else if (do_read(regs, &spec->reads[i], 0, i, &st.val[i], 0, &st, wu)) {
			/* &st as the stash to read: never used, a stashing spec reads none (loader). */
			st.err |= 1u << i;
		}
	}
	if (bpf_map_update_elem(&stash_map, &k, &st, BPF_ANY))
		bpf_map_delete_elem(&stash_map, &k);
}

/* Reads this hit's windows (struct uprobe_window) in order; each may take its base through the
 * windows before it. A window that faults is just not used. */
static __always_inline void read_windows(const struct pt_regs *regs, const struct probe_spec *spec,
					 struct scratch *w, struct win_use *wu)
{
#pragma unroll
	for (int k = 0; k < UPROBE_MAX_WINDOWS; k++) {
		const struct uprobe_window *win = &spec->windows[k];
		__u32 len = win->len;
		__u64 v;

		if ((__u32)k >= spec->nwindows)
			break;
		if (len == 0 || len > UPROBE_WINDOW_BYTES || base_value(regs, &win->at, 0, wu, &v))
			continue;
		v += (__s64)win->lo;
		if (v < LOW_ADDR || bpf_probe_read_user(w->data[k], len, (const void *)v))
			continue;
		wu->ok |= 1u << k;
	}
}

static __always_inline void stamp(struct uprobe_event *e, __u32 id, __u64 seq, __u16 size, __u8 kind)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	e->probe_id = id;
	e->cpu = bpf_get_smp_processor_id();
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->ktime_ns = bpf_ktime_get_ns();
	e->seq = seq;
	e->size = size;
	e->reserved8 = kind;
}

/* One hit in scratch sc (windows already read): its record built there and copied into the ring
 * (packed: the blocks of BLOCK and ARRAY reads only), its stash saved. With sc NULL (nested too
 * deep) the record is lost, counted, and the stash still saved. */
static __always_inline void hit(struct pt_regs *ctx, __u32 id, const struct probe_spec *spec,
				struct uprobe_counters *c, const struct win_use *wu, struct scratch *sc)
{
	/* A copy on the stack, every slot faulting when there is none: no pointer that may be NULL
	 * through the 24 inlined reads (the verifier would walk them twice). */
	struct uprobe_stash stash = {.err = ~0u};
	struct uprobe_event *e;
	__u32 nb, size;
	__u64 seq;

	if (spec->nstash && (spec->flags & UPROBE_SPEC_STASH_ONLY)) {
		stash_save(ctx, spec, 0, wu);
		return;
	}
	/* Atomic even though per CPU: a uprobe program can be preempted by another task's hit. */
	seq = __sync_fetch_and_add(&c->seq, 1);
	if (!sc) {
		__sync_fetch_and_add(&c->lost, 1);
		/* The return probe still needs the stash: a lost entry record must not become a
		 * fault (or worse) in the return record too. */
		if (spec->nstash)
			stash_save(ctx, spec, 0, wu);
		return;
	}
	if (spec->reads_stash) {
		struct uprobe_stash_key k = {};
		const struct uprobe_stash *saved;

		stash_key(ctx, spec, &k);
		saved = bpf_map_lookup_elem(&stash_map, &k);
		if (saved)
			__builtin_memcpy(&stash, saved, sizeof(stash));
	}
	e = &sc->rec.ev;
	fill(ctx, spec, e, spec->has_block ? sc->rec.block : 0, &stash, wu);
	if (spec->has_block) {
		nb = __builtin_popcount(spec->block_mask);
		if (nb > UPROBE_MAX_READS)
			nb = UPROBE_MAX_READS;
		size = sizeof(sc->rec) - (UPROBE_MAX_READS - nb) * UPROBE_MAX_BLOCK;
		stamp(e, id, seq, sizeof(struct uprobe_event_full), UPROBE_RING_PACKED);
		sc->rec.block_mask = spec->block_mask;
		sc->rec.reserved = 0;
	} else {
		size = sizeof(*e);
		stamp(e, id, seq, sizeof(*e), 0);
	}
	if (spec->nstash)
		stash_save(ctx, spec, e, wu);
	if (bpf_ringbuf_output(&events, &sc->rec, size, BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&c->lost, 1);
}

SEC("uprobe")
int spectap_uprobe(struct pt_regs *ctx)
{
	__u32 zero = 0, id = (__u32)bpf_get_attach_cookie(ctx);
	struct uprobe_counters *c = bpf_map_lookup_elem(&counters, &zero);
	const struct probe_spec *spec = bpf_map_lookup_elem(&spec_map, &id);
	struct cpu_scratch *cs = bpf_map_lookup_elem(&scratch_map, &zero);
	struct scratch *sc = 0;
	struct win_use wu = {};
	__u64 level;

	if (!c || !cs)
		return 0;
	if (!spec) {
		__sync_fetch_and_add(&c->no_spec, 1);
		return 0;
	}
	level = __sync_fetch_and_add(&cs->busy, 1);
	if (level < UPROBE_NEST) {
		sc = &cs->level[level];
		wu.w = sc;
		read_windows(ctx, spec, sc, &wu);
	} else {
		wu.w = &cs->level[0]; /* never read: ok is 0 */
	}
	hit(ctx, id, spec, c, &wu, sc);
	__sync_fetch_and_add(&cs->busy, -1);
	return 0;
}
