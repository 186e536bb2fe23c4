/* spt_emit: one record through the USDT probe and the LTTng-UST tracepoint spectap:event. See
 * include/spectap/emit.h. */
#include "spectap/emit.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "emit/emit_lttng_tp.h"
#include "emit_internal.h"

static atomic_uint_fast64_t too_large, invalid;

bool spt_emit_enabled(void)
{
	return spectap_event_semaphore != 0 || lttng_ust_tracepoint_enabled(spectap, event);
}

unsigned spt_emit_listeners(void)
{
	unsigned l = 0;

	if (spectap_event_semaphore)
		l |= SPT_EMIT_USDT;
	if (lttng_ust_tracepoint_enabled(spectap, event))
		l |= SPT_EMIT_LTTNG;
	return l;
}

int spt_emit(const char *record, size_t len)
{
	bool usdt, lttng;

	if (len > SPT_EMIT_MAX) {
		atomic_fetch_add_explicit(&too_large, 1, memory_order_relaxed);
		return -EMSGSIZE;
	}
	if (!record || !len) {
		atomic_fetch_add_explicit(&invalid, 1, memory_order_relaxed);
		return -EINVAL;
	}
	usdt = spectap_event_semaphore != 0;
	lttng = lttng_ust_tracepoint_enabled(spectap, event);
	if (!usdt && !lttng)
		return 0;
	if (memchr(record, 0, len)) {
		atomic_fetch_add_explicit(&invalid, 1, memory_order_relaxed);
		return -EINVAL;
	}
	if (usdt)
		spt__usdt_fire(record, len);
	if (lttng)
		lttng_ust_do_tracepoint(spectap, event, record, (uint32_t)len);
	return 0;
}

void spt_emit_stats(struct spt_emit_stats *out)
{
	out->too_large = atomic_load_explicit(&too_large, memory_order_relaxed);
	out->invalid = atomic_load_explicit(&invalid, memory_order_relaxed);
}
