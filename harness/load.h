/* load: a described system's client load (desc_load): COUNT operations, one at a time, over a
 * text protocol on TCP (send a template, wait for the expected answer) or by a command that
 * performs them. An operation that fails or times out is counted, not retried; a node that
 * closes the connection (killed, restarted) costs that operation, and the next one goes to
 * another running node. Bounded by operations, never by time: every machine does the same
 * work. It knows no particular system. */
#ifndef SPECTAP_HARNESS_LOAD_H
#define SPECTAP_HARNESS_LOAD_H

#include <stdint.h>

#include "hcluster.h"
#include "net.h"

struct hload {
	struct hcluster *c;
	int fd;
	long node;           /* the node connected to, or -1 */
	struct net_inbox in;
	uint64_t ops, acked, failed;
	uint64_t busy_us;          /* time spent running operations */
	uint32_t *lat_us;          /* each acknowledged operation's latency (TCP loads) */
	size_t nlat, caplat;
	char first_error[256];
};

/* Acknowledged operations per second of load time, and the p-th percentile latency (ms). */
double hload_per_second(const struct hload *l);
double hload_latency_ms(struct hload *l, double p);

void hload_init(struct hload *l, struct hcluster *c);
/* count more operations. 0 (failures are counted, first_error names the first), or -errno
 * with c->err when the load cannot run at all (no node running, a template error). */
int hload_run(struct hload *l, uint64_t count);
void hload_fini(struct hload *l);

#endif
