/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MOVE requests: authorise (auth.c), guard against moving init, kernel
 * threads or the daemon, re-check the target CPU against the live map,
 * apply with rollback (thread-sched.c), publish the records (notify.c).
 * Owns the counts of MOVE requests; the CPU a thread goes to is the
 * engine's choice (engine_pick()).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "conf.h"
#include "levels.h"
#include "log.h"
#include "thread-sched.h"
#include "moves.h"
#include "procfs.h"
#include "protocol.h"
#include "rtbudget.h"

/* How many times a move re-picks when the map changed under it. */
#define MOVES_REPICK_TRIES 3

/*
 * Pidfds of the threads moved last. Opening and closing a thread's pidfd
 * cost a quarter of a move's time in the daemon (bench/README.md); a
 * thread moved again (a client that follows the map) reuses its pidfd.
 * A kept pidfd vouches for nothing by itself: every move asks it again
 * whether its thread still lives (auth_target_read_live()), and one whose
 * thread has exited is closed and the tid opened anew, since the number
 * may name another thread by now. A few descriptors, well within those
 * the server keeps for the daemon's own needs (quota_fd_reserve()).
 */
#define MOVES_PIDFDS 8

struct moves_pidfd {
	pid_t tid;  /* 0: free */
	int fd;
};

struct moves {
	struct moves_opts o;
	pid_t self; /* the daemon's pid: the guard's, read once (it never forks) */
	struct moves_pidfd pidfds[MOVES_PIDFDS];
	unsigned pidfd_next; /* the slot a new pidfd takes: the oldest */
	uint64_t moved;  /* threads moved by MOVE requests */
	uint64_t failed; /* MOVE requests refused or failed */
};

/* The one CPU of s, or -1 when s holds none or several. */
static int moves_single_cpu(const struct rtplace_cpumask *s)
{
	return cpuset_count(s) == 1 ? cpuset_next(s, 0) : -1;
}

/*
 * The affinity a MOVE applies. A single requested CPU, or the one picked
 * with PLACE, is re-checked against the live map just before the move, as
 * the kernel re-checks a pushed task's target after locking it: if it is no
 * longer below the thread's level, the daemon picks again near it.
 */
static int moves_target_cpus(struct moves *m, const struct rtplace_move *req, uint32_t level, int current_cpu,
			     const uint8_t *claimed, struct rtplace_cpumask *ret, struct rtplace_reason *reason)
{
	struct rtplace_cpumask asked = req->cpus;
	int cpu, r = 0;

	/* The kernel would refuse it with a bare EINVAL (hotplug, see the map). */
	CPUSET_FOREACH(c, &asked) {
		if ((uint32_t)c < engine_topo(m->o.engine)->ncpus && cpupri_level(engine_view(m->o.engine), (uint32_t)c) == LEVEL_OFFLINE) {
			reason_set(reason, "CPU %d is offline", c);
			return -EINVAL;
		}
	}
	cpuset_and(&asked, &asked, &engine_topo(m->o.engine)->online);
	if (cpuset_empty(&asked)) {
		reason_set(reason, "no online CPU in the requested set");
		return -EINVAL;
	}
	*ret = asked;
	if (req->flags & RTPLACE_MOVE_F_FORCE || level < LEVEL_RT1 || level > LEVEL_RT99)
		return 0;
	if (req->flags & RTPLACE_MOVE_F_PLACE) {
		r = engine_pick(m->o.engine, &asked, current_cpu, level, claimed, &cpu);
		if (r < 0)
			return placement_pick_reason(r, level, reason);
	} else {
		cpu = moves_single_cpu(&asked);
		if (cpu < 0)
			return 0; /* several CPUs without PLACE: the kernel chooses among them */
	}
	for (int i = 0; i < MOVES_REPICK_TRIES && r == 0 && cpupri_level(engine_view(m->o.engine), (uint32_t)cpu) >= level; i++)
		r = engine_pick(m->o.engine, &engine_placement(m->o.engine)->managed, cpu, level, claimed, &cpu);
	if (r == -ENOMEM)
		return placement_pick_reason(r, level, reason);
	if (r < 0 || cpupri_level(engine_view(m->o.engine), (uint32_t)cpu) >= level) {
		reason_set(reason, "no managed CPU below rt%d any more", level_rt_priority(level));
		return -EBUSY;
	}
	cpuset_zero(ret);
	cpuset_set(ret, (unsigned)cpu);
	return 0;
}

/* Passes over a process's thread list in a process-wide move: threads
 * started by a thread before it was moved show up in the next listing. */
#define MOVES_PROCESS_PASSES 8

/* What the MOVE guard needs to know about a thread. */
struct moves_task {
	pid_t tgid;
	unsigned flags; /* PF_* */
	char comm[RTPLACE_COMM_MAX];
};

/*
 * What the guard needs of target tid: its process (from the target's
 * read), its kernel flags and, for a kernel thread, its comm (for the
 * message). Every kernel thread is kthreadd's child (pid 2) or has no
 * parent (0), so only then is /proc/TID/stat read; a user thread's
 * flags cannot hold PF_KTHREAD. 0, -ESRCH, -EBADMSG.
 */
static int moves_task_read(struct moves *m, const struct auth_target *target, struct moves_task *ret)
{
	struct moves_task t = { .tgid = target->tgid };
	pid_t tid = target->tid;
	struct procfs_stat st;
	char buf[64];
	ssize_t n;
	int r;

	if (target->ppid != 0 && target->ppid != 2 && target->tgid != 2) {
		*ret = t;
		return 0;
	}
	r = procfs_read_stat(engine_proc_root(m->o.engine), tid, 0, &st);
	if (r < 0)
		return r;
	t.flags = st.flags;
	if (t.flags & PROCFS_PF_KTHREAD) {
		n = procfs_read(engine_proc_root(m->o.engine), tid, "comm", buf, sizeof(buf));
		if (n < 0)
			return (int)n;
		snprintf(t.comm, sizeof(t.comm), "%.*s", (int)strcspn(buf, "\n"), buf);
	}
	*ret = t;
	return 0;
}

/*
 * Moving init, a kernel thread or the daemon itself is almost always a
 * typo in a thread id, and root's mistake would not be caught by any
 * other rule: such targets need RTPLACE_MOVE_F_SYSTEM (--force).
 */
static int moves_guard(const struct moves *m, const struct moves_task *t, pid_t tid, struct rtplace_reason *reason)
{
	if (t->tgid == 1)
		reason_set(reason, "thread %d is of init (pid 1): needs --force", (int)tid);
	else if (t->flags & PROCFS_PF_KTHREAD)
		reason_set(reason, "thread %d (%s): kernel thread, needs --force", (int)tid, t->comm);
	else if (t->tgid == m->self)
		reason_set(reason, "thread %d is rtplaced's own: needs --force", (int)tid);
	else
		return 0;
	return -EPERM;
}

static void moves_pidfd_drop(struct moves_pidfd *p)
{
	if (p->tid)
		close(p->fd);
	*p = (struct moves_pidfd){ 0 };
}

/*
 * auth_target_read_live() of thread tid with the pidfd kept for it, or a
 * new one (kept in the oldest slot). Returns as auth_target_read_live(),
 * -ESRCH only when no thread has tid now.
 */
static int moves_target_read_live(struct moves *m, pid_t tid, bool need_limit, struct auth_target *ret)
{
	struct moves_pidfd *slot = NULL;
	int fd, r;

	for (unsigned i = 0; i < MOVES_PIDFDS && !slot; i++)
		if (m->pidfds[i].tid == tid && tid > 0)
			slot = &m->pidfds[i];
	if (slot) {
		r = auth_target_read_live(slot->fd, tid, need_limit, ret);
		if (r != -ESRCH)
			return r;
		moves_pidfd_drop(slot); /* that thread exited; tid may be another's */
	}
	fd = auth_target_pidfd(tid);
	if (fd < 0)
		return fd;
	r = auth_target_read_live(fd, tid, need_limit, ret);
	if (r < 0) {
		close(fd);
		return r;
	}
	slot = &m->pidfds[m->pidfd_next];
	m->pidfd_next = (m->pidfd_next + 1) % MOVES_PIDFDS;
	moves_pidfd_drop(slot);
	*slot = (struct moves_pidfd){ .tid = tid, .fd = fd };
	return 0;
}

/* auth_target_read_live() of thread tid with a pidfd of its own, or the
 * same from /proc where the kernel lacks a call. */
static int moves_target_read_once(struct moves *m, pid_t tid, bool need_limit, struct auth_target *ret)
{
	int fd = auth_target_pidfd(tid), r = fd;

	if (fd >= 0) {
		r = auth_target_read_live(fd, tid, need_limit, ret);
		close(fd);
	}
	return r == -EOPNOTSUPP ? auth_target_read(engine_proc_root(m->o.engine), tid, ret) : r;
}

/*
 * May the requester move tid as req asks? The target's state in
 * *ret_target. A thread of a process-wide move: its pidfd is not kept,
 * so that a process's threads do not push out those moved one by one.
 */
static int moves_authorise(struct moves *m, const struct auth_creds *creds, pid_t tid, const struct rtplace_move *req,
			   struct auth_target *ret_target, struct rtplace_reason *reason)
{
	bool set_sched = req->flags & RTPLACE_MOVE_F_SET_SCHED;
	int want_policy = set_sched ? req->policy : AUTH_SCHED_KEEP;
	int r = moves_target_read_once(m, tid, set_sched && !auth_cap_sys_nice(creds), ret_target);

	if (r < 0) {
		reason_set(reason, "thread %d does not exist", (int)tid);
		return r == -ENOENT ? -ESRCH : r;
	}
	return auth_move_allowed(creds, ret_target, engine_policy(m->o.engine), want_policy, req->prio, reason);
}

/* What target's read saw of its policy, for thread_sched_apply_known():
 * NULL unless it was read live (/proc does not show reset-on-fork). */
static const struct thread_sched_policy *moves_known_policy(const struct auth_target *target,
							    struct thread_sched_policy *buf)
{
	if (!target->sched_live)
		return NULL;
	*buf = (struct thread_sched_policy){ target->policy, target->prio, target->reset_on_fork };
	return buf;
}

static void moves_reply(pid_t tid, const struct thread_sched_result *res, struct rtplace_move_reply *ret)
{
	bool rt_now = res->now.policy == SCHED_FIFO || res->now.policy == SCHED_RR;
	bool rt_prev = res->prev.policy == SCHED_FIFO || res->prev.policy == SCHED_RR;

	*ret = (struct rtplace_move_reply){
		.tid = tid,
		.policy = (uint8_t)(rt_now ? res->now.policy : 0),
		.prio = (uint8_t)(rt_now ? res->now.prio : 0),
		.prev_policy = (uint8_t)(rt_prev ? res->prev.policy : 0),
		.prev_prio = (uint8_t)(rt_prev ? res->prev.prio : 0),
	};
	ret->cpus = res->now.cpus;
	ret->prev_cpus = res->prev.cpus;
}

static void moves_publish_moved(struct moves *m, pid_t tid, uid_t euid, const struct thread_sched_result *res)
{
	struct rtplace_move_reply r;

	moves_reply(tid, res, &r);
	notify_record(m->o.notify, RTPLACE_RECORD_MOVED, tid, euid, moves_single_cpu(&res->prev.cpus),
		      moves_single_cpu(&res->now.cpus), r.policy, r.prio);
}

/* One thread of a process-wide move, as applied. */
struct moves_done {
	pid_t tid;
	uid_t euid;
	struct thread_sched_result res;
};

/* Puts the threads of done[0..n-1] back, last moved first. */
static void moves_undo(struct moves_done *done, size_t n)
{
	while (n--) {
		int r = thread_sched_undo(done[n].tid, &done[n].res);

		if (r < 0 && r != -ESRCH)
			log_error("Failed to put thread %d back after a failed process move: %s", (int)done[n].tid,
				  strerror(-r));
	}
}

/*
 * Lists the threads of process pid not yet in done[0..ndone-1] into
 * *tids. Returns how many, or -errno (-ESRCH when the process is gone).
 */
static ssize_t moves_list_new_threads(struct moves *m, pid_t pid, const struct moves_done *done, size_t ndone,
				      struct procfs_ids *tids)
{
	size_t n = 0;
	int r = procfs_list(engine_proc_root(m->o.engine), pid, tids);

	if (r < 0)
		return r;
	for (size_t i = 0; i < tids->n; i++) {
		bool known = false;

		for (size_t j = 0; j < ndone && !known; j++)
			known = done[j].tid == tids->ids[i];
		if (!known)
			tids->ids[n++] = tids->ids[i];
	}
	tids->n = n;
	return (ssize_t)n;
}

/*
 * After the kernel refused tid an RT policy with EPERM (auth.c had already
 * allowed it): a cpu cgroup without an RT budget is the usual cause, and
 * reason names the folder and the fix, for the log and the reply alike.
 * Returns whether that was the cause.
 */
static bool moves_explain_budget(const struct moves *m, pid_t tid, struct rtplace_reason *reason)
{
	char cgroup[4096];
	struct rtbudget_finding f;

	if (procfs_read(engine_proc_root(m->o.engine), tid, "cgroup", cgroup, sizeof(cgroup)) < 0 ||
	    rtbudget_find(cgroup, RTBUDGET_CGROUP_ROOT, &f) < 0)
		return false;
	rtbudget_explain(&f, reason);
	log_warning_ratelimited("Failed to move thread %d to RT: %s", (int)tid, reason->text);
	return true;
}

/*
 * One batch of moves_move_process(): the n threads of tids, each
 * authorised before any is touched, then moved and recorded in done
 * (*ndone of them, room for n more). A thread that exited meanwhile is
 * skipped. 0, or -errno with reason (the batch's moves stay in done, for
 * the caller to undo).
 */
static int moves_process_batch(struct moves *m, const struct auth_creds *creds, pid_t pid,
			       const struct rtplace_move *req, const struct rtplace_cpumask *aff,
			       struct procfs_ids *tids, size_t n, struct moves_done *done, size_t *ndone,
			       struct rtplace_reason *reason)
{
	bool set_sched = req->flags & RTPLACE_MOVE_F_SET_SCHED;
	struct auth_target *targets = calloc(n, sizeof(*targets));
	int r = targets ? 0 : -ENOMEM;

	if (!targets)
		reason_set(reason, "out of memory");
	for (size_t i = 0; i < n && r == 0; i++) {
		r = moves_authorise(m, creds, tids->ids[i], req, &targets[i], reason);
		if (r == -ESRCH) {
			tids->ids[i] = 0; /* exited: nothing to move */
			r = 0;
		}
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct moves_done *d = &done[*ndone];
		struct thread_sched_policy known;

		if (!tids->ids[i])
			continue;
		r = thread_sched_apply_known(tids->ids[i], moves_known_policy(&targets[i], &known), aff,
					     set_sched ? req->policy : THREAD_SCHED_KEEP_POLICY, req->prio, &d->res);
		if (r == -ESRCH) {
			r = 0;
			continue;
		}
		if (r < 0 && !(r == -EPERM && set_sched && moves_explain_budget(m, tids->ids[i], reason)))
			reason_set(reason, "thread %d of pid %d: %s; none moved", (int)tids->ids[i], (int)pid,
				   strerror(-r));
		d->tid = tids->ids[i];
		d->euid = targets[i].euid;
		*ndone += r == 0;
	}
	free(targets);
	return r;
}

/* Room in *done for need entries (*cap of them now). 0 or -ENOMEM. */
static int moves_done_reserve(struct moves_done **done, size_t *cap, size_t need)
{
	struct moves_done *grown;

	if (need <= *cap)
		return 0;
	grown = reallocarray(*done, need, sizeof(**done));
	if (!grown)
		return -ENOMEM;
	*done = grown;
	*cap = need;
	return 0;
}

/*
 * Moves every thread of process pid, all or none (RTPLACE_MOVE_F_PROCESS):
 * each listed thread is authorised before any is touched, then moved;
 * when one fails, those already moved are put back. The daemon serves one
 * request at a time, so no other client sees the half-done state. A thread
 * that exits meanwhile is no failure: all that live are moved. The set is
 * applied as asked (the kernel chooses among its CPUs per thread): a
 * re-check per thread would scatter a process that asked for one CPU.
 */
static int moves_move_process(struct moves *m, const struct auth_creds *creds, pid_t pid,
			      const struct rtplace_move *req, struct rtplace_move_reply *ret,
			      struct rtplace_reason *reason)
{
	struct rtplace_cpumask cpus, *aff = NULL;
	struct moves_done *done = NULL, *named = NULL;
	struct procfs_ids tids = { 0 };
	size_t ndone = 0, cap = 0;
	int r = 0;

	if (req->flags & RTPLACE_MOVE_F_SET_AFFINITY) {
		cpuset_and(&cpus, &req->cpus, &engine_topo(m->o.engine)->online);
		if (cpuset_empty(&cpus)) {
			reason_set(reason, "no online CPU in the requested set");
			return -EINVAL;
		}
		aff = &cpus;
	}
	/* Threads may start while others move: list again until no new one. */
	for (int pass = 0; pass < MOVES_PROCESS_PASSES && r == 0; pass++) {
		ssize_t n = moves_list_new_threads(m, pid, done, ndone, &tids);

		if (n == 0 || (n == -ESRCH && ndone > 0))
			break; /* all moved, or the process exited after its threads moved */
		r = (int)n;
		if (n < 0)
			reason_set(reason, "cannot list the threads of pid %d: %s", (int)pid, strerror(-r));
		else if ((r = moves_done_reserve(&done, &cap, ndone + (size_t)n)) < 0)
			reason_set(reason, "out of memory");
		else
			r = moves_process_batch(m, creds, pid, req, aff, &tids, (size_t)n, done, &ndone, reason);
	}
	for (size_t i = 0; i < ndone && !named && r == 0; i++)
		if (done[i].tid == req->tid)
			named = &done[i];
	if (r == 0 && !named) {
		r = -ESRCH;
		reason_set(reason, "thread %d exited during the move; none moved", (int)req->tid);
	}
	if (r < 0) {
		moves_undo(done, ndone);
	} else {
		moves_reply(req->tid, &named->res, ret);
		for (size_t i = 0; i < ndone; i++)
			moves_publish_moved(m, done[i].tid, done[i].euid, &done[i].res);
		m->moved += ndone;
		log_ratelimited(LOG_INFO,
				"pid %d uid %u moved the %zu threads of pid %d: CPUs %d..., policy %d prio %d",
				(int)creds->pid, (unsigned)creds->uid, ndone, (int)pid,
				cpuset_next(&named->res.now.cpus, 0), named->res.now.policy, named->res.now.prio);
	}
	free(done);
	procfs_ids_free(&tids);
	return r;
}

static int moves_move_one(struct moves *m, const struct server_peer *peer, struct auth_peer *ap,
			  const struct rtplace_move *req, const uint8_t *claimed_level, struct rtplace_move_reply *ret,
			  struct rtplace_reason *reason)
{
	const struct auth_creds *creds;
	struct auth_target target;
	struct moves_task task;
	struct thread_sched_result res;
	struct thread_sched_policy known;
	struct rtplace_cpumask cpus;
	bool set_sched = req->flags & RTPLACE_MOVE_F_SET_SCHED;
	bool set_aff = req->flags & RTPLACE_MOVE_F_SET_AFFINITY;
	int want_policy = set_sched ? req->policy : AUTH_SCHED_KEEP;
	uint32_t level;
	int r;

	reason->text[0] = '\0';
	if (!levels_source_live(engine_levels(m->o.engine))) {
		reason_set(reason, "moves need the live machine (not --topology)");
		return -EOPNOTSUPP;
	}
	/* A process-wide move authorises each thread with the same policy:
	 * what one decision consults, they all do. */
	r = auth_peer_move_creds(ap, engine_proc_root(m->o.engine), peer->pidfd, peer->pid, peer->uid, peer->gid, engine_policy(m->o.engine),
				 want_policy, &creds);
	if (r < 0) {
		reason_set(reason, "cannot read the credentials of pid %d", (int)peer->pid);
		return r;
	}
	/* The target's RT limit matters only to a policy change without
	 * CAP_SYS_NICE (auth_move_allowed()). */
	r = moves_target_read_live(m, req->tid, set_sched && !auth_cap_sys_nice(creds), &target);
	if (r == -EOPNOTSUPP)
		r = auth_target_read(engine_proc_root(m->o.engine), req->tid, &target);
	if (r == 0)
		r = moves_task_read(m, &target, &task);
	if (r == -ENOENT)
		r = -ESRCH;
	if (r < 0) {
		reason_set(reason, r == -ESRCH ? "thread %d does not exist" : "cannot read thread %d",
			   (int)req->tid);
		return r;
	}
	if (!(req->flags & RTPLACE_MOVE_F_SYSTEM)) {
		r = moves_guard(m, &task, req->tid, reason);
		if (r < 0)
			return r;
	}
	if (req->flags & RTPLACE_MOVE_F_PROCESS)
		return moves_move_process(m, creds, task.tgid, req, ret, reason);
	r = auth_move_allowed(creds, &target, engine_policy(m->o.engine), want_policy, req->prio, reason);
	if (r < 0)
		return r;
	if (set_sched)
		level = level_from_rt_priority(req->prio);
	else
		level = target.prio > 0 ? level_from_rt_priority(target.prio) : LEVEL_NORMAL;
	if (set_aff) {
		r = moves_target_cpus(m, req, level, -1, claimed_level, &cpus, reason);
		if (r < 0)
			return r;
	}
	/* The policy just read to authorise the move is the state before it:
	 * not read twice. */
	r = thread_sched_apply_known(req->tid, moves_known_policy(&target, &known), set_aff ? &cpus : NULL,
				     set_sched ? req->policy : THREAD_SCHED_KEEP_POLICY, req->prio, &res);
	if (r == -EPERM && set_sched && moves_explain_budget(m, req->tid, reason))
		return r;
	if (r < 0) {
		reason_set(reason, "%s of thread %d failed: %s",
			   r == -EINVAL ? "nothing to change; move" : "move", (int)req->tid, strerror(-r));
		return r;
	}
	moves_reply(req->tid, &res, ret);
	m->moved++;
	log_ratelimited(LOG_INFO, "pid %d uid %u moved thread %d: CPUs %d..., policy %d prio %d", (int)peer->pid,
			(unsigned)peer->uid, (int)req->tid, cpuset_next(&res.now.cpus, 0), res.now.policy, res.now.prio);
	moves_publish_moved(m, req->tid, target.euid, &res);
	return 0;
}

int moves_move(struct moves *m, const struct server_peer *peer, struct auth_peer *ap, const struct rtplace_move *req,
	       const uint8_t *claimed_level, struct rtplace_move_reply *ret, struct rtplace_reason *reason)
{
	int r = moves_move_one(m, peer, ap, req, claimed_level, ret, reason);

	if (r < 0)
		m->failed++;
	return r;
}

int moves_new(const struct moves_opts *opts, struct moves **ret)
{
	struct moves *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->o = *opts;
	m->self = getpid();
	*ret = m;
	return 0;
}

void moves_free(struct moves *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < MOVES_PIDFDS; i++)
		moves_pidfd_drop(&m->pidfds[i]);
	free(m);
}

void moves_get_counts(const struct moves *m, uint64_t *ret_moved, uint64_t *ret_failed)
{
	*ret_moved = m->moved;
	*ret_failed = m->failed;
}
