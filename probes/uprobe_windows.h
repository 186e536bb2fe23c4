/* Read windows for a probe spec (struct uprobe_window in probes/bpf/uprobe.h): the loader plans
 * them from the reads, so a spec's author never writes one and a record is the same with or
 * without them. */
#ifndef SPECTAP_PROBES_UPROBE_WINDOWS_H
#define SPECTAP_PROBES_UPROBE_WINDOWS_H

#include <stdint.h>

#include "bpf/uprobe.h"

/* Sets s->windows, s->nwindows and every read's win/pick: the accesses at one address
 * expression that fit in UPROBE_WINDOW_BYTES and are two or more become a window (at most
 * UPROBE_MAX_WINDOWS, those serving the most accesses). s's reads must be checked already. */
void uprobe_plan_windows(struct probe_spec *s);

#endif
