/* The parts of the ZooKeeper JVMTI agent that need no JVM, under the sanitizers: the class-file
 * reader (constant pool entries of every tag, longs and doubles taking two slots, member
 * references, truncated and unknown input; instruction lengths with tableswitch and
 * lookupswitch padding and wide), the JSON writer (escapes, commas, 64-bit extremes, growth out
 * of a caller's buffer), the file sink (its {"event":{...}} lines as spectap's json dialect
 * reads them, errors that name the file) and the hook table (unique ids, every field and class
 * named). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "classfile.h"
#include "hooks.h"
#include "jsonw.h"
#include "sink.h"
#include "spectap/arena.h"
#include "spectap/json.h"
#include "spectap/value.h"

/* ---- a constant pool built by hand ---- */

struct pb {
	unsigned char b[1024];
	size_t n;
	int count; /* constant_pool_count */
};

static void u1(struct pb *p, unsigned v) { p->b[p->n++] = (unsigned char)v; }
static void u2(struct pb *p, unsigned v) { u1(p, v >> 8); u1(p, v & 0xff); }

static int utf8(struct pb *p, const char *s)
{
	u1(p, CF_UTF8);
	u2(p, (unsigned)strlen(s));
	memcpy(p->b + p->n, s, strlen(s));
	p->n += strlen(s);
	return p->count++;
}

static int entry2(struct pb *p, int tag, unsigned a)
{
	u1(p, (unsigned)tag);
	u2(p, a);
	return p->count++;
}

static int entry4(struct pb *p, int tag, unsigned a, unsigned b)
{
	u1(p, (unsigned)tag);
	u2(p, a);
	u2(p, b);
	return p->count++;
}

static void test_pool(void)
{
	struct pb p = {.count = 1};
	int cls_name = utf8(&p, "java/util/Map");          /* 1 */
	int cls = entry2(&p, CF_CLASS, (unsigned)cls_name); /* 2 */
	int mname = utf8(&p, "put");                        /* 3 */
	int mdesc = utf8(&p, "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;");
	int nat = entry4(&p, CF_NAME_AND_TYPE, (unsigned)mname, (unsigned)mdesc);
	/* a long takes two slots */
	u1(&p, CF_LONG);
	for (int i = 0; i < 8; i++)
		u1(&p, 0xff);
	int lng = p.count;
	p.count += 2;
	int iref = entry4(&p, CF_IMETHODREF, (unsigned)cls, (unsigned)nat);
	u1(&p, CF_METHOD_HANDLE);
	u1(&p, 5);
	u2(&p, (unsigned)iref);
	p.count++;
	int fname = utf8(&p, "state");
	int fdesc = utf8(&p, "I");
	int fnat = entry4(&p, CF_NAME_AND_TYPE, (unsigned)fname, (unsigned)fdesc);
	int fref = entry4(&p, CF_FIELDREF, (unsigned)cls, (unsigned)fnat);
	entry4(&p, CF_INVOKE_DYNAMIC, 0, (unsigned)nat);
	entry2(&p, CF_STRING, (unsigned)mname);

	struct cf_pool pool;
	char err[256];
	CHECK(cf_pool_parse(&pool, p.count, p.b, p.n, err, sizeof err) == 0);
	CHECK(cf_pool_tag(&pool, cls) == CF_CLASS && cf_pool_tag(&pool, lng) == CF_LONG);
	CHECK(cf_pool_tag(&pool, lng + 1) == 0); /* the long's second slot */
	CHECK(cf_pool_tag(&pool, 0) == 0 && cf_pool_tag(&pool, p.count) == 0);
	struct cf_str o, n, d;
	CHECK(cf_pool_member(&pool, iref, &o, &n, &d) == 0);
	CHECK(cf_str_eq(o, "java/util/Map") && cf_str_eq(n, "put") && !cf_str_eq(n, "pu") &&
	      d.n > 10);
	CHECK(cf_pool_member(&pool, fref, &o, &n, &d) == 0 && cf_str_eq(n, "state") && cf_str_eq(d, "I"));
	CHECK(cf_pool_member(&pool, cls, &o, &n, &d) == -EINVAL); /* not a member reference */
	CHECK(cf_pool_member(&pool, lng + 1, &o, &n, &d) == -EINVAL);
	cf_pool_free(&pool);

	/* Truncated, an unknown tag, bytes left over: each named. */
	CHECK(cf_pool_parse(&pool, p.count, p.b, p.n - 1, err, sizeof err) == -EINVAL);
	CHECKF(strstr(err, "entry"), "%s", err);
	unsigned char bad[] = {CF_UTF8, 0, 1, 'x', 2, 0, 0};
	CHECK(cf_pool_parse(&pool, 3, bad, sizeof bad, err, sizeof err) == -EINVAL);
	CHECKF(strstr(err, "entry 2 has unknown tag 2"), "%s", err);
	CHECK(cf_pool_parse(&pool, 2, bad, sizeof bad, err, sizeof err) == -EINVAL);
	CHECKF(strstr(err, "bytes after"), "%s", err);
	CHECK(cf_pool_parse(&pool, 0, bad, sizeof bad, err, sizeof err) == -EINVAL);
	/* A member reference to something that is not a class: refused, not followed. */
	unsigned char bad2[] = {CF_UTF8, 0, 1, 'x', CF_METHODREF, 0, 1, 0, 1};
	CHECK(cf_pool_parse(&pool, 3, bad2, sizeof bad2, err, sizeof err) == 0);
	CHECK(cf_pool_member(&pool, 2, &o, &n, &d) == -EINVAL);
	cf_pool_free(&pool);
}

static void test_insn(void)
{
	/* 0: aload_0, 1: invokeinterface #1 3 0, 6: pop, 7: tableswitch (pad to 8) 0..1,
	 * 32: wide iinc, 38: lookupswitch (pad to 40) 1 pair, 56: return */
	unsigned char c[64];
	memset(c, 0, sizeof c);
	c[0] = 0x2a;
	c[1] = 0xb9; c[2] = 0; c[3] = 1; c[4] = 3; c[5] = 0;
	c[6] = 0x57;
	c[7] = 0xaa; /* operands at 8: default, low = 0, high = 1, 2 offsets */
	c[15] = 0; c[19] = 1;
	c[32] = 0xc4; c[33] = 0x84;
	c[38] = 0xab; /* operands at 40: default, npairs = 1, one pair */
	c[47] = 1;
	c[56] = 0xb1;
	CHECK(cf_insn_len(c, 57, 0) == 1);
	CHECK(cf_insn_len(c, 57, 1) == 5);
	CHECK(cf_insn_len(c, 57, 7) == 21); /* 1 + 0 pad + 12 + 2*4: 7..27, then nops to 32 */
	CHECK(cf_insn_len(c, 57, 32) == 6);
	CHECK(cf_insn_len(c, 57, 38) == 18); /* 1 + 1 pad + 8 + 8 */
	CHECK(cf_insn_len(c, 57, 56) == 1);
	CHECK(cf_insn_boundary(c, 57, 32) && cf_insn_boundary(c, 57, 56));
	CHECK(!cf_insn_boundary(c, 57, 2) && !cf_insn_boundary(c, 57, 33));
	CHECK(cf_is_invoke(c[1]) && !cf_is_invoke(c[0]) && cf_is_return(c[56]) && !cf_is_return(c[6]));
	CHECK(cf_insn_len(c, 25, 7) == -1); /* the switch runs past the end */
	unsigned char unknown[] = {0xcb};
	CHECK(cf_insn_len(unknown, 1, 0) == -1);
	unsigned char wide_load[] = {0xc4, 0x15, 0, 1};
	CHECK(cf_insn_len(wide_load, 4, 0) == 4);
	CHECK(cf_insn_len(wide_load, 4, 4) == -1);
	/* A tableswitch with high < low is invalid. */
	unsigned char ts[20] = {0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1};
	CHECK(cf_insn_len(ts, sizeof ts, 0) == -1);
}

static void test_jsonw(void)
{
	char small[8];
	struct jw w;
	jw_init(&w, small, sizeof small);
	jw_obj(&w);
	jw_kv_str(&w, "s", "a\"b\\c\n\t\x01\xc3\xa9");
	jw_kv_i64(&w, "min", INT64_MIN);
	jw_kv_i64(&w, "max", INT64_MAX);
	jw_key(&w, "u");
	jw_u64(&w, UINT64_MAX);
	jw_kv_str(&w, "nul", NULL);
	jw_key(&w, "o");
	jw_obj(&w);
	jw_key(&w, "b");
	jw_bool(&w, true);
	jw_end_obj(&w);
	jw_kv_raw(&w, "raw", "{\"x\":1}", 7);
	jw_end_obj(&w);
	CHECK(!w.oom && w.heap); /* grew out of the 8-byte buffer */
	const char *want = "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9\",\"min\":-9223372036854775808,"
			   "\"max\":9223372036854775807,\"u\":18446744073709551615,\"nul\":null,"
			   "\"o\":{\"b\":true},\"raw\":{\"x\":1}}";
	CHECKF(!strcmp(w.p, want), "%s", w.p);
	/* It parses, with the 64-bit extremes exact. */
	struct spt_arena a;
	spt_arena_init(&a);
	spt_val *v = NULL;
	struct spt_json_error jerr;
	jw_reset(&w);
	jw_obj(&w);
	jw_kv_i64(&w, "min", INT64_MIN);
	jw_kv_i64(&w, "z", -1);
	jw_end_obj(&w);
	CHECK(spt_json_parse(&a, w.p, w.n, 0, &v, &jerr) == 0);
	CHECK(v && spt_rec_get(v, "min") && spt_rec_get(v, "min")->u.i == INT64_MIN);
	spt_arena_fini(&a);
	jw_free(&w);
	/* Starting on the heap. */
	jw_init(&w, NULL, 0);
	for (int i = 0; i < 1000; i++)
		jw_i64(&w, i);
	CHECK(!w.oom && w.n > 1000 && w.p[w.n] == '\0');
	jw_free(&w);
}

static char g_dir[128];

static void test_file_sink(void)
{
	char path[256], err[512];
	snprintf(path, sizeof path, "%s/out.ndjson", g_dir);
	struct zk_sink s;
	CHECK(zk_sink_file_open(&s, path, err, sizeof err) == 0);
	CHECK(!strcmp(s.name, "file") && s.enabled(&s));
	struct zk_rec_hdr h = {1, 123456789012345ULL, 42};
	const char rec[] = "{\"node\":\"1\",\"kind\":\"zk.recvset.put\",\"state\":{\"logicalclock\":1}}";
	CHECK(s.emit(&s, rec, strlen(rec), &h) == 0);
	h.seq = 2;
	CHECK(s.emit(&s, "{}", 2, &h) == 0);
	CHECK(s.emit(&s, "x", 1, &h) == -EINVAL && s.failed == 1);
	s.close(&s);
	FILE *f = fopen(path, "r");
	char line[512];
	CHECK(f && fgets(line, sizeof line, f));
	CHECKF(!strcmp(line, "{\"event\":{\"source\":\"jvmti\",\"seq\":1,\"ts_ns\":123456789012345,"
			     "\"tid\":42,\"node\":\"1\",\"kind\":\"zk.recvset.put\",\"state\":"
			     "{\"logicalclock\":1}}}\n"), "%s", line);
	CHECK(f && fgets(line, sizeof line, f));
	CHECKF(!strcmp(line, "{\"event\":{\"source\":\"jvmti\",\"seq\":2,\"ts_ns\":123456789012345,"
			     "\"tid\":42}}\n"), "%s", line);
	CHECK(f && !fgets(line, sizeof line, f));
	if (f)
		fclose(f);
	/* Appends: a second open adds to the file. */
	CHECK(zk_sink_file_open(&s, path, err, sizeof err) == 0);
	CHECK(s.emit(&s, rec, strlen(rec), &h) == 0);
	s.close(&s);
	struct stat sb;
	CHECK(stat(path, &sb) == 0 && sb.st_size > 300);
	/* A missing directory is named. */
	CHECK(zk_sink_file_open(&s, "/nonexistent/dir/x.ndjson", err, sizeof err) == -ENOENT);
	CHECKF(strstr(err, "/nonexistent/dir/x.ndjson") && strstr(err, "check the directory"), "%s", err);
	/* The emit sink: available only when the emit library is linked in (not in this test). */
	int rc = zk_sink_emit_open(&s, err, sizeof err);
	CHECK(rc == 0 || (rc == -ENOSYS && strstr(err, "out=PATH")));
}

static void test_hook_table(void)
{
	CHECK(zk_nhooks > 30);
	for (size_t i = 0; i < zk_nhooks; i++) {
		const struct zk_hook *h = &zk_hooks[i];
		CHECKF(zk_hook_find(h->id) == (int)i, "duplicate hook id %s", h->id);
		CHECK(h->cls < ZC_COUNT);
		if (h->anchor == ZA_PUTFIELD) {
			CHECK(!h->method && h->line == 0 && h->call_owner && h->call_name);
		} else {
			CHECKF(h->method && h->sig && h->line > 0, "%s", h->id);
			CHECKF(h->anchor == ZA_LINE || h->anchor == ZA_RETURN || (h->call_owner && h->call_name),
			       "%s", h->id);
		}
		for (int k = 0; k < ZK_HOOK_LOCALS && h->locals[k]; k++)
			CHECK(h->locals[k][0] != '\0');
	}
	CHECK(zk_hook_find("nosuch") == -1);
	/* The wire format of a notification (what a resent last message holds). */
	unsigned char w[44] = {0, 0, 0, 2,                      /* LEADING */
			       0, 0, 0, 0, 0, 0, 0, 3,          /* leader 3 */
			       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* zxid -1 */
			       0, 0, 0, 1, 0, 0, 0, 0,          /* electionEpoch 2^32 */
			       0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* peerEpoch max */
			       0, 0, 0, 2, 0, 0, 0, 0};
	int64_t v[5];
	CHECK(zk_parse_wire(w, sizeof w, v) == 0);
	CHECK(v[0] == 2 && v[1] == 3 && v[2] == -1 && v[3] == (int64_t)1 << 32 && v[4] == INT64_MAX);
	CHECK(zk_parse_wire(w, 35, v) == -1);
	for (int f = 0; f < ZF_COUNT; f++)
		CHECKF(zk_fields[f].name && zk_fields[f].sig && zk_fields[f].cls < ZC_COUNT, "field %d", f);
	for (int c = 0; c < ZC_COUNT; c++)
		CHECK(zk_class_names[c] && strchr(zk_class_names[c], '/') && !strchr(zk_class_short(c), '/'));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(g_dir, sizeof g_dir, "/tmp/spectap-test-zkparts-XXXXXX");
	if (!mkdtemp(g_dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_pool);
	RUN(test_insn);
	RUN(test_jsonw);
	RUN(test_file_sink);
	RUN(test_hook_table);
	char path[256];
	snprintf(path, sizeof path, "%s/out.ndjson", g_dir);
	unlink(path);
	rmdir(g_dir);
	TEST_MAIN_END("test_zk_agent_parts");
}
