/* Guards hoisted out of \E loops in actions (hoist.c). */
#ifndef SPECTAP_REPLAY_HOIST_H
#define SPECTAP_REPLAY_HOIST_H

#include <stdbool.h>
#include <stdint.h>

#include "module.h"

#define HOIST_MAX 8

/*
 * The leading guards of an \E's body in an action (\E b, e \in S : A(i, j, <<b, e>>) with A's
 * first conjuncts state predicates): g[k] is the k-th guard evaluated in each iteration, and
 * m[k] how many of the \E's binding loops (outermost first) it depends on. When g[k] is false
 * in one iteration, it is false in every iteration that binds the first m[k] loops alike: the
 * enumerator skips them (TLC evaluates each and finds them false). Exact: each skipped
 * iteration would evaluate the same guards first, with the same values.
 */
struct hoist {
	uint32_t n;
	const struct ast *g[HOIST_MAX];
	uint8_t m[HOIST_MAX];
};

/* An \E's hoisted guards, watched in one iteration (by the enumerator, and by eval when an
 * action is evaluated on a known step). */
struct hoist_watch {
	const struct hoist *h;
	uint32_t idx;   /* the next guard expected */
	bool armed;     /* nothing but the guards so far in this iteration */
	int skip;       /* when one was false: the loops it depends on (-1: none was) */
};

/* Sets ast.hoist of every \E in an action definition. After the resolver; 0 or -1 (memory). */
int hoist_compute(struct spec *s);

#endif
