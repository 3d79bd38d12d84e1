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
#include <sched.h>
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

/* The target of a request: process pid and thread tid, their owner and the
 * process's RT time limit. The pidfds come back open (-1 where the kernel
 * has none) for the caller to confirm and keep. */
static int rtkit_grant_target(struct rtkit *k, uid_t caller, pid_t pid, pid_t tid, struct rtkit_target *ret,
			     int *ret_pfd, int *ret_tfd, enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct auth_target at;
	char limits[4096];
	ssize_t n;
	int pfd, tfd, r;

	*ret_pfd = *ret_tfd = -1;
	*why = RTKIT_REFUSE_GONE;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0) {
		r = errno == EINVAL ? -ESRCH : -errno;
		reason_set(reason, "no process %d", (int)pid);
		return r;
	}
	*ret_pfd = pfd;
	tfd = auth_target_pidfd(tid);
	if (tfd == -ESRCH) {
		reason_set(reason, "no thread %d", (int)tid);
		return -ESRCH;
	}
	*ret_tfd = tfd >= 0 ? tfd : -1;
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
	ret->caller_uid = caller;
	ret->pid = pid;
	ret->uid = at.uid;
	ret->euid = at.euid;
	ret->thread_tgid = at.tgid;
	*why = RTKIT_REFUSE_COUNT;
	return 0;
}

/*
 * After the kernel refused tid SCHED_RR with EPERM although the rules
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

int rtkit_grant_realtime(struct rtkit *k, uid_t caller, pid_t pid, pid_t tid, uint32_t prio,
			 enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct rtkit_target target;
	struct rtkit_use use;
	struct thread_sched_state st;
	struct thread_sched_result res = { 0 };
	struct rtplace_reason unpinned;
	struct sched_param sp = { .sched_priority = (int)prio };
	uint32_t claim_id = 0;
	bool was_pinned = false;
	int pfd, tfd, cpu = -1, held, r;

	r = rtkit_grant_target(k, caller, pid, tid, &target, &pfd, &tfd, why, reason);
	if (r < 0)
		goto out;
	rtkit_threads_count(k, caller, pid, tid, &use);
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
	r = engine_claim_cpu(k->o.engine, pid, caller, level_from_rt_priority((int)prio), &st.cpus, &cpu,
			     &claim_id, &unpinned);
	if (r < 0) {
		cpu = -1;
		k->stats.unpinned++;
		log_ratelimited(LOG_NOTICE, "RealtimeKit: thread %d of process %d gets rt%u without a CPU of its own: %s",
				(int)tid, (int)pid, (unsigned)prio, unpinned.text);
	}
	if (cpu >= 0) {
		struct rtplace_cpumask one = { 0 };

		cpuset_set(&one, (unsigned)cpu);
		r = thread_sched_apply(tid, &one, THREAD_SCHED_KEEP_POLICY, 0, &res);
	} else {
		r = 0;
	}
	if (r == 0 && sched_setscheduler(tid, SCHED_RR | SCHED_RESET_ON_FORK, &sp) < 0) {
		r = -errno;
		thread_sched_undo(tid, &res);
	}
	/* Acted on by tid, checked through the pidfd just before: a thread
	 * that exited in between is refused as gone and not recorded (as
	 * rtkit checks the thread's start time after acting). */
	if (r == 0 && rtkit_threads_exited(tfd))
		r = -ESRCH;
	if (r < 0) {
		if (claim_id)
			engine_end_claim(k->o.engine, claim_id);
		*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
		if (!(r == -EPERM && rtkit_grant_explain_budget(k, tid, reason)))
			reason_set(reason, "cannot make thread %d SCHED_RR: %s", (int)tid, strerror(-r));
		goto out;
	}
	res.prev = st;
	res.set_affinity |= was_pinned;
	res.set_sched = true;
	rtkit_threads_add(k, &(struct rtkit_thread){
		.pid = pid, .tid = tid, .uid = caller, .owner = target.euid, .pidfd = tfd, .claim_id = claim_id,
		.res = res, .cpu = -1,
	});
	tfd = -1;
	k->stats.granted_rt++;
	if (cpu >= 0)
		log_info("RealtimeKit: thread %d of process %d (uid %u) is SCHED_RR %u on CPU %d (claim %u)", (int)tid,
			 (int)pid, (unsigned)caller, (unsigned)prio, cpu, claim_id);
	else
		log_info("RealtimeKit: thread %d of process %d (uid %u) is SCHED_RR %u, not pinned", (int)tid, (int)pid,
			 (unsigned)caller, (unsigned)prio);
out:
	if (pfd >= 0)
		close(pfd);
	if (tfd >= 0)
		close(tfd);
	return r;
}

int rtkit_grant_nice(struct rtkit *k, uid_t caller, pid_t pid, pid_t tid, int32_t nice,
		     enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct rtkit_target target;
	struct sched_param sp = { 0 };
	int pfd, tfd, r;

	r = rtkit_grant_target(k, caller, pid, tid, &target, &pfd, &tfd, why, reason);
	if (r == 0)
		r = rtkit_rules_nice(&k->cfg, &target, nice, why, reason);
	if (r == 0)
		r = rtkit_grant_confirm(k, pfd, pid, reason);
	if (r == 0) {
		/* As rtkit: a normal thread, its children back to nice 0. */
		if (sched_setscheduler(tid, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp) < 0 ||
		    setpriority(PRIO_PROCESS, (id_t)tid, nice) < 0) {
			r = -errno;
			*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
			reason_set(reason, "cannot set nice level %d on thread %d: %s", (int)nice, (int)tid,
				   strerror(-r));
		}
	}
	if (r == 0 && rtkit_threads_exited(tfd)) {
		*why = RTKIT_REFUSE_GONE;
		reason_set(reason, "thread %d exited", (int)tid);
		r = -ESRCH;
	}
	if (r == 0) {
		k->stats.granted_nice++;
		log_info("RealtimeKit: thread %d of process %d (uid %u) has nice level %d", (int)tid, (int)pid,
			 (unsigned)caller, (int)nice);
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

		int r = rtkit_threads_exited(t->pidfd) ? 0 : thread_sched_undo(t->tid, &t->res);

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

