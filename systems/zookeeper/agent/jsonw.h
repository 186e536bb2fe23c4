/*
 * A tiny JSON writer for the agent's records: a growable buffer (optionally starting in a
 * caller's array, so small records need no allocation), commas placed automatically, strings
 * escaped, 64-bit integers exact. Out of memory is sticky (jw.oom) and checked once at the end.
 *
 * Pure C, no JVM: unit-tested on its own (tests/unit/test_zk_agent_parts.c).
 */
#ifndef SPECTAP_ZK_JSONW_H
#define SPECTAP_ZK_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jw {
	char *p;
	size_t n, cap;
	bool heap;  /* p was malloc'ed by jw */
	bool oom;   /* an append failed: the text is incomplete */
};

/* Starts empty, in buf (size bytes; may be NULL/0: heap from the start). */
void jw_init(struct jw *w, char *buf, size_t size);
void jw_free(struct jw *w);
/* Forgets the text, keeps the memory. */
void jw_reset(struct jw *w);

void jw_raw(struct jw *w, const char *s, size_t n);
void jw_rawz(struct jw *w, const char *s);
/* A JSON string with escapes (control characters as \u00XX; bytes >= 0x80 copied). */
void jw_str(struct jw *w, const char *s, size_t n);
void jw_strz(struct jw *w, const char *s);

/* Structure: a comma is put before a key or value when the previous character is not one of
 * "{[:" (so callers never track "first"). */
void jw_obj(struct jw *w);
void jw_end_obj(struct jw *w);
void jw_key(struct jw *w, const char *k);
void jw_i64(struct jw *w, int64_t v);
void jw_u64(struct jw *w, uint64_t v);
void jw_null(struct jw *w);
void jw_bool(struct jw *w, bool b);
/* Value shorthands: "k": v. */
void jw_kv_i64(struct jw *w, const char *k, int64_t v);
void jw_kv_str(struct jw *w, const char *k, const char *v);
/* "k": text, where text is already JSON (an object from another writer). */
void jw_kv_raw(struct jw *w, const char *k, const char *json, size_t n);

#endif
