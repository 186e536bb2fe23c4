/*
 * netns: a private IPv4 network for the members of a cluster under test, made with iproute2's
 * `ip` alone (no iptables/nftables), so that one member can be cut off and healed.
 *
 * Layout, for a net with tag <pid>,<seq> (pid of the process that made it, seq a per-process
 * counter 0..15) and subnet 10.231.<k>.0/24 (k chosen so that no interface of the root
 * namespace already has an address in it):
 *
 *     root namespace                               member i (0-based)
 *     bridge  spt<pid:6x><seq:x>b  10.231.k.254/24
 *       +-- veth spt<pid:6x><seq:x>r<i+1>  <---->  veth spt<pid:6x><seq:x>p<i+1>  10.231.k.<i+1>/24
 *                                                  (in namespace spt-<pid>-<seq>-n<i+1>, lo up)
 *
 * so every member reaches every other one and the root namespace (etcdctl, load clients)
 * reaches them all through the bridge. A cut sets member i's root-side veth down: its peer
 * loses carrier and nothing passes either way (to the other members and to the root
 * namespace) until the heal sets it up again; the member's processes keep running.
 *
 * Cleanup: netns_net_destroy deletes the veths, the namespaces and the bridge (idempotent, and
 * safe on a half-made net); nets still up at exit() of the process that made them are
 * destroyed then too (a fork()ed copy leaves its parent's alone). Nothing runs on a SIGKILL or
 * a fatal signal: the leftovers carry the dead process's pid, and netns_cleanup_stale (run by
 * every netns_net_create) deletes those whose pid no longer runs. Pids are compared within this
 * process's pid namespace: two runs in different pid namespaces sharing /run/netns and the
 * root network namespace are not told apart.
 *
 * Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN). Not thread-safe. Functions return 0 or a
 * negative errno and write a message into net->err.
 */
#ifndef SPECTAP_NETNS_H
#define SPECTAP_NETNS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define NETNS_MAX_MEMBERS 9
#define NETNS_ERR_SIZE 768
#include "spectap/programs.h"

/* The ip binary, from iproute2 (harness/net_programs.c). */
enum { NETNS_N_PROGS = 1 };
extern const struct spt_program netns_programs[NETNS_N_PROGS];

/* Arguments netns_exec_prefix puts before a command. */
#define NETNS_EXEC_ARGC 4

struct netns_member {
	char ns[40];        /* "spt-<pid>-<seq>-n<i+1>" */
	char veth_root[16]; /* root side, a port of the bridge */
	char veth_peer[16]; /* member side, in ns */
	char addr[16];      /* "10.231.<k>.<i+1>" */
	bool ns_made, veth_made;
	bool cut;           /* root-side veth set down by netns_net_cut */
};

struct netns_net {
	unsigned n;
	unsigned seq;
	unsigned subnet;    /* k of 10.231.k.0/24 */
	pid_t owner;        /* the process that made it */
	char bridge[16];
	char host_addr[16]; /* "10.231.<k>.254", the root namespace's address on the bridge */
	bool bridge_made;
	bool registered;    /* counted among this process's live nets (for exit and stale cleanup) */
	bool up;            /* made and not yet destroyed */
	struct netns_member m[NETNS_MAX_MEMBERS];
	char err[NETNS_ERR_SIZE];
};

/* The ip binary (/usr/sbin/ip, /sbin/ip, /usr/bin/ip or /bin/ip), or NULL. */
const char *netns_ip_path(void);

/* Makes the bridge and n member namespaces (n <= NETNS_MAX_MEMBERS). -EPERM with a hint when
 * this process may not (not root), -ENOENT without ip, -EADDRINUSE when no free subnet or tag is
 * left. On failure whatever was made is removed. */
int netns_net_create(struct netns_net *net, unsigned n);
/* Removes everything the net made. Safe to call twice and on a net whose create failed. Set
 * net->err (does not fail: what could not be removed is named there, and net->up stays). */
void netns_net_destroy(struct netns_net *net);

/* Cuts member i off (root-side veth down) / heals it (up). Idempotent. */
int netns_net_cut(struct netns_net *net, unsigned i);
int netns_net_heal(struct netns_net *net, unsigned i);

/* Fills argv[0..NETNS_EXEC_ARGC) with `ip netns exec <ns of member i>`, to be followed by a
 * command and its arguments. `ip netns exec` execs the command in place (no fork), so the pid
 * of the started process is the command's. */
void netns_exec_prefix(const struct netns_net *net, unsigned i, const char **argv);

/* Deletes the namespaces (spt-<pid>-<seq>-nK) and root-namespace links (spt<pid:6x>...) left by
 * processes that no longer run, and those of this process that no live net of it owns. Returns
 * how many were deleted, or a negative errno (err, NETNS_ERR_SIZE bytes, may be NULL). */
int netns_cleanup_stale(char *err);

/* True when the named network namespace / root-namespace link exists. */
bool netns_exists(const char *ns);
bool netns_link_exists(const char *ifname);

#endif
