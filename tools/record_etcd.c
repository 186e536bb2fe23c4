/* spectap record etcd: a real cluster, probed with eBPF uprobes, into one trace. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cluster.h"
#include "collect.h"
#include "record.h"
#include "record_corpus.h"
#include "probes.h"
#include "scenario.h"
#include "shape.h"
#include "supervise.h"

static const char usage[] =
	"usage: spectap record etcd --scenario NAME [--nodes N] [--seed S] -o OUT.spt [options]\n"
	"\n"
	"Starts an N-member cluster of Debian's unmodified /usr/bin/etcd on loopback, attaches eBPF\n"
	"uprobes to its raft code (role changes, every message sent and handled, log appends,\n"
	"commits), drives puts, runs the scenario, stops everything and writes one trace. At the end\n"
	"each member's term, commit index and leader in the trace are compared with what etcdctl\n"
	"reports. Needs root (BPF). Nothing is left running, even on Ctrl-C or an error.\n"
	"While the cluster runs, the raw records go to an unnamed spool file in OUT's directory\n"
	"(a few hundred bytes each); they become events when it stops, to take little CPU from it.\n"
	"With --described, the same events come from etcd's description instead (systems/etcd/\n"
	"system.yaml, Events.tla: no C; `spectap record etcd --described --help`, docs/etcd.md).\n"
	"\n"
	"  --scenario NAME  initial-election, steady-writes (300 puts), leader-kill (SIGKILL the\n"
	"                   leader), follower-pause (SIGSTOP a follower for 3 election timeouts),\n"
	"                   leader-restart (kill the leader, restart it), partition (cut the\n"
	"                   leader off with network namespaces, heal; etcd runs with\n"
	"                   --pre-vote), random (3 seeded faults); the fault scenarios drive\n"
	"                   1000 puts (random 2000) and strike after the first quarter of them\n"
	"                   is acknowledged, so a run does the same work on any machine\n"
	"  --puts N         puts of the scenario's load instead of its default\n"
	"  --nodes N        members, 3..9 (default 3)\n"
	"  --seed S         picks the faulted members and random faults (default 1)\n"
	"  -o, --output F   the trace to write;  -f, --force: replace it\n"
	"  --allow-loss     exit 0 even when events were lost (they are recorded either way)\n"
	RECORD_FLUSH_HELP
	"  --log-terms N    keep only the last N entry terms of each log in the state (default:\n"
	"                   the whole log, as a spec's log needs it)\n"
	"  --acked FILE     copy the acknowledged puts there (JSON lines: key, rev, ms)\n"
	"  --etcd PATH      the etcd binary (default /usr/bin/etcd)\n"
	"  --putload PATH   the put client (default: tools/putload beside this spectap)\n"
	"  --verify-steps   also probe every return of (*raft).Step and (*raftLog).commitTo, and\n"
	"                   compare what they read with the post-states and Commit events the trace\n"
	"                   takes from the member's next call (docs/etcd.md); exit 1 when one\n"
	"                   differs. Costs a single-stepped probe per message.\n"
	"  --json           print the summary as JSON\n"
	"  -h, --help       this text\n"
	"\n"
	CORPUS_HELP("--map M.tla --spec S.tla [--cfg C]")
	"                   (systems/etcd/spec: EtcdBenchMap.tla lists the actions and the vote\n"
	"                   and append answers, rejections included)\n"
	"\n"
	"partition and random run the members in network namespaces (10.231.k.0/24 on a bridge)\n"
	"instead of on 127.0.0.1, so that a member can be cut off.\n"
	"\n"
	"Exit status: 0 done, 1 failed, events lost (without --allow-loss) or the trace disagrees\n"
	"with etcdctl at the end, 2 usage, 128+N interrupted by signal N (SIGINT, SIGTERM, SIGHUP: the\n"
	"members are stopped and the trace keeps what was captured, marked incomplete).\n";

struct rec_opts {
	struct record_common com;
	const char *etcd, *putload, *acked;
	unsigned puts;
	bool verify;
	struct corpus_args cov; /* --until-covered */
};

/* --until-covered: the corpus loop runs this command once per seed, with these options. */
static int until_covered(struct cli *c, const struct rec_opts *o)
{
	const char *extra[7];
	char puts[16];
	size_t n = 0;
	if (o->puts) {
		snprintf(puts, sizeof(puts), "%u", o->puts);
		extra[n++] = "--puts";
		extra[n++] = puts;
	}
	extra[n++] = "--etcd";
	extra[n++] = o->etcd;
	if (o->putload) {
		extra[n++] = "--putload";
		extra[n++] = o->putload;
	}
	extra[n] = NULL;
	return corpus_run(c, &o->com, "etcd", &o->cov, NULL, NULL, NULL, extra);
}

struct session {
	struct cli *c;
	struct collect *col;
	uint64_t t0_ms;
};

static void progress(void *ctx, const char *what)
{
	struct session *s = ctx;

	record_progress(s->c, s->col, s->t0_ms, what);
}

static void name_node(void *ctx, unsigned member, int pid)
{
	struct session *s = ctx;
	char name[16];
	snprintf(name, sizeof(name), "n%u", member + 1);
	if (pid > 0)
		collect_set_node(s->col, pid, name);
}


/* Each live member's term, commit and leader in the trace against etcdctl's view at the end.
 * Returns the number of disagreements; writes the JSON array when json. */
static unsigned compare_final(const struct etcd_scenario *sc, const struct etcd_shape *shape, bool json, FILE *f)
{
	unsigned bad = 0;
	if (json)
		fputs("[", f);
	for (unsigned i = 0; i < sc->cl->n; i++) {
		const struct etcd_member_status *st = &sc->final[i];
		struct etcd_member_view v = { 0 };
		char node[16];
		snprintf(node, sizeof(node), "n%u", i + 1);
		bool seen = etcd_shape_member(shape, node, &v) == 0;
		bool match = !st->reachable || (seen && v.term == st->term && v.commit == st->raft_index && v.lead == st->leader);
		bad += !match;
		if (json) {
			fprintf(f, "%s{\"node\":\"%s\",\"live\":%s,\"term\":%" PRIu64 ",\"commit\":%" PRIu64 ",\"lead\":\"%" PRIx64 "\"",
				i ? "," : "", node, st->reachable ? "true" : "false", v.term, v.commit, v.lead);
			if (st->reachable)
				fprintf(f, ",\"etcdctl\":{\"term\":%" PRIu64 ",\"commit\":%" PRIu64 ",\"leader\":\"%" PRIx64 "\"}",
					st->term, st->raft_index, st->leader);
			fprintf(f, ",\"match\":%s}", match ? "true" : "false");
		} else if (!match) {
			fprintf(stderr,
				"spectap record: %s at the end: the trace has term %" PRIu64 ", commit %" PRIu64 ", leader %" PRIx64
				"; etcdctl reports term %" PRIu64 ", commit %" PRIu64 ", leader %" PRIx64 "\n",
				node, v.term, v.commit, v.lead, st->term, st->raft_index, st->leader);
		}
	}
	if (json)
		fputs("]", f);
	return bad;
}

static int record(struct cli *c, const struct rec_opts *o)
{
	if (geteuid() != 0)
		return cli_fail(c, "recording needs root (eBPF uprobes); run it as root");
	char err[1024] = "", dir[] = "/tmp/spectap-record-XXXXXX", pl_buf[PATH_MAX];
	struct uprobe_loader *l = NULL;
	struct spt_writer *w = NULL;
	struct collect *col = NULL;
	struct etcd_shape *shape = NULL;
	struct etcd_cluster cl;
	struct etcd_scenario sc;
	struct session ss = { c, NULL, sup_now_ms() };
	bool started = false, bg = false, made_dir = false;
	int rc = CLI_FAIL;
	const char *putload = o->putload ? o->putload : cli_beside_self("tools/putload", X_OK, pl_buf, sizeof(pl_buf));

	memset(&sc, 0, sizeof(sc));
	if (etcd_scenario_needs_load(o->com.scenario) && (!putload || access(putload, X_OK)))
		return cli_fail(c, "scenario %s drives puts with putload, which is not at %s: build it with `make` or "
			       "name it with --putload", o->com.scenario, putload ? putload : "tools/putload beside spectap");
	sup_install_interrupt();
	/* 8 MiB: about a second of etcd's records at full load (packed records, about 300 bytes);
	 * a larger ring costs every probe hit more on a virtualized guest (bench/RESULTS.md). */
	struct uprobe_loader_opts lo = { .ringbuf_bytes = 8u << 20 };
	if (uprobe_loader_open(&l, &lo, err, sizeof(err)))
		return cli_fail(c, "%s", err);
	struct etcd_probe_sites ps;
	int sites = etcd_probes_attach(l, o->etcd, o->verify ? ETCD_PROBE_VERIFY : 0, &ps, err, sizeof(err));
	if (sites < 0) {
		cli_fail(c, "%s", err);
		goto out;
	}
	if (etcd_shape_new(&shape, o->com.log_terms)) {
		cli_fail(c, "out of memory");
		goto out;
	}
	if (record_capture_open(c, &o->com, "etcd", "3.4.23 (Debian, go1.19.8)", "n", l, etcd_probe_table(),
				etcd_shape_event, etcd_shape_end, shape, &w, &col, &bg))
		goto out;
	ss.col = col;
	if (record_make_workdir(dir)) {
		cli_fail(c, "cannot create a work directory in /tmp: %s", strerror(errno));
		goto out;
	}
	made_dir = true;
	struct etcd_cluster_opts co = { .work_dir = dir, .members = o->com.nodes, .etcd = o->etcd,
					.netns = etcd_scenario_needs_netns(o->com.scenario),
					.pre_vote = etcd_scenario_pre_vote(o->com.scenario), .spawned = name_node,
					.spawned_ctx = &ss };
	if (etcd_cluster_start(&cl, &co)) {
		cli_fail(c, "%s", cl.err);
		goto out;
	}
	started = true;
	for (unsigned i = 0; i < cl.n; i++)
		name_node(&ss, i, etcd_cluster_pid(&cl, i));
	char msg[128];
	snprintf(msg, sizeof(msg), "%u etcd members up%s, %d probe sites attached (%u entry, %u return)", o->com.nodes,
		 co.netns ? " in network namespaces" : "", sites, ps.entry + ps.entry_branch, ps.ret);
	progress(&ss, msg);

	sc = (struct etcd_scenario){ .cl = &cl, .putload = putload, .seed = o->com.seed, .puts = o->puts, .phase = progress,
				     .ctx = &ss };
	if (etcd_scenario_run(&sc, o->com.scenario)) {
		if (sup_interrupted())
			goto interrupted;
		cli_fail(c, "scenario %s: %s", o->com.scenario, sc.err);
		goto out;
	}
	if (o->acked && sc.has_load && cli_copy_file(sc.load.acked_path, o->acked)) {
		cli_fail(c, "cannot copy the acknowledged puts to %s: %s", o->acked, strerror(errno));
		goto out;
	}
	/* SIGKILL, not SIGTERM: a terminated leader hands its leadership over, a step the
	 * scenario did not ask for; the trace ends in the state etcdctl last reported. */
	progress(&ss, "stopping the cluster");
	for (unsigned i = 0; i < cl.n; i++)
		if (etcd_cluster_pid(&cl, i) > 0)
			etcd_cluster_kill(&cl, i);
	etcd_cluster_stop(&cl);
	started = false;
	bg = false;
	uint64_t lost = 0;
	progress(&ss, "turning the captured records into events");
	if (collect_bg_stop(col) < 0 || collect_drain(col) < 0 || collect_finish(col, &lost) < 0) {
		cli_fail(c, "%s", collect_error(col));
		goto out;
	}
	const struct collect_stats *st = collect_stats(col);
	struct spt_diag d = {""};
	int crc = spt_writer_close(w, &d);
	w = NULL;
	if (crc) {
		cli_fail(c, "%s", d.msg);
		goto out;
	}
	unsigned bad;
	const struct etcd_shape_stats *es = etcd_shape_stats(shape);
	if (c->json) {
		printf("{\"output\":");
		cli_json_str(stdout, o->com.out);
		printf(",\"work_dir\":");
		cli_json_str(stdout, dir);
		printf(",\"scenario\":\"%s\",\"seed\":%" PRIu64 ",\"events\":%" PRIu64 ",\"lost\":%" PRIu64
		       ",\"sends\":%" PRIu64 ",\"receives\":%" PRIu64 ",\"paired\":%" PRIu64 ",\"unpaired_receives\":%" PRIu64
		       ",\"unpaired_sends\":%" PRIu64 ",\"foreign\":%" PRIu64 ",\"late\":%" PRIu64 ",\"probe_sites\":{\"entry\":%u,\"entry_branch\":%u,\"ret\":%u},\"probe_hits\":{",
		       o->com.scenario, o->com.seed, st->events, lost, st->sends, st->receives, st->paired, st->unpaired_receives,
		       st->unpaired_sends, st->foreign, st->late, ps.entry, ps.entry_branch, ps.ret);
		for (unsigned k = 0, n = 0; k < ETCD_NPROBES; k++)
			if (((k + 1) * 10 != ETCD_P_STEP && (k + 1) * 10 != ETCD_P_COMMIT_TO) || o->verify) /* only verified */
				printf("%s\"%u\":%" PRIu64, n++ ? "," : "", (k + 1) * 10, es->probes_seen[k]);
		printf("},\"reentries\":%" PRIu64 ",\"unknown_log_terms\":%" PRIu64 ",\"unfinished_steps\":%" PRIu64
		       ",\"leader\":\"n%d\",\"term\":%" PRIu64 ",\"first_leader\":\"n%d\",\"first_term\":%" PRIu64,
		       es->reentries, es->unknown_terms, es->unfinished, sc.last.index + 1, sc.last.term, sc.first.index + 1,
		       sc.first.term);
		if (o->verify) {
			printf(",\"verify_steps\":{\"compared\":%" PRIu64 ",\"differ\":%" PRIu64 ",\"first\":",
			       es->verify_compared, es->verify_mismatched);
			cli_json_str(stdout, es->verify_first);
			printf(",\"no_return\":%" PRIu64 ",\"first_no_return\":", es->verify_no_ret);
			cli_json_str(stdout, es->verify_first_no_ret);
			printf(",\"commit_tos\":%" PRIu64 ",\"commits\":%" PRIu64 ",\"commits_differ\":%" PRIu64
			       ",\"first_commit\":", es->verify_commit_tos, es->verify_commits, es->verify_commits_differ);
			cli_json_str(stdout, es->verify_first_commit);
			printf("}");
		}
		if (sc.has_load)
			printf(",\"puts\":{\"issued\":%" PRIu64 ",\"acked\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"per_second\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f}",
			       sc.load.puts, sc.load.acked, sc.load.failed, sc.load.per_second, sc.load.p50_ms, sc.load.p99_ms);
		printf(",\"members\":");
		bad = compare_final(&sc, shape, true, stdout);
		printf(",\"final_match\":%s}\n", bad ? "false" : "true");
	} else {
		bad = compare_final(&sc, shape, false, stderr);
		printf("recorded %" PRIu64 " events (%" PRIu64 " lost; %" PRIu64 " messages sent, %" PRIu64
		       " received, all paired: %s) of %s on %u members into %s\n",
		       st->events, lost, st->sends, st->receives, st->unpaired_receives ? "no" : "yes", o->com.scenario, o->com.nodes,
		       o->com.out);
		if (sc.has_load)
			printf("puts: %" PRIu64 " acknowledged, %" PRIu64 " failed\n", sc.load.acked, sc.load.failed);
		printf("end state of every live member (term, commit, leader) %s etcdctl\n", bad ? "DIFFERS from" : "agrees with");
		if (o->verify) {
			printf("steps verified: %" PRIu64 " post-states read at Step's return and at the next call, %" PRIu64
			       " differ%s%s\n", es->verify_compared, es->verify_mismatched, es->verify_mismatched ? "; first: " : "",
			       es->verify_first);
			printf("commits verified: %" PRIu64 " raised by commitTo, %" PRIu64 " Commit events after one, %" PRIu64
			       " differ%s%s\n", es->verify_commit_tos, es->verify_commits, es->verify_commits_differ,
			       es->verify_commits_differ ? "; first: " : "", es->verify_first_commit);
		}
	}

	rc = record_verdict(c, &o->com, bad, "member(s)", "etcdctl's", lost);
	if (o->verify && es->verify_mismatched) {
		fprintf(stderr, "spectap record: --verify-steps: %" PRIu64 " of %" PRIu64 " steps' post-states differ between "
			"Step's return and the member's next call (%s): the trace's post-states are wrong for this build\n",
			es->verify_mismatched, es->verify_compared, es->verify_first);
		rc = CLI_FAIL;
	}
	if (o->verify && (es->verify_commits_differ || es->verify_commits != es->verify_commit_tos)) {
		fprintf(stderr, "spectap record: --verify-steps: commitTo raised the commit index %" PRIu64 " times, the trace "
			"has %" PRIu64 " Commit events after one, %" PRIu64 " with another index%s%s: the trace's Commit events "
			"are wrong for this build\n", es->verify_commit_tos, es->verify_commits, es->verify_commits_differ,
			es->verify_commits_differ ? "; first: " : "", es->verify_first_commit);
		rc = CLI_FAIL;
	}
	goto out;
interrupted:;
	/* The members are gone (the signal handler stopped them): keep what was captured, in a
	 * trace left unclosed so that it reads as incomplete. */
	etcd_cluster_stop(&cl);
	started = false;
	bg = false;
	rc = record_interrupted(c, &o->com, col, &w);
out:
	if (bg)
		collect_bg_stop(col);
	if (started)
		etcd_cluster_stop(&cl);
	if (made_dir) /* the members' data dirs and logs go too */
		sup_rm_rf(dir);
	collect_free(col);
	etcd_shape_free(shape);
	if (w)
		spt_writer_abandon(w); /* what was flushed stays readable, marked as not closed */
	uprobe_loader_close(l);
	return rc;
}

int record_etcd(int argc, char **argv)
{
	struct cli c = { .cmd = "record", .usage = usage };
	struct rec_opts o = { .com = { .nodes = 3, .seed = 1 }, .etcd = etcd_programs[ETCD_PROG_ETCD].path };
	static const struct option longopts[] = {
		RECORD_COMMON_LONGOPTS, RECORD_LOG_TERMS_LONGOPT,
		{ "etcd", required_argument, NULL, 'E' }, { "putload", required_argument, NULL, 'P' },
		{ "acked", required_argument, NULL, 'A' }, { "puts", required_argument, NULL, 'N' },
		{ "verify-steps", no_argument, NULL, 'V' }, CORPUS_LONGOPTS, { NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt, k;
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		if ((k = record_common_opt(&c, opt, optarg, &o.com, 3, ETCD_MAX_MEMBERS)) == 0)
			k = corpus_opt(&c, opt, optarg, &o.cov);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		switch (opt) {
		case 'P': o.putload = optarg; break;
		case 'A': o.acked = optarg; break;
		case 'E': o.etcd = optarg; break;
		case 'V': o.verify = true; break;
		case 'N': {
			uint64_t v;
			if (!cli_parse_u64(&c, "--puts", optarg, &v))
				return CLI_USAGE;
			if (v < 8 || v > 10000000)
				return cli_usage_error(&c, "--puts: %" PRIu64 " is not in 8..10000000", v);
			o.puts = (unsigned)v;
			break;
		}
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if ((k = record_common_check(&c, argc, argv, "etcd", &o.com, etcd_scenario_known, ETCD_SCENARIOS)))
		return k;
	if ((k = corpus_check(&c, &o.com, &o.cov)))
		return k;
	if (!o.com.out)
		return cli_usage_error(&c, "-o OUT.spt is required");
	if (o.cov.until_covered) {
		if (o.verify || o.acked)
			return cli_usage_error(&c, "--verify-steps and --acked are for one run, not --until-covered");
		return until_covered(&c, &o);
	}
	return record(&c, &o);
}
