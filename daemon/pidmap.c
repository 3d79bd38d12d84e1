/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Client-named pids as the daemon's (pidmap.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pidmap.h"
#include "procfs.h"
#include "rtplace-proto.h"

#define PIDMAP_REFUSAL "bare pid from another PID namespace: use librtplace >= " PACKAGE_VERSION
_Static_assert(sizeof(PIDMAP_REFUSAL) <= RTPLACE_REASON_MAX, "the refusal fits an error reply");

bool pidmap_same_pidns(const char *root, pid_t pid)
{
	struct procfs_ns mine, theirs;
	struct procfs_nspid a, b;
	int r;

	if (pid <= 0)
		return false;
	r = procfs_pidns(root, getpid(), &mine);
	if (r == 0)
		r = procfs_pidns(root, pid, &theirs);
	if (r == 0)
		return mine.dev == theirs.dev && mine.ino == theirs.ino;
	if (r != -EACCES && r != -EPERM)
		return false;
	return procfs_read_nspid(root, getpid(), 0, &a) == 0 && procfs_read_nspid(root, pid, 0, &b) == 0 &&
	       a.n == 1 && b.n == 1;
}

int pidmap_level(const char *root, pid_t pid, int pidfd)
{
	struct procfs_nspid ns;
	int r;

	if (pidfd >= 0)
		r = procfs_read_pidfd(root, pidfd, &ns);
	else
		r = pid > 0 ? procfs_read_nspid(root, pid, 0, &ns) : -ESRCH;
	return r < 0 ? PIDMAP_LEVEL_UNKNOWN : (int)ns.n - 1;
}

/* The depth of the peer's namespace below the daemon's: the NSpid entry
 * at which a process it can see carries the number it knows. */
static int pidmap_peer_level(const struct pidmap_peer *peer, unsigned *ret, struct rtplace_reason *reason)
{
	if (peer->same_pidns) {
		*ret = 0;
		return 0;
	}
	if (peer->level < 0) {
		reason_set(reason, "cannot read the requester's PID namespace");
		return -ESRCH;
	}
	*ret = (unsigned)peer->level;
	return 0;
}

/* The process behind pidfd, as the proc tree names it in every namespace. */
static int pidmap_read_pidfd(const char *root, int pidfd, struct procfs_nspid *ret, struct rtplace_reason *reason)
{
	int r = procfs_read_pidfd(root, pidfd, ret);

	switch (r) {
	case 0:
		return 0;
	case -EBADF:
		reason_set(reason, "the descriptor sent is not a pidfd");
		return r;
	case -ESRCH:
		reason_set(reason, "the pidfd's process has exited");
		return r;
	case -EXDEV:
		reason_set(reason, "the pidfd's process is outside the daemon's PID namespace");
		return r;
	default:
		reason_set(reason, "cannot read the pidfd: %s", strerror(-r));
		return r;
	}
}

int pidmap_process(const char *root, const struct pidmap_peer *peer, pid_t named, int pidfd, pid_t *ret,
		   struct rtplace_reason *reason)
{
	struct procfs_nspid ns;
	unsigned level = 0;
	int r;

	if (peer->same_pidns) {
		*ret = named;
		return 0;
	}
	if (pidfd < 0) {
		reason_set(reason, "%s", PIDMAP_REFUSAL);
		return -EXDEV;
	}
	r = pidmap_read_pidfd(root, pidfd, &ns, reason);
	if (r == 0)
		r = pidmap_peer_level(peer, &level, reason);
	if (r < 0)
		return r;
	if (level >= ns.n || ns.pids[level] != named) {
		reason_set(reason, "pid %d is not the process of the pidfd sent", (int)named);
		return -EINVAL;
	}
	*ret = ns.pids[0];
	return 0;
}

int pidmap_thread(const char *root, const struct pidmap_peer *peer, pid_t named, int pidfd, pid_t *ret,
		  struct rtplace_reason *reason)
{
	struct procfs_nspid ns;
	unsigned level = 0;
	int r;

	if (peer->same_pidns || pidfd < 0)
		return pidmap_process(root, peer, named, pidfd, ret, reason);
	r = pidmap_read_pidfd(root, pidfd, &ns, reason);
	if (r == 0)
		r = pidmap_peer_level(peer, &level, reason);
	if (r < 0)
		return r;
	if (level >= ns.n) {
		reason_set(reason, "the pidfd's process is outside the requester's namespace");
		return -EINVAL;
	}
	/* The pidfd names the thread itself: a process's main thread, or a
	 * thread pidfd (PIDFD_THREAD, Linux 6.9). Otherwise one of its
	 * process's threads carries the number; threads share their
	 * process's namespaces, so the level is the same. */
	if (ns.pids[level] == named) {
		*ret = ns.pids[0];
		return 0;
	}
	r = procfs_find_thread_nspid(root, ns.pids[0], level, named, ret);
	if (r < 0)
		reason_set(reason, "thread %d is not a thread of the pidfd's process", (int)named);
	return r;
}
