/*
 * The resolved AST of TLA+ modules, built from tree-sitter-tlaplus's concrete syntax tree.
 * Every node knows where it came from (file, line, column) for error messages. The resolver
 * (resolve.c) binds every name once, when the spec is loaded: to a slot of the frame it is
 * evaluated in, a definition, a constant, a variable or a native operator; evaluation compares
 * no strings.
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
	A_CHOOSE,    /* bounds (one; its set NULL when unbounded), body a[0] */
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
	A_LAMBDA,    /* LAMBDA params : body: lambda holds it as a definition */
	A_STUTTER,   /* [a[0]]_a[1] or <<a[0]>>_a[1] (num: 1 for the angle form) */
	A_CDOT,      /* a[0] \cdot a[1]: a step of a[0], then one of a[1] from the state it reached */
	A_INST,      /* a[0] evaluated with the parameters of the parameterized instance ipar - 1 bound
		      * to the first cells of the frame (the body of a synthesized P!Op: resolve.c) */
	A_UNSUPPORTED, /* a construct the evaluator cannot evaluate (temporal operators, fairness):
			* name says which; an error only when evaluated, so a spec may define
			* Spec == Init /\ [][Next]_vars and be checked step by step */
};

/* What a name stands for, once resolved. */
enum ref_kind {
	REF_NONE = 0,  /* not resolved (yet) */
	REF_LOCAL,     /* a bound name: the frame `up` levels out, cell `slot` */
	REF_DEF,       /* a definition: r.def */
	REF_CONST,     /* CONSTANT number slot (of the spec's list) */
	REF_VAR,       /* VARIABLE number slot */
	REF_BUILTIN,   /* a native operator: r.bi */
	REF_SUBST,     /* an instance's constant or variable: r.subst, evaluated in rmod */
	REF_SET,       /* Nat, Int, Real, STRING, BOOLEAN: slot says which (enum builtin_set) */
	REF_VALUE,     /* the cfg overrides a definition with a value: r.val */
};

/* Nat, Int, ... (REF_SET). */
enum builtin_set { BS_NAT, BS_INT, BS_REAL, BS_STRING, BS_BOOLEAN };

/* A_UNSUPPORTED's num: which temporal construct (its operands are a[]). */
enum temporal { T_OTHER = 0, T_ALWAYS, T_EVENTUALLY, T_LEADSTO, T_WF, T_SF, T_ENABLED };

/* Expression levels, as TLA+ defines them. */
enum level { L_CONST = 0, L_STATE = 1, L_ACTION = 2, L_TEMPORAL = 3 };

struct ast;
struct opdef;
struct module;
struct builtin;
struct instance;

/* One bound of a quantifier or constructor: x \in S, or <<x, y>> \in S (tuple). */
struct bound {
	const char **names; /* interned */
	uint32_t *slots;    /* each name's cell in the frame (resolver) */
	uint32_t n_names;
	bool tuple;         /* <<x, y>> \in S */
	struct ast *set;    /* NULL: unbounded (\E x : P, CHOOSE x : P) */
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
	spt_val **field_vals; /* A_RECORD, A_RECSET, A_FIELD: the field names as values (resolver) */
	/* A_RECORD (resolver): the field names in canonical order, and where each written field
	 * goes in it; NULL when a name repeats (evaluation reports it). */
	spt_val **rec_keys;
	const uint32_t *rec_pos;
	struct opdef **defs; /* A_LET */
	uint32_t *def_slots; /* A_LET: each definition's cell in the frame (resolver) */
	uint32_t n_defs;
	struct except_upd *excepts;
	uint32_t n_excepts;
	struct opdef *lambda; /* A_LAMBDA */
	bool has_other;      /* A_CASE */
	/* Set by the resolver. */
	uint8_t ref;         /* enum ref_kind, for A_NAME */
	uint8_t level;       /* enum level of the expression */
	bool op_ref;         /* an operator passed as an argument (F in Op(F)), not evaluated */
	bool memo;           /* a call of a cacheable definition from outside its recursion */
	uint16_t up;         /* REF_LOCAL */
	uint16_t ipar;       /* a parameterized instance's number + 1 (0: none): for A_INST, a
			      * REF_SUBST of its substitutions, a REF_LOCAL naming its parameter */
	uint32_t slot;       /* REF_LOCAL, REF_CONST, REF_VAR, REF_SET */
	union {
		struct opdef *def;        /* REF_DEF; REF_LOCAL naming a LET definition */
		const struct builtin *bi;
		struct ast *subst;
		spt_val *val;
	} r;
	struct module *rmod; /* REF_SUBST: the module r.subst is evaluated in */
	const uint64_t *unchanged; /* A_EXISTS: variables its body surely leaves unchanged (frames.c) */
	const struct hoist *hoist; /* A_EXISTS in an action: its body's leading guards (hoist.c) */
};

/* An operator (or function) definition: Name(p1, p2) == body, or f[x \in S] == body; also a
 * LET definition or a LAMBDA. Evaluated in a frame of nslots cells, the parameters (or a
 * function definition's bound names) first. */
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
	/* Set by the resolver. */
	uint32_t id;           /* dense, per spec: caches are indexed by it */
	uint32_t nslots;       /* frame size */
	bool nested;           /* a LET definition or LAMBDA: its frame's `up` is where it was made */
	bool resolved;
	uint8_t level;         /* of the body, with value parameters constant */
	bool impure;           /* calls TLCSet, Print, ... (never cached) */
	bool run_state;        /* calls TLCGet, TLCSet or JavaTime: read the run, never evaluated once */
	bool higher_order;     /* has operator parameters */
	bool primes_params;    /* primes (or UNCHANGEs) a parameter: an action when given a variable */
	bool cacheable;        /* applications cached by their arguments' values (memo.c) */
	bool evaluated_once;   /* zero parameters, constant level, pure: one value per run */
	bool recursing;        /* resolver's fixed point */
	uint32_t scc;          /* resolver: recursion group (calls inside it are not cached) */
	uint64_t *unchanged;   /* an action: the variables it surely leaves unchanged, or NULL (frames.c) */
	/* Parameterized instances (I(x) == INSTANCE M): */
	struct instance *ientry; /* a synthesized I!Op(x, args) == [x bound] Op(args): I */
	uint64_t ipars;        /* the instances whose parameters the body reads (bit ipar - 1, the
				* last bit for all beyond 63): never cached (the parameters are no key) */
	uint64_t ipars_primed; /* ... of those, the ones it reads primed or UNCHANGED */
};

#endif
