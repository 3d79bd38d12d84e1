/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the RealtimeKit front end share (rtkit.h is what the
 * rest of the daemon sees). One file, one role:
 *
 *   rtkit.c           the object: built from its options, reconfigured,
 *                     freed, its statistics read;
 *   rtkit-bus.c       the bus adapter: the connection on the daemon's loop,
 *                     the name, the vtable (one handler per method), the
 *                     caller's credentials, replies, the properties;
 *   rtkit-caller.c    the caller pinned by a pidfd: the bus's ProcessFD,
 *                     or the process at its pid dated against the call;
 *   rtkit-grant.c     the decision (rtkit-rules.c) and acting on the
 *                     thread: RT with a CPU of its own, a nice level, the
 *                     root-only resets;
 *   rtkit-threads.c   the threads holding a grant: their pidfds, claims
 *                     and the state to give back;
 *   rtkit-watchdog.c  the starvation watchdog.
 *
 * Everything runs on the daemon's one loop: no locks.
 */
#ifndef RTPLACE_RTKIT_INTERNAL_H
#define RTPLACE_RTKIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "reason.h"
#include "rtkit-admit.h"
#include "rtkit.h"
#include "thread-sched.h"

/* A thread made RT through the interface. */
struct rtkit_thread {
	pid_t pid, tid;
	uid_t uid;         /* the caller's: its limits count the thread */
	uid_t owner;       /* tid's effective uid: who may see its records */
	int pidfd;         /* the thread's (PIDFD_THREAD), -1 on kernels without */
	uint64_t start;    /* its start time: its identity with tid where pidfd is -1 */
	struct event *ev;  /* the pidfd turns readable when the thread exits */
	uint32_t claim_id; /* 0: not pinned */
	struct thread_sched_result res; /* for ResetKnown */
	uint64_t ran_ns;   /* time on CPU at the watchdog's last look */
	int cpu;           /* where it ran then */
};

struct rtkit_call;

/* Who sent a call, as the bus named it: its uid, and its process held by
 * pidfd once rtkit_caller_pin() has pinned it (-1 before, unless the bus
 * gave one). */
struct rtkit_caller {
	uid_t uid;
	pid_t pid;
	int pidfd;
};

struct rtkit {
	struct rtkit_opts o;
	struct config_rtkit cfg;
	sd_bus *bus;
	sd_bus_slot *vtable_slot, *name_slot;
	struct event *ev;
	bool serving, closing;
	bool exited; /* root called Exit: off the bus until a reload */
	bool said_caller_identity; /* logged whether the bus gives ProcessFD */
	struct rtkit_call *calls; /* waiting for their callers' credentials */
	struct rtkit_admit admit; /* their shares, per sender and uid */
	struct rtkit_thread *threads;
	unsigned nthreads;
	struct rtkit_bursts bursts;
	struct rtkit_stats stats;
	struct event *watchdog;
	uint64_t watchdog_ns;      /* the watchdog's last look */
	uint64_t watchdog_fired_ms; /* its last demotion; 0: none */
};

/* rtkit.c */

/*
 * Test builds only (--enable-self-checks): with environment variable var
 * naming a FIFO, stops the daemon before what (id) until a writer closes
 * the FIFO, so that a test can end a process or thread and give its id to
 * another task in between, deterministically. Does nothing otherwise.
 */
void rtkit_test_hold(const char *var, const char *what, pid_t id);

/* rtkit-caller.c */

/* Pins caller c, whose call arrived at arrived_boot_ns (CLOCK_BOOTTIME):
 * the pidfd the bus gave, or one opened on the pid it named if that
 * process started before the call. 0 with c->pidfd and c->pid the
 * caller's, or -ESRCH (it exited) or -errno with reason set. */
int rtkit_caller_pin(struct rtkit *k, struct rtkit_caller *c, uint64_t arrived_boot_ns,
		     struct rtplace_reason *reason);

/* Says once, for the first caller the bus names, whether the bus gives
 * ProcessFD. */
void rtkit_caller_said(struct rtkit *k, const struct rtkit_caller *c);

/* Closes c's pidfd. */
void rtkit_caller_release(struct rtkit_caller *c);

/* rtkit-bus.c */

/* Connects and asks for the name; a bus that cannot be reached or set up
 * is logged and leaves k off the bus. 0 or -ENOMEM. */
int rtkit_bus_connect(struct rtkit *k);

/* Leaves the bus: pending calls are dropped unanswered with it. */
void rtkit_bus_close(struct rtkit *k);

/* rtkit-grant.c: each returns 0, or -errno with *why and reason (fit for
 * a D-Bus error message) set. */

/* Makes thread tid of process pid (0: the caller's own, as its pidfd
 * holds it) real-time ([rtkit] scheduling-policy) at prio for the pinned
 * caller, on a CPU of its own where placement has one. */
int rtkit_grant_realtime(struct rtkit *k, const struct rtkit_caller *caller, pid_t pid, pid_t tid, uint32_t prio,
			 enum rtkit_refusal *why, struct rtplace_reason *reason);

/* Gives thread tid of process pid (0: the caller's) nice level nice for
 * the pinned caller. */
int rtkit_grant_nice(struct rtkit *k, const struct rtkit_caller *caller, pid_t pid, pid_t tid, int32_t nice,
		     enum rtkit_refusal *why, struct rtplace_reason *reason);

/* ResetKnown: every thread granted gets back its policy and affinity. */
void rtkit_grant_reset_known(struct rtkit *k);

/* ResetAll: ResetKnown, then every RT or negative-nice thread of a user
 * other than root back to SCHED_OTHER at nice 0, as rtkit does. */
void rtkit_grant_reset_all(struct rtkit *k);

/* rtkit-threads.c */

/* Threads holding a grant, all users together. */
int rtkit_threads_init(struct rtkit *k);

/* Forgets every thread, leaving each its policy, CPU and claim. */
void rtkit_threads_free(struct rtkit *k);

/* Records a grant, in room the caller made sure of (fewer than
 * RTKIT_THREADS_MAX threads): t is copied, the pidfd it brings is the
 * table's, watched for the thread's exit. */
void rtkit_threads_add(struct rtkit *k, const struct rtkit_thread *t);

/* Forgets thread i and ends its claim; the last thread takes its place. */
void rtkit_threads_drop(struct rtkit *k, unsigned i);

/* The index of thread tid, or -1. */
int rtkit_threads_find(const struct rtkit *k, pid_t tid);

/*
 * What uid holds now, counting only threads still RT: a thread that gave
 * its RT up, or exited unseen, is dropped (and its claim ended) first.
 */
void rtkit_threads_count(struct rtkit *k, uid_t uid, pid_t pid, pid_t tid, struct rtkit_use *ret);

/* Thread t's time on CPU and the CPU it ran on last; left alone when
 * unreadable (it exited: its pidfd event drops it). */
void rtkit_threads_ran(const struct rtkit *k, const struct rtkit_thread *t, uint64_t *ret_ns, int *ret_cpu);

/* Whether the thread behind pidfd has exited (readable, Linux 6.9). */
bool rtkit_threads_exited(int pidfd);

/* Whether t->tid still names t's thread, which an act by tid may reach:
 * its pidfd has not exited, or (no pidfd) the task at tid has t's start
 * time. */
bool rtkit_threads_same(const struct rtkit *k, const struct rtkit_thread *t);

/* rtkit-watchdog.c */

/* Runs the watchdog every watchdog-interval-ms (none for 0). 0 or -ENOMEM. */
int rtkit_watchdog_arm(struct rtkit *k);

void rtkit_watchdog_free(struct rtkit *k);

#endif
