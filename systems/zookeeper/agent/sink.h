/*
 * Where the agent's records go: a small interface, so the agent does not depend on which one.
 *
 *   - the file sink (agent option out=PATH): appends each record as one line of spectap's json
 *     dialect with the fields a collector would assign filled in here,
 *     {"event":{"source":"jvmti","seq":N,"ts_ns":T,"tid":X,<the record's fields>}}\n, with one
 *     write(2) on an O_APPEND descriptor (so `spectap import --from json PATH` reads it as is);
 *   - the emit sink: spt_emit(RECORD, len) of include/spectap/emit.h (USDT and LTTng), the
 *     default when that header exists at build time and its library is linked into the agent.
 *
 * A record is one JSON object in spectap's json event shape without the fields a collector
 * assigns (emit.h): {"node":..,"kind":..,"state":..,"args":..,"msg":..,"meta":..}. Sinks are
 * called with the agent's lock held, one at a time.
 */
#ifndef SPECTAP_ZK_SINK_H
#define SPECTAP_ZK_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the collector would assign; the file sink writes it, the emit sink leaves it to the
 * collector. */
struct zk_rec_hdr {
	uint64_t seq;   /* per agent, from 1, in the order records were written */
	uint64_t ts_ns; /* CLOCK_MONOTONIC */
	uint64_t tid;   /* the Linux thread id of the step */
};

struct zk_sink {
	const char *name;                                  /* "file", "emit" */
	int (*emit)(struct zk_sink *s, const char *rec, size_t len, const struct zk_rec_hdr *h);
	bool (*enabled)(struct zk_sink *s);                /* false: records need not be built */
	void (*close)(struct zk_sink *s);
	int fd;                                            /* file sink */
	char path[4096];
	uint64_t failed;                                   /* records that could not be written */
	int last_errno;
};

/* Opens path for appending (created 0644). 0, or a negative errno with err naming the file. */
int zk_sink_file_open(struct zk_sink *s, const char *path, char *err, size_t errsize);
/* The emit API sink: 0, or -ENOSYS when the agent was built without include/spectap/emit.h or
 * its library is not linked in (err says which). */
int zk_sink_emit_open(struct zk_sink *s, char *err, size_t errsize);
/* True when the emit sink can be opened. */
bool zk_sink_emit_available(void);

#endif
