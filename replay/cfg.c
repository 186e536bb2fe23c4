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
					  "ACTION_CONSTRAINTS", "CHECK_DEADLOCK", "POSTCONDITION", "ALIAS", NULL };
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

static int value(struct lex *l, spt_val **out)
{
	struct spt_arena *a = spec_arena(l->spec);
	skip(l);
	if (*l->p == '{') {
		l->p++;
		spt_val *items[1024];
		size_t n = 0;
		skip(l);
		if (*l->p == '}') {
			l->p++;
			*out = spt_set(a, items, 0);
			return 0;
		}
		for (;;) {
			if (n == 1024)
				return bad(l, "set with more than 1024 elements");
			int rc = value(l, &items[n++]);
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
		if (l->p[0] == '<' && l->p[1] == '-') {
			l->p += 2;
			if (!(k.op = word(l)))
				return bad(l, "an operator name expected after <-");
		} else if (*l->p == '=') {
			l->p++;
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
		if (!strcmp(kw, "CONSTANT") || !strcmp(kw, "CONSTANTS")) {
			if ((rc = constants(&l, out)))
				break;
		} else if (!strcmp(kw, "INIT") || !strcmp(kw, "NEXT") || !strcmp(kw, "SPECIFICATION")) {
			const char *name = word(&l);
			if (!name || is_keyword(name)) {
				rc = bad(&l, "%s needs a definition's name", kw);
				break;
			}
			*(kw[0] == 'I' ? &out->init : kw[0] == 'N' ? &out->next : &out->spec) = name;
		} else if (!strcmp(kw, "INVARIANT") || !strcmp(kw, "INVARIANTS")) {
			for (const char *name; (name = list_name(&l));) {
				const char **n = realloc(out->invariants, (out->n_invariants + 1) * sizeof(*n));
				if (!n) {
					rc = -ENOMEM;
					break;
				}
				out->invariants = n;
				out->invariants[out->n_invariants++] = name;
			}
			if (rc)
				break;
		} else if (!strcmp(kw, "CHECK_DEADLOCK")) {
			word(&l); /* TRUE or FALSE: not relevant to trace checking */
		} else {
			/* PROPERTY, SYMMETRY, VIEW, CONSTRAINT, ...: names that trace checking ignores */
			while (list_name(&l))
				;
		}
	}
	free(text);
	if (rc)
		cfg_free(out);
	return rc;
}

void cfg_free(struct cfg *c)
{
	free(c->consts);
	free(c->invariants);
	c->consts = NULL;
	c->invariants = NULL;
	c->n_consts = c->n_invariants = 0;
}
