/*
 * The initial level of every CPU, from /proc: what the map must say before
 * the first scheduler event reaches a CPU. Needed because the BPF writers
 * only learn about a CPU when it switches, wakes a task or changes a
 * priority; a CPU that runs one SCHED_FIFO spinner does none of those.
 */
#ifndef RTPLACE_SEED_H
#define RTPLACE_SEED_H

#include <linux/types.h>
#include <stdint.h>

/*
 * Levels of CPUs 0..ncpus-1 from the runnable threads under proc (normally
 * "/proc"): the highest level among threads in state R on each CPU (RT
 * prio, deadline), normal when only fair threads are runnable there, idle
 * when none is. ret_levels has ncpus entries. Returns 0, -ENOENT/-EACCES when
 * proc cannot be read, -ENOMEM.
 */
int seed_scan(const char *proc, uint32_t ncpus, __u32 *ret_levels);

#endif
