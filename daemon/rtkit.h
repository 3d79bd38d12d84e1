/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * org.freedesktop.RealtimeKit1 on the system bus (DESIGN §18): the bus
 * edge. rtplaced owns the name when [rtkit] enable = yes and serves
 * rtkit's interface exactly (object /org/freedesktop/RealtimeKit1, its
 * methods, properties and error names), so PipeWire, PulseAudio and
 * every other rtkit client get RT from it unchanged, and in the same call
 * a CPU: the thread is pinned inside its own affinity to the CPU placement
 * chooses for its priority, under a claim owner-bound to its process
 * (engine_claim_cpu()). Without a CPU below the priority the thread is
 * made RT where it is, as rtkit would, and the log says so.
 *
 * sd-bus runs on the daemon's libevent loop (rtkit-bus.c). Nothing here
 * waits: the caller's uid, pid and process descriptor are asked of the
 * bus with an asynchronous GetConnectionCredentials, and the method is
 * answered from its reply, the caller held by a pidfd, never by a bare
 * pid (rtkit-caller.c). The rules are rtkit-rules.c's; the files that do
 * the rest are listed in rtkit-internal.h.
 *
 * When the name is owned already (rtkit-daemon runs), or the bus cannot
 * be reached, it says so once and the daemon runs without the interface.
 *
 * A starvation watchdog on the same loop (rtkit-rules.h) demotes threads
 * granted here that keep a CPU from its normal work.
 */
#ifndef RTPLACE_RTKIT_H
#define RTPLACE_RTKIT_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "conf.h"
#include "engine.h"
#include "rtkit-rules.h"

#define RTKIT_BUS_NAME "org.freedesktop.RealtimeKit1"
#define RTKIT_OBJECT_PATH "/org/freedesktop/RealtimeKit1"

/* Threads holding a grant, all users together. */
#define RTKIT_THREADS_MAX 4096

struct rtkit;

struct rtkit_opts {
	struct event_base *base;
	struct engine *engine;
	struct notify *notify; /* the watchdog's demotions are published as records */
	const char *proc_root;
};

/* Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the default)
 * and asks for the name; serving starts when the bus grants it. A bus
 * that cannot be reached is logged and leaves *ret not serving. 0 or
 * -ENOMEM. */
int rtkit_new(const struct rtkit_opts *opts, const struct config *cfg, struct rtkit **ret);

/* Closes the connection; the threads granted keep their policy and CPU,
 * their claims end with their processes. Accepts NULL. */
void rtkit_free(struct rtkit *k);

/* Takes the [rtkit] rules of a reloaded configuration. */
void rtkit_apply_config(struct rtkit *k, const struct config *cfg);

struct rtkit_stats {
	bool serving;             /* the name is rtplaced's */
	uint64_t granted_rt;      /* threads made RT */
	uint64_t granted_nice;    /* threads given a nice level */
	uint64_t unpinned;        /* made RT without a CPU of their own */
	uint64_t demoted;         /* threads the watchdog sent back to SCHED_OTHER */
	uint64_t refused[RTKIT_REFUSE_COUNT];
	uint32_t threads;         /* threads holding a grant now */
};

/* Accepts NULL (all zero). */
void rtkit_get_stats(const struct rtkit *k, struct rtkit_stats *ret);

#endif
