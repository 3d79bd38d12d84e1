/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RealtimeKit's rules (DESIGN §18), pure: who may make which thread RT or
 * raise its nice level through org.freedesktop.RealtimeKit1, decided from
 * plain structs the bus edge (rtkit.c) fills from the bus and the kernel.
 *
 * - the caller's uid (from the bus) owns the target process (its real or
 *   effective uid), or is root;
 * - the thread belongs to that process;
 * - the process's hard RLIMIT_RTTIME is set and at most rttime-usec-max,
 *   so a runaway RT thread is killed by the kernel within it;
 * - priority 1..max-realtime-priority, nice min-nice-level..19;
 * - per uid: actions-per-burst-max requests per actions-burst-sec, and at
 *   most max-threads-per-user threads in max-processes-per-user processes
 *   holding a grant at once.
 *
 * No syscalls, no globals, no clock: the caller passes the time, so the
 * unit test (tests/unit/test-rtkit-rules.c) runs anywhere.
 *
 * The starvation watchdog, like rtkit's canary, in two decisions: a
 * thread granted here that ran watchdog-busy-percent of an interval on its
 * CPU starves that CPU's normal work (audio threads, what rtkit serves,
 * run a few percent; the hard RLIMIT_RTTIME only catches a thread that
 * never sleeps); and for watchdog-refuse-sec after a demotion every new
 * request is refused.
 */
#ifndef RTPLACE_RTKIT_RULES_H
#define RTPLACE_RTKIT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "reason.h"

/* Why a request was refused: the label of its metric, in this order. */
enum rtkit_refusal {
	RTKIT_REFUSE_NOT_OWNER,      /* the process is another user's */
	RTKIT_REFUSE_FOREIGN_THREAD, /* the thread is not the process's */
	RTKIT_REFUSE_RTTIME_UNSET,   /* hard RLIMIT_RTTIME unlimited */
	RTKIT_REFUSE_RTTIME_HIGH,    /* above rttime-usec-max */
	RTKIT_REFUSE_PRIORITY,       /* 0 or above max-realtime-priority */
	RTKIT_REFUSE_NICE,           /* below min-nice-level or above 19 */
	RTKIT_REFUSE_BURST,          /* actions-per-burst-max reached */
	RTKIT_REFUSE_THREADS,        /* max-threads-per-user reached */
	RTKIT_REFUSE_PROCESSES,      /* max-processes-per-user reached */
	RTKIT_REFUSE_ROOT_ONLY,      /* ResetKnown, ResetAll, Exit */
	RTKIT_REFUSE_GONE,           /* the process or thread does not exist */
	RTKIT_REFUSE_FAILED,         /* the kernel or the daemon failed */
	RTKIT_REFUSE_WATCHDOG,       /* within watchdog-refuse-sec of a demotion */
	RTKIT_REFUSE_COUNT,
};

/* The metric label of why ("not_owner", ...). */
const char *rtkit_refusal_name(enum rtkit_refusal why);

/* RLIMIT_RTTIME that is no limit (RLIM_INFINITY). */
#define RTKIT_RTTIME_UNLIMITED UINT64_MAX

/* What the edge read about a request's target. */
struct rtkit_target {
	uid_t caller_uid;
	pid_t pid;            /* the process named */
	pid_t tid;            /* the thread named */
	uid_t uid, euid;      /* the thread's real and effective uid (threads may differ) */
	pid_t thread_tgid;    /* the process the thread belongs to */
	uint64_t rttime_hard; /* the process's hard RLIMIT_RTTIME, us */
};

/* Grants held now by the caller's uid (the edge counts its table). */
struct rtkit_use {
	uint32_t threads;       /* RT threads of the uid */
	uint32_t processes;     /* distinct processes among them */
	bool thread_held;       /* the thread holds a grant already (a new priority) */
	bool process_held;      /* the process holds one */
};

/*
 * May target's thread be made real-time at priority? 0, or -EPERM with
 * *ret_why and reason (fit for a D-Bus error message) set.
 */
int rtkit_rules_realtime(const struct config_rtkit *cfg, const struct rtkit_target *t, uint32_t priority,
			 const struct rtkit_use *use, enum rtkit_refusal *ret_why, struct rtplace_reason *reason);

/* May target's thread get nice level nice? As rtkit_rules_realtime(). */
int rtkit_rules_nice(const struct config_rtkit *cfg, const struct rtkit_target *t, int32_t nice,
		     enum rtkit_refusal *ret_why, struct rtplace_reason *reason);

/*
 * Parses the "Max realtime timeout" line of a /proc/PID/limits text into
 * its hard limit (RTKIT_RTTIME_UNLIMITED for "unlimited"). 0, -ENOENT (no
 * such line) or -EBADMSG.
 */
int rtkit_rules_parse_rttime(const char *limits, uint64_t *ret_hard);

/* Whether a thread that ran ran_ns of the last interval_ns starves its CPU. */
bool rtkit_rules_starving(const struct config_rtkit *cfg, uint64_t ran_ns, uint64_t interval_ns);

/* Whether requests are refused at now_ms after the watchdog demoted threads
 * at fired_ms (0: it never has). */
bool rtkit_rules_refusing(const struct config_rtkit *cfg, uint64_t fired_ms, uint64_t now_ms);

/*
 * Whether a process whose start time (/proc/PID/stat field 22, clock ticks
 * of ticks_per_sec after boot) is start_ticks started after a call that
 * arrived at arrived_boot_ns (CLOCK_BOOTTIME): then it cannot have sent
 * the call, and the pid the bus named for the caller is another
 * process's by now. The kernel rounds start times down to a tick, so a
 * process in the arrival's own tick is not "after": a caller that
 * connected and called within one tick of starting is never refused.
 */
bool rtkit_rules_started_after(uint64_t start_ticks, uint64_t ticks_per_sec, uint64_t arrived_boot_ns);

/* The time on CPU (ns, the first field) of a /proc/PID/task/TID/schedstat
 * text. 0 or -EBADMSG. */
int rtkit_rules_parse_schedstat(const char *text, uint64_t *ret_ns);

/*
 * The per-uid request rate: each uid's window opens at its first request
 * and holds actions-per-burst-max requests for actions-burst-sec. Entries
 * whose window has closed are reused, so the table holds at most the uids
 * that asked within one window.
 */
struct rtkit_burst {
	uid_t uid;
	uint64_t start_ms;
	uint32_t count;
};

struct rtkit_bursts {
	struct rtkit_burst *v;
	size_t n, cap;
};

/* Counts one request of uid at now_ms. 0; -EPERM when its window is full
 * (the request is refused and not counted); -ENOMEM. */
int rtkit_bursts_take(struct rtkit_bursts *b, const struct config_rtkit *cfg, uid_t uid, uint64_t now_ms);

/* Whether uid's window at now_ms is full: its next request would be
 * refused. */
bool rtkit_bursts_spent(const struct rtkit_bursts *b, const struct config_rtkit *cfg, uid_t uid, uint64_t now_ms);

void rtkit_bursts_free(struct rtkit_bursts *b);

#endif
