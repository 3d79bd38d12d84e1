/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The processes and threads a client names, as the daemon's own pids
 * (DESIGN §15). A pid written into a request (a claim's owner_pid, a
 * MOVE's tid) is a number in the client's PID namespace; a client in a
 * container has its own, where pid 1 is the container's init and a host
 * process may carry the number of any container process. Its bare
 * numbers are never read as the daemon's:
 *
 * - a client in the daemon's PID namespace names by its pid, which is
 *   the daemon's, as clients always have (protocol compatibility); a
 *   pidfd it sends along is not read: its fdinfo would cost a move's hot
 *   path about 10 µs and tell nothing the number does not;
 * - a client in another namespace sends a pidfd with the request
 *   (SCM_RIGHTS; a pidfd of the owner, or of the target thread's process):
 *   the kernel states whose it is in the pidfd's fdinfo, in the daemon's
 *   namespace and in every one below (Pid, NSpid), so it cannot be forged,
 *   and the client's own number must agree with it;
 * - a bare pid from a client in another PID namespace is refused with
 *   -EXDEV and a reason naming the fix (librtplace sends pidfds).
 *
 * Namespaces are compared by the identity of <proc>/PID/ns/pid. Reading
 * another process's link needs ptrace read access, which a daemon with
 * fewer capabilities than its peer lacks (a containerised rtplaced, a
 * non-root one); the NSpid line of the world-readable status file decides
 * then: a single entry for both the peer and the daemon means both live in
 * the proc tree's namespace. What cannot be read counts as another
 * namespace: a bare pid is refused, never guessed.
 *
 * Pure decisions over procfs.c readers; every function takes the proc
 * tree's root, so unit tests run on fixture trees.
 */
#ifndef RTPLACE_PIDMAP_H
#define RTPLACE_PIDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "procfs.h"
#include "reason.h"

/* pidmap_level() of a process whose namespace could not be read. */
#define PIDMAP_LEVEL_UNKNOWN (-1)

/* The requester's PID namespace, as read when it connected. */
struct pidmap_peer {
	bool same_pidns; /* it is the daemon's (pidmap_same_pidns()) */
	int level;       /* otherwise its depth: pidmap_level() */
};

/* Whether process pid lives in the daemon's PID namespace; false also when
 * that cannot be read. */
bool pidmap_same_pidns(const char *root, pid_t pid);

/*
 * How many PID namespaces process pid's lies below the proc tree's (the
 * number of its NSpid entries less one), or PIDMAP_LEVEL_UNKNOWN. With a
 * pidfd of the process (SO_PEERPIDFD), from the pidfd's fdinfo: pid is
 * not read, so the answer cannot be another process's that took the
 * number. Read once, when a peer connects: a process never changes PID
 * namespace, and once it has exited its pid may name another process, so
 * a read at each request would cost a /proc read and could read a
 * stranger.
 */
int pidmap_level(const char *root, pid_t pid, int pidfd);

/*
 * The process a peer names as named, with the pidfd it sent (-1 for none),
 * as a pid of the daemon's namespace in *ret. Returns 0, or -errno with
 * reason set (worded to fit an ERROR reply): -EXDEV (a bare pid from another namespace), -EBADF (the
 * descriptor is no pidfd), -ESRCH (the process has exited), -EINVAL (named
 * is not the pidfd's process).
 */
int pidmap_process(const char *root, const struct pidmap_peer *peer, pid_t named, int pidfd, pid_t *ret,
		   struct rtplace_reason *reason);

/*
 * The thread a peer names as named (its tid in the peer's namespace), with
 * a pidfd of its process (or of the thread itself) or -1, as a tid of the
 * daemon's namespace in *ret. Errors as pidmap_process(); -ESRCH also when
 * named is no thread of the pidfd's process.
 */
int pidmap_thread(const char *root, const struct pidmap_peer *peer, pid_t named, int pidfd, pid_t *ret,
		  struct rtplace_reason *reason);

/*
 * The other way: the daemon's pids as a client sees them, in the replies
 * and records meant for it (a CPUS reply's running threads, a record's
 * thread or claim owner). A client in the daemon's namespace sees the
 * daemon's pids, unchanged and unread. One in another namespace sees a
 * task by the number its own namespace gives it (the NSpid entry at the
 * client's level), and a task outside that namespace (on the host, in a
 * sibling container) as 0, never by a number of another namespace: the
 * entry at the right depth of a sibling's NSpid line names a stranger, so
 * the task's namespace at that depth must be the client's own.
 */
struct pidmap_view {
	const char *root;     /* the proc tree */
	bool same_pidns;      /* sees the daemon's pids */
	int level;            /* otherwise its depth, or PIDMAP_LEVEL_UNKNOWN: sees no task */
	struct procfs_ns ns;  /* its PID namespace, with a known level */
};

/*
 * The view of the client peer, whose process is pid (pidfd: a pidfd of
 * it, or -1). A client in the daemon's namespace costs nothing; for any
 * other the identity of its namespace is read, and what cannot be read
 * leaves it seeing no task (level PIDMAP_LEVEL_UNKNOWN).
 */
void pidmap_view_of(const char *root, const struct pidmap_peer *peer, pid_t pid, int pidfd,
		    struct pidmap_view *ret);

/* The number a task with NSpid line ns carries at namespace depth level:
 * 0 when it lives above that depth. Pure. */
pid_t pidmap_nspid_at(const struct procfs_nspid *ns, int level);

/*
 * Pid (a process or thread of the daemon's namespace) as v sees it, in
 * *ret: itself for a view of the daemon's namespace, 0 for pid 0.
 * Returns 0 with *ret > 0 (its number) or 0 (it lives outside v's
 * namespace), or -ESRCH (gone) or -errno (unreadable) with *ret 0.
 */
int pidmap_show(const struct pidmap_view *v, pid_t pid, pid_t *ret);

/* A pid as a client sees it (for pidmap_text_show()). */
typedef pid_t pidmap_show_fn(pid_t pid, void *ctx);

/*
 * Rewrites reason for a client: each number that follows the word "pid"
 * or "thread" and a space, a pid of the daemon's in the reasons the daemon
 * words, becomes show(number), as pidmap_show() would give it. A reason
 * that grows past its size is cut. Pure.
 */
void pidmap_text_show(struct rtplace_reason *reason, pidmap_show_fn *show, void *ctx);

/*
 * A reason worded with the daemon's pids (a MOVE's refusal, a claim's
 * note), rewritten for view v (pidmap_text_show() over pidmap_show();
 * nothing changes for a view of the daemon's namespace). known, when not
 * 0, is shown as known_as without a read: the thread a request named,
 * whose number the client gave.
 */
void pidmap_reason_show(const struct pidmap_view *v, struct rtplace_reason *reason, pid_t known, pid_t known_as);

#endif
