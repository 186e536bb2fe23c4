/* Parts 2 and 3, on bench/go/hitloop: what one probe hit costs by site kind (entry vs RET), and
 * how many events per second the collector writes without loss. The probe reads what etcd's
 * (*raft).Step probes read (systems/etcd/probes.c): 10 fields of the receiver through 0-3
 * pointer hops and 12 of the message on the stack, one of them an ARRAY read of the entries'
 * terms, so every hit writes a full record as Step and send do. hitloop's structs have etcd's
 * offsets (it checks them at start). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_etcd.h"
#include "gobin.h"
#include "supervise.h"

#define STEP_FN "main.(*raft).Step"

/* The offsets of systems/etcd/probes.c (Debian's etcd 3.4.23), mirrored by hitloop. */
enum {
	RAFT_ID = 0, RAFT_TERM = 8, RAFT_VOTE = 16, RAFT_RAFTLOG = 48, RAFT_STATE = 136, RAFT_LEAD = 176,
	LOG_STORAGE_DATA = 8, LOG_UNSTABLE_ENTRIES = 24, LOG_UNSTABLE_OFFSET = 48, LOG_COMMITTED = 72,
	MEMSTORAGE_ENTS = 272, ENTRY_SIZE = 72, ENTRY_TERM = 0, ENTRY_INDEX = 8,
	MSG_AT = 8, MSG_TYPE = 0, MSG_TO = 8, MSG_FROM = 16, MSG_TERM = 24, MSG_LOGTERM = 32, MSG_INDEX = 40,
	MSG_ENTRIES = 48, MSG_COMMIT = 72, MSG_REJECT = 296, MSG_REJECT_HINT = 304, MSG_CONTEXT = 312,
	RECEIVER_SPILL = 8 + 360, /* Step's receiver spill slot at a RET, as in etcd's Step */
	NSTATE = 10, NREADS = 22, TERMS_READ = 18, NENTRIES_READ = 16,
};

/* The receiver from src (RAX at the entry, its spill slot at a RET); full: the entries' terms
 * as an ARRAY read (a full record), else one more MEM read (a compact record). */
static void step_spec(struct probe_spec *s, uint8_t src, int32_t so, bool full)
{
	static const int32_t to_log[] = { RAFT_RAFTLOG };
	static const int32_t to_storage[] = { RAFT_RAFTLOG, LOG_STORAGE_DATA };
	static const int32_t to_ents[] = { RAFT_RAFTLOG, LOG_STORAGE_DATA, MEMSTORAGE_ENTS };
	struct uprobe_read *r = s->reads;
	unsigned i = 0;

	memset(s, 0, sizeof(*s));
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_ID, 0, NULL);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_TERM, 0, NULL);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_VOTE, 0, NULL);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_STATE, 0, NULL);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, RAFT_LEAD, 0, NULL);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, LOG_COMMITTED, 1, to_log);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, LOG_UNSTABLE_OFFSET, 1, to_log);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, LOG_UNSTABLE_ENTRIES + 8, 1, to_log);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, MEMSTORAGE_ENTS + 8, 2, to_storage);
	r[i++] = uprobe_read_at(src, so, UPROBE_READ_MEM, 8, ENTRY_INDEX, 3, to_ents);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 4, MSG_AT + MSG_TYPE, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_TO, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_FROM, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_TERM, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_LOGTERM, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_INDEX, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_ENTRIES + 8, 0, NULL); /* NENTRIES_READ */
	r[i++] = uprobe_read_at(UPROBE_SRC_STACK, MSG_AT + MSG_ENTRIES, UPROBE_READ_MEM, 8, ENTRY_TERM, 0, NULL);
	if (full) { /* TERMS_READ */
		r[i] = uprobe_read_at(UPROBE_SRC_STACK, MSG_AT + MSG_ENTRIES, UPROBE_READ_MEM, UPROBE_MAX_ELEMS, ENTRY_TERM, 0, NULL);
		r[i].kind = UPROBE_READ_ARRAY;
		r[i].flags = UPROBE_READ_TAIL;
		r[i].len_read = NENTRIES_READ;
		r[i++].stride = ENTRY_SIZE;
	} else {
		r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_CONTEXT + 8, 0, NULL);
	}
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_COMMIT, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 1, MSG_AT + MSG_REJECT, 0, NULL);
	r[i++] = uprobe_read_at(UPROBE_SRC_RSP, 0, UPROBE_READ_MEM, 8, MSG_AT + MSG_REJECT_HINT, 0, NULL);
	s->nreads = i;
}

/* The collector's generic path: the receiver's reads in the state, the message's in the args. */
static const struct collect_table *step_table(void)
{
	static const char *const names[NREADS] = {
		"id", "term", "vote", "state", "lead", "commit", "unstable.offset", "unstable.len", "storage.len",
		"storage.first", "msg.type", "msg.to", "msg.from", "msg.term", "msg.logTerm", "msg.index",
		"msg.entries", "msg.entries[0].term", "msg.entries.terms", "msg.commit", "msg.reject",
		"msg.rejectHint",
	};
	static struct collect_probe p = { .probe_id = 1, .kind = "Step", .nfields = NREADS };
	static const struct collect_table t = { &p, 1 };
	for (unsigned k = 0; k < NREADS; k++)
		p.fields[k] = (struct collect_field){ names[k], k < NSTATE ? COLLECT_STATE : COLLECT_ARGS, COLLECT_UINT };
	return &t;
}

enum site { NONE, ENTRY, RET, BRANCH };

struct hit_attach {
	const char *path;
	enum site site;
	bool full;
	char kind[64]; /* the site's first instruction: kind (mnemonic) */
};

static int attach_step(void *ctx, struct uprobe_loader *l, char *err, size_t errlen)
{
	struct hit_attach *a = ctx;
	char gerr[GOBIN_ERRBUF_SIZE] = "";
	struct gobin *g;
	struct gobin_func f;
	struct gobin_sites st;
	struct probe_spec spec;
	int rc, n = 0;

	if (a->site == NONE)
		return 0;
	if ((rc = gobin_open(a->path, &g, gerr)))
		goto gerr;
	if ((rc = gobin_func_find(g, STEP_FN, &f, gerr)) || (rc = gobin_sites(g, &f, &st, gerr))) {
		gobin_close(g);
		goto gerr;
	}
	if (a->site == ENTRY) {
		step_spec(&spec, UPROBE_SRC_RAX, 0, a->full);
		snprintf(a->kind, sizeof(a->kind), "%s (%s)", gobin_site_kind_name(st.entry_kind), st.entry_mnemonic);
		if (!(rc = uprobe_attach(l, a->path, st.entry_off, 1, &spec, -1)))
			n = 1;
	} else if (a->site == BRANCH) {
		step_spec(&spec, UPROBE_SRC_RAX, 0, a->full);
		snprintf(a->kind, sizeof(a->kind), "%s (jbe)", gobin_site_kind_name(GOBIN_SITE_BRANCH));
		rc = st.entry_branch_off ? uprobe_attach(l, a->path, st.entry_branch_off, 1, &spec, -1) : -ENOENT;
		if (!rc)
			n = 1;
	} else {
		uint8_t op = 0;
		step_spec(&spec, UPROBE_SRC_STACK, RECEIVER_SPILL, a->full);
		gobin_read(g, st.nret ? st.ret_va[0] : 0, &op, 1);
		/* gobin classifies entries only; a RET (c3) is neither a nop nor a push. */
		snprintf(a->kind, sizeof(a->kind), "%s (%s)", gobin_site_kind_name(GOBIN_SITE_OTHER),
			 op == 0xc3 ? "ret" : "?");
		for (size_t i = 0; i < st.nret && !rc; i++)
			if (!(rc = uprobe_attach(l, a->path, st.ret_off[i], 1, &spec, -1)))
				n++;
	}
	if (rc)
		snprintf(err, errlen, "attaching to %s in %s: %s", STEP_FN, a->path, uprobe_loader_error(l));
	gobin_sites_free(&st);
	gobin_close(g);
	return rc ? rc : n;
gerr:
	snprintf(err, errlen, "%s", gerr);
	return rc;
}

/* Runs hitloop with args under a capture of a; its output line into out. */
static int hitloop(const struct bench_opts *o, struct hit_attach *a, const char *args, bool defer, char *out,
		   size_t outlen, struct capture_result *cr)
{
	static const char *const nodes[] = { "hitloop" };
	char err[1024] = "", cmd[4096];
	struct capture *cap;
	/* live: these parts measure the collector turning records into events as it drains them
	 * (bench/RESULTS.md, "Events per second the collector sustains"), not the spool's copy. */
	struct capture_cfg cfg = { .attach = attach_step, .ctx = a, .table = step_table(), .defer_drain = defer,
				   .live = true, .system = "hitloop", .nodes = nodes, .n_nodes = 1 };
	int rc;

	a->path = o->hitloop;
	if ((rc = capture_start(&cap, &cfg, err, sizeof(err)))) {
		fprintf(stderr, "bench_etcd: probes: %s\n", err);
		return rc;
	}
	/* No shell: the path is the user's. args are ours, words split at spaces. */
	snprintf(cmd, sizeof(cmd), "%s", args);
	const char *argv[16] = { o->hitloop };
	size_t n = 1;
	for (char *save, *w = strtok_r(cmd, " ", &save); w && n + 1 < sizeof(argv) / sizeof(argv[0]);
	     w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	struct sup_output so = { 0 };
	char serr[SUP_ERR_SIZE] = "";
	out[0] = 0;
	if (sup_run_capture(argv, NULL, 600000, &so, serr) || !WIFEXITED(so.status) || WEXITSTATUS(so.status))
		rc = -EIO;
	if (so.out)
		snprintf(out, outlen, "%.*s", (int)strcspn(so.out, "\n"), so.out);
	if (!rc && !out[0])
		rc = -EIO;
	if (rc)
		fprintf(stderr, "bench_etcd: %s %s failed (%s%s)\n", o->hitloop, args, serr, out);
	sup_output_free(&so);
	int src = capture_stop(cap, cr, err, sizeof(err));
	if (src)
		fprintf(stderr, "bench_etcd: collector: %s\n", err);
	return rc ? rc : src;
}

#define HIT_CFGS 5
#define HIT_ROUNDS 3

int bench_hits(const struct bench_opts *o, struct hits_summary *s)
{
	static const struct {
		const char *name;
		enum site site;
		bool full;
	} cfgs[HIT_CFGS] = {
		{ "no probe", NONE, true },
		{ "entry, full record", ENTRY, true },
		{ "every RET, full record", RET, true },
		{ "entry, compact record", ENTRY, false },
		{ "stack-check jbe, full", BRANCH, true },
	};
	/* ns per call, on the thread's CPU time (what a hit costs the probed thread, not inflated by
	 * the other work on a busy machine) and on the wall clock (what the loop saw) */
	double cpu[HIT_ROUNDS][HIT_CFGS], wall[HIT_ROUNDS][HIT_CFGS], hit[HIT_CFGS][HIT_ROUNDS], hitw[HIT_CFGS][HIT_ROUNDS];
	char args[128], out[256];

	printf("hits: %s on bench/go/hitloop, a 360-byte message by value; %u timed runs of %u calls (median), "
	       "300 ms apart so that the collector drains between them; %d rounds over the probe settings, in a "
	       "rotating order\n", STEP_FN, o->reps, o->calls, HIT_ROUNDS);
	snprintf(args, sizeof(args), "-calls %u -reps %u -pause 300ms", o->calls, o->reps);
	for (unsigned r = 0; r < HIT_ROUNDS; r++) {
		for (unsigned k = 0; k < HIT_CFGS; k++) {
			unsigned i = (k + r) % HIT_CFGS;
			struct hit_attach a = { .site = cfgs[i].site, .full = cfgs[i].full, .kind = "-" };
			struct capture_result cr;
			double min;
			int rc = hitloop(o, &a, args, false, out, sizeof(out), &cr);
			if (rc)
				return rc;
			if (sscanf(out, "ns_per_call=%lf min=%lf cpu_ns_per_call=%lf", &wall[r][i], &min, &cpu[r][i]) != 3) {
				fprintf(stderr, "bench_etcd: hitloop printed '%s'\n", out);
				return -EPROTO;
			}
			printf("  round %u %-24s %2d sites, first instruction %-13s %8.1f ns/call cpu, %8.1f wall (min %8.1f)  "
			       "events %" PRIu64 " lost %" PRIu64 "\n", r + 1, cfgs[i].name, cr.sites, a.kind, cpu[r][i],
			       wall[r][i], min, cr.events, cr.lost);
		}
		for (unsigned i = 0; i < HIT_CFGS; i++) {
			hit[i][r] = cpu[r][i] - cpu[r][0];
			hitw[i][r] = wall[r][i] - wall[r][0];
		}
	}
	for (unsigned i = 1; i < HIT_CFGS; i++) {
		double c[HIT_ROUNDS], w[HIT_ROUNDS];
		memcpy(c, hit[i], sizeof(c));
		memcpy(w, hitw[i], sizeof(w));
		printf("  %-24s %7.0f ns/hit of CPU (rounds %.0f %.0f %.0f); wall clock %7.0f ns/hit\n", cfgs[i].name,
		       bench_median(c, HIT_ROUNDS), hit[i][0], hit[i][1], hit[i][2], bench_median(w, HIT_ROUNDS));
	}
	s->entry_ns = bench_median(hit[1], HIT_ROUNDS);
	s->ret_ns = bench_median(hit[2], HIT_ROUNDS);
	s->done = true;
	printf("  record sizes: %zu (compact), %zu (full) bytes\n", sizeof(struct uprobe_event),
	       sizeof(struct uprobe_event_full));
	return 0;
}

struct rate_run {
	double offered, written, seconds; /* hits/s, events/s over hitloop's run */
	uint64_t events, lost;
	double cpu_us; /* collector CPU per event */
	double hit_us; /* hitloop threads' CPU per call: what a hit costs them */
};

static int rate_run(const struct bench_opts *o, unsigned threads, double rate, struct rate_run *r)
{
	struct hit_attach a = { .site = ENTRY, .full = true };
	struct capture_result cr;
	char args[128], out[256];
	unsigned long long calls;
	double cpu_s;

	snprintf(args, sizeof(args), "-threads %u -duration %ums -rate %.0f", threads, o->rate_ms, rate);
	int rc = hitloop(o, &a, args, false, out, sizeof(out), &cr);
	if (rc)
		return rc;
	if (sscanf(out, "calls=%llu seconds=%lf cpu_seconds=%lf", &calls, &r->seconds, &cpu_s) != 3) {
		fprintf(stderr, "bench_etcd: hitloop printed '%s'\n", out);
		return -EPROTO;
	}
	r->offered = (double)calls / r->seconds;
	r->written = (double)cr.events / r->seconds;
	r->events = cr.events;
	r->lost = cr.lost;
	r->cpu_us = cr.events ? 1e6 * cr.cpu_s / (double)cr.events : 0;
	r->hit_us = calls ? 1e6 * cpu_s / (double)calls : 0;
	printf("    %u thread%s %-9s offered %8.0f hits/s  written %8.0f events/s  lost %8" PRIu64
	       "  collector %.2f us/event  hitloop %.1f us of CPU/hit\n", threads, threads > 1 ? "s" : " ",
	       rate > 0 ? "paced" : "flat out", r->offered, r->written, r->lost, r->cpu_us, r->hit_us);
	fflush(stdout);
	return 0;
}

int bench_rate(const struct bench_opts *o)
{
	size_t ring_records = BENCH_RINGBUF / (sizeof(struct uprobe_event_full) + 8); /* + the ring's header */
	printf("rate: hitloop threads calling %s flat out, entry probe (full records of %zu bytes; the %u MiB ring "
	       "holds %zu), collector draining every 10 ms, runs of %u ms\n",
	       STEP_FN, sizeof(struct uprobe_event_full), BENCH_RINGBUF >> 20, ring_records, o->rate_ms);

	/* The collector alone: the ring filled to 80% with nothing draining, then drained, written and
	 * closed in one go on one thread. */
	struct hit_attach fa = { .site = ENTRY, .full = true };
	struct capture_result cr;
	char args[128], out[256];
	unsigned fill = (unsigned)(ring_records * 8 / 10) - 1000; /* hitloop warms up with 1000 calls */
	snprintf(args, sizeof(args), "-calls %u -reps 1 -pause 1ms", fill);
	int frc = hitloop(o, &fa, args, true, out, sizeof(out), &cr);
	if (frc)
		return frc;
	printf("  collector alone: %" PRIu64 " records drained, written and the trace closed in %.3f s (%.3f s of its "
	       "thread's CPU): %.0f events/s of CPU (%.2f us/event), lost %" PRIu64 ", trace %.1f bytes/event\n",
	       cr.records, cr.drain_s, cr.drain_cpu_s, (double)cr.events / cr.drain_cpu_s,
	       1e6 * cr.drain_cpu_s / (double)(cr.events ? cr.events : 1), cr.lost,
	       (double)cr.bytes / (double)(cr.events ? cr.events : 1));
	double best_all = 0;
	for (unsigned t = 0; t < o->nthreads; t++) {
		struct rate_run flat, r;
		int rc = rate_run(o, o->threads[t], 0, &flat);
		if (rc)
			return rc;
		double best = flat.lost ? 0 : flat.offered;
		if (flat.lost) {
			/* Bisect the paced rate between 0 and the flat-out rate: the highest with no loss. */
			double lo = 0, hi = flat.offered;
			for (int k = 0; k < 5; k++) {
				double mid = (lo + hi) / 2;
				if ((rc = rate_run(o, o->threads[t], mid, &r)))
					return rc;
				if (r.lost) {
					hi = mid;
				} else {
					lo = mid;
					best = r.offered > best ? r.offered : best;
				}
			}
		}
		printf("  %u thread%s: highest rate with 0 lost: %.0f events/s%s\n", o->threads[t],
		       o->threads[t] > 1 ? "s" : "", best, flat.lost ? "" : " (flat out: the probes, not the collector, set it)");
		best_all = best > best_all ? best : best_all;
	}
	printf("  sustained without loss: %.0f events/s (record %zu bytes)\n", best_all, sizeof(struct uprobe_event_full));
	return 0;
}
