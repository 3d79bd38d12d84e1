/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire codec: decode, validate and build the messages of rtplace-proto.h.
 * Used by rtplaced and every client, so both sides apply the same rules.
 * Pure: no syscalls, no global state.
 *
 * struct proto_msg holds any message, aligned: the header at offset 0 and
 * the body at offset 24. It is in one of two forms. Readable: the body's
 * fields as rtplace-proto.h declares them, CPU sets at their full width
 * (what proto_decode() gives and proto_msg_init() starts). Packed: the
 * wire bytes of hdr.version, hdr.length of them (what proto_encode() and
 * proto_msg_finish() leave); sending is send(fd, &msg, msg.hdr.length, 0).
 * The wire form of most types is a prefix of the readable one (CPU sets
 * trimmed, a list cut after its count); a MOVE_REPLY's second set and the
 * mask that versions 1 and 2 put before a QUERY_REPLY's list are moved,
 * so read a packed message only after decoding it again.
 *
 * Validation rejects everything that is not the one canonical encoding of a
 * meaningful message: reserved fields and padding must be zero, strings must
 * be NUL-terminated with zeros after the NUL, unused list entries zero, flags
 * only known bits. So decode then encode reproduces the input byte for byte
 * (the fuzz harness checks this), and a field added in a later version can
 * give a meaning to what version 1 rejects.
 *
 * Errors, and what the receiver does with the connection:
 *   -EPROTO           garbage: short message, bad magic, length field not
 *                     the received length, wrong length for the type. Count
 *                     it against the peer and drop a peer that persists.
 *   -EPROTONOSUPPORT  a version this codec does not speak. Answer, keep it.
 *   -EOPNOTSUPP       unknown type, or a type the receiver does not take
 *                     (a reply sent to the daemon). Answer, keep it.
 *   -EINVAL           a bad field: unknown flag, bad policy, reserved field
 *                     set, string not terminated, zero request id. Keep it.
 *   -ERANGE           a number out of range: prio, count, CPU or node beyond
 *                     the topology. Keep it.
 * Each comes with a reason ("prio 0 out of range 1..99") fit for an ERROR
 * reply.
 */
#ifndef RTPLACE_PROTOCOL_H
#define RTPLACE_PROTOCOL_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "levels.h"
#include "reason.h"
#include "rtplace-proto.h"

_Static_assert(RTPLACE_LEVEL_OFFLINE == LEVEL_OFFLINE && RTPLACE_LEVEL_IDLE == LEVEL_IDLE &&
	       RTPLACE_LEVEL_NORMAL == LEVEL_NORMAL && RTPLACE_LEVEL_RT1 == LEVEL_RT1 &&
	       RTPLACE_LEVEL_RT99 == LEVEL_RT99 && RTPLACE_LEVEL_DL == LEVEL_DL &&
	       RTPLACE_LEVEL_COUNT == LEVEL_COUNT, "wire levels are levels.h levels");
_Static_assert(RTPLACE_PRIO_MIN == LEVEL_RT_PRIO_MIN && RTPLACE_PRIO_MAX == LEVEL_RT_PRIO_MAX, "RT priorities");
_Static_assert(RTPLACE_POLICY_FIFO == SCHED_FIFO && RTPLACE_POLICY_RR == SCHED_RR, "policies are Linux's");

/* Any message, as on the wire. Which body is valid follows from hdr.type. */
struct proto_msg {
	struct rtplace_msg_hdr hdr;
	union {
		struct rtplace_query query;
		struct rtplace_release release;
		struct rtplace_cpus cpus;
		struct rtplace_move move;
		struct rtplace_subscribe subscribe;
		struct rtplace_error error;
		struct rtplace_query_reply query_reply;
		struct rtplace_release_reply release_reply;
		struct rtplace_cpus_reply cpus_reply;
		struct rtplace_status_reply status_reply;
		struct rtplace_tracking_reply tracking_reply;
		struct rtplace_host_reply host_reply;
		struct rtplace_local_reply local_reply;
		struct rtplace_move_reply move_reply;
		struct rtplace_subscribe_reply subscribe_reply;
		struct rtplace_claim_ended claim_ended;
		struct rtplace_cpu_times_reply cpu_times_reply;
		struct rtplace_claim_req claim;
		struct rtplace_claim_reply claim_reply;
		struct rtplace_explain explain;
		struct rtplace_explain_reply explain_reply;
		struct rtplace_kernel_reply kernel_reply;
	};
	bool packed; /* the wire form (see above), never sent itself */
};

_Static_assert(offsetof(struct proto_msg, query) == sizeof(struct rtplace_msg_hdr), "body follows the header");
_Static_assert(_Alignof(struct proto_msg) == 8, "bodies are 8-aligned");
_Static_assert(sizeof(struct proto_msg) <= RTPLACE_MSG_MAX, "any message fits");
_Static_assert(sizeof(struct rtplace_msg_hdr) + sizeof(struct rtplace_move_reply) <= offsetof(struct proto_msg, packed),
	       "the readable form holds every set of every type");

/* Which message types a receiver takes. */
enum proto_accept {
	PROTO_ACCEPT_REQUESTS = 1 << 0, /* the daemon */
	PROTO_ACCEPT_REPLIES = 1 << 1,  /* clients: replies and events */
	PROTO_ACCEPT_ALL = PROTO_ACCEPT_REQUESTS | PROTO_ACCEPT_REPLIES,
};

/* What the receiver checks numbers against. The daemon passes its topology;
 * a client that knows no topology passes NULL (protocol maxima, any type). */
struct proto_limits {
	uint32_t ncpus;  /* CPU ids 0..ncpus-1 are valid, 1..RTPLACE_MAX_CPUS */
	uint32_t nnodes; /* node ids 0..nnodes-1 are valid */
	unsigned accept; /* enum proto_accept */
	bool isolate;    /* QUERY_F_ISOLATE is served: [isolation] turns something on */
};

/* Why a message was refused, for the ERROR reply and the log. */
struct proto_error {
	struct rtplace_reason reason;
	uint32_t request_id; /* of the refused message; 0 when its header was unreadable */
	uint16_t type;       /* its type; 0 when its header was unreadable */
	/* The version to answer it in: its own when the header was readable
	 * and of a version spoken here, else RTPLACE_PROTO_VERSION_MIN. */
	uint16_t version;
};

/* After this error the peer is sending garbage (see the table above). */
static inline bool proto_error_is_garbage(int r)
{
	return r == -EPROTO;
}

/*
 * Decodes and validates the message in buf (len bytes: the packet as
 * received, any alignment). Returns 0 and the message in *ret, or a negative
 * errno (table above) with *ret_err filled (ret_err may be NULL); on failure
 * *ret holds scratch and must not be used.
 */
int proto_decode(const void *buf, size_t len, const struct proto_limits *lim, struct proto_msg *ret,
		 struct proto_error *ret_err);

/* Validates a message built in place (after proto_msg_init()), or one
 * packed, with the rules of proto_decode() (a readable one as packed in
 * its hdr.version: -ERANGE for a CPU that version cannot carry). 0 or
 * -errno with *ret_err filled (may be NULL). */
int proto_validate(const struct proto_msg *m, const struct proto_limits *lim, struct proto_error *ret_err);

/*
 * A sender's check of a message it built itself (after proto_msg_init()),
 * for the daemon's replies: proto_validate() with RTPLACE_SELF_CHECKS
 * (./configure --enable-self-checks, on with --enable-sanitizers), else
 * nothing. Input from a peer is always validated by proto_decode(), and
 * every client decodes the daemon's replies, so a bad reply is caught by
 * the test suites either way; this turns it into an EIO answer instead.
 */
static inline int proto_self_check(const struct proto_msg *m)
{
#ifdef RTPLACE_SELF_CHECKS
	return proto_validate(m, NULL, NULL);
#else
	(void)m;
	return 0;
#endif
}

/*
 * Starts a readable message of type in m: the header (magic, version
 * RTPLACE_PROTO_VERSION, type, the length of the empty body, request_id,
 * status 0) and a zeroed body. Returns 0, or -EOPNOTSUPP for an unknown
 * type. Fill the body, then proto_msg_finish() it (a type without CPU sets
 * or list may be sent as it is).
 */
int proto_msg_init(struct proto_msg *m, uint16_t type, uint32_t request_id);

/*
 * Packs m, readable and complete or packed already (then in another
 * version), into the wire form of version (one of
 * RTPLACE_PROTO_VERSION_MIN..RTPLACE_PROTO_VERSION; a reply takes its
 * request's), setting its version and length. 0, -EOPNOTSUPP for an
 * unknown type, -EPROTONOSUPPORT for an unknown version, -ERANGE for a
 * count beyond the list or a CPU the version cannot carry (past 1023
 * before version 3); m is unchanged on failure.
 */
int proto_msg_finish(struct proto_msg *m, uint16_t version);

/*
 * Builds the message of type from body (the type's readable body struct,
 * copied; NULL for a type without body) into ret, packed at
 * RTPLACE_PROTO_VERSION, and validates it against the protocol maxima: a
 * bug of the sender never reaches the wire. status is 0 except for
 * RTPLACE_MSG_ERROR. 0 or -errno with *ret_err filled.
 * proto_msg_finish() gives it another version.
 */
int proto_encode(struct proto_msg *ret, uint16_t type, uint32_t request_id, int32_t status, const void *body,
		 struct proto_error *ret_err);

/* The bytes a message of type has in version 1 (header included), the
 * longest of versions 1 and 2. 0 for unknown types. */
size_t proto_msg_length(uint16_t type);

/* The bytes m, packed or readable, has on the wire in its hdr.version; 0
 * when it cannot be sent so. */
size_t proto_msg_length_for(const struct proto_msg *m);

/*
 * The length the wire message in buf (len bytes) must have by its
 * header's version and type and, in a list reply from version 2, its
 * count; len itself when the type has CPU sets and len holds whole sets
 * (version 3). 0 when there is none: an unknown type or version, or a
 * length no message of the type can have.
 */
size_t proto_wire_length(const void *buf, size_t len);

/* "query", "query-reply", ...; NULL for unknown types. */
const char *proto_type_name(uint16_t type);

/* The reply type of a request type, 0 if type is not a request. */
uint16_t proto_reply_type(uint16_t type);

/* The body of m, whatever its type (for copying it as raw bytes). */
static inline const void *proto_msg_body(const struct proto_msg *m)
{
	return (const char *)m + sizeof(m->hdr);
}

/*
 * Copies src into a fixed string field of size bytes, truncated to size - 1
 * and zero-filled after the NUL, the only form validation accepts.
 */
void proto_set_string(char *dst, size_t size, const char *src);

/*
 * Appends cpu at level to a QUERY reply, keeping count and level
 * consistent. Returns 0, -ENOSPC when the list is full, -EEXIST when cpu is
 * listed already, -ERANGE for a CPU or level out of range.
 */
int proto_query_reply_add(struct rtplace_query_reply *r, unsigned cpu, unsigned level);

/*
 * Typed request builders: proto_encode() for one type each, without the
 * reason. A reply or event is built as the daemon builds it:
 * proto_msg_init(), its body filled in place, proto_msg_finish() in the
 * request's version (the ERROR reply has proto_encode_error()).
 */

static inline int proto_encode_query(struct proto_msg *ret, uint32_t request_id, const struct rtplace_query *q)
{
	return proto_encode(ret, RTPLACE_MSG_QUERY, request_id, 0, q, NULL);
}

static inline int proto_encode_release(struct proto_msg *ret, uint32_t request_id,
				       const struct rtplace_release *r)
{
	return proto_encode(ret, RTPLACE_MSG_RELEASE, request_id, 0, r, NULL);
}

static inline int proto_encode_cpus(struct proto_msg *ret, uint32_t request_id, const struct rtplace_cpus *c)
{
	return proto_encode(ret, RTPLACE_MSG_CPUS, request_id, 0, c, NULL);
}

static inline int proto_encode_cpu_times(struct proto_msg *ret, uint32_t request_id,
					 const struct rtplace_cpus *c)
{
	return proto_encode(ret, RTPLACE_MSG_CPU_TIMES, request_id, 0, c, NULL);
}

static inline int proto_encode_status(struct proto_msg *ret, uint32_t request_id)
{
	return proto_encode(ret, RTPLACE_MSG_STATUS, request_id, 0, NULL, NULL);
}

static inline int proto_encode_host(struct proto_msg *ret, uint32_t request_id)
{
	return proto_encode(ret, RTPLACE_MSG_HOST, request_id, 0, NULL, NULL);
}

static inline int proto_encode_kernel(struct proto_msg *ret, uint32_t request_id)
{
	return proto_encode(ret, RTPLACE_MSG_KERNEL, request_id, 0, NULL, NULL);
}

static inline int proto_encode_local(struct proto_msg *ret, uint32_t request_id)
{
	return proto_encode(ret, RTPLACE_MSG_LOCAL, request_id, 0, NULL, NULL);
}

static inline int proto_encode_reload(struct proto_msg *ret, uint32_t request_id)
{
	return proto_encode(ret, RTPLACE_MSG_RELOAD, request_id, 0, NULL, NULL);
}

static inline int proto_encode_tracking(struct proto_msg *ret, uint32_t request_id)
{
	return proto_encode(ret, RTPLACE_MSG_TRACKING, request_id, 0, NULL, NULL);
}

static inline int proto_encode_move(struct proto_msg *ret, uint32_t request_id, const struct rtplace_move *mv)
{
	return proto_encode(ret, RTPLACE_MSG_MOVE, request_id, 0, mv, NULL);
}

static inline int proto_encode_subscribe(struct proto_msg *ret, uint32_t request_id,
					 const struct rtplace_subscribe *s)
{
	return proto_encode(ret, RTPLACE_MSG_SUBSCRIBE, request_id, 0, s, NULL);
}

static inline int proto_encode_claim(struct proto_msg *ret, uint32_t request_id, const struct rtplace_claim_req *c)
{
	return proto_encode(ret, RTPLACE_MSG_CLAIM, request_id, 0, c, NULL);
}

static inline int proto_encode_explain(struct proto_msg *ret, uint32_t request_id, const struct rtplace_explain *e)
{
	return proto_encode(ret, RTPLACE_MSG_EXPLAIN, request_id, 0, e, NULL);
}

/*
 * An ERROR reply: error is a negative errno, request_type the type of the
 * refused message (0 if unknown), reason its text (cut to RTPLACE_REASON_MAX,
 * and to RTPLACE_REASON_V2_MAX when packed for versions 1 and 2).
 */
int proto_encode_error(struct proto_msg *ret, uint32_t request_id, uint16_t request_type, int error,
		       const char *reason);

#endif
