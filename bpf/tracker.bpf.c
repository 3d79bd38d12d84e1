/*
 * The tracker: keeps every managed CPU's priority level (levels.h) in the
 * cpupri map from the scheduler's own state, and reports the events the
 * daemon must act on through a ring buffer (DESIGN §3, §4).
 *
 * Where levels come from. Every level is computed from the runqueue of the
 * CPU it describes, read while the scheduler holds that runqueue's lock, so
 * each CPU has one writer at a time and the value is the kernel's own:
 *
 *   - sched_switch: the switching CPU, rq->curr already the next task;
 *   - sched_wakeup, sched_wakeup_new: the CPU the task was just enqueued on
 *     (raised at enqueue, before the woken task runs);
 *   - sched_migrate_task of a queued task: the CPU it leaves, already
 *     dequeued (the destination follows at its switch or wakeup);
 *   - sched_pi_setprio: the CPU of a boosted or deboosted task, before the
 *     kernel applies the change, so the new effective prio is computed here.
 *
 * The level of a CPU (tracker_level) is: dl when a deadline or stop-class
 * task runs; else rtN for the highest RT priority queued there, the running
 * task included (rq->rt.highest_prio.curr, kept by the kernel for its own
 * cpupri); else idle when the idle task runs; else normal.
 *
 * sched_setscheduler(), sched_setparam() and sched_setattr() have no
 * scheduler tracepoint. A change to a task that keeps running (raised, or
 * lowered but still the highest) causes no switch either, so without help
 * the level would stay stale until the CPU next switches, which for a lone
 * SCHED_FIFO spinner may be never. Their syscall exit tracepoints recompute
 * the target's CPU once the change is done. That write runs on the caller's
 * CPU without the target runqueue's lock: it reads a consistent, committed
 * state, but it can race with the target CPU's own writer. cpupri_set()
 * keeps counts exact under such a race; the level can be left one step
 * stale (the racing switch's older view published last) until that CPU's
 * next event, and a mask bit can linger at a level the CPU left, which
 * readers filter with the slot (cpupri.h). Targets named by a pid from
 * another PID namespace are looked up in the initial one; a miss there only
 * costs the wait for the next switch.
 *
 * The syscall programs can be detached at run time (tracker_syscalls() in
 * the loader): any enabled syscall tracepoint sends every syscall of every
 * task through the kernel's slow path, which costs more than the programs.
 *
 * Cost: the switch path is two pointer loads to the runqueue, a few loads
 * from it and the map, and a compare that skips cpupri_set() when the level
 * did not change; a wakeup of a fair task returns after one load; the
 * watched-thread hash is looked up only once a collision is established.
 * bench/tracker-overhead.sh measures it.
 */
#include "kernel-types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tracker.h"

/* Bounds every map offset for the verifier (see tracker_map_ptr below). */
static __always_inline void *tracker_map_ptr(void *map, __u32 off);
#define CPUPRI_PTR(map, off) tracker_map_ptr((map), (off))
#include "cpupri.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; read-only to the programs. */
const volatile struct cpupri_geom tracker_geom;
/* CPUs rtplace manages (online when the loader ran); the rest stay offline. */
const volatile __u64 tracker_managed[TRACKER_MAX_CPUS / 64];

/* Records lost because the ring buffer was full. */
__u64 tracker_lost;

/* The cpupri map: one element whose value is the whole region; the loader
 * sets value_size from the geometry before load and maps it read-only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CPUPRI_LINE);
} tracker_cpupri SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TRACKER_RING_BYTES);
} tracker_events SEC(".maps");

/* tid -> 1 for the threads whose exit and collisions the daemon wants. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACKER_MAX_WATCHED);
	__type(key, __u32);
	__type(value, __u32);
} tracker_watched SEC(".maps");

/* Calling tid -> target tid of a priority syscall between entry and exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACKER_MAX_PENDING);
	__type(key, __u32);
	__type(value, __u32);
} tracker_pending SEC(".maps");

extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

/* MAX_RT_PRIO - 1: rt_rq.highest_prio.curr when no RT task is queued. */
#define TRACKER_NO_RT (LEVEL_KERNEL_MAX_RT_PRIO - 1)

/* Offsets land in the header's reserved bytes if they ever exceed the map
 * (they cannot after cpupri_set()'s range checks, but the verifier cannot
 * follow an index loaded from map memory): a clamp the verifier accepts,
 * aimed at bytes nobody reads. tracker_geom.size is a load from frozen
 * read-only data, which the verifier knows as a constant. */
#define TRACKER_SINK_OFF 40
_Static_assert(__builtin_offsetof(struct cpupri_header, reserved) <= TRACKER_SINK_OFF &&
		       TRACKER_SINK_OFF + 8 <= sizeof(struct cpupri_header),
	       "sink is inside the header's reserved bytes");

static __always_inline void *tracker_map_ptr(void *map, __u32 off)
{
	if (off > tracker_geom.size - 8)
		off = TRACKER_SINK_OFF;
	return (char *)map + off;
}

/*
 * The geometry for cpupri.h's functions. Read through a pointer clang cannot
 * see through: it would fold loads from a const object it knows to be
 * zero-initialised, while the verifier knows frozen read-only data and turns
 * each load into the constant the loader set, which bounds map offsets.
 * (A copy on the stack would lose that: the verifier tracks 4-byte spills
 * only at 8-byte aligned slots.)
 */
static __always_inline const struct cpupri_geom *tracker_g(void)
{
	const struct cpupri_geom *g = (const struct cpupri_geom *)&tracker_geom;

	asm volatile("" : "+r"(g));
	return g;
}

static __always_inline __u32 tracker_task_cpu(struct task_struct *p)
{
	struct task_struct___cpu_in_task *old = (void *)p;

	if (bpf_core_field_exists(p->thread_info.cpu))
		return BPF_CORE_READ(p, thread_info.cpu);
	return BPF_CORE_READ(old, cpu);
}

/*
 * The runqueue of p's CPU. Reached through the task's group runqueue
 * pointers (CONFIG_FAIR_GROUP_SCHED or CONFIG_RT_GROUP_SCHED, set on every
 * task, idle and stop tasks included, by set_task_rq()) rather than the
 * runqueues per-CPU symbol: a typed ksym of a variable needs
 * CONFIG_KALLSYMS_ALL, which some kernels lack. The loader refuses kernels
 * with neither.
 */
static __always_inline struct rq *tracker_task_rq(struct task_struct *p)
{
	if (bpf_core_field_exists(p->se.cfs_rq) && bpf_core_field_exists(struct cfs_rq, rq))
		return p->se.cfs_rq->rq;
	if (bpf_core_field_exists(p->rt.rt_rq) && bpf_core_field_exists(struct rt_rq, rq))
		return p->rt.rt_rq->rq;
	return NULL;
}

static __always_inline int tracker_is_rt_prio(int prio)
{
	return prio >= 0 && prio < TRACKER_NO_RT;
}

/* Lowest set bit of a non-zero word (clang has no BPF lowering for ctz). */
static __always_inline int tracker_ffs(__u64 w)
{
	int n = 0;

	if (!(w & 0xffffffffULL)) {
		n += 32;
		w >>= 32;
	}
	if (!(w & 0xffff)) {
		n += 16;
		w >>= 16;
	}
	if (!(w & 0xff)) {
		n += 8;
		w >>= 8;
	}
	if (!(w & 0xf)) {
		n += 4;
		w >>= 4;
	}
	if (!(w & 0x3)) {
		n += 2;
		w >>= 2;
	}
	if (!(w & 0x1))
		n += 1;
	return n;
}

/*
 * Highest RT prio queued on rq other than p's own entry, for a caller about
 * to change p's prio. Exact when p sits in the root RT queue (no RT group
 * scheduling, or p in the root group): when p is the only task at the top
 * prio, the next set bit of the kernel's priority bitmap is the answer.
 * Otherwise it answers the queue's top, which may keep a deboosted CPU one
 * step high until its next switch.
 */
static __always_inline int tracker_rt_top_without(struct rq *rq, struct task_struct *p)
{
	int top = rq->rt.highest_prio.curr;
	int prio = p->prio;
	struct list_head head, *node = &p->rt.run_list;
	__u64 w0, w1;

	if (top != prio || !tracker_is_rt_prio(prio) || !p->rt.on_rq)
		return top;
	if (bpf_core_field_exists(p->rt.rt_rq) && p->rt.rt_rq != &rq->rt)
		return top;
	/* The mask restates 0 <= prio < 99 in a form the verifier keeps. */
	if (bpf_probe_read_kernel(&head, sizeof(head), rq->rt.active.queue + (prio & 127)) < 0)
		return top;
	if (head.next != node || head.prev != node)
		return top;
	w0 = rq->rt.active.bitmap[0];
	w1 = rq->rt.active.bitmap[1];
	if (prio < 64)
		w0 &= ~(1ULL << prio);
	else
		w1 &= ~(1ULL << (prio - 64));
	if (w0)
		return tracker_ffs(w0);
	if (w1)
		return 64 + tracker_ffs(w1);
	return TRACKER_NO_RT;
}

/* Level of a CPU whose running task is curr (at curr_prio) and whose highest
 * queued RT prio is rt_top. */
static __always_inline __u32 tracker_level(struct rq *rq, struct task_struct *curr, int curr_prio, int rt_top)
{
	if (curr_prio < 0 || curr == rq->stop)
		return LEVEL_DL;
	if (tracker_is_rt_prio(rt_top))
		return level_from_kernel_prio(rt_top);
	if (curr == rq->idle)
		return LEVEL_IDLE;
	return LEVEL_NORMAL;
}

static __always_inline __u32 tracker_task_level(struct rq *rq, struct task_struct *p)
{
	return p == rq->stop ? LEVEL_DL : level_from_kernel_prio(p->prio);
}

/* Publishes cpu's level and the slot's bookkeeping. Called with cpu's
 * runqueue lock held (except the syscall path, see the top comment). */
static __always_inline void tracker_publish(__u32 cpu, __u32 level, __u32 pid, __u32 rt_queued)
{
	const struct cpupri_geom *g = tracker_g();
	struct cpupri_slot *slot;
	__u32 zero = 0;
	void *map;

	if (cpu >= TRACKER_MAX_CPUS || cpu >= g->ncpus || !((tracker_managed[cpu / 64] >> (cpu % 64)) & 1))
		return;
	map = bpf_map_lookup_elem(&tracker_cpupri, &zero);
	if (!map)
		return;
	slot = cpupri_slot_ptr(map, g, cpu);
	/* Plain stores on this CPU's own line: hints for the daemon, read
	 * without ordering against the level. */
	slot->pid = pid;
	slot->rt_queued = rt_queued;
	cpupri_set(map, g, cpu, level);
}

/* Recomputes the level of p's CPU from its runqueue's current state. */
static __always_inline struct rq *tracker_refresh(struct task_struct *p, __u32 cpu)
{
	struct rq *rq = tracker_task_rq(p);
	struct task_struct *curr;

	if (!rq)
		return NULL;
	curr = rq->curr;
	tracker_publish(cpu, tracker_level(rq, curr, curr->prio, rq->rt.highest_prio.curr), curr->pid,
			rq->rt.rt_nr_running);
	return rq;
}

static __always_inline int tracker_watching(__u32 tid)
{
	return bpf_map_lookup_elem(&tracker_watched, &tid) != NULL;
}

static __always_inline void tracker_emit(__u32 type, struct task_struct *p, __u32 cpu, __u32 level, __u32 cpu_level,
					 __u64 flags)
{
	struct tracker_event *e = bpf_ringbuf_reserve(&tracker_events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&tracker_lost, 1);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->type = type;
	e->tid = p->pid;
	e->tgid = p->tgid;
	e->cpu = cpu;
	e->level = level;
	e->cpu_level = cpu_level;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void tracker_collision(struct task_struct *p, __u32 cpu, __u32 level, __u32 cpu_level)
{
	if (tracker_watching(p->pid))
		tracker_emit(TRACKER_EVENT_COLLISION, p, cpu, level, cpu_level, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tracker_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct rq *rq = tracker_task_rq(next);
	__u32 prev_level, next_level;

	if (!rq)
		return 0;
	tracker_publish(cpu, tracker_level(rq, next, next->prio, rq->rt.highest_prio.curr), next->pid,
			rq->rt.rt_nr_running);

	/* A still-queued RT task giving way to an equal-or-higher one waits
	 * behind it. The stopper only passes through (migrations). */
	if (!tracker_is_rt_prio(prev->prio) || prev->on_rq != TASK_ON_RQ_QUEUED || next == rq->stop)
		return 0;
	prev_level = level_from_kernel_prio(prev->prio);
	next_level = tracker_task_level(rq, next);
	if (next_level >= prev_level)
		tracker_collision(prev, cpu, prev_level, next_level);
	return 0;
}

/*
 * p was just enqueued on its CPU, whose runqueue lock is held. Only an RT or
 * deadline task can change a CPU's level by being queued (a fair task waits
 * for the switch that runs it, which publishes), so the common wakeup of a
 * fair task returns after one load.
 */
static __always_inline int tracker_enqueued(struct task_struct *p)
{
	__u32 cpu;
	struct task_struct *curr;
	struct rq *rq;
	int other;

	if (p->prio >= TRACKER_NO_RT)
		return 0;
	cpu = tracker_task_cpu(p);
	rq = tracker_refresh(p, cpu);
	if (!rq || !tracker_is_rt_prio(p->prio))
		return 0;
	curr = rq->curr;
	if (curr == p || curr == rq->stop)
		return 0;
	if (curr->prio < 0) {
		tracker_collision(p, cpu, level_from_kernel_prio(p->prio), LEVEL_DL);
		return 0;
	}
	other = tracker_rt_top_without(rq, p);
	if (tracker_is_rt_prio(other) && other <= p->prio)
		tracker_collision(p, cpu, level_from_kernel_prio(p->prio), level_from_kernel_prio(other));
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tracker_wakeup, struct task_struct *p)
{
	return tracker_enqueued(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tracker_wakeup_new, struct task_struct *p)
{
	return tracker_enqueued(p);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(tracker_migrate, struct task_struct *p, int dest_cpu)
{
	const struct cpupri_geom *g = tracker_g();
	__u32 zero = 0, level, dest_level;
	void *map;

	/* Only a queued task leaving changes its old CPU (p still points at
	 * it); the lock held is that CPU's. A waking task is not queued
	 * anywhere yet: its wakeup publishes. */
	if (p->on_rq != TASK_ON_RQ_MIGRATING)
		return 0;
	tracker_refresh(p, tracker_task_cpu(p));

	/* Moved onto a CPU whose published level is already equal or higher:
	 * it will wait there. */
	if (!tracker_is_rt_prio(p->prio) || dest_cpu < 0 || (__u32)dest_cpu >= g->ncpus)
		return 0;
	map = bpf_map_lookup_elem(&tracker_cpupri, &zero);
	if (!map)
		return 0;
	level = level_from_kernel_prio(p->prio);
	dest_level = cpupri_slot_ptr(map, g, dest_cpu)->level;
	if (dest_level >= level && dest_level < LEVEL_COUNT)
		tracker_collision(p, dest_cpu, level, dest_level);
	return 0;
}

SEC("tp_btf/sched_pi_setprio")
int BPF_PROG(tracker_pi_setprio, struct task_struct *p, struct task_struct *pi_task)
{
	__u32 cpu = tracker_task_cpu(p);
	int newprio = p->normal_prio;
	int top, curr_prio;
	struct task_struct *curr;
	struct rq *rq;

	/* A sleeping owner's prio weighs on no CPU until it wakes. */
	if (p->on_rq != TASK_ON_RQ_QUEUED)
		return 0;
	rq = tracker_task_rq(p);
	if (!rq)
		return 0;
	/* The tracepoint fires before the change: the new effective prio is
	 * the kernel's __rt_effective_prio(). */
	if (pi_task && pi_task->prio < newprio)
		newprio = pi_task->prio;
	top = tracker_rt_top_without(rq, p);
	if (tracker_is_rt_prio(newprio) && newprio < top)
		top = newprio;
	curr = rq->curr;
	curr_prio = curr == p ? newprio : curr->prio;
	tracker_publish(cpu, tracker_level(rq, curr, curr_prio, top), curr->pid, rq->rt.rt_nr_running);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tracker_exit, struct task_struct *p)
{
	__u32 tid = p->pid;

	if (!tracker_watching(tid))
		return 0;
	bpf_map_delete_elem(&tracker_watched, &tid);
	/* The daemon acts on exits at once (claims, managed threads): wake it. */
	tracker_emit(TRACKER_EVENT_EXIT, p, bpf_get_smp_processor_id(), level_from_kernel_prio(p->prio), 0,
		     BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* The syscall tracepoints' records (tracefs format files: common fields in
 * the first 8 bytes, then the syscall number, then arguments or return). */
struct tracker_sys_enter {
	__u64 common;
	__s64 nr;
	__u64 args[6];
};

struct tracker_sys_exit {
	__u64 common;
	__s64 nr;
	__s64 ret;
};

static __always_inline int tracker_setprio_enter(struct tracker_sys_enter *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 target = (__u32)ctx->args[0];

	if (target == 0)
		target = tid;
	bpf_map_update_elem(&tracker_pending, &tid, &target, BPF_ANY);
	return 0;
}

static __always_inline int tracker_setprio_exit(struct tracker_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct task_struct *p;
	__u32 *pending, target;

	pending = bpf_map_lookup_elem(&tracker_pending, &tid);
	if (!pending)
		return 0;
	target = *pending;
	bpf_map_delete_elem(&tracker_pending, &tid);
	if (ctx->ret != 0)
		return 0;
	p = bpf_task_from_pid((__s32)target);
	if (!p)
		return 0;
	tracker_refresh(p, tracker_task_cpu(p));
	bpf_task_release(p);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sched_setscheduler")
int tracker_setscheduler_enter(struct tracker_sys_enter *ctx)
{
	return tracker_setprio_enter(ctx);
}

SEC("tracepoint/syscalls/sys_exit_sched_setscheduler")
int tracker_setscheduler_exit(struct tracker_sys_exit *ctx)
{
	return tracker_setprio_exit(ctx);
}

SEC("tracepoint/syscalls/sys_enter_sched_setparam")
int tracker_setparam_enter(struct tracker_sys_enter *ctx)
{
	return tracker_setprio_enter(ctx);
}

SEC("tracepoint/syscalls/sys_exit_sched_setparam")
int tracker_setparam_exit(struct tracker_sys_exit *ctx)
{
	return tracker_setprio_exit(ctx);
}

SEC("tracepoint/syscalls/sys_enter_sched_setattr")
int tracker_setattr_enter(struct tracker_sys_enter *ctx)
{
	return tracker_setprio_enter(ctx);
}

SEC("tracepoint/syscalls/sys_exit_sched_setattr")
int tracker_setattr_exit(struct tracker_sys_exit *ctx)
{
	return tracker_setprio_exit(ctx);
}
