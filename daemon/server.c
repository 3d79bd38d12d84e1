#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "server.h"

/* Packets read per readiness callback, so one busy client cannot starve
 * the others or the tracker's ring buffer. */
#define SERVER_READ_BURST 32
/* Connections accepted per callback: between bursts the loop sees the
 * hang-ups of clients that came and went, so a storm of short connections
 * does not fill the client table with peers that are already gone. */
#define SERVER_ACCEPT_BURST 8
#define SERVER_MAX_FDS 4

struct server_packet {
	struct server_packet *next;
	size_t len;
	unsigned char data[];
};

struct server_client {
	struct server *server;
	struct server_client *next;
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
	struct event *ev_accept;
	struct server_limits limits;
	server_dispatch_cb dispatch;
	void *ctx;
	struct server_client *clients;
	unsigned nclients;
	uint32_t next_id;
	time_t last_refusal_log;
	uint64_t refused;
	unsigned char *rbuf; /* limits.max_message + 1 bytes, to detect oversize packets */
	size_t rbuf_size;
};

static struct server_client *server_find(const struct server *s, uint32_t id)
{
	for (struct server_client *c = s->clients; c; c = c->next)
		if (c->peer.id == id)
			return c;
	return NULL;
}

static void server_client_free(struct server *s, struct server_client *c)
{
	struct server_client **pp;

	for (pp = &s->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	s->nclients--;
	/* Unlinked first, so the callback cannot send to a client being freed. */
	s->dispatch(s, &c->peer, NULL, 0, s->ctx);
	event_free(c->ev_read);
	event_free(c->ev_write);
	while (c->out_head) {
		struct server_packet *p = c->out_head;

		c->out_head = p->next;
		free(p);
	}
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

static void server_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server_client *c = arg;
	struct server *s = c->server;
	uint32_t id = c->peer.id;

	for (int i = 0; i < SERVER_READ_BURST; i++) {
		ssize_t n = recv(fd, s->rbuf, s->rbuf_size, MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			if (n < 0)
				log_debug("client %u (pid %d): receive failed: %m", id, (int)c->peer.pid);
			server_client_free(s, c);
			return;
		}
		if ((size_t)n >= s->rbuf_size) {
			log_notice_ratelimited("client %u (pid %d): %zd-byte message exceeds the %zu-byte limit; "
					       "dropping it",
					       id, (int)c->peer.pid, n, s->limits.max_message);
			server_client_free(s, c);
			return;
		}
		if (s->dispatch(s, &c->peer, s->rbuf, (size_t)n, s->ctx) < 0) {
			/* The dispatcher may already have dropped it while replying. */
			c = server_find(s, id);
			if (c)
				server_client_free(s, c);
			return;
		}
		/* A reply may have dropped the client (queue over its limit), and
		 * a client with queued output is not read until it drains. */
		c = server_find(s, id);
		if (!c || c->out_head || c->doomed)
			return;
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

static void server_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct server *s = arg;

	for (int burst = 0; burst < SERVER_ACCEPT_BURST; burst++) {
		struct server_client *c;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warning_ratelimited("Failed to accept a client: %m");
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			log_warning_ratelimited("Failed to read a client's credentials: %m");
			close(fd);
			continue;
		}
		if (s->nclients >= s->limits.max_clients) {
			time_t now = time(NULL);

			/* Once a second at most: a storm must not flood the journal. */
			if (now != s->last_refusal_log) {
				log_notice("Refusing client pid %d uid %u: %u clients connected ([limits] max-clients)",
					   (int)cred.pid, (unsigned)cred.uid, s->nclients);
				s->last_refusal_log = now;
			}
			s->refused++;
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->server = s;
		c->fd = fd;
		c->peer = (struct server_peer){ .id = s->next_id++, .pid = cred.pid, .uid = cred.uid, .gid = cred.gid };
		c->ev_read = event_new(s->base, fd, EV_READ | EV_PERSIST, server_read_cb, c);
		c->ev_write = event_new(s->base, fd, EV_WRITE | EV_PERSIST, server_write_cb, c);
		if (!c->ev_read || !c->ev_write || event_add(c->ev_read, NULL) < 0) {
			if (c->ev_read)
				event_free(c->ev_read);
			if (c->ev_write)
				event_free(c->ev_write);
			close(fd);
			free(c);
			continue;
		}
		c->next = s->clients;
		s->clients = c;
		s->nclients++;
		log_debug("client %u connected: pid %d uid %u gid %u", c->peer.id, (int)cred.pid, (unsigned)cred.uid,
			  (unsigned)cred.gid);
	}
}

/* Removes path if it is a socket nobody listens on (left by a crashed run). */
static int server_clear_stale(const char *path)
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
		log_notice("Removing stale socket %s", path);
		if (unlink(path) < 0 && errno != ENOENT)
			r = -errno;
	} else {
		r = -errno;
		log_error("Failed to probe existing socket %s: %m", path);
	}
	close(fd);
	return r;
}

static int server_listen(const struct server_socket_opts *o, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old_umask;
	int fd, r;

	if (strlen(o->path) >= sizeof(sa.sun_path)) {
		log_error("Socket path %s is longer than %zu bytes", o->path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	r = server_clear_stale(o->path);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, o->path, strlen(o->path) + 1);
	/* Bind with no permissions at all, then open up to the configured mode:
	 * the socket is never reachable with wider access than configured. */
	old_umask = umask(0777);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_umask);
	if (r < 0) {
		r = -errno;
		log_error("Failed to bind %s: %m", o->path);
		goto fail;
	}
	if ((o->gid != (gid_t)-1 && chown(o->path, (uid_t)-1, o->gid) < 0) || chmod(o->path, o->mode) < 0) {
		r = -errno;
		log_error("Failed to set owner/mode of %s: %m", o->path);
		unlink(o->path);
		goto fail;
	}
	if (listen(fd, 128) < 0) {
		r = -errno;
		log_error("Failed to listen on %s: %m", o->path);
		unlink(o->path);
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

int server_new(struct event_base *base, const struct server_socket_opts *opts, const struct server_limits *limits,
	       server_dispatch_cb dispatch, void *ctx, struct server **ret)
{
	struct server *s = calloc(1, sizeof(*s));
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
	if (!s->rbuf) {
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
	s->ev_accept = event_new(base, s->listen_fd, EV_READ | EV_PERSIST, server_accept_cb, s);
	if (!s->ev_accept || event_add(s->ev_accept, NULL) < 0) {
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
	s->limits.max_clients = limits->max_clients;
	s->limits.max_pending_bytes = limits->max_pending_bytes;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	while (s->clients)
		server_client_free(s, s->clients);
	if (s->ev_accept)
		event_free(s->ev_accept);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->path) {
		unlink(s->path);
		free(s->path);
	}
	free(s->rbuf);
	free(s);
}

unsigned server_client_count(const struct server *s)
{
	return s->nclients;
}

uint64_t server_refused_count(const struct server *s)
{
	return s->refused;
}
