/* A small raft-like C program for the C binary tests (tests/unit/test_cbin.c): a server struct
 * with nested structs, an anonymous member, a bit field and an array-based log, and exported
 * functions that are never inlined, cloned or specialised, called in a loop with values computed
 * from the loop index, so a test can check what DWARF says and every value a probe read.
 * Built with -O2 -g.
 *
 *   c_target [-n CALLS] [-w] [-s]  run the loop CALLS times (default 2000, at most LOG_CAP);
 *                              -w: wait for one byte on stdin first; -s: then stay until a
 *                              signal (a node of tests/data/systems/c-target)
 *   c_target -p                print "path offset size" of the fields the test looks up
 *
 * The same source also builds the shared-object variant: with -DC_TARGET_LIB -shared -fPIC it is
 * libc_target.so (everything, main renamed c_target_main), and with -DC_TARGET_LAUNCHER it is
 * c_target_so, a main that runs c_target_main from that library: probes then go on the .so.
 *
 * Per loop index i (the test's checks must agree):
 *   before: me->current_term = 10i, voted_for = -1, state = FOLLOWER, idx.commit_idx = i,
 *     u.lo = i ^ 0x55, peers[1].match_idx = 2i; me->logp == &me->log, log.count == i
 *   raft_become_candidate(me, node_id = i % 5 + 1): term 10i + 1, voted_for = node_id,
 *     state CANDIDATE; returns 10i + 1
 *   raft_append_entry(me, e) with e->term = 10i + 1, e->id = i: log.entries[i] = *e; returns
 *     the new count i + 1
 *   raft_many(me, i, 2i, 3i, 4i, 5i, f7 = 6i, g8 = (int)7i): f7 and g8 on the stack
 *   raft_big(k = i, b) with b.x = 3i, b.y[j] = i + j: returns a struct above 16 bytes
 *   raft_opaque(me_ = me): a void * parameter, as older raft libraries take the server
 *   raft_node_touch(n) with n->id = i % 3, n->udata = me: a void * field, as raft_node_t
 *     carries RedisRaft's Node
 *   raft_depth(me, d = i % 4): recursive; the call at depth d returns d
 *   raft_sum_pair(p = {i, -i}, x = 0.5, y = i): a small struct in two registers, a double */
#ifdef C_TARGET_LAUNCHER
int c_target_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return c_target_main(argc, argv);
}
#else
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__clang__)
#define PROBED __attribute__((noinline, used))
#else
#define PROBED __attribute__((noipa, used)) /* no clones: the symbol is what main calls */
#endif

#define LOG_CAP 4096

typedef long raft_term_t;
typedef int raft_node_id_t;

struct entry {
	raft_term_t term;
	int type;
	unsigned id;
	char data[8];
};

struct raft_log {
	struct entry *entries;
	long count;
	long capacity;
	long base;
};

struct peer {
	raft_node_id_t id;
	unsigned char voting;
	long match_idx;
};

enum raft_state { FOLLOWER, CANDIDATE, LEADER };

struct raft_server {
	raft_term_t current_term;
	raft_node_id_t voted_for;
	enum raft_state state;
	struct {
		long commit_idx;
		long last_applied;
	} idx;
	union {
		long raw;
		struct {
			int lo, hi;
		};
	} u;
	struct raft_log log;
	struct raft_log *logp;
	struct peer peers[3];
	unsigned flags : 3;
	unsigned leader : 1;
	short delta;
};
typedef struct raft_server raft_server_t;

struct pair {
	long a, b;
};

struct big {
	long x;
	long y[4];
};

volatile long sink;

PROBED raft_term_t raft_become_candidate(raft_server_t *me, raft_node_id_t node_id)
{
	me->current_term += 1;
	me->voted_for = node_id;
	me->state = CANDIDATE;
	return me->current_term;
}

PROBED int raft_append_entry(raft_server_t *me, const struct entry *e)
{
	me->log.entries[me->log.count++] = *e;
	return (int)me->log.count;
}

PROBED long raft_many(raft_server_t *me, long a, long b, long c, long d, long e, long f7, int g8)
{
	sink += me->current_term ^ a ^ b ^ c ^ d ^ e ^ f7 ^ g8;
	return sink;
}

PROBED struct big raft_big(long k, struct big b)
{
	b.x += k;
	return b;
}

PROBED void raft_opaque(void *me_)
{
	sink += ((raft_server_t *)me_)->current_term;
}

/* A node that carries its server behind a void * field. */
struct node_ref {
	raft_node_id_t id;
	void *udata;
};

PROBED void raft_node_touch(struct node_ref *n)
{
	sink += ((raft_server_t *)n->udata)->current_term + n->id;
}

PROBED long raft_depth(raft_server_t *me, int depth)
{
	long below = depth > 0 ? raft_depth(me, depth - 1) : 0;

	sink += below + me->voted_for;
	return depth;
}

PROBED long raft_sum_pair(struct pair p, double x, long y)
{
	return p.a + p.b + (long)x + y;
}

/* Only ever inlined: the test expects "only inlined". */
static inline __attribute__((always_inline)) long raft_inlined_only(long x)
{
	return x * 3 + sink;
}

/* Inlined where called, and also out of line (its address is taken). */
static inline __attribute__((always_inline)) long raft_both_ways(long x)
{
	sink ^= x << 3;
	return x + 1;
}
long (*volatile raft_both_ways_ptr)(long) = raft_both_ways;

#define FIELD(path) printf("%s %zu %zu\n", #path, offsetof(struct raft_server, path), sizeof(((struct raft_server *)0)->path))

static void print_offsets(void)
{
	FIELD(current_term);
	FIELD(voted_for);
	FIELD(state);
	FIELD(idx);
	FIELD(idx.commit_idx);
	FIELD(idx.last_applied);
	FIELD(u.lo);
	FIELD(u.hi);
	FIELD(log);
	FIELD(log.entries);
	FIELD(log.count);
	FIELD(logp);
	FIELD(peers);
	FIELD(peers[1].match_idx);
	FIELD(peers[2].voting);
	FIELD(delta);
	printf("sizeof(struct raft_server) %zu\n", sizeof(struct raft_server));
	printf("sizeof(struct entry) %zu\n", sizeof(struct entry));
	printf("entry.term %zu\n", offsetof(struct entry, term));
}

#ifdef C_TARGET_LIB
#define main c_target_main
int main(int argc, char **argv);
#endif

int main(int argc, char **argv)
{
	static struct entry entries[LOG_CAP];
	static raft_server_t srv;
	raft_server_t *me = &srv;
	long calls = 2000;
	int opt, wait_stdin = 0, stay = 0;

	while ((opt = getopt(argc, argv, "n:wps")) != -1) {
		switch (opt) {
		case 'n': calls = strtol(optarg, NULL, 10); break;
		case 'w': wait_stdin = 1; break;
		case 's': stay = 1; break;
		case 'p': print_offsets(); return 0;
		default:
			fprintf(stderr, "usage: %s [-n CALLS] [-w] [-s] | -p\n", argv[0]);
			return 2;
		}
	}
	if (calls < 0 || calls > LOG_CAP)
		return 2;
	if (wait_stdin) {
		char c;
		if (read(0, &c, 1) != 1)
			return 3;
	}
	me->log.entries = entries;
	me->log.capacity = LOG_CAP;
	me->logp = &me->log;
	for (long i = 0; i < calls; i++) {
		struct entry e = {.term = 10 * i + 1, .type = 1, .id = (unsigned)i};
		struct big b = {.x = 3 * i};
		struct pair p = {i, -i};

		me->current_term = 10 * i;
		me->voted_for = -1;
		me->state = FOLLOWER;
		me->idx.commit_idx = i;
		me->u.lo = (int)(i ^ 0x55);
		me->peers[1].match_idx = 2 * i;
		me->flags = (unsigned)i & 7;
		raft_become_candidate(me, (raft_node_id_t)(i % 5 + 1));
		raft_append_entry(me, &e);
		raft_many(me, i, 2 * i, 3 * i, 4 * i, 5 * i, 6 * i, (int)(7 * i));
		for (int j = 0; j < 4; j++)
			b.y[j] = i + j;
		sink += raft_big(i, b).x;
		raft_opaque(me);
		struct node_ref nr = {.id = (raft_node_id_t)(i % 3), .udata = me};
		raft_node_touch(&nr);
		raft_depth(me, (int)(i % 4));
		sink += raft_sum_pair(p, 0.5, i);
		sink += raft_inlined_only(i);
		sink += raft_both_ways(i);
	}
	while (stay)
		pause();
	return 0;
}
#endif
