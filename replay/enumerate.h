/* Successor enumeration: every next state an action allows from the current state. */
#ifndef SPECTAP_REPLAY_ENUMERATE_H
#define SPECTAP_REPLAY_ENUMERATE_H

#include "interp.h"

/* Called with in->next complete; a non-zero return stops the enumeration and is returned. */
typedef int (*succ_fn)(struct interp *in, void *arg);

/*
 * Enumerates the successors of in->cur under action (evaluated in c) into in->next, calling fn
 * for each. With in->init_mode, enumerates the initial states of a state predicate instead.
 * 0 when done, fn's non-zero value, or EVAL_ERR (message in in->ev).
 */
int enumerate(struct interp *in, struct ctx c, const struct ast *action, succ_fn fn, void *arg);

/* Prints v into buf in TLA+ notation, cut to its size with "..." at the end (diagnoses). */
void show_value_cut(char *buf, size_t size, spt_val *v);

#endif
