/* Internal to the model checker: the breadth-first search's state, shared by bfs.c (the search),
 * model_trace.c (rebuilding a counterexample) and model.c (the run). */
#ifndef SPECTAP_REPLAY_SEARCH_H
#define SPECTAP_REPLAY_SEARCH_H

#include <pthread.h>
#include <stdatomic.h>

#include "fpset.h"
#include "model_internal.h"
#include "symmetry.h"

/* Arena tags: states of even and odd levels, and what a worker keeps for the whole run. */
#define TAG_LEVEL_EVEN 221
#define TAG_LEVEL_ODD 222
#define TAG_WORKER_LONG 205
/* A counterexample's states: each shares with its predecessor what the step left alone. */
#define TAG_TRACE 223

/* A state found: its fingerprint and its variables' values. */
struct mstate {
	uint64_t fp;
	spt_val *v[];
};

struct svec {
	struct mstate **s;
	size_t n, cap;
};

struct search;

struct worker {
	struct search *S;
	unsigned id;
	pthread_t thread;
	bool started;
	struct interp in;
	spt_val **own_cur;           /* in.cur as interp_init made it (given back at the end) */
	struct spt_arena long_arena; /* definitions evaluated once */
	struct spt_arena scratch;    /* one state's successors */
	struct spt_arena lvl[2];     /* the states of even and odd levels this worker found */
	struct svec out;             /* the states of the next level it found */
	uint64_t generated;          /* successors produced (not counting initial states) */
	uint64_t expanded, out_sum, succ;
	uint32_t out_min, out_max;
	struct mstate *cur;          /* the state being expanded */
	uint64_t cur_level;
	spt_val **pv;                /* n_vars: a permuted state */
	size_t level_index;          /* of the state being expanded (SIZE_MAX: the initial states) */
	struct spt_arena succ_arena; /* this expansion's successors, when properties look at them */
	struct svec succs;
	struct tlc_run run;
	/* A trace spec's cursor: the furthest value among the states this worker kept, how many
	 * had it, and the fingerprint of one of them. */
	int64_t cursor_max;
	uint64_t cursor_n, cursor_fp;
	struct worker *tracer;       /* TLCExt's Trace rebuilds paths with this one (made when first
				      * needed: this worker's evaluation is under way meanwhile) */
};

struct search {
	struct mc_model *m;
	const struct mc_opts *o;
	struct fpset *fps;
	bool has_sym;
	struct sym_group sym;
	struct worker *w;
	unsigned nw;
	struct svec level;           /* the states being expanded */
	uint64_t level_no;           /* their level: 1 for the initial states */
	_Atomic size_t next;         /* the next of them to take */
	_Atomic int stop;
	_Atomic int exit_req;         /* TLCSet("exit", TRUE) was evaluated: stop, as TLC's queue.finishAll() */
	_Atomic uint64_t distinct;
	_Atomic uint64_t max_level;  /* of the states in the set */
	pthread_barrier_t start, end;
	pthread_mutex_t ready_mu;    /* workers wait for the barriers to be made */
	pthread_cond_t ready_cv;
	bool ready;
	unsigned threads;            /* workers running (some may not have started) */
	bool done;
	double t0, last_progress;
	uint64_t init_generated, init_distinct;
	/* The first error found. */
	pthread_mutex_t err_mu;
	bool failed;
	enum mc_verdict verdict;
	char what[256], msg[1536];
	uint64_t err_parent;         /* the state whose path the trace follows (0: none) */
	spt_val **err_state;         /* and the state after it, not in the set (or NULL) */
	struct spt_arena err_arena;
};

int search_init(struct search *S, struct mc_model *m, const struct mc_opts *o, struct check_error *err);
void search_fini(struct search *S);
/* One worker's interpreter and arenas (worker number i), and their release. */
int search_worker_init(struct search *S, struct worker *w, unsigned i);
void search_worker_fini(struct worker *w);
/* Runs the whole search (initial states, then level by level) until done or an error. */
int search_run(struct search *S, struct check_error *err);
/* The fingerprint of a state, as the search keys it (VIEW and SYMMETRY applied). */
int search_fingerprint(struct worker *w, spt_val **vals, uint64_t *fp);
/* Evaluates f with cur as the current state and nxt (or nothing) as the next one. */
int search_eval_on(struct worker *w, const struct mc_formula *f, spt_val **cur, spt_val **nxt, bool *b);
double search_now(void);
/* A trace state's value against a reached one: equal, or a JSON array given for a set. */
bool search_trace_value_eq(spt_val *expected, spt_val *reached);
/* Whether a state reached at level (1: initial) agrees with the trace's state there. */
bool search_on_trace(const struct mc_model *m, uint64_t level, spt_val *const *vals);

#endif
