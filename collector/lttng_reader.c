/* The LTTng collector for spectap:event: session control with liblttng-ctl, trace reading with
 * libbabeltrace2 (src.ctf.fs -> flt.utils.muxer -> a simple sink). See lttng_reader.h. */
#include "lttng_reader.h"
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>
#include <lttng/lttng.h>

#define CHANNEL "spectap"
#define EVENT "spectap:event"
#define DEFAULT_SUBBUF (1u << 20)
#define DEFAULT_NUM_SUBBUF 8
#define DAEMON_START_MS 10000
#define DAEMON_STOP_MS 5000

struct lttng_reader {
	char session[64];
	char dir[PATH_MAX];
	bool made_dir, keep;
	bool created, started, destroyed;
	pid_t daemon; /* > 0: the session daemon this reader started */
	struct lttng_reader_stats stats;
	char **traces; /* directories holding a metadata file, found after stop */
	size_t ntraces;
	char **done;   /* with opts.keep: trace directories already read (rotated archives stay) */
	size_t ndone;
	/* during read */
	lttng_reader_fn fn;
	void *fn_ctx;
	int fn_err;
	char err[768];
};

static void format(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static int fail(struct lttng_reader *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct lttng_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err;
}

/* A negative LTTng error code as a negative errno. */
static int lttng_errno(int ret)
{
	switch (-ret) {
	case LTTNG_ERR_NO_SESSIOND: return -ECONNREFUSED;
	case LTTNG_ERR_EPERM: return -EPERM;
	case LTTNG_ERR_EXIST_SESS: return -EEXIST;
	case LTTNG_ERR_NOMEM: return -ENOMEM;
	case LTTNG_ERR_INVALID: return -EINVAL;
	case LTTNG_ERR_SESS_NOT_FOUND: return -ENOENT;
	default: return -EIO;
	}
}

static int lttng_fail(struct lttng_reader *r, int ret, const char *what)
{
	const char *hint = -ret == LTTNG_ERR_EPERM ? " (run as root or as a member of the tracing group)" : "";

	return fail(r, lttng_errno(ret), "lttng: %s for session %s failed: %s%s", what, r->session,
		    lttng_strerror(ret), hint);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- the session daemon ------------------------------------------------------------------- */

const struct spt_program lttng_programs[2] = {
	{ "/usr/bin/lttng-sessiond", "lttng-tools", "the LTTng session daemon (the emit API's LTTng transport)" },
};

/* The pid in the session daemon's pid file (root's, or this user's), or 0. */
static pid_t daemon_pid_file(void)
{
	char path[PATH_MAX];
	const char *home = getenv("HOME");
	long pid = 0;
	FILE *f;

	if (geteuid() == 0)
		snprintf(path, sizeof(path), "/var/run/lttng/lttng-sessiond.pid");
	else if (home)
		snprintf(path, sizeof(path), "%s/.lttng/lttng-sessiond.pid", home);
	else
		return 0;
	if (!(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%ld", &pid) != 1 || pid <= 0)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

/* A daemon that does not answer but still runs is on its way out (the one a killed capture
 * started gets SIGTERM and takes a second or two to end): a new one would fail on its lock,
 * so wait until it is gone, or answers after all. */
static void wait_for_exiting_daemon(void)
{
	pid_t old = daemon_pid_file();

	for (unsigned ms = 0; old > 0 && ms < DAEMON_STOP_MS + 1000; ms += 20) {
		if (lttng_session_daemon_alive() == 1 || (kill(old, 0) && errno == ESRCH))
			return;
		sleep_ms(20);
	}
}

/* Starts lttng-sessiond as a child unless one is alive; waits until it answers. */
static int ensure_daemon(struct lttng_reader *r)
{
	int alive = lttng_session_daemon_alive(), status;
	pid_t pid;

	if (alive == 1)
		return 0;
	wait_for_exiting_daemon();
	if (lttng_session_daemon_alive() == 1)
		return 0;
	pid = fork();
	if (pid < 0)
		return fail(r, -errno, "lttng: starting lttng-sessiond failed: fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		/* Not left behind if the process that started it dies. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execl(lttng_programs[0].path, "lttng-sessiond", "--no-kernel", (char *)NULL);
		_exit(127);
	}
	for (unsigned ms = 0; ms < DAEMON_START_MS; ms += 10) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (lttng_session_daemon_alive() == 1) {
			if (w == pid)
				return 0; /* ours died, another one answers: use that one */
			r->daemon = pid;
			return 0;
		}
		if (w == pid) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return fail(r, -ENOENT,
					    "lttng: /usr/bin/lttng-sessiond not found (install the Debian package lttng-tools)");
			return fail(r, -ECHILD,
				    "lttng: lttng-sessiond exited (status %d) before answering; run `lttng-sessiond --no-kernel -vvv` to see why",
				    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		}
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return fail(r, -ETIMEDOUT, "lttng: lttng-sessiond did not answer within %d ms (stopped it again)",
		    DAEMON_START_MS);
}

static void stop_daemon(struct lttng_reader *r)
{
	int status;

	if (r->daemon <= 0)
		return;
	kill(r->daemon, SIGTERM);
	for (unsigned ms = 0; ms < DAEMON_STOP_MS; ms += 10) {
		if (waitpid(r->daemon, &status, WNOHANG) == r->daemon) {
			r->daemon = 0;
			return;
		}
		sleep_ms(10);
	}
	kill(r->daemon, SIGKILL);
	waitpid(r->daemon, &status, 0);
	r->daemon = 0;
}

/* ---- the session -------------------------------------------------------------------------- */

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int check_opts(struct lttng_reader *r, const struct lttng_reader_opts *o)
{
	uint64_t subbuf = o->subbuf_size ? o->subbuf_size : DEFAULT_SUBBUF;
	uint64_t nsub = o->num_subbuf ? o->num_subbuf : DEFAULT_NUM_SUBBUF;
	long page = sysconf(_SC_PAGESIZE);

	if (!is_pow2(subbuf) || subbuf < (uint64_t)page)
		return fail(r, -EINVAL, "lttng: sub-buffer size %llu is not a power of two >= the page size (%ld)",
			    (unsigned long long)subbuf, page);
	if (!is_pow2(nsub) || nsub < 2)
		return fail(r, -EINVAL, "lttng: sub-buffer count %llu is not a power of two >= 2",
			    (unsigned long long)nsub);
	if (!o->discard && o->blocking_timeout_us > (uint64_t)INT64_MAX)
		return fail(r, -EINVAL, "lttng: blocking timeout %llu us is too large",
			    (unsigned long long)o->blocking_timeout_us);
	return 0;
}

static int setup_dir(struct lttng_reader *r, const struct lttng_reader_opts *o)
{
	struct stat st;

	if (!o->output_dir) {
		const char *tmp = getenv("TMPDIR");
		int n = snprintf(r->dir, sizeof(r->dir), "%s/spectap-lttng-XXXXXX", tmp && *tmp ? tmp : "/tmp");

		if (n < 0 || (size_t)n >= sizeof(r->dir))
			return fail(r, -ENAMETOOLONG, "lttng: TMPDIR %s is too long", tmp);
		if (!mkdtemp(r->dir))
			return fail(r, -errno, "lttng: making a trace directory %s failed: %s", r->dir, strerror(errno));
		r->made_dir = true;
		return 0;
	}
	if (o->output_dir[0] == '/') {
		if (strlen(o->output_dir) >= sizeof(r->dir))
			return fail(r, -ENAMETOOLONG, "lttng: trace directory %s is too long", o->output_dir);
		strcpy(r->dir, o->output_dir);
	} else {
		char cwd[PATH_MAX];
		int n;

		if (!getcwd(cwd, sizeof(cwd)))
			return fail(r, -errno, "lttng: getcwd failed: %s", strerror(errno));
		n = snprintf(r->dir, sizeof(r->dir), "%s/%s", cwd, o->output_dir);
		if (n < 0 || (size_t)n >= sizeof(r->dir))
			return fail(r, -ENAMETOOLONG, "lttng: trace directory %s/%s is too long", cwd, o->output_dir);
	}
	if (stat(r->dir, &st) == 0) {
		/* An old trace there would be read with the new one. */
		if (!S_ISDIR(st.st_mode) || rmdir(r->dir) != 0)
			return fail(r, -EEXIST,
				    "lttng: trace directory %s exists and is not an empty directory: give a new one",
				    r->dir);
	}
	return 0;
}

static int setup_session(struct lttng_reader *r, const struct lttng_reader_opts *o)
{
	struct lttng_domain dom;
	struct lttng_handle *h = NULL;
	struct lttng_channel *chan = NULL;
	struct lttng_event *ev = NULL;
	struct lttng_event_context ctx;
	char url[PATH_MAX + 16];
	uint64_t subbuf = o->subbuf_size ? o->subbuf_size : DEFAULT_SUBBUF;
	uint64_t nsub = o->num_subbuf ? o->num_subbuf : DEFAULT_NUM_SUBBUF;
	int64_t timeout;
	int ret;

	timeout = o->discard ? 0 : o->blocking_timeout_us ? (int64_t)o->blocking_timeout_us : -1;

	snprintf(url, sizeof(url), "file://%s", r->dir);
	ret = lttng_create_session(r->session, url);
	if (ret < 0)
		return lttng_fail(r, ret, "creating the session");
	r->created = true;

	memset(&dom, 0, sizeof(dom));
	dom.type = LTTNG_DOMAIN_UST;
	dom.buf_type = LTTNG_BUFFER_PER_UID;
	h = lttng_create_handle(r->session, &dom);
	chan = lttng_channel_create(&dom);
	ev = lttng_event_create();
	if (!h || !chan || !ev) {
		ret = fail(r, -ENOMEM, "lttng: out of memory setting up session %s", r->session);
		goto cleanup;
	}
	snprintf(chan->name, sizeof(chan->name), "%s", CHANNEL);
	chan->enabled = 1;
	chan->attr.overwrite = 0;
	chan->attr.subbuf_size = subbuf;
	chan->attr.num_subbuf = nsub;
	ret = lttng_channel_set_blocking_timeout(chan, timeout);
	if (ret < 0) {
		ret = lttng_fail(r, ret, "setting the channel's blocking timeout");
		goto cleanup;
	}
	ret = lttng_enable_channel(h, chan);
	if (ret < 0) {
		ret = lttng_fail(r, ret, "creating channel " CHANNEL);
		goto cleanup;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx = LTTNG_EVENT_CONTEXT_VPID;
	ret = lttng_add_context(h, &ctx, NULL, CHANNEL);
	if (ret < 0) {
		ret = lttng_fail(r, ret, "adding the vpid context");
		goto cleanup;
	}
	ctx.ctx = LTTNG_EVENT_CONTEXT_VTID;
	ret = lttng_add_context(h, &ctx, NULL, CHANNEL);
	if (ret < 0) {
		ret = lttng_fail(r, ret, "adding the vtid context");
		goto cleanup;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", EVENT);
	ev->type = LTTNG_EVENT_TRACEPOINT;
	ev->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
	ev->loglevel = -1;
	ret = lttng_enable_event_with_exclusions(h, ev, CHANNEL, NULL, 0, NULL);
	if (ret < 0) {
		ret = lttng_fail(r, ret, "enabling " EVENT);
		goto cleanup;
	}
	ret = 0;
cleanup:
	lttng_event_destroy(ev);
	lttng_channel_destroy(chan);
	lttng_destroy_handle(h);
	return ret;
}


int lttng_reader_open(struct lttng_reader **out, const struct lttng_reader_opts *opts, char *err,
		      size_t errlen)
{
	static atomic_uint serial;
	struct lttng_reader_opts o = {0};
	struct lttng_reader *r;
	int ret;

	*out = NULL;
	format(err, errlen, "%s", "");
	if (opts)
		o = *opts;
	r = calloc(1, sizeof(*r));
	if (!r) {
		format(err, errlen, "lttng: out of memory");
		return -ENOMEM;
	}
	r->keep = o.keep;
	snprintf(r->session, sizeof(r->session), "spectap-%ld-%u", (long)getpid(), atomic_fetch_add(&serial, 1));
	ret = check_opts(r, &o);
	if (!ret)
		ret = setup_dir(r, &o);
	if (!ret)
		ret = ensure_daemon(r);
	if (!ret)
		lttng_reclaim_stale_sessions();
	if (!ret)
		ret = setup_session(r, &o);
	if (ret) {
		format(err, errlen, "%s", r->err);
		lttng_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

int lttng_reader_start(struct lttng_reader *r)
{
	int ret;

	if (!r || !r->created || r->destroyed)
		return -EINVAL;
	ret = lttng_start_tracing(r->session);
	if (ret < 0)
		return lttng_fail(r, ret, "starting tracing");
	r->started = true;
	return 0;
}

/* The channel's discarded events and lost packets, as the session daemon counts them. */
static int channel_counts(struct lttng_reader *r)
{
	struct lttng_domain dom;
	struct lttng_channel *chans = NULL;
	struct lttng_handle *h;
	int n, ret = 0;
	bool found = false;

	memset(&dom, 0, sizeof(dom));
	dom.type = LTTNG_DOMAIN_UST;
	dom.buf_type = LTTNG_BUFFER_PER_UID;
	h = lttng_create_handle(r->session, &dom);
	if (!h)
		return fail(r, -ENOMEM, "lttng: out of memory reading the channel counts of %s", r->session);
	n = lttng_list_channels(h, &chans);
	if (n < 0) {
		ret = lttng_fail(r, n, "listing the channels");
		goto cleanup;
	}
	for (int i = 0; i < n; i++) {
		uint64_t d = 0, l = 0;

		if (strcmp(chans[i].name, CHANNEL) != 0)
			continue;
		found = true;
		if ((ret = lttng_channel_get_discarded_event_count(&chans[i], &d)) < 0 ||
		    (ret = lttng_channel_get_lost_packet_count(&chans[i], &l)) < 0) {
			ret = lttng_fail(r, ret, "reading the channel's discarded and lost counts");
			goto cleanup;
		}
		r->stats.channel_discarded = d;
		r->stats.channel_lost_packets = l;
	}
	if (!found)
		ret = fail(r, -ENOENT, "lttng: session %s has no channel " CHANNEL, r->session);
cleanup:
	free(chans);
	lttng_destroy_handle(h);
	return ret;
}

/*
 * Sessions named spectap-PID-N whose PID is gone: a capture killed (SIGKILL, OOM) before it could
 * destroy its session, which a daemon that outlived it keeps active. Destroyed, with their output
 * directory when it is one of ours (spectap-lttng-*). Best effort: a failure changes nothing.
 */
void lttng_reclaim_stale_sessions(void)
{
	struct lttng_session *ss = NULL;
	if (lttng_session_daemon_alive() != 1)
		return;
	int n = lttng_list_sessions(&ss);
	for (int i = 0; i < n; i++) {
		long pid;
		unsigned serial;
		char tail;
		if (sscanf(ss[i].name, "spectap-%ld-%u%c", &pid, &serial, &tail) != 2 || pid <= 0 ||
		    pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (lttng_destroy_session(ss[i].name) < 0)
			continue;
		const char *dir = strstr(ss[i].path, "/spectap-lttng-");
		if (dir && !strchr(dir + 1, '/'))
			sup_rm_rf(ss[i].path);
		else if (dir && !strncmp(ss[i].path, "file://", 7))
			sup_rm_rf(ss[i].path + 7);
	}
	free(ss);
}

static int destroy_session(struct lttng_reader *r)
{
	int ret;

	if (!r->created || r->destroyed)
		return 0;
	r->destroyed = true;
	ret = lttng_destroy_session(r->session);
	if (ret < 0)
		return lttng_fail(r, ret, "destroying the session");
	return 0;
}

int lttng_reader_stop(struct lttng_reader *r)
{
	int ret, ret2;

	if (!r || !r->created || r->destroyed)
		return -EINVAL;
	if (r->started) {
		ret = lttng_stop_tracing(r->session);
		if (ret < 0) {
			ret = lttng_fail(r, ret, "stopping tracing");
			destroy_session(r);
			return ret;
		}
		r->started = false;
	}
	ret = channel_counts(r);
	ret2 = destroy_session(r);
	return ret ? ret : ret2;
}

/* ---- reading ------------------------------------------------------------------------------ */

static bool already_read(const struct lttng_reader *r, const char *dir)
{
	for (size_t i = 0; i < r->ndone; i++)
		if (!strcmp(r->done[i], dir))
			return true;
	return false;
}

/* Adds every directory under dir (dir included) that holds a file named metadata: a CTF trace.
 * Returns 0 or -errno. */
static int find_traces(struct lttng_reader *r, const char *dir, unsigned depth)
{
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (depth > 16)
		return 0;
	d = opendir(dir);
	if (!d)
		return fail(r, -errno, "lttng: looking for CTF traces in %s failed: %s", dir, strerror(errno));
	while (!ret && (errno = 0, e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path)) {
			ret = fail(r, -ENAMETOOLONG, "lttng: path %s/%s is too long", dir, e->d_name);
			break;
		}
		if (lstat(path, &st))
			continue; /* gone meanwhile */
		if (S_ISDIR(st.st_mode)) {
			ret = find_traces(r, path, depth + 1);
		} else if (S_ISREG(st.st_mode) && !strcmp(e->d_name, "metadata") && !already_read(r, dir)) {
			char **t = realloc(r->traces, (r->ntraces + 1) * sizeof(*t));

			if (!t || !(t[r->ntraces] = strdup(dir))) {
				if (t)
					r->traces = t;
				ret = fail(r, -ENOMEM, "lttng: out of memory listing the traces in %s", r->dir);
				break;
			}
			r->traces = t;
			r->ntraces++;
		}
	}
	if (!ret && errno)
		ret = fail(r, -errno, "lttng: reading directory %s failed: %s", dir, strerror(errno));
	closedir(d);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The message of babeltrace's current error (taken and released), or "". */
static void bt_error_text(char *buf, size_t len)
{
	const bt_error *e = bt_current_thread_take_error();
	size_t used = 0;

	buf[0] = 0;
	if (!e)
		return;
	for (uint64_t i = 0; i < bt_error_get_cause_count(e) && used + 3 < len; i++) {
		const char *m = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, i));
		int n = snprintf(buf + used, len - used, "%s%s", i ? "; " : "", m ? m : "?");

		if (n < 0)
			break;
		used += (size_t)n < len - used ? (size_t)n : len - used - 1;
	}
	bt_error_release(e);
}

static bool int_field(const bt_field *f, int64_t *v)
{
	bt_field_class_type t;

	if (!f)
		return false;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		*v = bt_field_integer_signed_get_value(f);
		return true;
	}
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		*v = (int64_t)bt_field_integer_unsigned_get_value(f);
		return true;
	}
	return false;
}

static const bt_field *member(const bt_field *s, const char *name)
{
	if (!s || bt_field_get_class_type(s) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return NULL;
	return bt_field_structure_borrow_member_field_by_name_const(s, name);
}

static int on_event(struct lttng_reader *r, const bt_message *msg)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const char *name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
	const bt_field *payload, *rec, *lenf, *ctx;
	const bt_clock_snapshot *cs;
	struct lttng_reader_record out = {0};
	int64_t v, declared;
	uint64_t freq, cycles;

	if (!name || strcmp(name, EVENT) != 0) {
		r->stats.other_events++;
		return 0;
	}
	payload = bt_event_borrow_payload_field_const(ev);
	rec = member(payload, "record");
	lenf = member(payload, "_record_length");
	if (!rec || bt_field_get_class_type(rec) != BT_FIELD_CLASS_TYPE_STRING || !int_field(lenf, &declared))
		return fail(r, -EBADMSG,
			    "lttng: an " EVENT " event in %s has no text field `record` with its `_record_length`: not written by spectap's emit library?",
			    r->dir);
	out.data = bt_field_string_get_value(rec);
	out.len = (size_t)bt_field_string_get_length(rec);
	if (declared < 0 || (uint64_t)declared != out.len)
		return fail(r, -EBADMSG,
			    "lttng: an " EVENT " record in %s holds %zu bytes of text but says %lld: it contained a NUL byte",
			    r->dir, out.len, (long long)declared);
	ctx = bt_event_borrow_common_context_field_const(ev);
	if (!int_field(member(ctx, "vpid"), &out.pid) || !int_field(member(ctx, "vtid"), &out.tid))
		return fail(r, -EBADMSG, "lttng: an " EVENT " event in %s lacks the vpid and vtid contexts", r->dir);
	if (int_field(member(bt_packet_borrow_context_field_const(bt_event_borrow_packet_const(ev)), "cpu_id"), &v))
		out.cpu = (uint64_t)v;
	cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	freq = bt_clock_class_get_frequency(bt_clock_snapshot_borrow_clock_class_const(cs));
	cycles = bt_clock_snapshot_get_value(cs);
	/* The raw clock value is CLOCK_MONOTONIC (LTTng's default clock), in ticks of freq Hz. */
	out.ts_ns = freq == 1000000000u ? cycles : (uint64_t)((unsigned __int128)cycles * 1000000000u / freq);
	r->stats.records++;
	return r->fn ? r->fn(r->fn_ctx, &out) : 0;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *data)
{
	struct lttng_reader *r = data;
	bt_message_array_const msgs;
	uint64_t count = 0, n;
	int ret = 0;

	switch (bt_message_iterator_next(it, &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < count; i++) {
		const bt_message *m = msgs[i];

		if (!ret) {
			switch (bt_message_get_type(m)) {
			case BT_MESSAGE_TYPE_EVENT:
				ret = on_event(r, m);
				break;
			case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
				if (bt_message_discarded_events_get_count(m, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
					r->stats.discarded_events += n;
				else
					r->stats.discarded_unknown++;
				break;
			case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
				if (bt_message_discarded_packets_get_count(m, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
					r->stats.discarded_packets += n;
				else
					r->stats.discarded_packets++;
				break;
			default:
				break;
			}
		}
		bt_message_put_ref(m);
	}
	if (ret) {
		r->fn_err = ret;
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* Reads one CTF trace directory through src.ctf.fs, flt.utils.muxer and our sink. */
static int read_trace(struct lttng_reader *r, const char *dir)
{
	const bt_plugin *ctf = NULL, *utils = NULL;
	const bt_component_class_source *src_cls;
	const bt_component_class_filter *mux_cls;
	const bt_component_source *src = NULL;
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	bt_value *params = NULL, *inputs = NULL;
	bt_graph *g = NULL;
	bt_graph_run_status st;
	char msg[512];
	int ret = 0;

	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) != BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) != BT_PLUGIN_FIND_STATUS_OK) {
		bt_error_text(msg, sizeof(msg));
		ret = fail(r, -ENOENT,
			   "babeltrace2: the ctf and utils plugins were not found (install libbabeltrace2-0, or set BABELTRACE_PLUGIN_PATH) %s",
			   msg);
		goto cleanup;
	}
	src_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
	mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
	g = bt_graph_create(0);
	params = bt_value_map_create();
	inputs = bt_value_array_create();
	if (!src_cls || !mux_cls || !g || !params || !inputs ||
	    bt_value_array_append_string_element(inputs, dir) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
	    bt_value_map_insert_entry(params, "inputs", inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		ret = fail(r, -ENOMEM, "babeltrace2: setting up a graph for %s failed (out of memory, or no src.ctf.fs)",
			   dir);
		goto cleanup;
	}
	if (bt_graph_add_source_component(g, src_cls, "src", params, BT_LOGGING_LEVEL_WARNING, &src) !=
		    BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
	    bt_graph_add_filter_component(g, mux_cls, "mux", NULL, BT_LOGGING_LEVEL_WARNING, &mux) !=
		    BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
	    bt_graph_add_simple_sink_component(g, "sink", NULL, consume, NULL, r, &sink) !=
		    BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		bt_error_text(msg, sizeof(msg));
		ret = fail(r, -EBADMSG, "babeltrace2: opening the CTF trace %s failed: %s", dir, msg);
		goto cleanup;
	}
	for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
		const bt_port_output *op = bt_component_source_borrow_output_port_by_index_const(src, i);
		const bt_port_input *ip = bt_component_filter_borrow_input_port_by_index_const(mux, i);

		if (!ip || bt_graph_connect_ports(g, op, ip, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			bt_error_text(msg, sizeof(msg));
			ret = fail(r, -EIO, "babeltrace2: connecting stream %llu of %s to the muxer failed: %s",
				   (unsigned long long)i, dir, msg);
			goto cleanup;
		}
	}
	if (bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
				   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
				   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		bt_error_text(msg, sizeof(msg));
		ret = fail(r, -EIO, "babeltrace2: connecting the muxer to the sink failed for %s: %s", dir, msg);
		goto cleanup;
	}
	r->fn_err = 0;
	do
		st = bt_graph_run(g);
	while (st == BT_GRAPH_RUN_STATUS_AGAIN);
	if (r->fn_err) {
		bt_current_thread_clear_error();
		ret = r->fn_err;
		if (!r->err[0])
			fail(r, ret, "lttng: the record callback stopped reading %s: %s", dir, strerror(-ret));
	} else if (st != BT_GRAPH_RUN_STATUS_OK) {
		bt_error_text(msg, sizeof(msg));
		ret = fail(r, st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR ? -ENOMEM : -EBADMSG,
			   "babeltrace2: reading the CTF trace %s failed: %s", dir, msg);
	}
cleanup:
	bt_graph_put_ref(g);
	bt_value_put_ref(inputs);
	bt_value_put_ref(params);
	bt_plugin_put_ref(ctf);
	bt_plugin_put_ref(utils);
	return ret;
}

/* Reads the CTF traces under dir not read before, in name order. */
static int read_under(struct lttng_reader *r, const char *dir, lttng_reader_fn fn, void *ctx)
{
	int ret;

	for (size_t i = 0; i < r->ntraces; i++)
		free(r->traces[i]);
	free(r->traces);
	r->traces = NULL;
	r->ntraces = 0;
	if ((ret = find_traces(r, dir, 0)))
		return ret;
	if (r->ntraces > 1)
		qsort(r->traces, r->ntraces, sizeof(*r->traces), cmp_str);
	r->fn = fn;
	r->fn_ctx = ctx;
	for (size_t i = 0; i < r->ntraces && !ret; i++) {
		/* Without keep, a rotation's archive is removed once read: nothing to remember. */
		if (r->keep) {
			char **d = realloc(r->done, (r->ndone + 1) * sizeof(*d));
			if (!d || !(d[r->ndone] = strdup(r->traces[i]))) {
				if (d)
					r->done = d;
				ret = fail(r, -ENOMEM, "lttng: out of memory reading %s", r->traces[i]);
				break;
			}
			r->done = d;
			r->ndone++;
		}
		r->stats.traces++;
		ret = read_trace(r, r->traces[i]);
	}
	r->fn = NULL;
	r->fn_ctx = NULL;
	return ret;
}

static int records_read(const struct lttng_reader *r, uint64_t before)
{
	uint64_t n = r->stats.records - before;
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int lttng_reader_rotate(struct lttng_reader *r, lttng_reader_fn fn, void *ctx)
{
	struct lttng_rotation_handle *h = NULL;
	const struct lttng_trace_archive_location *loc = NULL;
	enum lttng_rotation_state st = LTTNG_ROTATION_STATE_ONGOING;
	const char *path = NULL;
	uint64_t before = r ? r->stats.records : 0;
	int ret;

	if (!r || !r->created || r->destroyed || !r->started)
		return r ? fail(r, -EINVAL, "lttng: rotate the session of a started reader") : -EINVAL;
	r->err[0] = 0;
	ret = lttng_rotate_session(r->session, NULL, &h);
	if (ret < 0)
		return lttng_fail(r, ret, "rotating the session (to read its trace while it runs)");
	/* The session daemon archives the chunk once every stream has switched packets. */
	while (st == LTTNG_ROTATION_STATE_ONGOING) {
		if (lttng_rotation_handle_get_state(h, &st) != LTTNG_ROTATION_STATUS_OK) {
			ret = fail(r, -EIO, "lttng: the state of a rotation of %s cannot be read", r->session);
			goto cleanup;
		}
		if (st == LTTNG_ROTATION_STATE_ONGOING)
			nanosleep(&(struct timespec){ 0, 2 * 1000 * 1000 }, NULL);
	}
	if (st != LTTNG_ROTATION_STATE_COMPLETED) {
		ret = fail(r, -EIO, "lttng: a rotation of %s ended in error (state %d): see the session daemon's log",
			   r->session, (int)st);
		goto cleanup;
	}
	if (lttng_rotation_handle_get_archive_location(h, &loc) != LTTNG_ROTATION_STATUS_OK || !loc ||
	    lttng_trace_archive_location_local_get_absolute_path(loc, &path) != LTTNG_TRACE_ARCHIVE_LOCATION_STATUS_OK ||
	    !path) {
		ret = fail(r, -EIO, "lttng: the archive a rotation of %s made has no local path", r->session);
		goto cleanup;
	}
	ret = read_under(r, path, fn, ctx);
	/* Read: the archive is not needed any more (the trace file has its records). */
	if (!ret && !r->keep)
		sup_rm_rf(path);
cleanup:
	lttng_rotation_handle_destroy(h);
	return ret ? ret : records_read(r, before);
}

int lttng_reader_read(struct lttng_reader *r, lttng_reader_fn fn, void *ctx)
{
	int ret;
	uint64_t before;

	if (!r)
		return -EINVAL;
	if (!r->destroyed || r->started)
		return fail(r, -EINVAL, "lttng: read the trace of %s after lttng_reader_stop", r->session);
	r->err[0] = 0;
	before = r->stats.records;
	ret = read_under(r, r->dir, fn, ctx);
	return ret ? ret : records_read(r, before);
}

/* ---- closing ------------------------------------------------------------------------------ */

void lttng_reader_close(struct lttng_reader *r)
{
	if (!r)
		return;
	if (r->created && !r->destroyed) {
		if (r->started)
			lttng_stop_tracing_no_wait(r->session);
		destroy_session(r);
	}
	stop_daemon(r);
	if (r->made_dir && !r->keep)
		sup_rm_rf(r->dir);
	for (size_t i = 0; i < r->ntraces; i++)
		free(r->traces[i]);
	free(r->traces);
	for (size_t i = 0; i < r->ndone; i++)
		free(r->done[i]);
	free(r->done);
	free(r);
}

const char *lttng_reader_error(const struct lttng_reader *r)
{
	return r ? r->err : "";
}

const struct lttng_reader_stats *lttng_reader_stats(const struct lttng_reader *r)
{
	return &r->stats;
}

const char *lttng_reader_dir(const struct lttng_reader *r)
{
	return r->dir;
}

const char *lttng_reader_session(const struct lttng_reader *r)
{
	return r->session;
}

bool lttng_reader_owns_daemon(const struct lttng_reader *r)
{
	return r && r->daemon > 0;
}
