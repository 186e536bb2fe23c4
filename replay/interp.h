/*
 * Internal: the interpreter's state shared by the evaluator (eval.c) and successor enumeration
 * (enumerate.c): the spec, constant values, the current state and the partial next state.
 */
#ifndef SPECTAP_REPLAY_INTERP_H
#define SPECTAP_REPLAY_INTERP_H

#include "ev_core.h"
#include "module.h"

/* An operator passed as an argument (F(_)) or a LAMBDA: the definition and where it was made. */
struct closure {
	struct opdef *def;
	const struct ast *lambda;
	struct binding *env;
	struct module *mod;
};

/* The chain of names bound by quantifiers, parameters and LET. */
struct binding {
	const char *name;
	spt_val *val;           /* a value, or */
	struct closure *op;     /* an operator */
	struct binding *next;
};

/* Where an expression is evaluated. */
struct ctx {
	struct binding *env;
	struct module *mod;
	spt_val *at;            /* the value @ stands for inside EXCEPT */
	bool primed;            /* inside e': variables read the next state */
};

struct interp {
	struct ev ev;
	struct spec *spec;
	uint32_t n_vars;
	const char *const *vars;
	spt_val **consts;       /* by spec constant index; NULL = not given */
	struct closure **const_ops; /* operator constants (F <- G in the cfg) */
	spt_val **cur;          /* the state; NULL = unknown */
	spt_val **next;         /* the next state being built; NULL = not assigned yet */
	bool init_mode;         /* enumerating Init: unprimed variables are the ones assigned */
	uint64_t steps;         /* expressions evaluated so far */
	uint64_t max_steps;     /* give up past this many (0: no limit); fuzzing sets one */
};

void interp_init(struct interp *in, struct spec *s, struct spt_arena *a);
void interp_fini(struct interp *in);
struct ctx interp_root_ctx(struct interp *in);

int eval(struct interp *in, struct ctx c, const struct ast *e, spt_val **out);
int eval_bool(struct interp *in, struct ctx c, const struct ast *e, bool *out);
/* x \in S without building S when S is Nat, Int, STRING, Seq(T), SUBSET T, [S -> T], [a : S]. */
int eval_member(struct interp *in, struct ctx c, spt_val *x, const struct ast *set, bool *out);
/* Binds every combination of the bounds and calls fn; stops at the first non-zero return. */
typedef int (*bind_fn)(struct interp *in, struct ctx c, void *arg);
int eval_bounds(struct interp *in, struct ctx c, const struct bound *b, uint32_t nb, bind_fn fn, void *arg);
struct binding *bind_value(struct interp *in, struct binding *next, const char *name, spt_val *v);

/* What a name stands for in a context. */
struct resolved {
	enum { R_VALUE, R_CLOSURE, R_DEF, R_CONST, R_VAR, R_BUILTIN, R_NONE } kind;
	spt_val *val;
	struct closure *op;
	struct opdef *def;
	struct module *mod;     /* the module the definition evaluates in */
	uint32_t index;
	const struct builtin *bi;
	const struct ast *subst; /* a constant or variable of an instance: what it stands for */
	struct module *subst_mod;
};
int resolve(struct interp *in, struct ctx c, const struct ast *at, const char *name, uint32_t nargs,
	    struct resolved *r);
/* Calls a definition or closure with argument expressions evaluated in c. */
int apply_def(struct interp *in, struct ctx c, const struct ast *at, struct opdef *d, struct module *m,
	      struct binding *closure_env, const struct ast *const *args, uint32_t nargs, struct ctx *body_ctx);

#endif
