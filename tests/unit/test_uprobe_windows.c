/* The read-window planner (probes/uprobe_windows.c) on its own: which accesses share a window,
 * where each takes its bytes, and what never gets one. No BPF: the values a windowed read gives
 * are tested live in test_uprobe, with and without windows. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "uprobe_loader.h"
#include "uprobe_windows.h"

/* The window read k's access a uses (-1: none), and where in it. */
static int win_of(const struct probe_spec *s, unsigned k, unsigned a, unsigned *pick)
{
	*pick = s->reads[k].pick[a];
	return (int)s->reads[k].win[a] - 1;
}

/* A receiver in rax with fields through one and two pointer hops, and a message on the stack:
 * the shape of etcd's Step probe. */
static void test_receiver_and_message(void)
{
	static const int32_t to_log[] = { 48 }, to_storage[] = { 48, 8 };
	struct probe_spec s;
	unsigned pick;
	int w0, w1, w2;

	memset(&s, 0, sizeof(s));
	s.reads[0] = uprobe_read_at(UPROBE_SRC_RAX, 0, UPROBE_READ_MEM, 8, 8, 0, NULL);     /* r.term */
	s.reads[1] = uprobe_read_at(UPROBE_SRC_RAX, 0, UPROBE_READ_MEM, 8, 176, 0, NULL);   /* r.lead */
	s.reads[2] = uprobe_read_at(UPROBE_SRC_RAX, 0, UPROBE_READ_MEM, 8, 72, 1, to_log);  /* r.raftLog.committed */
	s.reads[3] = uprobe_read_at(UPROBE_SRC_RAX, 0, UPROBE_READ_MEM, 8, 48, 1, to_log);  /* r.raftLog.unstable.offset */
	s.reads[4] = uprobe_read_at(UPROBE_SRC_RAX, 0, UPROBE_READ_MEM, 8, 280, 2, to_storage); /* one more hop: alone */
	s.reads[5] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 4, 8, 0, NULL);     /* msg.type */
	s.reads[6] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 1, 304, 0, NULL);   /* msg.reject */
	s.reads[7] = uprobe_read_at(UPROBE_SRC_STACK, 56, UPROBE_READ_MEM, 8, 0, 0, NULL);  /* msg.entries[0].term */
	s.reads[8] = (struct uprobe_read){ .src = UPROBE_SRC_RCX, .kind = UPROBE_READ_VALUE, .size = 8 };
	s.nreads = 9;
	uprobe_plan_windows(&s);

	CHECKF(s.nwindows == 3, "%u windows", s.nwindows);
	/* The receiver's fields and the raftLog pointer (read three times) share one window. */
	w0 = win_of(&s, 0, UPROBE_ACCESS_FINAL, &pick);
	CHECK(w0 >= 0 && pick == 0);
	CHECK(win_of(&s, 1, UPROBE_ACCESS_FINAL, &pick) == w0 && pick == 168);
	CHECK(win_of(&s, 2, UPROBE_ACCESS_DEREF(0), &pick) == w0 && pick == 40);
	CHECK(win_of(&s, 4, UPROBE_ACCESS_DEREF(0), &pick) == w0 && pick == 40);
	CHECK(w0 >= 0 && s.windows[w0].at.src == UPROBE_SRC_RAX && s.windows[w0].at.nderef == 0 &&
	      s.windows[w0].lo == 8 && s.windows[w0].len == 176);
	/* The raftLog's fields: a window behind a dereference that itself uses the first one. */
	w1 = win_of(&s, 2, UPROBE_ACCESS_FINAL, &pick);
	CHECK(w1 > w0 && pick == 64);
	CHECK(win_of(&s, 3, UPROBE_ACCESS_FINAL, &pick) == w1 && pick == 40);
	CHECK(win_of(&s, 4, UPROBE_ACCESS_DEREF(1), &pick) == w1 && pick == 0);
	CHECK(w1 >= 0 && s.windows[w1].at.nderef == 1 && s.windows[w1].at.deref_off[0] == 48 &&
	      s.windows[w1].lo == 8 && s.windows[w1].len == 72);
	CHECK(w1 >= 0 && s.windows[w1].at.win[UPROBE_ACCESS_DEREF(0)] == w0 + 1 &&
	      s.windows[w1].at.pick[UPROBE_ACCESS_DEREF(0)] == 40);
	/* A field alone behind its own pointer reads itself. */
	CHECK(win_of(&s, 4, UPROBE_ACCESS_FINAL, &pick) == -1);
	/* The message: MEM reads at rsp and the stack slot of a STACK source are one expression. */
	w2 = win_of(&s, 5, UPROBE_ACCESS_FINAL, &pick);
	CHECK(w2 >= 0 && w2 != w0 && w2 != w1 && pick == 0);
	CHECK(win_of(&s, 6, UPROBE_ACCESS_FINAL, &pick) == w2 && pick == 296);
	CHECK(win_of(&s, 7, UPROBE_ACCESS_SLOT, &pick) == w2 && pick == 48);
	CHECK(win_of(&s, 7, UPROBE_ACCESS_FINAL, &pick) == -1);
	CHECK(w2 >= 0 && s.windows[w2].at.src == UPROBE_SRC_RSP && s.windows[w2].len == 297);
	/* A register's value is no memory access. */
	for (unsigned a = 0; a < UPROBE_ACCESSES; a++)
		CHECK(s.reads[8].win[a] == 0);
}

/* What gets no window: a single access, fields farther apart than a window, a stash, arrays and
 * blocks (their sizes are known only at the hit); and at most UPROBE_MAX_WINDOWS windows, the
 * ones that serve the most accesses. */
static void test_limits(void)
{
	struct probe_spec s;
	unsigned pick;

	memset(&s, 0, sizeof(s));
	s.reads[0] = uprobe_read_at(UPROBE_SRC_RDI, 0, UPROBE_READ_MEM, 8, 0, 0, NULL);
	/* one byte too far */
	s.reads[1] = uprobe_read_at(UPROBE_SRC_RDI, 0, UPROBE_READ_MEM, 8, UPROBE_WINDOW_BYTES, 0, NULL);
	s.reads[2] = uprobe_read_at(UPROBE_SRC_STASH, 0, UPROBE_READ_MEM, 8, 0, 0, NULL);
	s.reads[3] = uprobe_read_at(UPROBE_SRC_STASH, 0, UPROBE_READ_MEM, 8, 8, 0, NULL);
	s.reads[4] = uprobe_read_at(UPROBE_SRC_RSI, 0, UPROBE_READ_MEM, 8, 0, 0, NULL);
	s.reads[5] = (struct uprobe_read){ .src = UPROBE_SRC_RSI, .kind = UPROBE_READ_BLOCK, .size = 16, .off = 8 };
	s.nreads = 6;
	memset(s.reads[0].win, 7, sizeof(s.reads[0].win)); /* an author's junk is replaced */
	uprobe_plan_windows(&s);
	CHECKF(s.nwindows == 0, "%u windows", s.nwindows);
	for (unsigned k = 0; k < s.nreads; k++)
		for (unsigned a = 0; a < UPROBE_ACCESSES; a++)
			CHECK(win_of(&s, k, a, &pick) == -1);

	/* Six registers with 2..7 fields each: the four with the most get windows. */
	memset(&s, 0, sizeof(s));
	for (unsigned g = 0; g < 6; g++)
		for (unsigned f = 0; f < g + 2 && s.nreads < UPROBE_MAX_READS; f++)
			s.reads[s.nreads++] = uprobe_read_at((uint8_t)(UPROBE_SRC_R8 + g), 0, UPROBE_READ_MEM, 8, (int32_t)(8 * f), 0, NULL);
	uprobe_plan_windows(&s);
	CHECKF(s.nwindows == UPROBE_MAX_WINDOWS, "%u windows", s.nwindows);
	for (unsigned k = 0; k < s.nreads; k++) {
		bool small = s.reads[k].src < UPROBE_SRC_R8 + 2; /* the two with 2 and 3 fields */
		CHECKF((win_of(&s, k, UPROBE_ACCESS_FINAL, &pick) == -1) == small, "read %u", k);
	}
}

int main(void)
{
	RUN(test_receiver_and_message);
	RUN(test_limits);
	TEST_MAIN_END("test_uprobe_windows");
}
