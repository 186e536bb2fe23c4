/* Streaming, append-only writer of *.spt traces. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "spectap/trace.h"
#include "trace_codec.h"
#include "trace_frame.h"

#define DEFAULT_CHUNK_BYTES (512u * 1024u)
#define DEFAULT_LEVEL 3

struct range {
	uint32_t node, source; /* string ids in the current chunk */
	uint64_t first, last, events;
};

struct chunk_meta {
	uint64_t offset, length, first_event, events, ts_min, ts_max;
};

struct spt_writer {
	int fd;
	char *path;
	char *partial; /* PATH.partial while an overwrite is written, renamed to path when done */
	uint64_t pending_since_ms; /* when the oldest pending entry was put */
	struct spt_writer_opts o;
	ZSTD_CCtx *cctx;
	int err; /* first error: every later call fails with it */

	struct spt_arena chunk_arena; /* protobuf messages and interned strings of the chunk */
	struct spt_arena tmp_arena;   /* one entry's protobuf structures */
	struct spt_buf chunk;         /* encoded entries waiting */
	struct spt_buf frame;         /* compressed output */
	struct encoder enc;

	uint64_t chunk_entries, chunk_events, ts_prev, ts_min, ts_max, chunk_lost;
	struct range *ranges;
	size_t n_ranges, cap_ranges;

	uint64_t offset, events, chunks, lost_total;
	struct chunk_meta *index;
	size_t n_index, cap_index;
	struct spt_loss *losses; /* copies, strings in loss_arena, for the index */
	size_t n_losses, cap_losses;
	struct spt_arena loss_arena;
};

static void diag(struct spt_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diag(struct spt_diag *d, const char *fmt, ...)
{
	if (!d)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

void spt_header_fill_defaults(struct spt_header *h)
{
	h->format_version = SPT_FORMAT_VERSION;
	if (!h->writer)
		h->writer = "spectap " SPECTAP_VERSION;
	if (!h->clock_realtime_ns && !h->clock_monotonic_ns) {
		struct timespec rt, mono;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		h->clock_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
		h->clock_monotonic_ns = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	}
}

static int write_all(struct spt_writer *w, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(w->fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += k;
		n -= (size_t)k;
		w->offset += (uint64_t)k;
	}
	if (w->o.sync && fdatasync(w->fd) < 0)
		return -errno;
	return 0;
}

/* Compresses w->chunk into one frame and writes it with a single write. */
static int emit_frame(struct spt_writer *w)
{
	if (w->chunk.oom || w->enc.oom)
		return -ENOMEM;
	size_t bound = ZSTD_compressBound(w->chunk.len);
	spt_buf_clear(&w->frame);
	if (!spt_buf_reserve(&w->frame, bound))
		return -ENOMEM;
	size_t n = ZSTD_compress2(w->cctx, w->frame.p, bound, w->chunk.p ? w->chunk.p : "", w->chunk.len);
	if (ZSTD_isError(n))
		return -EIO;
	return write_all(w, w->frame.p, n);
}

static void put_entry(struct spt_writer *w, Spectap__Trace__Entry *e)
{
	codec_put_entry(&w->chunk, e);
	w->chunk_entries++;
	spt_arena_reset(&w->tmp_arena);
}

static uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static void start_chunk(struct spt_writer *w)
{
	spt_buf_clear(&w->chunk);
	spt_arena_reset(&w->chunk_arena);
	spt_arena_reset(&w->tmp_arena);
	enc_reset(&w->enc);
	w->chunk_entries = w->chunk_events = w->chunk_lost = 0;
	w->ts_prev = w->ts_min = w->ts_max = 0;
	w->n_ranges = 0;
}

static int fail(struct spt_writer *w, int rc)
{
	if (!w->err)
		w->err = rc;
	return rc;
}

int spt_writer_open(const char *path, const struct spt_header *h, const struct spt_writer_opts *o,
		    struct spt_writer **out, struct spt_diag *d)
{
	int rc;
	struct spt_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->o.chunk_bytes = DEFAULT_CHUNK_BYTES;
	w->o.level = DEFAULT_LEVEL;
	if (o) {
		size_t sz = o->sz < sizeof(w->o) ? o->sz : sizeof(w->o);
		struct spt_writer_opts given = { 0 };
		memcpy(&given, o, sz);
		if (given.chunk_bytes)
			w->o.chunk_bytes = given.chunk_bytes;
		if (given.level)
			w->o.level = given.level;
		w->o.sync = given.sync;
		w->o.overwrite = given.overwrite;
		if (o->sz >= offsetof(struct spt_writer_opts, flush_events) + sizeof(given.flush_events)) {
			w->o.flush_ms = given.flush_ms;
			w->o.flush_events = given.flush_events;
		}
	}
	spt_arena_init(&w->chunk_arena);
	spt_arena_init(&w->tmp_arena);
	spt_arena_init(&w->loss_arena);
	enc_init(&w->enc, &w->tmp_arena, &w->chunk_arena, &w->chunk);
	if (!(w->path = strdup(path)) || !(w->cctx = ZSTD_createCCtx())) {
		rc = -ENOMEM;
		goto err;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->o.level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);

	/* Never through a symlink, never truncating: a file to replace is replaced by rename. */
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	w->fd = open(path, flags, 0644);
	if (w->fd < 0 && errno == EEXIST && w->o.overwrite) {
		size_t n = strlen(path) + sizeof(".partial");
		if (!(w->partial = malloc(n))) {
			rc = -ENOMEM;
			goto err;
		}
		snprintf(w->partial, n, "%s.partial", path);
		w->fd = open(w->partial, flags, 0644);
		if (w->fd < 0) {
			rc = -errno;
			diag(d, "cannot create %s: %s%s", w->partial, strerror(errno),
			     errno == EEXIST ? " (an earlier writer of this trace was killed and left it: read it "
					       "with spectap stat, then remove it)"
					     : "");
			free(w->partial);
			w->partial = NULL;
			goto err;
		}
	} else if (w->fd < 0) {
		rc = -errno;
		diag(d, "cannot create %s: %s%s", path, strerror(errno),
		     errno == EEXIST ? " (remove it or pass --force to overwrite)" : "");
		goto err;
	}

	/* Frame 0: magic (skippable), frame 1: header. */
	struct spt_buf magic = { 0 };
	frame_put_magic(&magic, SPT_FORMAT_VERSION);
	rc = magic.oom ? -ENOMEM : write_all(w, magic.p, magic.len);
	spt_buf_free(&magic);
	if (rc)
		goto err_io;

	struct spt_header hd = *h;
	spt_header_fill_defaults(&hd);
	start_chunk(w);
	Spectap__Trace__Entry e = SPECTAP__TRACE__ENTRY__INIT;
	e.e_case = SPECTAP__TRACE__ENTRY__E_HEADER;
	if (!(e.header = enc_header(&w->enc, &hd))) {
		rc = -ENOMEM;
		goto err;
	}
	put_entry(w, &e);
	if ((rc = emit_frame(w)))
		goto err_io;
	start_chunk(w);
	*out = w;
	return 0;
err_io:
	diag(d, "cannot write %s: %s", path, strerror(-rc));
err:
	if (rc == -ENOMEM)
		diag(d, "out of memory opening %s", path);
	if (w->fd >= 0) { /* the file is ours (O_EXCL) and holds no trace: it goes, a replaced one stays */
		spt_writer_discard(w);
		return rc;
	}
	spt_writer_abandon(w);
	return rc;
}

static struct range *find_range(struct spt_writer *w, uint32_t node, uint32_t source)
{
	for (size_t i = w->n_ranges; i-- > 0;)
		if (w->ranges[i].node == node && w->ranges[i].source == source)
			return &w->ranges[i];
	if (w->n_ranges == w->cap_ranges) {
		size_t cap = w->cap_ranges ? w->cap_ranges * 2 : 16;
		struct range *r = realloc(w->ranges, cap * sizeof(*r));
		if (!r)
			return NULL;
		w->ranges = r;
		w->cap_ranges = cap;
	}
	struct range *r = &w->ranges[w->n_ranges++];
	*r = (struct range){ node, source, 0, 0, 0 };
	return r;
}

int spt_writer_append(struct spt_writer *w, const struct spt_event *ev)
{
	if (w->err)
		return w->err;
	Spectap__Trace__Event *pe = enc_event(&w->enc, ev, w->ts_prev);
	if (!pe)
		return fail(w, -ENOMEM);
	struct range *r = find_range(w, pe->node, pe->source);
	if (!r)
		return fail(w, -ENOMEM);
	if (!r->events)
		r->first = ev->seq;
	r->last = ev->seq;
	r->events++;
	if (!w->chunk_events || ev->ts_ns < w->ts_min)
		w->ts_min = ev->ts_ns;
	if (!w->chunk_events || ev->ts_ns > w->ts_max)
		w->ts_max = ev->ts_ns;
	w->ts_prev = ev->ts_ns;

	Spectap__Trace__Entry e = SPECTAP__TRACE__ENTRY__INIT;
	e.e_case = SPECTAP__TRACE__ENTRY__E_EVENT;
	e.event = pe;
	if (!w->chunk_entries)
		w->pending_since_ms = mono_ms();
	put_entry(w, &e);
	w->chunk_events++;
	/* A chunk the reader would refuse is never written: the reader's limit is the writer's. */
	if (w->chunk.len > SPT_MAX_CHUNK_CONTENT - 64)
		return fail(w, -EFBIG);
	if (w->chunk.len >= w->o.chunk_bytes || (w->o.flush_events && w->chunk_events >= w->o.flush_events))
		return spt_writer_flush(w);
	return spt_writer_tick(w);
}

int spt_writer_tick(struct spt_writer *w)
{
	if (w->err)
		return w->err;
	if (!w->o.flush_ms || !w->chunk_entries || mono_ms() - w->pending_since_ms < w->o.flush_ms)
		return 0;
	return spt_writer_flush(w);
}

int spt_writer_add_loss(struct spt_writer *w, const struct spt_loss *l)
{
	if (w->err)
		return w->err;
	Spectap__Trace__Entry e = SPECTAP__TRACE__ENTRY__INIT;
	e.e_case = SPECTAP__TRACE__ENTRY__E_LOSS;
	if (!(e.loss = enc_loss(&w->enc, l)))
		return fail(w, -ENOMEM);
	put_entry(w, &e);
	if (!w->chunk_entries)
		w->pending_since_ms = mono_ms();
	w->chunk_lost = add_sat(w->chunk_lost, l->count);
	w->lost_total = add_sat(w->lost_total, l->count);

	if (w->n_losses == w->cap_losses) {
		size_t cap = w->cap_losses ? w->cap_losses * 2 : 8;
		struct spt_loss *n = realloc(w->losses, cap * sizeof(*n));
		if (!n)
			return fail(w, -ENOMEM);
		w->losses = n;
		w->cap_losses = cap;
	}
	struct spt_loss *c = &w->losses[w->n_losses];
	*c = *l;
	c->node = spt_arena_strndup(&w->loss_arena, l->node ? l->node : "", l->node ? strlen(l->node) : 0);
	c->source = spt_arena_strndup(&w->loss_arena, l->source ? l->source : "",
				      l->source ? strlen(l->source) : 0);
	if (!c->node || !c->source)
		return fail(w, -ENOMEM);
	w->n_losses++;
	return 0;
}

int spt_writer_flush(struct spt_writer *w)
{
	if (w->err)
		return w->err;
	if (!w->chunk_entries)
		return 0;
	Spectap__Trace__SourceRange *rs = spt_arena_alloc(&w->chunk_arena, (w->n_ranges + 1) * sizeof(*rs));
	Spectap__Trace__SourceRange **rp = spt_arena_alloc(&w->chunk_arena, (w->n_ranges + 1) * sizeof(*rp));
	if (!rs || !rp)
		return fail(w, -ENOMEM);
	for (size_t i = 0; i < w->n_ranges; i++) {
		rs[i] = (Spectap__Trace__SourceRange)SPECTAP__TRACE__SOURCE_RANGE__INIT;
		rs[i].node = w->ranges[i].node;
		rs[i].source = w->ranges[i].source;
		rs[i].first_seq = w->ranges[i].first;
		rs[i].last_seq = w->ranges[i].last;
		rs[i].events = w->ranges[i].events;
		rp[i] = &rs[i];
	}
	Spectap__Trace__ChunkTrailer t = SPECTAP__TRACE__CHUNK_TRAILER__INIT;
	t.chunk = w->chunks;
	/* Every entry before the trailer, the string definitions included (the reader counts them). */
	t.entries = w->chunk_entries + w->enc.count;
	t.events = w->chunk_events;
	t.first_event = w->events;
	t.ts_min = w->ts_min;
	t.ts_max = w->ts_max;
	t.n_ranges = w->n_ranges;
	t.ranges = rp;
	t.lost_total = w->lost_total;
	t.lost_in_chunk = w->chunk_lost;
	Spectap__Trace__Entry e = SPECTAP__TRACE__ENTRY__INIT;
	e.e_case = SPECTAP__TRACE__ENTRY__E_TRAILER;
	e.trailer = &t;
	codec_put_entry(&w->chunk, &e);

	if (w->n_index == w->cap_index) {
		size_t cap = w->cap_index ? w->cap_index * 2 : 64;
		struct chunk_meta *n = realloc(w->index, cap * sizeof(*n));
		if (!n)
			return fail(w, -ENOMEM);
		w->index = n;
		w->cap_index = cap;
	}
	uint64_t start = w->offset;
	int rc = emit_frame(w);
	if (rc)
		return fail(w, rc);
	w->index[w->n_index++] = (struct chunk_meta){ start, w->offset - start, w->events,
						      w->chunk_events, w->ts_min, w->ts_max };
	w->events += w->chunk_events;
	w->chunks++;
	start_chunk(w);
	return 0;
}

static int write_index(struct spt_writer *w)
{
	start_chunk(w);
	size_t n = w->n_index;
	Spectap__Trace__IndexChunk *cs = spt_arena_alloc(&w->chunk_arena, (n + 1) * sizeof(*cs));
	Spectap__Trace__IndexChunk **cp = spt_arena_alloc(&w->chunk_arena, (n + 1) * sizeof(*cp));
	Spectap__Trace__Loss **lp = spt_arena_alloc(&w->chunk_arena, (w->n_losses + 1) * sizeof(*lp));
	if (!cs || !cp || !lp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cs[i] = (Spectap__Trace__IndexChunk)SPECTAP__TRACE__INDEX_CHUNK__INIT;
		cs[i].offset = w->index[i].offset;
		cs[i].length = w->index[i].length;
		cs[i].first_event = w->index[i].first_event;
		cs[i].events = w->index[i].events;
		cs[i].ts_min = w->index[i].ts_min;
		cs[i].ts_max = w->index[i].ts_max;
		cp[i] = &cs[i];
	}
	for (size_t i = 0; i < w->n_losses; i++)
		if (!(lp[i] = enc_loss(&w->enc, &w->losses[i])))
			return -ENOMEM;
	Spectap__Trace__Index idx = SPECTAP__TRACE__INDEX__INIT;
	idx.n_chunks = n;
	idx.chunks = cp;
	idx.events = w->events;
	idx.lost_total = w->lost_total;
	idx.data_end = w->offset;
	idx.n_losses = w->n_losses;
	idx.losses = lp;
	Spectap__Trace__Entry e = SPECTAP__TRACE__ENTRY__INIT;
	e.e_case = SPECTAP__TRACE__ENTRY__E_INDEX;
	e.index = &idx;
	codec_put_entry(&w->chunk, &e);
	uint64_t start = w->offset;
	int rc = emit_frame(w);
	if (rc)
		return rc;
	struct spt_buf footer = { 0 };
	frame_put_footer(&footer, start, (uint32_t)(w->offset - start));
	rc = footer.oom ? -ENOMEM : write_all(w, footer.p, footer.len);
	spt_buf_free(&footer);
	return rc;
}

int spt_writer_close(struct spt_writer *w, struct spt_diag *d)
{
	if (!w)
		return 0;
	int rc = spt_writer_flush(w);
	if (!rc && !w->err)
		rc = write_index(w);
	if (!rc && fsync(w->fd) < 0)
		rc = -errno;
	if (!rc && close(w->fd) < 0)
		rc = -errno;
	else if (rc)
		close(w->fd);
	w->fd = -1;
	if (!rc && w->err)
		rc = w->err;
	if (rc)
		diag(d, "cannot finish %s: %s", w->partial ? w->partial : w->path, strerror(-rc));
	if (rc && w->partial) { /* the previous trace stays; the failed one goes */
		spt_writer_discard(w);
		return rc;
	}
	spt_writer_abandon(w);
	return rc;
}

void spt_writer_abandon(struct spt_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->partial && rename(w->partial, w->path))
		fprintf(stderr, "spectap: cannot rename %s to %s: %s; the trace is in %s\n", w->partial, w->path,
			strerror(errno), w->partial);
	free(w->partial);
	ZSTD_freeCCtx(w->cctx);
	enc_fini(&w->enc);
	spt_arena_fini(&w->chunk_arena);
	spt_arena_fini(&w->tmp_arena);
	spt_arena_fini(&w->loss_arena);
	spt_buf_free(&w->chunk);
	spt_buf_free(&w->frame);
	free(w->ranges);
	free(w->index);
	free(w->losses);
	free(w->path);
	free(w);
}

void spt_writer_discard(struct spt_writer *w)
{
	if (!w)
		return;
	unlink(w->partial ? w->partial : w->path);
	free(w->partial);
	w->partial = NULL;
	spt_writer_abandon(w);
}

uint64_t spt_writer_events(const struct spt_writer *w) { return w->events + w->chunk_events; }
uint64_t spt_writer_bytes(const struct spt_writer *w) { return w->offset; }
