/* An event, or its message, as one TLA+ record (event.h): what mappings and the modules a
 * system's data defines (an export dialect) receive. */
#include "spectap/event.h"

spt_val *spt_msg_value(struct spt_arena *a, const struct spt_msg *mm, bool with_dir)
{
	const char *names[6] = { "id", "from", "to", "type", "fields", "dir" };
	spt_val *vals[6] = { spt_int(a, (int64_t)mm->id), spt_cstr(a, mm->from), spt_cstr(a, mm->to), spt_cstr(a, mm->type),
			     mm->fields ? mm->fields : spt_empty_fun(a, SPT_REC),
			     spt_cstr(a, mm->dir == SPT_MSG_SEND ? "send" : "recv") };
	for (int i = 0; i < 6; i++)
		if (!vals[i])
			return NULL;
	return spt_rec(a, names, vals, with_dir ? 6 : 5);
}

spt_val *spt_event_value(struct spt_arena *a, const struct spt_event *ev)
{
	const char *names[9] = { "node", "kind", "seq", "ts", "lamport", "tid", "state", "args", "msg" };
	spt_val *vals[9] = { spt_cstr(a, ev->node), spt_cstr(a, ev->kind), spt_int(a, (int64_t)ev->seq),
			     spt_int(a, (int64_t)ev->ts_ns), spt_int(a, (int64_t)ev->lamport), spt_int(a, (int64_t)ev->tid),
			     ev->state ? ev->state : spt_empty_fun(a, SPT_REC), ev->args ? ev->args : spt_empty_fun(a, SPT_REC),
			     ev->msg ? spt_msg_value(a, ev->msg, true) : NULL };
	for (int i = 0; i < (ev->msg ? 9 : 8); i++)
		if (!vals[i])
			return NULL;
	return spt_rec(a, names, vals, ev->msg ? 9 : 8);
}
