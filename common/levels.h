/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Priority levels of a CPU (DESIGN §2), lowest to highest:
 *
 *   offline < idle < normal < rt1 .. rt99 < dl
 *
 * A level is a small integer so that "strictly lower than rtP" is an integer
 * comparison and a level can index the cpupri map. This header is compiled by
 * the BPF programs too: no libc, only __u32-style types.
 */
#ifndef RTPLACE_LEVELS_H
#define RTPLACE_LEVELS_H

#ifndef __bpf__
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#endif

/* The numbers are defined once, in the public rtplace-levels.h. */
#include "rtplace-levels.h"

enum {
	LEVEL_OFFLINE = RTPLACE_LEVEL_OFFLINE,
	LEVEL_IDLE = RTPLACE_LEVEL_IDLE,
	LEVEL_NORMAL = RTPLACE_LEVEL_NORMAL,
	LEVEL_RT1 = RTPLACE_LEVEL_RT1,
	LEVEL_RT99 = RTPLACE_LEVEL_RT99,
	LEVEL_DL = RTPLACE_LEVEL_DL,
	LEVEL_COUNT = RTPLACE_LEVEL_COUNT,
};

_Static_assert(LEVEL_RT99 == LEVEL_RT1 + 98 && LEVEL_DL == LEVEL_RT99 + 1 && LEVEL_COUNT == LEVEL_DL + 1,
	       "levels are consecutive: rt1..rt99 then dl");

#define LEVEL_RT_PRIO_MIN RTPLACE_PRIO_MIN
#define LEVEL_RT_PRIO_MAX RTPLACE_PRIO_MAX

/* Kernel task_struct.prio: 0..98 are RT (99 - sched_priority), 100..139 are
 * fair, negative is deadline. prio 99 (MAX_RT_PRIO - 1) is never an RT task. */
#define LEVEL_KERNEL_MAX_RT_PRIO 100

/* Level of an RT task of user-visible priority rtprio (1..99). */
static inline __u32 level_from_rt_priority(int rtprio)
{
	if (rtprio < LEVEL_RT_PRIO_MIN)
		return LEVEL_NORMAL;
	if (rtprio > LEVEL_RT_PRIO_MAX)
		rtprio = LEVEL_RT_PRIO_MAX;
	return LEVEL_RT1 + (__u32)(rtprio - 1);
}

/* User-visible RT priority of a level, 0 for the non-RT levels. */
static inline int level_rt_priority(__u32 level)
{
	if (level < LEVEL_RT1 || level > LEVEL_RT99)
		return 0;
	return (int)(level - LEVEL_RT1) + 1;
}

/*
 * Level of a task from its kernel prio (the effective one, which includes
 * priority-inheritance boosts). The idle task has a fair prio; callers that
 * know a task is the idle task use LEVEL_IDLE instead.
 */
static inline __u32 level_from_kernel_prio(int prio)
{
	if (prio < 0)
		return LEVEL_DL;
	if (prio < LEVEL_KERNEL_MAX_RT_PRIO - 1)
		return level_from_rt_priority(LEVEL_KERNEL_MAX_RT_PRIO - 1 - prio);
	return LEVEL_NORMAL;
}

/* A level's scheduling class (RTPLACE_CLASS_*), or LEVEL_CLASS_NONE for
 * offline and out-of-range levels, whose time no class counts. */
#define LEVEL_CLASS_NONE RTPLACE_CLASS_COUNT

static inline __u32 level_class(__u32 level)
{
	if (level == LEVEL_IDLE)
		return RTPLACE_CLASS_IDLE;
	if (level == LEVEL_NORMAL)
		return RTPLACE_CLASS_NORMAL;
	if (level >= LEVEL_RT1 && level <= LEVEL_RT99)
		return RTPLACE_CLASS_RT;
	if (level == LEVEL_DL)
		return RTPLACE_CLASS_DL;
	return LEVEL_CLASS_NONE;
}

#ifndef __bpf__
/* Shortest buffer level_name() needs: "offline" and "rt99" plus NUL. */
#define LEVEL_NAME_MAX 8

/* Writes the level's name ("idle", "rt42", ...) into buf; "?" when out of range. */
const char *level_name(__u32 level, char buf[LEVEL_NAME_MAX]);

/* Parses a level name as level_name() writes it. Returns 0 or -EINVAL. */
int level_parse(const char *name, __u32 *ret_level);
#endif

#endif
