/* The LTTng-UST tracepoint provider `spectap`, event `event`: one field, `record`, a text
 * sequence of the record's bytes (its length field is `_record_length`, uint32). Included by
 * emit.c (the call site) and emit_lttng.c (which creates the probe). Build with -Iprobes. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER spectap

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "emit/emit_lttng_tp.h"

#if !defined(SPECTAP_EMIT_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SPECTAP_EMIT_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(spectap, event,
	LTTNG_UST_TP_ARGS(const char *, rec, uint32_t, len),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_sequence_text(char, record, rec, uint32_t, len)))

#endif

#include <lttng/tracepoint-event.h>
