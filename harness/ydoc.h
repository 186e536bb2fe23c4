/* ydoc: one YAML document as a tree of maps, sequences and scalars, each with its position,
 * read with libyaml. It knows no particular schema: harness/desc.c reads system descriptions
 * from it. Anchors, aliases and tags are refused (a description has no use for them, and an
 * alias bomb would cost memory); so are duplicate keys and documents deeper than YDOC_MAX_DEPTH.
 * Every error names the file, line and column. */
#ifndef SPECTAP_HARNESS_YDOC_H
#define SPECTAP_HARNESS_YDOC_H

#include <stdbool.h>
#include <stddef.h>

#define YDOC_MAX_DEPTH 64
#define YDOC_ERR_SIZE 512

enum ynode_kind { YNODE_SCALAR, YNODE_MAP, YNODE_SEQ };

struct ynode {
	enum ynode_kind kind;
	unsigned line, col;   /* 1-based, where the node starts */
	char *str;            /* SCALAR: the text (NUL-terminated; may hold NULs, see len) */
	size_t len;
	bool plain;           /* SCALAR: unquoted (so `null`, `~` and `` are null) */
	bool block;           /* SCALAR: a block scalar (| or >): its text starts on the next line */
	size_t n;             /* MAP: pairs; SEQ: items */
	char **keys;          /* MAP: keys (scalars only) */
	unsigned *key_line, *key_col;
	struct ynode **items; /* MAP: values; SEQ: items */
};

struct ydoc {
	char *path;
	struct ynode *root;   /* NULL for an empty document */
	char *text;           /* the source, for positions inside scalars */
	size_t text_len;
};

/* Reads path. 0, or -errno with "path:line:col: what" in err (YDOC_ERR_SIZE bytes). */
int ydoc_load(const char *path, struct ydoc *doc, char *err);
/* The same from a string (name is used in messages). */
int ydoc_load_string(const char *name, const char *text, size_t len, struct ydoc *doc, char *err);
void ydoc_free(struct ydoc *doc);

/* The value of key in map m, or NULL (also when m is not a map). */
struct ynode *ynode_get(const struct ynode *m, const char *key);
/* A scalar that is null: plain `null`, `~` or empty. */
bool ynode_is_null(const struct ynode *n);
const char *ynode_kind_name(enum ynode_kind k);
/* The line and column in the source of byte off of scalar n's text: exact for one-line plain
 * scalars and for literal block scalars (|), the scalar's start for others. */
void ydoc_scalar_pos(const struct ydoc *doc, const struct ynode *n, size_t off, unsigned *line, unsigned *col);

#endif
