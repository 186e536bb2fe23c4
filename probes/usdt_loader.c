/* The USDT collector: the skeleton of probes/bpf/usdt.bpf.c, attachment to spectap:event with
 * libbpf's USDT support, timer-driven draining and loss counters. See usdt_loader.h. */
#include "usdt_loader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "spectap/emit.h"
#include "bpf_common.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "usdt.skel.h"
#pragma GCC diagnostic pop

#define DEFAULT_RINGBUF_BYTES (8u << 20)

/* The layout is shared with the BPF program. */
_Static_assert(sizeof(struct usdt_record) == 40, "struct usdt_record layout");
_Static_assert(sizeof(struct usdt_record) + USDT_CLASS0 == 256, "size classes");
_Static_assert(sizeof(struct usdt_record) + USDT_CLASS1 == 512, "size classes");
_Static_assert(sizeof(struct usdt_record) + USDT_CLASS2 == 1024, "size classes");
_Static_assert(sizeof(struct usdt_record) + USDT_CLASS3 == 2048, "size classes");
_Static_assert(sizeof(struct usdt_record) + USDT_CLASS4 == 4096, "size classes");
_Static_assert(USDT_MAX_DATA == SPT_EMIT_MAX, "the collector takes every record spt_emit sends");

struct usdt_loader {
	struct usdt_bpf *skel;
	struct ring_buffer *rb;
	struct bpfc_links links;
	usdt_record_fn fn; /* set during usdt_drain */
	void *fn_ctx;
	int ncpus;
	char err[512];
};

static int fail(struct usdt_loader *l, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct usdt_loader *l, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bpfc_vformat(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return err;
}

static int drain_sample(void *ctx, void *data, size_t size)
{
	struct usdt_loader *l = ctx;
	const struct usdt_record *r = data;
	size_t avail, n;

	if (size < sizeof(*r))
		return fail(l, -EBADMSG, "usdt drain: malformed record of %zu bytes (header is %zu)", size,
			    sizeof(*r));
	avail = size - sizeof(*r);
	n = r->flags & (USDT_REC_TOO_LARGE | USDT_REC_BAD_ARGS) ? 0 : r->len;
	if (n > avail)
		return fail(l, -EBADMSG, "usdt drain: record of pid %u seq %llu says %zu bytes but holds %zu",
			    r->pid, (unsigned long long)r->seq, n, avail);
	return l->fn ? l->fn(l->fn_ctx, r, (const uint8_t *)(r + 1), n) : 0;
}

int usdt_loader_open(struct usdt_loader **out, const struct usdt_loader_opts *opts, char *err,
		     size_t errlen)
{
	struct usdt_loader *l = NULL;
	size_t rb_bytes = opts && opts->ringbuf_bytes ? opts->ringbuf_bytes : DEFAULT_RINGBUF_BYTES;
	int ret;

	*out = NULL;
	bpfc_format(err, errlen, "%s", "");
	bpfc_init_print();
	if ((ret = bpfc_check_ringbuf(rb_bytes, "usdt loader", err, errlen)))
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l) {
		bpfc_format(err, errlen, "usdt loader: out of memory");
		return -ENOMEM;
	}
	l->skel = usdt_bpf__open();
	if (!l->skel) {
		ret = -errno;
		bpfc_format(err, errlen, "usdt loader: opening the BPF object failed: %s", strerror(-ret));
		goto cleanup;
	}
	ret = bpfc_load(l->skel->skeleton, l->skel->maps.events, rb_bytes, drain_sample, l, &l->rb, &l->ncpus,
			"usdt loader", err, errlen);
	if (ret)
		goto cleanup;
	ret = 0;
cleanup:
	if (ret) {
		usdt_loader_close(l);
		return ret;
	}
	*out = l;
	return 0;
}

void usdt_loader_close(struct usdt_loader *l)
{
	if (!l)
		return;
	bpfc_links_free(&l->links);
	ring_buffer__free(l->rb);
	usdt_bpf__destroy(l->skel);
	free(l);
}

const char *usdt_loader_error(const struct usdt_loader *l)
{
	return l ? l->err : "";
}

int usdt_attach(struct usdt_loader *l, const char *path, int pid)
{
	struct bpf_link *link;
	struct stat st;
	int ret;

	if (!l)
		return -EINVAL;
	l->err[0] = 0;
	if (!path)
		return fail(l, -EINVAL, "usdt attach: no path");
	if (stat(path, &st))
		return fail(l, -errno, "usdt attach: %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(l, -EINVAL, "usdt attach: %s is not a regular file", path);
	if (bpfc_links_reserve(&l->links))
		return fail(l, -ENOMEM, "usdt attach: out of memory");
	link = bpf_program__attach_usdt(l->skel->progs.spectap_usdt, pid < 0 ? -1 : pid, path, "spectap",
					"event", NULL);
	ret = link ? 0 : -errno;
	if (!link) {
		if (!ret)
			ret = -EINVAL;
		if (ret == -ENOENT)
			return fail(l, ret,
				    "usdt attach: %s has no USDT probe spectap:event (does it link libspectap_emit.a?)",
				    path);
		return fail(l, ret, "usdt attach: spectap:event in %s (pid %d) failed: %s%s", path, pid,
			    strerror(-ret), bpfc_perm_hint(ret));
	}
	bpfc_links_add(&l->links, link);
	return 0;
}

int usdt_drain(struct usdt_loader *l, usdt_record_fn fn, void *ctx)
{
	int ret;

	if (!l)
		return -EINVAL;
	l->err[0] = 0;
	l->fn = fn;
	l->fn_ctx = ctx;
	ret = ring_buffer__consume(l->rb);
	l->fn = NULL;
	l->fn_ctx = NULL;
	if (ret < 0 && !l->err[0])
		fail(l, ret, "usdt drain: consuming the ring buffer failed: %s", strerror(-ret));
	return ret;
}

int usdt_counters_per_cpu(struct usdt_loader *l, struct usdt_counters *out, size_t n)
{
	struct usdt_counters *all;
	int ret;

	if (!l)
		return -EINVAL;
	all = calloc((size_t)l->ncpus, sizeof(*all));
	if (!all)
		return fail(l, -ENOMEM, "usdt counters: out of memory");
	ret = bpfc_percpu_read(l->skel->maps.counters, all, sizeof(*all), l->ncpus);
	if (ret) {
		ret = fail(l, ret, "usdt counters: reading the per-CPU counters failed: %s", strerror(-ret));
		goto cleanup;
	}
	for (size_t i = 0; i < n && i < (size_t)l->ncpus; i++)
		out[i] = all[i];
	ret = l->ncpus;
cleanup:
	free(all);
	return ret;
}

int usdt_counters_sum(struct usdt_loader *l, struct usdt_counters *sum)
{
	struct usdt_counters *c;
	int n;

	memset(sum, 0, sizeof(*sum));
	if (!l)
		return -EINVAL;
	c = calloc((size_t)l->ncpus, sizeof(*c));
	if (!c)
		return fail(l, -ENOMEM, "usdt counters: out of memory");
	n = usdt_counters_per_cpu(l, c, (size_t)l->ncpus);
	for (int i = 0; i < n; i++) {
		sum->seq += c[i].seq;
		sum->lost += c[i].lost;
		sum->too_large += c[i].too_large;
		sum->faults += c[i].faults;
	}
	free(c);
	return n < 0 ? n : 0;
}

int usdt_losses(struct usdt_loader *l, uint64_t *lost)
{
	struct usdt_counters sum;
	int ret = usdt_counters_sum(l, &sum);

	*lost = sum.lost;
	return ret;
}
