/* Internal: what every NDJSON dialect implements, and helpers they share. */
#ifndef SPECTAP_DIALECT_INTERNAL_H
#define SPECTAP_DIALECT_INTERNAL_H

#include "spectap/dialect.h"

struct spt_import;
struct spt_export;

struct dialect_ops {
	const char *name;
	unsigned json_flags;  /* SPT_JSON_TAGGED for the lossless dialect */
	bool derive;          /* derive seq, message ids and Lamport clocks on import */
	/* Fills *ev (1), *loss (2) or the header (0) from one parsed line; -EINVAL with err->msg. */
	int (*import)(struct spt_import *im, spt_val *obj, struct spt_event *ev, struct spt_msg *msg,
		      struct spt_loss *loss, struct spt_json_error *err);
	int (*export_begin)(struct spt_export *ex, struct spt_buf *out);
	int (*export_event)(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *out);
	int (*export_loss)(struct spt_export *ex, const struct spt_loss *l, struct spt_buf *out);
	int (*export_end)(struct spt_export *ex, struct spt_buf *out);
};

extern const struct dialect_ops dialect_json, dialect_etcd, dialect_sysmobench;

/* Message fields in the order etcd-io/raft writes them (NULL-terminated). */
extern const char *const etcd_msg_order[];

/* ---- sysmobench: the envelope, and the systems' own dialects of it ---- */

/* Opens an event line: {"tag":"trace","ts":"<ns>","event": (the event object follows). */
void smb_line_start(struct spt_buf *b, uint64_t ts_ns);

/*
 * A system whose traces SysMoBench reads in a dialect of its own (ZooKeeper's Remix lines,
 * RedisRaft's emitter): the system's shim (systems/NAME/sysmobench_*.c) describes it and adds it
 * with spt_sysmobench_add_system; the envelope (dialect_sysmobench.c) knows none by name.
 */
struct smb_system {
	const char *system;  /* the header's system name */
	/* An event of this system, for a trace whose header names none (an imported one). */
	bool (*event_is)(const struct spt_event *ev);
	/* The state of one export (step counters, message pairing, held lines): 0 or -ENOMEM. */
	int (*state_new)(void **out);
	void (*state_free)(void *st);
	/* A node of the config line, as the dialect names it (a JSON string). */
	int (*put_node)(struct spt_export *ex, struct spt_buf *b, const char *name);
	/* Appends ev's line, or counts ev as dropped when the dialect has no event for it. */
	int (*export_event)(struct spt_export *ex, void *st, const struct spt_event *ev, struct spt_buf *b);
	/* Appends what is still held at the end; may be NULL. */
	int (*export_end)(void *st, struct spt_buf *b);
};
/* Adds s (static storage) to the systems the sysmobench dialect knows; at most 16. */
void spt_sysmobench_add_system(const struct smb_system *s);

/* The arena of the line being imported (values built by a dialect live there). */
struct spt_arena *import_arena(struct spt_import *im);
/* Header fields a dialect learnt (config line, header line); strings are copied. */
int import_set_nodes(struct spt_import *im, spt_val *seq_of_strings);
int import_set_header(struct spt_import *im, const struct spt_header *h);
/* A SysMoBench/Specula config line ({"tag":"config","config":{...}}): its "servers", when it
 * lists them, are the nodes; the whole line is kept (header extra "config_line") for export. */
int import_config_line(struct spt_import *im, spt_val *line);
/* "2026-01-19T04:10:57.129098176Z" (RFC 3339, any offset) -> ns since the epoch. */
int rfc3339_to_ns(const char *s, uint64_t *ns);
/* ns since the epoch as RFC 3339 the way Specula's corpora write it (Go's RFC3339Nano: UTC,
 * "Z", the fraction without trailing zeros). */
void ns_to_rfc3339(uint64_t ns, char *buf, size_t size);
/* That text as a JSON string. */
void put_rfc3339(struct spt_buf *b, uint64_t ns);
/* An RFC 3339 time's text, or NULL when it is ns_to_rfc3339's (no need to keep it). */
spt_val *rfc3339_text_to_keep(spt_val *text, uint64_t ns);
/* Whether a header may come now: before any other header and any event (false: it may not). */
bool import_header_allowed(struct spt_import *im);

const struct spt_header *export_header(const struct spt_export *ex);
/* A dialect's own state for one export (what it remembers between lines), freed with it. */
void *export_state(const struct spt_export *ex);
void export_set_state(struct spt_export *ex, void *state, void (*free_fn)(void *));
/* Counts one item the target dialect cannot hold. */
void export_drop(struct spt_export *ex, const char *what, uint64_t n);
struct spt_arena *export_arena(struct spt_export *ex);
/* Counts what an NDJSON dialect without spectap's own fields dropped from ev and its values. */
void export_drop_common(struct spt_export *ex, const struct spt_event *ev, const struct spt_json_loss *loss);
/* An event that ends a step whose post-state was never read (no state, meta.unfinished:
 * docs/format.md): true, and counted, for dialects whose every event carries a state, which
 * leave it out (its message stays unreceived there). */
bool export_skip_unfinished(struct spt_export *ex, const struct spt_event *ev);

/* ---- helpers on records ---- */

/* A string field as a C string, or NULL when absent or not a string. */
const char *rec_str(spt_val *rec, const char *name);
/* The fields of rec not named in drop (NULL-terminated), in their written order. */
spt_val *rec_without(struct spt_arena *a, spt_val *rec, const char *const *drop);
/* rec with fields added (name -> value) after its own; NULL on a duplicate name. */
spt_val *rec_plus(struct spt_arena *a, spt_val *rec, const char *const *names, spt_val *const *vals,
		  size_t n);
/* Writes rec as a JSON object: names in `first` (NULL-terminated) first, in that order, then the
 * others in their written order. Field values are written with flags. */
void json_write_rec_ordered(struct spt_buf *b, spt_val *rec, const char *const *first,
			    unsigned flags, struct spt_json_loss *loss);

int dialect_fail(struct spt_json_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
