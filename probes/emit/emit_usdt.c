/* The USDT probe spectap:event(const char *record, size_t len) and its semaphore. Alone in this
 * file: with _SDT_HAS_SEMAPHORES every probe of a translation unit needs one. */
#define _SDT_HAS_SEMAPHORES 1
/* The arguments in registers, never in memory: clang otherwise passes them as stack slots in the
 * red zone (8@-8(%rsp)), which the kernel's optimized uprobe on a nop5 (a call to a trampoline)
 * overwrites with its return address. */
#define STAP_SDT_ARG_CONSTRAINT r
#include <sys/sdt.h>

/* A 5-byte nop at the probe site instead of sdt.h's 1-byte one: the kernel can attach to a nop5
 * without a trap (optimized uprobes, Linux 6.17 on x86-64), several times cheaper per hit.
 * _SDT_NOP is expanded where STAP_PROBE is used, so redefining it here is enough. */
#if defined(__x86_64__)
#undef _SDT_NOP
#define _SDT_NOP .nops 5
#endif

#include "emit_internal.h"

/* In .probes, where SystemTap and libbpf look for it; hidden, so that a shared object (an agent)
 * uses its own semaphore, the one its note names. */
volatile unsigned short spectap_event_semaphore __attribute__((section(".probes"))) = 0;

__attribute__((noinline)) void spt__usdt_fire(const char *record, size_t len)
{
	STAP_PROBE2(spectap, event, record, len);
}
