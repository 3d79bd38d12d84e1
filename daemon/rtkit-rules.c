/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtkit-rules.h"

static const char *const rtkit_refusal_names[RTKIT_REFUSE_COUNT] = {
	[RTKIT_REFUSE_NOT_OWNER] = "not_owner",
	[RTKIT_REFUSE_FOREIGN_THREAD] = "foreign_thread",
	[RTKIT_REFUSE_RTTIME_UNSET] = "rttime_unlimited",
	[RTKIT_REFUSE_RTTIME_HIGH] = "rttime_above_max",
	[RTKIT_REFUSE_PRIORITY] = "priority_above_max",
	[RTKIT_REFUSE_NICE] = "nice_below_min",
	[RTKIT_REFUSE_BURST] = "burst",
	[RTKIT_REFUSE_THREADS] = "max_threads",
	[RTKIT_REFUSE_PROCESSES] = "max_processes",
	[RTKIT_REFUSE_ROOT_ONLY] = "root_only",
	[RTKIT_REFUSE_GONE] = "gone",
	[RTKIT_REFUSE_FAILED] = "failed",
	[RTKIT_REFUSE_WATCHDOG] = "watchdog",
};

const char *rtkit_refusal_name(enum rtkit_refusal why)
{
	return why < RTKIT_REFUSE_COUNT ? rtkit_refusal_names[why] : "failed";
}

static int rtkit_refuse(enum rtkit_refusal why, enum rtkit_refusal *ret_why)
{
	*ret_why = why;
	return -EPERM;
}

/* The rules every request shares: who owns the process and the thread. */
static int rtkit_rules_identity(const struct rtkit_target *t, enum rtkit_refusal *ret_why,
				struct rtplace_reason *reason)
{
	if (t->caller_uid != 0 && t->caller_uid != t->uid && t->caller_uid != t->euid) {
		reason_set(reason, "thread %d of process %d belongs to uid %u, not to the caller's uid %u", (int)t->tid,
			   (int)t->pid, (unsigned)t->uid, (unsigned)t->caller_uid);
		return rtkit_refuse(RTKIT_REFUSE_NOT_OWNER, ret_why);
	}
	if (t->thread_tgid != t->pid) {
		reason_set(reason, "the thread belongs to process %d, not to process %d", (int)t->thread_tgid,
			   (int)t->pid);
		return rtkit_refuse(RTKIT_REFUSE_FOREIGN_THREAD, ret_why);
	}
	return 0;
}

int rtkit_rules_realtime(const struct config_rtkit *cfg, const struct rtkit_target *t, uint32_t priority,
			 const struct rtkit_use *use, enum rtkit_refusal *ret_why, struct rtplace_reason *reason)
{
	int r = rtkit_rules_identity(t, ret_why, reason);

	if (r < 0)
		return r;
	if (priority < 1 || priority > cfg->max_realtime_priority) {
		reason_set(reason, "priority %u is outside 1..%u ([rtkit] max-realtime-priority)", (unsigned)priority,
			   (unsigned)cfg->max_realtime_priority);
		return rtkit_refuse(RTKIT_REFUSE_PRIORITY, ret_why);
	}
	/* Without a hard limit a runaway RT thread would hold its CPU until
	 * the watchdog saw it; with one the kernel kills it first. */
	if (t->rttime_hard == RTKIT_RTTIME_UNLIMITED) {
		reason_set(reason, "process %d has no hard RLIMIT_RTTIME: set one of at most %u us", (int)t->pid,
			   (unsigned)cfg->rttime_usec_max);
		return rtkit_refuse(RTKIT_REFUSE_RTTIME_UNSET, ret_why);
	}
	if (t->rttime_hard > cfg->rttime_usec_max) {
		reason_set(reason, "process %d's hard RLIMIT_RTTIME %llu us is above %u us ([rtkit] rttime-usec-max)",
			   (int)t->pid, (unsigned long long)t->rttime_hard, (unsigned)cfg->rttime_usec_max);
		return rtkit_refuse(RTKIT_REFUSE_RTTIME_HIGH, ret_why);
	}
	if (!use->thread_held && use->threads >= cfg->max_threads_per_user) {
		reason_set(reason, "uid %u holds %u RT threads ([rtkit] max-threads-per-user = %u)",
			   (unsigned)t->caller_uid, (unsigned)use->threads, (unsigned)cfg->max_threads_per_user);
		return rtkit_refuse(RTKIT_REFUSE_THREADS, ret_why);
	}
	if (!use->process_held && use->processes >= cfg->max_processes_per_user) {
		reason_set(reason, "uid %u holds RT threads in %u processes ([rtkit] max-processes-per-user = %u)",
			   (unsigned)t->caller_uid, (unsigned)use->processes, (unsigned)cfg->max_processes_per_user);
		return rtkit_refuse(RTKIT_REFUSE_PROCESSES, ret_why);
	}
	return 0;
}

int rtkit_rules_nice(const struct config_rtkit *cfg, const struct rtkit_target *t, int32_t nice,
		     enum rtkit_refusal *ret_why, struct rtplace_reason *reason)
{
	int r = rtkit_rules_identity(t, ret_why, reason);

	if (r < 0)
		return r;
	if (nice < cfg->min_nice_level || nice > 19) {
		reason_set(reason, "nice level %d is outside %d..19 ([rtkit] min-nice-level)", (int)nice,
			   (int)cfg->min_nice_level);
		return rtkit_refuse(RTKIT_REFUSE_NICE, ret_why);
	}
	return 0;
}

/* The columns of /proc/PID/limits: name (26 wide), soft, hard, units. */
int rtkit_rules_parse_rttime(const char *limits, uint64_t *ret_hard)
{
	static const char key[] = "Max realtime timeout";
	const char *line = limits, *p;
	char *end;
	uint64_t v;

	while (line && strncmp(line, key, sizeof(key) - 1) != 0) {
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!line)
		return -ENOENT;
	p = line + sizeof(key) - 1;
	/* Soft limit, then hard. */
	for (int field = 0; field < 2; field++) {
		p += strspn(p, " ");
		if (field == 0)
			p += strcspn(p, " \n");
	}
	if (strncmp(p, "unlimited", 9) == 0 && (p[9] == ' ' || p[9] == '\n' || !p[9])) {
		*ret_hard = RTKIT_RTTIME_UNLIMITED;
		return 0;
	}
	if (*p < '0' || *p > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end))
		return -EBADMSG;
	*ret_hard = v;
	return 0;
}

bool rtkit_rules_starving(const struct config_rtkit *cfg, uint64_t ran_ns, uint64_t interval_ns)
{
	/* Intervals are at most a minute of ns: no product overflows. */
	return interval_ns && ran_ns * 100 >= interval_ns * cfg->watchdog_busy_percent;
}

bool rtkit_rules_refusing(const struct config_rtkit *cfg, uint64_t fired_ms, uint64_t now_ms)
{
	return fired_ms && now_ms - fired_ms < (uint64_t)cfg->watchdog_refuse_sec * 1000;
}

bool rtkit_rules_started_after(uint64_t start_ticks, uint64_t ticks_per_sec, uint64_t arrived_boot_ns)
{
	/* Ticks, as the kernel counts them (nsec_to_clock_t rounds down);
	 * ticks_per_sec 0 would be a broken sysconf: nothing is "after". */
	return ticks_per_sec && start_ticks > arrived_boot_ns / (1000000000u / ticks_per_sec);
}

int rtkit_rules_parse_schedstat(const char *text, uint64_t *ret_ns)
{
	char *end;
	uint64_t v;

	if (*text < '0' || *text > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end))
		return -EBADMSG;
	*ret_ns = v;
	return 0;
}

int rtkit_bursts_take(struct rtkit_bursts *b, const struct config_rtkit *cfg, uid_t uid, uint64_t now_ms)
{
	uint64_t window = (uint64_t)cfg->actions_burst_sec * 1000;
	struct rtkit_burst *e = NULL, *stale = NULL;

	for (size_t i = 0; i < b->n; i++) {
		struct rtkit_burst *x = &b->v[i];
		bool open = now_ms - x->start_ms < window;

		if (x->uid == uid)
			e = x;
		else if (!open && !stale)
			stale = x;
	}
	if (e && now_ms - e->start_ms >= window)
		*e = (struct rtkit_burst){ .uid = uid, .start_ms = now_ms };
	if (!e && stale) {
		e = stale;
		*e = (struct rtkit_burst){ .uid = uid, .start_ms = now_ms };
	}
	if (!e) {
		if (b->n == b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 16;
			struct rtkit_burst *v = realloc(b->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			b->v = v;
			b->cap = cap;
		}
		e = &b->v[b->n++];
		*e = (struct rtkit_burst){ .uid = uid, .start_ms = now_ms };
	}
	if (e->count >= cfg->actions_per_burst_max)
		return -EPERM;
	e->count++;
	return 0;
}

bool rtkit_bursts_spent(const struct rtkit_bursts *b, const struct config_rtkit *cfg, uid_t uid, uint64_t now_ms)
{
	uint64_t window = (uint64_t)cfg->actions_burst_sec * 1000;

	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].uid == uid)
			return now_ms - b->v[i].start_ms < window && b->v[i].count >= cfg->actions_per_burst_max;
	return false;
}

void rtkit_bursts_free(struct rtkit_bursts *b)
{
	free(b->v);
	*b = (struct rtkit_bursts){ 0 };
}
