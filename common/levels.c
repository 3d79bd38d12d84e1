/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levels.h"

static const char *const level_fixed_names[] = {
	[LEVEL_OFFLINE] = "offline",
	[LEVEL_IDLE] = "idle",
	[LEVEL_NORMAL] = "normal",
};

const char *level_name(__u32 level, char buf[LEVEL_NAME_MAX])
{
	if (level < LEVEL_RT1)
		snprintf(buf, LEVEL_NAME_MAX, "%s", level_fixed_names[level]);
	else if (level <= LEVEL_RT99)
		snprintf(buf, LEVEL_NAME_MAX, "rt%d", level_rt_priority(level));
	else if (level == LEVEL_DL)
		snprintf(buf, LEVEL_NAME_MAX, "dl");
	else
		snprintf(buf, LEVEL_NAME_MAX, "?");
	return buf;
}

int level_parse(const char *name, __u32 *ret_level)
{
	char *end;
	long prio;

	for (__u32 l = 0; l < LEVEL_RT1; l++) {
		if (strcmp(name, level_fixed_names[l]) == 0) {
			*ret_level = l;
			return 0;
		}
	}
	if (strcmp(name, "dl") == 0) {
		*ret_level = LEVEL_DL;
		return 0;
	}
	if (strncmp(name, "rt", 2) != 0 || name[2] < '1' || name[2] > '9')
		return -EINVAL;
	errno = 0;
	prio = strtol(name + 2, &end, 10);
	if (errno || *end || prio < LEVEL_RT_PRIO_MIN || prio > LEVEL_RT_PRIO_MAX)
		return -EINVAL;
	*ret_level = level_from_rt_priority((int)prio);
	return 0;
}
