/*
 * Name resolution and level checking, once, when a spec is loaded (as SANY does): every name in
 * every definition of every loaded module, taken branch or not, is bound to a frame slot, a
 * definition, a constant, a variable or a native operator; an undefined name or a wrong number
 * of arguments is an error with its position. Each definition gets its frame layout, its level
 * and whether its applications may be cached by their arguments' values.
 */
#ifndef SPECTAP_REPLAY_RESOLVE_H
#define SPECTAP_REPLAY_RESOLVE_H

#include "cfg.h"
#include "module.h"

/* Resolves every module of s. The cfg (may be NULL) overrides definitions: `Def = value`
 * and `Def <- Other`. 0, or -EINVAL with err at the first error. */
int spec_resolve(struct spec *s, const struct cfg *cfg, struct spec_error *err);
/* Resolves an expression parsed with spec_parse_expr, in the root module with parameters
 * params[0..n) as the frame's first slots (mapping calls, command-line expressions). */
int spec_resolve_expr(struct spec *s, struct ast *e, const char *const *params, uint32_t n, uint32_t *nslots,
		      struct spec_error *err);

#endif
