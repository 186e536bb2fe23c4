/* spectap stat: what a trace holds, and whether it is whole. */
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "coverage.h"
#include "commands.h"

static const char usage[] =
	"usage: spectap stat FILE.spt [--json]\n"
	"       spectap stat --coverage --map M.tla --spec S.tla [--cfg S.cfg] [--min N] [--json] FILE.spt...\n"
	"\n"
	"Reads every event and prints: events, nodes and kinds with counts, time span, bytes\n"
	"per event, events lost at capture, message pairing (sends, receives, receives\n"
	"without a send, receives before their send), and whether the file was closed\n"
	"cleanly, recovered by scanning, or damaged.\n"
	"\n"
	"With --coverage: what a corpus of traces exercised, through a mapping (docs/mapping.md):\n"
	"windows per action, and events per code branch (the mapping's Branch(ev)) against the\n"
	"branches it lists (Branches), each needing at least N events (--min, default 1).\n"
	"\n"
	"  --json      one JSON object (keys: events, lost, nodes, kinds, recovered, ...; with\n"
	"              --coverage: traces, windows, branches, listed, missing, min, complete)\n"
	"  --allow-damage  exit 0 on a damaged trace (every chunk that can be read is)\n"
	"  -h, --help  this text\n"
	"\n"
	"Exit status: 0 done, 1 failed, 2 usage, 3 the trace is damaged (reported; see --allow-damage).\n";

enum { SEEN_SEND = 1, SEEN_RECV = 2, RECV_FIRST = 4 };

/* Message ids seen, with what was seen of each. */
struct idset {
	uint64_t *ids;
	uint8_t *flags;
	size_t cap, n;
};

static uint8_t *idset_get(struct idset *s, uint64_t id)
{
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *ids = calloc(cap, sizeof(*ids));
		uint8_t *fl = calloc(cap, 1);
		if (!ids || !fl) {
			free(ids);
			free(fl);
			return NULL;
		}
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->flags[i])
				continue;
			size_t j = (size_t)(s->ids[i] * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
			while (fl[j])
				j = (j + 1) & (cap - 1);
			ids[j] = s->ids[i];
			fl[j] = s->flags[i];
		}
		free(s->ids);
		free(s->flags);
		s->ids = ids;
		s->flags = fl;
		s->cap = cap;
	}
	size_t j = (size_t)(id * 0x9e3779b97f4a7c15ULL >> 20) & (s->cap - 1);
	while (s->flags[j] && s->ids[j] != id)
		j = (j + 1) & (s->cap - 1);
	if (!s->flags[j]) {
		s->ids[j] = id;
		s->n++;
	}
	return &s->flags[j];
}

struct msg_stats {
	uint64_t sends, receives, paired, unpaired_receives, never_received, receive_first, no_id;
};

static void print_counts_json(const char *name, const struct cli_counts *m)
{
	printf(",\"%s\":{", name);
	for (size_t i = 0; i < m->n; i++) {
		if (i)
			putchar(',');
		cli_json_str(stdout, m->names[i]);
		printf(":%" PRIu64, m->counts[i]);
	}
	putchar('}');
}

static void print_counts(const char *title, const struct cli_counts *m)
{
	size_t *idx = cli_counts_by_size(m);
	printf("%-12s", title);
	for (size_t i = 0; i < m->n; i++) {
		size_t k = idx ? idx[i] : i;
		printf("%s%s %" PRIu64, i ? (i % 4 ? ",  " : "\n            ") : "", m->names[k], m->counts[k]);
	}
	putchar('\n');
	free(idx);
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

static void report(struct cli *c, const char *path, struct spt_reader *r, uint64_t events,
		   uint64_t first, uint64_t last, const struct cli_counts *nodes,
		   const struct cli_counts *kinds, const struct msg_stats *m)
{
	const struct spt_trace_info *i = spt_reader_info(r);
	const struct spt_header *h = spt_reader_header(r);
	double bpe = events ? (double)i->file_bytes / (double)events : 0.0;
	uint64_t span = last >= first ? last - first : 0;
	if (c->json) {
		printf("{\"file\":");
		cli_json_str(stdout, path);
		printf(",\"events\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"recovered\":%s,\"indexed\":%s,"
		       "\"damaged\":%s",
		       events, i->lost, i->recovered ? "true" : "false", i->indexed ? "true" : "false",
		       i->damaged ? "true" : "false");
		cli_json_damage(stdout, i);
		printf(",\"torn_bytes\":%" PRIu64, i->torn_bytes);
		printf(",\"chunks\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"bytes_per_event\":%.2f", i->chunks,
		       i->file_bytes, bpe);
		printf(",\"ts_first_ns\":%" PRIu64 ",\"ts_last_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64, first,
		       last, span);
		printf(",\"system\":");
		cli_json_str(stdout, h->system);
		printf(",\"system_version\":");
		cli_json_str(stdout, h->system_version);
		printf(",\"capture_method\":");
		cli_json_str(stdout, h->capture_method);
		printf(",\"scenario\":");
		cli_json_str(stdout, h->scenario);
		if (h->has_seed)
			printf(",\"seed\":%" PRIu64, h->seed);
		print_counts_json("nodes", nodes);
		print_counts_json("kinds", kinds);
		printf(",\"messages\":{\"sends\":%" PRIu64 ",\"receives\":%" PRIu64 ",\"paired\":%" PRIu64
		       ",\"unpaired_receives\":%" PRIu64 ",\"never_received\":%" PRIu64
		       ",\"received_before_sent\":%" PRIu64 ",\"without_id\":%" PRIu64 "}}\n",
		       m->sends, m->receives, m->paired, m->unpaired_receives, m->never_received,
		       m->receive_first, m->no_id);
		return;
	}
	const char *state = i->indexed ? "closed cleanly, indexed" : "not closed cleanly, recovered by scanning";
	printf("%-12s%s (%s%s)\n", "trace", path, i->damaged ? "DAMAGED, " : "", state);
	if (i->damaged)
		printf("%-12s%" PRIu64 " bytes from byte %" PRIu64 " (%s): %" PRIu64 " chunks, %" PRIu64
		       " events unreadable%s\n",
		       "damage", i->damaged_bytes, i->damage_offset, i->damage, i->damaged_chunks,
		       i->damaged_events, i->damaged_tail ? ", and the end of the file (its events unknown)" : "");
	printf("%-12s%s %s (capture %s, scenario %s", "system", or_dash(h->system),
	       or_dash(h->system_version), or_dash(h->capture_method), or_dash(h->scenario));
	if (h->has_seed)
		printf(", seed %" PRIu64, h->seed);
	printf(")\n");
	printf("%-12s%" PRIu64 " in %" PRIu64 " chunks, %zu nodes, %zu kinds\n", "events", events,
	       i->chunks, nodes->n, kinds->n);
	printf("%-12s%.6f s (ts %" PRIu64 " .. %" PRIu64 " ns)\n", "time span", (double)span / 1e9,
	       first, last);
	printf("%-12s%" PRIu64 " bytes, %.1f bytes per event\n", "size", i->file_bytes, bpe);
	printf("%-12s%" PRIu64 " events%s\n", "lost", i->lost, i->lost ? " (LOSS AT CAPTURE)" : "");
	printf("%-12s%" PRIu64 " sends, %" PRIu64 " receives: %" PRIu64 " paired, %" PRIu64
	       " without a send, %" PRIu64 " sends never received, %" PRIu64 " received before sent\n",
	       "messages", m->sends, m->receives, m->paired, m->unpaired_receives, m->never_received,
	       m->receive_first);
	print_counts("nodes", nodes);
	print_counts("kinds", kinds);
}

static int stat_coverage(struct cli *c, const char *map, const char *spec, const char *cfg, uint64_t min, int n,
			 char **files)
{
	if (!map || !spec)
		return cli_usage_error(c, "--coverage needs --map M.tla and --spec S.tla");
	if (n < 1)
		return cli_usage_error(c, "no trace file given");
	struct coverage cv;
	coverage_init(&cv, map, spec, cfg);
	int rc = CLI_OK;
	for (int i = 0; i < n && rc == CLI_OK; i++)
		rc = coverage_add(&cv, c, files[i]);
	if (rc == CLI_OK)
		coverage_print(&cv, min, c->json, stdout);
	coverage_fini(&cv);
	return rc;
}

int cmd_stat(int argc, char **argv)
{
	struct cli c = { .cmd = "stat", .usage = usage };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },     { "coverage", no_argument, NULL, 'C' },
		{ "map", required_argument, NULL, 'M' }, { "spec", required_argument, NULL, 'S' },
		{ "cfg", required_argument, NULL, 'F' }, { "min", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },      CLI_ALLOW_DAMAGE_OPTION,
		{ NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt;
	bool coverage = false;
	const char *map = NULL, *spec = NULL, *cfg = NULL;
	uint64_t min = 1;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': break;
		case 'C': coverage = true; break;
		case CLI_OPT_ALLOW_DAMAGE: c.allow_damage = true; break;
		case 'M': map = optarg; break;
		case 'S': spec = optarg; break;
		case 'F': cfg = optarg; break;
		case 'N':
			if (!cli_parse_u64(&c, "--min", optarg, &min))
				return CLI_USAGE;
			break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (coverage)
		return stat_coverage(&c, map, spec, cfg, min, argc - optind, argv + optind);
	if (map || spec || cfg)
		return cli_usage_error(&c, "--map, --spec and --cfg go with --coverage");
	if (optind + 1 != argc)
		return cli_usage_error(&c, optind == argc ? "the trace file is missing" : "one trace file expected");
	const char *path = argv[optind];
	struct spt_reader *r;
	int rc = cli_open_trace(&c, path, &r);
	if (rc)
		return rc;
	struct cli_counts nodes = { 0 }, kinds = { 0 };
	struct idset ids = { 0 };
	struct msg_stats m = { 0 };
	const struct spt_header *h = spt_reader_header(r);
	rc = CLI_FAIL;
	for (size_t i = 0; i < h->n_nodes; i++)
		if (cli_count(&nodes, h->nodes[i], 0))
			goto oom;
	uint64_t events = 0, first = 0, last = 0;
	const struct spt_event *ev;
	int k;
	while ((k = spt_reader_next(r, &ev)) == 1) {
		if (!events || ev->ts_ns < first)
			first = ev->ts_ns;
		if (ev->ts_ns > last)
			last = ev->ts_ns;
		events++;
		if (cli_count(&nodes, ev->node, 1) || cli_count(&kinds, ev->kind, 1))
			goto oom;
		if (!ev->msg)
			continue;
		bool send = ev->msg->dir == SPT_MSG_SEND;
		if (send)
			m.sends++;
		else
			m.receives++;
		if (!ev->msg->id) {
			m.no_id++;
			continue;
		}
		uint8_t *f = idset_get(&ids, ev->msg->id);
		if (!f)
			goto oom;
		if (!send && !(*f & SEEN_SEND))
			*f |= RECV_FIRST;
		*f |= send ? SEEN_SEND : SEEN_RECV;
		if ((events & 0xffff) == 0)
			cli_progress(&c, "%" PRIu64 " events", events);
	}
	cli_progress_done(&c);
	if (k < 0) {
		cli_fail(&c, "reading %s: %s", path, strerror(-k));
		goto out;
	}
	for (size_t i = 0; i < ids.cap; i++) {
		uint8_t f = ids.flags ? ids.flags[i] : 0;
		if (!f)
			continue;
		if ((f & SEEN_SEND) && (f & SEEN_RECV))
			m.paired++;
		if ((f & SEEN_RECV) && !(f & SEEN_SEND))
			m.unpaired_receives++;
		if ((f & SEEN_SEND) && !(f & SEEN_RECV))
			m.never_received++;
		if ((f & RECV_FIRST) && (f & SEEN_SEND))
			m.receive_first++;
	}
	report(&c, path, r, events, first, last, &nodes, &kinds, &m);
	rc = cli_damage_exit(&c, path, r, CLI_OK);
	goto out;
oom:
	cli_fail(&c, "out of memory");
out:
	free(ids.ids);
	free(ids.flags);
	cli_counts_free(&nodes);
	cli_counts_free(&kinds);
	spt_reader_close(r);
	return rc;
}
