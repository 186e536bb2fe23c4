/*
 * Fuzz target for mappings: the input is the body of a mapping module (after its EXTENDS line)
 * for a fixed spec. It is loaded as `spectap check --map` loads it and, when it loads, run over
 * a fixed trace of a two-node counter (states, arguments, a message sent and received), each
 * window checked against the spec, with a step budget per call. Errors are fine; crashes, leaks
 * and sanitizer reports are not, and every failure explains itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fuzz_dir.h"
#include "mapping.h"
#include "spectap/trace.h"


static const char spec_text[] = "---- MODULE S ----\n"
				"EXTENDS Naturals, Sequences, TLC\n"
				"Nodes == {\"a\", \"b\"}\n"
				"VARIABLES count, log, net\n"
				"Init == count = [n \\in Nodes |-> 0] /\\ log = <<>> /\\ net = {}\n"
				"Inc(n) == /\\ count' = [count EXCEPT ![n] = @ + 1]\n"
				"          /\\ log' = Append(log, n)\n"
				"          /\\ UNCHANGED net\n"
				"Send(n, m) == /\\ net' = net \\cup {m} /\\ UNCHANGED <<count, log>>\n"
				"Recv(n, m) == /\\ m \\in net /\\ net' = net \\ {m} /\\ UNCHANGED <<count, log>>\n"
				"Next == \\E n \\in Nodes : Inc(n) \\/ \\E m \\in net : Recv(n, m)\n"
				"====\n";

static const char *const node_names[] = { "a", "b" };

static const char *const files[] = { "S.tla", "Map.tla", "t.spt", NULL };

/* Eight events: a and b count up in turns; a's third event sends b a message that b's next
 * event receives. */
static void write_trace(void)
{
	struct spt_arena a;
	spt_arena_init(&a);
	char path[128];
	fuzz_path(path, sizeof(path), "t.spt");
	struct spt_header h = { .system = "counter", .nodes = node_names, .n_nodes = 2, .capture_method = "fuzz" };
	struct spt_writer_opts wo = { .sz = sizeof(wo) };
	struct spt_writer *w;
	struct spt_diag d = { "" };
	if (spt_writer_open(path, &h, &wo, &w, &d))
		abort();
	uint64_t seq[2] = { 0, 0 };
	static const char *const value_name[] = { "value" };
	static const char *const arg_name[] = { "by" };
	static const char *const field_name[] = { "n" };
	for (int i = 0; i < 8; i++) {
		int n = i % 2;
		spt_val *count = spt_int(&a, i / 2 + 1), *by = spt_int(&a, 1), *k = spt_int(&a, i);
		struct spt_msg m = { .id = 1, .dir = i == 4 ? SPT_MSG_SEND : SPT_MSG_RECV, .from = "a", .to = "b",
				     .type = "Ping", .fields = spt_rec(&a, field_name, &k, 1) };
		struct spt_event ev = { .node = node_names[n], .source = "fuzz", .seq = ++seq[n], .ts_ns = (uint64_t)i + 1,
					.lamport = (uint64_t)i + 1, .kind = i == 4 ? "send" : i == 5 ? "recv" : "inc",
					.state = spt_rec(&a, value_name, &count, 1), .args = spt_rec(&a, arg_name, &by, 1),
					.msg = i == 4 || i == 5 ? &m : NULL };
		if (spt_writer_append(w, &ev))
			abort();
	}
	if (spt_writer_close(w, &d))
		abort();
	spt_arena_fini(&a);
}

static int check_window(void *arg, const struct map_window *w)
{
	struct checker *ck = arg;
	struct window_result res;
	struct check_error err = { "" };
	spt_arena_reset(checker_window_arena(ck));
	if (checker_window(ck, w->action, w->pre->n ? w->pre : NULL, w->post->n ? w->post : NULL, w->params, &res,
			   &err)) {
		if (!err.msg[0])
			abort(); /* every failure explains itself */
		return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_dir_make("fuzz_mapping", files)) {
		fuzz_write("S.tla", spec_text, NULL, 0, "");
		write_trace();
		checker_window_steps = 20000;
	}
	/* Give the mutator a module header for free, so it explores bodies, not just headers. */
	fuzz_write("Map.tla", "---- MODULE Map ----\nEXTENDS Spec, Naturals, Sequences, FiniteSets, TLC\n", data, size,
		   "\n====\n");
	char map[128], spec[128], trace[128];
	fuzz_path(map, sizeof(map), "Map.tla");
	fuzz_path(spec, sizeof(spec), "S.tla");
	fuzz_path(trace, sizeof(trace), "t.spt");
	struct mapping *m;
	struct check_error err = { "" };
	if (mapping_new(map, spec, NULL, &m, &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	struct spt_reader *r;
	struct spt_diag d = { "" };
	if (spt_reader_open(trace, &r, &d))
		abort();
	int rc = mapping_run(m, r, check_window, mapping_checker(m), &err);
	if (rc < 0 && !err.msg[0])
		abort();
	spt_reader_close(r);
	mapping_free(m);
	return 0;
}
