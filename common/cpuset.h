/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CPU set of the pure code is the wire's, struct rtplace_cpumask of
 * rtplace-proto.h: one type from a request's bytes to the placement and
 * back. Fixed size (RTPLACE_MAX_CPUS bits) in memory, so that it sits in
 * the readable protocol bodies and in the core's structs; on the wire from
 * protocol version 3 only its words up to the last non-zero one travel.
 * RTPLACE_MAX_CPUS bounds the CPU ids rtplace manages (a machine with more
 * is refused at start-up with a clear error).
 */
#ifndef RTPLACE_CPUSET_H
#define RTPLACE_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtplace-proto.h"

#define CPUSET_WORDS RTPLACE_CPUMASK_WORDS

_Static_assert(CPUSET_WORDS % 2 == 0, "cpuset_empty() takes words in pairs");

static inline void cpuset_zero(struct rtplace_cpumask *s)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		s->bits[i] = 0;
}

static inline void cpuset_set(struct rtplace_cpumask *s, unsigned cpu)
{
	if (cpu < RTPLACE_MAX_CPUS)
		s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void cpuset_clear(struct rtplace_cpumask *s, unsigned cpu)
{
	if (cpu < RTPLACE_MAX_CPUS)
		s->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

static inline bool cpuset_test(const struct rtplace_cpumask *s, unsigned cpu)
{
	return cpu < RTPLACE_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

static inline unsigned cpuset_count(const struct rtplace_cpumask *s)
{
	unsigned n = 0;

	for (int i = 0; i < CPUSET_WORDS; i++)
		n += (unsigned)__builtin_popcountll(s->bits[i]);
	return n;
}

static inline bool cpuset_empty(const struct rtplace_cpumask *s)
{
	uint64_t a = 0, b = 0;

	/* No early exit: an empty set (a request's usual allowed set) is
	 * the common case; two ORs per step halve the chain of the loop. */
	for (int i = 0; i < CPUSET_WORDS; i += 2) {
		a |= s->bits[i];
		b |= s->bits[i + 1];
	}
	return !(a | b);
}

static inline bool cpuset_equal(const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (a->bits[i] != b->bits[i])
			return false;
	return true;
}

static inline void cpuset_and(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

static inline void cpuset_or(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

static inline void cpuset_andnot(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

/* First CPU in s at or after from, or -1. */
static inline int cpuset_next(const struct rtplace_cpumask *s, unsigned from)
{
	for (unsigned i = from / 64; i < CPUSET_WORDS; i++) {
		uint64_t w = s->bits[i];

		if (i == from / 64)
			w &= ~UINT64_C(0) << (from % 64);
		if (w)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
	}
	return -1;
}

#define CPUSET_FOREACH(cpu, s) \
	for (int cpu = cpuset_next((s), 0); cpu >= 0; cpu = cpuset_next((s), (unsigned)cpu + 1))

/* Longest list cpuset_format() writes: "0,2,4,..." for RTPLACE_MAX_CPUS. */
#define CPUSET_LIST_MAX (RTPLACE_MAX_CPUS * 5)

/*
 * Parses a CPU list such as "0-3,8,10-11" (the kernel's cpulist format).
 * Returns 0, -EINVAL for bad syntax or a reversed range, -ERANGE for a CPU
 * id at or above RTPLACE_MAX_CPUS. ret is written only on success.
 */
int cpuset_parse(const char *list, struct rtplace_cpumask *ret);

/* Writes s as a CPU list ("0-3,8"); "" for the empty set. Returns 0 or -ENOSPC. */
int cpuset_format(const struct rtplace_cpumask *s, char *buf, size_t len);

#endif
