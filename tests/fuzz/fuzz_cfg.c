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

static char dir[64];

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

static void write_file(const char *name, const void *data, size_t size)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
}

/* The files and their directory go when the fuzzer exits (libFuzzer exits through exit()). */
static void remove_dir(void)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/S.tla", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/S.cfg", dir);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_cfg.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
		write_file("S.tla", spec_text, sizeof(spec_text) - 1);
	}
	write_file("S.cfg", data, size);
	char spec[128], cfg[128];
	snprintf(spec, sizeof(spec), "%s/S.tla", dir);
	snprintf(cfg, sizeof(cfg), "%s/S.cfg", dir);
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
