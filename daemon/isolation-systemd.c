/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "clocks.h"
#include "isolation-systemd.h"

#define ISOLATION_SYSTEMD_DEST "org.freedesktop.systemd1"
#define ISOLATION_SYSTEMD_PATH "/org/freedesktop/systemd1"
#define ISOLATION_SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"

struct isolation_systemd {
	struct isolation_scopes scopes;
	sd_bus *bus;
};

/*
 * A connection to the system bus that has said Hello: opened anew when
 * the last one is closed (the bus restarted, or dropped us). The
 * handshake is finished here, not left to the first call: the bus drops
 * a connection that has not authenticated in time (30 s), and the first
 * isolated claim may come much later. 0 or -errno with reason.
 */
static int isolation_systemd_bus(struct isolation_systemd *s, struct rtplace_reason *reason)
{
	const char *name;
	int r = 0;

	/* What came meanwhile (a signal for a match gone since, the bus's
	 * hang-up) is read now, which also closes a dead connection. */
	while (s->bus && (r = sd_bus_process(s->bus, NULL)) > 0)
		;
	if (s->bus && r >= 0 && sd_bus_is_open(s->bus) > 0)
		return 0;
	s->bus = sd_bus_flush_close_unref(s->bus);
	r = sd_bus_open_system(&s->bus);
	if (r >= 0)
		r = sd_bus_get_unique_name(s->bus, &name);
	if (r < 0) {
		s->bus = sd_bus_flush_close_unref(s->bus);
		reason_set(reason, "cannot reach systemd on the system bus: %s", strerror(-r));
	}
	return r < 0 ? r : 0;
}

/* A job waited for and, once JobRemoved names it, how it ended. */
struct isolation_systemd_job {
	const char *path; /* NULL until the method's reply names it */
	char result[32];
	bool done;
};

/* JobRemoved(u id, o job, s unit, s result). Signals are dispatched only
 * by sd_bus_process() after the call returned, so the job's path is known
 * by then. */
static int isolation_systemd_job_removed_cb(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct isolation_systemd_job *j = userdata;
	const char *path, *unit, *result;
	uint32_t id;

	(void)error;
	if (!j->path || sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0 || strcmp(path, j->path) != 0)
		return 0;
	snprintf(j->result, sizeof(j->result), "%s", result);
	j->done = true;
	return 0;
}

/* Runs until job j ended or the deadline (CLOCK_MONOTONIC ns). 0, or
 * -ETIMEDOUT or the bus's -errno. */
static int isolation_systemd_wait(struct isolation_systemd *s, struct isolation_systemd_job *j, uint64_t deadline)
{
	int r = 0;

	while (!j->done) {
		uint64_t now = clocks_monotonic_ns();

		r = sd_bus_process(s->bus, NULL);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		if (now >= deadline)
			return -ETIMEDOUT;
		r = sd_bus_wait(s->bus, (deadline - now) / 1000);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Calls m, a method of systemd's manager that answers with a job, and
 * waits until that job ends: 0 when it ended "done", or when systemd
 * answered the error named gone (nothing to do); -errno with reason
 * saying what of unit failed.
 */
static int isolation_systemd_job(struct isolation_systemd *s, sd_bus_message *m, const char *unit, const char *gone,
				 struct rtplace_reason *reason)
{
	struct isolation_systemd_job j = { .path = NULL };
	uint64_t deadline = clocks_monotonic_ns() + (uint64_t)ISOLATION_SYSTEMD_WAIT_MS * 1000000;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus_slot *slot = NULL;
	const char *member = sd_bus_message_get_member(m);
	int r;

	r = sd_bus_match_signal(s->bus, &slot, ISOLATION_SYSTEMD_DEST, ISOLATION_SYSTEMD_PATH,
				ISOLATION_SYSTEMD_MANAGER, "JobRemoved", isolation_systemd_job_removed_cb, &j);
	if (r < 0) {
		reason_set(reason, "cannot follow systemd's jobs on the system bus: %s", strerror(-r));
		return r;
	}
	r = sd_bus_call(s->bus, m, (uint64_t)ISOLATION_SYSTEMD_WAIT_MS * 1000, &err, &reply);
	if (r < 0 && gone && sd_bus_error_has_name(&err, gone)) {
		r = 0;
		j.done = true;
	} else if (r < 0) {
		reason_set(reason, "systemd refused %s of %s: %s", member, unit, err.message ? err.message : strerror(-r));
	} else {
		r = sd_bus_message_read(reply, "o", &j.path);
		if (r >= 0)
			r = isolation_systemd_wait(s, &j, deadline);
		if (r < 0)
			reason_set(reason, "no end of systemd's job for %s of %s: %s", member, unit, strerror(-r));
		else if (strcmp(j.result, "done") != 0)
			reason_set(reason, "systemd's job for %s of %s ended \"%s\" (journalctl -u %s)", member, unit,
				   j.result, unit);
		if (r >= 0 && strcmp(j.result, "done") != 0)
			r = -EIO;
	}
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	sd_bus_slot_unref(slot);
	return r < 0 ? r : 0;
}

/* AllowedCPUs= as systemd takes it over the bus: byte i, bit j is CPU
 * 8 * i + j. */
static int isolation_systemd_append_cpus(sd_bus_message *m, const struct rtplace_cpumask *cpus)
{
	uint8_t bytes[RTPLACE_MAX_CPUS / 8] = { 0 };
	size_t len = 0;
	int r;

	CPUSET_FOREACH(cpu, cpus) {
		bytes[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
		len = (size_t)cpu / 8 + 1;
	}
	r = sd_bus_message_open_container(m, 'r', "sv");
	if (r >= 0)
		r = sd_bus_message_append(m, "s", "AllowedCPUs");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'v', "ay");
	if (r >= 0)
		r = sd_bus_message_append_array(m, 'y', bytes, len);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

static int isolation_systemd_start(void *ctx, const char *unit, const char *slice, pid_t pid,
				   const struct rtplace_cpumask *cpus, struct rtplace_reason *reason)
{
	struct isolation_systemd *s = ctx;
	char list[CPUSET_LIST_MAX], description[CPUSET_LIST_MAX + 64];
	sd_bus_message *m = NULL;
	int r;

	cpuset_format(cpus, list, sizeof(list));
	snprintf(description, sizeof(description), "rtplace: CPU %s isolated for process %d", list, (int)pid);
	r = isolation_systemd_bus(s, reason);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_call(s->bus, &m, ISOLATION_SYSTEMD_DEST, ISOLATION_SYSTEMD_PATH,
					   ISOLATION_SYSTEMD_MANAGER, "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", unit, "fail");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	/* Collected once it ends, failed or not: no unit outlives its claim. */
	if (r >= 0)
		r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s", description, "Slice", "s", slice,
					  "PIDs", "au", 1, (uint32_t)pid, "CollectMode", "s", "inactive-or-failed");
	if (r >= 0)
		r = isolation_systemd_append_cpus(m, cpus);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r < 0)
		reason_set(reason, "cannot build the call that starts %s: %s", unit, strerror(-r));
	else
		r = isolation_systemd_job(s, m, unit, NULL, reason);
	sd_bus_message_unref(m);
	return r;
}

static int isolation_systemd_stop(void *ctx, const char *unit, struct rtplace_reason *reason)
{
	struct isolation_systemd *s = ctx;
	sd_bus_message *m = NULL;
	int r = isolation_systemd_bus(s, reason);

	if (r < 0)
		return r;
	r = sd_bus_message_new_method_call(s->bus, &m, ISOLATION_SYSTEMD_DEST, ISOLATION_SYSTEMD_PATH,
					   ISOLATION_SYSTEMD_MANAGER, "StopUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", unit, "replace");
	if (r < 0)
		reason_set(reason, "cannot build the call that stops %s: %s", unit, strerror(-r));
	else
		r = isolation_systemd_job(s, m, unit, "org.freedesktop.systemd1.NoSuchUnit", reason);
	sd_bus_message_unref(m);
	return r;
}

/* Whether name ends in suffix. */
static bool isolation_systemd_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && strcmp(name + n - k, suffix) == 0;
}

/* Moves pid into the unit whose ControlGroup is prefix, below it into
 * sub ("" for its own group). 1 when prefix is no such unit's, 0 when
 * moved, -errno with reason. */
static int isolation_systemd_attach_to(struct isolation_systemd *s, const char *prefix, const char *sub, pid_t pid,
				       struct rtplace_reason *reason)
{
	const char *name = strrchr(prefix, '/') + 1, *object;
	bool service = isolation_systemd_ends(name, ".service");
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *cgroup = NULL;
	int r;

	r = sd_bus_call_method(s->bus, ISOLATION_SYSTEMD_DEST, ISOLATION_SYSTEMD_PATH, ISOLATION_SYSTEMD_MANAGER,
			       "GetUnit", &err, &reply, "s", name);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &object);
	if (r >= 0)
		r = sd_bus_get_property_string(s->bus, ISOLATION_SYSTEMD_DEST, object,
					       service ? "org.freedesktop.systemd1.Service"
						       : "org.freedesktop.systemd1.Scope",
					       "ControlGroup", &err, &cgroup);
	if (r < 0 || strcmp(cgroup, prefix) != 0) {
		r = 1;
	} else {
		sd_bus_error_free(&err);
		r = sd_bus_call_method(s->bus, ISOLATION_SYSTEMD_DEST, ISOLATION_SYSTEMD_PATH,
				       ISOLATION_SYSTEMD_MANAGER, "AttachProcessesToUnit", &err, NULL, "ssau", name, sub,
				       1, (uint32_t)pid);
		/* sd_bus_call_method() answers 1 on success: here 1 means
		 * "not this unit". */
		if (r < 0)
			reason_set(reason, "systemd did not move process %d into %s%s: %s", (int)pid, name, sub,
				   err.message ? err.message : strerror(-r));
		else
			r = 0;
	}
	free(cgroup);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	return r;
}

/* The unit of cgroup is the deepest service or scope the manager knows
 * whose ControlGroup is a prefix of it (user@UID.service for a user's
 * service: the groups below it are the user's manager's). */
static int isolation_systemd_attach(void *ctx, const char *cgroup, pid_t pid, struct rtplace_reason *reason)
{
	struct isolation_systemd *s = ctx;
	char prefix[4096];
	size_t len = strlen(cgroup);
	int r = isolation_systemd_bus(s, reason);

	if (r < 0)
		return r;
	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	r = 1;
	memcpy(prefix, cgroup, len + 1);
	for (char *slash; r > 0 && (slash = strrchr(prefix, '/')); *slash = '\0')
		if (isolation_systemd_ends(slash + 1, ".service") || isolation_systemd_ends(slash + 1, ".scope"))
			r = isolation_systemd_attach_to(s, prefix, cgroup + strlen(prefix), pid, reason);
	if (r > 0) {
		reason_set(reason, "no unit of systemd's holds %s", cgroup);
		r = -ENOENT;
	}
	return r;
}

int isolation_systemd_new(struct isolation_systemd **ret, struct rtplace_reason *reason)
{
	struct isolation_systemd *s;
	int r = sd_booted();

	if (r <= 0)
		return r < 0 ? r : -ENOENT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = isolation_systemd_bus(s, reason);
	if (r < 0) {
		free(s);
		return r;
	}
	s->scopes = (struct isolation_scopes){
		.start = isolation_systemd_start,
		.stop = isolation_systemd_stop,
		.attach = isolation_systemd_attach,
		.ctx = s,
	};
	*ret = s;
	return 0;
}

const struct isolation_scopes *isolation_systemd_scopes(const struct isolation_systemd *s)
{
	return &s->scopes;
}

void isolation_systemd_free(struct isolation_systemd *s)
{
	if (!s)
		return;
	sd_bus_flush_close_unref(s->bus);
	free(s);
}
