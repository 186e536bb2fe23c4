/*
 * The model a cfg defines, read as TLC reads it: INIT/NEXT or SPECIFICATION (split into its
 * initial predicate, [][Next]_v and fairness), INVARIANTs, PROPERTIES split into what a safety
 * search checks ([]P on every state, [][A]_v on every step, the rest on initial states) and
 * what it cannot (liveness: refused, named), CONSTRAINTs, ACTION_CONSTRAINTs, VIEW, SYMMETRY.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "frames.h"
#include "liveness.h"
#include "resolve.h"

int mc_fail(struct check_error *err, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return rc;
}

static int push(struct mc_list *l, const char *name, const struct opdef *owner, const struct ast *e)
{
	struct mc_formula *n = realloc(l->f, (l->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	l->f = n;
	l->f[l->n++] = (struct mc_formula){ name, owner, e, NULL };
	return 0;
}

/* The root module's definition a cfg keyword names, with TLC's complaints when there is none. */
static const struct opdef *named_def(struct mc_model *m, const char *name, const char *what, uint32_t line,
				     struct check_error *err)
{
	struct symbol *s = module_lookup(spec_root(m->spec), name);
	if (!s || s->kind != SYM_DEF) {
		mc_fail(err, -EINVAL, "%s:%u: the %s %s specified in the configuration file is not defined in the specification",
		     m->cfg->path, line, what, name);
		return NULL;
	}
	if (s->def->n_params || s->def->n_fbounds) {
		mc_fail(err, -EINVAL, "%s:%u: the %s %s takes arguments: TLC requires one without", m->cfg->path, line, what, name);
		return NULL;
	}
	return s->def;
}

/* Where a conjunct of a temporal formula goes. */
enum part { P_INIT, P_BOX_STATE, P_BOX_ACTION, P_FAIRNESS, P_TEMPORAL };

/* WF_v(A), SF_v(A), and conjunctions and \A of them (\A p \in P : WF_v(A(p))). */
static bool is_fairness(const struct ast *e, int depth)
{
	if (depth > 64)
		return false;
	if (e->kind == A_UNSUPPORTED)
		return e->num == T_WF || e->num == T_SF;
	if (e->kind == A_FORALL || e->kind == A_LET)
		return is_fairness(e->a[0], depth + 1);
	if (e->kind == A_AND) {
		for (uint32_t i = 0; i < e->n; i++)
			if (!is_fairness(e->a[i], depth + 1))
				return false;
		return true;
	}
	if (e->kind == A_NAME && e->ref == REF_DEF && !e->r.def->n_fbounds && e->r.def->level == L_TEMPORAL)
		return is_fairness(e->r.def->body, depth + 1);
	return false;
}

static enum part classify(const struct ast *e)
{
	if (e->level <= L_STATE && e->kind != A_UNSUPPORTED)
		return P_INIT;
	if (e->kind == A_UNSUPPORTED && e->num == T_ALWAYS && e->n == 1) {
		const struct ast *in = e->a[0];
		if (in->kind == A_STUTTER && in->num == 0)
			return P_BOX_ACTION;
		if (in->level <= L_STATE && in->kind != A_UNSUPPORTED)
			return P_BOX_STATE;
	}
	if (is_fairness(e, 0))
		return P_FAIRNESS;
	return P_TEMPORAL;
}

typedef int (*part_fn)(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e,
		       enum part p, struct check_error *err);

/* Calls fn on each conjunct of e, unfolding definitions (without parameters) of temporal formulas. */
static int conjuncts(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e, part_fn fn,
		     int depth, struct check_error *err)
{
	if (depth > 100)
		return mc_fail(err, -EINVAL, "%s: the formula nests definitions more than 100 deep", name);
	if (e->kind == A_AND) {
		for (uint32_t i = 0; i < e->n; i++) {
			int rc = conjuncts(m, name, owner, e->a[i], fn, depth + 1, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (e->kind == A_NAME && e->ref == REF_DEF && e->n == 0 && !e->r.def->n_params && !e->r.def->n_fbounds &&
	    e->r.def->level == L_TEMPORAL)
		return conjuncts(m, name, e->r.def, e->r.def->body, fn, depth + 1, err);
	return fn(m, name, owner, e, classify(e), err);
}

static const char *describe(const struct ast *e)
{
	if (e->kind != A_UNSUPPORTED)
		return "a temporal formula";
	switch (e->num) {
	case T_EVENTUALLY: return "the temporal operator <> (eventually)";
	case T_LEADSTO: return "the temporal operator ~> (leads to)";
	case T_ALWAYS: return "a [] of a temporal formula";
	case T_WF: case T_SF: return "fairness";
	case T_ENABLED: return "ENABLED";
	default: return "a temporal formula";
	}
}

static int spec_part(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e, enum part p,
		     struct check_error *err)
{
	switch (p) {
	case P_INIT:
		return 0; /* the initial states: enumerated from the whole formula (its temporal parts skipped) */
	case P_BOX_ACTION:
		if (m->has_next)
			return mc_fail(err, -EINVAL, "%s: the specification %s has more than one [][A]_v conjunct (TLC allows one)",
				    m->cfg->path, name);
		m->has_next = true;
		m->next = (struct mc_formula){ name, owner, e->a[0]->a[0] };
		return 0;
	case P_FAIRNESS:
		return live_fairness(m, name, owner, e, err); /* for liveness properties, if any */
	default:
		if (e->level == L_TEMPORAL && (e->kind == A_UNSUPPORTED || e->kind == A_FORALL || e->kind == A_NAME))
			return live_fairness(m, name, owner, e, err); /* <>[][A]_v (under \A): a condition on cycles */
		return mc_fail(err, -ENOTSUP,
			    "%s:%u:%u: the specification %s has a conjunct with %s, which spectap does not model check "
			    "(only Init /\\ [][Next]_v /\\ fairness)",
			    e->pos.file, e->pos.line, e->pos.col, name, describe(e));
	}
}

/* [](A => []B), A and B state predicates: the trace-validation property "the log is consumed"
 * (Traceetcdraft's TraceMatched). */
static bool box_implies_box(const struct ast *e, const struct ast **a, const struct ast **b)
{
	if (e->kind != A_UNSUPPORTED || e->num != T_ALWAYS || e->n != 1)
		return false;
	const struct ast *im = e->a[0];
	if (im->kind != A_NAME || im->ref != REF_BUILTIN || im->r.bi->code != BI_IMPLIES || im->n != 2)
		return false;
	const struct ast *rhs = im->a[1];
	if (rhs->kind != A_UNSUPPORTED || rhs->num != T_ALWAYS || rhs->n != 1)
		return false;
	if (im->a[0]->level > L_STATE || rhs->a[0]->level > L_STATE || im->a[0]->kind == A_UNSUPPORTED ||
	    rhs->a[0]->kind == A_UNSUPPORTED)
		return false;
	*a = im->a[0];
	*b = rhs->a[0];
	return true;
}

static int property_part(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e,
			 enum part p, struct check_error *err)
{
	const struct ast *a, *b;
	switch (p) {
	case P_INIT: return push(&m->init_props, name, owner, e);
	case P_BOX_STATE: return push(&m->invariants, name, owner, e->a[0]);
	case P_BOX_ACTION: return push(&m->action_props, name, owner, e->a[0]);
	case P_TEMPORAL:
		if (box_implies_box(e, &a, &b)) {
			const struct ast **nb = realloc(m->expand_b, (m->expand_props.n + 1) * sizeof(*nb));
			if (!nb)
				return -ENOMEM;
			m->expand_b = nb;
			m->expand_b[m->expand_props.n] = b;
			return push(&m->expand_props, name, owner, a);
		}
		/* fall through */
	default:
		return live_property(m, name, owner, e, err);
	}
}

static bool is_builtin(const struct ast *e, const char *name, uint32_t n)
{
	return e->kind == A_NAME && e->ref == REF_BUILTIN && e->n == n && strcmp(e->r.bi->name, name) == 0;
}

/* v <= Len(L) (or v < Len(L)) with v a variable: the cursor of a trace spec and its log. */
static bool cursor_test(struct mc_model *m, const struct opdef *owner, const struct ast *e)
{
	bool le = is_builtin(e, "<=", 2) || is_builtin(e, "=<", 2) || is_builtin(e, "\\leq", 2);
	if (!le && !is_builtin(e, "<", 2))
		return false;
	const struct ast *v = e->a[0], *len = e->a[1];
	if (v->kind != A_NAME || v->ref != REF_VAR || v->n || !is_builtin(len, "Len", 1))
		return false;
	m->cursor = (int)v->slot;
	m->cursor_offset = le ? 0 : 1;
	m->log = (struct mc_formula){ NULL, owner, len->a[0], NULL };
	return true;
}

/* The cursor of a trace spec, from the first property [](v <= Len(L) => []B) (TraceMatched). */
static void find_cursor(struct mc_model *m)
{
	m->cursor = -1;
	for (uint32_t i = 0; i < m->expand_props.n; i++)
		if (cursor_test(m, m->expand_props.f[i].owner, m->expand_props.f[i].e)) {
			const struct ast *log = m->log.e;
			m->log.name = log->kind == A_NAME && !log->n ? log->name : "the log";
			m->cursor_prop = i;
			return;
		}
}

/* The names of a list keyword, each a definition of at most level max. */
static int named_list(struct mc_model *m, const struct cfg_names *ns, const char *what, int max, struct mc_list *out,
		      struct check_error *err)
{
	for (uint32_t i = 0; i < ns->n; i++) {
		const struct opdef *d = named_def(m, ns->names[i], what, ns->lines[i], err);
		if (!d)
			return -EINVAL;
		if (d->level > max)
			return mc_fail(err, -EINVAL, "%s:%u: the %s %s is not a %s", m->cfg->path, ns->lines[i], what, ns->names[i],
				    max == L_STATE ? "state predicate (one with no primes or temporal operators)"
						   : "action (one without temporal operators)");
		if (push(out, ns->names[i], d, d->body))
			return -ENOMEM;
	}
	return 0;
}

int mc_model_load(const struct mc_opts *o, struct mc_model *m, struct check_error *err)
{
	memset(m, 0, sizeof(*m));
	int rc = checker_new(o->spec_path, o->cfg_path, &m->ck, err);
	if (rc)
		return rc;
	m->spec = checker_spec(m->ck);
	m->cfg = checker_cfg(m->ck);
	m->vars = checker_vars(m->ck, &m->n_vars);
	const struct cfg *c = m->cfg;
	if (!c->path)
		return mc_fail(err, -EINVAL, "%s: model checking needs a cfg (INIT and NEXT, or SPECIFICATION): give --cfg",
			    o->spec_path);
	if (c->spec && (c->init || c->next))
		return mc_fail(err, -EINVAL, "%s: the configuration file cannot specify both INIT/NEXT and SPECIFICATION fields",
			    c->path);
	const struct opdef *d;
	if (c->spec) {
		if (!(d = named_def(m, c->spec, "specification", c->spec_line, err)))
			return -EINVAL;
		if ((rc = conjuncts(m, c->spec, d, d->body, spec_part, 0, err)))
			return rc;
		m->has_init = true;
		m->init = (struct mc_formula){ c->spec, d, d->body };
	}
	if (c->init) {
		if (!(d = named_def(m, c->init, "initial predicate", c->init_line, err)))
			return -EINVAL;
		m->has_init = true;
		m->init = (struct mc_formula){ c->init, d, d->body };
	}
	if (c->next) {
		if (!(d = named_def(m, c->next, "next-state action", c->next_line, err)))
			return -EINVAL;
		m->has_next = true;
		m->next = (struct mc_formula){ c->next, d, d->body };
	}
	if (m->n_vars && !m->has_init)
		return mc_fail(err, -EINVAL, "%s: the configuration file did not specify the initial state predicate", c->path);
	if ((rc = named_list(m, &(struct cfg_names){ (const char **)c->invariants, c->invariant_lines, c->n_invariants },
			     "invariant", L_STATE, &m->invariants, err)))
		return rc;
	m->n_cfg_invariants = m->invariants.n;
	for (uint32_t i = 0; i < c->properties.n; i++) {
		if (!(d = named_def(m, c->properties.names[i], "property", c->properties.lines[i], err)))
			return -EINVAL;
		if ((rc = conjuncts(m, c->properties.names[i], d, d->body, property_part, 0, err)))
			return rc;
	}
	find_cursor(m);
	if (o->trace_spec && m->cursor >= 0) {
		/* "Some behaviour matches the whole log" is decided from the cursor (mc_trace_outcome),
		 * not by the property's TLCGet("queue") = 1, which holds only while one state is left
		 * per line: with hidden state the search carries several. */
		uint32_t i = m->cursor_prop;
		memmove(&m->expand_props.f[i], &m->expand_props.f[i + 1], (m->expand_props.n - i - 1) * sizeof(m->expand_props.f[0]));
		memmove(&m->expand_b[i], &m->expand_b[i + 1], (m->expand_props.n - i - 1) * sizeof(m->expand_b[0]));
		m->expand_props.n--;
	}
	if ((m->invariants.n || m->action_props.n) && m->n_vars && !m->has_next)
		return mc_fail(err, -EINVAL, "%s: the configuration file did not specify the next state predicate", c->path);
	if ((rc = named_list(m, &c->constraints, "constraint", L_STATE, &m->constraints, err)) ||
	    (rc = named_list(m, &c->action_constraints, "action constraint", L_ACTION, &m->action_constraints, err)) ||
	    (rc = named_list(m, &c->postconditions, "post condition", L_STATE, &m->postconditions, err)))
		return rc;
	if (c->view) {
		if (!(d = named_def(m, c->view, "view function", c->view_line, err)))
			return -EINVAL;
		m->has_view = true;
		m->view = (struct mc_formula){ c->view, d, d->body };
	}
	if (c->alias) {
		if (!(d = named_def(m, c->alias, "alias", c->alias_line, err)))
			return -EINVAL;
		if (d->level > L_ACTION)
			return mc_fail(err, -EINVAL, "%s:%u: the alias %s has a temporal operator: TLC evaluates it on a state and "
						     "its successor", c->path, c->alias_line, c->alias);
		m->has_alias = true;
		m->alias = (struct mc_formula){ c->alias, d, d->body };
	}
	if (c->symmetry && !(m->symmetry = named_def(m, c->symmetry, "symmetry", c->symmetry_line, err)))
		return -EINVAL;
	m->check_deadlock = o->deadlock != 0 && c->check_deadlock != 0;
	/* What the state predicates read: invariants and constraints are skipped on a successor
	 * that changed none of their variables (the predecessor satisfied them). */
	struct mc_list *lists[2] = { &m->invariants, &m->constraints };
	uint32_t words = (m->n_vars + 63) / 64;
	for (int k = 0; k < 2 && words; k++)
		for (uint32_t i = 0; i < lists[k]->n; i++) {
			uint64_t *bits = spt_arena_alloc(spec_arena(m->spec), words * sizeof(*bits));
			if (!bits)
				return mc_fail(err, -ENOMEM, "out of memory");
			memset(bits, 0, words * sizeof(*bits));
			if (frames_reads(m->spec, lists[k]->f[i].e, bits) == 0)
				lists[k]->f[i].reads = bits;
		}
	return 0;
}

void mc_model_free(struct mc_model *m)
{
	live_free(m->live);
	free(m->invariants.f);
	free(m->init_props.f);
	free(m->action_props.f);
	free(m->constraints.f);
	free(m->action_constraints.f);
	free(m->postconditions.f);
	free(m->expand_props.f);
	free(m->expand_b);
	checker_free(m->ck);
	memset(m, 0, sizeof(*m));
}

static struct frame *formula_frame(struct interp *in, const struct mc_formula *f)
{
	struct frame *fr = frame_new(in, f->owner, NULL, NULL);
	for (uint32_t i = 0; fr && i < f->nb; i++)
		fr->c[f->bslots[i]].v = f->bvals[i];
	return fr;
}

int mc_eval(struct interp *in, const struct mc_formula *f, spt_val **out)
{
	struct frame *fr = formula_frame(in, f);
	if (!fr)
		return EVAL_ERR;
	return eval(in, (struct ctx){ fr, NULL, false }, f->e, out);
}

int mc_eval_bool(struct interp *in, const struct mc_formula *f, bool *out)
{
	struct frame *fr = formula_frame(in, f);
	if (!fr)
		return EVAL_ERR;
	return eval_bool(in, (struct ctx){ fr, NULL, false }, f->e, out);
}

int mc_check_assumptions(struct mc_model *m, struct interp *in, struct mc_result *r, struct check_error *err)
{
	uint32_t n;
	struct module *const *mods = spec_modules(m->spec, &n);
	for (uint32_t i = 0; i < n; i++) {
		if (mods[i]->is_std || mods[i]->subst)
			continue; /* as TLC: the assumptions of the root module and those it extends */
		for (uint32_t j = 0; j < mods[i]->n_assumes; j++) {
			const struct opdef *a = mods[i]->assumes[j];
			spt_val *v;
			ev_clear_error(&in->ev);
			if (eval_call(in, a, NULL, 0, &v)) {
				const struct eval_error *e = &in->ev.err;
				return mc_fail(err, -EINVAL, "%s:%u:%u: evaluating the ASSUME at %s:%u:%u: %s",
					    e->pos.file ? e->pos.file : a->pos.file, e->pos.line, e->pos.col, a->pos.file,
					    a->pos.line, a->pos.col, e->msg);
			}
			if (v->kind != SPT_BOOL)
				return mc_fail(err, -EINVAL, "%s:%u:%u: the ASSUME is %s, not a Boolean", a->pos.file, a->pos.line,
					    a->pos.col, ev_show(&in->ev, v));
			if (!v->u.b) {
				r->verdict = MC_ASSUMPTION;
				snprintf(r->what, sizeof(r->what), "line %u, col %u of module %s", a->pos.line, a->pos.col,
					 mods[i]->name);
				snprintf(r->msg, sizeof(r->msg), "%s:%u:%u: the assumption is false", a->pos.file, a->pos.line,
					 a->pos.col);
				return 1;
			}
		}
	}
	return 0;
}
