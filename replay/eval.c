/* Evaluating TLA+ expressions to values, with TLC's semantics, on one state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "interp.h"

#define MAX_ENUM 1000000u /* largest set built to enumerate [S -> T] and friends */
#define MAX_DEPTH 100000 /* nesting of eval calls; the stack guard below usually stops first */

static int depth;
static uintptr_t stack_base; /* the frame of the outermost eval */
static size_t stack_budget;  /* how much stack nested evaluation may use */

/* True when nested evaluation has used up its share of the stack: deep (or runaway) recursion
 * in a spec is an evaluation error, not a crash. Half of the stack limit (at most 256 MiB). */
static bool stack_exhausted(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (depth == 1)
		stack_base = here;
	if (!stack_budget) {
		struct rlimit rl;
		size_t lim = 8u << 20;
		if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			lim = (size_t)rl.rlim_cur;
		else if (getrlimit(RLIMIT_STACK, &rl) == 0)
			lim = (size_t)256 << 20;
		if (lim > ((size_t)256 << 20))
			lim = (size_t)256 << 20;
		stack_budget = lim / 2;
	}
	return stack_base > here && stack_base - here > stack_budget;
}

void interp_init(struct interp *in, struct spec *s, struct spt_arena *a)
{
	memset(in, 0, sizeof(*in));
	ev_init(&in->ev, a);
	in->ev.checker = in;
	in->spec = s;
	in->vars = spec_variables(s, &in->n_vars);
	uint32_t nc, *ar;
	spec_constants(s, &ar, &nc);
	in->consts = calloc(nc + 1, sizeof(*in->consts));
	in->const_ops = calloc(nc + 1, sizeof(*in->const_ops));
	in->cur = calloc(in->n_vars + 1, sizeof(*in->cur));
	in->next = calloc(in->n_vars + 1, sizeof(*in->next));
}

void interp_fini(struct interp *in)
{
	free(in->consts);
	free(in->const_ops);
	free(in->cur);
	free(in->next);
	ev_fini(&in->ev);
}

struct ctx interp_root_ctx(struct interp *in) { return (struct ctx){ NULL, spec_root(in->spec), NULL, false }; }

static struct spt_arena *A(struct interp *in) { return in->ev.arena; }

static int oom(struct interp *in, const struct ast *at) { return ev_fail(&in->ev, at, "out of memory"); }

struct binding *bind_value(struct interp *in, struct binding *next, const char *name, spt_val *v)
{
	struct binding *b = spt_arena_alloc(A(in), sizeof(*b));
	if (b)
		*b = (struct binding){ name, v, NULL, next };
	return b;
}

static struct binding *bind_op(struct interp *in, struct binding *next, const char *name, struct closure *op)
{
	struct binding *b = spt_arena_alloc(A(in), sizeof(*b));
	if (b)
		*b = (struct binding){ name, NULL, op, next };
	return b;
}

/* ---- names ---- */

/* Sets that are names, not operators: infinite ones can only be right of \in (eval_member). */
static const char *const builtin_values[] = { "Nat", "Int", "STRING", "BOOLEAN", "Real", NULL };

static bool is_seq_set(const char *name, uint32_t nargs) { return nargs == 1 && !strcmp(name, "Seq"); }

int resolve(struct interp *in, struct ctx c, const struct ast *at, const char *name, uint32_t nargs,
	    struct resolved *r)
{
	memset(r, 0, sizeof(*r));
	for (struct binding *b = c.env; b; b = b->next) {
		if (b->name != name)
			continue;
		if (b->op) {
			r->kind = R_CLOSURE;
			r->op = b->op;
		} else {
			r->kind = R_VALUE;
			r->val = b->val;
		}
		return 0;
	}
	const char *bang = strchr(name, '!');
	if (bang) {
		const char *iname = spec_intern(in->spec, name, (size_t)(bang - name));
		const char *oname = spec_intern(in->spec, bang + 1, strlen(bang + 1));
		struct symbol *s = iname ? module_lookup(c.mod, iname) : NULL;
		if (!s || s->kind != SYM_INSTANCE)
			return ev_fail(&in->ev, at, "%.*s is not an instance (in %s!...)", (int)(bang - name), name, name);
		struct ctx ic = { NULL, s->inst->mod, NULL, c.primed };
		int rc = resolve(in, ic, at, oname, nargs, r);
		if (!rc && r->kind == R_NONE)
			return ev_fail(&in->ev, at, "%s is not defined in module %s", oname, s->inst->mod->name);
		return rc;
	}
	struct symbol *s = module_lookup(c.mod, name);
	if (s) {
		r->mod = s->def ? s->def->module : c.mod;
		switch (s->kind) {
		case SYM_DEF:
			r->kind = R_DEF;
			r->def = s->def;
			return 0;
		case SYM_CONST:
		case SYM_VAR: {
			struct instance *inst = s->module->subst;
			if (inst) {
				/* A constant or variable of an instantiated module: what WITH says, or the
				 * same name in the instantiating module. */
				for (uint32_t i = 0; i < inst->n; i++) {
					if (inst->from[i] == name) {
						r->kind = R_CONST; /* marker; subst tells */
						r->subst = inst->to[i];
						r->subst_mod = inst->in;
						return 0;
					}
				}
				struct ctx outer = { NULL, inst->in, NULL, c.primed };
				return resolve(in, outer, at, name, nargs, r);
			}
			r->kind = s->kind == SYM_CONST ? R_CONST : R_VAR;
			r->index = s->index;
			return 0;
		}
		case SYM_INSTANCE:
			return ev_fail(&in->ev, at, "%s is an instance: use %s!Name", name, name);
		case SYM_BUILTIN:
			break;
		}
	}
	for (const char *const *bv = builtin_values; *bv; bv++) {
		if ((!strcmp(*bv, name) && nargs == 0) || is_seq_set(name, nargs)) {
			r->kind = R_BUILTIN;
			return 0;
		}
	}
	const struct builtin *bi = builtin_lookup("", name, nargs);
	for (uint32_t i = 0; !bi && i < c.mod->n_std; i++)
		bi = builtin_lookup(c.mod->std[i], name, nargs);
	if (bi) {
		r->kind = R_BUILTIN;
		r->bi = bi;
		return 0;
	}
	r->kind = R_NONE;
	return 0;
}

/* Binds a definition's parameters to the arguments and returns the context of its body. */
int apply_def(struct interp *in, struct ctx c, const struct ast *at, struct opdef *d, struct module *m,
	      struct binding *closure_env, const struct ast *const *args, uint32_t nargs, struct ctx *body)
{
	if (nargs != d->n_params)
		return ev_fail(&in->ev, at, "%s takes %u argument%s, %u given", d->name, d->n_params,
			       d->n_params == 1 ? "" : "s", nargs);
	struct binding *env = closure_env;
	for (uint32_t i = 0; i < nargs; i++) {
		if (d->param_arity[i] > 0) {
			/* An operator argument: a name of an operator, or a LAMBDA. */
			struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
			if (!cl)
				return oom(in, at);
			memset(cl, 0, sizeof(*cl));
			const struct ast *arg = args[i];
			if (arg->kind == A_LAMBDA) {
				cl->lambda = arg;
				cl->env = c.env;
				cl->mod = c.mod;
			} else if (arg->kind == A_NAME && arg->n == 0) {
				struct resolved r;
				if (resolve(in, c, arg, arg->name, d->param_arity[i], &r))
					return EVAL_ERR;
				if (r.kind == R_CLOSURE) {
					cl = r.op;
				} else if (r.kind == R_DEF) {
					cl->def = r.def;
					cl->mod = r.mod;
				} else if (r.kind == R_BUILTIN && r.bi) {
					/* A builtin passed as an operator: wrap it as a LAMBDA-less call. */
					return ev_fail(&in->ev, arg, "passing the builtin %s as an operator argument is not supported", arg->name);
				} else {
					return ev_fail(&in->ev, arg, "%s is not an operator (argument %u of %s)", arg->name, i + 1, d->name);
				}
			} else {
				return ev_fail(&in->ev, arg, "argument %u of %s must be an operator name or a LAMBDA", i + 1, d->name);
			}
			if (!(env = bind_op(in, env, d->params[i], cl)))
				return oom(in, at);
		} else {
			spt_val *v;
			if (eval(in, c, args[i], &v))
				return EVAL_ERR;
			if (!(env = bind_value(in, env, d->params[i], v)))
				return oom(in, at);
		}
	}
	*body = (struct ctx){ env, m, NULL, c.primed };
	return 0;
}

static int eval_set(struct interp *in, struct ctx c, const struct ast *e, spt_val **out);

/* Materializes a function definition f[x \in S] == e. */
static int fun_def_value(struct interp *in, struct ctx c, const struct ast *at, struct opdef *d,
			 struct binding *env, struct module *m, spt_val **out);

static int call_closure(struct interp *in, struct ctx c, const struct ast *at, struct closure *cl,
			const struct ast *const *args, uint32_t n, spt_val **out)
{
	struct ctx body;
	if (cl->lambda) {
		const struct ast *l = cl->lambda;
		if (n != l->n_params)
			return ev_fail(&in->ev, at, "the LAMBDA takes %u arguments, %u given", l->n_params, n);
		struct binding *env = cl->env;
		for (uint32_t i = 0; i < n; i++) {
			spt_val *v;
			if (eval(in, c, args[i], &v))
				return EVAL_ERR;
			if (!(env = bind_value(in, env, l->params[i], v)))
				return oom(in, at);
		}
		body = (struct ctx){ env, cl->mod, NULL, c.primed };
		return eval(in, body, l->a[0], out);
	}
	if (apply_def(in, c, at, cl->def, cl->mod, cl->env, args, n, &body))
		return EVAL_ERR;
	return eval(in, body, cl->def->body, out);
}

static int name(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	struct resolved r;
	if (resolve(in, c, e, e->name, e->n, &r))
		return EVAL_ERR;
	const struct ast *const *args = (const struct ast *const *)e->a;
	switch (r.kind) {
	case R_VALUE:
		if (e->n)
			return ev_fail(&in->ev, e, "%s is a value, not an operator", e->name);
		*out = r.val;
		return 0;
	case R_CLOSURE:
		if (r.op->def && r.op->def->n_fbounds) {
			/* A function defined in a LET: f[x \in S] == ... */
			if (e->n)
				return ev_fail(&in->ev, e, "%s is a function: write %s[...]", e->name, e->name);
			return fun_def_value(in, c, e, r.op->def, r.op->env, r.op->mod, out);
		}
		return call_closure(in, c, e, r.op, args, e->n, out);
	case R_DEF: {
		if (r.def->n_fbounds) {
			if (e->n)
				return ev_fail(&in->ev, e, "%s is a function: write %s[...]", e->name, e->name);
			return fun_def_value(in, c, e, r.def, NULL, r.def->module, out);
		}
		struct ctx body;
		if (apply_def(in, c, e, r.def, r.mod, NULL, args, e->n, &body))
			return EVAL_ERR;
		return eval(in, body, r.def->body, out);
	}
	case R_CONST:
		if (r.subst) {
			struct ctx sc = { NULL, r.subst_mod, NULL, c.primed };
			return eval(in, sc, r.subst, out);
		}
		if (in->const_ops[r.index])
			return call_closure(in, c, e, in->const_ops[r.index], args, e->n, out);
		if (!in->consts[r.index])
			return ev_fail(&in->ev, e, "the constant %s has no value (give it in the .cfg)", e->name);
		*out = in->consts[r.index];
		return 0;
	case R_VAR: {
		bool from_next = c.primed || in->init_mode;
		spt_val *v = from_next ? in->next[r.index] : in->cur[r.index];
		if (!v) {
			if (in->init_mode)
				return ev_fail(&in->ev, e, "%s is used before Init assigns it", e->name);
			return ev_fail(&in->ev, e, c.primed ? "%s' is used before it is assigned" : "the value of %s is unknown in this state", e->name);
		}
		*out = v;
		return 0;
	}
	case R_BUILTIN: {
		if (!r.bi && !strcmp(e->name, "BOOLEAN")) {
			spt_val *tf[2] = { spt_bool(A(in), false), spt_bool(A(in), true) };
			*out = tf[0] && tf[1] ? spt_set(A(in), tf, 2) : NULL;
			return *out ? 0 : oom(in, e);
		}
		if (!r.bi)
			return ev_fail(&in->ev, e, "%s is an infinite set: it can only appear right of \\in or \\notin", e->name);
		spt_val *argv[16];
		if (e->n > 16)
			return ev_fail(&in->ev, e, "too many arguments to %s", e->name);
		for (uint32_t i = 0; i < e->n; i++)
			if (eval(in, c, e->a[i], &argv[i]))
				return EVAL_ERR;
		return r.bi->fn(&in->ev, e, argv, e->n, out);
	}
	case R_NONE:
		break;
	}
	return ev_fail(&in->ev, e, "unknown name %s%s", e->name, e->n ? " (with these arguments)" : "");
}

/* ---- sets and bounds ---- */

struct bind_state {
	const struct bound *b;
	uint32_t nb;
	bind_fn fn;
	void *arg;
	spt_val **sets;
};

static int bind_rec(struct interp *in, struct ctx c, struct bind_state *st, uint32_t i)
{
	if (i == st->nb)
		return st->fn(in, c, st->arg);
	const struct bound *b = &st->b[i];
	spt_val *s = st->sets[i];
	for (uint32_t k = 0; k < s->n; k++) {
		spt_val *x = s->u.elems[k];
		struct ctx cc = c;
		if (b->tuple) {
			if (x->kind != SPT_SEQ || x->n != b->n_names)
				return ev_fail(&in->ev, b->set, "%s is not a tuple of %u elements", ev_show(&in->ev, x), b->n_names);
			for (uint32_t j = 0; j < b->n_names; j++)
				if (!(cc.env = bind_value(in, cc.env, b->names[j], x->u.elems[j])))
					return oom(in, b->set);
		} else {
			if (!(cc.env = bind_value(in, cc.env, b->names[0], x)))
				return oom(in, b->set);
		}
		int rc;
		if (!b->tuple && b->n_names > 1) {
			/* Expand x, y \in S into nested bounds over the same set. */
			struct bound rest = *b;
			rest.names++;
			rest.n_names--;
			struct bound *nb = spt_arena_alloc(A(in), (st->nb - i) * sizeof(*nb));
			spt_val **ns = spt_arena_alloc(A(in), (st->nb - i) * sizeof(*ns));
			if (!nb || !ns)
				return oom(in, b->set);
			nb[0] = rest;
			ns[0] = s;
			for (uint32_t j = i + 1; j < st->nb; j++) {
				nb[j - i] = st->b[j];
				ns[j - i] = st->sets[j];
			}
			struct bind_state sub = { nb, st->nb - i, st->fn, st->arg, ns };
			rc = bind_rec(in, cc, &sub, 0);
		} else {
			rc = bind_rec(in, cc, st, i + 1);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int eval_bounds(struct interp *in, struct ctx c, const struct bound *b, uint32_t nb, bind_fn fn, void *arg)
{
	spt_val **sets = spt_arena_alloc(A(in), (nb + 1) * sizeof(*sets));
	if (!sets)
		return oom(in, NULL);
	for (uint32_t i = 0; i < nb; i++)
		if (eval_set(in, c, b[i].set, &sets[i]))
			return EVAL_ERR;
	struct bind_state st = { b, nb, fn, arg, sets };
	return bind_rec(in, c, &st, 0);
}

/* Evaluates e and requires a finite set. */
static int eval_set(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	if (eval(in, c, e, out))
		return EVAL_ERR;
	if ((*out)->kind != SPT_SET)
		return ev_fail(&in->ev, e, "a set was expected, not %s", ev_show(&in->ev, *out));
	return 0;
}

/* Follows zero-argument definitions to the expression they stand for. */
static const struct ast *unfold(struct interp *in, struct ctx *c, const struct ast *e)
{
	for (int guard = 0; guard < 64 && e->kind == A_NAME && e->n == 0; guard++) {
		struct resolved r;
		if (resolve(in, *c, e, e->name, 0, &r) || r.kind != R_DEF || r.def->n_params || r.def->n_fbounds)
			break;
		*c = (struct ctx){ NULL, r.mod, NULL, c->primed };
		e = r.def->body;
	}
	return e;
}

/* Whether every element of x (a set or a sequence) is in set. */
static int all_members(struct interp *in, struct ctx c, spt_val *x, const struct ast *set, bool *out)
{
	*out = true;
	for (uint32_t i = 0; i < x->n && *out; i++)
		if (eval_member(in, c, x->u.elems[i], set, out))
			return EVAL_ERR;
	return 0;
}

int eval_member(struct interp *in, struct ctx c, spt_val *x, const struct ast *set, bool *out)
{
	set = unfold(in, &c, set);
	if (set->kind == A_NAME) {
		struct resolved r;
		if (resolve(in, c, set, set->name, set->n, &r))
			return EVAL_ERR;
		if (r.kind == R_BUILTIN && !r.bi && set->n == 0) {
			const char *n = set->name;
			if (!strcmp(n, "Nat"))
				*out = x->kind == SPT_INT && x->u.i >= 0;
			else if (!strcmp(n, "Int"))
				*out = x->kind == SPT_INT;
			else if (!strcmp(n, "STRING"))
				*out = x->kind == SPT_STR;
			else if (!strcmp(n, "BOOLEAN"))
				*out = x->kind == SPT_BOOL;
			else
				return ev_fail(&in->ev, set, "%s is not supported", n);
			return 0;
		}
		/* x \in Seq(S): a sequence of elements of S; x \in SUBSET S: a set of them. */
		bool seq = !strcmp(set->name, "Seq"), sub = !strcmp(set->name, "SUBSET");
		if (r.kind == R_BUILTIN && set->n == 1 && (seq || sub)) {
			bool shape = seq ? spt_is_fun(x) && (x->n == 0 || x->kind == SPT_SEQ) : x->kind == SPT_SET;
			return shape ? all_members(in, c, x, set->a[0], out) : (*out = false, 0);
		}
	}
	if (set->kind == A_FUNCSET) {
		*out = false;
		if (!spt_is_fun(x))
			return 0;
		spt_val *dom;
		if (eval_set(in, c, set->a[0], &dom))
			return EVAL_ERR;
		if (dom->n != x->n)
			return 0;
		for (uint32_t i = 0; i < x->n; i++) {
			struct spt_value tmp;
			if (!spt_value_eq(spt_fun_key(x, i, &tmp), dom->u.elems[i]))
				return 0;
			bool m;
			if (eval_member(in, c, spt_fun_val(x, i), set->a[1], &m))
				return EVAL_ERR;
			if (!m)
				return 0;
		}
		*out = true;
		return 0;
	}
	if (set->kind == A_RECSET) {
		*out = false;
		if (!spt_is_fun(x) || x->n != set->n || (x->n && x->kind != SPT_REC))
			return 0;
		for (uint32_t i = 0; i < set->n; i++) {
			spt_val *f = spt_rec_get(x, set->fields[i]);
			bool m;
			if (!f)
				return 0;
			if (eval_member(in, c, f, set->a[i], &m))
				return EVAL_ERR;
			if (!m)
				return 0;
		}
		*out = true;
		return 0;
	}
	spt_val *s;
	if (eval_set(in, c, set, &s))
		return EVAL_ERR;
	*out = spt_set_find(s, x) >= 0;
	return 0;
}

/* ---- constructors ---- */

struct collect {
	const struct ast *body;
	spt_val **items;
	size_t n, cap;
	int mode; /* 0: map {e : ...}, 1: filter {x \in S : P}, 2: function [x \in S |-> e] */
	const struct bound *b;
	uint32_t nb;
	spt_val **keys;
};

static int push(struct interp *in, struct collect *k, spt_val *v, spt_val *key)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		spt_val **items = spt_arena_alloc(A(in), cap * sizeof(*items));
		spt_val **keys = spt_arena_alloc(A(in), cap * sizeof(*keys));
		if (!items || !keys)
			return oom(in, k->body);
		if (k->n) {
			memcpy(items, k->items, k->n * sizeof(*items));
			memcpy(keys, k->keys, k->n * sizeof(*keys));
		}
		k->items = items;
		k->keys = keys;
		k->cap = cap;
	}
	if (k->n >= MAX_ENUM)
		return ev_fail(&in->ev, k->body, "more than %u elements", MAX_ENUM);
	k->keys[k->n] = key;
	k->items[k->n++] = v;
	return 0;
}

/* The value the bound names of b take in c, as a key: x, or <<x, y>> for several. */
static spt_val *bound_key(struct interp *in, struct ctx c, const struct bound *b, uint32_t nb)
{
	spt_val *parts[64];
	uint32_t n = 0;
	for (uint32_t i = 0; i < nb; i++) {
		for (uint32_t j = 0; j < b[i].n_names && n < 64; j++) {
			for (struct binding *x = c.env; x; x = x->next) {
				if (x->name == b[i].names[j]) {
					parts[n++] = x->val;
					break;
				}
			}
		}
	}
	bool tuple_bound = nb == 1 && b[0].tuple;
	if (n == 1 && !tuple_bound)
		return parts[0];
	return spt_seq(A(in), parts, n);
}

static int collect_one(struct interp *in, struct ctx c, void *arg)
{
	struct collect *k = arg;
	if (k->mode == 1) {
		bool keep;
		if (eval_bool(in, c, k->body, &keep))
			return EVAL_ERR;
		return keep ? push(in, k, bound_key(in, c, k->b, k->nb), NULL) : 0;
	}
	spt_val *v;
	if (eval(in, c, k->body, &v))
		return EVAL_ERR;
	return push(in, k, v, k->mode == 2 ? bound_key(in, c, k->b, k->nb) : NULL);
}

static int constructor(struct interp *in, struct ctx c, const struct ast *e, int mode, spt_val **out)
{
	struct collect k = { .body = e->a[0], .mode = mode, .b = e->bounds, .nb = e->n_bounds };
	if (eval_bounds(in, c, e->bounds, e->n_bounds, collect_one, &k))
		return EVAL_ERR;
	if (mode == 2) {
		bool dup;
		*out = spt_fun(A(in), k.keys, k.items, k.n, &dup);
		if (!*out && !dup)
			return oom(in, e);
		if (!*out) /* the same argument bound twice: keep TLC's first-wins by rebuilding */
			return ev_fail(&in->ev, e, "the function's domain lists an argument twice");
		return 0;
	}
	*out = spt_set(A(in), k.items, k.n);
	return *out ? 0 : oom(in, e);
}

static int fun_def_value(struct interp *in, struct ctx c, const struct ast *at, struct opdef *d,
			 struct binding *env, struct module *m, spt_val **out)
{
	struct ast tmp = { .kind = A_FUNC, .pos = d->pos, .n = 1, .a = (struct ast *[]){ d->body },
			   .bounds = d->fbounds, .n_bounds = d->n_fbounds };
	struct ctx dc = { env, m, NULL, c.primed };
	if (++depth > MAX_DEPTH) {
		depth--;
		return ev_fail(&in->ev, at, "recursion deeper than %d evaluating %s", MAX_DEPTH, d->name);
	}
	int rc = constructor(in, dc, &tmp, 2, out);
	depth--;
	return rc;
}

/* All functions from dom to the set vals (both finite), for enumeration. */
static int funcset(struct interp *in, const struct ast *at, spt_val *dom, spt_val *vals, spt_val **out)
{
	double total = 1;
	for (uint32_t i = 0; i < dom->n; i++)
		total *= vals->n;
	if (total > MAX_ENUM)
		return ev_fail(&in->ev, at, "[S -> T] has %.0f elements: too many to enumerate", total);
	size_t n = (size_t)total;
	spt_val **items = spt_arena_alloc(A(in), (n + 1) * sizeof(*items));
	uint32_t *idx = calloc(dom->n + 1, sizeof(*idx));
	if (!items || !idx) {
		free(idx);
		return oom(in, at);
	}
	for (size_t k = 0; k < n; k++) {
		spt_val **v = spt_arena_alloc(A(in), (dom->n + 1) * sizeof(*v));
		if (!v) {
			free(idx);
			return oom(in, at);
		}
		for (uint32_t i = 0; i < dom->n; i++)
			v[i] = vals->u.elems[idx[i]];
		items[k] = spt_fun(A(in), dom->u.elems, v, dom->n, NULL);
		for (uint32_t i = dom->n; i-- > 0;) { /* odometer */
			if (++idx[i] < vals->n)
				break;
			idx[i] = 0;
		}
	}
	free(idx);
	*out = spt_set(A(in), items, n);
	return *out ? 0 : oom(in, at);
}

static int recset(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	spt_val **sets = spt_arena_alloc(A(in), (e->n + 1) * sizeof(*sets));
	if (!sets)
		return oom(in, e);
	double total = 1;
	for (uint32_t i = 0; i < e->n; i++) {
		if (eval_set(in, c, e->a[i], &sets[i]))
			return EVAL_ERR;
		total *= sets[i]->n;
	}
	if (total > MAX_ENUM)
		return ev_fail(&in->ev, e, "the set of records has %.0f elements: too many to enumerate", total);
	size_t n = (size_t)total;
	spt_val **items = spt_arena_alloc(A(in), (n + 1) * sizeof(*items));
	uint32_t idx[64] = { 0 };
	if (!items || e->n > 64)
		return oom(in, e);
	for (size_t k = 0; k < n; k++) {
		spt_val **v = spt_arena_alloc(A(in), (e->n + 1) * sizeof(*v));
		if (!v)
			return oom(in, e);
		for (uint32_t i = 0; i < e->n; i++)
			v[i] = sets[i]->u.elems[idx[i]];
		if (!(items[k] = spt_rec(A(in), e->fields, v, e->n)))
			return ev_fail(&in->ev, e, "a field is named twice");
		for (uint32_t i = e->n; i-- > 0;) {
			if (++idx[i] < sets[i]->n)
				break;
			idx[i] = 0;
		}
	}
	*out = spt_set(A(in), items, n);
	return *out ? 0 : oom(in, e);
}

/* ---- functions ---- */

static int apply(struct interp *in, const struct ast *at, spt_val *f, spt_val *key, spt_val **out)
{
	if (!spt_is_fun(f))
		return ev_fail(&in->ev, at, "%s is not a function, it cannot be applied to %s",
			       ev_show(&in->ev, f), ev_show(&in->ev, key));
	*out = (spt_val *)spt_fun_apply(f, key);
	if (!*out) {
		return ev_fail(&in->ev, at, "%s is not in the domain of the function %s", ev_show(&in->ev, key),
			       ev_show(&in->ev, f));
	}
	return 0;
}

static int fn_args(struct interp *in, struct ctx c, const struct ast *const *args, uint32_t n, spt_val **key)
{
	if (n == 1)
		return eval(in, c, args[0], key);
	spt_val *parts[32];
	if (n > 32)
		return ev_fail(&in->ev, args[0], "too many function arguments");
	for (uint32_t i = 0; i < n; i++)
		if (eval(in, c, args[i], &parts[i]))
			return EVAL_ERR;
	*key = spt_seq(A(in), parts, n);
	return *key ? 0 : oom(in, args[0]);
}

/* f with f[key] replaced by v (key must be in DOMAIN f). */
static int fun_replace(struct interp *in, const struct ast *at, spt_val *f, spt_val *key, spt_val *v, spt_val **out)
{
	if (!spt_is_fun(f))
		return ev_fail(&in->ev, at, "EXCEPT on %s, which is not a function", ev_show(&in->ev, f));
	for (uint32_t i = 0; i < f->n; i++) {
		struct spt_value tmp;
		if (!spt_value_eq(spt_fun_key(f, i, &tmp), key))
			continue;
		if (f->kind == SPT_SEQ) {
			spt_val **e = spt_arena_alloc(A(in), f->n * sizeof(*e));
			if (!e)
				return oom(in, at);
			memcpy(e, f->u.elems, f->n * sizeof(*e));
			e[i] = v;
			*out = spt_seq_adopt(A(in), e, f->n);
		} else {
			spt_val **k = spt_arena_alloc(A(in), f->n * sizeof(*k));
			spt_val **x = spt_arena_alloc(A(in), f->n * sizeof(*x));
			if (!k || !x)
				return oom(in, at);
			memcpy(k, f->u.fn.keys, f->n * sizeof(*k));
			memcpy(x, f->u.fn.vals, f->n * sizeof(*x));
			x[i] = v;
			*out = spt_fun_adopt(A(in), k, x, f->n, NULL);
		}
		return *out ? 0 : oom(in, at);
	}
	/* TLC: EXCEPT outside the domain leaves the function unchanged. */
	*out = f;
	return 0;
}

static int except_path(struct interp *in, struct ctx c, const struct except_upd *u, uint32_t k, spt_val *base,
		       spt_val **out)
{
	if (k == u->n_steps) {
		struct ctx vc = c;
		vc.at = base;
		return eval(in, vc, u->value, out);
	}
	const struct except_step *st = &u->steps[k];
	spt_val *key, *child, *nv;
	if (st->field) {
		if (!(key = spt_cstr(A(in), st->name)))
			return oom(in, u->value);
	} else if (fn_args(in, c, (const struct ast *const *)st->args, st->n_args, &key)) {
		return EVAL_ERR;
	}
	child = spt_is_fun(base) ? (spt_val *)spt_fun_apply(base, key) : NULL;
	if (!child) {
		*out = base; /* outside the domain: unchanged, as TLC */
		return spt_is_fun(base) ? 0 : ev_fail(&in->ev, u->value, "EXCEPT on %s, which is not a function", ev_show(&in->ev, base));
	}
	if (except_path(in, c, u, k + 1, child, &nv))
		return EVAL_ERR;
	return fun_replace(in, u->value, base, key, nv, out);
}

/* ---- the evaluator ---- */

int eval_bool(struct interp *in, struct ctx c, const struct ast *e, bool *out)
{
	spt_val *v;
	if (eval(in, c, e, &v))
		return EVAL_ERR;
	if (v->kind != SPT_BOOL)
		return ev_fail(&in->ev, e, "a boolean was expected, not %s", ev_show(&in->ev, v));
	*out = v->u.b;
	return 0;
}

static int quantify(struct interp *in, struct ctx c, void *arg)
{
	const struct ast *e = arg;
	bool b = false;
	if (eval_bool(in, c, e->a[0], &b))
		return EVAL_ERR;
	/* 1 stops the enumeration: a witness for \E, a counterexample for \A. */
	return (e->kind == A_EXISTS) == b ? 1 : 0;
}

struct choose_st {
	const struct ast *e;
	spt_val *found;
};

static int choose_one(struct interp *in, struct ctx c, void *arg)
{
	struct choose_st *st = arg;
	bool b;
	if (eval_bool(in, c, st->e->a[0], &b))
		return EVAL_ERR;
	if (!b)
		return 0;
	st->found = bound_key(in, c, st->e->bounds, 1);
	return 1;
}

static int eval_name_special(struct interp *in, struct ctx c, const struct ast *e, spt_val **out, bool *done)
{
	*done = true;
	const char *n = e->name;
	if (e->n == 2 && (!strcmp(n, "=>"))) {
		bool a, b = true;
		if (eval_bool(in, c, e->a[0], &a) || (a && eval_bool(in, c, e->a[1], &b)))
			return EVAL_ERR;
		*out = spt_bool(A(in), !a || b);
		return *out ? 0 : oom(in, e);
	}
	if (e->n == 2 && (!strcmp(n, "\\in") || !strcmp(n, "\\notin"))) {
		spt_val *x;
		bool m;
		if (eval(in, c, e->a[0], &x) || eval_member(in, c, x, e->a[1], &m))
			return EVAL_ERR;
		*out = spt_bool(A(in), n[1] == 'i' ? m : !m);
		return *out ? 0 : oom(in, e);
	}
	*done = false;
	return 0;
}

static int eval_operands(struct interp *in, struct ctx c, const struct ast *e, spt_val ***out)
{
	spt_val **v = spt_arena_alloc(A(in), (e->n + 1) * sizeof(*v));
	if (!v)
		return oom(in, e);
	for (uint32_t i = 0; i < e->n; i++)
		if (eval(in, c, e->a[i], &v[i]))
			return EVAL_ERR;
	*out = v;
	return 0;
}

int eval(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	if (++in->steps > in->max_steps && in->max_steps)
		return ev_fail(&in->ev, e, "evaluation budget of %llu steps exhausted", (unsigned long long)in->max_steps);
	if (++depth > MAX_DEPTH || stack_exhausted()) {
		depth--;
		return ev_fail(&in->ev, e, "evaluation nested too deeply (%d levels): unbounded recursion?", depth);
	}
	int rc = 0;
	switch (e->kind) {
	case A_NUM:
		*out = spt_int(A(in), e->num);
		break;
	case A_STR:
		*out = e->str;
		break;
	case A_BOOL:
		*out = spt_bool(A(in), e->num != 0);
		break;
	case A_NAME: {
		bool done;
		if (!(rc = eval_name_special(in, c, e, out, &done)) && !done)
			rc = name(in, c, e, out);
		break;
	}
	case A_PRIME: {
		if (c.primed) {
			rc = ev_fail(&in->ev, e, "a primed expression inside a primed expression");
			break;
		}
		struct ctx pc = c;
		pc.primed = true;
		rc = eval(in, pc, e->a[0], out);
		break;
	}
	case A_AND:
	case A_OR: {
		bool want = e->kind == A_OR, b = !want;
		for (uint32_t i = 0; i < e->n && !rc && b != want; i++)
			rc = eval_bool(in, c, e->a[i], &b);
		if (!rc)
			*out = spt_bool(A(in), b);
		break;
	}
	case A_IF: {
		bool b;
		if (!(rc = eval_bool(in, c, e->a[0], &b)))
			rc = eval(in, c, e->a[b ? 1 : 2], out);
		break;
	}
	case A_CASE: {
		uint32_t arms = (e->n - e->has_other) / 2;
		for (uint32_t i = 0; i < arms; i++) {
			bool b;
			if ((rc = eval_bool(in, c, e->a[2 * i], &b)))
				goto done;
			if (b) {
				rc = eval(in, c, e->a[2 * i + 1], out);
				goto done;
			}
		}
		if (e->has_other)
			rc = eval(in, c, e->a[e->n - 1], out);
		else
			rc = ev_fail(&in->ev, e, "no CASE arm is true, and there is no OTHER");
		break;
	}
	case A_LET: {
		struct ctx lc = c;
		for (uint32_t i = 0; i < e->n_defs; i++) {
			struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
			if (!cl) {
				rc = oom(in, e);
				goto done;
			}
			/* The LET's own environment: its definitions see each other (and themselves). */
			*cl = (struct closure){ e->defs[i], NULL, NULL, c.mod };
			if (!(lc.env = bind_op(in, lc.env, e->defs[i]->name, cl))) {
				rc = oom(in, e);
				goto done;
			}
		}
		for (struct binding *b = lc.env; b != c.env; b = b->next)
			b->op->env = lc.env;
		/* Zero-argument LET definitions are values: evaluate them lazily through closures. */
		rc = eval(in, lc, e->a[0], out);
		break;
	}
	case A_CHOOSE: {
		struct choose_st st = { e, NULL };
		rc = eval_bounds(in, c, e->bounds, 1, choose_one, &st);
		if (rc == 1)
			rc = 0, *out = st.found;
		else if (!rc)
			rc = ev_fail(&in->ev, e, "CHOOSE found no element that satisfies the predicate");
		break;
	}
	case A_EXISTS:
	case A_FORALL: {
		rc = eval_bounds(in, c, e->bounds, e->n_bounds, quantify, (void *)e);
		if (rc >= 0) {
			bool found = rc == 1;
			*out = spt_bool(A(in), e->kind == A_EXISTS ? found : !found);
			rc = 0;
		}
		break;
	}
	case A_SET: {
		spt_val **items;
		if (!(rc = eval_operands(in, c, e, &items)) && !(*out = spt_set(A(in), items, e->n)))
			rc = oom(in, e);
		break;
	}
	case A_FILTER:
		rc = constructor(in, c, e, 1, out);
		break;
	case A_MAP:
		rc = constructor(in, c, e, 0, out);
		break;
	case A_FUNC:
		rc = constructor(in, c, e, 2, out);
		break;
	case A_FUNCSET: {
		spt_val *d, *r;
		if (!(rc = eval_set(in, c, e->a[0], &d)) && !(rc = eval_set(in, c, e->a[1], &r)))
			rc = funcset(in, e, d, r, out);
		break;
	}
	case A_APPLY: {
		/* f[x] for a function definition: evaluate the body at x (recursion without building f). */
		const struct ast *f = e->a[0];
		spt_val *key;
		if (f->kind == A_NAME && f->n == 0) {
			struct resolved r;
			if ((rc = resolve(in, c, f, f->name, 0, &r)))
				break;
			/* a module-level function definition, or one in a LET (a closure) */
			struct opdef *fd = r.kind == R_DEF ? r.def : r.kind == R_CLOSURE ? r.op->def : NULL;
			if (fd && fd->n_fbounds == 1 && fd->fbounds[0].n_names == 1 && !fd->fbounds[0].tuple) {
				if ((rc = fn_args(in, c, (const struct ast *const *)e->a + 1, e->n - 1, &key)))
					break;
				struct ctx dc = { NULL, fd->module, NULL, c.primed };
				if (r.kind == R_CLOSURE) {
					dc.env = r.op->env;
					dc.mod = r.op->mod;
				}
				bool m;
				if ((rc = eval_member(in, dc, key, fd->fbounds[0].set, &m)))
					break;
				if (!m) {
					rc = ev_fail(&in->ev, e, "%s is not in the domain of %s", ev_show(&in->ev, key), f->name);
					break;
				}
				if (!(dc.env = bind_value(in, dc.env, fd->fbounds[0].names[0], key))) {
					rc = oom(in, e);
					break;
				}
				rc = eval(in, dc, fd->body, out);
				break;
			}
		}
		spt_val *fv;
		if (!(rc = eval(in, c, f, &fv)) && !(rc = fn_args(in, c, (const struct ast *const *)e->a + 1, e->n - 1, &key)))
			rc = apply(in, e, fv, key, out);
		break;
	}
	case A_RECORD: {
		spt_val **v;
		if (!(rc = eval_operands(in, c, e, &v)) && !(*out = spt_rec(A(in), e->fields, v, e->n)))
			rc = ev_fail(&in->ev, e, "a record field is named twice");
		break;
	}
	case A_RECSET:
		rc = recset(in, c, e, out);
		break;
	case A_FIELD: {
		spt_val *r;
		if ((rc = eval(in, c, e->a[0], &r)))
			break;
		*out = r->kind == SPT_REC ? (spt_val *)spt_rec_get(r, e->name) : NULL;
		if (!*out)
			rc = ev_fail(&in->ev, e, "%s has no field %s", ev_show(&in->ev, r), e->name);
		break;
	}
	case A_TUPLE: {
		spt_val **v;
		if (!(rc = eval_operands(in, c, e, &v)) && !(*out = spt_seq_adopt(A(in), v, e->n)))
			rc = oom(in, e);
		break;
	}
	case A_EXCEPT: {
		spt_val *f;
		if ((rc = eval(in, c, e->a[0], &f)))
			break;
		for (uint32_t i = 0; i < e->n_excepts && !rc; i++)
			rc = except_path(in, c, &e->excepts[i], 0, f, &f);
		if (!rc)
			*out = f;
		break;
	}
	case A_AT:
		if (!c.at)
			rc = ev_fail(&in->ev, e, "@ outside of an EXCEPT");
		else
			*out = c.at;
		break;
	case A_UNCHANGED: {
		spt_val *now, *then;
		struct ctx pc = c;
		pc.primed = true;
		if (!(rc = eval(in, c, e->a[0], &now)) && !(rc = eval(in, pc, e->a[0], &then)))
			*out = spt_bool(A(in), spt_value_eq(now, then));
		break;
	}
	case A_LAMBDA:
		rc = ev_fail(&in->ev, e, "a LAMBDA can only be an operator argument");
		break;
	case A_STUTTER:
		rc = ev_fail(&in->ev, e, "[A]_v is a temporal formula: it can only be checked as a step");
		break;
	case A_UNSUPPORTED:
		rc = ev_fail(&in->ev, e, "%s", e->name);
		break;
	}
done:
	depth--;
	if (!rc && !*out)
		rc = oom(in, e);
	return rc;
}
