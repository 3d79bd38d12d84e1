/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The threads holding a RealtimeKit grant: at most RTKIT_THREADS_MAX in
 * one array, unordered (a drop moves the last into the hole), searched by
 * tid. Each keeps its thread's pidfd, whose event drops it when the
 * thread exits, its claim, ended with it, and the policy and affinity it
 * had before its first grant, for ResetKnown and the watchdog.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "procfs.h"
#include "rtkit-internal.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

int rtkit_threads_init(struct rtkit *k)
{
	k->threads = calloc(RTKIT_THREADS_MAX, sizeof(*k->threads));
	return k->threads ? 0 : -ENOMEM;
}

void rtkit_threads_free(struct rtkit *k)
{
	for (unsigned i = 0; i < k->nthreads; i++) {
		if (k->threads[i].ev)
			event_free(k->threads[i].ev);
		if (k->threads[i].pidfd >= 0)
			close(k->threads[i].pidfd);
	}
	free(k->threads);
	k->threads = NULL;
	k->nthreads = 0;
}

void rtkit_threads_drop(struct rtkit *k, unsigned i)
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

int rtkit_threads_find(const struct rtkit *k, pid_t tid)
{
	for (unsigned i = 0; i < k->nthreads; i++)
		if (k->threads[i].tid == tid)
			return (int)i;
	return -1;
}

bool rtkit_threads_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

bool rtkit_threads_same(const struct rtkit *k, const struct rtkit_thread *t)
{
	struct procfs_stat st;

	if (t->pidfd >= 0)
		return !rtkit_threads_exited(t->pidfd);
	return procfs_read_stat(k->o.proc_root, t->tid, t->tid, &st) == 0 && st.start_time == t->start;
}

static void rtkit_threads_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rtkit *k = arg;

	for (unsigned i = 0; i < k->nthreads; i++)
		if (k->threads[i].pidfd == fd) {
			log_debug("RealtimeKit: thread %d of process %d exited", (int)k->threads[i].tid,
				  (int)k->threads[i].pid);
			rtkit_threads_drop(k, i);
			return;
		}
}

static void rtkit_threads_watch(struct rtkit *k, struct rtkit_thread *t)
{
	if (t->pidfd < 0)
		return;
	t->ev = event_new(k->o.base, t->pidfd, EV_READ, rtkit_threads_gone_cb, k);
	if (t->ev && event_add(t->ev, NULL) < 0) {
		event_free(t->ev);
		t->ev = NULL;
	}
}

void rtkit_threads_add(struct rtkit *k, const struct rtkit_thread *add)
{
	struct rtkit_thread *t = &k->threads[k->nthreads++];

	*t = *add;
	t->ev = NULL;
	rtkit_threads_ran(k, t, &t->ran_ns, &t->cpu);
	rtkit_threads_watch(k, t);
}

void rtkit_threads_ran(const struct rtkit *k, const struct rtkit_thread *t, uint64_t *ret_ns, int *ret_cpu)
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

void rtkit_threads_count(struct rtkit *k, uid_t uid, pid_t pid, pid_t tid, struct rtkit_use *ret)
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
		policy = rtkit_threads_exited(t->pidfd) ? -1 : sched_getscheduler(t->tid);
		policy = policy < 0 ? -1 : policy & ~SCHED_RESET_ON_FORK;
		if (policy != SCHED_RR && policy != SCHED_FIFO) {
			rtkit_threads_drop(k, i);
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
