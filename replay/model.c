/* A model-checking run: load, assumptions, the search, its counterexample, postconditions. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liveness.h"
#include "model_alias.h"
#include "model_trace.h"

struct mc_priv {
	struct mc_model m;
	struct search S;
	bool search_made;
	struct spt_arena arena; /* the trace's values */
};

static int postconditions(struct search *S, struct mc_result *r, struct check_error *err)
{
	struct worker *w = &S->w[0];
	struct interp *in = &w->in;
	for (uint32_t i = 0; i < S->m->postconditions.n; i++) {
		const struct mc_formula *f = &S->m->postconditions.f[i];
		spt_arena_reset(&w->scratch);
		in->ev.arena = &w->scratch;
		ev_clear_error(&in->ev);
		w->run.level = 0;
		bool b;
		if (mc_eval_bool(in, f, &b)) {
			const struct eval_error *e = &in->ev.err;
			snprintf(err->msg, sizeof(err->msg), "%s:%u:%u: evaluating the postcondition %s: %s",
				 e->pos.file ? e->pos.file : "?", e->pos.line, e->pos.col, f->name, e->msg);
			return -EINVAL;
		}
		if (!b) {
			r->verdict = MC_POSTCONDITION;
			snprintf(r->what, sizeof(r->what), "%s", f->name);
			return 0;
		}
	}
	return 0;
}

/* --states: each state of the trace as (variable index, value); a field that names no variable
 * is an error (a typo would otherwise go unchecked). */
static int trace_lines(struct mc_model *m, const struct mc_opts *o, struct check_error *err)
{
	spt_val *s = o->states;
	if (s->kind != SPT_SEQ || !s->n) {
		snprintf(err->msg, sizeof(err->msg), "%s: a state trace is a non-empty JSON array of objects", o->states_name);
		return -EINVAL;
	}
	struct spt_arena *a = spec_arena(m->spec);
	if (!(m->lines = spt_arena_alloc(a, s->n * sizeof(*m->lines)))) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	m->n_lines = s->n;
	for (uint32_t k = 0; k < s->n; k++) {
		spt_val *st = s->u.elems[k];
		struct mc_line *l = &m->lines[k];
		if (st->kind != SPT_REC && !(spt_is_fun(st) && !st->n)) {
			snprintf(err->msg, sizeof(err->msg), "%s: state %u is not a JSON object of variables", o->states_name, k + 1);
			return -EINVAL;
		}
		l->n = 0;
		l->var = spt_arena_alloc(a, (st->n + 1) * sizeof(*l->var));
		l->val = spt_arena_alloc(a, (st->n + 1) * sizeof(*l->val));
		if (!l->var || !l->val) {
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < st->n; i++) {
			spt_val *key = st->u.fn.keys[i];
			uint32_t v = 0;
			while (v < m->n_vars && strcmp(m->vars[v], key->u.s) != 0)
				v++;
			if (v == m->n_vars) {
				snprintf(err->msg, sizeof(err->msg), "%s: state %u: %s is not a variable of the spec", o->states_name, k + 1,
					 key->u.s);
				return -EINVAL;
			}
			l->var[l->n] = v;
			l->val[l->n++] = st->u.fn.vals[i];
		}
	}
	m->check_deadlock = false; /* the trace's last state may have no successor */
	m->cursor_offset = 1;      /* a state at level k matched k states: the next is k + 1 */
	return 0;
}

/* The log line a state's cursor stands for (--states: the state at level k stands for k + 1). */
static int64_t line_of(const struct mc_model *m, spt_val **state, uint32_t level)
{
	if (m->lines)
		return (int64_t)level + 1;
	spt_val *c = state[m->cursor];
	return c->kind == SPT_INT ? c->u.i + m->cursor_offset : -1;
}

/* A trace spec's outcome before anything is known: its cursor and log named (when it has them:
 * true), no line reached. */
static bool outcome_names(const struct mc_model *m, const struct mc_opts *o, struct mc_trace_outcome *t)
{
	t->closest.depth = -1;
	t->log_len = -1;
	t->line = -1;
	t->error_line = -1;
	t->n_diffs = -1;
	if (m->cursor < 0 && !m->lines)
		return false;
	t->cursor = m->lines ? "the level" : m->vars[m->cursor];
	t->log = m->lines ? o->states_name : m->log.name;
	return true;
}

/* A trace spec's outcome: the furthest line reached, the log's entry there and, when some line
 * was not matched, a behaviour to a state at that line and why none of its successors matched. */
static void trace_outcome(struct mc_priv *p, const struct mc_opts *o, struct mc_result *r)
{
	struct mc_model *m = &p->m;
	struct search *S = &p->S;
	struct mc_trace_outcome *t = &r->trace_spec;
	if (!outcome_names(m, o, t))
		return;
	if (r->n_trace)
		t->error_line = line_of(m, r->trace[r->n_trace - 1].vals, r->n_trace);
	t->found = true;
	uint64_t fp = 0;
	for (unsigned i = 0; i < S->nw; i++) {
		const struct worker *w = &S->w[i];
		if (!w->cursor_n)
			continue;
		int64_t line = w->cursor_max + m->cursor_offset;
		if (line > t->line) {
			t->line = line;
			t->frontier = 0;
			fp = w->cursor_fp;
		}
		if (line == t->line)
			t->frontier += w->cursor_n;
	}
	struct worker *w0 = &S->w[0];
	struct interp *in = &w0->in;
	spt_arena_reset(&w0->scratch);
	in->ev.arena = &w0->scratch;
	ev_clear_error(&in->ev);
	w0->run.level = 0;
	spt_val *log = o->states;
	if (!m->lines && (mc_eval(in, &m->log, &log) || !(log->kind == SPT_SEQ || (spt_is_fun(log) && log->n == 0))))
		return;
	t->log_len = log->n;
	if (t->line >= 1 && t->line <= t->log_len)
		t->entry = spt_value_clone(&p->arena, log->u.elems[t->line - 1]);
	/* A trace spec's POSTCONDITION that the log was matched to its end (CCF's
	 * TraceMatchedNonTrivially) fails because of the line diagnosed here. */
	if (t->line < 1 || t->line > t->log_len || !fp ||
	    (r->verdict != MC_OK && r->verdict != MC_TEMPORAL && r->verdict != MC_POSTCONDITION))
		return; /* matched to the end, or another error is the story */
	char why[512];
	if (!r->n_trace || line_of(m, r->trace[r->n_trace - 1].vals, r->n_trace) != t->line) {
		/* The behaviour shown is one to the furthest line (the search's own error, if any,
		 * stopped elsewhere). */
		r->n_trace = 0;
		S->err_parent = fp;
		S->err_state = NULL;
		if (mc_trace_build(S, r, &p->arena, why, sizeof(why))) {
			if (!r->warnings[0])
				snprintf(r->warnings, sizeof(r->warnings), "the behaviour to line %" PRId64 " could not be rebuilt: %s",
					 t->line, why);
			return;
		}
	}
	if (!r->n_trace)
		return;
	w0->run.level = (int64_t)r->n_trace;
	if (m->lines) {
		if (mc_trace_closest(S, r->trace[r->n_trace - 1].vals, &m->lines[t->line - 1], t, why, sizeof(why)) &&
		    !r->warnings[0])
			snprintf(r->warnings, sizeof(r->warnings), "diagnosing state %" PRId64 " failed: %s", t->line, why);
		return;
	}
	if (mc_trace_diagnose(S, r->trace[r->n_trace - 1].vals, &t->closest, why, sizeof(why)) && !r->warnings[0])
		snprintf(r->warnings, sizeof(r->warnings), "diagnosing line %" PRId64 " failed: %s", t->line, why);
}

int mc_run(const struct mc_opts *o, struct mc_result *r, struct check_error *err)
{
	memset(r, 0, sizeof(*r));
	struct mc_priv *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	r->priv = p;
	spt_arena_init(&p->arena);
	p->arena.tag = TAG_TRACE;
	double t0 = search_now();
	int rc = mc_model_load(o, &p->m, err);
	if (rc)
		return rc;
	struct mc_model *m = &p->m;
	if (o->trace_spec && m->cursor < 0) {
		snprintf(err->msg, sizeof(err->msg),
			 "%s: no log cursor: a trace spec needs a property [](v <= Len(Log) => ...) (as etcd-io/raft's "
			 "TraceMatched) in its cfg's PROPERTIES, naming the variable that indexes the log; "
			 "without one, check it with --model",
			 o->spec_path);
		return -EINVAL;
	}
	if (o->states && (rc = trace_lines(m, o, err)))
		return rc;
	r->vars = m->vars;
	r->n_vars = m->n_vars;
	if (checker_warnings(m->ck))
		snprintf(r->warnings, sizeof(r->warnings), "%s", checker_warnings(m->ck));
	p->search_made = true;
	struct search *S = &p->S;
	if ((rc = search_init(S, m, o, err)))
		return rc;
	struct worker *w0 = &S->w[0];
	w0->in.ev.arena = &w0->scratch;
	if ((rc = mc_check_assumptions(m, &w0->in, r, err)) < 0)
		return rc;
	if (rc == 1) { /* an assumption is false: no state was searched */
		outcome_names(m, o, &r->trace_spec);
		r->seconds = search_now() - t0;
		return 0;
	}
	if (m->has_init && (rc = search_run(S, err)))
		return rc;
	r->verdict = S->failed ? S->verdict : MC_OK;
	snprintf(r->what, sizeof(r->what), "%s", S->what);
	snprintf(r->msg, sizeof(r->msg), "%s", S->msg);
	r->init_generated = S->init_generated;
	r->init_distinct = S->init_distinct;
	r->generated = S->init_generated;
	r->distinct = fpset_size(S->fps);
	r->depth = atomic_load(&S->max_level);
	r->min_out = UINT32_MAX;
	uint64_t expanded = 0, out_sum = 0;
	for (unsigned i = 0; i < S->nw; i++) {
		r->generated += S->w[i].generated;
		expanded += S->w[i].expanded;
		out_sum += S->w[i].out_sum;
		if (S->w[i].expanded && S->w[i].out_min < r->min_out)
			r->min_out = S->w[i].out_min;
		if (S->w[i].out_max > r->max_out)
			r->max_out = S->w[i].out_max;
		if (S->failed)
			r->queue += S->w[i].out.n;
	}
	if (S->failed)
		r->queue += S->level.n > S->next ? S->level.n - S->next : 0;
	if (!S->failed && atomic_load(&S->exit_req)) /* TLCSet("exit"): the states found, not expanded */
		r->queue = r->distinct > expanded ? r->distinct - expanded : 0;
	if (!expanded)
		r->min_out = 0;
	r->mean_out = expanded ? (double)out_sum / (double)expanded : 0;
	r->fp_bytes = fpset_bytes(S->fps);
	if (S->failed && (S->err_parent || S->err_state)) {
		char why[512];
		if (mc_trace_build(S, r, &p->arena, why, sizeof(why)) && r->warnings[0] == '\0')
			snprintf(r->warnings, sizeof(r->warnings), "the counterexample could not be rebuilt: %s", why);
	}
	if (!S->failed && m->live && m->live->n_checks) {
		uint32_t check, node;
		int lr = live_decide(m->live, &check, &node);
		if (lr < 0) {
			snprintf(err->msg, sizeof(err->msg), "out of memory checking the liveness properties (%u states)",
				 m->live->n_nodes);
			return -ENOMEM;
		}
		if (lr == 1) {
			r->verdict = MC_LIVENESS;
			snprintf(r->what, sizeof(r->what), "%s", m->live->checks[check].name);
			S->err_parent = m->live->fps[node];
			S->err_state = NULL;
			char why[512];
			if (mc_trace_build(S, r, &p->arena, why, sizeof(why)) && r->warnings[0] == '\0')
				snprintf(r->warnings, sizeof(r->warnings), "the counterexample could not be rebuilt: %s", why);
		}
	}
	if (!S->failed && r->verdict == MC_OK && (rc = postconditions(S, r, err)))
		return rc;
	trace_outcome(p, o, r);
	if (mc_alias_trace(S, r, &p->arena)) {
		snprintf(err->msg, sizeof(err->msg), "out of memory evaluating the alias %s", m->alias.name);
		return -ENOMEM;
	}
	if (r->verdict != MC_OK && r->verdict != MC_POSTCONDITION && r->verdict != MC_ASSUMPTION && m->postconditions.n &&
	    !r->warnings[0])
		snprintf(r->warnings, sizeof(r->warnings),
			 "the POSTCONDITION %s was not evaluated: TLC evaluates it after a violation too, with TLCExt's "
			 "CounterExample bound to the behaviour shown; spectap only on a run without one",
			 m->postconditions.f[0].name);
	r->seconds = search_now() - t0;
	return 0;
}

void mc_result_free(struct mc_result *r)
{
	struct mc_priv *p = r->priv;
	if (!p)
		return;
	if (p->search_made)
		search_fini(&p->S);
	mc_model_free(&p->m);
	spt_arena_fini(&p->arena);
	free(p);
	r->priv = NULL;
}
