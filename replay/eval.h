/*
 * Evaluation of TLA+ expressions to values (spectap/value.h) in a state, and the interface the
 * native standard-module operators (builtins) implement.
 */
#ifndef SPECTAP_REPLAY_EVAL_H
#define SPECTAP_REPLAY_EVAL_H

#include <stdarg.h>

#include "ast.h"
#include "spectap/arena.h"

/* Returned by every evaluation function on an error; the message is in the context. */
#define EVAL_ERR (-1)
/* From an eval_bounds callback: no binding that agrees with this one on its first m loops
 * (outermost first) can give anything: go on with the next value of loop m - 1 (hoist.h). */
#define EVAL_SKIP_BASE 0x10000
#define EVAL_SKIP(m) (EVAL_SKIP_BASE + (int)(m))

struct eval_error {
	struct src_pos pos;
	char msg[768];
	bool unsupported; /* the spec, not the values: a construct or an operator spectap does not
			   * evaluate, a constant without a value; no window can be checked past it */
};

struct ev;      /* an evaluation context: arena, state, partial next state, error */
struct closure; /* an operator passed as an argument */

/* Records "what went wrong, on which values" at the expression's position; returns EVAL_ERR. */
int ev_fail(struct ev *ev, const struct ast *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* ev_fail for what no values can make work (eval_error.unsupported). */
int ev_unsupported(struct ev *ev, const struct ast *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Where values are built; lives as long as the current check. */
struct spt_arena *ev_arena(struct ev *ev);
/* A value in TLA+ notation, for messages (truncated to about 200 characters). */
const char *ev_show(struct ev *ev, spt_val *v);

/* Integer helpers that report overflow as an evaluation error. */
int ev_int_arg(struct ev *ev, const struct ast *at, spt_val *v, const char *what, int64_t *out);

/*
 * A native operator of a standard module: called with its evaluated arguments. Returns 0 with
 * *out set, or EVAL_ERR via ev_fail (wrong argument kinds, function applied outside its domain,
 * overflow, ... naming the values involved).
 */
typedef int (*builtin_fn)(struct ev *ev, const struct ast *at, spt_val *const *args, uint32_t n,
			  spt_val **out);
/* One with operator arguments (FoldSeq(op, base, s), SelectSeq(s, Test)): ops[i] is argument i
 * when it is an operator (op_mask), args[i] otherwise. ev_call_op calls one. */
typedef int (*builtin_hfn)(struct ev *ev, const struct ast *at, spt_val *const *args,
			   const struct closure *const *ops, uint32_t n, spt_val **out);
int ev_call_op(struct ev *ev, const struct ast *at, const struct closure *op, spt_val *const *args, uint32_t n,
	       spt_val **out);
/* The operator's arity (number of arguments it takes). */
uint32_t ev_op_arity(const struct closure *op);

/* Operators the evaluator treats itself (lazily, or without building a set). */
enum bi_code {
	BI_PLAIN = 0,
	BI_EQ,       /* = : a relation the enumerator may turn into an assignment */
	BI_IN,       /* \in */
	BI_NOTIN,    /* \notin */
	BI_IMPLIES,  /* => : its right side only when the left is TRUE */
	BI_SEQSET,   /* Seq(S): only right of \in */
	BI_SUBSET,   /* SUBSET S: x \in SUBSET S without building it */
	BI_CUP,      /* x \in S \cup T, S \cap T, S \ T: without building them (S may be Nat) */
	BI_CAP,
	BI_SETMINUS,
	BI_SUBSETEQ, /* S \subseteq T: T may be infinite (Nat, Seq(S), ...) */
	BI_RANGE,    /* a..b: x \in a..b compares x with a and b, as TLC's IntervalValue */
	BI_ASSERT_ERROR, /* TLCExt's AssertError(err, exp): exp evaluated here (assert_error.c) */
	BI_DEFER,        /* TLCExt's TLCDefer(exp): TRUE, exp never evaluated (TLC's breadth-first mode) */
};

struct builtin {
	const char *module; /* "Naturals", "Sequences", "TLC", ...: available when EXTENDed */
	const char *name;   /* as written in TLA+: "Len", "+", "\\o", ":>", "Cardinality" */
	int arity;          /* number of arguments; -1 for any */
	builtin_fn fn;
	uint8_t code;       /* enum bi_code */
	bool impure;        /* depends on or changes something besides its arguments: never cached */
	uint32_t op_mask;   /* arguments that are operators (bit i: argument i), with hfn */
	builtin_hfn hfn;
	const char *unimplemented; /* a standard operator spectap does not implement: why, when called */
};

/* Whether ndJsonDeserialize and JsonDeserialize keep the values of the files they read for the
 * rest of the process (until turned off, which frees them): a file is then read once however
 * many models are loaded, as long as it does not change (check --tv). Off by default. */
void spt_io_keep_files(bool on);

/* The builtin that module (or a module it extends natively) defines as name with arity, or NULL. */
const struct builtin *builtin_lookup(const char *module, const char *name, uint32_t arity);
/* Any builtin of that name visible in module, whatever its arity (for arity errors). */
const struct builtin *builtin_lookup_any(const char *module, const char *name);
/* Every builtin, NULL-terminated by a zero entry. */
extern const struct builtin builtins[];

#endif
