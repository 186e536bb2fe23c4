/*
 * The emit API: a traced program (e.g. a JVMTI agent inside ZooKeeper) hands spectap one event
 * record at a time. spt_emit sends the record through two transports at once:
 *
 *   - the USDT probe spectap:event (arguments: const char *record, size_t len), with a
 *     semaphore: a collector attaches with libbpf (probes/usdt_loader.h); when nothing is
 *     attached the probe site is skipped and costs nothing;
 *   - the LTTng-UST tracepoint spectap:event, one field `record`, a text sequence of len bytes
 *     (collector/lttng_reader.h reads it back).
 *
 * A record is one JSON object in the event shape of spectap's `json` dialect (docs/dialects.md)
 * without the fields the collector assigns (source, seq, ts_ns, lamport, tid, msg.id):
 *
 *   {"node":"1","kind":"zk.recvset.put","state":{...},"args":{...},
 *    "msg":{"dir":"send","from":"1","to":"2","type":"Vote","fields":{...}}}
 *
 * meta.seq, when present, numbers the emitting process's records (1, 2, ..., every record it
 * built, emitted or not): the collector writes a gap in it as a loss of that node.
 *
 * node and kind are required strings; state, args, msg and meta are optional; values use the
 * dialect's tags for what JSON cannot say ({"$set":[...]}, {"$model":"m"}, ...). spt_emit does
 * not parse the record (the collector does, with lib/json.c, and reports what it rejects); the
 * spt_jw_* writer below builds one safely in a caller's buffer.
 *
 * Linking: libspectap_emit.a (position-independent: it can go into a shared object such as a
 * JVMTI agent) with -llttng-ust -llttng-ust-common -ldl. Loading liblttng-ust starts its two
 * listener threads; when an LTTng session daemon runs, the process registers with it at start
 * (LTTNG_UST_REGISTER_TIMEOUT, default 3 s at most). For LTTng channels that block instead of
 * discarding (collector/lttng_reader.h does that), start the program with
 * LTTNG_UST_ALLOW_BLOCKING=1; without it LTTng discards when its buffers are full, and the
 * reader reports the discarded count.
 *
 * Thread-safe; async-signal-safe as far as the LTTng tracepoint is.
 */
#ifndef SPECTAP_EMIT_H
#define SPECTAP_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPT_EMIT_MAX 8192 /* bytes of one record at most */

/* Which transports listen (spt_emit_listeners). */
enum spt_emit_listener {
	SPT_EMIT_USDT = 1,  /* a uprobe is attached to spectap:event (its semaphore is set) */
	SPT_EMIT_LTTNG = 2, /* the LTTng tracepoint spectap:event is enabled in a session */
};

/* True when a USDT probe is attached or the LTTng tracepoint is enabled: build records only
 * then. Two loads, no call into a tracer. */
bool spt_emit_enabled(void);

/* The listening transports now: SPT_EMIT_USDT | SPT_EMIT_LTTNG bits. */
unsigned spt_emit_listeners(void);

/*
 * Emits one record of len bytes through both transports (each only if it listens). Returns 0,
 * also when nobody listens, or a negative errno, counted in spt_emit_stats and never truncated
 * or sent in part:
 *   -EMSGSIZE  len > SPT_EMIT_MAX (checked on every call, listened to or not);
 *   -EINVAL    record is NULL or len is 0; or, when a transport listens, the record holds a
 *              NUL byte (LTTng's text field could not carry it).
 */
int spt_emit(const char *record, size_t len);

/* Process-wide counts since start (relaxed atomics; a snapshot). */
struct spt_emit_stats {
	uint64_t too_large; /* -EMSGSIZE returns */
	uint64_t invalid;   /* -EINVAL returns */
};
void spt_emit_stats(struct spt_emit_stats *out);

/*
 * A JSON writer into a fixed buffer, for building records. Every string is escaped; keys and
 * values must be valid UTF-8 (JNI's "modified UTF-8" is not: pass Java strings as UTF-16 with
 * spt_jw_str16). The first error sticks: later calls do nothing, and spt_jw_finish returns it.
 * Nothing is ever cut short silently: a record that does not fit is -ENOBUFS as a whole.
 *
 *   char buf[SPT_EMIT_MAX];
 *   struct spt_jw w;
 *   spt_jw_init(&w, buf, sizeof(buf));
 *   spt_jw_begin(&w, NULL);                       // {
 *   spt_jw_str(&w, "node", "1");                  //  "node":"1"
 *   spt_jw_str(&w, "kind", "zk.recvset.put");
 *   spt_jw_begin(&w, "state");                    //  "state":{
 *   spt_jw_int(&w, "epoch", 3);
 *   spt_jw_end(&w);                               //  }
 *   spt_jw_end(&w);                               // }
 *   size_t len;
 *   if (spt_jw_finish(&w, &len) == 0) spt_emit(buf, len);
 *
 * key: the member name inside an object; NULL inside an array and for the outermost value.
 */
#define SPT_JW_MAX_DEPTH 32

struct spt_jw {
	char *buf;
	size_t cap, len;
	int err;        /* 0, or the first error */
	unsigned depth; /* open objects and arrays */
	uint32_t array; /* bit d: level d is an array (else an object) */
	uint32_t any;   /* bit d: level d has a member already */
	bool done;      /* the outermost value is complete */
};

void spt_jw_init(struct spt_jw *w, char *buf, size_t cap);
void spt_jw_begin(struct spt_jw *w, const char *key);       /* { */
void spt_jw_end(struct spt_jw *w);                          /* } */
void spt_jw_begin_array(struct spt_jw *w, const char *key); /* [ */
void spt_jw_end_array(struct spt_jw *w);                    /* ] */
void spt_jw_str(struct spt_jw *w, const char *key, const char *s);
void spt_jw_strn(struct spt_jw *w, const char *key, const char *s, size_t n);
/* A string given as n UTF-16 code units (a Java string); a lone surrogate is -EILSEQ. */
void spt_jw_str16(struct spt_jw *w, const char *key, const uint16_t *s, size_t n);
void spt_jw_int(struct spt_jw *w, const char *key, int64_t v);
void spt_jw_bool(struct spt_jw *w, const char *key, bool v);
void spt_jw_null(struct spt_jw *w, const char *key); /* the model value null */

/*
 * Ends the record: NUL-terminates it (the NUL is not counted in *len) and returns 0, or the
 * first error: -ENOBUFS (does not fit in cap bytes with its NUL), -EILSEQ (a string or key is
 * not valid UTF-8 / UTF-16), -EINVAL (misuse: a key inside an array or none inside an object,
 * unbalanced begin/end, a second outermost value, nothing written, NULL string), -E2BIG (deeper
 * than SPT_JW_MAX_DEPTH). On error *len is 0 and buf holds "" (when cap > 0).
 */
int spt_jw_finish(struct spt_jw *w, size_t *len);

#endif
