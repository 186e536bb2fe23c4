/* Values, events and headers <-> protobuf-c messages. */
#include "trace_codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEC_MAX_DEPTH 200

static void *arena_pb_alloc(void *data, size_t size) { return spt_arena_alloc(data, size); }
static void arena_pb_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

void codec_arena_allocator(ProtobufCAllocator *pa, struct spt_arena *a)
{
	pa->alloc = arena_pb_alloc;
	pa->free = arena_pb_free;
	pa->allocator_data = a;
}

void codec_put_entry(struct spt_buf *b, const Spectap__Trace__Entry *e)
{
	size_t n = spectap__trace__entry__get_packed_size(e);
	uint8_t hdr[10];
	size_t h = 0;
	uint64_t v = n;
	do {
		hdr[h++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	if (!spt_buf_reserve(b, h + n))
		return;
	spt_buf_put(b, hdr, h);
	spectap__trace__entry__pack(e, (uint8_t *)b->p + b->len);
	b->len += n;
}

int codec_get_entry(const uint8_t *p, size_t len, size_t *pos, ProtobufCAllocator *pa,
		    Spectap__Trace__Entry **out)
{
	size_t i = *pos;
	if (i >= len)
		return 0;
	uint64_t n = 0;
	for (int shift = 0;; shift += 7) {
		if (i >= len || shift > 35)
			return -EBADMSG;
		n |= (uint64_t)(p[i] & 0x7f) << shift;
		if (!(p[i++] & 0x80))
			break;
	}
	if (n > len - i)
		return -EBADMSG;
	*out = spectap__trace__entry__unpack(pa, n, p + i);
	if (!*out)
		return -EBADMSG;
	*pos = i + n;
	return 1;
}

/* The entry for (node, source), created with zeros when new; NULL when out of memory. */
static struct node_prev *find_prev(struct node_prev **arr, size_t *n, size_t *cap, uint32_t node,
				   uint32_t source)
{
	for (size_t i = *n; i-- > 0;)
		if ((*arr)[i].node == node && (*arr)[i].source == source)
			return &(*arr)[i];
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct node_prev *a = realloc(*arr, c * sizeof(*a));
		if (!a)
			return NULL;
		*arr = a;
		*cap = c;
	}
	struct node_prev *p = &(*arr)[(*n)++];
	*p = (struct node_prev){ node, source, 0, 0, NULL, NULL };
	return p;
}

/* ---- encoder ---- */

/* Equal, and written the same: records' fields in the same order, at every depth. */
static bool same_text(spt_val *a, spt_val *b)
{
	if (!spt_value_eq(a, b))
		return false;
	if (a->kind == SPT_REC) {
		if (!a->u.fn.order != !b->u.fn.order ||
		    (a->u.fn.order && memcmp(a->u.fn.order, b->u.fn.order, a->n * sizeof(*a->u.fn.order))))
			return false;
		for (uint32_t i = 0; i < a->n; i++)
			if (!same_text(a->u.fn.vals[i], b->u.fn.vals[i]))
				return false;
	} else if (a->kind == SPT_SEQ || a->kind == SPT_SET) {
		for (uint32_t i = 0; i < a->n; i++)
			if (!same_text(a->u.elems[i], b->u.elems[i]))
				return false;
	} else if (a->kind == SPT_FUN) {
		for (uint32_t i = 0; i < a->n; i++)
			if (!same_text(a->u.fn.keys[i], b->u.fn.keys[i]) || !same_text(a->u.fn.vals[i], b->u.fn.vals[i]))
				return false;
	}
	return true;
}

void enc_init(struct encoder *e, struct spt_arena *a, struct spt_arena *strs, struct spt_buf *out)
{
	memset(e, 0, sizeof(*e));
	e->a = a;
	e->strs = strs;
	e->out = out;
}

void enc_fini(struct encoder *e)
{
	free(e->slots);
	free(e->prev);
	e->slots = NULL;
	e->prev = NULL;
	e->cap = e->count = 0;
	e->n_prev = e->cap_prev = 0;
}

void enc_reset(struct encoder *e)
{
	if (e->slots)
		memset(e->slots, 0, e->cap * sizeof(*e->slots));
	e->count = 0;
	e->n_prev = 0;
}

static bool enc_grow(struct encoder *e)
{
	uint32_t cap = e->cap ? e->cap * 2 : 256;
	struct intern_slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return false;
	for (uint32_t i = 0; i < e->cap; i++) {
		if (!e->slots[i].id_plus1)
			continue;
		uint32_t j = (uint32_t)e->slots[i].hash & (cap - 1);
		while (s[j].id_plus1)
			j = (j + 1) & (cap - 1);
		s[j] = e->slots[i];
	}
	free(e->slots);
	e->slots = s;
	e->cap = cap;
	return true;
}

/* h: spt_str_hash of the bytes (string values carry it already). */
static uint32_t enc_string_hashed(struct encoder *e, const char *s, size_t len, uint64_t h)
{
	if ((e->count + 1) * 2 > e->cap && !enc_grow(e)) {
		e->oom = true;
		return 0;
	}
	uint32_t j = (uint32_t)h & (e->cap - 1);
	while (e->slots[j].id_plus1) {
		struct intern_slot *sl = &e->slots[j];
		if (sl->hash == h && sl->len == len && !memcmp(sl->s, s, len))
			return sl->id_plus1 - 1;
		j = (j + 1) & (e->cap - 1);
	}
	char *copy = spt_arena_strndup(e->strs, s, len);
	if (!copy || len > UINT32_MAX) {
		e->oom = true;
		return 0;
	}
	uint32_t id = e->count++;
	e->slots[j] = (struct intern_slot){ h, copy, (uint32_t)len, id + 1 };

	Spectap__Trace__StringDef def = SPECTAP__TRACE__STRING_DEF__INIT;
	def.id = id;
	def.text.data = (uint8_t *)copy;
	def.text.len = len;
	Spectap__Trace__Entry ent = SPECTAP__TRACE__ENTRY__INIT;
	ent.e_case = SPECTAP__TRACE__ENTRY__E_STR;
	ent.str = &def;
	codec_put_entry(e->out, &ent);
	return id;
}

uint32_t enc_string(struct encoder *e, const char *s, size_t len)
{
	if (!s)
		s = "";
	return enc_string_hashed(e, s, len, spt_str_hash(s, len));
}

/* A string value's bytes, with the hash it carries. */
static uint32_t enc_strval(struct encoder *e, spt_val *v)
{
	return enc_string_hashed(e, v->u.s, v->n, v->hash);
}

static uint32_t enc_cstr(struct encoder *e, const char *s) { return enc_string(e, s, s ? strlen(s) : 0); }

static void *enc_alloc(struct encoder *e, size_t size)
{
	void *p = spt_arena_alloc(e->a, size);
	if (!p)
		e->oom = true;
	return p;
}

/* Allocates a protobuf-c message in the chunk arena and initializes it. */
#define ENC_NEW(e, var, T, INIT)                                                                   \
	do {                                                                                       \
		(var) = enc_alloc((e), sizeof(T));                                                 \
		if (var)                                                                           \
			*(var) = (T)INIT;                                                          \
	} while (0)

static Spectap__Trace__Values *enc_values(struct encoder *e, spt_val *const *elems, uint32_t n)
{
	Spectap__Trace__Values *vs;
	ENC_NEW(e, vs, Spectap__Trace__Values, SPECTAP__TRACE__VALUES__INIT);
	if (!vs)
		return NULL;
	vs->n_e = n;
	vs->e = spt_arena_alloc(e->a, (n ? n : 1) * sizeof(*vs->e));
	if (!vs->e) {
		e->oom = true;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!(vs->e[i] = enc_value(e, elems[i])))
			return NULL;
	return vs;
}

static Spectap__Trace__Fields *enc_rec(struct encoder *e, spt_val *rec)
{
	Spectap__Trace__Fields *f;
	ENC_NEW(e, f, Spectap__Trace__Fields, SPECTAP__TRACE__FIELDS__INIT);
	if (!f)
		return NULL;
	uint32_t n = rec->n;
	f->n_key = f->n_val = n;
	f->key = spt_arena_alloc(e->a, (n ? n : 1) * sizeof(*f->key));
	f->val = spt_arena_alloc(e->a, (n ? n : 1) * sizeof(*f->val));
	if (!f->key || !f->val) {
		e->oom = true;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		spt_val *k = rec->u.fn.keys[i];
		f->key[i] = enc_strval(e, k);
		if (!(f->val[i] = enc_value(e, rec->u.fn.vals[i])))
			return NULL;
	}
	if (rec->u.fn.order) {
		f->n_order = n;
		f->order = (uint32_t *)rec->u.fn.order; /* only read by the packer */
	}
	return f;
}

Spectap__Trace__Value *enc_value(struct encoder *e, spt_val *v)
{
	Spectap__Trace__Value *pv;
	ENC_NEW(e, pv, Spectap__Trace__Value, SPECTAP__TRACE__VALUE__INIT);
	if (!pv)
		return NULL;
	switch (v->kind) {
	case SPT_BOOL:
		pv->v_case = SPECTAP__TRACE__VALUE__V_B;
		pv->b = v->u.b;
		break;
	case SPT_INT:
		pv->v_case = SPECTAP__TRACE__VALUE__V_I;
		pv->i = v->u.i;
		break;
	case SPT_STR:
		pv->v_case = v->hint == SPT_HINT_NUMBER ? SPECTAP__TRACE__VALUE__V_NUM
							: SPECTAP__TRACE__VALUE__V_S;
		pv->s = enc_strval(e, v); /* s and num share the union */
		break;
	case SPT_MODEL:
		pv->v_case = SPECTAP__TRACE__VALUE__V_MODEL;
		pv->model = enc_string(e, v->u.s, v->n);
		break;
	case SPT_SET:
		pv->v_case = SPECTAP__TRACE__VALUE__V_SET;
		if (!(pv->set = enc_values(e, v->u.elems, v->n)))
			return NULL;
		break;
	case SPT_SEQ:
		pv->v_case = SPECTAP__TRACE__VALUE__V_SEQ;
		if (!(pv->seq = enc_values(e, v->u.elems, v->n)))
			return NULL;
		break;
	case SPT_REC:
		pv->v_case = SPECTAP__TRACE__VALUE__V_REC;
		if (!(pv->rec = enc_rec(e, v)))
			return NULL;
		break;
	case SPT_FUN: {
		Spectap__Trace__Pairs *p;
	ENC_NEW(e, p, Spectap__Trace__Pairs, SPECTAP__TRACE__PAIRS__INIT);
		if (!p)
			return NULL;
		uint32_t n = v->n;
		p->n_key = p->n_val = n;
		p->key = spt_arena_alloc(e->a, (n ? n : 1) * sizeof(*p->key));
		p->val = spt_arena_alloc(e->a, (n ? n : 1) * sizeof(*p->val));
		if (!p->key || !p->val) {
			e->oom = true;
			return NULL;
		}
		for (uint32_t i = 0; i < n; i++)
			if (!(p->key[i] = enc_value(e, v->u.fn.keys[i])) ||
			    !(p->val[i] = enc_value(e, v->u.fn.vals[i])))
				return NULL;
		pv->v_case = SPECTAP__TRACE__VALUE__V_FUN;
		pv->fun = p;
		break;
	}
	default:
		e->oom = true; /* unreachable for values made by the constructors */
		return NULL;
	}
	return pv;
}

Spectap__Trace__Fields *enc_fields(struct encoder *e, spt_val *rec)
{
	if (!rec || rec->n == 0)
		return NULL;
	return enc_rec(e, rec);
}

/* Record keys: usually the same names in both records, which the hashes tell at once. */
static int key_cmp(spt_val *a, spt_val *b)
{
	if (a->hash == b->hash && a->n == b->n && !memcmp(a->u.s, b->u.s, a->n))
		return 0;
	return spt_value_cmp(a, b);
}

/* How a state record relates to the node's previous one: for each of its fields, the index of
 * prev's field with the same key and an equal value (or -1); prev's fields whose key it lacks.
 * Computed once per event for both the delta and the kept copy: comparing a long value (a log)
 * that stays the same was most of the writer's time, and it was done twice. */
struct prev_match {
	int32_t *same;   /* state->n entries */
	int32_t *keyed;  /* state->n entries: prev's field with the same key, or -1 */
	int32_t *keep;   /* state->n entries: a sequence edit keeps that many of prev's elements, or -1 */
	uint32_t *skip;  /* state->n entries: ... from that position on */
	uint32_t *gone, ngone, changed;
};

/* A changed sequence that starts with most of the previous one (a log that grew or was cut),
 * or with most of it from a few elements on (a window of a log's last terms that moved), is
 * written as an edit (SeqEdit) when it keeps at least this many elements. */
#define SEQ_EDIT_MIN_KEEP 8
#define SEQ_EDIT_MAX_SKIP 8

/* How many leading elements of b equal a's from position skip on. */
static uint32_t common_prefix(spt_val *a, uint32_t skip, spt_val *b)
{
	uint32_t n = a->n - skip < b->n ? a->n - skip : b->n, k = 0;
	spt_val *const *x = a->u.elems + skip, *const *y = b->u.elems;
	/* Log terms: integers, compared without a call; anything else through spt_value_eq. */
	while (k < n && (x[k] == y[k] || (x[k]->kind == SPT_INT && y[k]->kind == SPT_INT
					   ? x[k]->u.i == y[k]->u.i
					   : spt_value_eq(x[k], y[k]))))
		k++;
	return k;
}

/* The edit that keeps the most of prev (at least SEQ_EDIT_MIN_KEEP), trying the first few
 * starting positions; false when there is none. */
static bool seq_edit(spt_val *prev, spt_val *now, uint32_t *skip, uint32_t *keep)
{
	uint32_t best = 0, at = 0;
	for (uint32_t s = 0; s <= SEQ_EDIT_MAX_SKIP && s < prev->n; s++) {
		uint32_t k = common_prefix(prev, s, now);
		if (k > best) {
			best = k;
			at = s;
		}
		if (best == now->n || best >= prev->n - s)
			break; /* nothing longer to find */
	}
	*skip = at;
	*keep = best;
	return best >= SEQ_EDIT_MIN_KEEP;
}

static bool match_prev(struct encoder *e, spt_val *prev, spt_val *state, struct prev_match *m)
{
	uint32_t n = state->n, i = 0, j = 0;
	m->same = spt_arena_alloc(e->a, (n + 1) * sizeof(*m->same));
	m->keyed = spt_arena_alloc(e->a, (n + 1) * sizeof(*m->keyed));
	m->keep = spt_arena_alloc(e->a, (n + 1) * sizeof(*m->keep));
	m->skip = spt_arena_alloc(e->a, (n + 1) * sizeof(*m->skip));
	m->gone = spt_arena_alloc(e->a, (prev->n + 1) * sizeof(*m->gone));
	m->ngone = m->changed = 0;
	if (!m->same || !m->keyed || !m->keep || !m->skip || !m->gone) {
		e->oom = true;
		return false;
	}
	while (i < prev->n || j < n) {
		int c = i == prev->n ? 1 : j == n ? -1 : key_cmp(prev->u.fn.keys[i], state->u.fn.keys[j]);
		if (c < 0) {
			m->gone[m->ngone++] = i++;
			continue;
		}
		m->keyed[j] = c == 0 ? (int32_t)i : -1;
		m->keep[j] = -1;
		if (c > 0 || !spt_value_eq(prev->u.fn.vals[i], state->u.fn.vals[j])) {
			uint32_t sk, k;
			if (c == 0 && prev->u.fn.vals[i]->kind == SPT_SEQ && state->u.fn.vals[j]->kind == SPT_SEQ &&
			    seq_edit(prev->u.fn.vals[i], state->u.fn.vals[j], &sk, &k)) {
				m->keep[j] = (int32_t)k;
				m->skip[j] = sk;
			}
			m->same[j++] = -1;
			m->changed++;
			i += c == 0;
		} else {
			m->same[j++] = (int32_t)i++;
		}
	}
	return true;
}

/* Encodes state as the fields that differ from prev (m), when that is shorter. */
static bool enc_state_delta(struct encoder *e, spt_val *prev, const struct prev_match *m, spt_val *state,
			    Spectap__Trace__Event *pe, bool *same)
{
	if (!m || state->u.fn.order)
		return false;
	uint32_t n = state->n, changed = 0;
	if (m->changed + m->ngone >= n) /* a full snapshot is no longer than the delta */
		return false;
	spt_val **k = spt_arena_alloc(e->a, (n + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(e->a, (n + 1) * sizeof(*v));
	uint32_t *gone = spt_arena_alloc(e->a, (m->ngone + 1) * sizeof(*gone));
	Spectap__Trace__SeqEdit **edits = spt_arena_alloc(e->a, (n + 1) * sizeof(*edits));
	size_t nedits = 0;
	if (!k || !v || !gone || !edits) {
		e->oom = true;
		return false;
	}
	for (uint32_t i = 0; i < m->ngone; i++)
		gone[i] = enc_strval(e, prev->u.fn.keys[m->gone[i]]);
	for (uint32_t j = 0; j < n; j++) {
		if (m->same[j] >= 0)
			continue;
		if (m->keep[j] >= 0) {
			spt_val *nv = state->u.fn.vals[j];
			uint32_t keep = (uint32_t)m->keep[j];
			Spectap__Trace__SeqEdit *ed;
			ENC_NEW(e, ed, Spectap__Trace__SeqEdit, SPECTAP__TRACE__SEQ_EDIT__INIT);
			if (!ed || !(ed->tail = enc_values(e, nv->u.elems + keep, nv->n - keep)))
				return false;
			ed->key = enc_strval(e, state->u.fn.keys[j]);
			ed->keep = keep;
			ed->skip = m->skip[j];
			edits[nedits++] = ed;
			continue;
		}
		k[changed] = state->u.fn.keys[j];
		v[changed++] = state->u.fn.vals[j];
	}
	*same = changed == 0 && nedits == 0 && m->ngone == 0;
	pe->n_state_seq = nedits;
	pe->state_seq = edits;
	pe->state_delta = true;
	pe->n_state_removed = m->ngone;
	pe->state_removed = gone;
	if (changed) {
		struct spt_value sub = *state;
		sub.n = changed;
		sub.u.fn.keys = (const struct spt_value *const *)k;
		sub.u.fn.vals = (const struct spt_value *const *)v;
		pe->state = enc_rec(e, &sub);
	}
	return true;
}

/* The kept copy of a sequence written as an edit: keep of prev's elements from skip on
 * (already copies), then copies of the new ones. */
static spt_val *kept_edit(struct encoder *e, spt_val *prev, uint32_t skip, uint32_t keep, spt_val *now)
{
	spt_val **el = spt_arena_alloc(e->strs, (now->n ? now->n : 1) * sizeof(*el));
	if (!el)
		return NULL;
	memcpy(el, prev->u.elems + skip, keep * sizeof(*el));
	for (uint32_t t = keep; t < now->n; t++)
		if (!(el[t] = spt_value_clone(e->strs, now->u.elems[t])))
			return NULL;
	return spt_seq_adopt_copy(e->strs, el, now); /* equal to now: its hash */
}

/* A copy of state in e->strs for the next delta that shares with prev (already a copy) every
 * field whose value did not change (m): a long value (a log, say) that stays the same is not
 * copied again on every event. */
static spt_val *keep_state(struct encoder *e, spt_val *prev, const struct prev_match *m, spt_val *state)
{
	if (!m)
		return spt_value_clone(e->strs, state);
	uint32_t n = state->n;
	spt_val **k = spt_arena_alloc(e->strs, (n + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(e->strs, (n + 1) * sizeof(*v));
	if (!k || !v)
		return NULL;
	for (uint32_t j = 0; j < n; j++) {
		int32_t i = m->same[j];
		k[j] = i >= 0 ? prev->u.fn.keys[i] : spt_value_clone(e->strs, state->u.fn.keys[j]);
		if (i < 0 && m->keep[j] >= 0)
			v[j] = kept_edit(e, prev->u.fn.vals[m->keyed[j]], m->skip[j], (uint32_t)m->keep[j],
					 state->u.fn.vals[j]);
		else
			v[j] = i >= 0 ? prev->u.fn.vals[i] : spt_value_clone(e->strs, state->u.fn.vals[j]);
		if (!k[j] || !v[j])
			return NULL;
	}
	bool dup;
	spt_val *r = spt_fun_adopt(e->strs, k, v, n, &dup);
	if (r && state->u.fn.order)
		r = spt_rec_with_order(e->strs, r, state->u.fn.order);
	return r;
}

Spectap__Trace__Event *enc_event(struct encoder *e, const struct spt_event *ev, uint64_t ts_base)
{
	Spectap__Trace__Event *pe;
	ENC_NEW(e, pe, Spectap__Trace__Event, SPECTAP__TRACE__EVENT__INIT);
	if (!pe)
		return NULL;
	pe->node = enc_cstr(e, ev->node);
	pe->source = enc_cstr(e, ev->source);
	struct node_prev *p = find_prev(&e->prev, &e->n_prev, &e->cap_prev, pe->node, pe->source);
	if (!p) {
		e->oom = true;
		return NULL;
	}
	pe->seq_delta = (int64_t)(ev->seq - p->seq);
	pe->ts_delta = (int64_t)(ev->ts_ns - ts_base);
	pe->lamport_delta = (int64_t)(ev->lamport - p->lamport);
	pe->tid = ev->tid;
	pe->kind = enc_cstr(e, ev->kind);
	pe->args = enc_fields(e, ev->args);
	bool same = false;
	spt_val *prev = p->state;
	struct prev_match pm, *match = NULL;
	if (ev->state && ev->state->n && prev && prev->kind == SPT_REC && ev->state->kind == SPT_REC &&
	    match_prev(e, prev, ev->state, &pm))
		match = &pm;
	if (ev->state && ev->state->n && !enc_state_delta(e, prev, match, ev->state, pe, &same))
		pe->state = enc_fields(e, ev->state);
	if (ev->meta && ev->meta->n && p->meta && same_text(ev->meta, p->meta)) {
		pe->meta_same = true; /* written once per node and chunk */
	} else {
		pe->meta = enc_fields(e, ev->meta);
		if (!(p->meta = ev->meta && ev->meta->n ? spt_value_clone(e->strs, ev->meta) : NULL) && ev->meta &&
		    ev->meta->n)
			e->oom = true;
	}
	p->seq = ev->seq;
	p->lamport = ev->lamport;
	/* The caller's values die after the call: keep a copy for the next delta. */
	spt_val *st = ev->state && ev->state->n ? ev->state : NULL;
	if (!st)
		p->state = NULL;
	else if (!same && !(p->state = keep_state(e, prev, match, st)))
		e->oom = true;
	if (ev->msg) {
		Spectap__Trace__Message *m;
		ENC_NEW(e, m, Spectap__Trace__Message, SPECTAP__TRACE__MESSAGE__INIT);
		if (!m)
			return NULL;
		m->id = ev->msg->id;
		m->dir = ev->msg->dir;
		m->from = enc_cstr(e, ev->msg->from);
		m->to = enc_cstr(e, ev->msg->to);
		m->type = enc_cstr(e, ev->msg->type);
		m->fields = enc_fields(e, ev->msg->fields);
		pe->msg = m;
	}
	return e->oom ? NULL : pe;
}

Spectap__Trace__Loss *enc_loss(struct encoder *e, const struct spt_loss *l)
{
	Spectap__Trace__Loss *pl;
	ENC_NEW(e, pl, Spectap__Trace__Loss, SPECTAP__TRACE__LOSS__INIT);
	if (!pl)
		return NULL;
	pl->node = enc_cstr(e, l->node);
	pl->source = enc_cstr(e, l->source);
	pl->count = l->count;
	pl->first_seq = l->first_seq;
	pl->last_seq = l->last_seq;
	return e->oom ? NULL : pl;
}

static char *enc_dup(struct encoder *e, const char *s)
{
	char *c = spt_arena_strndup(e->a, s ? s : "", s ? strlen(s) : 0);
	if (!c)
		e->oom = true;
	return c;
}

Spectap__Trace__Header *enc_header(struct encoder *e, const struct spt_header *h)
{
	Spectap__Trace__Header *ph;
	ENC_NEW(e, ph, Spectap__Trace__Header, SPECTAP__TRACE__HEADER__INIT);
	if (!ph)
		return NULL;
	ph->format_version = h->format_version;
	ph->system = enc_dup(e, h->system);
	ph->system_version = enc_dup(e, h->system_version);
	ph->n_nodes = h->n_nodes;
	ph->nodes = spt_arena_alloc(e->a, (h->n_nodes ? h->n_nodes : 1) * sizeof(char *));
	if (!ph->nodes) {
		e->oom = true;
		return NULL;
	}
	for (size_t i = 0; i < h->n_nodes; i++)
		ph->nodes[i] = enc_dup(e, h->nodes[i]);
	ph->capture_method = enc_dup(e, h->capture_method);
	ph->scenario = enc_dup(e, h->scenario);
	ph->has_seed = h->has_seed;
	ph->seed = h->seed;
	ph->clock_realtime_ns = h->clock_realtime_ns;
	ph->clock_monotonic_ns = h->clock_monotonic_ns;
	ph->command_line = enc_dup(e, h->command_line);
	ph->writer = enc_dup(e, h->writer);
	ph->extra = enc_fields(e, h->extra);
	return e->oom ? NULL : ph;
}

/* ---- decoder ---- */

void dec_init(struct decoder *d, struct spt_arena *a)
{
	memset(d, 0, sizeof(*d));
	d->a = a;
}

void dec_fini(struct decoder *d)
{
	free(d->strs);
	free(d->prev);
	d->strs = NULL;
	d->prev = NULL;
	d->n = d->cap = 0;
	d->n_prev = d->cap_prev = 0;
}

void dec_reset(struct decoder *d)
{
	d->n = 0;
	d->n_prev = 0;
}

int dec_add_string(struct decoder *d, const Spectap__Trace__StringDef *s)
{
	if (s->id != d->n)
		return -EBADMSG;
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 256;
		spt_val **n = realloc(d->strs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->strs = n;
		d->cap = cap;
	}
	/* protobuf-c leaves data NULL for an empty string (proto3 does not write empty fields). */
	spt_val *v = spt_str(d->a, s->text.len ? (const char *)s->text.data : "", s->text.len);
	if (!v)
		return -ENOMEM;
	d->strs[d->n++] = v;
	return 0;
}

const char *dec_cstr(struct decoder *d, uint32_t id) { return id < d->n ? d->strs[id]->u.s : NULL; }

static int dec_text(struct decoder *d, uint32_t id, enum spt_kind kind, bool number, spt_val **out)
{
	if (id >= d->n)
		return -EBADMSG;
	spt_val *s = d->strs[id];
	if (kind == SPT_STR && !number) {
		*out = s; /* values are immutable: share the table's */
		return 0;
	}
	*out = kind == SPT_MODEL ? spt_model(d->a, s->u.s) : spt_number_text(d->a, s->u.s, s->n);
	return *out ? 0 : -ENOMEM;
}

static int dec_elems(struct decoder *d, const Spectap__Trace__Values *vs, int depth, spt_val ***out)
{
	if (!vs) {
		*out = NULL;
		return 0;
	}
	spt_val **e = spt_arena_alloc(d->a, (vs->n_e ? vs->n_e : 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < vs->n_e; i++) {
		int rc = dec_value(d, vs->e[i], depth + 1, &e[i]);
		if (rc)
			return rc;
	}
	*out = e;
	return 0;
}

static int dec_rec(struct decoder *d, const Spectap__Trace__Fields *f, int depth, spt_val **out)
{
	if (!f || f->n_key == 0) {
		if (f && f->n_val)
			return -EBADMSG;
		*out = spt_empty_fun(d->a, SPT_REC);
		return *out ? 0 : -ENOMEM;
	}
	if (f->n_key != f->n_val)
		return -EBADMSG;
	size_t n = f->n_key;
	spt_val **k = spt_arena_alloc(d->a, n * sizeof(*k));
	spt_val **v = spt_arena_alloc(d->a, n * sizeof(*v));
	if (!k || !v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (f->key[i] >= d->n)
			return -EBADMSG;
		k[i] = d->strs[f->key[i]];
		int rc = dec_value(d, f->val[i], depth + 1, &v[i]);
		if (rc)
			return rc;
	}
	bool dup;
	*out = spt_fun_adopt(d->a, k, v, n, &dup);
	if (!*out)
		return dup ? -EBADMSG : -ENOMEM;
	if (f->n_order) {
		if (f->n_order != n || (*out)->kind != SPT_REC)
			return -EBADMSG;
		/* NULL here means not a permutation (or out of memory): either way unusable. */
		if (!(*out = spt_rec_with_order(d->a, *out, f->order)))
			return -EBADMSG;
	}
	return 0;
}

int dec_value(struct decoder *d, const Spectap__Trace__Value *pv, int depth, spt_val **out)
{
	if (!pv || depth > DEC_MAX_DEPTH)
		return -EBADMSG;
	switch (pv->v_case) {
	case SPECTAP__TRACE__VALUE__V_B:
		*out = spt_bool(d->a, pv->b);
		break;
	case SPECTAP__TRACE__VALUE__V_I:
		*out = spt_int(d->a, pv->i);
		break;
	case SPECTAP__TRACE__VALUE__V_S:
		return dec_text(d, pv->s, SPT_STR, false, out);
	case SPECTAP__TRACE__VALUE__V_NUM:
		return dec_text(d, pv->num, SPT_STR, true, out);
	case SPECTAP__TRACE__VALUE__V_MODEL:
		return dec_text(d, pv->model, SPT_MODEL, false, out);
	case SPECTAP__TRACE__VALUE__V_SEQ:
	case SPECTAP__TRACE__VALUE__V_SET: {
		const Spectap__Trace__Values *vs =
			pv->v_case == SPECTAP__TRACE__VALUE__V_SEQ ? pv->seq : pv->set;
		spt_val **e;
		int rc = dec_elems(d, vs, depth, &e);
		if (rc)
			return rc;
		size_t n = vs ? vs->n_e : 0;
		if (pv->v_case == SPECTAP__TRACE__VALUE__V_SET)
			*out = spt_set(d->a, e, n);
		else
			*out = spt_seq_adopt(d->a, e, n);
		break;
	}
	case SPECTAP__TRACE__VALUE__V_REC:
		return dec_rec(d, pv->rec, depth, out);
	case SPECTAP__TRACE__VALUE__V_FUN: {
		const Spectap__Trace__Pairs *p = pv->fun;
		if (!p || p->n_key == 0) {
			if (p && p->n_val)
				return -EBADMSG;
			*out = spt_empty_fun(d->a, SPT_FUN);
			break;
		}
		if (p->n_key != p->n_val)
			return -EBADMSG;
		spt_val **k = spt_arena_alloc(d->a, p->n_key * sizeof(*k));
		spt_val **v = spt_arena_alloc(d->a, p->n_key * sizeof(*v));
		if (!k || !v)
			return -ENOMEM;
		for (size_t i = 0; i < p->n_key; i++) {
			int rc = dec_value(d, p->key[i], depth + 1, &k[i]);
			if (!rc)
				rc = dec_value(d, p->val[i], depth + 1, &v[i]);
			if (rc)
				return rc;
		}
		bool dup;
		*out = spt_fun_adopt(d->a, k, v, p->n_key, &dup);
		if (!*out)
			return dup ? -EBADMSG : -ENOMEM;
		break;
	}
	default:
		return -EBADMSG;
	}
	return *out ? 0 : -ENOMEM;
}

int dec_fields(struct decoder *d, const Spectap__Trace__Fields *f, int depth, spt_val **out)
{
	if (!f || (f->n_key == 0 && f->n_val == 0)) {
		*out = NULL;
		return 0;
	}
	return dec_rec(d, f, depth, out);
}

#define DEC_STR(d, id, dst)                                                                        \
	do {                                                                                       \
		if (!((dst) = dec_cstr((d), (id))))                                                \
			return -EBADMSG;                                                           \
	} while (0)

/* The sequence edits of pe (SeqEdit) as fields added to *delta: each base's value of its key,
 * cut to keep elements, then its tail. */
static int apply_seq_edits(struct decoder *d, spt_val *base, const Spectap__Trace__Event *pe, spt_val **delta)
{
	uint32_t nd = *delta ? (*delta)->n : 0, n = 0;
	size_t ne = pe->n_state_seq;
	spt_val **k = spt_arena_alloc(d->a, (nd + ne + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(d->a, (nd + ne + 1) * sizeof(*v));
	if (!k || !v)
		return -ENOMEM;
	if (!base || base->kind != SPT_REC || (*delta && (*delta)->kind != SPT_REC))
		return -EBADMSG; /* an edit of a state the node did not have */
	for (uint32_t i = 0; i < nd; i++) {
		k[n] = (*delta)->u.fn.keys[i];
		v[n++] = (*delta)->u.fn.vals[i];
	}
	for (size_t x = 0; x < ne; x++) {
		const Spectap__Trace__SeqEdit *ed = pe->state_seq[x];
		if (ed->key >= d->n || !ed->tail)
			return -EBADMSG;
		spt_val *key = d->strs[ed->key], *old = spt_rec_get(base, key->u.s);
		if (!old || old->kind != SPT_SEQ || ed->skip > old->n || ed->keep > old->n - ed->skip ||
		    ed->tail->n_e > UINT32_MAX - ed->keep)
			return -EBADMSG;
		spt_val **tail, **el = spt_arena_alloc(d->a, (ed->keep + ed->tail->n_e + 1) * sizeof(*el));
		int rc;
		if (!el)
			return -ENOMEM;
		if ((rc = dec_elems(d, ed->tail, 0, &tail)))
			return rc;
		memcpy(el, old->u.elems + ed->skip, ed->keep * sizeof(*el));
		memcpy(el + ed->keep, tail, ed->tail->n_e * sizeof(*el));
		k[n] = key;
		if (!(v[n++] = spt_seq_adopt(d->a, el, ed->keep + (uint32_t)ed->tail->n_e)))
			return -ENOMEM;
	}
	bool dup;
	*delta = spt_fun_adopt(d->a, k, v, n, &dup);
	return *delta ? 0 : dup ? -EBADMSG : -ENOMEM;
}

/* *state holds the changed fields; merges them into base, less the removed ones. */
static int apply_state_delta(struct decoder *d, spt_val *base, const Spectap__Trace__Event *pe,
			     spt_val **state)
{
	int rc;
	if (pe->n_state_seq && (rc = apply_seq_edits(d, base, pe, state)))
		return rc;
	spt_val *delta = *state;
	uint32_t nb = base ? base->n : 0, nd = delta ? delta->n : 0;
	if ((base && base->kind != SPT_REC) || (delta && delta->kind != SPT_REC))
		return -EBADMSG;
	spt_val **k = spt_arena_alloc(d->a, (nb + nd + 1) * sizeof(*k));
	spt_val **v = spt_arena_alloc(d->a, (nb + nd + 1) * sizeof(*v));
	if (!k || !v)
		return -ENOMEM;
	uint32_t i = 0, j = 0, n = 0;
	while (i < nb || j < nd) {
		int c = i == nb ? 1 : j == nd ? -1 : spt_value_cmp(base->u.fn.keys[i], delta->u.fn.keys[j]);
		if (c > 0) {
			k[n] = delta->u.fn.keys[j];
			v[n++] = delta->u.fn.vals[j++];
			continue;
		}
		spt_val *key = base->u.fn.keys[i];
		bool gone = false;
		for (size_t r = 0; r < pe->n_state_removed && !gone; r++) {
			if (pe->state_removed[r] >= d->n)
				return -EBADMSG;
			gone = spt_value_eq(d->strs[pe->state_removed[r]], key);
		}
		if (c == 0) {
			k[n] = delta->u.fn.keys[j];
			v[n++] = delta->u.fn.vals[j++];
		} else if (!gone) {
			k[n] = key;
			v[n++] = base->u.fn.vals[i];
		}
		i++;
	}
	if (n == 0) {
		*state = NULL;
		return 0;
	}
	bool dup;
	*state = spt_fun_adopt(d->a, k, v, n, &dup);
	return *state ? 0 : dup ? -EBADMSG : -ENOMEM;
}

int dec_event(struct decoder *d, const Spectap__Trace__Event *pe, uint64_t ts_base,
	      struct spt_event *ev)
{
	int rc;
	memset(ev, 0, sizeof(*ev));
	DEC_STR(d, pe->node, ev->node);
	DEC_STR(d, pe->source, ev->source);
	DEC_STR(d, pe->kind, ev->kind);
	struct node_prev *p = find_prev(&d->prev, &d->n_prev, &d->cap_prev, pe->node, pe->source);
	if (!p)
		return -ENOMEM;
	ev->seq = p->seq + (uint64_t)pe->seq_delta;
	ev->ts_ns = ts_base + (uint64_t)pe->ts_delta;
	ev->lamport = p->lamport + (uint64_t)pe->lamport_delta;
	ev->tid = pe->tid;
	if ((rc = dec_fields(d, pe->args, 0, &ev->args)) || (rc = dec_fields(d, pe->state, 0, &ev->state)) ||
	    (rc = dec_fields(d, pe->meta, 0, &ev->meta)))
		return rc;
	if (pe->n_state_seq && !pe->state_delta)
		return -EBADMSG;
	if (pe->meta_same) {
		if (pe->meta || !p->meta)
			return -EBADMSG; /* meta twice, or no earlier meta to repeat */
		ev->meta = p->meta;
	} else {
		p->meta = ev->meta;
	}
	if (pe->state_delta && (rc = apply_state_delta(d, p->state, pe, &ev->state)))
		return rc;
	p->seq = ev->seq;
	p->lamport = ev->lamport;
	p->state = ev->state;
	if (pe->msg) {
		struct spt_msg *m = spt_arena_alloc(d->a, sizeof(*m));
		if (!m)
			return -ENOMEM;
		memset(m, 0, sizeof(*m));
		if (pe->msg->dir != SPT_MSG_SEND && pe->msg->dir != SPT_MSG_RECV)
			return -EBADMSG;
		m->id = pe->msg->id;
		m->dir = (enum spt_msg_dir)pe->msg->dir;
		DEC_STR(d, pe->msg->from, m->from);
		DEC_STR(d, pe->msg->to, m->to);
		DEC_STR(d, pe->msg->type, m->type);
		if ((rc = dec_fields(d, pe->msg->fields, 0, &m->fields)))
			return rc;
		ev->msg = m;
	}
	return 0;
}

int dec_loss(struct decoder *d, const Spectap__Trace__Loss *pl, struct spt_loss *l)
{
	memset(l, 0, sizeof(*l));
	DEC_STR(d, pl->node, l->node);
	DEC_STR(d, pl->source, l->source);
	l->count = pl->count;
	l->first_seq = pl->first_seq;
	l->last_seq = pl->last_seq;
	return 0;
}

static const char *dec_dup(struct decoder *d, const char *s)
{
	return spt_arena_strndup(d->a, s ? s : "", s ? strlen(s) : 0);
}

int dec_header(struct decoder *d, const Spectap__Trace__Header *ph, struct spt_header *h)
{
	memset(h, 0, sizeof(*h));
	h->format_version = ph->format_version;
	const char **nodes = spt_arena_alloc(d->a, (ph->n_nodes ? ph->n_nodes : 1) * sizeof(char *));
	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < ph->n_nodes; i++)
		if (!(nodes[i] = dec_dup(d, ph->nodes[i])))
			return -ENOMEM;
	h->nodes = nodes;
	h->n_nodes = ph->n_nodes;
	if (!(h->system = dec_dup(d, ph->system)) ||
	    !(h->system_version = dec_dup(d, ph->system_version)) ||
	    !(h->capture_method = dec_dup(d, ph->capture_method)) ||
	    !(h->scenario = dec_dup(d, ph->scenario)) ||
	    !(h->command_line = dec_dup(d, ph->command_line)) || !(h->writer = dec_dup(d, ph->writer)))
		return -ENOMEM;
	h->has_seed = ph->has_seed;
	h->seed = ph->seed;
	h->clock_realtime_ns = ph->clock_realtime_ns;
	h->clock_monotonic_ns = ph->clock_monotonic_ns;
	return dec_fields(d, ph->extra, 0, &h->extra);
}
