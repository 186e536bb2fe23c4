/*
 * Guards hoisted out of \E loops (hoist.h). etcd-io/raft's trace spec tries every range of log
 * entries for every pair of servers (\E i, j \in Server : \E b, e \in m..n : A(i, j, <<b, e>>))
 * while A's first conjunct asks whether the log line is a message from i to j: without this,
 * a state with a long log costs the square of its length; with it, one iteration per pair.
 */
#include <string.h>

#include "hoist.h"

/* The binding loops of an \E: a tuple bound is one loop, x, y \in S one loop per name. */
struct loops {
	const struct ast *e;
	uint32_t n;
};

static int loop_of(const struct loops *L, uint32_t slot)
{
	uint32_t level = 0;
	for (uint32_t i = 0; i < L->e->n_bounds; i++) {
		const struct bound *b = &L->e->bounds[i];
		for (uint32_t k = 0; k < b->n_names; k++) {
			if (b->slots[k] == slot)
				return (int)(level + (b->tuple ? 0 : k));
		}
		level += b->tuple ? 1 : b->n_names;
	}
	return -1;
}

static uint32_t count_loops(const struct ast *e)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < e->n_bounds; i++)
		n += e->bounds[i].tuple ? 1 : e->bounds[i].n_names;
	return n;
}

/* What an expression depends on: the loops of the \E (as a count, outermost first), or
 * `unknown` (anything impure, or a name this analysis cannot follow). */
/* A call the \E's body goes into: d's parameters stand for args, evaluated in outer's frame
 * (NULL: the \E's). */
struct binding {
	const struct opdef *d;
	struct ast *const *args;
	const struct binding *outer;
};

struct deps {
	const struct loops *L;
	uint32_t m;
	bool unknown;
};

static void walk(struct deps *D, const struct ast *x, uint32_t lam, const struct binding *B, int depth);

static void use_slot(struct deps *D, uint32_t slot)
{
	int l = loop_of(D->L, slot);
	if (l >= 0 && (uint32_t)l + 1 > D->m)
		D->m = (uint32_t)l + 1;
}

static void walk_def(struct deps *D, const struct opdef *d, uint32_t lam, const struct binding *B, int depth)
{
	for (uint32_t i = 0; i < d->n_fbounds; i++)
		walk(D, d->fbounds[i].set, lam, B, depth + 1);
	walk(D, d->body, lam, B, depth + 1);
}

/* lam: the nested frames (LET definitions, LAMBDAs) between x and the frame walked. */
static void walk(struct deps *D, const struct ast *x, uint32_t lam, const struct binding *B, int depth)
{
	if (!x || D->unknown)
		return;
	if (depth > 500) {
		D->unknown = true;
		return;
	}
	if (x->kind == A_NAME) {
		switch (x->ref) {
		case REF_LOCAL:
			if (x->up > lam) {
				D->unknown = true; /* a frame outside the one walked */
			} else if (x->up == lam) {
				if (!B)
					use_slot(D, x->slot);
				else if (x->slot < B->d->n_params && B->args[x->slot]->level > L_STATE)
					D->unknown = true; /* a primed argument: bound unevaluated */
				else if (x->slot < B->d->n_params)
					walk(D, B->args[x->slot], 0, B->outer, depth + 1); /* the argument, in its frame */
			}
			break;
		case REF_BUILTIN:
			if (x->r.bi->impure)
				D->unknown = true; /* TLCSet, Print, random choices: every evaluation counts */
			break;
		case REF_DEF:
			if (x->r.def->impure)
				D->unknown = true;
			break;
		case REF_CONST:
			if (x->n)
				D->unknown = true; /* an operator the cfg gives */
			break;
		default:
			break;
		}
	}
	if (x->kind == A_LAMBDA && x->lambda)
		walk_def(D, x->lambda, lam + 1, B, depth);
	for (uint32_t i = 0; i < x->n_defs; i++)
		walk_def(D, x->defs[i], lam + 1, B, depth);
	for (uint32_t i = 0; i < x->n_bounds; i++)
		walk(D, x->bounds[i].set, lam, B, depth + 1);
	for (uint32_t i = 0; i < x->n_excepts; i++) {
		for (uint32_t j = 0; j < x->excepts[i].n_steps; j++)
			for (uint32_t k = 0; k < x->excepts[i].steps[j].n_args; k++)
				walk(D, x->excepts[i].steps[j].args[k], lam, B, depth + 1);
		walk(D, x->excepts[i].value, lam, B, depth + 1);
	}
	for (uint32_t i = 0; i < x->n; i++)
		walk(D, x->a[i], lam, B, depth + 1);
}

/* Whether the enumerator evaluates g as one guard (not an assignment, a branch or a call it
 * steps into). */
static bool plain_guard(const struct ast *g)
{
	if (g->level > L_STATE)
		return false;
	switch (g->kind) {
	case A_AND:
	case A_OR:
	case A_EXISTS:
	case A_IF:
	case A_CASE:
	case A_LET:
	case A_UNCHANGED:
	case A_STUTTER:
	case A_UNSUPPORTED:
	case A_INST:
		return false;
	case A_NAME:
		return g->ref != REF_LOCAL && g->ref != REF_CONST && !(g->ref == REF_DEF && g->r.def->primes_params);
	default:
		return true;
	}
}

/* Appends the leading guards of conjunct list xs (in d's body when d is set). */
static void leading(struct hoist *h, const struct loops *L, const struct binding *B, struct ast *const *xs, uint32_t n,
		    bool *stop)
{
	for (uint32_t i = 0; i < n && !*stop && h->n < HOIST_MAX; i++) {
		const struct ast *g = xs[i];
		if (!plain_guard(g)) {
			*stop = true;
			return;
		}
		struct deps D = { L, 0, false };
		walk(&D, g, 0, B, 0);
		if (D.unknown) {
			*stop = true;
			return;
		}
		h->g[h->n] = g;
		h->m[h->n] = (uint8_t)D.m;
		h->n++;
	}
}

static struct ast *const *conjuncts(struct ast *const *one, const struct ast *x, uint32_t *n)
{
	if (x->kind == A_AND) {
		*n = x->n;
		return x->a;
	}
	*n = 1;
	return one;
}

/* Whether an argument is evaluated without calling a definition (so that nothing evaluated
 * before the guards can be mistaken for one of them). */
static bool simple_arg(const struct ast *x, int depth)
{
	if (depth > 100 || x->kind == A_LAMBDA || x->kind == A_LET || x->n_defs ||
	    (x->kind == A_NAME && (x->ref == REF_DEF || x->ref == REF_SUBST || (x->ref == REF_CONST && x->n))))
		return false;
	for (uint32_t i = 0; i < x->n_bounds; i++)
		if (x->bounds[i].set && !simple_arg(x->bounds[i].set, depth + 1))
			return false;
	if (x->n_excepts)
		return false;
	for (uint32_t i = 0; i < x->n; i++)
		if (!simple_arg(x->a[i], depth + 1))
			return false;
	return true;
}

/* The action definition a conjunct calls, when the analysis can go into it. */
static const struct opdef *callee(const struct ast *x)
{
	if (x->kind != A_NAME || x->ref != REF_DEF)
		return NULL;
	const struct opdef *d = x->r.def;
	if (d->level < L_ACTION || d->nested || d->n_fbounds || d->recursive || d->higher_order || d->primes_params ||
	    x->n != d->n_params)
		return NULL;
	for (uint32_t i = 0; i < x->n; i++)
		if (!simple_arg(x->a[i], 0))
			return NULL;
	return d;
}

#define MAX_CHAIN 8

static void hoist_exists(struct spt_arena *a, struct ast *e)
{
	struct loops L = { e, count_loops(e) };
	if (!L.n || L.n > 255)
		return;
	struct hoist h = { 0 };
	struct ast *one[1] = { e->a[0] };
	uint32_t n;
	struct ast *const *xs = conjuncts(one, e->a[0], &n);
	/* \E ... : A(args) /\ ...: A's leading guards, its parameters standing for args (and so
	 * on into A's first conjunct, when it calls another action). */
	struct binding chain[MAX_CHAIN];
	const struct binding *B = NULL;
	struct ast *inner[MAX_CHAIN][1];
	for (uint32_t depth = 0; depth < MAX_CHAIN; depth++) {
		const struct opdef *d = callee(xs[0]);
		if (!d)
			break;
		chain[depth] = (struct binding){ d, xs[0]->a, B };
		B = &chain[depth];
		inner[depth][0] = d->body;
		xs = conjuncts(inner[depth], d->body, &n);
	}
	bool stop = false;
	leading(&h, &L, B, xs, n, &stop);
	/* Worth it only when some guard leaves out the innermost loop. */
	bool useful = false;
	for (uint32_t i = 0; i < h.n; i++)
		useful |= h.m[i] < L.n;
	if (!useful)
		return;
	struct hoist *p = spt_arena_alloc(a, sizeof(*p));
	if (p) {
		*p = h;
		e->hoist = p;
	}
}

static void visit(struct spt_arena *a, struct ast *x, int depth)
{
	if (!x || depth > 2000)
		return;
	if (x->kind == A_EXISTS && !x->hoist)
		hoist_exists(a, x);
	for (uint32_t i = 0; i < x->n_bounds; i++)
		visit(a, x->bounds[i].set, depth + 1);
	for (uint32_t i = 0; i < x->n; i++)
		visit(a, x->a[i], depth + 1);
}

int hoist_compute(struct spec *s)
{
	uint32_t nd;
	struct opdef *const *defs = spec_defs(s, &nd);
	for (uint32_t i = 0; i < nd; i++)
		if (defs[i]->level >= L_ACTION && defs[i]->body)
			visit(spec_arena(s), defs[i]->body, 0);
	return 0;
}
