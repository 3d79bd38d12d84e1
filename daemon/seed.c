#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "levels.h"
#include "seed.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

/* Fields of /proc/PID/stat (proc(5)), numbered from 1 as the man page does. */
enum {
	SEED_FIELD_STATE = 3,
	SEED_FIELD_PRIORITY = 18,  /* task_struct.prio - MAX_RT_PRIO */
	SEED_FIELD_PROCESSOR = 39,
	SEED_FIELD_POLICY = 41,
};

int seed_parse_stat(const char *line, struct seed_task *ret)
{
	/* The comm may hold anything, ')' included: fields start after the last one. */
	const char *p = strrchr(line, ')');
	struct seed_task t = { 0 };
	long long v;
	char *end;

	if (!p || p[1] != ' ' || !isalpha((unsigned char)p[2]))
		return -EINVAL;
	t.state = p[2];
	p += 3;
	for (int field = SEED_FIELD_STATE + 1; field <= SEED_FIELD_POLICY; field++) {
		/* Some fields are unsigned 64-bit (rsslim is often ULONG_MAX): an
		 * out-of-range value saturates, which only matters for fields we
		 * skip. */
		v = strtoll(p, &end, 10);
		if (end == p)
			return -EINVAL;
		p = end;
		if (field == SEED_FIELD_PRIORITY)
			t.prio = (int)v + LEVEL_KERNEL_MAX_RT_PRIO;
		else if (field == SEED_FIELD_PROCESSOR)
			t.cpu = (uint32_t)v;
		else if (field == SEED_FIELD_POLICY)
			t.policy = (int)v;
	}
	*ret = t;
	return 0;
}

static __u32 seed_task_level(const struct seed_task *t)
{
	if (t->policy == SCHED_DEADLINE)
		return LEVEL_DL;
	return level_from_kernel_prio(t->prio);
}

/* Folds the runnable threads of one process into levels. Threads and
 * processes that exit while we read are skipped: they no longer weigh on a
 * CPU. */
static void seed_process(int procfd, const char *pid, uint32_t ncpus, __u32 *levels)
{
	char path[NAME_MAX + 16], line[4096];
	struct dirent *de;
	DIR *tasks;
	int fd;

	snprintf(path, sizeof(path), "%s/task", pid);
	fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	tasks = fdopendir(fd);
	if (!tasks) {
		close(fd);
		return;
	}
	while ((de = readdir(tasks))) {
		struct seed_task t;
		ssize_t n;
		int sfd;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/stat", de->d_name);
		sfd = openat(dirfd(tasks), path, O_RDONLY | O_CLOEXEC);
		if (sfd < 0)
			continue;
		n = read(sfd, line, sizeof(line) - 1);
		close(sfd);
		if (n <= 0)
			continue;
		line[n] = '\0';
		if (seed_parse_stat(line, &t) < 0 || t.state != 'R' || t.cpu >= ncpus)
			continue;
		if (seed_task_level(&t) > levels[t.cpu])
			levels[t.cpu] = seed_task_level(&t);
	}
	closedir(tasks);
}

int seed_scan(const char *proc, uint32_t ncpus, __u32 *ret_levels)
{
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dir = opendir(proc);
	if (!dir)
		return -errno;
	for (uint32_t c = 0; c < ncpus; c++)
		ret_levels[c] = LEVEL_IDLE;
	errno = 0;
	while ((de = readdir(dir))) {
		if (isdigit((unsigned char)de->d_name[0]))
			seed_process(dirfd(dir), de->d_name, ncpus, ret_levels);
		errno = 0;
	}
	if (errno)
		r = -errno;
	closedir(dir);
	return r;
}
