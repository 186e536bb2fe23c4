/*
 * Fuzz target for Transition Validation: each input line is a window checked against the Raft
 * test spec (tests/replay/raft), for one of its actions picked by the line's first byte. Any
 * value can land in any variable: evaluation errors are fine, crashes and leaks are not.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spectap/json.h"

static struct checker *ck;
static const char *const actions[] = { "Timeout", "RequestVote", "HandleRequestVoteRequest", "BecomeLeader",
				       "ClientRequest", "AppendEntries", "HandleAppendEntriesRequest", "AdvanceCommitIndex" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check_error err;
	if (!ck && checker_new(SPEC_DIR "/Raft.tla", NULL, &ck, &err))
		abort(); /* the test spec itself must load */
	if (size < 2)
		return 0;
	const char *action = actions[data[0] % (sizeof(actions) / sizeof(actions[0]))];
	struct spt_arena *a = checker_window_arena(ck);
	spt_arena_reset(a);
	spt_val *w;
	struct spt_json_error je;
	if (spt_json_parse(a, (const char *)data + 1, size - 1, 0, &w, &je) || w->kind != SPT_REC)
		return 0;
	spt_val *pre = spt_rec_get(w, "pre_state"), *post = spt_rec_get(w, "post_state");
	if (!pre || !post || pre->kind != SPT_REC || post->kind != SPT_REC)
		return 0;
	struct window_result res;
	if (checker_window(ck, action, pre, post, spt_rec_get(w, "params"), &res, &err) && !err.msg[0])
		abort(); /* every error explains itself */
	return 0;
}
