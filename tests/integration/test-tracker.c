/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The BPF tracker against the real kernel (root): real programs, real
 * SCHED_FIFO threads, the map read through tracker_map() as the daemon
 * reads it, checked against what the test set up.
 *
 * Safety: RT threads spin only on CPU 1 (CPU 0 keeps the test's own
 * SCHED_OTHER thread and a watchdog child process, both pinned there, so a
 * bug cannot starve them); the watchdog SIGKILLs the whole test, RT threads
 * included, after TEST_BOUND_S seconds. The kernel's RT throttling is a
 * second net. A level is polled for at most TEST_POLL_TRIES x 1 ms: a
 * generous bound on an event that takes microseconds, not a timing check.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpupri.h"
#include "levels.h"
#include "testlib.h"
#include "topo.h"
#include "tracker.h"

#define TEST_BOUND_S 120
/* Wakeups of the higher thread tried before a missing collision fails. */
#define TEST_COLLISION_TRIES 20
#define TEST_POLL_TRIES 2000
#define TEST_RT_CPU 1u
#define TEST_OBSERVE_NS (100 * 1000 * 1000LL)

static int test_failures;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);          \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			test_failures++;                                              \
		}                                                                     \
	} while (0)

enum worker_cmd {
	WORKER_SPIN,
	WORKER_BLOCK,
	WORKER_EXIT,
	WORKER_PI_HOLD,    /* lock pi_mutex, spin until WORKER_PI_RELEASE */
	WORKER_PI_RELEASE, /* unlock, read own CPU's level, then spin */
	WORKER_OBSERVE,    /* spin; once on observe_cpu, read its level, then block */
	WORKER_SETATTR,    /* sched_setattr() itself (pid 0) to FIFO prio, read own CPU's level, spin */
};

/* The uapi struct sched_attr (first version, 48 bytes): glibc 2.36 has no
 * wrapper and <linux/sched/types.h> clashes with <sched.h>. */
struct test_sched_attr {
	__u32 size;
	__u32 sched_policy;
	__u64 sched_flags;
	__s32 sched_nice;
	__u32 sched_priority;
	__u64 sched_runtime;
	__u64 sched_deadline;
	__u64 sched_period;
};

_Static_assert(sizeof(struct test_sched_attr) == 48, "SCHED_ATTR_SIZE_VER0");

struct worker {
	pthread_t thread;
	_Atomic int cmd;
	_Atomic pid_t tid;
	_Atomic int held;     /* WORKER_PI_HOLD: the mutex is held */
	_Atomic int observed; /* WORKER_OBSERVE: seen_level is valid */
	int policy;
	int prio;
	unsigned cpu;
	pthread_mutex_t *pi_mutex;
	const struct cpupri_view *view;
	unsigned observe_cpu;
	__u32 want_level;
	__u32 seen_level;
	pid_t seen_pid; /* the slot's running thread, read just after seen_level */
};

static void test_futex_wait(_Atomic int *addr, int val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void test_futex_wake(_Atomic int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static long long test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The thread the map last saw running on cpu. */
static pid_t test_slot_pid(const struct cpupri_view *v, unsigned cpu)
{
	const struct cpupri_slot *slot = cpupri_slot_ptr((void *)v->map, &v->geom, cpu);

	return (pid_t)__atomic_load_n(&slot->pid, __ATOMIC_RELAXED);
}

/* Fields of /proc/PID/stat after the command name: flags, the CPU it last
 * ran on, its RT priority, its policy and its state. -1 if it is gone. */
struct test_stat {
	char state;
	unsigned long flags;
	int cpu, rt_prio, policy;
};

static int test_read_stat(pid_t pid, struct test_stat *ret)
{
	char path[64], buf[1024], *p, *save = NULL;
	int field = 3, r = -1;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (p = p ? strtok_r(p + 1, " ", &save) : NULL; p; p = strtok_r(NULL, " ", &save), field++) {
		if (field == 3)
			ret->state = p[0];
		else if (field == 9)
			ret->flags = strtoul(p, NULL, 10);
		else if (field == 39)
			ret->cpu = atoi(p);
		else if (field == 40)
			ret->rt_prio = atoi(p);
		else if (field == 41) {
			ret->policy = atoi(p);
			r = 0;
			break;
		}
	}
	return r;
}

/* PF_KTHREAD in a stat's flags. */
#define TEST_PF_KTHREAD 0x00200000UL

static bool test_preempt_rt(void);
static bool test_rt_kthread_at(int cpu, __u32 level);

/*
 * On PREEMPT_RT the kernel's own per-CPU threads (ktimers/N and rcuc/N at
 * FIFO 1, threaded interrupts at FIFO 50) run on every CPU, and one that a
 * test thread starved runs the moment that thread lets it: the map then
 * rightly shows its level. So a level read at once after a change is right
 * when it is the change's, or when the thread the map saw running is such
 * a kernel thread at that level.
 */
static bool test_kthread_level(pid_t pid, __u32 level)
{
	struct test_stat st;

	if (pid <= 0 || test_read_stat(pid, &st) < 0)
		return false;
	if (st.flags & TEST_PF_KTHREAD)
		return (st.policy == SCHED_FIFO || st.policy == SCHED_RR) && level == LEVEL_RT1 + (__u32)st.rt_prio - 1;
	/* A test thread boosted by such a kernel thread: on PREEMPT_RT most
	 * kernel spinlocks are rt_mutexes, and one the test thread held while
	 * ktimers or rcuc waited for it lends it their priority (seen in the
	 * 6.1-rt and 6.12-rt guests: rt1 with the test's thread running). */
	return test_preempt_rt() && test_rt_kthread_at(st.cpu, level);
}

/* /sys/kernel/realtime: 1 on a PREEMPT_RT kernel. */
static bool test_preempt_rt(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "re");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == '1';
}

/* An RT kernel thread last on cpu whose priority is level. */
static bool test_rt_kthread_at(int cpu, __u32 level)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		struct test_stat st;
		pid_t pid = (pid_t)atoi(e->d_name);

		found = pid > 0 && test_read_stat(pid, &st) == 0 && st.flags & TEST_PF_KTHREAD && st.cpu == cpu &&
			(st.policy == SCHED_FIFO || st.policy == SCHED_RR) &&
			level == LEVEL_RT1 + (__u32)st.rt_prio - 1;
	}
	if (d)
		closedir(d);
	return found;
}

/* RT kernel threads waiting to run on cpu (state R, last on cpu): what a
 * CPU's queued RT count holds beside the test's own threads. */
static unsigned test_rt_kthreads_queued(unsigned cpu)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d))) {
		struct test_stat st;
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid > 0 && test_read_stat(pid, &st) == 0 && st.flags & TEST_PF_KTHREAD && st.state == 'R' &&
		    st.cpu == (int)cpu && (st.policy == SCHED_FIFO || st.policy == SCHED_RR))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

static const char *test_level_name(__u32 level)
{
	static char bufs[4][LEVEL_NAME_MAX];
	static int next;

	return level_name(level, bufs[next++ % 4]);
}

/* The migrated thread reads the map itself once it runs on the target CPU:
 * with two CPUs that CPU is 0, where the test's own thread cannot run while
 * an RT thread spins. It spins there at most TEST_OBSERVE_NS, then blocks. */
static void worker_observe(struct worker *w)
{
	long long start;
	__u32 level;

	if ((unsigned)sched_getcpu() != w->observe_cpu)
		return;
	start = test_now_ns();
	do
		level = cpupri_level(w->view, w->observe_cpu);
	while (level != w->want_level && test_now_ns() - start < TEST_OBSERVE_NS);
	w->seen_level = level;
	atomic_store(&w->observed, 1);
	atomic_store(&w->cmd, WORKER_BLOCK);
}

/* Raises itself with sched_setattr(pid 0, ...), the form chrt uses, and
 * reads its CPU's level at once: it runs on, so no switch publishes it. */
static void worker_setattr(struct worker *w)
{
	struct test_sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = (__u32)w->prio,
	};

	w->seen_level = syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? cpupri_level(w->view, w->cpu) : LEVEL_COUNT;
	w->seen_pid = test_slot_pid(w->view, w->cpu);
	atomic_store(&w->observed, 1);
	atomic_store(&w->cmd, WORKER_SPIN);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int c;

	atomic_store(&w->tid, gettid());
	while ((c = atomic_load(&w->cmd)) != WORKER_EXIT) {
		if (c == WORKER_BLOCK) {
			test_futex_wait(&w->cmd, WORKER_BLOCK);
		} else if (c == WORKER_PI_HOLD && !atomic_load(&w->held)) {
			pthread_mutex_lock(w->pi_mutex);
			atomic_store(&w->held, 1);
		} else if (c == WORKER_PI_RELEASE && atomic_load(&w->held)) {
			pthread_mutex_unlock(w->pi_mutex);
			w->seen_level = cpupri_level(w->view, w->cpu);
			w->seen_pid = test_slot_pid(w->view, w->cpu);
			atomic_store(&w->held, 0);
		} else if (c == WORKER_OBSERVE) {
			worker_observe(w);
		} else if (c == WORKER_SETATTR) {
			worker_setattr(w);
		}
	}
	return NULL;
}

/* Starts a thread at policy/prio pinned to cpu, and waits until it runs. */
static int worker_start(struct worker *w, int policy, int prio, unsigned cpu, int cmd)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	cpu_set_t set;
	int r;

	w->policy = policy;
	w->prio = prio;
	w->cpu = cpu;
	atomic_store(&w->cmd, cmd);
	atomic_store(&w->tid, 0);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, policy);
	pthread_attr_setschedparam(&attr, &sp);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	r = -pthread_create(&w->thread, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (r < 0)
		return r;
	for (int i = 0; i < TEST_POLL_TRIES && atomic_load(&w->tid) == 0; i++)
		usleep(1000);
	return atomic_load(&w->tid) ? 0 : -ETIMEDOUT;
}

static void worker_command(struct worker *w, int cmd)
{
	atomic_store(&w->cmd, cmd);
	test_futex_wake(&w->cmd);
}

/* Ends workers (all told first: a lower-priority one on the CPU only sees
 * its command once the higher ones are gone). */
static void worker_stop(struct worker **ws, int n)
{
	for (int i = 0; i < n; i++)
		if (ws[i]->tid)
			worker_command(ws[i], WORKER_EXIT);
	for (int i = 0; i < n; i++)
		if (ws[i]->tid) {
			pthread_join(ws[i]->thread, NULL);
			ws[i]->tid = 0;
		}
}

static bool test_idle_or_normal(__u32 level)
{
	return level == LEVEL_IDLE || level == LEVEL_NORMAL;
}

/* Polls cpu's level until it equals want (or, want == LEVEL_COUNT, until it
 * is idle or normal); returns the last level read. */
static __u32 test_wait_level(const struct cpupri_view *v, unsigned cpu, __u32 want)
{
	__u32 level = LEVEL_COUNT;

	for (int i = 0; i < TEST_POLL_TRIES; i++) {
		level = cpupri_level(v, cpu);
		if (want == LEVEL_COUNT ? test_idle_or_normal(level) : level == want)
			break;
		usleep(1000);
	}
	return level;
}

#define CHECK_LEVEL(v, cpu, want)                                                                          \
	do {                                                                                               \
		__u32 got_ = test_wait_level((v), (cpu), (want));                                          \
		CHECK((want) == LEVEL_COUNT ? test_idle_or_normal(got_) : got_ == (want),                  \
		      "CPU %u is at %s, want %s", (cpu), test_level_name(got_),                            \
		      (want) == LEVEL_COUNT ? "idle or normal" : test_level_name(want));                   \
	} while (0)

/* Counts equal the number of slots at each level, and each level's mask
 * holds exactly the CPUs whose slot is at that level. */
static bool test_map_consistent(const struct cpupri_view *v, const struct cpupri_mask *all, char *why, size_t len)
{
	for (__u32 level = 0; level < LEVEL_COUNT; level++) {
		struct rtplace_cpumask want, got;
		__s32 n = 0;

		cpuset_zero(&want);
		for (__u32 cpu = 0; cpu < v->geom.ncpus; cpu++)
			if (cpupri_level(v, cpu) == level) {
				cpuset_set(&want, cpu);
				n++;
			}
		cpupri_level_cpus(v, level, all, &got);
		if (cpupri_count(v, level) != n || !cpuset_equal(&want, &got)) {
			snprintf(why, len, "level %s: count %d, %d slots, mask %s the slots", test_level_name(level),
				 cpupri_count(v, level), n, cpuset_equal(&want, &got) ? "matches" : "differs from");
			return false;
		}
	}
	return true;
}

/* CPU 0 keeps changing while we read, so a torn snapshot is retried; drift
 * is a mismatch that persists. */
static void test_no_drift(const struct cpupri_view *v, const struct cpupri_mask *all, const char *when)
{
	char why[160] = "";
	bool ok = false;

	for (int i = 0; i < TEST_POLL_TRIES / 10 && !ok; i++) {
		ok = test_map_consistent(v, all, why, sizeof(why));
		if (!ok)
			usleep(1000);
	}
	CHECK(ok, "after %s the map drifted: %s", when, why);
}

static __u32 test_rt(int prio)
{
	return level_from_rt_priority(prio);
}

static void case_basic(const struct cpupri_view *v)
{
	struct worker w = { 0 }, *ws[] = { &w };

	CHECK(worker_start(&w, SCHED_FIFO, 10, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	worker_command(&w, WORKER_BLOCK);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
	worker_command(&w, WORKER_SPIN);
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	worker_stop(ws, 1);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
}

static void case_two_prios(const struct cpupri_view *v)
{
	struct worker lo = { 0 }, hi = { 0 }, *ws[] = { &hi, &lo };
	const struct cpupri_slot *slot = cpupri_slot_ptr((void *)v->map, &v->geom, TEST_RT_CPU);
	unsigned queued = 0, kthreads = 0;

	CHECK(worker_start(&lo, SCHED_FIFO, 10, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	CHECK(worker_start(&hi, SCHED_FIFO, 20, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(20));
	/* Beside the two, any RT kernel thread they starve (PREEMPT_RT). */
	for (int i = 0; i < TEST_POLL_TRIES / 10; i++) {
		queued = __atomic_load_n(&slot->rt_queued, __ATOMIC_RELAXED);
		kthreads = test_rt_kthreads_queued(TEST_RT_CPU);
		if (queued == 2 + kthreads)
			break;
		usleep(1000);
	}
	CHECK(queued == 2 + kthreads, "slot counts %u queued RT tasks, want 2 and %u RT kernel thread(s)", queued,
	      kthreads);
	worker_stop(ws, 1);
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	worker_stop(ws + 1, 1);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
}

/* The level must be published by the time the syscall returns: the
 * running thread causes no switch, so only the queue event of the change
 * (its dequeue and enqueue) can tell. */
static void case_setscheduler(const struct cpupri_view *v)
{
	struct worker w = { 0 }, *ws[] = { &w };
	struct sched_param sp = { .sched_priority = 30 };
	__u32 level;

	CHECK(worker_start(&w, SCHED_FIFO, 10, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	CHECK(sched_setscheduler(w.tid, SCHED_FIFO, &sp) == 0, "sched_setscheduler: %m");
	level = cpupri_level(v, TEST_RT_CPU);
	CHECK(level == test_rt(30) || test_kthread_level(test_slot_pid(v, TEST_RT_CPU), level),
	      "after raising to FIFO 30 CPU %u is at %s", TEST_RT_CPU, test_level_name(level));
	sp.sched_priority = 20;
	CHECK(sched_setparam(w.tid, &sp) == 0, "sched_setparam: %m");
	level = cpupri_level(v, TEST_RT_CPU);
	CHECK(level == test_rt(20) || test_kthread_level(test_slot_pid(v, TEST_RT_CPU), level),
	      "after sched_setparam 20 CPU %u is at %s", TEST_RT_CPU, test_level_name(level));
	sp.sched_priority = 0;
	CHECK(sched_setscheduler(w.tid, SCHED_OTHER, &sp) == 0, "sched_setscheduler: %m");
	level = cpupri_level(v, TEST_RT_CPU);
	CHECK(level == LEVEL_NORMAL || test_kthread_level(test_slot_pid(v, TEST_RT_CPU), level),
	      "after SCHED_OTHER CPU %u is at %s", TEST_RT_CPU, test_level_name(level));
	/* Back to RT by the thread itself, through the third syscall. */
	w.view = v;
	w.prio = 25;
	worker_command(&w, WORKER_SETATTR);
	for (int i = 0; i < TEST_POLL_TRIES && !atomic_load(&w.observed); i++)
		usleep(1000);
	CHECK(atomic_load(&w.observed), "the thread did not run sched_setattr");
	CHECK(w.seen_level == test_rt(25) || test_kthread_level(w.seen_pid, w.seen_level), "after its own sched_setattr to FIFO 25 CPU %u was at %s", TEST_RT_CPU,
	      test_level_name(w.seen_level));
	worker_stop(ws, 1);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
}

struct pi_waiter {
	pthread_mutex_t *mutex;
	_Atomic pid_t tid;
	_Atomic int done;
};

static void *pi_waiter_main(void *arg)
{
	struct pi_waiter *pw = arg;

	atomic_store(&pw->tid, gettid());
	pthread_mutex_lock(pw->mutex);
	pthread_mutex_unlock(pw->mutex);
	atomic_store(&pw->done, 1);
	return NULL;
}

/* State letter of one of our threads (proc(5) stat), or 0. */
static char test_thread_state(pid_t tid)
{
	char path[64], line[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || !(p = strrchr(line, ')')) || p[1] != ' ')
		return 0;
	return p[2];
}

/* The boost happens while the holder runs on CPU 1 (no switch there) and
 * before the waiter sleeps; the deboost inside the holder's unlock. So the
 * level must be up once the waiter sleeps, and down when unlock returns. */
static void case_pi(const struct cpupri_view *v)
{
	struct sched_param sp = { .sched_priority = 30 };
	struct worker holder = { 0 }, *ws[] = { &holder };
	struct pi_waiter pw = { 0 };
	pthread_mutexattr_t ma;
	pthread_mutex_t mutex;
	pthread_attr_t attr;
	pthread_t waiter;
	cpu_set_t set;
	__u32 level;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&mutex, &ma);
	pthread_mutexattr_destroy(&ma);
	holder.pi_mutex = &mutex;
	pw.mutex = &mutex;
	holder.view = v;

	CHECK(worker_start(&holder, SCHED_OTHER, 0, TEST_RT_CPU, WORKER_PI_HOLD) == 0, "cannot start a thread");
	for (int i = 0; i < TEST_POLL_TRIES && !atomic_load(&holder.held); i++)
		usleep(1000);
	CHECK(atomic_load(&holder.held), "the holder did not take the mutex");
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_NORMAL);

	/* The RT waiter runs on CPU 0 only to block on the mutex. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	CHECK(pthread_create(&waiter, &attr, pi_waiter_main, &pw) == 0, "cannot start the RT waiter");
	pthread_attr_destroy(&attr);
	/* No sleeping here: the read must follow the waiter's block closely,
	 * before some unrelated event on CPU 1 could publish the level. */
	for (int i = 0; i < TEST_POLL_TRIES * 100 && (!atomic_load(&pw.tid) || test_thread_state(pw.tid) != 'S'); i++)
		sched_yield();
	level = cpupri_level(v, TEST_RT_CPU);
	CHECK(level == test_rt(30) || test_kthread_level(test_slot_pid(v, TEST_RT_CPU), level),
	      "with the RT waiter asleep the holder's CPU is at %s, want rt30",
	      test_level_name(level));

	worker_command(&holder, WORKER_PI_RELEASE);
	for (int i = 0; i < TEST_POLL_TRIES && atomic_load(&holder.held); i++)
		usleep(1000);
	CHECK(!atomic_load(&holder.held), "the holder did not release the mutex");
	CHECK(holder.seen_level == LEVEL_NORMAL || test_kthread_level(holder.seen_pid, holder.seen_level),
	      "right after unlocking the holder's CPU was at %s (thread %d; the holder is %d), want normal",
	      test_level_name(holder.seen_level), (int)holder.seen_pid, (int)holder.tid);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_NORMAL);
	pthread_join(waiter, NULL);
	CHECK(atomic_load(&pw.done), "the RT waiter did not get the mutex");
	worker_stop(ws, 1);
	pthread_mutex_destroy(&mutex);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
}

static void case_migrate(const struct cpupri_view *v, const struct topo *topo)
{
	struct worker w = { 0 }, *ws[] = { &w };
	unsigned dst = cpuset_test(&topo->online, 2) ? 2 : 0;
	cpu_set_t set;

	w.view = v;
	w.observe_cpu = dst;
	w.want_level = test_rt(10);
	CHECK(worker_start(&w, SCHED_FIFO, 10, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	worker_command(&w, WORKER_OBSERVE);
	CPU_ZERO(&set);
	CPU_SET(dst, &set);
	CHECK(sched_setaffinity(w.tid, sizeof(set), &set) == 0, "sched_setaffinity: %m");
	for (int i = 0; i < TEST_POLL_TRIES && !atomic_load(&w.observed); i++)
		usleep(1000);
	CHECK(atomic_load(&w.observed), "the thread never ran on CPU %u", dst);
	CHECK(w.seen_level == test_rt(10), "running on CPU %u it read %s there, want %s", dst,
	      test_level_name(w.seen_level), test_level_name(test_rt(10)));
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
	/* Home again before it wakes up to exit, to leave CPU 0 alone. */
	CPU_ZERO(&set);
	CPU_SET(TEST_RT_CPU, &set);
	CHECK(sched_setaffinity(w.tid, sizeof(set), &set) == 0, "sched_setaffinity: %m");
	worker_stop(ws, 1);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
}

struct ring_seen {
	pid_t watched;
	int exits, collisions, behind_hi, others;
};

static int ring_seen_cb(const struct tracker_event *ev, void *ctx)
{
	struct ring_seen *s = ctx;

	if (ev->tid == (__u32)s->watched && ev->tgid == (__u32)getpid() && ev->type == TRACKER_EVENT_EXIT) {
		s->exits++;
	} else if (ev->tid == (__u32)s->watched && ev->type == TRACKER_EVENT_COLLISION) {
		/* Kernel RT threads (threaded IRQs) may add their own. */
		s->collisions++;
		if (ev->cpu == TEST_RT_CPU && ev->level == test_rt(10) && ev->cpu_level == test_rt(20))
			s->behind_hi++;
	} else {
		s->others++;
	}
	return 0;
}

static void case_ring(struct tracker *t, const struct cpupri_view *v)
{
	struct worker lo = { 0 }, hi = { 0 }, quiet = { 0 }, *ws[] = { &hi, &lo, &quiet };
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring_seen seen = { 0 };
	int ep = epoll_create1(EPOLL_CLOEXEC), n, tries;

	CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, tracker_ring_fd(t), &ev) == 0, "epoll: %m");
	CHECK(tracker_consume(t, NULL, NULL) >= 0, "draining old events failed");

	CHECK(worker_start(&quiet, SCHED_OTHER, 0, TEST_RT_CPU, WORKER_BLOCK) == 0, "cannot start a thread");
	CHECK(tracker_watch(t, (__u32)quiet.tid, true) == 0, "tracker_watch failed");
	CHECK(tracker_watch(t, (__u32)quiet.tid, false) == 0, "tracker_watch off failed");
	worker_stop(ws + 2, 1);

	/* Watched before it spins: attaching the watch programs waits for an
	 * RCU grace period, which on PREEMPT_RT needs CPU 1's rcuc thread
	 * (FIFO 1), which a spinning FIFO 10 thread starves (seen on 6.12-rt:
	 * the attach never returned). */
	CHECK(worker_start(&lo, SCHED_FIFO, 10, TEST_RT_CPU, WORKER_BLOCK) == 0, "cannot start an RT thread");
	seen.watched = lo.tid;
	CHECK(tracker_watch(t, (__u32)lo.tid, true) == 0, "tracker_watch failed");
	worker_command(&lo, WORKER_SPIN);
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	/* Preempted by a higher thread: a collision, queued without wakeup. */
	CHECK(worker_start(&hi, SCHED_FIFO, 20, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(20));
	worker_command(&hi, WORKER_BLOCK);
	CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
	/* A new thread may reach its CPU through the migration stopper, which
	 * then is what preempts lo; a wakeup on the CPU preempts it directly.
	 * On a loaded machine the wakeup can still arrive through another
	 * path (a remote wakeup queued while lo was itself being switched), so
	 * the provocation is repeated, a bounded number of times, until the
	 * collision behind rt20 is seen; the count is reported. */
	for (tries = 1; tries <= TEST_COLLISION_TRIES; tries++) {
		worker_command(&hi, WORKER_SPIN);
		CHECK_LEVEL(v, TEST_RT_CPU, test_rt(20));
		worker_command(&hi, WORKER_BLOCK);
		CHECK_LEVEL(v, TEST_RT_CPU, test_rt(10));
		CHECK(tracker_consume(t, ring_seen_cb, &seen) >= 0, "draining the ring buffer failed");
		if (seen.behind_hi)
			break;
	}
	printf("# collision behind rt20 seen after %d wakeup(s) of the higher thread\n", tries);
	CHECK(seen.behind_hi >= 1, "no collision event on CPU %u at rt10 behind rt20 after %d wakeups (%d others)",
	      TEST_RT_CPU, TEST_COLLISION_TRIES, seen.collisions);
	/* The watched exit wakes the consumer. */
	worker_stop(ws + 1, 1);
	n = epoll_wait(ep, &ev, 1, TEST_POLL_TRIES);
	CHECK(n == 1, "the ring buffer fd did not become readable after a watched exit");
	CHECK(tracker_consume(t, ring_seen_cb, &seen) >= 1, "no event after the watched exit");
	CHECK(seen.exits == 1, "%d exit events for the watched thread, want 1", seen.exits);
	CHECK(seen.others == 0, "%d events about threads not watched", seen.others);
	CHECK(tracker_lost(t) == 0, "%llu events lost", (unsigned long long)tracker_lost(t));
	worker_stop(ws, 1);
	CHECK_LEVEL(v, TEST_RT_CPU, LEVEL_COUNT);
	if (ep >= 0)
		close(ep);
}

/* What each thread of pid was doing in the kernel (root reads the kernel
 * stacks), so that a hung run says where it hung. */
static void test_print_stacks(pid_t pid)
{
	char path[384], line[256];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", (int)pid, e->d_name);
		f = fopen(path, "re");
		fprintf(stderr, "# thread %s:\n", e->d_name);
		while (f && fgets(line, sizeof(line), f))
			fprintf(stderr, "#   %s", line);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/* A child on CPU 0 at normal priority that kills the whole test, RT threads
 * included, if it outlives TEST_BOUND_S; it dies with the test. */
static pid_t test_watchdog(void)
{
	pid_t parent = getpid(), pid = fork();
	cpu_set_t set;

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	sleep(TEST_BOUND_S);
	fprintf(stderr, "FAIL: still running after %d s, killing the test; where its threads were:\n", TEST_BOUND_S);
	test_print_stacks(parent);
	kill(parent, SIGKILL);
	_exit(1);
}

static int test_open(const struct topo *topo, struct tracker **ret)
{
	struct rtplace_reason reason, said;
	int r = tracker_open(topo, TOPO_SHARD_NODE, &reason, &said, ret);

	if (r == -ENOENT || r == -EOPNOTSUPP)
		test_skip(reason.text);
	if (r < 0)
		fprintf(stderr, "FAIL: tracker_open: %s (%s) [libbpf: %s]\n", reason.text, strerror(-r), said.text);
	return r;
}

int main(void)
{
	struct worker early = { 0 }, *ews[] = { &early };
	struct tracker *t = NULL;
	struct topo *topo = NULL;
	struct rtplace_reason reason;
	struct cpupri_view view = { 0 };
	struct cpupri_mask all = { 0 };
	struct rtplace_cpumask every;
	const void *map;
	pid_t watchdog;
	cpu_set_t set;
	size_t size;
	int r, lock;

	test_require_root();
	setvbuf(stdout, NULL, _IOLBF, 0);
	r = topo_load(NULL, &reason, &topo);
	if (r < 0) {
		fprintf(stderr, "FAIL: %s\n", reason.text);
		return 1;
	}
	if (!cpuset_test(&topo->online, 0) || !cpuset_test(&topo->online, TEST_RT_CPU))
		test_skip("needs CPUs 0 and 1 online");
	lock = test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S);
	if (lock < 0) {
		fprintf(stderr, "FAIL: waiting for the RT test lock: %s\n", strerror(-lock));
		return 1;
	}
	watchdog = test_watchdog();
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);

	/* Seeding: an RT thread already spinning shows at once, with no
	 * event to wait for. */
	CHECK(worker_start(&early, SCHED_FIFO, 15, TEST_RT_CPU, WORKER_SPIN) == 0, "cannot start an RT thread");
	r = test_open(topo, &t);
	if (r < 0)
		goto out;
	map = tracker_map(t, &size);
	r = cpupri_view_open(map, size, &view);
	CHECK(r == 0, "cpupri_view_open: %s", strerror(-r));
	if (r < 0)
		goto out;
	CHECK(cpupri_level(&view, TEST_RT_CPU) == test_rt(15), "seeded CPU %u at %s, want rt15", TEST_RT_CPU,
	      test_level_name(cpupri_level(&view, TEST_RT_CPU)));
	for (__u32 cpu = 0; cpu < view.geom.ncpus; cpu++)
		CHECK((cpupri_level(&view, cpu) == LEVEL_OFFLINE) == !cpuset_test(&topo->online, cpu),
		      "CPU %u is at %s after seeding", cpu, test_level_name(cpupri_level(&view, cpu)));
	worker_stop(ews, 1);
	CHECK_LEVEL(&view, TEST_RT_CPU, LEVEL_COUNT);

	cpupri_mask_new(&view, &all);
	cpuset_zero(&every);
	for (__u32 cpu = 0; cpu < view.geom.ncpus; cpu++)
		cpuset_set(&every, cpu);
	cpupri_mask_from_cpuset(&view, &every, &all);
	test_no_drift(&view, &all, "seeding");

	printf("# case_basic\n");
	case_basic(&view);
	test_no_drift(&view, &all, "one RT thread");
	printf("# case_two_prios\n");
	case_two_prios(&view);
	test_no_drift(&view, &all, "two RT threads");
	printf("# case_setscheduler\n");
	case_setscheduler(&view);
	test_no_drift(&view, &all, "sched_setscheduler");
	printf("# case_pi\n");
	case_pi(&view);
	test_no_drift(&view, &all, "priority inheritance");
	printf("# case_migrate\n");
	case_migrate(&view, topo);
	test_no_drift(&view, &all, "migration");
	printf("# case_ring\n");
	case_ring(t, &view);
	test_no_drift(&view, &all, "the ring buffer");
	printf("# map %zu bytes for %u CPUs, %u shards\n", size, view.geom.ncpus, view.geom.nshards);
out:
	worker_stop(ews, 1);
	cpupri_mask_free(&all);
	cpupri_view_close(&view);
	tracker_close(t);
	topo_free(topo);
	kill(watchdog, SIGKILL);
	waitpid(watchdog, NULL, 0);
	close(lock);
	if (r < 0)
		return 1;
	printf("# %d failures\n", test_failures);
	return test_failures ? 1 : 0;
}
