/* A small target for the generic uprobe tests (tests/unit/test_uprobe.c): functions that are
 * never inlined, cloned or specialised, called in a loop with arguments computed from the loop
 * index, so a test can check every value a probe read. Prints nothing unless asked.
 *
 *   uprobe_target [-n CALLS] [-w]      call each function CALLS times (default 10000);
 *                                      -w: wait for one byte on stdin first
 *   uprobe_target -b CALLS             time CALLS calls of step() alone, print ns per call
 *
 * Per loop index i (see the expect_* helpers in the test, which must agree):
 *   step(node = i % 7 - 3, term = i * 1000003 + 7, s), with s NULL when i % 1000 == 999, else
 *     s->node = node, s->role = i % 3, s->delta = -(i % 30000), s->term = term,
 *     s->commit = 3 * i, s->leader->id = i ^ 0x5a5a, s->leader->name = "node-<i % 7>",
 *     s->leader->next = s->leader,
 *     s->log[k] = (i + k) & 0xff for k < 48
 *   many(i, 2i, ..., 8i): the 7th and 8th arguments are on the stack (rsp+8, rsp+16 at entry)
 *   twice_plus_one(i) returns 2i + 1
 *   gather(items, count = i % 12, sl) with sl->data = items, sl->len = count and, for k < 16,
 *     items[k].key = i * 100 + k, items[k].a = ~items[k].key; except when i % 1000 is
 *     995: items is an array whose elements 0 and 1 are readable, element 2 inaccessible;
 *     997: sl is NULL;
 *     998: items (and sl->data) point to unmapped memory (address 8) */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define PROBED __attribute__((noinline, used))
#else
#define PROBED __attribute__((noipa, used)) /* no clones: the symbol is what main calls */
#endif

struct inner {
	long id;
	char name[16];
	struct inner *next; /* points to itself: a chain for multi-level dereferences */
};

struct state {
	int node;              /* 0 */
	unsigned char role;    /* 4 */
	short delta;           /* 6 */
	long term;             /* 8 */
	long commit;           /* 16 */
	struct inner *leader;  /* 24 */
	unsigned char log[48]; /* 32 */
};

/* An array element: stride 24, key at offset 8 (what an ARRAY read gathers). */
struct item {
	long a;
	long key;
	long c;
};

/* A Go slice header: the data pointer, then the length. */
struct slice {
	struct item *data;
	long len;
	long cap;
};

_Static_assert(sizeof(struct item) == 24 && offsetof(struct item, key) == 8, "layout the test relies on");
_Static_assert(offsetof(struct slice, len) == 8, "layout the test relies on");
_Static_assert(offsetof(struct state, role) == 4, "layout the test relies on");
_Static_assert(offsetof(struct state, delta) == 6, "layout the test relies on");
_Static_assert(offsetof(struct state, term) == 8, "layout the test relies on");
_Static_assert(offsetof(struct state, commit) == 16, "layout the test relies on");
_Static_assert(offsetof(struct state, leader) == 24, "layout the test relies on");
_Static_assert(offsetof(struct state, log) == 32, "layout the test relies on");
_Static_assert(offsetof(struct inner, name) == 8, "layout the test relies on");
_Static_assert(offsetof(struct inner, next) == 24, "layout the test relies on");

volatile long sink;

PROBED void step(int node, long term, struct state *s)
{
	sink += node + term + (s ? s->commit : 0);
}

PROBED long many(long a, long b, long c, long d, long e, long f, long g, long h)
{
	sink += a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
	return sink;
}

PROBED int twice_plus_one(int x)
{
	sink += x;
	return 2 * x + 1;
}

/* Never dereferences items: the test passes unmapped ones. */
PROBED void gather(struct item *items, long count, struct slice *sl)
{
	sink += count ^ (long)items ^ (sl ? sl->len : 0);
}

/* Two readable items just before an inaccessible page, so gathering a third one faults. */
static struct item *edge_items(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + page, (size_t)page, PROT_NONE))
		return NULL;
	return (struct item *)(p + page) - 2;
}

/* Call i of gather(); out of main's loop so that the step() call there stays one call site. */
static __attribute__((noinline)) void call_gather(long i, struct item *edge)
{
	static struct item items[16];
	static struct slice sl;
	struct item *arr = i % 1000 == 995 ? edge : i % 1000 == 998 ? (struct item *)8 : items;
	long count = i % 12;

	for (int k = 0; k < 16; k++) {
		items[k].key = i * 100 + k;
		items[k].a = ~items[k].key;
		items[k].c = 0x5555;
	}
	for (int k = 0; k < 2; k++) {
		edge[k].key = i * 100 + k;
		edge[k].a = ~edge[k].key;
		edge[k].c = 0x5555;
	}
	sl.data = arr;
	sl.len = count;
	sl.cap = 16;
	gather(arr, count, i % 1000 == 997 ? NULL : &sl);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static struct inner leader;
	static struct state st;
	struct item *edge = edge_items();
	long calls = 10000, bench = 0;
	int opt, wait_stdin = 0;

	while ((opt = getopt(argc, argv, "n:b:w")) != -1) {
		switch (opt) {
		case 'n': calls = strtol(optarg, NULL, 10); break;
		case 'b': bench = strtol(optarg, NULL, 10); break;
		case 'w': wait_stdin = 1; break;
		default:
			fprintf(stderr, "usage: %s [-n CALLS] [-w] | -b CALLS\n", argv[0]);
			return 2;
		}
	}
	if (!edge) {
		perror("uprobe_target: mmap");
		return 4;
	}
	if (wait_stdin) {
		char c;
		if (read(0, &c, 1) != 1)
			return 3;
	}
	st.leader = &leader;
	leader.next = &leader;
	if (bench > 0) {
		double t0 = now_ns();
		for (long i = 0; i < bench; i++)
			step((int)(i & 7), i, &st);
		printf("calls=%ld ns_per_call=%.1f\n", bench, (now_ns() - t0) / (double)bench);
		return 0;
	}
	for (long i = 0; i < calls; i++) {
		int node = (int)(i % 7) - 3;
		long term = i * 1000003L + 7;

		st.node = node;
		st.role = (unsigned char)(i % 3);
		st.delta = (short)-(i % 30000);
		st.term = term;
		st.commit = 3 * i;
		leader.id = i ^ 0x5a5a;
		snprintf(leader.name, sizeof(leader.name), "node-%ld", i % 7);
		for (int k = 0; k < 48; k++)
			st.log[k] = (unsigned char)((i + k) & 0xff);
		step(node, term, i % 1000 == 999 ? NULL : &st);
		many(i, 2 * i, 3 * i, 4 * i, 5 * i, 6 * i, 7 * i, 8 * i);
		twice_plus_one((int)i);
		call_gather(i, edge);
	}
	return 0;
}
