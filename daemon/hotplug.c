/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hotplug.h"
#include "sysfs.h"

/* The kernel's own uevents (udev's re-broadcasts use group 2). */
#define HOTPLUG_UEVENT_GROUP 1
/* A uevent is at most UEVENT_BUFFER_SIZE (2 KiB) of variables plus its
 * header; a longer one is truncated, which keeps the parts we read. */
#define HOTPLUG_MSG_MAX 8192
/* The uevent socket's receive buffer, bytes (see hotplug_open()). */
#define HOTPLUG_RCVBUF (4 * 1024 * 1024)

struct hotplug {
	const char *sysfs;
	int fd;
	struct rtplace_cpumask online;   /* as last read */
	struct rtplace_cpumask offlined; /* named offline by uevents since that read */
	bool lost;              /* uevents lost (ENOBUFS) since that read */
};

int hotplug_read_online(const char *sysfs, struct rtplace_cpumask *ret)
{
	struct rtplace_cpumask s;
	int r = sysfs_read_cpulist(sysfs, "online", &s);

	/* The CPU reading it is online: an empty list is no list the kernel
	 * writes. */
	if (r == 0 && cpuset_empty(&s))
		r = -EINVAL;
	if (r == 0)
		*ret = s;
	return r;
}

/* The value of key in the uevent's variables, or NULL. */
static const char *hotplug_uevent_get(const char *msg, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = strnlen(msg, len) + 1; i < len; i += strnlen(msg + i, len - i) + 1) {
		size_t vlen = strnlen(msg + i, len - i);

		if (vlen > klen && memcmp(msg + i, key, klen) == 0 && msg[i + klen] == '=' && i + vlen < len)
			return msg + i + klen + 1;
	}
	return NULL;
}

enum hotplug_action hotplug_uevent_parse(const char *msg, size_t len, unsigned *ret_cpu)
{
	static const char cpu_dir[] = "/devices/system/cpu/cpu";
	const char *subsystem = hotplug_uevent_get(msg, len, "SUBSYSTEM");
	const char *action = hotplug_uevent_get(msg, len, "ACTION");
	const char *devpath = hotplug_uevent_get(msg, len, "DEVPATH");
	enum hotplug_action a = HOTPLUG_NONE;
	unsigned long cpu;
	char *end;

	*ret_cpu = RTPLACE_MAX_CPUS;
	if (!subsystem || !action || strcmp(subsystem, "cpu") != 0)
		return HOTPLUG_NONE;
	if (strcmp(action, "online") == 0 || strcmp(action, "add") == 0)
		a = HOTPLUG_ONLINE;
	else if (strcmp(action, "offline") == 0 || strcmp(action, "remove") == 0)
		a = HOTPLUG_OFFLINE;
	if (a == HOTPLUG_NONE || !devpath || strncmp(devpath, cpu_dir, sizeof(cpu_dir) - 1) != 0)
		return a;
	devpath += sizeof(cpu_dir) - 1;
	if (*devpath < '0' || *devpath > '9')
		return a;
	errno = 0;
	cpu = strtoul(devpath, &end, 10);
	if (errno == 0 && *end == '\0' && cpu < RTPLACE_MAX_CPUS)
		*ret_cpu = (unsigned)cpu;
	return a;
}

void hotplug_changes(const struct rtplace_cpumask *was, const struct rtplace_cpumask *now, const struct rtplace_cpumask *offlined, bool lost,
		     struct rtplace_cpumask *ret_gone, struct rtplace_cpumask *ret_came)
{
	struct rtplace_cpumask back;

	cpuset_andnot(ret_gone, was, now);
	cpuset_or(ret_gone, ret_gone, offlined);
	if (lost)
		cpuset_or(ret_gone, ret_gone, was);
	cpuset_andnot(ret_came, now, was);
	cpuset_and(&back, now, ret_gone);
	cpuset_or(ret_came, ret_came, &back);
}

int hotplug_open(const char *sysfs, struct hotplug **ret)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = HOTPLUG_UEVENT_GROUP };
	struct hotplug *h = calloc(1, sizeof(*h));
	int rcvbuf = HOTPLUG_RCVBUF, r;

	if (!h)
		return -ENOMEM;
	h->sysfs = sysfs;
	/* Socket first, list second: a change in between is both read and
	 * announced, never missed. */
	h->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (h->fd < 0 || bind(h->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = -errno;
		goto fail;
	}
	/* An overflow ends every claim (hotplug_changes()), and a burst of
	 * device events (a container start, a udev trigger) is what
	 * overflows it: room for a few thousand messages, past rmem_max
	 * where the daemon may (CAP_NET_ADMIN), else as much as it allows. */
	if (setsockopt(h->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(h->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	r = hotplug_read_online(sysfs, &h->online);
	if (r < 0)
		goto fail;
	*ret = h;
	return 0;
fail:
	hotplug_close(h);
	return r;
}

int hotplug_fd(const struct hotplug *h)
{
	return h->fd;
}

/* Notes what one uevent says; whether it was about a CPU. */
static bool hotplug_uevent_action(struct hotplug *h, const char *msg, size_t len)
{
	unsigned cpu;
	enum hotplug_action a = hotplug_uevent_parse(msg, len, &cpu);

	if (a == HOTPLUG_OFFLINE && cpu < RTPLACE_MAX_CPUS)
		cpuset_set(&h->offlined, cpu);
	return a != HOTPLUG_NONE;
}

int hotplug_consume(struct hotplug *h, struct rtplace_cpumask *ret_gone, struct rtplace_cpumask *ret_came, bool *ret_lost)
{
	char *msg = malloc(HOTPLUG_MSG_MAX);
	struct rtplace_cpumask now, gone, came;
	bool stale = h->lost, lost;
	int r;

	if (!msg)
		return -ENOMEM;
	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = msg, .iov_len = HOTPLUG_MSG_MAX - 1 };
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(h->fd, &mh, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* The socket overflowed: what was lost may have been ours. */
			h->lost = stale = true;
			continue;
		}
		if (n < 0)
			break;
		/* Only the kernel (port 0) speaks for the hardware; the list
		 * is re-read anyway, so a forged message costs a read. */
		if (from.nl_pid != 0)
			continue;
		msg[n] = '\0';
		stale |= hotplug_uevent_action(h, msg, (size_t)n);
	}
	free(msg);
	if (!stale)
		return 0;
	r = hotplug_read_online(h->sysfs, &now);
	if (r < 0)
		return r;
	hotplug_changes(&h->online, &now, &h->offlined, h->lost, &gone, &came);
	lost = h->lost;
	h->online = now;
	cpuset_zero(&h->offlined);
	h->lost = false;
	if (cpuset_empty(&gone) && cpuset_empty(&came))
		return 0;
	*ret_gone = gone;
	*ret_came = came;
	*ret_lost = lost;
	return 1;
}

void hotplug_close(struct hotplug *h)
{
	if (!h)
		return;
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}
