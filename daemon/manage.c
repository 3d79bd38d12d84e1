/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Managed processes and their threads: who is managed and why (a claim or
 * a manage-* rule), which of their threads the tracker watches, and the
 * tick that finds new threads and new rule matches and drains the
 * tracker's events. What a collision leads to is push.c's decision.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idmap.h"
#include "levels.h"
#include "log.h"
#include "loop.h"
#include "manage.h"
#include "procfs.h"
#include "push.h"
#include "quota.h"
#include "rtplace-proto.h"

/* Threads of managed processes followed at once: the tracker's map. */
#define MANAGE_MAX_THREADS TRACKER_MAX_WATCHED
_Static_assert(MANAGE_MAX_THREADS == CONFIG_WATCHED_MAX, "the parser bounds shares by the tracker's map");
/* New threads watched by one request or tick, all processes together:
 * each costs a map update and a /proc read, so a process with thousands
 * of threads is taken a batch a tick, never in one 50-90 ms turn of the
 * loop. A MANAGE of 4,200 threads answers in about
 * 5 ms, most of it listing /proc/PID/task once. */
#define MANAGE_WATCH_BATCH 64
/* The manage-* rules look for new processes in /proc at most this often:
 * a full /proc walk reads three files per process, too much for every
 * rebalancing tick (rtplaced.conf(5) promises "about a second"). */
#define MANAGE_RULE_SCAN_MS 1000

struct manage_proc {
	struct manage_proc *next;
	pid_t pid;
	uid_t uid;
	struct rtplace_cpumask allowed; /* where pushes may take its threads */
	bool by_rule;          /* managed by a [moves] manage-* rule, not by a claim */
	/* Whose share its watched threads count in: the claimer's, root's
	 * for a rule (the rules are root's). Fixed while it is managed. */
	uid_t charged;
};

struct manage {
	struct manage_opts o;
	struct tracker *tracker; /* the levels source's; NULL: nothing is managed */
	struct manage_proc *processes;
	struct manage_thread *threads;
	unsigned nthreads;
	/* threads[] by tid, with room for every thread: a put never fails. */
	struct idmap index;
	struct quota *quota; /* watched threads by charged uid */
	struct procfs_ids tasks, procs; /* the last listings, reused */
	struct event *ev_tick;
	struct event *ev_ring;
	uint64_t collisions;
	/* The manage-* rules, user names resolved to uids. */
	struct config_moves rules;
	uid_t rule_uids[CONFIG_MANAGE_MAX];
	unsigned n_rule_uids;
	uint64_t rule_scan_ms; /* when /proc was last walked for them */
};

static int manage_tracker_event_cb(const struct tracker_event *ev, void *ctx);

static struct manage_proc *manage_find_process(struct manage *mg, pid_t pid)
{
	for (struct manage_proc *mp = mg->processes; mp; mp = mp->next)
		if (mp->pid == pid)
			return mp;
	return NULL;
}

static struct manage_thread *manage_find_thread(struct manage *mg, pid_t tid)
{
	const uint32_t *at = idmap_find(&mg->index, (uint32_t)tid);

	return at ? &mg->threads[*at] : NULL;
}

/* The index has room for MANAGE_MAX_THREADS, which the caller checked. */
static void manage_add_thread(struct manage *mg, const struct manage_thread *mt)
{
	idmap_put(&mg->index, (uint32_t)mt->tid, mg->nthreads);
	mg->threads[mg->nthreads++] = *mt;
}

/* Forgets thread mt: the last entry takes its place in threads[]. The
 * caller has unwatched it (or the tracker has, at its exit). */
static void manage_drop_thread(struct manage *mg, struct manage_thread *mt, uid_t charged)
{
	unsigned at = (unsigned)(mt - mg->threads);

	idmap_remove(&mg->index, (uint32_t)mt->tid);
	quota_put(mg->quota, charged, 1);
	if (at != --mg->nthreads) {
		*mt = mg->threads[mg->nthreads];
		idmap_put(&mg->index, (uint32_t)mt->tid, at);
	}
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
static void manage_catch_up(struct manage *mg, pid_t pid, pid_t tid)
{
	struct tracker_event ev = { .type = TRACKER_EVENT_COLLISION, .tid = (uint32_t)tid, .tgid = (uint32_t)pid };
	struct procfs_stat st;

	if (procfs_read_stat(engine_proc_root(mg->o.engine), pid, tid, &st) < 0 || st.state != 'R' || st.rt_priority < 1 ||
	    st.cpu >= engine_topo(mg->o.engine)->ncpus)
		return;
	ev.cpu = st.cpu;
	ev.level = level_from_rt_priority(st.rt_priority);
	ev.cpu_level = cpupri_level(engine_view(mg->o.engine), ev.cpu);
	if (ev.cpu_level > ev.level && ev.cpu_level < LEVEL_COUNT)
		manage_tracker_event_cb(&ev, mg);
}

/*
 * Watches the threads of mp in the tracker, as many as its charged uid
 * has room for and at most *budget (lowered by those watched); threads
 * started since, and those left out, are looked for on the next tick.
 * Returns 0, or the quota's -errno with reason when the share ran out
 * before every thread was watched, or will for those beyond the batch.
 */
static int manage_scan_threads(struct manage *mg, struct manage_proc *mp, unsigned *budget,
			       struct rtplace_reason *reason)
{
	/* Listing the threads is the dear part of a scan of a large process:
	 * with no room left, no thread could be added anyway. */
	int r = quota_check_of(mg->quota, mp->charged, 1, reason);
	uint32_t rest = 0;
	size_t i = 0;

	if (r == 0 && *budget && procfs_list(engine_proc_root(mg->o.engine), mp->pid, &mg->tasks) == 0) {
		for (; i < mg->tasks.n && *budget && r == 0; i++) {
			pid_t tid = mg->tasks.ids[i];

			if (manage_find_thread(mg, tid))
				continue;
			r = quota_take(mg->quota, mp->charged, 1, reason);
			if (r == 0 && tracker_watch(mg->tracker, (uint32_t)tid, true) < 0) {
				quota_put(mg->quota, mp->charged, 1);
				continue;
			}
			if (r == 0) {
				manage_add_thread(mg, &(struct manage_thread){ .tid = tid, .pid = mp->pid, .uid = mp->uid });
				manage_catch_up(mg, mp->pid, tid);
				(*budget)--;
			}
		}
		/* Out of batch, not of room: say now whether the rest will fit
		 * (lookups only, a few microseconds for thousands). */
		for (; r == 0 && i < mg->tasks.n; i++)
			rest += !manage_find_thread(mg, mg->tasks.ids[i]);
		if (rest)
			r = quota_check_of(mg->quota, mp->charged, rest, reason);
	}
	return r;
}

static int manage_process_as(struct manage *mg, pid_t pid, uid_t uid, const struct rtplace_cpumask *allowed, bool by_rule,
			     struct rtplace_reason *note)
{
	struct rtplace_reason why = { "" };
	unsigned budget = MANAGE_WATCH_BATCH;
	struct manage_proc *mp;

	if (!mg->tracker)
		return -EOPNOTSUPP;
	mp = manage_find_process(mg, pid);
	if (mp) {
		/* A claim outranks a rule: it lives as long as the process,
		 * whatever a reload does to the rules. */
		if (mp->by_rule && !by_rule) {
			mp->by_rule = false;
			mp->uid = uid;
			mp->allowed = *allowed;
		}
		return 0;
	}
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	mp->pid = pid;
	mp->uid = uid;
	mp->allowed = *allowed;
	mp->by_rule = by_rule;
	mp->charged = by_rule ? 0 : uid;
	mp->next = mg->processes;
	mg->processes = mp;
	/* The process stays managed: threads are watched as room comes free. */
	if (manage_scan_threads(mg, mp, &budget, &why) < 0) {
		log_ratelimited(LOG_NOTICE, "pid %d: not all its threads are watched: %s", (int)pid, why.text);
		if (note)
			*note = why;
	}
	log_ratelimited(LOG_INFO, "managing the threads of pid %d%s", (int)pid, by_rule ? " (a [moves] manage rule)" : "");
	return 0;
}

int manage_process(struct manage *mg, pid_t pid, uid_t uid, const struct rtplace_cpumask *allowed, struct rtplace_reason *note)
{
	return manage_process_as(mg, pid, uid, allowed, false, note);
}

void manage_release(struct manage *mg, pid_t pid)
{
	for (struct manage_proc **pp = &mg->processes; *pp; pp = &(*pp)->next) {
		struct manage_proc *mp = *pp;

		if (mp->pid != pid)
			continue;
		*pp = mp->next;
		for (unsigned i = 0; i < mg->nthreads;) {
			if (mg->threads[i].pid != pid) {
				i++;
				continue;
			}
			tracker_watch(mg->tracker, (uint32_t)mg->threads[i].tid, false);
			manage_drop_thread(mg, &mg->threads[i], mp->charged);
		}
		free(mp);
		return;
	}
}

/* Whether cgroup path lies in prefix or below it (whole components). */
static bool manage_cgroup_below(const char *path, const char *prefix)
{
	size_t len = strlen(prefix);

	return strncmp(path, prefix, len) == 0 &&
	       (path[len] == '\0' || path[len] == '/' || prefix[len - 1] == '/');
}

static bool manage_rules_set(const struct manage *mg)
{
	return mg->rules.n_manage_comm || mg->n_rule_uids || mg->rules.n_manage_cgroup;
}

/*
 * Whether process pid matches a manage-* rule; its real uid in *ret_uid.
 * Kernel threads never match (their affinity is the kernel's), nor does
 * the daemon, nor a process that has gone.
 */
static bool manage_rule_match(struct manage *mg, pid_t pid, uid_t *ret_uid)
{
	char buf[8192];
	uint64_t uid, ppid;

	if (pid == 2 || pid == getpid() || procfs_read(engine_proc_root(mg->o.engine), pid, "status", buf, sizeof(buf)) < 0 ||
	    procfs_status_u64(buf, "Uid", 10, &uid) < 0 || procfs_status_u64(buf, "PPid", 10, &ppid) < 0 ||
	    ppid == 2)
		return false;
	*ret_uid = (uid_t)uid;
	for (unsigned i = 0; i < mg->n_rule_uids; i++)
		if (mg->rule_uids[i] == (uid_t)uid)
			return true;
	if (mg->rules.n_manage_comm && procfs_read(engine_proc_root(mg->o.engine), pid, "comm", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		for (uint32_t i = 0; i < mg->rules.n_manage_comm; i++)
			if (strcmp(buf, mg->rules.manage_comm[i]) == 0)
				return true;
	}
	if (mg->rules.n_manage_cgroup && procfs_read(engine_proc_root(mg->o.engine), pid, "cgroup", buf, sizeof(buf)) > 0) {
		/* The v2 hierarchy is the line "0::/path"; v1 lines never match. */
		for (char *line = buf, *next; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (strncmp(line, "0::", 3) != 0)
				continue;
			for (uint32_t i = 0; i < mg->rules.n_manage_cgroup; i++)
				if (manage_cgroup_below(line + 3, mg->rules.manage_cgroup[i]))
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
static void manage_rule_scan(struct manage *mg)
{
	struct manage_proc *mp, *next;
	uid_t uid;
	int r;

	mg->rule_scan_ms = loop_now_ms();
	for (mp = mg->processes; mp; mp = next) {
		next = mp->next;
		if (!mp->by_rule)
			continue;
		if (manage_rules_set(mg) && manage_rule_match(mg, mp->pid, &uid))
			mp->allowed = engine_placement(mg->o.engine)->managed; /* housekeeping-cpus may have changed */
		else
			manage_release(mg, mp->pid);
	}
	if (!manage_rules_set(mg))
		return;
	r = procfs_list(engine_proc_root(mg->o.engine), 0, &mg->procs);
	if (r < 0) {
		log_warning("Failed to read %s for the [moves] manage rules: %s", engine_proc_root(mg->o.engine), strerror(-r));
		return;
	}
	for (size_t i = 0; i < mg->procs.n; i++) {
		pid_t pid = mg->procs.ids[i];

		if (manage_find_process(mg, pid) || !manage_rule_match(mg, pid, &uid))
			continue;
		if (manage_process_as(mg, pid, uid, &engine_placement(mg->o.engine)->managed, true, NULL) < 0)
			log_warning("Failed to manage pid %d (a [moves] manage rule): out of memory", (int)pid);
	}
}

static int manage_tracker_event_cb(const struct tracker_event *ev, void *ctx)
{
	struct manage *mg = ctx;
	struct manage_thread *mt = manage_find_thread(mg, (pid_t)ev->tid);
	struct manage_proc *mp;
	uint8_t prio = (uint8_t)level_rt_priority(ev->level);

	if (!mt)
		return 0;
	switch (ev->type) {
	case TRACKER_EVENT_EXIT:
		notify_record(mg->o.notify, RTPLACE_RECORD_THREAD_EXITED, mt->tid, mt->uid, (int)ev->cpu, -1, 0, prio);
		/* The tracker forgets a thread at its exit. */
		mp = manage_find_process(mg, mt->pid);
		manage_drop_thread(mg, mt, mp ? mp->charged : 0);
		break;
	case TRACKER_EVENT_COLLISION:
		mg->collisions++;
		notify_record(mg->o.notify, RTPLACE_RECORD_COLLISION, mt->tid, mt->uid, (int)ev->cpu, -1,
			      prio ? SCHED_FIFO : 0, prio);
		mp = manage_find_process(mg, mt->pid);
		if (mp)
			push_thread(mg->o.push, mt->tid, mt->pid, mt->uid, &mt->push, &mp->allowed, ev);
		break;
	default:
		break;
	}
	return 0;
}

/* Collisions do not wake the ring buffer (DESIGN §12: a wakeup per record
 * doubles a context switch), so they are drained here, once per interval,
 * together with new threads of managed processes. */
static void manage_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct manage *mg = arg;
	unsigned budget = MANAGE_WATCH_BATCH;

	push_new_turn(mg->o.push);
	if (manage_rules_set(mg) && loop_now_ms() - mg->rule_scan_ms >= MANAGE_RULE_SCAN_MS)
		manage_rule_scan(mg);
	for (struct manage_proc *mp = mg->processes; mp; mp = mp->next)
		manage_scan_threads(mg, mp, &budget, NULL);
	tracker_consume(mg->tracker, manage_tracker_event_cb, mg);
}

/* Exits of watched threads wake the ring buffer: drain it at once. */
static void manage_ring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct manage *mg = arg;
	int r = tracker_consume(mg->tracker, manage_tracker_event_cb, mg);

	if (r < 0)
		log_warning("Failed to read tracker events: %s", strerror(-r));
}

/* Keeps the manage-* rules, user names resolved now: a user that does
 * not exist is logged and ignored, as rt-groups does with groups. */
static void manage_set_rules(struct manage *mg, const struct config_moves *cm)
{
	mg->rules = *cm;
	mg->n_rule_uids = 0;
	for (uint32_t i = 0; i < cm->n_manage_uid; i++) {
		const char *name = cm->manage_uid[i];
		struct passwd pw, *found = NULL;
		char buf[1024];

		if (name[strspn(name, "0123456789")] == '\0') {
			mg->rule_uids[mg->n_rule_uids++] = (uid_t)strtoul(name, NULL, 10);
			continue;
		}
		if (getpwnam_r(name, &pw, buf, sizeof(buf), &found) != 0 || !found) {
			log_warning("[moves] manage-uid: no user named '%s'; ignored", name);
			continue;
		}
		mg->rule_uids[mg->n_rule_uids++] = found->pw_uid;
	}
}

/* The tracker's map, of which users other than root get a part. */
static void manage_limits(const struct config *cfg, struct quota_limits *ret)
{
	*ret = (struct quota_limits){
		.size = MANAGE_MAX_THREADS,
		.users = cfg->limits.max_managed_threads,
		.per_user = cfg->limits.max_managed_threads_per_user,
		.users_key = "max-managed-threads",
		.per_user_key = "max-managed-threads-per-user",
	};
}

int manage_apply_config(struct manage *mg, const struct config *cfg)
{
	struct timeval tv = {
		.tv_sec = cfg->moves.rebalance_interval_ms / 1000,
		.tv_usec = (suseconds_t)(cfg->moves.rebalance_interval_ms % 1000) * 1000,
	};
	struct quota_limits limits;

	manage_limits(cfg, &limits);
	quota_set_limits(mg->quota, &limits);
	manage_set_rules(mg, &cfg->moves);
	/* Once now, at start and on every reload, whatever the last walk. */
	if (mg->tracker)
		manage_rule_scan(mg);
	if (mg->ev_tick && event_add(mg->ev_tick, &tv) < 0)
		return -ENOMEM;
	return 0;
}

/* A claim's owner exited: its threads are no longer watched for it. */
static void manage_claim_ended_cb(const struct claim *cl, uint32_t why, void *ctx)
{
	if (why == RTPLACE_CLAIM_ENDED_OWNER_EXITED)
		manage_release(ctx, cl->pid);
}

int manage_new(const struct manage_opts *opts, const struct config *cfg, struct manage **ret)
{
	struct manage *mg = calloc(1, sizeof(*mg));
	struct quota_limits limits;
	int r;

	if (!mg)
		return -ENOMEM;
	mg->o = *opts;
	mg->tracker = levels_source_tracker(engine_levels(opts->engine));
	manage_limits(cfg, &limits);
	mg->threads = calloc(MANAGE_MAX_THREADS, sizeof(*mg->threads));
	if (!mg->threads || idmap_init(&mg->index, MANAGE_MAX_THREADS) < 0 || quota_new(&limits, &mg->quota) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (mg->tracker) {
		mg->ev_tick = event_new(opts->base, -1, EV_PERSIST, manage_tick_cb, mg);
		mg->ev_ring = event_new(opts->base, tracker_ring_fd(mg->tracker), EV_READ | EV_PERSIST, manage_ring_cb,
					mg);
		if (!mg->ev_tick || !mg->ev_ring || event_add(mg->ev_ring, NULL) < 0) {
			r = -ENOMEM;
			goto fail;
		}
	}
	r = manage_apply_config(mg, cfg);
	if (r == 0)
		r = engine_on_claim_end(opts->engine, manage_claim_ended_cb, mg);
	if (r < 0)
		goto fail;
	*ret = mg;
	return 0;
fail:
	manage_free(mg);
	return r;
}

void manage_free(struct manage *mg)
{
	if (!mg)
		return;
	while (mg->processes) {
		struct manage_proc *mp = mg->processes;

		mg->processes = mp->next;
		free(mp);
	}
	if (mg->ev_tick)
		event_free(mg->ev_tick);
	if (mg->ev_ring)
		event_free(mg->ev_ring);
	free(mg->threads);
	idmap_free(&mg->index);
	quota_free(mg->quota);
	procfs_ids_free(&mg->tasks);
	procfs_ids_free(&mg->procs);
	free(mg);
}

uint64_t manage_collisions(const struct manage *mg)
{
	return mg->collisions;
}
