/* The agent's sinks; see sink.h. */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* The emit API, when its header exists at build time. Its functions are weak references: an
 * agent built before its library is linked in still loads, and says so when asked for it. */
#if defined(__has_include)
#if __has_include(<spectap/emit.h>)
#include <spectap/emit.h>
#define ZK_HAVE_EMIT_H 1
#pragma weak spt_emit
#pragma weak spt_emit_enabled
#endif
#endif

static int file_emit(struct zk_sink *s, const char *rec, size_t len, const struct zk_rec_hdr *h)
{
	static const char tail[] = "}\n";
	char head[160];
	if (len < 2 || rec[0] != '{') {
		s->failed++;
		s->last_errno = EINVAL;
		return -EINVAL;
	}
	/* {"event":{"source":..,"seq":..,"ts_ns":..,"tid":.., + the record after its '{' */
	int hl = snprintf(head, sizeof head,
			  "{\"event\":{\"source\":\"jvmti\",\"seq\":%" PRIu64 ",\"ts_ns\":%" PRIu64
			  ",\"tid\":%" PRIu64 "%s",
			  h->seq, h->ts_ns, h->tid, rec[1] == '}' ? "" : ",");
	struct iovec iov[3] = {
		{head, (size_t)hl},
		{(void *)(rec + 1), len - 1},
		{(void *)tail, sizeof tail - 1},
	};
	size_t total = (size_t)hl + len - 1 + sizeof tail - 1;
	ssize_t w;
	do
		w = writev(s->fd, iov, 3);
	while (w < 0 && errno == EINTR);
	if (w == (ssize_t)total)
		return 0;
	/* A short write on a regular file means the disk is full: the line is torn, and the next
	 * record starts on a fresh line so that only this one is lost. */
	s->failed++;
	s->last_errno = w < 0 ? errno : ENOSPC;
	if (w > 0) {
		ssize_t r;
		do
			r = write(s->fd, "\n", 1);
		while (r < 0 && errno == EINTR);
	}
	return -s->last_errno;
}

static bool always(struct zk_sink *s)
{
	(void)s;
	return true;
}

static void file_close(struct zk_sink *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int zk_sink_file_open(struct zk_sink *s, const char *path, char *err, size_t errsize)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (snprintf(s->path, sizeof s->path, "%s", path) >= (int)sizeof s->path) {
		snprintf(err, errsize, "out=%s: path too long", path);
		return -ENAMETOOLONG;
	}
	s->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		int e = errno;
		snprintf(err, errsize, "out=%s: cannot open for appending: %s (check the directory)",
			 path, strerror(e));
		return -e;
	}
	s->name = "file";
	s->emit = file_emit;
	s->enabled = always;
	s->close = file_close;
	return 0;
}

#ifdef ZK_HAVE_EMIT_H
static int api_emit(struct zk_sink *s, const char *rec, size_t len, const struct zk_rec_hdr *h)
{
	(void)h;
	int rc = spt_emit(rec, len);
	if (rc < 0) {
		s->failed++;
		s->last_errno = -rc;
	}
	return rc;
}

static bool api_enabled(struct zk_sink *s)
{
	(void)s;
	return spt_emit_enabled();
}

static void api_close(struct zk_sink *s) { (void)s; }

bool zk_sink_emit_available(void) { return spt_emit != NULL && spt_emit_enabled != NULL; }

int zk_sink_emit_open(struct zk_sink *s, char *err, size_t errsize)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (!zk_sink_emit_available()) {
		snprintf(err, errsize, "the spectap emit API (spt_emit) is not linked into this agent: "
				       "give out=PATH, or rebuild the agent with the emit library");
		return -ENOSYS;
	}
	s->name = "emit";
	s->emit = api_emit;
	s->enabled = api_enabled;
	s->close = api_close;
	return 0;
}
#else
bool zk_sink_emit_available(void) { return false; }

int zk_sink_emit_open(struct zk_sink *s, char *err, size_t errsize)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	snprintf(err, errsize, "this agent was built without include/spectap/emit.h: give out=PATH");
	return -ENOSYS;
}
#endif
