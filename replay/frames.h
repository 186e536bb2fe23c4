/* Frame conditions of actions (frames.c): the variables each surely leaves unchanged. */
#ifndef SPECTAP_REPLAY_FRAMES_H
#define SPECTAP_REPLAY_FRAMES_H

#include <stdbool.h>

#include "module.h"

/* Sets opdef.unchanged for every action definition and ast.unchanged for every \E whose body
 * has one (bitsets over the spec's variables). After the resolver; 0 or -1 (out of memory). */
int frames_compute(struct spec *s);
/* Whether one of the variables of the bitset changed between cur and next. */
bool frames_broken(const uint64_t *unchanged, uint32_t n_vars, spt_val *const *cur, spt_val *const *next);

/* Adds to bits the variables e reads (through the definitions it calls). 1 when e depends on
 * more than the state (TLCGet, random choices, printing, operators the cfg gives), else 0. */
int frames_reads(struct spec *s, const struct ast *e, uint64_t *bits);

#endif
