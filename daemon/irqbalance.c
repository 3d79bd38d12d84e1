/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "irqbalance.h"
#include "isoplan.h"
#include "procfs.h"

int irqbalance_find(const char *proc_root, pid_t *ret)
{
	return procfs_find_comm(proc_root, "irqbalance", ret);
}

/* Waits (bounded) until fd is ready for events. 0, -ETIMEDOUT or -errno. */
static int irqbalance_wait(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, IRQBALANCE_TIMEOUT_MS);

	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* A connection to irqbalance pid's socket, command sent with root's
 * credentials. The fd, or -errno. */
static int irqbalance_send(const char *run_dir, pid_t pid, const char *command)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred cred = { .pid = getpid(), .uid = geteuid(), .gid = getegid() };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} control = { 0 };
	struct iovec iov = { .iov_base = (void *)command, .iov_len = strlen(command) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
	int fd, r = 0;

	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/irqbalance%d.sock", run_dir, (int)pid) >=
	    (int)sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_CREDENTIALS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(cmsg), &cred, sizeof(cred));
	/* Non-blocking: its backlog is one connection, and a full one must
	 * not hold the daemon's loop. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		r = errno == EINPROGRESS ? irqbalance_wait(fd, POLLOUT) : -errno;
	if (r == 0)
		r = irqbalance_wait(fd, POLLOUT);
	if (r == 0 && sendmsg(fd, &msg, MSG_NOSIGNAL) != (ssize_t)iov.iov_len)
		r = errno ? -errno : -EIO;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int irqbalance_parse_setup(const char *reply, struct rtplace_cpumask *ret)
{
	const char *p = strstr(reply, "BANNED ");

	if (!p || isoplan_hex_parse(p + strlen("BANNED "), ret) < 0)
		return -EBADMSG;
	return 0;
}

int irqbalance_banned(const char *run_dir, pid_t pid, struct rtplace_cpumask *ret)
{
	char reply[16384];
	size_t len = 0;
	ssize_t n = 0;
	int fd = irqbalance_send(run_dir, pid, "setup"), r = 0;

	if (fd < 0)
		return fd;
	/* It answers and closes: read to the end. */
	while (len < sizeof(reply) - 1 && (r = irqbalance_wait(fd, POLLIN)) == 0 &&
	       (n = read(fd, reply + len, sizeof(reply) - 1 - len)) > 0)
		len += (size_t)n;
	if (r == 0 && n < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	reply[len] = '\0';
	return irqbalance_parse_setup(reply, ret);
}

int irqbalance_ban(const char *run_dir, pid_t pid, const struct rtplace_cpumask *cpus)
{
	char command[CPUSET_LIST_MAX + 32] = "settings cpus NULL";
	int fd;

	if (cpus) {
		size_t at = strlen("settings cpus ");

		if (cpuset_format(cpus, command + at, sizeof(command) - at) < 0)
			return -ENOSPC;
	}
	fd = irqbalance_send(run_dir, pid, command);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}
