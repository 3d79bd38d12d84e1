/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RealtimeKit's bus adapter: the system bus connection on the daemon's
 * libevent loop (its descriptor, events and timeout one libevent event,
 * re-armed after each round of sd_bus_process()), the name, the vtable
 * with one handler per method, the caller's credentials and the replies.
 *
 * Nothing here waits: each method handler checks its arguments, notes
 * when the call arrived and asks the bus for the caller's uid, pid and
 * process descriptor with an asynchronous GetConnectionCredentials; the
 * method's own serve step answers from the bus's reply, through
 * rtkit-caller.c (the caller pinned) and rtkit-grant.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clocks.h"
#include "log.h"
#include "loop.h"
#include "rtkit-internal.h"

/* sd_bus_process() rounds per wakeup before the loop serves others. */
#define RTKIT_PROCESS_BATCH 64

struct rtkit_call;

/* A method's answer, once the bus named its caller (caller->pidfd: the
 * bus's ProcessFD, or -1). */
typedef void rtkit_bus_serve_fn(struct rtkit_call *c, struct rtkit_caller *caller);

/* A method call waiting for its caller's credentials. */
struct rtkit_call {
	struct rtkit *k;
	sd_bus_message *msg;
	sd_bus_slot *slot;
	rtkit_bus_serve_fn *serve;
	pid_t pid, tid; /* pid 0: the caller's process */
	int64_t value;  /* priority or nice level */
	uint64_t arrived_boot_ns; /* CLOCK_BOOTTIME when the call arrived: its caller started before */
	struct rtkit_call *prev, *next;
};

/* The unique name of m's sender; "" on a connection without a bus. */
static const char *rtkit_bus_sender(sd_bus_message *m)
{
	const char *s = sd_bus_message_get_sender(m);

	return s ? s : "";
}

/* rtkit's error names: a refusal is AccessDenied, so clients need no
 * change; what is not a refusal says what failed. */
static void rtkit_bus_reply_error(struct rtkit *k, sd_bus_message *m, int r, enum rtkit_refusal why, uid_t uid,
				  const char *text)
{
	const char *name = r == -ENOMEM ? SD_BUS_ERROR_NO_MEMORY
			 : why == RTKIT_REFUSE_GONE || why == RTKIT_REFUSE_FAILED ? SD_BUS_ERROR_FAILED
										  : SD_BUS_ERROR_ACCESS_DENIED;

	k->stats.refused[why]++;
	log_ratelimited(LOG_NOTICE, "RealtimeKit: %s refused to uid %u (%s): %s", sd_bus_message_get_member(m),
			(unsigned)uid, rtkit_refusal_name(why), text);
	sd_bus_reply_method_errorf(m, name, "%s", text);
}

/* The answer to a request: r 0 or -errno with why and reason. */
static void rtkit_bus_reply(struct rtkit_call *c, int r, enum rtkit_refusal why, uid_t uid,
			    const struct rtplace_reason *reason)
{
	if (r == 0) {
		sd_bus_reply_method_return(c->msg, NULL);
		return;
	}
	if (why == RTKIT_REFUSE_COUNT)
		why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
	rtkit_bus_reply_error(c->k, c->msg, r, why, uid, reason->text);
}

static void rtkit_bus_burst_spent(const struct rtkit *k, uid_t uid, enum rtkit_refusal *why,
				  struct rtplace_reason *reason)
{
	*why = RTKIT_REFUSE_BURST;
	reason_set(reason, "uid %u made %u requests within %u s ([rtkit] actions-per-burst-max)", (unsigned)uid,
		   (unsigned)k->cfg.actions_per_burst_max, (unsigned)k->cfg.actions_burst_sec);
}

/* Whether the caller may ask for a grant now: not within the watchdog's
 * refusal, and within its uid's burst, which the request counts in
 * (take) or which must only have room (!take). */
static int rtkit_bus_admit(struct rtkit *k, uid_t uid, bool take, enum rtkit_refusal *why,
			   struct rtplace_reason *reason)
{
	int r = 0;

	if (rtkit_rules_refusing(&k->cfg, k->watchdog_fired_ms, loop_now_ms())) {
		*why = RTKIT_REFUSE_WATCHDOG;
		reason_set(reason, "the watchdog demoted threads that starved a CPU; requests are refused for %u s",
			   (unsigned)k->cfg.watchdog_refuse_sec);
		return -EPERM;
	}
	if (!take)
		r = rtkit_bursts_spent(&k->bursts, &k->cfg, uid, loop_now_ms()) ? -EPERM : 0;
	else
		r = rtkit_bursts_take(&k->bursts, &k->cfg, uid, loop_now_ms());
	if (r == -EPERM) {
		rtkit_bus_burst_spent(k, uid, why, reason);
	} else if (r < 0) {
		*why = RTKIT_REFUSE_FAILED;
		reason_set(reason, "out of memory");
	}
	return r;
}

/*
 * The caller of a grant for its own process (MakeThreadRealtime,
 * MakeThreadHighPriority), pinned before anything is decided on its
 * behalf: a caller gone by now gets no grant, whatever took its pid. A
 * WithPID call names its process, which the grant pins itself, and is
 * judged by the connection's uid, which no pid reuse changes: its
 * caller's process is not needed, and one that connected and then left
 * its connection to a child is served as rtkit serves it.
 */
static int rtkit_bus_pin(struct rtkit_call *c, struct rtkit_caller *caller, enum rtkit_refusal *why,
			 struct rtplace_reason *reason)
{
	int r = c->pid ? 0 : rtkit_caller_pin(c->k, caller, c->arrived_boot_ns, reason);

	if (r < 0)
		*why = r == -ESRCH ? RTKIT_REFUSE_GONE : RTKIT_REFUSE_FAILED;
	return r;
}

static void rtkit_bus_serve_realtime(struct rtkit_call *c, struct rtkit_caller *caller)
{
	struct rtplace_reason reason = { { 0 } };
	enum rtkit_refusal why = RTKIT_REFUSE_COUNT;
	int r = rtkit_bus_admit(c->k, caller->uid, true, &why, &reason);

	if (r == 0)
		r = rtkit_bus_pin(c, caller, &why, &reason);
	if (r == 0)
		r = rtkit_grant_realtime(c->k, caller, c->pid, c->tid, (uint32_t)c->value, &why, &reason);
	rtkit_bus_reply(c, r, why, caller->uid, &reason);
}

static void rtkit_bus_serve_nice(struct rtkit_call *c, struct rtkit_caller *caller)
{
	struct rtplace_reason reason = { { 0 } };
	enum rtkit_refusal why = RTKIT_REFUSE_COUNT;
	int r = rtkit_bus_admit(c->k, caller->uid, true, &why, &reason);

	if (r == 0)
		r = rtkit_bus_pin(c, caller, &why, &reason);
	if (r == 0)
		r = rtkit_grant_nice(c->k, caller, c->pid, c->tid, (int32_t)c->value, &why, &reason);
	rtkit_bus_reply(c, r, why, caller->uid, &reason);
}

/* ResetKnown, ResetAll and Exit are root's; the shipped bus policy says
 * so too, but a bus may let anyone through. */
static bool rtkit_bus_root(struct rtkit_call *c, uid_t uid)
{
	struct rtplace_reason reason = { { 0 } };

	if (uid == 0)
		return true;
	reason_set(&reason, "%s is root's", sd_bus_message_get_member(c->msg));
	rtkit_bus_reply_error(c->k, c->msg, -EPERM, RTKIT_REFUSE_ROOT_ONLY, uid, reason.text);
	return false;
}

static void rtkit_bus_serve_reset_known(struct rtkit_call *c, struct rtkit_caller *caller)
{
	if (!rtkit_bus_root(c, caller->uid))
		return;
	rtkit_grant_reset_known(c->k);
	sd_bus_reply_method_return(c->msg, NULL);
}

static void rtkit_bus_serve_reset_all(struct rtkit_call *c, struct rtkit_caller *caller)
{
	if (!rtkit_bus_root(c, caller->uid))
		return;
	rtkit_grant_reset_all(c->k);
	sd_bus_reply_method_return(c->msg, NULL);
}

/* The bus's answer to ReleaseName: the reply to Exit went out before the
 * request, so the connection can close now. */
static int rtkit_bus_released_cb(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit *k = userdata;

	k->closing = true;
	return 0;
}

/*
 * rtkit's Exit ends rtkit-daemon; rtplaced serves its socket, claims and
 * records besides, so Exit ends only the interface: the vtable goes at
 * once (calls still in flight get UnknownObject), the name is released
 * without waiting, and the connection closes on the bus's answer. The
 * threads granted keep their policy, CPU and claim, and the watchdog keeps
 * watching them. A reload serves the name again.
 */
static void rtkit_bus_serve_exit(struct rtkit_call *c, struct rtkit_caller *caller)
{
	struct rtkit *k = c->k;
	const char *sender = sd_bus_message_get_sender(c->msg);
	int r;

	if (!rtkit_bus_root(c, caller->uid))
		return;
	sd_bus_reply_method_return(c->msg, NULL);
	log_notice("RealtimeKit: Exit called by root (pid %d, bus name %s); no longer serving %s until a reload "
		   "(SIGHUP) or restart",
		   (int)caller->pid, sender ? sender : "?", RTKIT_BUS_NAME);
	k->vtable_slot = sd_bus_slot_unref(k->vtable_slot);
	k->name_slot = sd_bus_slot_unref(k->name_slot);
	k->serving = false;
	k->exited = true;
	r = sd_bus_release_name_async(k->bus, &k->name_slot, RTKIT_BUS_NAME, rtkit_bus_released_cb, k);
	if (r < 0)
		k->closing = true;
}

static void rtkit_bus_call_free(struct rtkit_call *c)
{
	struct rtkit *k = c->k;

	if (c->prev)
		c->prev->next = c->next;
	else
		k->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	rtkit_admit_done(&k->admit, rtkit_bus_sender(c->msg));
	sd_bus_slot_unref(c->slot);
	sd_bus_message_unref(c->msg);
	free(c);
}

/* One entry of GetConnectionCredentials' answer, entered: UnixUserID,
 * ProcessID and ProcessFD (duplicated into *fd, which the caller closes)
 * are kept, the rest skipped. */
static int rtkit_bus_creds_entry(sd_bus_message *reply, uint32_t *uid, uint32_t *pid, int *fd)
{
	const char *key;
	int busfd, r = sd_bus_message_read(reply, "s", &key);

	if (r < 0)
		return r;
	if (strcmp(key, "UnixUserID") == 0)
		return sd_bus_message_read(reply, "v", "u", uid);
	if (strcmp(key, "ProcessID") == 0)
		return sd_bus_message_read(reply, "v", "u", pid);
	if (strcmp(key, "ProcessFD") != 0 || *fd >= 0)
		return sd_bus_message_skip(reply, "v");
	r = sd_bus_message_read(reply, "v", "h", &busfd);
	if (r >= 0) {
		*fd = fcntl(busfd, F_DUPFD_CLOEXEC, 3);
		r = *fd >= 0 ? 0 : -errno;
	}
	return r;
}

/* The bus's answer to GetConnectionCredentials: UnixUserID, ProcessID and,
 * where the bus gives it, ProcessFD. */
static int rtkit_bus_creds_cb(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit_call *c = userdata;
	struct rtkit_caller caller = { .pidfd = -1 };
	uint32_t uid = UINT32_MAX, pid = 0;
	int r;

	if (sd_bus_message_is_method_error(reply, NULL)) {
		sd_bus_reply_method_errorf(c->msg, SD_BUS_ERROR_FAILED, "cannot read the caller's credentials: %s",
					   sd_bus_message_get_error(reply)->message);
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r > 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = rtkit_bus_creds_entry(reply, &uid, &pid, &caller.pidfd);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r >= 0)
			r = 1;
	}
	if (r < 0 || uid == UINT32_MAX || pid == 0 || pid > INT_MAX) {
		sd_bus_reply_method_errorf(c->msg, SD_BUS_ERROR_FAILED, "the bus did not tell the caller's uid and pid");
		goto out;
	}
	rtkit_admit_learn(&c->k->admit, rtkit_bus_sender(c->msg), (uid_t)uid);
	caller.uid = (uid_t)uid;
	caller.pid = (pid_t)pid;
	rtkit_caller_said(c->k, &caller);
	c->serve(c, &caller);
out:
	rtkit_caller_release(&caller);
	rtkit_bus_call_free(c);
	return 0;
}

/* Queues call m, to be served by serve once the bus names its caller,
 * within its sender's and its uid's shares of the wait (rtkit-admit.h). */
static int rtkit_bus_queue(struct rtkit *k, sd_bus_message *m, rtkit_bus_serve_fn *serve, uint64_t pid, uint64_t tid,
			   int64_t value, sd_bus_error *ret_error)
{
	struct rtkit_call *c;
	int r = rtkit_admit_take(&k->admit, rtkit_bus_sender(m), loop_now_ms());

	if (r == -EBUSY)
		return sd_bus_error_setf(ret_error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "too many requests of this connection or user are waiting already");
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		rtkit_admit_done(&k->admit, rtkit_bus_sender(m));
		return -ENOMEM;
	}
	*c = (struct rtkit_call){ .k = k, .serve = serve, .pid = (pid_t)pid, .tid = (pid_t)tid, .value = value,
				  .arrived_boot_ns = clocks_boottime_ns() };
	c->msg = sd_bus_message_ref(m);
	r = sd_bus_call_method_async(k->bus, &c->slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
				     "org.freedesktop.DBus", "GetConnectionCredentials", rtkit_bus_creds_cb, c, "s",
				     sd_bus_message_get_sender(m));
	if (r < 0) {
		rtkit_admit_done(&k->admit, rtkit_bus_sender(m));
		sd_bus_message_unref(c->msg);
		free(c);
		return r;
	}
	c->next = k->calls;
	if (k->calls)
		k->calls->prev = c;
	k->calls = c;
	return 1;
}

/* A grant's thread, and its process where the method names one (with_pid):
 * ids the kernel can have. */
static int rtkit_bus_queue_grant(struct rtkit *k, sd_bus_message *m, rtkit_bus_serve_fn *serve, bool with_pid,
				 uint64_t pid, uint64_t tid, int64_t value, sd_bus_error *ret_error)
{
	struct rtplace_reason reason = { { 0 } };
	enum rtkit_refusal why;
	uid_t uid;

	if (tid == 0 || tid > INT_MAX || pid > INT_MAX || (with_pid && pid == 0))
		return sd_bus_error_setf(ret_error, SD_BUS_ERROR_INVALID_ARGS, "no such process or thread id");
	/* A sender the bus named before that may not ask now is told so
	 * without waiting: a flood over its burst takes no place. */
	if (rtkit_admit_known(&k->admit, rtkit_bus_sender(m), &uid) &&
	    rtkit_bus_admit(k, uid, false, &why, &reason) < 0) {
		rtkit_bus_reply_error(k, m, -EPERM, why, uid, reason.text);
		return 1;
	}
	return rtkit_bus_queue(k, m, serve, pid, tid, value, ret_error);
}

static int rtkit_bus_realtime_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	uint64_t tid;
	uint32_t prio;
	int r = sd_bus_message_read(m, "tu", &tid, &prio);

	return r < 0 ? r : rtkit_bus_queue_grant(userdata, m, rtkit_bus_serve_realtime, false, 0, tid, prio, ret_error);
}

static int rtkit_bus_realtime_pid_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	uint64_t pid, tid;
	uint32_t prio;
	int r = sd_bus_message_read(m, "ttu", &pid, &tid, &prio);

	return r < 0 ? r : rtkit_bus_queue_grant(userdata, m, rtkit_bus_serve_realtime, true, pid, tid, prio, ret_error);
}

static int rtkit_bus_high_priority_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	uint64_t tid;
	int32_t nice;
	int r = sd_bus_message_read(m, "ti", &tid, &nice);

	return r < 0 ? r : rtkit_bus_queue_grant(userdata, m, rtkit_bus_serve_nice, false, 0, tid, nice, ret_error);
}

static int rtkit_bus_high_priority_pid_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	uint64_t pid, tid;
	int32_t nice;
	int r = sd_bus_message_read(m, "tti", &pid, &tid, &nice);

	return r < 0 ? r : rtkit_bus_queue_grant(userdata, m, rtkit_bus_serve_nice, true, pid, tid, nice, ret_error);
}

static int rtkit_bus_reset_known_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	return rtkit_bus_queue(userdata, m, rtkit_bus_serve_reset_known, 0, 0, 0, ret_error);
}

static int rtkit_bus_reset_all_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	return rtkit_bus_queue(userdata, m, rtkit_bus_serve_reset_all, 0, 0, 0, ret_error);
}

static int rtkit_bus_exit_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	return rtkit_bus_queue(userdata, m, rtkit_bus_serve_exit, 0, 0, 0, ret_error);
}

static int rtkit_bus_rttime_max_cb(sd_bus *bus, const char *path, const char *interface, const char *property,
				   sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	const struct rtkit *k = userdata;

	return sd_bus_message_append(reply, "x", (int64_t)k->cfg.rttime_usec_max);
}

static int rtkit_bus_max_priority_cb(sd_bus *bus, const char *path, const char *interface, const char *property,
				     sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	const struct rtkit *k = userdata;

	return sd_bus_message_append(reply, "i", (int32_t)k->cfg.max_realtime_priority);
}

static int rtkit_bus_min_nice_cb(sd_bus *bus, const char *path, const char *interface, const char *property,
				 sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	const struct rtkit *k = userdata;

	return sd_bus_message_append(reply, "i", k->cfg.min_nice_level);
}

static const sd_bus_vtable rtkit_bus_vtable[] = {
	SD_BUS_VTABLE_START(0),
	/* Unprivileged: sd-bus would otherwise ask the bus for the caller's
	 * capabilities with a blocking call; the rules ask asynchronously. */
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtime", "tu", SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "",
				 "", rtkit_bus_realtime_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtimeWithPID", "ttu",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "", "",
				 rtkit_bus_realtime_pid_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriority", "ti", SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "",
				 "", rtkit_bus_high_priority_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriorityWithPID", "tti",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "", "",
				 rtkit_bus_high_priority_pid_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("ResetKnown", "", "", rtkit_bus_reset_known_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("ResetAll", "", "", rtkit_bus_reset_all_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Exit", "", "", rtkit_bus_exit_cb, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_PROPERTY("RTTimeUSecMax", "x", rtkit_bus_rttime_max_cb, 0, 0),
	SD_BUS_PROPERTY("MaxRealtimePriority", "i", rtkit_bus_max_priority_cb, 0, 0),
	SD_BUS_PROPERTY("MinNiceLevel", "i", rtkit_bus_min_nice_cb, 0, 0),
	SD_BUS_VTABLE_END,
};

void rtkit_bus_close(struct rtkit *k)
{
	while (k->calls)
		rtkit_bus_call_free(k->calls);
	/* Unique names are the bus's: a new connection starts with none. */
	rtkit_admit_free(&k->admit);
	k->vtable_slot = sd_bus_slot_unref(k->vtable_slot);
	k->name_slot = sd_bus_slot_unref(k->name_slot);
	if (k->ev) {
		event_free(k->ev);
		k->ev = NULL;
	}
	if (k->bus) {
		sd_bus_close(k->bus);
		k->bus = sd_bus_unref(k->bus);
	}
	k->serving = false;
}

static void rtkit_bus_arm(struct rtkit *k, bool again);

static void rtkit_bus_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rtkit *k = arg;
	int i, r = 0;

	for (i = 0; i < RTKIT_PROCESS_BATCH && !k->closing; i++) {
		r = sd_bus_process(k->bus, NULL);
		if (r <= 0)
			break;
	}
	if (r < 0) {
		log_warning("RealtimeKit: lost the system bus (%s); no longer serving %s", strerror(-r), RTKIT_BUS_NAME);
		k->closing = true;
	}
	if (k->closing) {
		rtkit_bus_close(k);
		return;
	}
	rtkit_bus_arm(k, i == RTKIT_PROCESS_BATCH);
}

/* One libevent event for the bus: its descriptor for what sd-bus waits
 * on, and its timeout (or at once, when a batch left work). */
static void rtkit_bus_arm(struct rtkit *k, bool again)
{
	int events = sd_bus_get_events(k->bus);
	short what = (short)((events & POLLIN ? EV_READ : 0) | (events & POLLOUT ? EV_WRITE : 0));
	struct timeval tv = { 0 };
	uint64_t until = UINT64_MAX;
	bool timed = again;

	if (events < 0) {
		log_warning("RealtimeKit: the system bus connection failed (%s); no longer serving %s",
			    strerror(-events), RTKIT_BUS_NAME);
		rtkit_bus_close(k);
		return;
	}
	if (!again && sd_bus_get_timeout(k->bus, &until) >= 0 && until != UINT64_MAX) {
		uint64_t now = loop_now_ns() / 1000;
		uint64_t left = until > now ? until - now : 0;

		tv.tv_sec = (time_t)(left / 1000000);
		tv.tv_usec = (suseconds_t)(left % 1000000);
		timed = true;
	}
	event_del(k->ev);
	event_assign(k->ev, k->o.base, sd_bus_get_fd(k->bus), what, rtkit_bus_io_cb, k);
	event_add(k->ev, timed ? &tv : NULL);
}

/* The bus's answer to RequestName. */
static int rtkit_bus_name_cb(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit *k = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	uint32_t result = 0;

	if (e) {
		log_warning("RealtimeKit: the bus refused %s (%s: %s); running without it (is the policy file "
			    "installed in dbus-1/system.d?)",
			    RTKIT_BUS_NAME, e->name, e->message);
		k->closing = true;
		return 0;
	}
	if (sd_bus_message_read(reply, "u", &result) < 0 || result != 1) {
		log_notice("RealtimeKit: %s is owned by another process (rtkit-daemon?); running without it",
			   RTKIT_BUS_NAME);
		k->closing = true;
		return 0;
	}
	k->serving = true;
	log_notice("RealtimeKit: serving %s on the system bus", RTKIT_BUS_NAME);
	return 0;
}

int rtkit_bus_connect(struct rtkit *k)
{
	int r = sd_bus_open_system(&k->bus);

	if (r < 0) {
		log_warning("RealtimeKit: cannot connect to the system bus (%s); running without %s", strerror(-r),
			    RTKIT_BUS_NAME);
		return 0;
	}
	r = sd_bus_add_object_vtable(k->bus, &k->vtable_slot, RTKIT_OBJECT_PATH, RTKIT_BUS_NAME, rtkit_bus_vtable, k);
	if (r >= 0)
		r = sd_bus_request_name_async(k->bus, &k->name_slot, RTKIT_BUS_NAME, 0, rtkit_bus_name_cb, k);
	if (r >= 0) {
		k->ev = event_new(k->o.base, -1, 0, NULL, NULL);
		r = k->ev ? 0 : -ENOMEM;
	}
	if (r < 0) {
		log_warning("RealtimeKit: cannot set up %s (%s); running without it", RTKIT_BUS_NAME, strerror(-r));
		rtkit_bus_close(k);
		return r == -ENOMEM ? r : 0;
	}
	rtkit_bus_arm(k, false);
	return 0;
}

