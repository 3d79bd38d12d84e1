/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The acceptor thread: accepts, refuses past the connection rate, and
 * hands the rest to the loop (acceptor.h, DESIGN §14). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "acceptor.h"
#include "clocks.h"
#include "log.h"
#include "protocol.h"
#include "rate.h"
#include "reason.h"

/* A cache line (DESIGN §4). */
#define ACCEPTOR_LINE 64
/* Connections accepted between two looks at the stop request. */
#define ACCEPTOR_BURST 64
/* Packets a refused client sent that are discarded unread, at most. */
#define ACCEPTOR_DISCARD_MAX 64

/*
 * Shared by the two threads. Layout: the first line holds what is set at
 * start and only read afterwards; the second is the thread's, written at
 * each refusal and failure, of which the loop reads refused alone, for
 * the metrics. Apart, the thread's writes never take a line the loop
 * reads at each admitted connection (pipe_r) from its cache.
 */
struct acceptor {
	int listen_fd;
	int stop_fd; /* eventfd: readable once acceptor_stop() asks */
	int pipe_r;  /* the loop's end: struct acceptor_conn records */
	int pipe_w;  /* the thread's end, non-blocking */
	pthread_t thread;
	bool started;
	/* A count that orders nothing else: relaxed on both sides. */
	_Alignas(ACCEPTOR_LINE) _Atomic uint64_t refused;
	uint64_t failures;     /* accept() failures in the current pause */
	struct rate *connects; /* new connections by uid */
};
_Static_assert(offsetof(struct acceptor, refused) == ACCEPTOR_LINE, "the thread's fields start the second line");
_Static_assert(sizeof(struct acceptor) == 2 * ACCEPTOR_LINE, "two lines, nothing of another object's in them");

void acceptor_discard_unread(int fd)
{
	/* A 0 ends it: a peer that hung up (a storm's clients all have)
	 * returns 0 for ever, and no client of the protocol sends an empty
	 * packet. */
	for (int i = 0; i < ACCEPTOR_DISCARD_MAX; i++)
		if (recv(fd, NULL, 0, MSG_DONTWAIT | MSG_TRUNC) <= 0)
			break;
}

void acceptor_refuse(int fd, const char *reason)
{
	struct proto_msg m;

	/* Version 1: the client has sent nothing yet, and every client reads it. */
	if (proto_encode_error(&m, 0, 0, -EUSERS, reason) == 0 && proto_msg_finish(&m, RTPLACE_PROTO_VERSION_MIN) == 0)
		send(fd, &m, m.hdr.length, MSG_DONTWAIT | MSG_NOSIGNAL);
	acceptor_discard_unread(fd);
	close(fd);
}

/* Waits until the pipe has room for one more record: true, or false
 * when the daemon stops first. */
static bool acceptor_wait_room(struct acceptor *a)
{
	struct pollfd p[2] = { { .fd = a->pipe_w, .events = POLLOUT }, { .fd = a->stop_fd, .events = POLLIN } };

	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	return !(p[1].revents & POLLIN) && (p[0].revents & POLLOUT);
}

/* Hands c to the loop; closes it when the daemon stops first. */
static void acceptor_hand_over(struct acceptor *a, const struct acceptor_conn *c)
{
	ssize_t n;

	/* At most PIPE_BUF bytes: written whole or not at all. */
	while ((n = write(a->pipe_w, c, sizeof(*c))) < 0 && (errno == EINTR || (errno == EAGAIN && acceptor_wait_room(a))))
		;
	if (n != (ssize_t)sizeof(*c))
		close(c->fd);
}

/* Judges and hands over one accepted connection fd. */
static void acceptor_admit(struct acceptor *a, int fd)
{
	struct acceptor_conn c = { .fd = fd };
	socklen_t len = sizeof(c.cred);
	struct rtplace_reason reason;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c.cred, &len) < 0) {
		log_warning_ratelimited("Failed to read a client's credentials: %m");
		close(fd);
	} else if (c.cred.uid != 0 && !rate_admit(a->connects, c.cred.uid, clocks_monotonic_ns() / 1000000)) {
		reason_set(&reason, "uid %u connects more than %u times a second; keep a connection open, or wait",
			   (unsigned)c.cred.uid, ACCEPTOR_CONNECT_RATE);
		acceptor_refuse(fd, reason.text);
		atomic_fetch_add_explicit(&a->refused, 1, memory_order_relaxed);
		/* This thread's own call site: a rate limit is not shared. */
		log_notice_ratelimited("Refusing client pid %d uid %u: %s", (int)c.cred.pid, (unsigned)c.cred.uid,
				       reason.text);
	} else {
		acceptor_hand_over(a, &c);
	}
}

/* Accepts up to ACCEPTOR_BURST connections: true, or false when accept()
 * failed in a way that retrying at once would not mend (a pause). */
static bool acceptor_burst(struct acceptor *a)
{
	bool failed = false;

	for (int i = 0; i < ACCEPTOR_BURST && !failed; i++) {
		int fd = accept4(a->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			acceptor_admit(a, fd);
		} else if (errno == EAGAIN) {
			/* Caught up with the backlog: the episode of failures,
			 * if any, is over. One that ended at the first accept
			 * that worked would end at each pause, as the loop closes
			 * what it refuses on its own thread a moment later. */
			if (a->failures)
				log_notice_ratelimited("Accepting clients again after %" PRIu64 " failed attempts",
						       a->failures);
			a->failures = 0;
			break;
		} else if (errno != EINTR && errno != ECONNABORTED) {
			if (a->failures++ == 0)
				log_warning_ratelimited("Failed to accept a client: %m; not accepting for %d ms at a "
							"time until it works again",
							ACCEPTOR_PAUSE_MS);
			failed = true;
		}
	}
	return !failed;
}

/* The thread: waits for connections (or, in a pause, for the pause to
 * end) and for the stop request. */
static void *acceptor_main(void *arg)
{
	struct acceptor *a = arg;
	bool paused = false, stop = false;

	while (!stop) {
		struct pollfd p[2] = { { .fd = paused ? -1 : a->listen_fd, .events = POLLIN },
				       { .fd = a->stop_fd, .events = POLLIN } };
		int n = poll(p, 2, paused ? ACCEPTOR_PAUSE_MS : -1);

		if (n < 0 && errno != EINTR && errno != ENOMEM) {
			log_error("Not accepting clients any more: poll() failed: %m");
			stop = true;
		} else if (p[1].revents & POLLIN) {
			stop = true;
		} else if (n >= 0) {
			paused = !acceptor_burst(a);
		}
	}
	return NULL;
}

int acceptor_start(int listen_fd, struct acceptor **ret)
{
	/* Aligned as its type says: its second line is the thread's. */
	struct acceptor *a = aligned_alloc(ACCEPTOR_LINE, sizeof(*a));
	int fds[2] = { -1, -1 };
	sigset_t all, old;
	int r = -ENOMEM;

	if (!a)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	a->listen_fd = listen_fd;
	a->pipe_r = a->pipe_w = -1;
	a->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->stop_fd < 0 || pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		goto fail;
	}
	a->pipe_r = fds[0];
	a->pipe_w = fds[1];
	if (rate_new(ACCEPTOR_CONNECT_RATE, ACCEPTOR_CONNECT_BURST, ACCEPTOR_CONNECT_UIDS, &a->connects) < 0)
		goto fail;
	/* Signals are the loop's: the thread is born with all of them
	 * blocked, so none is delivered to it. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&a->thread, NULL, acceptor_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		goto fail;
	a->started = true;
	*ret = a;
	return 0;
fail:
	acceptor_stop(a);
	return r;
}

void acceptor_stop(struct acceptor *a)
{
	struct acceptor_conn c;

	if (!a)
		return;
	if (a->started) {
		eventfd_write(a->stop_fd, 1);
		pthread_join(a->thread, NULL);
	}
	/* The thread is gone: what it handed over and nobody took. */
	while (a->pipe_r >= 0 && acceptor_take(a, &c) == 0)
		close(c.fd);
	if (a->pipe_r >= 0)
		close(a->pipe_r);
	if (a->pipe_w >= 0)
		close(a->pipe_w);
	if (a->stop_fd >= 0)
		close(a->stop_fd);
	rate_free(a->connects);
	free(a);
}

int acceptor_fd(const struct acceptor *a)
{
	return a->pipe_r;
}

int acceptor_take(struct acceptor *a, struct acceptor_conn *ret)
{
	ssize_t n;

	do
		n = read(a->pipe_r, ret, sizeof(*ret));
	while (n < 0 && errno == EINTR);
	/* Records are written whole (acceptor_hand_over), so read whole. */
	return n == (ssize_t)sizeof(*ret) ? 0 : -EAGAIN;
}

uint64_t acceptor_refused(const struct acceptor *a)
{
	return atomic_load_explicit(&a->refused, memory_order_relaxed);
}
