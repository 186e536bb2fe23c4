/*
 * Fuzz target for the TLA+ front end and evaluator: the input is a module's text. It is loaded
 * as a spec; when it loads, every definition without parameters is evaluated on an empty state
 * with a step budget. Errors are fine; crashes, leaks and sanitizer reports are not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_dir.h"
#include "interp.h"

static const char *const files[] = { "M.tla", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dir_make("fuzz_spec", files);
	/* Give the mutator a module header for free, so it explores bodies, not just headers. */
	fuzz_write("M.tla", "---- MODULE M ----\nEXTENDS Naturals, Sequences, FiniteSets, TLC\n", data, size, "\n====\n");
	char path[128];
	fuzz_path(path, sizeof(path), "M.tla");
	struct spec *s;
	struct spec_error err;
	if (spec_load(path, &s, &err)) {
		if (!err.msg[0])
			abort(); /* every failure explains itself */
		return 0;
	}
	struct spt_arena a, longa;
	spt_arena_init(&a);
	spt_arena_init(&longa);
	struct interp in;
	interp_init(&in, s, &longa);
	in.ev.arena = &a;
	in.max_steps = 20000;
	struct module *m = spec_root(s);
	for (uint32_t i = 0; i < m->n_defs; i++) {
		struct opdef *d = m->defs[i];
		if (d->n_params)
			continue;
		spt_val *v;
		ev_clear_error(&in.ev);
		in.steps = 0;
		in.ev.arena = &a;
		if (eval_call(&in, d, NULL, 0, &v) && !in.ev.err.msg[0])
			abort();
		spt_arena_reset(&a);
	}
	interp_fini(&in);
	spt_arena_fini(&a);
	spt_arena_fini(&longa);
	spec_free(s);
	return 0;
}
