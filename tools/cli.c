#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void vreport(struct cli *c, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (c->json) {
		struct spt_buf b = { 0 };
		spt_buf_puts(&b, "{\"error\":");
		spt_buf_json_str(&b, msg, strlen(msg));
		spt_buf_puts(&b, "}\n");
		if (b.p)
			fputs(b.p, stdout);
		spt_buf_free(&b);
		fflush(stdout);
	}
	fprintf(stderr, "spectap %s: %s\n", c->cmd, msg);
}

int cli_fail(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, fmt, ap);
	va_end(ap);
	return CLI_FAIL;
}

int cli_usage_error(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s", c->usage);
	return CLI_USAGE;
}

int cli_help(struct cli *c)
{
	fputs(c->usage, stdout);
	return CLI_OK;
}

void cli_begin(struct cli *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--json"))
			c->json = true;
	optind = 1;
	opterr = 0;
}

int cli_other_opt(struct cli *c, int opt, char **argv)
{
	if (opt == 'h')
		return cli_help(c);
	if (opt == ':')
		return cli_usage_error(c, "%s needs a value", argv[optind - 1]);
	return cli_usage_error(c, "unknown option '%s'", argv[optind - 1]);
}

void cli_warn(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "spectap %s: warning: ", c->cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void cli_progress(struct cli *c, const char *fmt, ...)
{
	if (c->json || c->quiet || !isatty(STDERR_FILENO))
		return;
	double t = now();
	if (c->progress_at == 0)
		c->progress_at = t; /* the first report comes after a second of work */
	if (t - c->progress_at < 1.0)
		return;
	c->progress_at = t;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "\rspectap %s: ", c->cmd);
	vfprintf(stderr, fmt, ap);
	fputs("\033[K", stderr);
	va_end(ap);
}

void cli_progress_done(struct cli *c)
{
	if (isatty(STDERR_FILENO) && c->progress_at > 0)
		fputs("\r\033[K", stderr);
}

bool cli_parse_u64(struct cli *c, const char *opt, const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		cli_usage_error(c, "%s: \"%s\" is not a non-negative integer", opt, s);
		return false;
	}
	*out = v;
	return true;
}

int cli_input_open(struct cli *c, const char *path, struct cli_input *in)
{
	memset(in, 0, sizeof(*in));
	in->name = strcmp(path, "-") ? path : "<stdin>";
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return cli_fail(c, "cannot open %s: %s", in->name, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return cli_fail(c, "%s is a directory, a file was expected", in->name);
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			in->data = p;
			in->len = (size_t)st.st_size;
			in->mapped = true;
			if (fd != STDIN_FILENO)
				close(fd);
			return CLI_OK;
		}
	}
	struct spt_buf b = { 0 };
	for (;;) {
		if (!spt_buf_reserve(&b, 1 << 16)) {
			spt_buf_free(&b);
			return cli_fail(c, "out of memory reading %s", in->name);
		}
		ssize_t k = read(fd, b.p + b.len, b.cap - b.len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			spt_buf_free(&b);
			return cli_fail(c, "cannot read %s: %s", in->name, strerror(e));
		}
		if (k == 0)
			break;
		b.len += (size_t)k;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	in->data = b.p ? b.p : "";
	in->len = b.len;
	in->owned = b.p != NULL; /* an empty input read still holds its buffer */
	return CLI_OK;
}

void cli_input_close(struct cli_input *in)
{
	if (in->mapped)
		munmap((void *)in->data, in->len);
	else if (in->owned)
		free((void *)in->data);
	memset(in, 0, sizeof(*in));
}

void cli_json_str(FILE *f, const char *s)
{
	struct spt_buf b = { 0 };
	spt_buf_json_str(&b, s, strlen(s));
	if (b.p)
		fputs(b.p, f);
	spt_buf_free(&b);
}

bool cli_flush(struct spt_buf *b, FILE *f)
{
	bool ok = !b->oom && fwrite(b->p ? b->p : "", 1, b->len, f) == b->len;
	spt_buf_clear(b);
	return ok;
}

static char *command_line;

void cli_set_command_line(int argc, char **argv)
{
	struct spt_buf b = { 0 };
	for (int i = 0; i < argc; i++) {
		if (i)
			spt_buf_putc(&b, ' ');
		spt_buf_puts(&b, argv[i]);
	}
	command_line = b.p; /* lives for the process */
}

const char *cli_command_line(void) { return command_line ? command_line : ""; }

int cli_count(struct cli_counts *m, const char *name, uint64_t n)
{
	for (size_t i = m->n; i-- > 0;) {
		if (!strcmp(m->names[i], name)) {
			m->counts[i] += n;
			return 0;
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		char **nn = realloc(m->names, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		m->names = nn;
		uint64_t *nc = realloc(m->counts, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		m->counts = nc;
		m->cap = cap;
	}
	if (!(m->names[m->n] = strdup(name)))
		return -ENOMEM;
	m->counts[m->n++] = n;
	return 0;
}

void cli_counts_free(struct cli_counts *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	free(m->counts);
	memset(m, 0, sizeof(*m));
}

static const struct cli_counts *sort_counts;

static int by_count(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (sort_counts->counts[x] != sort_counts->counts[y])
		return sort_counts->counts[x] > sort_counts->counts[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t *cli_counts_by_size(const struct cli_counts *m)
{
	size_t *idx = malloc((m->n + 1) * sizeof(*idx));
	if (!idx)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		idx[i] = i;
	sort_counts = m;
	qsort(idx, m->n, sizeof(*idx), by_count);
	return idx;
}

int cli_open_trace(struct cli *c, const char *path, struct spt_reader **r)
{
	struct spt_diag d = { { 0 } };
	int rc = spt_reader_open(path, r, &d);
	if (rc)
		return cli_fail(c, "%s", d.msg);
	const struct spt_trace_info *i = spt_reader_info(*r);
	if (i->recovered && !c->json)
		cli_warn(c, "%s was not closed cleanly (no index): recovered %" PRIu64
			    " events in %" PRIu64 " complete chunks by scanning%s",
			 path, i->events, i->chunks,
			 i->torn_bytes ? "; the last frame was cut short (its writer stopped while writing it)" : "");
	cli_warn_damage(c, path, *r);
	return CLI_OK;
}

void cli_warn_damage(struct cli *c, const char *path, const struct spt_reader *r)
{
	const struct spt_trace_info *i = spt_reader_info(r);
	static const struct spt_reader *warned;
	static uint64_t warned_bytes;
	if (!i->damaged || (warned == r && warned_bytes == i->damaged_bytes))
		return;
	warned = r;
	warned_bytes = i->damaged_bytes;
	if (i->header_lost && !i->damaged_chunks && !i->damaged_tail)
		cli_warn(c, "%s is damaged: its header frame (%" PRIu64 " bytes at byte %" PRIu64 ") could not be read: "
			    "the system, nodes and capture details are lost; every chunk was read",
			 path, i->damaged_bytes, i->damage_offset);
	else if (i->damaged_chunks)
		cli_warn(c, "%s is damaged: %" PRIu64 " chunk%s (%" PRIu64 " events) could not be read, the first at "
			    "byte %" PRIu64 " (%s); every other chunk was read%s",
			 path, i->damaged_chunks, i->damaged_chunks == 1 ? "" : "s", i->damaged_events,
			 i->damage_offset, i->damage, i->damaged_tail ? ", and the file ends in damage" : "");
	else
		cli_warn(c, "%s is damaged: %" PRIu64 " bytes at byte %" PRIu64 " could not be read (%s); the "
			    "events before them were read, how many the damage held is unknown",
			 path, i->damaged_bytes, i->damage_offset, i->damage);
}

int cli_damage_exit(struct cli *c, const char *path, const struct spt_reader *r, int rc)
{
	const struct spt_trace_info *i = spt_reader_info(r);
	cli_warn_damage(c, path, r);
	if (rc != CLI_OK || !i->damaged || c->allow_damage)
		return rc;
	fprintf(stderr, "spectap %s: %s is damaged: exit %d (--allow-damage exits 0)\n", c->cmd, path,
		CLI_DAMAGED);
	return CLI_DAMAGED;
}

void cli_json_damage(FILE *f, const struct spt_trace_info *i)
{
	if (!i->damaged) {
		fputs(",\"damage\":null", f);
		return;
	}
	fprintf(f, ",\"damage\":{\"offset\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"chunks\":%" PRIu64
		   ",\"events\":%" PRIu64 ",\"tail\":%s,\"header_lost\":%s,\"what\":",
		i->damage_offset, i->damaged_bytes, i->damaged_chunks, i->damaged_events,
		i->damaged_tail ? "true" : "false", i->header_lost ? "true" : "false");
	cli_json_str(f, i->damage);
	fputc('}', f);
}

static void partial_name(char *buf, size_t size, const char *path)
{
	snprintf(buf, size, "%s.partial", path);
}

FILE *cli_create_output(struct cli *c, const char *path, bool force)
{
	if (!path || !strcmp(path, "-"))
		return stdout;
	struct stat st;
	if (!force && lstat(path, &st) == 0) {
		cli_fail(c, "cannot create %s: %s (remove it or pass --force)", path, strerror(EEXIST));
		return NULL;
	}
	char partial[PATH_MAX];
	partial_name(partial, sizeof(partial), path);
	if (force) /* replacing was asked for: a partial file a killed run left goes too (a symlink itself) */
		unlink(partial);
	int fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_fail(c, "cannot create %s: %s%s", partial, strerror(errno),
			 errno == EEXIST ? " (left by a run that was killed while writing it: remove it)" : "");
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(partial);
		cli_fail(c, "cannot create %s: %s", path, strerror(errno));
	}
	return f;
}

int cli_close_output(struct cli *c, FILE *f, const char *path, bool keep)
{
	if (!f || f == stdout)
		return CLI_OK;
	char partial[PATH_MAX];
	partial_name(partial, sizeof(partial), path);
	int rc = CLI_OK;
	if ((fflush(f) || fsync(fileno(f))) && keep)
		rc = cli_fail(c, "cannot write %s: %s", partial, strerror(errno));
	if (fclose(f) && keep && rc == CLI_OK)
		rc = cli_fail(c, "cannot write %s: %s", partial, strerror(errno));
	if (keep && rc == CLI_OK && rename(partial, path))
		rc = cli_fail(c, "cannot rename %s to %s: %s", partial, path, strerror(errno));
	if (!keep || rc != CLI_OK)
		unlink(partial);
	return rc;
}

int cli_copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int rc = 0;

	if (!in || !out)
		rc = -errno;
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -EIO;
	if (in)
		fclose(in);
	if (out && fclose(out) && !rc)
		rc = -EIO;
	return rc;
}

const char *cli_beside_self(const char *rel, int mode, char *buf, size_t size)
{
	static const char *const up[] = { "/", "/../" };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (size_t i = 0; i < sizeof(up) / sizeof(*up); i++)
		if ((size_t)snprintf(buf, size, "%s%s%s", exe, up[i], rel) < size && access(buf, mode) == 0)
			return buf;
	return NULL;
}
