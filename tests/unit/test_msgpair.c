/* Message pairing by content (lib/msgpair.c) against a plain model: random sends and receives
 * over many keys, so the table grows and removes emptied keys in every probe-run shape. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spectap/arena.h"
#include "spectap/msgpair.h"
#include "spectap/value.h"

#define NKEYS 700
#define MAXQ 64
#define STEPS 200000

/* The model: per key, the FIFO of waiting sends. */
struct fifo {
	uint64_t id[MAXQ], lamport[MAXQ];
	unsigned head, len;
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Key k as a message: from, to and type vary, and some carry a payload. */
static void msg_of(struct spt_arena *a, unsigned k, enum spt_msg_dir dir, struct spt_msg *m, char *type)
{
	static const char *const nodes[] = { "n1", "n2", "n3" };
	memset(m, 0, sizeof(*m));
	snprintf(type, 16, "T%u", k / 9);
	m->dir = dir;
	m->from = nodes[k % 3];
	m->to = nodes[(k / 3) % 3];
	m->type = type;
	if (k % 2) {
		const char *names[] = { "index", "commit" };
		spt_val *vals[] = { spt_int(a, k), spt_int(a, (int64_t)k * 7) };
		m->fields = spt_rec(a, names, vals, 2);
	}
}

static void test_against_model(void)
{
	static struct fifo q[NKEYS];
	struct spt_msgpair *mp;
	struct spt_arena a;
	uint64_t waiting = 0, fresh = 0, bad = 0;
	char type[16];

	spt_arena_init(&a);
	CHECK(spt_msgpair_new(&mp) == 0);
	for (unsigned step = 0; step < STEPS; step++) {
		unsigned k = (unsigned)(next() % NKEYS);
		struct spt_msg m;
		spt_arena_reset(&a);
		/* sends a little more often than receives: keys fill, empty and fill again */
		bool send = q[k].len == 0 || (q[k].len < MAXQ && next() % 100 < 52);
		msg_of(&a, k, send ? SPT_MSG_SEND : SPT_MSG_RECV, &m, type);
		if (send) {
			uint64_t id = 0;
			CHECK(spt_msgpair_send(mp, &m, step, &id) == 0);
			bad += id != ++fresh;
			struct fifo *f = &q[k];
			f->id[(f->head + f->len) % MAXQ] = id;
			f->lamport[(f->head + f->len) % MAXQ] = step;
			f->len++;
			waiting++;
		} else {
			uint64_t id = 0, lamport = 0;
			int r = spt_msgpair_recv(mp, &m, &id, &lamport);
			struct fifo *f = &q[k];
			bad += r != 1 || id != f->id[f->head] || lamport != f->lamport[f->head];
			f->head = (f->head + 1) % MAXQ;
			f->len--;
			waiting--;
		}
		bad += spt_msgpair_unpaired_sends(mp) != waiting;
	}
	CHECKF(bad == 0, "%llu mismatches with the model", (unsigned long long)bad);
	/* Every key emptied: a receive now pairs with nothing and gets a fresh id. */
	for (unsigned k = 0; k < NKEYS; k++) {
		while (q[k].len) {
			struct spt_msg m;
			uint64_t id, lamport;
			msg_of(&a, k, SPT_MSG_RECV, &m, type);
			CHECK(spt_msgpair_recv(mp, &m, &id, &lamport) == 1 && id == q[k].id[q[k].head]);
			q[k].head = (q[k].head + 1) % MAXQ;
			q[k].len--;
		}
	}
	CHECK(spt_msgpair_unpaired_sends(mp) == 0);
	for (unsigned k = 0; k < NKEYS; k += 37) {
		struct spt_msg m;
		uint64_t id, lamport = 1;
		msg_of(&a, k, SPT_MSG_RECV, &m, type);
		CHECK(spt_msgpair_recv(mp, &m, &id, &lamport) == 0 && id == ++fresh && lamport == 0);
	}
	spt_msgpair_free(mp);
	spt_arena_fini(&a);
}

/* The payload is compared in canonical order: the same fields written in another order pair. */
static void test_payload_order(void)
{
	struct spt_msgpair *mp;
	struct spt_arena a;
	uint64_t id, sid, lamport;
	bool dup;

	spt_arena_init(&a);
	CHECK(spt_msgpair_new(&mp) == 0);
	spt_val *k1[] = { spt_cstr(&a, "index"), spt_cstr(&a, "term") }, *v1[] = { spt_int(&a, 5), spt_int(&a, 2) };
	spt_val *k2[] = { k1[1], k1[0] }, *v2[] = { v1[1], v1[0] };
	struct spt_msg s = { .dir = SPT_MSG_SEND, .from = "n1", .to = "n2", .type = "MsgApp",
			     .fields = spt_fun_ordered(&a, k1, v1, 2, &dup) };
	struct spt_msg r = s;
	r.dir = SPT_MSG_RECV;
	r.fields = spt_fun_ordered(&a, k2, v2, 2, &dup);
	CHECK(spt_msgpair_send(mp, &s, 7, &sid) == 0);
	CHECK(spt_msgpair_recv(mp, &r, &id, &lamport) == 1 && id == sid && lamport == 7);
	CHECK(spt_msgpair_recv(mp, &r, &id, &lamport) == 0 && id != sid);
	spt_msgpair_free(mp);
	spt_arena_fini(&a);
}

int main(void)
{
	printf("test_msgpair\n");
	RUN(test_against_model);
	RUN(test_payload_order);
	TEST_MAIN_END("test_msgpair");
}
