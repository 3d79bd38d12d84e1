/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "isoplan.h"

static const char *isoplan_cpus_word(const struct rtplace_cpumask *s)
{
	return cpuset_count(s) > 1 ? "CPUs" : "CPU";
}

static const char *isoplan_is_word(const struct rtplace_cpumask *s)
{
	return cpuset_count(s) > 1 ? "are" : "is";
}

static void isoplan_online(const struct isoplan_host *h, struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	for (size_t i = 0; i < h->n_nodes; i++)
		cpuset_or(ret, ret, &h->nodes[i]);
}

void isoplan_housekeeping(const struct isoplan_host *h, struct rtplace_cpumask *ret)
{
	isoplan_online(h, ret);
	cpuset_andnot(ret, ret, &h->held);
	cpuset_andnot(ret, ret, &h->other);
}

int isoplan_admit(const struct isoplan_host *h, const struct rtplace_cpumask *claimed,
		  struct rtplace_reason *reason)
{
	struct rtplace_cpumask online, bad;
	char list[CPUSET_LIST_MAX], node_list[CPUSET_LIST_MAX];

	if (cpuset_empty(claimed)) {
		reason_set(reason, "no CPU to isolate");
		return -EINVAL;
	}
	isoplan_online(h, &online);
	cpuset_andnot(&bad, claimed, &online);
	if (!cpuset_empty(&bad)) {
		cpuset_format(&bad, list, sizeof(list));
		reason_set(reason, "%s %s %s not online", isoplan_cpus_word(&bad), list, isoplan_is_word(&bad));
		return -EINVAL;
	}
	cpuset_and(&bad, claimed, &h->held);
	if (!cpuset_empty(&bad)) {
		cpuset_format(&bad, list, sizeof(list));
		reason_set(reason, "%s %s %s isolated for another claim already", isoplan_cpus_word(&bad), list,
			   isoplan_is_word(&bad));
		return -EBUSY;
	}
	for (size_t i = 0; i < h->n_nodes; i++) {
		struct rtplace_cpumask before, after;

		cpuset_andnot(&before, &h->nodes[i], &h->held);
		cpuset_andnot(&before, &before, &h->other);
		cpuset_andnot(&after, &before, claimed);
		/* A node the host isolated whole has no housekeeping to keep. */
		if (cpuset_empty(&before) || !cpuset_empty(&after))
			continue;
		cpuset_and(&bad, claimed, &h->nodes[i]);
		cpuset_format(&bad, list, sizeof(list));
		cpuset_format(&h->nodes[i], node_list, sizeof(node_list));
		reason_set(reason, "isolating %s %s would leave node %zu (%s %s) without a housekeeping CPU",
			   isoplan_cpus_word(&bad), list, i, isoplan_cpus_word(&h->nodes[i]), node_list);
		return -EBUSY;
	}
	return 0;
}

/* Where an interrupt or unbound work goes that has no CPU left: near its
 * original CPUs when their nodes keep a housekeeping CPU. */
static void isoplan_fallback(const struct isoplan_host *h, const struct rtplace_cpumask *original,
			     struct rtplace_cpumask *ret)
{
	struct rtplace_cpumask hk, near;

	isoplan_housekeeping(h, &hk);
	cpuset_zero(&near);
	for (size_t i = 0; i < h->n_nodes; i++) {
		struct rtplace_cpumask in;

		cpuset_and(&in, original, &h->nodes[i]);
		if (!cpuset_empty(&in))
			cpuset_or(&near, &near, &h->nodes[i]);
	}
	cpuset_and(&near, &near, &hk);
	*ret = cpuset_empty(&near) ? hk : near;
}

enum isoplan_action isoplan_mask(const struct isoplan_host *h, const struct isoplan_mask *m,
				 struct rtplace_cpumask *ret_mask)
{
	struct rtplace_cpumask target;

	cpuset_andnot(&target, &m->original, &h->held);
	if (cpuset_equal(&target, &m->original)) {
		*ret_mask = m->original;
		return m->changed ? ISOPLAN_RESTORE : ISOPLAN_KEEP;
	}
	if (cpuset_empty(&target))
		isoplan_fallback(h, &m->original, &target);
	/* Only a machine whose every CPU is isolated has nowhere to go;
	 * isoplan_admit() never lets claims make one. */
	if (cpuset_empty(&target)) {
		*ret_mask = m->original;
		return m->changed ? ISOPLAN_RESTORE : ISOPLAN_KEEP;
	}
	*ret_mask = target;
	if (cpuset_equal(&target, &m->current))
		return ISOPLAN_KEEP;
	return m->managed ? ISOPLAN_MANAGED : ISOPLAN_SET;
}

int isoplan_hex_parse(const char *text, struct rtplace_cpumask *ret)
{
	struct rtplace_cpumask s;
	size_t len = strlen(text), groups = 1, g = 0;
	const char *p = text;

	if (len && text[len - 1] == '\n')
		len--;
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		groups += text[i] == ',';
	cpuset_zero(&s);
	while (g < groups) {
		uint32_t v = 0;
		size_t n = 0;

		for (; p < text + len && *p != ','; p++, n++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0' :
				*p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
				*p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;

			if (d < 0 || n == 8)
				return -EINVAL;
			v = v << 4 | (uint32_t)d;
		}
		if (!n)
			return -EINVAL;
		p++;
		/* Group g from the left holds CPUs 32 * (groups - 1 - g) up. */
		for (unsigned bit = 0; bit < 32; bit++) {
			size_t cpu = 32 * (groups - 1 - g) + bit;

			if (!(v >> bit & 1))
				continue;
			if (cpu >= RTPLACE_MAX_CPUS)
				return -ERANGE;
			cpuset_set(&s, (unsigned)cpu);
		}
		g++;
	}
	*ret = s;
	return 0;
}

int isoplan_hex_format(const struct rtplace_cpumask *s, char *buf, size_t len)
{
	int top = RTPLACE_MAX_CPUS / 32 - 1;
	size_t used = 0;

	while (top > 0 && !(uint32_t)(s->bits[top / 2] >> (top % 2 * 32)))
		top--;
	for (int g = top; g >= 0; g--) {
		uint32_t v = (uint32_t)(s->bits[g / 2] >> (g % 2 * 32));
		int n = snprintf(buf + used, len - used, g == top ? "%x" : ",%08x", v);

		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
	}
	return 0;
}
