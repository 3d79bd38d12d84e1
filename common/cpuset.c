/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpuset.h"

static int cpuset_parse_id(const char *s, char **end, unsigned *ret)
{
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno == ERANGE || v >= RTPLACE_MAX_CPUS)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

int cpuset_parse(const char *list, struct rtplace_cpumask *ret)
{
	struct rtplace_cpumask s;
	const char *p = list;
	int r;

	cpuset_zero(&s);
	if (!*p)
		return -EINVAL;
	for (;;) {
		unsigned lo, hi;
		char *end;

		r = cpuset_parse_id(p, &end, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (*end == '-') {
			r = cpuset_parse_id(end + 1, &end, &hi);
			if (r < 0)
				return r;
			if (hi < lo)
				return -EINVAL;
		}
		for (unsigned c = lo; c <= hi; c++)
			cpuset_set(&s, c);
		if (*end == '\0')
			break;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
	*ret = s;
	return 0;
}

int cpuset_format(const struct rtplace_cpumask *s, char *buf, size_t len)
{
	size_t used = 0;
	int cpu = cpuset_next(s, 0);

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	while (cpu >= 0) {
		int last = cpu;
		int n;

		while (cpuset_test(s, (unsigned)last + 1))
			last++;
		if (last == cpu)
			n = snprintf(buf + used, len - used, "%s%d", used ? "," : "", cpu);
		else
			n = snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", cpu, last);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
		cpu = cpuset_next(s, (unsigned)last + 1);
	}
	return 0;
}
