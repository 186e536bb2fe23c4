/* Internal: values, events and headers <-> protobuf-c messages, with per-chunk string tables. */
#ifndef SPECTAP_TRACE_CODEC_H
#define SPECTAP_TRACE_CODEC_H

#include <protobuf-c/protobuf-c.h>

#include "spectap/buf.h"
#include "spectap/event.h"
#include "trace.pb-c.h"

/* protobuf-c allocations go to an arena; free is a no-op. */
void codec_arena_allocator(ProtobufCAllocator *pa, struct spt_arena *a);

/* Appends one length-delimited entry to b. */
void codec_put_entry(struct spt_buf *b, const Spectap__Trace__Entry *e);
/* Reads the next length-delimited entry at *pos; 1 read, 0 at the end, -EBADMSG damaged. */
int codec_get_entry(const uint8_t *p, size_t len, size_t *pos, ProtobufCAllocator *pa,
		    Spectap__Trace__Entry **out);

/* ---- encoding side: interning strings emits StringDef entries into the chunk buffer ---- */

struct intern_slot {
	uint64_t hash;
	const char *s;
	uint32_t len, id_plus1;
};

/* What the previous event of a node (and source) in the chunk had: events store deltas. */
struct node_prev {
	uint32_t node, source; /* string ids */
	uint64_t seq, lamport;
	spt_val *state;
	spt_val *meta; /* the previous event's meta (the same for every event of a corpus, often) */
};

struct encoder {
	struct spt_arena *a;    /* protobuf structures of the entry being encoded */
	struct spt_arena *strs; /* the table's strings: live for the whole chunk */
	struct spt_buf *out;   /* StringDefs go here */
	struct intern_slot *slots;
	uint32_t cap, count;
	bool oom;
	struct node_prev *prev;
	size_t n_prev, cap_prev;
};

void enc_init(struct encoder *e, struct spt_arena *a, struct spt_arena *strs, struct spt_buf *out);
void enc_fini(struct encoder *e);
/* Forgets the table: the next chunk starts a new one. */
void enc_reset(struct encoder *e);
uint32_t enc_string(struct encoder *e, const char *s, size_t len);
Spectap__Trace__Value *enc_value(struct encoder *e, spt_val *v);
/* NULL for NULL or an empty record. */
Spectap__Trace__Fields *enc_fields(struct encoder *e, spt_val *rec);
/* ts_base: the previous event's ts in the chunk. */
Spectap__Trace__Event *enc_event(struct encoder *e, const struct spt_event *ev, uint64_t ts_base);
Spectap__Trace__Loss *enc_loss(struct encoder *e, const struct spt_loss *l);
Spectap__Trace__Header *enc_header(struct encoder *e, const struct spt_header *h);

/* ---- decoding side ---- */

struct decoder {
	struct spt_arena *a;   /* decoded values live here */
	spt_val **strs;        /* string id -> value */
	uint32_t n, cap;
	struct node_prev *prev;
	size_t n_prev, cap_prev;
};

void dec_init(struct decoder *d, struct spt_arena *a);
void dec_fini(struct decoder *d);
void dec_reset(struct decoder *d);
/* 0, -EBADMSG (id out of order), -ENOMEM. */
int dec_add_string(struct decoder *d, const Spectap__Trace__StringDef *s);
int dec_value(struct decoder *d, const Spectap__Trace__Value *pv, int depth, spt_val **out);
/* The empty record is returned as NULL. */
int dec_fields(struct decoder *d, const Spectap__Trace__Fields *f, int depth, spt_val **out);
int dec_event(struct decoder *d, const Spectap__Trace__Event *pe, uint64_t ts_base,
	      struct spt_event *ev);
int dec_loss(struct decoder *d, const Spectap__Trace__Loss *pl, struct spt_loss *l);
int dec_header(struct decoder *d, const Spectap__Trace__Header *ph, struct spt_header *h);
/* A table string as a C string, or NULL for a bad id. */
const char *dec_cstr(struct decoder *d, uint32_t id);

#endif
