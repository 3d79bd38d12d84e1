/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Moves threads with sched_setaffinity and sched_setscheduler, undoing the
 * first when the second fails (order and why in thread-sched.h).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thread-sched.h"

/* glibc's cpu_set_t is an array of unsigned long with CPU i at bit i % 64
 * of word i / 64 on LP64, which is exactly struct rtplace_cpumask: the kernel takes
 * a set of any length, so a cpuset is passed as it is, every CPU rtplace
 * names (a per-CPU loop cost more than the syscall it feeds). */
_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "LP64: cpu_set_t words are 64-bit");
_Static_assert(sizeof(struct rtplace_cpumask) % sizeof(unsigned long) == 0, "a cpuset is whole cpu_set_t words");

/* sched_getattr()'s struct, which glibc does not declare; the fields read
 * here are in every version of it. */
struct thread_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};
#define THREAD_SCHED_FLAG_RESET_ON_FORK 0x01

static int thread_sched_set_affinity(pid_t tid, const struct rtplace_cpumask *cpus)
{
	return sched_setaffinity(tid, sizeof(*cpus), (const cpu_set_t *)(const void *)cpus) < 0 ? -errno : 0;
}

int thread_sched_getattr(pid_t tid, int *ret_policy, int *ret_prio, int *ret_reset_on_fork)
{
	struct thread_sched_attr attr;

	/* One call for policy, priority and the flag, not three. */
	if (syscall(SYS_sched_getattr, tid, &attr, sizeof(attr), 0) < 0)
		return -errno;
	*ret_policy = (int)attr.sched_policy;
	*ret_prio = (int)attr.sched_priority;
	*ret_reset_on_fork = attr.sched_flags & THREAD_SCHED_FLAG_RESET_ON_FORK ? SCHED_RESET_ON_FORK : 0;
	return 0;
}

static int thread_sched_get_affinity(pid_t tid, struct rtplace_cpumask *ret)
{
	struct rtplace_cpumask set;

	if (sched_getaffinity(tid, sizeof(set), (cpu_set_t *)(void *)&set) < 0)
		return -errno;
	*ret = set;
	return 0;
}

/* As thread_sched_read, and the reset-on-fork flag to keep across a change. */
static int thread_sched_read_flags(pid_t tid, struct thread_sched_state *ret, int *ret_reset_on_fork)
{
	struct thread_sched_state st;
	int r = thread_sched_get_affinity(tid, &st.cpus);

	if (r == 0)
		r = thread_sched_getattr(tid, &st.policy, &st.prio, ret_reset_on_fork);
	if (r == 0)
		*ret = st;
	return r;
}

int thread_sched_read(pid_t tid, struct thread_sched_state *ret)
{
	int reset_on_fork;

	if (tid <= 0)
		return -EINVAL;
	return thread_sched_read_flags(tid, ret, &reset_on_fork);
}

int thread_sched_apply(pid_t tid, const struct rtplace_cpumask *cpus, int want_policy, int want_prio,
		struct thread_sched_result *ret)
{
	return thread_sched_apply_known(tid, NULL, cpus, want_policy, want_prio, ret);
}

int thread_sched_apply_known(pid_t tid, const struct thread_sched_policy *known, const struct rtplace_cpumask *cpus,
			     int want_policy, int want_prio, struct thread_sched_result *ret)
{
	struct thread_sched_result res = { 0 };
	int reset_on_fork, r;

	if (tid <= 0 || (!cpus && want_policy == THREAD_SCHED_KEEP_POLICY) || (cpus && cpuset_empty(cpus)))
		return -EINVAL;
	if (want_policy != THREAD_SCHED_KEEP_POLICY && want_policy != SCHED_FIFO && want_policy != SCHED_RR)
		return -EINVAL;

	if (known) {
		r = thread_sched_get_affinity(tid, &res.prev.cpus);
		res.prev.policy = known->policy;
		res.prev.prio = known->prio;
		reset_on_fork = known->reset_on_fork;
	} else {
		r = thread_sched_read_flags(tid, &res.prev, &reset_on_fork);
	}
	if (r < 0)
		return r;

	if (cpus) {
		r = thread_sched_set_affinity(tid, cpus);
		if (r < 0)
			return r;
		res.set_affinity = true;
	}

	if (want_policy != THREAD_SCHED_KEEP_POLICY) {
		struct sched_param sp = { .sched_priority = want_prio };

		if (sched_setscheduler(tid, want_policy | reset_on_fork, &sp) < 0) {
			r = -errno;
			if (res.set_affinity) {
				int undo = thread_sched_set_affinity(tid, &res.prev.cpus);

				/* A thread that exited meanwhile needs no undo. */
				if (undo < 0 && undo != -ESRCH)
					r = -ENOTRECOVERABLE;
			}
			return r;
		}
		res.set_sched = true;
	}

	/* Read the affinity back: the kernel narrows it to the thread's
	 * cpuset and online CPUs, and the caller reports what is, not what was
	 * asked (even for one CPU: a cpuset changed under the call leaves the
	 * thread on the whole cpuset). Policy and priority are exactly what
	 * the kernel accepted. */
	res.now = res.prev;
	if (res.set_sched) {
		res.now.policy = want_policy;
		res.now.prio = want_prio;
	}
	if (res.set_affinity) {
		r = thread_sched_get_affinity(tid, &res.now.cpus);
		if (r < 0)
			return r;
	}
	*ret = res;
	return 0;
}

int thread_sched_undo(pid_t tid, const struct thread_sched_result *res)
{
	if (tid <= 0)
		return -EINVAL;
	if (res->set_sched) {
		struct sched_param sp = { .sched_priority = res->prev.prio };
		int policy = sched_getscheduler(tid);

		if (policy < 0 || sched_setscheduler(tid, res->prev.policy | (policy & SCHED_RESET_ON_FORK), &sp) < 0)
			return -errno;
	}
	if (res->set_affinity)
		return thread_sched_set_affinity(tid, &res->prev.cpus);
	return 0;
}
