/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Applies a move to one thread (DESIGN §7): affinity first, then policy and
 * priority, and if the second step fails the first is undone, so a move
 * either happens whole or not at all. Authorisation (auth.c) and the
 * re-check of the target CPU's level happen before, in the caller; this
 * file only talks to the kernel.
 *
 * Affinity goes first because it is the step that can be undone without
 * side effects: a thread raised to RT on its old CPU could preempt whatever
 * runs there before it is moved away, while a thread moved and then refused
 * RT has merely run a little while on the new CPU at its old priority.
 */
#ifndef RTPLACE_THREAD_SCHED_H
#define RTPLACE_THREAD_SCHED_H

#include <stdbool.h>
#include <sys/types.h>

#include "cpuset.h"

/* want_policy for a move that leaves policy and priority alone. */
#define THREAD_SCHED_KEEP_POLICY (-1)

struct thread_sched_state {
	struct rtplace_cpumask cpus;  /* affinity (CPU ids below RTPLACE_MAX_CPUS) */
	int policy;          /* SCHED_*, the reset-on-fork flag not included */
	int prio;            /* sched_priority: 1..99 for FIFO/RR, else 0 */
};

struct thread_sched_result {
	struct thread_sched_state prev; /* before the move */
	struct thread_sched_state now;  /* after it: affinity read back from the kernel */
	bool set_affinity;       /* affinity was changed */
	bool set_sched;          /* policy/priority were changed */
};

/* Policy, priority and SCHED_RESET_ON_FORK (or 0) of thread tid in one
 * sched_getattr(), the daemon's one caller of it. 0 or -errno. */
int thread_sched_getattr(pid_t tid, int *ret_policy, int *ret_prio, int *ret_reset_on_fork);

/* Reads tid's affinity, policy and priority. 0, -ESRCH for a vanished
 * thread, another -errno from the kernel. */
int thread_sched_read(pid_t tid, struct thread_sched_state *ret);

/*
 * Moves tid: sets its affinity to *cpus (NULL: keep), then its policy to
 * want_policy (SCHED_FIFO or SCHED_RR; THREAD_SCHED_KEEP_POLICY: keep) at want_prio,
 * keeping its reset-on-fork flag. At least one of the two must change
 * something. Returns 0 with *ret filled; -EINVAL for a request that changes
 * nothing or an empty set; -ESRCH when the thread is gone; otherwise the
 * -errno of the failed step, with the affinity restored when the second
 * step failed. -ENOTRECOVERABLE when even that restore failed (and not
 * because the thread vanished): the thread is left on the new CPUs.
 */
int thread_sched_apply(pid_t tid, const struct rtplace_cpumask *cpus, int want_policy, int want_prio,
		struct thread_sched_result *ret);

/* Policy, priority and reset-on-fork flag of a thread as its caller just
 * read them (thread_sched_getattr()). */
struct thread_sched_policy {
	int policy;
	int prio;
	int reset_on_fork;   /* SCHED_RESET_ON_FORK or 0 */
};

/*
 * thread_sched_apply() for a caller that has just read tid's policy (to
 * authorise the move): known is taken as the state before the move
 * instead of reading it again; only the affinity is read.
 */
int thread_sched_apply_known(pid_t tid, const struct thread_sched_policy *known, const struct rtplace_cpumask *cpus,
			     int want_policy, int want_prio, struct thread_sched_result *ret);

/*
 * Undoes a move that thread_sched_apply() reported in *res: policy and priority
 * back first (if they were changed), then the affinity, the reverse of the
 * order they were applied in. 0, -ESRCH when the thread is gone, another
 * -errno from the kernel (a SCHED_DEADLINE thread moved to FIFO cannot be
 * given its deadline parameters back this way).
 */
int thread_sched_undo(pid_t tid, const struct thread_sched_result *res);

#endif
