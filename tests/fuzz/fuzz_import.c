/*
 * Fuzz target for the NDJSON importers: the first byte picks the dialect, the rest is fed line by
 * line. Every imported event must export and re-import in the lossless json dialect unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spectap/dialect.h"

static void check_json_round_trip(const struct spt_event *ev, const struct spt_header *h)
{
	struct spt_export *ex;
	struct spt_import *im;
	struct spt_buf a = { 0 }, b = { 0 };
	if (spt_export_new(SPT_DIALECT_JSON, h, &ex))
		abort();
	if (spt_import_new(SPT_DIALECT_JSON, &im))
		abort();
	if (spt_export_event(ex, ev, &a) || a.len == 0)
		abort();
	const struct spt_event *back;
	const struct spt_loss *loss;
	struct spt_json_error err;
	if (spt_import_line(im, a.p, a.len - 1, &back, &loss, &err) != 1)
		abort(); /* what json export writes, json import must read */
	if (spt_export_event(ex, back, &b) || a.len != b.len || memcmp(a.p, b.p, a.len))
		abort();
	spt_buf_free(&a);
	spt_buf_free(&b);
	spt_import_free(im);
	spt_export_free(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	enum spt_dialect d = (enum spt_dialect)(data[0] % 3);
	struct spt_import *im;
	if (spt_import_new(d, &im))
		return 0;
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const struct spt_event *ev;
		const struct spt_loss *loss;
		struct spt_json_error err;
		int rc = spt_import_line(im, p, len, &ev, &loss, &err);
		if (rc == 1)
			check_json_round_trip(ev, spt_import_header(im));
		else if (rc < 0 && !err.msg[0])
			abort(); /* every error explains itself */
		p += len + 1;
	}
	spt_import_free(im);
	return 0;
}
