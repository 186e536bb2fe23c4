/* TLC's value order, for what a spec can observe of it: the element CHOOSE picks, the order
 * SetToSeq lists and FoldSet combines. spectap keeps sets in its own canonical order (strings
 * bytewise); TLC orders strings, model values and record fields by the token each text got when
 * TLC first interned it, so the two differ wherever text is involved. The tokens are assigned
 * here in TLC's order: the .cfg's text first, then every name of every module (root first),
 * then the strings of the modules. Texts made only while running come after those, bytewise
 * among themselves (TLC: in the order it made them). docs/checker.md, "TLC's value order". */
#ifndef SPECTAP_REPLAY_TLC_ORDER_H
#define SPECTAP_REPLAY_TLC_ORDER_H

#include <stddef.h>

#include "module.h"
#include "spectap/value.h"

/* Gives the texts of a loaded spec (and of its cfg's text, or NULL) their tokens, in TLC's
 * order. Texts that already have one keep it (one table per process, as in TLC). -ENOMEM or 0. */
int tlc_order_note_spec(struct spec *s, const char *cfg_text, size_t cfg_len);

/* The elements of set in TLC's order: *out is set's own array when the orders agree (no text
 * inside), else an array from a. 0; -ENOMEM; -EDOM when TLC cannot order them (an integer and
 * a string in one set, a typed model value and another value), with what in why. */
int tlc_order_elems(struct spt_arena *a, spt_val *set, spt_val *const **out, char *why, size_t why_len);

#endif
