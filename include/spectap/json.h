/*
 * JSON <-> values. Objects become records, arrays sequences, integers 64-bit integers, other
 * numbers keep their text (SPT_HINT_NUMBER), null the model value `null`, as TLC's Json module
 * reads them. The tagged dialect, spectap's own, is lossless: {"$set":[...]},
 * {"$fun":[[k,v],...]}, {"$model":"m"}, {"$bytes":"<hex>"} (a string that is not UTF-8) and
 * {"$rec":{...}} (a record with a "$" key). JSON text is UTF-8: the parser refuses a string
 * that is not, with its offset.
 */
#ifndef SPECTAP_JSON_H
#define SPECTAP_JSON_H

#include "spectap/buf.h"
#include "spectap/value.h"

enum spt_json_flags {
	SPT_JSON_TAGGED = 1,    /* read and write the lossless tagged dialect */
	SPT_JSON_CANONICAL = 2, /* write record fields in canonical order, not as written */
};

struct spt_json_error {
	size_t offset;      /* byte offset in the parsed text */
	unsigned line, col; /* 1-based, within the parsed text */
	char msg[160];
};

/* Parses exactly one JSON value (surrounding white space allowed). 0 or -EINVAL (err filled),
 * -ENOMEM. */
int spt_json_parse(struct spt_arena *a, const char *text, size_t len, unsigned flags,
		   spt_val **out, struct spt_json_error *err);

/* A reader of many texts (the lines of a windows file): the strings that recur across them are
 * built once, in the reader, and the values read share them, so those values stay valid until
 * the reader is freed (besides their own arena). One thread at a time. */
struct spt_json_reader;
/* The gen of the strings a reader keeps (no other arena has it: moves copy them). */
#define SPT_GEN_JSON_READER 230
struct spt_json_reader *spt_json_reader_new(void);
void spt_json_reader_free(struct spt_json_reader *r);
/* spt_json_parse with r's strings: the same values. */
int spt_json_read(struct spt_json_reader *r, struct spt_arena *a, const char *text, size_t len, unsigned flags,
		  spt_val **out, struct spt_json_error *err);

/* What a plain (untagged) write could not represent exactly. */
struct spt_json_loss {
	unsigned long sets;   /* written as arrays */
	unsigned long funs;   /* functions with non-string keys written as [[k,v],...] */
	unsigned long models; /* model values written as strings */
	unsigned long bytes;  /* strings not UTF-8, their other bytes written as \u00XX */
};

void spt_json_write(struct spt_buf *b, spt_val *v, unsigned flags, struct spt_json_loss *loss);

/* Fills err->line/col from err->offset. */
void spt_json_locate(const char *text, size_t len, struct spt_json_error *err);

#endif
