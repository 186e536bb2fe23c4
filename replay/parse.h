/* Internal: from tree-sitter nodes to AST nodes and definitions. */
#ifndef SPECTAP_REPLAY_PARSE_H
#define SPECTAP_REPLAY_PARSE_H

#include <tree_sitter/api.h>

#include "module.h"

struct parse_ctx {
	struct spt_arena *arena;
	struct module *module; /* the module being converted */
	void *interner;
};

const char *parse_intern(struct parse_ctx *pc, const char *s, size_t len);
/* An operator_definition / function_definition node. NULL with err filled on failure. */
struct opdef *parse_definition(struct parse_ctx *pc, const char *src, const char *file, TSNode n,
			       struct spec_error *err);
struct ast *parse_expression(struct parse_ctx *pc, const char *src, const char *file, TSNode n,
			     struct spec_error *err);
/* -EINVAL with err at the first syntax error under root, 0 when there is none. */
int parse_syntax_error(const char *src, const char *file, TSNode root, struct spec_error *err);
const TSLanguage *parse_language(void);

#endif
