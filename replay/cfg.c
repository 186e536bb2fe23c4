/* A reader for TLC's .cfg files: keywords, then names, values or substitutions. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"

struct lex {
	const char *s, *p, *path;
	uint32_t line;
	struct spec *spec;
	struct spec_error *err;
};

__attribute__((format(printf, 2, 3))) static int bad(struct lex *l, const char *fmt, ...)
{
	const char *bol = l->p;
	while (bol > l->s && bol[-1] != '\n')
		bol--;
	l->err->pos = (struct src_pos){ l->path, l->line, (uint32_t)(l->p - bol) + 1 };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->err->msg, sizeof(l->err->msg), fmt, ap);
	va_end(ap);
	size_t n = strcspn(bol, "\n");
	snprintf(l->err->excerpt, sizeof(l->err->excerpt), "%.*s", (int)(n < 150 ? n : 150), bol);
	return -EINVAL;
}

static void skip(struct lex *l)
{
	for (;;) {
		while (*l->p && isspace((unsigned char)*l->p)) {
			if (*l->p == '\n')
				l->line++;
			l->p++;
		}
		if (l->p[0] == '\\' && l->p[1] == '*') {
			while (*l->p && *l->p != '\n')
				l->p++;
		} else if (l->p[0] == '(' && l->p[1] == '*') {
			for (l->p += 2; *l->p && !(l->p[0] == '*' && l->p[1] == ')'); l->p++)
				if (*l->p == '\n')
					l->line++;
			if (*l->p)
				l->p += 2;
		} else {
			return;
		}
	}
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The next word (identifier or keyword), or NULL when the next token is not one. */
static const char *word(struct lex *l)
{
	skip(l);
	const char *b = l->p;
	while (ident_char(*l->p))
		l->p++;
	if (l->p == b)
		return NULL;
	return spec_intern(l->spec, b, (size_t)(l->p - b));
}

static bool is_keyword(const char *w)
{
	static const char *const kw[] = { "CONSTANT", "CONSTANTS", "INIT", "NEXT", "SPECIFICATION",
					  "INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES", "SYMMETRY",
					  "VIEW", "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT",
					  "ACTION_CONSTRAINTS", "CHECK_DEADLOCK", "POSTCONDITION", "POSTCONDITIONS",
					  "ALIAS", NULL };
	for (const char *const *k = kw; *k; k++)
		if (!strcmp(*k, w))
			return true;
	return false;
}

/* The next name of a keyword's list, or NULL (and nothing consumed) at a keyword or the end. */
static const char *list_name(struct lex *l)
{
	skip(l);
	const char *save = l->p;
	uint32_t line = l->line;
	const char *name = word(l);
	if (!name || is_keyword(name)) {
		l->p = save;
		l->line = line;
		return NULL;
	}
	return name;
}

static int value_at(struct lex *l, spt_val **out, int depth);

static int value(struct lex *l, spt_val **out) { return value_at(l, out, 0); }

static int value_at(struct lex *l, spt_val **out, int depth)
{
	struct spt_arena *a = spec_arena(l->spec);
	skip(l);
	if (*l->p == '{') {
		if (depth >= 100)
			return bad(l, "sets nested more than 100 deep");
		l->p++;
		size_t n = 0, cap = 16;
		spt_val **items = spt_arena_alloc(a, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		skip(l);
		if (*l->p == '}') {
			l->p++;
			*out = spt_set(a, items, 0);
			return 0;
		}
		for (;;) {
			if (n == cap) {
				spt_val **more = spt_arena_alloc(a, 2 * cap * sizeof(*more));
				if (!more)
					return -ENOMEM;
				memcpy(more, items, n * sizeof(*more));
				items = more;
				cap *= 2;
			}
			int rc = value_at(l, &items[n++], depth + 1);
			if (rc)
				return rc;
			skip(l);
			if (*l->p == ',') {
				l->p++;
				continue;
			}
			if (*l->p == '}') {
				l->p++;
				break;
			}
			return bad(l, "',' or '}' expected in a set");
		}
		*out = spt_set(a, items, n);
		return *out ? 0 : -ENOMEM;
	}
	if (*l->p == '"') {
		const char *b = ++l->p;
		while (*l->p && *l->p != '"' && *l->p != '\n')
			l->p++;
		if (*l->p != '"') {
			l->p = b - 1; /* point at the opening quote */
			return bad(l, "unterminated string");
		}
		*out = spt_str(a, b, (size_t)(l->p++ - b));
		return *out ? 0 : -ENOMEM;
	}
	if (*l->p == '-' || isdigit((unsigned char)*l->p)) {
		char *end;
		errno = 0;
		long long v = strtoll(l->p, &end, 10);
		if (errno || end == l->p || ident_char(*end))
			return bad(l, "malformed integer");
		l->p = end;
		*out = spt_int(a, v);
		return *out ? 0 : -ENOMEM;
	}
	const char *w = word(l);
	if (!w)
		return bad(l, "a value expected (integer, string, {set} or model value)");
	if (!strcmp(w, "TRUE") || !strcmp(w, "FALSE"))
		*out = spt_bool(a, w[0] == 'T');
	else
		*out = spt_model(a, w);
	return *out ? 0 : -ENOMEM;
}

/* An optional [Module] before a substitution's right side. */
static int module_prefix(struct lex *l, const char **module)
{
	skip(l);
	if (*l->p != '[')
		return 0;
	l->p++;
	if (!(*module = word(l)))
		return bad(l, "a module name expected after [");
	skip(l);
	if (*l->p != ']')
		return bad(l, "']' expected after the module name");
	l->p++;
	return 0;
}

static int push_name(struct cfg_names *ns, const char *name, uint32_t line)
{
	const char **n = realloc(ns->names, (ns->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	ns->names = n;
	uint32_t *ln = realloc(ns->lines, (ns->n + 1) * sizeof(*ln));
	if (!ln)
		return -ENOMEM;
	ns->lines = ln;
	ns->names[ns->n] = name;
	ns->lines[ns->n++] = line;
	return 0;
}

static void names_free(struct cfg_names *ns)
{
	free(ns->names);
	free(ns->lines);
	memset(ns, 0, sizeof(*ns));
}

static int push_const(struct cfg *c, struct cfg_const k)
{
	struct cfg_const *n = realloc(c->consts, (c->n_consts + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->consts = n;
	c->consts[c->n_consts++] = k;
	return 0;
}

static int constants(struct lex *l, struct cfg *c)
{
	for (;;) {
		const char *name = list_name(l);
		uint32_t line = l->line;
		if (!name)
			return 0;
		skip(l);
		struct cfg_const k = { .name = name, .line = line };
		if (*l->p == '(')
			return bad(l, "operator tables in the cfg (%s(...) = v) are not supported: define the operator in the spec", name);
		if (l->p[0] == '<' && l->p[1] == '-') {
			l->p += 2;
			if (module_prefix(l, &k.module))
				return -EINVAL;
			if (!(k.op = word(l)))
				return bad(l, "an operator name expected after <-");
		} else if (*l->p == '=') {
			l->p++;
			if (module_prefix(l, &k.module))
				return -EINVAL;
			int rc = value(l, &k.value);
			if (rc)
				return rc;
		} else {
			return bad(l, "'=' or '<-' expected after the constant %s", name);
		}
		int rc = push_const(c, k);
		if (rc)
			return rc;
	}
}

int cfg_load(struct spec *s, const char *path, struct cfg *out, struct spec_error *err)
{
	memset(out, 0, sizeof(*out));
	out->path = path;
	out->check_deadlock = -1;
	FILE *f = fopen(path, "rb");
	if (!f) {
		err->pos = (struct src_pos){ path, 0, 0 };
		snprintf(err->msg, sizeof(err->msg), "cannot open %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	char buf[65536];
	size_t k;
	while (m && (k = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, k, m);
	fclose(f);
	if (!m)
		return -ENOMEM;
	fclose(m);
	struct lex l = { text, text, path, 1, s, err };
	int rc = 0;
	for (;;) {
		skip(&l);
		if (!*l.p)
			break;
		const char *kw = word(&l);
		if (!kw || !is_keyword(kw)) {
			rc = bad(&l, "a keyword (CONSTANT, INIT, NEXT, SPECIFICATION, INVARIANT, ...) expected");
			break;
		}
		uint32_t kw_line = l.line;
		if (!strcmp(kw, "CONSTANT") || !strcmp(kw, "CONSTANTS")) {
			if ((rc = constants(&l, out)))
				break;
		} else if (!strcmp(kw, "INIT") || !strcmp(kw, "NEXT") || !strcmp(kw, "SPECIFICATION") || !strcmp(kw, "VIEW") ||
			   !strcmp(kw, "SYMMETRY") || !strcmp(kw, "ALIAS")) {
			const char *name = word(&l);
			if (!name || is_keyword(name)) {
				rc = bad(&l, "%s needs a definition's name", kw);
				break;
			}
			const char **slot = kw[0] == 'I' ? &out->init : kw[0] == 'N' ? &out->next : kw[1] == 'P' ? &out->spec :
					    kw[0] == 'V' ? &out->view : kw[1] == 'Y' ? &out->symmetry : &out->alias;
			uint32_t *lslot = kw[0] == 'I' ? &out->init_line : kw[0] == 'N' ? &out->next_line : kw[1] == 'P' ? &out->spec_line :
					  kw[0] == 'V' ? &out->view_line : kw[1] == 'Y' ? &out->symmetry_line : &out->alias_line;
			if (*slot) {
				rc = bad(&l, "the keyword %s appears twice", kw);
				break;
			}
			*slot = name;
			*lslot = kw_line;
		} else if (!strcmp(kw, "INVARIANT") || !strcmp(kw, "INVARIANTS")) {
			for (const char *name; (name = list_name(&l));) {
				const char **n = realloc(out->invariants, (out->n_invariants + 1) * sizeof(*n));
				uint32_t *ln = n ? realloc(out->invariant_lines, (out->n_invariants + 1) * sizeof(*ln)) : NULL;
				if (n)
					out->invariants = n;
				if (!n || !ln) {
					rc = -ENOMEM;
					break;
				}
				out->invariant_lines = ln;
				out->invariant_lines[out->n_invariants] = l.line;
				out->invariants[out->n_invariants++] = name;
			}
			if (rc)
				break;
		} else if (!strcmp(kw, "CHECK_DEADLOCK")) {
			skip(&l);
			const char *at = l.p, *v = word(&l);
			if (!v || (strcmp(v, "TRUE") && strcmp(v, "FALSE"))) {
				l.p = at;
				rc = bad(&l, "CHECK_DEADLOCK is followed by TRUE or FALSE");
				break;
			}
			out->check_deadlock = v[0] == 'T';
		} else {
			struct cfg_names *ns = !strncmp(kw, "PROPERT", 7) ? &out->properties :
					       !strncmp(kw, "ACTION_CONSTRAINT", 17) ? &out->action_constraints :
					       !strncmp(kw, "CONSTRAINT", 10) ? &out->constraints : &out->postconditions;
			for (const char *name; (name = list_name(&l));)
				if ((rc = push_name(ns, name, l.line)))
					break;
			if (rc)
				break;
		}
	}
	out->text = text; /* kept: TLC's value order reads it (tlc_order.c) */
	out->text_len = len;
	if (rc)
		cfg_free(out);
	return rc;
}

void cfg_free(struct cfg *c)
{
	free(c->text);
	free(c->consts);
	free(c->invariants);
	free(c->invariant_lines);
	names_free(&c->properties);
	names_free(&c->constraints);
	names_free(&c->action_constraints);
	names_free(&c->postconditions);
	/* Freed twice is harmless: a loader that failed freed it, and its owner frees it again. */
	c->text = NULL;
	c->text_len = 0;
	c->consts = NULL;
	c->invariants = NULL;
	c->invariant_lines = NULL;
	c->n_consts = c->n_invariants = 0;
}
