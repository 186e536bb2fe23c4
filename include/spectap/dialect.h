/*
 * NDJSON trace dialects, one JSON object per line:
 *   json        spectap's own, lossless (header line, events, loss records)
 *   etcd-ndjson etcd-io/raft's `with_tla` trace events, bare or in a zap/SysMoBench envelope
 *   sysmobench  the SysMoBench/Specula envelope: optional config line, then "tag":"trace" events
 * Importers derive what a dialect lacks: per-node seq, message ids (a receive is paired with the
 * oldest unpaired send of the same message) and Lamport clocks.
 */
#ifndef SPECTAP_DIALECT_H
#define SPECTAP_DIALECT_H

#include "spectap/buf.h"
#include "spectap/event.h"
#include "spectap/json.h"

enum spt_dialect {
	SPT_DIALECT_JSON,
	SPT_DIALECT_ETCD,
	SPT_DIALECT_SYSMOBENCH,
};

/* 0, or -EINVAL for an unknown name. */
int spt_dialect_from_name(const char *name, enum spt_dialect *out);
const char *spt_dialect_name(enum spt_dialect d);
/* "json, etcd-ndjson, sysmobench" */
const char *spt_dialect_names(void);

struct spt_import;

int spt_import_new(enum spt_dialect d, struct spt_import **out);
void spt_import_free(struct spt_import *im);
/*
 * Reads one line (without its newline). Returns 1 with *ev (valid until the next call),
 * 2 with *loss for a loss record, 0 for a line that holds no event (blank, config, header),
 * -EINVAL with err filled (offset within the line) for bad input, -ENOMEM.
 */
int spt_import_line(struct spt_import *im, const char *line, size_t len,
		    const struct spt_event **ev, const struct spt_loss **loss,
		    struct spt_json_error *err);
/* Derive seq, message ids and Lamport clocks even in the json dialect (whose lines normally
 * carry them): for records of a live source that carry none (the emit API's). A source the line
 * names is kept; seq, lamport and msg.id it gives are replaced. */
void spt_import_set_derive(struct spt_import *im);
/* The header gathered so far: nodes in order of appearance (or from a config line). */
const struct spt_header *spt_import_header(struct spt_import *im);

/* Import statistics, for the user. */
struct spt_import_stats {
	uint64_t events, sends, receives, paired, unpaired_receives;
};
const struct spt_import_stats *spt_import_stats(const struct spt_import *im);

struct spt_export;

int spt_export_new(enum spt_dialect d, const struct spt_header *h, struct spt_export **out);
void spt_export_free(struct spt_export *ex);
/* Lines that open the file (the json dialect's header, sysmobench's config), if any. */
int spt_export_begin(struct spt_export *ex, struct spt_buf *out);
/* Appends the event's line(s), newline included. */
int spt_export_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *out);
int spt_export_loss(struct spt_export *ex, const struct spt_loss *l, struct spt_buf *out);
/* Lines a dialect still holds (one it writes after a later event), after the last event. */
int spt_export_end(struct spt_export *ex, struct spt_buf *out);

/* What the target dialect could not hold, counted per item. */
struct spt_drop {
	const char *what;
	uint64_t count;
};
size_t spt_export_dropped(const struct spt_export *ex, const struct spt_drop **out);

#endif
