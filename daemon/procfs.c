/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One reader of a proc tree (procfs.h).
 */
#include "config.h"

#include <dirent.h>
#include <linux/nsfs.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

/* Fields of a stat line, numbered from 1 as proc(5) does. */
enum {
	PROCFS_FIELD_STATE = 3,
	PROCFS_FIELD_PPID = 4,
	PROCFS_FIELD_FLAGS = 9,
	PROCFS_FIELD_UTIME = 14,
	PROCFS_FIELD_STIME = 15,
	PROCFS_FIELD_PRIORITY = 18, /* task_struct.prio - MAX_RT_PRIO */
	PROCFS_FIELD_STARTTIME = 22,
	PROCFS_FIELD_VSIZE = 23,
	PROCFS_FIELD_RSS = 24,
	PROCFS_FIELD_PROCESSOR = 39,
	PROCFS_FIELD_RT_PRIORITY = 40,
	PROCFS_FIELD_POLICY = 41,
};

/* The kernel's MAX_RT_PRIO: field 18 is prio minus this. */
#define PROCFS_MAX_RT_PRIO 100

int procfs_parse_stat(const char *line, struct procfs_stat *ret)
{
	const char *p = strrchr(line, ')');
	struct procfs_stat s = { 0 };
	long long v = 0;

	if (!p || p[1] != ' ' || p[2] < 'A' || p[2] > 'z')
		return -EBADMSG;
	s.state = p[2];
	p += 3;
	for (int field = PROCFS_FIELD_STATE + 1; field <= PROCFS_FIELD_POLICY; field++) {
		char *end;

		/* Some fields are unsigned 64-bit (rsslim is often ULONG_MAX): an
		 * out-of-range value saturates, which only matters for fields
		 * skipped here; start_time is read unsigned. */
		errno = 0;
		if (field == PROCFS_FIELD_STARTTIME)
			s.start_time = strtoull(p, &end, 10);
		else if (field == PROCFS_FIELD_VSIZE)
			s.vsize = strtoull(p, &end, 10);
		else
			v = strtoll(p, &end, 10);
		if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
			return -EBADMSG;
		p = end;
		switch (field) {
		case PROCFS_FIELD_PPID:
			s.ppid = (pid_t)v;
			break;
		case PROCFS_FIELD_FLAGS:
			s.flags = (unsigned)v;
			break;
		case PROCFS_FIELD_UTIME:
			s.utime = v < 0 ? 0 : (uint64_t)v;
			break;
		case PROCFS_FIELD_STIME:
			s.stime = v < 0 ? 0 : (uint64_t)v;
			break;
		case PROCFS_FIELD_RSS:
			s.rss = v < 0 ? 0 : (uint64_t)v;
			break;
		case PROCFS_FIELD_PRIORITY:
			s.prio = (int)v + PROCFS_MAX_RT_PRIO;
			break;
		case PROCFS_FIELD_PROCESSOR:
			s.cpu = (uint32_t)v;
			break;
		case PROCFS_FIELD_RT_PRIORITY:
			if (v < 0 || v > 99)
				return -EBADMSG;
			s.rt_priority = (int)v;
			break;
		case PROCFS_FIELD_POLICY:
			if (v < 0 || v > INT_MAX)
				return -EBADMSG;
			s.policy = (int)v;
			break;
		default:
			break;
		}
	}
	*ret = s;
	return 0;
}

const char *procfs_status_field(const char *status, const char *key)
{
	size_t klen = strlen(key);
	const char *p = status;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return p + klen + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int procfs_status_u64(const char *status, const char *key, int base, uint64_t *ret)
{
	const char *p = procfs_status_field(status, key);
	unsigned long long v;
	char *end;

	if (!p)
		return -ENOENT;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!(*p >= '0' && *p <= '9') && !(base == 16 && ((*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F'))))
		return -EBADMSG;
	errno = 0;
	v = strtoull(p, &end, base);
	if (errno || (*end != '\n' && *end != '\0' && *end != ' ' && *end != '\t'))
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* procfs_read() of a whole path; a missing file is -ENOENT. */
static ssize_t procfs_read_path(const char *path, char *buf, size_t size)
{
	ssize_t r, n = 0;
	int fd;

	if (size < 2)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* proc files fill a read at a time and may be longer than a page
	 * (status with many groups): read until EOF or the buffer is full. */
	while ((size_t)n < size - 1) {
		r = read(fd, buf + n, size - 1 - (size_t)n);
		if (r < 0) {
			/* A task reaped while its file is open reads ESRCH. */
			n = errno == ESRCH ? -ESRCH : -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += r;
	}
	buf[n] = '\0';
	if ((size_t)n == size - 1) {
		char extra;

		if (read(fd, &extra, 1) > 0)
			n = -EFBIG;
	}
out:
	close(fd);
	return n;
}

ssize_t procfs_read(const char *root, pid_t pid, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/%d/%s", root, (int)pid, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = procfs_read_path(path, buf, size);
	return n == -ENOENT ? -ESRCH : n;
}

int procfs_find_comm(const char *root, const char *comm, pid_t *ret)
{
	struct procfs_ids l = { 0 };
	pid_t found = 0;
	int r = procfs_list(root, 0, &l);

	for (size_t i = 0; r == 0 && i < l.n; i++) {
		char text[32];
		ssize_t n;

		if (found && l.ids[i] >= found)
			continue;
		n = procfs_read(root, l.ids[i], "comm", text, sizeof(text));
		if (n > 0 && text[n - 1] == '\n')
			text[--n] = '\0';
		if (n > 0 && strcmp(text, comm) == 0)
			found = l.ids[i];
	}
	procfs_ids_free(&l);
	if (r == 0 && !found)
		r = -ESRCH;
	if (r == 0)
		*ret = found;
	return r;
}

int procfs_count_fds(const char *root, pid_t pid, uint32_t *ret)
{
	char path[PATH_MAX];
	struct dirent *e;
	uint32_t n = 0;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/%d/fd", root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	/* The directory stream's own descriptor is among them. */
	*ret = n ? n - 1 : 0;
	return 0;
}

int procfs_owner(const char *root, pid_t pid, uid_t *ret)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%d", root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*ret = st.st_uid;
	return 0;
}

int procfs_parse_sysctl(const char *text, int64_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || errno == ERANGE || (*end != '\0' && strcmp(end, "\n") != 0))
		return -EBADMSG;
	*ret = v;
	return 0;
}

int procfs_read_sysctl(const char *root, const char *name, int64_t *ret)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/sys/%s", root, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = procfs_read_path(path, buf, sizeof(buf));
	if (n < 0)
		return n == -EFBIG ? -EBADMSG : (int)n;
	return procfs_parse_sysctl(buf, ret);
}

int procfs_read_rt_throttle(const char *root, struct procfs_rt_throttle *ret)
{
	struct procfs_rt_throttle t;
	int r = procfs_read_sysctl(root, "kernel/sched_rt_runtime_us", &t.runtime_us);

	if (r == 0)
		r = procfs_read_sysctl(root, "kernel/sched_rt_period_us", &t.period_us);
	/* The kernel accepts -1 (no throttling) or 0..period. */
	if (r == 0 && (t.period_us <= 0 || t.runtime_us < -1 || t.runtime_us > t.period_us))
		r = -EBADMSG;
	if (r == 0)
		*ret = t;
	return r;
}

int procfs_read_cmdline(const char *root, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/cmdline", root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = procfs_read_path(path, buf, size);
	return n < 0 ? (int)n : 0;
}

int procfs_read_stat(const char *root, pid_t pid, pid_t tid, struct procfs_stat *ret)
{
	char name[40], line[1024];
	ssize_t n;

	if (tid)
		snprintf(name, sizeof(name), "task/%d/stat", (int)tid);
	else
		snprintf(name, sizeof(name), "stat");
	n = procfs_read(root, pid, name, line, sizeof(line));
	if (n < 0)
		return (int)n;
	return procfs_parse_stat(line, ret);
}

int procfs_list(const char *root, pid_t pid, struct procfs_ids *ret)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dp;
	int r = 0;

	if (pid)
		snprintf(path, sizeof(path), "%s/%d/task", root, (int)pid);
	else
		snprintf(path, sizeof(path), "%s", root);
	dp = opendir(path);
	if (!dp)
		return pid && errno == ENOENT ? -ESRCH : -errno;
	ret->n = 0;
	errno = 0;
	while ((e = readdir(dp))) {
		char *end;
		long id = strtol(e->d_name, &end, 10);

		errno = 0;
		if (id <= 0 || id > INT_MAX || *end)
			continue;
		if (ret->n == ret->cap) {
			size_t cap = ret->cap ? ret->cap * 2 : 64;
			pid_t *ids = reallocarray(ret->ids, cap, sizeof(*ids));

			if (!ids) {
				r = -ENOMEM;
				break;
			}
			ret->ids = ids;
			ret->cap = cap;
		}
		ret->ids[ret->n++] = (pid_t)id;
	}
	if (r == 0 && errno)
		r = -errno;
	closedir(dp);
	return r;
}

void procfs_ids_free(struct procfs_ids *l)
{
	free(l->ids);
	*l = (struct procfs_ids){ 0 };
}

/* A signed pid at p (after blanks): 0 and the end in *ret_end, or -EBADMSG. */
static int procfs_parse_pid(const char *p, pid_t *ret, const char **ret_end)
{
	char *end;
	long v;

	while (*p == ' ' || *p == '\t')
		p++;
	errno = 0;
	v = strtol(p, &end, 10);
	if (end == p || errno || v < -1 || v > INT_MAX)
		return -EBADMSG;
	*ret = (pid_t)v;
	*ret_end = end;
	return 0;
}

int procfs_parse_nspid(const char *text, struct procfs_nspid *ret)
{
	const char *p = procfs_status_field(text, "NSpid");
	struct procfs_nspid ns = { 0 };

	if (!p)
		return -ENOENT;
	while (*p != '\n' && *p != '\0') {
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (ns.n == PROCFS_NSPID_MAX || procfs_parse_pid(p, &ns.pids[ns.n], &p) < 0 || ns.pids[ns.n] <= 0)
			return -EBADMSG;
		ns.n++;
	}
	if (ns.n == 0)
		return -EBADMSG;
	*ret = ns;
	return 0;
}

int procfs_parse_pidfd_fdinfo(const char *fdinfo, struct procfs_nspid *ret)
{
	const char *p = procfs_status_field(fdinfo, "Pid");
	const char *end;
	pid_t pid;
	int r;

	if (!p)
		return -EBADF;
	if (procfs_parse_pid(p, &pid, &end) < 0 || (*end != '\n' && *end != '\0'))
		return -EBADMSG;
	if (pid == -1)
		return -ESRCH;
	if (pid == 0)
		return -EXDEV;
	r = procfs_parse_nspid(fdinfo, ret);
	/* Kernels before NSpid in fdinfo (5.3..5.9) name the process in the
	 * reader's namespace only. */
	if (r == -ENOENT) {
		*ret = (struct procfs_nspid){ .n = 1, .pids = { pid } };
		return 0;
	}
	if (r == 0 && ret->pids[0] != pid)
		return -EBADMSG;
	return r;
}

int procfs_read_pidfd(const char *root, int fd, struct procfs_nspid *ret)
{
	char name[32], buf[1024];
	ssize_t n;

	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	n = procfs_read(root, getpid(), name, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return procfs_parse_pidfd_fdinfo(buf, ret);
}

int procfs_read_nspid(const char *root, pid_t pid, pid_t tid, struct procfs_nspid *ret)
{
	/* status lists every supplementary group before NSpid. */
	char name[40], buf[16384];
	ssize_t n;

	if (tid)
		snprintf(name, sizeof(name), "task/%d/status", (int)tid);
	else
		snprintf(name, sizeof(name), "status");
	n = procfs_read(root, pid, name, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return procfs_parse_nspid(buf, ret);
}

int procfs_find_thread_nspid(const char *root, pid_t pid, unsigned level, pid_t named, pid_t *ret)
{
	struct procfs_ids tids = { 0 };
	int r;

	/* In the tree's own namespace the number is the task's folder name:
	 * no status file to read. */
	if (level == 0) {
		char path[PATH_MAX];
		struct stat st;

		if (named <= 0 || snprintf(path, sizeof(path), "%s/%d/task/%d", root, (int)pid, (int)named) >=
					  (int)sizeof(path))
			return named <= 0 ? -ESRCH : -ENAMETOOLONG;
		if (stat(path, &st) < 0)
			return -ESRCH;
		*ret = named;
		return 0;
	}
	r = procfs_list(root, pid, &tids);
	if (r == 0)
		r = -ESRCH;
	for (size_t i = 0; r == -ESRCH && i < tids.n; i++) {
		struct procfs_nspid ns;

		/* A thread that exits meanwhile is not the one. */
		if (procfs_read_nspid(root, pid, tids.ids[i], &ns) == 0 && ns.n > level && ns.pids[level] == named) {
			*ret = tids.ids[i];
			r = 0;
		}
	}
	procfs_ids_free(&tids);
	return r;
}

/* The identity of namespace link <root>/<pid>/ns/<name>. */
static int procfs_ns_link(const char *root, pid_t pid, const char *name, struct procfs_ns *ret)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%d/ns/%s", root, (int)pid, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*ret = (struct procfs_ns){ .dev = st.st_dev, .ino = st.st_ino };
	return 0;
}

int procfs_pidns(const char *root, pid_t pid, struct procfs_ns *ret)
{
	return procfs_ns_link(root, pid, "pid", ret);
}

int procfs_userns(const char *root, pid_t pid, struct procfs_ns *ret)
{
	return procfs_ns_link(root, pid, "user", ret);
}

int procfs_pidns_up(const char *root, pid_t pid, unsigned up, struct procfs_ns *ret)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, r = 0;

	if (!up)
		return procfs_pidns(root, pid, ret);
	if (snprintf(path, sizeof(path), "%s/%d/ns/pid", root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (unsigned i = 0; i < up && r == 0; i++) {
		int parent = ioctl(fd, NS_GET_PARENT);

		if (parent < 0)
			r = -errno;
		close(fd);
		fd = parent;
	}
	if (r == 0 && fstat(fd, &st) < 0)
		r = -errno;
	if (r == 0)
		*ret = (struct procfs_ns){ .dev = st.st_dev, .ino = st.st_ino };
	if (fd >= 0)
		close(fd);
	return r;
}

int procfs_parse_cpu_irq(const char *text, uint32_t ncpus, struct procfs_cpu_irq *ret)
{
	/* The per-CPU lines follow the "cpu " total line, one per online CPU. */
	for (const char *p = strstr(text, "\ncpu"); p; p = strstr(p, "\ncpu")) {
		uint64_t v[7];
		unsigned long cpu;
		char *end;

		p += 4;
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		cpu = strtoul(p, &end, 10);
		if (errno || *end != ' ')
			return -EBADMSG;
		p = end;
		/* user nice system idle iowait irq softirq */
		for (int i = 0; i < 7; i++) {
			errno = 0;
			v[i] = strtoull(p, &end, 10);
			if (end == p || errno)
				return -EBADMSG;
			p = end;
		}
		if (cpu < ncpus) {
			ret[cpu].irq = v[5];
			ret[cpu].softirq = v[6];
		}
	}
	return 0;
}

int procfs_read_cpu_irq(const char *root, char **buf, size_t *cap, uint32_t ncpus, struct procfs_cpu_irq *ret)
{
	char path[PATH_MAX];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/stat", root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* The file's size is unknown until read: the buffer doubles until
	 * it fits, and is kept for the next read. */
	for (;;) {
		if (!*buf) {
			*cap = *cap ? *cap : 16384;
			*buf = malloc(*cap);
			if (!*buf)
				return -ENOMEM;
		}
		n = procfs_read_path(path, *buf, *cap);
		if (n != -EFBIG)
			break;
		free(*buf);
		*buf = NULL;
		*cap *= 2;
	}
	return n < 0 ? (int)n : procfs_parse_cpu_irq(*buf, ncpus, ret);
}
