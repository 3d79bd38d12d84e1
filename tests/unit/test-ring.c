/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for the record ring: layout as declared, order, no loss below
 * capacity, overflow counted exactly, doorbells only on empty-to-non-empty
 * transitions (checked against a model queue), a consumer index it must not
 * trust, and a two-thread stress with a real eventfd doorbell that checks
 * sequence numbers, losses and the doorbell bound.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "ring.h"

/* A ring in plain memory, as a memfd mapping would be: line aligned, and
 * followed by a line of canary bytes. */
#define CANARY 0xa5
struct test_mem {
	void *mem;
	size_t size;
};

static struct test_mem test_mem_new(uint32_t records)
{
	struct test_mem m = { .size = ring_bytes(records) };

	assert_int_equal(posix_memalign(&m.mem, RTPLACE_RING_LINE, m.size + RTPLACE_RING_LINE), 0);
	memset(m.mem, CANARY, m.size + RTPLACE_RING_LINE);
	return m;
}

static struct rtplace_record rec_of(uint64_t seq)
{
	return (struct rtplace_record){
		.seq = seq,
		.time_ns = seq * 10,
		.tid = (int32_t)(seq & 0x7fffffff),
		.uid = 1000,
		.from_cpu = (int16_t)(seq % 7),
		.to_cpu = (int16_t)(seq % 5),
		.type = RTPLACE_RECORD_MOVED,
		.policy = 1,
		.prio = (uint8_t)(seq % 99 + 1),
	};
}

static void assert_rec_is(const struct rtplace_record *r, uint64_t seq)
{
	struct rtplace_record want = rec_of(seq);

	assert_memory_equal(r, &want, sizeof(want));
}

static void test_layout(void **state)
{
	struct test_mem m = test_mem_new(16);
	struct ring p;

	assert_int_equal(sizeof(struct rtplace_record), 32);
	assert_int_equal(_Alignof(struct rtplace_record), 32);
	assert_int_equal(ring_bytes(16), 192 + 16 * 32);
	assert_int_equal(ring_init(m.mem, m.size, 16, &p), 0);
	assert_int_equal(p.hdr->capacity, 16);
	assert_int_equal(p.hdr->record_size, 32);
	assert_int_equal(p.hdr->records_offset, 192);
	assert_ptr_equal((char *)p.records, (char *)m.mem + 192);
	/* Every slot is aligned to its size, so none straddles two lines. */
	for (unsigned i = 0; i < 16; i++) {
		uintptr_t a = (uintptr_t)&p.records[i];

		assert_int_equal(a % 32, 0);
		assert_int_equal(a / 64, (a + sizeof(struct rtplace_record) - 1) / 64);
	}
	/* Producer and consumer indexes do not share a line. */
	assert_int_not_equal((uintptr_t)&p.hdr->head / 64, (uintptr_t)&p.hdr->tail / 64);
	free(m.mem);
}

static void test_init_and_attach_errors(void **state)
{
	struct test_mem m = test_mem_new(64);
	struct ring p, c;

	assert_int_equal(ring_init((char *)m.mem + 32, m.size, 16, &p), -EINVAL);
	assert_int_equal(ring_init(m.mem, m.size, 48, &p), -EINVAL);
	assert_int_equal(ring_init(m.mem, m.size, 1, &p), -EINVAL);
	assert_int_equal(ring_init(m.mem, ring_bytes(64) - 1, 64, &p), -EINVAL);
	assert_int_equal(ring_attach(m.mem, m.size, &c), -EPROTO); /* garbage */

	assert_int_equal(ring_init(m.mem, m.size, 64, &p), 0);
	assert_int_equal(ring_attach(m.mem, ring_bytes(64) - 1, &c), -EPROTO);
	assert_int_equal(ring_attach((char *)m.mem + 8, m.size, &c), -EINVAL);
	p.hdr->version = RTPLACE_RING_VERSION + 1;
	assert_int_equal(ring_attach(m.mem, m.size, &c), -EPROTO);
	p.hdr->version = RTPLACE_RING_VERSION;
	p.hdr->capacity = 48;
	assert_int_equal(ring_attach(m.mem, m.size, &c), -EPROTO);
	p.hdr->capacity = 64;
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	assert_int_equal(c.mask, 63);
	free(m.mem);
}

/*
 * The record codec: a version-2 ring holds records as they are, claim id
 * included; a version-1 ring holds version 1's layout, byte for byte as
 * 0.1.0 wrote and reads it, a claim record without its id, and gives
 * records back in version 2's form.
 */
static void test_versions(void **state)
{
	struct test_mem m = test_mem_new(8);
	const struct rtplace_record moved = rec_of(3);
	const struct rtplace_record claim = {
		.seq = 4, .time_ns = 40, .tid = 4242, .uid = 1000, .from_cpu = 6,
		.type = RTPLACE_RECORD_CLAIM_EXPIRED, .prio = 50, .claim_id = 0x12345678,
	};
	struct rtplace_record_v1 raw;
	struct rtplace_record r;
	struct ring p, c;
	bool empty;

	assert_int_equal(ring_init_version(m.mem, m.size, 8, RTPLACE_RING_VERSION + 1, &p), -EINVAL);
	assert_int_equal(ring_init_version(m.mem, m.size, 8, 0, &p), -EINVAL);

	assert_int_equal(ring_init(m.mem, m.size, 8, &p), 0);
	assert_int_equal(p.hdr->version, RTPLACE_RING_VERSION);
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	assert_int_equal(c.version, RTPLACE_RING_VERSION);
	assert_int_equal(ring_push(&p, &claim, &empty), 0);
	/* Version 2's bytes: the id in the last four. */
	assert_int_equal(((const uint8_t *)&p.records[0])[26], RTPLACE_RECORD_CLAIM_EXPIRED);
	assert_int_equal(((const uint8_t *)&p.records[0])[27], 50);
	assert_int_equal(p.records[0].claim_id, 0x12345678);
	assert_int_equal(ring_pop(&c, &r, NULL), 1);
	assert_memory_equal(&r, &claim, sizeof(r));

	assert_int_equal(ring_init_version(m.mem, m.size, 8, RTPLACE_RING_VERSION_1, &p), 0);
	assert_int_equal(p.hdr->version, 1);
	assert_int_equal(p.hdr->record_size, 32);
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	assert_int_equal(c.version, RTPLACE_RING_VERSION_1);
	assert_int_equal(ring_push(&p, &moved, &empty), 0);
	assert_int_equal(ring_push(&p, &claim, &empty), 0);
	memcpy(&raw, &p.records[0], sizeof(raw));
	assert_int_equal(raw.seq, 3);
	assert_int_equal(raw.tid, moved.tid);
	assert_int_equal(raw.from_cpu, moved.from_cpu);
	assert_int_equal(raw.to_cpu, moved.to_cpu);
	assert_int_equal(raw.type, RTPLACE_RECORD_MOVED);
	assert_int_equal(raw.policy, moved.policy);
	assert_int_equal(raw.prio, moved.prio);
	assert_int_equal(raw.reserved, 0);
	memcpy(&raw, &p.records[1], sizeof(raw));
	assert_int_equal(raw.type, RTPLACE_RECORD_CLAIM_EXPIRED);
	assert_int_equal(raw.tid, 4242);
	assert_int_equal(raw.from_cpu, 6);
	assert_int_equal(raw.to_cpu, -1);
	assert_int_equal(raw.policy, 0);
	assert_int_equal(raw.prio, 50);
	assert_int_equal(raw.reserved, 0);

	assert_int_equal(ring_pop(&c, &r, NULL), 1);
	assert_rec_is(&r, 3);
	assert_int_equal(ring_pop(&c, &r, NULL), 1);
	assert_int_equal(r.type, RTPLACE_RECORD_CLAIM_EXPIRED);
	assert_int_equal(r.claim_id, 0);
	assert_int_equal(r.tid, 4242);
	assert_int_equal(r.uid, 1000);
	assert_int_equal(r.from_cpu, 6);
	assert_int_equal(r.prio, 50);
	assert_int_equal(r.seq, 4);
	assert_int_equal(r.time_ns, 40);
	free(m.mem);
}

struct collect {
	struct rtplace_record recs[256];
	unsigned n;
	unsigned stop_after; /* 0: never */
};

static int collect_cb(const struct rtplace_record *rec, void *userdata)
{
	struct collect *c = userdata;

	c->recs[c->n++] = *rec;
	return c->stop_after && c->n >= c->stop_after;
}

static void test_order_and_overflow_at_capacity(void **state)
{
	struct test_mem m = test_mem_new(64);
	struct collect got = { 0 };
	struct rtplace_record r;
	struct ring p, c;
	uint64_t lost = 99;
	bool empty;

	assert_int_equal(ring_init(m.mem, m.size, 64, &p), 0);
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	for (uint64_t i = 1; i <= 64; i++) {
		r = rec_of(i);
		assert_int_equal(ring_push(&p, &r, &empty), 0);
		assert_true(empty == (i == 1));
	}
	r = rec_of(65);
	assert_int_equal(ring_push(&p, &r, &empty), -ENOBUFS);
	assert_int_equal(ring_push(&p, &r, &empty), -ENOBUFS);
	assert_int_equal(ring_lost_total(&p), 2);
	assert_int_equal(p.hdr->lost, 2);

	assert_int_equal(ring_drain(&c, collect_cb, &got, &lost), 64);
	assert_int_equal(lost, 2);
	for (unsigned i = 0; i < 64; i++)
		assert_rec_is(&got.recs[i], i + 1);

	/* Loss is reported once; the ring works again after overflow. */
	r = rec_of(66);
	assert_int_equal(ring_push(&p, &r, &empty), 0);
	assert_true(empty);
	got.n = 0;
	assert_int_equal(ring_drain(&c, collect_cb, &got, &lost), 1);
	assert_int_equal(lost, 0);
	assert_rec_is(&got.recs[0], 66);
	assert_int_equal(ring_drain(&c, collect_cb, &got, &lost), 0);
	free(m.mem);
}

static void test_pop_and_stopped_drain(void **state)
{
	struct test_mem m = test_mem_new(8);
	struct collect got = { .stop_after = 2 };
	struct rtplace_record r;
	struct ring p, c;
	uint64_t lost;
	bool empty;

	assert_int_equal(ring_init(m.mem, m.size, 8, &p), 0);
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	assert_int_equal(ring_pop(&c, &r, &lost), 0);
	for (uint64_t i = 1; i <= 5; i++) {
		r = rec_of(i);
		assert_int_equal(ring_push(&p, &r, &empty), 0);
	}
	assert_int_equal(ring_pop(&c, &r, &lost), 1);
	assert_rec_is(&r, 1);
	assert_int_equal(ring_drain(&c, collect_cb, &got, NULL), 2);
	assert_rec_is(&got.recs[0], 2);
	assert_rec_is(&got.recs[1], 3);
	got.stop_after = 0;
	assert_int_equal(ring_drain(&c, collect_cb, &got, NULL), 2);
	assert_rec_is(&got.recs[3], 5);
	assert_int_equal(ring_pop(&c, &r, &lost), 0);
	assert_int_equal(lost, 0);
	free(m.mem);
}

/* Random single-threaded interleavings against a model queue: was_empty is
 * exactly "the model was empty", drops are exactly "the model was full",
 * every record comes out in order, and the consumer learns every loss. */
static void test_model(void **state)
{
	const uint32_t cap = 8;
	struct test_mem m = test_mem_new(cap);
	uint64_t next = 1, expect_next = 1, model_len = 0, model_drops = 0, reported = 0, gaps = 0;
	uint64_t transitions = 0, doorbells = 0;
	struct rtplace_record r;
	struct ring p, c;
	uint64_t lost;

	srandom(12345);
	assert_int_equal(ring_init(m.mem, m.size, cap, &p), 0);
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	for (int step = 0; step < 200000; step++) {
		if (random() % 10 < 6) {
			bool empty;
			int res;

			r = rec_of(next++);
			res = ring_push(&p, &r, &empty);
			if (model_len == cap) {
				assert_int_equal(res, -ENOBUFS);
				model_drops++;
				continue;
			}
			assert_int_equal(res, 0);
			assert_true(empty == (model_len == 0));
			transitions += model_len == 0;
			doorbells += empty;
			model_len++;
			continue;
		}
		if (model_len == 0) {
			assert_int_equal(ring_pop(&c, &r, &lost), 0);
			reported += lost;
			continue;
		}
		assert_int_equal(ring_pop(&c, &r, &lost), 1);
		reported += lost;
		model_len--;
		assert_rec_is(&r, r.seq);
		assert_true(r.seq >= expect_next);
		gaps += r.seq - expect_next;
		expect_next = r.seq + 1;
		/* Every loss before this record has been reported with it. */
		assert_true(reported >= gaps);
	}
	while (ring_pop(&c, &r, &lost) == 1)
		reported += lost;
	reported += lost;
	assert_int_equal(ring_lost_total(&p), model_drops);
	assert_int_equal(reported, model_drops);
	assert_int_equal(doorbells, transitions);
	assert_true(model_drops > 1000);
	free(m.mem);
}

/* The consumer's tail is written by another process: a garbage value must
 * only cost that consumer its records, never a store outside the ring. */
static void test_untrusted_tail(void **state)
{
	struct test_mem m = test_mem_new(8);
	struct rtplace_record r = rec_of(1);
	struct ring p;
	bool empty;

	assert_int_equal(ring_init(m.mem, m.size, 8, &p), 0);
	p.hdr->tail = 1000; /* ahead of head */
	assert_int_equal(ring_push(&p, &r, &empty), -ENOBUFS);
	p.hdr->tail = (uint64_t)-8; /* a full ring's worth behind head 0 */
	assert_int_equal(ring_push(&p, &r, &empty), -ENOBUFS);
	assert_int_equal(ring_lost_total(&p), 2);
	/* Behind by less than the capacity is a plausible tail: the push
	 * stays inside the ring and simply does not find it empty. */
	p.hdr->tail = (uint64_t)-3;
	assert_int_equal(ring_push(&p, &r, &empty), 0);
	assert_false(empty);
	p.hdr->tail = 1; /* caught up: empty again */
	assert_int_equal(ring_push(&p, &r, &empty), 0);
	assert_true(empty);
	assert_int_equal(p.index, 2);
	/* Nothing outside the ring was written. */
	for (size_t i = 0; i < RTPLACE_RING_LINE; i++)
		assert_int_equal(((unsigned char *)m.mem)[m.size + i], CANARY);
	free(m.mem);
}

/* A head the producer cannot have written is refused by the consumer. */
static void test_bad_head(void **state)
{
	struct test_mem m = test_mem_new(8);
	struct rtplace_record r;
	struct ring p, c;

	assert_int_equal(ring_init(m.mem, m.size, 8, &p), 0);
	assert_int_equal(ring_attach(m.mem, m.size, &c), 0);
	p.hdr->head = 9;
	assert_int_equal(ring_pop(&c, &r, NULL), -EPROTO);
	assert_int_equal(ring_drain(&c, collect_cb, &(struct collect){ 0 }, NULL), -EPROTO);
	free(m.mem);
}

/* ---- Two-thread stress -------------------------------------------------- */

#define STRESS_RECORDS 2000000u
#define STRESS_WAIT_MS 20000 /* a bound against a lost wake-up, not a timing */

struct stress {
	struct ring p, c;
	int doorbell;
	uint64_t doorbells, pushed_ok, dropped;
	bool producer_done;
	/* consumer results */
	uint64_t received, gaps, reported, last_seq, errors, drains, waits;
	bool timed_out;
};

static int stress_cb(const struct rtplace_record *rec, void *userdata)
{
	struct stress *s = userdata;

	if (rec->seq <= s->last_seq || rec->tid != (int32_t)(rec->seq & 0x7fffffff))
		s->errors++;
	else
		s->gaps += rec->seq - s->last_seq - 1;
	s->last_seq = rec->seq;
	s->received++;
	return 0;
}

static void *stress_producer(void *arg)
{
	static const uint64_t one = 1;
	struct stress *s = arg;

	for (uint64_t seq = 1; seq <= STRESS_RECORDS; seq++) {
		struct rtplace_record r = rec_of(seq);
		bool empty;

		if (ring_push(&s->p, &r, &empty) < 0) {
			s->dropped++;
			continue;
		}
		s->pushed_ok++;
		if (empty) {
			s->doorbells++;
			if (write(s->doorbell, &one, sizeof(one)) != sizeof(one))
				abort();
		}
		/* Bursts separated by short pauses, so the ring both fills
		 * and empties many times. */
		if (seq % 4096 == 0)
			usleep(100);
	}
	__atomic_store_n(&s->producer_done, true, __ATOMIC_RELEASE);
	/* A last ring so a consumer asleep on an empty ring sees "done". */
	if (write(s->doorbell, &one, sizeof(one)) != sizeof(one))
		abort();
	return NULL;
}

static void *stress_consumer(void *arg)
{
	struct stress *s = arg;

	for (;;) {
		struct pollfd pfd = { .fd = s->doorbell, .events = POLLIN };
		bool done = __atomic_load_n(&s->producer_done, __ATOMIC_ACQUIRE);
		uint64_t lost, v;
		int64_t n;

		n = ring_drain(&s->c, stress_cb, s, &lost);
		if (n < 0) {
			s->errors++;
			break;
		}
		s->drains++;
		s->reported += lost;
		/* Every loss before the records just handed out is known. */
		if (s->reported < s->gaps)
			s->errors++;
		if (done)
			break;
		s->waits++;
		if (poll(&pfd, 1, STRESS_WAIT_MS) != 1) {
			s->timed_out = true;
			break;
		}
		if (read(s->doorbell, &v, sizeof(v)) != sizeof(v))
			s->errors++;
	}
	return NULL;
}

static void run_stress(uint32_t cap)
{
	struct test_mem m = test_mem_new(cap);
	struct stress *s = calloc(1, sizeof(*s));
	pthread_t pt, ct;

	assert_non_null(s);
	s->doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(s->doorbell >= 0);
	assert_int_equal(ring_init(m.mem, m.size, cap, &s->p), 0);
	assert_int_equal(ring_attach(m.mem, m.size, &s->c), 0);
	assert_int_equal(pthread_create(&ct, NULL, stress_consumer, s), 0);
	assert_int_equal(pthread_create(&pt, NULL, stress_producer, s), 0);
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);

	print_message("cap %u: pushed %lu dropped %lu received %lu doorbells %lu emptied %lu drains %lu\n", cap,
		      (unsigned long)s->pushed_ok, (unsigned long)s->dropped, (unsigned long)s->received,
		      (unsigned long)s->doorbells, (unsigned long)s->c.emptied, (unsigned long)s->drains);
	assert_false(s->timed_out);
	assert_int_equal(s->errors, 0);
	assert_int_equal(s->received, s->pushed_ok);
	assert_int_equal(s->received + s->dropped, STRESS_RECORDS);
	assert_int_equal(s->dropped, ring_lost_total(&s->p));
	/* Exact: the consumer's reported losses and its sequence gaps (the
	 * tail gap after the last record cannot be seen as a gap). */
	assert_int_equal(s->reported, s->dropped);
	assert_int_equal(s->gaps + (STRESS_RECORDS - s->last_seq), s->dropped);
	/* At most one doorbell per empty-to-non-empty transition. */
	assert_true(s->doorbells <= s->c.emptied + 1);
	close(s->doorbell);
	free(s);
	free(m.mem);
}

static void test_stress_large_ring(void **state)
{
	/* Large enough that a burst fits: the usual case, rare or no loss. */
	run_stress(8192);
}

static void test_stress_overflow(void **state)
{
	run_stress(64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_init_and_attach_errors),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_order_and_overflow_at_capacity),
		cmocka_unit_test(test_pop_and_stopped_drain),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_untrusted_tail),
		cmocka_unit_test(test_bad_head),
		cmocka_unit_test(test_stress_large_ring),
		cmocka_unit_test(test_stress_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
