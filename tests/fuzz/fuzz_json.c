/*
 * libFuzzer target for the JSON reader: parses the input in both dialects; whatever parses must
 * survive write -> parse unchanged (tagged always, plain when the write lost nothing), write
 * the same text twice, clone equal, and print; and a spt_json_reader kept across the inputs (as
 * across a file's lines: its strings, guessed keys and spans) must give what a parse alone
 * gives. Any broken law is an abort().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spectap/arena.h"
#include "spectap/buf.h"
#include "spectap/json.h"
#include "spectap/value.h"

static void die(const char *what, const struct spt_buf *b)
{
	fprintf(stderr, "fuzz_json: %s\n", what);
	if (b && b->p)
		fprintf(stderr, "text: %.*s\n", (int)(b->len > 4000 ? 4000 : b->len), b->p);
	abort();
}

static void check_error(const struct spt_json_error *err, size_t size)
{
	if (err->offset > size || err->line < 1 || err->col < 1 ||
	    !memchr(err->msg, 0, sizeof(err->msg)) || !err->msg[0])
		die("malformed error report", NULL);
}

/* The writer's output can nest deeper than its input (a plain record with a "$" key gets a
 * "$rec" wrapper), so the re-read may hit the depth limit: that alone is no bug. */
static bool too_deep(int rc, const struct spt_json_error *err)
{
	return rc == -EINVAL && strstr(err->msg, "nesting deeper") != NULL;
}

static void print_value(spt_val *v)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);
	if (!f)
		return;
	if (spt_value_print(f, v) != 0)
		die("spt_value_print failed", NULL);
	fclose(f);
	free(p);
}

/* write(flags) -> parse(flags) must give v back, and writing that gives the same text. */
static void roundtrip(struct spt_arena *a, spt_val *v, unsigned flags)
{
	struct spt_buf b = { 0 }, b2 = { 0 };
	struct spt_json_loss loss = { 0 };
	spt_json_write(&b, v, flags, &loss);
	if (b.oom)
		die("writer out of memory", NULL);
	bool lossy = loss.sets || loss.funs || loss.models;
	if ((flags & SPT_JSON_TAGGED) && lossy)
		die("tagged write reported a loss", &b);
	spt_val *back = NULL;
	struct spt_json_error err = { 0 };
	int rc = spt_json_parse(a, b.p, b.len, flags, &back, &err);
	if (rc && !too_deep(rc, &err)) {
		fprintf(stderr, "re-parse failed: %s at %zu\n", err.msg, err.offset);
		die("written text does not parse", &b);
	}
	if (!rc && !lossy) {
		if (!spt_value_eq(v, back) || spt_value_cmp(back, v) != 0 ||
		    spt_value_hash(v) != spt_value_hash(back))
			die("round trip changed the value", &b);
		spt_json_write(&b2, back, flags, NULL);
		if (b2.len != b.len || memcmp(b.p, b2.p, b.len))
			die("second write differs from the first", &b);
	}
	spt_buf_free(&b);
	spt_buf_free(&b2);
}

static void one_mode(const uint8_t *data, size_t size, unsigned flags)
{
	struct spt_arena a, c;
	spt_arena_init(&a);
	spt_val *v = NULL;
	struct spt_json_error err;
	memset(&err, 0, sizeof(err));
	int rc = spt_json_parse(&a, (const char *)data, size, flags, &v, &err);
	if (rc) {
		if (rc != -EINVAL && rc != -ENOMEM)
			die("unexpected return code", NULL);
		check_error(&err, size);
		spt_arena_fini(&a);
		return;
	}
	if (!v)
		die("success without a value", NULL);
	if (spt_value_cmp(v, v) != 0 || !spt_value_eq(v, v))
		die("value not equal to itself", NULL);
	/* A deep copy that outlives the text and the first arena. */
	spt_arena_init(&c);
	spt_val *w = spt_value_clone(&c, v);
	if (!w || !spt_value_eq(v, w) || spt_value_hash(v) != spt_value_hash(w))
		die("clone differs", NULL);
	roundtrip(&a, v, SPT_JSON_TAGGED);
	if (!(flags & SPT_JSON_TAGGED))
		roundtrip(&a, v, 0);
	spt_arena_fini(&a);
	print_value(w);
	roundtrip(&c, w, SPT_JSON_TAGGED);
	spt_arena_fini(&c);
}

static struct spt_json_reader *reader;

/* The reader's outcome is the parse's: the same error where it stands, or an equal value
 * written back alike. */
static void reader_law(const uint8_t *data, size_t size, unsigned flags)
{
	if (!reader && !(reader = spt_json_reader_new()))
		return;
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val *v1 = NULL, *v2 = NULL;
	struct spt_json_error e1, e2;
	memset(&e1, 0, sizeof(e1));
	memset(&e2, 0, sizeof(e2));
	int rc1 = spt_json_parse(&a, (const char *)data, size, flags, &v1, &e1);
	int rc2 = spt_json_read(reader, &a, (const char *)data, size, flags, &v2, &e2);
	if (rc1 != rc2)
		die("the reader and the parse disagree on success", NULL);
	if (rc1) {
		if (rc1 == -EINVAL && (e1.offset != e2.offset || strcmp(e1.msg, e2.msg)))
			die("the reader reports another error", NULL);
	} else {
		if (!spt_value_eq(v1, v2) || spt_value_hash(v1) != spt_value_hash(v2) || v1->kind != v2->kind)
			die("the reader read another value", NULL);
		struct spt_buf b1 = { 0 }, b2 = { 0 };
		spt_json_write(&b1, v1, flags, NULL);
		spt_json_write(&b2, v2, flags, NULL);
		if (b1.len != b2.len || memcmp(b1.p, b2.p, b1.len))
			die("the reader's value writes otherwise", &b1);
		spt_buf_free(&b1);
		spt_buf_free(&b2);
	}
	spt_arena_fini(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_mode(data, size, 0);
	one_mode(data, size, SPT_JSON_TAGGED);
	reader_law(data, size, 0);
	reader_law(data, size, SPT_JSON_TAGGED);
	return 0;
}
