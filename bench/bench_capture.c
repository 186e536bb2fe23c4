/* A capture as `spectap record etcd` runs one (tools/cmd_record.c): the same loader options,
 * writer, shaper, collector options and drain period, so that what the bench measures is what a
 * recording costs. The trace goes to a temporary file, removed at the end. */
#include <errno.h>
#include <sys/resource.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_etcd.h"
#include "shape.h"

double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double bench_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* utime + stime of a /proc stat file, in seconds (0 when it is gone). */
double bench_stat_cpu_s(const char *path)
{
	char buf[1024];
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command may hold spaces */
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double bench_proc_cpu_s(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return bench_stat_cpu_s(path);
}

struct capture {
	struct uprobe_loader *l;
	struct spt_writer *w;
	struct etcd_shape *shape;
	struct collect *col;
	bool bg;
	int sites;
	char path[64];
	double t0, cpu0;
};

static void capture_free(struct capture *c)
{
	if (c->bg)
		collect_bg_stop(c->col);
	collect_free(c->col);
	etcd_shape_free(c->shape);
	if (c->w)
		spt_writer_abandon(c->w);
	if (c->path[0])
		unlink(c->path);
	uprobe_loader_close(c->l);
	free(c);
}

int capture_start(struct capture **out, const struct capture_cfg *cfg, char *err, size_t errlen)
{
	struct capture *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	struct uprobe_loader_opts lo = { .ringbuf_bytes = BENCH_RINGBUF };
	if ((rc = uprobe_loader_open(&c->l, &lo, err, errlen)))
		goto fail;
	if ((rc = c->sites = cfg->attach(cfg->ctx, c->l, err, errlen)) < 0)
		goto fail;
	snprintf(c->path, sizeof(c->path), "/tmp/spectap-bench-XXXXXX");
	int fd = mkstemp(c->path);
	if (fd < 0) {
		c->path[0] = 0;
		rc = -errno;
		snprintf(err, errlen, "cannot create a trace in /tmp: %s", strerror(errno));
		goto fail;
	}
	close(fd);
	struct spt_header h = { .system = cfg->system, .nodes = cfg->nodes, .n_nodes = cfg->n_nodes,
				.capture_method = "bpf", .scenario = "bench" };
	struct spt_writer_opts wo = { .sz = sizeof(wo), .overwrite = true, .flush_ms = cfg->flush_ms };
	struct spt_diag d = { "" };
	if ((rc = spt_writer_open(c->path, &h, &wo, &c->w, &d))) {
		snprintf(err, errlen, "%s", d.msg);
		goto fail;
	}
	if (cfg->etcd_shape && (rc = etcd_shape_new(&c->shape, cfg->log_terms))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	struct collect_opts co = { .sz = sizeof(co), .named_pids_only = cfg->etcd_shape || cfg->shape,
				   .spool = !cfg->live,
				   .spool_dir = cfg->spool_dir ? cfg->spool_dir : "/tmp", .flush_ms = cfg->flush_ms };
	if (cfg->etcd_shape) {
		co.shape = etcd_shape_event;
		co.shape_end = etcd_shape_end;
		co.shape_ctx = c->shape;
	} else if (cfg->shape) {
		co.shape = cfg->shape;
		co.shape_ctx = cfg->shape_ctx;
	}
	if ((rc = collect_new(c->w, cfg->table, c->l, &co, &c->col, err, errlen)))
		goto fail;
	c->t0 = bench_now_s();
	c->cpu0 = bench_cpu_s();
	if (!cfg->defer_drain && (rc = collect_bg_start(c->col, 10))) {
		snprintf(err, errlen, "%s", collect_error(c->col));
		goto fail;
	}
	c->bg = !cfg->defer_drain;
	*out = c;
	return 0;
fail:
	capture_free(c);
	return rc < 0 ? rc : -EIO;
}

int capture_name(struct capture *c, int pid, const char *node)
{
	return collect_set_node(c->col, pid, node);
}

int capture_stop(struct capture *c, struct capture_result *r, char *err, size_t errlen)
{
	uint64_t lost = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	/* From here to the trace closed: in spool mode the shaping of what was spooled too. */
	double t1 = bench_now_s(), tc1 = bench_thread_cpu_s();
	rc = c->bg ? collect_bg_stop(c->col) : 0;
	c->bg = false;
	if (rc < 0 || (rc = collect_drain(c->col)) < 0 ||
	    (rc = collect_finish(c->col, &lost)) < 0) {
		snprintf(err, errlen, "%s", collect_error(c->col));
		capture_free(c);
		return rc;
	}
	r->seconds = t1 - c->t0;
	const struct collect_stats *st = collect_stats(c->col);
	r->sites = c->sites;
	r->records = st->records;
	r->events = st->events;
	r->foreign = st->foreign;
	r->lost = lost;
	if (c->shape)
		memcpy(r->probes_seen, etcd_shape_stats(c->shape)->probes_seen, sizeof(r->probes_seen));
	struct spt_diag d = { "" };
	rc = spt_writer_close(c->w, &d);
	c->w = NULL;
	if (rc)
		snprintf(err, errlen, "%s", d.msg);
	struct stat sb;
	if (!rc && stat(c->path, &sb) == 0)
		r->bytes = (uint64_t)sb.st_size;
	r->drain_s = bench_now_s() - t1;
	r->drain_cpu_s = bench_thread_cpu_s() - tc1;
	r->cpu_s = bench_cpu_s() - c->cpu0;
	capture_free(c);
	return rc;
}
