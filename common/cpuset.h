/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fixed-size CPU set, the currency of the pure code and of the wire
 * protocol. Fixed size so it can sit in fixed-size protocol bodies;
 * RTPLACE_MAX_CPUS bounds the CPU ids rtplace manages (a machine with more
 * is refused at start-up with a clear error).
 */
#ifndef RTPLACE_CPUSET_H
#define RTPLACE_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtplace-levels.h"

#define CPUSET_WORDS (RTPLACE_MAX_CPUS / 64)

struct cpuset {
	uint64_t w[CPUSET_WORDS];
};

_Static_assert(sizeof(struct cpuset) == RTPLACE_MAX_CPUS / 8, "cpuset is a plain bitmap");
_Static_assert(CPUSET_WORDS % 2 == 0, "cpuset_empty() takes words in pairs");

static inline void cpuset_zero(struct cpuset *s)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		s->w[i] = 0;
}

static inline void cpuset_set(struct cpuset *s, unsigned cpu)
{
	if (cpu < RTPLACE_MAX_CPUS)
		s->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void cpuset_clear(struct cpuset *s, unsigned cpu)
{
	if (cpu < RTPLACE_MAX_CPUS)
		s->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

static inline bool cpuset_test(const struct cpuset *s, unsigned cpu)
{
	return cpu < RTPLACE_MAX_CPUS && (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

static inline unsigned cpuset_count(const struct cpuset *s)
{
	unsigned n = 0;

	for (int i = 0; i < CPUSET_WORDS; i++)
		n += (unsigned)__builtin_popcountll(s->w[i]);
	return n;
}

static inline bool cpuset_empty(const struct cpuset *s)
{
	uint64_t a = 0, b = 0;

	/* No early exit: an empty set (a request's usual allowed set) is
	 * the common case; two ORs per step halve the chain of the loop. */
	for (int i = 0; i < CPUSET_WORDS; i += 2) {
		a |= s->w[i];
		b |= s->w[i + 1];
	}
	return !(a | b);
}

static inline bool cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (a->w[i] != b->w[i])
			return false;
	return true;
}

static inline void cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

static inline void cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

static inline void cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

/* First CPU in s at or after from, or -1. */
static inline int cpuset_next(const struct cpuset *s, unsigned from)
{
	for (unsigned i = from / 64; i < CPUSET_WORDS; i++) {
		uint64_t w = s->w[i];

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
int cpuset_parse(const char *list, struct cpuset *ret);

/* Writes s as a CPU list ("0-3,8"); "" for the empty set. Returns 0 or -ENOSPC. */
int cpuset_format(const struct cpuset *s, char *buf, size_t len);

#endif
