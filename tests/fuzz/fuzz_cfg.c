/*
 * Fuzz target for the model configuration reader: the input is a .cfg for a fixed spec with
 * constants of each kind (a value, a model value set, an operator to override), loaded as
 * `spectap check` loads it: parsed, names checked against the spec, constants bound. Errors are
 * fine; crashes, leaks and sanitizer reports are not, and every failure explains itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fuzz_dir.h"


static const char spec_text[] = "---- MODULE S ----\n"
				"EXTENDS Naturals, Sequences, FiniteSets, TLC\n"
				"CONSTANTS N, Nodes, Limit(_)\n"
				"VARIABLE x\n"
				"Init == x = 0\n"
				"Next == x < N /\\ x' = x + 1\n"
				"Spec == Init /\\ [][Next]_x\n"
				"Inv == x <= N\n"
				"Small == x < Limit(N)\n"
				"Sym == Permutations(Nodes)\n"
				"View == x\n"
				"Double(k) == 2 * k\n"
				"====\n";

static const char *const files[] = { "S.tla", "S.cfg", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_dir_make("fuzz_cfg", files))
		fuzz_write("S.tla", spec_text, NULL, 0, "");
	fuzz_write("S.cfg", "", data, size, "");
	char spec[128], cfg[128];
	fuzz_path(spec, sizeof(spec), "S.tla");
	fuzz_path(cfg, sizeof(cfg), "S.cfg");
	struct checker *ck;
	struct check_error err = { "" };
	if (checker_new(spec, cfg, &ck, &err)) {
		if (!err.msg[0])
			abort(); /* every failure explains itself */
		return 0;
	}
	checker_free(ck);
	return 0;
}
