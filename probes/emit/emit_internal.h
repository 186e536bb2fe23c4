/* Shared between the files of the emit library (probes/emit/): the USDT side lives in a file
 * of its own (emit_usdt.c), since with _SDT_HAS_SEMAPHORES every probe of a translation unit
 * needs a semaphore. */
#ifndef SPECTAP_EMIT_INTERNAL_H
#define SPECTAP_EMIT_INTERNAL_H

#include <stddef.h>

#define SPT_HIDDEN __attribute__((visibility("hidden")))

/* The USDT semaphore of spectap:event: the kernel adds 1 per attached uprobe (ref_ctr_offset). */
extern volatile unsigned short spectap_event_semaphore SPT_HIDDEN;

/* Fires the USDT probe spectap:event(record, len). Never inlined: one probe site. */
void spt__usdt_fire(const char *record, size_t len) SPT_HIDDEN;

#endif
