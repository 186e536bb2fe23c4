/* Reader of *.spt traces: index when the file was closed cleanly, recovery by scanning if not. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "spectap/trace.h"
#include "trace_codec.h"
#include "trace_frame.h"

/* A chunk, or (bad) a damaged stretch of the file standing for the chunks it held: its events
 * are those ordinals, unreadable. */
struct chunk_ref {
	uint64_t offset, length, first_event, events, ts_min, ts_max;
	uint64_t chunk_no; /* the writer's number of the chunk (its trailer's) */
	bool bad;
};

struct spt_reader {
	int fd;
	const uint8_t *map;
	size_t size;
	char *path;
	uint64_t data_start;

	struct spt_arena header_arena;
	struct spt_header header;
	struct spt_trace_info info;

	struct chunk_ref *chunks;
	size_t n_chunks, cap_chunks;
	struct spt_loss *losses;
	size_t n_losses, cap_losses;
	struct spt_arena loss_arena;

	/* The loaded chunk. */
	size_t cur; /* index of the loaded chunk, or SIZE_MAX */
	struct spt_arena arena;
	struct decoder dec;
	struct spt_buf raw;
	ZSTD_DCtx *dctx; /* reused for every frame */
	struct spt_event *evs;
	size_t n_evs, cap_evs, pos;
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

/* What parse_frame found in a frame. */
enum frame_kind { FRAME_CHUNK, FRAME_INDEX, FRAME_HEADER };

struct parsed {
	enum frame_kind kind;
	size_t frame_len;
	struct chunk_ref ref;             /* FRAME_CHUNK */
	const Spectap__Trace__Index *idx; /* FRAME_INDEX */
};

static int add_loss(struct spt_reader *r, const struct spt_loss *l)
{
	if (r->n_losses == r->cap_losses) {
		size_t cap = r->cap_losses ? r->cap_losses * 2 : 8;
		struct spt_loss *n = realloc(r->losses, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->losses = n;
		r->cap_losses = cap;
	}
	struct spt_loss *c = &r->losses[r->n_losses];
	*c = *l;
	c->node = spt_arena_strndup(&r->loss_arena, l->node, strlen(l->node));
	c->source = spt_arena_strndup(&r->loss_arena, l->source, strlen(l->source));
	if (!c->node || !c->source)
		return -ENOMEM;
	r->n_losses++;
	return 0;
}

static int push_event(struct spt_reader *r, struct spt_event **out)
{
	if (r->n_evs == r->cap_evs) {
		size_t cap = r->cap_evs ? r->cap_evs * 2 : 1024;
		struct spt_event *n = realloc(r->evs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->evs = n;
		r->cap_evs = cap;
	}
	*out = &r->evs[r->n_evs++];
	return 0;
}

/*
 * Decodes and checks the frame at off. A chunk's events go to r->evs (and its loss records to
 * r->losses when keep_losses). The whole frame is checked before anything is used, so a damaged
 * chunk yields no event; out->ref holds the trailer's chunk number and first event, which the
 * caller compares with where the chunk stands. -EBADMSG with why filled when the frame is bad.
 */
static int parse_frame(struct spt_reader *r, uint64_t off, bool keep_losses, struct parsed *out,
		       char *why, size_t why_len)
{
	int rc;
	spt_arena_reset(&r->arena);
	dec_reset(&r->dec);
	r->n_evs = 0;
	r->pos = 0;
	r->cur = SIZE_MAX;
	if ((rc = frame_decode(r->dctx, r->map + off, r->size - off, &r->raw, &out->frame_len, why, why_len)))
		return rc;

	ProtobufCAllocator pa;
	codec_arena_allocator(&pa, &r->arena);
	const uint8_t *p = (const uint8_t *)r->raw.p;
	size_t pos = 0, entries = 0, n_loss_before = r->n_losses;
	uint64_t ts = 0, lost = 0;
	const Spectap__Trace__ChunkTrailer *trailer = NULL;
	memset(&out->ref, 0, sizeof(out->ref));
	out->idx = NULL;
	for (;;) {
		Spectap__Trace__Entry *e;
		rc = codec_get_entry(p, r->raw.len, &pos, &pa, &e);
		if (rc == 0)
			break;
		if (rc < 0) {
			snprintf(why, why_len, "undecodable record %zu in frame", entries);
			goto bad;
		}
		if (trailer || out->idx) {
			snprintf(why, why_len, "record after the chunk trailer");
			rc = -EBADMSG;
			goto bad;
		}
		switch (e->e_case) {
		case SPECTAP__TRACE__ENTRY__E_STR:
			if ((rc = dec_add_string(&r->dec, e->str))) {
				snprintf(why, why_len, "string table out of order");
				goto bad;
			}
			break;
		case SPECTAP__TRACE__ENTRY__E_EVENT: {
			struct spt_event *ev;
			if ((rc = push_event(r, &ev)))
				goto bad;
			if ((rc = dec_event(&r->dec, e->event, ts, ev))) {
				snprintf(why, why_len, "malformed event %zu in frame", r->n_evs);
				goto bad;
			}
			ts = ev->ts_ns;
			break;
		}
		case SPECTAP__TRACE__ENTRY__E_LOSS: {
			struct spt_loss l;
			if ((rc = dec_loss(&r->dec, e->loss, &l))) {
				snprintf(why, why_len, "malformed loss record");
				goto bad;
			}
			lost = lost > UINT64_MAX - l.count ? UINT64_MAX : lost + l.count; /* saturated, as the writer counts */
			if (keep_losses && (rc = add_loss(r, &l)))
				goto bad;
			break;
		}
		case SPECTAP__TRACE__ENTRY__E_TRAILER:
			trailer = e->trailer;
			continue; /* not counted in entries */
		case SPECTAP__TRACE__ENTRY__E_INDEX:
			out->idx = e->index;
			continue;
		default:
			snprintf(why, why_len, "unexpected record type %d in a chunk", (int)e->e_case);
			rc = -EBADMSG;
			goto bad;
		}
		entries++;
	}
	if (out->idx) {
		out->kind = FRAME_INDEX;
		return 0;
	}
	if (!trailer) {
		snprintf(why, why_len, "chunk without trailer");
		rc = -EBADMSG;
		goto bad;
	}
	/* seek_time trusts ts_min/ts_max: they must be the events' (0 for a chunk without any). */
	uint64_t ts_min = 0, ts_max = 0;
	for (size_t i = 0; i < r->n_evs; i++) {
		if (!i || r->evs[i].ts_ns < ts_min)
			ts_min = r->evs[i].ts_ns;
		if (!i || r->evs[i].ts_ns > ts_max)
			ts_max = r->evs[i].ts_ns;
	}
	if (trailer->entries != entries || trailer->events != r->n_evs ||
	    trailer->lost_in_chunk != lost || trailer->ts_min != ts_min || trailer->ts_max != ts_max) {
		snprintf(why, why_len, "chunk trailer disagrees with its content");
		rc = -EBADMSG;
		goto bad;
	}
	out->kind = FRAME_CHUNK;
	out->ref = (struct chunk_ref){ .offset = off,
				       .length = out->frame_len,
				       .first_event = trailer->first_event,
				       .events = r->n_evs,
				       .ts_min = trailer->ts_min,
				       .ts_max = trailer->ts_max,
				       .chunk_no = trailer->chunk };
	return 0;
bad:
	r->n_losses = n_loss_before;
	r->n_evs = 0;
	return rc == -ENOMEM ? rc : -EBADMSG;
}

/* Counts a damaged stretch of len bytes at off that held chunks chunks and events events. */
static void mark_damage(struct spt_reader *r, uint64_t off, uint64_t len, uint64_t chunks,
			uint64_t events, const char *why)
{
	if (!r->info.damaged) {
		r->info.damage_offset = off;
		snprintf(r->info.damage, sizeof(r->info.damage), "%s", why);
	}
	r->info.damaged = true;
	r->info.damaged_bytes += len;
	r->info.damaged_chunks += chunks;
	r->info.damaged_events += events;
}

/* Where a frame could start after off: a zstd or skippable frame's magic; r->size if none. */
static uint64_t next_magic(const struct spt_reader *r, uint64_t off)
{
	for (uint64_t i = off; i + 4 <= r->size; i++) {
		const uint8_t *p = r->map + i;
		if (get_le32(p) == ZSTD_MAGICNUMBER || frame_is_skippable(p, 4))
			return i;
	}
	return r->size;
}

/*
 * After a bad frame at off: the next frame that is an intact chunk standing at or after the
 * expected chunk and event (or the index), as `zstd -d` would resynchronise. 0 and *at and *p,
 * 1 when nothing intact follows, -ENOMEM.
 */
static int resync(struct spt_reader *r, uint64_t off, uint64_t chunk, uint64_t event, uint64_t *at,
		  struct parsed *p)
{
	char why[200];
	for (uint64_t cand = next_magic(r, off + 1); cand < r->size; cand = next_magic(r, cand + 1)) {
		if (frame_is_skippable(r->map + cand, r->size - cand))
			continue; /* the footer: the index frame before it was found or is damaged too */
		size_t n_losses = r->n_losses;
		int rc = parse_frame(r, cand, true, p, why, sizeof(why));
		if (rc == -ENOMEM)
			return rc;
		if (rc)
			continue;
		if (p->kind == FRAME_INDEX ||
		    (p->kind == FRAME_CHUNK && p->ref.chunk_no >= chunk && p->ref.first_event >= event)) {
			*at = cand;
			return 0;
		}
		r->n_losses = n_losses; /* a stray chunk (copied in?): its losses are not this trace's */
	}
	return 1;
}

static int add_chunk(struct spt_reader *r, const struct chunk_ref *c)
{
	if (r->n_chunks == r->cap_chunks) {
		size_t cap = r->cap_chunks ? r->cap_chunks * 2 : 64;
		struct chunk_ref *n = realloc(r->chunks, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->chunks = n;
		r->cap_chunks = cap;
	}
	r->chunks[r->n_chunks++] = *c;
	return 0;
}

/*
 * Finds chunks by reading every frame, up to the index frame. A bad frame costs the chunks up to
 * the next intact one, whose trailer says how many chunks and events were lost; damage with
 * nothing intact after it ends the file (its events unknown).
 */
static int scan(struct spt_reader *r)
{
	uint64_t off = r->data_start, events = 0, chunk_no = 0, data_end = off;
	char why[200];
	int rc;
	r->info.recovered = true;
	while (off < r->size) {
		struct parsed p;
		bool torn_skip = false;
		if (r->size - off >= 8 && frame_is_skippable(r->map + off, r->size - off)) {
			uint64_t len = 8 + (uint64_t)get_le32(r->map + off + 4);
			if (len <= r->size - off) {
				off += len;
				continue;
			}
			snprintf(why, sizeof(why), "torn skippable frame");
			torn_skip = true;
		}
		size_t n_losses = r->n_losses;
		rc = torn_skip ? -EBADMSG : parse_frame(r, off, true, &p, why, sizeof(why));
		if (rc == -ENOMEM)
			return rc;
		if (!rc && p.kind == FRAME_CHUNK && (p.ref.chunk_no != chunk_no || p.ref.first_event != events)) {
			snprintf(why, sizeof(why), "chunk %" PRIu64 " stands where chunk %" PRIu64 " should",
				 p.ref.chunk_no, chunk_no);
			r->n_losses = n_losses;
			rc = -EBADMSG;
		}
		if (rc) {
			uint64_t at;
			if ((rc = resync(r, off, chunk_no, events, &at, &p)) < 0)
				return rc;
			if (rc) {
				if (frame_is_torn(r->map + off, r->size - off)) {
					r->info.torn_bytes = r->size - off;
				} else {
					mark_damage(r, off, r->size - off, 0, 0, why);
					r->info.damaged_tail = true;
				}
				break;
			}
			uint64_t lost_chunks, lost_events;
			if (p.kind == FRAME_INDEX) {
				lost_chunks = p.idx->n_chunks > chunk_no ? p.idx->n_chunks - chunk_no : 0;
				lost_events = p.idx->events > events ? p.idx->events - events : 0;
			} else {
				lost_chunks = p.ref.chunk_no - chunk_no;
				lost_events = p.ref.first_event - events;
			}
			mark_damage(r, off, at - off, lost_chunks, lost_events, why);
			struct chunk_ref gap = { .offset = off, .length = at - off, .first_event = events,
						 .events = lost_events, .chunk_no = chunk_no, .bad = true };
			if ((rc = add_chunk(r, &gap)))
				return rc;
			events += lost_events;
			chunk_no += lost_chunks;
			off = at;
		}
		if (p.kind == FRAME_INDEX)
			break;
		if ((rc = add_chunk(r, &p.ref)))
			return rc;
		events += p.ref.events;
		chunk_no++;
		off += p.frame_len;
		data_end = off;
	}
	r->info.data_bytes = data_end;
	r->info.events = events;
	r->cur = SIZE_MAX;
	return 0;
}

/* Uses the footer and index when both are intact and consistent; 1 if used, 0 if not. */
static int try_index(struct spt_reader *r)
{
	uint64_t ioff;
	uint32_t ilen;
	char why[200];
	/* Compared without adding ioff + ilen, which a damaged footer could make wrap around. */
	if (frame_get_footer(r->map, r->size, &ioff, &ilen) || ioff < r->data_start ||
	    ioff > r->size - SPT_FOOTER_LEN || ilen != r->size - SPT_FOOTER_LEN - ioff)
		return 0;
	struct parsed p;
	int rc = parse_frame(r, ioff, false, &p, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (rc || p.kind != FRAME_INDEX || p.frame_len != ilen)
		return 0;
	const Spectap__Trace__Index *idx = p.idx;
	uint64_t off = r->data_start, events = 0;
	/* After a lost header the first chunk stands where the header frame ended, which only the
	 * index knows: past where that frame began, before the index; the chain of chunks from
	 * there is checked below as ever. */
	if (r->info.header_lost) {
		if (!idx->n_chunks || idx->chunks[0]->offset <= off || idx->chunks[0]->offset > ioff)
			return 0;
		off = idx->chunks[0]->offset;
	}
	uint64_t chunks_start = off;
	for (size_t i = 0; i < idx->n_chunks; i++) {
		const Spectap__Trace__IndexChunk *c = idx->chunks[i];
		if (c->offset != off || c->length == 0 || c->length > ioff - off || c->first_event != events)
			goto inconsistent;
		off += c->length;
		events += c->events;
	}
	if (off != ioff || events != idx->events || idx->data_end != ioff)
		goto inconsistent;
	for (size_t i = 0; i < idx->n_chunks; i++) {
		const Spectap__Trace__IndexChunk *c = idx->chunks[i];
		struct chunk_ref ref = { .offset = c->offset, .length = c->length, .first_event = c->first_event,
					 .events = c->events, .ts_min = c->ts_min, .ts_max = c->ts_max, .chunk_no = i };
		if ((rc = add_chunk(r, &ref)))
			return rc;
	}
	for (size_t i = 0; i < idx->n_losses; i++) {
		struct spt_loss l;
		if (dec_loss(&r->dec, idx->losses[i], &l))
			goto inconsistent;
		if ((rc = add_loss(r, &l)))
			return rc;
	}
	r->info.indexed = true;
	r->info.events = events;
	r->info.data_bytes = ioff;
	r->info.damaged_bytes += chunks_start - r->data_start; /* the lost header's, if any */
	r->cur = SIZE_MAX;
	return 1;
inconsistent:
	r->n_chunks = 0;
	r->n_losses = 0;
	return 0;
}

/*
 * A damaged header frame costs the header only: the chunks after it are read as usual (found
 * by the index when it is intact, else by scanning from the damaged frame on), and the trace
 * reads as damaged. What the header held (system, nodes, capture) reads as empty;
 * the format version is the magic frame's.
 */
static int header_lost(struct spt_reader *r, uint64_t off, uint32_t version, const char *why)
{
	char msg[sizeof(r->info.damage)];
	snprintf(msg, sizeof(msg), "header frame damaged (%.160s): the system, nodes and capture details are lost", why);
	mark_damage(r, off, 0, 0, 0, msg); /* its bytes are counted where it is skipped */
	r->info.header_lost = true;
	static const char *const no_nodes[1] = { NULL };
	r->header = (struct spt_header){ .system = "", .system_version = "", .nodes = no_nodes, .capture_method = "",
					 .scenario = "", .command_line = "", .writer = "",
					 .format_version = version };
	r->data_start = off;
	return 0;
}

static int read_header(struct spt_reader *r, struct spt_diag *d)
{
	uint32_t version;
	if (frame_check_magic(r->map, r->size, &version)) {
		diag(d, "%s: not a spectap trace (no spectap magic frame at byte 0)", r->path);
		return -EBADMSG;
	}
	if (version < SPT_FORMAT_VERSION_MIN || version > SPT_FORMAT_VERSION) {
		diag(d, "%s: trace format version %u, this spectap reads versions %u to %u", r->path, version,
		     SPT_FORMAT_VERSION_MIN, SPT_FORMAT_VERSION);
		return -EPROTONOSUPPORT;
	}
	uint64_t off = SPT_MAGIC_FRAME_LEN;
	size_t frame_len;
	char why[200];
	int rc = frame_decode(r->dctx, r->map + off, r->size - off, &r->raw, &frame_len, why, sizeof(why));
	if (rc == -ENOMEM) {
		diag(d, "%s: out of memory reading the header", r->path);
		return rc;
	}
	if (rc && frame_is_torn(r->map + off, r->size - off) && next_magic(r, off + 4) == r->size) {
		/* Cut short, not damaged: no frame follows, so there is nothing to read. */
		diag(d, "%s: byte %llu: the header frame is cut short (%s): the file holds no events", r->path,
		     (unsigned long long)off, why);
		return rc;
	}
	if (rc)
		return header_lost(r, off, version, why);
	ProtobufCAllocator pa;
	codec_arena_allocator(&pa, &r->arena);
	struct decoder hd;
	dec_init(&hd, &r->header_arena);
	size_t pos = 0;
	Spectap__Trace__Entry *e = NULL;
	rc = 0;
	for (;;) {
		int k = codec_get_entry((const uint8_t *)r->raw.p, r->raw.len, &pos, &pa, &e);
		if (k <= 0) {
			rc = k ? k : -EBADMSG;
			break;
		}
		if (e->e_case == SPECTAP__TRACE__ENTRY__E_STR) {
			if ((rc = dec_add_string(&hd, e->str)))
				break;
			continue;
		}
		if (e->e_case != SPECTAP__TRACE__ENTRY__E_HEADER || pos != r->raw.len) {
			rc = -EBADMSG;
			break;
		}
		rc = dec_header(&hd, e->header, &r->header);
		break;
	}
	dec_fini(&hd);
	if (rc == -ENOMEM) {
		diag(d, "%s: out of memory reading the header", r->path);
		return rc;
	}
	if (rc) {
		spt_arena_reset(&r->header_arena); /* what the bad header decoded to */
		return header_lost(r, off, version, "it holds no valid header");
	}
	r->data_start = off + frame_len;
	return 0;
}

int spt_reader_open(const char *path, struct spt_reader **out, struct spt_diag *d)
{
	int rc;
	struct spt_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->cur = SIZE_MAX;
	spt_arena_init(&r->arena);
	spt_arena_init(&r->header_arena);
	spt_arena_init(&r->loss_arena);
	dec_init(&r->dec, &r->arena);
	if (!(r->path = strdup(path)) || !(r->dctx = ZSTD_createDCtx())) {
		rc = -ENOMEM;
		goto err;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (r->fd < 0 || fstat(r->fd, &st) < 0) {
		rc = -errno;
		diag(d, "cannot open %s: %s", path, strerror(errno));
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		diag(d, "%s: not a regular file", path);
		goto err;
	}
	r->size = (size_t)st.st_size;
	r->info.file_bytes = r->size;
	if (r->size < SPT_MAGIC_FRAME_LEN) {
		rc = -EBADMSG;
		diag(d, "%s: not a spectap trace (%zu bytes, too short for the magic frame)", path, r->size);
		goto err;
	}
	r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		rc = -errno;
		diag(d, "cannot map %s: %s", path, strerror(errno));
		goto err;
	}
	if ((rc = read_header(r, d)))
		goto err;
	rc = try_index(r);
	if (rc == 0)
		rc = scan(r);
	if (rc < 0) {
		diag(d, "%s: out of memory while reading the chunk list", path);
		goto err;
	}
	for (size_t i = 0; i < r->n_losses; i++) /* saturating: crafted counts cannot wrap to 0 */
		r->info.lost = r->info.lost > UINT64_MAX - r->losses[i].count ? UINT64_MAX
									  : r->info.lost + r->losses[i].count;
	r->info.chunks = r->n_chunks;
	*out = r;
	return 0;
err:
	spt_reader_close(r);
	return rc;
}

void spt_reader_close(struct spt_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->size);
	if (r->fd >= 0)
		close(r->fd);
	dec_fini(&r->dec);
	spt_arena_fini(&r->arena);
	spt_arena_fini(&r->header_arena);
	spt_arena_fini(&r->loss_arena);
	spt_buf_free(&r->raw);
	ZSTD_freeDCtx(r->dctx);
	free(r->chunks);
	free(r->losses);
	free(r->evs);
	free(r->path);
	free(r);
}

const struct spt_header *spt_reader_header(const struct spt_reader *r) { return &r->header; }
const struct spt_trace_info *spt_reader_info(const struct spt_reader *r) { return &r->info; }

size_t spt_reader_losses(const struct spt_reader *r, const struct spt_loss **out)
{
	*out = r->losses;
	return r->n_losses;
}

/* Loads chunk i: 1, 0 when it is damaged (counted, marked bad, nothing loaded), or -ENOMEM. */
static int load_chunk(struct spt_reader *r, size_t i)
{
	if (r->cur == i)
		return 1;
	struct chunk_ref *c = &r->chunks[i];
	if (c->bad)
		return 0;
	struct parsed p;
	char why[200];
	int rc = parse_frame(r, c->offset, false, &p, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (!rc && (p.kind != FRAME_CHUNK || p.frame_len != c->length || p.ref.events != c->events ||
		    p.ref.chunk_no != c->chunk_no || p.ref.first_event != c->first_event ||
		    p.ref.ts_min != c->ts_min || p.ref.ts_max != c->ts_max)) {
		snprintf(why, sizeof(why), "chunk disagrees with the index");
		rc = -EBADMSG;
	}
	if (rc) {
		c->bad = true;
		mark_damage(r, c->offset, c->length, 1, c->events, why);
		return 0;
	}
	r->cur = i;
	return 1;
}

/* Loads the first readable chunk from i on, positioned at pos (0 when it is a later chunk):
 * 1, 0 when none is left (positioned at the end), -ENOMEM. */
static int load_from(struct spt_reader *r, size_t i, size_t pos)
{
	for (; i < r->n_chunks; i++, pos = 0) {
		int rc = load_chunk(r, i);
		if (rc < 0)
			return rc;
		if (rc) {
			r->pos = pos;
			return 1;
		}
	}
	r->cur = SIZE_MAX;
	r->pos = SIZE_MAX;
	return 0;
}

int spt_reader_next(struct spt_reader *r, const struct spt_event **ev)
{
	for (;;) {
		if (r->cur != SIZE_MAX && r->pos < r->n_evs) {
			*ev = &r->evs[r->pos++];
			return 1;
		}
		if (r->cur == SIZE_MAX && r->pos == SIZE_MAX)
			return 0; /* positioned at the end */
		int rc = load_from(r, r->cur == SIZE_MAX ? 0 : r->cur + 1, 0);
		if (rc <= 0)
			return rc;
	}
}

uint64_t spt_reader_tell(const struct spt_reader *r)
{
	if (r->cur == SIZE_MAX)
		return r->pos == SIZE_MAX ? r->info.events : 0;
	return r->chunks[r->cur].first_event + r->pos;
}

int spt_reader_seek_event(struct spt_reader *r, uint64_t n)
{
	if (n >= r->info.events) {
		r->cur = SIZE_MAX;
		r->pos = n == r->info.events ? SIZE_MAX : 0;
		if (n > r->info.events)
			return -ERANGE;
		return 0;
	}
	size_t lo = 0, hi = r->n_chunks;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->chunks[mid].first_event <= n)
			lo = mid;
		else
			hi = mid;
	}
	/* Skip empty chunks that share the first_event. */
	while (lo + 1 < r->n_chunks && r->chunks[lo].first_event + r->chunks[lo].events <= n)
		lo++;
	int rc = load_from(r, lo, (size_t)(n - r->chunks[lo].first_event));
	return rc < 0 ? rc : 0;
}

int spt_reader_seek_time(struct spt_reader *r, uint64_t ts)
{
	for (size_t i = 0; i < r->n_chunks; i++) {
		if (r->chunks[i].events == 0 || r->chunks[i].ts_max < ts)
			continue;
		int rc = load_chunk(r, i);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		for (size_t k = 0; k < r->n_evs; k++) {
			if (r->evs[k].ts_ns >= ts) {
				r->pos = k;
				return 0;
			}
		}
	}
	r->cur = SIZE_MAX;
	r->pos = SIZE_MAX;
	return 0;
}
