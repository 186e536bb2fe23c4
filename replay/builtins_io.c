/*
 * The Json and IOUtils community modules (reading and writing files, the environment) and the
 * simple operators of TLCExt, with TLC's conversions: JSON numbers become 32-bit integers as
 * Gson's getAsInt makes them, null is an error, empty lines of an NDJSON file are skipped.
 */
#include "builtins_internal.h"
#include "ev_core.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spectap/buf.h"
#include "spectap/json.h"

extern char **environ;

static int oom(struct ev *ev, const struct ast *at, const char *op)
{
	return ev_fail(ev, at, "out of memory in %s", op);
}

/* Gson's getAsInt on a number's text: the integer part (toward zero), its low 32 bits. */
static int32_t tlc_int(const char *s, size_t n)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	char digits[400];
	size_t nd = 0, point = SIZE_MAX;
	long exp = 0;
	for (; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			if (nd < sizeof(digits))
				digits[nd++] = s[i];
		} else if (s[i] == '.') {
			point = nd;
		} else if (s[i] == 'e' || s[i] == 'E') {
			exp = strtol(s + i + 1, NULL, 10);
			break;
		}
	}
	if (point == SIZE_MAX)
		point = nd;
	long int_digits = (long)point + exp; /* digits before the decimal point after the exponent */
	uint32_t v = 0;
	for (long k = 0; k < int_digits; k++)
		v = v * 10u + (uint32_t)(k < (long)nd ? digits[k] - '0' : 0);
	return (int32_t)(neg ? 0u - v : v);
}

/* A parsed JSON value as TLC's Json module gives it (numbers: 32-bit; null: an error). */
static int tlc_json_value(struct ev *ev, const struct ast *at, const char *op, spt_val *v, spt_val **out)
{
	struct spt_arena *a = ev_arena(ev);
	switch (v->kind) {
	case SPT_INT:
		*out = v->u.i == (int32_t)v->u.i ? v : spt_int(a, (int32_t)(uint32_t)(uint64_t)v->u.i);
		return *out ? 0 : oom(ev, at, op);
	case SPT_STR:
		if (v->hint == SPT_HINT_NUMBER)
			return (*out = spt_int(a, tlc_int(v->u.s, v->n))) ? 0 : oom(ev, at, op);
		*out = v;
		return 0;
	case SPT_MODEL:
		return ev_fail(ev, at, "%s: cannot convert value: unsupported JSON value null", op);
	case SPT_SEQ: {
		spt_val **e = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*e));
		if (!e)
			return oom(ev, at, op);
		bool same = true;
		for (uint32_t i = 0; i < v->n; i++) {
			if (tlc_json_value(ev, at, op, v->u.elems[i], &e[i]))
				return EVAL_ERR;
			same &= e[i] == v->u.elems[i];
		}
		*out = same ? v : spt_seq_adopt(a, e, v->n);
		return *out ? 0 : oom(ev, at, op);
	}
	case SPT_REC:
	case SPT_FUN: {
		spt_val **k = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*k)), **x = spt_arena_alloc(a, (v->n ? v->n : 1) * sizeof(*x));
		if (!k || !x)
			return oom(ev, at, op);
		bool same = true;
		for (uint32_t i = 0; i < v->n; i++) {
			k[i] = v->u.fn.keys[i];
			if (tlc_json_value(ev, at, op, v->u.fn.vals[i], &x[i]))
				return EVAL_ERR;
			same &= x[i] == v->u.fn.vals[i];
		}
		bool dup = false;
		*out = same ? v : spt_fun(a, k, x, v->n, &dup);
		return *out ? 0 : oom(ev, at, op);
	}
	default:
		*out = v;
		return 0;
	}
}

static int path_arg(struct ev *ev, const struct ast *at, const char *op, spt_val *p, char *buf, size_t size)
{
	if (p->kind != SPT_STR)
		return bi_type_err(ev, at, op, 1, "a file name (a string)", p);
	if (p->n + 1 > size)
		return ev_fail(ev, at, "%s: the file name is too long", op);
	memcpy(buf, p->u.s, p->n);
	buf[p->n] = '\0';
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct spt_buf b = { 0 };
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		spt_buf_put(&b, chunk, n);
	int e = ferror(f) ? EIO : 0;
	fclose(f);
	if (e || b.oom) {
		spt_buf_free(&b);
		errno = e ? e : ENOMEM;
		return NULL;
	}
	*len = b.len;
	if (!b.p)
		return calloc(1, 1);
	return b.p;
}

#define PATH_BUF 4096

/* The values of files the deserializers read, kept when asked (check --tv evaluates the same
 * wrapper once per window, and each reads the whole windows file): by path and the file's
 * device, inode, size and modification time, so a changed file is read again. The values live
 * in an arena of their own whose tag says "never freed" (SPT_GEN_STATIC) to the caches, until
 * spt_io_keep_files(false). */
struct kept_file {
	char *path;
	bool lines;     /* ndJsonDeserialize's reading, else JsonDeserialize's */
	struct stat st; /* the file when it was read */
	spt_val *v;
};
static struct {
	pthread_mutex_t lock;
	bool on;
	struct spt_arena arena;
	struct kept_file *f;
	size_t n, cap;
} kept = { .lock = PTHREAD_MUTEX_INITIALIZER };

void spt_io_keep_files(bool on)
{
	pthread_mutex_lock(&kept.lock);
	if (on && !kept.on) {
		spt_arena_init(&kept.arena);
		kept.arena.tag = SPT_GEN_STATIC;
	} else if (!on && kept.on) {
		for (size_t i = 0; i < kept.n; i++)
			free(kept.f[i].path);
		free(kept.f);
		kept.f = NULL;
		kept.n = kept.cap = 0;
		spt_arena_fini(&kept.arena);
	}
	kept.on = on;
	pthread_mutex_unlock(&kept.lock);
}

/* The same version of a file: device, inode, size and modification time. */
static bool same_version(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A kept value of the file (under kept.lock), or NULL. */
static spt_val *kept_value(const char *path, bool lines, const struct stat *st)
{
	for (size_t i = 0; i < kept.n; i++)
		if (kept.f[i].lines == lines && same_version(&kept.f[i].st, st) && !strcmp(kept.f[i].path, path))
			return kept.f[i].v;
	return NULL;
}

/* Keeps v (built in kept.arena) for the file (under kept.lock); out of memory: not kept. */
static void keep_value(const char *path, bool lines, const struct stat *st, spt_val *v)
{
	if (kept.n == kept.cap) {
		size_t cap = kept.cap ? kept.cap * 2 : 8;
		struct kept_file *g = realloc(kept.f, cap * sizeof(*g));
		if (!g)
			return;
		kept.f = g;
		kept.cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		return;
	kept.f[kept.n++] = (struct kept_file){ p, lines, *st, v };
}

/* ndJsonDeserialize's value of text: one value per non-empty line, as a sequence. */
static int nd_json_value(struct ev *ev, const struct ast *at, const char *path, const char *text, size_t len,
			 spt_val **out)
{
	size_t cap = 1024, count = 0;
	spt_val **e = malloc(cap * sizeof(*e));
	int rc = 0;
	unsigned line = 0;
	for (size_t p = 0; e && p < len;) {
		const char *l = text + p, *nl = memchr(l, '\n', len - p);
		size_t ll = nl ? (size_t)(nl - l) : len - p;
		p += ll + (nl ? 1 : 0);
		line++;
		size_t b = 0, t = ll;
		while (b < t && (l[b] == ' ' || l[b] == '\t' || l[b] == '\r'))
			b++;
		while (t > b && (l[t - 1] == ' ' || l[t - 1] == '\t' || l[t - 1] == '\r'))
			t--;
		if (b == t)
			continue;
		spt_val *v;
		struct spt_json_error je = { 0 };
		if (spt_json_parse(ev_arena(ev), l + b, t - b, 0, &v, &je)) {
			spt_json_locate(l + b, t - b, &je);
			rc = ev_fail(ev, at, "ndJsonDeserialize: %s:%u:%u: %s", path, line, je.col + (unsigned)b, je.msg);
			break;
		}
		if ((rc = tlc_json_value(ev, at, "ndJsonDeserialize", v, &v)))
			break;
		if (count == cap) {
			spt_val **ne = realloc(e, cap * 2 * sizeof(*e));
			if (!ne) {
				rc = oom(ev, at, "ndJsonDeserialize");
				break;
			}
			e = ne;
			cap *= 2;
		}
		e[count++] = v;
	}
	if (!e)
		return oom(ev, at, "ndJsonDeserialize");
	if (!rc && !(*out = spt_seq(ev_arena(ev), e, count)))
		rc = oom(ev, at, "ndJsonDeserialize");
	free(e);
	return rc;
}

static int json_value(struct ev *ev, const struct ast *at, const char *path, const char *text, size_t len,
		      spt_val **out)
{
	spt_val *v;
	struct spt_json_error je = { 0 };
	if (spt_json_parse(ev_arena(ev), text, len, 0, &v, &je)) {
		spt_json_locate(text, len, &je);
		return ev_fail(ev, at, "JsonDeserialize: %s:%u:%u: %s", path, je.line, je.col, je.msg);
	}
	return tlc_json_value(ev, at, "JsonDeserialize", v, out);
}

/* A deserializer's value of the file its argument names: read (into the kept values' arena
 * when files are kept), or the kept one. */
static int deserialize(struct ev *ev, const struct ast *at, const char *op, bool lines, spt_val *arg, spt_val **out)
{
	char path[PATH_BUF];
	size_t len;
	char *text;
	struct stat st, after;
	spt_val *v = NULL;
	if (path_arg(ev, at, op, arg, path, PATH_BUF))
		return EVAL_ERR;
	pthread_mutex_lock(&kept.lock);
	bool keep = kept.on, have_st = keep && !stat(path, &st);
	if (!keep)
		pthread_mutex_unlock(&kept.lock);
	int rc = 0;
	if (have_st && (v = kept_value(path, lines, &st)))
		; /* read before: its kept value */
	else if (!(text = read_all(path, &len)))
		rc = ev_fail(ev, at, "%s: cannot read %s: %s", op, path, strerror(errno));
	else {
		struct spt_arena *a = ev->arena;
		if (keep)
			ev->arena = &kept.arena;
		rc = lines ? nd_json_value(ev, at, path, text, len, &v) : json_value(ev, at, path, text, len, &v);
		ev->arena = a;
		free(text);
		/* Kept when the file did not change while it was read. */
		if (!rc && have_st && !stat(path, &after) && same_version(&st, &after))
			keep_value(path, lines, &st, v);
	}
	if (keep)
		pthread_mutex_unlock(&kept.lock);
	return rc ? rc : bi_ret(ev, at, op, v, out);
}

/* ndJsonDeserialize(path): one value per non-empty line, as a sequence. */
BI(bi_nd_json_deserialize)
{
	(void)n;
	return deserialize(ev, at, "ndJsonDeserialize", true, args[0], out);
}

BI(bi_json_deserialize)
{
	(void)n;
	return deserialize(ev, at, "JsonDeserialize", false, args[0], out);
}

BI(bi_to_json)
{
	(void)n;
	struct spt_buf b = { 0 };
	spt_json_write(&b, args[0], SPT_JSON_CANONICAL, NULL);
	if (b.oom) {
		spt_buf_free(&b);
		return oom(ev, at, "ToJson");
	}
	spt_val *s = spt_str(ev_arena(ev), b.p ? b.p : "", b.len);
	spt_buf_free(&b);
	return bi_ret(ev, at, "ToJson", s, out);
}

static int write_json(struct ev *ev, const struct ast *at, const char *op, spt_val *pathv, spt_val *v, bool lines,
		      spt_val **out)
{
	char path[4096];
	if (path_arg(ev, at, op, pathv, path, sizeof(path)))
		return EVAL_ERR;
	struct bi_seq s = { &v, 1 };
	if (lines && bi_seq(ev, at, op, 2, v, &s))
		return EVAL_ERR;
	struct spt_buf b = { 0 };
	for (uint32_t i = 0; i < s.n; i++) {
		spt_json_write(&b, s.e[i], SPT_JSON_CANONICAL, NULL);
		spt_buf_putc(&b, '\n');
	}
	FILE *f = b.oom ? NULL : fopen(path, "w");
	bool ok = f && fwrite(b.p ? b.p : "", 1, b.len, f) == b.len;
	if (f && fclose(f))
		ok = false;
	spt_buf_free(&b);
	if (!ok)
		return ev_fail(ev, at, "%s: cannot write %s: %s", op, path, strerror(errno ? errno : EIO));
	return bi_ret_bool(ev, at, op, true, out);
}

BI(bi_json_serialize)
{
	(void)n;
	return write_json(ev, at, "JsonSerialize", args[0], args[1], false, out);
}

BI(bi_nd_json_serialize)
{
	(void)n;
	return write_json(ev, at, "ndJsonSerialize", args[0], args[1], true, out);
}

/* IOEnv: the process's environment, a record of strings. */
BI(bi_ioenv)
{
	(void)args;
	(void)n;
	size_t cnt = 0;
	for (char **e = environ; e && *e; e++)
		cnt++;
	struct spt_arena *a = ev_arena(ev);
	spt_val **k = spt_arena_alloc(a, (cnt ? cnt : 1) * sizeof(*k)), **v = spt_arena_alloc(a, (cnt ? cnt : 1) * sizeof(*v));
	if (!k || !v)
		return oom(ev, at, "IOEnv");
	size_t m = 0;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		spt_val *key = spt_str(a, *e, (size_t)(eq - *e));
		bool seen = false;
		for (size_t j = 0; key && j < m && !seen; j++)
			seen = spt_value_eq(k[j], key);
		if (seen)
			continue; /* the first one wins, as getenv finds it */
		k[m] = key;
		v[m] = spt_cstr(a, eq + 1);
		if (!k[m] || !v[m])
			return oom(ev, at, "IOEnv");
		m++;
	}
	bool dup = false;
	spt_val *r = m ? spt_fun(a, k, v, m, &dup) : spt_empty_fun(a, SPT_REC);
	return bi_ret(ev, at, "IOEnv", r, out);
}

/* atoi(s): Integer.parseInt: an optional sign and decimal digits, in 32 bits. */
BI(bi_atoi)
{
	(void)n;
	spt_val *s = args[0];
	if (s->kind != SPT_STR)
		return bi_type_err(ev, at, "atoi", 1, "a string", s);
	size_t i = 0;
	bool neg = false;
	if (i < s->n && (s->u.s[i] == '-' || s->u.s[i] == '+'))
		neg = s->u.s[i++] == '-';
	int64_t v = 0;
	if (i == s->n)
		return ev_fail(ev, at, "atoi: \"%s\" is not a decimal integer", s->u.s);
	for (; i < s->n; i++) {
		if (s->u.s[i] < '0' || s->u.s[i] > '9')
			return ev_fail(ev, at, "atoi: \"%s\" is not a decimal integer", s->u.s);
		v = v * 10 + (s->u.s[i] - '0');
		if (v > (int64_t)INT32_MAX + 1)
			return ev_fail(ev, at, "atoi: \"%s\" is outside the 32-bit integers", s->u.s);
	}
	v = neg ? -v : v;
	if (v > INT32_MAX)
		return ev_fail(ev, at, "atoi: \"%s\" is outside the 32-bit integers", s->u.s);
	return bi_ret_int(ev, at, "atoi", v, out);
}

/* ---- TLCExt ---- */

BI(bi_tlc_model_value)
{
	(void)n;
	if (args[0]->kind != SPT_STR)
		return ev_fail(ev, at, "The argument of ModelValue should be a string, but instead it is:\n%s", ev_show(ev, args[0]));
	return bi_ret(ev, at, "TLCModelValue", spt_model(ev_arena(ev), args[0]->u.s), out);
}

/* AssertEq(a, b): a = b, printing both when they differ. */
BI(bi_assert_eq)
{
	(void)n;
	bool eq = spt_value_eq(args[0], args[1]);
	if (!eq) {
		FILE *f = bi_print_stream ? bi_print_stream : stderr;
		fprintf(f, "AssertEq failed: %s # ", ev_show(ev, args[0]));
		fprintf(f, "%s\n", ev_show(ev, args[1]));
	}
	return bi_ret_bool(ev, at, "AssertEq", eq, out);
}

BI(bi_tlc_noop)
{
	(void)ev;
	(void)at;
	(void)n;
	*out = args[0];
	return 0;
}
