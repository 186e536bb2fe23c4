/* The collector's spool (collector/spool.c): records, ticks and node frames come back in order
 * and byte for byte (blocks of zeros left out and restored), across the reader's chunk size,
 * with the reader running behind the writer as the shaping thread does. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool.h" /* collector/: built with -Icollector -Iprobes */
#include "check.h"

#define NREC 20000 /* about 10 MB of records: several of the reader's 1 MiB chunks */
#define EXTRA 10   /* appended after the last commit */

/* Record i: compact or full, i % 25 reads, some blocks of zeros, some not. */
static void make_record(unsigned i, struct uprobe_event_full *f, size_t *size)
{
	memset(f, 0, sizeof(*f));
	bool full = i % 3 != 0;
	f->ev.probe_id = i % 7 + 1;
	f->ev.cpu = i % 2;
	f->ev.pid = 1000 + i % 5;
	f->ev.tid = 2000 + i;
	f->ev.ktime_ns = 1000000ull * i;
	f->ev.seq = i / 2;
	f->ev.size = (uint16_t)(full ? sizeof(*f) : sizeof(f->ev));
	f->ev.nreads = (uint8_t)(i % (UPROBE_MAX_READS + 1));
	f->ev.err = i * 2654435761u;
	for (unsigned k = 0; k < f->ev.nreads; k++)
		f->ev.val[k] = (uint64_t)i * 1000003u + k;
	if (full)
		for (unsigned k = 0; k < UPROBE_MAX_READS; k++)
			if ((i + k) % 4 == 0)
				for (unsigned b = 0; b < UPROBE_MAX_BLOCK; b++)
					f->block[k][b] = (uint8_t)(i + k + b);
	*size = f->ev.size;
}

struct reader_state {
	unsigned next_rec, ticks, nodes, bad;
};

static int on_frame(void *ctx, const struct spool_frame *fr)
{
	struct reader_state *st = ctx;
	struct uprobe_event_full want;
	size_t size;

	switch (fr->kind) {
	case SPOOL_RECORD:
		make_record(st->next_rec, &want, &size);
		if (fr->size != size || memcmp(fr->ev, &want, size)) {
			if (st->bad++ < 5)
				fprintf(stderr, "  record %u differs after the round trip\n", st->next_rec);
		}
		st->next_rec++;
		return 0;
	case SPOOL_TICK:
		st->ticks++;
		return 0;
	case SPOOL_NODE: {
		char want_name[32];
		snprintf(want_name, sizeof(want_name), "n%u", st->nodes + 1);
		if (fr->pid != (int)(100 + st->nodes) || strcmp(fr->node, want_name))
			st->bad++;
		st->nodes++;
		return 0;
	}
	}
	st->bad++;
	return -EPROTO;
}

static void test_round_trip_behind_the_writer(void)
{
	struct spool *s = NULL;
	struct reader_state st = {0};
	struct spool_stats ss;
	char err[256] = "";
	unsigned ticks = 0, nodes = 0;

	CHECKF(spool_open("/tmp", &s, err, sizeof(err)) == 0, "%s", err);
	if (!s)
		return;
	CHECK(spool_read(s, 0, on_frame, &st) == 0); /* nothing published yet */
	for (unsigned i = 0; i < NREC; i++) {
		struct uprobe_event_full f;
		size_t size;

		make_record(i, &f, &size);
		CHECK(spool_add_record(s, &f.ev, size) == 0);
		if (i % 97 == 0) {
			char name[32];
			snprintf(name, sizeof(name), "n%u", nodes + 1);
			CHECK(spool_add_node(s, (int)(100 + nodes), name) == 0);
			nodes++;
		}
		if (i % 50 == 49) { /* a drain: tick, publish; the reader takes a bounded bite */
			CHECK(spool_add_tick(s) == 0);
			ticks++;
			CHECK(spool_commit(s) == 0);
			if (i % 200 == 199)
				CHECK(spool_read(s, 64, on_frame, &st) >= 0);
		}
	}
	/* Frames not yet published are not read. */
	for (unsigned i = NREC; i < NREC + EXTRA; i++) {
		struct uprobe_event_full f;
		size_t size;

		make_record(i, &f, &size);
		CHECK(spool_add_record(s, &f.ev, size) == 0);
	}
	CHECK(spool_read(s, 0, on_frame, &st) >= 0);
	CHECKF(st.next_rec == NREC, "read %u records before the last commit, %u published", st.next_rec, NREC);
	CHECK(spool_commit(s) == 0);
	CHECK(spool_read(s, 0, on_frame, &st) == EXTRA);
	CHECKF(st.next_rec == NREC + EXTRA && st.ticks == ticks && st.nodes == nodes && st.bad == 0,
	       "records %u/%u ticks %u/%u nodes %u/%u bad %u", st.next_rec, NREC + EXTRA, st.ticks, ticks, st.nodes, nodes,
	       st.bad);
	spool_stats(s, &ss);
	CHECK(ss.frames_written == ss.frames_read && ss.frames_written == (uint64_t)NREC + EXTRA + ticks + nodes);
	/* Zero blocks are left out: far less than whole full records. */
	CHECKF(ss.bytes_written < (uint64_t)NREC * sizeof(struct uprobe_event_full) / 2, "%llu bytes",
	       (unsigned long long)ss.bytes_written);
	CHECK(ss.bytes_read == ss.bytes_written);
	/* What was read went back to the file system: about the last few MiB stay. */
	CHECKF(spool_disk_bytes(s) < ss.bytes_written / 2, "%llu of %llu bytes still on disk",
	       (unsigned long long)spool_disk_bytes(s), (unsigned long long)ss.bytes_written);
	spool_close(s);
}

static void test_bad_input(void)
{
	struct spool *s = NULL;
	char err[256] = "";
	struct uprobe_event ev;

	CHECK(spool_open("/nonexistent-dir/x", &s, err, sizeof(err)) < 0 && s == NULL);
	CHECKF(strstr(err, "/nonexistent-dir/x") != NULL, "%s", err);
	CHECKF(spool_open("/tmp", &s, err, sizeof(err)) == 0, "%s", err);
	if (!s)
		return;
	memset(&ev, 0, sizeof(ev));
	CHECK(spool_add_record(s, &ev, 17) == -EPROTO);
	CHECKF(strstr(spool_error(s), "17 bytes") != NULL, "%s", spool_error(s));
	spool_close(s);
}

int main(void)
{
	RUN(test_round_trip_behind_the_writer);
	RUN(test_bad_input);
	TEST_MAIN_END("test_spool");
}
