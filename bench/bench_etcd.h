/* bench_etcd: what capturing etcd with the spectap probes costs (issue 6). Three parts:
 *   puts  (bench_etcd_puts.c)  a 3-member cluster under putload, probes off and on, interleaved
 *   hits  (bench_etcd_hits.c)  ns per probe hit by site kind, on bench/go/hitloop
 *   rate  (bench_etcd_hits.c)  events/s the collector writes with no loss, hitloop flat out
 * Every capture is the chain `spectap record etcd` runs (bench_capture.c). */
#ifndef SPECTAP_BENCH_ETCD_H
#define SPECTAP_BENCH_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "probes.h"
#include "uprobe_loader.h"

#define BENCH_RINGBUF (8u << 20) /* what spectap record etcd uses */
#define BENCH_MAX_THREADS 8

struct bench_opts {
	const char *etcd, *putload, *hitloop;
	unsigned rounds, puts, concurrency; /* puts */
	unsigned put_rate;   /* puts/s, paced (both modes); 0: unpaced */
	bool put_rate_half;  /* put_rate = half the warm-up's unpaced throughput */
	unsigned log_terms;                 /* puts: the shaper's (0: record's default, 1000) */
	bool live;                          /* puts: the collector shapes as it drains (no spool) */
	unsigned flush_ms;                  /* puts: as record's --flush-ms (0, the default here: by size) */
	unsigned calls, reps;               /* hits: calls per timed run, runs */
	unsigned rate_ms;                   /* rate: each run */
	unsigned threads[BENCH_MAX_THREADS], nthreads;
	bool puts_part, hits_part, rate_part;
};

/* ---- a capture: loader, probes, collector draining on its thread into a temporary .spt ---- */

/* Attaches the probes: returns the sites attached or a negative errno with err filled. */
typedef int (*capture_attach_fn)(void *ctx, struct uprobe_loader *l, char *err, size_t errlen);

struct capture_cfg {
	capture_attach_fn attach;
	void *ctx;
	const struct collect_table *table;
	bool etcd_shape;       /* etcd_shape_event as the shaper (and named_pids_only) */
	collect_shape_fn shape; /* or another system's shaper (with named_pids_only) */
	void *shape_ctx;
	unsigned log_terms;    /* the shaper's max_log_terms (0: its default) */
	bool defer_drain;      /* no drain thread: the ring fills until capture_stop drains it */
	bool live;             /* shape while draining, not through a spool (collect_opts.spool) */
	unsigned flush_ms;     /* the writer's and collector's flush interval (0: by size only) */
	const char *spool_dir; /* where the spool goes (NULL: /tmp) */
	const char *system;    /* the trace header's */
	const char *const *nodes;
	size_t n_nodes;
};

struct capture_result {
	int sites;
	uint64_t records, events, lost, foreign;
	uint64_t bytes;          /* the .spt written */
	double seconds;          /* collector start to stop */
	double cpu_s;            /* this process's CPU over that time: the collector's */
	double drain_s;          /* capture_stop: stopping the drain (shaping what was spooled), drain, finish, close */
	double drain_cpu_s;      /* the same, its thread's CPU time */
	uint64_t probes_seen[ETCD_NPROBES]; /* etcd: records per probe (etcd_shape_stats) */
};

struct capture;

/* Opens the loader (64 MiB ring), attaches, opens the trace and the collector, starts draining
 * every 10 ms. 0, or a negative errno with err filled (nothing left open). */
int capture_start(struct capture **out, const struct capture_cfg *cfg, char *err, size_t errlen);
/* Names pid's records (etcd: the member pids). */
int capture_name(struct capture *c, int pid, const char *node);
/* Stops draining, drains, finishes, closes and removes the trace, closes the loader (probes
 * detached), frees. 0 with r filled, or a negative errno with err filled. */
int capture_stop(struct capture *c, struct capture_result *r, char *err, size_t errlen);

/* ---- parts ---- */

/* Part 1's medians that part 2 turns into an estimate. */
struct puts_summary {
	bool done;
	double entry_hits_per_s, ret_hits_per_s; /* during the loads with probes on */
	double full_hits_per_s;                  /* of them: probes writing full records */
	double ratio;                            /* median puts/s on / off */
	double collector_cpu;                    /* CPUs the collector used (median) */
};
struct hits_summary {
	bool done;
	double entry_ns, ret_ns; /* ns per hit */
};

int bench_puts(const struct bench_opts *o, struct puts_summary *s);
int bench_hits(const struct bench_opts *o, struct hits_summary *s);
int bench_rate(const struct bench_opts *o);

/* Helpers (bench_capture.c). */
double bench_now_s(void);
double bench_cpu_s(void); /* this process, user + system */
double bench_thread_cpu_s(void); /* the calling thread */
double bench_median(double *v, size_t n); /* sorts v */
double bench_stat_cpu_s(const char *path); /* utime + stime of a /proc stat file (0: gone) */
double bench_proc_cpu_s(int pid);

#endif
