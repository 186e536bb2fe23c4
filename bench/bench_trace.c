/*
 * Trace file throughput on one core: writes N synthetic etcd-like events (tests/unit/gen_event.h)
 * with the default writer options, then reads them all back with full decoding.
 *
 *	bench_trace [events (default 1000000)] [path (default: a temp file, removed after)]
 *
 * Events are generated in batches of 64 right before they are written; only the writer calls are timed
 * (generation is reported on its own). Prints one "name value" line per figure.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../tests/unit/gen_event.h"
#include "spectap/trace.h"

#define BATCH 64 /* small, so that events are written while hot in cache, as a collector does */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pin_to_one_core(void)
{
	int cpu = sched_getcpu();
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	char path[256];
	bool keep = argc > 2;
	if (keep)
		snprintf(path, sizeof(path), "%s", argv[2]);
	else
		snprintf(path, sizeof(path), "/tmp/bench_trace.%d.spt", (int)getpid());
	pin_to_one_core();

	struct gen g;
	gen_init_nodes(&g, 12345, 5);
	struct spt_header h;
	gen_header(&g, &h);
	struct spt_writer_opts o = { .sz = sizeof(o), .overwrite = true };
	struct spt_writer *w;
	struct spt_diag d = { "" };
	if (spt_writer_open(path, &h, &o, &w, &d)) {
		fprintf(stderr, "bench_trace: %s\n", d.msg);
		return 1;
	}
	struct spt_arena a;
	spt_arena_init(&a);
	struct spt_event *batch = calloc(BATCH, sizeof(*batch));
	if (!batch)
		return 1;
	double t_gen = 0, t_write = 0;
	for (uint64_t done = 0; done < n;) {
		size_t k = n - done < BATCH ? (size_t)(n - done) : BATCH;
		double t0 = now();
		spt_arena_reset(&a);
		for (size_t i = 0; i < k; i++)
			if (!gen_next(&g, &a, &batch[i])) {
				fprintf(stderr, "bench_trace: out of memory\n");
				return 1;
			}
		double t1 = now();
		for (size_t i = 0; i < k; i++)
			if (spt_writer_append(w, &batch[i])) {
				fprintf(stderr, "bench_trace: append failed\n");
				return 1;
			}
		double t2 = now();
		t_gen += t1 - t0;
		t_write += t2 - t1;
		done += k;
	}
	double t0 = now();
	int rc = spt_writer_close(w, &d);
	double t_close = now() - t0;
	if (rc) {
		fprintf(stderr, "bench_trace: %s\n", d.msg);
		return 1;
	}
	spt_arena_fini(&a);
	free(batch);

	struct stat st;
	if (stat(path, &st)) {
		perror(path);
		return 1;
	}

	/* Read back: every event fully decoded (values built) by the reader. */
	t0 = now();
	struct spt_reader *r;
	if (spt_reader_open(path, &r, &d)) {
		fprintf(stderr, "bench_trace: %s\n", d.msg);
		return 1;
	}
	const struct spt_event *ev;
	uint64_t got = 0, sum = 0;
	while ((rc = spt_reader_next(r, &ev)) == 1) {
		sum += ev->seq + (ev->state ? ev->state->n : 0) + (ev->msg ? 1 : 0);
		got++;
	}
	double t_read = now() - t0;
	spt_reader_close(r);
	if (rc < 0 || got != n) {
		fprintf(stderr, "bench_trace: read %llu of %llu events (rc %d)\n",
			(unsigned long long)got, (unsigned long long)n, rc);
		return 1;
	}
	if (!keep)
		unlink(path);

	printf("events %llu\n", (unsigned long long)n);
	printf("gen_events_per_s %.0f\n", (double)n / t_gen);
	printf("write_events_per_s %.0f\n", (double)n / t_write);
	printf("close_s %.3f\n", t_close);
	printf("read_events_per_s %.0f\n", (double)n / t_read);
	printf("bytes_per_event %.2f\n", (double)st.st_size / (double)n);
	printf("file_bytes %lld\n", (long long)st.st_size);
	printf("checksum %llu\n", (unsigned long long)sum);
	return 0;
}
