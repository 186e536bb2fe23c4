/* spectap record zookeeper: a real ensemble with the JVMTI agent, its records captured over BPF
 * (USDT) or LTTng into one trace. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "emit_capture.h"
#include "ensemble.h"
#include "record.h"
#include "record_corpus.h"
#include "spectap/value.h"
#include "supervise.h"
#include "zk_scenario.h"

static const char usage[] =
	"usage: spectap record zookeeper --scenario NAME [--nodes N] [--seed S] [--via bpf|lttng]\n"
	"                                -o OUT.spt [options]\n"
	"\n"
	"Starts N servers of Debian's unmodified ZooKeeper 3.8.0 on 127.0.0.1, each with spectap's\n"
	"JVMTI agent, which records every step of Fast Leader Election with the server's state after\n"
	"it; runs the scenario, stops everything and writes one trace (message ids pair every handled\n"
	"notification with its send; Lamport clocks). At the end each live server's state and leader\n"
	"in the trace are compared with what `srvr` reports. Needs root. Nothing is left running, even\n"
	"on Ctrl-C or an error.\n"
	"\n"
	"  --scenario NAME  " ZK_SCENARIOS "\n"
	"  --nodes N        servers, 1..9 (default 3)\n"
	"  --seed S         picks the faulted servers and random faults (default 1)\n"
	"  --via bpf|lttng  how records leave the JVMs: the agent's USDT probe drained from a BPF\n"
	"                   ring buffer (default), or an LTTng-UST session read back at the end\n"
	"  -o, --output F   the trace to write;  -f, --force: replace it\n"
	"  --allow-loss     exit 0 even when events were lost (they are recorded either way)\n"
	RECORD_FLUSH_HELP
	"  --agent PATH     the agent (default: libspectap_zk_agent.so beside this spectap)\n"
	"  --java PATH      the java binary (default: OpenJDK 17's /usr/lib/jvm/java-17-openjdk-amd64/bin/java)\n"
	"  --json           print the summary as JSON\n"
	"  -h, --help       this text\n"
	"\n"
	CORPUS_HELP("--map M.tla --spec S.tla [--cfg C]")
	"\n"
	"The ensemble runs with tickTime 1000 ms, initLimit 10, syncLimit 5.\n"
	"\n"
	"Exit status: 0 done, 1 failed, events lost (without --allow-loss) or the trace disagrees\n"
	"with srvr at the end, 2 usage, 128+N interrupted by signal N (SIGINT, SIGTERM, SIGHUP: the\n"
	"servers are stopped and the trace keeps what was captured, marked incomplete).\n";

#define TICK_MS 1000

struct rec_opts {
	struct record_common com;
	const char *agent, *java;
	enum emit_via via;
	struct corpus_args cov; /* --until-covered */
};

/* --until-covered: the corpus loop runs this command once per seed, with these options. */
static int until_covered(struct cli *c, const struct rec_opts *o)
{
	const char *extra[8];
	size_t n = 0;
	extra[n++] = "--via";
	extra[n++] = emit_via_name(o->via);
	if (o->agent) {
		extra[n++] = "--agent";
		extra[n++] = o->agent;
	}
	if (o->java) {
		extra[n++] = "--java";
		extra[n++] = o->java;
	}
	extra[n] = NULL;
	return corpus_run(c, &o->com, "zookeeper", &o->cov, NULL, NULL, NULL, extra);
}

/* A server's last state in the trace, and the leader of its last election's vote. */
struct node_view {
	bool seen, ended;
	char state[16];
	int64_t leader;
};

struct session {
	struct cli *c;
	struct ecap *cap;
	enum emit_via via;
	uint64_t t0_ms;
	struct node_view view[ZK_MAX_SERVERS];
};

static void progress(void *ctx, const char *what)
{
	struct session *s = ctx;
	if (s->c->json)
		return;
	struct ecap_stats st;
	ecap_stats(s->cap, &st);
	fprintf(stderr, "spectap record: [%5.1fs] %s (%" PRIu64 " events so far)\n",
		(double)(sup_now_ms() - s->t0_ms) / 1000.0, what, st.ev.events);
}

static void name_pid(void *ctx, unsigned server, int pid)
{
	struct session *s = ctx;
	(void)server;
	if (pid > 0)
		ecap_name_pid(s->cap, pid);
}

/* Called on the drain thread (BPF) or at finish (LTTng); read only after ecap_finish. */
static void follow(void *ctx, const struct spt_event *ev, int pid)
{
	struct session *s = ctx;
	(void)pid;
	char *end;
	long id = strtol(ev->node, &end, 10);
	if (*end || id < 1 || id > ZK_MAX_SERVERS)
		return;
	struct node_view *v = &s->view[id - 1];
	spt_val *st = ev->state ? spt_rec_get(ev->state, "state") : NULL;
	if (st && st->kind == SPT_STR) {
		snprintf(v->state, sizeof(v->state), "%s", st->u.s);
		v->seen = true;
	}
	if (!strcmp(ev->kind, "zk.election.end") && ev->args) {
		spt_val *vote = spt_rec_get(ev->args, "vote");
		spt_val *l = vote && vote->kind == SPT_REC ? spt_rec_get(vote, "leader") : NULL;
		if (l && l->kind == SPT_INT) {
			v->leader = l->u.i;
			v->ended = true;
		}
	}
}


static const char *expected_state(enum zk_mode m)
{
	return m == ZK_MODE_LEADER ? "LEADING" : m == ZK_MODE_FOLLOWER ? "FOLLOWING" : m == ZK_MODE_OBSERVER ? "OBSERVING" : "?";
}

/* Each live server's state and leader in the trace against srvr at the end. Returns the
 * number of disagreements; writes the JSON array when json. */
static unsigned compare_final(const struct session *ss, const struct zk_scenario *sc, bool json)
{
	unsigned bad = 0;
	const struct zk_ensemble *e = sc->e;
	if (json)
		fputs("[", stdout);
	for (unsigned i = 0; i < e->n; i++) {
		const struct zk_srvr *st = &sc->final[i];
		const struct node_view *v = &ss->view[i];
		bool live = st->reachable; /* srvr asks only servers neither killed nor paused */
		int64_t leader = st->mode == ZK_MODE_LEADER ? (int64_t)e->s[i].myid : (int64_t)sc->last.myid;
		bool match = !live || (v->seen && v->ended && !strcmp(v->state, expected_state(st->mode)) && v->leader == leader);
		bad += !match;
		if (json) {
			printf("%s{\"node\":\"%u\",\"live\":%s,\"state\":", i ? "," : "", i + 1, live ? "true" : "false");
			cli_json_str(stdout, v->seen ? v->state : "");
			printf(",\"leader\":%" PRId64, v->ended ? v->leader : -1);
			if (live)
				printf(",\"srvr\":{\"mode\":\"%s\",\"leader\":%" PRId64 ",\"zxid\":%" PRIu64 "}",
				       zk_mode_name(st->mode), leader, st->zxid);
			printf(",\"match\":%s}", match ? "true" : "false");
		} else if (!match) {
			fprintf(stderr, "spectap record: server %u at the end: the trace has state %s, leader %" PRId64
				"; srvr reports %s, leader %" PRId64 "\n", i + 1, v->seen ? v->state : "(none)",
				v->ended ? v->leader : -1, zk_mode_name(st->mode), leader);
		}
	}
	if (json)
		fputs("]", stdout);
	return bad;
}

static void print_summary(const struct rec_opts *o, const char *dir, const struct ecap_stats *st,
			  const struct zk_scenario *sc, const struct session *ss, bool json, unsigned *bad)
{
	const struct ecol_stats *ev = &st->ev;
	if (!json) {
		*bad = compare_final(ss, sc, false);
		printf("recorded %" PRIu64 " events (%" PRIu64 " lost; %" PRIu64 " notifications sent, %" PRIu64
		       " received, %" PRIu64 " paired) of %s on %u servers via %s into %s\n",
		       ev->events, st->lost, ev->sends, ev->receives, ev->paired, o->com.scenario, o->com.nodes,
		       emit_via_name(o->via), o->com.out);
		printf("leader zk%u (epoch %" PRIu64 "); end state of every live server %s srvr\n", sc->last.myid,
		       sc->last.epoch, *bad ? "DIFFERS from" : "agrees with");
		return;
	}
	printf("{\"output\":");
	cli_json_str(stdout, o->com.out);
	printf(",\"work_dir\":");
	cli_json_str(stdout, dir);
	printf(",\"scenario\":\"%s\",\"seed\":%" PRIu64 ",\"via\":\"%s\",\"nodes\":%u,\"events\":%" PRIu64
	       ",\"lost\":%" PRIu64 ",\"transport_lost\":%" PRIu64 ",\"gap_lost\":%" PRIu64 ",\"rejected\":%" PRIu64
	       ",\"foreign\":%" PRIu64 ",\"late\":%" PRIu64 ",\"sends\":%" PRIu64 ",\"receives\":%" PRIu64
	       ",\"paired\":%" PRIu64 ",\"unpaired_receives\":%" PRIu64 ",\"unpaired_sends\":%" PRIu64
	       ",\"elections\":%u,\"first_leader_ms\":%u,\"first_leader\":\"%u\",\"leader\":\"%u\",\"epoch\":%" PRIu64
	       ",\"servers\":",
	       o->com.scenario, o->com.seed, emit_via_name(o->via), o->com.nodes, ev->events, st->lost, st->transport_lost,
	       ev->gap_lost, ev->rejected, ev->foreign, ev->late, ev->sends, ev->receives, ev->paired,
	       ev->unpaired_receives, ev->unpaired_sends, sc->elections, sc->first_ms, sc->first.myid, sc->last.myid,
	       sc->last.epoch);
	*bad = compare_final(ss, sc, true);
	printf(",\"final_match\":%s}\n", *bad ? "false" : "true");
}

static int record(struct cli *c, const struct rec_opts *o)
{
	if (geteuid() != 0)
		return cli_fail(c, "recording needs root (BPF or an LTTng session); run it as root");
	char err[1024] = "", dir[] = "/tmp/spectap-record-XXXXXX", agent_buf[PATH_MAX];
	const char *agent = o->agent ? o->agent : cli_beside_self("libspectap_zk_agent.so", R_OK, agent_buf, sizeof(agent_buf));
	if (!agent || access(agent, R_OK))
		return cli_fail(c, "the ZooKeeper agent is not at %s: build it with `make` or name it with --agent",
				agent ? agent : "libspectap_zk_agent.so beside spectap");
	if (zk_available(o->java, NULL, err, sizeof(err)) < 0)
		return cli_fail(c, "%s", err);
	struct spt_writer *w = NULL;
	struct zk_ensemble e;
	struct zk_scenario sc;
	struct session ss = { .c = c, .via = o->via, .t0_ms = sup_now_ms() };
	bool started = false, made_dir = false;
	int rc = CLI_FAIL;

	memset(&e, 0, sizeof(e));
	memset(&sc, 0, sizeof(sc));
	sup_install_interrupt();
	const char *names[ZK_MAX_SERVERS];
	char name_buf[ZK_MAX_SERVERS][12];
	for (unsigned i = 0; i < o->com.nodes; i++) {
		snprintf(name_buf[i], sizeof(name_buf[i]), "%u", i + 1);
		names[i] = name_buf[i];
	}
	struct spt_header h = { .system = "zookeeper", .system_version = "3.8.0 (Debian, OpenJDK 17)",
				.nodes = names, .n_nodes = o->com.nodes,
				.capture_method = o->via == EMIT_VIA_LTTNG ? "jvmti+lttng" : "jvmti+usdt",
				.scenario = o->com.scenario, .has_seed = true, .seed = o->com.seed,
				.command_line = cli_command_line() };
	struct spt_writer_opts wo = record_writer_opts(&o->com);
	struct spt_diag d = { "" };
	if (spt_writer_open(o->com.out, &h, &wo, &w, &d)) {
		cli_fail(c, "%s", d.msg);
		goto out;
	}
	if (record_make_workdir(dir)) {
		cli_fail(c, "cannot create a work directory in /tmp: %s", strerror(errno));
		goto out;
	}
	made_dir = true;
	/* The JVMs load a private copy of the agent: a USDT probe is attached to a file, so another
	 * capture running the same agent file would receive (and slow down) this one's records. */
	char agent_copy[PATH_MAX];
	snprintf(agent_copy, sizeof(agent_copy), "%s/libspectap_zk_agent.so", dir);
	int cprc = cli_copy_file(agent, agent_copy);
	if (cprc < 0) {
		cli_fail(c, "cannot copy the agent %s to %s: %s", agent, agent_copy, strerror(-cprc));
		goto out;
	}
	agent = agent_copy;
	struct ecol_opts eo = { .sz = sizeof(eo), .on_event = follow, .ctx = &ss };
	if (ecap_open(&ss.cap, o->via, agent, w, &eo, err, sizeof(err))) {
		cli_fail(c, "%s", err);
		goto out;
	}
	/* emit: the agent sends its records through the emit API only (no file). */
	struct zk_ensemble_opts zo = { .work_dir = dir, .servers = o->com.nodes, .tick_ms = TICK_MS, .java = o->java,
				       .agent = agent, .agent_options = "emit", .spawned = name_pid,
				       .spawned_ctx = &ss };
	if (zk_ensemble_start(&e, &zo)) {
		cli_fail(c, "%s", e.err);
		goto out;
	}
	started = true;
	char msg[256];
	snprintf(msg, sizeof(msg), "%u ZooKeeper servers started with the agent in %s (client ports %u..), records via %s",
		 o->com.nodes, dir, e.s[0].client_port, emit_via_name(o->via));
	progress(&ss, msg);
	sc = (struct zk_scenario){ .e = &e, .seed = o->com.seed, .phase = progress, .ctx = &ss };
	if (zk_scenario_run(&sc, o->com.scenario)) {
		if (sup_interrupted())
			goto interrupted;
		cli_fail(c, "scenario %s: %s", o->com.scenario, sc.err);
		goto out;
	}
	/* Freeze every server first, then SIGKILL: a server that sees another one go (or shut
	 * down on SIGTERM) steps through states the scenario did not ask for; the trace ends in
	 * the state srvr last reported. */
	progress(&ss, "stopping the ensemble");
	for (unsigned i = 0; i < e.n; i++)
		if (zk_ensemble_pid(&e, i) > 0 && !e.s[i].paused)
			zk_ensemble_pause(&e, i);
	for (unsigned i = 0; i < e.n; i++)
		if (zk_ensemble_pid(&e, i) > 0)
			zk_ensemble_kill(&e, i);
	zk_ensemble_stop(&e);
	started = false;
	if (o->via == EMIT_VIA_LTTNG)
		progress(&ss, "reading the LTTng trace");
	struct ecap_stats st;
	if (ecap_finish(ss.cap, &st) < 0) {
		cli_fail(c, "%s", ecap_error(ss.cap));
		goto out;
	}
	int crc = spt_writer_close(w, &d);
	w = NULL;
	if (crc) {
		cli_fail(c, "%s", d.msg);
		goto out;
	}
	unsigned bad = 0;
	print_summary(o, dir, &st, &sc, &ss, c->json, &bad);
	if (st.ev.rejected)
		cli_warn(c, "%" PRIu64 " record(s) rejected (counted lost); the first: %s", st.ev.rejected,
			 ecap_first_rejection(ss.cap));
	rc = record_verdict(c, &o->com, bad, "server(s)", "srvr's", st.lost);
	goto out;
interrupted:;
	/* The servers are gone (the signal handler stopped them): keep what was captured, in a
	 * trace left unclosed so that it reads as incomplete. */
	int sig = sup_interrupted();
	zk_ensemble_stop(&e);
	started = false;
	struct ecap_stats ist = { 0 };
	int frc = ecap_finish(ss.cap, &ist);
	if (frc == 0)
		frc = spt_writer_flush(w);
	spt_writer_abandon(w);
	w = NULL;
	if (frc < 0)
		cli_fail(c, "interrupted by signal %d; saving the events captured so far failed: %s", sig,
			 ecap_error(ss.cap));
	else
		cli_fail(c, "interrupted by signal %d: %s keeps the %" PRIu64 " events captured so far, marked "
			    "incomplete (not closed)", sig, o->com.out, ist.ev.events);
	rc = 128 + sig;
out:
	if (started)
		zk_ensemble_stop(&e);
	if (made_dir) /* the servers' data dirs and logs go too */
		sup_rm_rf(dir);
	ecap_close(ss.cap);
	if (w)
		spt_writer_abandon(w); /* what was flushed stays readable, marked as not closed */
	return rc;
}

int record_zookeeper(int argc, char **argv)
{
	struct cli c = { .cmd = "record", .usage = usage };
	struct rec_opts o = { .com = { .nodes = 3, .seed = 1 } };
	static const struct option longopts[] = {
		RECORD_COMMON_LONGOPTS,
		{ "via", required_argument, NULL, 'V' },      { "agent", required_argument, NULL, 'A' },
		{ "java", required_argument, NULL, 'J' },     CORPUS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt, k;
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		if ((k = record_common_opt(&c, opt, optarg, &o.com, 1, ZK_MAX_SERVERS)) == 0)
			k = corpus_opt(&c, opt, optarg, &o.cov);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		switch (opt) {
		case 'V':
			if (!strcmp(optarg, "bpf"))
				o.via = EMIT_VIA_BPF;
			else if (!strcmp(optarg, "lttng"))
				o.via = EMIT_VIA_LTTNG;
			else
				return cli_usage_error(&c, "--via: '%s' is neither bpf nor lttng", optarg);
			break;
		case 'A': o.agent = optarg; break;
		case 'J': o.java = optarg; break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if ((k = record_common_check(&c, argc, argv, "zookeeper", &o.com, zk_scenario_known, ZK_SCENARIOS)))
		return k;
	if (o.com.nodes < 2 && strcmp(o.com.scenario, "initial-election"))
		return cli_usage_error(&c, "scenario %s needs at least 2 servers", o.com.scenario);
	if ((k = corpus_check(&c, &o.com, &o.cov)))
		return k;
	if (!o.com.out)
		return cli_usage_error(&c, "-o OUT.spt is required");
	if (o.cov.until_covered)
		return until_covered(&c, &o);
	return record(&c, &o);
}
