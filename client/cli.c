#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpuset.h"

int cli_parse_long(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int cli_parse_policy(const char *s, int *ret)
{
	if (strcmp(s, "fifo") == 0)
		*ret = SCHED_FIFO;
	else if (strcmp(s, "rr") == 0)
		*ret = SCHED_RR;
	else
		return -EINVAL;
	return 0;
}

int cli_parse_cpus(const char *s, cpu_set_t *ret)
{
	struct cpuset set;
	int r = cpuset_parse(s, &set);

	if (r < 0)
		return r;
	if (cpuset_empty(&set))
		return -EINVAL;
	CPU_ZERO(ret);
	CPUSET_FOREACH(cpu, &set)
		CPU_SET((unsigned)cpu, ret);
	return 0;
}

void cli_format_cpus(const cpu_set_t *s, char *buf, size_t len)
{
	struct cpuset set;

	cpuset_zero(&set);
	for (unsigned cpu = 0; cpu < RTPLACE_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, s))
			cpuset_set(&set, cpu);
	if (cpuset_format(&set, buf, len) < 0)
		snprintf(buf, len, "?");
}
