/* spectap record NAME for a system described as data (systems/NAME/system.yaml): its nodes
 * started as described, its probes attached, its scenario run, its hits turned into events by
 * its events module. Nothing here knows a particular system. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "hcluster.h"
#include "collect.h"
#include "desc.h"
#include "events.h"
#include "goprobes.h"
#include "record.h"
#include "record_corpus.h"
#include "hscenario.h"
#include "spectap/trace.h"
#include "supervise.h"

static const char usage_head[] =
	"usage: spectap record SYSTEM --scenario NAME [--nodes N] [--seed S] -o OUT.spt [options]\n"
	"\n"
	"Records a system described as data (systems/SYSTEM/system.yaml, docs/adding-a-system.md):\n"
	"starts its nodes on 127.0.0.1 (each in a network namespace of its own when the scenario\n"
	"partitions), attaches its probes (eBPF uprobes), runs the scenario, turns the probe hits\n"
	"into events with the system's events module, stops everything and writes one trace. At the\n"
	"end each node's leader in the trace is compared with what the node itself reports, where\n"
	"the description says how to ask. Needs root (BPF). Nothing is left running, even on Ctrl-C\n"
	"or an error.\n"
	"\n"
	"  --scenario NAME  one of the description's scenarios (below)\n"
	"  --nodes N        nodes (the description's default and range)\n"
	"  --seed S         picks the followers struck by faults (default 1)\n"
	"  -o, --output F   the trace to write;  -f, --force: replace it\n"
	"  --allow-loss     exit 0 even when events were lost (they are recorded either way)\n"
	RECORD_FLUSH_HELP
	"  --binary PATH    the program (default: the description's)\n"
	"  --keep DIR       keep the nodes' directory (configuration, data, logs) as DIR\n"
	"  --no-probes      run the scenario without probes and write no trace: the load's\n"
	"                   figures with nothing attached (a baseline; no -o)\n"
	CORPUS_HELP("[--map M.tla --spec S.tla [--cfg C]]")
	"                   (the mapping and spec default to the description's, spec:)\n"
	"  --json           print the summary as JSON\n"
	"  -h, --help       this text\n"
	"\n"
	"Exit status: 0 done, 1 failed, events lost (without --allow-loss) or the trace disagrees with\n"
	"the nodes at the end, 2 usage, 128+N interrupted by signal N.\n";

struct rec {
	struct cli *c;
	struct record_common com;
	const char *binary, *keep;
	char abs_binary[PATH_MAX]; /* --binary made absolute (symlinks kept: a program may read
				    * its name): the nodes run in the work directory */
	char goprobe[PATH_MAX];    /* tools/goprobe beside spectap, or "" */
	char tools[PATH_MAX];      /* ${tools}: the programs spectap builds (goprobe's directory) */
	bool no_probes;
	struct corpus_args cov; /* --until-covered */
	struct desc d;
	struct collect *col;
	uint64_t t0_ms;
	char names[HCLUSTER_MAX_NODES][HCLUSTER_NAME_SIZE];
};

static void progress(void *ctx, const char *what)
{
	struct rec *r = ctx;
	if (r->col)
		record_progress(r->c, r->col, r->t0_ms, what);
	else if (!r->c->json)
		fprintf(stderr, "spectap record: [%5.1fs] %s\n", (double)(sup_now_ms() - r->t0_ms) / 1000.0, what);
}

static bool capture_failed(void *ctx)
{
	struct rec *r = ctx;
	return collect_bg_failed(r->col);
}

static uint64_t captured(void *ctx)
{
	struct rec *r = ctx;
	struct collect_stats st;
	collect_bg_stats(r->col, &st);
	return st.spooled + st.records;
}

static void spawned(void *ctx, unsigned node, int pid)
{
	struct rec *r = ctx;
	if (r->col && pid > 0)
		collect_set_node(r->col, pid, r->names[node]);
}

/* The program's version, by the description's version command and pattern ("" when it has none
 * or it does not match). */
static void version_of(struct rec *r, const char *binary, char *out, size_t size)
{
	const struct desc *d = &r->d;
	out[0] = 0;
	if (!d->version_run.n)
		return;
	const char *argv[16];
	size_t n = d->version_run.n < 15 ? d->version_run.n : 15;
	for (size_t i = 0; i < n; i++)
		argv[i] = !strcmp(d->version_run.v[i], "${binary}") ? binary : d->version_run.v[i];
	argv[n] = NULL;
	struct sup_output o = { 0 };
	char serr[SUP_ERR_SIZE];
	regex_t re;
	regmatch_t m[2];
	if (sup_run_capture(argv, NULL, 10000, &o, serr) == 0 && !regcomp(&re, d->version_match, REG_EXTENDED)) {
		const char *text = o.out && o.out[0] ? o.out : o.err_out ? o.err_out : "";
		if (!regexec(&re, text, 2, m, 0) && m[1].rm_so >= 0)
			snprintf(out, size, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), text + m[1].rm_so);
		regfree(&re);
	}
	sup_output_free(&o);
}

static const char *state_str(spt_val *state, const char *field)
{
	spt_val *v = state && spt_is_fun(state) ? spt_rec_get(state, field) : NULL;
	return v && v->kind == SPT_STR ? v->u.s : NULL;
}

/* Each running node's leader in its own status against the last state of it in the trace.
 * Returns the disagreements (and writes the JSON array when json). */
static unsigned compare_final(struct rec *r, struct hcluster *cl, const char *field, bool json)
{
	char last[HCLUSTER_MAX_NODES][64] = { { 0 } };
	bool seen[HCLUSTER_MAX_NODES] = { 0 };
	struct spt_reader *rd;
	struct spt_diag diag = { "" };
	const struct spt_event *ev;
	unsigned bad = 0;
	if (spt_reader_open(r->com.out, &rd, &diag) == 0) {
		while (spt_reader_next(rd, &ev) == 1)
			for (unsigned i = 0; i < cl->n; i++)
				if (ev->node && !strcmp(ev->node, cl->names[i]) && ev->state) {
					const char *v = state_str(ev->state, field);
					snprintf(last[i], sizeof(last[i]), "%s", v ? v : "");
					seen[i] = true;
				}
		spt_reader_close(rd);
	}
	if (json)
		fputs("[", stdout);
	unsigned the_leader = 0;
	bool has_leader = r->d.status_leader_if && hcluster_leader(cl, &the_leader) == 0;
	for (unsigned i = 0; i < cl->n; i++) {
		long l = -1;
		bool live = hcluster_running(cl, i);
		if (live && r->d.status_leader_if) /* each node says only whether it leads */
			l = has_leader ? (long)the_leader : -1;
		else if (live)
			hcluster_leader_of(cl, i, &l);
		const char *says = l >= 0 ? cl->names[l] : "";
		bool match = !live || (seen[i] && !strcmp(last[i], says));
		bad += !match;
		if (json) {
			printf("%s{\"node\":\"%s\",\"live\":%s,\"trace\":", i ? "," : "", cl->names[i], live ? "true" : "false");
			cli_json_str(stdout, last[i]);
			printf(",\"node_says\":");
			cli_json_str(stdout, says);
			printf(",\"match\":%s}", match ? "true" : "false");
		} else if (!match) {
			fprintf(stderr, "spectap record: %s at the end: the trace's %s is '%s', the node reports '%s'\n",
				cl->names[i], field, last[i], says);
		}
	}
	if (json)
		fputs("]", stdout);
	return bad;
}

/* The load's figures (JSON members, or a text line). */
static void load_figures(struct cli *c, struct hscenario *sc, bool json)
{
	struct hload *l = &sc->load;
	char lat[96] = "", p50[24] = "null", p99[24] = "null";
	if (l->nlat) { /* a load by command times nothing per operation */
		snprintf(lat, sizeof(lat), ", p50 %.2f ms, p99 %.2f ms", hload_latency_ms(l, 50), hload_latency_ms(l, 99));
		snprintf(p50, sizeof(p50), "%.3f", hload_latency_ms(l, 50));
		snprintf(p99, sizeof(p99), "%.3f", hload_latency_ms(l, 99));
	}
	if (json)
		printf(",\"load\":{\"ops\":%" PRIu64 ",\"acked\":%" PRIu64 ",\"failed\":%" PRIu64
		       ",\"per_second\":%.1f,\"p50_ms\":%s,\"p99_ms\":%s}",
		       l->ops, l->acked, l->failed, hload_per_second(l), p50, p99);
	else
		printf("load: %" PRIu64 " operations, %" PRIu64 " acknowledged (%.1f/s%s), %" PRIu64 " failed%s%.200s\n",
		       l->ops, l->acked, hload_per_second(l), lat, l->failed, l->failed ? "; the first: " : "",
		       l->first_error);
	(void)c;
}

/* --no-probes: the scenario alone. */
static int dry_run(struct rec *r)
{
	struct cli *c = r->c;
	char dir[] = "/tmp/spectap-record-XXXXXX";
	struct hcluster cl;
	struct hscenario sc;
	int rc = CLI_FAIL;
	memset(&cl, 0, sizeof(cl));
	if (record_make_workdir(dir))
		return cli_fail(c, "cannot create a work directory in /tmp: %s", strerror(errno));
	sup_install_interrupt();
	struct hcluster_opts co = { .work_dir = dir, .nodes = r->com.nodes, .binary = r->binary, .tools = r->tools };
	sc = (struct hscenario){ .c = &cl, .d = &r->d, .copts = &co, .seed = r->com.seed, .phase = progress, .ctx = r };
	r->col = NULL;
	if (hscenario_run(&sc, desc_scenario(&r->d, r->com.scenario))) {
		cli_fail(c, "%s", sc.err);
		goto out;
	}
	if (c->json) {
		printf("{\"system\":");
		cli_json_str(stdout, r->d.name);
		printf(",\"scenario\":");
		cli_json_str(stdout, r->com.scenario);
		printf(",\"probes\":false,\"nodes\":%u", cl.n);
		if (r->d.has_load)
			load_figures(c, &sc, true);
		printf("}\n");
	} else if (r->d.has_load) {
		load_figures(c, &sc, false);
	}
	rc = CLI_OK;
out:
	hscenario_fini(&sc);
	hcluster_stop(&cl);
	sup_rm_rf(dir);
	return rc;
}

static int record(struct rec *r)
{
	struct cli *c = r->c;
	const struct desc *d = &r->d;
	char err[HPROBES_ERR_SIZE] = "", dir[] = "/tmp/spectap-record-XXXXXX", module[PATH_MAX],
	     version[64];
	struct uprobe_loader *l = NULL;
	struct spt_writer *w = NULL;
	struct hprobes probes = { 0 };
	struct hevents *ev = NULL;
	struct hcluster cl;
	struct hscenario sc;
	bool bg = false, made_dir = false;
	int rc = CLI_FAIL;
	const char *binary = r->binary ? r->binary : d->binary;

	memset(&cl, 0, sizeof(cl));
	memset(&sc, 0, sizeof(sc));
	if (geteuid() != 0)
		return cli_fail(c, "recording needs root (eBPF uprobes); run it as root");
	if (access(binary, X_OK))
		return cli_fail(c, "%s: %s%s%s", binary, strerror(errno), d->package ? "; install Debian's " : "",
				d->package ? d->package : "");
	const char *goprobe = d->lang == DESC_LANG_GO && r->goprobe[0] ? r->goprobe : NULL;
	if (d->lang == DESC_LANG_GO && !goprobe)
		return cli_fail(c, "tools/goprobe is not beside spectap: build it with `make`");
	snprintf(module, sizeof(module), "%s/%s", d->dir, d->events);
	sup_install_interrupt();
	struct uprobe_loader_opts lo = { .ringbuf_bytes = 64u << 20 };
	if (uprobe_loader_open(&l, &lo, err, sizeof(err)))
		return cli_fail(c, "%s", err);
	progress(r, "resolving the probes");
	if (hprobes_attach(l, d, binary, goprobe, &probes, err)) {
		cli_fail(c, "%s", err);
		goto out;
	}
	const char *names[HCLUSTER_MAX_NODES];
	for (unsigned i = 0; i < r->com.nodes; i++) {
		if (desc_node_name(d, i, r->names[i], sizeof(r->names[i]))) {
			cli_fail(c, "out of memory");
			goto out;
		}
		names[i] = r->names[i];
	}
	if (hevents_new(module, &probes, names, r->com.nodes, &ev, err, sizeof(err))) {
		cli_fail(c, "%s", err);
		goto out;
	}
	version_of(r, binary, version, sizeof(version));
	r->com.node_names = names;
	if (record_capture_open(c, &r->com, d->name, version, "n", l, &probes.ctable, hevents_shape, NULL, ev, &w, &r->col,
				&bg))
		goto out;
	if (record_make_workdir(dir)) {
		cli_fail(c, "cannot create a work directory in /tmp: %s", strerror(errno));
		goto out;
	}
	made_dir = true;
	char msg[256];
	snprintf(msg, sizeof(msg), "%zu probes of %s attached at %u sites (%u entry, %u return), %s", probes.n, d->name,
		 probes.sites, probes.entry_sites, probes.ret_sites, probes.go_version);
	progress(r, msg);
	struct hcluster_opts co = { .work_dir = dir, .nodes = r->com.nodes, .binary = binary, .spawned = spawned,
				    .spawned_ctx = r, .tools = r->tools };
	sc = (struct hscenario){ .c = &cl, .d = d, .copts = &co, .seed = r->com.seed, .phase = progress,
				 .events_so_far = captured, .failed = capture_failed, .ctx = r };
	const struct desc_scenario *scen = desc_scenario(d, r->com.scenario);
	int src = hscenario_run(&sc, scen);
	if (src && sup_interrupted())
		goto interrupted;
	if (src && collect_bg_failed(r->col)) { /* the collector's own message says what and why */
		bg = false;
		collect_bg_stop(r->col);
		cli_fail(c, "%s (%s)", collect_error(r->col), sc.err);
		goto out;
	}
	if (src) {
		cli_fail(c, "%s", sc.err);
		goto out;
	}
	progress(r, "stopping the cluster");
	bg = false;
	uint64_t lost = 0;
	if (collect_bg_stop(r->col) < 0 || collect_drain(r->col) < 0) {
		cli_fail(c, "%s", collect_error(r->col));
		goto out;
	}
	progress(r, "turning the captured records into events");
	if (collect_finish(r->col, &lost) < 0) {
		cli_fail(c, "%s", collect_error(r->col));
		goto out;
	}
	const struct collect_stats *st = collect_stats(r->col);
	struct spt_diag dg = { "" };
	int crc = spt_writer_close(w, &dg);
	w = NULL;
	if (crc) {
		cli_fail(c, "%s", dg.msg);
		goto out;
	}
	const struct hevents_stats *es = hevents_stats(ev);
	unsigned bad = 0;
	if (c->json) {
		printf("{\"system\":");
		cli_json_str(stdout, d->name);
		printf(",\"version\":");
		cli_json_str(stdout, version);
		printf(",\"output\":");
		cli_json_str(stdout, r->com.out);
		printf(",\"scenario\":");
		cli_json_str(stdout, r->com.scenario);
		printf(",\"work_dir\":");
		cli_json_str(stdout, r->keep ? r->keep : dir);
		printf(",\"netns\":%s", scen->partitions ? "true" : "false"); /* each node in a namespace */
		printf(",\"seed\":%" PRIu64 ",\"nodes\":%u,\"events\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"hits\":%" PRIu64
		       ",\"repeats\":%" PRIu64 ",\"sends\":%" PRIu64 ",\"receives\":%" PRIu64 ",\"paired\":%" PRIu64
		       ",\"unpaired_receives\":%" PRIu64 ",\"unpaired_sends\":%" PRIu64 ",\"probe_sites\":{\"entry\":%u,\"return\":%u}",
		       r->com.seed, cl.n, st->events, lost, es->hits, es->repeats, st->sends, st->receives, st->paired,
		       st->unpaired_receives, st->unpaired_sends, probes.entry_sites, probes.ret_sites);
		printf(",\"probe_hits\":{");
		for (size_t i = 0; i < probes.n; i++) {
			printf("%s", i ? "," : "");
			cli_json_str(stdout, d->probes[i].name);
			printf(":%" PRIu64, hevents_probe_hits(ev, i));
		}
		printf("}");
		if (sc.started && d->has_load)
			load_figures(c, &sc, true);
		if ((d->status_leader || d->status_leader_if) && d->status_field) {
			printf(",\"final\":");
			bad = compare_final(r, &cl, d->status_field, true);
			printf(",\"final_match\":%s", bad ? "false" : "true");
		}
		printf("}\n");
	} else {
		if ((d->status_leader || d->status_leader_if) && d->status_field)
			bad = compare_final(r, &cl, d->status_field, false);
		printf("recorded %" PRIu64 " events (%" PRIu64 " lost; %" PRIu64 " messages sent, %" PRIu64
		       " received, %" PRIu64 " unpaired receives) of %s %s on %u nodes into %s\n",
		       st->events, lost, st->sends, st->receives, st->unpaired_receives, d->name, r->com.scenario, cl.n,
		       r->com.out);
		if (sc.started && d->has_load)
			load_figures(c, &sc, false);
		if ((d->status_leader || d->status_leader_if) && d->status_field)
			printf("end state of every live node (%s) %s what the nodes report\n", d->status_field,
			       bad ? "DIFFERS from" : "agrees with");
	}
	hcluster_stop(&cl);
	rc = record_verdict(c, &r->com, bad, "node(s)", "the nodes' own", lost);
	goto out;
interrupted:;
	hcluster_stop(&cl);
	bg = false;
	rc = record_interrupted(c, &r->com, r->col, &w);
out:
	r->com.node_names = NULL; /* names[] ends with this call */
	if (bg)
		collect_bg_stop(r->col);
	hscenario_fini(&sc);
	hcluster_stop(&cl);
	if (made_dir && r->keep) {
		if (rename(dir, r->keep))
			fprintf(stderr, "spectap record: cannot keep %s as %s: %s\n", dir, r->keep, strerror(errno));
	} else if (made_dir) {
		sup_rm_rf(dir);
	}
	collect_free(r->col);
	hevents_free(ev);
	hprobes_free(&probes);
	if (w)
		spt_writer_abandon(w);
	uprobe_loader_close(l);
	return rc;
}

/* --until-covered: the corpus loop runs this command once per seed, with these options; the
 * mapping, spec and cfg default to the description's. */
static int until_covered(struct rec *r, const char *system)
{
	char map[PATH_MAX], spec[PATH_MAX], cfg[PATH_MAX];
	const struct desc *d = &r->d;
	/* Each run from the description too (etcd has a C recorder besides). */
	const char *extra[4] = { "--described", NULL };
	if (d->map)
		snprintf(map, sizeof(map), "%s/%s", d->dir, d->map);
	if (d->spec)
		snprintf(spec, sizeof(spec), "%s/%s", d->dir, d->spec);
	if (d->cfg)
		snprintf(cfg, sizeof(cfg), "%s/%s", d->dir, d->cfg);
	if (!(r->cov.map ? r->cov.map : d->map) || !(r->cov.spec ? r->cov.spec : d->spec))
		return cli_usage_error(r->c, "--until-covered needs --map M.tla and --spec S.tla (%s names none)", d->path);
	if (r->binary) {
		extra[1] = "--binary";
		extra[2] = r->binary;
	}
	return corpus_run(r->c, &r->com, system, &r->cov, d->map ? map : NULL, d->spec ? spec : NULL,
			  d->cfg ? cfg : NULL, extra);
}

static bool desc_knows(const void *d, const char *name) { return desc_scenario(d, name) != NULL; }

int record_described(int argc, char **argv)
{
	char path[PATH_MAX], err[DESC_ERR_SIZE];
	struct cli c = { .cmd = "record", .usage = usage_head };
	struct rec r = { .c = &c, .com = { .seed = 1 }, .t0_ms = sup_now_ms() };
	static const struct option longopts[] = {
		RECORD_COMMON_LONGOPTS, { "binary", required_argument, NULL, 'B' }, { "keep", required_argument, NULL, 'K' },
		CORPUS_LONGOPTS, { "no-probes", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	const char *system = argv[1]; /* getopt_long moves it behind the options */
	cli_begin(&c, argc, argv);
	if (desc_find(system, path, sizeof(path), err, sizeof(err)))
		return cli_usage_error(&c, "recording %s: %s", system, err);
	if (desc_load(path, &r.d, err))
		return cli_fail(&c, "%s", err);
	r.com.nodes = r.d.nodes_default;
	/* ${tools}: where spectap's own programs are (goprobe is always built there). */
	if (cli_beside_self("tools/goprobe", X_OK, r.goprobe, sizeof(r.goprobe))) {
		memcpy(r.tools, r.goprobe, sizeof(r.tools));
		*strrchr(r.tools, '/') = 0;
	}
	int opt, k, rc;
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		if ((k = record_common_opt(&c, opt, optarg, &r.com, r.d.nodes_min,
					   r.d.nodes_max < HCLUSTER_MAX_NODES ? r.d.nodes_max : HCLUSTER_MAX_NODES)) == 0)
			k = corpus_opt(&c, opt, optarg, &r.cov);
		if (k < 0) {
			desc_free(&r.d);
			return CLI_USAGE;
		}
		if (k)
			continue;
		switch (opt) {
		case 'B': r.binary = record_abs_path(optarg, r.abs_binary, sizeof(r.abs_binary)); break;
		case 'K': r.keep = optarg; break;
		case 'N': r.no_probes = true; break;
		case 'h': {
			char names[512];
			desc_scenario_names(&r.d, names, sizeof(names));
			printf("%s\n%s: %s\n  described in %s\n  scenarios: %s\n", usage_head, r.d.name,
			       r.d.about ? r.d.about : "", r.d.path, names);
			desc_free(&r.d);
			return CLI_OK;
		}
		default:
			desc_free(&r.d);
			return cli_other_opt(&c, opt, argv);
		}
	}
	char names[512], bad[128];
	desc_scenario_names(&r.d, names, sizeof(names));
	if (optind >= argc || strcmp(argv[optind], system))
		rc = cli_usage_error(&c, "spectap record %s: the system must come first", system);
	else if (optind + 1 != argc)
		rc = cli_usage_error(&c, "unexpected argument '%s'", argv[optind + 1]);
	else if (!r.com.scenario)
		rc = cli_usage_error(&c, "--scenario is required (%s)", names);
	else if (record_scenario_unknown(r.com.scenario, desc_knows, &r.d, bad, sizeof(bad)))
		rc = cli_usage_error(&c, "unknown scenario '%s' of %s (known: %s)", bad, r.d.name, names);
	else if (r.no_probes && (r.com.out || r.cov.until_covered))
		rc = cli_usage_error(&c, "--no-probes writes no trace: no -o, no --until-covered");
	else if (r.no_probes)
		rc = dry_run(&r);
	else if (!r.d.nprobes)
		rc = cli_usage_error(&c, "%s describes no probes: run its scenarios with --no-probes", r.d.path);
	else if ((rc = corpus_check(&c, &r.com, &r.cov)))
		;
	else if (!r.com.out)
		rc = cli_usage_error(&c, "-o OUT.spt is required");
	else if (r.cov.until_covered)
		rc = until_covered(&r, system);
	else
		rc = record(&r);
	desc_free(&r.d);
	return rc;
}
