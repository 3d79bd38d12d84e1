/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time by class (DESIGN §16): the class of each level, and the daemon's
 * reader of the tracker's per-CPU entries (bpf/tracker-abi.h) against
 * entries written here the way the BPF programs write them, a writer
 * thread racing the reader included.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "levels.h"
#include "tracker-abi.h"

static void test_level_class(void **state)
{
	assert_int_equal(level_class(LEVEL_OFFLINE), LEVEL_CLASS_NONE);
	assert_int_equal(level_class(LEVEL_IDLE), RTPLACE_CLASS_IDLE);
	assert_int_equal(level_class(LEVEL_NORMAL), RTPLACE_CLASS_NORMAL);
	assert_int_equal(level_class(LEVEL_RT1), RTPLACE_CLASS_RT);
	assert_int_equal(level_class(LEVEL_RT99), RTPLACE_CLASS_RT);
	assert_int_equal(level_class(LEVEL_DL), RTPLACE_CLASS_DL);
	assert_int_equal(level_class(LEVEL_COUNT), LEVEL_CLASS_NONE);
}

/* The load time of these tests' entries (tracker_start_ns). */
#define START 50

/* What tracker_publish() and tracker_account() in tracker.bpf.c do when
 * *level changes to new at time now: account, then publish. */
static void account(struct tracker_cpu_time *t, __u32 *level, __u32 new, __u64 now)
{
	__u32 seq = t->seq, cls = level_class(new);
	__u64 from = t->since_ns ? t->since_ns : START;
	__u32 from_cls = t->since_ns ? t->cls : level_class(*level);

	if (t->cls == cls && t->since_ns) {
		__atomic_store_n(level, new, __ATOMIC_RELAXED);
		return;
	}
	__atomic_exchange_n(&t->seq, seq + 1, __ATOMIC_SEQ_CST);
	if (from_cls < RTPLACE_CLASS_COUNT && now > from)
		__atomic_store_n(&t->ns[from_cls], t->ns[from_cls] + now - from, __ATOMIC_RELAXED);
	__atomic_store_n(&t->since_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&t->cls, cls, __ATOMIC_RELAXED);
	__atomic_exchange_n(&t->seq, seq + 2, __ATOMIC_SEQ_CST);
	__atomic_store_n(level, new, __ATOMIC_RELAXED);
}

static int read_at(const struct tracker_cpu_time *t, const __u32 *level, __u64 now, __u64 ns[RTPLACE_CLASS_COUNT])
{
	return tracker_cpu_time_read(t, level, START, now, ns);
}

static void test_read(void **state)
{
	struct tracker_cpu_time t = { 0 };
	__u32 level = LEVEL_OFFLINE;
	__u64 ns[RTPLACE_CLASS_COUNT];

	/* Offline since the load: nothing counted. */
	assert_int_equal(read_at(&t, &level, 1000, ns), 0);
	for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
		assert_int_equal(ns[c], 0);
	/* Seeded normal (the map's level, no accounting): normal since the
	 * load, and the first change closes that interval, never less. */
	level = LEVEL_NORMAL;
	assert_int_equal(read_at(&t, &level, 90, ns), 0);
	assert_int_equal(ns[RTPLACE_CLASS_NORMAL], 40);
	account(&t, &level, LEVEL_NORMAL + 1, 100);
	assert_int_equal(read_at(&t, &level, 100, ns), 0);
	assert_int_equal(ns[RTPLACE_CLASS_NORMAL], 50);
	assert_int_equal(ns[RTPLACE_CLASS_RT], 0);
	account(&t, &level, LEVEL_RT99, 120); /* rt to rt: nothing closes */
	account(&t, &level, LEVEL_IDLE, 400);
	assert_int_equal(read_at(&t, &level, 1000, ns), 0);
	assert_int_equal(ns[RTPLACE_CLASS_NORMAL], 50);
	assert_int_equal(ns[RTPLACE_CLASS_RT], 300);
	/* the open interval, 400..1000 */
	assert_int_equal(ns[RTPLACE_CLASS_IDLE], 600);
	assert_int_equal(ns[RTPLACE_CLASS_DL], 0);

	/* A reading taken before the interval opened counts none of it. */
	assert_int_equal(read_at(&t, &level, 300, ns), 0);
	assert_int_equal(ns[RTPLACE_CLASS_IDLE], 0);
	assert_int_equal(ns[RTPLACE_CLASS_RT], 300);

	/* Offline time is in no class. */
	account(&t, &level, LEVEL_OFFLINE, 1000);
	assert_int_equal(read_at(&t, &level, 5000, ns), 0);
	assert_int_equal(ns[RTPLACE_CLASS_IDLE], 600);
	assert_int_equal(ns[RTPLACE_CLASS_NORMAL] + ns[RTPLACE_CLASS_RT] + ns[RTPLACE_CLASS_DL], 350);

	/* A writer that never finishes: the reader gives up. */
	t.seq++;
	assert_int_equal(read_at(&t, &level, 5000, ns), -EBUSY);
}

/*
 * A writer moving one CPU through the classes at clock values START + 1,
 * START + 2... keeps sum(ns) + (now - since_ns) == now - START for any now
 * beyond its clock, the first interval (from the load, in the class of the
 * published level) included: a reader that mixed fields of two updates, or
 * a level of another update, would see another total.
 */
#define RACE_NOW (UINT64_C(1) << 40)
#define RACE_READS 2000000

static struct tracker_cpu_time race_entry;
static __u32 race_level = LEVEL_IDLE;
static volatile bool race_done;

/* A level of each class in turn. */
static const __u32 race_levels[RTPLACE_CLASS_COUNT] = { LEVEL_IDLE, LEVEL_NORMAL, LEVEL_RT1, LEVEL_DL };

static void *race_writer(void *arg)
{
	__u64 clock = START + 1;

	(void)arg;
	while (!__atomic_load_n(&race_done, __ATOMIC_RELAXED)) {
		account(&race_entry, &race_level, race_levels[clock % RTPLACE_CLASS_COUNT], clock);
		clock++;
	}
	return NULL;
}

static void test_read_races_writer(void **state)
{
	pthread_t writer;
	unsigned long busy = 0;

	assert_int_equal(pthread_create(&writer, NULL, race_writer, NULL), 0);
	for (int i = 0; i < RACE_READS; i++) {
		__u64 ns[RTPLACE_CLASS_COUNT], sum = 0;

		if (read_at(&race_entry, &race_level, RACE_NOW, ns) < 0) {
			busy++;
			continue;
		}
		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
			sum += ns[c];
		if (sum != RACE_NOW - START) {
			__atomic_store_n(&race_done, true, __ATOMIC_RELAXED);
			pthread_join(writer, NULL);
			fail_msg("read %d: total %llu, want %llu", i, (unsigned long long)sum,
				 (unsigned long long)(RACE_NOW - START));
		}
	}
	__atomic_store_n(&race_done, true, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(writer, NULL), 0);
	/* A writer preempted mid-update (a thread here, unlike the BPF
	 * writer) may exhaust a read's retries; most reads succeed. */
	assert_true(busy < RACE_READS / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_class),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_races_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
