/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why the kernel refused an RT policy: a cpu cgroup with no RT budget
 * (rtbudget.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtbudget.h"

/* Whether the comma-separated controller list names cpu itself. */
static bool rtbudget_has_cpu(const char *list, size_t len)
{
	while (len > 0) {
		size_t n = 0;

		while (n < len && list[n] != ',')
			n++;
		if (n == 3 && !memcmp(list, "cpu", 3))
			return true;
		list += n < len ? n + 1 : n;
		len -= n < len ? n + 1 : n;
	}
	return false;
}

int rtbudget_parse_cgroup(const char *proc_cgroup, const char *root, char *ret, size_t size)
{
	const char *line = proc_cgroup;
	int r = -ENOENT;

	while (*line && r == -ENOENT) {
		size_t len = strcspn(line, "\n");
		const char *list = memchr(line, ':', len);
		const char *path = list ? memchr(list + 1, ':', len - (size_t)(list + 1 - line)) : NULL;

		if (!path || path[1] != '/') {
			r = -EBADMSG;
		} else if (rtbudget_has_cpu(list + 1, (size_t)(path - list - 1))) {
			/* The hierarchy's own folder is "/": no trailing slash. */
			int plen = (int)(line + len - path - 1);
			int n = snprintf(ret, size, "%s/%.*s%.*s", root, (int)(path - list - 1), list + 1,
					 plen == 1 ? 0 : plen, path + 1);

			r = n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
		}
		line += len;
		if (*line == '\n')
			line++;
	}
	return r;
}

/* Reads <folder>/cpu.rt_runtime_us: -1 (unlimited) or a budget in us. */
static int rtbudget_read_runtime(const char *folder, long long *ret)
{
	char path[PATH_MAX + 32], buf[32], *end;
	ssize_t n;
	int fd, r;

	if (snprintf(path, sizeof(path), "%s/cpu.rt_runtime_us", folder) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r == 0) {
		buf[n] = '\0';
		errno = 0;
		*ret = strtoll(buf, &end, 10);
		if (errno || end == buf || (*end && strcmp(end, "\n")) || *ret < -1)
			r = -EBADMSG;
	}
	return r;
}

int rtbudget_find(const char *proc_cgroup, const char *root, struct rtbudget_finding *ret)
{
	struct rtbudget_finding f = { .budget_us = RTBUDGET_DEFAULT_US };
	char up[PATH_MAX];
	size_t top;
	long long us;
	int r = rtbudget_parse_cgroup(proc_cgroup, root, f.folder, sizeof(f.folder));

	if (r == 0)
		r = rtbudget_read_runtime(f.folder, &us);
	if (r == 0 && us != 0)
		r = -ENOENT;
	if (r < 0)
		goto out;
	/* A folder's budget comes out of its parent's, so a parent with none
	 * must be given one first; the hierarchy's own folder is the top
	 * ("<root>/cpu" of "<root>/cpu/a/b"). */
	top = strlen(root) + 1 + strcspn(f.folder + strlen(root) + 1, "/");
	memcpy(up, f.folder, sizeof(up));
	while (strlen(up) > top) {
		*strrchr(up, '/') = '\0';
		r = rtbudget_read_runtime(up, &us);
		if (r < 0)
			goto out;
		if (us != 0)
			break;
		memcpy(f.first, up, sizeof(f.first));
	}
	if (us > 0)
		f.budget_us = us;
	*ret = f;
out:
	return r;
}

void rtbudget_explain(const struct rtbudget_finding *f, struct rtplace_reason *ret)
{
	reason_set(ret, "%s: cpu cgroup %s has cpu.rt_runtime_us 0 (RT group scheduling); fix: ",
		   RTBUDGET_REASON_PREFIX, f->folder);
	if (f->first[0])
		reason_append(ret, "give %s and each folder below it a budget, then ", f->first);
	reason_append(ret, "echo %lld > %s/cpu.rt_runtime_us (at most %lld, shared with its siblings), "
		      "or for a container --cpu-rt-runtime (linux.resources.cpu.realtimeRuntime)",
		      f->budget_us, f->folder, f->budget_us);
}
