/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The numbers every part of rtplace shares, defined once: the CPU-id limit,
 * the priority levels of DESIGN §2 and the RT priority range. Part of the
 * public wire contract (rtplace-proto.h includes it; installed beside it)
 * and compiled by the BPF programs too, so it holds only #defines and
 * includes nothing.
 */
#ifndef RTPLACE_LEVELS_PUBLIC_H
#define RTPLACE_LEVELS_PUBLIC_H

/* Highest CPU id + 1 that rtplace can name (the protocol, the cpupri map,
 * the BPF programs); a machine with more is refused at start-up. */
#define RTPLACE_MAX_CPUS 8192

/* Priority levels (DESIGN §2), lowest to highest. */
#define RTPLACE_LEVEL_OFFLINE 0
#define RTPLACE_LEVEL_IDLE 1
#define RTPLACE_LEVEL_NORMAL 2
#define RTPLACE_LEVEL_RT1 3           /* rtN is RTPLACE_LEVEL_RT1 + N - 1 */
#define RTPLACE_LEVEL_RT99 101
#define RTPLACE_LEVEL_DL 102
#define RTPLACE_LEVEL_COUNT 103

#define RTPLACE_PRIO_MIN 1
#define RTPLACE_PRIO_MAX 99

/* Scheduling classes whose time the tracker accounts per CPU (DESIGN §16),
 * indices of the per-CPU time arrays: idle runs the idle task, normal a
 * fair (or idle-policy) task, rt an RT task, dl a deadline or stop task. */
#define RTPLACE_CLASS_IDLE 0
#define RTPLACE_CLASS_NORMAL 1
#define RTPLACE_CLASS_RT 2
#define RTPLACE_CLASS_DL 3
#define RTPLACE_CLASS_COUNT 4

#endif
