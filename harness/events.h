/* events: a description's probe hits turned into events by its events module (a TLA+ module,
 * docs/adding-a-system.md), as the collector's shaping step (collect_shape_fn). It knows no
 * particular system: the module says what each hit means.
 *
 * For each hit, in time order, the module's Shape(hit, acc) is evaluated, acc starting as
 * ShapeInit; hit is the record
 *   [probe |-> the probe's name, node |-> the node (by pid), pid |-> its process (a new one after
 *    a restart), tid |-> the thread, g |-> the
 *    goroutine (Go: the same from a function's entry to its return, whatever thread runs it),
 *    ts |-> nanoseconds (CLOCK_MONOTONIC), r |-> [read name |-> value, ...],
 *    faulted |-> {names of the reads that could not be read}, nodes |-> <<every node's name>>]
 * (values: integers, booleans, strings, byte strings as sequences of 0..255; a pointer is its
 * address as an integer), and Shape gives [acc |-> the new acc, out |-> <<event, ...>>], each
 * event a record [kind |-> "...", args |-> [...], state |-> [...], msg |-> [dir |-> "send" or
 * "recv", from |-> node, to |-> node, type |-> "...", fields |-> [...]]] (args, state and msg
 * optional). A hit may be no event, one, or several. */
#ifndef SPECTAP_HARNESS_EVENTS_H
#define SPECTAP_HARNESS_EVENTS_H

#include <stdint.h>

#include "collect.h"
#include "goprobes.h"

struct hevents;

struct hevents_stats {
	uint64_t hits, events, repeats; /* repeats: entry hits dropped as morestack repeats */
};

int hevents_new(const char *module, const struct hprobes *probes, const char *const *nodes, size_t nnodes,
		struct hevents **out, char *err, size_t errsize);
void hevents_free(struct hevents *e);
/* The collect_shape_fn, with the hevents as ctx. */
int hevents_shape(void *ctx, struct collect_shape *s);
const struct hevents_stats *hevents_stats(const struct hevents *e);
/* Hits of probe i (of the hprobes given), repeats left out. */
uint64_t hevents_probe_hits(const struct hevents *e, size_t i);

#endif
