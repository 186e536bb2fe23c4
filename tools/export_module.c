/* export --to sysmobench through a system's dialect module (export_module.h). */
#include "export_module.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "desc.h"
#include "fold.h"
#include "spectap/buf.h"
#include "spectap/json.h"

int export_module_find(const struct spt_header *h, char *path, size_t size)
{
	char dpath[PATH_MAX], err[DESC_ERR_SIZE];
	struct desc d;
	if (!h->system || !*h->system || desc_find(h->system, dpath, sizeof(dpath), err, sizeof(err)) ||
	    desc_load(dpath, &d, err))
		return 0;
	int found = d.sysmobench != NULL;
	if (found)
		snprintf(path, size, "%s/%s", d.dir, d.sysmobench);
	desc_free(&d);
	return found;
}

int export_module_run(struct cli *c, const char *module, struct spt_reader *r, FILE *f, const char *out,
		      uint64_t *events, uint64_t *lines)
{
	struct check_error err = { "" };
	struct fold *fd;
	struct spt_buf b = { 0 };
	struct spt_json_loss loss = { 0 };
	const struct spt_header *h = spt_reader_header(r);
	int rc = fold_new(module, "ExportInit", "Export", NULL, &fd, &err);
	if (rc)
		return cli_fail(c, "%s", err.msg[0] ? err.msg : strerror(-rc));
	*events = *lines = 0;
	spt_buf_puts(&b, "{\"tag\":\"config\",\"ts\":\"0\",\"config\":{\"servers\":[");
	for (size_t i = 0; i < h->n_nodes; i++) {
		spt_buf_puts(&b, i ? "," : "");
		spt_buf_json_str(&b, h->nodes[i], strlen(h->nodes[i]));
	}
	spt_buf_puts(&b, "]}}\n");
	const struct spt_event *ev;
	int k;
	rc = CLI_FAIL;
	while ((k = spt_reader_next(r, &ev)) == 1) {
		struct spt_arena *a = fold_begin(fd);
		spt_val *x = a ? spt_event_value(a, ev) : NULL, *o;
		if (!x) {
			cli_fail(c, "out of memory");
			goto out;
		}
		if (fold_step(fd, x, &o, &err)) {
			cli_fail(c, "event %" PRIu64 " (%s of %s): %s", *events, ev->kind, ev->node, err.msg);
			goto out;
		}
		(*events)++;
		if (o && o->kind != SPT_SEQ && !(spt_is_fun(o) && o->n == 0)) {
			cli_fail(c, "%s: Export's out must be a sequence of lines (records), not %s", module,
				 ev_show(&fold_interp(fd)->ev, o));
			goto out;
		}
		for (uint32_t i = 0; o && o->kind == SPT_SEQ && i < o->n; i++) {
			spt_buf_printf(&b, "{\"tag\":\"trace\",\"ts\":\"%" PRIu64 "\",\"event\":", ev->ts_ns);
			spt_json_write(&b, o->u.elems[i], 0, &loss);
			spt_buf_puts(&b, "}\n");
			(*lines)++;
		}
		if (b.len >= 1 << 16 && !cli_flush(&b, f)) {
			cli_fail(c, "cannot write %s: %s", out ? out : "standard output", strerror(errno));
			goto out;
		}
	}
	if (k < 0) {
		cli_fail(c, "reading the trace: %s", strerror(-k));
		goto out;
	}
	if (b.oom || !cli_flush(&b, f)) {
		cli_fail(c, "cannot write %s: %s", out ? out : "standard output", b.oom ? "out of memory" : strerror(errno));
		goto out;
	}
	rc = CLI_OK;
out:
	spt_buf_free(&b);
	fold_free(fd);
	return rc;
}
