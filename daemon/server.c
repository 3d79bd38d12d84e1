/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "acceptor.h"
#include "log.h"
#include "pidmap.h"
#include "procfs.h"
#include "protocol.h"
#include "quota.h"
#include "server.h"

/* Admitted connections taken per callback: between bursts the loop sees
 * the hang-ups of clients that came and went, so a storm of short
 * connections does not fill the client table with peers already gone. */
#define SERVER_ACCEPT_BURST 8
#define SERVER_MAX_FDS 4
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; older headers lack it */
#endif
/* Fewest buckets of the client table by id (a power of two); it doubles
 * whenever the clients outnumber its buckets, so a chain stays short. */
#define SERVER_ID_BUCKETS_MIN 64

struct server_packet {
	struct server_packet *next;
	size_t len;
	unsigned char data[];
};

struct server_client {
	struct server *server;
	struct server_client *next, *prev; /* all clients, for server_free() */
	struct server_client *id_next;     /* chain of its bucket in by_id */
	struct server_peer peer;
	int fd;
	struct event *ev_read;
	struct event *ev_write;
	struct server_packet *out_head, *out_tail;
	size_t out_bytes;
	bool doomed; /* to be dropped from the loop, not from inside a send */
};


struct server {
	struct event_base *base;
	int listen_fd;
	char *path; /* socket file we created and remove at exit; NULL if inherited */
	/* Accepts on its own thread, refuses storms there (acceptor.h). */
	struct acceptor *acceptor;
	struct event *ev_admitted; /* the acceptor's pipe has connections */
	struct server_limits limits;
	server_dispatch_cb dispatch;
	void *ctx;
	struct server_client *clients;
	/* Clients by id: a reply names its client by id (the dispatcher keeps
	 * ids, not pointers, so a client can go between a request and a late
	 * event), and finding it must not cost a walk of every client. */
	struct server_client **by_id;
	unsigned by_id_mask; /* buckets - 1 */
	/* The client whose packet is being dispatched: its replies, nearly
	 * every send, skip even the table. */
	struct server_client *current;
	unsigned nclients;
	struct quota *users; /* connections by uid */
	uint32_t next_id;
	uint64_t refused; /* here; the acceptor counts its own */
	bool peer_pidfd_missing_logged; /* the kernel gives no SO_PEERPIDFD: said once */
	unsigned char *rbuf; /* limits.max_message + 1 bytes, to detect oversize packets */
	size_t rbuf_size;
};

/* Root's connections are bounded by descriptors alone (see
 * server_refusal()), not by a share. */
static void server_quota_limits(const struct server_limits *limits, struct quota_limits *ret)
{
	*ret = (struct quota_limits){
		.size = UINT32_MAX,
		.users = limits->max_clients,
		.per_user = limits->max_clients_per_user,
		.users_key = "max-clients",
		.per_user_key = "max-clients-per-user",
	};
}

static struct server_client *server_find(const struct server *s, uint32_t id)
{
	struct server_client *c = s->current;

	if (c && c->peer.id == id)
		return c;
	for (c = s->by_id[id & s->by_id_mask]; c; c = c->id_next)
		if (c->peer.id == id)
			return c;
	return NULL;
}

/* Doubles the table when the clients outnumber its buckets. 0 or -ENOMEM
 * (the table then stays as it was, only its chains grow longer). */
static int server_by_id_grow(struct server *s)
{
	unsigned n = (s->by_id_mask + 1) * 2;
	struct server_client **t;

	if (s->nclients < s->by_id_mask + 1)
		return 0;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (struct server_client *c = s->clients; c; c = c->next) {
		c->id_next = t[c->peer.id & (n - 1)];
		t[c->peer.id & (n - 1)] = c;
	}
	free(s->by_id);
	s->by_id = t;
	s->by_id_mask = n - 1;
	return 0;
}

static void server_client_link(struct server *s, struct server_client *c)
{
	struct server_client **b = &s->by_id[c->peer.id & s->by_id_mask];

	c->next = s->clients;
	if (c->next)
		c->next->prev = c;
	s->clients = c;
	c->id_next = *b;
	*b = c;
	s->nclients++;
	server_by_id_grow(s);
}

static void server_client_unlink(struct server *s, struct server_client *c)
{
	struct server_client **pp = &s->by_id[c->peer.id & s->by_id_mask];

	while (*pp != c)
		pp = &(*pp)->id_next;
	*pp = c->id_next;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (s->current == c)
		s->current = NULL;
	s->nclients--;
}

static void server_close_fds(struct server_peer *peer)
{
	for (unsigned i = 0; i < peer->nfds; i++)
		close(peer->fds[i]);
	peer->nfds = 0;
}

static void server_client_free(struct server *s, struct server_client *c)
{
	server_client_unlink(s, c);
	quota_put(s->users, c->peer.uid, 1);
	/* Unlinked first, so the callback cannot send to a client being freed. */
	s->dispatch(s, &c->peer, NULL, 0, s->ctx);
	server_close_fds(&c->peer);
	event_free(c->ev_read);
	event_free(c->ev_write);
	while (c->out_head) {
		struct server_packet *p = c->out_head;

		c->out_head = p->next;
		free(p);
	}
	if (c->peer.pidfd >= 0)
		close(c->peer.pidfd);
	close(c->fd);
	free(c);
}

/*
 * Drops c from the loop's next turn. A send can fail deep inside a dispatch
 * (or inside a walk of the caller's tables); freeing the client there would
 * re-enter the dispatcher's disconnect path under its feet.
 */
static void server_client_doom(struct server_client *c)
{
	c->doomed = true;
	event_del(c->ev_read);
	event_active(c->ev_write, EV_WRITE, 0);
}

/*
 * Takes every descriptor that came with a packet, before anything judges
 * the packet: from here on each one is in peer->fds, closed by whichever
 * path the packet takes, or closed now when there is no room for it.
 * peer->fds_truncated says the kernel dropped some (MSG_CTRUNC: more
 * than the control buffer holds), so the dispatcher refuses the request
 * instead of acting on part of what was sent.
 */
static void server_take_fds(struct server_peer *peer, struct msghdr *mh)
{
	peer->nfds = 0;
	peer->fds_truncated = mh->msg_flags & MSG_CTRUNC;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		/* The control buffer holds SERVER_RECV_FDS_MAX, so the kernel
		 * passes no more; should its padding ever fit another, that
		 * one is closed, not lost. */
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (peer->nfds < SERVER_RECV_FDS_MAX) {
				peer->fds[peer->nfds++] = fd;
			} else {
				close(fd);
				peer->fds_truncated = true;
			}
		}
	}
}

/*
 * A packet longer than any message (n bytes, the first in s->rbuf) is
 * still one packet, its bounds kept by SEQPACKET: the ERROR answers the
 * request its header names, when it has one, and names the sizes. Sent
 * as version 1, as every answer to an unreadable request; the client is
 * dropped after it, as the codec drops garbage.
 */
static void server_answer_oversize(struct server *s, struct server_client *c, size_t n)
{
	struct rtplace_msg_hdr h;
	struct proto_msg m;
	char reason[80];
	bool named;

	memcpy(&h, s->rbuf, sizeof(h));
	named = h.magic == RTPLACE_PROTO_MAGIC;
	snprintf(reason, sizeof(reason), "a %zu-byte message exceeds the protocol's %zu-byte limit", n,
		 s->limits.max_message);
	if (proto_encode_error(&m, named ? h.request_id : 0, named ? h.type : 0, -EMSGSIZE, reason) == 0 &&
	    proto_msg_finish(&m, RTPLACE_PROTO_VERSION_MIN) == 0)
		send(c->fd, &m, m.hdr.length, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * One packet per readiness callback. The event is level-triggered, so a
 * client with more packets queued is called again on the loop's next
 * turn, after the other ready clients and the tracker's ring: no client
 * starves the others. Reading on until EAGAIN would cost every request a
 * last recv() that finds nothing, a system call more than the bare
 * server the query bench compares with.
 */
static void server_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server_client *c = arg;
	struct server *s = c->server;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SERVER_RECV_FDS_MAX)];
	} control;
	struct iovec iov = { .iov_base = s->rbuf, .iov_len = s->rbuf_size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	int r;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		log_debug("client %u (pid %d): receive failed: %m", c->peer.id, (int)c->peer.pid);
		server_client_free(s, c);
		return;
	}
	server_take_fds(&c->peer, &mh);
	/* SEQPACKET carries empty packets: an empty read is the hang-up only
	 * when nothing came with it. One with descriptors is a packet, and
	 * garbage, for the dispatcher to answer. */
	if (n == 0 && mh.msg_controllen == 0) {
		server_client_free(s, c);
		return;
	}
	if ((size_t)n >= s->rbuf_size) {
		log_notice_ratelimited("client %u (pid %d): %zd-byte message exceeds the %zu-byte limit; dropping it",
				       c->peer.id, (int)c->peer.pid, n, s->limits.max_message);
		server_answer_oversize(s, c, (size_t)n);
		acceptor_discard_unread(fd);
		server_client_free(s, c);
		return;
	}
	/* c outlives its dispatch: a send that fails only dooms a client
	 * (its reading stops), and only the loop frees one. */
	s->current = c;
	r = s->dispatch(s, &c->peer, s->rbuf, (size_t)n, s->ctx);
	s->current = NULL;
	server_close_fds(&c->peer);
	if (r < 0) {
		acceptor_discard_unread(fd);
		server_client_free(s, c);
	}
}

static int server_flush(struct server_client *c)
{
	while (c->out_head) {
		struct server_packet *p = c->out_head;
		ssize_t n = send(c->fd, p->data, p->len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		c->out_head = p->next;
		if (!c->out_head)
			c->out_tail = NULL;
		c->out_bytes -= p->len;
		free(p);
	}
	return 0;
}

static void server_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server_client *c = arg;

	if (c->doomed || server_flush(c) < 0) {
		server_client_free(c->server, c);
		return;
	}
	if (!c->out_head) {
		/* Drained: read again (reading pauses while output is queued, so a
		 * client that does not read its replies cannot pile up work). */
		event_del(c->ev_write);
		event_add(c->ev_read, NULL);
	}
}

int server_send(struct server *s, uint32_t client, const void *msg, size_t len)
{
	struct server_client *c = server_find(s, client);
	struct server_packet *p;

	if (!c || c->doomed)
		return -ENOENT;
	if (!c->out_head) {
		ssize_t n = send(c->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n >= 0)
			return 0;
		if (errno != EAGAIN && errno != EINTR) {
			int r = -errno;

			server_client_doom(c);
			return r;
		}
	}
	if (c->out_bytes + len > s->limits.max_pending_bytes) {
		log_notice_ratelimited("client %u (pid %d): more than %zu bytes of replies unread; dropping it",
				       c->peer.id, (int)c->peer.pid, s->limits.max_pending_bytes);
		server_client_doom(c);
		return -ENOBUFS;
	}
	p = malloc(sizeof(*p) + len);
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	p->len = len;
	memcpy(p->data, msg, len);
	if (c->out_tail)
		c->out_tail->next = p;
	else
		c->out_head = p;
	c->out_tail = p;
	c->out_bytes += len;
	event_del(c->ev_read);
	event_add(c->ev_write, NULL);
	return 0;
}

int server_send_fds(struct server *s, uint32_t client, const void *msg, size_t len, const int *fds, unsigned nfds)
{
	struct server_client *c = server_find(s, client);
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SERVER_MAX_FDS)];
	} control = { 0 };
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * nfds),
	};
	struct cmsghdr *cm;

	if (!c || c->doomed)
		return -ENOENT;
	if (nfds == 0 || nfds > SERVER_MAX_FDS)
		return -EINVAL;
	/* Descriptors cannot wait in the queue (it holds bytes only), and a
	 * reply must not overtake the ones queued before it. */
	if (c->out_head)
		return -EAGAIN;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

/*
 * Whether a connection with credentials cred, on descriptor fd, is refused,
 * and then why in reason (for its ERROR).
 */
static bool server_refusal(struct server *s, int fd, const struct ucred *cred, struct rtplace_reason *reason)
{
	struct rlimit rl;

	if (cred->uid == 0)
		return false;
	if (quota_check_of(s->users, cred->uid, 1, reason) < 0)
		return true;
	/* Read each time: an administrator may change it (prlimit). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    quota_fd_reserved(cred->uid, (uint64_t)fd, (uint64_t)rl.rlim_cur)) {
		reason_set(reason, "daemon near its descriptor limit (%" PRIu64 ")", (uint64_t)rl.rlim_cur);
		return true;
	}
	return false;
}

void server_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_warning("Failed to read RLIMIT_NOFILE: %m");
		return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			log_warning("Failed to raise RLIMIT_NOFILE from %" PRIu64 " to %" PRIu64 ": %m", (uint64_t)was,
				    (uint64_t)rl.rlim_max);
			return;
		}
	}
	if (rl.rlim_cur == RLIM_INFINITY)
		log_info("Descriptors: no limit");
	else
		log_info("Descriptors: up to %" PRIu64 " (RLIMIT_NOFILE), the last %" PRIu64 " kept for root",
			 (uint64_t)rl.rlim_cur, quota_fd_reserve((uint64_t)rl.rlim_cur));
}

/* Refuses connection fd with reason, counting it. */
static void server_refuse(struct server *s, int fd, const struct ucred *cred, const char *reason)
{
	acceptor_refuse(fd, reason);
	s->refused++;
	log_notice_ratelimited("Refusing client pid %d uid %u: %s", (int)cred->pid, (unsigned)cred->uid, reason);
}

/* The peer's pidfd on fd, or -1 where the kernel gives none: the
 * dispatcher then reads the peer by pid each time, as before pidfds. */
static int server_peer_pidfd(struct server *s, int fd)
{
	socklen_t len;
	int pidfd = -1;

	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0) {
		if (errno == ENOPROTOOPT && !s->peer_pidfd_missing_logged) {
			log_notice("The kernel gives no SO_PEERPIDFD (Linux 6.5): clients are judged by the "
				   "pid they connected with, read from /proc at each request (once the client "
				   "has exited, a process of its user that takes the pid is not told apart)");
			s->peer_pidfd_missing_logged = true;
		}
		pidfd = -1;
	}
	return pidfd;
}

/* Client c (allocated, zeroed) takes connection fd and pidfd and is
 * served; where it cannot be, both descriptors are closed and c freed. */
static void server_client_start(struct server *s, struct server_client *c, int fd, int pidfd,
				const struct ucred *cred)
{
	c->server = s;
	c->fd = fd;
	c->peer = (struct server_peer){
		.id = s->next_id++, .pid = cred->pid, .uid = cred->uid, .gid = cred->gid, .pidfd = pidfd,
		.same_pidns = pidmap_same_pidns(PROCFS_ROOT, cred->pid),
	};
	c->peer.pidns_level = c->peer.same_pidns ? 0 : pidmap_level(PROCFS_ROOT, cred->pid, pidfd);
	c->ev_read = event_new(s->base, fd, EV_READ | EV_PERSIST, server_read_cb, c);
	c->ev_write = event_new(s->base, fd, EV_WRITE | EV_PERSIST, server_write_cb, c);
	if (!c->ev_read || !c->ev_write || event_add(c->ev_read, NULL) < 0 ||
	    quota_take(s->users, cred->uid, 1, NULL) < 0) {
		if (c->ev_read)
			event_free(c->ev_read);
		if (c->ev_write)
			event_free(c->ev_write);
		if (c->peer.pidfd >= 0)
			close(c->peer.pidfd);
		close(fd);
		free(c);
		return;
	}
	server_client_link(s, c);
	log_debug("client %u connected: pid %d uid %u gid %u%s", c->peer.id, (int)cred->pid, (unsigned)cred->uid,
		  (unsigned)cred->gid, c->peer.same_pidns ? "" : ", in another PID namespace");
}

/* Serves the connections the acceptor admitted, or refuses those that
 * would exceed a share or take one of the last descriptors. */
static void server_admitted_cb(evutil_socket_t pipe_fd, short what, void *arg)
{
	struct server *s = arg;
	struct acceptor_conn conn;

	for (int burst = 0; burst < SERVER_ACCEPT_BURST && acceptor_take(s->acceptor, &conn) == 0; burst++) {
		struct rtplace_reason reason;
		struct server_client *c;
		int pidfd = server_peer_pidfd(s, conn.fd);
		/* The connection holds both descriptors: neither may be one of
		 * the reserved last ones. */
		bool refusal = server_refusal(s, conn.fd > pidfd ? conn.fd : pidfd, &conn.cred, &reason);

		c = refusal ? NULL : calloc(1, sizeof(*c));
		if (!c) {
			if (pidfd >= 0)
				close(pidfd);
			if (refusal)
				server_refuse(s, conn.fd, &conn.cred, reason.text);
			else
				close(conn.fd);
			continue;
		}
		server_client_start(s, c, conn.fd, pidfd, &conn.cred);
	}
}

/*
 * Fails unless path is free or a socket nobody listens on (left by a
 * crashed run), which the new socket then replaces by rename.
 */
static int server_check_stale(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_error("%s exists and is not a socket; refusing to replace it", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_error("%s: another rtplaced is already listening there", path);
		r = -EADDRINUSE;
	} else if (errno == ECONNREFUSED || errno == ENOENT) {
		log_notice("Replacing stale socket %s", path);
	} else {
		r = -errno;
		log_error("Failed to probe existing socket %s: %m", path);
	}
	close(fd);
	return r;
}

int server_dir_verdict(const char *dir, const struct stat *st, uid_t me, struct rtplace_reason *why)
{
	int r = 0;

	/* A sticky folder (/tmp, /var/tmp) is shared on purpose: the fix is a
	 * folder of the daemon's own, never to close the shared one. */
	if (st->st_mode & (S_IWGRP | S_IWOTH) && st->st_mode & S_ISVTX) {
		reason_set(why,
			   "The socket's folder %s is a shared folder (mode %04o) where others may create files; "
			   "put the socket in a folder of its own that only root may write, e.g. "
			   "mkdir -m 0755 /run/rtplace and [daemon] socket = /run/rtplace/rtplaced.sock",
			   dir, (unsigned)(st->st_mode & 07777));
		r = -EPERM;
	} else if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		reason_set(why,
			   "The socket's folder %s is writable by %s (mode %04o); it must be writable by root only: "
			   "chmod go-w %s, or choose another [daemon] socket",
			   dir, st->st_mode & S_IWOTH ? "everyone" : "its group", (unsigned)(st->st_mode & 07777), dir);
		r = -EPERM;
	} else if (st->st_uid != 0 && st->st_uid != me) {
		reason_set(why,
			   "The socket's folder %s belongs to uid %u; it must belong to root%s: chown root %s, or "
			   "choose another [daemon] socket",
			   dir, (unsigned)st->st_uid, me ? " or to the daemon's user" : "", dir);
		r = -EPERM;
	}
	return r;
}

/*
 * The socket's folder, open, if only root (or, when the daemon is not
 * root, its own user) can add, remove or rename entries in it: otherwise
 * another user could swap the socket for a link between our calls.
 */
static int server_open_dir(const char *dir, int *ret_dfd)
{
	struct rtplace_reason why;
	struct stat st;
	int dfd, r;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		log_error("Failed to open the socket's folder %s: %m", dir);
		return r;
	}
	if (fstat(dfd, &st) < 0) {
		r = -errno;
		log_error("Failed to stat the socket's folder %s: %m", dir);
	} else {
		r = server_dir_verdict(dir, &st, geteuid(), &why);
		if (r < 0)
			log_error("%s", why.text);
	}
	if (r < 0)
		close(dfd);
	else
		*ret_dfd = dfd;
	return r;
}

/*
 * Binds sa (a name relative to the folder dfd) with the final mode: bind()
 * takes no folder descriptor, so the working directory is that folder for
 * the call, which also keeps the name short whatever the folder's path.
 */
static int server_bind_at(int fd, int dfd, const struct sockaddr_un *sa, mode_t mode)
{
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	mode_t old_umask;
	int r = 0;

	if (cwd < 0 || fchdir(dfd) < 0) {
		r = -errno;
		goto out;
	}
	/* The node is created with the final mode: no chmod after bind. */
	old_umask = umask(~mode & 0777);
	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		r = -errno;
	umask(old_umask);
	if (fchdir(cwd) < 0)
		log_warning("Failed to return to the working directory: %m");
out:
	if (cwd >= 0)
		close(cwd);
	return r;
}

/*
 * Binds and listens on o->path: bound as ".NAME" in the same folder with
 * the final mode, given its group there, renamed over NAME. The folder is
 * checked first (server_open_dir), so no other user can touch either name
 * in between, and every call after bind() is relative to the folder's
 * descriptor.
 */
static int server_listen(const struct server_socket_opts *o, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	const char *name, *slash = strrchr(o->path, '/');
	int fd = -1, dfd = -1, r;

	if (strlen(o->path) >= sizeof(sa.sun_path)) {
		log_error("Socket path %s is longer than %zu bytes", o->path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", slash == o->path ? 1 : (int)(slash - o->path), o->path);
		name = slash + 1;
	} else {
		snprintf(dir, sizeof(dir), ".");
		name = o->path;
	}
	if (!*name) {
		log_error("Socket path %s names a folder, not a socket", o->path);
		return -EINVAL;
	}
	r = server_open_dir(dir, &dfd);
	if (r < 0)
		return r;
	r = server_check_stale(o->path);
	if (r < 0)
		goto fail;
	snprintf(sa.sun_path, sizeof(sa.sun_path), ".%s", name);
	/* Left by a run that died between bind and rename. */
	if (unlinkat(dfd, sa.sun_path, 0) < 0 && errno != ENOENT) {
		r = -errno;
		log_error("Failed to remove %s/%s: %m", dir, sa.sun_path);
		goto fail;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	r = server_bind_at(fd, dfd, &sa, (mode_t)o->mode);
	if (r < 0) {
		log_error("Failed to bind %s/%s: %s", dir, sa.sun_path, strerror(-r));
		goto fail;
	}
	if (o->gid != (gid_t)-1 && fchownat(dfd, sa.sun_path, (uid_t)-1, o->gid, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		log_error("Failed to give %s/%s its group: %m", dir, sa.sun_path);
		goto fail_bound;
	}
	/* A backlog as deep as the kernel allows (net.core.somaxconn): a
	 * storm's connections wait there for their refusal, root's for its
	 * turn, instead of failing with EAGAIN. */
	if (listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		log_error("Failed to listen on %s/%s: %m", dir, sa.sun_path);
		goto fail_bound;
	}
	if (renameat(dfd, sa.sun_path, dfd, name) < 0) {
		r = -errno;
		log_error("Failed to rename %s/%s to %s: %m", dir, sa.sun_path, o->path);
		goto fail_bound;
	}
	close(dfd);
	*ret_fd = fd;
	return 0;
fail_bound:
	unlinkat(dfd, sa.sun_path, 0);
fail:
	if (fd >= 0)
		close(fd);
	close(dfd);
	return r;
}

int server_new(struct event_base *base, const struct server_socket_opts *opts, const struct server_limits *limits,
	       server_dispatch_cb dispatch, void *ctx, struct server **ret)
{
	struct server *s = calloc(1, sizeof(*s));
	struct quota_limits users;
	int r;

	if (!s)
		return -ENOMEM;
	s->base = base;
	s->dispatch = dispatch;
	s->ctx = ctx;
	s->limits = *limits;
	s->next_id = 1;
	s->listen_fd = -1;
	s->rbuf_size = limits->max_message + 1;
	s->rbuf = malloc(s->rbuf_size);
	server_quota_limits(limits, &users);
	s->by_id = calloc(SERVER_ID_BUCKETS_MIN, sizeof(*s->by_id));
	s->by_id_mask = SERVER_ID_BUCKETS_MIN - 1;
	if (!s->rbuf || !s->by_id || quota_new(&users, &s->users) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (opts->inherited_fd >= 0) {
		s->listen_fd = opts->inherited_fd;
		if (fcntl(s->listen_fd, F_SETFL, fcntl(s->listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
			r = -errno;
			goto fail;
		}
	} else {
		r = server_listen(opts, &s->listen_fd);
		if (r < 0)
			goto fail;
		s->path = strdup(opts->path);
		if (!s->path) {
			r = -ENOMEM;
			goto fail;
		}
	}
	r = acceptor_start(s->listen_fd, &s->acceptor);
	if (r < 0)
		goto fail;
	s->ev_admitted = event_new(base, acceptor_fd(s->acceptor), EV_READ | EV_PERSIST, server_admitted_cb, s);
	if (!s->ev_admitted || event_add(s->ev_admitted, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	server_free(s);
	return r;
}

void server_set_limits(struct server *s, const struct server_limits *limits)
{
	/* The read buffer was sized at start; the message limit is fixed by
	 * the protocol, so only the counts change on reload. */
	struct quota_limits users;

	s->limits.max_clients = limits->max_clients;
	s->limits.max_clients_per_user = limits->max_clients_per_user;
	s->limits.max_pending_bytes = limits->max_pending_bytes;
	server_quota_limits(limits, &users);
	quota_set_limits(s->users, &users);
}

void server_free(struct server *s)
{
	if (!s)
		return;
	/* The acceptor first: no connection comes in while the rest goes. */
	acceptor_stop(s->acceptor);
	if (s->ev_admitted)
		event_free(s->ev_admitted);
	while (s->clients)
		server_client_free(s, s->clients);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->path) {
		unlink(s->path);
		free(s->path);
	}
	free(s->rbuf);
	free(s->by_id);
	quota_free(s->users);
	free(s);
}

unsigned server_client_count(const struct server *s)
{
	return s->nclients;
}

uint64_t server_refused_count(const struct server *s)
{
	return s->refused + (s->acceptor ? acceptor_refused(s->acceptor) : 0);
}
