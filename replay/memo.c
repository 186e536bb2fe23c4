/* The cache of applications of cacheable definitions (memo.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "memo.h"

void memo_init(struct memo *m, unsigned char tag0, unsigned char tag1, size_t limit)
{
	memset(m, 0, sizeof(*m));
	spt_arena_init(&m->gen[0]);
	spt_arena_init(&m->gen[1]);
	m->gen[0].tag = tag0;
	m->gen[1].tag = tag1;
	m->limit = limit;
	spt_arena_init(&m->pinned);
	m->pinned.tag = 206;
	m->pin_limit = (size_t)256 << 20;
}

void memo_set_constant(struct memo *m, unsigned char tag_a, unsigned char tag_b, unsigned char tag_c)
{
	m->constant[0] = tag_a;
	m->constant[1] = tag_b;
	m->constant[2] = tag_c;
}

static bool lives_on(const struct memo *m, spt_val *v)
{
	return v->gen == SPT_GEN_STATIC || v->gen == m->pinned.tag ||
	       (m->constant[0] && (v->gen == m->constant[0] || v->gen == m->constant[1] || v->gen == m->constant[2]));
}

void memo_fini(struct memo *m)
{
	free(m->slots);
	spt_arena_fini(&m->gen[0]);
	spt_arena_fini(&m->gen[1]);
	spt_arena_fini(&m->pinned);
	memset(m, 0, sizeof(*m));
}

static uint64_t key_of(const struct opdef *d, spt_val *const *args, uint32_t n)
{
	uint64_t h = spt_hash_mix(0x6d656d6fULL, d->id);
	for (uint32_t i = 0; i < n; i++)
		h = spt_hash_mix(h, args[i]->hash);
	return h ? h : 1;
}

static bool same_args(const struct memo_entry *e, spt_val *const *args, uint32_t n)
{
	if (e->n != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (e->args[i] != args[i] && !spt_value_eq(e->args[i], args[i]))
			return false;
	return true;
}

static struct memo_entry *find(struct memo *m, const struct opdef *d, uint64_t key, spt_val *const *args, uint32_t n)
{
	if (!m->cap)
		return NULL;
	for (uint32_t j = (uint32_t)key & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		struct memo_entry *e = &m->slots[j];
		if (!e->def)
			return NULL;
		if (e->key == key && e->def == d && same_args(e, args, n))
			return e;
	}
}

/* An entry whose arguments would copy more than this many elements is not kept: such arguments
 * are new values (a log an action just extended), whose application rarely repeats. */
#define MEMO_COPY_BUDGET 512

/* Copies an entry's values into the current generation. */
static int move_entry(struct memo *m, struct memo_entry *e)
{
	struct spt_arena *a = &m->gen[m->cur];
	struct spt_arena_mark mark = spt_arena_mark(a);
	size_t budget = MEMO_COPY_BUDGET;
	spt_val **args = spt_arena_alloc(a, (e->n ? e->n : 1) * sizeof(*args));
	if (!args)
		return -ENOMEM;
	for (uint32_t i = 0; i < e->n; i++)
		if (!(args[i] = spt_value_move_keep(a, e->args[i], m->stable, &budget))) {
			spt_arena_rewind(a, mark);
			return -E2BIG;
		}
	/* The result is copied whatever its size: arguments that are kept values make a hit likely. */
	spt_val *r = spt_value_move_keep(a, e->result, m->stable, NULL);
	if (!r) {
		spt_arena_rewind(a, mark);
		return -ENOMEM;
	}
	e->args = args;
	e->result = r;
	e->gen = m->cur;
	return 0;
}

int memo_lookup(struct memo *m, const struct opdef *d, spt_val *const *args, uint32_t n, spt_val **out)
{
	struct memo_entry *e = find(m, d, key_of(d, args, n), args, n);
	if (!e) {
		m->misses++;
		return 0;
	}
	/* A hit in the older generation moves on to the current one; one too big to move is
	 * still valid until the next memo_collect, and goes then. */
	if (e->gen != m->cur && e->gen != MEMO_PINNED)
		move_entry(m, e);
	m->hits++;
	*out = e->result;
	return 1;
}

static int grow(struct memo *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 1024;
	struct memo_entry *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->cap; i++) {
		struct memo_entry *e = &m->slots[i];
		if (!e->def)
			continue;
		uint32_t j = (uint32_t)e->key & (cap - 1);
		while (s[j].def)
			j = (j + 1) & (cap - 1);
		s[j] = *e;
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

int memo_store(struct memo *m, const struct opdef *d, spt_val *const *args, uint32_t n, spt_val *result,
	       spt_val **kept)
{
	*kept = result;
	if ((m->count + 1) * 4 > m->cap * 3 && grow(m))
		return -ENOMEM;
	uint64_t key = key_of(d, args, n);
	struct memo_entry tmp = { d, key, n, m->cur, (spt_val **)args, result };
	bool pin = m->constant[0] && d->level == L_CONST && m->pinned.bytes < m->pin_limit;
	for (uint32_t i = 0; pin && i < n; i++)
		pin = lives_on(m, args[i]);
	int rc = 0;
	if (pin) {
		/* Its arguments live for the run: so does the result, copied once. */
		spt_val **pargs = spt_arena_alloc(&m->pinned, (n ? n : 1) * sizeof(*pargs));
		spt_val *r = pargs ? spt_value_move_keep(&m->pinned, result, m->constant, NULL) : NULL;
		if (!r)
			return -ENOMEM;
		memcpy(pargs, args, n * sizeof(*pargs));
		tmp.args = pargs;
		tmp.result = r;
		tmp.gen = MEMO_PINNED;
	} else if ((rc = move_entry(m, &tmp))) {
		return rc;
	}
	uint32_t j = (uint32_t)key & (m->cap - 1);
	while (m->slots[j].def) {
		struct memo_entry *e = &m->slots[j];
		if (e->key == key && e->def == d && same_args(e, args, n)) {
			*e = tmp; /* the same application evaluated again (a caller that did not look) */
			*kept = tmp.result;
			return 0;
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->slots[j] = tmp;
	m->count++;
	*kept = tmp.result;
	return 0;
}

void memo_collect(struct memo *m)
{
	if (m->gen[m->cur].bytes < m->limit)
		return;
	/* The older generation goes; the current one becomes the older. */
	uint8_t old = (uint8_t)(1 - m->cur);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->slots[i].def && m->slots[i].gen == old)
			m->slots[i].def = NULL;
	/* Re-insert the survivors so that probe chains have no holes. */
	struct memo_entry *s = calloc(m->cap ? m->cap : 1, sizeof(*s));
	if (s) {
		for (uint32_t i = 0; i < m->cap; i++) {
			struct memo_entry *e = &m->slots[i];
			if (!e->def)
				continue;
			uint32_t j = (uint32_t)e->key & (m->cap - 1);
			while (s[j].def)
				j = (j + 1) & (m->cap - 1);
			s[j] = *e;
			kept++;
		}
		free(m->slots);
		m->slots = s;
		m->count = kept;
	} else {
		/* Out of memory: forget everything instead. */
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
		m->count = 0;
		spt_arena_reset(&m->gen[m->cur]);
	}
	spt_arena_reset(&m->gen[old]);
	spt_arena_trim(&m->gen[old], m->limit);
	m->cur = old;
	m->collections++;
}

void memo_set_stable(struct memo *m, unsigned char tag_a, unsigned char tag_b)
{
	m->stable[0] = tag_a;
	m->stable[1] = tag_b;
}

void memo_forget_stable(struct memo *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
	spt_arena_reset(&m->gen[0]);
	spt_arena_reset(&m->gen[1]);
	m->collections++;
}

size_t memo_bytes(const struct memo *m)
{
	return m->gen[0].bytes + m->gen[1].bytes + m->pinned.bytes + (size_t)m->cap * sizeof(struct memo_entry);
}
