/*
 * The resolved AST of TLA+ modules, built from tree-sitter-tlaplus's concrete syntax tree.
 * Every node knows where it came from (file, line, column) for error messages.
 */
#ifndef SPECTAP_REPLAY_AST_H
#define SPECTAP_REPLAY_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spectap/value.h"

struct src_pos {
	const char *file; /* path of the module file */
	uint32_t line, col; /* 1-based */
};

enum ast_kind {
	A_NUM,       /* num */
	A_STR,       /* str */
	A_BOOL,      /* num: 0 or 1 */
	A_NAME,      /* name: an identifier, operator symbol, or builtin; args: operands */
	A_PRIME,     /* a[0]' */
	A_AND,       /* a[0..n): conjunction list or /\ */
	A_OR,        /* a[0..n): disjunction list or \/ */
	A_IF,        /* a[0] THEN a[1] ELSE a[2] */
	A_CASE,      /* arms: a[2i] -> a[2i+1]; other: a[n-1] when has_other */
	A_LET,       /* defs, body a[0] */
	A_CHOOSE,    /* bounds (one), body a[0] */
	A_EXISTS,    /* bounds, body a[0] */
	A_FORALL,    /* bounds, body a[0] */
	A_SET,       /* {a[0], ...} */
	A_FILTER,    /* {x \in S : a[0]}: bounds (one), body a[0] */
	A_MAP,       /* {a[0] : x \in S, ...}: bounds, body a[0] */
	A_FUNC,      /* [x \in S, ... |-> a[0]]: bounds */
	A_FUNCSET,   /* [a[0] -> a[1]] */
	A_APPLY,     /* a[0][a[1], ...] */
	A_RECORD,    /* [f |-> a[i], ...]: fields[i] */
	A_RECSET,    /* [f : a[i], ...]: fields[i] */
	A_FIELD,     /* a[0].fields[0] */
	A_TUPLE,     /* <<a[0], ...>> */
	A_EXCEPT,    /* [a[0] EXCEPT !path = a[i], ...]: excepts */
	A_AT,        /* @ inside EXCEPT */
	A_UNCHANGED, /* UNCHANGED a[0] */
	A_LAMBDA,    /* LAMBDA params : a[0] */
	A_STUTTER,   /* [a[0]]_a[1] or <<a[0]>>_a[1] (num: 1 for the angle form) */
	A_UNSUPPORTED, /* a construct the evaluator cannot evaluate (temporal operators, fairness):
			* name says which; an error only when evaluated, so a spec may define
			* Spec == Init /\ [][Next]_vars and be checked step by step */
};

struct ast;

/* One bound of a quantifier or constructor: x \in S, or <<x, y>> \in S (tuple). */
struct bound {
	const char **names; /* interned */
	uint32_t n_names;
	bool tuple;         /* <<x, y>> \in S */
	struct ast *set;
};

/* One "!path = value" of an EXCEPT. A path step is a function argument list or a field. */
struct except_step {
	bool field;
	const char *name;   /* field */
	struct ast **args;  /* function arguments (one, or a tuple when several) */
	uint32_t n_args;
};
struct except_upd {
	struct except_step *steps;
	uint32_t n_steps;
	struct ast *value;
};

struct opdef;

struct ast {
	enum ast_kind kind;
	struct src_pos pos;
	uint32_t n;          /* operands in a[] */
	struct ast **a;
	int64_t num;
	spt_val *str;        /* A_STR: the value */
	const char *name;    /* A_NAME, A_FIELD: interned */
	struct bound *bounds;
	uint32_t n_bounds;
	const char **fields; /* A_RECORD, A_RECSET, A_FIELD */
	struct opdef **defs; /* A_LET */
	uint32_t n_defs;
	struct except_upd *excepts;
	uint32_t n_excepts;
	const char **params; /* A_LAMBDA */
	uint32_t n_params;
	bool has_other;      /* A_CASE */
};

/* An operator (or function) definition: Name(p1, p2) == body, or f[x \in S] == body. */
struct opdef {
	const char *name;      /* interned */
	struct src_pos pos;
	const char **params;   /* interned */
	uint32_t *param_arity; /* 0 for a value parameter, k for F(_, ..) */
	uint32_t n_params;
	struct ast *body;
	struct bound *fbounds; /* function definition f[x \in S] == ...: its bounds */
	uint32_t n_fbounds;
	bool recursive, local;
	struct module *module; /* where it was defined */
};

#endif
