/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The acceptor: a thread of its own that takes connections off the
 * listening socket, reads each one's credentials and refuses those of a
 * uid that connects faster than its rate, and hands the rest to the event
 * loop through a pipe (DESIGN §14).
 *
 * Why a thread: a storm of connections is work without end for whoever
 * accepts them. On the loop's thread that work kept the loop runnable all
 * the time, and the scheduler then made each of root's requests wait for
 * the loop's next turn on a CPU (milliseconds on a busy host). The
 * acceptor does that work now; the loop sleeps until a request or an
 * admitted connection comes, and a thread that slept is run soon after it
 * is woken.
 *
 * The acceptor shares nothing with the loop but the pipe, its count of
 * refusals (atomic) and the log (whose rate limits are per call site).
 */
#ifndef RTPLACE_ACCEPTOR_H
#define RTPLACE_ACCEPTOR_H

#include <stdint.h>
#include <sys/socket.h>

struct acceptor;

/* A connection the acceptor admitted: its descriptor (non-blocking,
 * close-on-exec) and its peer's credentials at connect(). */
struct acceptor_conn {
	int fd;
	struct ucred cred;
};

/* Connections a uid other than root may open a second, and at once: far
 * above what clients starting together open (one each), far below a
 * storm's tens of thousands, whose connections are then refused before
 * they cost the loop anything. Kept for ACCEPTOR_CONNECT_UIDS uids at a
 * time. */
#define ACCEPTOR_CONNECT_RATE 256
#define ACCEPTOR_CONNECT_BURST 512
#define ACCEPTOR_CONNECT_UIDS 4096
/* How long the acceptor waits after accept() fails for want of
 * descriptors or memory: the listener stays readable, and accepting
 * again at once would spin. */
#define ACCEPTOR_PAUSE_MS 250

/* Starts the thread on listen_fd (non-blocking; the caller keeps it and
 * closes it after acceptor_stop()). 0 or -errno. */
int acceptor_start(int listen_fd, struct acceptor **ret);

/* Stops the thread, waits for it, and closes the connections it admitted
 * that nobody took. NULL is a no-op. */
void acceptor_stop(struct acceptor *a);

/* The pipe's read end: readable while admitted connections wait. */
int acceptor_fd(const struct acceptor *a);

/* The next admitted connection into *ret: 0, or -EAGAIN when none waits. */
int acceptor_take(struct acceptor *a, struct acceptor_conn *ret);

/* Connections it refused so far. */
uint64_t acceptor_refused(const struct acceptor *a);

/*
 * Discards the packets the client of fd sent that the daemon will not
 * read, just before it closes the connection: closing with packets unread
 * resets it (ECONNRESET), which the client would read before the ERROR
 * that says why. Their descriptors go with them (the kernel closes those
 * of a packet received without a control buffer). Bounded: a client that
 * keeps sending may still see the reset.
 */
void acceptor_discard_unread(int fd);

/* Tells the client of fd why it is refused (an ERROR with request id 0,
 * "closing", which every protocol version reads), and closes fd. Logs
 * nothing: a log line's rate limit is its call site's, and each thread
 * logs its refusals from a call site of its own. */
void acceptor_refuse(int fd, const char *reason);

#endif
