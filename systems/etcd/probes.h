/*
 * The etcd probe set, as data: which raft functions of Debian's etcd 3.4.23 to probe, where,
 * and what to read there. Offsets are those tests/go/offsets/run.sh prints for that build.
 */
#ifndef SPECTAP_ETCD_PROBES_H
#define SPECTAP_ETCD_PROBES_H

#include <stddef.h>

#include "collect.h"

/* The collector's table for the probes etcd_probes_attach attaches. */
const struct collect_table *etcd_probe_table(void);

/*
 * Checks that the binary is the build the offsets are for (refusing another one, by name and
 * version), finds each probed function's return sites in its .gopclntab and attaches the probes.
 * Returns the number of probe sites attached, or a negative errno with err filled.
 */
int etcd_probes_attach(struct uprobe_loader *l, const char *etcd_path, char *err, size_t errlen);

#endif
