/* Internal: the evaluation context itself (the evaluator, the checker and tests create one). */
#ifndef SPECTAP_REPLAY_EV_CORE_H
#define SPECTAP_REPLAY_EV_CORE_H

#include "eval.h"
#include "spectap/buf.h"

/* What TLCGet's named keys ("level", "stats", "config", ...) read while the model checker
 * runs; ev->run is NULL elsewhere (window validation has no such run). */
enum tlc_counter { TLC_GENERATED, TLC_DISTINCT, TLC_QUEUE, TLC_DIAMETER };
struct tlc_run {
	int64_t level;          /* of the state being explored or checked; 0 for constants and Init */
	uint64_t (*count)(void *arg, enum tlc_counter which);
	void *arg;
	double start;           /* CLOCK_MONOTONIC seconds when the run began */
	int worker, workers;
	bool deadlock;          /* deadlock is checked */
	uint64_t initial;       /* initial states found */
	/* TLCExt's Trace: the behaviour to the current state, as a tuple of records (or NULL:
	 * there is no such behaviour where this run evaluates). */
	int (*trace)(void *arg, struct ev *ev, const struct ast *at, spt_val **out);
	void *trace_arg;
	_Atomic int *exit_req;  /* set by TLCSet("exit", TRUE): the search stops (NULL: no search) */
};

struct ev {
	struct spt_arena *arena;
	struct eval_error err;
	bool failed;
	struct spt_buf show;     /* ev_show's text */
	struct spt_buf show2;    /* a second one, so that one message can show two values */
	bool show_flip;
	void *checker;           /* the evaluator's own state (states, environments) */
	void *tlc;               /* TLCSet/TLCGet registers (builtins_tlc.c) */
	const struct tlc_run *run; /* the model checker's run, or NULL */
	spt_val *assert_msg;     /* when the error is a failed Assert: its second argument (TLCExt's
				  * AssertError compares TLC's message for it) */
};

void ev_init(struct ev *ev, struct spt_arena *a);
void ev_fini(struct ev *ev);
/* Forgets a previous error. */
void ev_clear_error(struct ev *ev);
/* Frees the TLC registers (builtins_tlc.c). */
void bi_tlc_fini(struct ev *ev);

#endif
