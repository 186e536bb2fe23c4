/* net: HTTP GET and text-protocol TCP for the harness (net.h). */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Splits "host:port[/rest]": host and port into the buffers, rest (NULL when none). */
static int split(const char *url, char *host, size_t hsize, char *port, size_t psize, const char **rest, char *err)
{
	const char *colon = strrchr(url, ':'), *slash = strchr(url, '/');
	if (slash && colon > slash)
		for (colon = slash; colon > url && *colon != ':'; colon--)
			;
	if (!colon || *colon != ':' || colon == url || (size_t)(colon - url) >= hsize) {
		snprintf(err, NET_ERR_SIZE, "'%s' is not host:port", url);
		return -EINVAL;
	}
	size_t plen = slash ? (size_t)(slash - colon - 1) : strlen(colon + 1);
	if (!plen || plen >= psize) {
		snprintf(err, NET_ERR_SIZE, "'%s' has no port", url);
		return -EINVAL;
	}
	memcpy(host, url, (size_t)(colon - url));
	host[colon - url] = 0;
	memcpy(port, colon + 1, plen);
	port[plen] = 0;
	*rest = slash;
	return 0;
}

static int connect_to(const char *host, const char *port, unsigned timeout_ms, int *fd, char *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
	int r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
		snprintf(err, NET_ERR_SIZE, "%s:%s: %s", host, port, gai_strerror(r));
		return -EINVAL;
	}
	int s = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0) {
		r = -errno;
		freeaddrinfo(ai);
		snprintf(err, NET_ERR_SIZE, "socket: %s", strerror(-r));
		return r;
	}
	r = connect(s, ai->ai_addr, ai->ai_addrlen) ? -errno : 0;
	freeaddrinfo(ai);
	if (r == -EINPROGRESS) {
		struct pollfd p = { .fd = s, .events = POLLOUT };
		int e = 0;
		socklen_t el = sizeof(e);
		r = poll(&p, 1, (int)timeout_ms);
		if (r == 0)
			r = -ETIMEDOUT;
		else if (r < 0)
			r = -errno;
		else
			r = getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) ? -errno : -e;
	}
	if (r) {
		close(s);
		snprintf(err, NET_ERR_SIZE, "connecting to %s:%s: %s", host, port, strerror(-r));
		return r;
	}
	*fd = s;
	return 0;
}

int net_connect(const char *hostport, unsigned timeout_ms, int *fd, char *err)
{
	char host[256], port[16];
	const char *rest;
	int r = split(hostport, host, sizeof(host), port, sizeof(port), &rest, err);
	return r ? r : connect_to(host, port, timeout_ms, fd, err);
}

int net_send(int fd, const char *buf, size_t len, char *err)
{
	while (len) {
		ssize_t k = send(fd, buf, len, MSG_NOSIGNAL);
		if (k < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			if (poll(&p, 1, 5000) <= 0) {
				snprintf(err, NET_ERR_SIZE, "sending: timed out");
				return -ETIMEDOUT;
			}
			continue;
		}
		if (k < 0) {
			int r = -errno;
			snprintf(err, NET_ERR_SIZE, "sending: %s", strerror(errno));
			return r;
		}
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Reads what is there (waiting at most until deadline): >0 bytes, 0 closed, -errno. */
static long recv_some(int fd, struct net_inbox *in, long long deadline)
{
	if (in->cap - in->len < 4096) {
		size_t cap = in->cap ? 2 * in->cap : 8192;
		if (cap > NET_MAX_ANSWER)
			return -EFBIG;
		char *b = realloc(in->buf, cap + 1);
		if (!b)
			return -ENOMEM;
		in->buf = b;
		in->cap = cap;
	}
	for (;;) {
		ssize_t k = recv(fd, in->buf + in->len, in->cap - in->len, 0);
		if (k >= 0) {
			in->len += (size_t)k;
			in->buf[in->len] = 0;
			return k;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		long long left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

int net_expect(int fd, struct net_inbox *in, const char *expect, unsigned timeout_ms, size_t *line_end, char *err)
{
	long long deadline = now_ms() + timeout_ms;
	size_t elen = strlen(expect);
	for (;;) {
		const char *hit = in->len ? memmem(in->buf, in->len, expect, elen) : NULL;
		if (hit) {
			/* the end of the line that holds it (the expected text may end it itself) */
			const char *nl = elen && expect[elen - 1] == '\n'
					 ? hit + elen - 1
					 : memchr(hit + elen, '\n', in->len - (size_t)(hit + elen - in->buf));
			if (nl || !elen) {
				*line_end = nl ? (size_t)(nl + 1 - in->buf) : in->len;
				return 0;
			}
		}
		long k = recv_some(fd, in, deadline);
		if (k == 0) {
			snprintf(err, NET_ERR_SIZE, "the connection was closed before '%s' arrived", expect);
			return -ECONNRESET;
		}
		if (k < 0) {
			snprintf(err, NET_ERR_SIZE, "waiting for '%s': %s", expect, strerror((int)-k));
			return (int)k;
		}
	}
}

void net_inbox_take(struct net_inbox *in, size_t n)
{
	if (n >= in->len) {
		in->len = 0;
	} else {
		memmove(in->buf, in->buf + n, in->len - n);
		in->len -= n;
	}
	if (in->buf)
		in->buf[in->len] = 0;
}

void net_inbox_free(struct net_inbox *in)
{
	free(in->buf);
	memset(in, 0, sizeof(*in));
}

int net_http_get(const char *url, unsigned timeout_ms, int *status, char **body, char *err)
{
	char host[256], port[16], req[2048];
	const char *path;
	int fd, r = split(url, host, sizeof(host), port, sizeof(port), &path, err);
	struct net_inbox in = { 0 };
	long long deadline = now_ms() + timeout_ms;

	*body = NULL;
	if (r || (r = connect_to(host, port, timeout_ms, &fd, err)))
		return r;
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s:%s\r\nConnection: close\r\n\r\n", path ? path : "/",
			 host, port);
	if (n >= (int)sizeof(req)) {
		close(fd);
		snprintf(err, NET_ERR_SIZE, "the URL is too long");
		return -EINVAL;
	}
	if ((r = net_send(fd, req, (size_t)n, err))) {
		close(fd);
		return r;
	}
	long k;
	while ((k = recv_some(fd, &in, deadline)) > 0)
		;
	close(fd);
	if (k < 0) {
		snprintf(err, NET_ERR_SIZE, "GET http://%s: %s", url, strerror((int)-k));
		net_inbox_free(&in);
		return (int)k;
	}
	char *hdr_end = in.buf ? strstr(in.buf, "\r\n\r\n") : NULL;
	if (!hdr_end || sscanf(in.buf, "HTTP/%*d.%*d %d", status) != 1) {
		snprintf(err, NET_ERR_SIZE, "GET http://%s: not an HTTP answer", url);
		net_inbox_free(&in);
		return -EPROTO;
	}
	net_inbox_take(&in, (size_t)(hdr_end + 4 - in.buf));
	*body = in.buf ? in.buf : strdup("");
	return *body ? 0 : -ENOMEM;
}
