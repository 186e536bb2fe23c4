/* Creates the LTTng-UST probe of the provider `spectap` (emit_lttng_tp.h) and defines its
 * tracepoint. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "emit/emit_lttng_tp.h"
