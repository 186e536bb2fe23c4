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

struct eval_error {
	struct src_pos pos;
	char msg[768];
};

struct ev; /* an evaluation context: arena, state, partial next state, error */

/* Records "what went wrong, on which values" at the expression's position; returns EVAL_ERR. */
int ev_fail(struct ev *ev, const struct ast *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
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

struct builtin {
	const char *module; /* "Naturals", "Sequences", "TLC", ...: available when EXTENDed */
	const char *name;   /* as written in TLA+: "Len", "+", "\\o", ":>", "Cardinality" */
	int arity;          /* number of arguments; -1 for any */
	builtin_fn fn;
};

/* The builtin that module (or a module it extends natively) defines as name with arity, or NULL. */
const struct builtin *builtin_lookup(const char *module, const char *name, uint32_t arity);
/* Every builtin, NULL-terminated by a zero entry. */
extern const struct builtin builtins[];

#endif
