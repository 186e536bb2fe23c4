/* load: operations of a described load (load.h). */
#include "load.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void note_latency(struct hload *l, uint64_t us)
{
	if (l->nlat == l->caplat) {
		size_t cap = l->caplat ? 2 * l->caplat : 1024;
		uint32_t *t = realloc(l->lat_us, cap * sizeof(*t));
		if (!t)
			return; /* latencies are a figure, not a result: keep going without */
		l->lat_us = t;
		l->caplat = cap;
	}
	l->lat_us[l->nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

double hload_per_second(const struct hload *l)
{
	return l->busy_us ? (double)l->acked * 1e6 / (double)l->busy_us : 0;
}

double hload_latency_ms(struct hload *l, double p)
{
	if (!l->nlat)
		return 0;
	qsort(l->lat_us, l->nlat, sizeof(*l->lat_us), cmp_u32);
	size_t k = (size_t)(p / 100.0 * (double)(l->nlat - 1) + 0.5);
	return (double)l->lat_us[k] / 1000.0;
}

void hload_init(struct hload *l, struct hcluster *c)
{
	memset(l, 0, sizeof(*l));
	l->c = c;
	l->fd = -1;
	l->node = -1;
}

static void disconnect(struct hload *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->node = -1;
	net_inbox_take(&l->in, l->in.len);
}

static void note_failure(struct hload *l, const char *fmt, const char *what)
{
	l->failed++;
	if (!l->first_error[0])
		snprintf(l->first_error, sizeof(l->first_error), fmt, what);
}

/* Connects to the next running node after the last one. */
static int connect_next(struct hload *l)
{
	struct hcluster *c = l->c;
	char err[NET_ERR_SIZE] = "";
	for (unsigned t = 0; t < c->n; t++) {
		unsigned i = (unsigned)((l->node + 1 + (long)t) % (long)c->n);
		if (!hcluster_reachable(c, i))
			continue;
		char *addr = NULL;
		int r = hcluster_expand(c, c->d->load.tcp, i, NULL, NULL, 0, &addr);
		if (r)
			return r;
		r = net_connect(addr, 2000, &l->fd, err);
		free(addr);
		if (r)
			continue;
		char *hello = NULL;
		if (c->d->load.hello && (r = hcluster_expand(c, c->d->load.hello, i, NULL, NULL, 0, &hello)))
			return r;
		if (hello && net_send(l->fd, hello, strlen(hello), err)) {
			free(hello);
			close(l->fd);
			l->fd = -1;
			continue;
		}
		free(hello);
		l->node = i;
		return 0;
	}
	snprintf(c->err, sizeof(c->err), "load: no running node takes a connection%s%s", err[0] ? ": " : "", err);
	return -ECONNREFUSED;
}

/* One operation over TCP: 0 acked, 1 failed (counted), -errno when the load cannot go on. */
static int tcp_op(struct hload *l)
{
	struct hcluster *c = l->c;
	const struct desc_load *d = &c->d->load;
	char opnum[24], err[NET_ERR_SIZE];
	const char *names[DESC_MAX_READS + 1], *values[DESC_MAX_READS + 1];
	char *owned[DESC_MAX_READS] = { 0 }, *msg = NULL;
	size_t n = 0, line_end;
	int r;

	if (l->fd >= 0 && !hcluster_reachable(c, (unsigned)l->node)) /* paused or cut off since */
		disconnect(l);
	if (l->fd < 0 && (r = connect_next(l)))
		return r;
	snprintf(opnum, sizeof(opnum), "%" PRIu64, l->ops);
	names[n] = "op";
	values[n++] = opnum;
	for (size_t k = 0; k < d->nvars; k++) {
		if ((r = hcluster_expand(c, d->var_values[k], l->node, names, values, n, &owned[k])))
			goto out;
		names[n] = d->var_names[k];
		values[n++] = owned[k];
	}
	if ((r = hcluster_expand(c, d->send, l->node, names, values, n, &msg)))
		goto out;
	l->ops++;
	uint64_t t0 = now_us();
	if (net_send(l->fd, msg, strlen(msg), err) ||
	    net_expect(l->fd, &l->in, d->expect, d->timeout_ms, &line_end, err)) {
		note_failure(l, "%s", err);
		disconnect(l);
		r = 1;
		goto out;
	}
	char save = l->in.buf[line_end];
	l->in.buf[line_end] = 0;
	bool failed = d->fail && strstr(l->in.buf, d->fail);
	if (failed)
		note_failure(l, "%.200s", l->in.buf);
	l->in.buf[line_end] = save;
	net_inbox_take(&l->in, line_end);
	r = failed ? 1 : 0;
	if (!failed) {
		l->acked++;
		note_latency(l, now_us() - t0);
	}
out:
	for (size_t k = 0; k < d->nvars; k++)
		free(owned[k]);
	free(msg);
	return r < 0 ? r : 0;
}

/* The whole count by the description's command: ${ops} operations, its last stdout line a
 * JSON summary with "acked". */
static int run_ops(struct hload *l, uint64_t count)
{
	struct hcluster *c = l->c;
	const struct desc_strv *run = &c->d->load.run;
	char ops[24], serr[SUP_ERR_SIZE] = "";
	char **argv = calloc(run->n + 1, sizeof(*argv));
	const char *names[] = { "ops" }, *values[] = { ops };
	struct sup_output o = { 0 };
	int r = 0;

	if (!argv)
		return -ENOMEM;
	snprintf(ops, sizeof(ops), "%" PRIu64, count);
	for (size_t i = 0; i < run->n && !r; i++)
		r = hcluster_expand(c, run->v[i], -1, names, values, 1, &argv[i]);
	if (!r && (r = sup_run_capture((const char *const *)argv, NULL, 600000, &o, serr)))
		snprintf(c->err, sizeof(c->err), "load: %s: %s", argv[0], serr);
	if (!r) {
		char *last = o.out ? strrchr(o.out, '{') : NULL, *a = last ? strstr(last, "\"acked\":") : NULL;
		uint64_t acked = a ? strtoull(a + 8, NULL, 10) : 0;
		if (!a) {
			snprintf(c->err, sizeof(c->err), "load: %s printed no summary with \"acked\": %.200s", argv[0],
				 o.err_out ? o.err_out : "");
			r = -EPROTO;
		} else {
			l->ops += count;
			acked = acked < count ? acked : count;
			l->acked += acked;
			if (acked < count && !l->first_error[0])
				snprintf(l->first_error, sizeof(l->first_error), "%s", "the load command acknowledged fewer "
					 "operations than it ran");
			l->failed += count - acked;
		}
	}
	sup_output_free(&o);
	for (size_t i = 0; i < run->n; i++)
		free(argv[i]);
	free(argv);
	return r;
}

int hload_run(struct hload *l, uint64_t count)
{
	uint64_t t0 = now_us();
	int r = 0;
	if (!l->c->d->load.tcp)
		r = run_ops(l, count);
	for (uint64_t k = 0; l->c->d->load.tcp && k < count && !r; k++)
		r = tcp_op(l);
	l->busy_us += now_us() - t0;
	return r;
}

void hload_fini(struct hload *l)
{
	disconnect(l);
	net_inbox_free(&l->in);
	free(l->lat_us);
	l->lat_us = NULL;
}
