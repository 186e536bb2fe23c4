/* spectap windows: a trace's canonical Transition Validation windows, one NDJSON file per action. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "mapping.h"
#include "spectap/json.h"

static const char usage[] =
	"usage: spectap windows --map M.tla --spec S.tla [--cfg S.cfg] FILE.spt -o DIR [--json]\n"
	"\n"
	"Cuts a trace into Transition Validation windows as the mapping M says (docs/mapping.md)\n"
	"and writes DIR/<Action>.ndjson, one window per line: window_id, trace_id, action,\n"
	"actor, pre_state, post_state, and input when the mapping gives one. States are\n"
	"written as JSON the way TLC's Json module reads them (records as objects, sequences\n"
	"as arrays); sets are written as arrays, and counted.\n"
	"\n"
	"  --map M.tla   the mapping module (it EXTENDS Spec)\n"
	"  --spec S.tla  the spec Spec stands for\n"
	"  --cfg S.cfg   the spec's model configuration (default: beside the spec)\n"
	"  -o DIR        where to write (created if missing; existing files are replaced only with -f)\n"
	"  -f, --force   replace existing window files\n"
	"  --json        print the counts as JSON\n"
	CLI_ALLOW_DAMAGE_HELP
	"  -h, --help    this text\n"
	"\n"
	"Exit status: 0 done, 1 failed, 2 usage, 3 the trace is damaged (the windows of what\n"
	"could be read are written).\n";

struct action_file {
	char *action;
	FILE *f;
	uint64_t windows;
};

struct writer {
	struct cli *c;
	const char *dir, *trace_id;
	bool force;
	struct action_file *files;
	size_t n;
	struct spt_buf b;
	struct spt_json_loss loss;
	int failed;
};

static FILE *file_for(struct writer *w, const char *action, struct action_file **af)
{
	for (size_t i = 0; i < w->n; i++) {
		if (!strcmp(w->files[i].action, action)) {
			*af = &w->files[i];
			return w->files[i].f;
		}
	}
	if (strchr(action, '/') || action[0] == '.') {
		cli_fail(w->c, "the action name \"%s\" cannot name a file", action);
		return NULL;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.ndjson", w->dir, action);
	FILE *f = cli_create_output(w->c, path, w->force);
	if (!f)
		return NULL;
	struct action_file *n = realloc(w->files, (w->n + 1) * sizeof(*n));
	if (!n) {
		cli_close_output(w->c, f, path, false);
		return NULL;
	}
	w->files = n;
	w->files[w->n] = (struct action_file){ strdup(action), f, 0 };
	*af = &w->files[w->n++];
	return f;
}

static int write_window(void *arg, const struct map_window *mw)
{
	struct writer *w = arg;
	struct action_file *af;
	FILE *f = file_for(w, mw->action, &af);
	if (!f) {
		w->failed = 1;
		return 1;
	}
	struct spt_buf *b = &w->b;
	spt_buf_printf(b, "{\"window_id\":%" PRIu64 ",\"trace_id\":", mw->id);
	spt_buf_json_str(b, w->trace_id, strlen(w->trace_id));
	spt_buf_puts(b, ",\"action\":");
	spt_buf_json_str(b, mw->action, strlen(mw->action));
	spt_buf_puts(b, ",\"actor\":");
	spt_buf_json_str(b, mw->node, strlen(mw->node));
	spt_buf_printf(b, ",\"events\":[%" PRIu64 ",%" PRIu64 "]", mw->first_event, mw->last_event);
	spt_buf_puts(b, ",\"pre_state\":");
	spt_json_write(b, mw->pre, 0, &w->loss);
	spt_buf_puts(b, ",\"post_state\":");
	spt_json_write(b, mw->post, 0, &w->loss);
	if (mw->params) {
		spt_buf_puts(b, ",\"params\":");
		spt_json_write(b, mw->params, 0, &w->loss);
	}
	if (mw->input) {
		spt_buf_puts(b, ",\"input\":");
		spt_json_write(b, mw->input, 0, &w->loss);
	}
	spt_buf_puts(b, "}\n");
	af->windows++;
	if (!cli_flush(b, f)) {
		cli_fail(w->c, "cannot write %s/%s.ndjson: %s", w->dir, mw->action, strerror(errno));
		w->failed = 1;
		return 1;
	}
	return 0;
}

int cmd_windows(int argc, char **argv)
{
	struct cli c = { .cmd = "windows", .usage = usage };
	const char *map = NULL, *spec = NULL, *cfg = NULL, *dir = NULL;
	bool force = false;
	static const struct option longopts[] = {
		{ "map", required_argument, NULL, 'm' }, { "spec", required_argument, NULL, 's' },
		{ "cfg", required_argument, NULL, 'c' }, { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },     { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },      CLI_ALLOW_DAMAGE_OPTION,
		{ NULL, 0, NULL, 0 },
	};
	cli_begin(&c, argc, argv);
	int opt;
	while ((opt = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (opt) {
		case CLI_OPT_ALLOW_DAMAGE: c.allow_damage = true; break;
		case 'm': map = optarg; break;
		case 's': spec = optarg; break;
		case 'c': cfg = optarg; break;
		case 'o': dir = optarg; break;
		case 'f': force = true; break;
		case 'j': break;
		default: return cli_other_opt(&c, opt, argv);
		}
	}
	if (!map || !spec || !dir)
		return cli_usage_error(&c, "--map, --spec and -o DIR are required");
	if (optind + 1 != argc)
		return cli_usage_error(&c, optind == argc ? "the trace file is missing" : "one trace file expected");
	const char *path = argv[optind];
	if (mkdir(dir, 0755) && errno != EEXIST)
		return cli_fail(&c, "cannot create %s: %s", dir, strerror(errno));

	struct mapping *m;
	struct check_error err;
	if (mapping_new(map, spec, cfg, &m, &err))
		return cli_fail(&c, "%s", err.msg);
	struct spt_reader *r;
	int rc = cli_open_trace(&c, path, &r);
	if (rc) {
		mapping_free(m);
		return rc;
	}
	const char *base = strrchr(path, '/');
	struct writer w = { &c, dir, base ? base + 1 : path, force, NULL, 0, { 0 }, { 0 }, 0 };
	rc = mapping_run(m, r, write_window, &w, &err);
	if (rc < 0)
		cli_fail(&c, "%s", err.msg);
	rc = rc || w.failed ? CLI_FAIL : CLI_OK;
	uint64_t total = 0;
	bool keep = rc == CLI_OK; /* a failed run leaves no window file, and replaces none */
	for (size_t i = 0; i < w.n; i++) {
		char wpath[4096];
		snprintf(wpath, sizeof(wpath), "%s/%s.ndjson", dir, w.files[i].action);
		if (cli_close_output(&c, w.files[i].f, wpath, keep) && rc == CLI_OK)
			rc = CLI_FAIL;
		total += w.files[i].windows;
	}
	if (rc == CLI_OK) {
		if (c.json) {
			printf("{\"windows\":%" PRIu64 ",\"dropped_windows\":%" PRIu64 ",\"sets_as_arrays\":%lu,\"actions\":{",
			       total, mapping_dropped(m), w.loss.sets);
			for (size_t i = 0; i < w.n; i++) {
				printf(i ? "," : "");
				cli_json_str(stdout, w.files[i].action);
				printf(":%" PRIu64, w.files[i].windows);
			}
			printf("}");
			cli_json_damage(stdout, spt_reader_info(r));
			printf("}\n");
		} else {
			printf("%" PRIu64 " windows from %s into %s/:\n", total, path, dir);
			for (size_t i = 0; i < w.n; i++)
				printf("  %-28s %8" PRIu64 "  %s/%s.ndjson\n", w.files[i].action, w.files[i].windows, dir,
				       w.files[i].action);
			if (mapping_dropped(m))
				printf("  %" PRIu64 " not written: steps the trace did not see whole (the mapping's WindowDrop)\n",
				       mapping_dropped(m));
			if (w.loss.sets || w.loss.funs || w.loss.models)
				printf("  JSON cannot hold every value: %lu sets written as arrays, %lu functions as pairs, "
				       "%lu model values as strings\n", w.loss.sets, w.loss.funs, w.loss.models);
		}
		rc = cli_damage_exit(&c, path, r, rc);
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.files[i].action);
	free(w.files);
	spt_buf_free(&w.b);
	spt_reader_close(r);
	mapping_free(m);
	return rc;
}
