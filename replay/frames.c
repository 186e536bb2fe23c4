/*
 * Frame conditions: the state variables an action surely leaves unchanged (UNCHANGED v among
 * its conjuncts, through the definitions it calls, independent of its parameters). When a step's
 * both states are known (an action property checked on a transition), an action whose frame
 * variables changed is false without looking further: the refinement check of a trace spec
 * skips every disjunct of the high-level Next whose UNCHANGED the step breaks, with all the
 * quantifier bindings under it.
 */
#include <stdlib.h>
#include <string.h>

#include "frames.h"

struct fr {
	struct spt_arena *arena;
	uint32_t words;
	uint8_t *state; /* by def id: 0 not done, 1 in progress, 2 done */
};

/* The variables v names: a variable, an instance's substitution by one, a tuple or a definition
 * of them. false when v is anything else (a parameter, an expression). */
static bool vars_of(const struct ast *v, uint64_t *bits, int depth)
{
	if (depth > 64)
		return false;
	if (v->kind == A_TUPLE) {
		for (uint32_t i = 0; i < v->n; i++)
			if (!vars_of(v->a[i], bits, depth + 1))
				return false;
		return true;
	}
	if (v->kind != A_NAME || v->n)
		return false;
	switch (v->ref) {
	case REF_VAR:
		bits[v->slot / 64] |= 1ull << (v->slot % 64);
		return true;
	case REF_SUBST:
		return vars_of(v->r.subst, bits, depth + 1);
	case REF_DEF:
		return !v->r.def->n_params && !v->r.def->n_fbounds && vars_of(v->r.def->body, bits, depth + 1);
	default:
		return false;
	}
}

static const uint64_t *def_frame(struct fr *F, struct opdef *d);

/* Adds to bits the variables e surely leaves unchanged. */
static void expr_frame(struct fr *F, struct ast *e, uint64_t *bits, int depth)
{
	if (!e || depth > 200)
		return;
	switch (e->kind) {
	case A_AND:
		for (uint32_t i = 0; i < e->n; i++)
			expr_frame(F, e->a[i], bits, depth + 1);
		return;
	case A_LET:
		expr_frame(F, e->a[0], bits, depth + 1);
		return;
	case A_EXISTS: {
		uint64_t *inner = spt_arena_alloc(F->arena, F->words * sizeof(*inner));
		if (!inner)
			return;
		memset(inner, 0, F->words * sizeof(*inner));
		expr_frame(F, e->a[0], inner, depth + 1);
		bool any = false;
		for (uint32_t w = 0; w < F->words; w++) {
			bits[w] |= inner[w];
			any |= inner[w] != 0;
		}
		e->unchanged = any ? inner : NULL;
		return;
	}
	case A_OR:
	case A_IF: {
		/* what every branch leaves unchanged */
		uint32_t first = e->kind == A_IF ? 1 : 0;
		uint64_t *acc = spt_arena_alloc(F->arena, F->words * sizeof(*acc)),
			 *one = spt_arena_alloc(F->arena, F->words * sizeof(*one));
		if (!acc || !one || e->n <= first)
			return;
		for (uint32_t i = first; i < e->n; i++) {
			memset(one, 0, F->words * sizeof(*one));
			expr_frame(F, e->a[i], one, depth + 1);
			for (uint32_t w = 0; w < F->words; w++)
				acc[w] = i == first ? one[w] : acc[w] & one[w];
		}
		for (uint32_t w = 0; w < F->words; w++)
			bits[w] |= acc[w];
		return;
	}
	case A_UNCHANGED: {
		uint64_t tmp[64];
		uint32_t words = F->words < 64 ? F->words : 64;
		memset(tmp, 0, sizeof(tmp));
		if (vars_of(e->a[0], tmp, 0))
			for (uint32_t w = 0; w < words; w++)
				bits[w] |= tmp[w];
		return;
	}
	case A_NAME:
		if (e->ref == REF_DEF && !e->r.def->n_fbounds && e->r.def->level >= L_ACTION) {
			const uint64_t *f = def_frame(F, e->r.def);
			for (uint32_t w = 0; f && w < F->words; w++)
				bits[w] |= f[w];
		}
		return;
	default:
		return;
	}
}

static const uint64_t *def_frame(struct fr *F, struct opdef *d)
{
	if (F->state[d->id] == 2)
		return d->unchanged;
	if (F->state[d->id] == 1)
		return NULL; /* recursion: nothing is sure */
	F->state[d->id] = 1;
	uint64_t *bits = spt_arena_alloc(F->arena, F->words * sizeof(*bits));
	if (bits) {
		memset(bits, 0, F->words * sizeof(*bits));
		expr_frame(F, d->body, bits, 0);
		bool any = false;
		for (uint32_t w = 0; w < F->words; w++)
			any |= bits[w] != 0;
		d->unchanged = any ? bits : NULL;
	}
	F->state[d->id] = 2;
	return d->unchanged;
}

int frames_compute(struct spec *s)
{
	uint32_t nv, nd;
	spec_variables(s, &nv);
	struct opdef *const *defs = spec_defs(s, &nd);
	if (!nv || nv > 64 * 64)
		return 0;
	struct fr F = { spec_arena(s), (nv + 63) / 64, calloc(nd + 1, 1) };
	if (!F.state)
		return -1;
	for (uint32_t i = 0; i < nd; i++)
		if (defs[i]->level >= L_ACTION && !defs[i]->n_fbounds)
			def_frame(&F, defs[i]);
	free(F.state);
	return 0;
}

bool frames_broken(const uint64_t *unchanged, uint32_t n_vars, spt_val *const *cur, spt_val *const *next)
{
	for (uint32_t w = 0; w * 64 < n_vars; w++)
		for (uint64_t m = unchanged[w]; m; m &= m - 1) {
			uint32_t v = w * 64 + (uint32_t)__builtin_ctzll(m);
			if (v < n_vars && cur[v] && next[v] && !spt_value_eq(cur[v], next[v]))
				return true;
		}
	return false;
}

/* ---- what a state predicate reads ---- */

struct rd {
	uint8_t *seen; /* by def id */
	uint32_t n_defs;
	bool volatile_;
};

static void reads_def(struct rd *R, const struct opdef *d, uint64_t *bits, int depth);

static void reads_expr(struct rd *R, const struct ast *e, uint64_t *bits, int depth)
{
	if (!e || R->volatile_)
		return;
	if (depth > 2000) {
		R->volatile_ = true;
		return;
	}
	if (e->kind == A_NAME) {
		switch (e->ref) {
		case REF_VAR:
			bits[e->slot / 64] |= 1ull << (e->slot % 64);
			break;
		case REF_DEF:
			reads_def(R, e->r.def, bits, depth + 1);
			break;
		case REF_SUBST:
			reads_expr(R, e->r.subst, bits, depth + 1);
			break;
		case REF_BUILTIN:
			if (e->r.bi->impure)
				R->volatile_ = true; /* TLCGet, RandomElement, Print...: more than the state */
			break;
		case REF_CONST:
			if (e->n)
				R->volatile_ = true; /* an operator the cfg gives: not looked into */
			break;
		default:
			break;
		}
	}
	if (e->kind == A_LAMBDA && e->lambda)
		reads_def(R, e->lambda, bits, depth + 1);
	for (uint32_t i = 0; i < e->n_defs; i++)
		reads_def(R, e->defs[i], bits, depth + 1);
	for (uint32_t i = 0; i < e->n_bounds; i++)
		reads_expr(R, e->bounds[i].set, bits, depth + 1);
	for (uint32_t i = 0; i < e->n_excepts; i++) {
		for (uint32_t j = 0; j < e->excepts[i].n_steps; j++)
			for (uint32_t k = 0; k < e->excepts[i].steps[j].n_args; k++)
				reads_expr(R, e->excepts[i].steps[j].args[k], bits, depth + 1);
		reads_expr(R, e->excepts[i].value, bits, depth + 1);
	}
	for (uint32_t i = 0; i < e->n; i++)
		reads_expr(R, e->a[i], bits, depth + 1);
}

static void reads_def(struct rd *R, const struct opdef *d, uint64_t *bits, int depth)
{
	if (d->id < R->n_defs) {
		if (R->seen[d->id])
			return;
		R->seen[d->id] = 1;
	}
	if (d->impure) {
		R->volatile_ = true;
		return;
	}
	for (uint32_t i = 0; i < d->n_fbounds; i++)
		reads_expr(R, d->fbounds[i].set, bits, depth + 1);
	reads_expr(R, d->body, bits, depth + 1);
}

int frames_reads(struct spec *s, const struct ast *e, uint64_t *bits)
{
	uint32_t nd;
	spec_defs(s, &nd);
	struct rd R = { calloc(nd + 1, 1), nd, false };
	if (!R.seen)
		return 1;
	reads_expr(&R, e, bits, 0);
	free(R.seen);
	return R.volatile_ ? 1 : 0;
}
