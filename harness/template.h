/* template: the placeholders of a system description's strings (docs/adding-a-system.md).
 *
 *   ${name}            a variable: node, i, dir, binary, nodes, port.NAME, ... (what the
 *                      context offers; harness/cluster.c and harness/load.c say which)
 *   ${#name}           the length in bytes of the variable's value (a protocol's length field)
 *   ${each:SEP:TEXT}   TEXT once per node (its variables: that node's), joined with SEP
 *                      (SEP may not hold ':' or '}'; TEXT may hold placeholders)
 *   ${name@K}          the variable of node K (1-based): ${port.client@1}
 *   ${first|TEXT|OTHER} TEXT for the first node, OTHER for the others
 *   $$                 a literal $
 *
 * A '$' followed by anything else is an error, as is an unknown variable. */
#ifndef SPECTAP_HARNESS_TEMPLATE_H
#define SPECTAP_HARNESS_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#define TMPL_ERR_SIZE 256

/* Variables: lookup returns the value of name for node (the node being expanded for, or -1
 * outside ${each} and node-less contexts), or NULL when it has none. */
struct tmpl_scope {
	const char *(*lookup)(void *ctx, long node, const char *name, size_t len);
	void *ctx;
	long node;     /* the current node, or -1 */
	size_t nnodes; /* how many ${each} iterates over (0: ${each} is not allowed) */
};

/* Expands t into *out (malloc'd). 0, or -EINVAL with what and the byte offset in err, -ENOMEM. */
int tmpl_expand(const char *t, const struct tmpl_scope *s, char **out, char *err);

/* Checks t's syntax and that every variable is one of known (names; an entry ending in '.'
 * allows any name with that prefix); each_ok: whether ${each} may be used. 0, or -EINVAL with
 * the offending text and its byte offset in err. */
int tmpl_check(const char *t, const char *const *known, size_t nknown, bool each_ok, char *err, size_t *err_off);

#endif
