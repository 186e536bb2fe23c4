/* Evaluating resolved TLA+ expressions to values, with TLC's semantics, on one state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "builtins_internal.h"
#include "enumerate.h"
#include "frames.h"
#include "hoist.h"
#include "interp.h"
#include "tlc_order.h"

#define MAX_ENUM 8000000u /* largest set built to enumerate [S -> T] and friends */
#define MAX_DEPTH 100000 /* nesting of eval calls; the stack guard below usually stops first */
#define MEMO_LIMIT ((size_t)32 << 20)

size_t interp_stack_size(void)
{
	static size_t size;
	if (!size) {
		struct rlimit rl;
		size_t lim = (size_t)8 << 20;
		if (getrlimit(RLIMIT_STACK, &rl) == 0)
			lim = rl.rlim_cur == RLIM_INFINITY ? (size_t)256 << 20 : (size_t)rl.rlim_cur;
		if (lim > ((size_t)256 << 20))
			lim = (size_t)256 << 20;
		size = lim;
	}
	return size;
}

/* Half of the stack is what nested evaluation may use. */
size_t interp_stack_budget(void) { return interp_stack_size() / 2; }

int interp_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	int rc = pthread_attr_init(&at);
	if (rc)
		return rc;
	if (!(rc = pthread_attr_setstacksize(&at, interp_stack_size())))
		rc = pthread_create(t, &at, fn, arg);
	pthread_attr_destroy(&at);
	return rc;
}

void interp_init(struct interp *in, struct spec *s, struct spt_arena *long_arena)
{
	memset(in, 0, sizeof(*in));
	ev_init(&in->ev, long_arena);
	in->ev.checker = in;
	in->spec = s;
	in->long_arena = long_arena;
	in->vars = spec_variables(s, &in->n_vars);
	uint32_t nc, *ar;
	spec_constants(s, &ar, &nc);
	in->consts = calloc(nc + 1, sizeof(*in->consts));
	in->const_ops = calloc(nc + 1, sizeof(*in->const_ops));
	in->cur = calloc(in->n_vars + 1, sizeof(*in->cur));
	in->next = calloc(in->n_vars + 1, sizeof(*in->next));
	spec_defs(s, &in->n_once);
	in->once = calloc(in->n_once + 1, sizeof(*in->once));
	in->memo_tries = calloc(in->n_once + 1, sizeof(*in->memo_tries));
	in->memo_hits = calloc(in->n_once + 1, sizeof(*in->memo_hits));
	memo_init(&in->memo, 201, 202, MEMO_LIMIT);
	in->ibind = calloc(spec_n_ipar(s) + 1, sizeof(*in->ibind));
}

void interp_fini(struct interp *in)
{
	free(in->consts);
	free(in->const_ops);
	free(in->cur);
	free(in->next);
	free(in->once);
	free(in->memo_tries);
	free(in->memo_hits);
	free(in->ibind);
	memo_fini(&in->memo);
	bi_tlc_fini(&in->ev);
	ev_fini(&in->ev);
}

struct ctx interp_root_ctx(struct interp *in)
{
	(void)in;
	return (struct ctx){ NULL, NULL, false };
}

static struct spt_arena *A(struct interp *in) { return in->ev.arena; }

struct ctx interp_frame_ctx(struct interp *in, uint32_t nslots)
{
	struct frame *f = spt_arena_alloc(A(in), sizeof(*f) + (nslots ? nslots : 1) * sizeof(f->c[0]));
	if (f) {
		f->up = NULL;
		f->n = nslots;
		memset(f->c, 0, (nslots ? nslots : 1) * sizeof(f->c[0]));
	}
	return (struct ctx){ f, NULL, false };
}

static int oom(struct interp *in, const struct ast *at) { return ev_fail(&in->ev, at, "out of memory"); }

static struct frame *frame_new_n(struct interp *in, uint32_t n, struct frame *up)
{
	struct frame *f = spt_arena_alloc(A(in), sizeof(*f) + (n ? n : 1) * sizeof(f->c[0]));
	if (f) {
		f->up = up;
		f->n = n;
		memset(f->c, 0, (n ? n : 1) * sizeof(f->c[0]));
	}
	return f;
}

struct frame *frame_new(struct interp *in, const struct opdef *d, struct frame *up, const struct ast *at)
{
	uint32_t n = d->nslots;
	struct frame *f = spt_arena_alloc(A(in), sizeof(*f) + (n ? n : 1) * sizeof(f->c[0]));
	if (!f) {
		oom(in, at);
		return NULL;
	}
	f->up = up;
	f->n = n;
	memset(f->c, 0, (n ? n : 1) * sizeof(f->c[0]));
	return f;
}

/* The context an instance's substitution (a REF_SUBST name) is evaluated in: a frame of its own
 * when it binds names ([p \in S |-> ...]), or when it is a parameterized instance's: then the
 * frame's `up` holds the parameters of the I(a)!Op being evaluated (A_INST). */
int subst_ctx(struct interp *in, const struct ast *e, bool primed, struct ctx *out)
{
	struct frame *f = NULL;
	if (e->ipar) {
		struct frame *params = in->ibind[e->ipar - 1];
		if (!params)
			return ev_fail(&in->ev, e, "internal: %s stands for an expression of an instance's parameters, "
						   "which are not bound here", e->name);
		if (!(f = frame_new_n(in, e->slot, params)))
			return oom(in, e);
	} else if (e->slot) {
		f = spt_arena_alloc(A(in), sizeof(*f) + e->slot * sizeof(f->c[0]));
		if (!f)
			return oom(in, e);
		f->up = NULL;
		f->n = e->slot;
		memset(f->c, 0, e->slot * sizeof(f->c[0]));
	}
	*out = (struct ctx){ f, NULL, primed };
	return 0;
}

struct cell *local_cell(struct ctx c, const struct ast *e)
{
	struct frame *f = c.f;
	for (uint16_t k = 0; k < e->up && f; k++)
		f = f->up;
	return f && e->slot < f->n ? &f->c[e->slot] : NULL;
}

static void bind_slot(struct ctx c, uint32_t slot, spt_val *v)
{
	c.f->c[slot].v = v;
	c.f->c[slot].op = NULL;
}

/* ---- operators as arguments ---- */

/* The closure an operator argument (op_ref) denotes. */
static int op_closure(struct interp *in, struct ctx c, const struct ast *a, const struct closure **out)
{
	if (a->kind == A_LAMBDA) {
		struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
		if (!cl)
			return oom(in, a);
		*cl = (struct closure){ a->lambda, c.f, NULL };
		*out = cl;
		return 0;
	}
	switch (a->ref) {
	case REF_LOCAL: {
		struct cell *cell = local_cell(c, a);
		if (!cell || !cell->op)
			return ev_fail(&in->ev, a, "%s is not an operator here", a->name);
		*out = cell->op;
		return 0;
	}
	case REF_CONST:
		if (in->const_ops[a->slot]) {
			*out = in->const_ops[a->slot];
			return 0;
		}
		return ev_fail(&in->ev, a, "the constant operator %s has no definition (give it in the .cfg: %s <- Op)", a->name, a->name);
	case REF_DEF:
	case REF_BUILTIN: {
		struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
		if (!cl)
			return oom(in, a);
		*cl = (struct closure){ a->ref == REF_DEF ? a->r.def : NULL, NULL, a->ref == REF_BUILTIN ? a->r.bi : NULL };
		*out = cl;
		return 0;
	}
	default:
		return ev_fail(&in->ev, a, "%s is not an operator", a->name ? a->name : "this");
	}
}

/* Arguments bound unevaluated (see struct closure). */
static bool lazy_arg(const struct interp *in, const struct opdef *d, const struct ast *a)
{
	/* (In Init, a variable given to an operator may be what it assigns: XInit(x) == x = 0.) */
	return a->level >= L_ACTION || ((d->primes_params || in->init_mode) && a->level >= L_STATE);
}

const struct ast *thunk_expr(struct ctx *c, const struct ast *e)
{
	if (e->kind != A_NAME || e->ref != REF_LOCAL || e->n)
		return NULL;
	struct cell *cell = local_cell(*c, e);
	if (!cell || !cell->op || !cell->op->expr)
		return NULL;
	*c = (struct ctx){ cell->op->env, NULL, cell->op->primed };
	return cell->op->expr;
}

int bind_args(struct interp *in, struct ctx c, const struct ast *call, const struct opdef *d, struct frame *env,
	      struct frame **out)
{
	struct frame *f = frame_new(in, d, env, call);
	if (!f)
		return EVAL_ERR;
	for (uint32_t i = 0; i < d->n_params; i++) {
		if (d->param_arity[i]) {
			if (op_closure(in, c, call->a[i], &f->c[i].op))
				return EVAL_ERR;
		} else if (lazy_arg(in, d, call->a[i])) {
			struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
			if (!cl)
				return oom(in, call);
			*cl = (struct closure){ NULL, c.f, NULL, call->a[i], c.primed };
			f->c[i].op = cl;
		} else if (eval(in, c, call->a[i], &f->c[i].v)) {
			return EVAL_ERR;
		}
	}
	*out = f;
	return 0;
}

static bool any_lazy(const struct interp *in, const struct opdef *d, const struct ast *call)
{
	for (uint32_t i = 0; i < d->n_params && i < call->n; i++)
		if (!d->param_arity[i] && lazy_arg(in, d, call->a[i]))
			return true;
	return false;
}

static int call_builtin_vals(struct interp *in, const struct ast *at, const struct builtin *bi, spt_val *const *args,
			     uint32_t n, spt_val **out)
{
	if (bi->unimplemented)
		return ev_unsupported(&in->ev, at, "%s is not supported: %s", bi->name, bi->unimplemented);
	if (!bi->fn)
		return ev_fail(&in->ev, at, "%s cannot be applied to values here", bi->name);
	return bi->fn(&in->ev, at, args, n, out);
}

uint32_t ev_op_arity(const struct closure *op)
{
	if (op->bi)
		return op->bi->arity < 0 ? 0 : (uint32_t)op->bi->arity;
	return op->def->n_params;
}

int ev_call_op(struct ev *ev, const struct ast *at, const struct closure *op, spt_val *const *args, uint32_t n,
	       spt_val **out)
{
	struct interp *in = ev->checker;
	if (op->bi)
		return call_builtin_vals(in, at, op->bi, args, n, out);
	const struct opdef *d = op->def;
	if (n != d->n_params)
		return ev_fail(ev, at, "%s takes %u arguments, %u given", d->name, d->n_params, n);
	struct frame *f = frame_new(in, d, op->env, at);
	if (!f)
		return EVAL_ERR;
	for (uint32_t i = 0; i < n; i++) {
		if (d->param_arity[i])
			return ev_fail(ev, at, "%s takes an operator argument: it cannot be called here", d->name);
		f->c[i].v = args[i];
	}
	return eval(in, (struct ctx){ f, NULL, false }, d->body, out);
}

/* ---- definitions ---- */

static int fun_def_value(struct interp *in, struct ctx c, const struct ast *at, const struct opdef *d,
			 struct frame *env, spt_val **out);

/* A definition's value computed once per run (constant level, no parameters): built in the
 * long-lived arena. */
static int eval_once(struct interp *in, const struct opdef *d, const struct ast *at, spt_val **out)
{
	if (in->once[d->id]) {
		*out = in->once[d->id];
		return 0;
	}
	struct spt_arena *saved = in->ev.arena;
	in->ev.arena = in->long_arena;
	int rc;
	if (d->n_fbounds) {
		rc = fun_def_value(in, (struct ctx){ NULL, NULL, false }, at, d, NULL, out);
	} else {
		struct frame *f = frame_new(in, d, NULL, at);
		rc = f ? eval(in, (struct ctx){ f, NULL, false }, d->body, out) : EVAL_ERR;
	}
	in->ev.arena = saved;
	if (!rc)
		in->once[d->id] = *out;
	return rc;
}

/* Whether d's applications are worth caching still: after MEMO_TRIAL tries, only if at least
 * one in MEMO_MIN_RATE hits. */
#define MEMO_TRIAL 256
#define MEMO_MIN_RATE 8
static bool memo_worth(struct interp *in, const struct opdef *d)
{
	uint32_t t = in->memo_tries[d->id];
	return t < MEMO_TRIAL || in->memo_hits[d->id] * MEMO_MIN_RATE >= t;
}

/* d(args) via the cache. */
static int memo_call(struct interp *in, const struct opdef *d, struct frame *f, bool primed, spt_val **out)
{
	spt_val *args[64];
	uint32_t n = d->n_params;
	for (uint32_t i = 0; i < n; i++)
		args[i] = f->c[i].v;
	if (in->memo_tries[d->id] < UINT32_MAX)
		in->memo_tries[d->id]++;
	if (memo_lookup(&in->memo, d, args, n, out) == 1) {
		in->memo_hits[d->id]++;
		return 0;
	}
	if (eval(in, (struct ctx){ f, NULL, primed }, d->body, out))
		return EVAL_ERR;
	spt_val *kept;
	memo_store(&in->memo, d, args, n, *out, &kept);
	*out = kept;
	return 0;
}

/* d(args) where the call site's arguments are expressions of c. */
static int call_def(struct interp *in, struct ctx c, const struct ast *e, const struct opdef *d, struct frame *env,
		    spt_val **out)
{
	if (d->evaluated_once && !in->no_memo && !d->n_fbounds)
		return eval_once(in, d, e, out);
	struct frame *f;
	if (bind_args(in, c, e, d, env, &f))
		return EVAL_ERR;
	if (e->memo && !in->no_memo && d->n_params <= 64 && !any_lazy(in, d, e) && memo_worth(in, d))
		return memo_call(in, d, f, c.primed, out);
	return eval(in, (struct ctx){ f, NULL, c.primed }, d->body, out);
}

int eval_call(struct interp *in, const struct opdef *d, spt_val *const *args, uint32_t n, spt_val **out)
{
	if (n != d->n_params || d->higher_order)
		return ev_fail(&in->ev, NULL, "%s takes %u value arguments, %u given", d->name, d->n_params, n);
	if (d->evaluated_once && !in->no_memo)
		return eval_once(in, d, NULL, out);
	if (d->n_fbounds)
		return fun_def_value(in, interp_root_ctx(in), NULL, d, NULL, out);
	struct frame *f = frame_new(in, d, NULL, NULL);
	if (!f)
		return EVAL_ERR;
	for (uint32_t i = 0; i < n; i++)
		f->c[i].v = args[i];
	if (d->cacheable && !in->no_memo && n <= 64 && memo_worth(in, d))
		return memo_call(in, d, f, false, out);
	return eval(in, (struct ctx){ f, NULL, false }, d->body, out);
}

/* A closure applied to the argument expressions of e. */
static int call_closure(struct interp *in, struct ctx c, const struct ast *e, const struct closure *cl, spt_val **out)
{
	if (cl->bi) {
		spt_val *argv[16];
		if (e->n > 16)
			return ev_fail(&in->ev, e, "too many arguments to %s", cl->bi->name);
		for (uint32_t i = 0; i < e->n; i++)
			if (eval(in, c, e->a[i], &argv[i]))
				return EVAL_ERR;
		return call_builtin_vals(in, e, cl->bi, argv, e->n, out);
	}
	const struct opdef *d = cl->def;
	if (e->n != d->n_params)
		return ev_fail(&in->ev, e, "%s takes %u argument%s, %u given", d->name, d->n_params, d->n_params == 1 ? "" : "s", e->n);
	if (d->n_fbounds) {
		if (e->n)
			return ev_fail(&in->ev, e, "%s is a function: write %s[...]", d->name, d->name);
		return fun_def_value(in, c, e, d, cl->env, out);
	}
	if (!d->nested)
		return call_def(in, c, e, d, NULL, out);
	struct frame *f;
	if (bind_args(in, c, e, d, cl->env, &f))
		return EVAL_ERR;
	return eval(in, (struct ctx){ f, NULL, c.primed }, d->body, out);
}

/* ---- ENABLED ---- */

static int first_successor(struct interp *in, void *arg)
{
	(void)in;
	*(bool *)arg = true;
	return 1;
}

/* ENABLED A: some next state (whatever the variables A says nothing of) satisfies A. */
static int eval_enabled(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	if (c.primed)
		return ev_fail(&in->ev, e, "ENABLED inside a primed expression");
	spt_val **next = spt_arena_alloc(A(in), (in->n_vars + 1) * sizeof(*next));
	if (!next)
		return oom(in, e);
	memset(next, 0, (in->n_vars + 1) * sizeof(*next));
	spt_val **saved = in->next;
	bool init_mode = in->init_mode, partial = in->partial;
	uint32_t n_actions = in->n_actions;
	bool next_known = in->next_known;
	in->next = next;
	in->init_mode = false;
	in->partial = true;
	in->next_known = false;
	bool found = false;
	int rc = enumerate(in, c, e->a[0], first_successor, &found);
	in->next = saved;
	in->init_mode = init_mode;
	in->partial = partial;
	in->next_known = next_known;
	in->n_actions = n_actions;
	if (rc == EVAL_ERR)
		return EVAL_ERR;
	*out = spt_bool(A(in), found);
	return 0;
}

/* A \cdot B on a known step s -> t: some u with A(s, u) and B(u, t). */
struct cdot_eval {
	const struct ast *b;
	struct ctx c;
	spt_val **target;
	bool found;
	bool partial; /* in->partial outside the composition (B is evaluated with it) */
};

static int cdot_check(struct interp *in, void *arg)
{
	struct cdot_eval *st = arg;
	spt_val **mid = spt_arena_alloc(A(in), (in->n_vars + 1) * sizeof(*mid));
	if (!mid)
		return oom(in, st->b);
	memcpy(mid, in->next, in->n_vars * sizeof(*mid));
	spt_val **cur = in->cur, **nx = in->next;
	in->cur = mid;
	in->next = st->target;
	in->next_known = true;
	in->partial = st->partial;
	bool b;
	int rc = eval_bool(in, st->c, st->b, &b);
	in->partial = true;
	in->cur = cur;
	in->next = nx;
	in->next_known = false;
	if (rc)
		return EVAL_ERR;
	st->found = b;
	return b ? 1 : 0;
}

static int eval_cdot(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	if (!in->next_known || c.primed)
		return ev_fail(&in->ev, e, "A \\cdot B is evaluated only as a step (in Next, or an action property)");
	spt_val **target = in->next;
	spt_val **a_next = spt_arena_alloc(A(in), (in->n_vars + 1) * sizeof(*a_next));
	if (!a_next)
		return oom(in, e);
	memset(a_next, 0, (in->n_vars + 1) * sizeof(*a_next));
	in->next = a_next;
	in->next_known = false;
	/* As TLC's evaluation of \cdot on a known step: A's middle state may leave variables
	 * unassigned (those neither A nor B speaks of are the rest of the step's business); B
	 * reading one is an error naming it. */
	bool partial = in->partial;
	in->partial = true;
	struct cdot_eval st = { e->a[1], c, target, false, partial };
	int rc = enumerate(in, c, e->a[0], cdot_check, &st);
	in->partial = partial;
	in->next = target;
	in->next_known = true;
	if (rc == EVAL_ERR)
		return EVAL_ERR;
	*out = spt_bool(A(in), st.found);
	return 0;
}

/* ---- builtins ---- */

static const struct ast *unfold(struct ctx *c, const struct ast *e);
static int eval_set(struct interp *in, struct ctx c, const struct ast *e, spt_val **out);
static int all_members(struct interp *in, struct ctx c, spt_val *x, const struct ast *set, bool *out);

/* Whether set is one spectap cannot build (Nat, Int, STRING, Seq(S), and sets made from them by
 * \cup, \cap, \, a filter, SUBSET or a function or record set of them): membership only. */
static bool infinite_set(struct ctx c, const struct ast *set, int depth)
{
	if (depth > 32)
		return false;
	set = unfold(&c, set);
	if (set->kind == A_NAME && set->ref == REF_SET)
		return set->slot != BS_BOOLEAN;
	if (set->kind == A_NAME && set->ref == REF_BUILTIN) {
		switch (set->r.bi->code) {
		case BI_SEQSET: return true;
		case BI_PLAIN:
			if (set->n == 1 && set->a[0]->kind == A_SET && !strcmp(set->r.bi->name, "UNION"))
				for (uint32_t i = 0; i < set->a[0]->n; i++)
					if (infinite_set(c, set->a[0]->a[i], depth + 1))
						return true;
			return false;
		case BI_SUBSET: return set->n == 1 && infinite_set(c, set->a[0], depth + 1);
		case BI_CUP: return set->n == 2 && (infinite_set(c, set->a[0], depth + 1) || infinite_set(c, set->a[1], depth + 1));
		case BI_CAP:
		case BI_SETMINUS: return set->n == 2 && infinite_set(c, set->a[0], depth + 1);
		default: return false;
		}
	}
	if (set->kind == A_FILTER && set->n_bounds == 1)
		return infinite_set(c, set->bounds[0].set, depth + 1);
	if (set->kind == A_FUNCSET)
		return infinite_set(c, set->a[0], depth + 1) || infinite_set(c, set->a[1], depth + 1);
	if (set->kind == A_RECSET)
		for (uint32_t i = 0; i < set->n; i++)
			if (infinite_set(c, set->a[i], depth + 1))
				return true;
	return false;
}

static int builtin_call(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	const struct builtin *bi = e->r.bi;
	switch (bi->code) {
	case BI_IMPLIES: {
		bool a, b = true;
		if (eval_bool(in, c, e->a[0], &a) || (a && eval_bool(in, c, e->a[1], &b)))
			return EVAL_ERR;
		*out = spt_bool(A(in), !a || b);
		return 0;
	}
	case BI_IN:
	case BI_NOTIN: {
		spt_val *x;
		bool m;
		if (eval(in, c, e->a[0], &x) || eval_member(in, c, x, e->a[1], &m))
			return EVAL_ERR;
		*out = spt_bool(A(in), bi->code == BI_IN ? m : !m);
		return 0;
	}
	case BI_SEQSET:
		return ev_fail(&in->ev, e, "Seq(S) is an infinite set: it can only appear right of \\in or \\notin");
	case BI_ASSERT_ERROR:
		return eval_assert_error(in, c, e, out);
	case BI_DEFER:
		/* TLC hands exp to the successor state as a callable that only its simulation and
		 * executor modes run; its breadth-first search, the one spectap does, never does. */
		*out = spt_bool(A(in), true);
		return 0;
	case BI_SUBSETEQ:
		if (infinite_set(c, e->a[1], 0)) {
			/* S \subseteq Nat, S \subseteq Seq(T), ...: each element's membership. */
			spt_val *x;
			bool m;
			if (eval_set(in, c, e->a[0], &x) || all_members(in, c, x, e->a[1], &m))
				return EVAL_ERR;
			*out = spt_bool(A(in), m);
			return 0;
		}
		break;
	default:
		break;
	}
	spt_val *argv[16];
	const struct closure *ops[16];
	if (e->n > 16)
		return ev_fail(&in->ev, e, "too many arguments to %s", bi->name);
	for (uint32_t i = 0; i < e->n; i++) {
		ops[i] = NULL;
		argv[i] = NULL;
		if (bi->op_mask >> i & 1) {
			if (op_closure(in, c, e->a[i], &ops[i]))
				return EVAL_ERR;
		} else if (eval(in, c, e->a[i], &argv[i])) {
			return EVAL_ERR;
		}
	}
	if (bi->hfn)
		return bi->hfn(&in->ev, e, argv, ops, e->n, out);
	return call_builtin_vals(in, e, bi, argv, e->n, out);
}

/* ---- names ---- */

static int name(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	switch (e->ref) {
	case REF_LOCAL: {
		struct cell *cell = local_cell(c, e);
		if (!cell)
			return ev_fail(&in->ev, e, "internal: %s has no frame here", e->name);
		if (cell->op && cell->op->expr) /* an argument bound unevaluated */
			return eval(in, (struct ctx){ cell->op->env, NULL, cell->op->primed || c.primed }, cell->op->expr, out);
		if (cell->op) {
			/* A LET definition without parameters is evaluated once per evaluation of its
			 * LET, as TLC's LazyValue: where it reads no primed variable, outside primes and
			 * Init, and nothing was rewound since (its value could be gone). */
			const struct opdef *d = cell->op->def;
			bool once = d && d->nested && !d->n_params && !d->n_fbounds && !cell->op->bi && d->level <= 1 &&
				    !d->impure && !d->run_state && !c.primed && (!in->init_mode || d->level == 0) &&
				    !in->no_memo && !e->n;
			if (once && cell->v && cell->epoch == A(in)->rewinds) {
				*out = cell->v;
				return 0;
			}
			if (call_closure(in, c, e, cell->op, out))
				return EVAL_ERR;
			if (once) {
				cell->v = *out;
				cell->epoch = A(in)->rewinds;
			}
			return 0;
		}
		if (!cell->v)
			return ev_fail(&in->ev, e, "internal: %s is not bound here", e->name);
		*out = cell->v;
		return 0;
	}
	case REF_DEF: {
		const struct opdef *d = e->r.def;
		if (in->next_known && d->unchanged && frames_broken(d->unchanged, in->n_vars, in->cur, in->next)) {
			*out = spt_bool(A(in), false);
			return 0;
		}
		if (d->n_fbounds) {
			if (d->evaluated_once && !in->no_memo)
				return eval_once(in, d, e, out);
			return fun_def_value(in, c, e, d, NULL, out);
		}
		return call_def(in, c, e, d, NULL, out);
	}
	case REF_CONST:
		if (in->const_ops[e->slot])
			return call_closure(in, c, e, in->const_ops[e->slot], out);
		if (!in->consts[e->slot])
			return ev_unsupported(&in->ev, e, "the constant %s has no value (give it in the .cfg)", e->name);
		*out = in->consts[e->slot];
		return 0;
	case REF_VAR: {
		bool from_next = c.primed || in->init_mode;
		spt_val *v = from_next ? in->next[e->slot] : in->cur[e->slot];
		if (!v) {
			if (in->init_mode)
				return ev_fail(&in->ev, e, "%s is used before Init assigns it", e->name);
			return ev_fail(&in->ev, e, c.primed ? "%s' is used before it is assigned" : "the value of %s is unknown in this state", e->name);
		}
		*out = v;
		return 0;
	}
	case REF_BUILTIN:
		return builtin_call(in, c, e, out);
	case REF_SUBST: {
		struct ctx sc;
		if (subst_ctx(in, e, c.primed, &sc))
			return EVAL_ERR;
		return eval(in, sc, e->r.subst, out);
	}
	case REF_SET:
		if (e->slot == BS_BOOLEAN) {
			spt_val *tf[2] = { spt_bool(A(in), false), spt_bool(A(in), true) };
			*out = spt_set(A(in), tf, 2);
			return *out ? 0 : oom(in, e);
		}
		return ev_fail(&in->ev, e, "%s is an infinite set: it can only appear right of \\in or \\notin", e->name);
	case REF_VALUE:
		*out = e->r.val;
		return 0;
	default:
		return ev_fail(&in->ev, e, "unknown name %s%s", e->name, e->n ? " (with these arguments)" : "");
	}
}

/* ---- sets and bounds ---- */

struct bind_state {
	const struct bound *b;
	uint32_t nb;
	bind_fn fn;
	void *arg;
	spt_val **sets;
};

/* lvl: the loop this call binds (a tuple bound is one loop, x, y \in S one per name). */
static int bind_rec(struct interp *in, struct ctx c, struct bind_state *st, uint32_t i, uint32_t j, uint32_t lvl)
{
	if (i == st->nb)
		return st->fn(in, c, st->arg);
	const struct bound *b = &st->b[i];
	spt_val *s = st->sets[i];
	for (uint32_t k = 0; k < s->n; k++) {
		spt_val *x = s->u.elems[k];
		int rc;
		if (b->tuple) {
			if (x->kind != SPT_SEQ || x->n != b->n_names) {
				if (!(x->n == 0 && b->n_names == 0 && spt_is_fun(x)))
					return ev_fail(&in->ev, b->set, "%s is not a tuple of %u elements", ev_show(&in->ev, x), b->n_names);
			}
			for (uint32_t t = 0; t < b->n_names; t++)
				bind_slot(c, b->slots[t], x->u.elems[t]);
			rc = bind_rec(in, c, st, i + 1, 0, lvl + 1);
		} else {
			/* x, y \in S: each name ranges over S in turn. */
			bind_slot(c, b->slots[j], x);
			rc = j + 1 < b->n_names ? bind_rec(in, c, st, i, j + 1, lvl + 1) : bind_rec(in, c, st, i + 1, 0, lvl + 1);
		}
		if (rc >= EVAL_SKIP_BASE && rc == EVAL_SKIP(lvl + 1))
			rc = 0; /* the next value of this loop may give something */
		if (rc)
			return rc;
	}
	return 0;
}

static int eval_set(struct interp *in, struct ctx c, const struct ast *e, spt_val **out);

/* The set s in TLC's order (CHOOSE, the element TLC picks): a view of its elements, reordered,
 * which is never stored. */
static int tlc_ordered(struct interp *in, const struct ast *at, spt_val **s)
{
	spt_val *const *elems;
	char why[200];
	int rc = tlc_order_elems(A(in), *s, &elems, why, sizeof(why));
	if (rc == -EDOM)
		return ev_fail(&in->ev, at, "%s (TLC orders a set before it CHOOSEs from it)", why);
	if (rc)
		return oom(in, at);
	if (elems == (*s)->u.elems)
		return 0;
	struct spt_value *view = spt_arena_alloc(A(in), sizeof(*view));
	if (!view)
		return oom(in, at);
	*view = **s;
	view->u.elems = elems;
	*s = view;
	return 0;
}

static int eval_bounds_in(struct interp *in, struct ctx c, const struct bound *b, uint32_t nb, bool tlc_order,
			  bind_fn fn, void *arg)
{
	spt_val *stack_sets[8], **sets = nb <= 8 ? stack_sets : spt_arena_alloc(A(in), nb * sizeof(*sets));
	if (!sets)
		return oom(in, NULL);
	for (uint32_t i = 0; i < nb; i++) {
		if (!b[i].set)
			return ev_unsupported(&in->ev, NULL, "an unbounded quantifier (\\E %s : ...) cannot be evaluated: bound it (\\E %s \\in S : ...)",
				       b[i].names[0], b[i].names[0]);
		if (eval_set(in, c, b[i].set, &sets[i]))
			return EVAL_ERR;
		if (tlc_order && tlc_ordered(in, b[i].set, &sets[i]))
			return EVAL_ERR;
	}
	if (!c.f && nb)
		return ev_fail(&in->ev, b[0].set, "internal: bound names without a frame");
	for (uint32_t i = 0; i < nb; i++)
		if (sets[i]->n == 0 && (b[i].tuple || b[i].n_names))
			return 0; /* no binding at all */
	struct bind_state st = { b, nb, fn, arg, sets };
	return bind_rec(in, c, &st, 0, 0, 0);
}

int eval_bounds(struct interp *in, struct ctx c, const struct bound *b, uint32_t nb, bind_fn fn, void *arg)
{
	return eval_bounds_in(in, c, b, nb, false, fn, arg);
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

/* Follows zero-argument definitions (and substitutions) to the expression they stand for. */
static const struct ast *unfold(struct ctx *c, const struct ast *e)
{
	for (int guard = 0; guard < 64 && e->kind == A_NAME && e->n == 0; guard++) {
		if (e->ref == REF_DEF && !e->r.def->n_params && !e->r.def->n_fbounds) {
			*c = (struct ctx){ NULL, NULL, c->primed };
			e = e->r.def->body;
		} else if (e->ref == REF_SUBST && !e->ipar) {
			*c = (struct ctx){ NULL, NULL, c->primed };
			e = e->r.subst;
		} else {
			break;
		}
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
	struct ctx sc = c;
	for (int guard = 0; guard < 64 && set->kind == A_NAME; guard++) {
		/* A call of an operator whose body is a set spectap cannot build (ArrayOfAnyLength(T) ==
		 * [elems : Seq(T)]): membership in its body, the arguments bound. */
		if (set->n && set->ref == REF_DEF && set->r.def->n_params == set->n && !set->r.def->n_fbounds &&
		    !set->r.def->recursive && !set->r.def->higher_order && infinite_set(sc, set->r.def->body, 0)) {
			const struct opdef *d = set->r.def;
			struct frame *f = frame_new(in, d, NULL, set);
			if (!f)
				return EVAL_ERR;
			for (uint32_t i = 0; i < d->n_params; i++) {
				if (infinite_set(sc, set->a[i], 0)) {
					/* Arr(Nat): bound unevaluated, membership goes into it */
					struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
					if (!cl)
						return oom(in, set);
					*cl = (struct closure){ NULL, sc.f, NULL, set->a[i], sc.primed };
					f->c[i].op = cl;
					f->c[i].v = NULL;
				} else if (eval(in, sc, set->a[i], &f->c[i].v)) {
					return EVAL_ERR;
				}
			}
			sc = (struct ctx){ f, NULL, sc.primed };
			set = d->body;
			continue;
		}
		if (set->n)
			break;
		if (set->ref == REF_LOCAL) {
			struct ctx tc = sc;
			const struct ast *t = thunk_expr(&tc, set);
			if (!t)
				break;
			sc = tc;
			set = t;
			continue;
		}
		/* Zero-argument definitions (with a frame when their body binds names) and substitutions.
		 * An impure constant evaluated once is looked up in its value: a random choice in it is
		 * made once, as TLC makes it (SpanTreeRandom's Edges). */
		if (set->ref == REF_DEF && !set->r.def->n_params && !set->r.def->n_fbounds &&
		    !(set->r.def->evaluated_once && set->r.def->impure && !in->no_memo)) {
			const struct opdef *d = set->r.def;
			struct frame *f = d->nslots ? frame_new(in, d, NULL, set) : NULL;
			if (d->nslots && !f)
				return EVAL_ERR;
			sc = (struct ctx){ f, NULL, sc.primed };
			set = d->body;
		} else if (set->ref == REF_SUBST) {
			if (subst_ctx(in, set, sc.primed, &sc))
				return EVAL_ERR;
			set = set->r.subst;
		} else {
			break;
		}
	}
	if (set->kind == A_NAME && set->ref == REF_SET) {
		switch (set->slot) {
		case BS_NAT: *out = x->kind == SPT_INT && x->u.i >= 0; return 0;
		case BS_INT: *out = x->kind == SPT_INT; return 0;
		case BS_STRING: *out = x->kind == SPT_STR; return 0;
		case BS_BOOLEAN: *out = x->kind == SPT_BOOL; return 0;
		default: return ev_unsupported(&in->ev, set, "%s is not supported", set->name);
		}
	}
	if (set->kind == A_NAME && set->ref == REF_BUILTIN && set->n == 1 &&
	    (set->r.bi->code == BI_SEQSET || set->r.bi->code == BI_SUBSET)) {
		/* x \in Seq(S): a sequence of elements of S; x \in SUBSET S: a set of them. */
		bool seq = set->r.bi->code == BI_SEQSET;
		bool shape = seq ? spt_is_fun(x) && (x->n == 0 || x->kind == SPT_SEQ) : x->kind == SPT_SET;
		return shape ? all_members(in, sc, x, set->a[0], out) : (*out = false, 0);
	}
	if (set->kind == A_NAME && set->ref == REF_BUILTIN && set->n == 2 && set->r.bi->code == BI_RANGE) {
		/* x \in a..b without building a..b (TLC's IntervalValue.member): a constant range in
		 * a filter over a large set would otherwise be built once per element. */
		spt_val *lo, *hi;
		if (eval(in, sc, set->a[0], &lo) || eval(in, sc, set->a[1], &hi))
			return EVAL_ERR;
		if (lo->kind == SPT_INT && hi->kind == SPT_INT) {
			*out = x->kind == SPT_INT && x->u.i >= lo->u.i && x->u.i <= hi->u.i;
			return 0;
		}
	}
	if (set->kind == A_NAME && set->ref == REF_BUILTIN && set->n == 2 &&
	    (set->r.bi->code == BI_CUP || set->r.bi->code == BI_CAP || set->r.bi->code == BI_SETMINUS)) {
		/* As TLC's lazy set values: S may be infinite, T is only looked at when needed. */
		bool a, b;
		if (eval_member(in, sc, x, set->a[0], &a))
			return EVAL_ERR;
		int code = set->r.bi->code;
		if ((code == BI_CUP && a) || (code != BI_CUP && !a)) {
			*out = a;
			return 0;
		}
		if (eval_member(in, sc, x, set->a[1], &b))
			return EVAL_ERR;
		*out = code == BI_SETMINUS ? !b : b;
		return 0;
	}
	if (set->kind == A_NAME && set->ref == REF_BUILTIN && set->n == 1 && set->a[0]->kind == A_SET &&
	    !strcmp(set->r.bi->name, "UNION")) {
		/* x \in UNION {S, T}: x \in S \/ x \in T (S or T may be infinite). */
		*out = false;
		for (uint32_t i = 0; i < set->a[0]->n && !*out; i++)
			if (eval_member(in, sc, x, set->a[0]->a[i], out))
				return EVAL_ERR;
		return 0;
	}
	if (set->kind == A_FILTER && set->n_bounds == 1 && sc.f && !set->bounds[0].tuple && set->bounds[0].n_names == 1) {
		/* x \in {y \in S : P}: x \in S /\ P with y = x. */
		bool m;
		if (eval_member(in, sc, x, set->bounds[0].set, &m))
			return EVAL_ERR;
		if (!m) {
			*out = false;
			return 0;
		}
		struct cell *cell = &sc.f->c[set->bounds[0].slots[0]], old = *cell;
		cell->v = x;
		cell->op = NULL;
		int rc = eval_bool(in, sc, set->a[0], out);
		*cell = old;
		return rc;
	}
	if (set->kind == A_FUNCSET) {
		*out = false;
		if (!spt_is_fun(x))
			return 0;
		spt_val *dom;
		if (eval_set(in, sc, set->a[0], &dom))
			return EVAL_ERR;
		if (dom->n != x->n)
			return 0;
		for (uint32_t i = 0; i < x->n; i++) {
			struct spt_value tmp;
			if (!spt_value_eq(spt_fun_key(x, i, &tmp), dom->u.elems[i]))
				return 0;
			bool m;
			if (eval_member(in, sc, spt_fun_val(x, i), set->a[1], &m))
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
			if (eval_member(in, sc, f, set->a[i], &m))
				return EVAL_ERR;
			if (!m)
				return 0;
		}
		*out = true;
		return 0;
	}
	spt_val *s;
	if (eval_set(in, sc, set, &s))
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
	uint32_t total = 0;
	for (uint32_t i = 0; i < nb; i++)
		total += b[i].n_names;
	bool tuple_bound = nb == 1 && b[0].tuple;
	if (total == 1 && !tuple_bound)
		return c.f->c[b[0].slots[0]].v;
	spt_val *stack_parts[16], **parts = total <= 16 ? stack_parts : spt_arena_alloc(A(in), total * sizeof(*parts));
	if (!parts)
		return NULL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < nb; i++)
		for (uint32_t j = 0; j < b[i].n_names; j++)
			parts[n++] = c.f->c[b[i].slots[j]].v;
	return spt_seq(A(in), parts, n);
}

static int collect_one(struct interp *in, struct ctx c, void *arg)
{
	struct collect *k = arg;
	if (k->mode == 1) {
		bool keep;
		if (eval_bool(in, c, k->body, &keep))
			return EVAL_ERR;
		if (!keep)
			return 0;
		spt_val *key = bound_key(in, c, k->b, k->nb);
		return key ? push(in, k, key, NULL) : oom(in, k->body);
	}
	spt_val *v;
	if (eval(in, c, k->body, &v))
		return EVAL_ERR;
	spt_val *key = k->mode == 2 ? bound_key(in, c, k->b, k->nb) : NULL;
	if (k->mode == 2 && !key)
		return oom(in, k->body);
	return push(in, k, v, key);
}

static int constructor(struct interp *in, struct ctx c, const struct ast *body, const struct bound *b, uint32_t nb,
		       int mode, const struct ast *at, spt_val **out)
{
	struct collect k = { .body = body, .mode = mode, .b = b, .nb = nb };
	if (eval_bounds(in, c, b, nb, collect_one, &k))
		return EVAL_ERR;
	if (mode == 2) {
		bool dup;
		*out = spt_fun(A(in), k.keys, k.items, k.n, &dup);
		if (!*out && !dup)
			return oom(in, at);
		if (!*out)
			return ev_fail(&in->ev, at, "the function's domain lists an argument twice");
		return 0;
	}
	*out = spt_set(A(in), k.items, k.n);
	return *out ? 0 : oom(in, at);
}

/* Materializes a function definition f[x \in S] == e (module level, or in a LET). */
static int fun_def_value(struct interp *in, struct ctx c, const struct ast *at, const struct opdef *d,
			 struct frame *env, spt_val **out)
{
	struct frame *f = frame_new(in, d, env, at);
	if (!f)
		return EVAL_ERR;
	if (++in->depth > MAX_DEPTH) {
		in->depth--;
		return ev_fail(&in->ev, at, "recursion deeper than %d evaluating %s", MAX_DEPTH, d->name);
	}
	int rc = constructor(in, (struct ctx){ f, NULL, c.primed }, d->body, d->fbounds, d->n_fbounds, 2, at, out);
	in->depth--;
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
	uint32_t *idx = spt_arena_alloc(A(in), (e->n + 1) * sizeof(*idx));
	if (!sets || !idx)
		return oom(in, e);
	double total = 1;
	for (uint32_t i = 0; i < e->n; i++) {
		if (eval_set(in, c, e->a[i], &sets[i]))
			return EVAL_ERR;
		total *= sets[i]->n;
		idx[i] = 0;
	}
	if (total > MAX_ENUM)
		return ev_fail(&in->ev, e, "the set of records has %.0f elements: too many to enumerate", total);
	size_t n = (size_t)total;
	spt_val **items = spt_arena_alloc(A(in), (n + 1) * sizeof(*items));
	if (!items)
		return oom(in, e);
	for (size_t k = 0; k < n; k++) {
		spt_val **v = spt_arena_alloc(A(in), (e->n + 1) * sizeof(*v));
		if (!v)
			return oom(in, e);
		for (uint32_t i = 0; i < e->n; i++)
			v[i] = sets[i]->u.elems[idx[i]];
		bool dup;
		if (!(items[k] = spt_fun(A(in), e->field_vals, v, e->n, &dup)))
			return dup ? ev_fail(&in->ev, e, "a field is named twice") : oom(in, e);
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
	spt_val *stack_parts[16], **parts = n <= 16 ? stack_parts : spt_arena_alloc(A(in), n * sizeof(*parts));
	if (!parts)
		return oom(in, args[0]);
	for (uint32_t i = 0; i < n; i++)
		if (eval(in, c, args[i], &parts[i]))
			return EVAL_ERR;
	*key = spt_seq(A(in), parts, n);
	return *key ? 0 : oom(in, args[0]);
}

/* One update of an EXCEPT; owned: base is a copy this EXCEPT made (set in place at the top). */
static int except_path(struct interp *in, struct ctx c, const struct except_upd *u, uint32_t k, spt_val *base,
		       bool owned, spt_val **out)
{
	if (k == u->n_steps) {
		struct ctx vc = c;
		vc.at = base;
		return eval(in, vc, u->value, out);
	}
	const struct except_step *st = &u->steps[k];
	spt_val *key, *nv;
	if (st->field) {
		if (!(key = spt_cstr(A(in), st->name)))
			return oom(in, u->value);
	} else if (fn_args(in, c, (const struct ast *const *)st->args, st->n_args, &key)) {
		return EVAL_ERR;
	}
	if (!spt_is_fun(base))
		return ev_fail(&in->ev, u->value, "EXCEPT on %s, which is not a function", ev_show(&in->ev, base));
	long i = spt_fun_index(base, key);
	if (i < 0) {
		*out = base; /* outside the domain: unchanged, as TLC */
		return 0;
	}
	if (except_path(in, c, u, k + 1, spt_fun_val(base, (uint32_t)i), false, &nv))
		return EVAL_ERR;
	if (owned && k == 0) {
		spt_fun_set_owned(base, (uint32_t)i, nv);
		*out = base;
		return 0;
	}
	*out = spt_fun_set(A(in), base, (uint32_t)i, nv);
	return *out ? 0 : oom(in, u->value);
}

/* f[args] where f names a function definition: the body at that point, without building f. */
static int apply_fun_def(struct interp *in, struct ctx c, const struct ast *e, const struct opdef *fd, struct frame *env,
			 bool *done, spt_val **out)
{
	*done = false;
	uint32_t names = 0;
	for (uint32_t i = 0; i < fd->n_fbounds; i++) {
		if (fd->fbounds[i].tuple)
			return 0;
		names += fd->fbounds[i].n_names;
	}
	if (names > 1) {
		/* f[a, b] with f[x \in S, y \in T] == ...: each argument in its set (S may be
		 * infinite: CR[n \in Nat, v \in S]), the body at them, f never built. */
		uint32_t na = e->n - 1;
		spt_val *tuple = NULL;
		if (na == 1) {
			if (eval(in, c, e->a[1], &tuple))
				return EVAL_ERR;
			if (tuple->kind != SPT_SEQ || tuple->n != names)
				return 0;
		} else if (na != names) {
			return 0;
		}
		*done = true;
		struct frame *f = frame_new(in, fd, env, e);
		if (!f)
			return EVAL_ERR;
		struct ctx dc = { f, NULL, c.primed };
		uint32_t k = 0;
		for (uint32_t i = 0; i < fd->n_fbounds; i++)
			for (uint32_t j = 0; j < fd->fbounds[i].n_names; j++, k++) {
				spt_val *x;
				if (tuple)
					x = tuple->u.elems[k];
				else if (eval(in, c, e->a[1 + k], &x))
					return EVAL_ERR;
				bool m;
				if (eval_member(in, dc, x, fd->fbounds[i].set, &m))
					return EVAL_ERR;
				if (!m)
					return ev_fail(&in->ev, e, "%s is not in the domain of %s", ev_show(&in->ev, x), fd->name);
				f->c[fd->fbounds[i].slots[j]].v = x;
			}
		return eval(in, dc, fd->body, out);
	}
	if (fd->n_fbounds != 1 || fd->fbounds[0].n_names != 1)
		return 0;
	*done = true;
	spt_val *key;
	if (fn_args(in, c, (const struct ast *const *)e->a + 1, e->n - 1, &key))
		return EVAL_ERR;
	struct frame *f = frame_new(in, fd, env, e);
	if (!f)
		return EVAL_ERR;
	struct ctx dc = { f, NULL, c.primed };
	bool m;
	if (eval_member(in, dc, key, fd->fbounds[0].set, &m))
		return EVAL_ERR;
	if (!m)
		return ev_fail(&in->ev, e, "%s is not in the domain of %s", ev_show(&in->ev, key), fd->name);
	f->c[fd->fbounds[0].slots[0]].v = key;
	return eval(in, dc, fd->body, out);
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
	struct hoist_watch *saved = in->watch, w = { e->hoist, 0, true, -1 };
	in->watch = e->hoist && e->kind == A_EXISTS ? &w : NULL;
	int rc = eval_bool(in, c, e->a[0], &b);
	in->watch = saved;
	if (rc)
		return EVAL_ERR;
	if (!b && w.skip >= 0)
		return EVAL_SKIP(w.skip); /* no binding like this one gives a witness */
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
	return st->found ? 1 : oom(in, st->e);
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

static int eval_let(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	if (!c.f)
		return ev_fail(&in->ev, e, "internal: LET without a frame");
	for (uint32_t i = 0; i < e->n_defs; i++) {
		struct closure *cl = spt_arena_alloc(A(in), sizeof(*cl));
		if (!cl)
			return oom(in, e);
		*cl = (struct closure){ e->defs[i], c.f, NULL };
		c.f->c[e->def_slots[i]].op = cl;
		c.f->c[e->def_slots[i]].v = NULL;
	}
	return eval(in, c, e->a[0], out);
}

static int eval_apply(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	const struct ast *f = e->a[0];
	if (f->kind == A_NAME && f->n == 0) {
		/* f[x] for a function definition: the body at x (recursion without building f). */
		const struct opdef *fd = NULL;
		struct frame *env = NULL;
		if (f->ref == REF_DEF && f->r.def->n_fbounds) {
			fd = f->r.def;
		} else if (f->ref == REF_LOCAL) {
			struct cell *cell = local_cell(c, f);
			if (cell && cell->op && cell->op->def && cell->op->def->n_fbounds) {
				fd = cell->op->def;
				env = cell->op->env;
			}
		}
		if (fd && !(fd->evaluated_once && in->once[fd->id])) {
			bool done;
			int rc = apply_fun_def(in, c, e, fd, env, &done, out);
			if (done)
				return rc;
		}
	}
	spt_val *fv, *key;
	if (eval(in, c, f, &fv) || fn_args(in, c, (const struct ast *const *)e->a + 1, e->n - 1, &key))
		return EVAL_ERR;
	return apply(in, e, fv, key, out);
}

volatile sig_atomic_t interp_time_up;

/* P(a)!Op (A_INST): P's parameters are the first cells of c's frame while Op is evaluated. Out of
 * line: eval's own frame is on the stack once per nesting. */
__attribute__((noinline)) static int eval_inst(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	struct frame *saved = in->ibind[e->ipar - 1];
	in->ibind[e->ipar - 1] = c.f;
	int rc = eval(in, c, e->a[0], out);
	in->ibind[e->ipar - 1] = saved;
	return rc;
}

int eval(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	/* ++steps > max_steps with a limit (max_steps 0: none, max_steps - 1 the largest count) */
	if (in->steps++ > in->max_steps - 1)
		return ev_fail(&in->ev, e, "evaluation budget of %llu steps exhausted (--max-steps)",
			       (unsigned long long)in->max_steps);
	if (interp_time_up)
		return ev_fail(&in->ev, e, "the time limit (--timeout) was reached while evaluating this");
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (in->depth == 0) {
		in->stack_base = here;
		size_t budget = interp_stack_budget();
		in->stack_floor = here > budget ? here - budget : 0;
	}
	if (++in->depth > MAX_DEPTH || here < in->stack_floor) {
		int d = in->depth--;
		return ev_fail(&in->ev, e, "evaluation nested too deeply (%d levels): unbounded recursion?", d);
	}
	int rc = 0;
	*out = NULL;
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
	case A_NAME:
		rc = name(in, c, e, out);
		break;
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
		for (uint32_t i = 0; i < e->n && !rc && b != want; i++) {
			struct hoist_watch *w = in->watch;
			bool watched = false;
			if (w && w->armed) {
				/* An \E's leading guard (hoist.h): not armed while it is evaluated. */
				watched = e->kind == A_AND && e->a[i] == w->h->g[w->idx];
				w->armed = false;
			}
			rc = eval_bool(in, c, e->a[i], &b);
			if (watched && !rc) {
				if (!b)
					w->skip = w->h->m[w->idx];
				else if (++w->idx < w->h->n)
					w->armed = true;
			}
		}
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
	case A_LET:
		rc = eval_let(in, c, e, out);
		break;
	case A_INST:
		rc = eval_inst(in, c, e, out);
		break;
	case A_CHOOSE: {
		if (!e->bounds[0].set) {
			rc = ev_unsupported(&in->ev, e, "CHOOSE %s : P without a set cannot be evaluated (TLC cannot either): give the "
				      "definition it is in a value in the .cfg, or write CHOOSE %s \\in S : P",
				      e->bounds[0].names[0], e->bounds[0].names[0]);
			break;
		}
		struct choose_st st = { e, NULL };
		rc = eval_bounds_in(in, c, e->bounds, 1, true, choose_one, &st);
		if (rc == 1)
			rc = 0, *out = st.found;
		else if (!rc)
			rc = ev_fail(&in->ev, e, "CHOOSE found no element that satisfies the predicate");
		break;
	}
	case A_EXISTS:
	case A_FORALL: {
		for (uint32_t i = 0; i < e->n_bounds; i++)
			if (!e->bounds[i].set) {
				rc = ev_unsupported(&in->ev, e, "an unbounded quantifier (%s %s : ...) cannot be evaluated (TLC cannot either): "
					      "bound it (%s %s \\in S : ...)", e->kind == A_EXISTS ? "\\E" : "\\A",
					      e->bounds[i].names[0], e->kind == A_EXISTS ? "\\E" : "\\A", e->bounds[i].names[0]);
				goto done;
			}
		if (e->kind == A_EXISTS && in->next_known && e->unchanged &&
		    frames_broken(e->unchanged, in->n_vars, in->cur, in->next)) {
			*out = spt_bool(A(in), false);
			rc = 0;
			break;
		}
		rc = eval_bounds(in, c, e->bounds, e->n_bounds, quantify, (void *)e);
		if (rc >= EVAL_SKIP_BASE)
			rc = 0; /* \E: no witness */
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
		rc = constructor(in, c, e->a[0], e->bounds, e->n_bounds, 1, e, out);
		break;
	case A_MAP:
		rc = constructor(in, c, e->a[0], e->bounds, e->n_bounds, 0, e, out);
		break;
	case A_FUNC:
		rc = constructor(in, c, e->a[0], e->bounds, e->n_bounds, 2, e, out);
		break;
	case A_FUNCSET: {
		spt_val *d, *r;
		if (!(rc = eval_set(in, c, e->a[0], &d)) && !(rc = eval_set(in, c, e->a[1], &r)))
			rc = funcset(in, e, d, r, out);
		break;
	}
	case A_APPLY:
		rc = eval_apply(in, c, e, out);
		break;
	case A_RECORD: {
		spt_val **v;
		bool dup;
		if (e->rec_pos) { /* each field straight to its place in canonical order */
			if (!(v = spt_arena_alloc(A(in), e->n * sizeof(*v)))) {
				rc = oom(in, e);
				break;
			}
			for (uint32_t i = 0; i < e->n && !rc; i++)
				rc = eval(in, c, e->a[i], &v[e->rec_pos[i]]);
			if (!rc && !(*out = spt_rec_adopt_sorted(A(in), e->rec_keys, v, e->n)))
				rc = oom(in, e);
			break;
		}
		if (!(rc = eval_operands(in, c, e, &v)) && !(*out = spt_fun(A(in), e->field_vals, v, e->n, &dup)))
			rc = dup ? ev_fail(&in->ev, e, "a record field is named twice") : oom(in, e);
		if (!rc && e->n == 0)
			*out = spt_empty_fun(A(in), SPT_REC);
		break;
	}
	case A_RECSET:
		rc = recset(in, c, e, out);
		break;
	case A_FIELD: {
		spt_val *r;
		if ((rc = eval(in, c, e->a[0], &r)))
			break;
		*out = r->kind == SPT_REC ? spt_fun_apply(r, e->field_vals[0]) : NULL;
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
		/* The first update that changes f copies it; the later ones change that copy. */
		bool owned = false;
		for (uint32_t i = 0; i < e->n_excepts && !rc; i++) {
			spt_val *before = f;
			rc = except_path(in, c, &e->excepts[i], 0, f, owned, &f);
			owned = owned || f != before;
		}
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
	case A_STUTTER: {
		/* As a step's truth (an action property): [A]_v is A \/ v' = v, <<A>>_v is A /\ v' # v. */
		spt_val *now, *then;
		struct ctx pc = c;
		pc.primed = true;
		if ((rc = eval(in, c, e->a[1], &now)) || (rc = eval(in, pc, e->a[1], &then)))
			break;
		if (spt_value_eq(now, then)) {
			*out = spt_bool(A(in), e->num == 0);
		} else {
			bool b;
			if (!(rc = eval_bool(in, c, e->a[0], &b)))
				*out = spt_bool(A(in), b);
		}
		break;
	}
	case A_CDOT:
		rc = eval_cdot(in, c, e, out);
		break;
	case A_UNSUPPORTED:
		if (e->num == T_ENABLED && e->n == 1) {
			rc = eval_enabled(in, c, e, out);
			break;
		}
		rc = ev_unsupported(&in->ev, e, "%s", e->name);
		break;
	}
done:
	in->depth--;
	if (!rc && !*out)
		rc = oom(in, e);
	return rc;
}
