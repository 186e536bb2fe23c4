/* net: the little networking the harness does itself (no curl, nc or client libraries on a new
 * machine): an HTTP/1.0 GET, and TCP connections that send a request and read until an
 * expected text arrives. Loopback and plain text protocols only. */
#ifndef SPECTAP_HARNESS_NET_H
#define SPECTAP_HARNESS_NET_H

#include <stddef.h>

#define NET_ERR_SIZE 256
#define NET_MAX_ANSWER (16u << 20)

/* GET http://host:port/path (url given as "host:port/path"); 0 with *body (malloc'd,
 * NUL-terminated) and *status, or -errno with err. */
int net_http_get(const char *url, unsigned timeout_ms, int *status, char **body, char *err);

/* A TCP connection to "host:port". -errno with err. */
int net_connect(const char *hostport, unsigned timeout_ms, int *fd, char *err);
/* Sends all of buf. */
int net_send(int fd, const char *buf, size_t len, char *err);

/* Bytes received and not yet taken by net_expect. */
struct net_inbox {
	char *buf;
	size_t len, cap;
};
/* Reads from fd until expect appears in the inbox (or timeout): then *line_end is the offset
 * just past the end of the line holding it, and the caller takes the answer with
 * net_inbox_take. -ETIMEDOUT, -ECONNRESET (closed), or another -errno with err. */
int net_expect(int fd, struct net_inbox *in, const char *expect, unsigned timeout_ms, size_t *line_end, char *err);
/* Drops the first n bytes of the inbox. */
void net_inbox_take(struct net_inbox *in, size_t n);
void net_inbox_free(struct net_inbox *in);

#endif
