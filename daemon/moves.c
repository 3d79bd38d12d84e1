#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "conf.h"
#include "levels.h"
#include "log.h"
#include "loop.h"
#include "thread-sched.h"
#include "moves.h"
#include "procfs.h"
#include "protocol.h"

/* Pushes per drain turn, all threads together: a storm of collisions must
 * not turn the daemon into a migration engine. */
#define MOVES_PUSH_BUDGET 64
/* Threads of managed processes followed at once. */
#define MOVES_MAX_THREADS 4096
/* How many times a move re-picks when the map changed under it. */
#define MOVES_REPICK_TRIES 3
/* The [moves] manage-* rules look for new processes in /proc at most this
 * often: a full /proc walk reads three files per process, too much for
 * every rebalancing tick (rtplaced.conf(5) promises "about a second"). */
#define MOVES_RULE_SCAN_MS 1000

struct moves_managed {
	struct moves_managed *next;
	pid_t pid;
	uid_t uid;
	struct cpuset allowed; /* where pushes may take its threads */
	bool by_rule;          /* managed by a [moves] manage-* rule, not by a claim */
};

/* A thread of a managed process and when it last moved. */
struct moves_thread {
	pid_t tid;
	pid_t pid;
	uid_t uid;
	uint64_t last_push_ms;
};

struct moves_sub {
	struct moves_sub *next;
	uint32_t client;
	struct notify_sub *sub;
};

struct moves {
	struct moves_opts o;
	struct auth_policy policy;
	bool rebalance;
	uint32_t interval_ms;
	struct notify *notify;
	struct moves_sub *subs;
	struct moves_managed *managed;
	struct moves_thread *threads;
	unsigned nthreads;
	struct event *ev_tick;
	struct event *ev_ring;
	uint32_t rotor;
	struct placement_result placed; /* moves_pick()'s answer: no allocation per pick */
	unsigned budget;
	uint64_t moves;        /* threads moved by MOVE requests and pushes */
	uint64_t moves_failed; /* MOVE requests refused or failed, pushes failed */
	uint64_t collisions;   /* reported on managed threads */
	/* The manage-* rules, user names resolved to uids. */
	struct config_moves rules;
	uid_t rule_uids[CONFIG_MANAGE_MAX];
	unsigned n_rule_uids;
	uint64_t rule_scan_ms; /* when /proc was last walked for them */
};

static uint64_t moves_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void moves_publish(struct moves *m, uint8_t type, int32_t tid, uint32_t uid, int from_cpu, int to_cpu,
		   uint8_t policy, uint8_t prio)
{
	struct rtplace_record rec = {
		.time_ns = moves_now_ns(),
		.tid = tid,
		.uid = uid,
		.from_cpu = (int16_t)from_cpu,
		.to_cpu = (int16_t)to_cpu,
		.type = type,
		.policy = policy,
		.prio = prio,
	};

	notify_publish(m->notify, &rec);
}

/* The one CPU of s, or -1 when s holds none or several. */
static int moves_single_cpu(const struct cpuset *s)
{
	return cpuset_count(s) == 1 ? cpuset_next(s, 0) : -1;
}

/* The best CPU in allowed for a thread at level, near cpu near, or -1. */
static int moves_pick(struct moves *m, const struct cpuset *allowed, int near, uint32_t level,
		      const uint8_t *claimed)
{
	struct placement_request req = { .prio = level_rt_priority(level), .count = 1, .node = -1, .near_cpu = near };

	req.allowed = *allowed;
	if (req.prio > 0 && placement_ctx_choose(*m->o.placement, claimed, &m->rotor, &req, &m->placed) == 0)
		return m->placed.cpus[0];
	return -1;
}

/*
 * The affinity a MOVE applies. A single requested CPU, or the one picked
 * with PLACE, is re-checked against the live map just before the move, as
 * the kernel re-checks a pushed task's target after locking it: if it is no
 * longer below the thread's level, the daemon picks again near it.
 */
static int moves_target_cpus(struct moves *m, const struct rtplace_move *req, uint32_t level, int current_cpu,
			     const uint8_t *claimed, struct cpuset *ret, char reason[RTPLACE_REASON_MAX])
{
	struct cpuset asked;
	int cpu;

	proto_cpumask_to_cpuset(&req->cpus, &asked);
	/* The kernel would refuse it with a bare EINVAL (hotplug, see the map). */
	CPUSET_FOREACH(c, &asked) {
		if ((uint32_t)c < m->o.topo->ncpus && cpupri_level(m->o.view, (uint32_t)c) == LEVEL_OFFLINE) {
			snprintf(reason, RTPLACE_REASON_MAX, "CPU %d is offline", c);
			return -EINVAL;
		}
	}
	cpuset_and(&asked, &asked, &m->o.topo->online);
	if (cpuset_empty(&asked)) {
		snprintf(reason, RTPLACE_REASON_MAX, "no online CPU in the requested set");
		return -EINVAL;
	}
	*ret = asked;
	if (req->flags & RTPLACE_MOVE_F_FORCE || level < LEVEL_RT1 || level > LEVEL_RT99)
		return 0;
	cpu = req->flags & RTPLACE_MOVE_F_PLACE ? moves_pick(m, &asked, current_cpu, level, claimed)
						: moves_single_cpu(&asked);
	if (req->flags & RTPLACE_MOVE_F_PLACE && cpu < 0) {
		snprintf(reason, RTPLACE_REASON_MAX, "no CPU below rt%d in the requested set",
			 level_rt_priority(level));
		return -EBUSY;
	}
	if (cpu < 0)
		return 0; /* several CPUs without PLACE: the kernel chooses among them */
	for (int i = 0; i < MOVES_REPICK_TRIES && cpupri_level(m->o.view, (uint32_t)cpu) >= level; i++)
		cpu = moves_pick(m, &m->o.pcfg->managed, cpu, level, claimed);
	if (cpu < 0 || cpupri_level(m->o.view, (uint32_t)cpu) >= level) {
		snprintf(reason, RTPLACE_REASON_MAX, "no managed CPU below rt%d any more", level_rt_priority(level));
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
	r = procfs_read_stat(m->o.proc_root, tid, 0, &st);
	if (r < 0)
		return r;
	t.flags = st.flags;
	if (t.flags & PROCFS_PF_KTHREAD) {
		n = procfs_read(m->o.proc_root, tid, "comm", buf, sizeof(buf));
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
static int moves_guard(const struct moves_task *t, pid_t tid, char reason[RTPLACE_REASON_MAX])
{
	if (t->tgid == 1)
		snprintf(reason, RTPLACE_REASON_MAX, "thread %d is of init (pid 1): needs --force", (int)tid);
	else if (t->flags & PROCFS_PF_KTHREAD)
		snprintf(reason, RTPLACE_REASON_MAX, "thread %d (%s): kernel thread, needs --force", (int)tid, t->comm);
	else if (t->tgid == getpid())
		snprintf(reason, RTPLACE_REASON_MAX, "thread %d is rtplaced's own: needs --force", (int)tid);
	else
		return 0;
	return -EPERM;
}

/* May the requester move tid as req asks? The target's state in *ret_target. */
static int moves_authorise(struct moves *m, const struct auth_creds *creds, pid_t tid, const struct rtplace_move *req,
			   struct auth_target *ret_target, char reason[RTPLACE_REASON_MAX])
{
	int want_policy = req->flags & RTPLACE_MOVE_F_SET_SCHED ? req->policy : AUTH_SCHED_KEEP;
	int r = auth_target_read(m->o.proc_root, tid, ret_target);

	if (r < 0) {
		snprintf(reason, RTPLACE_REASON_MAX, "thread %d does not exist", (int)tid);
		return r == -ENOENT ? -ESRCH : r;
	}
	return auth_move_allowed(creds, ret_target, &m->policy, want_policy, req->prio, reason);
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
	proto_cpumask_from_cpuset(&res->now.cpus, &ret->cpus);
	proto_cpumask_from_cpuset(&res->prev.cpus, &ret->prev_cpus);
}

static void moves_publish_moved(struct moves *m, pid_t tid, uid_t euid, const struct thread_sched_result *res)
{
	struct rtplace_move_reply r;

	moves_reply(tid, res, &r);
	moves_publish(m, RTPLACE_RECORD_MOVED, tid, euid, moves_single_cpu(&res->prev.cpus),
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
 * *tids (grown as needed). Returns how many, or -errno (-ESRCH when the
 * process is gone).
 */
static ssize_t moves_list_new_threads(struct moves *m, pid_t pid, const struct moves_done *done, size_t ndone,
				      pid_t **tids, size_t *cap)
{
	char path[64];
	struct dirent *e;
	size_t n = 0;
	DIR *dp;

	snprintf(path, sizeof(path), "%s/%d/task", m->o.proc_root, (int)pid);
	dp = opendir(path);
	if (!dp)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(dp))) {
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
		bool known = false;

		if (tid <= 0)
			continue;
		for (size_t i = 0; i < ndone && !known; i++)
			known = done[i].tid == tid;
		if (known)
			continue;
		if (n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			pid_t *t = realloc(*tids, c * sizeof(*t));

			if (!t) {
				closedir(dp);
				return -ENOMEM;
			}
			*tids = t;
			*cap = c;
		}
		(*tids)[n++] = tid;
	}
	closedir(dp);
	return (ssize_t)n;
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
			      char reason[RTPLACE_REASON_MAX])
{
	bool set_sched = req->flags & RTPLACE_MOVE_F_SET_SCHED;
	struct cpuset cpus, *aff = NULL;
	struct moves_done *done = NULL, *named = NULL;
	size_t ndone = 0, cap = 0, tcap = 0;
	pid_t *tids = NULL;
	int r = 0;

	if (req->flags & RTPLACE_MOVE_F_SET_AFFINITY) {
		proto_cpumask_to_cpuset(&req->cpus, &cpus);
		cpuset_and(&cpus, &cpus, &m->o.topo->online);
		if (cpuset_empty(&cpus)) {
			snprintf(reason, RTPLACE_REASON_MAX, "no online CPU in the requested set");
			return -EINVAL;
		}
		aff = &cpus;
	}
	for (int pass = 0; pass < MOVES_PROCESS_PASSES; pass++) {
		ssize_t n = moves_list_new_threads(m, pid, done, ndone, &tids, &tcap);
		struct auth_target *targets = NULL;

		if (n == -ESRCH && ndone > 0)
			break; /* the process exited after its threads moved */
		if (n < 0) {
			r = (int)n;
			snprintf(reason, RTPLACE_REASON_MAX, "cannot list the threads of pid %d: %s", (int)pid,
				 strerror(-r));
			goto fail;
		}
		if (n == 0)
			break;
		if (ndone + (size_t)n > cap) {
			struct moves_done *grown = reallocarray(done, ndone + (size_t)n, sizeof(*done));

			if (grown) {
				done = grown;
				cap = ndone + (size_t)n;
			}
		}
		targets = calloc((size_t)n, sizeof(*targets));
		if (!targets || ndone + (size_t)n > cap) {
			free(targets);
			r = -ENOMEM;
			snprintf(reason, RTPLACE_REASON_MAX, "out of memory");
			goto fail;
		}
		for (ssize_t i = 0; i < n && r == 0; i++) {
			r = moves_authorise(m, creds, tids[i], req, &targets[i], reason);
			if (r == -ESRCH) {
				tids[i] = 0; /* exited: nothing to move */
				r = 0;
			}
		}
		for (ssize_t i = 0; i < n && r == 0; i++) {
			struct moves_done *d = &done[ndone];

			if (!tids[i])
				continue;
			r = thread_sched_apply(tids[i], aff, set_sched ? req->policy : THREAD_SCHED_KEEP_POLICY, req->prio, &d->res);
			if (r == -ESRCH) {
				r = 0;
				continue;
			}
			if (r < 0)
				snprintf(reason, RTPLACE_REASON_MAX, "thread %d of pid %d: %s; none moved", (int)tids[i],
					 (int)pid, strerror(-r));
			d->tid = tids[i];
			d->euid = targets[i].euid;
			ndone += r == 0;
		}
		free(targets);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; i < ndone && !named; i++)
		if (done[i].tid == req->tid)
			named = &done[i];
	if (!named) {
		r = -ESRCH;
		snprintf(reason, RTPLACE_REASON_MAX, "thread %d exited during the move; none moved", (int)req->tid);
		goto fail;
	}
	moves_reply(req->tid, &named->res, ret);
	for (size_t i = 0; i < ndone; i++)
		moves_publish_moved(m, done[i].tid, done[i].euid, &done[i].res);
	m->moves += ndone;
	log_ratelimited(LOG_INFO, "pid %d uid %u moved the %zu threads of pid %d: CPUs %d..., policy %d prio %d",
			(int)creds->pid, (unsigned)creds->uid, ndone, (int)pid, cpuset_next(&named->res.now.cpus, 0),
			named->res.now.policy, named->res.now.prio);
	goto out;
fail:
	moves_undo(done, ndone);
out:
	free(done);
	free(tids);
	return r;
}

static int moves_move_one(struct moves *m, const struct server_peer *peer, struct auth_peer *ap,
			  const struct rtplace_move *req, const uint8_t *claimed_level, struct rtplace_move_reply *ret,
			  char reason[RTPLACE_REASON_MAX])
{
	const struct auth_creds *creds;
	struct auth_target target;
	struct moves_task task;
	struct thread_sched_result res;
	struct cpuset cpus;
	bool set_sched = req->flags & RTPLACE_MOVE_F_SET_SCHED;
	bool set_aff = req->flags & RTPLACE_MOVE_F_SET_AFFINITY;
	int want_policy = set_sched ? req->policy : AUTH_SCHED_KEEP;
	uint32_t level;
	int r;

	reason[0] = '\0';
	if (!m->o.tracker) {
		snprintf(reason, RTPLACE_REASON_MAX, "moves need the live machine (not --topology)");
		return -EOPNOTSUPP;
	}
	r = auth_peer_creds(ap, m->o.proc_root, peer->pidfd, peer->pid, peer->uid, peer->gid, &creds);
	if (r < 0) {
		snprintf(reason, RTPLACE_REASON_MAX, "cannot read the credentials of pid %d", (int)peer->pid);
		return r;
	}
	/* The target's RT limit matters only to a policy change without
	 * CAP_SYS_NICE (auth_move_allowed()). */
	r = auth_target_read_live(req->tid, set_sched && !creds->cap_sys_nice, &target);
	if (r == -EOPNOTSUPP)
		r = auth_target_read(m->o.proc_root, req->tid, &target);
	if (r == 0)
		r = moves_task_read(m, &target, &task);
	if (r == -ENOENT)
		r = -ESRCH;
	if (r < 0) {
		snprintf(reason, RTPLACE_REASON_MAX, r == -ESRCH ? "thread %d does not exist" : "cannot read thread %d",
			 (int)req->tid);
		return r;
	}
	if (!(req->flags & RTPLACE_MOVE_F_SYSTEM)) {
		r = moves_guard(&task, req->tid, reason);
		if (r < 0)
			return r;
	}
	if (req->flags & RTPLACE_MOVE_F_PROCESS)
		return moves_move_process(m, creds, task.tgid, req, ret, reason);
	r = auth_move_allowed(creds, &target, &m->policy, want_policy, req->prio, reason);
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
	r = thread_sched_apply(req->tid, set_aff ? &cpus : NULL, set_sched ? req->policy : THREAD_SCHED_KEEP_POLICY, req->prio, &res);
	if (r < 0) {
		snprintf(reason, RTPLACE_REASON_MAX, "%s of thread %d failed: %s",
			 r == -EINVAL ? "nothing to change; move" : "move", (int)req->tid, strerror(-r));
		return r;
	}
	moves_reply(req->tid, &res, ret);
	m->moves++;
	log_ratelimited(LOG_INFO, "pid %d uid %u moved thread %d: CPUs %d..., policy %d prio %d", (int)peer->pid,
			(unsigned)peer->uid, (int)req->tid, cpuset_next(&res.now.cpus, 0), res.now.policy, res.now.prio);
	moves_publish_moved(m, req->tid, target.euid, &res);
	return 0;
}

int moves_move(struct moves *m, const struct server_peer *peer, struct auth_peer *ap, const struct rtplace_move *req,
	       const uint8_t *claimed_level, struct rtplace_move_reply *ret, char reason[RTPLACE_REASON_MAX])
{
	int r = moves_move_one(m, peer, ap, req, claimed_level, ret, reason);

	if (r < 0)
		m->moves_failed++;
	return r;
}

int moves_subscribe(struct moves *m, const struct server_peer *peer, struct notify_sub_info *ret,
		    char reason[RTPLACE_REASON_MAX])
{
	struct auth_creds creds;
	struct moves_sub *ms;
	int r;

	for (ms = m->subs; ms; ms = ms->next) {
		if (ms->client == peer->id) {
			notify_sub_info(ms->sub, ret);
			return 0;
		}
	}
	r = auth_creds_read(m->o.proc_root, peer->pid, peer->uid, peer->gid, &creds);
	if (r < 0) {
		snprintf(reason, RTPLACE_REASON_MAX, "cannot read the credentials of pid %d", (int)peer->pid);
		return r;
	}
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	/* Unprivileged subscribers see only records about their own threads. */
	r = notify_subscribe(m->notify, peer->uid, auth_is_privileged(&creds), &ms->sub);
	if (r < 0) {
		free(ms);
		snprintf(reason, RTPLACE_REASON_MAX, r == -EUSERS ? "too many subscribers" : "cannot create the ring");
		return r;
	}
	ms->client = peer->id;
	ms->next = m->subs;
	m->subs = ms;
	notify_sub_info(ms->sub, ret);
	return 0;
}

void moves_client_gone(struct moves *m, uint32_t client)
{
	for (struct moves_sub **pp = &m->subs; *pp; pp = &(*pp)->next) {
		struct moves_sub *ms = *pp;

		if (ms->client == client) {
			*pp = ms->next;
			notify_unsubscribe(m->notify, ms->sub);
			free(ms);
			return;
		}
	}
}

static struct moves_managed *moves_find_managed(struct moves *m, pid_t pid)
{
	for (struct moves_managed *mm = m->managed; mm; mm = mm->next)
		if (mm->pid == pid)
			return mm;
	return NULL;
}

static struct moves_thread *moves_find_thread(struct moves *m, pid_t tid)
{
	for (unsigned i = 0; i < m->nthreads; i++)
		if (m->threads[i].tid == tid)
			return &m->threads[i];
	return NULL;
}

/*
 * The tracker reports a collision when a thread is queued behind a higher
 * task, not while it keeps waiting: a thread that was already stuck when
 * it became managed (a manage rule finds processes up to a second late)
 * would never be pushed. So a newly watched runnable RT thread whose CPU
 * is at a level above its own gets the collision the tracker would have
 * reported. (At an equal level the CPU may be at it only because of the
 * thread itself, so that case waits for the tracker.)
 */
static void moves_catch_up(struct moves *m, pid_t pid, pid_t tid)
{
	struct tracker_event ev = { .type = TRACKER_EVENT_COLLISION, .tid = (uint32_t)tid, .tgid = (uint32_t)pid };
	struct procfs_stat st;

	if (procfs_read_stat(m->o.proc_root, pid, tid, &st) < 0 || st.state != 'R' || st.rt_priority < 1 ||
	    st.cpu >= m->o.topo->ncpus)
		return;
	ev.cpu = st.cpu;
	ev.level = level_from_rt_priority(st.rt_priority);
	ev.cpu_level = cpupri_level(m->o.view, ev.cpu);
	if (ev.cpu_level > ev.level && ev.cpu_level < LEVEL_COUNT)
		moves_tracker_event_cb(&ev, m);
}

/* Watches every thread of mm in the tracker; threads started since the
 * last scan are picked up on the next tick. */
static void moves_scan(struct moves *m, struct moves_managed *mm)
{
	char path[64];
	struct dirent *e;
	DIR *dp;

	snprintf(path, sizeof(path), "%s/%d/task", m->o.proc_root, (int)mm->pid);
	dp = opendir(path);
	if (!dp)
		return;
	while ((e = readdir(dp))) {
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

		if (tid <= 0 || moves_find_thread(m, tid) || m->nthreads == MOVES_MAX_THREADS)
			continue;
		if (tracker_watch(m->o.tracker, (uint32_t)tid, true) < 0)
			continue;
		m->threads[m->nthreads++] = (struct moves_thread){ .tid = tid, .pid = mm->pid, .uid = mm->uid };
		moves_catch_up(m, mm->pid, tid);
	}
	closedir(dp);
}

static int moves_manage_as(struct moves *m, pid_t pid, uid_t uid, const struct cpuset *allowed, bool by_rule)
{
	struct moves_managed *mm;

	if (!m->o.tracker)
		return -EOPNOTSUPP;
	mm = moves_find_managed(m, pid);
	if (mm) {
		/* A claim outranks a rule: it lives as long as the process,
		 * whatever a reload does to the rules. */
		if (mm->by_rule && !by_rule) {
			mm->by_rule = false;
			mm->uid = uid;
			mm->allowed = *allowed;
		}
		return 0;
	}
	mm = calloc(1, sizeof(*mm));
	if (!mm)
		return -ENOMEM;
	mm->pid = pid;
	mm->uid = uid;
	mm->allowed = *allowed;
	mm->by_rule = by_rule;
	mm->next = m->managed;
	m->managed = mm;
	moves_scan(m, mm);
	log_ratelimited(LOG_INFO, "managing the threads of pid %d%s", (int)pid, by_rule ? " (a [moves] manage rule)" : "");
	return 0;
}

int moves_manage(struct moves *m, pid_t pid, uid_t uid, const struct cpuset *allowed)
{
	return moves_manage_as(m, pid, uid, allowed, false);
}

static void moves_forget_thread(struct moves *m, unsigned i)
{
	tracker_watch(m->o.tracker, (uint32_t)m->threads[i].tid, false);
	m->threads[i] = m->threads[--m->nthreads];
}

void moves_unmanage(struct moves *m, pid_t pid)
{
	for (struct moves_managed **pp = &m->managed; *pp; pp = &(*pp)->next) {
		struct moves_managed *mm = *pp;

		if (mm->pid != pid)
			continue;
		*pp = mm->next;
		free(mm);
		for (unsigned i = 0; i < m->nthreads;) {
			if (m->threads[i].pid == pid)
				moves_forget_thread(m, i);
			else
				i++;
		}
		return;
	}
}

/* Whether cgroup path lies in prefix or below it (whole components). */
static bool moves_cgroup_below(const char *path, const char *prefix)
{
	size_t len = strlen(prefix);

	return strncmp(path, prefix, len) == 0 &&
	       (path[len] == '\0' || path[len] == '/' || prefix[len - 1] == '/');
}

static bool moves_rules_set(const struct moves *m)
{
	return m->rules.n_manage_comm || m->n_rule_uids || m->rules.n_manage_cgroup;
}

/*
 * Whether process pid matches a manage-* rule; its real uid in *ret_uid.
 * Kernel threads never match (their affinity is the kernel's), nor does
 * the daemon, nor a process that has gone.
 */
static bool moves_rule_match(struct moves *m, pid_t pid, uid_t *ret_uid)
{
	char buf[8192];
	uint64_t uid, ppid;

	if (pid == 2 || pid == getpid() || procfs_read(m->o.proc_root, pid, "status", buf, sizeof(buf)) < 0 ||
	    procfs_status_u64(buf, "Uid", 10, &uid) < 0 || procfs_status_u64(buf, "PPid", 10, &ppid) < 0 ||
	    ppid == 2)
		return false;
	*ret_uid = (uid_t)uid;
	for (unsigned i = 0; i < m->n_rule_uids; i++)
		if (m->rule_uids[i] == (uid_t)uid)
			return true;
	if (m->rules.n_manage_comm && procfs_read(m->o.proc_root, pid, "comm", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		for (uint32_t i = 0; i < m->rules.n_manage_comm; i++)
			if (strcmp(buf, m->rules.manage_comm[i]) == 0)
				return true;
	}
	if (m->rules.n_manage_cgroup && procfs_read(m->o.proc_root, pid, "cgroup", buf, sizeof(buf)) > 0) {
		/* The v2 hierarchy is the line "0::/path"; v1 lines never match. */
		for (char *line = buf, *next; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (strncmp(line, "0::", 3) != 0)
				continue;
			for (uint32_t i = 0; i < m->rules.n_manage_cgroup; i++)
				if (moves_cgroup_below(line + 3, m->rules.manage_cgroup[i]))
					return true;
		}
	}
	return false;
}

/*
 * Applies the manage-* rules: processes that no longer match (gone, or
 * the rules changed) stop being managed by them, and every process in
 * /proc that matches and is not managed yet becomes managed, its threads
 * allowed on the managed CPUs.
 */
static void moves_rule_scan(struct moves *m)
{
	struct moves_managed *mm, *next;
	struct dirent *e;
	uid_t uid;
	DIR *dp;

	m->rule_scan_ms = loop_now_ms();
	for (mm = m->managed; mm; mm = next) {
		next = mm->next;
		if (!mm->by_rule)
			continue;
		if (moves_rules_set(m) && moves_rule_match(m, mm->pid, &uid))
			mm->allowed = m->o.pcfg->managed; /* housekeeping-cpus may have changed */
		else
			moves_unmanage(m, mm->pid);
	}
	if (!moves_rules_set(m))
		return;
	dp = opendir(m->o.proc_root);
	if (!dp) {
		log_warning("Failed to read %s for the [moves] manage rules: %m", m->o.proc_root);
		return;
	}
	while ((e = readdir(dp))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || *end || moves_find_managed(m, (pid_t)pid) || !moves_rule_match(m, (pid_t)pid, &uid))
			continue;
		if (moves_manage_as(m, (pid_t)pid, uid, &m->o.pcfg->managed, true) < 0)
			log_warning("Failed to manage pid %ld (a [moves] manage rule): out of memory", pid);
	}
	closedir(dp);
}

/* A user-space RT push: mt waits on cpu behind a task at cpu_level or
 * above; move it to a lower CPU it is allowed on, if there is one. */
static void moves_push(struct moves *m, struct moves_thread *mt, const struct tracker_event *ev)
{
	struct moves_managed *mm = moves_find_managed(m, mt->pid);
	uint64_t now = loop_now_ms();
	struct thread_sched_result res;
	struct cpuset to;
	int cpu;

	if (!mm || !m->rebalance || m->budget == 0 || (mt->last_push_ms && now - mt->last_push_ms < m->interval_ms))
		return;
	cpu = moves_pick(m, &mm->allowed, (int)ev->cpu, ev->level, claims_levels_except(m->o.claims, mt->pid));
	if (cpu < 0 || (uint32_t)cpu == ev->cpu || cpupri_level(m->o.view, (uint32_t)cpu) >= ev->level)
		return;
	cpuset_zero(&to);
	cpuset_set(&to, (unsigned)cpu);
	m->budget--;
	mt->last_push_ms = now;
	if (thread_sched_apply(mt->tid, &to, THREAD_SCHED_KEEP_POLICY, 0, &res) < 0) {
		m->moves_failed++;
		return;
	}
	m->moves++;
	log_debug("pushed thread %d of pid %d from CPU %u (%u) to CPU %d", (int)mt->tid, (int)mt->pid, ev->cpu,
		  ev->cpu_level, cpu);
	moves_publish(m, RTPLACE_RECORD_MOVED, mt->tid, mt->uid, (int)ev->cpu, cpu, (uint8_t)res.now.policy,
		      (uint8_t)res.now.prio);
}

int moves_tracker_event_cb(const struct tracker_event *ev, void *ctx)
{
	struct moves *m = ctx;
	struct moves_thread *mt = moves_find_thread(m, (pid_t)ev->tid);
	uint8_t prio = (uint8_t)level_rt_priority(ev->level);

	if (!mt)
		return 0;
	switch (ev->type) {
	case TRACKER_EVENT_EXIT:
		moves_publish(m, RTPLACE_RECORD_THREAD_EXITED, mt->tid, mt->uid, (int)ev->cpu, -1, 0, prio);
		/* The tracker forgets a thread at its exit. */
		m->threads[mt - m->threads] = m->threads[--m->nthreads];
		break;
	case TRACKER_EVENT_COLLISION:
		m->collisions++;
		moves_publish(m, RTPLACE_RECORD_COLLISION, mt->tid, mt->uid, (int)ev->cpu, -1, prio ? SCHED_FIFO : 0,
			      prio);
		moves_push(m, mt, ev);
		break;
	default:
		break;
	}
	return 0;
}

/* Collisions do not wake the ring buffer (DESIGN §12: a wakeup per record
 * doubles a context switch), so they are drained here, once per interval,
 * together with new threads of managed processes. */
static void moves_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct moves *m = arg;

	m->budget = MOVES_PUSH_BUDGET;
	if (moves_rules_set(m) && loop_now_ms() - m->rule_scan_ms >= MOVES_RULE_SCAN_MS)
		moves_rule_scan(m);
	for (struct moves_managed *mm = m->managed; mm; mm = mm->next)
		moves_scan(m, mm);
	tracker_consume(m->o.tracker, moves_tracker_event_cb, m);
}

/* Exits of watched threads wake the ring buffer: drain it at once. */
static void moves_ring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct moves *m = arg;
	int r = tracker_consume(m->o.tracker, moves_tracker_event_cb, m);

	if (r < 0)
		log_warning("Failed to read tracker events: %s", strerror(-r));
}

/* Keeps the manage-* rules, user names resolved now: a user that does
 * not exist is logged and ignored, as rt-groups does with groups. */
static void moves_set_rules(struct moves *m, const struct config_moves *cm)
{
	m->rules = *cm;
	m->n_rule_uids = 0;
	for (uint32_t i = 0; i < cm->n_manage_uid; i++) {
		const char *name = cm->manage_uid[i];
		struct passwd pw, *found = NULL;
		char buf[1024];

		if (name[strspn(name, "0123456789")] == '\0') {
			m->rule_uids[m->n_rule_uids++] = (uid_t)strtoul(name, NULL, 10);
			continue;
		}
		if (getpwnam_r(name, &pw, buf, sizeof(buf), &found) != 0 || !found) {
			log_warning("[moves] manage-uid: no user named '%s'; ignored", name);
			continue;
		}
		m->rule_uids[m->n_rule_uids++] = found->pw_uid;
	}
}

int moves_apply_config(struct moves *m, const struct config *cfg)
{
	struct auth_policy policy = {
		.allow = cfg->moves.allow == CONFIG_MOVES_ROOT ? AUTH_ALLOW_ROOT : AUTH_ALLOW_OWNER,
		.max_prio = cfg->moves.max_prio,
	};
	struct timeval tv = {
		.tv_sec = cfg->moves.rebalance_interval_ms / 1000,
		.tv_usec = (suseconds_t)(cfg->moves.rebalance_interval_ms % 1000) * 1000,
	};

	for (uint32_t i = 0; i < cfg->moves.n_rt_groups; i++)
		if (auth_policy_add_group(&policy, cfg->moves.rt_groups[i]) < 0)
			log_warning("[moves] rt-groups: no group named '%s'; ignored", cfg->moves.rt_groups[i]);
	m->policy = policy;
	m->rebalance = cfg->moves.rebalance;
	m->interval_ms = cfg->moves.rebalance_interval_ms;
	moves_set_rules(m, &cfg->moves);
	/* Once now, at start and on every reload, whatever the last walk. */
	if (m->o.tracker)
		moves_rule_scan(m);
	if (m->ev_tick && event_add(m->ev_tick, &tv) < 0)
		return -ENOMEM;
	return 0;
}

int moves_new(const struct moves_opts *opts, const struct config *cfg, struct moves **ret)
{
	struct moves *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->o = *opts;
	m->budget = MOVES_PUSH_BUDGET;
	r = notify_new(cfg->notify.ring_records, cfg->limits.max_clients, &m->notify);
	if (r < 0)
		goto fail;
	m->threads = calloc(MOVES_MAX_THREADS, sizeof(*m->threads));
	if (!m->threads) {
		r = -ENOMEM;
		goto fail;
	}
	if (opts->tracker) {
		m->ev_tick = event_new(opts->base, -1, EV_PERSIST, moves_tick_cb, m);
		m->ev_ring = event_new(opts->base, tracker_ring_fd(opts->tracker), EV_READ | EV_PERSIST, moves_ring_cb, m);
		if (!m->ev_tick || !m->ev_ring || event_add(m->ev_ring, NULL) < 0) {
			r = -ENOMEM;
			goto fail;
		}
	}
	r = moves_apply_config(m, cfg);
	if (r < 0)
		goto fail;
	*ret = m;
	return 0;
fail:
	moves_free(m);
	return r;
}

void moves_free(struct moves *m)
{
	if (!m)
		return;
	while (m->subs) {
		struct moves_sub *ms = m->subs;

		m->subs = ms->next;
		notify_unsubscribe(m->notify, ms->sub);
		free(ms);
	}
	while (m->managed) {
		struct moves_managed *mm = m->managed;

		m->managed = mm->next;
		free(mm);
	}
	if (m->ev_tick)
		event_free(m->ev_tick);
	if (m->ev_ring)
		event_free(m->ev_ring);
	notify_free(m->notify);
	free(m->threads);
	free(m);
}

const struct auth_policy *moves_auth_policy(const struct moves *m)
{
	return &m->policy;
}

uint64_t moves_count(const struct moves *m)
{
	return m->moves;
}

void moves_get_stats(const struct moves *m, struct moves_stats *ret)
{
	struct notify_stats ns;

	notify_get_stats(m->notify, &ns);
	*ret = (struct moves_stats){
		.moved = m->moves,
		.failed = m->moves_failed,
		.collisions = m->collisions,
		.records_lost = ns.dropped,
	};
}
