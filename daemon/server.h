/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placement socket: AF_UNIX SOCK_SEQPACKET, one message per packet.
 * Owns the listening socket, the clients, their credentials, per-client
 * output queues and the limits; knows nothing of what messages mean, except
 * the one ERROR it sends to a client it refuses. Every packet is handed to
 * one dispatch callback; a NULL message means the peer is gone, so
 * disconnect and message take one path (as in tmux).
 *
 * Limits (DESIGN §14). A connection from a user other than root is refused
 * (an ERROR naming the limit, then close) when that user already has
 * max_clients_per_user connections, when max_clients connections are open,
 * or when a descriptor it got (the socket, the peer's pidfd) is among the
 * daemon's last quota_fd_reserve(RLIMIT_NOFILE) descriptors (quota.h), as
 * claims' pidfds are: those stay for root's connections and claims and for
 * the daemon's own needs. Root's connections are refused by none of these
 * limits. Connections come from the acceptor's thread (acceptor.h), which
 * has refused those of a uid over its connection rate already, and which,
 * should the daemon run out of descriptors all the same (EMFILE, ENFILE),
 * stops accepting for SERVER_ACCEPT_PAUSE_MS at a time instead of spinning
 * on a listener that stays readable.
 */
#ifndef RTPLACE_SERVER_H
#define RTPLACE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <event2/event.h>

#include "acceptor.h"

#include "reason.h"

struct server;

/* Descriptors received with one packet (the dispatcher judges how many a
 * request may carry); a packet with more is refused (fds_truncated). */
#define SERVER_RECV_FDS_MAX 4

/* Who is on the other end, from SO_PEERCRED at accept time. */
struct server_peer {
	uint32_t id; /* never reused while the daemon runs */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	/* The peer process itself (SO_PEERPIDFD, Linux 6.5), -1 when the
	 * kernel gives none: while it is open and the process lives, pid
	 * names that process and no other. Closed by the server. */
	int pidfd;
	/* Its PID namespace is the daemon's (pidmap_same_pidns() at accept):
	 * the pids it writes into requests are the daemon's pids. */
	bool same_pidns;
	/* Otherwise that namespace's depth (pidmap_level() at accept). */
	int pidns_level;
	/* Descriptors that came with the packet being dispatched (SCM_RIGHTS:
	 * pidfds naming processes, DESIGN §15), valid during that dispatch
	 * only: the server closes them after it. */
	int fds[SERVER_RECV_FDS_MAX];
	unsigned nfds;
	/* The packet came with more than SERVER_RECV_FDS_MAX: the kernel
	 * closed the rest, and the request must not be acted on. */
	bool fds_truncated;
	/* The dispatcher's own state for this connection: NULL at accept,
	 * the dispatcher's to free when it is called with msg NULL. */
	void *data;
};

/*
 * Called for each packet (msg, len) and once with msg NULL when the peer is
 * gone. A negative return drops the client (garbage, protocol abuse): the
 * callback will then be called with msg NULL.
 */
typedef int (*server_dispatch_cb)(struct server *s, struct server_peer *peer, const void *msg, size_t len,
				  void *ctx);

struct server_limits {
	unsigned max_clients;          /* connections of all users but root */
	unsigned max_clients_per_user; /* per uid, root excepted */
	size_t max_pending_bytes; /* queued replies per client before it is dropped */
	size_t max_message;       /* longest packet accepted */
};

/* How long accepting pauses after accept() failed for want of descriptors
 * or memory (the metrics' listener pauses as long). */
#define SERVER_ACCEPT_PAUSE_MS ACCEPTOR_PAUSE_MS

/*
 * Whether the socket may live in folder dir, whose status is st, for a
 * daemon running as uid me: only root (or me) may add, remove or rename
 * entries there. 0, or -EPERM with why naming the fix.
 */
int server_dir_verdict(const char *dir, const struct stat *st, uid_t me, struct rtplace_reason *why);

struct server_socket_opts {
	const char *path;  /* used when no fd is inherited */
	int inherited_fd;  /* >= 0: a listening socket from systemd */
	mode_t mode;
	gid_t gid;         /* (gid_t)-1 keeps the daemon's group */
};

/*
 * Creates the server on base. The socket's folder must be writable by
 * root only (by root or the daemon's own user when it does not run as
 * root): otherwise -EPERM, logged with the fix. The socket is bound under a
 * temporary name with its final mode (umask), given its group there, and
 * renamed into place, so it appears at path complete and no call by path
 * follows bind() outside that folder. A stale socket file (nothing
 * listening) at path is replaced; a live one is an error (-EADDRINUSE), so
 * a second daemon cannot steal the first one's socket. Returns 0 or -errno.
 */
/*
 * Raises RLIMIT_NOFILE's soft limit to its hard one, before anything holds
 * descriptors for clients: every connection holds two and every owner of
 * claims one (its pidfd), and the usual soft limit (1,024) is far below
 * what [limits] lets users hold. Logs the limit it leaves, and a failure.
 */
void server_raise_fd_limit(void);

int server_new(struct event_base *base, const struct server_socket_opts *opts, const struct server_limits *limits,
	       server_dispatch_cb dispatch, void *ctx, struct server **ret);

/* Stops listening, disconnects every client (dispatching NULL for each), and
 * removes the socket file it created. Accepts NULL. */
void server_free(struct server *s);

/* Updates the limits (a reload); existing clients above a new max stay. */
void server_set_limits(struct server *s, const struct server_limits *limits);

/*
 * Sends one packet to a client, queueing it if the socket is full. Returns
 * 0, -ENOENT (client gone), -ENOBUFS (its queue passed the limit: the
 * client is dropped).
 */
int server_send(struct server *s, uint32_t client, const void *msg, size_t len);

/*
 * Sends one packet with descriptors (SCM_RIGHTS, at most 4). Not queued:
 * -EAGAIN when the socket is full or replies are queued before it, so the
 * caller answers with an error instead. 0 or -errno.
 */
int server_send_fds(struct server *s, uint32_t client, const void *msg, size_t len, const int *fds, unsigned nfds);

unsigned server_client_count(const struct server *s);

/* Connections refused at a client limit since start. */
uint64_t server_refused_count(const struct server *s);

#endif
