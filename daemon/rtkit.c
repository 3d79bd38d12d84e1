/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "auth.h"
#include "levels.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "procfs.h"
#include "record.h"
#include "rtbudget.h"
#include "thread-sched.h"
#include "rtkit.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* sd_bus_process() rounds per wakeup before the loop serves others. */
#define RTKIT_PROCESS_BATCH 64

enum rtkit_method {
	RTKIT_M_REALTIME,
	RTKIT_M_REALTIME_PID,
	RTKIT_M_HIGH_PRIORITY,
	RTKIT_M_HIGH_PRIORITY_PID,
	RTKIT_M_RESET_KNOWN,
	RTKIT_M_RESET_ALL,
	RTKIT_M_EXIT,
};

/* A method call waiting for its caller's credentials. */
struct rtkit_call {
	struct rtkit *k;
	sd_bus_message *msg;
	sd_bus_slot *slot;
	enum rtkit_method method;
	uint64_t pid, tid;
	int64_t value; /* priority or nice level */
	struct rtkit_call *prev, *next;
};

/* A thread made RT through the interface. */
struct rtkit_thread {
	pid_t pid, tid;
	uid_t uid;         /* the caller's: its limits count the thread */
	uid_t owner;       /* tid's effective uid: who may see its records */
	int pidfd;         /* the thread's (PIDFD_THREAD), -1 on kernels without */
	struct event *ev;  /* the pidfd turns readable when the thread exits */
	uint32_t claim_id; /* 0: not pinned */
	struct thread_sched_result res; /* for ResetKnown */
	uint64_t ran_ns;   /* time on CPU at the watchdog's last look */
	int cpu;           /* where it ran then */
};

struct rtkit {
	struct rtkit_opts o;
	struct config_rtkit cfg;
	sd_bus *bus;
	sd_bus_slot *vtable_slot, *name_slot;
	struct event *ev;
	bool serving, closing;
	bool exited; /* root called Exit: off the bus until a reload */
	struct rtkit_call *calls;
	unsigned ncalls;
	struct rtkit_thread *threads;
	unsigned nthreads;
	struct rtkit_bursts bursts;
	struct rtkit_stats stats;
	struct event *watchdog;
	uint64_t watchdog_ns;      /* the watchdog's last look */
	uint64_t watchdog_fired_ms; /* its last demotion; 0: none */
};

static void rtkit_thread_drop(struct rtkit *k, unsigned i)
{
	struct rtkit_thread *t = &k->threads[i];

	if (t->claim_id)
		engine_end_claim(k->o.engine, t->claim_id);
	if (t->ev)
		event_free(t->ev);
	if (t->pidfd >= 0)
		close(t->pidfd);
	/* Events find their thread by descriptor: moving one is safe. */
	k->threads[i] = k->threads[--k->nthreads];
}

static int rtkit_thread_find(const struct rtkit *k, pid_t tid)
{
	for (unsigned i = 0; i < k->nthreads; i++)
		if (k->threads[i].tid == tid)
			return (int)i;
	return -1;
}

/* Whether the thread behind pidfd has exited (readable, Linux 6.9). */
static bool rtkit_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

static void rtkit_thread_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rtkit *k = arg;

	for (unsigned i = 0; i < k->nthreads; i++)
		if (k->threads[i].pidfd == fd) {
			log_debug("RealtimeKit: thread %d of process %d exited", (int)k->threads[i].tid,
				  (int)k->threads[i].pid);
			rtkit_thread_drop(k, i);
			return;
		}
}

static void rtkit_thread_watch(struct rtkit *k, struct rtkit_thread *t)
{
	if (t->pidfd < 0)
		return;
	t->ev = event_new(k->o.base, t->pidfd, EV_READ, rtkit_thread_gone_cb, k);
	if (t->ev && event_add(t->ev, NULL) < 0) {
		event_free(t->ev);
		t->ev = NULL;
	}
}

/* Thread t's time on CPU and the CPU it ran on last; left alone when
 * unreadable (it exited: its pidfd event drops it). */
static void rtkit_thread_ran(struct rtkit *k, const struct rtkit_thread *t, uint64_t *ret_ns, int *ret_cpu)
{
	char name[64], text[128];
	struct procfs_stat st;
	uint64_t ns;

	snprintf(name, sizeof(name), "task/%d/schedstat", (int)t->tid);
	if (procfs_read(k->o.proc_root, t->pid, name, text, sizeof(text)) > 0 &&
	    rtkit_rules_parse_schedstat(text, &ns) == 0)
		*ret_ns = ns;
	if (procfs_read_stat(k->o.proc_root, t->pid, t->tid, &st) == 0)
		*ret_cpu = (int)st.cpu;
}

/*
 * What uid holds now, counting only threads still RT: a thread that gave
 * its RT up, or exited unseen, is dropped (and its claim ended) first.
 */
static void rtkit_count(struct rtkit *k, uid_t uid, pid_t pid, pid_t tid, struct rtkit_use *ret)
{
	*ret = (struct rtkit_use){ 0 };
	for (unsigned i = 0; i < k->nthreads;) {
		struct rtkit_thread *t = &k->threads[i];
		int policy;
		bool counted = false;

		if (t->uid != uid) {
			i++;
			continue;
		}
		policy = rtkit_pidfd_exited(t->pidfd) ? -1 : sched_getscheduler(t->tid);
		policy = policy < 0 ? -1 : policy & ~SCHED_RESET_ON_FORK;
		if (policy != SCHED_RR && policy != SCHED_FIFO) {
			rtkit_thread_drop(k, i);
			continue;
		}
		ret->threads++;
		ret->thread_held |= t->tid == tid;
		ret->process_held |= t->pid == pid;
		for (unsigned j = 0; j < i && !counted; j++)
			counted = k->threads[j].uid == uid && k->threads[j].pid == t->pid;
		ret->processes += !counted;
		i++;
	}
}

/* The target of a request: process pid and thread tid, their owner and the
 * process's RT time limit. The pidfds come back open (-1 where the kernel
 * has none) for the caller to confirm and keep. */
static int rtkit_target_read(struct rtkit *k, uid_t caller, pid_t pid, pid_t tid, struct rtkit_target *ret,
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
static bool rtkit_explain_budget(const struct rtkit *k, pid_t tid, struct rtplace_reason *reason)
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
static int rtkit_confirm(struct rtkit *k, int pfd, pid_t pid, struct rtplace_reason *reason)
{
	struct procfs_nspid ns;
	int r = procfs_read_pidfd(k->o.proc_root, pfd, &ns);

	if (r == 0 && ns.pids[0] != pid)
		r = -ESRCH;
	if (r < 0)
		reason_set(reason, "process %d exited", (int)pid);
	return r;
}

static int rtkit_realtime(struct rtkit *k, uid_t caller, pid_t pid, pid_t tid, uint32_t prio,
			  enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct rtkit_target target;
	struct rtkit_use use;
	struct thread_sched_state st;
	struct thread_sched_result res = { 0 };
	struct rtkit_thread *t;
	struct rtplace_reason unpinned;
	struct sched_param sp = { .sched_priority = (int)prio };
	uint32_t claim_id = 0;
	bool was_pinned = false;
	int pfd, tfd, cpu = -1, held, r;

	r = rtkit_target_read(k, caller, pid, tid, &target, &pfd, &tfd, why, reason);
	if (r < 0)
		goto out;
	rtkit_count(k, caller, pid, tid, &use);
	r = rtkit_rules_realtime(&k->cfg, &target, prio, &use, why, reason);
	if (r == 0)
		r = rtkit_confirm(k, pfd, pid, reason);
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
	held = rtkit_thread_find(k, tid);
	if (held >= 0) {
		st = k->threads[held].res.prev;
		was_pinned = k->threads[held].res.set_affinity;
		rtkit_thread_drop(k, (unsigned)held);
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
	if (r == 0 && rtkit_pidfd_exited(tfd))
		r = -ESRCH;
	if (r < 0) {
		if (claim_id)
			engine_end_claim(k->o.engine, claim_id);
		*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
		if (!(r == -EPERM && rtkit_explain_budget(k, tid, reason)))
			reason_set(reason, "cannot make thread %d SCHED_RR: %s", (int)tid, strerror(-r));
		goto out;
	}
	res.prev = st;
	res.set_affinity |= was_pinned;
	res.set_sched = true;
	t = &k->threads[k->nthreads++];
	*t = (struct rtkit_thread){
		.pid = pid, .tid = tid, .uid = caller, .owner = target.euid, .pidfd = tfd, .claim_id = claim_id,
		.res = res, .cpu = -1,
	};
	tfd = -1;
	rtkit_thread_ran(k, t, &t->ran_ns, &t->cpu);
	rtkit_thread_watch(k, t);
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

static int rtkit_high_priority(struct rtkit *k, uid_t caller, pid_t pid, pid_t tid, int32_t nice,
			       enum rtkit_refusal *why, struct rtplace_reason *reason)
{
	struct rtkit_target target;
	struct sched_param sp = { 0 };
	int pfd, tfd, r;

	r = rtkit_target_read(k, caller, pid, tid, &target, &pfd, &tfd, why, reason);
	if (r == 0)
		r = rtkit_rules_nice(&k->cfg, &target, nice, why, reason);
	if (r == 0)
		r = rtkit_confirm(k, pfd, pid, reason);
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
	if (r == 0 && rtkit_pidfd_exited(tfd)) {
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

/* ResetKnown: every thread granted gets back its policy and affinity. */
static void rtkit_reset_known(struct rtkit *k)
{
	while (k->nthreads) {
		struct rtkit_thread *t = &k->threads[k->nthreads - 1];

		int r = rtkit_pidfd_exited(t->pidfd) ? 0 : thread_sched_undo(t->tid, &t->res);

		if (r < 0 && r != -ESRCH)
			log_warning("RealtimeKit: failed to reset thread %d: %s", (int)t->tid, strerror(-r));
		rtkit_thread_drop(k, k->nthreads - 1);
	}
}

/* ResetAll: ResetKnown, then every RT or negative-nice thread of a user
 * other than root back to SCHED_OTHER at nice 0, as rtkit does. */
static void rtkit_reset_all(struct rtkit *k)
{
	struct procfs_ids procs = { 0 }, tids = { 0 };
	struct sched_param sp = { 0 };
	unsigned reset = 0;

	rtkit_reset_known(k);
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

/* Back to SCHED_OTHER, on the CPUs it had before its grant; subscribers
 * who may see the thread get a record naming the CPU it starved and the
 * policy it had. */
static void rtkit_demote(struct rtkit *k, unsigned i)
{
	struct rtkit_thread *t = &k->threads[i];
	struct thread_sched_result affinity = t->res;
	struct sched_param sp = { 0 };
	int policy, prio, reset_on_fork;

	affinity.set_sched = false;
	if (thread_sched_getattr(t->tid, &policy, &prio, &reset_on_fork) < 0)
		policy = prio = 0;
	if (sched_setscheduler(t->tid, SCHED_OTHER, &sp) < 0) {
		if (errno != ESRCH)
			log_warning("RealtimeKit watchdog: failed to demote thread %d: %m", (int)t->tid);
	} else {
		if (affinity.set_affinity)
			thread_sched_undo(t->tid, &affinity);
		notify_record(k->o.notify, RTPLACE_RECORD_WATCHDOG, t->tid, t->owner, t->cpu, -1,
			      (uint8_t)(policy == SCHED_FIFO || policy == SCHED_RR ? policy : 0),
			      (uint8_t)(policy == SCHED_FIFO || policy == SCHED_RR ? prio : 0));
	}
	rtkit_thread_drop(k, i);
}

/*
 * The starvation watchdog (rtkit-rules.h): on the daemon's loop, at normal
 * priority, like rtkit's canary. A CPU where a thread granted here ran
 * watchdog-busy-percent of the interval is starved: every thread granted
 * here that ran there is demoted, and requests are refused for a while.
 */
static void rtkit_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rtkit *k = arg;
	uint64_t now = loop_now_ns(), interval = now - k->watchdog_ns;
	struct rtplace_cpumask starved = { 0 };
	unsigned demoted = 0;

	k->watchdog_ns = now;
	for (unsigned i = 0; i < k->nthreads; i++) {
		struct rtkit_thread *t = &k->threads[i];
		uint64_t ran = t->ran_ns;

		rtkit_thread_ran(k, t, &ran, &t->cpu);
		if (t->cpu >= 0 && t->cpu < RTPLACE_MAX_CPUS && rtkit_rules_starving(&k->cfg, ran - t->ran_ns, interval)) {
			log_warning("RealtimeKit watchdog: thread %d of process %d (uid %u) ran %llu%% of CPU %d for %llu ms",
				    (int)t->tid, (int)t->pid, (unsigned)t->uid,
				    (unsigned long long)((ran - t->ran_ns) * 100 / interval), t->cpu,
				    (unsigned long long)(interval / 1000000));
			cpuset_set(&starved, (unsigned)t->cpu);
		}
		t->ran_ns = ran;
	}
	if (cpuset_empty(&starved))
		return;
	for (unsigned i = 0; i < k->nthreads;) {
		if (k->threads[i].cpu >= 0 && cpuset_test(&starved, (unsigned)k->threads[i].cpu)) {
			rtkit_demote(k, i);
			demoted++;
		} else {
			i++;
		}
	}
	k->stats.demoted += demoted;
	k->watchdog_fired_ms = loop_now_ms();
	log_warning("RealtimeKit watchdog: normal work was starved; %u thread%s back to SCHED_OTHER, requests refused "
		    "for %u s ([rtkit] watchdog-refuse-sec)",
		    demoted, demoted == 1 ? "" : "s", (unsigned)k->cfg.watchdog_refuse_sec);
}

/* Runs the watchdog every watchdog-interval-ms (none for 0). */
static int rtkit_watchdog_arm(struct rtkit *k)
{
	struct timeval tv = {
		.tv_sec = (time_t)(k->cfg.watchdog_interval_ms / 1000),
		.tv_usec = (suseconds_t)(k->cfg.watchdog_interval_ms % 1000) * 1000,
	};

	if (!k->watchdog) {
		k->watchdog = event_new(k->o.base, -1, EV_PERSIST, rtkit_watchdog_cb, k);
		if (!k->watchdog)
			return -ENOMEM;
	}
	event_del(k->watchdog);
	k->watchdog_ns = loop_now_ns();
	if (k->cfg.watchdog_interval_ms && event_add(k->watchdog, &tv) < 0)
		return -ENOMEM;
	return 0;
}

static const char *rtkit_method_name(enum rtkit_method m)
{
	static const char *const names[] = {
		"MakeThreadRealtime", "MakeThreadRealtimeWithPID", "MakeThreadHighPriority",
		"MakeThreadHighPriorityWithPID", "ResetKnown", "ResetAll", "Exit",
	};

	return names[m];
}

/* rtkit's error names: a refusal is AccessDenied, so clients need no
 * change; what is not a refusal says what failed. */
static void rtkit_reply_error(struct rtkit_call *c, int r, enum rtkit_refusal why, uid_t uid, const char *text)
{
	const char *name = r == -ENOMEM ? SD_BUS_ERROR_NO_MEMORY
			 : why == RTKIT_REFUSE_GONE || why == RTKIT_REFUSE_FAILED ? SD_BUS_ERROR_FAILED
										  : SD_BUS_ERROR_ACCESS_DENIED;

	c->k->stats.refused[why]++;
	log_ratelimited(LOG_NOTICE, "RealtimeKit: %s refused to uid %u (%s): %s", rtkit_method_name(c->method),
			(unsigned)uid, rtkit_refusal_name(why), text);
	sd_bus_reply_method_errorf(c->msg, name, "%s", text);
}

/* The bus's answer to ReleaseName: the reply to Exit went out before the
 * request, so the connection can close now. */
static int rtkit_released_cb(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit *k = userdata;

	k->closing = true;
	return 0;
}

/*
 * rtkit's Exit ends rtkit-daemon; rtplaced serves its socket, claims and
 * records besides, so Exit ends only the interface: the vtable goes at
 * once (calls still in flight get UnknownObject), the name is released
 * without waiting, and the connection closes on the bus's answer. The
 * threads granted keep their policy, CPU and claim, and the watchdog keeps
 * watching them. A reload serves the name again.
 */
static void rtkit_exit(struct rtkit *k, pid_t caller_pid, const char *sender)
{
	int r;

	log_notice("RealtimeKit: Exit called by root (pid %d, bus name %s); no longer serving %s until a reload "
		   "(SIGHUP) or restart",
		   (int)caller_pid, sender ? sender : "?", RTKIT_BUS_NAME);
	k->vtable_slot = sd_bus_slot_unref(k->vtable_slot);
	k->name_slot = sd_bus_slot_unref(k->name_slot);
	k->serving = false;
	k->exited = true;
	r = sd_bus_release_name_async(k->bus, &k->name_slot, RTKIT_BUS_NAME, rtkit_released_cb, k);
	if (r < 0)
		k->closing = true;
}

static void rtkit_serve(struct rtkit *k, struct rtkit_call *c, uid_t uid, pid_t caller_pid)
{
	struct rtplace_reason reason = { { 0 } };
	enum rtkit_refusal why = RTKIT_REFUSE_COUNT;
	pid_t pid = c->method == RTKIT_M_REALTIME || c->method == RTKIT_M_HIGH_PRIORITY ? caller_pid : (pid_t)c->pid;
	int r;

	if (c->method >= RTKIT_M_RESET_KNOWN) {
		if (uid != 0) {
			reason_set(&reason, "%s is root's", rtkit_method_name(c->method));
			rtkit_reply_error(c, -EPERM, RTKIT_REFUSE_ROOT_ONLY, uid, reason.text);
			return;
		}
		if (c->method == RTKIT_M_RESET_KNOWN)
			rtkit_reset_known(k);
		else if (c->method == RTKIT_M_RESET_ALL)
			rtkit_reset_all(k);
		sd_bus_reply_method_return(c->msg, NULL);
		if (c->method == RTKIT_M_EXIT)
			rtkit_exit(k, caller_pid, sd_bus_message_get_sender(c->msg));
		return;
	}
	if (rtkit_rules_refusing(&k->cfg, k->watchdog_fired_ms, loop_now_ms())) {
		reason_set(&reason, "the watchdog demoted threads that starved a CPU; requests are refused for %u s",
			   (unsigned)k->cfg.watchdog_refuse_sec);
		rtkit_reply_error(c, -EPERM, RTKIT_REFUSE_WATCHDOG, uid, reason.text);
		return;
	}
	r = rtkit_bursts_take(&k->bursts, &k->cfg, uid, loop_now_ms());
	if (r == -EPERM) {
		why = RTKIT_REFUSE_BURST;
		reason_set(&reason, "uid %u made %u requests within %u s ([rtkit] actions-per-burst-max)", (unsigned)uid,
			   (unsigned)k->cfg.actions_per_burst_max, (unsigned)k->cfg.actions_burst_sec);
	} else if (r < 0) {
		why = RTKIT_REFUSE_FAILED;
		reason_set(&reason, "out of memory");
	} else if (c->method == RTKIT_M_REALTIME || c->method == RTKIT_M_REALTIME_PID) {
		r = rtkit_realtime(k, uid, pid, (pid_t)c->tid, (uint32_t)c->value, &why, &reason);
	} else {
		r = rtkit_high_priority(k, uid, pid, (pid_t)c->tid, (int32_t)c->value, &why, &reason);
	}
	if (r < 0) {
		if (why == RTKIT_REFUSE_COUNT)
			why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
		rtkit_reply_error(c, r, why, uid, reason.text);
		return;
	}
	sd_bus_reply_method_return(c->msg, NULL);
}

static void rtkit_call_free(struct rtkit_call *c)
{
	struct rtkit *k = c->k;

	if (c->prev)
		c->prev->next = c->next;
	else
		k->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	k->ncalls--;
	sd_bus_slot_unref(c->slot);
	sd_bus_message_unref(c->msg);
	free(c);
}

/* The bus's answer to GetConnectionCredentials: UnixUserID and ProcessID. */
static int rtkit_creds_cb(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit_call *c = userdata;
	uint32_t uid = UINT32_MAX, pid = 0;
	const char *key;
	int r;

	if (sd_bus_message_is_method_error(reply, NULL)) {
		sd_bus_reply_method_errorf(c->msg, SD_BUS_ERROR_FAILED, "cannot read the caller's credentials: %s",
					   sd_bus_message_get_error(reply)->message);
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r > 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0 && strcmp(key, "UnixUserID") == 0)
			r = sd_bus_message_read(reply, "v", "u", &uid);
		else if (r >= 0 && strcmp(key, "ProcessID") == 0)
			r = sd_bus_message_read(reply, "v", "u", &pid);
		else if (r >= 0)
			r = sd_bus_message_skip(reply, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r >= 0)
			r = 1;
	}
	if (r < 0 || uid == UINT32_MAX || pid == 0 || pid > INT_MAX) {
		sd_bus_reply_method_errorf(c->msg, SD_BUS_ERROR_FAILED, "the bus did not tell the caller's uid and pid");
		goto out;
	}
	rtkit_serve(c->k, c, (uid_t)uid, (pid_t)pid);
out:
	rtkit_call_free(c);
	return 0;
}

static int rtkit_method_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	static const struct {
		const char *member;
		enum rtkit_method method;
	} methods[] = {
		{ "MakeThreadRealtime", RTKIT_M_REALTIME },
		{ "MakeThreadRealtimeWithPID", RTKIT_M_REALTIME_PID },
		{ "MakeThreadHighPriority", RTKIT_M_HIGH_PRIORITY },
		{ "MakeThreadHighPriorityWithPID", RTKIT_M_HIGH_PRIORITY_PID },
		{ "ResetKnown", RTKIT_M_RESET_KNOWN },
		{ "ResetAll", RTKIT_M_RESET_ALL },
		{ "Exit", RTKIT_M_EXIT },
	};
	struct rtkit *k = userdata;
	struct rtkit_call c = { .k = k }, *p;
	const char *member = sd_bus_message_get_member(m);
	uint32_t prio = 0;
	int32_t nice = 0;
	size_t i;
	int r = 0;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]) && strcmp(member, methods[i].member) != 0; i++)
		;
	if (i == sizeof(methods) / sizeof(methods[0]))
		return sd_bus_error_setf(ret_error, SD_BUS_ERROR_UNKNOWN_METHOD, "no method %s", member);
	c.method = methods[i].method;
	switch (c.method) {
	case RTKIT_M_REALTIME:
		r = sd_bus_message_read(m, "tu", &c.tid, &prio);
		c.value = prio;
		break;
	case RTKIT_M_REALTIME_PID:
		r = sd_bus_message_read(m, "ttu", &c.pid, &c.tid, &prio);
		c.value = prio;
		break;
	case RTKIT_M_HIGH_PRIORITY:
		r = sd_bus_message_read(m, "ti", &c.tid, &nice);
		c.value = nice;
		break;
	case RTKIT_M_HIGH_PRIORITY_PID:
		r = sd_bus_message_read(m, "tti", &c.pid, &c.tid, &nice);
		c.value = nice;
		break;
	default:
		break;
	}
	if (r < 0)
		return r;
	if (c.method <= RTKIT_M_HIGH_PRIORITY_PID &&
	    (c.tid == 0 || c.tid > INT_MAX || c.pid > INT_MAX ||
	     ((c.method == RTKIT_M_REALTIME_PID || c.method == RTKIT_M_HIGH_PRIORITY_PID) && c.pid == 0)))
		return sd_bus_error_setf(ret_error, SD_BUS_ERROR_INVALID_ARGS, "no such process or thread id");
	if (k->ncalls >= RTKIT_PENDING_MAX)
		return sd_bus_error_setf(ret_error, SD_BUS_ERROR_LIMITS_EXCEEDED, "%u requests are waiting already",
					 RTKIT_PENDING_MAX);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = c;
	p->msg = sd_bus_message_ref(m);
	r = sd_bus_call_method_async(k->bus, &p->slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
				     "org.freedesktop.DBus", "GetConnectionCredentials", rtkit_creds_cb, p, "s",
				     sd_bus_message_get_sender(m));
	if (r < 0) {
		sd_bus_message_unref(p->msg);
		free(p);
		return r;
	}
	p->next = k->calls;
	if (k->calls)
		k->calls->prev = p;
	k->calls = p;
	k->ncalls++;
	return 1;
}

static int rtkit_property_cb(sd_bus *bus, const char *path, const char *interface, const char *property,
			     sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit *k = userdata;

	if (strcmp(property, "RTTimeUSecMax") == 0)
		return sd_bus_message_append(reply, "x", (int64_t)k->cfg.rttime_usec_max);
	if (strcmp(property, "MaxRealtimePriority") == 0)
		return sd_bus_message_append(reply, "i", (int32_t)k->cfg.max_realtime_priority);
	return sd_bus_message_append(reply, "i", k->cfg.min_nice_level);
}

static const sd_bus_vtable rtkit_vtable[] = {
	SD_BUS_VTABLE_START(0),
	/* Unprivileged: sd-bus would otherwise ask the bus for the caller's
	 * capabilities with a blocking call; the rules ask asynchronously. */
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtime", "tu", SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "",
				 "", rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtimeWithPID", "ttu",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "", "",
				 rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriority", "ti", SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "",
				 "", rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriorityWithPID", "tti",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "", "",
				 rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("ResetKnown", "", "", rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("ResetAll", "", "", rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Exit", "", "", rtkit_method_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_PROPERTY("RTTimeUSecMax", "x", rtkit_property_cb, 0, 0),
	SD_BUS_PROPERTY("MaxRealtimePriority", "i", rtkit_property_cb, 0, 0),
	SD_BUS_PROPERTY("MinNiceLevel", "i", rtkit_property_cb, 0, 0),
	SD_BUS_VTABLE_END,
};

/* Leaves the bus: pending calls are dropped unanswered with it. */
static void rtkit_close(struct rtkit *k)
{
	while (k->calls)
		rtkit_call_free(k->calls);
	k->vtable_slot = sd_bus_slot_unref(k->vtable_slot);
	k->name_slot = sd_bus_slot_unref(k->name_slot);
	if (k->ev) {
		event_free(k->ev);
		k->ev = NULL;
	}
	if (k->bus) {
		sd_bus_close(k->bus);
		k->bus = sd_bus_unref(k->bus);
	}
	k->serving = false;
}

static void rtkit_arm(struct rtkit *k, bool again);

static void rtkit_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rtkit *k = arg;
	int i, r = 0;

	for (i = 0; i < RTKIT_PROCESS_BATCH && !k->closing; i++) {
		r = sd_bus_process(k->bus, NULL);
		if (r <= 0)
			break;
	}
	if (r < 0) {
		log_warning("RealtimeKit: lost the system bus (%s); no longer serving %s", strerror(-r), RTKIT_BUS_NAME);
		k->closing = true;
	}
	if (k->closing) {
		rtkit_close(k);
		return;
	}
	rtkit_arm(k, i == RTKIT_PROCESS_BATCH);
}

/* One libevent event for the bus: its descriptor for what sd-bus waits
 * on, and its timeout (or at once, when a batch left work). */
static void rtkit_arm(struct rtkit *k, bool again)
{
	int events = sd_bus_get_events(k->bus);
	short what = (short)((events & POLLIN ? EV_READ : 0) | (events & POLLOUT ? EV_WRITE : 0));
	struct timeval tv = { 0 };
	uint64_t until = UINT64_MAX;
	bool timed = again;

	if (events < 0) {
		log_warning("RealtimeKit: the system bus connection failed (%s); no longer serving %s",
			    strerror(-events), RTKIT_BUS_NAME);
		rtkit_close(k);
		return;
	}
	if (!again && sd_bus_get_timeout(k->bus, &until) >= 0 && until != UINT64_MAX) {
		uint64_t now = loop_now_ns() / 1000;
		uint64_t left = until > now ? until - now : 0;

		tv.tv_sec = (time_t)(left / 1000000);
		tv.tv_usec = (suseconds_t)(left % 1000000);
		timed = true;
	}
	event_del(k->ev);
	event_assign(k->ev, k->o.base, sd_bus_get_fd(k->bus), what, rtkit_io_cb, k);
	event_add(k->ev, timed ? &tv : NULL);
}

/* The bus's answer to RequestName. */
static int rtkit_name_cb(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit *k = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	uint32_t result = 0;

	if (e) {
		log_warning("RealtimeKit: the bus refused %s (%s: %s); running without it (is the policy file "
			    "installed in dbus-1/system.d?)",
			    RTKIT_BUS_NAME, e->name, e->message);
		k->closing = true;
		return 0;
	}
	if (sd_bus_message_read(reply, "u", &result) < 0 || result != 1) {
		log_notice("RealtimeKit: %s is owned by another process (rtkit-daemon?); running without it",
			   RTKIT_BUS_NAME);
		k->closing = true;
		return 0;
	}
	k->serving = true;
	log_notice("RealtimeKit: serving %s on the system bus", RTKIT_BUS_NAME);
	return 0;
}

static int rtkit_connect(struct rtkit *k)
{
	int r = sd_bus_open_system(&k->bus);

	if (r < 0) {
		log_warning("RealtimeKit: cannot connect to the system bus (%s); running without %s", strerror(-r),
			    RTKIT_BUS_NAME);
		return 0;
	}
	r = sd_bus_add_object_vtable(k->bus, &k->vtable_slot, RTKIT_OBJECT_PATH, RTKIT_BUS_NAME, rtkit_vtable, k);
	if (r >= 0)
		r = sd_bus_request_name_async(k->bus, &k->name_slot, RTKIT_BUS_NAME, 0, rtkit_name_cb, k);
	if (r >= 0) {
		k->ev = event_new(k->o.base, -1, 0, NULL, NULL);
		r = k->ev ? 0 : -ENOMEM;
	}
	if (r < 0) {
		log_warning("RealtimeKit: cannot set up %s (%s); running without it", RTKIT_BUS_NAME, strerror(-r));
		rtkit_close(k);
		return r == -ENOMEM ? r : 0;
	}
	rtkit_arm(k, false);
	return 0;
}

int rtkit_new(const struct rtkit_opts *opts, const struct config *cfg, struct rtkit **ret)
{
	struct rtkit *k = calloc(1, sizeof(*k));
	int r;

	if (!k)
		return -ENOMEM;
	k->o = *opts;
	k->cfg = cfg->rtkit;
	k->threads = calloc(RTKIT_THREADS_MAX, sizeof(*k->threads));
	r = k->threads ? rtkit_watchdog_arm(k) : -ENOMEM;
	if (r == 0)
		r = rtkit_connect(k);
	if (r < 0) {
		rtkit_free(k);
		return r;
	}
	*ret = k;
	return 0;
}

void rtkit_free(struct rtkit *k)
{
	if (!k)
		return;
	rtkit_close(k);
	for (unsigned i = 0; i < k->nthreads; i++) {
		if (k->threads[i].ev)
			event_free(k->threads[i].ev);
		if (k->threads[i].pidfd >= 0)
			close(k->threads[i].pidfd);
	}
	free(k->threads);
	if (k->watchdog)
		event_free(k->watchdog);
	rtkit_bursts_free(&k->bursts);
	free(k);
}

void rtkit_apply_config(struct rtkit *k, const struct config *cfg)
{
	bool rearm;

	if (!k)
		return;
	rearm = k->cfg.watchdog_interval_ms != cfg->rtkit.watchdog_interval_ms;
	k->cfg = cfg->rtkit;
	if (rearm && rtkit_watchdog_arm(k) < 0)
		log_warning("RealtimeKit: out of memory; the watchdog keeps its old interval");
	if (k->exited && !k->bus && cfg->rtkit.enable) {
		k->exited = false;
		k->closing = false;
		if (rtkit_connect(k) < 0)
			log_warning("RealtimeKit: out of memory; %s stays unserved", RTKIT_BUS_NAME);
	}
}

void rtkit_get_stats(const struct rtkit *k, struct rtkit_stats *ret)
{
	*ret = (struct rtkit_stats){ 0 };
	if (!k)
		return;
	*ret = k->stats;
	ret->serving = k->serving;
	ret->threads = k->nthreads;
}
