/*
 * TLA+ modules: parsed from files with tree-sitter-tlaplus, with EXTENDS resolved (the spec's own
 * modules from its directory; standard modules natively) and names looked up through one table
 * per module.
 */
#ifndef SPECTAP_REPLAY_MODULE_H
#define SPECTAP_REPLAY_MODULE_H

#include "ast.h"
#include "eval.h"

enum sym_kind {
	SYM_DEF,      /* an operator or function definition */
	SYM_CONST,    /* a CONSTANT: its value comes from the .cfg */
	SYM_VAR,      /* a VARIABLE */
	SYM_BUILTIN,  /* a native operator of a standard module */
	SYM_INSTANCE, /* M == INSTANCE N WITH ... */
};

struct instance;

struct symbol {
	const char *name; /* interned */
	enum sym_kind kind;
	struct opdef *def;
	uint32_t index;   /* SYM_CONST, SYM_VAR: position in the root module's list */
	uint32_t arity;   /* SYM_CONST: operator constants F(_) */
	struct instance *inst;
	struct module *module; /* where it was declared */
};

/* A module instance: N's symbols, with N's constants and variables substituted. */
/* The tag of the spec's arena (its values: the cfg's constants, literals). */
#define SPEC_ARENA_TAG 207

struct instance {
	struct module *mod;      /* the instantiated module (its own copy) */
	const char **from;       /* N's names ... */
	struct ast **to;         /* ... and what they stand for, evaluated in `in` */
	uint32_t *to_slots;      /* the frame each needs (the names it binds; resolver) */
	uint32_t n;
	struct module *in;       /* the instantiating module */
	/* I(x, y) == INSTANCE N WITH ...: the parameters, bound when I(a, b)!Op is evaluated (the
	 * substitutions name them); ipar is the instance's number + 1 (0: not parameterized). */
	const char **params;
	uint32_t n_params;
	uint16_t ipar;
	uint8_t *plevel;         /* each parameter's level: the highest of its arguments (resolver) */
};

struct module {
	const char *name;
	const char *path;
	char *source;            /* the file's text, for error excerpts */
	size_t source_len;
	const char **extends;
	uint32_t n_extends;
	struct symbol **syms;    /* open-addressing table on interned name pointers */
	uint32_t cap_syms, n_syms;
	const char **constants;  /* declared here, in order */
	uint32_t *const_arity;
	uint32_t n_constants;
	const char **variables;  /* declared here, in order */
	uint32_t n_variables;
	struct opdef **defs;     /* defined here, in order */
	uint32_t n_defs;
	const char **std;        /* standard modules visible (for builtins) */
	uint32_t n_std;
	struct instance *subst;  /* set when this module is an instance copy */
	bool is_std;             /* a standard module instantiated: only native operators */
	struct module **ext;     /* the modules it EXTENDS (read from files) */
	uint32_t n_ext;
	struct opdef **assumes;  /* ASSUME expressions, as definitions without parameters */
	uint32_t n_assumes;
};

/* All modules of one spec, the names they intern and the memory they use. */
struct spec;

struct spec_error {
	struct src_pos pos;
	char msg[768];
	char excerpt[160]; /* the offending source text, when known */
	char file[1024];   /* pos.file points here after spec_load fails (the spec is freed) */
};

/* Parses path and every module it extends or instantiates, and resolves every name
 * (resolve.h). 0, or -EINVAL with err filled. */
int spec_load(const char *path, struct spec **out, struct spec_error *err);
/* Set (from a signal handler: check --timeout) to stop reading modules: a parse in progress
 * then fails with the time limit as its reason (the TLA+ grammar's scanner is quadratic in a
 * line's length, so one very long line can take minutes). */
extern volatile size_t spec_parse_cancel;
/* Parses only: spec_resolve comes next (after the cfg, which may override definitions). */
int spec_parse(const char *path, struct spec **out, struct spec_error *err);
int spec_parse_aliased(const char *path, const char *alias, const char *alias_path, struct spec **out,
		       struct spec_error *err);
/* The same, with EXTENDS alias reading the module in alias_path, whatever its name (mappings
 * EXTEND "Spec", the spec given on the command line). */
int spec_load_aliased(const char *path, const char *alias, const char *alias_path, struct spec **out,
		      struct spec_error *err);
void spec_free(struct spec *s);
struct module *spec_root(struct spec *s);
/* Every VARIABLE of the root module, including those of the modules it extends. */
const char *const *spec_variables(struct spec *s, uint32_t *n);
/* Every CONSTANT of the root module (and extended modules), with its arity. */
const char *const *spec_constants(struct spec *s, uint32_t **arity, uint32_t *n);
const char *spec_intern(struct spec *s, const char *name, size_t len);
struct spt_arena *spec_arena(struct spec *s);

struct symbol *module_lookup(struct module *m, const char *interned_name);
/* How many parameterized instances the spec has (their ipar numbers are 1..n). */
uint32_t spec_n_ipar(struct spec *s);
/* Every loaded module (instance copies included), the root first. */
struct module *const *spec_modules(struct spec *s, uint32_t *n);
/* The resolver's registry of definitions: spec_add_def numbers d (d->id) and keeps it. */
int spec_add_def(struct spec *s, struct opdef *d);
struct opdef *const *spec_defs(struct spec *s, uint32_t *n);
void **spec_resolver_data(struct spec *s);
/* Parses and resolves one expression in the context of the root module (for tests and the
 * command line); it is evaluated in a frame of *nslots cells (interp_frame_ctx). */
int spec_parse_expr(struct spec *s, const char *text, const char *origin, struct ast **out, uint32_t *nslots,
		    struct spec_error *err);

#endif
