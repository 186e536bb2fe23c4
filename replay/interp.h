/*
 * Internal: the interpreter's state shared by the evaluator (eval.c), successor enumeration
 * (enumerate.c) and the checkers: the spec, constant values, the current state, the partial
 * next state, frames of bound names, and the caches.
 */
#ifndef SPECTAP_REPLAY_INTERP_H
#define SPECTAP_REPLAY_INTERP_H

#include <pthread.h>
#include <signal.h>

#include "ev_core.h"
#include "memo.h"
#include "module.h"

/* One cell of a frame: a value, or an operator (a parameter F(_), a LET definition, a LAMBDA). */
struct cell {
	spt_val *v;               /* with op, a LET definition's value once evaluated (see epoch) */
	const struct closure *op;
	uint32_t epoch;           /* the arena's rewinds when v was cached: valid while unchanged */
};

/* The cells of one definition's evaluation; nested definitions see their maker's frame. */
struct frame {
	struct frame *up;
	uint32_t n;
	struct cell c[];
};

/* An operator as a value of a cell: a definition (with the frame it was made in, for LET
 * definitions and LAMBDAs), or a builtin. Or an argument bound unevaluated (expr, evaluated in
 * env): one with primes (Send(p, m, m')), or a state expression given to a parameter the body
 * primes, so that the enumerator sees the variable it stands for. */
struct closure {
	const struct opdef *def;
	struct frame *env;
	const struct builtin *bi;
	const struct ast *expr;
	bool primed;
};

/* Where an expression is evaluated. */
struct ctx {
	struct frame *f;
	spt_val *at;            /* the value @ stands for inside EXCEPT */
	bool primed;            /* inside e': variables read the next state */
};

/* Why an action has no successor: the false guard reached deepest into it (the enumerator fills
 * this in when interp.diag is set; a trace spec's rejection reports it). */
struct en_diag {
	int depth;              /* of the guard: -1 until one was false */
	struct src_pos pos;
	const struct opdef *action; /* the innermost action definition it is in, or NULL */
	bool sides;             /* lhs and rhs hold the values of a false binary relation */
	char op[16];
	char lhs[768], rhs[768];
};

struct hoist_watch;

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
	bool partial;           /* ENABLED: a successor need not give every variable a value */
	bool next_known;        /* next holds a whole successor (a step checked against a property):
				 * an action whose frame variables changed is false at once (frames.c) */
	bool rewind;            /* the enumerator gives back what a branch allocated when it returns
				 * (its callbacks copy what they keep into another arena) */
	uint64_t steps;         /* expressions evaluated so far */
	uint64_t max_steps;     /* give up past this many (0: no limit); fuzzing sets one */
	int depth;              /* nesting of eval calls */
	uintptr_t stack_base;   /* the frame of the outermost eval */
	uintptr_t stack_floor;  /* the deepest frame nested evaluation may reach (stack_base less the budget) */
	uintptr_t step_stack_base; /* the frame of the outermost enumeration step */
	struct spt_arena *long_arena; /* constants evaluated once live here */
	spt_val **once;         /* by opdef id: the value of a definition evaluated once */
	uint32_t n_once;
	struct memo memo;       /* applications of cacheable definitions */
	uint32_t *memo_tries, *memo_hits; /* by opdef id: a definition whose calls rarely repeat
				 * stops being cached (copying its values costs more than it saves) */
	bool no_memo;           /* evaluate everything (the cache's semantics test) */
	bool track_actions;     /* the enumerator keeps the action definitions it is inside */
	uint32_t n_actions;     /* in actions[] (only the outermost MAX_TRACKED are kept) */
	const struct opdef *actions[16];
	struct en_diag *diag;   /* when set, the enumerator notes its deepest false guard */
	struct hoist_watch *watch; /* the guards of the \E being evaluated (hoist.h) */
	struct frame **ibind;   /* by ipar - 1: the frame holding the parameters of the
				 * parameterized instance's I(a)!Op being evaluated (A_INST), or NULL */
};

/* s must be resolved (spec_resolve). long_arena holds what outlives a window. */
/* The C stack of the main thread (RLIMIT_STACK, 256 MiB when unlimited, at most that), which
 * evaluation threads are given too (interp_thread_create), so that the guards hold on every
 * thread; nested evaluation may use half of it, enumeration steps a quarter. */
size_t interp_stack_size(void);
size_t interp_stack_budget(void);
/* Set (from a signal handler) when the run's time is up (check --timeout): every evaluation then
 * fails with that reason, at the expression it was at. */
extern volatile sig_atomic_t interp_time_up;

/* pthread_create with a stack of interp_stack_size(). */
int interp_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);
void interp_init(struct interp *in, struct spec *s, struct spt_arena *long_arena);
void interp_fini(struct interp *in);
/* A context with no frame (module-level expressions). */
struct ctx interp_root_ctx(struct interp *in);
/* A context with a frame of nslots empty cells (for an expression spec_parse_expr read). */
struct ctx interp_frame_ctx(struct interp *in, uint32_t nslots);

int eval(struct interp *in, struct ctx c, const struct ast *e, spt_val **out);
int eval_bool(struct interp *in, struct ctx c, const struct ast *e, bool *out);
/* x \in S without building S when S is Nat, Int, STRING, Seq(T), SUBSET T, [S -> T], [a : S]. */
int eval_member(struct interp *in, struct ctx c, spt_val *x, const struct ast *set, bool *out);
/* Binds every combination of the bounds in c's frame and calls fn; stops at the first non-zero
 * return. */
typedef int (*bind_fn)(struct interp *in, struct ctx c, void *arg);
int eval_bounds(struct interp *in, struct ctx c, const struct bound *b, uint32_t nb, bind_fn fn, void *arg);
/* A frame for definition d, its cells empty. NULL when out of memory (error set). */
struct frame *frame_new(struct interp *in, const struct opdef *d, struct frame *up, const struct ast *at);
/* Calls definition d with evaluated value arguments (no operator parameters). */
int eval_call(struct interp *in, const struct opdef *d, spt_val *const *args, uint32_t n, spt_val **out);
/* Binds d's parameters to the argument expressions of call (evaluated in c) in a new frame. */
int bind_args(struct interp *in, struct ctx c, const struct ast *call, const struct opdef *d, struct frame *env,
	      struct frame **out);
/* The context a REF_SUBST name's substitution is evaluated in (primed: inside e'). */
int subst_ctx(struct interp *in, const struct ast *e, bool primed, struct ctx *out);
/* TLCExt's AssertError(err, exp), e its application (assert_error.c). */
int eval_assert_error(struct interp *in, struct ctx c, const struct ast *e, spt_val **out);
/* The cell a REF_LOCAL name denotes in c. */
struct cell *local_cell(struct ctx c, const struct ast *e);
/* When e is a parameter bound unevaluated: the expression it stands for, and *c its context. */
const struct ast *thunk_expr(struct ctx *c, const struct ast *e);

#endif
