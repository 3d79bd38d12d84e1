/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RealtimeKit's grants: the target read from the kernel, the decision
 * (rtkit-rules.c) and acting on the thread. A thread made RT gets a CPU
 * of its own where placement has one below its priority, under a claim
 * owner-bound to its process (engine_claim_cpu()), and is recorded in
 * the table of threads holding a grant (rtkit-threads.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "auth.h"
#include "levels.h"
#include "log.h"
#include "procfs.h"
#include "rtbudget.h"
#include "rtkit-internal.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* A pidfd of process pid: the caller's own, which rtkit_caller_pin() held
 * since the call, when pid is the caller's; else one opened now. */
static int rtkit_grant_process_fd(const struct rtkit_caller *caller, pid_t pid)
{
	int fd = pid == caller->pid && caller->pidfd >= 0 ? fcntl(caller->pidfd, F_DUPFD_CLOEXEC, 3)
							  : (int)syscall(SYS_pidfd_open, pid, 0);

	return fd >= 0 ? fd : errno == EINVAL ? -ESRCH : -errno;
}

/* The target of a request: process pid and thread tid, their owner and the
 * process's RT time limit, and the thread's start time (its identity with
 * tid, for rtkit_grant_verify()). The pidfds come back open (-1 where the
 * kernel has none) for the caller to confirm and keep. */
static int rtkit_grant_target(struct rtkit *k, const struct rtkit_caller *caller, pid_t pid, pid_t tid,
			      struct rtkit_target *ret, uint64_t *ret_start, int *ret_pfd, int *ret_tfd,
			      enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct auth_target at;
	struct procfs_stat st;
	char limits[4096];
	ssize_t n;
	int pfd, tfd, r;

	*ret_pfd = *ret_tfd = -1;
	*why = RTKIT_REFUSE_GONE;
	pfd = rtkit_grant_process_fd(caller, pid);
	if (pfd < 0) {
		reason_set(reason, "no process %d", (int)pid);
		return pfd;
	}
	*ret_pfd = pfd;
	tfd = auth_target_pidfd(tid);
	if (tfd == -ESRCH) {
		reason_set(reason, "no thread %d", (int)tid);
		return -ESRCH;
	}
	*ret_tfd = tfd >= 0 ? tfd : -1;
	/* Before the owner: the live read confirms the pidfd last. */
	r = procfs_read_stat(k->o.proc_root, tid, tid, &st);
	if (r == 0)
		r = tfd >= 0 ? auth_target_read_live(tfd, tid, false, &at) : -EOPNOTSUPP;
	if (r == -EOPNOTSUPP)
		r = auth_target_read(k->o.proc_root, tid, &at);
	if (r == 0) {
		n = procfs_read(k->o.proc_root, pid, "limits", limits, sizeof(limits));
		r = n < 0 ? (int)n : rtkit_rules_parse_rttime(limits, &ret->rttime_hard);
	}
	if (r < 0) {
		if (r != -ESRCH)
			*why = RTKIT_REFUSE_FAILED;
		reason_set(reason, "cannot read thread %d of process %d: %s", (int)tid, (int)pid, strerror(-r));
		return r;
	}
	ret->caller_uid = caller->uid;
	ret->pid = pid;
	ret->tid = tid;
	ret->uid = at.uid;
	ret->euid = at.euid;
	ret->thread_tgid = at.tgid;
	*ret_start = st.start_time;
	*why = RTKIT_REFUSE_COUNT;
	return 0;
}

/*
 * After acting on tid: whether tid still named the thread the grant
 * checked. No system call acts on a thread through its pidfd, so the act
 * goes by tid, and the identity is checked after it: with the thread's
 * pidfd, the thread has not exited (a live thread's tid is its own, so
 * the act reached it); without one (before Linux 6.9), the task at tid
 * has the start time read before the checks, as rtkit checks. 0, or
 * -ESRCH when the thread exited, with *ret_other set when tid names
 * another task by now, which the act may have reached.
 */
static int rtkit_grant_verify(const struct rtkit *k, pid_t tid, int tfd, uint64_t start, bool *ret_other)
{
	struct procfs_stat st;

	*ret_other = false;
	if (tfd >= 0 && !rtkit_threads_exited(tfd))
		return 0;
	if (procfs_read_stat(k->o.proc_root, tid, tid, &st) < 0)
		return -ESRCH;
	if (st.start_time == start)
		return tfd >= 0 ? -ESRCH : 0;
	*ret_other = true;
	return -ESRCH;
}

/* What the task at a tid had just before a grant acted on it. */
struct rtkit_grant_prior {
	struct thread_sched_result res; /* policy and priority; affinity where the act pinned */
	int reset_on_fork;
	int nice;
};

/* Reads prior's policy, priority, reset-on-fork flag and nice level. */
static int rtkit_grant_prior_read(pid_t tid, struct rtkit_grant_prior *prior)
{
	int r = thread_sched_getattr(tid, &prior->res.prev.policy, &prior->res.prev.prio, &prior->reset_on_fork);

	if (r < 0)
		return r;
	errno = 0;
	prior->nice = getpriority(PRIO_PROCESS, (id_t)tid);
	return errno ? -errno : 0;
}

/*
 * The grant's thread exited before the act and tid names another task:
 * what the act did to it is undone, back to what that task had just
 * before, if it carries the act still (is_ours). Without this it would
 * stay RT or niced, pinned, maybe another user's.
 */
static void rtkit_grant_undo_other(pid_t tid, const struct rtkit_grant_prior *prior, bool is_ours)
{
	struct sched_param sp = { .sched_priority = prior->res.prev.prio };
	struct thread_sched_result affinity = prior->res;
	int r = 0;

	if (!is_ours)
		return;
	affinity.set_sched = false;
	if (sched_setscheduler(tid, prior->res.prev.policy | prior->reset_on_fork, &sp) < 0 ||
	    setpriority(PRIO_PROCESS, (id_t)tid, prior->nice) < 0)
		r = -errno;
	if (r == 0)
		r = thread_sched_undo(tid, &affinity);
	if (r < 0 && r != -ESRCH)
		log_warning("RealtimeKit: thread %d exited under its grant and its tid names another task, which the "
			    "grant reached; failed to undo that: %s",
			    (int)tid, strerror(-r));
	else
		log_notice("RealtimeKit: thread %d exited under its grant and its tid names another task, which the "
			   "grant reached; undone",
			   (int)tid);
}

/* The name of a policy a grant gives ([rtkit] scheduling-policy). */
static const char *rtkit_grant_policy_name(int policy)
{
	return policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR";
}

/* Whether tid carries policy at prio with SCHED_RESET_ON_FORK, as a grant
 * leaves it. */
static bool rtkit_grant_is_rt(pid_t tid, int policy, uint32_t prio)
{
	int now, p, reset_on_fork;

	return thread_sched_getattr(tid, &now, &p, &reset_on_fork) == 0 && now == policy &&
	       p == (int)prio && reset_on_fork;
}

/*
 * Pins tid to cpu (-1: leaves its affinity) and gives it policy
 * (SCHED_RR or SCHED_FIFO) at prio, its children back to SCHED_OTHER.
 * *ret_prior says what the task at tid had just before, for an undo;
 * res->prev its affinity. 0 or -errno, with nothing changed.
 */
static int rtkit_grant_act(pid_t tid, int cpu, int policy, uint32_t prio, struct rtkit_grant_prior *ret_prior,
			   struct thread_sched_result *res)
{
	struct sched_param sp = { .sched_priority = (int)prio };
	struct rtkit_grant_prior prior = { .nice = 0 };
	int r = rtkit_grant_prior_read(tid, &prior);

	*res = (struct thread_sched_result){ 0 };
	if (r == 0 && cpu >= 0) {
		struct rtplace_cpumask one = { 0 };

		cpuset_set(&one, (unsigned)cpu);
		r = thread_sched_apply(tid, &one, THREAD_SCHED_KEEP_POLICY, 0, res);
	}
	if (r < 0)
		return r;
	if (sched_setscheduler(tid, policy | SCHED_RESET_ON_FORK, &sp) < 0) {
		r = -errno;
		thread_sched_undo(tid, res);
		return r;
	}
	prior.res.prev.cpus = res->prev.cpus;
	prior.res.set_affinity = res->set_affinity;
	*ret_prior = prior;
	return 0;
}

/*
 * After the kernel refused tid real-time with EPERM although the rules
 * allowed it: a cpu cgroup without an RT budget is the usual cause, and
 * the caller (PipeWire's log, a user's terminal) gets the folder and the
 * fix in the error. Returns whether that was the cause.
 */
static bool rtkit_grant_explain_budget(const struct rtkit *k, pid_t tid, struct rtplace_reason *reason)
{
	char cgroup[4096];
	struct rtbudget_finding f;

	if (procfs_read(k->o.proc_root, tid, "cgroup", cgroup, sizeof(cgroup)) < 0 ||
	    rtbudget_find(cgroup, RTBUDGET_CGROUP_ROOT, &f) < 0)
		return false;
	rtbudget_explain(&f, reason);
	return true;
}

/* The process behind pfd still lives: what was read by its pid was its. */
static int rtkit_grant_confirm(struct rtkit *k, int pfd, pid_t pid, struct rtplace_reason *reason)
{
	struct procfs_nspid ns;
	int r = procfs_read_pidfd(k->o.proc_root, pfd, &ns);

	if (r == 0 && ns.pids[0] != pid)
		r = -ESRCH;
	if (r < 0)
		reason_set(reason, "process %d exited", (int)pid);
	return r;
}

/*
 * rtkit_grant_act(), then rtkit_grant_verify(): what the act did to
 * another task that took tid meanwhile is undone. 0 with *res as
 * rtkit_grant_act() leaves it, or -errno with reason set (-ESRCH: the
 * thread exited).
 */
static int rtkit_grant_act_verified(const struct rtkit *k, pid_t tid, int tfd, uint64_t start, int cpu, int policy,
				    uint32_t prio, struct thread_sched_result *res, struct rtplace_reason *reason)
{
	struct rtkit_grant_prior prior;
	bool other;
	int r = rtkit_grant_act(tid, cpu, policy, prio, &prior, res);

	if (r < 0) {
		if (!(r == -EPERM && rtkit_grant_explain_budget(k, tid, reason)))
			reason_set(reason, "cannot make thread %d %s: %s", (int)tid, rtkit_grant_policy_name(policy),
				   strerror(-r));
		return r;
	}
	r = rtkit_grant_verify(k, tid, tfd, start, &other);
	if (other)
		rtkit_grant_undo_other(tid, &prior, rtkit_grant_is_rt(tid, policy, prio));
	if (r < 0)
		reason_set(reason, "thread %d exited", (int)tid);
	return r;
}

int rtkit_grant_realtime(struct rtkit *k, const struct rtkit_caller *caller, pid_t pid, pid_t tid, uint32_t prio,
			 enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct rtkit_target target;
	struct rtkit_use use;
	struct thread_sched_state st;
	struct thread_sched_result res = { 0 };
	struct rtplace_reason unpinned;
	uint64_t start;
	int policy = k->cfg.scheduling_policy;
	uint32_t claim_id = 0;
	bool was_pinned = false;
	int pfd, tfd, cpu = -1, held, r;

	if (pid == 0)
		pid = caller->pid;
	r = rtkit_grant_target(k, caller, pid, tid, &target, &start, &pfd, &tfd, why, reason);
	if (r < 0)
		goto out;
	rtkit_threads_count(k, caller->uid, pid, tid, &use);
	r = rtkit_rules_realtime(&k->cfg, &target, prio, &use, why, reason);
	if (r == 0)
		r = rtkit_grant_confirm(k, pfd, pid, reason);
	if (r == 0)
		r = thread_sched_read(tid, &st);
	if (r < 0) {
		if (*why == RTKIT_REFUSE_COUNT)
			*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
		if (!reason->text[0])
			reason_set(reason, "cannot read thread %d: %s", (int)tid, strerror(-r));
		goto out;
	}
	/* A thread granted before is placed again for its new priority, from
	 * the affinity and policy it had before its first grant: what
	 * ResetKnown gives back. */
	held = rtkit_threads_find(k, tid);
	if (held >= 0) {
		st = k->threads[held].res.prev;
		was_pinned = k->threads[held].res.set_affinity;
		rtkit_threads_drop(k, (unsigned)held);
	}
	if (k->nthreads == RTKIT_THREADS_MAX) {
		*why = RTKIT_REFUSE_FAILED;
		reason_set(reason, "rtplaced holds %u RealtimeKit threads already", RTKIT_THREADS_MAX);
		r = -ENOSPC;
		goto out;
	}
	r = engine_claim_cpu(k->o.engine, pid, caller->uid, level_from_rt_priority((int)prio), &st.cpus, &cpu,
			     &claim_id, &unpinned);
	if (r < 0) {
		cpu = -1;
		k->stats.unpinned++;
		log_ratelimited(LOG_NOTICE, "RealtimeKit: thread %d of process %d gets rt%u without a CPU of its own: %s",
				(int)tid, (int)pid, (unsigned)prio, unpinned.text);
	}
	rtkit_test_hold("RTPLACED_TEST_RTKIT_HOLD", "acting on thread", tid);
	r = rtkit_grant_act_verified(k, tid, tfd, start, cpu, policy, prio, &res, reason);
	if (r < 0) {
		if (claim_id)
			engine_end_claim(k->o.engine, claim_id);
		*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
		goto out;
	}
	res.prev = st;
	res.set_affinity |= was_pinned;
	res.set_sched = true;
	rtkit_threads_add(k, &(struct rtkit_thread){
		.pid = pid, .tid = tid, .uid = caller->uid, .owner = target.euid, .pidfd = tfd, .start = start,
		.claim_id = claim_id, .res = res, .cpu = -1,
	});
	tfd = -1;
	k->stats.granted_rt++;
	if (cpu >= 0)
		log_info("RealtimeKit: thread %d of process %d (uid %u) is %s %u on CPU %d (claim %u)", (int)tid,
			 (int)pid, (unsigned)caller->uid, rtkit_grant_policy_name(policy), (unsigned)prio, cpu, claim_id);
	else
		log_info("RealtimeKit: thread %d of process %d (uid %u) is %s %u, not pinned", (int)tid, (int)pid,
			 (unsigned)caller->uid, rtkit_grant_policy_name(policy), (unsigned)prio);
out:
	if (pfd >= 0)
		close(pfd);
	if (tfd >= 0)
		close(tfd);
	return r;
}

int rtkit_grant_nice(struct rtkit *k, const struct rtkit_caller *caller, pid_t pid, pid_t tid, int32_t nice,
		     enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct rtkit_target target;
	struct sched_param sp = { 0 };
	struct rtkit_grant_prior prior = { .nice = 0 };
	uint64_t start;
	bool other;
	int pfd, tfd, r;

	if (pid == 0)
		pid = caller->pid;
	r = rtkit_grant_target(k, caller, pid, tid, &target, &start, &pfd, &tfd, why, reason);
	if (r == 0)
		r = rtkit_rules_nice(&k->cfg, &target, nice, why, reason);
	if (r == 0)
		r = rtkit_grant_confirm(k, pfd, pid, reason);
	if (r == 0) {
		r = rtkit_grant_prior_read(tid, &prior);
		/* As rtkit: a normal thread, its children back to nice 0. */
		if (r < 0 || sched_setscheduler(tid, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp) < 0 ||
		    setpriority(PRIO_PROCESS, (id_t)tid, nice) < 0) {
			r = r < 0 ? r : -errno;
			*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
			reason_set(reason, "cannot set nice level %d on thread %d: %s", (int)nice, (int)tid,
				   strerror(-r));
		} else {
			r = rtkit_grant_verify(k, tid, tfd, start, &other);
			errno = 0;
			if (other)
				rtkit_grant_undo_other(tid, &prior,
						       getpriority(PRIO_PROCESS, (id_t)tid) == nice && errno == 0);
			if (r < 0) {
				*why = RTKIT_REFUSE_GONE;
				reason_set(reason, "thread %d exited", (int)tid);
			}
		}
	}
	if (r == 0) {
		k->stats.granted_nice++;
		log_info("RealtimeKit: thread %d of process %d (uid %u) has nice level %d", (int)tid, (int)pid,
			 (unsigned)caller->uid, (int)nice);
	}
	if (pfd >= 0)
		close(pfd);
	if (tfd >= 0)
		close(tfd);
	return r;
}

void rtkit_grant_reset_known(struct rtkit *k)
{
	while (k->nthreads) {
		struct rtkit_thread *t = &k->threads[k->nthreads - 1];

		int r = rtkit_threads_same(k, t) ? thread_sched_undo(t->tid, &t->res) : 0;

		if (r < 0 && r != -ESRCH)
			log_warning("RealtimeKit: failed to reset thread %d: %s", (int)t->tid, strerror(-r));
		rtkit_threads_drop(k, k->nthreads - 1);
	}
}

void rtkit_grant_reset_all(struct rtkit *k)
{
	struct procfs_ids procs = { 0 }, tids = { 0 };
	struct sched_param sp = { 0 };
	unsigned reset = 0;

	rtkit_grant_reset_known(k);
	if (procfs_list(k->o.proc_root, 0, &procs) < 0)
		goto out;
	for (size_t i = 0; i < procs.n; i++) {
		if (procfs_list(k->o.proc_root, procs.ids[i], &tids) < 0)
			continue;
		for (size_t j = 0; j < tids.n; j++) {
			struct procfs_stat st;
			struct auth_target at;
			bool rt, niced;

			if (procfs_read_stat(k->o.proc_root, procs.ids[i], tids.ids[j], &st) < 0 ||
			    st.flags & PROCFS_PF_KTHREAD)
				continue;
			rt = st.policy == SCHED_FIFO || st.policy == SCHED_RR;
			niced = !rt && st.prio < 120;
			if (!rt && !niced)
				continue;
			if (auth_target_read(k->o.proc_root, tids.ids[j], &at) < 0 || at.uid == 0)
				continue;
			if (rt && sched_setscheduler(tids.ids[j], SCHED_OTHER, &sp) < 0)
				continue;
			setpriority(PRIO_PROCESS, (id_t)tids.ids[j], 0);
			reset++;
		}
	}
	log_notice("RealtimeKit: ResetAll reset %u threads", reset);
out:
	procfs_ids_free(&procs);
	procfs_ids_free(&tids);
}

