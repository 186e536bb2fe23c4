/* Name resolution, frame layout, levels and cacheability (resolve.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "frames.h"
#include "hoist.h"
#include "resolve.h"

/* A name bound in a frame: a parameter, a bound variable or a LET definition. */
struct rname {
	const char *name;
	uint32_t slot;
	uint32_t arity;          /* operator parameters and LET operators: their arguments */
	bool op;                 /* an operator (parameter F(_) or LET definition with parameters) */
	struct opdef *letdef;    /* a LET definition */
};

/* One frame being laid out: a definition's body, or a LET definition's, or a LAMBDA's. */
struct rscope {
	struct rscope *outer;    /* the frame a nested definition is made in */
	struct opdef *owner;
	struct opdef *top;       /* the module-level definition it belongs to (recursion groups) */
	struct module *mod;
	struct rname *names;
	uint32_t n, cap;
	uint32_t next, max;      /* next free slot, frame size so far */
	struct instance *params_of; /* the parameters of I(x) == INSTANCE M (its substitutions' outer frame) */
};

/* Op!k: a definition standing for the k-th conjunct (or disjunct) of Op's body. */
struct selected {
	struct opdef *d, *of;
};

/* I!Op of a parameterized instance I, with n arguments in all: the synthesized definition. */
struct synthesized {
	struct instance *inst;
	const char *op;
	uint32_t n;
	struct opdef *d;
};

struct resolver {
	struct spec *spec;
	const struct cfg *cfg;
	struct spec_error *err;
	bool failed;
	int depth;
	struct selected *sel;
	uint32_t n_sel;
	bool direct;     /* resolving the Op of an I!Op reference (the instance's own copy of Op) */
	struct synthesized *syn;
	uint32_t n_syn;
	bool late;       /* an expression resolved after the spec (spec_resolve_expr) */
};

#define MAX_RESOLVE_DEPTH 20000

__attribute__((format(printf, 3, 4))) static int rfail(struct resolver *R, const struct ast *at, const char *fmt, ...)
{
	if (R->failed)
		return -EINVAL;
	R->failed = true;
	R->err->pos = at ? at->pos : (struct src_pos){ 0 };
	R->err->excerpt[0] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(R->err->msg, sizeof(R->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int push_name(struct rscope *sc, struct rname n)
{
	if (sc->n == sc->cap) {
		uint32_t cap = sc->cap ? sc->cap * 2 : 16;
		struct rname *a = realloc(sc->names, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		sc->names = a;
		sc->cap = cap;
	}
	sc->names[sc->n++] = n;
	return 0;
}

static uint32_t new_slot(struct rscope *sc)
{
	uint32_t s = sc->next++;
	if (sc->next > sc->max)
		sc->max = sc->next;
	return s;
}

/* The module a standard module's operator names are looked up in: where its std list is. */
static const struct builtin *find_builtin(struct module *m, const char *name, uint32_t nargs, const struct builtin **any)
{
	*any = NULL;
	const struct builtin *b = builtin_lookup("", name, nargs);
	if (!*any)
		*any = builtin_lookup_any("", name);
	for (uint32_t i = 0; !b && i < m->n_std; i++) {
		b = builtin_lookup(m->std[i], name, nargs);
		if (!*any)
			*any = builtin_lookup_any(m->std[i], name);
	}
	return b;
}

static const struct {
	const char *name;
	enum builtin_set set;
} builtin_sets[] = { { "Nat", BS_NAT }, { "Int", BS_INT }, { "Real", BS_REAL }, { "STRING", BS_STRING }, { "BOOLEAN", BS_BOOLEAN } };

static int res_expr(struct resolver *R, struct rscope *sc, struct ast *e);
static int res_def(struct resolver *R, struct opdef *d, struct rscope *outer, struct module *m);

/* The cfg's override of a definition named name, if any: a value or another definition. */
static const struct cfg_const *cfg_override(struct resolver *R, const char *name)
{
	if (!R->cfg)
		return NULL;
	for (uint32_t i = 0; i < R->cfg->n_consts; i++)
		if (R->cfg->consts[i].name == name)
			return &R->cfg->consts[i];
	return NULL;
}

/* Whether the root module extends a module of this name (directly or through others). */
static bool extends_named(const struct module *m, const char *name, int depth)
{
	if (!m || depth > 32)
		return false;
	if (m->name && !strcmp(m->name, name))
		return true;
	for (uint32_t i = 0; i < m->n_ext; i++)
		if (extends_named(m->ext[i], name, depth + 1))
			return true;
	return false;
}

static bool in_root_closure(struct resolver *R, const char *name)
{
	return extends_named(spec_root(R->spec), name, 0);
}

static int bind_def(struct resolver *R, struct ast *e, struct opdef *d, uint32_t nargs, const char *name)
{
	/* As TLC, whose override replaces a module's definition wherever that module's bodies name
	 * it: a plain cfg entry, the definitions of the root and the modules it extends (also as an
	 * instance of one of those names them: etcd!Init's InitServerVars), but not the Op of an
	 * I!Op reference (the instance's own copy: CC!ShouldReplaceLease); [M] (Ballot <-
	 * [Voting]MCBallot), module M's, however named. */
	const struct cfg_const *o = NULL;
	bool instantiated = d->module && d->module->subst;
	bool reached = !instantiated || (!R->direct && d->module->name && in_root_closure(R, d->module->name));
	for (uint32_t i = 0; R->cfg && i < R->cfg->n_consts && !o; i++) {
		const struct cfg_const *k = &R->cfg->consts[i];
		if (k->name != d->name)
			continue;
		if (k->module ? d->module && d->module->name && !strcmp(k->module, d->module->name) : reached)
			o = k;
	}
	if (o && o->value) {
		if (d->n_params)
			return rfail(R, e, "the cfg gives %s a value, but it takes %u arguments", name, d->n_params);
		e->ref = REF_VALUE;
		e->r.val = o->value;
		return nargs ? rfail(R, e, "%s is given a value in the cfg: it takes no arguments", name) : 0;
	}
	if (o && o->op) {
		struct symbol *s = module_lookup(spec_root(R->spec), o->op);
		if (!s || s->kind != SYM_DEF)
			return rfail(R, e, "the cfg replaces %s by %s, which is not a definition of the spec", name, o->op);
		if (s->def->n_params != d->n_params)
			return rfail(R, e, "the cfg replaces %s (%u arguments) by %s, which takes %u", name, d->n_params, o->op,
				     s->def->n_params);
		d = s->def;
	}
	if (d->n_fbounds) {
		if (nargs)
			return rfail(R, e, "%s is a function: write %s[...]", name, name);
	} else if (nargs != d->n_params) {
		return rfail(R, e, "%s takes %u argument%s, %u given", name, d->n_params, d->n_params == 1 ? "" : "s", nargs);
	}
	e->ref = REF_DEF;
	e->r.def = d;
	return 0;
}

static int res_global(struct resolver *R, struct module *m, struct ast *e, const char *name, uint32_t nargs, int depth);

/* name ends in !k (digits): Op!2!1 selects into Op's body. 1 when it does (e resolved), 0 when
 * name is no such reference, or an error. */
static int res_selector(struct resolver *R, struct module *m, struct ast *e, const char *name, uint32_t nargs,
			int depth)
{
	size_t len = strlen(name), cut = len;
	uint32_t sel[16], ns = 0;
	bool statement = len > 2 && !strcmp(name + len - 2, "!:"); /* T!: is T's statement: T itself here */
	if (statement) {
		const char *base = spec_intern(R->spec, name, len - 2);
		int rc = res_global(R, m, e, base, nargs, depth + 1);
		return rc ? rc : 1;
	}
	for (;;) {
		size_t k = cut;
		while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
			k--;
		if (k == cut || k < 2 || name[k - 1] != '!' || ns == 16)
			break;
		sel[ns++] = (uint32_t)strtoul(name + k, NULL, 10);
		cut = k - 1;
	}
	if (!ns)
		return 0;
	const char *base = spec_intern(R->spec, name, cut);
	int rc = res_global(R, m, e, base, 0, depth + 1);
	if (rc)
		return rc;
	if (e->ref != REF_DEF)
		return rfail(R, e, "%s: only a definition's conjuncts and disjuncts can be selected (%s is no definition)", name, base);
	struct opdef *d = e->r.def;
	if (d->n_params || d->n_fbounds || nargs)
		return rfail(R, e, "%s: selecting into %s, which takes arguments, is not supported", name, base);
	struct ast *x = d->body;
	for (uint32_t i = ns; i-- > 0;) {
		if ((x->kind != A_AND && x->kind != A_OR) || sel[i] < 1 || sel[i] > x->n)
			return rfail(R, e, "%s: %s has no %u-th conjunct or disjunct there", name, base, sel[i]);
		x = x->a[sel[i] - 1];
	}
	for (uint32_t i = 0; i < R->n_sel; i++)
		if (R->sel[i].d->body == x && R->sel[i].of == d) {
			e->r.def = R->sel[i].d;
			return 1;
		}
	struct opdef *nd = spt_arena_alloc(spec_arena(R->spec), sizeof(*nd));
	struct selected *ns2 = realloc(R->sel, (R->n_sel + 1) * sizeof(*ns2));
	if (!nd || !ns2)
		return rfail(R, e, "out of memory");
	R->sel = ns2;
	*nd = *d;
	nd->name = spec_intern(R->spec, name, len);
	nd->body = x;
	nd->pos = x->pos;
	nd->unchanged = NULL;
	if (spec_add_def(R->spec, nd))
		return rfail(R, e, "out of memory");
	R->sel[R->n_sel++] = (struct selected){ nd, d };
	e->r.def = nd;
	return 1;
}

static int res_def(struct resolver *R, struct opdef *d, struct rscope *outer, struct module *m);

/* P(a, b)!Op(c) (P(x, y) == INSTANCE M): a call of the definition synthesized once per P!Op,
 * P!Op(x, y, c1) == [x, y bound as P's parameters] Op(c1), Op being P's copy's (the substitutions
 * name x and y: they are found through the A_INST frame when evaluated). This is SANY's reading:
 * P!Op is an operator of P's parameters followed by Op's. */
static int res_inst_call(struct resolver *R, struct ast *e, struct instance *inst, const char *oname, uint32_t nargs,
			 int depth)
{
	uint32_t k = inst->n_params;
	if (R->late)
		return rfail(R, e, "%s: an operator of a parameterized instance can only be used in the spec's modules "
				   "(define one there that uses it)", e->name);
	if (nargs < k)
		return rfail(R, e, "%s: the instance takes %u arguments", e->name, k);
	for (uint32_t i = 0; i < R->n_syn; i++)
		if (R->syn[i].inst == inst && R->syn[i].op == oname && R->syn[i].n == nargs) {
			e->ref = REF_DEF;
			e->r.def = R->syn[i].d;
			return 0;
		}
	struct spt_arena *a = spec_arena(R->spec);
	/* Op as P's copy sees it: its arity (operator parameters pass through as such). */
	struct ast probe = { .kind = A_NAME, .pos = e->pos, .name = oname, .n = nargs - k };
	bool was = R->direct;
	R->direct = !strchr(oname, '!');
	int rc = res_global(R, inst->mod, &probe, oname, nargs - k, depth + 1);
	R->direct = was;
	if (rc)
		return rc;
	if (probe.ref == REF_NONE)
		return rfail(R, e, "%s is not defined in module %s", oname, inst->mod->name);
	struct opdef *d = spt_arena_alloc(a, sizeof(*d));
	struct ast *body = spt_arena_alloc(a, sizeof(*body)), *call = spt_arena_alloc(a, sizeof(*call));
	struct synthesized *ns = realloc(R->syn, (R->n_syn + 1) * sizeof(*ns));
	if (ns)
		R->syn = ns;
	if (d)
		memset(d, 0, sizeof(*d));
	if (!d || !body || !call || !ns || !(d->params = spt_arena_alloc(a, (nargs + 1) * sizeof(*d->params))) ||
	    !(d->param_arity = spt_arena_alloc(a, (nargs + 1) * sizeof(*d->param_arity))) ||
	    !(call->a = spt_arena_alloc(a, (nargs + 1) * sizeof(*call->a))) ||
	    !(body->a = spt_arena_alloc(a, sizeof(*body->a))))
		return rfail(R, e, "out of memory");
	/* Named as SANY names it (C!Inc, not the C(2)!Inc of parse.c), where Op is defined. */
	char sname[512];
	size_t o = 0;
	for (const char *q = e->name; *q && o + 1 < sizeof(sname); q++) {
		if (*q == '(')
			while (*q && *q != ')')
				q++;
		else
			sname[o++] = *q;
		if (!*q)
			break;
	}
	sname[o] = '\0';
	if (!(d->name = spec_intern(R->spec, sname, o)))
		return rfail(R, e, "out of memory");
	d->pos = probe.ref == REF_DEF ? probe.r.def->pos : e->pos;
	d->module = inst->mod;
	d->n_params = nargs;
	d->ientry = inst;
	*call = (struct ast){ .kind = A_NAME, .pos = e->pos, .name = oname, .n = nargs - k, .a = call->a };
	for (uint32_t i = 0; i < nargs; i++) {
		char pn[16];
		snprintf(pn, sizeof(pn), "$%u", i + 1); /* no TLA+ name: nothing in Op's body can see it */
		if (!(d->params[i] = spec_intern(R->spec, pn, strlen(pn))))
			return rfail(R, e, "out of memory");
		const struct opdef *od = probe.ref == REF_DEF ? probe.r.def : NULL;
		d->param_arity[i] = i >= k && od && i - k < od->n_params ? od->param_arity[i - k] : 0;
		if (i >= k) {
			struct ast *arg = spt_arena_alloc(a, sizeof(*arg));
			if (!arg)
				return rfail(R, e, "out of memory");
			*arg = (struct ast){ .kind = A_NAME, .pos = e->pos, .name = d->params[i] };
			call->a[i - k] = arg;
		}
	}
	*body = (struct ast){ .kind = A_INST, .pos = e->pos, .n = 1, .a = body->a, .ipar = inst->ipar };
	body->a[0] = call;
	d->body = body;
	R->syn[R->n_syn++] = (struct synthesized){ inst, oname, nargs, d };
	R->direct = !strchr(oname, '!');
	rc = res_def(R, d, NULL, inst->mod);
	R->direct = was;
	if (rc)
		return rc;
	e->ref = REF_DEF;
	e->r.def = d;
	return 0;
}

/* Resolves name (with nargs arguments) as the module m sees it. */
static int res_global(struct resolver *R, struct module *m, struct ast *e, const char *name, uint32_t nargs,
		      int depth)
{
	if (depth > 64)
		return rfail(R, e, "%s: instances substitute each other more than 64 deep", name);
	const char *bang = strchr(name, '!');
	if (bang) {
		int sr = res_selector(R, m, e, name, nargs, depth);
		if (sr)
			return sr < 0 ? sr : 0;
		/* P(2)!Op: P's two arguments are the first of e's (parse.c). */
		size_t ilen = (size_t)(bang - name);
		uint32_t given = 0;
		bool applied = ilen > 2 && name[ilen - 1] == ')';
		if (applied) {
			const char *open = memchr(name, '(', ilen);
			if (!open)
				return rfail(R, e, "malformed instance reference %s", name);
			given = (uint32_t)strtoul(open + 1, NULL, 10);
			ilen = (size_t)(open - name);
		}
		const char *iname = spec_intern(R->spec, name, ilen);
		const char *oname = spec_intern(R->spec, bang + 1, strlen(bang + 1));
		struct symbol *s = iname ? module_lookup(m, iname) : NULL;
		if (!s || s->kind != SYM_INSTANCE)
			return rfail(R, e, "%.*s is not an instance (in %s)", (int)ilen, name, name);
		if (s->inst->n_params != given)
			return rfail(R, e, "the instance %s takes %u argument%s, %u given (in %s)", iname, s->inst->n_params,
				     s->inst->n_params == 1 ? "" : "s", given, name);
		struct module *im = s->inst->mod;
		if (given) {
			struct symbol *t = module_lookup(im, oname);
			if (t && t->kind == SYM_DEF && t->def->local)
				return rfail(R, e, "%s is LOCAL to module %s", oname, im->name);
			return res_inst_call(R, e, s->inst, oname, nargs, depth);
		}
		struct symbol *t = module_lookup(im, oname);
		if (t && t->kind == SYM_DEF && t->def->local)
			return rfail(R, e, "%s is LOCAL to module %s", oname, im->name);
		bool was = R->direct;
		R->direct = !strchr(oname, '!');
		int rc = res_global(R, im, e, oname, nargs, depth + 1);
		R->direct = was;
		if (rc == 0 && e->ref == REF_NONE)
			return rfail(R, e, "%s is not defined in module %s", oname, im->name);
		return rc;
	}
	struct symbol *s = module_lookup(m, name);
	if (s) {
		switch (s->kind) {
		case SYM_DEF:
			return bind_def(R, e, s->def, nargs, name);
		case SYM_CONST:
		case SYM_VAR: {
			struct instance *inst = s->module->subst;
			if (inst) {
				/* A constant or variable of an instantiated module: what WITH says, or the
				 * same name in the instantiating module. */
				for (uint32_t i = 0; i < inst->n; i++) {
					if (inst->from[i] == name) {
						if (nargs) {
							/* An operator parameter F(_) WITH F <- G: calls of F call G. */
							const struct ast *to = inst->to[i];
							if (to->kind == A_LAMBDA && to->lambda && inst->to_slots[i] == 0) {
								/* F <- LAMBDA x, y : e: calls of F apply it */
								if (to->lambda->n_params != nargs)
									return rfail(R, e, "%s is substituted by a LAMBDA of %u parameters, not %u",
										     name, to->lambda->n_params, nargs);
								e->ref = REF_DEF;
								e->r.def = to->lambda;
								return 0;
							}
							if (to->kind != A_NAME || to->n || !to->op_ref)
								return rfail(R, e, "%s is substituted by an expression: it takes no arguments", name);
							if (to->ref == REF_DEF && to->r.def->n_params != nargs)
								return rfail(R, e, "%s is substituted by %s, which takes %u arguments, not %u", name,
									     to->name, to->r.def->n_params, nargs);
							e->ref = to->ref;
							e->r = to->r;
							e->slot = to->slot;
							return 0;
						}
						e->ref = REF_SUBST;
						e->r.subst = inst->to[i];
						e->slot = inst->to_slots[i]; /* the frame it is evaluated in */
						e->rmod = inst->in;
						e->ipar = inst->ipar; /* (its parameters' frame is found through this) */
						return 0;
					}
				}
				return res_global(R, inst->in, e, name, nargs, depth + 1);
			}
			if (s->kind == SYM_VAR && nargs)
				return rfail(R, e, "%s is a variable: it takes no arguments", name);
			if (s->kind == SYM_CONST && nargs != s->arity)
				return rfail(R, e, "the constant %s takes %u argument%s, %u given", name, s->arity,
					     s->arity == 1 ? "" : "s", nargs);
			if (s->index == UINT32_MAX)
				return rfail(R, e, "%s is declared in a module that is not part of the spec's EXTENDS", name);
			e->ref = s->kind == SYM_CONST ? REF_CONST : REF_VAR;
			e->slot = s->index;
			return 0;
		}
		case SYM_INSTANCE:
			return rfail(R, e, "%s is an instance: use %s!Name", name, name);
		case SYM_BUILTIN:
			break;
		}
	}
	/* The cfg may replace a standard module's operator too (Nat <- MyNat, Seq <- BoundedSeq). */
	const struct cfg_const *o = cfg_override(R, name);
	if (o && o->op) {
		struct symbol *t = module_lookup(spec_root(R->spec), o->op);
		if (!t || t->kind != SYM_DEF)
			return rfail(R, e, "the cfg replaces %s by %s, which is not a definition of the spec", name, o->op);
		return bind_def(R, e, t->def, nargs, o->op);
	}
	for (size_t i = 0; i < sizeof(builtin_sets) / sizeof(builtin_sets[0]); i++) {
		if (!strcmp(builtin_sets[i].name, name)) {
			if (nargs)
				return rfail(R, e, "%s is a set: it takes no arguments", name);
			e->ref = REF_SET;
			e->slot = builtin_sets[i].set;
			return 0;
		}
	}
	const struct builtin *any, *b = find_builtin(m, name, nargs, &any);
	if (b) {
		e->ref = REF_BUILTIN;
		e->r.bi = b;
		return 0;
	}
	if (any)
		return rfail(R, e, "%s takes %d argument%s, %u given", name, any->arity, any->arity == 1 ? "" : "s", nargs);
	e->ref = REF_NONE;
	return 0;
}

/* A bound name visible in sc or an enclosing frame (*in: the frame's scope). */
static const struct rname *find_local_in(struct rscope *sc, const char *name, uint16_t *up, struct rscope **in)
{
	*up = 0;
	for (struct rscope *s = sc; s; s = s->outer, (*up)++)
		for (uint32_t i = s->n; i-- > 0;)
			if (s->names[i].name == name) {
				*in = s;
				return &s->names[i];
			}
	return NULL;
}

static const struct rname *find_local(struct rscope *sc, const char *name, uint16_t *up)
{
	struct rscope *in;
	return find_local_in(sc, name, up, &in);
}

static int res_name(struct resolver *R, struct rscope *sc, struct ast *e, bool as_op, uint32_t op_arity)
{
	uint16_t up;
	struct rscope *lsc = NULL;
	const struct rname *l = find_local_in(sc, e->name, &up, &lsc);
	uint32_t nargs = as_op ? op_arity : e->n;
	if (l) {
		e->ref = REF_LOCAL;
		e->up = up;
		e->slot = l->slot;
		e->r.def = l->letdef;
		e->ipar = lsc->params_of ? lsc->params_of->ipar : 0; /* a parameter of I(x) == INSTANCE */
		if (as_op) {
			if (!l->op && !(l->letdef && l->letdef->n_params == 0 && op_arity == 0))
				return rfail(R, e, "%s is a value, not an operator taking %u arguments", e->name, op_arity);
			if (l->arity != op_arity)
				return rfail(R, e, "%s takes %u arguments, an operator of %u is expected here", e->name, l->arity, op_arity);
			return 0;
		}
		if (l->letdef && l->letdef->n_fbounds) {
			if (e->n)
				return rfail(R, e, "%s is a function: write %s[...]", e->name, e->name);
			return 0;
		}
		if (l->op || l->letdef) {
			if (e->n != l->arity)
				return rfail(R, e, "%s takes %u argument%s, %u given", e->name, l->arity, l->arity == 1 ? "" : "s", e->n);
			return 0;
		}
		if (e->n)
			return rfail(R, e, "%s is a value, not an operator", e->name);
		return 0;
	}
	int rc = res_global(R, sc->mod, e, e->name, nargs, 0);
	if (rc)
		return rc;
	if (e->ref == REF_NONE) {
		const struct builtin *std = builtin_lookup(NULL, e->name, nargs);
		if (std && std->module[0])
			return rfail(R, e, "unknown operator %s: the standard module %s defines it; add EXTENDS %s",
				     e->name, std->module, std->module);
		return rfail(R, e, "unknown name %s%s", e->name, e->n ? " (with these arguments)" : "");
	}
	if (as_op && e->ref != REF_DEF && e->ref != REF_BUILTIN && !(e->ref == REF_CONST && op_arity))
		return rfail(R, e, "%s is not an operator (an operator of %u arguments is expected here)", e->name, op_arity);
	return 0;
}

/* Pushes the names of bound b: its set is resolved before, outside their scope (in
 * \E x \in S, y \in T : P, neither S nor T sees x or y). */
static int res_bound_names(struct resolver *R, struct rscope *sc, struct bound *b)
{
	for (uint32_t j = 0; j < b->n_names; j++) {
		b->slots[j] = new_slot(sc);
		if (push_name(sc, (struct rname){ b->names[j], b->slots[j], 0, false, NULL }))
			return rfail(R, NULL, "out of memory");
	}
	return 0;
}

/* The arguments of a call of callee (a definition or builtin): operator arguments resolved as
 * operators, the rest as expressions. */
static int res_args(struct resolver *R, struct rscope *sc, struct ast *e)
{
	const struct opdef *d = e->ref == REF_DEF ? e->r.def : e->ref == REF_LOCAL ? e->r.def : NULL;
	const struct builtin *bi = e->ref == REF_BUILTIN ? e->r.bi : NULL;
	for (uint32_t i = 0; i < e->n; i++) {
		uint32_t arity = 0;
		bool op = false;
		if (d && i < d->n_params && d->param_arity[i]) {
			op = true;
			arity = d->param_arity[i];
		} else if (bi && i < 32 && (bi->op_mask >> i) & 1) {
			op = true;
			arity = UINT32_MAX; /* checked when called */
		}
		struct ast *a = e->a[i];
		if (!op) {
			int rc = res_expr(R, sc, a);
			if (rc)
				return rc;
			continue;
		}
		if (a->kind == A_LAMBDA) {
			if (arity != UINT32_MAX && a->lambda->n_params != arity)
				return rfail(R, a, "the LAMBDA takes %u arguments, an operator of %u is expected", a->lambda->n_params, arity);
			int rc = res_expr(R, sc, a);
			if (rc)
				return rc;
			a->op_ref = true;
			continue;
		}
		if (a->kind != A_NAME || a->n) {
			return rfail(R, a, "argument %u of %s must be an operator name or a LAMBDA", i + 1,
				     d ? d->name : bi ? bi->name : e->name);
		}
		a->op_ref = true;
		if (arity == UINT32_MAX) {
			/* A builtin's operator argument: any arity; the builtin checks it. */
			uint16_t up;
			const struct rname *l = find_local(sc, a->name, &up);
			if (l) {
				a->ref = REF_LOCAL;
				a->up = up;
				a->slot = l->slot;
				a->r.def = l->letdef;
				continue;
			}
			struct symbol *s = module_lookup(sc->mod, a->name);
			if (s && s->kind == SYM_DEF) {
				int rc = bind_def(R, a, s->def, s->def->n_params, a->name);
				if (rc)
					return rc;
				continue;
			}
			const struct builtin *any;
			for (uint32_t k = 0; k < 4; k++) {
				const struct builtin *b = find_builtin(sc->mod, a->name, k, &any);
				if (b) {
					a->ref = REF_BUILTIN;
					a->r.bi = b;
					break;
				}
			}
			if (a->ref == REF_NONE)
				return rfail(R, a, "%s is not an operator (argument %u of %s)", a->name, i + 1, bi->name);
			continue;
		}
		int rc = res_name(R, sc, a, true, arity);
		if (rc)
			return rc;
	}
	return 0;
}

/* The field names of a record constructor, record set or field access, as values. */
static int field_values(struct resolver *R, struct ast *e, uint32_t n)
{
	struct spt_arena *a = spec_arena(R->spec);
	e->field_vals = spt_arena_alloc(a, (n ? n : 1) * sizeof(*e->field_vals));
	if (!e->field_vals)
		return rfail(R, e, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		if (!(e->field_vals[i] = spt_cstr(a, e->fields[i])))
			return rfail(R, e, "out of memory");
	if (e->kind != A_RECORD || n == 0)
		return 0;
	/* A record constructor's canonical order, once: evaluation then builds it without a sort. */
	uint32_t *idx = spt_arena_alloc(a, n * sizeof(*idx)), *pos = spt_arena_alloc(a, n * sizeof(*pos));
	spt_val **keys = spt_arena_alloc(a, n * sizeof(*keys));
	if (!idx || !pos || !keys)
		return rfail(R, e, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i;
		for (; j > 0 && spt_value_cmp(e->field_vals[idx[j - 1]], e->field_vals[i]) > 0; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	for (uint32_t j = 0; j < n; j++) {
		if (j > 0 && spt_value_eq(e->field_vals[idx[j - 1]], e->field_vals[idx[j]]))
			return 0; /* a name repeats */
		keys[j] = e->field_vals[idx[j]];
		pos[idx[j]] = j;
	}
	e->rec_keys = keys;
	e->rec_pos = pos;
	return 0;
}

static int res_let(struct resolver *R, struct rscope *sc, struct ast *e)
{
	uint32_t mark_n = sc->n, mark_next = sc->next;
	for (uint32_t i = 0; i < e->n_defs; i++) {
		struct opdef *d = e->defs[i];
		e->def_slots[i] = new_slot(sc);
		bool op = d->n_params > 0;
		if (push_name(sc, (struct rname){ d->name, e->def_slots[i], d->n_params, op, d }))
			return rfail(R, e, "out of memory");
	}
	/* The definitions see each other and themselves (recursion), then the body sees them. */
	for (uint32_t i = 0; i < e->n_defs; i++) {
		int rc = res_def(R, e->defs[i], sc, sc->mod);
		if (rc)
			return rc;
	}
	int rc = res_expr(R, sc, e->a[0]);
	sc->n = mark_n;
	sc->next = mark_next;
	return rc;
}

static int res_bounds(struct resolver *R, struct rscope *sc, struct bound *b, uint32_t nb)
{
	for (uint32_t i = 0; i < nb; i++) {
		int rc = b[i].set ? res_expr(R, sc, b[i].set) : 0;
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < nb; i++) {
		int rc = res_bound_names(R, sc, &b[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int res_binder(struct resolver *R, struct rscope *sc, struct ast *e)
{
	uint32_t mark_n = sc->n, mark_next = sc->next;
	int brc = res_bounds(R, sc, e->bounds, e->n_bounds);
	if (brc)
		return brc;
	int rc = res_expr(R, sc, e->a[0]);
	sc->n = mark_n;
	sc->next = mark_next;
	return rc;
}

static int res_expr(struct resolver *R, struct rscope *sc, struct ast *e)
{
	if (R->failed)
		return -EINVAL;
	if (++R->depth > MAX_RESOLVE_DEPTH) {
		R->depth--;
		return rfail(R, e, "the expression is nested more than %d deep", MAX_RESOLVE_DEPTH);
	}
	int rc = 0;
	switch (e->kind) {
	case A_NUM:
	case A_STR:
	case A_BOOL:
	case A_AT:
		break;
	case A_NAME:
		if (!(rc = res_name(R, sc, e, false, 0)))
			rc = res_args(R, sc, e);
		break;
	case A_LET:
		rc = res_let(R, sc, e);
		break;
	case A_CHOOSE:
	case A_EXISTS:
	case A_FORALL:
	case A_FILTER:
	case A_MAP:
	case A_FUNC:
		rc = res_binder(R, sc, e);
		break;
	case A_LAMBDA:
		rc = res_def(R, e->lambda, sc, sc->mod);
		break;
	case A_EXCEPT:
		rc = res_expr(R, sc, e->a[0]);
		for (uint32_t i = 0; !rc && i < e->n_excepts; i++) {
			struct except_upd *u = &e->excepts[i];
			for (uint32_t j = 0; !rc && j < u->n_steps; j++) {
				struct except_step *st = &u->steps[j];
				for (uint32_t k = 0; !rc && k < st->n_args; k++)
					rc = res_expr(R, sc, st->args[k]);
			}
			if (!rc)
				rc = res_expr(R, sc, u->value);
		}
		break;
	case A_RECORD:
	case A_RECSET:
		rc = field_values(R, e, e->n);
		for (uint32_t i = 0; !rc && i < e->n; i++)
			rc = res_expr(R, sc, e->a[i]);
		break;
	case A_FIELD:
		if (!(rc = field_values(R, e, 1)))
			rc = res_expr(R, sc, e->a[0]);
		break;
	default:
		for (uint32_t i = 0; !rc && i < e->n; i++)
			rc = res_expr(R, sc, e->a[i]);
		break;
	}
	R->depth--;
	return rc;
}

/* A definition's frame: its parameters (or a function definition's bound names) first. */
static int res_def(struct resolver *R, struct opdef *d, struct rscope *outer, struct module *m)
{
	if (d->resolved)
		return 0;
	d->resolved = true;
	if (spec_add_def(R->spec, d))
		return rfail(R, NULL, "out of memory");
	struct rscope sc = { .outer = outer, .owner = d, .top = outer ? outer->top : d, .mod = m };
	int rc = 0;
	for (uint32_t i = 0; i < d->n_params && !rc; i++) {
		uint32_t slot = new_slot(&sc);
		rc = push_name(&sc, (struct rname){ d->params[i], slot, d->param_arity[i], d->param_arity[i] > 0, NULL });
		if (d->param_arity[i])
			d->higher_order = true;
	}
	if (!rc && d->n_fbounds)
		rc = res_bounds(R, &sc, d->fbounds, d->n_fbounds);
	if (!rc && !R->failed)
		rc = res_expr(R, &sc, d->body);
	d->nslots = sc.max;
	free(sc.names);
	return R->failed ? -EINVAL : rc;
}

/* ---- levels, purity, recursion groups, cacheability ---- */

struct lvl {
	struct opdef *top;   /* the module-level definition being walked */
	bool changed;
	bool heavy;          /* the walked body does real work (binders, recursion) */
	bool impure;
	bool run_state;      /* reads or changes the run (TLCGet, TLCSet, JavaTime) */
	bool primes_local;   /* a bound name (a parameter) appears under a prime or UNCHANGED */
	int in_prime;
	uint64_t ipars, ipars_primed; /* see struct opdef */
	struct instance **ipar_inst;  /* by ipar - 1 */
};

static uint64_t ipar_bit(uint16_t ipar) { return ipar > 63 ? 1ull << 63 : 1ull << (ipar - 1); }

static uint8_t max8(uint8_t a, uint8_t b) { return a > b ? a : b; }

static bool def_heavy(const struct opdef *d);

static uint8_t lvl_expr(struct lvl *L, struct ast *e);

static uint8_t lvl_def_call(struct lvl *L, struct ast *e, const struct opdef *d)
{
	uint8_t l = d->level, args = L_CONST;
	if (d->impure)
		L->impure = true;
	if (d->run_state)
		L->run_state = true;
	if (def_heavy(d) || d->recursive)
		L->heavy = true;
	L->ipars |= d->ipars;
	L->ipars_primed |= d->ipars_primed | (L->in_prime ? d->ipars : 0);
	for (uint32_t i = 0; i < e->n; i++)
		if (!e->a[i]->op_ref || e->a[i]->kind == A_LAMBDA) {
			uint8_t la = lvl_expr(L, e->a[i]);
			args = max8(args, la);
			/* I(a)!Op: I's parameter is at the level of the highest argument it is given
			 * (the substitutions naming it take that level inside I's copy). */
			if (d->ientry && i < d->ientry->n_params && la > d->ientry->plevel[i]) {
				d->ientry->plevel[i] = la;
				L->changed = true;
			}
		}
	l = max8(l, args);
	/* Send(v, x) == v' = x called with a variable is an action. */
	if (d->primes_params && args >= L_STATE)
		l = max8(l, L_ACTION);
	return l;
}

static uint8_t lvl_expr(struct lvl *L, struct ast *e)
{
	uint8_t l = L_CONST;
	switch (e->kind) {
	case A_NUM:
	case A_STR:
	case A_BOOL:
	case A_AT:
		break;
	case A_UNSUPPORTED:
		for (uint32_t i = 0; i < e->n; i++)
			lvl_expr(L, e->a[i]);
		l = e->num == T_ENABLED ? L_STATE : L_TEMPORAL;
		break;
	case A_NAME:
		switch (e->ref) {
		case REF_VAR:
			l = L_STATE;
			break;
		case REF_DEF:
			l = lvl_def_call(L, e, e->r.def);
			break;
		case REF_LOCAL:
			if (e->ipar && !e->r.def) {
				/* a parameter of I(x) == INSTANCE, in a substitution */
				struct instance *pi = L->ipar_inst ? L->ipar_inst[e->ipar - 1] : NULL;
				l = pi && e->slot < pi->n_params ? pi->plevel[e->slot] : L_CONST;
				if (L->in_prime)
					L->ipars_primed |= ipar_bit(e->ipar);
				break;
			}
			if (e->r.def)
				l = lvl_def_call(L, e, e->r.def);
			else if (L->in_prime)
				L->primes_local = true;
			for (uint32_t i = 0; !e->r.def && i < e->n; i++)
				l = max8(l, lvl_expr(L, e->a[i]));
			break;
		case REF_SUBST:
			if (e->ipar)
				L->ipars |= ipar_bit(e->ipar);
			l = lvl_expr(L, e->r.subst);
			break;
		case REF_BUILTIN:
			if (e->r.bi->impure)
				L->impure = true;
			if (e->r.bi->impure && (!strcmp(e->r.bi->name, "TLCGet") || !strcmp(e->r.bi->name, "TLCSet") ||
						!strcmp(e->r.bi->name, "JavaTime") || !strcmp(e->r.bi->name, "Trace")))
				L->run_state = true;
			if (!strcmp(e->r.bi->name, "Trace") && !strcmp(e->r.bi->module, "TLCExt"))
				l = L_STATE; /* (TLC's minLevel: a state-level operator) */
			for (uint32_t i = 0; i < e->n; i++)
				l = max8(l, lvl_expr(L, e->a[i]));
			break;
		default:
			for (uint32_t i = 0; i < e->n; i++)
				l = max8(l, lvl_expr(L, e->a[i]));
			break;
		}
		break;
	case A_PRIME:
		L->in_prime++;
		l = lvl_expr(L, e->a[0]);
		L->in_prime--;
		l = l >= L_STATE ? max8(l, L_ACTION) : l;
		break;
	case A_UNCHANGED:
		L->in_prime++;
		lvl_expr(L, e->a[0]);
		L->in_prime--;
		l = L_ACTION;
		break;
	case A_STUTTER:
	case A_CDOT:
		l = max8(L_ACTION, max8(lvl_expr(L, e->a[0]), lvl_expr(L, e->a[1])));
		break;
	case A_LET:
		for (uint32_t i = 0; i < e->n_defs; i++)
			lvl_expr(L, e->defs[i]->body); /* nested bodies: their levels come in through calls */
		l = lvl_expr(L, e->a[0]);
		break;
	case A_LAMBDA:
		l = lvl_expr(L, e->lambda->body);
		break;
	case A_INST: {
		/* The body of I!Op: I's parameters are its own (bound here), not read from outside;
		 * where Op primes them, I!Op primes its parameters (they are then bound unevaluated). */
		uint64_t ip = L->ipars, pp = L->ipars_primed, bit = e->ipar ? ipar_bit(e->ipar) : 0;
		L->ipars = L->ipars_primed = 0;
		l = lvl_expr(L, e->a[0]);
		if (L->ipars_primed & bit)
			L->primes_local = true;
		L->ipars = ip | (L->ipars & (bit == 1ull << 63 ? ~0ull : ~bit));
		L->ipars_primed = pp | (L->ipars_primed & (bit == 1ull << 63 ? ~0ull : ~bit));
		break;
	}
	case A_CHOOSE:
	case A_EXISTS:
	case A_FORALL:
	case A_FILTER:
	case A_MAP:
	case A_FUNC:
		L->heavy = true;
		for (uint32_t i = 0; i < e->n_bounds; i++)
			if (e->bounds[i].set)
				l = max8(l, lvl_expr(L, e->bounds[i].set));
		l = max8(l, lvl_expr(L, e->a[0]));
		break;
	case A_FUNCSET:
	case A_RECSET:
		L->heavy = true;
		for (uint32_t i = 0; i < e->n; i++)
			l = max8(l, lvl_expr(L, e->a[i]));
		break;
	case A_EXCEPT:
		l = lvl_expr(L, e->a[0]);
		for (uint32_t i = 0; i < e->n_excepts; i++) {
			struct except_upd *u = &e->excepts[i];
			for (uint32_t j = 0; j < u->n_steps; j++)
				for (uint32_t k = 0; k < u->steps[j].n_args; k++)
					l = max8(l, lvl_expr(L, u->steps[j].args[k]));
			l = max8(l, lvl_expr(L, u->value));
		}
		break;
	default:
		for (uint32_t i = 0; i < e->n; i++)
			l = max8(l, lvl_expr(L, e->a[i]));
		break;
	}
	e->level = l;
	return l;
}

/* "Heavy" is kept in the cacheable flag's neighbour: a definition whose body does work worth
 * caching. Stored in the spare bit `recursing` after the fixed point (see below). */
static bool def_heavy(const struct opdef *d) { return d->cacheable || d->recursing; }

static void lvl_def(struct lvl *L, struct opdef *d)
{
	L->heavy = false;
	L->impure = false;
	L->run_state = false;
	L->primes_local = false;
	L->ipars = L->ipars_primed = 0;
	uint8_t l = L_CONST;
	for (uint32_t i = 0; i < d->n_fbounds; i++)
		l = max8(l, lvl_expr(L, d->fbounds[i].set));
	l = max8(l, lvl_expr(L, d->body));
	if (d->n_fbounds)
		L->heavy = true;
	if (l != d->level || L->impure != d->impure || L->run_state != d->run_state || (L->heavy && !d->recursing) ||
	    L->primes_local != d->primes_params || L->ipars != d->ipars || L->ipars_primed != d->ipars_primed) {
		L->changed = true;
		d->ipars = L->ipars;
		d->ipars_primed = L->ipars_primed;
		d->level = l;
		d->impure = L->impure;
		d->run_state = L->run_state;
		d->primes_params = L->primes_local;
		if (L->heavy)
			d->recursing = true; /* heavy */
	}
}

/* ---- recursion groups (Tarjan's strongly connected components over module-level calls) ---- */

/* Iterative: a chain of definitions calling each other may be as long as a module is (tens of
 * thousands of D(k) == D(k+1) + 1), deeper than the stack a recursive walk would need. */
struct tarjan {
	struct opdef *const *defs;
	uint32_t n;
	uint32_t *index, *low, *stack;
	bool *on;
	uint32_t counter, sp, groups;
	/* The module-level definitions each one calls (ids), in call order. */
	uint32_t **calls, *ncalls;
};

static void calls_of(struct ast *e, void (*fn)(void *, struct opdef *), void *arg);

static void calls_in_def(struct opdef *d, void (*fn)(void *, struct opdef *), void *arg)
{
	for (uint32_t i = 0; i < d->n_fbounds; i++)
		calls_of(d->fbounds[i].set, fn, arg);
	calls_of(d->body, fn, arg);
}

static void calls_of(struct ast *e, void (*fn)(void *, struct opdef *), void *arg)
{
	if (!e)
		return;
	if (e->kind == A_NAME && e->ref == REF_DEF)
		fn(arg, e->r.def);
	if (e->kind == A_NAME && e->ref == REF_SUBST)
		calls_of(e->r.subst, fn, arg);
	if (e->kind == A_LET)
		for (uint32_t i = 0; i < e->n_defs; i++)
			calls_in_def(e->defs[i], fn, arg);
	if (e->kind == A_LAMBDA)
		calls_in_def(e->lambda, fn, arg);
	for (uint32_t i = 0; i < e->n_bounds; i++)
		calls_of(e->bounds[i].set, fn, arg);
	for (uint32_t i = 0; i < e->n_excepts; i++) {
		for (uint32_t j = 0; j < e->excepts[i].n_steps; j++)
			for (uint32_t k = 0; k < e->excepts[i].steps[j].n_args; k++)
				calls_of(e->excepts[i].steps[j].args[k], fn, arg);
		calls_of(e->excepts[i].value, fn, arg);
	}
	for (uint32_t i = 0; i < e->n; i++)
		calls_of(e->a[i], fn, arg);
}

struct call_list {
	uint32_t *ids;
	uint32_t n, cap;
	bool oom;
};

static void collect_call(void *arg, struct opdef *w)
{
	struct call_list *l = arg;
	if (w->nested || l->oom)
		return;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 8;
		uint32_t *ids = realloc(l->ids, cap * sizeof(*ids));
		if (!ids) {
			l->oom = true;
			return;
		}
		l->ids = ids;
		l->cap = cap;
	}
	l->ids[l->n++] = w->id;
}

/* Tarjan's algorithm from v with an explicit stack of (definition, next call) frames. */
static int tj_strong(struct tarjan *T, uint32_t root, uint32_t *frames, uint32_t *next)
{
	uint32_t depth = 0;
	frames[depth] = root;
	next[depth] = 0;
	T->index[root] = T->low[root] = T->counter++;
	T->stack[T->sp++] = root;
	T->on[root] = true;
	for (;;) {
		uint32_t v = frames[depth];
		if (next[depth] < T->ncalls[v]) {
			uint32_t w = T->calls[v][next[depth]++];
			if (w == v)
				T->defs[v]->recursive = true;
			if (T->index[w] == UINT32_MAX) {
				T->index[w] = T->low[w] = T->counter++;
				T->stack[T->sp++] = w;
				T->on[w] = true;
				depth++;
				frames[depth] = w;
				next[depth] = 0;
			} else if (T->on[w] && T->index[w] < T->low[v]) {
				T->low[v] = T->index[w];
			}
			continue;
		}
		if (T->low[v] == T->index[v]) {
			uint32_t size = 0, w;
			uint32_t first = T->sp;
			do {
				w = T->stack[--T->sp];
				T->on[w] = false;
				T->defs[w]->scc = T->groups;
				size++;
			} while (w != v);
			if (size > 1)
				for (uint32_t k = T->sp; k < first; k++)
					T->defs[T->stack[k]]->recursive = true;
			T->groups++;
		}
		if (depth == 0)
			return 0;
		depth--;
		uint32_t u = frames[depth];
		if (T->low[v] < T->low[u])
			T->low[u] = T->low[v];
	}
}

/* Marks each call of a cacheable definition made from outside its recursion group. */
struct memo_mark {
	struct opdef *top;
};

static void mark_memo(struct ast *e, const struct opdef *top)
{
	if (!e)
		return;
	if (e->kind == A_NAME && e->ref == REF_DEF && e->r.def->cacheable)
		e->memo = e->r.def->scc != top->scc;
	if (e->kind == A_LET)
		for (uint32_t i = 0; i < e->n_defs; i++) {
			for (uint32_t j = 0; j < e->defs[i]->n_fbounds; j++)
				mark_memo(e->defs[i]->fbounds[j].set, top);
			mark_memo(e->defs[i]->body, top);
		}
	if (e->kind == A_LAMBDA)
		mark_memo(e->lambda->body, top);
	for (uint32_t i = 0; i < e->n_bounds; i++)
		mark_memo(e->bounds[i].set, top);
	for (uint32_t i = 0; i < e->n_excepts; i++) {
		for (uint32_t j = 0; j < e->excepts[i].n_steps; j++)
			for (uint32_t k = 0; k < e->excepts[i].steps[j].n_args; k++)
				mark_memo(e->excepts[i].steps[j].args[k], top);
		mark_memo(e->excepts[i].value, top);
	}
	for (uint32_t i = 0; i < e->n; i++)
		mark_memo(e->a[i], top);
}

static int analyse(struct resolver *R)
{
	uint32_t n;
	struct opdef *const *defs = spec_defs(R->spec, &n);
	/* Recursion groups over module-level definitions. */
	struct tarjan T = { defs, n, calloc(n + 1, 4), calloc(n + 1, 4), calloc(n + 1, 4), calloc(n + 1, 1), 0, 0, 0,
			    calloc(n + 1, sizeof(uint32_t *)), calloc(n + 1, 4) };
	uint32_t *frames = calloc(n + 1, 4), *next = calloc(n + 1, 4);
	int rc = 0;
	if (!T.index || !T.low || !T.stack || !T.on || !T.calls || !T.ncalls || !frames || !next)
		rc = rfail(R, NULL, "out of memory");
	for (uint32_t i = 0; !rc && i < n; i++) {
		T.index[i] = UINT32_MAX;
		struct call_list l = { 0 };
		if (!defs[i]->nested)
			calls_in_def(defs[i], collect_call, &l);
		T.calls[i] = l.ids;
		T.ncalls[i] = l.n;
		if (l.oom)
			rc = rfail(R, NULL, "out of memory");
	}
	for (uint32_t i = 0; !rc && i < n; i++)
		if (!defs[i]->nested && T.index[i] == UINT32_MAX)
			rc = tj_strong(&T, i, frames, next);
	for (uint32_t i = 0; T.calls && i < n; i++)
		free(T.calls[i]);
	free(T.calls);
	free(T.ncalls);
	free(frames);
	free(next);
	free(T.index);
	free(T.low);
	free(T.stack);
	free(T.on);
	if (rc)
		return rc;
	/* Levels and purity: a fixed point (they only grow). */
	struct lvl L = { 0 };
	uint32_t nm, np = spec_n_ipar(R->spec);
	struct module *const *mods = spec_modules(R->spec, &nm);
	L.ipar_inst = np ? calloc(np, sizeof(*L.ipar_inst)) : NULL;
	if (np && !L.ipar_inst)
		return rfail(R, NULL, "out of memory");
	for (uint32_t i = 0; i < nm; i++)
		if (mods[i]->subst && mods[i]->subst->mod == mods[i] && mods[i]->subst->ipar)
			L.ipar_inst[mods[i]->subst->ipar - 1] = mods[i]->subst;
	for (int round = 0; round < 64; round++) {
		L.changed = false;
		for (uint32_t i = 0; i < n; i++)
			lvl_def(&L, defs[i]);
		if (!L.changed)
			break;
	}
	free(L.ipar_inst);
	for (uint32_t i = 0; i < n; i++) {
		struct opdef *d = defs[i];
		bool heavy = d->recursing || d->recursive;
		d->recursing = false;
		/* As TLC, which evaluates its constant definitions once at start, random choices and
		 * prints included (SpanTreeRandom's Edges is one graph); not what reads the run. */
		/* (Nor what reads an instance's parameters: they are not among its arguments.) */
		d->evaluated_once = !d->nested && !d->n_params && !d->n_fbounds && d->level == L_CONST && !d->run_state &&
				    !d->ipars;
		d->cacheable = !d->nested && d->n_params > 0 && !d->n_fbounds && d->level == L_CONST && !d->impure &&
			       !d->higher_order && heavy && !d->ipars;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!defs[i]->nested)
			mark_memo(defs[i]->body, defs[i]);
	return 0;
}

/* ---- level errors ---- */

static int check_levels(struct resolver *R, struct ast *e)
{
	if (!e || R->failed)
		return R->failed ? -EINVAL : 0;
	if (e->kind == A_PRIME && e->a[0]->level >= L_ACTION)
		return rfail(R, e, "a primed expression inside a primed expression (x'' or (x')')");
	if (e->kind == A_UNCHANGED && e->a[0]->level >= L_ACTION)
		return rfail(R, e, "UNCHANGED of an action-level expression (it may only name state variables)");
	if (e->kind == A_LET)
		for (uint32_t i = 0; i < e->n_defs; i++)
			if (check_levels(R, e->defs[i]->body))
				return -EINVAL;
	if (e->kind == A_LAMBDA && check_levels(R, e->lambda->body))
		return -EINVAL;
	for (uint32_t i = 0; i < e->n_bounds; i++)
		if (check_levels(R, e->bounds[i].set))
			return -EINVAL;
	for (uint32_t i = 0; i < e->n_excepts; i++)
		if (check_levels(R, e->excepts[i].value))
			return -EINVAL;
	for (uint32_t i = 0; i < e->n; i++)
		if (check_levels(R, e->a[i]))
			return -EINVAL;
	return 0;
}

/* ---- entry points ---- */

static int resolve_module(struct resolver *R, struct module *m)
{
	if (m->subst && m->subst->mod == m) {
		/* WITH substitutions are expressions of the instantiating module (resolved once, for
		 * the instantiated module: the modules it extends share them). */
		struct instance *in = m->subst;
		/* I(x, y) == INSTANCE: the parameters are an outer frame of each substitution's. */
		struct rscope ps = { .mod = in->in, .params_of = in };
		for (uint32_t i = 0; i < in->n_params; i++)
			if (push_name(&ps, (struct rname){ in->params[i], new_slot(&ps), 0, false, NULL }))
				return rfail(R, NULL, "out of memory");
		for (uint32_t i = 0; i < in->n; i++) {
			struct rscope sc = { .mod = in->in, .outer = in->n_params ? &ps : NULL };
			struct symbol *p = module_lookup(m, in->from[i]);
			int rc;
			if (p && p->kind == SYM_CONST && p->arity && in->to[i]->kind == A_NAME && !in->to[i]->n) {
				/* F(_) <- G: G is an operator, not evaluated here. */
				in->to[i]->op_ref = true;
				rc = res_name(R, &sc, in->to[i], true, p->arity);
			} else {
				rc = res_expr(R, &sc, in->to[i]);
			}
			in->to_slots[i] = sc.max;
			free(sc.names);
			if (rc) {
				free(ps.names);
				return rc;
			}
		}
		free(ps.names);
	}
	for (uint32_t i = 0; i < m->n_defs; i++) {
		int rc = res_def(R, m->defs[i], NULL, m);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < m->n_assumes; i++) {
		int rc = res_def(R, m->assumes[i], NULL, m);
		if (rc)
			return rc;
	}
	return 0;
}

int spec_resolve(struct spec *s, const struct cfg *cfg, struct spec_error *err)
{
	struct resolver R = { s, cfg, err, false, 0 };
	uint32_t nm;
	struct module *const *mods = spec_modules(s, &nm);
	for (uint32_t i = 0; i < nm; i++)
		if (resolve_module(&R, mods[i])) {
			free(R.sel);
			free(R.syn);
			return -EINVAL;
		}
	free(R.syn); /* (every reference is resolved: the synthesized definitions are the spec's) */
	R.syn = NULL;
	/* Op!k: evaluated in a frame like Op's (its subexpression was resolved as part of Op). */
	for (uint32_t i = 0; i < R.n_sel; i++) {
		R.sel[i].d->nslots = R.sel[i].of->nslots;
		R.sel[i].d->resolved = R.sel[i].of->resolved;
	}
	free(R.sel);
	R.sel = NULL;
	if (analyse(&R))
		return -EINVAL;
	if (frames_compute(s) || hoist_compute(s))
		return rfail(&R, NULL, "out of memory");
	uint32_t n;
	struct opdef *const *defs = spec_defs(s, &n);
	for (uint32_t i = 0; i < n; i++)
		if (!defs[i]->nested && check_levels(&R, defs[i]->body))
			return -EINVAL;
	return 0;
}

int spec_resolve_expr(struct spec *s, struct ast *e, const char *const *params, uint32_t n, uint32_t *nslots,
		      struct spec_error *err)
{
	struct resolver R = { s, NULL, err, false, 0 };
	R.late = true;
	struct rscope sc = { .mod = spec_root(s) };
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = push_name(&sc, (struct rname){ params[i], new_slot(&sc), 0, false, NULL });
	if (!rc)
		rc = res_expr(&R, &sc, e);
	if (!rc) {
		struct lvl L = { 0 };
		lvl_expr(&L, e);
		mark_memo(e, &(struct opdef){ .scc = UINT32_MAX });
	}
	*nslots = sc.max;
	free(sc.names);
	return R.failed ? -EINVAL : rc;
}
