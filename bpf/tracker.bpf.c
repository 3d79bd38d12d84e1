/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 *   - sched_update_nr_running_tp: a task was queued on or taken off rq (a
 *     wakeup, a block, a migration's arrival), or a queued task's priority
 *     or class changed: sched_setscheduler(), sched_setparam(),
 *     sched_setattr(), a priority-inheritance boost or deboost, a cgroup
 *     move; the kernel makes each such change by dequeuing the task,
 *     changing it and queuing it again, and the event at the enqueue sees
 *     the new state;
 *   - sched_migrate_task of a queued task: the CPU it leaves, already
 *     dequeued (an RT dequeue reports nr_running before the RT queue drops
 *     the task, and when the last RT task leaves nothing follows).
 *
 * So a change of a running task's priority is published before the syscall
 * (or unlock) that made it returns, with no switch needed. All of this needs
 * no tracefs, and nothing here runs outside the scheduler's own paths: no
 * syscall tracepoint (enabling one sends every syscall of every task through
 * the kernel's slow path) and no fentry/fexit (trampolines, which some
 * kernels refuse, and which DESIGN §3 keeps off scheduler internals).
 *
 * The level of a CPU (tracker_level) is: offline while hotplug has its
 * runqueue offline (tracker_rq_online); else dl when a deadline or
 * stop-class task runs; else rtN for the highest RT priority queued there,
 * the running task included (rq->rt.highest_prio.curr, kept by the kernel
 * for its own cpupri); else idle when the idle task runs; else normal.
 * Every CPU id of the map is followed, online at load or not, so a CPU that
 * comes online later is tracked from its first event.
 *
 * sched_wakeup and sched_wakeup_new only report collisions (a watched RT
 * task queued behind an equal-or-higher one); sched_process_exit reports
 * watched exits. The loader attaches these three only while the daemon
 * watches a thread (tracker.c, tracker_watch_attach).
 *
 * Cost (bench/tracker-overhead.sh): on this path the price of a program is
 * mostly its invocation, so the fewer events the better: the switch and the
 * nr_running event (rarer than wakeups where EEVDF delays the dequeue of a
 * sleeping fair task, whose wakeup then leaves nr_running alone) are
 * always attached; they compute
 * the level from a few loads and return when it and the slot's bookkeeping
 * are unchanged (no store, no atomic: the slot line stays shared with
 * readers). A change of level that changes the CPU's class (idle, normal,
 * rt, dl) also closes that class's interval of time (tracker_account: a
 * clock read and two exchanges on the CPU's own line). A wakeup of a fair
 * task returns after one load; the ring buffer is reached only for watched
 * threads.
 */
#include "kernel-types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tracker-abi.h"

/* Bounds every map access for the verifier (see tracker_map_ptr below). */
static __always_inline void *tracker_map_ptr(void *map, __u32 off, __u32 len);
#define CPUPRI_PTR(map, off, len) tracker_map_ptr((map), (off), (len))
#include "cpupri.h"

/*
 * tp_btf programs and bpf_probe_read_kernel() load only under a
 * GPL-compatible license; the file itself is GPL-2.0-or-later.
 */
char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; read-only to the programs. */
const volatile struct cpupri_geom tracker_geom;
/* CLOCK_MONOTONIC at load: where the first interval of time by class of
 * each CPU starts (tracker-abi.h). */
const volatile __u64 tracker_start_ns;
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

/* Time by class per CPU id (tracker-abi.h); the loader sizes it to the
 * topology's CPU ids and maps it read-only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TRACKER_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct tracker_cpu_time);
} tracker_times SEC(".maps");

/* tid -> 1 for the threads whose exit and collisions the daemon wants. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACKER_MAX_WATCHED);
	__type(key, __u32);
	__type(value, __u32);
} tracker_watched SEC(".maps");

/* MAX_RT_PRIO - 1: rt_rq.highest_prio.curr when no RT task is queued. */
#define TRACKER_NO_RT (LEVEL_KERNEL_MAX_RT_PRIO - 1)

/*
 * An access that would ever leave the map lands in this line instead (none
 * can after cpupri_set()'s range checks, but the verifier cannot follow an
 * index loaded from map memory): a bound the verifier accepts, aimed at
 * bytes nobody reads. The bound is the access's own length: 6.1's verifier
 * keeps only an offset's range, not its alignment, so a bound of 8 bytes
 * lets a slot's later fields run past the end (6.18's also narrows the
 * range by the offset's known low zero bits, and accepted that).
 * tracker_geom.size is a load from frozen read-only data, which the
 * verifier knows as a constant.
 */
static union {
	struct cpupri_slot slot;
	struct cpupri_counts counts;
} tracker_sink;

static __always_inline void *tracker_map_ptr(void *map, __u32 off, __u32 len)
{
	if (off > tracker_geom.size - len)
		return &tracker_sink;
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
 * Highest RT prio queued on rq other than p's own entry: what a just-woken p
 * waits behind. Exact when p sits in the root RT queue (no RT group
 * scheduling, or p in the root group): when p is the only task at the top
 * prio, the next set bit of the kernel's priority bitmap is the answer.
 * Otherwise it answers the queue's top, which may report a collision with
 * p's own group.
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

/*
 * Whether the scheduler uses rq's CPU: rq->online, which the kernel clears
 * (under the runqueue lock) when it takes the CPU out of its own cpupri as
 * hotplug deactivates it, and sets again when it activates it, last step of
 * bringing it up. Every publish after the clear says offline: the stopper
 * and the idle task still switch in on the dying CPU before it stops, so the
 * map says offline before the offline operation returns; a CPU coming up
 * switches (its hotplug thread sleeps) right after the set, so its true
 * level follows at once. One load from the runqueue the caller reads
 * anyway; every CPU id below ncpus is tracked, so no per-CPU bitmap is
 * consulted. A kernel without the field (!CONFIG_SMP) has no hotplug.
 */
static __always_inline bool tracker_rq_online(struct rq *rq)
{
	if (bpf_core_field_exists(rq->online))
		return rq->online;
	return true;
}

/* Level of a CPU whose running task is curr (at curr_prio) and whose highest
 * queued RT prio is rt_top. */
static __always_inline __u32 tracker_level(struct rq *rq, struct task_struct *curr, int curr_prio, int rt_top)
{
	if (!tracker_rq_online(rq))
		return LEVEL_OFFLINE;
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

_Static_assert((RTPLACE_CLASS_COUNT & (RTPLACE_CLASS_COUNT - 1)) == 0, "a mask bounds class indices");

/*
 * Closes cpu's open interval of time by class when its level goes from
 * old to another class (level_class()), and opens one for the new class;
 * the caller holds cpu's runqueue lock and is about to publish the new
 * level, so a switch that keeps the level never comes here, and one
 * between two RT priorities stops at the lookup. The first change closes
 * the interval from the load in the class of old (the level the seed or
 * an earlier event published). The order of the stores against readers is
 * tracker-abi.h's (struct tracker_cpu_time): seq goes odd and back to
 * even through exchanges, which are fully ordered.
 */
static __always_inline void tracker_account(__u32 cpu, __u32 old, __u32 level)
{
	struct tracker_cpu_time *t = bpf_map_lookup_elem(&tracker_times, &cpu);
	__u32 cls = level_class(level), seq, from_cls;
	__u64 now, from;

	if (!t || (t->cls == cls && t->since_ns))
		return;
	now = bpf_ktime_get_ns();
	from = t->since_ns ? t->since_ns : tracker_start_ns;
	from_cls = t->since_ns ? t->cls : level_class(old);
	seq = t->seq;
	__atomic_exchange_n(&t->seq, seq + 1, __ATOMIC_SEQ_CST);
	if (from_cls < RTPLACE_CLASS_COUNT && now > from)
		t->ns[from_cls & (RTPLACE_CLASS_COUNT - 1)] += now - from;
	t->since_ns = now;
	t->cls = cls;
	__atomic_exchange_n(&t->seq, seq + 2, __ATOMIC_SEQ_CST);
}

/*
 * Publishes the level of cpu, whose runqueue rq (locked by the caller) runs
 * curr. Most calls change nothing (a fair task switching to another, a fair
 * task queued): they return after the loads, writing nothing, so the slot
 * line stays shared with the daemon's readers and no atomic is issued.
 * pid and rt_queued are plain stores on the slot, hints for the daemon read
 * without ordering against the level.
 */
static __always_inline void tracker_publish(__u32 cpu, struct rq *rq, struct task_struct *curr)
{
	const struct cpupri_geom *g = tracker_g();
	__u32 level = tracker_level(rq, curr, curr->prio, rq->rt.highest_prio.curr);
	__u32 pid = curr->pid, rt_queued = rq->rt.rt_nr_running;
	struct cpupri_slot *slot;
	__u32 zero = 0;
	void *map;

	if (cpu >= TRACKER_MAX_CPUS || cpu >= g->ncpus)
		return;
	map = bpf_map_lookup_elem(&tracker_cpupri, &zero);
	if (!map)
		return;
	slot = cpupri_slot_ptr(map, g, cpu);
	if (slot->pid != pid)
		slot->pid = pid;
	if (slot->rt_queued != rt_queued)
		slot->rt_queued = rt_queued;
	/* Accounted first: a reader that sees no accounting yet reads the
	 * level the first change closes (tracker-abi.h). */
	if (slot->level != level) {
		tracker_account(cpu, slot->level, level);
		cpupri_set(map, g, cpu, level);
	}
}

/* Recomputes the level of p's CPU (whose runqueue is locked) from its
 * current state. */
static __always_inline void tracker_refresh(struct task_struct *p)
{
	struct rq *rq = tracker_task_rq(p);

	if (rq)
		tracker_publish(tracker_task_cpu(p), rq, rq->curr);
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
	tracker_publish(cpu, rq, next);

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

/* Any change to rq's queues: rq is locked, maybe by another CPU (a remote
 * wakeup, a sched_setscheduler() on a task running elsewhere). */
SEC("tp_btf/sched_update_nr_running_tp")
int BPF_PROG(tracker_nr_running, struct rq *rq, int change)
{
	tracker_publish(rq->cpu, rq, rq->curr);
	return 0;
}

/*
 * p was just queued on its CPU (whose runqueue lock is held, and whose level
 * the nr_running event above has published): a watched RT task that waits
 * behind an equal-or-higher one is a collision. A fair task returns after
 * one load.
 */
static __always_inline int tracker_enqueued(struct task_struct *p)
{
	struct task_struct *curr;
	struct rq *rq;
	int other;

	if (!tracker_is_rt_prio(p->prio))
		return 0;
	rq = tracker_task_rq(p);
	if (!rq)
		return 0;
	curr = rq->curr;
	if (curr == p || curr == rq->stop)
		return 0;
	if (curr->prio < 0) {
		tracker_collision(p, tracker_task_cpu(p), level_from_kernel_prio(p->prio), LEVEL_DL);
		return 0;
	}
	other = tracker_rt_top_without(rq, p);
	if (tracker_is_rt_prio(other) && other <= p->prio)
		tracker_collision(p, tracker_task_cpu(p), level_from_kernel_prio(p->prio),
				  level_from_kernel_prio(other));
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
	 * anywhere yet: its enqueue publishes (tracker_nr_running). */
	if (p->on_rq != TASK_ON_RQ_MIGRATING)
		return 0;
	tracker_refresh(p);

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
