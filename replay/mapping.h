/*
 * Mappings (docs/mapping.md): a TLA+ module that EXTENDS Spec and says how a trace's events
 * become windows of the spec's actions. This knows no particular system: the mapping does.
 */
#ifndef SPECTAP_REPLAY_MAPPING_H
#define SPECTAP_REPLAY_MAPPING_H

#include "check.h"
#include "spectap/trace.h"

struct map_window {
	uint64_t id;           /* 1, 2, ... in trace order of the window's end */
	uint64_t closed_at;    /* the event being read when it closed, and whether a new step of its */
	uint8_t closed_by_end; /* node closed it (0) or its own last event (1): the order of ids */
	const char *action;
	const char *node;      /* the actor */
	spt_val *pre, *post;   /* records: variable -> value */
	spt_val *params;       /* a tuple, or NULL: range over Next's sets */
	spt_val *input;        /* a record, or NULL */
	uint64_t first_event, last_event; /* ordinals in the trace */
};

/* 0 goes on; anything else stops the run and is returned. */
typedef int (*map_window_fn)(void *arg, const struct map_window *w);

struct mapping;

/* Loads the mapping module with Spec standing for spec_path, and the spec's cfg. */
int mapping_new(const char *map_path, const char *spec_path, const char *cfg_path, struct mapping **out,
		struct check_error *err);
void mapping_free(struct mapping *m);
/* The checker of the spec (with the mapping's definitions visible), to check the windows. */
struct checker *mapping_checker(struct mapping *m);
/* The actions WindowStart can name: the strings in it (and in the definitions it uses) that
 * are actions of the spec. *names (malloc'd; the strings are the spec's) or -ENOMEM. */
int mapping_actions(struct mapping *m, const char ***names, uint32_t *n);
/* Coverage (docs/mapping.md): a mapping may define Branch(ev), the name of the code branch an
 * event shows ("" for none), and Branches, the set of branch names a corpus should cover.
 * fn returns 0 to go on. */
typedef int (*map_branch_fn)(void *arg, const char *branch);
/* During mapping_run, fn is called with Branch(ev) of every event that names one (nothing
 * happens when the mapping has no Branch). */
void mapping_on_branch(struct mapping *m, map_branch_fn fn, void *arg);
/* Calls fn for each name in Branches; returns how many (0 when the mapping defines none). */
int mapping_branches(struct mapping *m, map_branch_fn fn, void *arg, struct check_error *err);
/* The windows' values live in the mapping's arenas: pre, params and input, and the parts of
 * post that are the nodes' states, in the live arena (tags live_tags), until the mapping
 * compacts it; fn is called first, where a driver that hands windows to other threads waits
 * for them to be done. The rest of post lives until the next event. */
void mapping_live_tags(const struct mapping *m, unsigned char tags[2]);
void mapping_on_compact(struct mapping *m, void (*fn)(void *arg), void *arg);

/* A mapping may define WindowDrop(ev, a): TRUE when ev shows that the open window of its node
 * (of action a) is a step the trace did not see whole (its post-state was never read); the
 * window closes there, unchecked. The windows dropped so far: */
uint64_t mapping_dropped(const struct mapping *m);

/* Reads every event of r and calls fn for each window, in the order windows end. */
int mapping_run(struct mapping *m, struct spt_reader *r, map_window_fn fn, void *arg, struct check_error *err);
/* The same for the windows that open at events from..to-1 (0-based ordinals): the events before
 * `from` only move the cluster on (no window opens), and reading stops after `to` once every
 * window opened before it is closed. Parts [0, k), [k, l), ... give every window once; their ids
 * are in order within a part (merge by closed_at, closed_by_end). */
int mapping_run_range(struct mapping *m, struct spt_reader *r, uint64_t from, uint64_t to, map_window_fn fn,
		      void *arg, struct check_error *err);

#endif
