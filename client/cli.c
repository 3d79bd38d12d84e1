/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "cli.h"
#include "cpuset.h"
#include "file.h"
#include "rtbudget.h"

int cli_parse_long(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int cli_parse_seconds(const char *s, double min, double max, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* v == v: refuses "nan" */
	if (errno || end == s || *end || !(v == v) || v < min || v > max || strpbrk(s, "xXpP"))
		return -EINVAL;
	*ret = v;
	return 0;
}

int cli_parse_policy(const char *s, int *ret)
{
	if (strcmp(s, "fifo") == 0)
		*ret = SCHED_FIFO;
	else if (strcmp(s, "rr") == 0)
		*ret = SCHED_RR;
	else
		return -EINVAL;
	return 0;
}

int cli_parse_cpus(const char *s, cpu_set_t *ret)
{
	struct rtplace_cpumask set;
	int r = cpuset_parse(s, &set);

	if (r < 0)
		return r;
	if (cpuset_empty(&set))
		return -EINVAL;
	CPU_ZERO(ret);
	CPUSET_FOREACH(cpu, &set) {
		/* a cpu_set_t holds no more: refused, not dropped */
		if (cpu >= CPU_SETSIZE)
			return -ERANGE;
		CPU_SET((unsigned)cpu, ret);
	}
	return 0;
}

void cli_format_cpus(const cpu_set_t *s, char *buf, size_t len)
{
	struct rtplace_cpumask set;

	cpuset_zero(&set);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, s))
			cpuset_set(&set, cpu);
	if (cpuset_format(&set, buf, len) < 0)
		snprintf(buf, len, "?");
}

void cli_explain_connect(const char *path, int r, struct rtplace_reason *hint)
{
	struct group gr, *found = NULL;
	char grbuf[1024];
	struct stat st;

	hint->text[0] = '\0';
	if (r == -ENOENT || r == -ECONNREFUSED) {
		reason_set(hint, " (is rtplaced running?)");
		return;
	}
	if (r != -EACCES)
		return;
	if (stat(path, &st) < 0) {
		reason_set(hint, " (a directory above the socket is closed to this user)");
		return;
	}
	if (getgrgid_r(st.st_gid, &gr, grbuf, sizeof(grbuf), &found) != 0)
		found = NULL;
	if (st.st_gid == 0)
		reason_set(hint, " (the socket belongs to group root: set socket-group in [daemon] of "
			   "rtplaced.conf to a group such as rtplace and join it, or run as root)");
	else if (found)
		reason_set(hint, " (join group %s, the socket's group as socket-group in rtplaced.conf sets it, "
			   "and log in again; or run as root)", found->gr_name);
	else
		reason_set(hint, " (join group %u, the socket's group as socket-group in rtplaced.conf sets it, "
			   "and log in again; or run as root)", (unsigned)st.st_gid);
}

int cli_exit_status(int r)
{
	switch (r) {
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -EPIPE:
	case -EOPNOTSUPP:
		return EX_UNAVAILABLE;
	case -EACCES:
	case -EPERM:
		return EX_NOPERM;
	case -ENOENT: /* once connected: no such claim */
	case -EINVAL:
	case -ERANGE:
	case -ESRCH:
	case -EXDEV: /* a bare pid from another PID namespace */
	case -EBADF: /* a descriptor that is not the pid's pidfd */
		return EX_DATAERR;
	case -ETIMEDOUT:
	case -EDQUOT:
	case -EBUSY:
	case -EAGAIN:
	case -EUSERS: /* refused at a client limit */
		return EX_TEMPFAIL;
	case -EPROTO:
	case -EPROTONOSUPPORT:
		return EX_PROTOCOL;
	case -ENOMEM:
		return EX_OSERR;
	default:
		return EX_SOFTWARE;
	}
}

int cli_explain_rtbudget(pid_t pid, struct rtplace_reason *ret)
{
	struct rtbudget_finding f;
	struct rtplace_reason why;
	char path[64], *text = NULL;
	size_t size;
	int r;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	r = file_read_regular(path, 65536, &why, &text, &size);
	if (r == 0)
		r = rtbudget_find(text, RTBUDGET_CGROUP_ROOT, &f);
	if (r == 0)
		rtbudget_explain(&f, ret);
	free(text);
	return r;
}

const char *cli_option_hint(const char *arg)
{
	static const struct {
		const char *habit; /* an option of chrt's, or a guess at ours */
		const char *hint;
	} hints[] = {
		{ "-p", "; the RT priority is --prio P" },
		{ "--priority", "; the RT priority is --prio P" },
		{ "-f", "; SCHED_FIFO is --policy fifo (the default)" },
		{ "--fifo", "; SCHED_FIFO is --policy fifo (the default)" },
		{ "-r", "; SCHED_RR is --policy rr" },
		{ "--rr", "; SCHED_RR is --policy rr" },
	};
	size_t n = strcspn(arg, "=");

	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strlen(hints[i].habit) == n && !strncmp(arg, hints[i].habit, n))
			return hints[i].hint;
	return "";
}
