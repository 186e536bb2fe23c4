/*
 * Message identity from content, for sources that carry no message ids: a send gets a fresh id;
 * a receive takes the id of the oldest send not yet received with the same from, to, type and
 * payload (payload compared in canonical order). Used by import and by the live collector.
 * All int returns: 0 (or a count) on success, -ENOMEM.
 */
#ifndef SPECTAP_MSGPAIR_H
#define SPECTAP_MSGPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "spectap/event.h"

struct spt_msgpair;

int spt_msgpair_new(struct spt_msgpair **out);
void spt_msgpair_free(struct spt_msgpair *mp);

/* A send: *id receives a fresh id (1, 2, ...); lamport is the send event's clock, given back to
 * the receive that pairs with it. */
int spt_msgpair_send(struct spt_msgpair *mp, const struct spt_msg *m, uint64_t lamport, uint64_t *id);

/* A receive: 1 when paired (*id = the send's id, *send_lamport = its clock), 0 when no send
 * waits (*id = a fresh id, *send_lamport = 0). */
int spt_msgpair_recv(struct spt_msgpair *mp, const struct spt_msg *m, uint64_t *id,
		     uint64_t *send_lamport);

/* Sends no receive has taken (yet): lost on the way, dropped by the system, or still in flight. */
uint64_t spt_msgpair_unpaired_sends(const struct spt_msgpair *mp);

#endif
