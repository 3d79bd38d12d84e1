/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's one event loop (libevent): every descriptor, timer and signal
 * of rtplaced is an event on this base, so nothing sleeps and nothing polls.
 * Plain events with recv/send, not bufferevents: for fixed-size SEQPACKET
 * messages bufferevents cost ~46% latency (DESIGN §12).
 */
#ifndef RTPLACE_LOOP_H
#define RTPLACE_LOOP_H

#include <stdint.h>

#include <event2/event.h>

struct loop;

int loop_new(struct loop **ret);
void loop_free(struct loop *l);
struct event_base *loop_base(struct loop *l);

/* Runs until loop_stop(). 0 or -EIO. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

/* Calls cb from the loop (not from signal context) whenever signo arrives. */
int loop_on_signal(struct loop *l, int signo, void (*cb)(int signo, void *ctx), void *ctx);

/* Calls cb every interval_usec. */
int loop_every(struct loop *l, uint64_t interval_usec, void (*cb)(void *ctx), void *ctx);

/* Monotonic clock in milliseconds (the clock every lease and uptime uses). */
uint64_t loop_now_ms(void);
/* The same clock in nanoseconds (the BPF tracker's bpf_ktime_get_ns()). */
uint64_t loop_now_ns(void);

#endif
