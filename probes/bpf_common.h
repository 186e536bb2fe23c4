/* What the loaders of spectap's BPF programs (uprobe_loader, usdt_loader) share: libbpf's
 * messages, error text, the ring buffer size rule, attachment lists and per-CPU counters. */
#ifndef SPECTAP_PROBES_BPF_COMMON_H
#define SPECTAP_PROBES_BPF_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_link;
struct bpf_map;
struct bpf_object_skeleton;
struct ring_buffer;

/* libbpf's own messages go to stderr only while bpfc_load loads (a verifier rejection is worth
 * seeing); elsewhere our messages say what failed. SPECTAP_LIBBPF_DEBUG=1 shows all. */
void bpfc_init_print(void);

/* vsnprintf into buf when buf and len are set. */
void bpfc_vformat(char *buf, size_t len, const char *fmt, va_list ap);
void bpfc_format(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* " (BPF not permitted: ...)" for -EPERM/-EACCES, else "" (-EACCES as root: a verifier rejection). */
const char *bpfc_perm_hint(int err);

/* 0 when bytes is a power-of-two multiple of the page size, at most 1 GiB; else -EINVAL with
 * a message naming who (e.g. "uprobe loader"). */
int bpfc_check_ringbuf(size_t bytes, const char *who, char *err, size_t errlen);

/* For an opened skeleton: sizes its ring buffer map events to rb_bytes, loads it (libbpf's
 * warnings shown: a verifier rejection is worth seeing), opens the ring buffer with fn(ctx) per
 * record and counts the possible CPUs. 0, or -errno with a message naming who. */
int bpfc_load(struct bpf_object_skeleton *skel, struct bpf_map *events, size_t rb_bytes,
	      int (*fn)(void *ctx, void *data, size_t size), void *ctx, struct ring_buffer **rb, int *ncpus,
	      const char *who, char *err, size_t errlen);

/* A growing list of attachments, destroyed together. */
struct bpfc_links {
	struct bpf_link **v;
	size_t n, cap;
};
/* Room for one more (-ENOMEM), so that a successful attach can always be kept. */
int bpfc_links_reserve(struct bpfc_links *l);
void bpfc_links_add(struct bpfc_links *l, struct bpf_link *link); /* after bpfc_links_reserve */
void bpfc_links_free(struct bpfc_links *l);

/* Entry 0 of a per-CPU array map, for each of the ncpus possible CPUs, into out (ncpus values
 * of value_size bytes). 0 or -errno. */
int bpfc_percpu_read(const struct bpf_map *map, void *out, size_t value_size, int ncpus);

#endif
