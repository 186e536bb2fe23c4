/* spectap record redisraft: a RedisRaft cluster (the user's module in Debian's redis-server),
 * probed with DWARF-resolved eBPF uprobes, into one trace. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collect.h"
#include "record.h"
#include "record_corpus.h"
#include "rr_cluster.h"
#include "rr_probes.h"
#include "rr_scenario.h"
#include "rr_shape.h"
#include "supervise.h"

static const char usage[] =
	"usage: spectap record redisraft --module PATH --scenario NAME [--nodes N] [--seed S] -o OUT.spt\n"
	"\n"
	"Starts an N-node RedisRaft cluster (Debian's redis-server loading the module at PATH, which\n"
	"must carry DWARF debug info: build it with -g) on 127.0.0.1, attaches eBPF uprobes to its raft\n"
	"core (role changes, request-vote and append-entries sent and handled, entries received,\n"
	"commits, votes, terms), drives INCRs, runs the scenario, stops everything and writes one\n"
	"trace. At the end each node's term, role, commit index and leader in the trace are compared\n"
	"with its INFO raft. Needs root (BPF). Nothing is left running, even on Ctrl-C or an error.\n"
	"While the cluster runs, the raw records go to an unnamed spool file in OUT's directory\n"
	"(a few hundred bytes each); they become events when it stops, to take little CPU from it.\n"
	"\n"
	"  --module PATH    redisraft.so (default: $SPECTAP_REDISRAFT_MODULE)\n"
	"  --scenario NAME  initial-election, steady-writes, leader-kill, follower-pause,\n"
	"                   leader-restart (the old leader returns with an entry to cut), random\n"
	"  --nodes N        nodes, 3..9 (default 3)\n"
	"  --seed S         picks the paused follower and the random faults (default 1)\n"
	"  -o, --output F   the trace to write;  -f, --force: replace it\n"
	"  --allow-loss     exit 0 even when events were lost (they are recorded either way)\n"
	RECORD_FLUSH_HELP
	"  --log-terms N    keep only the last N entry terms of each log in the state (default:\n"
	"                   the whole log, as a spec's log needs it)\n"
	"  --redis-server P the server binary (default /usr/bin/redis-server)\n"
	"  --json           print the summary as JSON\n"
	"  -h, --help       this text\n"
	"\n"
	CORPUS_HELP("--map M.tla --spec S.tla [--cfg C]")
	"                   (systems/redisraft/spec: RrBenchMap.tla lists the steps and the vote\n"
	"                   and append answers, refusals included)\n"
	"\n"
	"Exit status: 0 done, 1 failed, events lost (without --allow-loss) or the trace disagrees\n"
	"with INFO raft at the end, 2 usage, 128+N interrupted by signal N.\n";

struct rec_opts {
	struct record_common com;
	const char *module, *redis_server;
	struct corpus_args cov; /* --until-covered */
};

/* --until-covered: the corpus loop runs this command once per seed, with these options. */
static int until_covered(struct cli *c, const struct rec_opts *o)
{
	const char *extra[5] = { "--module", o->module, NULL };
	if (o->redis_server) {
		extra[2] = "--redis-server";
		extra[3] = o->redis_server;
	}
	return corpus_run(c, &o->com, "redisraft", &o->cov, NULL, NULL, NULL, extra);
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

static void name_node(void *ctx, unsigned node, int pid)
{
	struct session *s = ctx;
	char name[16];

	snprintf(name, sizeof(name), "s%u", node + 1);
	if (pid > 0)
		collect_set_node(s->col, pid, name);
}

static const char *role_of_info(const char *role)
{
	return !strcmp(role, "leader") ? "Leader" : !strcmp(role, "candidate") ? "Candidate"
		: !strcmp(role, "pre-candidate") || !strcmp(role, "precandidate") ? "PreCandidate" : "Follower";
}

/* Each live node's term, role, commit index and leader in the trace against its INFO raft.
 * Returns the number of disagreements; writes the JSON array when json. */
static unsigned compare_final(const struct rr_scenario *sc, const struct rr_shape *shape, bool json, FILE *f)
{
	unsigned bad = 0;

	if (json)
		fputs("[", f);
	for (unsigned i = 0; i < sc->cl->n; i++) {
		const struct rr_info *st = &sc->final[i];
		struct rr_node_view v = {0};
		char node[16];

		snprintf(node, sizeof(node), "s%u", i + 1);
		bool seen = rr_shape_node(shape, node, &v) == 0;
		const char *role = seen ? rr_role_name(v.state) : "";
		bool match = !st->reachable || (seen && v.term == st->term && v.commit == st->commit_index &&
						v.leader == st->leader_id && !strcmp(role, role_of_info(st->role)));
		bad += !match;
		if (json) {
			fprintf(f, "%s{\"node\":\"%s\",\"live\":%s,\"term\":%" PRId64 ",\"role\":\"%s\",\"commit\":%" PRId64
				   ",\"leader\":%" PRId64 ",\"lastLogIndex\":%" PRId64,
				i ? "," : "", node, st->reachable ? "true" : "false", v.term, role, v.commit, v.leader,
				v.last_index);
			if (st->reachable)
				fprintf(f, ",\"info_raft\":{\"term\":%" PRId64 ",\"role\":\"%s\",\"commit\":%" PRId64
					   ",\"leader\":%" PRId64 ",\"current_index\":%" PRId64 "}",
					st->term, st->role, st->commit_index, st->leader_id, st->current_index);
			fprintf(f, ",\"match\":%s}", match ? "true" : "false");
		} else if (!match) {
			fprintf(stderr,
				"spectap record: %s at the end: the trace has term %" PRId64 ", role %s, commit %" PRId64
				", leader %" PRId64 "; INFO raft reports term %" PRId64 ", role %s, commit %" PRId64
				", leader %" PRId64 "\n",
				node, v.term, role, v.commit, v.leader, st->term, st->role, st->commit_index, st->leader_id);
		}
	}
	if (json)
		fputs("]", f);
	return bad;
}

static int record(struct cli *c, const struct rec_opts *o)
{
	char err[1024] = "", dir[] = "/tmp/spectap-record-XXXXXX";
	struct uprobe_loader *l = NULL;
	struct spt_writer *w = NULL;
	struct collect *col = NULL;
	struct rr_shape *shape = NULL;
	struct rr_cluster cl;
	struct rr_scenario sc;
	struct session ss = {c, NULL, sup_now_ms()};
	bool started = false, bg = false, made_dir = false;
	unsigned ne = 0, nr = 0;
	int rc = CLI_FAIL;

	if (geteuid() != 0)
		return cli_fail(c, "recording needs root (eBPF uprobes); run it as root");
	memset(&sc, 0, sizeof(sc));
	memset(&cl, 0, sizeof(cl));
	sup_install_interrupt();
	struct uprobe_loader_opts lo = {.ringbuf_bytes = 64u << 20};
	if (uprobe_loader_open(&l, &lo, err, sizeof(err)))
		return cli_fail(c, "%s", err);
	int64_t conn_connected;
	int sites = rr_probes_attach(l, o->module, &ne, &nr, &conn_connected, err, sizeof(err));
	if (sites < 0) {
		cli_fail(c, "%s", err);
		goto out;
	}
	if (rr_shape_new(&shape, o->com.log_terms)) {
		cli_fail(c, "out of memory");
		goto out;
	}
	rr_shape_set_conn_connected(shape, conn_connected);
	if (record_capture_open(c, &o->com, "redisraft", o->module, "s", l, rr_probe_table(), rr_shape_event, NULL, shape,
				&w, &col, &bg))
		goto out;
	ss.col = col;
	if (record_make_workdir(dir)) {
		cli_fail(c, "cannot create a work directory in /tmp: %s", strerror(errno));
		goto out;
	}
	made_dir = true;
	struct rr_cluster_opts co = {.work_dir = dir, .module = o->module, .nodes = o->com.nodes,
				     .redis_server = o->redis_server, .spawned = name_node, .spawned_ctx = &ss};
	started = true;
	if (rr_cluster_start(&cl, &co)) {
		if (sup_interrupted())
			goto interrupted;
		cli_fail(c, "%s", cl.err);
		goto out;
	}
	char msg[160];
	snprintf(msg, sizeof(msg), "%u RedisRaft nodes up and joined (ports %u..), %d probe sites attached (%u entry, %u return)",
		 o->com.nodes, cl.base_port, sites, ne, nr);
	progress(&ss, msg);
	sc = (struct rr_scenario){.cl = &cl, .seed = o->com.seed, .phase = progress, .ctx = &ss};
	if (rr_scenario_run(&sc, o->com.scenario)) {
		if (sup_interrupted())
			goto interrupted;
		cli_fail(c, "scenario %s: %s", o->com.scenario, sc.err);
		goto out;
	}
	/* SIGKILL: the trace ends in the state INFO raft last reported. */
	progress(&ss, "stopping the cluster");
	for (unsigned i = 0; i < cl.n; i++)
		if (rr_cluster_pid(&cl, i) > 0)
			rr_cluster_kill(&cl, i);
	rr_cluster_stop(&cl);
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
	const struct rr_shape_stats *rs = rr_shape_stats(shape);
	unsigned bad, unfired = 0;
	for (unsigned k = 1; k <= RR_NPROBES; k++)
		unfired += rs->probes_seen[k] == 0;
	if (c->json) {
		printf("{\"output\":");
		cli_json_str(stdout, o->com.out);
		printf(",\"work_dir\":");
		cli_json_str(stdout, dir);
		printf(",\"scenario\":\"%s\",\"seed\":%" PRIu64 ",\"nodes\":%u,\"events\":%" PRIu64 ",\"lost\":%" PRIu64
		       ",\"sends\":%" PRIu64 ",\"receives\":%" PRIu64 ",\"paired\":%" PRIu64 ",\"unpaired_receives\":%" PRIu64
		       ",\"unpaired_sends\":%" PRIu64 ",\"foreign\":%" PRIu64 ",\"late\":%" PRIu64
		       ",\"probe_sites\":{\"entry\":%u,\"ret\":%u},\"probe_hits\":{",
		       o->com.scenario, o->com.seed, o->com.nodes, st->events, lost, st->sends, st->receives, st->paired,
		       st->unpaired_receives, st->unpaired_sends, st->foreign, st->late, ne, nr);
		for (unsigned k = 1; k <= RR_NPROBES; k++)
			printf("%s\"%s\":%" PRIu64, k > 1 ? "," : "", rr_probe_info(k)->kind, rs->probes_seen[k]);
		printf("},\"sends_unconnected\":%" PRIu64 ",\"unknown_log_terms\":%" PRIu64 ",\"first_leader\":\"s%d\",\"first_term\":%" PRId64
		       ",\"leader\":\"s%d\",\"term\":%" PRId64 ",\"writes\":{\"acked\":%u,\"failed\":%u,\"unacked\":%u},\"nodes_end\":",
		       rs->sends_unconnected, rs->unknown_terms, sc.first_leader + 1, sc.first_term, sc.last_leader + 1, sc.last_term,
		       sc.writes_acked, sc.writes_failed, sc.writes_unacked);
		bad = compare_final(&sc, shape, true, stdout);
		printf(",\"final_match\":%s}\n", bad ? "false" : "true");
	} else {
		bad = compare_final(&sc, shape, false, stderr);
		printf("recorded %" PRIu64 " events (%" PRIu64 " lost; %" PRIu64 " messages sent, %" PRIu64
		       " received, all paired: %s) of %s on %u nodes into %s\n",
		       st->events, lost, st->sends, st->receives, st->unpaired_receives ? "no" : "yes", o->com.scenario,
		       o->com.nodes, o->com.out);
		printf("writes: %u acknowledged, %u failed, %u left unacknowledged on purpose; %u of %d probes fired\n",
		       sc.writes_acked, sc.writes_failed, sc.writes_unacked, RR_NPROBES - unfired, RR_NPROBES);
		if (rs->sends_unconnected)
			printf("%" PRIu64 " sends to a peer RedisRaft was not connected to: events without a message "
			       "(args.connected false)\n", rs->sends_unconnected);
		printf("end state of every live node (term, role, commit, leader) %s INFO raft\n",
		       bad ? "DIFFERS from" : "agrees with");
	}
	rc = record_verdict(c, &o->com, bad, "node(s)", "INFO raft", lost);
	goto out;
interrupted:;
	rr_cluster_stop(&cl);
	started = false;
	bg = false;
	rc = record_interrupted(c, &o->com, col, &w);
out:
	if (bg)
		collect_bg_stop(col);
	if (started)
		rr_cluster_stop(&cl);
	if (made_dir)
		sup_rm_rf(dir);
	collect_free(col);
	rr_shape_free(shape);
	if (w)
		spt_writer_abandon(w);
	uprobe_loader_close(l);
	return rc;
}

int record_redisraft(int argc, char **argv)
{
	struct cli c = {.cmd = "record", .usage = usage};
	struct rec_opts o = {.com = {.nodes = 3, .seed = 1}, .module = getenv("SPECTAP_REDISRAFT_MODULE")};
	static const struct option longopts[] = {
		RECORD_COMMON_LONGOPTS, RECORD_LOG_TERMS_LONGOPT,
		{ "module", required_argument, NULL, 'M' }, { "redis-server", required_argument, NULL, 'R' },
		CORPUS_LONGOPTS, { NULL, 0, NULL, 0 },
	};
	int opt, k;

	cli_begin(&c, argc, argv);
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		if ((k = record_common_opt(&c, opt, optarg, &o.com, 3, RR_MAX_NODES)) == 0)
			k = corpus_opt(&c, opt, optarg, &o.cov);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		switch (opt) {
		case 'M': o.module = optarg; break;
		case 'R': o.redis_server = optarg; break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if ((k = record_common_check(&c, argc, argv, "redisraft", &o.com, rr_scenario_known, RR_SCENARIOS)))
		return k;
	if (!o.module || !*o.module)
		return cli_usage_error(&c, "--module PATH (a redisraft.so built with -g) is required, or set "
					   "SPECTAP_REDISRAFT_MODULE");
	if (access(o.module, R_OK))
		return cli_usage_error(&c, "--module %s: %s", o.module, strerror(errno));
	if ((k = corpus_check(&c, &o.com, &o.cov)))
		return k;
	if (!o.com.out)
		return cli_usage_error(&c, "-o OUT.spt is required");
	if (o.cov.until_covered)
		return until_covered(&c, &o);
	return record(&c, &o);
}
