/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who holds the CPUs an answer left out, as the daemon's snapshot and its
 * list of claims show them to this caller: rtplace-run's refusal and
 * partial answer, and rtplacectl query's partial answer, say it alike.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cpuset.h"
#include "holders.h"

/* Appends to buf (of len bytes, NUL-terminated) as snprintf would, keeping
 * what fits. */
static void holders_append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void holders_append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Who holds claim id, as the daemon lets this caller see it: its owner
 * process and uid for the caller's own claims (any, for root), "another
 * user's" for the rest, nothing from a daemon without CLAIM (*asked
 * false after the first such answer, which names the rest by id alone).
 * Appended to what. */
static void holders_append_owner(struct rtplace *rp, char *what, size_t len, uint64_t id, bool *asked)
{
	struct rtplace_claim cl;
	int r;

	if (!*asked)
		return;
	r = rtplace_claim(rp, id, &cl);
	if (r == -EOPNOTSUPP)
		*asked = false;
	if (r < 0)
		return;
	if (cl.flags & RTPLACE_CLAIM_F_OTHER_USER)
		holders_append(what, len, ", another user's");
	else if (cl.flags & RTPLACE_CLAIM_F_PID)
		holders_append(what, len, ", owner pid %d %s, uid %u", (int)cl.owner_pid,
			   cl.owner_comm[0] ? cl.owner_comm : "?", (unsigned)cl.owner_uid);
	else if (cl.flags & RTPLACE_CLAIM_F_OWNER_EXIT)
		holders_append(what, len, ", owner outside this PID namespace, uid %u", (unsigned)cl.owner_uid);
	else
		holders_append(what, len, ", held by a connection of uid %u", (unsigned)cl.owner_uid);
}

unsigned holders_format(struct rtplace *rp, int prio, bool normal, const cpu_set_t *allowed, char *buf, size_t len)
{
	struct rtplace_cpu *cpus = NULL;
	bool ask_owners = true;
	/* The lowest level that refuses this claim: rtP for priority P,
	 * any RT for a pin alone. */
	const unsigned blocking = RTPLACE_LEVEL_RT1 + (unsigned)(prio ? prio : 1) - 1;
	unsigned entries = 0, more = 0;
	cpu_set_t listed;
	size_t n = 0;

	buf[0] = '\0';
	if (rtplace_cpus(rp, &cpus, &n) < 0)
		return 0;
	CPU_ZERO(&listed);
	for (size_t i = 0; i < n && i < CPU_SETSIZE; i++) {
		const struct rtplace_cpu *c = &cpus[i];
		char what[256], list[CPUSET_LIST_MAX];
		cpu_set_t these;

		if (!CPU_ISSET(i, allowed) || CPU_ISSET(i, &listed))
			continue;
		CPU_ZERO(&these);
		CPU_SET(i, &these);
		if (c->claim_id) {
			for (size_t j = i + 1; j < n && j < CPU_SETSIZE; j++)
				if (cpus[j].claim_id == c->claim_id && CPU_ISSET(j, allowed))
					CPU_SET(j, &these);
			snprintf(what, sizeof(what), "held by claim %" PRIu64 " (%s%s", c->claim_id,
				 c->claim_level == RTPLACE_LEVEL_DL ? "exclusive" : "at ",
				 c->claim_level == RTPLACE_LEVEL_DL ? "" : rtplace_level_name(c->claim_level));
			if (entries < HOLDERS_MAX)
				holders_append_owner(rp, what, sizeof(what), c->claim_id, &ask_owners);
			if (c->pid > 0)
				holders_append(what, sizeof(what), ", running pid %d %s", (int)c->pid,
					   c->comm[0] ? c->comm : "?");
			holders_append(what, sizeof(what), ")");
		} else if (c->level == RTPLACE_LEVEL_OFFLINE) {
			snprintf(what, sizeof(what), "offline");
		} else if (c->level >= blocking) {
			snprintf(what, sizeof(what), "running %s", rtplace_level_name(c->level));
			if (c->pid > 0)
				holders_append(what, sizeof(what), " (pid %d %s)", (int)c->pid, c->comm[0] ? c->comm : "?");
		} else if (c->flags & RTPLACE_CPU_F_HOUSEKEEPING) {
			snprintf(what, sizeof(what), "a housekeeping CPU");
		} else if (c->flags & RTPLACE_CPU_F_ISOLATED && normal) {
			snprintf(what, sizeof(what), "isolated (kept for RT threads)");
		} else {
			continue;
		}
		CPU_OR(&listed, &listed, &these);
		if (entries == HOLDERS_MAX) {
			more++;
			continue;
		}
		cli_format_cpus(&these, list, sizeof(list));
		holders_append(buf, len, "%sCPU%s %s %s", entries ? ", " : "", CPU_COUNT(&these) == 1 ? "" : "s", list,
			   what);
		entries++;
	}
	if (more)
		holders_append(buf, len, ", and %u more ('rtplacectl cpus' lists them)", more);
	rtplace_cpus_free(cpus);
	return entries;
}

