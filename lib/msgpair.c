/* Message pairing by content (include/spectap/msgpair.h): per content key, a FIFO of the ids
 * and clocks of sends waiting for their receive, in an open-addressing table. A key whose FIFO
 * empties is removed: most messages are unique (indexes, commits grow), so keeping them made the
 * table grow with the trace and every lookup slower. */
#include "spectap/msgpair.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spectap/buf.h"
#include "spectap/json.h"
#include "spectap/value.h"

struct pending {
	char *key;
	uint64_t hash; /* of the key with its NUL */
	uint64_t *ids, *lamports;
	size_t head, len, cap;
};

struct spt_msgpair {
	struct pending *pend;
	size_t cap, n;
	uint64_t next_id, waiting;
	struct spt_buf key;
};

int spt_msgpair_new(struct spt_msgpair **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void spt_msgpair_free(struct spt_msgpair *mp)
{
	if (!mp)
		return;
	for (size_t i = 0; i < mp->cap; i++) {
		free(mp->pend[i].key);
		free(mp->pend[i].ids);
		free(mp->pend[i].lamports);
	}
	free(mp->pend);
	spt_buf_free(&mp->key);
	free(mp);
}

uint64_t spt_msgpair_unpaired_sends(const struct spt_msgpair *mp) { return mp->waiting; }

static int grow(struct spt_msgpair *mp)
{
	size_t cap = mp->cap ? mp->cap * 2 : 256;
	struct pending *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < mp->cap; i++) {
		if (!mp->pend[i].key)
			continue;
		size_t j = mp->pend[i].hash & (cap - 1);
		while (n[j].key)
			j = (j + 1) & (cap - 1);
		n[j] = mp->pend[i];
	}
	free(mp->pend);
	mp->pend = n;
	mp->cap = cap;
	return 0;
}

/* The FIFO for the current key, created when create is set; NULL when absent (or no memory). */
static struct pending *slot(struct spt_msgpair *mp, bool create)
{
	const char *key = mp->key.p;
	if (create && (mp->n + 1) * 2 > mp->cap && grow(mp))
		return NULL;
	if (!mp->cap)
		return NULL;
	uint64_t h = spt_hash_bytes(key, mp->key.len, 0); /* the key's NUL included */
	size_t j = h & (mp->cap - 1);
	while (mp->pend[j].key) {
		if (mp->pend[j].hash == h && !strcmp(mp->pend[j].key, key))
			return &mp->pend[j];
		j = (j + 1) & (mp->cap - 1);
	}
	if (!create || !(mp->pend[j].key = strdup(key)))
		return NULL;
	mp->pend[j].hash = h;
	mp->n++;
	return &mp->pend[j];
}

/* Removes p (its FIFO empty): later entries of its probe run move back into the hole, so that
 * lookups need no tombstones. */
static void drop(struct spt_msgpair *mp, struct pending *p)
{
	size_t mask = mp->cap - 1, hole = (size_t)(p - mp->pend);
	free(p->key);
	free(p->ids);
	free(p->lamports);
	memset(p, 0, sizeof(*p));
	mp->n--;
	for (size_t j = (hole + 1) & mask; mp->pend[j].key; j = (j + 1) & mask) {
		size_t home = mp->pend[j].hash & mask;
		/* it may fill the hole unless its home lies cyclically in (hole, j] */
		bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (stays)
			continue;
		mp->pend[hole] = mp->pend[j];
		memset(&mp->pend[j], 0, sizeof(mp->pend[j]));
		hole = j;
	}
}

static int push(struct pending *p, uint64_t id, uint64_t lamport)
{
	if (p->head + p->len == p->cap) {
		if (p->head) { /* compact before growing */
			memmove(p->ids, p->ids + p->head, p->len * sizeof(*p->ids));
			memmove(p->lamports, p->lamports + p->head, p->len * sizeof(*p->lamports));
			p->head = 0;
		}
		if (p->len == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 4;
			uint64_t *a = realloc(p->ids, cap * sizeof(*a));
			if (!a)
				return -ENOMEM;
			p->ids = a;
			uint64_t *b = realloc(p->lamports, cap * sizeof(*b));
			if (!b)
				return -ENOMEM;
			p->lamports = b;
			p->cap = cap;
		}
	}
	p->ids[p->head + p->len] = id;
	p->lamports[p->head + p->len] = lamport;
	p->len++;
	return 0;
}

/* Message identity from content: from, to, type and payload. */
static int make_key(struct spt_msgpair *mp, const struct spt_msg *m)
{
	spt_buf_clear(&mp->key);
	spt_buf_puts(&mp->key, m->from ? m->from : "");
	spt_buf_putc(&mp->key, '\x1f');
	spt_buf_puts(&mp->key, m->to ? m->to : "");
	spt_buf_putc(&mp->key, '\x1f');
	spt_buf_puts(&mp->key, m->type ? m->type : "");
	spt_buf_putc(&mp->key, '\x1f');
	if (m->fields) /* canonical order: a reordered payload is the same message */
		spt_json_write(&mp->key, m->fields, SPT_JSON_TAGGED | SPT_JSON_CANONICAL, NULL);
	spt_buf_putc(&mp->key, '\0'); /* the key is used as a C string */
	return mp->key.oom ? -ENOMEM : 0;
}

int spt_msgpair_send(struct spt_msgpair *mp, const struct spt_msg *m, uint64_t lamport, uint64_t *id)
{
	int rc = make_key(mp, m);
	if (rc)
		return rc;
	struct pending *p = slot(mp, true);
	if (!p)
		return -ENOMEM;
	*id = ++mp->next_id;
	if ((rc = push(p, *id, lamport)))
		return rc;
	mp->waiting++;
	return 0;
}

int spt_msgpair_recv(struct spt_msgpair *mp, const struct spt_msg *m, uint64_t *id,
		     uint64_t *send_lamport)
{
	int rc = make_key(mp, m);
	if (rc)
		return rc;
	struct pending *p = slot(mp, false);
	if (p && p->len) {
		*id = p->ids[p->head];
		*send_lamport = p->lamports[p->head];
		p->head++;
		p->len--;
		mp->waiting--;
		if (!p->len)
			drop(mp, p);
		return 1;
	}
	*id = ++mp->next_id;
	*send_lamport = 0;
	return 0;
}
