/* The collector's internals, shared by collect.c (records -> events) and collect_bg.c (the
 * drain and shaping threads, spool mode). Not an API. */
#ifndef SPECTAP_COLLECTOR_COLLECT_PRIV_H
#define SPECTAP_COLLECTOR_COLLECT_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "collect.h"
#include "spectap/arena.h"
#include "spectap/msgpair.h"
#include "spool.h"

#define DEFAULT_WINDOW_NS (50ull * 1000 * 1000)
#define DEFAULT_MAX_PENDING 65536
#define MAX_CPUS 4096
#define DEFAULT_SPOOL_BACKLOG (256ull << 20)

struct probe {
	uint32_t id;
	char *kind;
	unsigned nfields;
	int node_read; /* -1: none */
	struct collect_field f[UPROBE_MAX_READS]; /* names owned */
};

struct node {
	char *name;
	uint64_t seq, lamport, last_ts;
	bool any;
};

struct pidmap {
	int pid;
	size_t node; /* index into nodes */
};

struct gap {
	uint64_t first, last; /* missing sequence numbers, inclusive */
	uint64_t born;        /* tick at whose end it was first seen */
};

struct cpu {
	bool seen;
	uint64_t hi;       /* 1 + the highest sequence number seen */
	uint64_t declared; /* sequence numbers declared lost */
	struct gap *gaps;
	size_t ngaps, capgaps;
};

struct held {
	uint64_t ktime, seq, order;
	uint32_t cpu;
	size_t size;
	union {
		struct uprobe_event ev;
		struct uprobe_event_full full;
	} u;
};

struct collect {
	struct spt_writer *w;
	struct uprobe_loader *l;
	struct probe *probes;
	size_t nprobes;
	struct node *nodes;
	size_t nnodes, capnodes;
	struct pidmap *pids;
	size_t npids, cappids;
	struct cpu *cpus;
	size_t ncpus;
	struct held **heap;
	size_t nheap, capheap;
	uint64_t window_ns, max_ktime, arrivals, tick_no;
	size_t max_pending;
	struct spt_arena arena;
	struct collect_stats st;
	struct uprobe_counters *ctrs;
	collect_shape_fn shape;
	collect_shape_fn shape_end;
	void *shape_ctx;
	bool named_pids_only;
	struct spt_msgpair *pairs;
	struct spt_msg msg; /* the event being written's message */
	pthread_mutex_t lock; /* held by whichever thread turns records into events */
	pthread_t thread;     /* the drain thread */
	bool bg_running;
	_Atomic bool bg_stop;
	unsigned bg_period_ms;
	_Atomic int bg_err;       /* read by collect_bg_failed while the thread runs */
	bool finished;
	char err[512];
	unsigned fails;  /* collect_fail calls: whether a call set err itself (err is never cleared, so that
			  * a message another thread set stays to be reported) */
	/* Spool mode (collect_opts.spool): the drain only copies records into the spool; the
	 * shaping thread (or collect_drain/collect_finish without it) turns them into events. */
	struct spool *spool;
	uint64_t spool_backlog; /* bytes left unshaped before the shaping thread starts on them */
	unsigned flush_ms;      /* collect_opts.flush_ms */
	pthread_mutex_t spool_lock; /* the spool's writer side: the drain and collect_set_node */
	_Atomic uint64_t spooled;
	pthread_t shaper;
	bool shaper_running;
	_Atomic bool shaper_stop;
	_Atomic int shaper_err;
	char drain_err[512]; /* the drain's failure in spool mode (it does not own err) */
	/* What collect_bg_stats returns: published by the thread that owns st. */
	pthread_mutex_t snap_lock;
	struct collect_stats snap;
};

int collect_fail(struct collect *c, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* pid -> node, with c->lock held (or no other thread running). */
int collect_set_node_locked(struct collect *c, int pid, const char *node);
/* The live drain: ring buffer -> events (collect_drain without a spool). */
int collect_drain_live(struct collect *c);
/* Copies st into what collect_bg_stats returns. */
void collect_publish_stats(struct collect *c);
/* Spool mode: frames published in the spool -> events, at most max (0: all); the frames read
 * or -errno (message in err). */
int collect_shape_spool(struct collect *c, size_t max);

#endif
