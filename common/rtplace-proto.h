/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtplace wire protocol: the contract between rtplaced and its clients
 * (DESIGN §8). Installed; plain C11 (also usable from C++), depends on
 * nothing but <stdint.h> and <stddef.h>.
 *
 * Transport. An AF_UNIX SOCK_SEQPACKET socket; one message per packet, so
 * packet boundaries are message boundaries and a bad message never
 * desynchronises the stream. Fields are in the host's byte order (the socket
 * is local); a peer of the other byte order fails the magic check.
 *
 * Message. A fixed 24-byte header, then the body of the type. Every body is a
 * fixed-size struct below: the exact length of a message is known from its
 * type (and, for a list reply from version 2, its count, for a CPU set from
 * version 3 its words: see Versions), fields are fixed-width integers,
 * there are no pointers and no
 * implicit padding (padding is explicit, named reserved*, and must be zero),
 * strings are fixed char arrays, NUL-terminated, zero after the NUL.
 *
 *   offset  size  header field
 *   0       4     magic       RTPLACE_PROTO_MAGIC
 *   4       2     version     RTPLACE_PROTO_VERSION_MIN..RTPLACE_PROTO_VERSION
 *   6       2     type        RTPLACE_MSG_*
 *   8       4     length      bytes in the whole message, header included
 *   12      4     request_id  chosen by the client, non-zero; echoed in the
 *                             reply; 0 in events, and in an ERROR answering a
 *                             message whose header could not be read or
 *                             refusing the connection (status -EUSERS, at a
 *                             client limit), after which the daemon closes it
 *   16      4     status      0, or a negative errno in an ERROR reply
 *   20      4     reserved    zero
 *   24            body        8-byte aligned when the message is
 *
 * The header layout is the same in every protocol version, so a peer can
 * always read the version of a message it cannot otherwise parse and answer
 * with an ERROR carrying -EPROTONOSUPPORT.
 *
 * Versions. Version 2 differs from version 1 in one thing: the three
 * replies whose body ends in a list (QUERY_REPLY's list, CPUS_REPLY's and
 * CPU_TIMES_REPLY's cpus) end after the list's count-th entry, so their
 * length is the header, the body up to the list, and count entries. In
 * version 1 they carry every entry, zero past count.
 *
 * Version 3 sizes CPU sets to the CPUs they hold rather than to a
 * maximum, so that RTPLACE_MAX_CPUS (8,192) costs a small machine nothing:
 * a CPU set (struct rtplace_cpumask) is sent as its words up to the last
 * non-zero one, and no further (the empty set is no word). The sender
 * trims, the receiver refuses a set whose last word sent is zero; the
 * message's length tells the number of words, the same for every set of
 * one message: QUERY is 48 + 8 n bytes (allowed), MOVE 40 + 8 n (cpus),
 * MOVE_REPLY 32 + 16 n (cpus, then prev_cpus, n words each). QUERY_REPLY
 * carries its CPUs once, as its list: version 3 has no mask in it. A
 * reason (ERROR's, QUERY_REPLY's and TRACKING_REPLY's why, up to
 * RTPLACE_REASON_MAX) is sent at the end of the message, after the list,
 * as its characters and one NUL: ERROR is 32 + r bytes, QUERY_REPLY 40 +
 * 4 count + r, TRACKING_REPLY 56 + r, where r is the reason's length + 1;
 * the receiver refuses a reason with a NUL before its last byte.
 * Everything else is as in version 2.
 *
 * In versions 1 and 2 a CPU set is 16 words (CPUs 0..1023,
 * RTPLACE_CPUMASK_V2_CPUS) wherever the body structs below have one, and
 * QUERY_REPLY carries, between reason and list, a 16-word mask equal to the
 * list's CPUs. A CPU past 1023 cannot be sent to such a peer: the daemon
 * answers an older client's request whose reply would name one with ERROR
 * -ERANGE. A reason there is a field in its place in the body struct, cut
 * to fit: RTPLACE_REASON_V2_MAX bytes, RTPLACE_TRACKING_WHY_MAX for
 * TRACKING_REPLY's why.
 *
 * The body structs below are the messages as a program reads and fills
 * them (protocol.h's codec packs and unpacks the wire form of each
 * version): a CPU set there is the full RTPLACE_MAX_CPUS-bit bitmap.
 *
 * The daemon serves every version from RTPLACE_PROTO_VERSION_MIN and answers
 * each request in the request's version. Messages that answer no readable
 * request (an ERROR refusing an unreadable message or the connection) and
 * events are sent as version 1, which every client reads. A daemon that
 * does not speak a request's version answers ERROR -EPROTONOSUPPORT (with
 * its request_id): ask again in version 1.
 *
 * Dialogue. Every request gets exactly one reply with the same request_id:
 * the request's reply type (request type + 0x0100) or RTPLACE_MSG_ERROR.
 * Events (request_id 0) may arrive at any time between replies; a client
 * skips event types it does not know. No message exceeds RTPLACE_MSG_MAX.
 *
 * Bad input. A packet keeps its bounds (SOCK_SEQPACKET), so every packet
 * the daemon reads is answered. A well-formed message it will not act on
 * (a bad field, an unknown type or version) gets an ERROR and the
 * connection stays. A packet that is no message (shorter than a header, a
 * bad magic, a length field other than the packet's or its type's: -EPROTO)
 * or longer than any (-EMSGSIZE) gets an ERROR naming what was wrong, with
 * the request_id of its header when it has one, then the daemon logs why
 * and closes the connection: its peer does not speak the protocol. A
 * connection refused at a limit gets ERROR -EUSERS with request_id 0 before
 * the close. Packets queued behind the one that ended the connection are
 * discarded unread; a client that reads ECONNRESET first (it sent more
 * after the close began) finds the ERROR after it, and one whose send
 * fails with EPIPE can still read it.
 *
 * Numbering. Types are numbered in blocks: requests 0x01xx, replies 0x02xx,
 * events 0x03xx. A number is never reused or renumbered; a retired type stays
 * below as a comment.
 *
 * Pids (DESIGN §15). A pid in a request (QUERY's owner_pid, MOVE's tid) is
 * the sender's number for the process or thread, in the sender's PID
 * namespace, which inside a container is not the daemon's. The packet
 * carrying the request may carry one descriptor as SCM_RIGHTS: a pidfd of
 * that process (for a MOVE, of the thread's process or of the thread
 * itself). From a sender in the daemon's PID namespace the pid is the
 * daemon's own and a pidfd is not needed (nor read). From a sender in any
 * other, the daemon takes the process from the pidfd, and refuses the
 * request with -EINVAL unless the number is the pidfd's process's (or one
 * of its threads') in the sender's namespace, -EBADF when the descriptor
 * is no pidfd, and -EXDEV when there is no pidfd. A descriptor with any
 * other request, or more than one, is refused with -EINVAL, also when
 * there were more than the daemon takes with one packet (4) and the kernel
 * dropped the rest. The daemon keeps no descriptor a request brings.
 * Replies name a moved thread by the sender's number; every other pid the
 * daemon sends (CPUS, CLAIM, records, reasons) is numbered in the
 * receiver's PID namespace, 0 (in CLAIM_REPLY: not sent) for a task
 * outside it.
 *
 * Levels on the wire are the level numbers of DESIGN §2: RTPLACE_LEVEL_*.
 * CPU sets are struct rtplace_cpumask, a bitmap: bit i of bits[i / 64] is
 * CPU i, sent as Versions says.
 */
#ifndef RTPLACE_PROTO_H
#define RTPLACE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "rtplace-levels.h"

#ifdef __cplusplus
#define RTPLACE_PROTO_ASSERT(cond, msg) static_assert(cond, msg)
#define RTPLACE_PROTO_ALIGNOF(type) alignof(type)
#else
#define RTPLACE_PROTO_ASSERT(cond, msg) _Static_assert(cond, msg)
#define RTPLACE_PROTO_ALIGNOF(type) _Alignof(type)
#endif

#define RTPLACE_PROTO_MAGIC 0x4c505452u /* "RTPL" in little-endian memory */
#define RTPLACE_PROTO_VERSION 3u      /* the newest version: what this header describes */
#define RTPLACE_PROTO_VERSION_MIN 1u  /* the oldest version still spoken */

/* No message of any version is longer; a receive buffer this big never truncates. */
#define RTPLACE_MSG_MAX 65536u

#define RTPLACE_CPUMASK_WORDS (RTPLACE_MAX_CPUS / 64)
/* CPUs a CPU set of versions 1 and 2 holds: 16 words. */
#define RTPLACE_CPUMASK_V2_CPUS 1024u

/* Why a request failed or an answer is short, NUL included: an ERROR's
 * reason and a QUERY_REPLY's (see Versions for their length on the wire).
 * Large enough for a reason that names a cgroup folder and its fix. */
#define RTPLACE_REASON_MAX 512
/* The reasons' field in versions 1 and 2: a longer one is cut to fit. */
#define RTPLACE_REASON_V2_MAX 64
#define RTPLACE_VERSION_MAX 32        /* the daemon's version string, NUL included */
#define RTPLACE_COMM_MAX 16           /* a task's comm, as the kernel's TASK_COMM_LEN */
#define RTPLACE_QUERY_MAX_COUNT 256   /* most CPUs one query may ask for */
#define RTPLACE_CPUS_PAGE 128         /* per-CPU entries in one CPUS reply */

/* Scheduling policies; FIFO and RR have Linux's SCHED_* values. */
#define RTPLACE_POLICY_OTHER 0        /* any non-RT policy; only in replies */
#define RTPLACE_POLICY_FIFO 1
#define RTPLACE_POLICY_RR 2

/* Claim leases, in ms. */
#define RTPLACE_LEASE_DEFAULT 0u            /* in a QUERY: the daemon's claim-timeout-ms */
#define RTPLACE_LEASE_INFINITE 0xffffffffu  /* no expiry: ends on release, disconnect or owner exit */

/* Message types. */
enum {
	/* Requests, client to daemon. */
	RTPLACE_MSG_QUERY = 0x0101,
	RTPLACE_MSG_RELEASE = 0x0102,
	RTPLACE_MSG_CPUS = 0x0103,
	RTPLACE_MSG_STATUS = 0x0104,
	RTPLACE_MSG_MOVE = 0x0105,
	RTPLACE_MSG_SUBSCRIBE = 0x0106,
	/* Added in version 1; a daemon without it answers ERROR -EOPNOTSUPP
	 * ("unknown message type"), as one without the BPF tracker does. */
	RTPLACE_MSG_CPU_TIMES = 0x0107,
	/* Added to version 2 later; a daemon without it answers ERROR
	 * -EOPNOTSUPP ("unknown message type"): it tracks with BPF. */
	RTPLACE_MSG_TRACKING = 0x0108,
	/* Added to version 2 later; a daemon without it answers ERROR
	 * -EOPNOTSUPP ("unknown message type"). */
	RTPLACE_MSG_HOST = 0x0109,
	/* Added to version 3; a daemon without it answers ERROR -EOPNOTSUPP
	 * ("unknown message type"), and one that speaks it answers a request
	 * of an older version so too: the client then asks the socket. */
	RTPLACE_MSG_LOCAL = 0x010a,
	/* Added to version 3 later; a daemon without it answers ERROR
	 * -EOPNOTSUPP ("unknown message type"): a client then names claims
	 * by their ids alone (the CPUS reply's claim_id). */
	RTPLACE_MSG_CLAIM = 0x010b,
	/* Added to version 3 later; a daemon without it answers ERROR
	 * -EOPNOTSUPP ("unknown message type"), and one that speaks it
	 * answers a request of an older version so too. */
	RTPLACE_MSG_EXPLAIN = 0x010c,
	/* Added to version 3 later; a daemon without it answers ERROR
	 * -EOPNOTSUPP ("unknown message type"): the kernel's environment is
	 * then unknown to the client. */
	RTPLACE_MSG_KERNEL = 0x010d,
	/* Added to version 3 later, root's only: the daemon reads its
	 * configuration file again and applies it whole, or keeps the running
	 * one and answers ERROR with why (what `systemctl reload` waits for).
	 * A daemon without it answers ERROR -EOPNOTSUPP ("unknown message
	 * type"). No body either way. */
	RTPLACE_MSG_RELOAD = 0x010e,

	/* Replies, daemon to client: request type + 0x0100, or ERROR. */
	RTPLACE_MSG_ERROR = 0x0200,
	RTPLACE_MSG_QUERY_REPLY = 0x0201,
	RTPLACE_MSG_RELEASE_REPLY = 0x0202,
	RTPLACE_MSG_CPUS_REPLY = 0x0203,
	RTPLACE_MSG_STATUS_REPLY = 0x0204,
	RTPLACE_MSG_MOVE_REPLY = 0x0205,
	RTPLACE_MSG_SUBSCRIBE_REPLY = 0x0206,
	RTPLACE_MSG_CPU_TIMES_REPLY = 0x0207,
	RTPLACE_MSG_TRACKING_REPLY = 0x0208,
	RTPLACE_MSG_HOST_REPLY = 0x0209,
	RTPLACE_MSG_LOCAL_REPLY = 0x020a,
	RTPLACE_MSG_CLAIM_REPLY = 0x020b,
	RTPLACE_MSG_EXPLAIN_REPLY = 0x020c,
	RTPLACE_MSG_KERNEL_REPLY = 0x020d,
	RTPLACE_MSG_RELOAD_REPLY = 0x020e,

	/* Events, daemon to client, request_id 0. */
	RTPLACE_MSG_CLAIM_ENDED = 0x0301,
};

#define RTPLACE_MSG_REPLY_OFFSET 0x0100

/* The block of a type: RTPLACE_MSG_BLOCK(t) == RTPLACE_MSG_BLOCK_EVENT for events. */
#define RTPLACE_MSG_BLOCK(type) ((type) & 0xff00)
#define RTPLACE_MSG_BLOCK_REQUEST 0x0100
#define RTPLACE_MSG_BLOCK_REPLY 0x0200
#define RTPLACE_MSG_BLOCK_EVENT 0x0300

struct rtplace_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;
	uint32_t request_id;
	int32_t status;
	uint32_t reserved;
};

/* A CPU set, on the wire and in rtplace's own code alike (cpuset.h works
 * on this type): bit i of bits[i / 64] is CPU i. */
struct rtplace_cpumask {
	uint64_t bits[RTPLACE_CPUMASK_WORDS];
};

static inline void rtplace_cpumask_set(struct rtplace_cpumask *m, unsigned cpu)
{
	if (cpu < RTPLACE_MAX_CPUS)
		m->bits[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

static inline int rtplace_cpumask_test(const struct rtplace_cpumask *m, unsigned cpu)
{
	return cpu < RTPLACE_MAX_CPUS && ((m->bits[cpu / 64] >> (cpu % 64)) & 1);
}

/* ---- Requests ---------------------------------------------------------- */

/* QUERY flags. */
#define RTPLACE_QUERY_F_CLAIM (1u << 0)      /* hold the answer as a claim (DESIGN §6) */
/* With CLAIM: no other query gets these CPUs while the claim lives, whatever
 * its priority (a plain claim holds them at rtP only). */
#define RTPLACE_QUERY_F_EXCLUSIVE (1u << 1)
/* With CLAIM and owner_pid: the daemon manages owner_pid's threads (DESIGN §7). */
#define RTPLACE_QUERY_F_MANAGE (1u << 2)
/* The claimant runs without an RT policy (a normal-level claim, such as
 * rtplace-run without --prio): kept off isolated CPUs (DESIGN §20). A
 * client leaves it out when the user named the CPUs. A daemon without it
 * answers ERROR -EINVAL ("unknown query flags"): ask again without. */
#define RTPLACE_QUERY_F_NORMAL (1u << 3)
/* With EXCLUSIVE: while the claim lives, its CPUs leave what the daemon's
 * [isolation] turns on (rtplaced.conf(5)): other tasks' cpusets, movable
 * interrupts, unbound work. Only for CAP_SYS_NICE in the daemon's user
 * namespace. A daemon that isolates nothing answers ERROR -EOPNOTSUPP; one
 * without the flag, ERROR -EINVAL ("unknown query flags"). */
#define RTPLACE_QUERY_F_ISOLATE (1u << 4)
/* With ISOLATE: isolation if the daemon can give it. Where it cannot (it
 * isolates nothing, the requester may not isolate, the kernel or the
 * cgroup hierarchy refuses), the claim is made without, and the reply's
 * reason says "not isolated: " and why. */
#define RTPLACE_QUERY_F_ISOLATE_TRY (1u << 5)
#define RTPLACE_QUERY_F_ALL                                                                      \
	(RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_EXCLUSIVE | RTPLACE_QUERY_F_MANAGE | RTPLACE_QUERY_F_NORMAL | \
	 RTPLACE_QUERY_F_ISOLATE | RTPLACE_QUERY_F_ISOLATE_TRY)

/*
 * Which CPU(s) for an RT thread of priority prio (DESIGN §5)?
 * lease_ms and owner_pid are zero unless flags has CLAIM. A claim without
 * owner_pid ends when the connection closes; with owner_pid it survives the
 * connection (rtplace-run execs) and ends when that process exits. Both end
 * on RELEASE and on lease expiry.
 */
struct rtplace_query {
	uint8_t prio;        /* 1..99 */
	uint8_t policy;      /* RTPLACE_POLICY_FIFO or _RR */
	uint16_t count;      /* CPUs wanted, 1..RTPLACE_QUERY_MAX_COUNT */
	uint32_t flags;      /* RTPLACE_QUERY_F_* */
	int32_t node;        /* preferred NUMA node, -1 for none */
	int32_t near_cpu;    /* CPU to be near (cache-hot), -1 for none */
	uint32_t lease_ms;   /* RTPLACE_LEASE_DEFAULT, _INFINITE, or ms */
	int32_t owner_pid;   /* process the claim lives with (sender's number), 0 for none */
	struct rtplace_cpumask allowed; /* empty: any managed CPU */
};

/* Ends a claim early: one of this connection, or one the daemon's config lets
 * the requester end. */
struct rtplace_release {
	uint64_t claim_id;   /* non-zero */
};

/* CPUS flags. Added in version 1 (a daemon without them refuses them with
 * -EINVAL, "reserved field not zero": ask again without). */
/* Fill each entry's package: the reply's bytes that are zero without it. */
#define RTPLACE_CPUS_F_PACKAGE (1u << 0)
/* Set RTPLACE_CPU_F_ISOLATED and _NOHZ_FULL in the reply: a client that
 * knows them asks, so an older one never meets flags it refuses. */
#define RTPLACE_CPUS_F_HOST (1u << 1)
#define RTPLACE_CPUS_F_ALL (RTPLACE_CPUS_F_PACKAGE | RTPLACE_CPUS_F_HOST)

/* One page of the per-CPU snapshot: CPUs first..first+RTPLACE_CPUS_PAGE-1.
 * A client walks pages until first reaches the reply's total. CPU_TIMES
 * (the per-CPU time by class, DESIGN §16) takes the same body, flags 0. */
struct rtplace_cpus {
	uint32_t first;      /* below the topology's CPU count */
	uint32_t flags;      /* RTPLACE_CPUS_F_* */
};

/* STATUS and TRACKING have no body. */

/* The live claim with the lowest id at or above from_id (CLAIM_REPLY):
 * a client walks the claims from 0, asking from each id + 1, until the
 * reply's claim_id is 0. */
struct rtplace_claim_req {
	uint64_t from_id;
};

/*
 * A dry run of query (EXPLAIN, DESIGN §5): the answer the QUERY would get
 * now, nothing claimed and the rotation left where it was, with why each
 * CPU was chosen or passed over, for the page of CPU ids first ..
 * first + RTPLACE_CPUS_PAGE - 1, and what would stop the requester's
 * thread (query's owner_pid with CLAIM, else the requester) from getting
 * the policy asked. query is checked as a QUERY is. A client walks pages
 * until first reaches the reply's total; each page is a dry run of its
 * own, so a client compares their chosen CPUs (see EXPLAIN_REPLY).
 */
struct rtplace_explain {
	uint32_t first;      /* below the topology's CPU count */
	uint32_t reserved;
	struct rtplace_query query;
};

/* MOVE flags: at least one of SET_AFFINITY and SET_SCHED. */
#define RTPLACE_MOVE_F_SET_AFFINITY (1u << 0) /* set the affinity to cpus (non-empty) */
#define RTPLACE_MOVE_F_SET_SCHED (1u << 1)    /* set policy and prio */
#define RTPLACE_MOVE_F_PLACE (1u << 2)        /* with SET_AFFINITY: pin to the best CPU of cpus */
#define RTPLACE_MOVE_F_FORCE (1u << 3)        /* skip the re-check of the target's level */
/* Added in version 1 (a daemon without them refuses them as unknown flags,
 * so an older daemon never half-serves a request that uses them): */
/* The target may be a thread of PID 1, a kernel thread or of rtplaced
 * itself; without it such a move is refused with -EPERM. */
#define RTPLACE_MOVE_F_SYSTEM (1u << 4)
/* Every thread of tid's process, all or none: when one thread cannot be
 * moved, those already moved are put back before the reply (an ERROR
 * naming that thread). Threads that exit meanwhile are not failures. The
 * reply describes tid. */
#define RTPLACE_MOVE_F_PROCESS (1u << 5)
#define RTPLACE_MOVE_F_ALL (RTPLACE_MOVE_F_SET_AFFINITY | RTPLACE_MOVE_F_SET_SCHED | \
			    RTPLACE_MOVE_F_PLACE | RTPLACE_MOVE_F_FORCE | RTPLACE_MOVE_F_SYSTEM | \
			    RTPLACE_MOVE_F_PROCESS)

/* Asks the daemon to move thread tid (DESIGN §7). Fields a flag does not
 * select are zero. */
struct rtplace_move {
	int32_t tid;         /* > 0, the sender's number */
	uint32_t flags;      /* RTPLACE_MOVE_F_* */
	uint8_t policy;      /* with SET_SCHED: RTPLACE_POLICY_FIFO or _RR */
	uint8_t prio;        /* with SET_SCHED: 1..99 */
	uint8_t reserved[6];
	struct rtplace_cpumask cpus;
};

/* Asks for the notification ring (DESIGN §7). No flags are defined in
 * version 1. */
struct rtplace_subscribe {
	uint32_t flags;      /* zero */
	uint32_t reserved;
};

/* ---- Replies ----------------------------------------------------------- */

/* Any request may be answered with ERROR; header status holds -errno (< 0). */
struct rtplace_error {
	uint16_t request_type; /* type of the failed message, 0 when unreadable */
	uint16_t reserved[3];
	char reason[RTPLACE_REASON_MAX]; /* non-empty: "prio out of range 1..99" */
};

struct rtplace_cpu_choice {
	uint16_t cpu;
	uint8_t level;       /* the CPU's level when chosen */
	uint8_t reserved;
};

/*
 * The answer to a QUERY, best CPU first. count 0 is an answer (nothing below
 * the priority in the allowed set) and then reason says why; otherwise reason
 * may be empty. level is the highest (most contended) of the list's levels,
 * RTPLACE_LEVEL_OFFLINE when count is 0. claim_id and lease_ms are both
 * non-zero when a claim was granted, both zero otherwise. Entries past
 * count are zero in version 1 and not sent from version 2. The list is
 * the answer's one CPU set (versions 1 and 2 also send it as a mask, see
 * Versions).
 */
struct rtplace_query_reply {
	uint64_t claim_id;
	uint32_t lease_ms;   /* lease granted in ms, RTPLACE_LEASE_INFINITE: no expiry */
	uint16_t count;
	uint8_t level;
	uint8_t reserved;
	char reason[RTPLACE_REASON_MAX];
	struct rtplace_cpu_choice list[RTPLACE_QUERY_MAX_COUNT];
};

struct rtplace_release_reply {
	uint64_t claim_id;
	uint32_t ncpus;      /* CPUs the claim held */
	uint32_t reserved;
};

#define RTPLACE_CPU_F_ONLINE (1u << 0)       /* online and managed */
#define RTPLACE_CPU_F_HOUSEKEEPING (1u << 1) /* left out of the default allowed set */
/* Only when the request had RTPLACE_CPUS_F_HOST: */
#define RTPLACE_CPU_F_ISOLATED (1u << 2)     /* isolcpus= or an isolated cgroup partition */
#define RTPLACE_CPU_F_NOHZ_FULL (1u << 3)    /* nohz_full= */
/* From version 3: irq_share and softirq_share are measured (not when
 * simulating a topology) */
#define RTPLACE_CPU_F_IRQ (1u << 4)
#define RTPLACE_CPU_F_ALL \
	(RTPLACE_CPU_F_ONLINE | RTPLACE_CPU_F_HOUSEKEEPING | RTPLACE_CPU_F_ISOLATED | RTPLACE_CPU_F_NOHZ_FULL | \
	 RTPLACE_CPU_F_IRQ)

/* One CPU in a CPUS reply. Node, LLC and core ids are dense (0..n-1), -1
 * when unknown: the CPU was offline when the daemon last loaded the
 * topology (one taken offline later keeps its ids). A CPU without
 * RTPLACE_CPU_F_ONLINE is at
 * RTPLACE_LEVEL_OFFLINE. claim_id and claim_level are both zero or both not. */
struct rtplace_cpu_info {
	uint16_t cpu;
	uint8_t level;       /* RTPLACE_LEVEL_* */
	uint8_t flags;       /* RTPLACE_CPU_F_* */
	int32_t node;
	int32_t llc;
	int32_t core;
	int32_t pid;         /* thread running at the last update, 0 for none/idle */
	uint32_t rt_queued;  /* RT tasks queued */
	uint64_t claim_id;   /* claim holding the CPU, 0 for none */
	uint8_t claim_level; /* level the claim holds it at */
	uint8_t kind;        /* CPU kind, 0 the most performant */
	uint8_t reserved[2];
	int32_t package;     /* dense package id, -1 when unknown, if the request
				had RTPLACE_CPUS_F_PACKAGE; else 0 */
	char comm[RTPLACE_COMM_MAX]; /* comm of pid, "" when unknown */
	/* From version 3 (versions 1 and 2 end each entry before them): the
	 * CPU's share of the daemon's last interrupt window in hundredths of
	 * a percent (0..RTPLACE_SHARE_ONE), hardirq and softirq time. */
	uint16_t irq_share;
	uint16_t softirq_share;
	uint32_t reserved3;
};

/* All of a window, in the units of rtplace_cpu_info.irq_share. */
#define RTPLACE_SHARE_ONE 10000u

/* A page of the snapshot: entries for CPU ids first..first+count-1, where
 * count is min(RTPLACE_CPUS_PAGE, total - first); entries past count are zero
 * in version 1 and not sent from version 2. */
struct rtplace_cpus_reply {
	uint32_t total;      /* CPU ids in the topology (highest id + 1) */
	uint32_t first;
	uint32_t count;
	uint32_t reserved;
	struct rtplace_cpu_info cpus[RTPLACE_CPUS_PAGE];
};

/* Nanoseconds one CPU spent in each class, indexed by RTPLACE_CLASS_*
 * (rtplace-levels.h): counted by the BPF tracker at each change of the
 * CPU's class since the daemon started; offline time is in no class. Each
 * counter only grows while the daemon runs. */
struct rtplace_class_times {
	uint64_t ns[RTPLACE_CLASS_COUNT];
};

/* A page of time by class: entries for CPU ids first..first+count-1, where
 * count is min(RTPLACE_CPUS_PAGE, total - first); entries past count are
 * zero in version 1 and not sent from version 2. The counters include the
 * open interval up to sampled_ns. */
struct rtplace_cpu_times_reply {
	uint32_t total;      /* CPU ids in the topology (highest id + 1) */
	uint32_t first;
	uint32_t count;
	uint32_t reserved;
	uint64_t sampled_ns; /* CLOCK_MONOTONIC when the page was read */
	struct rtplace_class_times cpus[RTPLACE_CPUS_PAGE];
};

#define RTPLACE_STATUS_F_TRACKING (1u << 0) /* levels come from the live BPF tracker */
#define RTPLACE_STATUS_F_MOVES (1u << 1)    /* MOVE and SUBSCRIBE are served */
#define RTPLACE_STATUS_F_ALL (RTPLACE_STATUS_F_TRACKING | RTPLACE_STATUS_F_MOVES)

struct rtplace_status_reply {
	char version[RTPLACE_VERSION_MAX]; /* the daemon's package version, non-empty */
	uint64_t uptime_ms;
	uint32_t ncpus;      /* CPU ids (highest id + 1), 1..RTPLACE_MAX_CPUS */
	uint32_t nonline;    /* online managed CPUs, <= ncpus */
	uint32_t nnodes;
	uint32_t nllcs;
	uint32_t ncores;
	uint32_t flags;      /* RTPLACE_STATUS_F_* */
	uint64_t queries;    /* QUERY requests answered */
	uint64_t errors;     /* ERROR replies sent */
	uint64_t claims_active;
	uint64_t claims_total;
	uint64_t clients;    /* connected now */
	uint64_t clients_dropped; /* dropped for garbage or limits */
	uint64_t moves;
};

/* Where the levels come from (TRACKING_REPLY's mode). */
#define RTPLACE_TRACKING_SIMULATED 0 /* --topology: no machine; levels change with claims only */
#define RTPLACE_TRACKING_LIVE 1      /* the BPF tracker: every change as it happens */
#define RTPLACE_TRACKING_SAMPLED 2   /* the daemon reads /proc every interval_ms */

#define RTPLACE_TRACKING_WHY_MAX 256 /* why's field in versions 1 and 2, NUL included */

/*
 * How the daemon knows each CPU's level. A sampled level may be interval_ms
 * old, and what lasts less may never show. The sampler's counters are zero
 * unless mode is SAMPLED; cpu_ns is the daemon's CPU time spent sampling,
 * so cpu_ns / samples is the cost of one sample.
 */
struct rtplace_tracking_reply {
	uint32_t mode;        /* RTPLACE_TRACKING_* */
	uint32_t interval_ms; /* SAMPLED: the period; else 0 */
	uint64_t samples;     /* samples taken */
	uint64_t failures;    /* of which failed (the map kept the one before) */
	uint64_t cpu_ns;      /* CPU time of all samples */
	/* SAMPLED: why not LIVE (the feature the kernel or the daemon lacks,
	 * or the configuration); "" otherwise. A reason (see Versions). */
	char why[RTPLACE_REASON_MAX];
};

#define RTPLACE_HOST_F_RT_KNOWN (1u << 0) /* the daemon could read the RT throttling sysctls */

/*
 * The host's RT configuration (DESIGN §20) beyond the per-CPU flags: RT
 * throttling, kernel.sched_rt_runtime_us of every sched_rt_period_us
 * (runtime -1: unlimited). Both zero without RTPLACE_HOST_F_RT_KNOWN. The
 * isolated and nohz_full sets are the CPUS reply's flags.
 */
struct rtplace_host_reply {
	int64_t rt_runtime_us;
	int64_t rt_period_us;
	uint32_t flags;      /* RTPLACE_HOST_F_* */
	uint32_t reserved;
};

/* KERNEL_REPLY's rt_group: where the cpu cgroups' RT budgets are. */
#define RTPLACE_KERNEL_RTG_NONE 0 /* nowhere: no budget needed */
#define RTPLACE_KERNEL_RTG_V1 1   /* the cgroup v1 cpu controller's cpu.rt_runtime_us */
#define RTPLACE_KERNEL_RTG_V2 2   /* the cgroup v2 root's */

/* A deadline server's state. */
#define RTPLACE_KERNEL_DL_READ 0       /* every CPU's values were read */
#define RTPLACE_KERNEL_DL_ABSENT 1     /* the kernel has no such server */
#define RTPLACE_KERNEL_DL_UNREADABLE 2 /* debugfs not mounted, or hidden from the daemon: why says */

/* KERNEL_REPLY's scx_state: /sys/kernel/sched_ext/state. */
#define RTPLACE_KERNEL_SCX_ABSENT 0 /* no sched_ext in this kernel */
#define RTPLACE_KERNEL_SCX_DISABLED 1
#define RTPLACE_KERNEL_SCX_ENABLING 2
#define RTPLACE_KERNEL_SCX_ENABLED 3
#define RTPLACE_KERNEL_SCX_DISABLING 4
#define RTPLACE_KERNEL_SCX_UNKNOWN 5

#define RTPLACE_KERNEL_PATH_MAX 256 /* rt_first, NUL included */
#define RTPLACE_KERNEL_WHY_MAX 256  /* a server's why, NUL included */
#define RTPLACE_KERNEL_NAME_MAX 64  /* scx_ops, NUL included */

/* One deadline server (fair_server, ext_server) over the CPUs read: the
 * least and most runtime and period, in ns; all zero unless READ. */
struct rtplace_kernel_dlserver {
	int64_t runtime_min_ns;
	int64_t runtime_max_ns;
	int64_t period_min_ns;
	int64_t period_max_ns;
	uint32_t state;         /* RTPLACE_KERNEL_DL_* */
	uint32_t ncpus;         /* CPUs read */
	uint32_t zero;          /* of which with runtime 0 (the server off) */
	uint32_t share_max_ppm; /* the largest runtime / period, in millionths */
	char why[RTPLACE_KERNEL_WHY_MAX]; /* UNREADABLE: the path and the error; else "" */
};

/*
 * The kernel's RT environment (DESIGN §20) as the daemon last read it (at
 * start and reload; sched_ext every 10 s): RT group scheduling, the
 * deadline servers (per CPU in the metrics), sched_ext. RT throttling is
 * HOST's.
 */
struct rtplace_kernel_reply {
	int64_t rt_root_runtime_us; /* the root cpu cgroup's budget (-1: unlimited); 0 with RTG_NONE */
	int64_t rt_root_period_us;
	uint32_t rt_group;          /* RTPLACE_KERNEL_RTG_* */
	int32_t rt_group_boot;      /* rt_group_sched= on the kernel's command line: -1 absent, 0 or 1 */
	uint32_t rt_folders;        /* cpu cgroup folders below the root */
	uint32_t rt_budgetless;     /* of which without an RT budget (RT refused there) */
	char rt_first[RTPLACE_KERNEL_PATH_MAX]; /* the shallowest of those ("/a/b"), "" when none */
	struct rtplace_kernel_dlserver fair;
	struct rtplace_kernel_dlserver ext;
	int64_t scx_enable_seq;     /* schedulers enabled since boot, -1 when the kernel does not say */
	uint32_t scx_state;         /* RTPLACE_KERNEL_SCX_* */
	int32_t scx_switch_all;     /* every normal task on it: 1, SCHED_EXT tasks only: 0, unknown: -1 */
	char scx_ops[RTPLACE_KERNEL_NAME_MAX]; /* the scheduler's name while not DISABLED, else "" */
};

/*
 * Local reads (DESIGN §19). The packet carrying this reply also carries
 * two read-only descriptors as SCM_RIGHTS, in this order: the cpupri map
 * (cpupri.h, map_size bytes) and the placement snapshot (snapshot.h,
 * snap_size bytes of layout snap_layout). Map both PROT_READ and
 * MAP_SHARED: a writable mapping of either fails.
 */
struct rtplace_local_reply {
	uint64_t map_size;
	uint64_t snap_size;
	uint32_t snap_layout;
	uint32_t reserved;
};

/* The thread's scheduling after the move, and before it (for undo). */
struct rtplace_move_reply {
	int32_t tid;
	uint8_t policy;      /* RTPLACE_POLICY_*; prio 0 with OTHER, else 1..99 */
	uint8_t prio;
	uint8_t prev_policy;
	uint8_t prev_prio;
	struct rtplace_cpumask cpus;
	struct rtplace_cpumask prev_cpus;
};

/*
 * The notification ring. The packet carrying this reply also carries two
 * descriptors as SCM_RIGHTS ancillary data, in this order: the ring's memfd
 * (map ring_bytes of it read-write: the consumer publishes its tail index
 * there, see record.h) and its eventfd doorbell.
 */
struct rtplace_subscribe_reply {
	uint32_t ring_records; /* a power of two */
	uint32_t record_size;  /* 32 or 64 */
	uint64_t ring_bytes;   /* ring header + records, >= ring_records * record_size */
};

/* CLAIM_REPLY flags. How the claim ends besides RELEASE: exactly one of
 * OWNER_EXIT and CONNECTION, and LEASE when it has one. */
#define RTPLACE_CLAIM_F_LEASE (1u << 0)      /* its lease runs out in lease_left_ms */
#define RTPLACE_CLAIM_F_OWNER_EXIT (1u << 1) /* it lives with a process (QUERY's owner_pid) */
#define RTPLACE_CLAIM_F_CONNECTION (1u << 2) /* it lives with the connection that made it */
/* Whose it is, as the receiver may know (DESIGN §15): exactly one of UID
 * and OTHER_USER. */
#define RTPLACE_CLAIM_F_UID (1u << 3)        /* owner_uid is its user's: the receiver's own, or any for root */
#define RTPLACE_CLAIM_F_OTHER_USER (1u << 4) /* another user's: no owner field is filled */
/* With UID and OWNER_EXIT: owner_pid and owner_comm name the process,
 * which lives in the receiver's PID namespace. */
#define RTPLACE_CLAIM_F_PID (1u << 5)
#define RTPLACE_CLAIM_F_EXCLUSIVE (1u << 6)  /* level is RTPLACE_LEVEL_DL: no query gets its CPUs */
#define RTPLACE_CLAIM_F_ISOLATED (1u << 7)   /* with EXCLUSIVE: its CPUs are isolated (QUERY_F_ISOLATE) */
#define RTPLACE_CLAIM_F_ALL \
	(RTPLACE_CLAIM_F_LEASE | RTPLACE_CLAIM_F_OWNER_EXIT | RTPLACE_CLAIM_F_CONNECTION | RTPLACE_CLAIM_F_UID | \
	 RTPLACE_CLAIM_F_OTHER_USER | RTPLACE_CLAIM_F_PID | RTPLACE_CLAIM_F_EXCLUSIVE | RTPLACE_CLAIM_F_ISOLATED)

/*
 * One claim, the answer to CLAIM; claim_id 0 (every field zero, cpus
 * empty) when there is none at or above from_id. Fields a flag does not
 * fill are zero. cpus is sent as Versions says of CPU sets (CLAIM_REPLY
 * is 72 + 8 n bytes in version 3).
 */
struct rtplace_claim_reply {
	uint64_t claim_id;
	uint32_t flags;         /* RTPLACE_CLAIM_F_* */
	uint32_t lease_left_ms; /* with LEASE: until it runs out (0: now) */
	int32_t owner_pid;      /* with PID: the receiver's number of the owner process */
	uint32_t owner_uid;     /* with UID */
	uint8_t level;          /* the level its CPUs count as: RTPLACE_LEVEL_NORMAL .. _DL */
	uint8_t reserved[7];
	char owner_comm[RTPLACE_COMM_MAX]; /* with PID: the owner's comm, "" when unknown */
	struct rtplace_cpumask cpus;       /* non-empty with a claim */
};

/* Why EXPLAIN says a CPU was chosen or passed over: one verdict, the
 * first that applies, in this order (DESIGN §5's rules). */
enum {
	RTPLACE_EXPLAIN_CHOSEN = 0,       /* in the answer; rank its place in it */
	RTPLACE_EXPLAIN_NOT_ALLOWED,      /* outside the request's allowed CPUs */
	RTPLACE_EXPLAIN_OFFLINE,          /* offline, or not in the map */
	RTPLACE_EXPLAIN_HOUSEKEEPING,     /* a housekeeping CPU: not managed */
	RTPLACE_EXPLAIN_OTHER_NODE,       /* not on the request's node */
	RTPLACE_EXPLAIN_ISOLATED,         /* isolated, and this request keeps off isolated CPUs */
	RTPLACE_EXPLAIN_NOT_ISOLATED,     /* not isolated, and this request takes isolated CPUs only */
	RTPLACE_EXPLAIN_BUSY,             /* what runs there is at or above the priority */
	RTPLACE_EXPLAIN_CLAIMED,          /* a claim holds it at or above the priority */
	RTPLACE_EXPLAIN_ISOLATION_SIDE,   /* under isolated = prefer, the other side answered */
	RTPLACE_EXPLAIN_KIND,             /* a less performant kind; enough of the most were free */
	RTPLACE_EXPLAIN_BUSIER,           /* a higher level than every chosen CPU */
	RTPLACE_EXPLAIN_GROUP,            /* outside the cache or node the answer keeps to */
	RTPLACE_EXPLAIN_SMT,              /* its SMT sibling (other) is busy, or an earlier pick */
	RTPLACE_EXPLAIN_FARTHER,          /* farther from the near CPU or the first pick */
	RTPLACE_EXPLAIN_NOISY,            /* interrupt noise; quieter CPUs came first */
	RTPLACE_EXPLAIN_ROTATION,         /* an equal; rotation spreads answers, the next may get it */
	RTPLACE_EXPLAIN_CHANGED,          /* its level changed while the answer was made */
	RTPLACE_EXPLAIN_COUNT,
};

/* EXPLAIN's per-CPU flags: what else is true of the CPU. */
#define RTPLACE_EXPLAIN_CPU_F_ISOLATED (1u << 0)   /* isolcpus=, an isolated partition, or a claim's isolation */
#define RTPLACE_EXPLAIN_CPU_F_NOHZ_FULL (1u << 1)
#define RTPLACE_EXPLAIN_CPU_F_NOISY (1u << 2)      /* ranked last for interrupt noise */
/* A claim holds it: claim_id and claim_level set, and whose it is as the
 * receiver may see it (CLAIM_REPLY's rules): exactly one of CLAIM_UID
 * and CLAIM_OTHER_USER, CLAIM_PID only with CLAIM_UID. */
#define RTPLACE_EXPLAIN_CPU_F_CLAIM_UID (1u << 3)  /* claim_uid is its user's */
#define RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER (1u << 4)
#define RTPLACE_EXPLAIN_CPU_F_CLAIM_PID (1u << 5)  /* claim_pid and claim_comm name its owner process */
#define RTPLACE_EXPLAIN_CPU_F_ALL \
	(RTPLACE_EXPLAIN_CPU_F_ISOLATED | RTPLACE_EXPLAIN_CPU_F_NOHZ_FULL | RTPLACE_EXPLAIN_CPU_F_NOISY | \
	 RTPLACE_EXPLAIN_CPU_F_CLAIM_UID | RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER | RTPLACE_EXPLAIN_CPU_F_CLAIM_PID)

/* One CPU of an EXPLAIN page. pid and comm are what the CPUS reply would
 * show this receiver. other is the CPU the verdict names (SMT: the busy
 * or chosen sibling), -1 for none. */
struct rtplace_explain_cpu {
	uint16_t cpu;
	uint8_t verdict;     /* RTPLACE_EXPLAIN_* */
	uint8_t level;       /* the level placement counts: the map's or the claim's, the higher */
	uint8_t map_level;   /* what runs there: the map's level */
	uint8_t claim_level; /* the claim's level, 0 for none */
	uint16_t flags;      /* RTPLACE_EXPLAIN_CPU_F_* */
	uint16_t rank;       /* CHOSEN: its place in the answer, from 1; else 0 */
	uint16_t reserved;
	int32_t other;
	int32_t pid;         /* thread running there, 0 for none or unseen */
	int32_t claim_pid;   /* with CLAIM_PID */
	uint64_t claim_id;   /* 0 for none */
	uint32_t claim_uid;  /* with CLAIM_UID */
	uint32_t reserved2;
	char comm[RTPLACE_COMM_MAX];       /* comm of pid, "" when unknown */
	char claim_comm[RTPLACE_COMM_MAX]; /* with CLAIM_PID, "" when unknown */
};

/* What stops the thread from getting the policy asked (EXPLAIN's
 * obstacles): value and limit as each says. */
enum {
	/* Its soft RLIMIT_RTPRIO (value; limit the hard one, -1 for
	 * unlimited) is below the priority and it has no CAP_SYS_NICE. */
	RTPLACE_OBSTACLE_RTPRIO = 1,
	/* CAP_SYS_NICE only in a user namespace other than the daemon's,
	 * which the kernel does not count for RT policies. */
	RTPLACE_OBSTACLE_CAP_USERNS,
	/* Its cpu cgroup has no RT budget (RT group scheduling): value 0,
	 * limit the most it can be given in us; the reply's detail names
	 * the folder and the fix. */
	RTPLACE_OBSTACLE_RT_BUDGET,
	/* RT throttling: RT tasks may run value us of every limit us on a
	 * CPU (kernel.sched_rt_runtime_us and _period_us). */
	RTPLACE_OBSTACLE_THROTTLING,
	/* A deadline server keeps part of each CPU for the tasks RT threads
	 * would starve: value its largest share in millionths, limit 0 for
	 * the fair server, 1 for the ext server (sched_ext's). */
	RTPLACE_OBSTACLE_DL_SERVER,
	/* A sched_ext scheduler is loaded: value 1 when every normal task is
	 * on it (switch_all), else 0. */
	RTPLACE_OBSTACLE_SCHED_EXT,
	RTPLACE_OBSTACLE_COUNT,
};

#define RTPLACE_EXPLAIN_OBSTACLES_MAX 8

struct rtplace_explain_obstacle {
	uint16_t kind;       /* RTPLACE_OBSTACLE_* */
	uint16_t reserved[3];
	int64_t value;
	int64_t limit;
};

/*
 * A page of EXPLAIN: entries for CPU ids first..first+count-1 (count as
 * CPUS pages count), then not sent. result is what the QUERY would
 * answer: 0 with nchosen CPUs (each CHOSEN in its page), -ENOENT with
 * none below the priority, -ENODEV with no managed online CPU allowed;
 * level the highest chosen level (RTPLACE_LEVEL_OFFLINE with none).
 * claim_level, with the query's CLAIM flag, is the level the claim would
 * hold (lower than asked for a requester without the right to RT).
 * obstacles past nobstacles are zero. detail is a reason (see Versions):
 * with an RT_BUDGET obstacle the folder and the fix in words, else "".
 */
struct rtplace_explain_reply {
	uint32_t total;      /* CPU ids in the topology (highest id + 1) */
	uint32_t first;
	uint32_t count;
	int32_t result;
	uint16_t nchosen;
	uint8_t level;
	uint8_t nobstacles;
	uint8_t claim_level;
	uint8_t reserved[3];
	struct rtplace_explain_obstacle obstacles[RTPLACE_EXPLAIN_OBSTACLES_MAX];
	char detail[RTPLACE_REASON_MAX];
	struct rtplace_explain_cpu cpus[RTPLACE_CPUS_PAGE];
};

/* ---- Events ------------------------------------------------------------ */

#define RTPLACE_CLAIM_ENDED_EXPIRED 1      /* its lease ran out */
#define RTPLACE_CLAIM_ENDED_OWNER_EXITED 2 /* owner_pid exited */
#define RTPLACE_CLAIM_ENDED_REVOKED 3      /* the daemon withdrew it (CPU offline, reload) */

/* Sent to the connection holding a claim when the claim ends other than by
 * its own RELEASE. */
struct rtplace_claim_ended {
	uint64_t claim_id;   /* non-zero */
	uint32_t why;        /* RTPLACE_CLAIM_ENDED_* */
	uint32_t reserved;
};

/* ---- Layout pins: these numbers are the wire format ---------------------- */

RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_msg_hdr) == 24, "header is 24 bytes");
RTPLACE_PROTO_ASSERT(RTPLACE_PROTO_ALIGNOF(struct rtplace_msg_hdr) == 4, "header is 4-aligned");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_msg_hdr, version) == 4, "header layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_msg_hdr, type) == 6, "header layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_msg_hdr, length) == 8, "header layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_msg_hdr, request_id) == 12, "header layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_msg_hdr, status) == 16, "header layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_msg_hdr, reserved) == 20, "header layout");

RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_cpumask) == RTPLACE_MAX_CPUS / 8, "cpumask is a plain bitmap");
RTPLACE_PROTO_ASSERT(RTPLACE_PROTO_ALIGNOF(struct rtplace_cpumask) == 8, "cpumask is 8-aligned");

RTPLACE_PROTO_ASSERT(RTPLACE_MAX_CPUS % 64 == 0 && RTPLACE_CPUMASK_V2_CPUS % 64 == 0, "sets are whole words");
RTPLACE_PROTO_ASSERT(RTPLACE_MAX_CPUS <= 65536, "CPU ids fit the choice's uint16_t");

RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_query) == 24 + RTPLACE_MAX_CPUS / 8, "query layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_query, flags) == 4, "query layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_query, owner_pid) == 20, "query layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_query, allowed) == 24, "query layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_release) == 8, "release layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_cpus) == 8, "cpus layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_move) == 16 + RTPLACE_MAX_CPUS / 8, "move layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_move, policy) == 8, "move layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_move, cpus) == 16, "move layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_subscribe) == 8, "subscribe layout");

RTPLACE_PROTO_ASSERT(RTPLACE_REASON_MAX == 512 && RTPLACE_REASON_V2_MAX == 64, "reason sizes");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_error) == 8 + RTPLACE_REASON_MAX, "error layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_error, reason) == 8, "error layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_cpu_choice) == 4, "choice layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_query_reply) == 16 + RTPLACE_REASON_MAX + 4 * RTPLACE_QUERY_MAX_COUNT,
		     "query reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_query_reply, reason) == 16, "query reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_query_reply, list) == 16 + RTPLACE_REASON_MAX, "query reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_release_reply) == 16, "release reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_cpu_info) == 64, "cpu info layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_cpu_info, irq_share) == 56, "cpu info layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_cpu_info, claim_id) == 24, "cpu info layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_cpu_info, package) == 36, "cpu info layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_cpu_info, comm) == 40, "cpu info layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_cpus_reply) == 16 + 64 * RTPLACE_CPUS_PAGE, "cpus reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_cpus_reply, cpus) == 16, "cpus reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_class_times) == 8 * RTPLACE_CLASS_COUNT, "cpu time layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_cpu_times_reply) == 24 + 32 * RTPLACE_CPUS_PAGE, "cpu times reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_cpu_times_reply, cpus) == 24, "cpu times reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_status_reply) == 120, "status reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_status_reply, uptime_ms) == 32, "status reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_status_reply, queries) == 64, "status reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_tracking_reply) == 32 + RTPLACE_REASON_MAX, "tracking reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_host_reply) == 24, "host reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_kernel_dlserver) == 304, "kernel reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_kernel_reply) == 976, "kernel reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_kernel_reply, fair) == 288, "kernel reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_kernel_reply, scx_enable_seq) == 896, "kernel reply layout");
RTPLACE_PROTO_ASSERT(RTPLACE_PROTO_ALIGNOF(struct rtplace_kernel_reply) == 8, "kernel reply layout");
RTPLACE_PROTO_ASSERT(RTPLACE_PROTO_ALIGNOF(struct rtplace_host_reply) == 8, "host reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_host_reply, flags) == 16, "host reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_tracking_reply, why) == 32, "tracking reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_local_reply) == 24, "local reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_local_reply, snap_layout) == 16, "local reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_move_reply) == 8 + 2 * (RTPLACE_MAX_CPUS / 8), "move reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_move_reply, cpus) == 8, "move reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_move_reply, prev_cpus) == 8 + RTPLACE_MAX_CPUS / 8,
		     "move reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_subscribe_reply) == 16, "subscribe reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_claim_ended) == 16, "claim ended layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_claim_req) == 8, "claim layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_claim_reply) == 48 + RTPLACE_MAX_CPUS / 8, "claim reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_claim_reply, level) == 24, "claim reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_claim_reply, owner_comm) == 32, "claim reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_claim_reply, cpus) == 48, "claim reply layout");

RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_explain) == 8 + sizeof(struct rtplace_query), "explain layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_explain, query) == 8, "explain layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_explain_cpu) == 72, "explain cpu layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_explain_cpu, claim_id) == 24, "explain cpu layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_explain_cpu, comm) == 40, "explain cpu layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_explain_obstacle) == 24, "obstacle layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_explain_reply, obstacles) == 24, "explain reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_explain_reply, detail) == 24 + 24 * RTPLACE_EXPLAIN_OBSTACLES_MAX,
		     "explain reply layout");
RTPLACE_PROTO_ASSERT(offsetof(struct rtplace_explain_reply, cpus) ==
			     offsetof(struct rtplace_explain_reply, detail) + RTPLACE_REASON_MAX,
		     "explain reply layout");
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_msg_hdr) + sizeof(struct rtplace_explain_reply) <= RTPLACE_MSG_MAX / 4,
		     "an explain page stays small");

/* The biggest message fits the bound with room for later versions (a
 * quarter of it: version 3's CPUS reply, with its interrupt shares, is
 * just past an eighth). */
RTPLACE_PROTO_ASSERT(sizeof(struct rtplace_msg_hdr) + sizeof(struct rtplace_cpus_reply) <= RTPLACE_MSG_MAX / 4,
		     "messages stay small");

#undef RTPLACE_PROTO_ASSERT
#undef RTPLACE_PROTO_ALIGNOF

#endif
