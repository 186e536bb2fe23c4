/* The cfg's ALIAS on a counterexample, as TLC's Tool.evalAlias: each state of the behaviour shown
 * is the ALIAS record evaluated on it and its successor (the last on itself), TLCGet("level")
 * its position and TLCExt's Trace the behaviour up to it. An evaluation error does not lose the
 * trace: the state's variables and an "_ALIASEvalError" field with the message, as TLC shows it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model_alias.h"

struct prefix {
	const struct mc_result *r;
	uint32_t upto; /* states 0..upto */
};

static spt_val *state_record(struct spt_arena *a, const struct mc_result *r, spt_val **vals)
{
	return spt_rec(a, (const char *const *)r->vars, vals, r->n_vars);
}

/* TLCExt's Trace while the alias of state upto is evaluated: the behaviour to it. */
static int prefix_trace(void *arg, struct ev *ev, const struct ast *at, spt_val **out)
{
	const struct prefix *p = arg;
	spt_val **recs = spt_arena_alloc(ev->arena, (p->upto + 1) * sizeof(*recs));
	for (uint32_t i = 0; recs && i <= p->upto; i++)
		if (!(recs[i] = state_record(ev->arena, p->r, p->r->trace[i].vals)))
			recs = NULL;
	if (!recs || !(*out = spt_seq_adopt(ev->arena, recs, p->upto + 1)))
		return ev_fail(ev, at, "out of memory building Trace");
	return 0;
}

/* The state's variables with _ALIASEvalError = msg, in that order (TLC appends the field). */
static spt_val *alias_error(struct spt_arena *a, const struct mc_result *r, spt_val **vals, const char *msg)
{
	uint32_t n = r->n_vars;
	spt_val **keys = spt_arena_alloc(a, (n + 1) * sizeof(*keys));
	spt_val **v = spt_arena_alloc(a, (n + 1) * sizeof(*v));
	if (!keys || !v)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (!(keys[i] = spt_cstr(a, r->vars[i])))
			return NULL;
	memcpy(v, vals, n * sizeof(*v));
	if (!(keys[n] = spt_cstr(a, "_ALIASEvalError")) || !(v[n] = spt_cstr(a, msg)))
		return NULL;
	bool dup;
	return spt_fun_ordered(a, keys, v, n + 1, &dup);
}

int mc_alias_trace(struct search *S, struct mc_result *r, struct spt_arena *a)
{
	const struct mc_model *m = S->m;
	if (!m->has_alias || !r->n_trace)
		return 0;
	const struct ast *body = m->alias.e;
	if (body->kind == A_RECORD) {
		r->alias_order = (const char *const *)body->fields;
		r->n_alias_order = body->n;
	}
	struct worker *w = &S->w[0];
	struct interp *in = &w->in;
	struct tlc_run saved = w->run;
	spt_val **oc = in->cur, **on = in->next;
	bool im = in->init_mode, nk = in->next_known;
	struct prefix pre = { r, 0 };
	w->run.trace = prefix_trace;
	w->run.trace_arg = &pre;
	int rc = 0;
	for (uint32_t i = 0; i < r->n_trace && !rc; i++) {
		struct mc_step *st = &r->trace[i];
		spt_arena_reset(&w->scratch);
		in->ev.arena = &w->scratch;
		ev_clear_error(&in->ev);
		in->cur = st->vals;
		in->next = i + 1 < r->n_trace ? r->trace[i + 1].vals : st->vals;
		in->init_mode = false;
		in->next_known = true;
		w->run.level = (int64_t)i + 1;
		pre.upto = i;
		spt_val *v;
		char msg[1200];
		if (mc_eval(in, &m->alias, &v)) {
			const struct eval_error *e = &in->ev.err;
			snprintf(msg, sizeof(msg), "%s:%u:%u: %s", e->pos.file ? e->pos.file : "?", e->pos.line, e->pos.col, e->msg);
			st->alias = alias_error(a, r, st->vals, msg);
		} else if (v->kind != SPT_REC && !(spt_is_fun(v) && !v->n)) {
			snprintf(msg, sizeof(msg), "the alias %s is not a record: %s", m->alias.name, ev_show(&in->ev, v));
			st->alias = alias_error(a, r, st->vals, msg);
		} else {
			st->alias = spt_value_clone(a, v);
		}
		if (!st->alias)
			rc = -ENOMEM;
	}
	w->run = saved;
	in->cur = oc;
	in->next = on;
	in->init_mode = im;
	in->next_known = nk;
	return rc;
}
