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
#include "procfs.h"
#include "seed.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

static __u32 seed_task_level(const struct procfs_stat *t)
{
	if (t->policy == SCHED_DEADLINE)
		return LEVEL_DL;
	return level_from_kernel_prio(t->prio);
}

/* Folds the runnable threads of one process into levels. Threads and
 * processes that exit while we read are skipped: they no longer weigh on a
 * CPU. */
static void seed_process(const char *proc, pid_t pid, uint32_t ncpus, __u32 *levels)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *tasks;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	tasks = opendir(path);
	if (!tasks)
		return;
	while ((de = readdir(tasks))) {
		struct procfs_stat t;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (procfs_read_stat(proc, pid, (pid_t)atoi(de->d_name), &t) < 0 || t.state != 'R' || t.cpu >= ncpus)
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
			seed_process(proc, (pid_t)atoi(de->d_name), ncpus, ret_levels);
		errno = 0;
	}
	if (errno)
		r = -errno;
	closedir(dir);
	return r;
}
