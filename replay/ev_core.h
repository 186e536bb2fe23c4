/* Internal: the evaluation context itself (the evaluator, the checker and tests create one). */
#ifndef SPECTAP_REPLAY_EV_CORE_H
#define SPECTAP_REPLAY_EV_CORE_H

#include "eval.h"
#include "spectap/buf.h"

struct ev {
	struct spt_arena *arena;
	struct eval_error err;
	bool failed;
	struct spt_buf show;     /* ev_show's text */
	struct spt_buf show2;    /* a second one, so that one message can show two values */
	bool show_flip;
	void *checker;           /* the evaluator's own state (states, environments) */
	void *tlc;               /* TLCSet/TLCGet registers (builtins_tlc.c) */
};

void ev_init(struct ev *ev, struct spt_arena *a);
void ev_fini(struct ev *ev);
/* Forgets a previous error. */
void ev_clear_error(struct ev *ev);
/* Frees the TLC registers (builtins_tlc.c). */
void bi_tlc_fini(struct ev *ev);

#endif
