/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader of the kernel's CPU list files in a sysfs tree (sysfs.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

/* Longest CPU list of RTPLACE_MAX_CPUS ids ("0,2,4,...") and a newline. */
#define SYSFS_LIST_MAX (RTPLACE_MAX_CPUS * 5 + 2)

int sysfs_parse_cpulist(const char *text, struct rtplace_cpumask *ret)
{
	size_t n = strcspn(text, "\n");
	char buf[SYSFS_LIST_MAX];
	int r = 0;

	/* Anything after the first line is not what the kernel writes. */
	if (n >= sizeof(buf) || (text[n] == '\n' && text[n + 1] != '\0'))
		return -EINVAL;
	memcpy(buf, text, n);
	buf[n] = '\0';
	/* The kernel pads "(null)" on the left to the CPU count's width
	 * ("  (null)" on 8 CPUs): a field width meant for the list. */
	if (!buf[0] || !strcmp(buf + strspn(buf, " "), "(null)"))
		cpuset_zero(ret);
	else
		r = cpuset_parse(buf, ret) < 0 ? -EINVAL : 0;
	return r;
}

/* Reads and parses the CPU list file at path. */
static int sysfs_read_path(const char *path, struct rtplace_cpumask *ret)
{
	char *buf = malloc(SYSFS_LIST_MAX);
	ssize_t n = 0, got = 0;
	int fd, r;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	while (n < SYSFS_LIST_MAX - 1 && (got = read(fd, buf + n, SYSFS_LIST_MAX - 1 - (size_t)n)) > 0)
		n += got;
	r = got < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		goto out;
	buf[n] = '\0';
	r = sysfs_parse_cpulist(buf, ret);
out:
	free(buf);
	return r;
}

int sysfs_read_cpulist(const char *root, const char *name, struct rtplace_cpumask *ret)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/devices/system/cpu/%s", root, name);
	return sysfs_read_path(path, ret);
}

/* One part of the isolation: a missing file is the empty set. */
static int sysfs_read_part(const char *root, const char *name, struct rtplace_reason *reason, struct rtplace_cpumask *ret)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	r = sysfs_read_path(path, ret);
	if (r == -ENOENT) {
		cpuset_zero(ret);
		r = 0;
	} else if (r == -EINVAL) {
		reason_set(reason, "%s is not a CPU list", path);
	} else if (r < 0) {
		reason_set(reason, "cannot read %s: %s", path, strerror(-r));
	}
	return r;
}

int sysfs_read_isolation(const char *root, struct rtplace_reason *reason, struct sysfs_isolation *ret)
{
	struct sysfs_isolation s;
	int r = sysfs_read_part(root, "devices/system/cpu/isolated", reason, &s.isolated);

	if (r == 0)
		r = sysfs_read_part(root, "devices/system/cpu/nohz_full", reason, &s.nohz_full);
	if (r == 0)
		r = sysfs_read_part(root, "fs/cgroup/cpuset.cpus.isolated", reason, &s.partitions);
	if (r == 0) {
		cpuset_or(&s.isolated, &s.isolated, &s.partitions);
		*ret = s;
	}
	return r;
}
