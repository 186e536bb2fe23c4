/* gobin: the build information of a Go 1.18+ binary (.go.buildinfo).
 *
 * Layout (debug/buildinfo): a 32-byte header, "\xff Go buildinf:" (14 bytes), ptrSize (1 byte),
 * flags (1 byte: bit 0 big-endian, bit 1 inline strings, set since Go 1.18); then two strings,
 * each a uvarint length and its bytes: the Go version and the module information. The module
 * information is framed by 16 sentinel bytes on each side (stripped when its byte len-17 is
 * '\n') and is made of lines "path\tP", "mod\tP\tV\tSUM", "dep\tP\tV\tSUM", "=>\tP\tV\tSUM"
 * (replaces the line before), "build\tKEY=VALUE". */
#include "gobin_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads a uvarint at *p (n bytes left); advances. -1 when malformed. */
static int uvarint(const uint8_t **p, size_t *n, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0, i = 0; i < *n && shift < 64; i++, shift += 7) {
		uint8_t b = (*p)[i];
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p += i + 1;
			*n -= i + 1;
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Reads a uvarint-prefixed string (it may hold NUL bytes: the module framing does). */
static char *read_string(const uint8_t **p, size_t *n, size_t *len)
{
	uint64_t l;
	if (uvarint(p, n, &l) || l > *n)
		return NULL;
	char *s = malloc((size_t)l + 1);
	if (!s)
		return NULL;
	memcpy(s, *p, (size_t)l);
	s[l] = '\0';
	*p += l;
	*n -= l;
	*len = (size_t)l;
	return s;
}

/* Splits s at the first tab: returns s, NUL-terminates it, sets *rest after the tab. */
static char *field(char **rest)
{
	char *s = *rest, *t = strchr(s, '\t');
	if (t) {
		*t = '\0';
		*rest = t + 1;
	} else {
		*rest = s + strlen(s);
	}
	return s;
}

static void fill_module(struct gobin_module *m, char *rest)
{
	m->path = field(&rest);
	m->version = field(&rest);
	m->sum = field(&rest);
	m->replace_path = "";
	m->replace_version = "";
}

/* Unquotes a Go-quoted build setting in place when it is quoted (only \" and \\ and \n, \t). */
static char *unquote(char *s)
{
	size_t n = strlen(s);
	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		return s;
	char *w = s;
	for (size_t i = 1; i + 1 < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 2 < n) {
			c = s[++i];
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		*w++ = c;
	}
	*w = '\0';
	return s;
}

static int parse_modinfo(struct gobin *g, char *errbuf)
{
	size_t lines = 1;
	for (const char *c = g->modinfo; *c; c++)
		lines += *c == '\n';
	g->modtext = strdup(g->modinfo);
	g->deps = calloc(lines, sizeof(*g->deps));
	g->settings = calloc(lines, sizeof(*g->settings));
	if (!g->modtext || !g->deps || !g->settings)
		return gobin_fail(errbuf, g->path, ENOMEM, "out of memory for build information");
	struct gobin_module *last = NULL;
	char *save = NULL;
	for (char *line = strtok_r(g->modtext, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *rest = line;
		const char *kind = field(&rest);
		if (!strcmp(kind, "mod")) {
			fill_module(&g->main_mod, rest);
			g->has_main = true;
			last = &g->main_mod;
		} else if (!strcmp(kind, "dep")) {
			last = &g->deps[g->ndeps++];
			fill_module(last, rest);
		} else if (!strcmp(kind, "=>") && last) {
			struct gobin_module r;
			fill_module(&r, rest);
			last->replace_path = r.path;
			last->replace_version = r.version;
			last->sum = r.sum[0] ? r.sum : last->sum;
		} else if (!strcmp(kind, "build")) {
			char *eq = rest[0] == '"' ? NULL : strchr(rest, '=');
			if (rest[0] == '"') { /* quoted key: find the closing quote */
				for (char *q = rest + 1; *q; q++)
					if (*q == '\\' && q[1])
						q++;
					else if (*q == '"') {
						eq = q[1] == '=' ? q + 1 : NULL;
						break;
					}
			}
			if (!eq)
				continue;
			*eq = '\0';
			g->settings[g->nsettings++] =
				(struct gobin_setting){ unquote(rest), unquote(eq + 1) };
		} else if (!strcmp(kind, "path")) {
			g->main_path = field(&rest);
		}
		/* unknown lines (e.g. "go"): nothing to keep */
	}
	return 0;
}

int gobin_parse_buildinfo(struct gobin *g, const uint8_t *p, size_t n, char *errbuf)
{
	if (n < 32 || memcmp(p, "\xff Go buildinf:", 14))
		return gobin_fail(errbuf, g->path, ENOEXEC, ".go.buildinfo has no \"\\xff Go buildinf:\" header");
	uint8_t ptrsize = p[14], flags = p[15];
	if (flags & 1)
		return gobin_fail(errbuf, g->path, ENOTSUP, ".go.buildinfo is big-endian");
	if (!(flags & 2))
		return gobin_fail(errbuf, g->path, ENOTSUP,
				  ".go.buildinfo uses the pointer format of Go before 1.18 (ptrSize %u, "
				  "flags 0x%x); only Go 1.18+ is supported",
				  ptrsize, flags);
	const uint8_t *q = p + 32;
	size_t left = n - 32;
	size_t vlen = 0, mlen = 0;
	g->go_version = read_string(&q, &left, &vlen);
	char *mod = g->go_version ? read_string(&q, &left, &mlen) : NULL;
	if (!g->go_version || !mod) {
		free(mod);
		return gobin_fail(errbuf, g->path, EINVAL,
				  ".go.buildinfo strings are malformed (bad varint or length)");
	}
	if (strncmp(g->go_version, "go", 2) || strlen(g->go_version) != vlen) {
		free(mod);
		return gobin_fail(errbuf, g->path, EINVAL,
				  ".go.buildinfo version \"%.40s\" does not start with \"go\"",
				  g->go_version);
	}
	if (mlen >= 33 && mod[mlen - 17] == '\n') {
		memmove(mod, mod + 16, mlen - 32);
		mod[mlen - 32] = '\0';
		if (strlen(mod) != mlen - 32) {
			free(mod);
			return gobin_fail(errbuf, g->path, EINVAL,
					  ".go.buildinfo module information holds a NUL byte");
		}
	} else {
		mod[0] = '\0';
	}
	g->modinfo = mod;
	return parse_modinfo(g, errbuf);
}

const char *gobin_go_version(const struct gobin *g) { return g->go_version; }
const char *gobin_modinfo(const struct gobin *g) { return g->modinfo; }
const char *gobin_main_path(const struct gobin *g) { return g->main_path; }
const struct gobin_module *gobin_main_module(const struct gobin *g)
{
	return g->has_main ? &g->main_mod : NULL;
}
size_t gobin_dep_count(const struct gobin *g) { return g->ndeps; }
const struct gobin_module *gobin_dep_at(const struct gobin *g, size_t i)
{
	return i < g->ndeps ? &g->deps[i] : NULL;
}

const struct gobin_module *gobin_dep_find(const struct gobin *g, const char *path)
{
	for (size_t i = 0; i < g->ndeps; i++)
		if (!strcmp(g->deps[i].path, path))
			return &g->deps[i];
	return NULL;
}

const char *gobin_build_setting(const struct gobin *g, const char *key)
{
	for (size_t i = 0; i < g->nsettings; i++)
		if (!strcmp(g->settings[i].key, key))
			return g->settings[i].value;
	return NULL;
}
