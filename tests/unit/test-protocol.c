/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for the wire codec: every message type round-trips byte for
 * byte, every validation rule refuses with its errno and reason, lengths
 * off by one either way are garbage, and random or mutated input never
 * crashes (the fuzz harness's checks, run here on generated inputs; build
 * with --enable-sanitizers to run them under ASan and UBSan).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto-samples.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next request type no daemon knows yet: bump it when it is taken. */
#define MSG_UNKNOWN 0x01fe

static const struct proto_limits lim_server = {
	.ncpus = PROTO_SAMPLE_NCPUS, .nnodes = PROTO_SAMPLE_NNODES, .accept = PROTO_ACCEPT_REQUESTS,
};
static const struct proto_limits lim_isolating = {
	.ncpus = PROTO_SAMPLE_NCPUS, .nnodes = PROTO_SAMPLE_NNODES, .accept = PROTO_ACCEPT_REQUESTS, .isolate = true,
};
static const struct proto_limits lim_client = {
	.ncpus = PROTO_SAMPLE_NCPUS, .nnodes = PROTO_SAMPLE_NNODES, .accept = PROTO_ACCEPT_REPLIES,
};

/* Receive buffer at an odd address: decoding must not assume alignment. */
static unsigned char raw_storage[sizeof(struct proto_msg) + 16];
static unsigned char *const raw = raw_storage + 1;

static int decode_bytes(const void *data, size_t len, const struct proto_limits *lim, struct proto_msg *ret,
			struct proto_error *ret_err)
{
	assert_true(len <= sizeof(raw_storage) - 1);
	memcpy(raw, data, len);
	return proto_decode(raw, len, lim, ret, ret_err);
}

static void check_refused(const void *data, size_t len, const struct proto_limits *lim, int want,
			  const char *reason, int line)
{
	static struct proto_msg out;
	struct proto_error err = { 0 };
	int r = decode_bytes(data, len, lim, &out, &err);

	if (r != want || strcmp(err.reason.text, reason) != 0)
		print_error("line %d: got %d (%s), want %d (%s)\n", line, r, err.reason.text, want, reason);
	assert_int_equal(r, want);
	assert_string_equal(err.reason.text, reason);
}

/*
 * The wire form of m, a readable message the test edited, in its version
 * (the header's other fields as the test left them); m's own bytes where it
 * cannot be packed (a version or type the codec does not know, a count
 * beyond its list), as a peer might send them.
 */
static const struct proto_msg *wire_of(const struct proto_msg *m)
{
	static struct proto_msg w;

	w = *m;
	if (m->packed || proto_msg_finish(&w, m->hdr.version) < 0)
		w = *m;
	return &w;
}

/* Refused as sent: packed in its version, with its own length. */
#define REFUSED(m, lim, want, reason) \
	check_refused(wire_of(m), wire_of(m)->hdr.length, (lim), (want), (reason), __LINE__)

/* A readable message as the codec reads it back from its wire form. */
static void check_accepted(const struct proto_msg *m, const struct proto_limits *lim, int line)
{
	static struct proto_msg out, sent;
	struct proto_error err = { 0 };
	int r;

	sent = *wire_of(m);
	r = decode_bytes(&sent, sent.hdr.length, lim, &out, &err);
	if (r != 0)
		print_error("line %d: refused %d (%s)\n", line, r, err.reason.text);
	assert_int_equal(r, 0);
	assert_memory_equal(wire_of(&out), &sent, sent.hdr.length);
}

#define ACCEPTED(m, lim) check_accepted((m), (lim), __LINE__)

/* A sample, readable (decoded from its wire form) for the test to edit. */
static struct proto_msg sample(uint16_t type, unsigned shape)
{
	static struct proto_msg m, out;

	assert_int_equal(proto_sample(type, shape, &m), 0);
	assert_int_equal(decode_bytes(&m, m.hdr.length, NULL, &out, NULL), 0);
	return out;
}

/* The sample in version 1, where a list reply carries every entry: the
 * rules of its fields, count included, apply without the length moving. */
static struct proto_msg sample_v1(uint16_t type, unsigned shape)
{
	static struct proto_msg m, out;

	assert_int_equal(proto_sample(type, shape, &m), 0);
	assert_int_equal(proto_msg_finish(&m, 1), 0);
	assert_int_equal(m.hdr.length, proto_msg_length(type));
	assert_int_equal(decode_bytes(&m, m.hdr.length, NULL, &out, NULL), 0);
	return out;
}

static void test_layout(void **state)
{
	static const struct {
		uint16_t type;
		size_t length;
		const char *name;
	} want[] = {
		{ RTPLACE_MSG_QUERY, 176, "query" },
		{ RTPLACE_MSG_RELEASE, 32, "release" },
		{ RTPLACE_MSG_CPUS, 32, "cpus" },
		{ RTPLACE_MSG_STATUS, 24, "status" },
		{ RTPLACE_MSG_MOVE, 168, "move" },
		{ RTPLACE_MSG_SUBSCRIBE, 32, "subscribe" },
		{ RTPLACE_MSG_ERROR, 96, "error" },
		{ RTPLACE_MSG_QUERY_REPLY, 1256, "query-reply" },
		{ RTPLACE_MSG_RELEASE_REPLY, 40, "release-reply" },
		{ RTPLACE_MSG_CPUS_REPLY, 7208, "cpus-reply" },
		{ RTPLACE_MSG_STATUS_REPLY, 144, "status-reply" },
		{ RTPLACE_MSG_MOVE_REPLY, 288, "move-reply" },
		{ RTPLACE_MSG_SUBSCRIBE_REPLY, 40, "subscribe-reply" },
		{ RTPLACE_MSG_CLAIM_ENDED, 40, "claim-ended" },
		{ RTPLACE_MSG_CPU_TIMES, 32, "cpu-times" },
		{ RTPLACE_MSG_CPU_TIMES_REPLY, 4144, "cpu-times-reply" },
		{ RTPLACE_MSG_TRACKING, 24, "tracking" },
		{ RTPLACE_MSG_TRACKING_REPLY, 312, "tracking-reply" },
		{ RTPLACE_MSG_HOST, 24, "host" },
		{ RTPLACE_MSG_HOST_REPLY, 48, "host-reply" },
		{ RTPLACE_MSG_LOCAL, 24, "local" },
		{ RTPLACE_MSG_LOCAL_REPLY, 48, "local-reply" },
		{ RTPLACE_MSG_CLAIM, 32, "claim" },
		{ RTPLACE_MSG_CLAIM_REPLY, 200, "claim-reply" },
		{ RTPLACE_MSG_EXPLAIN, 184, "explain" },
		{ RTPLACE_MSG_EXPLAIN_REPLY, 9520, "explain-reply" },
		{ RTPLACE_MSG_KERNEL, 24, "kernel" },
		{ RTPLACE_MSG_KERNEL_REPLY, 1000, "kernel-reply" },
		{ RTPLACE_MSG_RELOAD, 24, "reload" },
		{ RTPLACE_MSG_RELOAD_REPLY, 24, "reload-reply" },
	};

	assert_int_equal(sizeof(want) / sizeof(want[0]), proto_sample_ntypes);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(proto_msg_length(want[i].type), want[i].length);
		assert_string_equal(proto_type_name(want[i].type), want[i].name);
		assert_true(want[i].length <= sizeof(struct proto_msg));
		/* requests in block 0x01, their replies 0x0100 above */
		if (RTPLACE_MSG_BLOCK(want[i].type) == RTPLACE_MSG_BLOCK_REQUEST)
			assert_int_equal(proto_reply_type(want[i].type), want[i].type + RTPLACE_MSG_REPLY_OFFSET);
		else
			assert_int_equal(proto_reply_type(want[i].type), 0);
	}
	assert_int_equal(proto_msg_length(MSG_UNKNOWN), 0);
	assert_null(proto_type_name(MSG_UNKNOWN));
	assert_int_equal(proto_reply_type(RTPLACE_MSG_QUERY), RTPLACE_MSG_QUERY_REPLY);
	assert_int_equal(proto_reply_type(RTPLACE_MSG_STATUS), RTPLACE_MSG_STATUS_REPLY);
	assert_int_equal(proto_reply_type(RTPLACE_MSG_SUBSCRIBE), RTPLACE_MSG_SUBSCRIBE_REPLY);
	assert_int_equal(proto_reply_type(RTPLACE_MSG_QUERY_REPLY), 0);
	assert_int_equal(proto_reply_type(RTPLACE_MSG_CLAIM_ENDED), 0);
	assert_int_equal(proto_reply_type(MSG_UNKNOWN), 0);
	/* the wire constants are frozen: these values are in deployed clients */
	assert_int_equal(RTPLACE_PROTO_MAGIC, 0x4c505452);
	assert_int_equal(RTPLACE_MSG_QUERY, 0x0101);
	assert_int_equal(RTPLACE_MSG_ERROR, 0x0200);
	assert_int_equal(RTPLACE_MSG_CLAIM_ENDED, 0x0301);
	assert_int_equal(RTPLACE_MSG_HOST, 0x0109);
	assert_int_equal(RTPLACE_MSG_LOCAL, 0x010a);
	assert_int_equal(RTPLACE_MSG_CLAIM, 0x010b);
	assert_int_equal(RTPLACE_MSG_KERNEL, 0x010d);
	assert_int_equal(RTPLACE_MSG_RELOAD, 0x010e);
	assert_int_equal(RTPLACE_CLAIM_F_EXCLUSIVE, 1u << 6);
	assert_int_equal(RTPLACE_CLAIM_F_ISOLATED, 1u << 7);
	assert_int_equal(RTPLACE_QUERY_F_NORMAL, 1u << 3);
	assert_int_equal(RTPLACE_QUERY_F_ISOLATE, 1u << 4);
	assert_int_equal(RTPLACE_CPUS_F_HOST, 1u << 1);
	assert_int_equal(RTPLACE_CPU_F_ISOLATED, 1u << 2);
	assert_int_equal(RTPLACE_CPU_F_NOHZ_FULL, 1u << 3);
	assert_true(proto_error_is_garbage(-EPROTO));
	assert_false(proto_error_is_garbage(-EINVAL));
}

static void test_roundtrip(void **state)
{
	static struct proto_msg m, out, again;
	unsigned nsamples = 0, nwide = 0;

	for (size_t i = 0; i < proto_sample_ntypes; i++) {
		uint16_t type = proto_sample_types[i];
		bool request = proto_reply_type(type) != 0;
		unsigned shape;

		for (shape = 0; proto_sample(type, shape, &m) == 0; shape++) {
			assert_int_equal(m.hdr.version, RTPLACE_PROTO_VERSION);
			assert_true(m.packed);
			assert_int_equal(m.hdr.length, proto_msg_length_for(&m));
			assert_int_equal(m.hdr.length, proto_wire_length(&m, m.hdr.length));
			assert_true(m.hdr.length <= RTPLACE_MSG_MAX);
			assert_int_equal(decode_bytes(&m, m.hdr.length, NULL, &out, NULL), 0);
			assert_false(out.packed);
			assert_int_equal(proto_msg_length_for(&out), m.hdr.length);
			assert_int_equal(proto_encode(&again, type, out.hdr.request_id, out.hdr.status,
						      proto_msg_body(&out), NULL), 0);
			assert_memory_equal(&again, &m, m.hdr.length);
			assert_int_equal(proto_validate(&m, NULL, NULL), 0);
			assert_int_equal(proto_validate(&out, NULL, NULL), 0);
			/* versions 1 and 2: version 1 at its full length, both read
			 * back as the same message */
			for (uint16_t v = 1; v < RTPLACE_PROTO_VERSION; v++) {
				int r;

				again = m;
				r = proto_msg_finish(&again, v);
				if (r == -ERANGE) {
					/* it names a CPU past 1023: version 3 only */
					assert_int_equal(proto_msg_finish(&out, v), -ERANGE);
					nwide++;
					continue;
				}
				assert_int_equal(r, 0);
				assert_true(again.hdr.length <= proto_msg_length(type));
				if (v == 1)
					assert_int_equal(again.hdr.length, proto_msg_length(type));
				assert_int_equal(decode_bytes(&again, again.hdr.length, NULL, &out, NULL), 0);
				assert_int_equal(out.hdr.version, v);
				assert_int_equal(proto_msg_finish(&out, RTPLACE_PROTO_VERSION), 0);
				assert_memory_equal(&out, &m, m.hdr.length);
			}
			if (shape == 0)
				ACCEPTED(&m, request ? &lim_server : &lim_client);
			/* the other side does not take it */
			REFUSED(&m, request ? &lim_client : &lim_server, -EOPNOTSUPP, "message type not accepted here");
			nsamples++;
		}
		assert_int_not_equal(shape, 0);
	}
	assert_true(nsamples > proto_sample_ntypes);
	assert_true(nwide > 0);
}

static void test_header(void **state)
{
	struct proto_msg m = sample(RTPLACE_MSG_QUERY, 0);
	struct proto_error err = { 0 };
	struct proto_msg out;

	check_refused(&m, 0, &lim_server, -EPROTO, "short message", __LINE__);
	check_refused(&m, sizeof(m.hdr) - 1, &lim_server, -EPROTO, "short message", __LINE__);
	check_refused(&m, sizeof(m.hdr), &lim_server, -EPROTO, "length field does not match the message",
		      __LINE__);

	m.hdr.magic ^= 1;
	REFUSED(&m, &lim_server, -EPROTO, "bad magic");
	assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_server, &out, &err), -EPROTO);
	assert_int_equal(err.request_id, 0); /* untrusted: not reported */

	m = sample(RTPLACE_MSG_QUERY, 0);
	m.hdr.version = RTPLACE_PROTO_VERSION + 1;
	m.hdr.request_id = 77;
	REFUSED(&m, &lim_server, -EPROTONOSUPPORT, "unsupported protocol version");
	assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_server, &out, &err), -EPROTONOSUPPORT);
	assert_int_equal(err.request_id, 77);
	assert_int_equal(err.type, RTPLACE_MSG_QUERY);
	assert_int_equal(err.version, 1); /* answered in a version every client reads */
	m.hdr.version = 0;
	REFUSED(&m, &lim_server, -EPROTONOSUPPORT, "unsupported protocol version");

	m = sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.type = MSG_UNKNOWN;
	REFUSED(&m, &lim_server, -EOPNOTSUPP, "unknown message type");
	m.hdr.type = 0;
	REFUSED(&m, &lim_server, -EOPNOTSUPP, "unknown message type");
	m.hdr.type = 0x0300;
	REFUSED(&m, NULL, -EOPNOTSUPP, "unknown message type");
	/* an event from a newer daemon: the client sees its block and skips it */
	m.hdr.type = 0x03ff;
	m.hdr.request_id = 0;
	assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_client, &out, &err), -EOPNOTSUPP);
	assert_int_equal(RTPLACE_MSG_BLOCK(err.type), RTPLACE_MSG_BLOCK_EVENT);
	m.hdr.request_id = 4;
	m.hdr.type = RTPLACE_MSG_QUERY; /* a known type with the wrong length */
	check_refused(&m, m.hdr.length, &lim_server, -EPROTO, "wrong length for the message type", __LINE__);
	/* a readable header's version is the answer's */
	m = sample(RTPLACE_MSG_QUERY, 0);
	m.query.prio = 0;
	assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_server, &out, &err), -ERANGE);
	assert_int_equal(err.version, RTPLACE_PROTO_VERSION);
	assert_int_equal(proto_msg_finish(&m, 1), 0);
	assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_server, &out, &err), -ERANGE);
	assert_int_equal(err.version, 1);

	m = sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.reserved = 1;
	REFUSED(&m, &lim_server, -EINVAL, "reserved header field not zero");
	m = sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.status = -EINVAL;
	REFUSED(&m, &lim_server, -EINVAL, "status set outside an error");
	m = sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.request_id = 0;
	REFUSED(&m, &lim_server, -EINVAL, "request id is 0");
	m = sample(RTPLACE_MSG_RELEASE_REPLY, 0);
	m.hdr.request_id = 0;
	REFUSED(&m, &lim_client, -EINVAL, "request id is 0");

	/* errors carry a negative errno, and may answer an unreadable message */
	m = sample(RTPLACE_MSG_ERROR, 1);
	assert_int_equal(m.hdr.request_id, 0);
	ACCEPTED(&m, &lim_client);
	m.hdr.status = 0;
	REFUSED(&m, &lim_client, -EINVAL, "error status not a negative errno");
	m.hdr.status = EINVAL;
	REFUSED(&m, &lim_client, -EINVAL, "error status not a negative errno");
	m.hdr.status = -4096;
	REFUSED(&m, &lim_client, -EINVAL, "error status not a negative errno");
	m.hdr.status = -4095;
	ACCEPTED(&m, &lim_client);

	/* events carry no request id */
	m = sample(RTPLACE_MSG_CLAIM_ENDED, 0);
	ACCEPTED(&m, &lim_client);
	m.hdr.request_id = 3;
	REFUSED(&m, &lim_client, -EINVAL, "request id set in an event");
}

/* Every type, one byte too many or too few, in the data or in the length field. */
static void test_length_off_by_one(void **state)
{
	static unsigned char buf[sizeof(struct proto_msg) + 1];
	struct rtplace_msg_hdr h;

	for (size_t i = 0; i < proto_sample_ntypes; i++) {
		struct proto_msg m = sample(proto_sample_types[i], 0);
		size_t len = m.hdr.length;

		/* EXPLAIN_REPLY's readable form holds its reason far from where
		 * version 3 sends it: its wire bytes, then. */
		if (m.hdr.type == RTPLACE_MSG_EXPLAIN_REPLY)
			assert_int_equal(proto_sample(RTPLACE_MSG_EXPLAIN_REPLY, 0, &m), 0);

		/* A reason ends version 3's ERROR, QUERY_REPLY,
		 * TRACKING_REPLY and EXPLAIN_REPLY: a byte more or less is a reason with a NUL
		 * before its end, or without one, unless the reason is empty
		 * (one NUL) and the byte is gone. */
		bool tail = m.hdr.type == RTPLACE_MSG_ERROR || m.hdr.type == RTPLACE_MSG_QUERY_REPLY ||
			    m.hdr.type == RTPLACE_MSG_TRACKING_REPLY || m.hdr.type == RTPLACE_MSG_EXPLAIN_REPLY;

		/* one byte more, length field agreeing */
		memcpy(buf, &m, len);
		buf[len] = 0;
		h = m.hdr;
		h.length = (uint32_t)len + 1;
		memcpy(buf, &h, sizeof(h));
		if (tail)
			check_refused(buf, len + 1, NULL, -EINVAL, "bad reason string", __LINE__);
		else
			check_refused(buf, len + 1, NULL, -EPROTO, "wrong length for the message type", __LINE__);

		/* one byte less, length field agreeing */
		h.length = (uint32_t)len - 1;
		memcpy(buf, &h, sizeof(h));
		if (tail && ((const char *)&m)[len - 2])
			check_refused(buf, len - 1, NULL, -EINVAL, "bad reason string", __LINE__);
		else
			check_refused(buf, len - 1, NULL, -EPROTO,
				      len - 1 < sizeof(h) ? "short message" : "wrong length for the message type",
				      __LINE__);

		/* the length field off by one either way, data intact */
		for (int d = -1; d <= 1; d += 2) {
			h.length = (uint32_t)((int)len + d);
			memcpy(buf, &m, len);
			memcpy(buf, &h, sizeof(h));
			check_refused(buf, len, NULL, -EPROTO, "length field does not match the message", __LINE__);
		}

		/* the data one byte short or long of an intact length field */
		memcpy(buf, &m, len);
		check_refused(buf, len - 1, NULL, -EPROTO,
			      len - 1 < sizeof(h) ? "short message" : "length field does not match the message",
			      __LINE__);
		check_refused(buf, len + 1, NULL, -EPROTO, "length field does not match the message", __LINE__);
	}
}

/* The refusal of a node beyond PROTO_SAMPLE_NNODES (2). */
#define NODE_RANGE(node) "node " node " is not on this machine: nodes 0-1"

static void test_query_rules(void **state)
{
	struct proto_msg base = sample(RTPLACE_MSG_QUERY, 0), m;

	m = base;
	m.query.prio = 0;
	REFUSED(&m, &lim_server, -ERANGE, "prio out of range 1..99");
	m.query.prio = 100;
	REFUSED(&m, &lim_server, -ERANGE, "prio out of range 1..99");
	m.query.prio = 1;
	ACCEPTED(&m, &lim_server);
	m.query.prio = 99;
	ACCEPTED(&m, &lim_server);

	m = base;
	m.query.policy = 0;
	REFUSED(&m, &lim_server, -EINVAL, "policy must be fifo or rr");
	m.query.policy = 3;
	REFUSED(&m, &lim_server, -EINVAL, "policy must be fifo or rr");
	m.query.policy = RTPLACE_POLICY_RR;
	ACCEPTED(&m, &lim_server);

	m = base;
	m.query.count = 0;
	REFUSED(&m, &lim_server, -ERANGE, "count out of range 1..256");
	m.query.count = RTPLACE_QUERY_MAX_COUNT + 1;
	REFUSED(&m, NULL, -ERANGE, "count out of range 1..256");
	m.query.count = PROTO_SAMPLE_NCPUS + 1;
	REFUSED(&m, &lim_server, -ERANGE, "count exceeds the CPUs");
	m.query.count = PROTO_SAMPLE_NCPUS;
	ACCEPTED(&m, &lim_server);
	m.query.count = RTPLACE_QUERY_MAX_COUNT;
	ACCEPTED(&m, NULL);

	m = base;
	m.query.flags = RTPLACE_QUERY_F_NORMAL;
	ACCEPTED(&m, &lim_server);
	m.query.flags = 1u << 6;
	REFUSED(&m, &lim_server, -EINVAL, "unknown query flags");
	m.query.flags = RTPLACE_QUERY_F_ISOLATE_TRY;
	REFUSED(&m, &lim_server, -EINVAL, "isolate-if-possible without isolate flag");
	m.query.flags = 1u << 31;
	REFUSED(&m, &lim_server, -EINVAL, "unknown query flags");

	m = base;
	m.query.node = -2;
	REFUSED(&m, &lim_server, -ERANGE, NODE_RANGE("-2"));
	m.query.node = PROTO_SAMPLE_NNODES;
	REFUSED(&m, &lim_server, -ERANGE, NODE_RANGE("2"));
	m.query.node = PROTO_SAMPLE_NNODES - 1;
	ACCEPTED(&m, &lim_server);

	m = base;
	m.query.near_cpu = -2;
	REFUSED(&m, &lim_server, -ERANGE, "near CPU -2 is not on this machine: CPUs 0-15");
	m.query.near_cpu = PROTO_SAMPLE_NCPUS;
	REFUSED(&m, &lim_server, -ERANGE, "near CPU 16 is not on this machine: CPUs 0-15");
	m.query.near_cpu = PROTO_SAMPLE_NCPUS - 1;
	ACCEPTED(&m, &lim_server);

	/* CPU ids are checked against the topology passed in, at every word */
	for (unsigned cpu = PROTO_SAMPLE_NCPUS; cpu < RTPLACE_MAX_CPUS; cpu += 61) {
		m = base;
		char want[64];

		rtplace_cpumask_set(&m.query.allowed, cpu);
		snprintf(want, sizeof(want), "CPU %u is not on this machine: CPUs 0-15", cpu);
		REFUSED(&m, &lim_server, -ERANGE, want);
		ACCEPTED(&m, NULL);
	}
	m = base;
	rtplace_cpumask_set(&m.query.allowed, PROTO_SAMPLE_NCPUS - 1);
	ACCEPTED(&m, &lim_server);
	{
		struct proto_limits lim64 = { .ncpus = 64, .nnodes = 1, .accept = PROTO_ACCEPT_REQUESTS };

		rtplace_cpumask_set(&m.query.allowed, 63);
		ACCEPTED(&m, &lim64);
		rtplace_cpumask_set(&m.query.allowed, 64);
		REFUSED(&m, &lim64, -ERANGE, "CPU 64 is not on this machine: CPUs 0-63");
		rtplace_cpumask_set(&m.query.allowed, 65);
		rtplace_cpumask_set(&m.query.allowed, 900);
		REFUSED(&m, &lim64, -ERANGE, "CPUs 64-65,900 are not on this machine: CPUs 0-63");
		/* a list longer than a reason: its ends and its count */
		for (unsigned cpu = 100; cpu < 400; cpu += 2)
			rtplace_cpumask_set(&m.query.allowed, cpu);
		REFUSED(&m, &lim64, -ERANGE, "153 CPUs from 64 to 900 are not on this machine: CPUs 0-63");
	}
	{
		/* a machine of one node and one CPU: "only", not a range */
		struct proto_limits lim1 = { .ncpus = 1, .nnodes = 1, .accept = PROTO_ACCEPT_REQUESTS };

		m = base;
		m.query.count = 1;
		m.query.node = 1;
		REFUSED(&m, &lim1, -ERANGE, "node 1 is not on this machine: it has node 0 only");
		m.query.node = -1;
		m.query.near_cpu = 3;
		REFUSED(&m, &lim1, -ERANGE, "near CPU 3 is not on this machine: it has CPU 0 only");
		m.query.near_cpu = -1;
		rtplace_cpumask_set(&m.query.allowed, 1);
		REFUSED(&m, &lim1, -ERANGE, "CPU 1 is not on this machine: it has CPU 0 only");
	}
	{
		/* without a machine's limits, the protocol's range */
		char want[96];

		m = base;
		m.query.node = RTPLACE_MAX_CPUS;
		snprintf(want, sizeof(want), "node %u is out of range: node ids are 0 to %u", RTPLACE_MAX_CPUS,
			 RTPLACE_MAX_CPUS - 1);
		REFUSED(&m, NULL, -ERANGE, want);
		m.query.node = -1;
		m.query.near_cpu = RTPLACE_MAX_CPUS;
		snprintf(want, sizeof(want), "near CPU %u is out of range: CPU ids are 0 to %u", RTPLACE_MAX_CPUS,
			 RTPLACE_MAX_CPUS - 1);
		REFUSED(&m, NULL, -ERANGE, want);
	}

	m = base;
	m.query.lease_ms = 100;
	REFUSED(&m, &lim_server, -EINVAL, "lease without claim flag");
	m = base;
	m.query.owner_pid = 10;
	REFUSED(&m, &lim_server, -EINVAL, "owner pid without claim flag");
	m.query.owner_pid = -1;
	m.query.flags = RTPLACE_QUERY_F_CLAIM;
	REFUSED(&m, &lim_server, -ERANGE, "owner pid out of range");
	m = base;
	m.query.flags = RTPLACE_QUERY_F_EXCLUSIVE;
	REFUSED(&m, &lim_server, -EINVAL, "exclusive without claim flag");
	m.query.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE;
	REFUSED(&m, &lim_server, -EINVAL, "manage without owner pid");
	m.query.owner_pid = 99;
	ACCEPTED(&m, &lim_server);
	m.query.lease_ms = RTPLACE_LEASE_INFINITE;
	ACCEPTED(&m, &lim_server);

	/* Isolation: of an exclusive claim, by a daemon that isolates. */
	m.query.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_ISOLATE;
	REFUSED(&m, &lim_server, -EINVAL, "isolate without exclusive flag");
	m.query.flags = RTPLACE_QUERY_F_ISOLATE;
	m.query.owner_pid = 0;
	m.query.lease_ms = 0;
	REFUSED(&m, &lim_server, -EINVAL, "isolate without exclusive flag");
	m.query.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_EXCLUSIVE | RTPLACE_QUERY_F_ISOLATE;
	REFUSED(&m, &lim_server, -EOPNOTSUPP, "this daemon isolates nothing ([isolation] in rtplaced.conf turns it on)");
	ACCEPTED(&m, &lim_isolating);
	ACCEPTED(&m, NULL);
}

static void test_request_rules(void **state)
{
	struct proto_msg m;

	m = sample(RTPLACE_MSG_RELEASE, 0);
	m.release.claim_id = 0;
	REFUSED(&m, &lim_server, -EINVAL, "claim id is 0");

	m = sample(RTPLACE_MSG_CPUS, 0);
	m.cpus.first = PROTO_SAMPLE_NCPUS;
	REFUSED(&m, &lim_server, -ERANGE, "first cpu out of range");
	m.cpus.first = PROTO_SAMPLE_NCPUS - 1;
	ACCEPTED(&m, &lim_server);
	m.cpus.flags = RTPLACE_CPUS_F_PACKAGE;
	ACCEPTED(&m, &lim_server);
	m.cpus.flags = RTPLACE_CPUS_F_PACKAGE | RTPLACE_CPUS_F_HOST;
	ACCEPTED(&m, &lim_server);
	/* what a daemon older than the flag says, and the client's cue */
	m.cpus.flags = RTPLACE_CPUS_F_HOST << 1;
	REFUSED(&m, &lim_server, -EINVAL, "reserved field not zero");
	m = sample(RTPLACE_MSG_CPU_TIMES, 0);
	m.cpus.flags = RTPLACE_CPUS_F_PACKAGE;
	REFUSED(&m, &lim_server, -EINVAL, "reserved field not zero");
	m.cpus.flags = RTPLACE_CPUS_F_HOST;
	REFUSED(&m, &lim_server, -EINVAL, "reserved field not zero");
	/* the daemon takes HOST, a client does not */
	m = sample(RTPLACE_MSG_HOST, 0);
	ACCEPTED(&m, &lim_server);
	REFUSED(&m, &lim_client, -EOPNOTSUPP, "message type not accepted here");

	m = sample(RTPLACE_MSG_MOVE, 0);
	m.move.tid = 0;
	REFUSED(&m, &lim_server, -ERANGE, "tid out of range");
	m.move.tid = -5;
	REFUSED(&m, &lim_server, -ERANGE, "tid out of range");
	m = sample(RTPLACE_MSG_MOVE, 0);
	m.move.flags |= 1u << 6;
	REFUSED(&m, &lim_server, -EINVAL, "unknown move flags");
	m.move.flags = RTPLACE_MOVE_F_FORCE;
	REFUSED(&m, &lim_server, -EINVAL, "move changes nothing");
	m = sample(RTPLACE_MSG_MOVE, 1);
	m.move.flags |= RTPLACE_MOVE_F_SYSTEM | RTPLACE_MOVE_F_PROCESS;
	ACCEPTED(&m, &lim_server);
	m.move.flags |= RTPLACE_MOVE_F_PLACE;
	REFUSED(&m, &lim_server, -EINVAL, "place moves one thread, not a process");
	m = sample(RTPLACE_MSG_MOVE, 0);
	m.move.reserved[5] = 1;
	REFUSED(&m, &lim_server, -EINVAL, "reserved field not zero");
	m = sample(RTPLACE_MSG_MOVE, 0);
	m.move.prio = 10;
	REFUSED(&m, &lim_server, -EINVAL, "policy without set-sched flag");
	m = sample(RTPLACE_MSG_MOVE, 1);
	m.move.policy = RTPLACE_POLICY_OTHER;
	REFUSED(&m, &lim_server, -EINVAL, "policy must be fifo or rr");
	m = sample(RTPLACE_MSG_MOVE, 1);
	m.move.prio = 0;
	REFUSED(&m, &lim_server, -ERANGE, "prio out of range 1..99");
	m.move.prio = 100;
	REFUSED(&m, &lim_server, -ERANGE, "prio out of range 1..99");
	m = sample(RTPLACE_MSG_MOVE, 0);
	memset(&m.move.cpus, 0, sizeof(m.move.cpus));
	REFUSED(&m, &lim_server, -EINVAL, "empty cpu mask");
	rtplace_cpumask_set(&m.move.cpus, PROTO_SAMPLE_NCPUS);
	REFUSED(&m, &lim_server, -ERANGE, "CPU 16 is not on this machine: CPUs 0-15");
	m = sample(RTPLACE_MSG_MOVE, 2);
	ACCEPTED(&m, &lim_server);
	rtplace_cpumask_set(&m.move.cpus, 0);
	REFUSED(&m, &lim_server, -EINVAL, "cpus without set-affinity flag");
	m = sample(RTPLACE_MSG_MOVE, 2);
	m.move.flags |= RTPLACE_MOVE_F_PLACE;
	REFUSED(&m, &lim_server, -EINVAL, "place without set-affinity flag");

	m = sample(RTPLACE_MSG_SUBSCRIBE, 0);
	m.subscribe.flags = 1;
	REFUSED(&m, &lim_server, -EINVAL, "unknown subscribe flags");
	m = sample(RTPLACE_MSG_SUBSCRIBE, 0);
	m.subscribe.reserved = 1;
	REFUSED(&m, &lim_server, -EINVAL, "reserved field not zero");
}

static void test_string_rules(void **state)
{
	struct proto_msg m;

	m = sample(RTPLACE_MSG_ERROR, 0);
	memset(m.error.reason, 0, sizeof(m.error.reason));
	REFUSED(&m, &lim_client, -EINVAL, "bad reason string");
	m = sample(RTPLACE_MSG_ERROR, 0);
	m.error.reserved[2] = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	m = sample(RTPLACE_MSG_ERROR, 0);
	m.error.request_type = 0x0177; /* any value: it echoes what the client sent */
	ACCEPTED(&m, &lim_client);

	m = sample(RTPLACE_MSG_STATUS_REPLY, 0);
	memset(m.status_reply.version, 0, sizeof(m.status_reply.version));
	REFUSED(&m, &lim_client, -EINVAL, "bad version string");

	m = sample(RTPLACE_MSG_CPUS_REPLY, 0);
	memset(m.cpus_reply.cpus[2].comm, 'x', RTPLACE_COMM_MAX);
	REFUSED(&m, &lim_client, -EINVAL, "bad comm string");
}

/* Decodes the wire message w (len bytes) and returns its reason. */
static const char *reason_read(const struct proto_msg *w, size_t len)
{
	static struct proto_msg out;

	assert_int_equal(decode_bytes(w, len, &lim_client, &out, NULL), 0);
	if (out.hdr.type == RTPLACE_MSG_TRACKING_REPLY)
		return out.tracking_reply.why;
	return out.hdr.type == RTPLACE_MSG_ERROR ? out.error.reason : out.query_reply.reason;
}

/*
 * A reason of up to RTPLACE_REASON_MAX - 1 characters crosses version 3
 * whole, as its characters and one NUL at the end of the message; to
 * versions 1 and 2 it is cut to its field (RTPLACE_REASON_V2_MAX bytes,
 * RTPLACE_TRACKING_WHY_MAX for TRACKING_REPLY's why). Every other form of
 * it is refused.
 */
static void test_reason_lengths(void **state)
{
	static struct proto_msg m, w;
	char longest[RTPLACE_REASON_MAX], cut[RTPLACE_REASON_V2_MAX];
	const size_t at = sizeof(m.hdr) + offsetof(struct rtplace_error, reason);

	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	memcpy(cut, longest, sizeof(cut) - 1);
	cut[sizeof(cut) - 1] = '\0';

	/* built, encoded and decoded whole, a longer one cut to the longest */
	assert_int_equal(proto_encode_error(&m, 7, RTPLACE_MSG_QUERY, -EINVAL, longest), 0);
	assert_int_equal(m.hdr.length, at + RTPLACE_REASON_MAX);
	assert_string_equal(reason_read(&m, m.hdr.length), longest);
	w = m;
	assert_int_equal(proto_msg_finish(&w, 2), 0);
	assert_int_equal(w.hdr.length, at + RTPLACE_REASON_V2_MAX);
	assert_string_equal(reason_read(&w, w.hdr.length), cut);
	w = m;
	assert_int_equal(proto_msg_finish(&w, 1), 0);
	assert_int_equal(w.hdr.length, proto_msg_length(RTPLACE_MSG_ERROR));
	assert_string_equal(reason_read(&w, w.hdr.length), cut);
	/* back to version 3 from the cut form: what version 2 carried */
	assert_int_equal(proto_msg_finish(&w, 3), 0);
	assert_int_equal(w.hdr.length, at + RTPLACE_REASON_V2_MAX);
	assert_int_equal(proto_encode_error(&m, 7, 0, -EPROTO, "x"), 0);
	assert_int_equal(m.hdr.length, at + 2);

	/* version 3: no NUL, or one before the end, or more after it */
	assert_int_equal(proto_encode_error(&m, 7, RTPLACE_MSG_QUERY, -EINVAL, longest), 0);
	w = m;
	((char *)&w)[w.hdr.length - 1] = 'a';
	check_refused(&w, w.hdr.length, &lim_client, -EINVAL, "bad reason string", __LINE__);
	w = m;
	((char *)&w)[at + 10] = '\0';
	check_refused(&w, w.hdr.length, &lim_client, -EINVAL, "bad reason string", __LINE__);
	/* past the longest reason is no length of the type */
	w = m;
	((char *)&w)[w.hdr.length - 1] = 'a';
	((char *)&w)[w.hdr.length] = '\0';
	w.hdr.length++;
	check_refused(&w, w.hdr.length, &lim_client, -EPROTO, "wrong length for the message type", __LINE__);
	/* an empty ERROR reason, one NUL, is refused by the ERROR's rules */
	w = m;
	((char *)&w)[at] = '\0';
	w.hdr.length = (uint32_t)at + 1;
	check_refused(&w, w.hdr.length, &lim_client, -EINVAL, "bad reason string", __LINE__);

	/* versions 1 and 2: the field holds a NUL, and zeros after it */
	w = m;
	assert_int_equal(proto_msg_finish(&w, 2), 0);
	memset((char *)&w + at, 'a', RTPLACE_REASON_V2_MAX);
	check_refused(&w, w.hdr.length, &lim_client, -EINVAL, "bad reason string", __LINE__);
	((char *)&w)[at + 10] = '\0';
	((char *)&w)[at + RTPLACE_REASON_V2_MAX - 1] = '\0';
	check_refused(&w, w.hdr.length, &lim_client, -EINVAL, "bad reason string", __LINE__);

	/* a QUERY_REPLY's reason follows its list in version 3, and precedes
	 * the mask and the list in versions 1 and 2, cut */
	assert_int_equal(proto_msg_init(&m, RTPLACE_MSG_QUERY_REPLY, 9), 0);
	assert_int_equal(proto_query_reply_add(&m.query_reply, 3, RTPLACE_LEVEL_IDLE), 0);
	assert_int_equal(proto_query_reply_add(&m.query_reply, 1, RTPLACE_LEVEL_NORMAL), 0);
	proto_set_string(m.query_reply.reason, sizeof(m.query_reply.reason), longest);
	w = m;
	assert_int_equal(proto_msg_finish(&w, 3), 0);
	assert_int_equal(w.hdr.length, sizeof(w.hdr) + 16 + 2 * 4 + RTPLACE_REASON_MAX);
	assert_memory_equal((char *)&w + sizeof(w.hdr) + 16 + 2 * 4, longest, RTPLACE_REASON_MAX);
	assert_string_equal(reason_read(&w, w.hdr.length), longest);
	for (uint16_t v = 1; v <= 2; v++) {
		static struct proto_msg out;

		w = m;
		assert_int_equal(proto_msg_finish(&w, v), 0);
		assert_memory_equal((char *)&w + sizeof(w.hdr) + 16, cut, sizeof(cut));
		assert_int_equal(decode_bytes(&w, w.hdr.length, &lim_client, &out, NULL), 0);
		assert_string_equal(out.query_reply.reason, cut);
		assert_int_equal(out.query_reply.count, 2);
		assert_int_equal(out.query_reply.list[1].cpu, 1);
		/* and back, byte for byte */
		assert_int_equal(proto_msg_finish(&out, v), 0);
		assert_memory_equal(&out, &w, w.hdr.length);
	}

	/* TRACKING_REPLY's why: whole in version 3, its 256 bytes before */
	assert_int_equal(proto_msg_init(&m, RTPLACE_MSG_TRACKING_REPLY, 9), 0);
	m.tracking_reply.mode = RTPLACE_TRACKING_SAMPLED;
	m.tracking_reply.interval_ms = 10;
	proto_set_string(m.tracking_reply.why, sizeof(m.tracking_reply.why), longest);
	w = m;
	assert_int_equal(proto_msg_finish(&w, 3), 0);
	assert_int_equal(w.hdr.length, sizeof(w.hdr) + 32 + RTPLACE_REASON_MAX);
	assert_string_equal(reason_read(&w, w.hdr.length), longest);
	w = m;
	assert_int_equal(proto_msg_finish(&w, 2), 0);
	assert_int_equal(w.hdr.length, sizeof(w.hdr) + 32 + RTPLACE_TRACKING_WHY_MAX);
	assert_int_equal(strlen(reason_read(&w, w.hdr.length)), RTPLACE_TRACKING_WHY_MAX - 1);
}

static void test_query_reply_rules(void **state)
{
	struct proto_msg base = sample_v1(RTPLACE_MSG_QUERY_REPLY, 0), empty = sample_v1(RTPLACE_MSG_QUERY_REPLY, 1);
	struct proto_msg m;

	assert_int_equal(base.query_reply.count, 2);
	assert_int_equal(base.query_reply.level, RTPLACE_LEVEL_NORMAL);
	ACCEPTED(&empty, &lim_client);

	m = base;
	m.query_reply.list[1].cpu = m.query_reply.list[0].cpu;
	REFUSED(&m, &lim_client, -EINVAL, "cpu listed twice");
	m = base;
	m.query_reply.list[1].cpu = PROTO_SAMPLE_NCPUS;
	REFUSED(&m, &lim_client, -ERANGE, "cpu out of range");
	m = base;
	m.query_reply.list[1].level = RTPLACE_LEVEL_COUNT;
	REFUSED(&m, &lim_client, -ERANGE, "level out of range");
	m = base;
	m.query_reply.list[0].reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	m = base;
	m.query_reply.list[2].cpu = 9;
	REFUSED(&m, &lim_client, -EINVAL, "entries past count not zero");
	/* version 1's mask before the list, CPU 9 added: bit 1 of its byte 1 */
	m = *wire_of(&base);
	((unsigned char *)&m)[sizeof(m.hdr) + offsetof(struct rtplace_query_reply, reason) + RTPLACE_REASON_V2_MAX + 1] |=
		2;
	check_refused(&m, m.hdr.length, &lim_client, -EINVAL, "cpu mask does not match the list", __LINE__);
	m = base;
	m.query_reply.level = RTPLACE_LEVEL_IDLE;
	REFUSED(&m, &lim_client, -EINVAL, "level is not the highest listed");
	m = base;
	m.query_reply.count = RTPLACE_QUERY_MAX_COUNT + 1;
	REFUSED(&m, &lim_client, -ERANGE, "count out of range 0..256");
	m = base;
	m.query_reply.reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	m = base;
	m.query_reply.lease_ms = 0;
	REFUSED(&m, &lim_client, -EINVAL, "claim id and lease disagree");
	m = base;
	proto_set_string(m.query_reply.reason, sizeof(m.query_reply.reason), "only 2 of 4");
	ACCEPTED(&m, &lim_client);

	m = empty;
	memset(m.query_reply.reason, 0, sizeof(m.query_reply.reason));
	REFUSED(&m, &lim_client, -EINVAL, "bad reason string");
	m = empty;
	m.query_reply.claim_id = 1;
	m.query_reply.lease_ms = 1;
	REFUSED(&m, &lim_client, -EINVAL, "claim on an empty answer");
	m = empty;
	m.query_reply.level = RTPLACE_LEVEL_IDLE;
	REFUSED(&m, &lim_client, -EINVAL, "level is not the highest listed");
}

/*
 * The paging rules both per-CPU replies share (total, first, count,
 * reserved at the same offsets: written here through cpus_reply for
 * either type). Returns the shape-0 sample, accepted.
 */
static struct proto_msg check_page_rules(uint16_t type)
{
	static struct proto_msg base, m;
	struct proto_limits lim480 = { .ncpus = 480, .nnodes = 2, .accept = PROTO_ACCEPT_REPLIES };

	_Static_assert(offsetof(struct rtplace_cpus_reply, reserved) ==
			       offsetof(struct rtplace_cpu_times_reply, reserved),
		       "both replies page alike");
	base = sample_v1(type, 0);
	ACCEPTED(&base, &lim_client);
	m = sample_v1(type, 1);
	ACCEPTED(&m, &lim480);
	assert_int_equal(m.cpus_reply.count, 480 - 384);
	m.cpus_reply.total = 481;
	REFUSED(&m, &lim480, -ERANGE, "total out of range");

	m = base;
	m.cpus_reply.total = 0;
	REFUSED(&m, &lim_client, -ERANGE, "total out of range");
	m = base;
	m.cpus_reply.first = PROTO_SAMPLE_NCPUS;
	REFUSED(&m, &lim_client, -ERANGE, "first cpu out of range");
	m = base;
	m.cpus_reply.count--;
	REFUSED(&m, &lim_client, -EINVAL, "count does not fill the page");
	m = base;
	m.cpus_reply.reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	return base;
}

static void test_cpu_times_reply_rules(void **state)
{
	static struct proto_msg base, m;

	base = check_page_rules(RTPLACE_MSG_CPU_TIMES_REPLY);
	m = base;
	m.cpu_times_reply.cpus[PROTO_SAMPLE_NCPUS].ns[RTPLACE_CLASS_RT] = 1;
	REFUSED(&m, &lim_client, -EINVAL, "entries past count not zero");
	/* the daemon takes the request, a client does not */
	m = sample(RTPLACE_MSG_CPU_TIMES, 0);
	ACCEPTED(&m, &lim_server);
	REFUSED(&m, &lim_client, -EOPNOTSUPP, "message type not accepted here");
	m.cpus.first = PROTO_SAMPLE_NCPUS;
	REFUSED(&m, &lim_server, -ERANGE, "first cpu out of range");
}

static void test_cpus_reply_rules(void **state)
{
	static struct proto_msg base, m;

	base = check_page_rules(RTPLACE_MSG_CPUS_REPLY);
	m = base;
	m.cpus_reply.cpus[3].cpu = 4;
	REFUSED(&m, &lim_client, -EINVAL, "cpu entry out of order");
	m = base;
	m.cpus_reply.cpus[3].level = RTPLACE_LEVEL_COUNT;
	REFUSED(&m, &lim_client, -ERANGE, "level out of range");
	m = base;
	m.cpus_reply.cpus[3].flags |= RTPLACE_CPU_F_ISOLATED | RTPLACE_CPU_F_NOHZ_FULL;
	ACCEPTED(&m, &lim_client);
	m.cpus_reply.cpus[3].flags = RTPLACE_CPU_F_ONLINE | 1u << 5;
	REFUSED(&m, &lim_client, -EINVAL, "unknown cpu flags");
	m = base;
	m.cpus_reply.cpus[3].flags = 0;
	REFUSED(&m, &lim_client, -EINVAL, "offline cpu with a level");
	m = base;
	m.cpus_reply.cpus[3].node = PROTO_SAMPLE_NNODES;
	REFUSED(&m, &lim_client, -ERANGE, "node out of range");
	m = base;
	m.cpus_reply.cpus[3].core = -2;
	REFUSED(&m, &lim_client, -ERANGE, "topology id out of range");
	m = base;
	m.cpus_reply.cpus[3].package = -2;
	REFUSED(&m, &lim_client, -ERANGE, "topology id out of range");
	m.cpus_reply.cpus[3].package = -1;
	ACCEPTED(&m, &lim_client);
	m = base;
	m.cpus_reply.cpus[3].pid = -1;
	REFUSED(&m, &lim_client, -ERANGE, "pid out of range");
	m = base;
	m.cpus_reply.cpus[3].claim_id = 5;
	REFUSED(&m, &lim_client, -EINVAL, "claim id and level disagree");
	m = base;
	m.cpus_reply.cpus[2].claim_id = 0;
	REFUSED(&m, &lim_client, -EINVAL, "claim id and level disagree");
	m = base;
	m.cpus_reply.cpus[3].reserved[0] = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	m = base;
	m.cpus_reply.cpus[PROTO_SAMPLE_NCPUS].cpu = PROTO_SAMPLE_NCPUS;
	REFUSED(&m, &lim_client, -EINVAL, "entries past count not zero");
	/* Fields of version 3 alone. */
	m = sample(RTPLACE_MSG_CPUS_REPLY, 0);
	m.cpus_reply.cpus[3].reserved3 = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	m = sample(RTPLACE_MSG_CPUS_REPLY, 0);
	m.cpus_reply.cpus[3].softirq_share = RTPLACE_SHARE_ONE + 1;
	REFUSED(&m, &lim_client, -ERANGE, "interrupt share out of range");
}

/* The interrupt shares end each CPUS entry in version 3; versions 1 and 2
 * send the entries without them, as before. */
static void test_cpus_reply_shares(void **state)
{
	static struct proto_msg base, m, out;
	struct proto_error err = { 0 };
	size_t v3_len;

	(void)state;
	base = sample(RTPLACE_MSG_CPUS_REPLY, 0);
	for (uint32_t i = 0; i < base.cpus_reply.count; i++) {
		base.cpus_reply.cpus[i].irq_share = (uint16_t)(i + 1);
		base.cpus_reply.cpus[i].softirq_share = (uint16_t)(RTPLACE_SHARE_ONE - i);
	}
	m = base;
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), 0);
	v3_len = m.hdr.length;
	assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_client, &out, &err), 0);
	assert_memory_equal(&out.cpus_reply, &base.cpus_reply, sizeof(base.cpus_reply));
	for (uint16_t v = 1; v < 3; v++) {
		m = base;
		assert_int_equal(proto_msg_finish(&m, v), 0);
		assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_client, &out, &err), 0);
		for (uint32_t i = 0; i < base.cpus_reply.count; i++) {
			struct rtplace_cpu_info want = base.cpus_reply.cpus[i];

			want.irq_share = want.softirq_share = 0;
			assert_memory_equal(&out.cpus_reply.cpus[i], &want, sizeof(want));
		}
		if (v == 2)
			assert_int_equal(v3_len - m.hdr.length,
					 base.cpus_reply.count * (sizeof(struct rtplace_cpu_info) -
								  offsetof(struct rtplace_cpu_info, irq_share)));
		/* Packed in one version, repacked in the other. */
		assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), 0);
		assert_int_equal(decode_bytes(&m, m.hdr.length, &lim_client, &out, &err), 0);
		assert_int_equal(out.cpus_reply.cpus[1].irq_share, 0);
		assert_int_equal(out.cpus_reply.cpus[1].cpu, base.cpus_reply.cpus[1].cpu);
	}
}

/*
 * From version 2 a list reply ends after its count-th entry: its length
 * follows the count, a count the length does not match is garbage, and it
 * decodes to the version-1 message's body.
 */
static void test_list_reply_lengths(void **state)
{
	static const struct {
		uint16_t type;
		size_t list_offset, entry_size;
	} lists[] = {
		/* version 3's offset: no mask, nor reason, before the list */
		{ RTPLACE_MSG_QUERY_REPLY, offsetof(struct rtplace_query_reply, reason), sizeof(struct rtplace_cpu_choice) },
		{ RTPLACE_MSG_CPUS_REPLY, offsetof(struct rtplace_cpus_reply, cpus), sizeof(struct rtplace_cpu_info) },
		{ RTPLACE_MSG_CPU_TIMES_REPLY, offsetof(struct rtplace_cpu_times_reply, cpus),
		  sizeof(struct rtplace_class_times) },
	};
	static struct proto_msg m, v1, v2, out, out1;

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		for (unsigned shape = 0; proto_sample(lists[i].type, shape, &m) == 0; shape++) {
			uint32_t count = lists[i].type == RTPLACE_MSG_QUERY_REPLY ? m.query_reply.count
										   : m.cpus_reply.count;
			bool tail = lists[i].type == RTPLACE_MSG_QUERY_REPLY;
			size_t len;

			assert_int_equal(decode_bytes(&m, m.hdr.length, NULL, &out, NULL), 0);
			/* and the reason that ends version 3's QUERY_REPLY */
			len = sizeof(m.hdr) + lists[i].list_offset + count * lists[i].entry_size +
			      (tail ? strlen(out.query_reply.reason) + 1 : 0);
			assert_int_equal(m.hdr.length, len);
			v1 = m;
			if (proto_msg_finish(&v1, 1) == -ERANGE)
				continue; /* a CPU past 1023: test_roundtrip */
			assert_int_equal(decode_bytes(&v1, v1.hdr.length, NULL, &out1, NULL), 0);
			assert_int_equal(proto_msg_finish(&out1, RTPLACE_PROTO_VERSION), 0);
			assert_memory_equal(&out1, &m, len);
			v1 = m;
			assert_int_equal(proto_msg_finish(&v1, 1), 0);

			/* the version-1 length (unless the list is full), or one entry
			 * more or less, under version 2 */
			v1.hdr.version = 2;
			v2 = m;
			assert_int_equal(proto_msg_finish(&v2, 2), 0);
			if (v1.hdr.length != v2.hdr.length)
				check_refused(&v1, v1.hdr.length, NULL, -EPROTO, "wrong length for the message type",
					      __LINE__);
			if (tail)
				continue; /* a length off by an entry is a reason's: test_reason_lengths */
			v1 = m;
			v1.hdr.length = (uint32_t)(len + lists[i].entry_size);
			if (v1.hdr.length <= proto_msg_length(lists[i].type))
				check_refused(&v1, v1.hdr.length, NULL, -EPROTO, "wrong length for the message type",
					      __LINE__);
			if (count) {
				v1.hdr.length = (uint32_t)(len - lists[i].entry_size);
				check_refused(&v1, v1.hdr.length, NULL, -EPROTO, "wrong length for the message type",
					      __LINE__);
			}
			/* too short to hold the count */
			v1.hdr.length = (uint32_t)(sizeof(m.hdr) + lists[i].list_offset - 1);
			check_refused(&v1, v1.hdr.length, NULL, -EPROTO, "wrong length for the message type", __LINE__);
		}
	}

	/* a count beyond the list is no length at all */
	m = sample(RTPLACE_MSG_QUERY_REPLY, 0);
	m.query_reply.count = RTPLACE_QUERY_MAX_COUNT + 1;
	assert_int_equal(proto_msg_length_for(&m), 0);
	m.hdr.length = (uint32_t)proto_msg_length(RTPLACE_MSG_QUERY_REPLY);
	check_refused(&m, m.hdr.length, NULL, -EPROTO, "wrong length for the message type", __LINE__);
	m = sample(RTPLACE_MSG_CPUS_REPLY, 0);
	m.cpus_reply.count = RTPLACE_CPUS_PAGE + 1;
	assert_int_equal(proto_msg_length_for(&m), 0);

	/* every other type without CPU sets is the same in every version
	 * (a reason ends ERROR and TRACKING_REPLY in version 3:
	 * test_reason_lengths) */
	for (size_t i = 0; i < proto_sample_ntypes; i++) {
		m = sample(proto_sample_types[i], 0);
		if (m.hdr.type == RTPLACE_MSG_ERROR || m.hdr.type == RTPLACE_MSG_TRACKING_REPLY ||
		    m.hdr.type == RTPLACE_MSG_QUERY_REPLY || m.hdr.type == RTPLACE_MSG_CPUS_REPLY ||
		    m.hdr.type == RTPLACE_MSG_CPU_TIMES_REPLY || m.hdr.type == RTPLACE_MSG_QUERY ||
		    m.hdr.type == RTPLACE_MSG_MOVE || m.hdr.type == RTPLACE_MSG_MOVE_REPLY ||
		    m.hdr.type == RTPLACE_MSG_CLAIM_REPLY || m.hdr.type == RTPLACE_MSG_EXPLAIN ||
		    m.hdr.type == RTPLACE_MSG_EXPLAIN_REPLY)
			continue;
		assert_int_equal(m.hdr.length, proto_msg_length(m.hdr.type));
	}
	/* a claim on CPUs 2-3: one word of its set in version 3, 16 before */
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	assert_int_equal(proto_msg_length_for(&m), 80);
	m.hdr.version = 2;
	assert_int_equal(proto_msg_length_for(&m), 200);
	/* a one-CPU answer with placement's usual reason: 76 bytes in
	 * version 3, 236 in 2, 1,256 in 1 */
	assert_int_equal(proto_msg_init(&m, RTPLACE_MSG_QUERY_REPLY, 1), 0);
	assert_int_equal(proto_query_reply_add(&m.query_reply, 0, RTPLACE_LEVEL_IDLE), 0);
	proto_set_string(m.query_reply.reason, sizeof(m.query_reply.reason), "lowest level in the allowed set");
	assert_int_equal(proto_msg_length_for(&m), 76);
	m.hdr.version = 2;
	assert_int_equal(proto_msg_length_for(&m), 236);
	m.hdr.version = 1;
	assert_int_equal(proto_msg_length_for(&m), 1256);
}

static void test_other_reply_rules(void **state)
{
	struct proto_msg m;

	m = sample(RTPLACE_MSG_RELEASE_REPLY, 0);
	m.release_reply.claim_id = 0;
	REFUSED(&m, &lim_client, -EINVAL, "claim id is 0");
	m = sample(RTPLACE_MSG_RELEASE_REPLY, 0);
	m.release_reply.ncpus = PROTO_SAMPLE_NCPUS + 1;
	REFUSED(&m, &lim_client, -ERANGE, "cpu count out of range");
	m = sample(RTPLACE_MSG_RELEASE_REPLY, 0);
	m.release_reply.reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");

	m = sample(RTPLACE_MSG_STATUS_REPLY, 0);
	m.status_reply.ncpus = 0;
	REFUSED(&m, &lim_client, -ERANGE, "cpu count out of range");
	m.status_reply.ncpus = RTPLACE_MAX_CPUS + 1;
	REFUSED(&m, &lim_client, -ERANGE, "cpu count out of range");
	m = sample(RTPLACE_MSG_STATUS_REPLY, 0);
	m.status_reply.nllcs = m.status_reply.ncpus + 1;
	REFUSED(&m, &lim_client, -ERANGE, "topology counts exceed the CPUs");
	m = sample(RTPLACE_MSG_STATUS_REPLY, 0);
	m.status_reply.flags = 1u << 2;
	REFUSED(&m, &lim_client, -EINVAL, "unknown status flags");
	m = sample(RTPLACE_MSG_STATUS_REPLY, 0);
	m.status_reply.claims_active = m.status_reply.claims_total + 1;
	REFUSED(&m, &lim_client, -EINVAL, "more claims active than granted");

	m = sample(RTPLACE_MSG_TRACKING_REPLY, 0);
	m.tracking_reply.mode = RTPLACE_TRACKING_SAMPLED + 1;
	REFUSED(&m, &lim_client, -EINVAL, "unknown tracking mode");
	m = sample(RTPLACE_MSG_TRACKING_REPLY, 0);
	m.tracking_reply.interval_ms = 100;
	REFUSED(&m, &lim_client, -EINVAL, "interval without sampling, or sampling without one");
	m = sample(RTPLACE_MSG_TRACKING_REPLY, 1);
	m.tracking_reply.interval_ms = 0;
	REFUSED(&m, &lim_client, -EINVAL, "interval without sampling, or sampling without one");
	m = sample(RTPLACE_MSG_TRACKING_REPLY, 1);
	m.tracking_reply.failures = m.tracking_reply.samples + 1;
	REFUSED(&m, &lim_client, -EINVAL, "more failed samples than samples");
	m = sample(RTPLACE_MSG_TRACKING_REPLY, 0);
	m.tracking_reply.cpu_ns = 1;
	REFUSED(&m, &lim_client, -EINVAL, "sampler counters without sampling");
	m = sample(RTPLACE_MSG_TRACKING_REPLY, 1);
	memset(m.tracking_reply.why, 0, sizeof(m.tracking_reply.why));
	REFUSED(&m, &lim_client, -EINVAL, "bad why string");
	m = sample(RTPLACE_MSG_TRACKING_REPLY, 0);
	m.tracking_reply.why[0] = 'x';
	REFUSED(&m, &lim_client, -EINVAL, "why without sampling");

	m = sample(RTPLACE_MSG_LOCAL_REPLY, 0);
	ACCEPTED(&m, &lim_client);
	m.local_reply.reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "bad local reply");
	m = sample(RTPLACE_MSG_LOCAL_REPLY, 0);
	m.local_reply.snap_size = 0;
	REFUSED(&m, &lim_client, -EINVAL, "bad local reply");

	m = sample(RTPLACE_MSG_HOST_REPLY, 0);
	m.host_reply.flags |= 1u << 1;
	REFUSED(&m, &lim_client, -EINVAL, "unknown host flags");
	m = sample(RTPLACE_MSG_HOST_REPLY, 0);
	m.host_reply.reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "unknown host flags");
	m = sample(RTPLACE_MSG_HOST_REPLY, 2);
	m.host_reply.rt_period_us = 1000000;
	REFUSED(&m, &lim_client, -EINVAL, "RT throttling without RT_KNOWN");
	m = sample(RTPLACE_MSG_HOST_REPLY, 0);
	m.host_reply.rt_period_us = 0;
	REFUSED(&m, &lim_client, -ERANGE, "RT throttling out of range");
	m = sample(RTPLACE_MSG_HOST_REPLY, 0);
	m.host_reply.rt_runtime_us = -2;
	REFUSED(&m, &lim_client, -ERANGE, "RT throttling out of range");
	m = sample(RTPLACE_MSG_HOST_REPLY, 0);
	m.host_reply.rt_runtime_us = m.host_reply.rt_period_us + 1;
	REFUSED(&m, &lim_client, -ERANGE, "RT throttling out of range");
	m.host_reply.rt_runtime_us = m.host_reply.rt_period_us;
	ACCEPTED(&m, &lim_client);

	m = sample(RTPLACE_MSG_KERNEL_REPLY, 0);
	ACCEPTED(&m, &lim_client);
	m.kernel_reply.rt_group = 3;
	REFUSED(&m, &lim_client, -EINVAL, "unknown RT group scheduling");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 0);
	m.kernel_reply.rt_group_boot = 2;
	REFUSED(&m, &lim_client, -EINVAL, "unknown RT group scheduling");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 0);
	m.kernel_reply.rt_root_period_us = 0;
	REFUSED(&m, &lim_client, -ERANGE, "RT group budget out of range");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 1);
	m.kernel_reply.rt_folders = 1;
	REFUSED(&m, &lim_client, -ERANGE, "RT group budget out of range");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 0);
	m.kernel_reply.rt_budgetless = 41;
	REFUSED(&m, &lim_client, -EINVAL, "bad budgetless cgroups");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 0);
	m.kernel_reply.rt_first[sizeof(m.kernel_reply.rt_first) - 1] = 'x';
	REFUSED(&m, &lim_client, -EINVAL, "bad budgetless cgroups");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 1);
	m.kernel_reply.fair.runtime_min_ns = m.kernel_reply.fair.runtime_max_ns + 1;
	REFUSED(&m, &lim_client, -EINVAL, "bad deadline server");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 1);
	m.kernel_reply.fair.share_max_ppm = 1000001;
	REFUSED(&m, &lim_client, -EINVAL, "bad deadline server");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 0);
	m.kernel_reply.ext.ncpus = 1;
	REFUSED(&m, &lim_client, -EINVAL, "bad deadline server");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 2);
	m.kernel_reply.fair.why[0] = '\0';
	REFUSED(&m, &lim_client, -EINVAL, "bad deadline server");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 2);
	m.kernel_reply.fair.state = 3;
	REFUSED(&m, &lim_client, -EINVAL, "bad deadline server");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 2);
	memcpy(m.kernel_reply.scx_ops, "simple", 7);
	REFUSED(&m, &lim_client, -EINVAL, "bad sched_ext state");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 1);
	m.kernel_reply.scx_state = 6;
	REFUSED(&m, &lim_client, -EINVAL, "bad sched_ext state");
	m = sample(RTPLACE_MSG_KERNEL_REPLY, 1);
	m.kernel_reply.scx_enable_seq = -2;
	REFUSED(&m, &lim_client, -EINVAL, "bad sched_ext state");

	m = sample(RTPLACE_MSG_MOVE_REPLY, 0);
	m.move_reply.tid = 0;
	REFUSED(&m, &lim_client, -ERANGE, "tid out of range");
	m = sample(RTPLACE_MSG_MOVE_REPLY, 0);
	m.move_reply.prio = 0;
	REFUSED(&m, &lim_client, -EINVAL, "bad policy or prio");
	m = sample(RTPLACE_MSG_MOVE_REPLY, 0);
	m.move_reply.prev_prio = 5; /* OTHER has no RT priority */
	REFUSED(&m, &lim_client, -EINVAL, "bad policy or prio");
	m = sample(RTPLACE_MSG_MOVE_REPLY, 0);
	m.move_reply.policy = 7;
	REFUSED(&m, &lim_client, -EINVAL, "bad policy or prio");
	m = sample(RTPLACE_MSG_MOVE_REPLY, 0);
	memset(&m.move_reply.prev_cpus, 0, sizeof(m.move_reply.prev_cpus));
	REFUSED(&m, &lim_client, -EINVAL, "empty cpu mask");
	m = sample(RTPLACE_MSG_MOVE_REPLY, 0);
	rtplace_cpumask_set(&m.move_reply.cpus, PROTO_SAMPLE_NCPUS);
	REFUSED(&m, &lim_client, -ERANGE, "cpu out of range");

	m = sample(RTPLACE_MSG_SUBSCRIBE_REPLY, 0);
	m.subscribe_reply.ring_records = 1000;
	REFUSED(&m, &lim_client, -EINVAL, "ring size not a power of two");
	m.subscribe_reply.ring_records = 0;
	REFUSED(&m, &lim_client, -EINVAL, "ring size not a power of two");
	m = sample(RTPLACE_MSG_SUBSCRIBE_REPLY, 0);
	m.subscribe_reply.record_size = 48;
	REFUSED(&m, &lim_client, -EINVAL, "record size not 32 or 64");
	m = sample(RTPLACE_MSG_SUBSCRIBE_REPLY, 0);
	m.subscribe_reply.ring_bytes = 1024 * 32 - 1;
	REFUSED(&m, &lim_client, -EINVAL, "ring smaller than its records");

	m = sample(RTPLACE_MSG_CLAIM_ENDED, 0);
	m.claim_ended.claim_id = 0;
	REFUSED(&m, &lim_client, -EINVAL, "claim id is 0");
	m = sample(RTPLACE_MSG_CLAIM_ENDED, 0);
	m.claim_ended.why = 0;
	REFUSED(&m, &lim_client, -EINVAL, "unknown claim end");
	m.claim_ended.why = RTPLACE_CLAIM_ENDED_REVOKED + 1;
	REFUSED(&m, &lim_client, -EINVAL, "unknown claim end");
	m = sample(RTPLACE_MSG_CLAIM_ENDED, 0);
	m.claim_ended.reserved = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
}

/* A claim's reply: the flags say who may be told what, and the fields
 * they do not fill are zero; the end of the list is all zero. */
static void test_claim_reply_rules(void **state)
{
	struct proto_msg m;

	for (unsigned shape = 0; shape < 4; shape++) {
		m = sample(RTPLACE_MSG_CLAIM_REPLY, shape);
		ACCEPTED(&m, NULL);
	}
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	ACCEPTED(&m, &lim_client);
	m.claim_reply.flags |= 1u << 8;
	REFUSED(&m, &lim_client, -EINVAL, "unknown claim flags 0x100");
	/* Only an exclusive claim's CPUs are isolated. */
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	if (m.claim_reply.flags & RTPLACE_CLAIM_F_EXCLUSIVE) {
		m.claim_reply.flags |= RTPLACE_CLAIM_F_ISOLATED;
		ACCEPTED(&m, &lim_client);
		m.claim_reply.flags &= ~RTPLACE_CLAIM_F_EXCLUSIVE;
		m.claim_reply.level = RTPLACE_LEVEL_NORMAL;
	} else {
		m.claim_reply.flags |= RTPLACE_CLAIM_F_ISOLATED;
	}
	REFUSED(&m, &lim_client, -EINVAL, "an isolated claim that is not exclusive");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	m.claim_reply.flags |= RTPLACE_CLAIM_F_CONNECTION;
	REFUSED(&m, &lim_client, -EINVAL, "a claim ends with its owner process or its connection, one of them");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	m.claim_reply.flags |= RTPLACE_CLAIM_F_OTHER_USER;
	REFUSED(&m, &lim_client, -EINVAL, "a claim's user is either shown or another's, one of them");
	/* another user's claim never names its owner */
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 1);
	m.claim_reply.owner_uid = 1000;
	REFUSED(&m, &lim_client, -EINVAL, "owner uid without RTPLACE_CLAIM_F_UID");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 1);
	m.claim_reply.flags |= RTPLACE_CLAIM_F_PID;
	m.claim_reply.owner_pid = 4;
	REFUSED(&m, &lim_client, -EINVAL, "owner pid without its user or without an owner process");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 1);
	proto_set_string(m.claim_reply.owner_comm, sizeof(m.claim_reply.owner_comm), "sh");
	REFUSED(&m, &lim_client, -EINVAL, "bad owner comm");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	m.claim_reply.owner_pid = 0;
	REFUSED(&m, &lim_client, -EINVAL, "owner pid 0 does not match the claim flags");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	m.claim_reply.lease_left_ms = 5;
	REFUSED(&m, &lim_client, -EINVAL, "lease time without a lease");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	m.claim_reply.level = RTPLACE_LEVEL_IDLE;
	REFUSED(&m, &lim_client, -ERANGE, "claim level 1 out of range 2..102");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 1);
	m.claim_reply.level = RTPLACE_LEVEL_DL;
	REFUSED(&m, &lim_client, -EINVAL, "the exclusive flag and level 102 disagree");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	m.claim_reply.reserved[6] = 1;
	REFUSED(&m, &lim_client, -EINVAL, "reserved field not zero");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	memset(&m.claim_reply.cpus, 0, sizeof(m.claim_reply.cpus));
	REFUSED(&m, &lim_client, -EINVAL, "a claim without CPUs");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 0);
	rtplace_cpumask_set(&m.claim_reply.cpus, PROTO_SAMPLE_NCPUS);
	REFUSED(&m, &lim_client, -ERANGE, "claimed cpu out of range");
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 3);
	m.claim_reply.level = RTPLACE_LEVEL_NORMAL;
	REFUSED(&m, &lim_client, -EINVAL, "no claim, but claim fields set");
	/* a claim past CPU 1023 cannot be told to a client of version 2 */
	m = sample(RTPLACE_MSG_CLAIM_REPLY, 2);
	assert_int_equal(proto_msg_finish(&m, 2), -ERANGE);
}

static void test_encoders(void **state)
{
	struct rtplace_query q = { .prio = 0, .policy = RTPLACE_POLICY_FIFO, .count = 1, .node = -1, .near_cpu = -1 };
	struct rtplace_query_reply r = { 0 };
	struct proto_error err = { 0 };
	static struct proto_msg m, rd;
	char s[8];

	/* a sender's bug never reaches the wire */
	assert_int_equal(proto_encode(&m, RTPLACE_MSG_QUERY, 1, 0, &q, &err), -ERANGE);
	assert_string_equal(err.reason.text, "prio out of range 1..99");
	q.prio = 10;
	assert_int_equal(proto_encode_query(&m, 0, &q), -EINVAL);
	assert_int_equal(proto_encode_query(&m, 1, &q), 0);
	assert_int_equal(proto_encode(&m, MSG_UNKNOWN, 1, 0, &q, &err), -EOPNOTSUPP);
	assert_int_equal(proto_encode(&m, RTPLACE_MSG_QUERY, 1, 0, NULL, &err), -EINVAL);
	assert_int_equal(proto_encode(&m, RTPLACE_MSG_STATUS, 1, 0, NULL, &err), 0);
	assert_int_equal(proto_encode_error(&m, 1, RTPLACE_MSG_QUERY, -EINVAL, NULL), -EINVAL);
	assert_int_equal(proto_encode_error(&m, 1, RTPLACE_MSG_QUERY, EINVAL, "positive"), -EINVAL);
	assert_int_equal(proto_encode_error(&m, 1, RTPLACE_MSG_QUERY, -EINVAL, "bad field"), 0);
	assert_int_equal(m.hdr.status, -EINVAL);
	assert_string_equal(m.error.reason, "bad field");
	assert_int_equal(proto_msg_init(&m, MSG_UNKNOWN, 1), -EOPNOTSUPP);

	/* built in place, then validated */
	assert_int_equal(proto_msg_init(&m, RTPLACE_MSG_QUERY_REPLY, 9), 0);
	assert_int_equal(proto_validate(&m, NULL, &err), -EINVAL); /* empty answer needs a reason */
	assert_string_equal(err.reason.text, "bad reason string");
	assert_int_equal(err.request_id, 9);
	assert_int_equal(proto_query_reply_add(&m.query_reply, 4, RTPLACE_LEVEL_NORMAL), 0);
	/* readable until finished, its length set when packed (the empty
	 * reason's NUL ends it) */
	assert_int_equal(m.hdr.length, 24 + 16 + 1);
	assert_int_equal(proto_validate(&m, NULL, NULL), 0);
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), 0);
	assert_int_equal(m.hdr.length, 24 + 16 + 4 + 1);
	assert_int_equal(proto_validate(&m, NULL, NULL), 0);
	assert_int_equal(decode_bytes(&m, m.hdr.length, NULL, &rd, NULL), 0);
	assert_int_equal(proto_encode(&m, RTPLACE_MSG_QUERY_REPLY, 9, 0, &rd.query_reply, NULL), 0);
	assert_int_equal(m.hdr.length, 24 + 16 + 4 + 1);
	assert_int_equal(proto_msg_finish(&m, 2), 0);
	assert_int_equal(m.hdr.length, 24 + 208 + 4);
	assert_int_equal(proto_msg_finish(&m, 1), 0);
	assert_int_equal(m.hdr.length, 1256);
	assert_int_equal(proto_validate(&m, NULL, NULL), 0);
	assert_int_equal(proto_msg_finish(&m, 0), -EPROTONOSUPPORT);
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION + 1), -EPROTONOSUPPORT);
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), 0);
	m.packed = false;
	m.query_reply.count = RTPLACE_QUERY_MAX_COUNT + 1;
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), -ERANGE);
	assert_int_equal(m.hdr.length, 24 + 16 + 4 + 1); /* untouched when refused */
	/* a CPU past 1023 is for version 3 only */
	assert_int_equal(proto_msg_init(&m, RTPLACE_MSG_QUERY_REPLY, 9), 0);
	assert_int_equal(proto_query_reply_add(&m.query_reply, RTPLACE_MAX_CPUS - 1, RTPLACE_LEVEL_IDLE), 0);
	assert_int_equal(proto_msg_finish(&m, 2), -ERANGE);
	assert_int_equal(proto_msg_finish(&m, 1), -ERANGE);
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), 0);
	assert_int_equal(proto_msg_finish(&m, 2), -ERANGE);
	m.hdr.type = MSG_UNKNOWN;
	assert_int_equal(proto_msg_finish(&m, RTPLACE_PROTO_VERSION), -EOPNOTSUPP);

	/* over-long text is truncated, and the rest of the field zeroed */
	memset(s, 'z', sizeof(s));
	proto_set_string(s, sizeof(s), "abcdefghij");
	assert_string_equal(s, "abcdefg");
	proto_set_string(s, sizeof(s), "ab");
	assert_memory_equal(s, "ab\0\0\0\0\0\0", sizeof(s));
	assert_int_equal(proto_encode_error(&m, 1, 0, -EPROTO,
					    "a reason that is much longer than sixty-four characters, not cut"),
			 0);
	assert_string_equal(m.error.reason, "a reason that is much longer than sixty-four characters, not cut");

	assert_int_equal(proto_query_reply_add(&r, 3, RTPLACE_LEVEL_RT1), 0);
	assert_int_equal(proto_query_reply_add(&r, 2, RTPLACE_LEVEL_IDLE), 0);
	assert_int_equal(r.level, RTPLACE_LEVEL_RT1);
	assert_int_equal(proto_query_reply_add(&r, 3, RTPLACE_LEVEL_IDLE), -EEXIST);
	assert_int_equal(proto_query_reply_add(&r, RTPLACE_MAX_CPUS, RTPLACE_LEVEL_IDLE), -ERANGE);
	assert_int_equal(proto_query_reply_add(&r, 5, RTPLACE_LEVEL_COUNT), -ERANGE);
	for (unsigned cpu = 10; r.count < RTPLACE_QUERY_MAX_COUNT; cpu++)
		assert_int_equal(proto_query_reply_add(&r, cpu, RTPLACE_LEVEL_IDLE), 0);
	assert_int_equal(proto_query_reply_add(&r, 1000, RTPLACE_LEVEL_IDLE), -ENOSPC);

	/* the core's sets are the wire's: parsed straight into a request */
	assert_int_equal(cpuset_parse("0,5,64-66,1023,8191", &q.allowed), 0);
	assert_true(rtplace_cpumask_test(&q.allowed, 65));
	assert_true(rtplace_cpumask_test(&q.allowed, 1023));
	assert_true(rtplace_cpumask_test(&q.allowed, 8191));
	assert_false(rtplace_cpumask_test(&q.allowed, 6));
	assert_false(rtplace_cpumask_test(&q.allowed, RTPLACE_MAX_CPUS));
	assert_int_equal(cpuset_count(&q.allowed), 7);
}

/* xorshift64*: a fixed seed, so a failure reproduces */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* Random bytes, half of them behind a well-formed header so the body checks see them. */
static void test_random_garbage(void **state)
{
	static unsigned char buf[sizeof(struct proto_msg) + 64];
	uint64_t seed = 0x9e3779b97f4a7c15;

	for (unsigned iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)(rng_next(&seed) % sizeof(buf));

		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)rng_next(&seed);
		if (iter % 2 && len >= sizeof(struct rtplace_msg_hdr)) {
			uint16_t type = proto_sample_types[rng_next(&seed) % proto_sample_ntypes];
			struct rtplace_msg_hdr h = {
				.magic = RTPLACE_PROTO_MAGIC,
				.version = (uint16_t)(iter % 4 < 2 ? 1 : RTPLACE_PROTO_VERSION),
				.type = type,
				.length = (uint32_t)proto_msg_length(type),
				.request_id = (uint32_t)rng_next(&seed),
			};

			len = h.length;
			memcpy(buf, &h, sizeof(h));
			/* mostly zero bodies with a few random bytes get much further */
			if (iter % 4 == 1) {
				memset(buf + sizeof(h), 0, len - sizeof(h));
				for (int k = 0; k < 4 && len > sizeof(h); k++)
					buf[sizeof(h) + rng_next(&seed) % (len - sizeof(h))] =
						(unsigned char)rng_next(&seed);
			}
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
}

/* Every byte of every sample, changed a few ways: refused cleanly, or accepted and canonical. */
static void test_mutations(void **state)
{
	static const unsigned char flips[] = { 0x01, 0x80, 0xff };
	static unsigned char buf[sizeof(struct proto_msg)];
	static struct proto_msg m;
	unsigned inputs = 0;

	for (size_t i = 0; i < proto_sample_ntypes; i++) {
		for (unsigned shape = 0; proto_sample(proto_sample_types[i], shape, &m) == 0; shape++) {
			size_t len = m.hdr.length;

			for (size_t off = 0; off < len; off++) {
				for (size_t f = 0; f < sizeof(flips); f++) {
					memcpy(buf, &m, len);
					buf[off] ^= flips[f];
					LLVMFuzzerTestOneInput(buf, len);
					inputs++;
				}
			}
			/* and every truncation */
			for (size_t cut = 0; cut < len; cut++)
				LLVMFuzzerTestOneInput((const uint8_t *)&m, cut);
		}
	}
	assert_true(inputs > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_length_off_by_one),
		cmocka_unit_test(test_query_rules),
		cmocka_unit_test(test_request_rules),
		cmocka_unit_test(test_string_rules),
		cmocka_unit_test(test_reason_lengths),
		cmocka_unit_test(test_query_reply_rules),
		cmocka_unit_test(test_cpus_reply_rules),
		cmocka_unit_test(test_cpus_reply_shares),
		cmocka_unit_test(test_cpu_times_reply_rules),
		cmocka_unit_test(test_list_reply_lengths),
		cmocka_unit_test(test_other_reply_rules),
		cmocka_unit_test(test_claim_reply_rules),
		cmocka_unit_test(test_encoders),
		cmocka_unit_test(test_random_garbage),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
