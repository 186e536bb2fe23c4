/* Generic uprobe loader: the skeleton of probes/bpf/uprobe.bpf.c, attachment by file offset
 * with the probe id as cookie, timer-driven draining, loss counters, and ELF symbol -> file
 * offset. See uprobe_loader.h. */
#include "uprobe_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_common.h"
#include "uprobe_windows.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "uprobe.skel.h"
#pragma GCC diagnostic pop

#define DEFAULT_RINGBUF_BYTES (8u << 20)

/* The layout is shared with the BPF program and documented in probes/bpf/README.md. */
_Static_assert(sizeof(struct uprobe_read) == 44, "struct uprobe_read layout");
_Static_assert(offsetof(struct uprobe_read, win) == 28 && offsetof(struct uprobe_read, pick) == 34,
	       "struct uprobe_read layout");
_Static_assert(offsetof(struct probe_spec, windows) == 16 + UPROBE_MAX_READS * 44 + 8, "struct probe_spec layout");
_Static_assert(offsetof(struct uprobe_read, stride) == 6, "struct uprobe_read layout");
_Static_assert(offsetof(struct uprobe_event, err) == 36, "struct uprobe_event layout");
_Static_assert(offsetof(struct uprobe_event, val) == 40, "struct uprobe_event layout");
_Static_assert(UPROBE_MAX_READS <= 32, "err has one bit per read");
_Static_assert(offsetof(struct uprobe_ring_packed, block) == sizeof(struct uprobe_event) + 8, "packed record layout");

struct uprobe_loader {
	struct uprobe_bpf *skel;
	struct ring_buffer *rb;
	struct bpfc_links links;
	bool no_read_windows; /* uprobe_loader_opts.no_read_windows */
	uprobe_event_fn fn; /* set during uprobe_drain */
	struct uprobe_event_full expanded; /* a packed record, as the callback sees it */
	void *fn_ctx;
	int ncpus;
	char err[512];
};

static int fail(struct uprobe_loader *l, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct uprobe_loader *l, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bpfc_vformat(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return err;
}

/* A packed record (struct uprobe_ring_packed) as the full record it stands for: block k of the
 * packed ones is the block of the k-th read in block_mask, the other blocks are zeros. */
static int expand(struct uprobe_loader *l, const void *data, size_t size)
{
	const struct uprobe_ring_packed *p = data;
	struct uprobe_event_full *f = &l->expanded;
	size_t head = offsetof(struct uprobe_ring_packed, block);
	unsigned k = 0;

	if (size < head || p->ev.size != sizeof(*f) ||
	    size != head + (size_t)__builtin_popcount(p->block_mask) * UPROBE_MAX_BLOCK)
		return fail(l, -EBADMSG, "uprobe drain: malformed packed record of %zu bytes", size);
	f->ev = p->ev;
	f->ev.reserved8 = 0;
	for (unsigned i = 0; i < UPROBE_MAX_READS; i++) {
		if (p->block_mask & (1u << i))
			memcpy(f->block[i], p->block[k++], UPROBE_MAX_BLOCK);
		else
			memset(f->block[i], 0, UPROBE_MAX_BLOCK);
	}
	return l->fn ? l->fn(l->fn_ctx, &f->ev, sizeof(*f)) : 0;
}

static int drain_sample(void *ctx, void *data, size_t size)
{
	struct uprobe_loader *l = ctx;
	const struct uprobe_event *ev = data;

	if (size < sizeof(*ev))
		return fail(l, -EBADMSG, "uprobe drain: malformed record of %zu bytes", size);
	if (ev->reserved8 == UPROBE_RING_PACKED)
		return expand(l, data, size);
	if (ev->size > size)
		return fail(l, -EBADMSG, "uprobe drain: malformed record of %zu bytes", size);
	return l->fn ? l->fn(l->fn_ctx, ev, ev->size) : 0;
}

int uprobe_loader_open(struct uprobe_loader **out, const struct uprobe_loader_opts *opts, char *err,
		       size_t errlen)
{
	struct uprobe_loader *l = NULL;
	size_t rb_bytes = opts && opts->ringbuf_bytes ? opts->ringbuf_bytes : DEFAULT_RINGBUF_BYTES;
	int ret;

	*out = NULL;
	bpfc_format(err, errlen, "%s", "");
	bpfc_init_print();
	if ((ret = bpfc_check_ringbuf(rb_bytes, "uprobe loader", err, errlen)))
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l) {
		ret = -ENOMEM;
		bpfc_format(err, errlen, "uprobe loader: out of memory");
		goto cleanup;
	}
	l->skel = uprobe_bpf__open();
	if (!l->skel) {
		ret = -errno;
		bpfc_format(err, errlen, "uprobe loader: opening the BPF object failed: %s", strerror(-ret));
		goto cleanup;
	}
	l->no_read_windows = (opts && opts->no_read_windows) || getenv("SPECTAP_NO_READ_WINDOWS");
	ret = bpfc_load(l->skel->skeleton, l->skel->maps.events, rb_bytes, drain_sample, l, &l->rb, &l->ncpus,
			"uprobe loader", err, errlen);
	if (ret)
		goto cleanup;
	ret = 0;
cleanup:
	if (ret) {
		uprobe_loader_close(l);
		return ret;
	}
	*out = l;
	return 0;
}

void uprobe_loader_close(struct uprobe_loader *l)
{
	if (!l)
		return;
	bpfc_links_free(&l->links);
	ring_buffer__free(l->rb);
	uprobe_bpf__destroy(l->skel);
	free(l);
}

const char *uprobe_loader_error(const struct uprobe_loader *l)
{
	return l ? l->err : "";
}

/* The stash fields of a spec (see struct probe_spec); reads_stash says a read uses one. */
static int check_stash(struct uprobe_loader *l, uint32_t probe_id, const struct probe_spec *spec, bool reads_stash)
{
	if (spec->nstash > UPROBE_MAX_STASH || spec->nstash > spec->nreads)
		return fail(l, -EINVAL, "uprobe attach: probe %u stashes %u reads (at most %d, and at most nreads %u)",
			    probe_id, spec->nstash, UPROBE_MAX_STASH, spec->nreads);
	if ((spec->flags & UPROBE_SPEC_STASH_ONLY) && !spec->nstash)
		return fail(l, -EINVAL, "uprobe attach: probe %u is STASH_ONLY but stashes nothing (nstash 0)", probe_id);
	if (spec->nstash && reads_stash)
		return fail(l, -EINVAL, "uprobe attach: probe %u both saves a stash and reads one", probe_id);
	if ((spec->nstash || reads_stash) && !spec->stash_id)
		return fail(l, -EINVAL, "uprobe attach: probe %u uses a stash but its stash_id is 0", probe_id);
	for (uint32_t i = 0; i < spec->nstash; i++)
		if (spec->reads[i].kind != UPROBE_READ_VALUE && spec->reads[i].kind != UPROBE_READ_MEM)
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: a stashed read must be VALUE or MEM",
				    probe_id, i);
	return 0;
}

/* Checks a spec and derives has_block, reads_stash and the read windows into *out; what a
 * spec's author wrote into the derived fields is ignored. */
static int check_spec(struct uprobe_loader *l, uint32_t probe_id, const struct probe_spec *spec,
		      struct probe_spec *out)
{
	int ret;

	if (!spec)
		return fail(l, -EINVAL, "uprobe attach: probe %u has no spec", probe_id);
	if (spec->nreads > UPROBE_MAX_READS)
		return fail(l, -EINVAL, "uprobe attach: probe %u has %u reads (at most %d)", probe_id,
			    spec->nreads, UPROBE_MAX_READS);
	if (spec->flags & ~(UPROBE_SPEC_RETPROBE | UPROBE_SPEC_STASH_ONLY))
		return fail(l, -EINVAL, "uprobe attach: probe %u has unknown flags 0x%x", probe_id, spec->flags);
	memset(out, 0, sizeof(*out));
	out->nreads = spec->nreads;
	out->flags = spec->flags;
	out->stash_id = spec->stash_id;
	out->nstash = spec->nstash;
	for (uint32_t i = 0; i < spec->nreads; i++) {
		const struct uprobe_read *r = &spec->reads[i];
		bool reg = r->src <= UPROBE_SRC_FLAGS, sized = r->size == 1 || r->size == 2 || r->size == 4 ||
								  r->size == 8;

		if (r->kind == UPROBE_READ_NONE)
			continue;
		if (!reg && r->src != UPROBE_SRC_STACK && r->src != UPROBE_SRC_STASH)
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: unknown source %u", probe_id, i,
				    r->src);
		if (reg && r->src_off)
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: src_off is for stack slots only",
				    probe_id, i);
		if (r->src == UPROBE_SRC_STASH) {
			if (r->src_off < 0 || r->src_off >= UPROBE_MAX_STASH)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: stash value %d not in 0..%d",
					    probe_id, i, r->src_off, UPROBE_MAX_STASH - 1);
			out->reads_stash = 1;
		}
		if (r->nderef > UPROBE_MAX_DEREFS)
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: %u dereferences (at most %d)",
				    probe_id, i, r->nderef, UPROBE_MAX_DEREFS);
		if (r->flags & ~(UPROBE_READ_SIGNED | UPROBE_READ_TAIL | UPROBE_READ_LEN))
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: unknown flags 0x%x", probe_id, i,
				    r->flags);
		if ((r->flags & UPROBE_READ_LEN) && (r->kind != UPROBE_READ_BLOCK || r->len_read >= i ||
						      spec->reads[r->len_read].kind == UPROBE_READ_NONE))
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: UPROBE_READ_LEN is for a BLOCK read whose "
				    "length read %u is an earlier, used read", probe_id, i, r->len_read);
		if ((r->flags & UPROBE_READ_TAIL) && r->kind != UPROBE_READ_ARRAY)
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: UPROBE_READ_TAIL is for ARRAY reads only",
				    probe_id, i);
		switch (r->kind) {
		case UPROBE_READ_VALUE:
		case UPROBE_READ_MEM:
			if (!sized)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: size %u is not 1, 2, 4 or 8",
					    probe_id, i, r->size);
			break;
		case UPROBE_READ_BLOCK:
			if (r->size < 1 || r->size > UPROBE_MAX_BLOCK)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: block size %u not in 1..%d",
					    probe_id, i, r->size, UPROBE_MAX_BLOCK);
			out->has_block = 1;
			break;
		case UPROBE_READ_ARRAY:
			if (r->size < 1 || r->size > UPROBE_MAX_ELEMS)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: array size %u not in 1..%d elements",
					    probe_id, i, r->size, UPROBE_MAX_ELEMS);
			if (r->stride == 0)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: array stride is 0", probe_id, i);
			if (r->len_read >= i)
				return fail(l, -EINVAL,
					    "uprobe attach: probe %u read %u: array length read %u is not an earlier read",
					    probe_id, i, r->len_read);
			if (spec->reads[r->len_read].kind == UPROBE_READ_NONE)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: array length read %u is unused (NONE)",
					    probe_id, i, r->len_read);
			if (r->flags & UPROBE_READ_SIGNED)
				return fail(l, -EINVAL, "uprobe attach: probe %u read %u: UPROBE_READ_SIGNED is not for ARRAY reads",
					    probe_id, i);
			out->has_block = 1;
			break;
		default:
			return fail(l, -EINVAL, "uprobe attach: probe %u read %u: unknown kind %u", probe_id, i,
				    r->kind);
		}
		out->reads[i] = *r;
		memset(out->reads[i].win, 0, sizeof(out->reads[i].win));
		memset(out->reads[i].pick, 0, sizeof(out->reads[i].pick));
		out->reads[i].block_slot = 0;
		if (r->kind == UPROBE_READ_BLOCK || r->kind == UPROBE_READ_ARRAY) {
			out->reads[i].block_slot = (uint8_t)__builtin_popcount(out->block_mask);
			out->block_mask |= 1u << i;
		}
		if (r->kind != UPROBE_READ_ARRAY) {
			/* Unused here: cleared so that equal specs compare equal (-EEXIST check). */
			if (!(r->flags & UPROBE_READ_LEN))
				out->reads[i].len_read = 0;
			out->reads[i].stride = 0;
		}
	}
	ret = check_stash(l, probe_id, spec, out->reads_stash);
	if (!ret && !l->no_read_windows)
		uprobe_plan_windows(out);
	return ret;
}

/* Opens path as ELF; on failure returns NULL with *code = -ENOENT/-EACCES/... or -ENOEXEC. */
static Elf *elf_open(const char *path, int *fd, int *code, char *err, size_t errlen)
{
	Elf *e;

	*code = -ENOEXEC;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		bpfc_format(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		*code = -errno;
		bpfc_format(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		bpfc_format(err, errlen, "%s: not an ELF file", path);
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return e;
}

/* 0 if file_offset lies in an executable loadable segment of the ELF file path. */
static int check_offset(struct uprobe_loader *l, const char *path, uint64_t file_offset, uint32_t probe_id)
{
	char msg[300];
	int fd = -1, ret = -EINVAL;
	size_t n = 0;
	Elf *e = elf_open(path, &fd, &ret, msg, sizeof(msg));

	if (!e)
		return fail(l, ret, "uprobe attach: probe %u: %s", probe_id, msg);
	if (elf_getphdrnum(e, &n)) {
		ret = fail(l, -ENOEXEC, "uprobe attach: probe %u: %s: no program headers", probe_id, path);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (file_offset >= ph.p_offset && file_offset < ph.p_offset + ph.p_filesz) {
			ret = 0;
			goto cleanup;
		}
	}
	ret = fail(l, -EINVAL, "uprobe attach: probe %u: offset 0x%llx of %s is not in an executable segment",
		   probe_id, (unsigned long long)file_offset, path);
cleanup:
	elf_end(e);
	close(fd);
	return ret;
}

int uprobe_attach(struct uprobe_loader *l, const char *binary_path, uint64_t file_offset,
		  uint32_t probe_id, const struct probe_spec *spec, int pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct probe_spec s, old;
	struct bpf_link *link = NULL;
	struct stat st;
	bool inserted = false;
	int ret;

	if (!l || !binary_path)
		return -EINVAL;
	l->err[0] = 0;
	ret = check_spec(l, probe_id, spec, &s);
	if (ret)
		return ret;
	if (stat(binary_path, &st))
		return fail(l, -errno, "uprobe attach: probe %u: binary %s: %s", probe_id, binary_path,
			    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(l, -EINVAL, "uprobe attach: probe %u: binary %s is not a regular file", probe_id,
			    binary_path);
	if (file_offset >= (uint64_t)st.st_size)
		return fail(l, -EINVAL, "uprobe attach: probe %u: offset 0x%llx is beyond the end of %s (%lld bytes)",
			    probe_id, (unsigned long long)file_offset, binary_path, (long long)st.st_size);
	ret = check_offset(l, binary_path, file_offset, probe_id);
	if (ret)
		return ret;
	if (bpfc_links_reserve(&l->links))
		return fail(l, -ENOMEM, "uprobe attach: probe %u: out of memory", probe_id);
	ret = bpf_map__lookup_elem(l->skel->maps.spec_map, &probe_id, sizeof(probe_id), &old, sizeof(old), 0);
	if (ret == 0) {
		if (memcmp(&old, &s, sizeof(s)) != 0)
			return fail(l, -EEXIST, "uprobe attach: probe %u already has a different spec", probe_id);
	} else {
		ret = bpf_map__update_elem(l->skel->maps.spec_map, &probe_id, sizeof(probe_id), &s, sizeof(s),
					   BPF_NOEXIST);
		if (ret) {
			ret = fail(l, ret, "uprobe attach: probe %u: storing its spec failed: %s%s", probe_id,
				   strerror(-ret), bpfc_perm_hint(ret));
			goto cleanup;
		}
		inserted = true;
	}
	uo.bpf_cookie = probe_id;
	uo.retprobe = (s.flags & UPROBE_SPEC_RETPROBE) != 0;
	link = bpf_program__attach_uprobe_opts(l->skel->progs.spectap_uprobe, pid < 0 ? -1 : pid, binary_path,
					       (size_t)file_offset, &uo);
	if (!link) {
		ret = -errno;
		ret = fail(l, ret ? ret : -EINVAL, "uprobe attach: probe %u at %s+0x%llx (pid %d) failed: %s%s",
			   probe_id, binary_path, (unsigned long long)file_offset, pid, strerror(-ret), bpfc_perm_hint(ret));
		goto cleanup;
	}
	bpfc_links_add(&l->links, link);
	ret = 0;
cleanup:
	if (ret && inserted)
		bpf_map__delete_elem(l->skel->maps.spec_map, &probe_id, sizeof(probe_id), 0);
	return ret;
}

int uprobe_drain(struct uprobe_loader *l, uprobe_event_fn fn, void *ctx)
{
	int ret;

	if (!l)
		return -EINVAL;
	l->fn = fn;
	l->fn_ctx = ctx;
	ret = ring_buffer__consume(l->rb);
	l->fn = NULL;
	l->fn_ctx = NULL;
	if (ret < 0 && !l->err[0])
		fail(l, ret, "uprobe drain: consuming the ring buffer failed: %s", strerror(-ret));
	return ret;
}

const uint8_t *uprobe_event_block(const struct uprobe_event *ev, size_t size, unsigned i)
{
	if (!ev || i >= UPROBE_MAX_READS || size < sizeof(struct uprobe_event_full) ||
	    ev->size < sizeof(struct uprobe_event_full))
		return NULL;
	return ((const struct uprobe_event_full *)ev)->block[i];
}

int uprobe_counters_per_cpu(struct uprobe_loader *l, struct uprobe_counters *out, size_t n)
{
	struct uprobe_counters *all;
	int ret;

	if (!l)
		return -EINVAL;
	all = calloc((size_t)l->ncpus, sizeof(*all));
	if (!all)
		return fail(l, -ENOMEM, "uprobe counters: out of memory");
	ret = bpfc_percpu_read(l->skel->maps.counters, all, sizeof(*all), l->ncpus);
	if (ret) {
		ret = fail(l, ret, "uprobe counters: reading the per-CPU counters failed: %s", strerror(-ret));
		goto cleanup;
	}
	for (size_t i = 0; i < n && i < (size_t)l->ncpus; i++)
		out[i] = all[i];
	ret = l->ncpus;
cleanup:
	free(all);
	return ret;
}

int uprobe_losses(struct uprobe_loader *l, uint64_t *lost)
{
	struct uprobe_counters *c;
	int ret, n;

	*lost = 0;
	if (!l)
		return -EINVAL;
	c = calloc((size_t)l->ncpus, sizeof(*c));
	if (!c)
		return fail(l, -ENOMEM, "uprobe losses: out of memory");
	n = uprobe_counters_per_cpu(l, c, (size_t)l->ncpus);
	ret = n < 0 ? n : 0;
	for (int i = 0; i < n; i++)
		*lost += c[i].lost;
	free(c);
	return ret;
}

int uprobe_symbol_offset(const char *path, const char *symbol, uint64_t *file_offset, char *err,
			 size_t errlen)
{
	static const char *const tabs[] = {".symtab", ".dynsym"};
	GElf_Addr value = 0;
	bool found = false;
	size_t shstrndx, nph = 0;
	int fd = -1, ret;
	Elf *e;

	*file_offset = 0;
	bpfc_format(err, errlen, "%s", "");
	if (!path || !symbol) {
		bpfc_format(err, errlen, "uprobe_symbol_offset: no path or no symbol");
		return -EINVAL;
	}
	e = elf_open(path, &fd, &ret, err, errlen);
	if (!e)
		return ret;
	if (elf_getshdrstrndx(e, &shstrndx) || elf_getphdrnum(e, &nph)) {
		bpfc_format(err, errlen, "%s: broken ELF headers: %s", path, elf_errmsg(-1));
		ret = -ENOEXEC;
		goto cleanup;
	}
	for (size_t t = 0; t < 2 && !found; t++) {
		Elf_Scn *scn = NULL;

		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			if (!name || strcmp(name, tabs[t]) != 0 || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *sname;

				if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF)
					continue;
				sname = elf_strptr(e, sh.sh_link, sym.st_name);
				if (sname && strcmp(sname, symbol) == 0) {
					value = sym.st_value;
					found = true;
					break;
				}
			}
		}
	}
	if (!found) {
		bpfc_format(err, errlen, "%s: no function symbol %s", path, symbol);
		ret = -ENOENT;
		goto cleanup;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (value >= ph.p_vaddr && value < ph.p_vaddr + ph.p_filesz) {
			*file_offset = value - ph.p_vaddr + ph.p_offset;
			ret = 0;
			goto cleanup;
		}
	}
	bpfc_format(err, errlen, "%s: function %s at 0x%llx is in no loadable segment", path, symbol,
	       (unsigned long long)value);
	ret = -ENOEXEC;
cleanup:
	elf_end(e);
	close(fd);
	return ret;
}
