/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The level of every CPU, from /proc: what the map must say before the
 * first scheduler event reaches a CPU (the BPF writers only learn about a
 * CPU when it switches, wakes a task or changes a priority; a CPU that runs
 * one SCHED_FIFO spinner does none of those), and, without BPF, the whole
 * map at every sample (sampler.h). One reader for both.
 */
#ifndef RTPLACE_SEED_H
#define RTPLACE_SEED_H

#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Levels of CPUs 0..ncpus-1 from the runnable threads under proc (normally
 * "/proc"): the highest level among threads in state R on each CPU (RT
 * prio, deadline), normal when only fair threads are runnable there, idle
 * when none is. Thread skip_tid (0: none) is left out: the caller's own,
 * runnable on its CPU while it reads, and nowhere once it sleeps again.
 * ret_levels has ncpus entries. Returns 0, -ENOENT/-EACCES when proc cannot
 * be read, -ENOMEM.
 */
int seed_scan(const char *proc, uint32_t ncpus, pid_t skip_tid, __u32 *ret_levels);

#endif
