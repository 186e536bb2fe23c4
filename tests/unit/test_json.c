/* Tests of the JSON codec (lib/json.c, lib/buf.c): constructs, numbers, strings, errors,
 * the tagged dialect and round trips of random values. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gen_value.h"
#include "spectap/arena.h"
#include "spectap/buf.h"
#include "spectap/json.h"
#include "spectap/value.h"

static struct spt_arena A;

static spt_val *parse(const char *text, unsigned flags)
{
	spt_val *v = NULL;
	struct spt_json_error err = { 0 };
	int rc = spt_json_parse(&A, text, strlen(text), flags, &v, &err);
	CHECKF(rc == 0, "parse %s: %s at %zu", text, err.msg, err.offset);
	return rc == 0 ? v : NULL;
}

/* Writes v into a malloc'ed string. */
static char *write_str(spt_val *v, unsigned flags, struct spt_json_loss *loss)
{
	struct spt_buf b = { 0 };
	spt_json_write(&b, v, flags, loss);
	CHECK(!b.oom);
	char *s = strndup(b.p ? b.p : "", b.len);
	CHECK(b.p && b.p[b.len] == '\0' && strlen(b.p) == b.len);
	spt_buf_free(&b);
	return s;
}

/* Parses text and checks that writing it back gives want (text itself when want is NULL). */
static void check_echo(const char *text, unsigned flags, const char *want)
{
	spt_val *v = parse(text, flags);
	if (!v)
		return;
	char *got = write_str(v, flags, NULL);
	if (!want)
		want = text;
	CHECKF(!strcmp(got, want), "%s wrote back as %s, want %s", text, got, want);
	free(got);
}

static void test_constructs(void)
{
	spt_val *v = parse(" \t\r\n true \n", 0);
	CHECK(v && v->kind == SPT_BOOL && v->u.b);
	v = parse("false", 0);
	CHECK(v && v->kind == SPT_BOOL && !v->u.b);
	v = parse("0", 0);
	CHECK(v && v->kind == SPT_INT && v->u.i == 0);
	v = parse("-0", 0);
	CHECK(v && v->kind == SPT_INT && v->u.i == 0);
	v = parse("-17", 0);
	CHECK(v && v->kind == SPT_INT && v->u.i == -17);
	v = parse("\"hi\"", 0);
	CHECK(v && v->kind == SPT_STR && v->n == 2 && !strcmp(v->u.s, "hi") && !v->hint);
	v = parse("\"\"", 0);
	CHECK(v && v->kind == SPT_STR && v->n == 0 && v->u.s[0] == '\0');
	v = parse("[]", 0);
	CHECK(v && v->kind == SPT_SEQ && v->n == 0);
	v = parse("[ ]", 0);
	CHECK(v && v->kind == SPT_SEQ && v->n == 0);
	v = parse("{}", 0);
	CHECK(v && v->kind == SPT_REC && v->n == 0);
	v = parse("{ \n }", 0);
	CHECK(v && v->kind == SPT_REC && v->n == 0);
	v = parse("[1, [2, []], \"x\", true]", 0);
	CHECK(v && v->kind == SPT_SEQ && v->n == 4);
	if (v && v->n == 4) {
		CHECK(v->u.elems[0]->kind == SPT_INT && v->u.elems[0]->u.i == 1);
		CHECK(v->u.elems[1]->kind == SPT_SEQ && v->u.elems[1]->n == 2);
		CHECK(v->u.elems[2]->kind == SPT_STR && v->u.elems[3]->kind == SPT_BOOL);
	}
	v = parse("{\"b\": {\"c\": [true, null]}, \"a\": 1}", 0);
	CHECK(v && v->kind == SPT_REC && v->n == 2);
	if (v && v->kind == SPT_REC) {
		spt_val *b = spt_rec_get(v, "b");
		CHECK(spt_rec_get(v, "a") && spt_rec_get(v, "a")->u.i == 1);
		CHECK(b && b->kind == SPT_REC && spt_rec_get(b, "c") && spt_rec_get(b, "c")->n == 2);
	}
	/* Equal to the value built by hand. */
	spt_val *one = spt_int(&A, 1), *two = spt_int(&A, 2);
	spt_val *e[2] = { one, two };
	const char *names[2] = { "y", "x" };
	spt_val *rec = spt_rec(&A, names, e, 2);
	v = parse("{\"x\":2,\"y\":1}", 0);
	CHECK(v && spt_value_eq(v, rec));
	v = parse("[1,2]", 0);
	CHECK(v && spt_value_eq(v, spt_seq(&A, e, 2)));
	/* In plain JSON, $-keys are just keys. */
	v = parse("{\"$set\":[1]}", 0);
	CHECK(v && v->kind == SPT_REC && spt_rec_get(v, "$set"));

	/* Writing back: compact, the same text for canonical input. */
	check_echo("[1,[2,[]],\"x\",true,false,null,{}]", 0, NULL);
	check_echo("{\"a\":{\"b\":[]},\"c\":-5}", 0, NULL);
	check_echo(" [ 1 , 2 ] ", 0, "[1,2]");
	check_echo("{\"a\":[{\"b\":null}]}", SPT_JSON_TAGGED, NULL);
	/* Sequences produced by functions print as arrays. */
	spt_val *k12[2] = { two, one };
	char *s = write_str(spt_fun(&A, k12, e, 2, NULL), 0, NULL);
	CHECK(!strcmp(s, "[2,1]"));
	free(s);
	/* Empty functions keep the way they were written. */
	s = write_str(spt_empty_fun(&A, SPT_REC), 0, NULL);
	CHECK(!strcmp(s, "{}"));
	free(s);
	s = write_str(spt_empty_fun(&A, SPT_SEQ), 0, NULL);
	CHECK(!strcmp(s, "[]"));
	free(s);
}

static void test_int64(void)
{
	spt_val *v = parse("9223372036854775807", 0);
	CHECK(v && v->kind == SPT_INT && v->u.i == INT64_MAX);
	v = parse("-9223372036854775808", 0);
	CHECK(v && v->kind == SPT_INT && v->u.i == INT64_MIN);
	v = parse("-9223372036854775807", 0);
	CHECK(v && v->kind == SPT_INT && v->u.i == INT64_MIN + 1);
	v = parse("[922337203685477580, -922337203685477580]", 0);
	CHECK(v && v->u.elems[0]->u.i == 922337203685477580LL &&
	      v->u.elems[1]->u.i == -922337203685477580LL);
	check_echo("[9223372036854775807,-9223372036854775808,0,-1]", 0, NULL);

	const char *bad[] = { "9223372036854775808", "-9223372036854775809",
			      "18446744073709551616", "99999999999999999999999",
			      "-10000000000000000000", "[1, 9223372036854775810]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct spt_json_error err = { 0 };
		spt_val *out = NULL;
		int rc = spt_json_parse(&A, bad[i], strlen(bad[i]), 0, &out, &err);
		CHECKF(rc == -EINVAL && strstr(err.msg, "64 bits"), "%s: rc %d msg %s", bad[i], rc,
		       err.msg);
		size_t at = bad[i][0] == '[' ? 4 : 0;
		CHECKF(err.offset == at && err.line == 1 && err.col == at + 1, "%s: offset %zu",
		       bad[i], err.offset);
	}
	/* Written exactly. */
	char *s = write_str(spt_int(&A, INT64_MIN), 0, NULL);
	CHECK(!strcmp(s, "-9223372036854775808"));
	free(s);
}

static void test_number_text(void)
{
	const char *nums[] = { "1.5",  "1e10", "-0.25E-3", "1712329729.6024537", "0.0", "-0.0",
			       "1E+2", "0e0",  "-1.0e-0", "123456789012345678901234567890.5",
			       "1e999999" };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		for (unsigned flags = 0; flags <= SPT_JSON_TAGGED; flags += SPT_JSON_TAGGED) {
			spt_val *v = parse(nums[i], flags);
			CHECKF(v && v->kind == SPT_STR && v->hint == SPT_HINT_NUMBER &&
				       !strcmp(v->u.s, nums[i]) && v->n == strlen(nums[i]),
			       "%s", nums[i]);
			check_echo(nums[i], flags, NULL);
			/* Equal to the string of its text. */
			CHECK(v && spt_value_eq(v, spt_cstr(&A, nums[i])));
		}
	}
	check_echo("[1.5,{\"t\":1712329729.6024537},-0.25E-3]", 0, NULL);
	/* The string "1.5" stays a string. */
	check_echo("\"1.5\"", 0, NULL);
}

static void test_strings(void)
{
	spt_val *v = parse("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", 0);
	CHECK(v && v->n == 8 && !memcmp(v->u.s, "\"\\/\b\f\n\r\t", 8));
	v = parse("\"a\\u0041\\u00e9\\u20AC\\ud83d\\ude00z\"", 0);
	CHECK(v && v->n == 1 + 1 + 2 + 3 + 4 + 1 &&
	      !strcmp(v->u.s, "aA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z"));
	v = parse("\"\\uDBFF\\uDFFF\"", 0); /* U+10FFFF */
	CHECK(v && v->n == 4 && !strcmp(v->u.s, "\xf4\x8f\xbf\xbf"));
	v = parse("\"\\u007f\\u0080\\u07ff\\u0800\\uffff\"", 0);
	CHECK(v && v->n == 1 + 2 + 2 + 3 + 3 &&
	      !memcmp(v->u.s, "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf", 11));
	v = parse("\"x\\u0000y\"", 0);
	CHECK(v && v->n == 3 && !memcmp(v->u.s, "x\0y", 3));
	/* Raw UTF-8 and DEL pass through: every length, the edges of the ranges. */
	v = parse("\"\xc3\xa9\x7f\"", 0);
	CHECK(v && v->n == 3 && !strcmp(v->u.s, "\xc3\xa9\x7f"));
	v = parse("\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\\n\"", 0);
	CHECK(v && v->n == 22 && v->u.s[21] == '\n');
	v = parse("{\"\xe6\x97\xa5\":\"\xf0\x9f\x8e\x89\"}", 0);
	CHECK(v && v->kind == SPT_REC && v->n == 1);
	/* Long strings on both paths (escape-free and escaped). */
	char big[3000];
	big[0] = '"';
	memset(big + 1, 'q', 2000);
	strcpy(big + 2001, "\\n\"");
	v = parse(big, 0);
	CHECK(v && v->n == 2001 && v->u.s[2000] == '\n');

	/* Writing: quotes, backslash, short escapes, other controls as \u00XX, rest raw. */
	struct {
		const char *s;
		size_t n;
		const char *want;
	} w[] = {
		{ "a\"b\\c", 5, "\"a\\\"b\\\\c\"" },
		{ "\n\t\r", 3, "\"\\n\\t\\r\"" },
		{ "\x01\b\f\x1f", 4, "\"\\u0001\\u0008\\u000c\\u001f\"" },
		{ "x\0y", 3, "\"x\\u0000y\"" },
		{ "/\x7f\xc3\xa9", 4, "\"/\x7f\xc3\xa9\"" },
		{ "", 0, "\"\"" },
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		spt_val *s = spt_str(&A, w[i].s, w[i].n);
		char *got = write_str(s, 0, NULL);
		CHECKF(!strcmp(got, w[i].want), "wrote %s, want %s", got, w[i].want);
		spt_val *back = parse(got, 0);
		CHECK(back && spt_value_eq(back, s));
		free(got);
	}
	/* Every byte 1..127 survives the round trip. */
	char all[255];
	for (int i = 0; i < 255; i++)
		all[i] = (char)(i + 1);
	spt_val *s = spt_str(&A, all, 127);
	char *t = write_str(s, 0, NULL);
	v = parse(t, 0);
	CHECK(v && spt_value_eq(v, s));
	free(t);
	/* A string that is not UTF-8: the tagged dialect keeps its bytes ({"$bytes":hex}), the
	 * others write the stray bytes as \u00XX (valid JSON) and count it. */
	s = spt_str(&A, all, 255);
	t = write_str(s, SPT_JSON_TAGGED, NULL);
	CHECK(!strncmp(t, "{\"$bytes\":\"0102", 15));
	v = parse(t, SPT_JSON_TAGGED);
	CHECK(v && spt_value_eq(v, s));
	free(t);
	struct spt_json_loss loss = { 0 };
	s = spt_str(&A, "a\xff" "b\xc3\xa9", 5);
	t = write_str(s, 0, &loss);
	CHECKF(!strcmp(t, "\"a\\u00ffb\xc3\xa9\""), "wrote %s", t);
	CHECK(loss.bytes == 1 && parse(t, 0) != NULL);
	free(t);
	static const char *const bad_bytes[] = { "{\"$bytes\":\"abc\"}", "{\"$bytes\":\"zz\"}", "{\"$bytes\":1}" };
	for (size_t i = 0; i < 3; i++) {
		struct spt_json_error err = { 0 };
		CHECK(spt_json_parse(&A, bad_bytes[i], strlen(bad_bytes[i]), SPT_JSON_TAGGED, &v, &err) == -EINVAL &&
		      strstr(err.msg, "hex digit pairs"));
	}
}

struct bad_case {
	const char *text;
	size_t offset;
	unsigned line, col;
	const char *msg; /* a substring of the message */
	unsigned flags;
};

static struct spt_json_reader *R; /* one reader for the whole run: its tables see every test */

static void check_bad_with(const struct bad_case *c, size_t len, bool reader)
{
	spt_val *v = NULL;
	struct spt_json_error err;
	memset(&err, 0x5a, sizeof(err));
	int rc = reader ? spt_json_read(R, &A, c->text, len, c->flags, &v, &err)
			: spt_json_parse(&A, c->text, len, c->flags, &v, &err);
	CHECKF(rc == -EINVAL, "%s: rc %d", c->text, rc);
	if (rc != -EINVAL)
		return;
	CHECKF(memchr(err.msg, 0, sizeof(err.msg)) != NULL, "%s: message not terminated", c->text);
	CHECKF(err.offset == c->offset && err.line == c->line && err.col == c->col,
	       "%s: at %zu (%u:%u), want %zu (%u:%u): %s", c->text, err.offset, err.line, err.col,
	       c->offset, c->line, c->col, err.msg);
	CHECKF(strstr(err.msg, c->msg) != NULL, "%s: message \"%s\" lacks \"%s\"", c->text,
	       err.msg, c->msg);
}

/* Both ways: alone, and by the reader (the same error where it stands). */
static void check_bad(const struct bad_case *c, size_t len)
{
	check_bad_with(c, len, false);
	check_bad_with(c, len, true);
}

static void test_errors(void)
{
	static const struct bad_case cases[] = {
		{ "[1,2,]", 5, 1, 6, "unexpected character ']'", 0 },
		{ "{\"a\":1,}", 7, 1, 8, "object key", 0 },
		{ "{\"a\" 1}", 5, 1, 6, "':'", 0 },
		{ "{\"a\"}", 4, 1, 5, "':'", 0 },
		{ "\"abc", 0, 1, 1, "unterminated string", 0 },
		{ "[\"abc\\", 1, 1, 2, "unterminated string", 0 },
		{ "[1, \"a\\qb\"]", 6, 1, 7, "bad escape", 0 },
		{ "01", 0, 1, 1, "leading zero", 0 },
		{ "[-012]", 1, 1, 2, "leading zero", 0 },
		{ "{\"a\":1,\"a\":2}", 7, 1, 8, "duplicate key", 0 },
		{ "{\"a\":1,\"b\":2,\"a\":{}}", 13, 1, 14, "duplicate key \"a\"", SPT_JSON_TAGGED },
		{ "[1] x", 4, 1, 5, "trailing", 0 },
		{ "1 2", 2, 1, 3, "trailing", 0 },
		{ "", 0, 1, 1, "unexpected end", 0 },
		{ "  \n ", 4, 2, 2, "unexpected end", 0 },
		{ "[", 1, 1, 2, "unexpected end", 0 },
		{ "[1", 2, 1, 3, "unexpected end", 0 },
		{ "{", 1, 1, 2, "unexpected end", 0 },
		{ "{\"a\":", 5, 1, 6, "unexpected end", 0 },
		{ "[1 2]", 3, 1, 4, "',' or ']'", 0 },
		{ "{\"a\":1 \"b\":2}", 7, 1, 8, "',' or '}'", 0 },
		{ "{1:2}", 1, 1, 2, "object key", 0 },
		{ "tru", 0, 1, 1, "unexpected character 't'", 0 },
		{ "[nul]", 1, 1, 2, "unexpected character 'n'", 0 },
		{ "True", 0, 1, 1, "unexpected character 'T'", 0 },
		{ "\xff", 0, 1, 1, "0xff", 0 },
		{ "'a'", 0, 1, 1, "unexpected character", 0 },
		{ "\"a\x01\"", 2, 1, 3, "control character 0x01", 0 },
		/* JSON text is UTF-8: a stray byte, an overlong form, a surrogate, past U+10FFFF, a
		 * sequence cut short (in a value and in a key; with an escape after it too). */
		{ "\"ab\xff\"", 3, 1, 4, "invalid UTF-8 in a string (byte 0xff)", 0 },
		{ "\"\xc0\x80\"", 1, 1, 2, "invalid UTF-8", 0 },
		{ "\"\xe0\x80\xaf\"", 1, 1, 2, "invalid UTF-8", 0 },
		{ "\"\xed\xa0\x80\"", 1, 1, 2, "invalid UTF-8 in a string (byte 0xed)", 0 },
		{ "\"\xf4\x90\x80\x80\"", 1, 1, 2, "invalid UTF-8", 0 },
		{ "\"\xe6\x97\"", 1, 1, 2, "invalid UTF-8", 0 },
		{ "{\"k\xc3\":1}", 3, 1, 4, "invalid UTF-8", 0 },
		{ "\"\\n\x80\"", 3, 1, 4, "invalid UTF-8 in a string (byte 0x80)", 0 },
		{ "\"a\nb\"", 2, 1, 3, "control character", 0 },
		{ "\"\\ud800\"", 1, 1, 2, "unpaired surrogate", 0 },
		{ "\"\\ud800\\u0041\"", 7, 1, 8, "unpaired surrogate", 0 },
		{ "\"\\udc00\"", 1, 1, 2, "unpaired surrogate", 0 },
		{ "\"\\u12g4\"", 5, 1, 6, "bad hex digit", 0 },
		{ "\"\\u12", 3, 1, 4, "\\u escape", 0 },
		{ "-", 0, 1, 1, "bad number", 0 },
		{ "-a", 0, 1, 1, "bad number", 0 },
		{ "1.", 0, 1, 1, "after '.'", 0 },
		{ "1.e5", 0, 1, 1, "after '.'", 0 },
		{ "1e", 0, 1, 1, "exponent", 0 },
		{ "1e+", 0, 1, 1, "exponent", 0 },
		{ ".5", 0, 1, 1, "unexpected character '.'", 0 },
		{ "+1", 0, 1, 1, "unexpected character '+'", 0 },
		{ "{\n  \"a\": 1,\n  \"b\" 2\n}", 18, 3, 7, "':'", 0 },
		{ "[1,\n\t2,\n  ]", 10, 3, 3, "unexpected character ']'", 0 },
		{ "[1,\r\n2\r\n,,3]", 9, 3, 2, "unexpected character ','", 0 },
		/* Tagged dialect errors. */
		{ "{\"$set\":1}", 0, 1, 1, "\"$set\" needs an array", SPT_JSON_TAGGED },
		{ "[{\"$set\":{\"a\":1}}]", 1, 1, 2, "\"$set\" needs an array", SPT_JSON_TAGGED },
		{ "{\"$model\":1}", 0, 1, 1, "\"$model\" needs a string", SPT_JSON_TAGGED },
		{ "{\"$model\":1.5}", 0, 1, 1, "\"$model\" needs a string", SPT_JSON_TAGGED },
		{ "{\"$model\":\"a\\u0000b\"}", 0, 1, 1, "NUL", SPT_JSON_TAGGED },
		{ "{\"$rec\":[1]}", 0, 1, 1, "\"$rec\" needs an object", SPT_JSON_TAGGED },
		{ "{\"$fun\":{\"a\":1}}", 0, 1, 1, "\"$fun\" needs an array", SPT_JSON_TAGGED },
		{ "{\"$fun\":[[1,2],[3]]}", 0, 1, 1, "pair 2", SPT_JSON_TAGGED },
		{ "{\"$fun\":[1]}", 0, 1, 1, "pair 1", SPT_JSON_TAGGED },
		{ "{\"$fun\":[[1,2],[1,3]]}", 0, 1, 1, "duplicate key", SPT_JSON_TAGGED },
		{ "{\"$fun\":[[[],2],[{},3]]}", 0, 1, 1, "duplicate key", SPT_JSON_TAGGED },
		/* The value of "$rec" is a plain record only when "$rec" is the only key. */
		{ "{\"$rec\":{\"$set\":1},\"b\":2}", 8, 1, 9, "\"$set\" needs an array", SPT_JSON_TAGGED },
		{ "{\"$rec\":{\"$rec\":{\"$set\":1}}}", 16, 1, 17, "\"$set\" needs", SPT_JSON_TAGGED },
		{ "{\"$rec\":{\"$set\":{\"$model\":[]}},\"c\":1}", 16, 1, 17, "\"$model\" needs",
		  SPT_JSON_TAGGED },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_bad(&cases[i], strlen(cases[i].text));

	/* A NUL byte in the input is an error, not the end of it. */
	struct bad_case nul = { "[1]\0", 3, 1, 4, "trailing", 0 };
	check_bad(&nul, 4);
	struct bad_case nul2 = { "\"a\0\"", 2, 1, 3, "control character 0x00", 0 };
	check_bad(&nul2, 4);
	/* Only len bytes are read. */
	spt_val *v = NULL;
	CHECK(spt_json_parse(&A, "[1]garbage", 3, 0, &v, NULL) == 0 && v && v->n == 1);
	/* Errors without an error struct. */
	CHECK(spt_json_parse(&A, "[", 1, 0, &v, NULL) == -EINVAL);
	/* spt_json_locate on its own. */
	struct spt_json_error err = { .offset = 5 };
	spt_json_locate("a\nbc\nd", 6, &err);
	CHECK(err.line == 3 && err.col == 1);
	err.offset = 100; /* past the end: stops at the end */
	spt_json_locate("a\nb", 3, &err);
	CHECK(err.line == 2 && err.col == 2);
}

static void test_depth(void)
{
	char buf[2000];
	/* 200 levels are fine, 201 are not. */
	for (int levels = 199; levels <= 202; levels++) {
		memset(buf, '[', (size_t)levels);
		memset(buf + levels, ']', (size_t)levels);
		buf[2 * levels] = '\0';
		spt_val *v = NULL;
		struct spt_json_error err = { 0 };
		int rc = spt_json_parse(&A, buf, strlen(buf), 0, &v, &err);
		if (levels <= 200) {
			CHECKF(rc == 0, "%d levels: %s", levels, err.msg);
		} else {
			CHECKF(rc == -EINVAL && err.offset == 200 && err.col == 201 &&
				       strstr(err.msg, "nesting deeper than 200"),
			       "%d levels: rc %d at %zu: %s", levels, rc, err.offset, err.msg);
		}
	}
	/* Objects count too: {"a":{"a":...}} */
	size_t n = 0;
	for (int i = 0; i < 201; i++)
		n += (size_t)sprintf(buf + n, "{\"a\":");
	buf[n++] = '1';
	memset(buf + n, '}', 201);
	buf[n + 201] = '\0';
	struct bad_case c = { buf, 200 * 5, 1, 200 * 5 + 1, "nesting deeper", 0 };
	check_bad(&c, strlen(buf));
	/* A very deep input fails cleanly (no stack overflow). */
	static char deep[100001];
	memset(deep, '[', 100000);
	struct bad_case d = { deep, 200, 1, 201, "nesting deeper", 0 };
	check_bad(&d, 100000);
}

/* A long object or array whose text comes again is taken again, not parsed again: the same value
 * (the same pointer), where it stands, within the depth limit counted as if it were parsed. */
static void test_repeated_text(void)
{
	const char *x = "{\"log\":[{\"term\":1,\"value\":\"v1\"},{\"term\":2,\"value\":\"v2\"}],\"n\":3}";
	char doc[1024];
	snprintf(doc, sizeof(doc), "{\"pre\":%s,\"post\":%s,\"other\":[%s,{\"n\":4}]}", x, x, x);
	spt_val *v = parse(doc, 0), *alone = parse(x, 0);
	if (!v || !alone)
		return;
	spt_val *pre = spt_rec_get(v, "pre"), *post = spt_rec_get(v, "post"), *other = spt_rec_get(v, "other");
	CHECK(pre && post && other && other->kind == SPT_SEQ && other->n == 2);
	if (!pre || !post || !other)
		return;
	CHECK(pre == post && post == other->u.elems[0]);
	CHECK(spt_value_eq(pre, alone));
	check_echo(doc, 0, NULL);
	/* A near miss (one byte differs at the end) is parsed. */
	snprintf(doc, sizeof(doc), "[%s,%.*s4}]", x, (int)strlen(x) - 2, x);
	v = parse(doc, 0);
	CHECK(v && v->n == 2 && !spt_value_eq(v->u.elems[0], v->u.elems[1]));
	check_echo(doc, 0, NULL);
	/* x taken again deep down: the depth limit holds as when it is parsed there (the same
	 * document with a 0 first, so that nothing repeats); one depth fits, the next does not. */
	int ok = 0, refused = 0;
	for (size_t outer = 194; outer <= 198; outer++) {
		static char deep[2][4096];
		int rc[2];
		for (int k = 0; k < 2; k++) {
			char *q = deep[k];
			const char *first = k ? "0" : x;
			*q++ = '[';
			memcpy(q, first, strlen(first));
			q += strlen(first);
			*q++ = ',';
			memset(q, '[', outer);
			q += outer;
			memcpy(q, x, strlen(x));
			q += strlen(x);
			memset(q, ']', outer + 1);
			q[outer + 1] = '\0';
			spt_val *d = NULL;
			struct spt_json_error err = { 0 };
			rc[k] = spt_json_parse(&A, deep[k], strlen(deep[k]), 0, &d, &err);
			CHECKF(rc[k] == 0 || strstr(err.msg, "nesting deeper than 200"), "depth %zu: %s", outer, err.msg);
		}
		CHECKF(rc[0] == rc[1], "x at %zu levels: %d taken again, %d parsed", outer, rc[0], rc[1]);
		ok += rc[0] == 0;
		refused += rc[0] != 0;
	}
	CHECK(ok && refused);
}

static void test_null(void)
{
	for (unsigned flags = 0; flags <= SPT_JSON_TAGGED; flags += SPT_JSON_TAGGED) {
		spt_val *v = parse("null", flags);
		CHECK(v && v->kind == SPT_MODEL && !strcmp(v->u.s, "null") && v->n == 4);
		CHECK(v && spt_value_eq(v, spt_model(&A, "null")));
		CHECK(v && !spt_value_eq(v, spt_cstr(&A, "null")));
		struct spt_json_loss loss = { 0 };
		char *s = write_str(spt_model(&A, "null"), flags, &loss);
		CHECK(!strcmp(s, "null"));
		CHECK(loss.models == 0 && loss.sets == 0 && loss.funs == 0);
		free(s);
		/* The string "null" stays a string. */
		s = write_str(spt_cstr(&A, "null"), flags, NULL);
		CHECK(!strcmp(s, "\"null\""));
		free(s);
	}
}

static void test_tagged_decode(void)
{
	const unsigned T = SPT_JSON_TAGGED;
	spt_val *v = parse("{\"$set\":[3,1,2,1]}", T);
	CHECK(v && v->kind == SPT_SET && v->n == 3 && v->u.elems[0]->u.i == 1);
	v = parse("{\"$set\":[]}", T);
	CHECK(v && v->kind == SPT_SET && v->n == 0);
	v = parse("{\"$fun\":[[3,\"b\"],[1,\"a\"]]}", T);
	CHECK(v && v->kind == SPT_FUN && v->n == 2);
	if (v && v->kind == SPT_FUN) {
		spt_val *got = spt_fun_apply(v, spt_int(&A, 3));
		CHECK(got && got->kind == SPT_STR && !strcmp(got->u.s, "b"));
	}
	v = parse("{\"$fun\":[[2,\"b\"],[1,\"a\"]]}", T);
	CHECK(v && v->kind == SPT_SEQ && v->n == 2 && !strcmp(v->u.elems[0]->u.s, "a"));
	v = parse("{\"$fun\":[[\"x\",1]]}", T);
	CHECK(v && v->kind == SPT_REC && spt_rec_get(v, "x"));
	v = parse("{\"$fun\":[]}", T);
	CHECK(v && v->kind == SPT_FUN && v->n == 0);
	v = parse("{\"$fun\":[[{\"$set\":[1]},{\"$model\":\"m\"}]]}", T);
	CHECK(v && v->kind == SPT_FUN && v->u.fn.keys[0]->kind == SPT_SET &&
	      v->u.fn.vals[0]->kind == SPT_MODEL);
	v = parse("{\"$model\":\"m\"}", T);
	CHECK(v && v->kind == SPT_MODEL && v->n == 1 && !strcmp(v->u.s, "m"));
	CHECK(v && spt_value_eq(v, spt_model(&A, "m")));
	v = parse("{\"$model\":\"null\"}", T);
	CHECK(v && spt_value_eq(v, spt_model(&A, "null")));
	v = parse("{\"$rec\":{}}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 0);
	v = parse("{\"$rec\":{\"a\":1,\"$set\":{\"$set\":[2]}}}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 2);
	if (v && v->kind == SPT_REC) {
		spt_val *s = spt_rec_get(v, "$set");
		CHECK(s && s->kind == SPT_SET && s->n == 1);
	}
	/* The object inside "$rec" is a record even when it looks like a tag. */
	v = parse("{\"$rec\":{\"$set\":[1]}}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 1 && spt_rec_get(v, "$set") &&
	      spt_rec_get(v, "$set")->kind == SPT_SEQ);
	v = parse("{\"$rec\":{\"$rec\":{\"$model\":\"m\"}}}", T);
	CHECK(v && v->kind == SPT_REC && spt_rec_get(v, "$rec") &&
	      spt_rec_get(v, "$rec")->kind == SPT_MODEL);
	v = parse("{\"$rec\":{\"$model\":{\"$rec\":{\"$model\":\"m\"}}}}", T);
	CHECK(v && v->kind == SPT_REC);
	if (v && v->kind == SPT_REC) {
		spt_val *in = spt_rec_get(v, "$model");
		CHECK(in && in->kind == SPT_REC && spt_rec_get(in, "$model") &&
		      spt_rec_get(in, "$model")->kind == SPT_STR);
	}
	v = parse("{\"$rec\":{\"$rec\":{\"$rec\":{\"$set\":1}}}}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 1);
	if (v && v->kind == SPT_REC) {
		/* [$rec |-> [$set |-> 1]]: each "$rec" wraps the plain record inside it. */
		spt_val *l2 = spt_rec_get(v, "$rec");
		spt_val *l3 = l2 && l2->kind == SPT_REC && l2->n == 1 ? spt_rec_get(l2, "$set") : NULL;
		CHECK(l3 && l3->kind == SPT_INT && l3->u.i == 1);
	}
	/* Here the inner "$rec" is a tag again, since the outer object has two keys. */
	v = parse("{\"$rec\":{\"$rec\":{\"$model\":[]}},\"c\":1}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 2);
	if (v && v->kind == SPT_REC) {
		spt_val *l2 = spt_rec_get(v, "$rec");
		spt_val *l3 = l2 && l2->kind == SPT_REC && l2->n == 1 ? spt_rec_get(l2, "$model") : NULL;
		CHECK(l3 && l3->kind == SPT_SEQ && l3->n == 0);
	}
	v = parse("{\"$rec\":{\"$rec\":{\"$set\":[1]}}}", T);
	CHECK(v && v->kind == SPT_REC && spt_rec_get(v, "$rec") &&
	      spt_rec_get(v, "$rec")->kind == SPT_SET);
	/* Not a tag: other $-keys, or more than one key. */
	v = parse("{\"$x\":1}", T);
	CHECK(v && v->kind == SPT_REC && spt_rec_get(v, "$x"));
	v = parse("{\"$set\":[1],\"b\":2}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 2 && spt_rec_get(v, "$set")->kind == SPT_SEQ);
	v = parse("{\"$rec\":{\"$set\":[1]},\"b\":2}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 2 && spt_rec_get(v, "$rec") &&
	      spt_rec_get(v, "$rec")->kind == SPT_SET);
	v = parse("{\"b\":2,\"$rec\":{\"$set\":[1]}}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 2 && spt_rec_get(v, "$rec") &&
	      spt_rec_get(v, "$rec")->kind == SPT_SET);
	/* A key with an embedded NUL is not a tag. */
	v = parse("{\"$set\\u0000\":[1]}", T);
	CHECK(v && v->kind == SPT_REC && v->n == 1);
	v = parse("{\"$set\":[{\"$set\":[]},{\"$set\":[]}]}", T);
	CHECK(v && v->kind == SPT_SET && v->n == 1 && v->u.elems[0]->kind == SPT_SET);
}

static void check_write(spt_val *v, unsigned flags, const char *want)
{
	struct spt_json_loss loss = { 0 };
	char *got = write_str(v, flags, &loss);
	CHECKF(!strcmp(got, want), "wrote %s, want %s", got, want);
	free(got);
}

static void test_tagged_write(void)
{
	const unsigned T = SPT_JSON_TAGGED;
	spt_val *one = spt_int(&A, 1), *two = spt_int(&A, 3);
	spt_val *e[2] = { two, one }, *sv[2] = { spt_cstr(&A, "a"), spt_cstr(&A, "b") };
	check_write(spt_set(&A, e, 2), T, "{\"$set\":[1,3]}");
	check_write(spt_set(&A, e, 2), 0, "[1,3]");
	check_write(spt_set(&A, NULL, 0), T, "{\"$set\":[]}");
	check_write(spt_model(&A, "m"), T, "{\"$model\":\"m\"}");
	check_write(spt_model(&A, "m"), 0, "\"m\"");
	check_write(spt_fun(&A, e, sv, 2, NULL), T, "{\"$fun\":[[1,\"b\"],[3,\"a\"]]}");
	check_write(spt_fun(&A, e, sv, 2, NULL), 0, "[[1,\"b\"],[3,\"a\"]]");
	check_write(spt_empty_fun(&A, SPT_FUN), T, "{\"$fun\":[]}");
	const char *names[2] = { "$set", "a" };
	check_write(spt_rec(&A, names, e, 2), T, "{\"$rec\":{\"$set\":3,\"a\":1}}");
	check_write(spt_rec(&A, names, e, 2), 0, "{\"$set\":3,\"a\":1}");
	check_write(spt_rec(&A, names + 1, e, 1), T, "{\"a\":3}");
}

/* Counts what a plain write loses, the slow way. */
static void expect_loss(spt_val *v, struct spt_json_loss *l)
{
	switch (v->kind) {
	case SPT_STR:
		if (v->hint != SPT_HINT_NUMBER && !spt_utf8_valid(v->u.s, v->n))
			l->bytes++;
		break;
	case SPT_MODEL:
		if (strcmp(v->u.s, "null"))
			l->models++;
		break;
	case SPT_SET:
		l->sets++;
		/* fall through */
	case SPT_SEQ:
		for (uint32_t i = 0; i < v->n; i++)
			expect_loss(v->u.elems[i], l);
		break;
	case SPT_FUN:
		if (v->n)
			l->funs++;
		/* fall through */
	case SPT_REC:
		for (uint32_t i = 0; i < v->n; i++) {
			expect_loss(v->u.fn.keys[i], l); /* a record's keys: strings that may not be UTF-8 */
			expect_loss(v->u.fn.vals[i], l);
		}
		break;
	default:
		break;
	}
}

static void test_loss(void)
{
	spt_val *v = parse("{\"$fun\":[[{\"$model\":\"k\"},{\"$set\":[{\"$model\":\"m\"},null]}],"
			   "[2,{\"$fun\":[[0,1]]}]]}",
			   SPT_JSON_TAGGED);
	struct spt_json_loss loss = { 0 };
	char *s = write_str(v, 0, &loss);
	CHECKF(!strcmp(s, "[[2,[[0,1]]],[\"k\",[\"m\",null]]]"), "%s", s);
	CHECK(loss.sets == 1 && loss.funs == 2 && loss.models == 2);
	free(s);
	/* Tagged writes lose nothing; a NULL loss pointer is fine. */
	memset(&loss, 0, sizeof(loss));
	s = write_str(v, SPT_JSON_TAGGED, &loss);
	CHECK(loss.sets == 0 && loss.funs == 0 && loss.models == 0);
	free(s);
	s = write_str(v, 0, NULL);
	free(s);
	/* Losses accumulate over writes. */
	memset(&loss, 0, sizeof(loss));
	free(write_str(spt_set(&A, NULL, 0), 0, &loss));
	free(write_str(spt_set(&A, NULL, 0), 0, &loss));
	CHECK(loss.sets == 2);
}

/* write(TAGGED) then parse(TAGGED) is the identity; plain writes count their losses. */
static void test_roundtrip_random(void)
{
	struct rng r = { 12345 };
	struct spt_buf b = { 0 }, b2 = { 0 };
	unsigned bad = 0, bad_text = 0, bad_loss = 0, bad_plain = 0, lossless = 0;
	for (int t = 0; t < 4000; t++) {
		struct spt_arena a;
		spt_arena_init(&a);
		spt_val *v = gen_value(&a, &r, 4);
		spt_buf_clear(&b);
		spt_json_write(&b, v, SPT_JSON_TAGGED, NULL);
		spt_val *back = NULL;
		struct spt_json_error err = { 0 };
		int rc = spt_json_parse(&a, b.p, b.len, SPT_JSON_TAGGED, &back, &err);
		if (rc || !spt_value_eq(v, back) || spt_value_hash(v) != spt_value_hash(back)) {
			if (bad++ < 5)
				fprintf(stderr, "round trip failed (%s at %zu): %.*s\n", rc ? err.msg : "",
					err.offset, (int)b.len, b.p);
			spt_arena_fini(&a);
			continue;
		}
		/* Writing the result again gives the same text. */
		spt_buf_clear(&b2);
		spt_json_write(&b2, back, SPT_JSON_TAGGED, NULL);
		if (b.len != b2.len || memcmp(b.p, b2.p, b.len))
			bad_text++;

		/* Plain: the losses counted are the ones there are; no loss means exact. */
		struct spt_json_loss loss = { 0 }, want = { 0 };
		spt_buf_clear(&b);
		spt_json_write(&b, v, 0, &loss);
		expect_loss(v, &want);
		if (memcmp(&loss, &want, sizeof(loss)))
			bad_loss++;
		rc = spt_json_parse(&a, b.p, b.len, 0, &back, &err);
		if (rc)
			bad_plain++;
		else if (!want.sets && !want.funs && !want.models && !want.bytes) {
			lossless++;
			if (!spt_value_eq(v, back))
				bad_plain++;
		}
		spt_arena_fini(&a);
	}
	CHECKF(bad == 0, "%u tagged round trips failed", bad);
	CHECKF(bad_text == 0, "%u tagged writes not stable", bad_text);
	CHECKF(bad_loss == 0, "%u plain writes miscounted their losses", bad_loss);
	CHECKF(bad_plain == 0, "%u plain writes unreadable or inexact without loss", bad_plain);
	CHECKF(lossless > 500, "only %u lossless values", lossless);
	spt_buf_free(&b);
	spt_buf_free(&b2);
}

/* Reads text by the reader and alone: the same outcome, the same value, written back alike. */
static bool same_read(struct spt_arena *a, const char *text, size_t len, unsigned flags)
{
	spt_val *v1 = NULL, *v2 = NULL;
	struct spt_json_error e1 = { 0 }, e2 = { 0 };
	int rc1 = spt_json_parse(a, text, len, flags, &v1, &e1);
	int rc2 = spt_json_read(R, a, text, len, flags, &v2, &e2);
	if (rc1 != rc2)
		return false;
	if (rc1)
		return e1.offset == e2.offset && e1.line == e2.line && e1.col == e2.col && !strcmp(e1.msg, e2.msg);
	if (!spt_value_eq(v1, v2) || spt_value_hash(v1) != spt_value_hash(v2) || v1->kind != v2->kind)
		return false;
	char *w1 = write_str(v1, flags, NULL), *w2 = write_str(v2, flags, NULL);
	bool same = !strcmp(w1, w2);
	free(w1);
	free(w2);
	return same;
}

/* A reader (spt_json_read) gives what spt_json_parse gives, over many texts in a row: random
 * values, the same with bytes changed (errors), records whose keys come in other orders than
 * the last time (its guesses of the next key wrong), and its values outlive their text. */
static void test_reader(void)
{
	struct rng r = { 777 };
	struct spt_buf b = { 0 };
	unsigned differ = 0, errors = 0;
	for (int t = 0; t < 6000; t++) {
		struct spt_arena a;
		spt_arena_init(&a);
		spt_val *v = gen_value(&a, &r, 4);
		unsigned flags = t % 3 == 0 ? SPT_JSON_TAGGED : 0;
		spt_buf_clear(&b);
		if (t % 5 == 0) /* a record around it, as a window file's lines */
			spt_buf_puts(&b, "{\"pre_state\":");
		spt_json_write(&b, v, flags, NULL);
		if (t % 5 == 0)
			spt_buf_puts(&b, ",\"a\":1}");
		if (!same_read(&a, b.p, b.len, flags) && differ++ < 5)
			fprintf(stderr, "reader differs on %.*s\n", (int)b.len, b.p);
		/* A byte changed: an error (or another value), the same both ways. */
		if (b.len) {
			size_t at = rng_below(&r, (uint32_t)b.len);
			static const char bytes[] = "\"\\{}[],: x0\x01\xc3";
			b.p[at] = bytes[rng_below(&r, sizeof(bytes) - 1)];
			struct spt_json_error e = { 0 };
			spt_val *x;
			errors += spt_json_parse(&a, b.p, b.len, flags, &x, &e) != 0;
			if (!same_read(&a, b.p, b.len, flags) && differ++ < 5)
				fprintf(stderr, "reader differs on %.*s\n", (int)b.len, b.p);
		}
		spt_arena_fini(&a);
	}
	CHECKF(differ == 0, "%u texts read otherwise by the reader", differ);
	CHECKF(errors > 1000, "only %u changed texts were errors", errors);
	/* Keys in another order, longer or shorter than the ones guessed, a key cut by the end. */
	static const char *const texts[] = {
		"{\"ab\":1,\"abc\":2,\"b\":{\"x\":1}}", "{\"ab\":1,\"abd\":2,\"b\":{\"x\":1,\"y\":2}}",
		"{\"ab\":1,\"a\":2}", "{\"ab\":1,\"ab\":2}", "{\"ab\":1,\"abc\":2,\"b\":{\"y\":1}}",
		"{\"ab\":1,\"abc\":2,\"b\":{\"x\":1}}", "{\"ab\":1,\"ab\\u0063\":2}", "{\"ab\":1,\"abc",
		"{\"ab\":1,\"abc\"", "{\"ab\":1,\"abc\":", "{\"abcdefghijklmn\":1,\"abcdefghijklmnop\":2}",
		"{\"abcdefghijklmn\":1,\"abcdefghijklmno\":2}", "[{\"k\":1,\"l\":2},{\"k\":1,\"m\":2},{\"k\":1,\"l\":2}]",
	};
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
			CHECKF(same_read(&A, texts[i], strlen(texts[i]), 0), "%s", texts[i]);
	/* A value read outlives its text and the arena of the texts after it. */
	char *text = strdup("{\"state\":{\"s1\":\"Leader\",\"s2\":\"Follower\"},\"log\":[1,2,3]}");
	struct spt_arena keep, later;
	spt_arena_init(&keep);
	spt_arena_init(&later);
	spt_val *v = NULL, *w = NULL;
	CHECK(spt_json_read(R, &keep, text, strlen(text), 0, &v, NULL) == 0);
	char *before = write_str(v, 0, NULL);
	memset(text, ' ', strlen(text));
	for (int i = 0; i < 100; i++) {
		spt_arena_reset(&later);
		char more[64];
		snprintf(more, sizeof(more), "{\"state\":{\"s%d\":\"Leader\"},\"log\":[%d]}", i, i);
		CHECK(spt_json_read(R, &later, more, strlen(more), 0, &w, NULL) == 0);
	}
	char *after = write_str(v, 0, NULL);
	CHECKF(!strcmp(before, after), "%s became %s", before, after);
	/* Its strings are the reader's: moved elsewhere they are copied. */
	spt_val *s1 = spt_rec_get(spt_rec_get(v, "state"), "s1");
	CHECK(s1 && s1->gen == SPT_GEN_JSON_READER);
	spt_val *moved = spt_value_move(&later, v);
	CHECK(moved && spt_value_eq(moved, v) && spt_rec_get(spt_rec_get(moved, "state"), "s1") != s1);
	free(before);
	free(after);
	free(text);
	spt_arena_fini(&keep);
	spt_arena_fini(&later);
	/* Past the table's room (new strings in the caller's arena) and a stack past its first size. */
	struct spt_arena a;
	spt_arena_init(&a);
	unsigned bad = 0;
	for (int i = 0; i < 10000; i++) {
		spt_buf_clear(&b);
		spt_buf_printf(&b, "{\"k%d\":\"v%d\",\"list\":[", i, i);
		for (int j = 0; j < (i % 100 == 0 ? 600 : 3); j++)
			spt_buf_printf(&b, "%s\"e%d\"", j ? "," : "", j);
		spt_buf_puts(&b, "]}");
		bad += !same_read(&a, b.p, b.len, 0);
		spt_arena_reset(&a);
	}
	CHECKF(bad == 0, "%u texts read otherwise past the table's room", bad);
	spt_arena_fini(&a);
	spt_buf_free(&b);
}

/* Parsed values do not point into the text or into a freed arena once cloned. */
static void test_clone_parsed(void)
{
	const char *text = "{\"z\":[1,{\"$set\":[\"a\",\"b\"]}],\"a\":{\"$model\":\"m\"},"
			   "\"m\":{\"$fun\":[[[1,2],\"x\\n\"]]},\"b\":1.25}";
	char *copy = strdup(text);
	struct spt_arena a, b;
	spt_arena_init(&a);
	spt_arena_init(&b);
	spt_val *v = NULL;
	CHECK(spt_json_parse(&a, copy, strlen(copy), SPT_JSON_TAGGED, &v, NULL) == 0);
	memset(copy, ' ', strlen(copy));
	free(copy);
	char *s1 = write_str(v, SPT_JSON_TAGGED, NULL);
	spt_val *c = spt_value_clone(&b, v);
	spt_arena_fini(&a);
	char *s2 = write_str(c, SPT_JSON_TAGGED, NULL);
	CHECKF(!strcmp(s1, s2), "%s vs %s", s1, s2);
	free(s1);
	free(s2);
	spt_arena_fini(&b);
}

static void test_buf(void)
{
	struct spt_buf b = { 0 };
	spt_buf_put(&b, "", 0);
	CHECK(b.len == 0 && b.p && b.p[0] == '\0');
	spt_buf_puts(&b, "ab");
	spt_buf_putc(&b, 'c');
	spt_buf_printf(&b, "%d-%s", 42, "x");
	CHECK(b.len == 7 && !strcmp(b.p, "abc42-x"));
	/* Longer than printf's small buffer, and growth across the initial capacity. */
	char big[1000];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	spt_buf_printf(&b, "[%s]", big);
	CHECK(b.len == 7 + 1001 && b.p[7] == '[' && b.p[b.len - 1] == ']' && b.p[b.len] == '\0');
	CHECK(strlen(b.p) == b.len);
	for (int i = 0; i < 10000; i++)
		spt_buf_putc(&b, 'z');
	CHECK(b.len == 11008 && b.cap > b.len && b.p[b.len] == '\0' && !b.oom);
	spt_buf_clear(&b);
	CHECK(b.len == 0);
	spt_buf_json_str(&b, "a\"", 2);
	CHECK(b.len == 5 && !strcmp(b.p, "\"a\\\"\""));
	spt_buf_free(&b);
	CHECK(b.p == NULL && b.len == 0 && b.cap == 0);
	spt_buf_free(&b);
	/* Exactly at capacity boundaries. */
	for (size_t n = 250; n < 260; n++) {
		struct spt_buf c = { 0 };
		char *x = malloc(n);
		memset(x, 'k', n);
		spt_buf_put(&c, x, n);
		spt_buf_printf(&c, "%s", "");
		CHECK(c.len == n && c.p[n] == '\0');
		free(x);
		spt_buf_free(&c);
	}
}

int main(void)
{
	spt_arena_init(&A);
	R = spt_json_reader_new();
	CHECK(R != NULL);
	RUN(test_constructs);
	RUN(test_int64);
	RUN(test_number_text);
	RUN(test_strings);
	RUN(test_errors);
	RUN(test_depth);
	RUN(test_repeated_text);
	RUN(test_null);
	RUN(test_tagged_decode);
	RUN(test_tagged_write);
	RUN(test_loss);
	RUN(test_roundtrip_random);
	RUN(test_reader);
	RUN(test_clone_parsed);
	RUN(test_buf);
	spt_json_reader_free(R);
	spt_arena_fini(&A);
	TEST_MAIN_END("test_json");
}
