/* export --to sysmobench through a system's own dialect module (systems/NAME: dialects.sysmobench
 * in its system.yaml, docs/adding-a-system.md): the dialect is data, not code. */
#ifndef SPECTAP_TOOLS_EXPORT_MODULE_H
#define SPECTAP_TOOLS_EXPORT_MODULE_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "spectap/trace.h"

/* The dialect module the trace's system describes (header system NAME, systems/NAME), into
 * path (PATH_MAX bytes): 1 when there is one, 0 when not (the generic export applies). */
int export_module_find(const struct spt_header *h, char *path, size_t size);

/* Writes every event of r through module's Export(ev, acc) (acc starting as ExportInit; it gives
 * [acc |-> ..., out |-> <<line, ...>>], each line a record written as the envelope's event),
 * after the config line naming the header's nodes. CLI_OK with *events, or CLI_FAIL reported. */
int export_module_run(struct cli *c, const char *module, struct spt_reader *r, FILE *f, const char *out,
		      uint64_t *events, uint64_t *lines);

#endif
