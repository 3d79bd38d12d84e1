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

/*
 * Bounded set arithmetic: the first nwords words of each set only, for
 * code whose sets hold no CPU past them (placement's sets hold the
 * machine's CPUs: a 480-CPU machine reads 8 of CPUSET_WORDS words). The
 * whole-set operations below are these over CPUSET_WORDS. Inline: they
 * run inside placement's loops, where a call per set would cost more than
 * the set.
 */

/* The CPUs of one word: the hardware instruction where the build allows
 * it; otherwise inline arithmetic rather than libgcc's out-of-line table
 * lookup. */
static inline unsigned cpuset_word_count(uint64_t w)
{
#ifdef __POPCNT__
	return (unsigned)__builtin_popcountll(w);
#else
	w -= (w >> 1) & UINT64_C(0x5555555555555555);
	w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
	w = (w + (w >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((w * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

static inline void cpuset_zero_n(struct rtplace_cpumask *s, unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		s->bits[i] = 0;
}

static inline void cpuset_copy_n(struct rtplace_cpumask *dst, const struct rtplace_cpumask *src, unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		dst->bits[i] = src->bits[i];
}

static inline unsigned cpuset_count_n(const struct rtplace_cpumask *s, unsigned nwords)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nwords; i++)
		n += cpuset_word_count(s->bits[i]);
	return n;
}

/* |a ∩ b|. */
static inline unsigned cpuset_count_and_n(const struct rtplace_cpumask *a, const struct rtplace_cpumask *b,
					  unsigned nwords)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nwords; i++)
		n += cpuset_word_count(a->bits[i] & b->bits[i]);
	return n;
}

/* Whether s holds at least n CPUs, counting no further than needed. */
static inline bool cpuset_at_least_n(const struct rtplace_cpumask *s, unsigned n, unsigned nwords)
{
	unsigned have = 0;

	for (unsigned i = 0; i < nwords && have < n; i++)
		if (s->bits[i])
			have += cpuset_word_count(s->bits[i]);
	return have >= n;
}

static inline bool cpuset_empty_n(const struct rtplace_cpumask *s, unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		if (s->bits[i])
			return false;
	return true;
}

/*
 * Whether s holds no CPU of the first nwords words, the last one read
 * through last_word (the bits of the CPUs that exist): a set from outside
 * (a request's) may hold bits past them. No early exit, two words a step:
 * an empty set, the usual one, reads them all.
 */
static inline bool cpuset_empty_below(const struct rtplace_cpumask *s, unsigned nwords, uint64_t last_word)
{
	const unsigned last = nwords - 1;
	uint64_t any = 0, any2 = 0;
	unsigned i = 0;

	for (; i + 1 < last; i += 2) {
		any |= s->bits[i];
		any2 |= s->bits[i + 1];
	}
	if (i < last)
		any |= s->bits[i];
	return !(any | any2 | (s->bits[last] & last_word));
}

static inline bool cpuset_intersects_n(const struct rtplace_cpumask *a, const struct rtplace_cpumask *b,
				       unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

static inline void cpuset_and_n(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a,
				const struct rtplace_cpumask *b, unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

static inline void cpuset_or_n(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a,
			       const struct rtplace_cpumask *b, unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

static inline void cpuset_andnot_n(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a,
				   const struct rtplace_cpumask *b, unsigned nwords)
{
	for (unsigned i = 0; i < nwords; i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

/* ORs into out the CPUs of in moved by d CPUs (up for d > 0); bits moved
 * past the nwords words are lost. */
static inline void cpuset_or_shifted_n(struct rtplace_cpumask *out, const struct rtplace_cpumask *in, int32_t d,
				       unsigned nwords)
{
	const unsigned q = (unsigned)(d < 0 ? -d : d) / 64, r = (unsigned)(d < 0 ? -d : d) % 64;

	for (unsigned i = 0; i < nwords; i++) {
		uint64_t w = 0;

		if (d >= 0 && i >= q) {
			w = in->bits[i - q] << r;
			if (r && i >= q + 1)
				w |= in->bits[i - q - 1] >> (64 - r);
		} else if (d < 0 && i + q < nwords) {
			w = in->bits[i + q] >> r;
			if (r && i + q + 1 < nwords)
				w |= in->bits[i + q + 1] << (64 - r);
		}
		out->bits[i] |= w;
	}
}

/* First CPU in s at or after from, or -1. */
static inline int cpuset_next_n(const struct rtplace_cpumask *s, unsigned from, unsigned nwords)
{
	for (unsigned i = from / 64; i < nwords; i++) {
		uint64_t w = s->bits[i];

		if (i == from / 64)
			w &= ~UINT64_C(0) << (from % 64);
		if (w)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
	}
	return -1;
}

/* Whole sets. */

static inline void cpuset_zero(struct rtplace_cpumask *s)
{
	cpuset_zero_n(s, CPUSET_WORDS);
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
	return cpuset_count_n(s, CPUSET_WORDS);
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
	cpuset_and_n(dst, a, b, CPUSET_WORDS);
}

static inline void cpuset_or(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	cpuset_or_n(dst, a, b, CPUSET_WORDS);
}

static inline void cpuset_andnot(struct rtplace_cpumask *dst, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	cpuset_andnot_n(dst, a, b, CPUSET_WORDS);
}

/* First CPU in s at or after from, or -1. */
static inline int cpuset_next(const struct rtplace_cpumask *s, unsigned from)
{
	return cpuset_next_n(s, from, CPUSET_WORDS);
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
