/*
 * Transition Validation: for each window (pre-state, action, post-state), can the action, with
 * some binding of its parameters, reach a state whose observed variables equal the post-state
 * from the pre-state in one step?
 */
#ifndef SPECTAP_REPLAY_CHECK_H
#define SPECTAP_REPLAY_CHECK_H

#include "cfg.h"
#include "interp.h"

struct checker;

/* The tag of the checker's long arena (constants): values there live as long as the checker. */
#define CHECKER_LONG_TAG 203

struct check_error {
	char msg[1024]; /* "file:line:col: what" */
};

/* Loads spec and cfg (cfg may be NULL: then S.cfg beside S.tla if it exists). */
int checker_new(const char *spec_path, const char *cfg_path, struct checker **out, struct check_error *err);
void checker_free(struct checker *ck);

/* One differing variable of the closest successor. */
struct var_diff {
	const char *var;
	spt_val *expected; /* the window's post value */
	spt_val *reached;  /* the closest successor's value */
};

struct window_result {
	bool passed;
	uint32_t successors;      /* successor states examined */
	uint32_t n_diffs;         /* of the closest successor (0 when passed) */
	struct var_diff *diffs;
	const char *binding;      /* the parameter binding of the closest successor, in TLA+ notation */
	bool no_successor;        /* the action is disabled from the pre-state, for every binding */
	const char *error;        /* the window could not be checked: why ("file:line:col: ..."); the
				   * verdict is an error, neither passed nor failed */
};

/*
 * Checks one window of action (an operator of the spec; its parameters range over the sets
 * Next quantifies them over). pre and post are records variable -> value; variables missing
 * from pre range over the values Init gives them; missing from post are not compared. Values
 * live in the checker's window arena until the next call. params, when not NULL, is the tuple
 * the action's parameters are bound to (a mapping's Params); else they range over Next's sets.
 * 0 (with res->error when evaluating the action failed in this window: its verdict), or
 * -EINVAL with err (the window or the spec is unusable: never a verdict), -ENOMEM, or the
 * error of a time limit.
 */
int checker_window(struct checker *ck, const char *action, spt_val *pre, spt_val *post, spt_val *params,
		   struct window_result *res, struct check_error *err);
/* A checker whose root is a mapping module (docs/mapping.md) in which Spec stands for spec_path;
 * the cfg defaults to the one beside the spec. */
int checker_new_mapped(const char *map_path, const char *spec_path, const char *cfg_path, struct checker **out,
		       struct check_error *err);
struct interp *checker_interp(struct checker *ck);
/* What loading found odd but harmless (cfg names the spec lacks), one per line; NULL if none. */
const char *checker_warnings(const struct checker *ck);
/* Calls operator name of the root module (a mapping's) with values, in the window arena:
 * 0 with *out, 1 when the root module does not define it, or -EINVAL with err. */
int checker_call(struct checker *ck, const char *name, spt_val *const *args, uint32_t n, spt_val **out,
		 struct check_error *err);
struct spec *checker_spec(struct checker *ck);
/* Evaluation steps one window may take before its check is an error (check --max-steps; 0: no
 * limit), for the checkers made after it is set; a mapping's call for one event has the same. */
#define CHECKER_WINDOW_STEPS 100000000ull
extern uint64_t checker_window_steps;

/* The arena window values should be built in (reset at each checker_window). */
struct spt_arena *checker_window_arena(struct checker *ck);
/* Checks that the action exists and returns its parameter count. */
int checker_action(struct checker *ck, const char *action, uint32_t *params, struct check_error *err);
/* The cfg loaded (path NULL when there was none). */
const struct cfg *checker_cfg(struct checker *ck);
/* The spec's variables. */
const char *const *checker_vars(struct checker *ck, uint32_t *n);

#endif
