/*
 * Safety model checking, as TLC's breadth-first mode does it: the states reachable from Init by
 * Next, every one checked against the cfg's invariants, deadlock, constraints, action
 * constraints, and the safety parts of its properties; counts as TLC counts them (docs/model.md).
 */
#ifndef SPECTAP_REPLAY_MODEL_H
#define SPECTAP_REPLAY_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"

enum mc_verdict {
	MC_OK = 0,          /* the whole state space, no error */
	MC_INVARIANT,       /* an invariant (or a property's []P) is false in a reachable state */
	MC_PROPERTY,        /* an action property [][A]_v, or a property's initial condition, is violated */
	MC_TEMPORAL,        /* a property [](A => []B) is violated (checked on the fly, as TLC) */
	MC_DEADLOCK,        /* a reachable state has no successor */
	MC_ASSUMPTION,      /* an ASSUME is false */
	MC_EVAL_ERROR,      /* evaluating the spec failed in some state (TLC: an error, with the trace) */
	MC_POSTCONDITION,   /* a POSTCONDITION is false after the search */
	MC_LIVENESS,        /* a liveness property is violated: a fair behaviour breaks it */
};

/* Where a search is, for a progress line. */
struct mc_progress {
	uint64_t level, generated, distinct, queue;
	int64_t line;           /* a trace spec's furthest log line so far (-1: not a trace spec) */
	uint64_t frontier;      /* distinct states at that line */
};

struct mc_opts {
	const char *spec_path, *cfg_path;
	unsigned workers;       /* threads exploring (>= 1) */
	int deadlock;           /* -1: as the cfg says (checked unless CHECK_DEADLOCK FALSE); 0: not checked */
	bool no_memo;
	/* Called about once a second from the search (level, states so far), when set. */
	void (*progress)(void *arg, const struct mc_progress *p);
	void *progress_arg;
	uint64_t max_states;    /* stop with an error past this many distinct states (0: no limit) */
	bool trace_spec;        /* a trace spec: its log cursor must be found (mc_result.trace) */
	/* Whole-trace validation of a state trace: states[k] (a record of some of the spec's
	 * variables) must hold in the (k + 1)-th state of a behaviour; the rest is searched. */
	spt_val *states;
	const char *states_name;
	/* As TLC's -dfid N, the depth searched: states at level N (the initial states are level 1)
	 * are checked but not expanded (0: no limit). */
	uint64_t max_depth;
};

/* A variable in which a state differs from the trace's. */
struct mc_diff {
	const char *var;
	char expected[256], reached[256];
};

/* A trace spec's outcome (docs/trace-specs.md): how far into the log its behaviours got. */
struct mc_trace_outcome {
	bool found;             /* the spec has a log cursor ([](v <= Len(L) => ...)) */
	const char *cursor, *log;  /* the cursor variable and the log's name */
	int64_t log_len;        /* Len of the log (-1: it could not be evaluated) */
	int64_t line;           /* the furthest line a state reached (log_len + 1: every line matched) */
	uint64_t frontier;      /* distinct states that reached it */
	int64_t error_line;     /* the line of the last state of the error's behaviour (-1: none) */
	spt_val *entry;         /* the log's entry at that line (NULL past the end) */
	struct en_diag closest; /* why no successor of the behaviour's last state matched that line
				 * (depth -1: not diagnosed) */
	/* --states: the successor of that state closest to the trace's state (fewest variables
	 * differ; n_diffs -1: it has no successor at all). */
	int n_diffs;
	struct mc_diff diffs[8];
};

/* One state of a counterexample. */
struct mc_step {
	const char *action;     /* "Initial predicate", or the action's name */
	struct src_pos pos;     /* where that action is defined (file NULL for Init) */
	spt_val **vals;         /* n_vars values, in the result's arena */
	bool stutter;           /* the step leaves every variable unchanged (a deadlock's "stuttering") */
	spt_val *alias;         /* the cfg's ALIAS evaluated on this state and the next (a record), or NULL */
};

struct mc_result {
	enum mc_verdict verdict;
	char what[256];         /* the invariant, property or assumption violated */
	char msg[1536];         /* an evaluation error's message, or the assumption's position */
	uint64_t init_generated, init_distinct;
	uint64_t generated, distinct, queue, depth;
	uint32_t min_out, max_out;  /* out-degrees of the explored states */
	double mean_out;
	double seconds;
	size_t fp_bytes, peak_frontier_bytes;
	const char *const *vars;
	uint32_t n_vars;
	struct mc_step *trace;  /* the behaviour to the error, shortest, or NULL */
	uint32_t n_trace;
	/* With an ALIAS whose body is a record constructor: its fields as written, the order TLC
	 * prints them in (NULL: the record's own order). */
	const char *const *alias_order;
	uint32_t n_alias_order;
	char warnings[2048];
	struct mc_trace_outcome trace_spec;
	void *priv;
};

/*
 * Loads the spec and cfg and searches. 0 when the search ran (the verdict in r), or -EINVAL with
 * err (the spec, the cfg or the model could not be loaded); -ENOTSUP when the model uses what
 * spectap does not check (a liveness property, say), err naming it.
 */
int mc_run(const struct mc_opts *o, struct mc_result *r, struct check_error *err);
void mc_result_free(struct mc_result *r);

#endif
