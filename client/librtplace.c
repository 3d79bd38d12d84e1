/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librtplace: one connection to rtplaced, one request in flight at a time.
 * Requests are built and replies checked by the shared codec
 * (common/protocol.c), so the library sends nothing the daemon would refuse
 * as malformed and trusts nothing it receives unchecked.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* rtplace.h first: protocol.h then redefines the shared constants, which
 * the compiler accepts only if both headers spell them identically. */
#include "rtplace.h"

#include "levels.h"
#include "local-read.h"
#include "protocol.h"
#include "reason.h"
#include "ring.h"

_Static_assert(RTPLACE_ANSWER_MAX == RTPLACE_QUERY_MAX_COUNT, "an answer holds the longest reply");
_Static_assert(RTPLACE_REASON_LEN == RTPLACE_REASON_MAX, "reason strings");
_Static_assert(RTPLACE_COMM_LEN == RTPLACE_COMM_MAX, "comm strings");
_Static_assert(RTPLACE_VERSION_LEN == RTPLACE_VERSION_MAX, "version strings");
_Static_assert(sizeof(cpu_set_t) % sizeof(uint64_t) == 0, "cpu_set_t is whole 64-bit words");
_Static_assert(RTPLACE_NOTIFY_MOVED == RTPLACE_RECORD_MOVED && RTPLACE_NOTIFY_CLAIM_EXPIRED == RTPLACE_RECORD_CLAIM_EXPIRED &&
		       RTPLACE_NOTIFY_COLLISION == RTPLACE_RECORD_COLLISION &&
		       RTPLACE_NOTIFY_THREAD_EXITED == RTPLACE_RECORD_THREAD_EXITED &&
		       RTPLACE_NOTIFY_CLAIM_REVOKED == RTPLACE_RECORD_CLAIM_REVOKED &&
		       RTPLACE_NOTIFY_WATCHDOG == RTPLACE_RECORD_WATCHDOG &&
		       RTPLACE_NOTIFY_CLAIM_CREATED == RTPLACE_RECORD_CLAIM_CREATED &&
		       RTPLACE_NOTIFY_CLAIM_RELEASED == RTPLACE_RECORD_CLAIM_RELEASED &&
		       RTPLACE_NOTIFY_ISOLATED == RTPLACE_RECORD_ISOLATED &&
		       RTPLACE_NOTIFY_ISOLATION_RELEASED == RTPLACE_RECORD_ISOLATION_RELEASED,
	       "public record types are the ring's");
_Static_assert(RTPLACE_NOTIFY_ISOLATED_PARTITION == RTPLACE_ISOLATED_PARTITION &&
		       RTPLACE_NOTIFY_ISOLATED_IRQS == RTPLACE_ISOLATED_IRQS &&
		       RTPLACE_NOTIFY_ISOLATED_WORKQUEUES == RTPLACE_ISOLATED_WORKQUEUES &&
		       RTPLACE_NOTIFY_ISOLATED_IRQBALANCE == RTPLACE_ISOLATED_IRQBALANCE &&
		       RTPLACE_NOTIFY_ISOLATED_MANAGED_KEPT == RTPLACE_ISOLATED_MANAGED_KEPT &&
		       RTPLACE_NOTIFY_ISOLATED_NOT_WRITTEN == RTPLACE_ISOLATED_NOT_WRITTEN &&
		       RTPLACE_NOTIFY_ISOLATED_IRQBALANCE_UNREACHED == RTPLACE_ISOLATED_IRQBALANCE_UNREACHED &&
		       RTPLACE_NOTIFY_ISOLATION_END_RELEASED == RTPLACE_ISOLATION_END_RELEASED &&
		       RTPLACE_NOTIFY_ISOLATION_END_EXPIRED == RTPLACE_ISOLATION_END_EXPIRED &&
		       RTPLACE_NOTIFY_ISOLATION_END_OWNER_EXITED == RTPLACE_ISOLATION_END_OWNER_EXITED &&
		       RTPLACE_NOTIFY_ISOLATION_END_REVOKED == RTPLACE_ISOLATION_END_REVOKED &&
		       RTPLACE_NOTIFY_ISOLATION_END_STOP == RTPLACE_ISOLATION_END_STOP,
	       "public isolation details are the ring's");
/* claim_id took the place of reserved[1..2] (0.1.0's ABI): same size and
 * alignment, the fields before it where they were. */
_Static_assert(offsetof(struct rtplace_notification, reserved) == 44 &&
		       offsetof(struct rtplace_notification, claim_id) == 48 &&
		       sizeof(struct rtplace_notification) == 56,
	       "struct rtplace_notification keeps 0.1.0's layout");

/* Descriptors one reply may carry: SUBSCRIBE_REPLY has two; room for more
 * so that a reply with too many is seen whole and refused. */
#define RTPLACE_FDS_MAX 4

#define RTPLACE_TIMEOUT_DEFAULT_MS 5000u

/* Bytes of a reason that hold most whole (placement's, the daemon's
 * usual ones): copied first, and the rest only when they do not. */
#define RTPLACE_REASON_SHORT 64

struct rtplace {
	pthread_mutex_t lock;   /* one request and its reply at a time */
	int fd;                 /* -1 after the daemon went away */
	uint32_t next_id;       /* request ids, never 0 */
	unsigned timeout_ms;
	struct rtplace_reason reason; /* of the last ERROR reply, "" if none */
	struct sockaddr_un addr;
	/* The protocol version requests are sent in: RTPLACE_PROTO_VERSION,
	 * or version 1 once the daemon behind fd refused it (an older one). */
	uint16_t version;
	struct proto_msg req;   /* the request being sent */
	struct proto_msg reply; /* the reply just received */
	char rx[RTPLACE_MSG_MAX];
	/* A pidfd of the caller's process (self_pid), kept from the first
	 * request that names it or one of its threads, as most do; -1 until
	 * then, and opened again in a child after fork(). */
	int self_pidfd;
	pid_t self_pid;
	/* Whether the caller's process (pidns_pid: checked again after fork(),
	 * which may enter a PID namespace made with unshare()) is in the
	 * initial PID namespace; see rtplace_needs_pidfds(). */
	bool initial_pidns;
	pid_t pidns_pid;
	/* The daemon's map and snapshot after rtplace_local_open(), NULL
	 * before: set once, under lock, and read without it by queries. */
	struct rtplace_local *_Atomic local;
};

/* The initial PID namespace's inode number, fixed by the kernel since 3.8
 * (PROC_PID_INIT_INO in include/linux/proc_ns.h). */
#define RTPLACE_INITIAL_PIDNS_INO 0xEFFFFFFCu

/* The connection is gone (daemon stopped or restarted): worth one reconnect. */
static bool rtplace_is_disconnect(int r)
{
	return r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN;
}

static int rtplace_apply_timeout(int fd, unsigned timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000,
	};

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

static uint64_t rtplace_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sets fd's timeouts to what is left until deadline (rtplace_now_ms()). */
static int rtplace_apply_deadline(int fd, uint64_t deadline)
{
	uint64_t now = rtplace_now_ms();

	if (now >= deadline)
		return -ETIMEDOUT;
	return rtplace_apply_timeout(fd, (unsigned)(deadline - now));
}

/* Waits for events on fd until deadline: 0, -ETIMEDOUT or -errno. */
static int rtplace_wait(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = -EINTR;

	while (r == -EINTR) {
		uint64_t now = rtplace_now_ms();
		int n;

		if (now >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		n = poll(&p, 1, deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now));
		/* n == 0: the poll's timeout, maybe cut to INT_MAX, ran out;
		 * the clock says whether the deadline did, as after a signal. */
		r = n > 0 ? 0 : n == 0 ? -EINTR : -errno;
	}
	return r;
}

static int rtplace_open(struct rtplace *rp)
{
	uint64_t deadline = rtplace_now_ms() + rp->timeout_ms;
	int fd, r;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/*
	 * The timeouts go first: connect() on a UNIX socket waits for room
	 * in the listener's backlog, which a stopped daemon (SIGSTOP, a frozen
	 * cgroup) never makes, for as long as SO_SNDTIMEO says, and without
	 * it for ever; then it fails with EAGAIN. A non-blocking connect()
	 * is no way out here: it fails with EAGAIN at once, and poll() says
	 * POLLOUT at once on such a socket, so only a sleep loop could wait.
	 * A signal cuts the wait short (EINTR): connect again for the rest.
	 */
	r = rtplace_apply_timeout(fd, rp->timeout_ms);
	while (r == 0 && connect(fd, (const struct sockaddr *)&rp->addr, sizeof(rp->addr)) < 0) {
		r = -errno;
		if (r == -EAGAIN)
			r = -ETIMEDOUT;
		else if (r == -EINTR)
			r = rtplace_apply_deadline(fd, deadline);
	}
	/* A retry after a signal left the timeouts shortened. */
	if (r == 0)
		r = rtplace_apply_timeout(fd, rp->timeout_ms);
	if (r < 0)
		goto fail;
	rp->fd = fd;
	/* The daemon may have been upgraded since the last connection. */
	rp->version = RTPLACE_PROTO_VERSION;
	return 0;
fail:
	close(fd);
	return r;
}

int rtplace_connect(const char *socket_path, struct rtplace **ret)
{
	struct rtplace *rp;
	int r;

	if (!ret)
		return -EINVAL;
	if (!socket_path)
		socket_path = secure_getenv(RTPLACE_SOCKET_ENV);
	if (!socket_path || !*socket_path)
		socket_path = RTPLACE_DEFAULT_SOCKET;
	if (strlen(socket_path) >= sizeof(rp->addr.sun_path))
		return -ENAMETOOLONG;
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	rp->fd = -1;
	rp->self_pidfd = -1;
	rp->next_id = 1;
	rp->timeout_ms = RTPLACE_TIMEOUT_DEFAULT_MS;
	rp->addr.sun_family = AF_UNIX;
	strcpy(rp->addr.sun_path, socket_path);
	r = pthread_mutex_init(&rp->lock, NULL);
	if (r) {
		free(rp);
		return -r;
	}
	r = rtplace_open(rp);
	if (r < 0) {
		rtplace_close(rp);
		return r;
	}
	*ret = rp;
	return 0;
}

void rtplace_close(struct rtplace *rp)
{
	if (!rp)
		return;
	if (rp->fd >= 0)
		close(rp->fd);
	if (rp->self_pidfd >= 0)
		close(rp->self_pidfd);
	local_close(rp->local);
	pthread_mutex_destroy(&rp->lock);
	free(rp);
}

int rtplace_set_timeout(struct rtplace *rp, unsigned timeout_ms)
{
	int r = 0;

	if (!rp || timeout_ms == 0)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	rp->timeout_ms = timeout_ms;
	if (rp->fd >= 0)
		r = rtplace_apply_timeout(rp->fd, timeout_ms);
	pthread_mutex_unlock(&rp->lock);
	return r;
}

static void rtplace_close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * Receives one packet into rp->rx (flags: recvmsg()'s), and the descriptors
 * it carries (close-on-exec) into fds. Returns its length, or -errno; -EPROTO when descriptors
 * were cut off (those that came are closed).
 */
static ssize_t rtplace_recv(struct rtplace *rp, int flags, int fds[RTPLACE_FDS_MAX], unsigned *ret_nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(RTPLACE_FDS_MAX * sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = rp->rx, .iov_len = sizeof(rp->rx) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	unsigned nfds = 0;
	ssize_t n;

	n = recvmsg(rp->fd, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t len;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		len = cm->cmsg_len - CMSG_LEN(0);
		for (size_t i = 0; i < len / sizeof(int) && nfds < RTPLACE_FDS_MAX; i++)
			memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	}
	if (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
		rtplace_close_fds(fds, nfds);
		return -EPROTO;
	}
	*ret_nfds = nfds;
	return n;
}

/*
 * An ERROR that answers no request (request id 0): the daemon refused the
 * connection, or the last message, and closes it after this.
 */
static bool rtplace_is_refusal(const struct proto_msg *m)
{
	return m->hdr.type == RTPLACE_MSG_ERROR && m->hdr.request_id == 0;
}

/*
 * After the connection failed with r (the daemon closed it): its
 * refusal, when one is waiting to be read, with its reason kept; else r.
 */
static int rtplace_take_refusal(struct rtplace *rp, int r)
{
	const struct proto_limits lim = {
		.ncpus = RTPLACE_MAX_CPUS,
		.nnodes = RTPLACE_MAX_CPUS,
		.accept = PROTO_ACCEPT_REPLIES,
	};
	ssize_t n = recv(rp->fd, rp->rx, sizeof(rp->rx), MSG_DONTWAIT);

	/* A daemon that closes with our request unread leaves a pending
	 * ECONNRESET, reported (and cleared) ahead of the queued packets. */
	if (n < 0 && errno == ECONNRESET)
		n = recv(rp->fd, rp->rx, sizeof(rp->rx), MSG_DONTWAIT);
	if (n > 0 && proto_decode(rp->rx, (size_t)n, &lim, &rp->reply, NULL) == 0 && rtplace_is_refusal(&rp->reply)) {
		memcpy(rp->reason.text, rp->reply.error.reason, sizeof(rp->reason.text));
		return rp->reply.hdr.status;
	}
	return r;
}

/*
 * Sends rp->req, with pidfd as SCM_RIGHTS when it is not -1. Returns the
 * bytes sent or -errno.
 */
static ssize_t rtplace_send(struct rtplace *rp, int pidfd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control = { 0 };
	struct iovec iov = { .iov_base = &rp->req, .iov_len = rp->req.hdr.length };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (pidfd >= 0) {
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pidfd, sizeof(int));
	}
	n = sendmsg(rp->fd, &mh, MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

/*
 * Sends rp->req (with pidfd, see rtplace_send()) and waits for the reply with its id: reply_type into
 * rp->reply, or the daemon's ERROR as its negative errno (also an ERROR
 * with request id 0, the daemon's refusal before it closes). Events and stale
 * replies (of a request that timed out earlier) are skipped. The reply
 * must carry exactly nfds descriptors, which go to fds; descriptors on any
 * other packet are closed. Lock held.
 */
static int rtplace_exchange(struct rtplace *rp, uint16_t reply_type, int pidfd, int *fds, unsigned nfds)
{
	const struct proto_limits lim = {
		.ncpus = RTPLACE_MAX_CPUS,
		.nnodes = RTPLACE_MAX_CPUS,
		.accept = PROTO_ACCEPT_REPLIES,
	};
	uint32_t id = rp->req.hdr.request_id;
	uint64_t deadline;
	int got[RTPLACE_FDS_MAX];
	unsigned ngot = 0;
	struct proto_error err;
	ssize_t n;
	int r;

	n = rtplace_send(rp, pidfd);
	if (n < 0) {
		r = n == -EAGAIN ? -ETIMEDOUT : (int)n;
		/* A daemon that refused the connection said why before closing. */
		return rtplace_is_disconnect(r) ? rtplace_take_refusal(rp, r) : r;
	}
	if ((size_t)n != rp->req.hdr.length)
		return -EPROTO;
	deadline = rtplace_now_ms() + rp->timeout_ms;
	for (bool first = true;; first = false) {
		rtplace_close_fds(got, ngot);
		ngot = 0;
		/* The first wait is the socket's own (SO_RCVTIMEO: no extra
		 * call when the reply comes first, as it mostly does); after
		 * an event, a stale reply or a signal, only what is left of
		 * the timeout, so that a daemon sending events but no reply
		 * cannot hold the caller. */
		if (!first) {
			r = rtplace_wait(rp->fd, POLLIN, deadline);
			if (r < 0)
				return r;
		}
		n = rtplace_recv(rp, first ? 0 : MSG_DONTWAIT, got, &ngot);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			if (rtplace_is_disconnect((int)n))
				return rtplace_take_refusal(rp, (int)n);
			return n == -EAGAIN ? -ETIMEDOUT : (int)n;
		}
		if (n == 0)
			return -ECONNRESET;
		r = proto_decode(rp->rx, (size_t)n, &lim, &rp->reply, &err);
		if (r == 0 && rtplace_is_refusal(&rp->reply)) {
			memcpy(rp->reason.text, rp->reply.error.reason, sizeof(rp->reason.text));
			r = rp->reply.hdr.status;
			break;
		}
		/* An event of a later protocol revision: skip it, as the
		 * protocol asks of clients. */
		if (r == -EOPNOTSUPP && err.request_id == 0 && (err.type & 0xff00) == 0x0300)
			continue;
		if (r < 0) {
			r = r == -EPROTONOSUPPORT ? r : -EPROTO;
			break;
		}
		if (rp->reply.hdr.request_id != id)
			continue;
		if (rp->reply.hdr.type == RTPLACE_MSG_ERROR) {
			memcpy(rp->reason.text, rp->reply.error.reason, sizeof(rp->reason.text));
			r = rp->reply.hdr.status;
		} else if (rp->reply.hdr.type != reply_type || ngot != nfds) {
			r = -EPROTO;
		} else {
			for (unsigned i = 0; i < nfds; i++)
				fds[i] = got[i];
			return 0;
		}
		break;
	}
	rtplace_close_fds(got, ngot);
	return r;
}

/* One request (with pidfd, or -1) and its reply (with nfds descriptors
 * into fds), reconnecting once if the daemon went away. */
static int rtplace_call_fds(struct rtplace *rp, uint16_t reply_type, int pidfd, int *fds, unsigned nfds)
{
	int r;

	rp->reason.text[0] = '\0';
	for (int attempt = 0;; attempt++) {
		if (rp->fd < 0) {
			r = rtplace_open(rp);
			if (r < 0)
				return r;
		}
		/* -ERANGE: a CPU past 1023 for a daemon older than version 3 */
		r = proto_msg_finish(&rp->req, rp->version);
		if (r == 0)
			r = rtplace_exchange(rp, reply_type, pidfd, fds, nfds);
		if (r == -EPROTONOSUPPORT && rp->version > RTPLACE_PROTO_VERSION_MIN) {
			/* A daemon older than this library: its replies, in version
			 * 1, say the same at greater length. */
			rp->version = RTPLACE_PROTO_VERSION_MIN;
			rp->reason.text[0] = '\0';
			r = proto_msg_finish(&rp->req, rp->version);
			if (r == 0)
				r = rtplace_exchange(rp, reply_type, pidfd, fds, nfds);
		}
		if (!rtplace_is_disconnect(r))
			return r;
		close(rp->fd);
		rp->fd = -1;
		if (attempt > 0)
			return r;
	}
}

static int rtplace_call(struct rtplace *rp, uint16_t reply_type)
{
	return rtplace_call_fds(rp, reply_type, -1, NULL, 0);
}

/* The process that thread tid belongs to, from the caller's /proc. */
static pid_t rtplace_tgid(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * A pidfd naming pid, sent with the request that names pid (DESIGN §15):
 * the daemon reads the pid a client writes in its own PID namespace
 * (a container's) only through it. With thread, pid is a tid, and a
 * thread other than its process's first has no pidfd of its own before
 * Linux 6.9 (pidfd_open() fails with EINVAL, or ENOENT on some kernels):
 * its process's pidfd names it then, and the daemon finds the thread
 * among that process's. *ret is -1 on a kernel without pidfds
 * (before 5.3), whose daemon takes bare pids from its own namespace. 0,
 * or -errno: -ESRCH when there is no such process.
 */
static int rtplace_pidfd_open(pid_t pid, bool thread, int *ret)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0 && (errno == EINVAL || errno == ENOENT) && thread) {
		pid_t tgid = rtplace_tgid(pid);

		if (tgid <= 0)
			return -ESRCH;
		fd = (int)syscall(SYS_pidfd_open, tgid, 0);
	}
	if (fd < 0 && errno != ENOSYS)
		return -errno;
	*ret = fd;
	return 0;
}

/*
 * Does a request naming a pid need a pidfd with it? Not from the initial
 * PID namespace: a daemon there reads the caller's numbers as they are,
 * and a daemon in any other namespace cannot see the caller's processes at
 * all, pidfd or not. Skipping it saves a move the descriptor's passing and
 * closing on both sides (bench/README.md, moves). Without a readable
 * /proc/self/ns/pid the caller may be anywhere, so pidfds go.
 */
static bool rtplace_needs_pidfds(struct rtplace *rp)
{
	pid_t self = getpid();
	struct stat st;

	if (rp->pidns_pid != self) {
		rp->initial_pidns = stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == RTPLACE_INITIAL_PIDNS_INO;
		rp->pidns_pid = self;
	}
	return !rp->initial_pidns;
}

/*
 * rtplace_pidfd_open() for a request on rp naming pid, with the handle's
 * kept pidfd when pid is the caller's process or (with thread) one of its
 * threads, which needs no /proc; -1 where none is needed
 * (rtplace_needs_pidfds()). *ret_close says whether *ret is the
 * caller's to close. On failure rp->reason says why, as the daemon would.
 * Lock held.
 */
static int rtplace_pidfd_for(struct rtplace *rp, pid_t pid, bool thread, int *ret, bool *ret_close)
{
	pid_t self = getpid();
	int r = 0;

	*ret_close = false;
	*ret = -1;
	if (!rtplace_needs_pidfds(rp))
		return 0;
	if (pid == self || (thread && syscall(SYS_tgkill, self, pid, 0) == 0)) {
		if (rp->self_pid != self || rp->self_pidfd < 0) {
			if (rp->self_pidfd >= 0)
				close(rp->self_pidfd);
			rp->self_pidfd = -1;
			r = rtplace_pidfd_open(self, false, &rp->self_pidfd);
			rp->self_pid = self;
		}
		*ret = rp->self_pidfd;
	} else {
		r = rtplace_pidfd_open(pid, thread, ret);
		*ret_close = r == 0;
	}
	if (r == -ESRCH)
		reason_set(&rp->reason, thread ? "thread %d does not exist" : "the owner process does not exist",
			 (int)pid);
	else if (r < 0)
		reason_set(&rp->reason, "cannot open a pidfd of %d: %s", (int)pid, strerror(-r));
	return r;
}

static uint32_t rtplace_next_id(struct rtplace *rp)
{
	uint32_t id = rp->next_id++;

	if (rp->next_id == 0)
		rp->next_id = 1;
	return id;
}

/*
 * The one conversion between glibc's CPU sets and the wire's, a word at a
 * time: glibc's cpu_set_t is an array of unsigned long whose bit i is CPU
 * i, which on a 64-bit little-endian machine (the only ones the wire's
 * host byte order serves with 64-bit words) is the wire's word layout. A
 * set of size bytes (CPU_ALLOC_SIZE()) may be shorter or longer than the
 * wire's: CPUs past RTPLACE_MAX_CPUS are -ERANGE.
 */
_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "cpu_set_t words are the wire's");

static int rtplace_mask_from_set(const cpu_set_t *set, size_t size, struct rtplace_cpumask *ret)
{
	size_t words = size / sizeof(uint64_t), tail = size % sizeof(uint64_t);
	uint64_t w;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < words; i++) {
		memcpy(&w, (const char *)set + i * sizeof(w), sizeof(w));
		if (i >= RTPLACE_CPUMASK_WORDS) {
			if (w)
				return -ERANGE;
			continue;
		}
		ret->bits[i] = w;
	}
	if (tail) {
		w = 0;
		memcpy(&w, (const char *)set + words * sizeof(w), tail);
		if (words >= RTPLACE_CPUMASK_WORDS && w)
			return -ERANGE;
		if (words < RTPLACE_CPUMASK_WORDS)
			ret->bits[words] = w;
	}
	return 0;
}

/* The CPUs of m that a cpu_set_t can hold (below CPU_SETSIZE). */
static void rtplace_mask_to_set(const struct rtplace_cpumask *m, cpu_set_t *ret)
{
	size_t words = sizeof(*ret) / sizeof(uint64_t);

	if (words > RTPLACE_CPUMASK_WORDS)
		words = RTPLACE_CPUMASK_WORDS;
	CPU_ZERO(ret);
	memcpy(ret, m->bits, words * sizeof(uint64_t));
}

static bool rtplace_is_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

static int rtplace_build_query(const struct rtplace_request *req, struct rtplace_query *ret)
{
	int policy = req->policy ? req->policy : SCHED_FIFO;
	int r;

	if ((policy != SCHED_FIFO && policy != SCHED_RR) || !rtplace_is_zero(req->reserved, sizeof(req->reserved)) ||
	    (req->allowed && req->allowed_size == 0))
		return -EINVAL;
	if (req->prio < RTPLACE_PRIO_MIN || req->prio > RTPLACE_PRIO_MAX || req->count > RTPLACE_ANSWER_MAX)
		return -ERANGE;
	memset(ret, 0, sizeof(*ret));
	ret->prio = (uint8_t)req->prio;
	ret->policy = (uint8_t)policy;
	ret->count = (uint16_t)(req->count ? req->count : 1);
	ret->flags = req->flags;
	ret->node = req->node;
	ret->near_cpu = req->near_cpu;
	if (req->flags & RTPLACE_QUERY_F_CLAIM) {
		ret->lease_ms = req->lease_ms;
		ret->owner_pid = req->owner_pid;
	}
	if (req->allowed) {
		r = rtplace_mask_from_set(req->allowed, req->allowed_size, &ret->allowed);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Entries of cpus[] and levels[] past count are left as they were: a
 * local answer costs what its CPUs do, not RTPLACE_ANSWER_MAX. */
static void rtplace_answer_from(const struct rtplace_query_reply *qr, struct rtplace_answer *ret)
{
	ret->claim_id = qr->claim_id;
	ret->lease_ms = qr->lease_ms;
	ret->count = qr->count;
	ret->level = qr->level;
	CPU_ZERO(&ret->set);
	for (unsigned i = 0; i < qr->count; i++) {
		ret->cpus[i] = qr->list[i].cpu;
		ret->levels[i] = qr->list[i].level;
		if (qr->list[i].cpu < CPU_SETSIZE)
			CPU_SET(qr->list[i].cpu, &ret->set);
	}
	/* A reply's reason is zero after its NUL (decoded, or so kept by local
	 * reads): one short copy of fixed size holds the usual one whole. */
	memcpy(ret->reason, qr->reason, RTPLACE_REASON_SHORT);
	if (ret->reason[RTPLACE_REASON_SHORT - 1])
		memcpy(ret->reason + RTPLACE_REASON_SHORT, qr->reason + RTPLACE_REASON_SHORT,
		       sizeof(ret->reason) - RTPLACE_REASON_SHORT);
}

int rtplace_local_open(struct rtplace *rp)
{
	struct rtplace_local *l = NULL;
	int fds[2] = { -1, -1 };
	int r;

	if (!rp)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	if (rp->local) {
		pthread_mutex_unlock(&rp->lock);
		return 0;
	}
	r = proto_encode_local(&rp->req, rtplace_next_id(rp));
	if (r == 0)
		r = rtplace_call_fds(rp, RTPLACE_MSG_LOCAL_REPLY, -1, fds, 2);
	if (r == 0)
		r = local_open(&rp->reply.local_reply, fds[0], fds[1], &l);
	if (r == 0)
		rp->local = l;
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_query(struct rtplace *rp, const struct rtplace_request *req, struct rtplace_answer *ret)
{
	const struct rtplace_query_reply *qr;
	struct rtplace_local *local;
	struct rtplace_query q;
	bool close_pidfd = false;
	int pidfd = -1, r;

	if (!rp || !req || !ret)
		return -EINVAL;
	qr = &rp->reply.query_reply;
	local = rp->local;
	/* The common case without a request to build: rtplace_build_query()'s
	 * checks, then the answer. */
	if (local && !req->allowed && !(req->flags & (RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE)) &&
	    (req->policy == 0 || req->policy == SCHED_FIFO || req->policy == SCHED_RR) &&
	    rtplace_is_zero(req->reserved, sizeof(req->reserved)) && req->prio >= RTPLACE_PRIO_MIN &&
	    req->prio <= RTPLACE_PRIO_MAX && req->count <= RTPLACE_ANSWER_MAX) {
		const struct rtplace_query_reply *lr;

		if (local_query_any(local, req->prio, req->count ? req->count : 1, req->flags, req->node,
				    req->near_cpu, &lr) == 0) {
			rtplace_answer_from(lr, ret);
			return 0;
		}
	}
	r = rtplace_build_query(req, &q);
	if (r < 0)
		return r;
	/* Local reads: no lock, no syscall; a claim, or a snapshot being
	 * published at every try, goes to the daemon. */
	if (local && !(q.flags & (RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE))) {
		const struct rtplace_query_reply *lr;

		if (local_query(local, &q, &lr) == 0) {
			rtplace_answer_from(lr, ret);
			return 0;
		}
	}
	pthread_mutex_lock(&rp->lock);
	r = q.owner_pid ? rtplace_pidfd_for(rp, q.owner_pid, false, &pidfd, &close_pidfd) : 0;
	if (r == 0)
		r = proto_encode_query(&rp->req, rtplace_next_id(rp), &q);
	if (r == 0)
		r = rtplace_call_fds(rp, RTPLACE_MSG_QUERY_REPLY, pidfd, NULL, 0);
	if (r == 0)
		rtplace_answer_from(qr, ret);
	if (close_pidfd)
		close(pidfd);
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_release(struct rtplace *rp, uint64_t claim_id, unsigned *ret_ncpus)
{
	const struct rtplace_release rel = { .claim_id = claim_id };
	int r;

	if (!rp || claim_id == 0)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_release(&rp->req, rtplace_next_id(rp), &rel);
	if (r == 0)
		r = rtplace_call(rp, RTPLACE_MSG_RELEASE_REPLY);
	if (r == 0 && ret_ncpus)
		*ret_ncpus = rp->reply.release_reply.ncpus;
	pthread_mutex_unlock(&rp->lock);
	return r;
}

static void rtplace_cpu_from_wire(const struct rtplace_cpu_info *ci, bool have_package, struct rtplace_cpu *ret)
{
	*ret = (struct rtplace_cpu){
		.package = have_package ? ci->package : -1,
		.cpu = ci->cpu,
		.level = ci->level,
		.flags = ci->flags,
		.node = ci->node,
		.llc = ci->llc,
		.core = ci->core,
		.kind = ci->kind,
		.pid = ci->pid,
		.rt_queued = ci->rt_queued,
		.claim_id = ci->claim_id,
		.claim_level = ci->claim_level,
		.irq_share = ci->irq_share,
		.softirq_share = ci->softirq_share,
	};
	memcpy(ret->comm, ci->comm, sizeof(ret->comm));
}

/* Copies the entries of the page in reply (CPU ids first..first+count-1)
 * into out, an array of a whole snapshot; flags are the request's. */
typedef void rtplace_page_copy_fn(const struct proto_msg *reply, uint32_t flags, void *out, uint32_t first,
				  uint32_t count);

static void rtplace_cpus_copy(const struct proto_msg *reply, uint32_t flags, void *out, uint32_t first,
			      uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		rtplace_cpu_from_wire(&reply->cpus_reply.cpus[i], flags & RTPLACE_CPUS_F_PACKAGE,
				      (struct rtplace_cpu *)out + first + i);
}

static void rtplace_cpu_times_copy(const struct proto_msg *reply, uint32_t flags, void *out, uint32_t first,
				   uint32_t count)
{
	const struct rtplace_cpu_times_reply *tr = &reply->cpu_times_reply;

	(void)flags;
	for (uint32_t i = 0; i < count; i++) {
		struct rtplace_cpu_time *t = (struct rtplace_cpu_time *)out + first + i;

		t->cpu = (int)(first + i);
		t->sampled_ns = tr->sampled_ns;
		memcpy(t->ns, tr->cpus[i].ns, sizeof(t->ns));
	}
}

/*
 * Walks the pages of a per-CPU request (CPUS or CPU_TIMES, whose replies
 * start with total, first and count alike) into an array of elem-byte
 * entries; the daemon's total must not change between pages, nor a page
 * come back for another CPU range. Lock held.
 */
static int rtplace_pages_locked(struct rtplace *rp, uint16_t type, uint32_t flags, size_t elem,
				rtplace_page_copy_fn *copy, void **ret, size_t *ret_n)
{
	const struct rtplace_cpus_reply *pg = &rp->reply.cpus_reply;
	void *out = NULL;
	uint32_t first = 0, total = 0;
	int r;

	_Static_assert(offsetof(struct rtplace_cpus_reply, count) == offsetof(struct rtplace_cpu_times_reply, count) &&
			       offsetof(struct rtplace_cpus_reply, total) ==
				       offsetof(struct rtplace_cpu_times_reply, total) &&
			       offsetof(struct rtplace_cpus_reply, first) ==
				       offsetof(struct rtplace_cpu_times_reply, first),
		       "both replies page alike");
	do {
		const struct rtplace_cpus page = { .first = first, .flags = flags };

		r = proto_encode(&rp->req, type, rtplace_next_id(rp), 0, &page, NULL);
		if (r == 0)
			r = rtplace_call(rp, proto_reply_type(type));
		if (r < 0)
			goto fail;
		if (!out) {
			total = pg->total;
			if (total == 0 || total > RTPLACE_MAX_CPUS) {
				r = -EPROTO;
				goto fail;
			}
			out = calloc(total, elem);
			if (!out) {
				r = -ENOMEM;
				goto fail;
			}
		}
		if (pg->total != total || pg->first != first || pg->count == 0 || pg->count > total - first) {
			r = -EPROTO;
			goto fail;
		}
		copy(&rp->reply, flags, out, first, pg->count);
		first += pg->count;
	} while (first < total);
	*ret = out;
	*ret_n = total;
	return 0;
fail:
	free(out);
	return r;
}

int rtplace_cpus(struct rtplace *rp, struct rtplace_cpu **ret_cpus, size_t *ret_n)
{
	/* A daemon older than a flag refuses it: ask as it expects. */
	static const uint32_t tries[] = { RTPLACE_CPUS_F_PACKAGE | RTPLACE_CPUS_F_HOST, RTPLACE_CPUS_F_PACKAGE, 0 };
	void *cpus;
	int r = -EINVAL;

	if (!rp || !ret_cpus || !ret_n)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]) && r == -EINVAL; i++)
		r = rtplace_pages_locked(rp, RTPLACE_MSG_CPUS, tries[i], sizeof(struct rtplace_cpu), rtplace_cpus_copy,
					 &cpus, ret_n);
	pthread_mutex_unlock(&rp->lock);
	if (r == 0)
		*ret_cpus = cpus;
	return r;
}

int rtplace_cpu_times(struct rtplace *rp, struct rtplace_cpu_time **ret_times, size_t *ret_n)
{
	void *times;
	int r;

	if (!rp || !ret_times || !ret_n)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	r = rtplace_pages_locked(rp, RTPLACE_MSG_CPU_TIMES, 0, sizeof(struct rtplace_cpu_time),
				 rtplace_cpu_times_copy, &times, ret_n);
	pthread_mutex_unlock(&rp->lock);
	if (r == 0)
		*ret_times = times;
	return r;
}

void rtplace_cpu_times_free(struct rtplace_cpu_time *times)
{
	free(times);
}

/* No daemon holds more claims than its table: a reply walking past this
 * is a bug of the daemon, not a list to grow for. */
#define RTPLACE_CLAIMS_WALK_MAX (1u << 20)

static void rtplace_claim_copy(const struct rtplace_claim_reply *cr, struct rtplace_claim *ret)
{
	*ret = (struct rtplace_claim){
		.id = cr->claim_id,
		.level = cr->level,
		.flags = cr->flags,
		.lease_left_ms = cr->lease_left_ms,
		.owner_pid = cr->owner_pid,
		.owner_uid = cr->owner_uid,
		.ncpus = cpuset_count(&cr->cpus),
	};
	memcpy(ret->owner_comm, cr->owner_comm, sizeof(ret->owner_comm));
	rtplace_mask_to_set(&cr->cpus, &ret->cpus);
}

/* One CLAIM round trip, rp's lock held: the reply (rp->reply.claim_reply)
 * is the claim with the lowest id at or above from, or id 0 for none. */
static int rtplace_claim_from_locked(struct rtplace *rp, uint64_t from)
{
	const struct rtplace_claim_req q = { .from_id = from };
	int r = proto_encode_claim(&rp->req, rtplace_next_id(rp), &q);

	return r < 0 ? r : rtplace_call(rp, RTPLACE_MSG_CLAIM_REPLY);
}

/* Claim id itself, or -ENOENT when the next one up is another. */
int rtplace_claim(struct rtplace *rp, uint64_t id, struct rtplace_claim *ret)
{
	int r;

	if (!rp || !ret || !id)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	r = rtplace_claim_from_locked(rp, id);
	if (r == 0 && rp->reply.claim_reply.claim_id != id)
		r = -ENOENT;
	if (r == 0)
		rtplace_claim_copy(&rp->reply.claim_reply, ret);
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_claims(struct rtplace *rp, struct rtplace_claim **ret_claims, size_t *ret_n)
{
	const struct rtplace_claim_reply *cr;
	struct rtplace_claim *claims = NULL, *more;
	size_t n = 0, cap = 0;
	uint64_t from = 0;
	int r = 0;

	if (!rp || !ret_claims || !ret_n)
		return -EINVAL;
	cr = &rp->reply.claim_reply;
	pthread_mutex_lock(&rp->lock);
	for (;;) {
		r = rtplace_claim_from_locked(rp, from);
		if (r < 0 || !cr->claim_id)
			break;
		if (cr->claim_id < from || n >= RTPLACE_CLAIMS_WALK_MAX) {
			r = -EPROTO;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			more = realloc(claims, cap * sizeof(*claims));
			if (!more) {
				r = -ENOMEM;
				break;
			}
			claims = more;
		}
		rtplace_claim_copy(cr, &claims[n]);
		n++;
		if (cr->claim_id == UINT64_MAX)
			break;
		from = cr->claim_id + 1;
	}
	pthread_mutex_unlock(&rp->lock);
	if (r < 0) {
		free(claims);
		return r;
	}
	*ret_claims = claims;
	*ret_n = n;
	return 0;
}

void rtplace_claims_free(struct rtplace_claim *claims)
{
	free(claims);
}

/* Pages a changing machine may make disagree before rtplace_explain()
 * gives up. */
#define RTPLACE_EXPLAIN_TRIES 4

/* Page pg into e (its first page when e->cpus is NULL): whether it is of
 * the same answer as the pages before. -ENOMEM, -EPROTO for a page that
 * is no continuation. */
static int rtplace_explain_page(const struct rtplace_explain_reply *pg, uint32_t first, struct rtplace_explanation *e)
{
	if (!e->cpus) {
		if (pg->total == 0 || pg->total > RTPLACE_MAX_CPUS)
			return -EPROTO;
		e->cpus = calloc(pg->total, sizeof(*e->cpus));
		if (!e->cpus)
			return -ENOMEM;
		e->ncpus = pg->total;
		e->result = pg->result;
		e->nchosen = pg->nchosen;
		e->level = pg->level;
		e->claim_level = pg->claim_level;
		e->nobstacles = pg->nobstacles;
		memcpy(e->obstacles, pg->obstacles, sizeof(e->obstacles));
		memcpy(e->detail, pg->detail, sizeof(e->detail));
	}
	if (pg->total != e->ncpus || pg->first != first || pg->count == 0 || pg->count > e->ncpus - first)
		return -EPROTO;
	if (pg->result != e->result || pg->nchosen != e->nchosen || pg->level != e->level)
		return -EAGAIN;
	memcpy(&e->cpus[first], pg->cpus, pg->count * sizeof(pg->cpus[0]));
	return 0;
}

/* e's chosen list from its CPUs' ranks: -EAGAIN unless every rank of
 * the answer is there once (pages of different answers). */
static int rtplace_explain_chosen(struct rtplace_explanation *e)
{
	unsigned seen = 0;

	for (size_t c = 0; c < e->ncpus; c++) {
		unsigned rank = e->cpus[c].rank;

		if (e->cpus[c].verdict != RTPLACE_EXPLAIN_CHOSEN)
			continue;
		if (rank == 0 || rank > e->nchosen || seen == e->nchosen)
			return -EAGAIN;
		e->chosen[rank - 1] = (int)c;
		seen++;
	}
	return seen == e->nchosen ? 0 : -EAGAIN;
}

/* One walk of the pages, rp's lock held. */
static int rtplace_explain_locked(struct rtplace *rp, struct rtplace_explain *x, int pidfd,
				  struct rtplace_explanation *e)
{
	int r = 0;

	free(e->cpus);
	memset(e, 0, sizeof(*e));
	x->first = 0;
	do {
		r = proto_encode_explain(&rp->req, rtplace_next_id(rp), x);
		if (r == 0)
			r = rtplace_call_fds(rp, RTPLACE_MSG_EXPLAIN_REPLY, pidfd, NULL, 0);
		if (r == 0)
			r = rtplace_explain_page(&rp->reply.explain_reply, x->first, e);
		if (r == 0)
			x->first += rp->reply.explain_reply.count;
	} while (r == 0 && x->first < e->ncpus);
	return r < 0 ? r : rtplace_explain_chosen(e);
}

int rtplace_explain(struct rtplace *rp, const struct rtplace_request *req, struct rtplace_explanation **ret)
{
	struct rtplace_explanation *e;
	struct rtplace_explain x = { 0 };
	bool close_pidfd = false;
	int pidfd = -1, tries = 0, r;

	if (!rp || !req || !ret)
		return -EINVAL;
	r = rtplace_build_query(req, &x.query);
	if (r < 0)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_lock(&rp->lock);
	r = x.query.owner_pid ? rtplace_pidfd_for(rp, x.query.owner_pid, false, &pidfd, &close_pidfd) : 0;
	if (r == 0)
		do
			r = rtplace_explain_locked(rp, &x, pidfd, e);
		while (r == -EAGAIN && ++tries < RTPLACE_EXPLAIN_TRIES);
	if (close_pidfd)
		close(pidfd);
	pthread_mutex_unlock(&rp->lock);
	if (r < 0) {
		rtplace_explanation_free(e);
		return r;
	}
	*ret = e;
	return 0;
}

void rtplace_explanation_free(struct rtplace_explanation *e)
{
	if (!e)
		return;
	free(e->cpus);
	free(e);
}

const char *rtplace_class_name(unsigned cls)
{
	static const char *const names[RTPLACE_CLASS_COUNT] = {
		[RTPLACE_CLASS_IDLE] = "idle",
		[RTPLACE_CLASS_NORMAL] = "normal",
		[RTPLACE_CLASS_RT] = "rt",
		[RTPLACE_CLASS_DL] = "dl",
	};

	return cls < RTPLACE_CLASS_COUNT ? names[cls] : "?";
}

void rtplace_cpus_free(struct rtplace_cpu *cpus)
{
	free(cpus);
}

int rtplace_status(struct rtplace *rp, struct rtplace_status *ret)
{
	const struct rtplace_status_reply *sr;
	int r;

	if (!rp || !ret)
		return -EINVAL;
	sr = &rp->reply.status_reply;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_status(&rp->req, rtplace_next_id(rp));
	if (r == 0)
		r = rtplace_call(rp, RTPLACE_MSG_STATUS_REPLY);
	if (r == 0) {
		*ret = (struct rtplace_status){
			.uptime_ms = sr->uptime_ms,
			.ncpus = sr->ncpus,
			.nonline = sr->nonline,
			.nnodes = sr->nnodes,
			.nllcs = sr->nllcs,
			.ncores = sr->ncores,
			.flags = sr->flags,
			.queries = sr->queries,
			.errors = sr->errors,
			.claims_active = sr->claims_active,
			.claims_total = sr->claims_total,
			.clients = sr->clients,
			.clients_dropped = sr->clients_dropped,
			.moves = sr->moves,
		};
		memcpy(ret->version, sr->version, sizeof(ret->version));
	}
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_host(struct rtplace *rp, struct rtplace_host *ret)
{
	const struct rtplace_host_reply *h;
	int r;

	if (!rp || !ret)
		return -EINVAL;
	h = &rp->reply.host_reply;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_host(&rp->req, rtplace_next_id(rp));
	if (r == 0)
		r = rtplace_call(rp, RTPLACE_MSG_HOST_REPLY);
	if (r == 0)
		*ret = (struct rtplace_host){
			.rt_known = !!(h->flags & RTPLACE_HOST_F_RT_KNOWN),
			.rt_runtime_us = h->rt_runtime_us,
			.rt_period_us = h->rt_period_us,
		};
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_kernel(struct rtplace *rp, struct rtplace_kernel_reply *ret)
{
	int r;

	if (!rp || !ret)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_kernel(&rp->req, rtplace_next_id(rp));
	if (r == 0)
		r = rtplace_call(rp, RTPLACE_MSG_KERNEL_REPLY);
	if (r == 0)
		*ret = rp->reply.kernel_reply;
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_reload(struct rtplace *rp)
{
	int r;

	if (!rp)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_reload(&rp->req, rtplace_next_id(rp));
	if (r == 0)
		r = rtplace_call(rp, RTPLACE_MSG_RELOAD_REPLY);
	pthread_mutex_unlock(&rp->lock);
	return r;
}

int rtplace_tracking(struct rtplace *rp, struct rtplace_tracking *ret)
{
	const struct rtplace_tracking_reply *tr;
	int r;

	if (!rp || !ret)
		return -EINVAL;
	tr = &rp->reply.tracking_reply;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_tracking(&rp->req, rtplace_next_id(rp));
	if (r == 0)
		r = rtplace_call(rp, RTPLACE_MSG_TRACKING_REPLY);
	if (r == 0) {
		*ret = (struct rtplace_tracking){
			.mode = tr->mode,
			.interval_ms = tr->interval_ms,
			.samples = tr->samples,
			.failures = tr->failures,
			.cpu_ns = tr->cpu_ns,
		};
		memcpy(ret->why, tr->why, sizeof(ret->why));
	}
	pthread_mutex_unlock(&rp->lock);
	return r;
}

/* The wire's policy as a Linux policy: OTHER stands for every non-RT one. */
static int rtplace_policy_from_wire(uint8_t policy)
{
	return policy == RTPLACE_POLICY_FIFO ? SCHED_FIFO : policy == RTPLACE_POLICY_RR ? SCHED_RR : SCHED_OTHER;
}

int rtplace_move(struct rtplace *rp, const struct rtplace_move_request *req,
				struct rtplace_move_result *ret)
{
	const struct rtplace_move_reply *mr;
	struct rtplace_move mv;
	bool close_pidfd = false;
	int pidfd = -1, r;

	if (!rp || !req || req->tid <= 0)
		return -EINVAL;
	mr = &rp->reply.move_reply;
	mv = (struct rtplace_move){ .tid = req->tid, .flags = req->flags };
	if (req->flags & RTPLACE_MOVE_F_SET_SCHED) {
		if (req->policy != SCHED_FIFO && req->policy != SCHED_RR)
			return -EINVAL;
		if (req->prio < RTPLACE_PRIO_MIN || req->prio > RTPLACE_PRIO_MAX)
			return -ERANGE;
		mv.policy = (uint8_t)req->policy;
		mv.prio = (uint8_t)req->prio;
	}
	if (req->flags & RTPLACE_MOVE_F_SET_AFFINITY) {
		r = rtplace_mask_from_set(&req->cpus, sizeof(req->cpus), &mv.cpus);
		if (r < 0)
			return r;
	}
	pthread_mutex_lock(&rp->lock);
	r = rtplace_pidfd_for(rp, req->tid, true, &pidfd, &close_pidfd);
	if (r == 0)
		r = proto_encode_move(&rp->req, rtplace_next_id(rp), &mv);
	if (r == 0)
		r = rtplace_call_fds(rp, RTPLACE_MSG_MOVE_REPLY, pidfd, NULL, 0);
	if (r == 0 && ret) {
		ret->tid = mr->tid;
		ret->policy = rtplace_policy_from_wire(mr->policy);
		ret->prio = mr->prio;
		ret->prev_policy = rtplace_policy_from_wire(mr->prev_policy);
		ret->prev_prio = mr->prev_prio;
		rtplace_mask_to_set(&mr->cpus, &ret->cpus);
		rtplace_mask_to_set(&mr->prev_cpus, &ret->prev_cpus);
	}
	if (close_pidfd)
		close(pidfd);
	pthread_mutex_unlock(&rp->lock);
	return r;
}

/*
 * A subscription. The ring is the daemon's memfd mapped read-write (the
 * consumer publishes its tail there); ring.h does the lock-free reading
 * and its memory ordering. conn is a duplicate of the handle's socket: the
 * daemon keeps the subscription as long as the connection lives, and the
 * connection lives as long as either descriptor, so the subscription does
 * not depend on what the caller does with the handle. epfd watches the
 * doorbell (readable while it is non-zero) and the connection's hang-up
 * (RDHUP only: replies and events on the handle's requests must not wake
 * the subscriber).
 */
struct rtplace_sub {
	struct ring ring;
	void *mem;
	size_t len;
	int doorbell;
	int conn;
	int epfd;
};

void rtplace_sub_free(struct rtplace_sub *s)
{
	if (!s)
		return;
	if (s->mem)
		munmap(s->mem, s->len);
	if (s->doorbell >= 0)
		close(s->doorbell);
	if (s->conn >= 0)
		close(s->conn);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}

/* Maps the ring of a SUBSCRIBE reply; trusts nothing the daemon said that
 * it can check, since a mapping past the end of the file would SIGBUS. */
static int rtplace_sub_map(struct rtplace_sub *s, const struct rtplace_subscribe_reply *sr, int memfd)
{
	struct stat st;

	if (sr->record_size != sizeof(struct rtplace_record) || sr->ring_records > RTPLACE_RING_MAX_RECORDS ||
	    sr->ring_bytes != RTPLACE_RING_BYTES(sr->ring_records))
		return -EPROTO;
	if (fstat(memfd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sr->ring_bytes)
		return -EPROTO;
	s->len = (size_t)sr->ring_bytes;
	s->mem = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		return -errno;
	}
	return ring_attach(s->mem, s->len, &s->ring);
}

static int rtplace_sub_watch(struct rtplace_sub *s)
{
	struct epoll_event bell = { .events = EPOLLIN, .data.fd = s->doorbell };
	struct epoll_event hup = { .events = EPOLLRDHUP, .data.fd = s->conn };

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->doorbell, &bell) < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->conn, &hup) < 0)
		return -errno;
	return 0;
}

int rtplace_subscribe(struct rtplace *rp, struct rtplace_sub **ret)
{
	const struct rtplace_subscribe body = { 0 };
	struct rtplace_sub *s;
	int fds[2] = { -1, -1 };
	int r;

	if (!rp || !ret)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->doorbell = s->conn = s->epfd = -1;
	pthread_mutex_lock(&rp->lock);
	r = proto_encode_subscribe(&rp->req, rtplace_next_id(rp), &body);
	if (r == 0)
		r = rtplace_call_fds(rp, RTPLACE_MSG_SUBSCRIBE_REPLY, -1, fds, 2);
	if (r == 0) {
		s->doorbell = fds[1];
		r = rtplace_sub_map(s, &rp->reply.subscribe_reply, fds[0]);
		close(fds[0]);
	}
	if (r == 0) {
		s->conn = fcntl(rp->fd, F_DUPFD_CLOEXEC, 0);
		if (s->conn < 0)
			r = -errno;
	}
	pthread_mutex_unlock(&rp->lock);
	if (r == 0)
		r = rtplace_sub_watch(s);
	if (r < 0) {
		rtplace_sub_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

int rtplace_sub_fd(const struct rtplace_sub *s)
{
	return s ? s->epfd : -EINVAL;
}

unsigned rtplace_sub_capacity(const struct rtplace_sub *s)
{
	return s ? (unsigned)(s->ring.mask + 1) : 0;
}

static void rtplace_notification_from_record(const struct rtplace_record *rec, struct rtplace_notification *ret)
{
	*ret = (struct rtplace_notification){
		.seq = rec->seq,
		.time_ns = rec->time_ns,
		.type = rec->type,
		.tid = rec->tid,
		.uid = rec->uid,
		.from_cpu = rec->from_cpu,
		.prio = rec->prio,
	};
	if (rec->type == RTPLACE_RECORD_ISOLATED || rec->type == RTPLACE_RECORD_ISOLATION_RELEASED) {
		/* Their prio byte is the detail (record.h). */
		ret->detail = rec->prio;
		ret->prio = 0;
	}
	if (rtplace_record_is_claim(rec->type)) {
		ret->claim_id = rec->claim_id;
		ret->to_cpu = -1;
		ret->policy = SCHED_OTHER;
	} else {
		ret->to_cpu = rec->to_cpu;
		ret->policy = rtplace_policy_from_wire(rec->policy);
	}
}

/* Has the daemon closed the subscription's connection? */
static bool rtplace_sub_hung_up(const struct rtplace_sub *s)
{
	struct pollfd p = { .fd = s->conn, .events = POLLRDHUP };

	return poll(&p, 1, 0) == 1 && p.revents & (POLLRDHUP | POLLHUP | POLLERR);
}

int rtplace_sub_read(struct rtplace_sub *s, struct rtplace_notification *recs, size_t max, size_t *ret_n,
		     uint64_t *ret_lost)
{
	uint64_t lost = 0, bell;
	size_t n = 0;
	int r = 0;

	if (!s || !recs || max == 0 || !ret_n)
		return -EINVAL;
	/* Clear first, then drain: a ring during the drain stays set, and at
	 * worst wakes the caller to an empty ring. */
	if (read(s->doorbell, &bell, sizeof(bell)) < 0 && errno != EAGAIN)
		return -errno;
	while (n < max) {
		struct rtplace_record rec;
		uint64_t l = 0;

		r = ring_pop(&s->ring, &rec, &l);
		lost += l;
		if (r <= 0)
			break;
		rtplace_notification_from_record(&rec, &recs[n++]);
	}
	if (r < 0)
		return r;
	if (n == max && __atomic_load_n(&s->ring.hdr->head, __ATOMIC_ACQUIRE) != s->ring.index) {
		/* Records remain and the daemon will not ring for them (the
		 * ring never went empty): ring for ourselves. An eventfd
		 * write fails only when the counter is full, readable anyway. */
		ssize_t rung;

		bell = 1;
		rung = write(s->doorbell, &bell, sizeof(bell));
		(void)rung;
	}
	if (n == 0 && lost == 0 && rtplace_sub_hung_up(s))
		return -ECONNRESET;
	*ret_n = n;
	if (ret_lost)
		*ret_lost = lost;
	return 0;
}

const char *rtplace_notification_name(unsigned type)
{
	switch (type) {
	case RTPLACE_NOTIFY_MOVED:
		return "moved";
	case RTPLACE_NOTIFY_CLAIM_EXPIRED:
		return "claim-expired";
	case RTPLACE_NOTIFY_COLLISION:
		return "collision";
	case RTPLACE_NOTIFY_THREAD_EXITED:
		return "thread-exited";
	case RTPLACE_NOTIFY_CLAIM_REVOKED:
		return "claim-revoked";
	case RTPLACE_NOTIFY_WATCHDOG:
		return "watchdog";
	case RTPLACE_NOTIFY_CLAIM_CREATED:
		return "claim-created";
	case RTPLACE_NOTIFY_CLAIM_RELEASED:
		return "claim-released";
	case RTPLACE_NOTIFY_ISOLATED:
		return "isolated";
	case RTPLACE_NOTIFY_ISOLATION_RELEASED:
		return "released";
	default:
		return "?";
	}
}

int rtplace_place_self(struct rtplace *rp, const struct rtplace_request *req, unsigned flags,
				      struct rtplace_answer *ret)
{
	struct rtplace_request q;
	struct rtplace_answer a;
	struct sched_param param = { 0 };
	/* Affinities as wide as the CPUs rtplace names, passed to the kernel
	 * at their own size: a cpu_set_t holds 1,024 CPUs, and the kernel
	 * refuses to read an affinity into a set shorter than its CPU ids. */
	struct rtplace_cpumask old, pin;
	int r;

	if (!rp || !req || (flags & ~RTPLACE_PLACE_F_SCHED))
		return -EINVAL;
	if (sched_getaffinity(0, sizeof(old), (cpu_set_t *)(void *)&old) < 0)
		return -errno;
	q = *req;
	q.flags |= RTPLACE_QUERY_F_CLAIM;
	if (!q.allowed) {
		q.allowed = (const cpu_set_t *)(const void *)&old;
		q.allowed_size = sizeof(old);
	}
	r = rtplace_query(rp, &q, &a);
	if (r < 0)
		return r;
	if (a.count == 0)
		return -EBUSY;
	cpuset_zero(&pin);
	for (unsigned i = 0; i < a.count; i++)
		cpuset_set(&pin, (unsigned)a.cpus[i]);
	if (sched_setaffinity(0, sizeof(pin), (const cpu_set_t *)(const void *)&pin) < 0) {
		r = -errno;
		goto release;
	}
	if (flags & RTPLACE_PLACE_F_SCHED) {
		param.sched_priority = req->prio;
		if (sched_setscheduler(0, req->policy ? req->policy : SCHED_FIFO, &param) < 0) {
			r = -errno;
			sched_setaffinity(0, sizeof(old), (const cpu_set_t *)(const void *)&old);
			goto release;
		}
	}
	if (ret)
		*ret = a;
	return 0;
release:
	rtplace_release(rp, a.claim_id, NULL);
	return r;
}

int rtplace_last_reason(struct rtplace *rp, char *buf, size_t len)
{
	int r = -ENOENT;

	if (!rp || !buf || len == 0)
		return -EINVAL;
	pthread_mutex_lock(&rp->lock);
	if (rp->reason.text[0]) {
		snprintf(buf, len, "%s", rp->reason.text);
		r = 0;
	}
	pthread_mutex_unlock(&rp->lock);
	return r;
}

static pthread_once_t rtplace_names_once = PTHREAD_ONCE_INIT;
static char rtplace_names[LEVEL_COUNT][LEVEL_NAME_MAX];

static void rtplace_names_init(void)
{
	for (uint32_t l = 0; l < LEVEL_COUNT; l++)
		level_name(l, rtplace_names[l]);
}

const char *rtplace_level_name(unsigned level)
{
	if (level >= LEVEL_COUNT)
		return "?";
	pthread_once(&rtplace_names_once, rtplace_names_init);
	return rtplace_names[level];
}

/*
 * The ABI of 0.1.0 (version node LIBRTPLACE_1), whose struct rtplace_answer
 * ended in a reason of 64 bytes: programs built against it keep calling
 * these, which fill that layout (the reason cut to fit); programs built
 * now bind rtplace_query and rtplace_place_self of LIBRTPLACE_2.
 */
#define RTPLACE_REASON_LEN_0_1 64

static void rtplace_answer_0_1(const struct rtplace_answer *a, void *ret)
{
	char *reason = (char *)ret + offsetof(struct rtplace_answer, reason);
	size_t n = strnlen(a->reason, RTPLACE_REASON_LEN_0_1 - 1);

	memcpy(ret, a, offsetof(struct rtplace_answer, reason));
	memcpy(reason, a->reason, n);
	memset(reason + n, 0, RTPLACE_REASON_LEN_0_1 - n);
}

int librtplace_query_0_1(struct rtplace *rp, const struct rtplace_request *req, void *ret);
int librtplace_query_0_1(struct rtplace *rp, const struct rtplace_request *req, void *ret)
{
	struct rtplace_answer a;
	int r;

	if (!ret)
		return rtplace_query(rp, req, NULL);
	r = rtplace_query(rp, req, &a);
	if (r == 0)
		rtplace_answer_0_1(&a, ret);
	return r;
}
__asm__(".symver librtplace_query_0_1, rtplace_query@LIBRTPLACE_1");

int librtplace_place_self_0_1(struct rtplace *rp, const struct rtplace_request *req, unsigned flags, void *ret);
int librtplace_place_self_0_1(struct rtplace *rp, const struct rtplace_request *req, unsigned flags, void *ret)
{
	struct rtplace_answer a;
	int r;

	if (!ret)
		return rtplace_place_self(rp, req, flags, NULL);
	r = rtplace_place_self(rp, req, flags, &a);
	if (r == 0)
		rtplace_answer_0_1(&a, ret);
	return r;
}
__asm__(".symver librtplace_place_self_0_1, rtplace_place_self@LIBRTPLACE_1");
