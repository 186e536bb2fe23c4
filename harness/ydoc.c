/* ydoc: a YAML document as a tree with positions (ydoc.h), built from libyaml's events. */
#include "ydoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct builder {
	yaml_parser_t p;
	const char *name;
	char *err;
};

static int fail(struct builder *b, size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(b->err, YDOC_ERR_SIZE, "%s:%zu:%zu: ", b->name, line + 1, col + 1);

	va_start(ap, fmt);
	vsnprintf(b->err + k, YDOC_ERR_SIZE - (size_t)k, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parser_fail(struct builder *b)
{
	const char *what = b->p.problem ? b->p.problem : "malformed YAML";
	if (b->p.error == YAML_MEMORY_ERROR)
		return snprintf(b->err, YDOC_ERR_SIZE, "%s: out of memory", b->name), -ENOMEM;
	if (b->p.context)
		return fail(b, b->p.problem_mark.line, b->p.problem_mark.column, "%s %s", what, b->p.context);
	return fail(b, b->p.problem_mark.line, b->p.problem_mark.column, "%s", what);
}

static void node_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->items[i]);
		if (n->keys)
			free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->key_line);
	free(n->key_col);
	free(n->str);
	free(n);
}

static struct ynode *node_new(enum ynode_kind kind, const yaml_mark_t *m)
{
	struct ynode *n = calloc(1, sizeof(*n));
	if (n) {
		n->kind = kind;
		n->line = (unsigned)m->line + 1;
		n->col = (unsigned)m->column + 1;
	}
	return n;
}

static int push(struct ynode *parent, struct ynode *child, char *key, unsigned kl, unsigned kc)
{
	if (parent->n == 0 || (parent->n >= 4 && (parent->n & (parent->n - 1)) == 0)) { /* 4, 8, 16, ... */
		size_t cap = parent->n ? 2 * parent->n : 4;
		struct ynode **it = realloc(parent->items, cap * sizeof(*it));
		if (!it)
			return -ENOMEM;
		parent->items = it;
		if (parent->kind == YNODE_MAP) {
			char **k = realloc(parent->keys, cap * sizeof(*k));
			if (k)
				parent->keys = k;
			unsigned *l = realloc(parent->key_line, cap * sizeof(*l));
			if (l)
				parent->key_line = l;
			unsigned *c = realloc(parent->key_col, cap * sizeof(*c));
			if (c)
				parent->key_col = c;
			if (!k || !l || !c)
				return -ENOMEM;
		}
	}
	parent->items[parent->n] = child;
	if (parent->kind == YNODE_MAP) {
		parent->keys[parent->n] = key;
		parent->key_line[parent->n] = kl;
		parent->key_col[parent->n] = kc;
	}
	parent->n++;
	return 0;
}

/* Reads the node whose first event is ev (taken over), and everything inside it. */
static int build(struct builder *b, yaml_event_t *ev, unsigned depth, struct ynode **out)
{
	const yaml_mark_t *m = &ev->start_mark;
	int r = 0;

	*out = NULL;
	if (depth > YDOC_MAX_DEPTH)
		return fail(b, m->line, m->column, "nested more than %d levels deep", YDOC_MAX_DEPTH);
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return fail(b, m->line, m->column, "aliases (*name) are not supported: write the value out");
	case YAML_SCALAR_EVENT: {
		if (ev->data.scalar.anchor)
			return fail(b, m->line, m->column, "anchors (&name) are not supported");
		struct ynode *n = node_new(YNODE_SCALAR, m);
		if (!n || !(n->str = malloc(ev->data.scalar.length + 1))) {
			node_free(n);
			return -ENOMEM;
		}
		memcpy(n->str, ev->data.scalar.value, ev->data.scalar.length);
		n->str[ev->data.scalar.length] = 0;
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->block = ev->data.scalar.style == YAML_LITERAL_SCALAR_STYLE;
		*out = n;
		return 0;
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool map = ev->type == YAML_MAPPING_START_EVENT;
		if ((map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor))
			return fail(b, m->line, m->column, "anchors (&name) are not supported");
		struct ynode *n = node_new(map ? YNODE_MAP : YNODE_SEQ, m);
		if (!n)
			return -ENOMEM;
		for (;;) {
			yaml_event_t e;
			if (!yaml_parser_parse(&b->p, &e)) {
				r = parser_fail(b);
				break;
			}
			if (e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&e);
				break;
			}
			char *key = NULL;
			unsigned kl = 0, kc = 0;
			if (map) {
				if (e.type != YAML_SCALAR_EVENT) {
					r = fail(b, e.start_mark.line, e.start_mark.column, "a key must be a plain string");
					yaml_event_delete(&e);
					break;
				}
				kl = (unsigned)e.start_mark.line + 1;
				kc = (unsigned)e.start_mark.column + 1;
				key = strndup((const char *)e.data.scalar.value, e.data.scalar.length);
				yaml_event_delete(&e);
				if (!key) {
					r = -ENOMEM;
					break;
				}
				if (ynode_get(n, key)) {
					r = fail(b, kl - 1, kc - 1, "key '%s' given twice", key);
					free(key);
					break;
				}
				if (!yaml_parser_parse(&b->p, &e)) {
					free(key);
					r = parser_fail(b);
					break;
				}
			}
			struct ynode *child;
			r = build(b, &e, depth + 1, &child);
			yaml_event_delete(&e);
			if (!r && (r = push(n, child, key, kl, kc)))
				node_free(child);
			if (r) {
				free(key);
				break;
			}
		}
		if (r) {
			node_free(n);
			return r;
		}
		*out = n;
		return 0;
	}
	default:
		return fail(b, m->line, m->column, "unexpected YAML event");
	}
}

int ydoc_load_string(const char *name, const char *text, size_t len, struct ydoc *doc, char *err)
{
	struct builder b = { .name = name, .err = err };
	yaml_event_t e;
	int r = 0;
	bool in_doc = false;

	memset(doc, 0, sizeof(*doc));
	err[0] = 0;
	if (!(doc->path = strdup(name)))
		return -ENOMEM;
	if (!yaml_parser_initialize(&b.p))
		return snprintf(err, YDOC_ERR_SIZE, "%s: out of memory", name), -ENOMEM;
	yaml_parser_set_input_string(&b.p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&b.p, &e)) {
			r = parser_fail(&b);
			break;
		}
		yaml_event_type_t t = e.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&e);
			break;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			if (in_doc || doc->root) {
				r = fail(&b, e.start_mark.line, e.start_mark.column,
					 "a second YAML document: a description is one document");
				yaml_event_delete(&e);
				break;
			}
			in_doc = true;
		} else if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT ||
			   t == YAML_ALIAS_EVENT) {
			r = build(&b, &e, 1, &doc->root);
			yaml_event_delete(&e);
			if (r)
				break;
			continue;
		}
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&b.p);
	if (!r && !(doc->text = malloc(len + 1)))
		r = -ENOMEM;
	if (r) {
		ydoc_free(doc);
		return r;
	}
	memcpy(doc->text, text, len);
	doc->text[len] = 0;
	doc->text_len = len;
	return 0;
}

int ydoc_load(const char *path, struct ydoc *doc, char *err)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int r;

	memset(doc, 0, sizeof(*doc));
	if (!f)
		return r = -errno, snprintf(err, YDOC_ERR_SIZE, "%s: %s", path, strerror(errno)), r;
	for (;;) {
		if (len == cap) {
			char *t = realloc(text, cap = cap ? 2 * cap : 8192);
			if (!t) {
				free(text);
				fclose(f);
				return snprintf(err, YDOC_ERR_SIZE, "%s: out of memory", path), -ENOMEM;
			}
			text = t;
		}
		size_t k = fread(text + len, 1, cap - len, f);
		len += k;
		if (k == 0)
			break;
	}
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (r) {
		free(text);
		return snprintf(err, YDOC_ERR_SIZE, "%s: read error", path), r;
	}
	r = ydoc_load_string(path, text, len, doc, err);
	free(text);
	return r;
}

void ydoc_free(struct ydoc *doc)
{
	node_free(doc->root);
	free(doc->path);
	free(doc->text);
	memset(doc, 0, sizeof(*doc));
}

struct ynode *ynode_get(const struct ynode *m, const char *key)
{
	if (!m || m->kind != YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return m->items[i];
	return NULL;
}

bool ynode_is_null(const struct ynode *n)
{
	return n && n->kind == YNODE_SCALAR && n->plain &&
	       (n->len == 0 || !strcmp(n->str, "null") || !strcmp(n->str, "~") || !strcmp(n->str, "Null") ||
		!strcmp(n->str, "NULL"));
}

const char *ynode_kind_name(enum ynode_kind k)
{
	return k == YNODE_MAP ? "a map" : k == YNODE_SEQ ? "a list" : "a scalar";
}

void ydoc_scalar_pos(const struct ydoc *doc, const struct ynode *n, size_t off, unsigned *line, unsigned *col)
{
	*line = n->line;
	*col = n->col;
	if (n->kind != YNODE_SCALAR || off > n->len)
		return;
	if (n->plain && !memchr(n->str, '\n', n->len)) {
		*col = n->col + (unsigned)off;
		return;
	}
	if (!n->block || !doc->text)
		return;
	/* Content line k of a literal block is source line n->line + 1 + k, after its indentation. */
	unsigned k = 0;
	size_t line_start = 0;
	for (size_t i = 0; i < off; i++)
		if (n->str[i] == '\n') {
			k++;
			line_start = i + 1;
		}
	const char *p = doc->text, *end = doc->text + doc->text_len;
	for (unsigned l = 1; l < n->line + 1 + k && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	unsigned indent = 0;
	while (p + indent < end && p[indent] == ' ')
		indent++;
	*line = n->line + 1 + k;
	*col = indent + (unsigned)(off - line_start) + 1;
}
