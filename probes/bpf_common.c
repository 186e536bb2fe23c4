/* Shared loader plumbing (bpf_common.h). */
#include "bpf_common.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool loud;

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int debug = -1;

	if (debug < 0) {
		const char *e = getenv("SPECTAP_LIBBPF_DEBUG");
		debug = e && *e && strcmp(e, "0") != 0;
	}
	if (debug || (loud && level == LIBBPF_WARN))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void bpfc_init_print(void) { libbpf_set_print(print); }

void bpfc_vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (buf && len)
		vsnprintf(buf, len, fmt, ap);
}

void bpfc_format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bpfc_vformat(buf, len, fmt, ap);
	va_end(ap);
}

const char *bpfc_perm_hint(int err)
{
	/* Root gets -EACCES from the verifier, not for lack of rights. */
	if (err == -EACCES && geteuid() == 0)
		return " (as root: the verifier rejected the program; its log is above)";
	return err == -EPERM || err == -EACCES ? " (BPF not permitted: run as root, or with CAP_BPF and CAP_PERFMON)"
					       : "";
}

int bpfc_check_ringbuf(size_t bytes, const char *who, char *err, size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);

	if (page > 0 && bytes >= (size_t)page && bytes % (size_t)page == 0 && !(bytes & (bytes - 1)) &&
	    bytes <= (1u << 30))
		return 0;
	bpfc_format(err, errlen, "%s: ring buffer size %zu is not a power of two multiple of the page size (%ld), at most 1 GiB",
		    who, bytes, page);
	return -EINVAL;
}

int bpfc_links_reserve(struct bpfc_links *l)
{
	if (l->n < l->cap)
		return 0;
	size_t cap = l->cap ? 2 * l->cap : 8;
	struct bpf_link **v = realloc(l->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	l->cap = cap;
	return 0;
}

void bpfc_links_add(struct bpfc_links *l, struct bpf_link *link) { l->v[l->n++] = link; }

void bpfc_links_free(struct bpfc_links *l)
{
	for (size_t i = 0; i < l->n; i++)
		bpf_link__destroy(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int bpfc_percpu_read(const struct bpf_map *map, void *out, size_t value_size, int ncpus)
{
	uint32_t zero = 0;
	return bpf_map__lookup_elem(map, &zero, sizeof(zero), out, (size_t)ncpus * value_size, 0);
}

int bpfc_load(struct bpf_object_skeleton *skel, struct bpf_map *events, size_t rb_bytes,
	      int (*fn)(void *ctx, void *data, size_t size), void *ctx, struct ring_buffer **rb, int *ncpus,
	      const char *who, char *err, size_t errlen)
{
	int ret = bpf_map__set_max_entries(events, (uint32_t)rb_bytes);
	if (ret) {
		bpfc_format(err, errlen, "%s: setting the ring buffer size to %zu failed: %s", who, rb_bytes, strerror(-ret));
		return ret;
	}
	loud = true;
	ret = bpf_object__load_skeleton(skel);
	loud = false;
	if (ret) {
		ret = ret > 0 ? -ret : ret;
		bpfc_format(err, errlen, "%s: loading the BPF program and maps failed: %s%s", who, strerror(-ret),
			    bpfc_perm_hint(ret));
		return ret;
	}
	*rb = ring_buffer__new(bpf_map__fd(events), fn, ctx, NULL);
	if (!*rb) {
		ret = -errno;
		bpfc_format(err, errlen, "%s: opening the ring buffer failed: %s", who, strerror(-ret));
		return ret;
	}
	*ncpus = libbpf_num_possible_cpus();
	if (*ncpus <= 0) {
		ret = *ncpus ? *ncpus : -EINVAL;
		bpfc_format(err, errlen, "%s: counting the possible CPUs failed: %s", who, strerror(-ret));
		return ret;
	}
	return 0;
}
