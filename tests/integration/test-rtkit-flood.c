/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A RealtimeKit flood for the fairness test: CONNECTIONS connections to
 * the system bus, each keeping INFLIGHT calls of
 * MakeThreadHighPriorityWithPID(PID, PID, 0) waiting, until SIGTERM;
 * prints how they were answered ("ok N denied N limits N other N"). It
 * bounds itself: after SECONDS it stops, whatever is still waiting.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

struct flood {
	uint64_t pid;
	unsigned long ok, denied, limits, other;
};

struct flood_conn {
	struct flood *f;
	sd_bus *bus;
};

static int flood_send(struct flood_conn *c);

static int flood_reply_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct flood_conn *c = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);

	if (!e)
		c->f->ok++;
	else if (strcmp(e->name, SD_BUS_ERROR_ACCESS_DENIED) == 0)
		c->f->denied++;
	else if (strcmp(e->name, SD_BUS_ERROR_LIMITS_EXCEEDED) == 0)
		c->f->limits++;
	else
		c->f->other++;
	return flood_send(c);
}

static int flood_send(struct flood_conn *c)
{
	return sd_bus_call_method_async(c->bus, NULL, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
					"org.freedesktop.RealtimeKit1", "MakeThreadHighPriorityWithPID", flood_reply_cb,
					c, "tti", c->f->pid, c->f->pid, (int32_t)0);
}

static int flood_stop_cb(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

int main(int argc, char **argv)
{
	sigset_t term;
	struct flood f = { 0 };
	struct flood_conn *conns;
	sd_event *ev = NULL;
	unsigned n, inflight, seconds;
	int r;

	if (argc != 5) {
		fprintf(stderr, "usage: %s CONNECTIONS INFLIGHT SECONDS PID\n", argv[0]);
		return 2;
	}
	n = (unsigned)atoi(argv[1]);
	inflight = (unsigned)atoi(argv[2]);
	seconds = (unsigned)atoi(argv[3]);
	f.pid = strtoull(argv[4], NULL, 10);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	conns = calloc(n, sizeof(*conns));
	r = conns ? sd_event_default(&ev) : -ENOMEM;
	if (r >= 0)
		r = sd_event_add_signal(ev, NULL, SIGTERM, flood_stop_cb, NULL);
	for (unsigned i = 0; r >= 0 && i < n; i++) {
		conns[i].f = &f;
		r = sd_bus_open_system(&conns[i].bus);
		if (r >= 0)
			r = sd_bus_attach_event(conns[i].bus, ev, 0);
		for (unsigned j = 0; r >= 0 && j < inflight; j++)
			r = flood_send(&conns[i]);
	}
	if (r >= 0)
		r = sd_event_add_time_relative(ev, NULL, CLOCK_MONOTONIC, (uint64_t)seconds * 1000000, 0, NULL,
					       NULL);
	if (r >= 0)
		r = sd_event_loop(ev);
	for (unsigned i = 0; conns && i < n; i++)
		sd_bus_flush_close_unref(conns[i].bus);
	free(conns);
	sd_event_unref(ev);
	if (r < 0) {
		fprintf(stderr, "flood: %s\n", strerror(-r));
		return 1;
	}
	printf("ok %lu denied %lu limits %lu other %lu\n", f.ok, f.denied, f.limits, f.other);
	return 0;
}
