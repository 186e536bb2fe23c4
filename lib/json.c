/* A strict JSON reader and writer for values. No dependency, exact 64-bit integers. */
#include "spectap/json.h"

#include "json_strtab.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 200

#define STR_CACHE 256 /* strings seen in this input, reused (object keys repeat) */
/* Objects and arrays at least SPAN_MIN bytes long are remembered by their text: the same text
 * again later in the input (a window's post-state repeats most of its pre-state) is the same
 * value, taken without parsing it again. SPAN_SETS sets of SPAN_WAYS, keyed by the first
 * SPAN_MIN bytes. */
#define SPAN_MIN 48
#define SPAN_SETS 128
#define SPAN_WAYS 1

struct span {
	const char *at;
	size_t len;
	int height;   /* nesting levels inside it, for the depth limit where it is taken again */
	uint32_t gen; /* the parse it is from (a reader's spans outlive a parse) */
	uint64_t key;
	spt_val *v;
};

#define STK_INIT 256

/* Which key came after another (or first in a record under another) the last two times: a
 * record's keys usually come in the order of a recent record of its kind. */
#define PRED_SLOTS 512
#define PRED_MAX_LEN 14 /* the quoted key in two words */

struct key_guess {
	/* The key before; or, for a record's first key, the key the record is the value of (bit
	 * 0 set), in an array (bit 1 set too). 0: empty. */
	uintptr_t after;
	spt_val *next;   /* a string the reader keeps */
	uint64_t w0, w1, m0, m1; /* the quoted key as the input has it, and which bytes count */
	/* after is a key the reader keeps (its address is its string while the reader lives) and
	 * next comes after it in canonical order. */
	bool in_order;
};

struct key_pred {
	struct key_guess g[2]; /* the latest first */
};

struct spt_json_reader {
	struct json_strtab tab;
	struct key_pred preds[PRED_SLOTS];
	struct span spans[SPAN_SETS * SPAN_WAYS];
	uint32_t span_gen;
	spt_val **stk;
	size_t cap;
};

struct parser {
	struct spt_arena *a;
	const char *s;
	size_t len, pos;
	unsigned flags;
	int depth;
	struct spt_json_error *err;
	bool oom;
	int peak;            /* the deepest nesting reached in the value being parsed */
	/* SPAN_SETS * SPAN_WAYS: a reader's, or made in the arena when first needed; entries of
	 * another parse than span_gen are stale. */
	struct span *spans;
	uint32_t span_gen;
	unsigned span_next;  /* the way replaced next */
	struct json_strtab *tab; /* a reader's strings, or NULL: strs */
	struct key_pred *preds;  /* a reader's, or NULL */
	uintptr_t ctx;           /* the key whose value is being read (0: none; bit 1: in an array) */
	spt_val **strs;      /* STR_CACHE strings seen in this text */
	/* The items of every array and object being read (an object's as key, value, key, ...):
	 * one stack for the whole parse; stk_heap: from malloc (else the caller's). */
	spt_val **stk;
	size_t top, cap;
	bool stk_heap;
};

__attribute__((format(printf, 3, 4))) static int fail(struct parser *p, size_t at, const char *fmt,
						       ...)
{
	if (p->err) {
		p->err->offset = at;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int nomem(struct parser *p)
{
	p->oom = true;
	return -ENOMEM;
}

static inline void skip_ws(struct parser *p)
{
	const char *s = p->s;
	size_t i = p->pos, len = p->len;
	if (i < len && (unsigned char)s[i] > ' ') /* compact JSON: nothing to skip */
		return;
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	p->pos = i;
}

static int parse_value(struct parser *p, spt_val **out);
static int parse_value_plain(struct parser *p, spt_val **out, spt_val **plain);
static spt_val *str_value(struct parser *p, const char *s, size_t n);

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int hex4(struct parser *p, size_t at, unsigned *out)
{
	if (p->len - at < 4)
		return fail(p, at, "truncated \\u escape");
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int d = hex_digit(p->s[at + i]);
		if (d < 0)
			return fail(p, at + i, "bad hex digit in \\u escape");
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct spt_buf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	spt_buf_put(b, u, n);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR 1 /* strings scanned eight bytes at a time */

/* The bytes of w (eight of the input, the first lowest) that end a string's plain run (below
 * 0x20, a quote, a backslash, not ASCII), each as 0x80: the lowest one is exact (a borrow runs
 * upwards only, so a byte is wrongly flagged only above a rightly flagged one). */
static inline uint64_t stop_bytes(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) | w) & (ones * 0x80);
}
#endif

/* The first n (at most 8) bytes of w, zeros above. */
static inline uint64_t low_bytes(uint64_t w, size_t n)
{
	return n >= 8 ? w : n ? w & (~0ULL >> (64 - 8 * n)) : 0;
}

/* Past the string's characters from i that need no decoding (no escape, no control character,
 * well-formed UTF-8): at its closing quote when the whole string is such. */
static inline size_t scan_plain(const struct parser *p, size_t i)
{
	const unsigned char *s = (const unsigned char *)p->s;
	size_t len = p->len;
	for (;;) {
#ifdef SWAR
		while (i + 8 <= len) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			uint64_t t = stop_bytes(w);
			if (t) {
				i += (size_t)__builtin_ctzll(t) >> 3;
				break;
			}
			i += 8;
		}
#endif
		while (i < len && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
			i++;
		if (i >= len || s[i] < 0x80)
			return i;
		size_t u = spt_utf8_len(s + i, len - i);
		if (!u)
			return i;
		i += u;
	}
}

/* Parses a string at p->pos (at the quote). Result is NUL-terminated in the arena. */
static int parse_string(struct parser *p, const char **out, size_t *outlen)
{
	size_t start = ++p->pos;
	/* Fast path: nothing to decode. */
	size_t i = scan_plain(p, start);
	if (i < p->len && p->s[i] == '"') {
		char *c = spt_arena_strndup(p->a, p->s + start, i - start);
		if (!c)
			return nomem(p);
		*out = c;
		*outlen = i - start;
		p->pos = i + 1;
		return 0;
	}
	struct spt_buf b = { 0 };
	int rc = 0;
	for (i = start;; i++) {
		if (i >= p->len) {
			rc = fail(p, start - 1, "unterminated string");
			goto out;
		}
		unsigned char c = (unsigned char)p->s[i];
		if (c == '"')
			break;
		if (c < 0x20) {
			rc = fail(p, i, "control character 0x%02x in string", c);
			goto out;
		}
		if (c >= 0x80) {
			size_t u = spt_utf8_len((const unsigned char *)p->s + i, p->len - i);
			if (!u) {
				rc = fail(p, i, "invalid UTF-8 in a string (byte 0x%02x): JSON text is UTF-8", c);
				goto out;
			}
			spt_buf_put(&b, p->s + i, u);
			i += u - 1;
			continue;
		}
		if (c != '\\') {
			spt_buf_putc(&b, (char)c);
			continue;
		}
		if (++i >= p->len) {
			rc = fail(p, start - 1, "unterminated string");
			goto out;
		}
		switch (p->s[i]) {
		case '"': spt_buf_putc(&b, '"'); break;
		case '\\': spt_buf_putc(&b, '\\'); break;
		case '/': spt_buf_putc(&b, '/'); break;
		case 'b': spt_buf_putc(&b, '\b'); break;
		case 'f': spt_buf_putc(&b, '\f'); break;
		case 'n': spt_buf_putc(&b, '\n'); break;
		case 'r': spt_buf_putc(&b, '\r'); break;
		case 't': spt_buf_putc(&b, '\t'); break;
		case 'u': {
			unsigned cp;
			if ((rc = hex4(p, i + 1, &cp)))
				goto out;
			i += 4;
			if (cp >= 0xd800 && cp < 0xdc00) {
				unsigned lo;
				if (p->len - i < 7 || p->s[i + 1] != '\\' || p->s[i + 2] != 'u') {
					rc = fail(p, i - 5, "unpaired surrogate in \\u escape");
					goto out;
				}
				if ((rc = hex4(p, i + 3, &lo)))
					goto out;
				if (lo < 0xdc00 || lo >= 0xe000) {
					rc = fail(p, i + 1, "unpaired surrogate in \\u escape");
					goto out;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				rc = fail(p, i - 5, "unpaired surrogate in \\u escape");
				goto out;
			}
			put_utf8(&b, cp);
			break;
		}
		default:
			rc = fail(p, i - 1, "bad escape '\\%c'", p->s[i]);
			goto out;
		}
	}
	if (b.oom) {
		rc = nomem(p);
		goto out;
	}
	char *c = spt_arena_strndup(p->a, b.p ? b.p : "", b.len);
	if (!c) {
		rc = nomem(p);
		goto out;
	}
	*out = c;
	*outlen = b.len;
	p->pos = i + 1;
out:
	spt_buf_free(&b);
	return rc;
}

/* The string of the n plain bytes at s: the reader's, or one seen before in this text. */
static spt_val *plain_string(struct parser *p, const char *s, size_t n)
{
	if (!p->tab)
		return str_value(p, s, n);
	if (n > STRTAB_MAX_LEN)
		return spt_str(p->a, s, n);
	uint64_t w0 = 0, w1 = 0;
	memcpy(&w0, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&w1, s + 8, n < 16 ? n - 8 : 8);
	return json_strtab_get(p->tab, p->a, s, n, w0, w1);
}

/* A string at p->pos as a value (escape-free ones straight from the input, cached). */
static int parse_string_value(struct parser *p, spt_val **out)
{
	size_t start = p->pos + 1;
#ifdef SWAR
	/* A reader's short strings: found by their bytes as two words, read at once. */
	if (p->tab && p->len - start >= 16) {
		const char *s = p->s + start;
		uint64_t w0, w1 = 0, t;
		size_t n;
		memcpy(&w0, s, 8);
		if ((t = stop_bytes(w0))) {
			n = (size_t)__builtin_ctzll(t) >> 3;
			w0 = low_bytes(w0, n);
		} else {
			memcpy(&w1, s + 8, 8);
			t = stop_bytes(w1);
			n = 8 + ((size_t)__builtin_ctzll(t | (1ULL << 63)) >> 3);
			w1 = low_bytes(w1, n - 8);
		}
		if (t && s[n] == '"') {
			if (!(*out = json_strtab_get(p->tab, p->a, s, n, w0, w1)))
				return nomem(p);
			p->pos = start + n + 1;
			return 0;
		}
	}
#endif
	size_t i = scan_plain(p, start);
	if (i < p->len && p->s[i] == '"') {
		if (!(*out = plain_string(p, p->s + start, i - start)))
			return nomem(p);
		p->pos = i + 1;
		return 0;
	}
	const char *s = NULL;
	size_t n = 0;
	int rc = parse_string(p, &s, &n);
	if (!rc && !(*out = spt_str(p->a, s, n)))
		rc = nomem(p);
	return rc;
}

static int parse_number(struct parser *p, spt_val **out)
{
	size_t start = p->pos, i = p->pos;
	bool neg = false, integral = true;
	if (i < p->len && p->s[i] == '-') {
		neg = true;
		i++;
	}
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
		return fail(p, start, "bad number");
	if (p->s[i] == '0' && i + 1 < p->len && p->s[i + 1] >= '0' && p->s[i + 1] <= '9')
		return fail(p, start, "leading zero in number");
	while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
		i++;
	size_t int_end = i;
	if (i < p->len && p->s[i] == '.') {
		integral = false;
		if (++i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail(p, start, "bad number: digit expected after '.'");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		integral = false;
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail(p, start, "bad number: digit expected in exponent");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	p->pos = i;
	if (!integral) {
		*out = spt_number_text(p->a, p->s + start, i - start);
		return *out ? 0 : nomem(p);
	}
	/* Accumulate negatively so INT64_MIN fits. */
	int64_t v = 0;
	for (size_t k = start + neg; k < int_end; k++) {
		int d = p->s[k] - '0';
		if (v < (INT64_MIN + d) / 10)
			return fail(p, start, "integer %.*s does not fit in 64 bits", (int)(i - start),
				    p->s + start);
		v = v * 10 - d;
	}
	if (!neg) {
		if (v == INT64_MIN)
			return fail(p, start, "integer %.*s does not fit in 64 bits", (int)(i - start),
				    p->s + start);
		v = -v;
	}
	*out = spt_int(p->a, v);
	return *out ? 0 : nomem(p);
}

static int expect_fail(struct parser *p, const char *what)
{
	if (p->pos >= p->len)
		return fail(p, p->pos, "unexpected end of input, %s expected", what);
	return fail(p, p->pos, "'%c' found where %s expected", p->s[p->pos], what);
}

static inline int expect_char(struct parser *p, char c, const char *what)
{
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == c) {
		p->pos++;
		return 0;
	}
	return expect_fail(p, what);
}

/* A scalar of the usual kinds (a string, a small natural number, a boolean) at p->pos as
 * parse_value reads it: its value, its nesting counted; 1 for anything else, left to it. */
static inline __attribute__((always_inline)) int parse_scalar(struct parser *p, spt_val **out)
{
	const char *s = p->s;
	size_t i = p->pos, len = p->len;
	if (i >= len || p->depth >= JSON_MAX_DEPTH)
		return 1;
	unsigned char c = (unsigned char)s[i];
	size_t j;
	if (c == '"') {
		int rc = parse_string_value(p, out);
		if (rc)
			return rc;
	} else if ((unsigned)(c - '0') <= 9) {
		/* Up to 18 digits fit; a leading zero, a fraction or an exponent: parse_number. */
		uint64_t v = c - '0';
		for (j = i + 1; v && j < len && j - i < 18 && (unsigned)(s[j] - '0') <= 9; j++)
			v = v * 10 + (uint64_t)(s[j] - '0');
		if (j < len && ((unsigned)(s[j] - '0') <= 9 || s[j] == '.' || s[j] == 'e' || s[j] == 'E'))
			return 1;
		if (!(*out = spt_int(p->a, (int64_t)v)))
			return nomem(p);
		p->pos = j;
	} else if (c == 't' && len - i >= 4 && !memcmp(s + i, "true", 4)) {
		*out = spt_bool(p->a, true);
		p->pos = i + 4;
	} else if (c == 'f' && len - i >= 5 && !memcmp(s + i, "false", 5)) {
		*out = spt_bool(p->a, false);
		p->pos = i + 5;
	} else {
		return 1;
	}
	if (p->depth + 1 > p->peak)
		p->peak = p->depth + 1;
	return 0;
}

/* A value at p->pos: the usual scalars in place, the rest by parse_value. */
static inline __attribute__((always_inline)) int parse_item(struct parser *p, spt_val **out)
{
	skip_ws(p);
	int rc = parse_scalar(p, out);
	return rc == 1 ? parse_value(p, out) : rc;
}

static int stk_grow(struct parser *p)
{
	size_t cap = p->cap * 2;
	spt_val **n = p->stk_heap ? realloc(p->stk, cap * sizeof(*n)) : malloc(cap * sizeof(*n));
	if (!n)
		return nomem(p);
	if (!p->stk_heap)
		memcpy(n, p->stk, p->top * sizeof(*n));
	p->stk = n;
	p->cap = cap;
	p->stk_heap = true;
	return 0;
}

static inline int stk_push(struct parser *p, spt_val *x)
{
	if (p->top == p->cap && stk_grow(p))
		return -ENOMEM;
	p->stk[p->top++] = x;
	return 0;
}

/* Items being read: the first few in place, more on the heap. */
struct valvec {
	spt_val **v;
	size_t n, cap;
	spt_val *inl[16];
};

#define VALVEC_INIT(vv) ((vv).v = (vv).inl, (vv).n = 0, (vv).cap = 16)
#define VALVEC_FREE(vv) ((vv).v != (vv).inl ? free((vv).v) : (void)0)

static int vec_push(struct parser *p, struct valvec *vv, spt_val *x)
{
	if (vv->n == vv->cap) {
		size_t cap = vv->cap * 2;
		spt_val **nv = vv->v == vv->inl ? malloc(cap * sizeof(*nv)) : realloc(vv->v, cap * sizeof(*nv));
		if (!nv)
			return nomem(p);
		if (vv->v == vv->inl)
			memcpy(nv, vv->inl, vv->n * sizeof(*nv));
		vv->v = nv;
		vv->cap = cap;
	}
	vv->v[vv->n++] = x;
	return 0;
}

/* A string value of these bytes: one seen before in this input, or a new one. */
static spt_val *str_value(struct parser *p, const char *s, size_t n)
{
	uint64_t w = 0, z = 0;
	if (s + 8 <= p->s + p->len) { /* one load, the bytes past the string masked off */
		memcpy(&w, s, 8);
		if (n < 8)
			w &= n ? ~0ULL >> (64 - 8 * n) : 0;
	} else {
		memcpy(&w, s, n < 8 ? n : 8);
	}
	if (n > 8)
		memcpy(&z, s + n - 8, 8);
	uint64_t h = (w * 0x9e3779b97f4a7c15ULL) ^ (z * 0xc2b2ae3d27d4eb4fULL) ^ (n * 0x165667b19e3779f9ULL);
	spt_val **slot = &p->strs[(h >> 56) & (STR_CACHE - 1)];
	spt_val *v = *slot;
	if (v && v->n == n && !memcmp(v->u.s, s, n))
		return v;
	if ((v = spt_str(p->a, s, n)))
		*slot = v;
	return v;
}

/* Pushes the items onto the stack. */
static int parse_array_items(struct parser *p)
{
	p->pos++; /* '[' */
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']') {
		p->pos++;
		return 0;
	}
	for (;;) {
		spt_val *x;
		int rc = parse_item(p, &x);
		if (rc)
			return rc;
		if ((rc = stk_push(p, x)))
			return rc;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		return expect_char(p, ']', "',' or ']'");
	}
}

/* A key is a tag by all its bytes (a key may hold a NUL). */
static bool key_is(spt_val *key, const char *tag)
{
	return key->n == strlen(tag) && !memcmp(key->u.s, tag, key->n);
}


/* Decodes the tagged dialect's one-key objects; *done is false for a plain record. */

static int decode_tagged(struct parser *p, size_t at, spt_val *key, spt_val *val, spt_val **out,
			 bool *done)
{
	*done = true;
	if (key_is(key, "$set")) {
		if (val->kind != SPT_SEQ && !(spt_is_fun(val) && val->n == 0))
			return fail(p, at, "\"$set\" needs an array");
		*out = spt_set(p->a, val->n ? val->u.elems : NULL, val->n);
	} else if (key_is(key, "$model")) {
		if (val->kind != SPT_STR || val->hint == SPT_HINT_NUMBER)
			return fail(p, at, "\"$model\" needs a string");
		if (memchr(val->u.s, 0, val->n))
			return fail(p, at, "\"$model\" name contains a NUL byte");
		*out = spt_model(p->a, val->u.s);
	} else if (key_is(key, "$bytes")) {
		if (val->kind != SPT_STR || val->hint == SPT_HINT_NUMBER || val->n % 2)
			return fail(p, at, "\"$bytes\" needs a string of hex digit pairs");
		char *bytes = spt_arena_alloc(p->a, val->n / 2 + 1);
		if (!bytes)
			return nomem(p);
		for (uint32_t i = 0; i < val->n; i += 2) {
			int hi = hex_digit(val->u.s[i]), lo = hex_digit(val->u.s[i + 1]);
			if (hi < 0 || lo < 0)
				return fail(p, at, "\"$bytes\" needs a string of hex digit pairs");
			bytes[i / 2] = (char)(hi << 4 | lo);
		}
		*out = spt_str(p->a, bytes, val->n / 2);
	} else if (key_is(key, "$rec")) {
		if (val->kind != SPT_REC && !(spt_is_fun(val) && val->n == 0))
			return fail(p, at, "\"$rec\" needs an object");
		*out = val->n ? val : spt_empty_fun(p->a, SPT_REC);
	} else if (key_is(key, "$fun")) {
		if (!spt_is_fun(val) || (val->n && val->kind != SPT_SEQ))
			return fail(p, at, "\"$fun\" needs an array of [key, value] pairs");
		if (val->n == 0) {
			*out = spt_empty_fun(p->a, SPT_FUN);
			return *out ? 0 : nomem(p);
		}
		spt_val **k = spt_arena_alloc(p->a, val->n * sizeof(*k));
		spt_val **v = spt_arena_alloc(p->a, val->n * sizeof(*v));
		if (!k || !v)
			return nomem(p);
		for (uint32_t i = 0; i < val->n; i++) {
			spt_val *pair = val->u.elems[i];
			if (pair->kind != SPT_SEQ || pair->n != 2)
				return fail(p, at, "\"$fun\" pair %u is not [key, value]", i + 1);
			k[i] = pair->u.elems[0];
			v[i] = pair->u.elems[1];
		}
		bool dup;
		*out = spt_fun(p->a, k, v, val->n, &dup);
		if (!*out)
			return dup ? fail(p, at, "\"$fun\" has a duplicate key") : nomem(p);
		return 0;
	} else {
		*done = false;
		return 0;
	}
	return *out ? 0 : nomem(p);
}

/*
 * In the tagged dialect the value of a "$rec" is a plain record even when it looks like a tag,
 * so an object that is the first value of a "$rec" key has two readings: *out, the tagged one,
 * and *plain, the plain record (its values still decoded). When plain is asked for, either
 * reading may be NULL when it is invalid (its error is then in p->err), but not both.
 */
static int parse_object(struct parser *p, spt_val **out, spt_val **plain)
{
	size_t at = p->pos++;
	struct valvec keys, vals;
	VALVEC_INIT(keys);
	VALVEC_INIT(vals);
	bool tagged = p->flags & SPT_JSON_TAGGED, first_is_rec = false;
	spt_val *rec_plain = NULL; /* the first value's plain reading, when its key is "$rec" */
	struct spt_json_error deferred = { 0 }; /* why a reading of the first value is invalid */
	int rc = 0;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		*out = spt_empty_fun(p->a, SPT_REC);
		if (plain)
			*plain = *out;
		return *out ? 0 : nomem(p);
	}
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != '"') {
			rc = p->pos >= p->len ? fail(p, p->pos, "unexpected end of input in object")
					      : fail(p, p->pos, "object key (a string) expected");
			goto out;
		}
		size_t key_at = p->pos;
		spt_val *kv, *v;
		if ((rc = parse_string_value(p, &kv)))
			goto out;
		const char *k = kv->u.s;
		size_t klen = kv->n;
		if (keys.n == 0)
			first_is_rec = tagged && key_is(kv, "$rec");
		if ((rc = expect_char(p, ':', "':'")) ||
		    (rc = parse_value_plain(p, &v, keys.n == 0 && first_is_rec ? &rec_plain : NULL)))
			goto out;
		if (keys.n == 0 && (!v || (first_is_rec && !rec_plain)))
			deferred = *p->err;
		/* Small objects: name the duplicate where it stands. Large ones: the sort finds it. */
		for (size_t i = 0; keys.n <= 32 && i < keys.n; i++)
			if (keys.v[i] == kv || spt_value_eq(keys.v[i], kv)) {
				rc = fail(p, key_at, "duplicate key \"%.*s\"", (int)klen, k);
				goto out;
			}
		if ((rc = vec_push(p, &keys, kv)) || (rc = vec_push(p, &vals, v)))
			goto out;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if ((rc = expect_char(p, '}', "',' or '}'")))
			goto out;
		break;
	}
	/* The tagged reading: a tag, or the record. */
	spt_val *as_tag = NULL, *as_plain = NULL;
	bool is_tag = false, tag_err_deferred = true;
	if (tagged && keys.n == 1 && keys.v[0]->u.s[0] == '$') {
		spt_val *arg = first_is_rec ? rec_plain : vals.v[0];
		is_tag = true;
		if (arg) {
			rc = decode_tagged(p, at, keys.v[0], arg, &as_tag, &is_tag);
			if (rc == -ENOMEM)
				goto out;
			tag_err_deferred = rc == 0;
			rc = 0;
		}
	}
	if (vals.v[0] && (!is_tag || plain)) {
		bool dup;
		if (!(as_plain = spt_fun_ordered(p->a, keys.v, vals.v, keys.n, &dup))) {
			rc = dup ? fail(p, at, "object has a duplicate key") : nomem(p);
			goto out;
		}
	}
	if (!is_tag)
		as_tag = as_plain;
	*out = as_tag;
	if (plain)
		*plain = as_plain;
	/* Leave the error of the invalid reading, if any, in p->err. */
	if (!as_tag && tag_err_deferred)
		*p->err = deferred;
	else if (plain && !as_plain)
		*p->err = deferred;
	if (!as_tag && !(plain && as_plain))
		rc = -EINVAL;
out:
	VALVEC_FREE(keys);
	VALVEC_FREE(vals);
	return rc;
}

static int parse_literal(struct parser *p, const char *word, spt_val **out)
{
	size_t n = strlen(word);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
		return fail(p, p->pos, "unexpected character '%c'", p->s[p->pos]);
	p->pos += n;
	if (word[0] == 'n')
		*out = spt_model(p->a, "null");
	else
		*out = spt_bool(p->a, word[0] == 't');
	return *out ? 0 : nomem(p);
}

static int parse_value(struct parser *p, spt_val **out) { return parse_value_plain(p, out, NULL); }

static int parse_array_value(struct parser *p, spt_val **out)
{
	size_t base = p->top;
	uintptr_t ctx = p->ctx;
	p->ctx = ctx | 2; /* records in an array are of another kind than one under the same key */
	int rc = parse_array_items(p);
	p->ctx = ctx;
	if (!rc) {
		size_t n = p->top - base;
		spt_val **e = n ? spt_arena_alloc(p->a, n * sizeof(*e)) : NULL;
		if (e)
			memcpy(e, p->stk + base, n * sizeof(*e));
		*out = !n ? spt_empty_fun(p->a, SPT_SEQ) : e ? spt_seq_adopt(p->a, e, n) : NULL;
		if (!*out)
			rc = nomem(p);
	}
	p->top = base;
	return rc;
}

/* Whether string key x comes before y in canonical order (spt_value_cmp's for strings). */
static inline bool key_before(spt_val *x, spt_val *y)
{
	uint32_t n = x->n < y->n ? x->n : y->n;
	const unsigned char *a = (const unsigned char *)x->u.s, *b = (const unsigned char *)y->u.s;
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return x->n < y->n;
}

static struct key_pred *pred_slot(struct parser *p, uintptr_t after)
{
	uint64_t h = (uint64_t)after * 0x9e3779b97f4a7c15ULL;
	return &p->preds[h >> 55 & (PRED_SLOTS - 1)];
}

/* k follows `after`: the latest guess, the one before it kept too. */
static void pred_set(struct key_pred *kp, uintptr_t after, spt_val *k)
{
	kp->g[1] = kp->g[0];
	struct key_guess *g = &kp->g[0];
	uint64_t w0 = 0, w1 = 0;
	memcpy(&w0, k->u.s, k->n < 8 ? k->n : 8);
	if (k->n > 8)
		memcpy(&w1, k->u.s + 8, k->n - 8);
	/* The quote, the key's bytes one up, the closing quote. */
	size_t n = k->n + 2;
	g->w0 = '"' | w0 << 8 | (k->n < 7 ? (uint64_t)'"' << 8 * (k->n + 1) : 0);
	g->w1 = w0 >> 56 | w1 << 8 | (k->n >= 7 ? (uint64_t)'"' << 8 * (k->n - 7) : 0);
	g->m0 = low_bytes(~0ULL, n);
	g->m1 = low_bytes(~0ULL, n > 8 ? n - 8 : 0);
	g->after = after;
	g->next = k;
	spt_val *prev = (spt_val *)after;
	g->in_order = !(after & 3) && prev->gen == SPT_GEN_JSON_READER && key_before(prev, k);
}

/* A record's key at p->pos (at its quote). A reader first tries the keys that followed `after`
 * lately: the input's bytes against them, without a scan or a lookup; *in_order, when set,
 * says the key comes after the key `after` in canonical order. */
static inline int parse_key(struct parser *p, uintptr_t after, spt_val **out, bool *in_order)
{
	*in_order = false;
	struct key_pred *kp = NULL;
#ifdef SWAR
	if (p->preds) {
		kp = pred_slot(p, after);
		if (p->len - p->pos >= 16) {
			uint64_t x0, x1;
			memcpy(&x0, p->s + p->pos, 8);
			memcpy(&x1, p->s + p->pos + 8, 8);
			for (int i = 0; i < 2; i++) {
				const struct key_guess *g = &kp->g[i];
				if (g->after == after && !((x0 ^ g->w0) & g->m0) && !((x1 ^ g->w1) & g->m1)) {
					*out = g->next;
					*in_order = g->in_order;
					p->pos += g->next->n + 2;
					return 0;
				}
			}
		}
	}
#endif
	int rc = parse_string_value(p, out);
	if (!rc && kp && (*out)->gen == SPT_GEN_JSON_READER && (*out)->n <= PRED_MAX_LEN)
		pred_set(kp, after, *out);
	return rc;
}

/* An object of the plain dialect, a record. Keys written in canonical order (the usual case)
 * need neither a duplicate scan nor a sort. */
static int parse_record(struct parser *p, spt_val **out)
{
	size_t at = p->pos++, base = p->top;
	int rc = 0;
	bool ordered = true;
	uintptr_t parent = p->ctx, after = parent | 1;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		*out = spt_empty_fun(p->a, SPT_REC);
		return *out ? 0 : nomem(p);
	}
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != '"') {
			rc = p->pos >= p->len ? fail(p, p->pos, "unexpected end of input in object")
					      : fail(p, p->pos, "object key (a string) expected");
			goto out;
		}
		size_t key_at = p->pos;
		spt_val *kv, *v;
		bool in_order;
		if ((rc = parse_key(p, after, &kv, &in_order)))
			goto out;
		after = p->ctx = (uintptr_t)kv;
		if (p->pos < p->len && p->s[p->pos] == ':') /* compact JSON */
			p->pos++;
		else if ((rc = expect_char(p, ':', "':'")))
			goto out;
		if ((rc = parse_item(p, &v)))
			goto out;
		size_t n = (p->top - base) / 2;
		if (ordered && n && !in_order && !key_before(p->stk[p->top - 2], kv))
			ordered = false;
		/* Small objects: name the duplicate where it stands. Large ones: the sort finds it. */
		for (size_t i = 0; !ordered && n <= 32 && i < n; i++) {
			spt_val *k = p->stk[base + 2 * i];
			if (k == kv || spt_value_eq(k, kv)) {
				rc = fail(p, key_at, "duplicate key \"%.*s\"", (int)kv->n, kv->u.s);
				goto out;
			}
		}
		if (p->top + 2 > p->cap && stk_grow(p)) {
			rc = -ENOMEM;
			goto out;
		}
		p->stk[p->top++] = kv;
		p->stk[p->top++] = v;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if ((rc = expect_char(p, '}', "',' or '}'")))
			goto out;
		break;
	}
	size_t n = (p->top - base) / 2;
	spt_val **keys = spt_arena_alloc(p->a, 2 * n * sizeof(*keys)), **vals = keys + n;
	if (!keys) {
		rc = nomem(p);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		keys[i] = p->stk[base + 2 * i];
		vals[i] = p->stk[base + 2 * i + 1];
	}
	if (ordered) {
		if (!(*out = spt_rec_adopt_sorted(p->a, keys, vals, n)))
			rc = nomem(p);
	} else {
		bool dup;
		if (!(*out = spt_fun_ordered(p->a, keys, vals, n, &dup)))
			rc = dup ? fail(p, at, "object has a duplicate key") : nomem(p);
	}
out:
	p->top = base;
	p->ctx = parent;
	return rc;
}

static uint64_t span_key(const char *s)
{
	uint64_t w[SPAN_MIN / 8], h = 0x9e3779b97f4a7c15ULL;
	memcpy(w, s, SPAN_MIN);
	for (size_t i = 0; i < SPAN_MIN / 8; i++)
		h = (h ^ w[i]) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 29);
}

/* A remembered object or array whose text is also at p->pos, taken (true), or false. */
static bool span_take(struct parser *p, uint64_t key, spt_val **out)
{
	struct span *set = p->spans + (key % SPAN_SETS) * SPAN_WAYS;
	for (unsigned i = 0; i < SPAN_WAYS; i++) {
		struct span *sp = &set[i];
		if (sp->v && sp->key == key && sp->gen == p->span_gen && sp->len <= p->len - p->pos && p->depth + sp->height <= JSON_MAX_DEPTH &&
		    !memcmp(sp->at, p->s + p->pos, sp->len)) {
			*out = sp->v;
			p->pos += sp->len;
			if (p->depth + sp->height > p->peak)
				p->peak = p->depth + sp->height;
			return true;
		}
	}
	return false;
}

static void span_keep(struct parser *p, uint64_t key, size_t at, int height, spt_val *v)
{
	struct span *set = p->spans + (key % SPAN_SETS) * SPAN_WAYS;
	set[p->span_next++ % SPAN_WAYS] = (struct span){ p->s + at, p->pos - at, height, p->span_gen, key, v };
}

/* *plain, when asked for, is set to the plain reading of a tagged object (else left alone). */
static int parse_value_plain(struct parser *p, spt_val **out, spt_val **plain)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, p->pos, "unexpected end of input, a value expected");
	if (++p->depth > JSON_MAX_DEPTH)
		return fail(p, p->pos, "nesting deeper than %d", JSON_MAX_DEPTH);
	int rc;
	char c = p->s[p->pos];
	/* A long object or array of the plain dialect: the same text seen before is that value. */
	if ((c == '{' || c == '[') && !plain && !(p->flags & SPT_JSON_TAGGED) && p->len - p->pos >= SPAN_MIN) {
		if (!p->spans) {
			p->spans = spt_arena_alloc(p->a, SPAN_SETS * SPAN_WAYS * sizeof(*p->spans));
			if (!p->spans)
				return nomem(p);
			memset(p->spans, 0, SPAN_SETS * SPAN_WAYS * sizeof(*p->spans));
		}
		uint64_t key = span_key(p->s + p->pos);
		if (span_take(p, key, out)) {
			p->depth--;
			return 0;
		}
		size_t at = p->pos;
		int outer_peak = p->peak;
		p->peak = p->depth;
		rc = c == '{' ? parse_record(p, out) : parse_array_value(p, out);
		int height = p->peak - p->depth;
		if (p->peak < outer_peak)
			p->peak = outer_peak;
		if (!rc && p->pos - at >= SPAN_MIN)
			span_keep(p, key, at, height, *out);
		p->depth--;
		return rc;
	}
	if (p->depth > p->peak)
		p->peak = p->depth;
	switch (c) {
	case '{':
		rc = p->flags & SPT_JSON_TAGGED ? parse_object(p, out, plain) : parse_record(p, out);
		break;
	case '[':
		rc = parse_array_value(p, out);
		break;
	case '"':
		rc = parse_string_value(p, out);
		break;
	case 't': rc = parse_literal(p, "true", out); break;
	case 'f': rc = parse_literal(p, "false", out); break;
	case 'n': rc = parse_literal(p, "null", out); break;
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			rc = parse_number(p, out);
		else if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
			rc = fail(p, p->pos, "unexpected byte 0x%02x", (unsigned char)c);
		else
			rc = fail(p, p->pos, "unexpected character '%c'", c);
	}
	if (!rc && plain && c != '{')
		*plain = *out;
	p->depth--;
	return rc;
}

void spt_json_locate(const char *text, size_t len, struct spt_json_error *err)
{
	unsigned line = 1, col = 1;
	for (size_t i = 0; i < err->offset && i < len; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	err->line = line;
	err->col = col;
}

/* Parses p's text (p set up by the caller). */
static int parse_text(struct parser *p, spt_val **out)
{
	const char *text = p->s;
	size_t len = p->len;
	struct spt_json_error *err = p->err;
	int rc = parse_value(p, out);
	if (!rc) {
		skip_ws(p);
		if (p->pos < len)
			rc = fail(p, p->pos, "trailing characters after the JSON value");
	}
	if (rc == -ENOMEM || p->oom) {
		if (err) {
			err->offset = p->pos;
			snprintf(err->msg, sizeof(err->msg), "out of memory");
		}
		rc = -ENOMEM;
	}
	if (rc && err)
		spt_json_locate(text, len, err);
	return rc;
}

int spt_json_parse(struct spt_arena *a, const char *text, size_t len, unsigned flags,
		   spt_val **out, struct spt_json_error *err)
{
	struct spt_json_error scratch;
	spt_val *strs[STR_CACHE], *stk[STK_INIT];
	memset(strs, 0, sizeof(strs));
	struct parser p = { .a = a, .s = text, .len = len, .flags = flags, .err = err ? err : &scratch, .strs = strs,
			    .stk = stk, .cap = STK_INIT };
	int rc = parse_text(&p, out);
	if (p.stk_heap)
		free(p.stk);
	return rc;
}

struct spt_json_reader *spt_json_reader_new(void)
{
	struct spt_json_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	json_strtab_init(&r->tab);
	return r;
}

void spt_json_reader_free(struct spt_json_reader *r)
{
	if (!r)
		return;
	json_strtab_fini(&r->tab);
	free(r->stk);
	free(r);
}

int spt_json_read(struct spt_json_reader *r, struct spt_arena *a, const char *text, size_t len, unsigned flags,
		  spt_val **out, struct spt_json_error *err)
{
	struct spt_json_error scratch;
	if (++r->span_gen == 0) { /* wrapped: entries of 2^32 parses ago would look current */
		memset(r->spans, 0, sizeof(r->spans));
		r->span_gen = 1;
	}
	struct parser p = { .a = a, .s = text, .len = len, .flags = flags, .err = err ? err : &scratch,
			    .spans = r->spans, .span_gen = r->span_gen, .tab = &r->tab, .preds = r->preds };
	spt_val *stk[STK_INIT];
	p.stk = r->stk ? r->stk : stk;
	p.cap = r->stk ? r->cap : STK_INIT;
	p.stk_heap = r->stk != NULL;
	int rc = parse_text(&p, out);
	if (p.stk_heap) { /* kept for the next text */
		r->stk = p.stk;
		r->cap = p.cap;
	}
	return rc;
}

/* ---- writer ---- */

static bool has_dollar_key(spt_val *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->u.fn.keys[i]->n && r->u.fn.keys[i]->u.s[0] == '$')
			return true;
	return false;
}

/* A function's [[key, value], ...]. */
static void write_pairs(struct spt_buf *b, spt_val *f, unsigned flags, struct spt_json_loss *loss)
{
	spt_buf_putc(b, '[');
	for (uint32_t i = 0; i < f->n; i++) {
		spt_buf_puts(b, i ? ",[" : "[");
		spt_json_write(b, f->u.fn.keys[i], flags, loss);
		spt_buf_putc(b, ',');
		spt_json_write(b, f->u.fn.vals[i], flags, loss);
		spt_buf_putc(b, ']');
	}
	spt_buf_putc(b, ']');
}

static void write_items(struct spt_buf *b, spt_val *const *e, uint32_t n, unsigned flags,
			struct spt_json_loss *loss)
{
	spt_buf_putc(b, '[');
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			spt_buf_putc(b, ',');
		spt_json_write(b, e[i], flags, loss);
	}
	spt_buf_putc(b, ']');
}

void spt_json_write(struct spt_buf *b, spt_val *v, unsigned flags, struct spt_json_loss *loss)
{
	bool tagged = flags & SPT_JSON_TAGGED;
	switch (v->kind) {
	case SPT_BOOL:
		spt_buf_puts(b, v->u.b ? "true" : "false");
		break;
	case SPT_INT:
		spt_buf_printf(b, "%lld", (long long)v->u.i);
		break;
	case SPT_STR:
		if (v->hint == SPT_HINT_NUMBER) {
			spt_buf_put(b, v->u.s, v->n);
		} else if (spt_utf8_valid(v->u.s, v->n)) {
			spt_buf_json_str(b, v->u.s, v->n);
		} else if (tagged) { /* bytes JSON text cannot hold: {"$bytes":"<hex>"} */
			static const char hex[] = "0123456789abcdef";
			spt_buf_puts(b, "{\"$bytes\":\"");
			for (uint32_t i = 0; i < v->n; i++) {
				unsigned char c = (unsigned char)v->u.s[i];
				char h[2] = { hex[c >> 4], hex[c & 15] };
				spt_buf_put(b, h, 2);
			}
			spt_buf_puts(b, "\"}");
		} else {
			if (loss)
				loss->bytes++;
			spt_buf_json_str(b, v->u.s, v->n);
		}
		break;
	case SPT_MODEL:
		if (v->n == 4 && !memcmp(v->u.s, "null", 4)) {
			spt_buf_puts(b, "null");
		} else if (tagged) {
			spt_buf_puts(b, "{\"$model\":");
			spt_buf_json_str(b, v->u.s, v->n);
			spt_buf_putc(b, '}');
		} else {
			if (loss)
				loss->models++;
			spt_buf_json_str(b, v->u.s, v->n);
		}
		break;
	case SPT_SET:
		if (tagged)
			spt_buf_puts(b, "{\"$set\":");
		else if (loss)
			loss->sets++;
		write_items(b, v->u.elems, v->n, flags, loss);
		if (tagged)
			spt_buf_putc(b, '}');
		break;
	case SPT_SEQ:
		write_items(b, v->u.elems, v->n, flags, loss);
		break;
	case SPT_REC: {
		uint32_t bad_keys = 0;
		for (uint32_t i = 0; i < v->n; i++)
			bad_keys += !spt_utf8_valid(v->u.fn.keys[i]->u.s, v->u.fn.keys[i]->n);
		if (bad_keys && tagged) { /* keys JSON text cannot hold: as [key, value] pairs */
			spt_buf_puts(b, "{\"$fun\":");
			write_pairs(b, v, flags, loss);
			spt_buf_putc(b, '}');
			break;
		}
		if (loss)
			loss->bytes += bad_keys;
		bool wrap = tagged && has_dollar_key(v);
		spt_buf_puts(b, wrap ? "{\"$rec\":{" : "{");
		for (uint32_t i = 0; i < v->n; i++) {
			uint32_t j = v->u.fn.order && !(flags & SPT_JSON_CANONICAL)
					     ? v->u.fn.order[i] /* as written */
					     : i;
			if (i)
				spt_buf_putc(b, ',');
			spt_buf_json_str(b, v->u.fn.keys[j]->u.s, v->u.fn.keys[j]->n);
			spt_buf_putc(b, ':');
			spt_json_write(b, v->u.fn.vals[j], flags, loss);
		}
		spt_buf_puts(b, wrap ? "}}" : "}");
		break;
	}
	case SPT_FUN:
		if (tagged)
			spt_buf_puts(b, "{\"$fun\":");
		else if (loss && v->n)
			loss->funs++;
		write_pairs(b, v, flags, loss);
		if (tagged)
			spt_buf_putc(b, '}');
		break;
	}
}
