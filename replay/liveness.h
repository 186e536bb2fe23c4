/*
 * Internal to the model checker: liveness properties, decided on the behaviour graph the
 * breadth-first search builds (liveness.c). A property is taken apart into checks of the forms
 * the public specs use (<>P, []<>P, <>[]P, P ~> Q, WF and SF as properties, under \A and
 * definitions), each violated exactly when the graph (with a stuttering step at every state)
 * has a cycle, reachable as the form says, that is fair for every WF_v(A) and SF_v(A) of the
 * SPECIFICATION and meets the form's condition. Anything else is refused, named.
 */
#ifndef SPECTAP_REPLAY_LIVENESS_H
#define SPECTAP_REPLAY_LIVENESS_H

#include "model_internal.h"

/* A set of atoms (state or action ones: at most LIVE_MAX_ATOMS of each). */
typedef unsigned __int128 live_bits;
#define LIVE_MAX_ATOMS 128
#define LIVE_BIT(i) ((live_bits)1 << (i))

enum live_kind {
	LK_EVENTUALLY,        /* <>P: from an initial state, a fair behaviour never in P (and always in
			       * q, when q >= 0: []Q => <>P) */
	LK_ALWAYS_EVENTUALLY, /* []<>P: a fair cycle of states not in P */
	LK_EVENTUALLY_ALWAYS, /* <>[]P: a fair cycle through a state not in P */
	LK_LEADSTO,           /* P ~> Q: from a P /\ ~Q state, a fair behaviour never in Q */
	LK_WF,                /* WF_v(A): a fair cycle where <<A>>_v is always enabled, never taken */
	LK_SF,                /* SF_v(A): a fair cycle where <<A>>_v is enabled somewhere, never taken */
	LK_GF,                /* []<>X1 \/ []<>X2 ...: a fair cycle where each state Xi is false and no
			       * step is an action Xi (fmask: the state atoms, emask: the action atoms) */
	LK_INVARIANT,         /* c => []P: a state reachable from an initial state in c where P is false */
};

struct live_check {
	const char *name;     /* the cfg's property */
	struct src_pos pos;
	enum live_kind kind;
	int p, q;             /* state atoms */
	int step, en;         /* LK_WF, LK_SF: the action atom <<A>>_v and the state atom ENABLED <<A>>_v */
	live_bits fmask, emask; /* LK_GF */
	int guard;            /* IF c THEN F ELSE G: only behaviours from initial states where the state */
	bool guard_neg;       /* atom guard is true (false, guard_neg): -1 for all */
};

struct live_fair {
	bool strong;
	int step, en;
};

struct live_edge {
	uint32_t src, dst;
	live_bits bits;       /* action atoms true on the step */
};

struct live {
	struct mc_list state_atoms, action_atoms; /* at most LIVE_MAX_ATOMS of each */
	struct live_check *checks;
	uint32_t n_checks;
	struct live_fair *fair;
	uint32_t n_fair;
	int16_t en_step[LIVE_MAX_ATOMS]; /* by state atom: the action atom it is ENABLED of, or -1 */
	bool deferred_used;   /* some ENABLED was decided from the steps (live_defer) */
	live_bits cycle_mask; /* the spec's <>[][A]_v: action atoms every step of a cycle satisfies */
	/* The behaviour graph (the search fills it in, one worker). */
	uint64_t *fps;        /* by node */
	live_bits *sbits;     /* by node: state atoms true there */
	live_bits *dbits;     /* by node: ENABLED atoms left to the steps from there */
	uint32_t n_nodes, cap_nodes;
	struct live_edge *edges;
	size_t n_edges, cap_edges;
	uint32_t *init;
	uint32_t n_init, cap_init;
	uint64_t *map_keys;   /* fingerprint -> node */
	uint32_t *map_ids;
	size_t map_cap;
};

/* A property conjunct that is neither []P nor [][A]_v nor initial: taken apart into checks, or
 * -ENOTSUP with err naming what is not supported. */
int live_property(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e,
		  struct check_error *err);
/* A fairness conjunct of the SPECIFICATION (WF_v(A), SF_v(A), under \A and definitions). */
int live_fairness(struct mc_model *m, const char *name, const struct opdef *owner, const struct ast *e,
		  struct check_error *err);
void live_free(struct live *L);

/* During the search: a state kept (its id is the next node) and a step between two kept states. */
int live_node(struct live *L, uint64_t fp, uint32_t *id);
int live_find(const struct live *L, uint64_t fp, uint32_t *id);
int live_add_edge(struct live *L, uint32_t src, uint32_t dst, live_bits bits);
int live_add_init(struct live *L, uint32_t id);
/* ENABLED <<A>>_v could not be enumerated at node id (A primes an expression, as a refinement
 * mapping's substitutions do): decided after the search from the steps out of it. */
void live_defer(struct live *L, uint32_t id, uint32_t atom);

/* After the search: 0 when every check holds; 1 with *check and *node (a state of the fair cycle
 * found) when one is violated; -1 out of memory. */
int live_decide(struct live *L, uint32_t *check, uint32_t *node);

#endif
