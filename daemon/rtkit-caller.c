/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The caller of a RealtimeKit grant for its own process, pinned: the
 * process that sent the call, held by a pidfd, never by a bare pid that
 * may name another process by the time the grant acts.
 *
 * The bus names the caller in its answer to GetConnectionCredentials. Its
 * ProcessFD (dbus-daemon 1.15.8 and later, Debian 13's 1.16 among them,
 * from SO_PEERPIDFD on Linux 6.5 and later) is the caller itself,
 * whatever became of its pid. Without one (Debian 12's dbus-daemon 1.14),
 * the bus's ProcessID is the pid the caller connected with, and the
 * caller may have exited and its pid gone to a new process before the
 * answer came: the process now at that pid is pinned with a pidfd and
 * taken for the caller only if it started no later than the call arrived
 * (rtkit_rules_started_after()); a process that started after the call
 * cannot have sent it. rtplaced says once which of the two
 * its bus gives.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"
#include "rtkit-internal.h"

/* The process behind pidfd fd: its pid as this daemon's /proc names it.
 * -ESRCH once it has exited. */
static int rtkit_caller_pid_of(const struct rtkit *k, int fd, pid_t *ret)
{
	struct procfs_nspid ns;
	int r = procfs_read_pidfd(k->o.proc_root, fd, &ns);

	if (r == 0)
		*ret = ns.pids[0];
	return r;
}

/* The bus's ProcessFD: the caller itself. */
static int rtkit_caller_from_bus_fd(const struct rtkit *k, struct rtkit_caller *c, struct rtplace_reason *reason)
{
	pid_t pid = 0;
	int r = rtkit_caller_pid_of(k, c->pidfd, &pid);

	if (r == -ESRCH)
		reason_set(reason, "the caller (pid %d) exited", (int)c->pid);
	else if (r < 0)
		reason_set(reason, "cannot read the caller's process descriptor: %s", strerror(-r));
	else
		c->pid = pid;
	return r;
}

/* No ProcessFD: the process at the bus's ProcessID, if it can have sent a
 * call that arrived at arrived_boot_ns. */
static int rtkit_caller_from_pid(const struct rtkit *k, struct rtkit_caller *c, uint64_t arrived_boot_ns,
				 struct rtplace_reason *reason)
{
	long tck = sysconf(_SC_CLK_TCK);
	struct procfs_stat st;
	pid_t now = 0;
	int r;

	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	if (c->pidfd < 0) {
		r = errno == EINVAL ? -ESRCH : -errno;
		goto out;
	}
	/* The start time read by pid, then the pidfd still names a live
	 * process at that pid: the time read was that process's. */
	r = procfs_read_stat(k->o.proc_root, c->pid, 0, &st);
	if (r == 0)
		r = rtkit_caller_pid_of(k, c->pidfd, &now);
	if (r == 0 && now != c->pid)
		r = -ESRCH;
	if (r == 0 && rtkit_rules_started_after(st.start_time, tck > 0 ? (uint64_t)tck : 0, arrived_boot_ns)) {
		reason_set(reason, "the caller exited: its pid %d names a process that started after the call",
			   (int)c->pid);
		return -ESRCH;
	}
out:
	if (r == -ESRCH)
		reason_set(reason, "the caller (pid %d) exited", (int)c->pid);
	else if (r < 0)
		reason_set(reason, "cannot read the caller (pid %d): %s", (int)c->pid, strerror(-r));
	return r;
}

void rtkit_caller_said(struct rtkit *k, const struct rtkit_caller *c)
{
	if (k->said_caller_identity)
		return;
	k->said_caller_identity = true;
	if (c->pidfd >= 0)
		log_info("RealtimeKit: the bus gives each caller's process descriptor (ProcessFD)");
	else
		log_notice("RealtimeKit: the bus gives no ProcessFD (dbus-daemon before 1.15.8, or Linux before 6.5); "
			   "a caller is the process at its pid only if that started before its call");
}

int rtkit_caller_pin(struct rtkit *k, struct rtkit_caller *c, uint64_t arrived_boot_ns,
		     struct rtplace_reason *reason)
{
	rtkit_test_hold("RTPLACED_TEST_RTKIT_CALLER_HOLD", "pinning caller", c->pid);
	return c->pidfd >= 0 ? rtkit_caller_from_bus_fd(k, c, reason)
			     : rtkit_caller_from_pid(k, c, arrived_boot_ns, reason);
}

void rtkit_caller_release(struct rtkit_caller *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}
