/* NDJSON import and export: the parts every dialect shares. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dialect_internal.h"
#include "spectap/msgpair.h"

static const struct dialect_ops *const dialects[] = {
	[SPT_DIALECT_JSON] = &dialect_json,
	[SPT_DIALECT_ETCD] = &dialect_etcd,
	[SPT_DIALECT_SYSMOBENCH] = &dialect_sysmobench,
};

int spt_dialect_from_name(const char *name, enum spt_dialect *out)
{
	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++) {
		if (!strcmp(name, dialects[i]->name)) {
			*out = (enum spt_dialect)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *spt_dialect_name(enum spt_dialect d) { return dialects[d]->name; }
const char *spt_dialect_names(void) { return "json, etcd-ndjson, sysmobench"; }

int dialect_fail(struct spt_json_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->offset = 0;
	return -EINVAL;
}

/* ---- record helpers ---- */

const char *rec_str(spt_val *rec, const char *name)
{
	spt_val *v = rec ? spt_rec_get(rec, name) : NULL;
	return v && v->kind == SPT_STR ? v->u.s : NULL;
}

static bool named(spt_val *k, const char *const *names)
{
	for (; names && *names; names++)
		if (strlen(*names) == k->n && !memcmp(*names, k->u.s, k->n))
			return true;
	return false;
}

static uint32_t written(spt_val *rec, uint32_t i) { return rec->u.fn.order ? rec->u.fn.order[i] : i; }

spt_val *rec_without(struct spt_arena *a, spt_val *rec, const char *const *drop)
{
	if (!rec || rec->kind != SPT_REC)
		return NULL;
	spt_val **k = spt_arena_alloc(a, (rec->n + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(a, (rec->n + 1) * sizeof(*v));
	if (!k || !v)
		return NULL;
	size_t n = 0;
	for (uint32_t i = 0; i < rec->n; i++) {
		uint32_t j = written(rec, i);
		if (named(rec->u.fn.keys[j], drop))
			continue;
		k[n] = rec->u.fn.keys[j];
		v[n++] = rec->u.fn.vals[j];
	}
	return n ? spt_fun_ordered(a, k, v, n, NULL) : spt_empty_fun(a, SPT_REC);
}

spt_val *rec_plus(struct spt_arena *a, spt_val *rec, const char *const *names, spt_val *const *vals,
		  size_t n)
{
	uint32_t have = rec && rec->kind == SPT_REC ? rec->n : 0;
	spt_val **k = spt_arena_alloc(a, (have + n + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(a, (have + n + 1) * sizeof(*v));
	if (!k || !v)
		return NULL;
	size_t m = 0;
	for (uint32_t i = 0; i < have; i++) {
		uint32_t j = written(rec, i);
		k[m] = rec->u.fn.keys[j];
		v[m++] = rec->u.fn.vals[j];
	}
	for (size_t i = 0; i < n; i++) {
		if (!(k[m] = spt_cstr(a, names[i])))
			return NULL;
		v[m++] = vals[i];
	}
	return m ? spt_fun_ordered(a, k, v, m, NULL) : spt_empty_fun(a, SPT_REC);
}

void json_write_rec_ordered(struct spt_buf *b, spt_val *rec, const char *const *first,
			    unsigned flags, struct spt_json_loss *loss)
{
	bool any = false;
	spt_buf_putc(b, '{');
	for (const char *const *f = first; rec && f && *f; f++) {
		spt_val *v = spt_rec_get(rec, *f);
		if (!v)
			continue;
		if (any)
			spt_buf_putc(b, ',');
		spt_buf_json_str(b, *f, strlen(*f));
		spt_buf_putc(b, ':');
		spt_json_write(b, v, flags, loss);
		any = true;
	}
	for (uint32_t i = 0; rec && rec->kind == SPT_REC && i < rec->n; i++) {
		uint32_t j = written(rec, i);
		spt_val *k = rec->u.fn.keys[j];
		if (named(k, first))
			continue;
		if (any)
			spt_buf_putc(b, ',');
		spt_buf_json_str(b, k->u.s, k->n);
		spt_buf_putc(b, ':');
		spt_json_write(b, rec->u.fn.vals[j], flags, loss);
		any = true;
	}
	spt_buf_putc(b, '}');
}

/* ---- import ---- */

struct node_clock {
	char *name;
	uint64_t seq, lamport;
};

/* The last seq of a (node, source), for the dialects that carry their own. */
struct seq_mark {
	char *node, *source;
	uint64_t seq;
};

struct spt_import {
	const struct dialect_ops *ops;
	struct seq_mark *seqs;
	size_t n_seqs, cap_seqs;
	bool header_seen;
	struct spt_arena line;      /* the current line's values */
	struct spt_arena keep;      /* header strings */
	struct spt_event ev;
	struct spt_msg msg;
	struct spt_loss loss;
	struct spt_header header;
	const char **nodes;
	size_t cap_nodes;
	bool nodes_from_config;
	struct node_clock *clocks;
	size_t n_clocks, cap_clocks;
	struct spt_msgpair *pairs;
	bool derive; /* the dialect's, or forced by spt_import_set_derive */
	struct spt_import_stats stats;
};

struct spt_arena *import_arena(struct spt_import *im) { return &im->line; }

int spt_import_new(enum spt_dialect d, struct spt_import **out)
{
	struct spt_import *im = calloc(1, sizeof(*im));
	if (!im)
		return -ENOMEM;
	if (spt_msgpair_new(&im->pairs)) {
		free(im);
		return -ENOMEM;
	}
	im->ops = dialects[d];
	im->derive = im->ops->derive;
	spt_arena_init(&im->line);
	spt_arena_init(&im->keep);
	im->header.system = "";
	*out = im;
	return 0;
}

void spt_import_free(struct spt_import *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->n_clocks; i++)
		free(im->clocks[i].name);
	free(im->clocks);
	for (size_t i = 0; i < im->n_seqs; i++) {
		free(im->seqs[i].node);
		free(im->seqs[i].source);
	}
	free(im->seqs);
	spt_msgpair_free(im->pairs);
	free(im->nodes);
	spt_arena_fini(&im->line);
	spt_arena_fini(&im->keep);
	free(im);
}

const struct spt_header *spt_import_header(struct spt_import *im) { return &im->header; }
void spt_import_set_derive(struct spt_import *im) { im->derive = true; }
const struct spt_import_stats *spt_import_stats(const struct spt_import *im) { return &im->stats; }

static int add_node(struct spt_import *im, const char *name)
{
	for (size_t i = 0; i < im->header.n_nodes; i++)
		if (!strcmp(im->nodes[i], name))
			return 0;
	if (im->header.n_nodes == im->cap_nodes) {
		size_t cap = im->cap_nodes ? im->cap_nodes * 2 : 8;
		const char **n = realloc(im->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		im->nodes = n;
		im->cap_nodes = cap;
	}
	char *c = spt_arena_strndup(&im->keep, name, strlen(name));
	if (!c)
		return -ENOMEM;
	im->nodes[im->header.n_nodes++] = c;
	im->header.nodes = im->nodes;
	return 0;
}

int import_set_nodes(struct spt_import *im, spt_val *seq)
{
	if (!spt_is_fun(seq) || (seq->n && seq->kind != SPT_SEQ))
		return -EINVAL;
	im->header.n_nodes = 0;
	for (uint32_t i = 0; i < seq->n; i++) {
		spt_val *s = seq->u.elems[i];
		if (s->kind != SPT_STR)
			return -EINVAL;
		int rc = add_node(im, s->u.s);
		if (rc)
			return rc;
	}
	im->nodes_from_config = true;
	return 0;
}

int import_config_line(struct spt_import *im, spt_val *line)
{
	spt_val *cfg = spt_rec_get(line, "config");
	if (!cfg || cfg->kind != SPT_REC)
		return -EINVAL;
	spt_val *servers = spt_rec_get(cfg, "servers");
	if (servers && import_set_nodes(im, servers))
		return -EINVAL;
	/* The whole line, for an export that writes it back as it came. */
	spt_val *names[1] = { spt_cstr(&im->keep, "config_line") }, *vals[1] = { spt_value_clone(&im->keep, line) };
	if (!names[0] || !vals[0] || !(im->header.extra = spt_fun_ordered(&im->keep, names, vals, 1, NULL)))
		return -ENOMEM;
	return 0;
}

int rfc3339_to_ns(const char *s, uint64_t *ns)
{
	int y, mo, d, h, mi, sec, n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return -EINVAL;
	const char *p = s + n;
	uint64_t frac = 0;
	int digits = 0;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (digits < 9)
				frac = frac * 10 + (uint64_t)(*p - '0'), digits++;
		for (; digits < 9; digits++)
			frac *= 10;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om, k = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5)
			return -EINVAL;
		off = (*p == '+' ? 1 : -1) * ((int64_t)oh * 3600 + om * 60);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec };
	int64_t t = (int64_t)timegm(&tm) - off;
	if (t < 0 || (uint64_t)t > (uint64_t)INT64_MAX / 1000000000u - 1)
		return -ERANGE;
	*ns = (uint64_t)t * 1000000000u + frac;
	return 0;
}

void ns_to_rfc3339(uint64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	gmtime_r(&t, &tm);
	char frac[16] = "";
	uint64_t f = ns % 1000000000u;
	if (f) { /* Go's RFC3339Nano: the fraction without its trailing zeros */
		int digits = 9;
		while (f % 10 == 0) {
			f /= 10;
			digits--;
		}
		snprintf(frac, sizeof(frac), ".%0*" PRIu64, digits, f);
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, frac);
}

void put_rfc3339(struct spt_buf *b, uint64_t ns)
{
	char canon[48];
	ns_to_rfc3339(ns, canon, sizeof(canon));
	spt_buf_json_str(b, canon, strlen(canon));
}

spt_val *rfc3339_text_to_keep(spt_val *text, uint64_t ns)
{
	char canon[48];
	ns_to_rfc3339(ns, canon, sizeof(canon));
	return text->n == strlen(canon) && !memcmp(text->u.s, canon, text->n) ? NULL : text;
}

static const char *keep_str(struct spt_import *im, const char *s)
{
	return s ? spt_arena_strndup(&im->keep, s, strlen(s)) : NULL;
}

int import_set_header(struct spt_import *im, const struct spt_header *h)
{
	struct spt_header *d = &im->header;
	d->system = keep_str(im, h->system);
	d->system_version = keep_str(im, h->system_version);
	d->capture_method = keep_str(im, h->capture_method);
	d->scenario = keep_str(im, h->scenario);
	d->command_line = keep_str(im, h->command_line);
	d->has_seed = h->has_seed;
	d->seed = h->seed;
	d->clock_realtime_ns = h->clock_realtime_ns;
	d->clock_monotonic_ns = h->clock_monotonic_ns;
	d->extra = h->extra ? spt_value_clone(&im->keep, h->extra) : NULL;
	d->n_nodes = 0;
	for (size_t i = 0; i < h->n_nodes; i++)
		if (add_node(im, h->nodes[i]))
			return -ENOMEM;
	im->nodes_from_config = true;
	return 0;
}

static struct node_clock *clock_of(struct spt_import *im, const char *node)
{
	for (size_t i = im->n_clocks; i-- > 0;)
		if (!strcmp(im->clocks[i].name, node))
			return &im->clocks[i];
	if (im->n_clocks == im->cap_clocks) {
		size_t cap = im->cap_clocks ? im->cap_clocks * 2 : 8;
		struct node_clock *n = realloc(im->clocks, cap * sizeof(*n));
		if (!n)
			return NULL;
		im->clocks = n;
		im->cap_clocks = cap;
	}
	struct node_clock *c = &im->clocks[im->n_clocks];
	if (!(c->name = strdup(node)))
		return NULL;
	c->seq = c->lamport = 0;
	im->n_clocks++;
	return c;
}

/* Seq, message id and Lamport clock for dialects that do not carry them. */
static int derive(struct spt_import *im, struct spt_event *ev, struct spt_msg *msg)
{
	struct node_clock *c = clock_of(im, ev->node);
	if (!c)
		return -ENOMEM;
	if (!ev->source || !*ev->source)
		ev->source = "import";
	ev->seq = ++c->seq;
	uint64_t lamport = c->lamport + 1;
	if (ev->msg) {
		int rc;
		if (msg->dir == SPT_MSG_SEND) {
			if ((rc = spt_msgpair_send(im->pairs, msg, lamport, &msg->id)))
				return rc;
			im->stats.sends++;
		} else {
			uint64_t sent;
			if ((rc = spt_msgpair_recv(im->pairs, msg, &msg->id, &sent)) < 0)
				return rc;
			im->stats.receives++;
			if (rc) {
				if (sent + 1 > lamport)
					lamport = sent + 1;
				im->stats.paired++;
			} else {
				im->stats.unpaired_receives++;
			}
		}
	}
	ev->lamport = c->lamport = lamport;
	return 0;
}

bool import_header_allowed(struct spt_import *im)
{
	if (im->header_seen || im->stats.events)
		return false;
	im->header_seen = true;
	return true;
}

/* A dialect's own seq must increase per node and source: 0 or an error. */
static int check_seq(struct spt_import *im, const struct spt_event *ev, struct spt_json_error *err)
{
	for (size_t i = 0; i < im->n_seqs; i++) {
		struct seq_mark *m = &im->seqs[i];
		if (strcmp(m->node, ev->node) || strcmp(m->source, ev->source))
			continue;
		if (ev->seq <= m->seq)
			return dialect_fail(err, "event.seq %" PRIu64 " of node \"%s\" (source \"%s\") does not increase: "
						 "the one before was %" PRIu64,
					    ev->seq, ev->node, ev->source, m->seq);
		m->seq = ev->seq;
		return 0;
	}
	if (im->n_seqs == im->cap_seqs) {
		size_t cap = im->cap_seqs ? im->cap_seqs * 2 : 8;
		struct seq_mark *n = realloc(im->seqs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		im->seqs = n;
		im->cap_seqs = cap;
	}
	struct seq_mark *m = &im->seqs[im->n_seqs];
	if (!(m->node = strdup(ev->node)) || !(m->source = strdup(ev->source))) {
		free(m->node);
		return -ENOMEM;
	}
	m->seq = ev->seq;
	im->n_seqs++;
	return 0;
}

int spt_import_line(struct spt_import *im, const char *line, size_t len,
		    const struct spt_event **ev, const struct spt_loss **loss,
		    struct spt_json_error *err)
{
	spt_arena_reset(&im->line);
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
		i++;
	if (i == len)
		return 0;
	spt_val *obj;
	int rc = spt_json_parse(&im->line, line, len, im->ops->json_flags, &obj, err);
	if (rc)
		return rc;
	if (obj->kind != SPT_REC)
		return dialect_fail(err, "a JSON object expected, found %s",
				    obj->kind == SPT_SEQ ? "an array" : "a scalar");
	memset(&im->ev, 0, sizeof(im->ev));
	memset(&im->msg, 0, sizeof(im->msg));
	memset(&im->loss, 0, sizeof(im->loss));
	rc = im->ops->import(im, obj, &im->ev, &im->msg, &im->loss, err);
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(err->msg, sizeof(err->msg), "out of memory");
		return rc;
	}
	if (rc == 2) {
		*loss = &im->loss;
		return 2;
	}
	if (rc != 1)
		return 0;
	if (im->derive && (rc = derive(im, &im->ev, &im->msg)))
		return rc;
	if (!im->derive && (rc = check_seq(im, &im->ev, err)))
		return rc;
	if (!im->nodes_from_config && (rc = add_node(im, im->ev.node)))
		return rc;
	im->stats.events++;
	*ev = &im->ev;
	return 1;
}

/* ---- export ---- */

struct spt_export {
	const struct dialect_ops *ops;
	void *dstate;                  /* the dialect's own, between lines */
	void (*dstate_free)(void *);
	const struct spt_header *header;
	struct spt_drop drops[32];
	size_t n_drops;
	struct spt_arena arena;
};

int spt_export_new(enum spt_dialect d, const struct spt_header *h, struct spt_export **out)
{
	struct spt_export *ex = calloc(1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	ex->ops = dialects[d];
	ex->header = h;
	spt_arena_init(&ex->arena);
	*out = ex;
	return 0;
}

void spt_export_free(struct spt_export *ex)
{
	if (!ex)
		return;
	if (ex->dstate_free)
		ex->dstate_free(ex->dstate);
	spt_arena_fini(&ex->arena);
	free(ex);
}

void *export_state(const struct spt_export *ex) { return ex->dstate; }

void export_set_state(struct spt_export *ex, void *state, void (*free_fn)(void *))
{
	if (ex->dstate_free)
		ex->dstate_free(ex->dstate);
	ex->dstate = state;
	ex->dstate_free = free_fn;
}

const struct spt_header *export_header(const struct spt_export *ex) { return ex->header; }
struct spt_arena *export_arena(struct spt_export *ex) { return &ex->arena; }

void export_drop(struct spt_export *ex, const char *what, uint64_t n)
{
	if (!n)
		return;
	for (size_t i = 0; i < ex->n_drops; i++) {
		if (!strcmp(ex->drops[i].what, what)) {
			ex->drops[i].count += n;
			return;
		}
	}
	if (ex->n_drops < sizeof(ex->drops) / sizeof(ex->drops[0]))
		ex->drops[ex->n_drops++] = (struct spt_drop){ what, n };
}

void export_drop_common(struct spt_export *ex, const struct spt_event *ev, const struct spt_json_loss *loss)
{
	if (strcmp(ev->source ? ev->source : "", "import"))
		export_drop(ex, "capture sources, seq and Lamport clocks (re-derived on import)", 1);
	if (ev->tid)
		export_drop(ex, "thread ids", 1);
	export_drop(ex, "sets (written as arrays)", loss->sets);
	export_drop(ex, "functions with non-string keys (written as [key, value] pairs)", loss->funs);
	export_drop(ex, "model values (written as strings)", loss->models);
	export_drop(ex, "strings that are not UTF-8 (their stray bytes written as \\u00XX)", loss->bytes);
}

bool export_skip_unfinished(struct spt_export *ex, const struct spt_event *ev)
{
	if (ev->state || !ev->meta || !spt_rec_get(ev->meta, "unfinished"))
		return false;
	export_drop(ex, "steps whose post-state was never read (meta.unfinished: left out)", 1);
	return true;
}

size_t spt_export_dropped(const struct spt_export *ex, const struct spt_drop **out)
{
	*out = ex->drops;
	return ex->n_drops;
}

int spt_export_begin(struct spt_export *ex, struct spt_buf *out)
{
	return ex->ops->export_begin ? ex->ops->export_begin(ex, out) : 0;
}

int spt_export_event(struct spt_export *ex, const struct spt_event *ev, struct spt_buf *out)
{
	spt_arena_reset(&ex->arena);
	int rc = ex->ops->export_event(ex, ev, out);
	return rc ? rc : out->oom ? -ENOMEM : 0;
}

int spt_export_end(struct spt_export *ex, struct spt_buf *out)
{
	spt_arena_reset(&ex->arena);
	int rc = ex->ops->export_end ? ex->ops->export_end(ex, out) : 0;
	return rc ? rc : out->oom ? -ENOMEM : 0;
}

int spt_export_loss(struct spt_export *ex, const struct spt_loss *l, struct spt_buf *out)
{
	if (ex->ops->export_loss)
		return ex->ops->export_loss(ex, l, out);
	export_drop(ex, "loss records (events lost at capture)", 1);
	return 0;
}
