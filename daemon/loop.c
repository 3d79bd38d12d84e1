/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "clocks.h"
#include "log.h"
#include "loop.h"

#define LOOP_MAX_HOOKS 8

struct loop_hook {
	struct event *ev;
	union {
		void (*signal_cb)(int signo, void *ctx);
		void (*timer_cb)(void *ctx);
	};
	void *ctx;
};

struct loop {
	struct event_base *base;
	struct loop_hook hooks[LOOP_MAX_HOOKS];
	unsigned nhooks;
};

int loop_new(struct loop **ret)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->base = event_base_new();
	if (!l->base) {
		free(l);
		return -ENOMEM;
	}
	*ret = l;
	return 0;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->nhooks; i++)
		event_free(l->hooks[i].ev);
	event_base_free(l->base);
	free(l);
}

struct event_base *loop_base(struct loop *l)
{
	return l->base;
}

int loop_run(struct loop *l)
{
	return event_base_dispatch(l->base) < 0 ? -EIO : 0;
}

void loop_stop(struct loop *l)
{
	event_base_loopbreak(l->base);
}

static void loop_signal_cb(evutil_socket_t signo, short what, void *arg)
{
	struct loop_hook *h = arg;

	h->signal_cb((int)signo, h->ctx);
}

static void loop_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct loop_hook *h = arg;

	h->timer_cb(h->ctx);
}

static struct loop_hook *loop_hook_new(struct loop *l)
{
	if (l->nhooks == LOOP_MAX_HOOKS)
		return NULL;
	return &l->hooks[l->nhooks];
}

int loop_on_signal(struct loop *l, int signo, void (*cb)(int signo, void *ctx), void *ctx)
{
	struct loop_hook *h = loop_hook_new(l);

	if (!h)
		return -ENOSPC;
	h->signal_cb = cb;
	h->ctx = ctx;
	h->ev = evsignal_new(l->base, signo, loop_signal_cb, h);
	if (!h->ev || evsignal_add(h->ev, NULL) < 0) {
		if (h->ev)
			event_free(h->ev);
		return -ENOMEM;
	}
	l->nhooks++;
	return 0;
}

int loop_every(struct loop *l, uint64_t interval_usec, void (*cb)(void *ctx), void *ctx)
{
	struct loop_hook *h = loop_hook_new(l);
	struct timeval tv = {
		.tv_sec = (time_t)(interval_usec / 1000000),
		.tv_usec = (suseconds_t)(interval_usec % 1000000),
	};

	if (!h)
		return -ENOSPC;
	h->timer_cb = cb;
	h->ctx = ctx;
	h->ev = event_new(l->base, -1, EV_PERSIST, loop_timer_cb, h);
	if (!h->ev || event_add(h->ev, &tv) < 0) {
		if (h->ev)
			event_free(h->ev);
		return -ENOMEM;
	}
	l->nhooks++;
	return 0;
}

uint64_t loop_now_ms(void)
{
	return loop_now_ns() / 1000000;
}

uint64_t loop_now_ns(void)
{
	return clocks_monotonic_ns();
}
