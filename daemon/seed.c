/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <sched.h>

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
static void seed_process(const char *proc, pid_t pid, uint32_t ncpus, pid_t skip_tid, struct procfs_ids *tasks,
			 __u32 *levels)
{
	if (procfs_list(proc, pid, tasks) < 0)
		return;
	for (size_t i = 0; i < tasks->n; i++) {
		struct procfs_stat t;

		if (tasks->ids[i] == skip_tid || procfs_read_stat(proc, pid, tasks->ids[i], &t) < 0 || t.state != 'R' ||
		    t.cpu >= ncpus)
			continue;
		if (seed_task_level(&t) > levels[t.cpu])
			levels[t.cpu] = seed_task_level(&t);
	}
}

int seed_scan(const char *proc, uint32_t ncpus, pid_t skip_tid, __u32 *ret_levels)
{
	struct procfs_ids procs = { 0 }, tasks = { 0 };
	int r = procfs_list(proc, 0, &procs);

	if (r == 0) {
		for (uint32_t c = 0; c < ncpus; c++)
			ret_levels[c] = LEVEL_IDLE;
		for (size_t i = 0; i < procs.n; i++)
			seed_process(proc, procs.ids[i], ncpus, skip_tid, &tasks, ret_levels);
	}
	procfs_ids_free(&procs);
	procfs_ids_free(&tasks);
	return r;
}
