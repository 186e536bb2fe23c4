/* Fingerprint set: 256 segments of open-addressing tables (linear probing), one lock each. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "fpset.h"

#define SEGMENTS 256

struct segment {
	pthread_mutex_t lock;
	uint64_t *keys;    /* 0: empty */
	uint64_t *parents;
	uint64_t cap, n;   /* cap a power of two */
	char pad[16];
};

struct fpset {
	struct segment seg[SEGMENTS];
};

struct fpset *fpset_new(void)
{
	struct fpset *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (int i = 0; i < SEGMENTS; i++)
		pthread_mutex_init(&s->seg[i].lock, NULL);
	return s;
}

void fpset_free(struct fpset *s)
{
	if (!s)
		return;
	for (int i = 0; i < SEGMENTS; i++) {
		free(s->seg[i].keys);
		free(s->seg[i].parents);
		pthread_mutex_destroy(&s->seg[i].lock);
	}
	free(s);
}

/* The segment from the top bits, the slot from the low ones: independent for a good hash. */
static struct segment *segment_of(struct fpset *s, uint64_t fp) { return &s->seg[fp >> 56]; }

static uint64_t *slot_of(struct segment *g, uint64_t fp)
{
	uint64_t mask = g->cap - 1, i = fp & mask;
	while (g->keys[i] && g->keys[i] != fp)
		i = (i + 1) & mask;
	return &g->keys[i];
}

static int grow(struct segment *g)
{
	uint64_t cap = g->cap ? g->cap * 2 : 1024;
	uint64_t *keys = calloc(cap, sizeof(*keys)), *parents = malloc(cap * sizeof(*parents));
	if (!keys || !parents) {
		free(keys);
		free(parents);
		return -ENOMEM;
	}
	struct segment old = *g;
	g->keys = keys;
	g->parents = parents;
	g->cap = cap;
	for (uint64_t i = 0; i < old.cap; i++)
		if (old.keys[i]) {
			uint64_t *k = slot_of(g, old.keys[i]);
			*k = old.keys[i];
			g->parents[k - g->keys] = old.parents[i];
		}
	free(old.keys);
	free(old.parents);
	return 0;
}

int fpset_put(struct fpset *s, uint64_t fp, uint64_t parent)
{
	struct segment *g = segment_of(s, fp);
	int rc = 1;
	pthread_mutex_lock(&g->lock);
	if ((g->n + 1) * 10 > g->cap * 7 && grow(g)) {
		rc = -ENOMEM;
		goto out;
	}
	uint64_t *k = slot_of(g, fp);
	if (*k) {
		rc = 0;
		goto out;
	}
	*k = fp;
	g->parents[k - g->keys] = parent;
	g->n++;
out:
	pthread_mutex_unlock(&g->lock);
	return rc;
}

bool fpset_get(struct fpset *s, uint64_t fp, uint64_t *parent)
{
	struct segment *g = segment_of(s, fp);
	bool found = false;
	pthread_mutex_lock(&g->lock);
	if (g->cap) {
		uint64_t *k = slot_of(g, fp);
		if (*k) {
			found = true;
			*parent = g->parents[k - g->keys];
		}
	}
	pthread_mutex_unlock(&g->lock);
	return found;
}

uint64_t fpset_size(struct fpset *s)
{
	uint64_t n = 0;
	for (int i = 0; i < SEGMENTS; i++) {
		pthread_mutex_lock(&s->seg[i].lock);
		n += s->seg[i].n;
		pthread_mutex_unlock(&s->seg[i].lock);
	}
	return n;
}

size_t fpset_bytes(struct fpset *s)
{
	size_t n = sizeof(*s);
	for (int i = 0; i < SEGMENTS; i++) {
		pthread_mutex_lock(&s->seg[i].lock);
		n += (size_t)s->seg[i].cap * 2 * sizeof(uint64_t);
		pthread_mutex_unlock(&s->seg[i].lock);
	}
	return n;
}
