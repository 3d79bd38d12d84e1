/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The starvation watchdog (rtkit-rules.h): on the daemon's loop, at normal
 * priority, like rtkit's canary. A CPU where a thread granted here ran
 * watchdog-busy-percent of the interval is starved: every thread granted
 * here that ran there is demoted, and requests are refused for a while.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>

#include <event2/event.h>

#include "log.h"
#include "loop.h"
#include "notify.h"
#include "record.h"
#include "rtkit-internal.h"

/* Back to SCHED_OTHER, on the CPUs it had before its grant; subscribers
 * who may see the thread get a record naming the CPU it starved and the
 * policy it had. A thread that exited is only forgotten: its tid may name
 * another task by now, whose policy is not the watchdog's to change. */
static void rtkit_watchdog_demote(struct rtkit *k, unsigned i)
{
	struct rtkit_thread *t = &k->threads[i];
	struct thread_sched_result affinity = t->res;
	struct sched_param sp = { 0 };
	int policy, prio, reset_on_fork;

	rtkit_test_hold("RTPLACED_TEST_RTKIT_WATCHDOG_HOLD", "demoting thread", t->tid);
	affinity.set_sched = false;
	if (!rtkit_threads_same(k, t)) {
		log_notice("RealtimeKit watchdog: thread %d exited before its demotion", (int)t->tid);
		goto out;
	}
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
out:
	rtkit_threads_drop(k, i);
}

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

		rtkit_threads_ran(k, t, &ran, &t->cpu);
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
			rtkit_watchdog_demote(k, i);
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

int rtkit_watchdog_arm(struct rtkit *k)
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

void rtkit_watchdog_free(struct rtkit *k)
{
	if (k->watchdog)
		event_free(k->watchdog);
	k->watchdog = NULL;
}
