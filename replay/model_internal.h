/* Internal to the model checker: the model as the cfg and the spec define it, and its search. */
#ifndef SPECTAP_REPLAY_MODEL_INTERNAL_H
#define SPECTAP_REPLAY_MODEL_INTERNAL_H

#include "cfg.h"
#include "model.h"

/* An expression to evaluate, and the definition whose frame it is evaluated in. */
struct mc_formula {
	const char *name;        /* as the cfg names it (messages) */
	const struct opdef *owner;
	const struct ast *e;
	/* A state predicate: the variables it reads (a successor that changed none of them
	 * satisfies it as its predecessor did), or NULL when it depends on more than the state. */
	const uint64_t *reads;
	/* Cells of owner's frame bound before evaluating (a property under \A p \in S, or in a
	 * definition with parameters). */
	uint32_t nb;
	const uint32_t *bslots;
	spt_val *const *bvals;
};

struct live;

struct mc_list {
	struct mc_formula *f;
	uint32_t n;
};

struct mc_model {
	struct checker *ck;      /* spec, cfg and constants */
	struct spec *spec;
	const struct cfg *cfg;
	uint32_t n_vars;
	const char *const *vars;
	bool has_init, has_next;
	struct mc_formula init;
	struct mc_formula next;
	struct mc_list invariants;   /* INVARIANTs, then properties' []P */
	uint32_t n_cfg_invariants;   /* the first ones come from INVARIANT (the rest: PROPERTY) */
	struct mc_list init_props;   /* properties' conjuncts without [] (checked on initial states) */
	struct mc_list action_props; /* properties' [][A]_v: e is the [A]_v */
	struct mc_list constraints, action_constraints, postconditions;
	/* Properties [](A => []B), checked as TLC checks them on the fly: when a state is expanded,
	 * for it and each successor (TLCGet("queue") then counts what waits). e: A, e2: B. */
	struct mc_list expand_props;
	const struct ast **expand_b;
	bool has_view;
	struct mc_formula view;
	bool has_alias;
	struct mc_formula alias;
	const struct opdef *symmetry;
	bool check_deadlock;
	/* A trace spec's log cursor (docs/trace-specs.md): the variable v and the log L of a property
	 * [](v <= Len(L) => ...) as etcd-io/raft's TraceMatched; cursor -1 when there is none.
	 * cursor_offset: what to add to v's value to get the line it stands for (1 for v < Len(L),
	 * where v counts the lines matched). */
	struct live *live;             /* liveness properties (liveness.h), or NULL */
	/* --states: each state of the trace as (variable, value) pairs. */
	struct mc_line {
		uint32_t n;
		uint32_t *var;
		spt_val **val;
	} *lines;
	uint32_t n_lines;
	int cursor;
	int cursor_offset;
	struct mc_formula log;
	uint32_t cursor_prop;          /* the property in expand_props it comes from */
};

int mc_model_load(const struct mc_opts *o, struct mc_model *m, struct check_error *err);
/* Fills err's message; returns rc (a negative errno). */
int mc_fail(struct check_error *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mc_model_free(struct mc_model *m);
/* Evaluates f in in's current state (and next state, for an action): a Boolean. */
int mc_eval_bool(struct interp *in, const struct mc_formula *f, bool *out);
int mc_eval(struct interp *in, const struct mc_formula *f, spt_val **out);
/* Checks every ASSUME of every module: 0, 1 with r filled when one is false, or -EINVAL. */
int mc_check_assumptions(struct mc_model *m, struct interp *in, struct mc_result *r, struct check_error *err);

#endif
