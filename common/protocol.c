/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire codec. One table lists every message type with its body size,
 * which side takes it and its body check; decode, validate and encode all
 * run the same checks, so what a sender builds is exactly what a receiver
 * accepts.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpuset.h"
#include "protocol.h"
#include "reason.h"

_Static_assert(RTPLACE_QUERY_MAX_COUNT == 256, "the count reasons name the bound");

/* Largest errno an ERROR may carry (the kernel's MAX_ERRNO). */
#define PROTO_MAX_ERRNO 4095

/* The numbers a message is checked against. */
struct proto_bounds {
	uint32_t ncpus;
	uint32_t nnodes;
	bool machine; /* the receiver's machine (limits given), not the protocol's */
	bool isolate; /* the receiver isolates claims (or, without limits, may) */
};

struct proto_type {
	uint16_t type;
	uint16_t accept; /* enum proto_accept: which side takes it */
	uint32_t body_size;
	/* A body ending in a list, which from version 2 ends after its count-th
	 * entry: the list's offset in the body (0: no list, a fixed length),
	 * its entries' size, and where the count is (2 or 4 bytes). */
	uint32_t list_offset;
	uint32_t entry_size;
	uint32_t count_offset;
	uint32_t count_size;
	uint32_t max_entries;
	/* Bytes of each entry sent before version 3, a prefix of the entry
	 * (0: all of it): fields added in version 3 end the entry. */
	uint32_t v2_entry_size;
	/* CPU sets: how many (struct rtplace_cpumask, one after another from
	 * set_offset), and whether versions 1 and 2 carry the list's CPUs as
	 * a mask before the list (QUERY_REPLY). */
	uint32_t nsets;
	uint32_t set_offset;
	bool list_mask;
	/* A reason field of RTPLACE_REASON_MAX bytes at reason_offset, the
	 * body's last field or the one before its list: versions 1 and 2 send
	 * it there as reason_v2 bytes, version 3 at the end of the message up
	 * to its NUL. */
	bool has_reason;
	uint32_t reason_offset;
	uint32_t reason_v2;
	const char *name;
	int (*check)(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason);
};

static int proto_fail(struct rtplace_reason *reason, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int proto_fail(struct rtplace_reason *reason, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason->text, sizeof(reason->text), fmt, ap);
	va_end(ap);
	return r;
}

static bool proto_is_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

/* A fixed string: NUL within the field, nothing but zeros after it. */
static bool proto_string_ok(const char *s, size_t size, bool nonempty)
{
	const char *nul = memchr(s, '\0', size);

	if (!nul || (nonempty && nul == s))
		return false;
	return proto_is_zero(nul, size - (size_t)(nul - s));
}

/* Words of m up to its last non-zero one: what version 3 sends. */
static uint32_t proto_mask_used(const struct rtplace_cpumask *m)
{
	uint32_t n = RTPLACE_CPUMASK_WORDS;

	while (n > 0 && !m->bits[n - 1])
		n--;
	return n;
}

/* Every set bit names a CPU below ncpus. */
static bool proto_mask_within(const struct rtplace_cpumask *m, uint32_t ncpus)
{
	for (uint32_t i = 0; i < RTPLACE_CPUMASK_WORDS; i++) {
		uint64_t allowed;

		if (ncpus >= (i + 1) * 64)
			continue;
		allowed = ncpus > i * 64 ? (UINT64_C(1) << (ncpus - i * 64)) - 1 : 0;
		if (m->bits[i] & ~allowed)
			return false;
	}
	return true;
}

static bool proto_mask_empty(const struct rtplace_cpumask *m)
{
	return proto_is_zero(m, sizeof(*m));
}

static bool proto_policy_rt(uint8_t policy)
{
	return policy == RTPLACE_POLICY_FIFO || policy == RTPLACE_POLICY_RR;
}

static bool proto_prio_ok(uint8_t prio)
{
	return prio >= RTPLACE_PRIO_MIN && prio <= RTPLACE_PRIO_MAX;
}

/* A thread's scheduling as a reply reports it: OTHER at 0, or RT at 1..99. */
static bool proto_sched_ok(uint8_t policy, uint8_t prio)
{
	if (policy == RTPLACE_POLICY_OTHER)
		return prio == 0;
	return proto_policy_rt(policy) && proto_prio_ok(prio);
}

static bool proto_id_ok(int32_t id, uint32_t n)
{
	return id == -1 || (id >= 0 && (uint32_t)id < n);
}

/*
 * The refusals of a node or CPU id a request names: in the user's words,
 * what was asked that is not there and what there is ("node 3 is not on
 * this machine: nodes 0-1"), the one wording every client prints. Bounds
 * that are the protocol's, not a machine's, name the protocol's range.
 */
static const char *proto_plural(uint32_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static int proto_fail_node(struct rtplace_reason *reason, const struct proto_bounds *b, int32_t node)
{
	if (!b->machine)
		return proto_fail(reason, -ERANGE, "node %d is out of range: node ids are 0 to %u", (int)node,
				  b->nnodes - 1);
	if (b->nnodes == 0)
		return proto_fail(reason, -ERANGE, "node %d is not on this machine", (int)node);
	if (b->nnodes == 1)
		return proto_fail(reason, -ERANGE, "node %d is not on this machine: it has node 0 only", (int)node);
	return proto_fail(reason, -ERANGE, "node %d is not on this machine: nodes 0-%u", (int)node, b->nnodes - 1);
}

/* What CPUs the machine has, after a colon. */
static void proto_cpus_had(const struct proto_bounds *b, char *buf, size_t len)
{
	if (b->ncpus == 1)
		snprintf(buf, len, "it has CPU 0 only");
	else
		snprintf(buf, len, "CPUs 0-%u", b->ncpus - 1);
}

static int proto_fail_near(struct rtplace_reason *reason, const struct proto_bounds *b, int32_t cpu)
{
	char had[32];

	if (!b->machine)
		return proto_fail(reason, -ERANGE, "near CPU %d is out of range: CPU ids are 0 to %u", (int)cpu,
				  b->ncpus - 1);
	proto_cpus_had(b, had, sizeof(had));
	return proto_fail(reason, -ERANGE, "near CPU %d is not on this machine: %s", (int)cpu, had);
}

/* m has a CPU at or past b->ncpus (proto_mask_within() said so). */
static int proto_fail_cpus(struct rtplace_reason *reason, const struct proto_bounds *b,
			   const struct rtplace_cpumask *m)
{
	struct rtplace_cpumask out = *m;
	char list[RTPLACE_REASON_MAX], had[32];
	int first, last = -1;
	unsigned n;

	for (uint32_t cpu = 0; cpu < b->ncpus; cpu++)
		cpuset_clear(&out, cpu);
	n = cpuset_count(&out);
	first = cpuset_next(&out, 0);
	CPUSET_FOREACH(cpu, &out)
		last = cpu;
	proto_cpus_had(b, had, sizeof(had));
	/* A list longer than a reason is named by its ends. */
	if (cpuset_format(&out, list, sizeof(list)) < 0)
		return proto_fail(reason, -ERANGE, "%u CPUs from %d to %d are not on this machine: %s", n, first, last,
				  had);
	return proto_fail(reason, -ERANGE, "%s %s %s not on this machine: %s", proto_plural(n, "CPU", "CPUs"), list,
			  proto_plural(n, "is", "are"), had);
}

/* A QUERY's body, alone or in an EXPLAIN. */
static int proto_check_query_body(const struct rtplace_query *q, const struct proto_bounds *b,
				  struct rtplace_reason *reason)
{
	bool claim = q->flags & RTPLACE_QUERY_F_CLAIM;

	if (!proto_prio_ok(q->prio))
		return proto_fail(reason, -ERANGE, "prio out of range 1..99");
	if (!proto_policy_rt(q->policy))
		return proto_fail(reason, -EINVAL, "policy must be fifo or rr");
	if (q->count < 1 || q->count > RTPLACE_QUERY_MAX_COUNT)
		return proto_fail(reason, -ERANGE, "count out of range 1..256");
	if (q->count > b->ncpus)
		return proto_fail(reason, -ERANGE, "count exceeds the CPUs");
	if (q->flags & ~RTPLACE_QUERY_F_ALL)
		return proto_fail(reason, -EINVAL, "unknown query flags");
	if (!proto_id_ok(q->node, b->nnodes))
		return proto_fail_node(reason, b, q->node);
	if (!proto_id_ok(q->near_cpu, b->ncpus))
		return proto_fail_near(reason, b, q->near_cpu);
	if (!proto_mask_within(&q->allowed, b->ncpus))
		return proto_fail_cpus(reason, b, &q->allowed);
	if (q->owner_pid < 0)
		return proto_fail(reason, -ERANGE, "owner pid out of range");
	if (!claim && q->lease_ms)
		return proto_fail(reason, -EINVAL, "lease without claim flag");
	if (!claim && q->owner_pid)
		return proto_fail(reason, -EINVAL, "owner pid without claim flag");
	if (!claim && (q->flags & RTPLACE_QUERY_F_EXCLUSIVE))
		return proto_fail(reason, -EINVAL, "exclusive without claim flag");
	if ((q->flags & RTPLACE_QUERY_F_MANAGE) && !q->owner_pid)
		return proto_fail(reason, -EINVAL, "manage without owner pid");
	if ((q->flags & RTPLACE_QUERY_F_ISOLATE) && !(q->flags & RTPLACE_QUERY_F_EXCLUSIVE))
		return proto_fail(reason, -EINVAL, "isolate without exclusive flag");
	if ((q->flags & RTPLACE_QUERY_F_ISOLATE_TRY) && !(q->flags & RTPLACE_QUERY_F_ISOLATE))
		return proto_fail(reason, -EINVAL, "isolate-if-possible without isolate flag");
	if ((q->flags & RTPLACE_QUERY_F_ISOLATE) && !(q->flags & RTPLACE_QUERY_F_ISOLATE_TRY) && !b->isolate)
		return proto_fail(reason, -EOPNOTSUPP,
				  "this daemon isolates nothing ([isolation] in rtplaced.conf turns it on)");
	return 0;
}

static int proto_check_query(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	return proto_check_query_body(&m->query, b, reason);
}

static int proto_check_explain(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	if (m->explain.reserved)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (m->explain.first >= b->ncpus)
		return proto_fail(reason, -ERANGE, "first cpu out of range");
	return proto_check_query_body(&m->explain.query, b, reason);
}

static int proto_check_release(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	if (!m->release.claim_id)
		return proto_fail(reason, -EINVAL, "claim id is 0");
	return 0;
}

static int proto_check_cpus(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	if (m->cpus.flags & ~RTPLACE_CPUS_F_ALL || (m->hdr.type == RTPLACE_MSG_CPU_TIMES && m->cpus.flags))
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (m->cpus.first >= b->ncpus)
		return proto_fail(reason, -ERANGE, "first cpu out of range");
	return 0;
}

static int proto_check_empty(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	return 0;
}

static int proto_check_move(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	const struct rtplace_move *mv = &m->move;

	if (mv->tid <= 0)
		return proto_fail(reason, -ERANGE, "tid out of range");
	if (mv->flags & ~RTPLACE_MOVE_F_ALL)
		return proto_fail(reason, -EINVAL, "unknown move flags");
	if (!(mv->flags & (RTPLACE_MOVE_F_SET_AFFINITY | RTPLACE_MOVE_F_SET_SCHED)))
		return proto_fail(reason, -EINVAL, "move changes nothing");
	if (!proto_is_zero(mv->reserved, sizeof(mv->reserved)))
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (mv->flags & RTPLACE_MOVE_F_SET_SCHED) {
		if (!proto_policy_rt(mv->policy))
			return proto_fail(reason, -EINVAL, "policy must be fifo or rr");
		if (!proto_prio_ok(mv->prio))
			return proto_fail(reason, -ERANGE, "prio out of range 1..99");
	} else if (mv->policy || mv->prio) {
		return proto_fail(reason, -EINVAL, "policy without set-sched flag");
	}
	if (mv->flags & RTPLACE_MOVE_F_SET_AFFINITY) {
		if (proto_mask_empty(&mv->cpus))
			return proto_fail(reason, -EINVAL, "empty cpu mask");
		if (!proto_mask_within(&mv->cpus, b->ncpus))
			return proto_fail_cpus(reason, b, &mv->cpus);
	} else {
		if (!proto_mask_empty(&mv->cpus))
			return proto_fail(reason, -EINVAL, "cpus without set-affinity flag");
		if (mv->flags & RTPLACE_MOVE_F_PLACE)
			return proto_fail(reason, -EINVAL, "place without set-affinity flag");
	}
	if ((mv->flags & RTPLACE_MOVE_F_PROCESS) && (mv->flags & RTPLACE_MOVE_F_PLACE))
		return proto_fail(reason, -EINVAL, "place moves one thread, not a process");
	return 0;
}

static int proto_check_subscribe(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	if (m->subscribe.flags)
		return proto_fail(reason, -EINVAL, "unknown subscribe flags");
	if (m->subscribe.reserved)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	return 0;
}

static int proto_check_error(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	const struct rtplace_error *e = &m->error;

	if (!proto_is_zero(e->reserved, sizeof(e->reserved)))
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (!proto_string_ok(e->reason, sizeof(e->reason), true))
		return proto_fail(reason, -EINVAL, "bad reason string");
	return 0;
}

static int proto_check_query_reply(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	const struct rtplace_query_reply *r = &m->query_reply;
	struct rtplace_cpumask seen = { { 0 } };
	unsigned level = RTPLACE_LEVEL_OFFLINE;

	if (r->count > RTPLACE_QUERY_MAX_COUNT)
		return proto_fail(reason, -ERANGE, "count out of range 0..256");
	if (r->reserved)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (!proto_string_ok(r->reason, sizeof(r->reason), r->count == 0))
		return proto_fail(reason, -EINVAL, "bad reason string");
	if (!r->claim_id != !r->lease_ms)
		return proto_fail(reason, -EINVAL, "claim id and lease disagree");
	if (r->count == 0 && r->claim_id)
		return proto_fail(reason, -EINVAL, "claim on an empty answer");
	for (unsigned i = 0; i < r->count; i++) {
		const struct rtplace_cpu_choice *c = &r->list[i];

		if (c->cpu >= b->ncpus)
			return proto_fail(reason, -ERANGE, "cpu out of range");
		if (c->level >= RTPLACE_LEVEL_COUNT)
			return proto_fail(reason, -ERANGE, "level out of range");
		if (c->reserved)
			return proto_fail(reason, -EINVAL, "reserved field not zero");
		if (rtplace_cpumask_test(&seen, c->cpu))
			return proto_fail(reason, -EINVAL, "cpu listed twice");
		rtplace_cpumask_set(&seen, c->cpu);
		if (c->level > level)
			level = c->level;
	}
	if (!proto_is_zero(&r->list[r->count], sizeof(r->list[0]) * (RTPLACE_QUERY_MAX_COUNT - r->count)))
		return proto_fail(reason, -EINVAL, "entries past count not zero");
	if (r->level != level)
		return proto_fail(reason, -EINVAL, "level is not the highest listed");
	return 0;
}

static int proto_check_release_reply(const struct proto_msg *m, const struct proto_bounds *b,
				     struct rtplace_reason *reason)
{
	if (!m->release_reply.claim_id)
		return proto_fail(reason, -EINVAL, "claim id is 0");
	if (m->release_reply.ncpus > b->ncpus)
		return proto_fail(reason, -ERANGE, "cpu count out of range");
	if (m->release_reply.reserved)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	return 0;
}

static int proto_check_cpu_info(const struct rtplace_cpu_info *c, uint32_t cpu, const struct proto_bounds *b,
				struct rtplace_reason *reason)
{
	if (c->cpu != cpu)
		return proto_fail(reason, -EINVAL, "cpu entry out of order");
	if (c->level >= RTPLACE_LEVEL_COUNT || c->claim_level >= RTPLACE_LEVEL_COUNT)
		return proto_fail(reason, -ERANGE, "level out of range");
	if (c->flags & ~RTPLACE_CPU_F_ALL)
		return proto_fail(reason, -EINVAL, "unknown cpu flags");
	if (!(c->flags & RTPLACE_CPU_F_ONLINE) && c->level != RTPLACE_LEVEL_OFFLINE)
		return proto_fail(reason, -EINVAL, "offline cpu with a level");
	if (!proto_id_ok(c->node, b->nnodes))
		return proto_fail(reason, -ERANGE, "node out of range");
	if (c->llc < -1 || c->core < -1 || c->package < -1)
		return proto_fail(reason, -ERANGE, "topology id out of range");
	if (c->pid < 0)
		return proto_fail(reason, -ERANGE, "pid out of range");
	if (!c->claim_id != !c->claim_level)
		return proto_fail(reason, -EINVAL, "claim id and level disagree");
	if (!proto_is_zero(c->reserved, sizeof(c->reserved)) || c->reserved3)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (c->irq_share > RTPLACE_SHARE_ONE || c->softirq_share > RTPLACE_SHARE_ONE)
		return proto_fail(reason, -ERANGE, "interrupt share out of range");
	if (!proto_string_ok(c->comm, sizeof(c->comm), false))
		return proto_fail(reason, -EINVAL, "bad comm string");
	return 0;
}

/* The paging fields of a CPUS or CPU_TIMES reply; *ret_count is the
 * page's entry count. */
static int proto_check_page(uint32_t total, uint32_t first, uint32_t count, uint32_t reserved,
			    const struct proto_bounds *b, struct rtplace_reason *reason, uint32_t *ret_count)
{
	uint32_t fill;

	if (total < 1 || total > b->ncpus)
		return proto_fail(reason, -ERANGE, "total out of range");
	if (first >= total)
		return proto_fail(reason, -ERANGE, "first cpu out of range");
	fill = total - first < RTPLACE_CPUS_PAGE ? total - first : RTPLACE_CPUS_PAGE;
	if (count != fill)
		return proto_fail(reason, -EINVAL, "count does not fill the page");
	if (reserved)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	*ret_count = fill;
	return 0;
}

static int proto_check_cpus_reply(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	const struct rtplace_cpus_reply *r = &m->cpus_reply;
	uint32_t count;
	int ret = proto_check_page(r->total, r->first, r->count, r->reserved, b, reason, &count);

	if (ret < 0)
		return ret;
	for (uint32_t i = 0; i < count; i++) {
		ret = proto_check_cpu_info(&r->cpus[i], r->first + i, b, reason);
		if (ret < 0)
			return ret;
	}
	if (!proto_is_zero(&r->cpus[count], sizeof(r->cpus[0]) * (RTPLACE_CPUS_PAGE - count)))
		return proto_fail(reason, -EINVAL, "entries past count not zero");
	return 0;
}

static int proto_check_cpu_times_reply(const struct proto_msg *m, const struct proto_bounds *b,
				       struct rtplace_reason *reason)
{
	const struct rtplace_cpu_times_reply *r = &m->cpu_times_reply;
	uint32_t count;
	int ret = proto_check_page(r->total, r->first, r->count, r->reserved, b, reason, &count);

	if (ret < 0)
		return ret;
	if (!proto_is_zero(&r->cpus[count], sizeof(r->cpus[0]) * (RTPLACE_CPUS_PAGE - count)))
		return proto_fail(reason, -EINVAL, "entries past count not zero");
	return 0;
}

/* One CPU of an EXPLAIN page: its claim's owner told only as
 * rtplace-proto.h's flags say. */
static int proto_check_explain_cpu(const struct rtplace_explain_cpu *c, uint32_t cpu, const struct proto_bounds *b,
				   struct rtplace_reason *reason)
{
	uint32_t f = c->flags;

	if (c->cpu != cpu)
		return proto_fail(reason, -EINVAL, "cpu entry out of order");
	if (c->verdict >= RTPLACE_EXPLAIN_COUNT)
		return proto_fail(reason, -EINVAL, "unknown verdict %u", c->verdict);
	if (c->level >= RTPLACE_LEVEL_COUNT || c->map_level >= RTPLACE_LEVEL_COUNT ||
	    c->claim_level >= RTPLACE_LEVEL_COUNT)
		return proto_fail(reason, -ERANGE, "level out of range");
	if (f & ~RTPLACE_EXPLAIN_CPU_F_ALL)
		return proto_fail(reason, -EINVAL, "unknown explain cpu flags 0x%x", f & ~RTPLACE_EXPLAIN_CPU_F_ALL);
	if ((c->verdict == RTPLACE_EXPLAIN_CHOSEN) != (c->rank != 0))
		return proto_fail(reason, -EINVAL, "a rank without the chosen verdict, or the reverse");
	if (c->other < -1 || (c->other >= 0 && (uint32_t)c->other >= b->ncpus))
		return proto_fail(reason, -ERANGE, "other cpu out of range");
	if (c->pid < 0 || c->claim_pid < 0)
		return proto_fail(reason, -ERANGE, "pid out of range");
	if (!c->claim_id != !c->claim_level)
		return proto_fail(reason, -EINVAL, "claim id and level disagree");
	if (c->claim_id ? !(f & RTPLACE_EXPLAIN_CPU_F_CLAIM_UID) == !(f & RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER)
			: (f & (RTPLACE_EXPLAIN_CPU_F_CLAIM_UID | RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER)) != 0)
		return proto_fail(reason, -EINVAL, "a claim's user is either shown or another's, one of them");
	if ((f & RTPLACE_EXPLAIN_CPU_F_CLAIM_PID) && !(f & RTPLACE_EXPLAIN_CPU_F_CLAIM_UID))
		return proto_fail(reason, -EINVAL, "claim owner pid without its uid");
	if ((f & RTPLACE_EXPLAIN_CPU_F_CLAIM_PID) ? c->claim_pid <= 0 : c->claim_pid != 0 || c->claim_comm[0])
		return proto_fail(reason, -EINVAL, "claim owner pid %d does not match the flags", (int)c->claim_pid);
	if (!(f & RTPLACE_EXPLAIN_CPU_F_CLAIM_UID) && c->claim_uid)
		return proto_fail(reason, -EINVAL, "claim uid without its flag");
	if (c->reserved || c->reserved2)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (!proto_string_ok(c->comm, sizeof(c->comm), false) ||
	    !proto_string_ok(c->claim_comm, sizeof(c->claim_comm), false))
		return proto_fail(reason, -EINVAL, "bad comm string");
	return 0;
}

/* The answer's summary and the obstacles of an EXPLAIN page. */
static int proto_check_explain_head(const struct rtplace_explain_reply *r, struct rtplace_reason *reason)
{
	if (r->result != 0 && r->result != -ENOENT && r->result != -ENODEV)
		return proto_fail(reason, -EINVAL, "unknown explain result %d", (int)r->result);
	if ((r->result == 0) != (r->nchosen != 0) || r->nchosen > RTPLACE_QUERY_MAX_COUNT)
		return proto_fail(reason, -EINVAL, "chosen count %u disagrees with the result", r->nchosen);
	if (r->level >= RTPLACE_LEVEL_COUNT || r->claim_level >= RTPLACE_LEVEL_COUNT ||
	    (r->nchosen == 0 && r->level != RTPLACE_LEVEL_OFFLINE))
		return proto_fail(reason, -ERANGE, "level out of range");
	if (r->nobstacles > RTPLACE_EXPLAIN_OBSTACLES_MAX)
		return proto_fail(reason, -ERANGE, "more obstacles than the reply holds");
	for (uint32_t i = 0; i < RTPLACE_EXPLAIN_OBSTACLES_MAX; i++) {
		const struct rtplace_explain_obstacle *o = &r->obstacles[i];

		if (i >= r->nobstacles ? !proto_is_zero(o, sizeof(*o))
				       : o->kind < RTPLACE_OBSTACLE_RTPRIO || o->kind >= RTPLACE_OBSTACLE_COUNT)
			return proto_fail(reason, -EINVAL, "obstacle %u unknown, or set past their count", i);
		if (!proto_is_zero(o->reserved, sizeof(o->reserved)))
			return proto_fail(reason, -EINVAL, "reserved field not zero");
	}
	if (!proto_is_zero(r->reserved, sizeof(r->reserved)))
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (!proto_string_ok(r->detail, sizeof(r->detail), false))
		return proto_fail(reason, -EINVAL, "bad detail string");
	return 0;
}

static int proto_check_explain_reply(const struct proto_msg *m, const struct proto_bounds *b,
				     struct rtplace_reason *reason)
{
	const struct rtplace_explain_reply *r = &m->explain_reply;
	uint32_t count;
	int ret = proto_check_page(r->total, r->first, r->count, 0, b, reason, &count);

	if (ret == 0)
		ret = proto_check_explain_head(r, reason);
	for (uint32_t i = 0; ret == 0 && i < count; i++)
		ret = proto_check_explain_cpu(&r->cpus[i], r->first + i, b, reason);
	if (ret == 0 && !proto_is_zero(&r->cpus[count], sizeof(r->cpus[0]) * (RTPLACE_CPUS_PAGE - count)))
		ret = proto_fail(reason, -EINVAL, "entries past count not zero");
	return ret;
}

static int proto_check_status_reply(const struct proto_msg *m, const struct proto_bounds *b,
				    struct rtplace_reason *reason)
{
	const struct rtplace_status_reply *s = &m->status_reply;

	if (!proto_string_ok(s->version, sizeof(s->version), true))
		return proto_fail(reason, -EINVAL, "bad version string");
	if (s->ncpus < 1 || s->ncpus > RTPLACE_MAX_CPUS)
		return proto_fail(reason, -ERANGE, "cpu count out of range");
	if (s->nonline > s->ncpus || s->nnodes > s->ncpus || s->nllcs > s->ncpus || s->ncores > s->ncpus)
		return proto_fail(reason, -ERANGE, "topology counts exceed the CPUs");
	if (s->flags & ~RTPLACE_STATUS_F_ALL)
		return proto_fail(reason, -EINVAL, "unknown status flags");
	if (s->claims_active > s->claims_total)
		return proto_fail(reason, -EINVAL, "more claims active than granted");
	return 0;
}

static int proto_check_local_reply(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	const struct rtplace_local_reply *l = &m->local_reply;

	(void)b;
	if (l->reserved || !l->map_size || !l->snap_size)
		return proto_fail(reason, -EINVAL, "bad local reply");
	return 0;
}

static int proto_check_host_reply(const struct proto_msg *m, const struct proto_bounds *b,
				  struct rtplace_reason *reason)
{
	const struct rtplace_host_reply *h = &m->host_reply;

	if (h->flags & ~RTPLACE_HOST_F_RT_KNOWN || h->reserved)
		return proto_fail(reason, -EINVAL, "unknown host flags");
	if (!(h->flags & RTPLACE_HOST_F_RT_KNOWN) && (h->rt_runtime_us || h->rt_period_us))
		return proto_fail(reason, -EINVAL, "RT throttling without RT_KNOWN");
	if (h->flags & RTPLACE_HOST_F_RT_KNOWN &&
	    (h->rt_period_us <= 0 || h->rt_runtime_us < -1 || h->rt_runtime_us > h->rt_period_us))
		return proto_fail(reason, -ERANGE, "RT throttling out of range");
	return 0;
}

/* One deadline server of a KERNEL reply: values only when READ, a why
 * only when UNREADABLE. */
static bool proto_dlserver_ok(const struct rtplace_kernel_dlserver *d)
{
	bool read = d->state == RTPLACE_KERNEL_DL_READ;

	if (d->state > RTPLACE_KERNEL_DL_UNREADABLE ||
	    !proto_string_ok(d->why, sizeof(d->why), d->state == RTPLACE_KERNEL_DL_UNREADABLE))
		return false;
	if (!read)
		return !d->runtime_min_ns && !d->runtime_max_ns && !d->period_min_ns && !d->period_max_ns &&
		       !d->ncpus && !d->zero && !d->share_max_ppm && (d->state == RTPLACE_KERNEL_DL_UNREADABLE || !d->why[0]);
	return !d->why[0] && d->ncpus > 0 && d->zero <= d->ncpus && d->share_max_ppm <= 1000000 &&
	       d->runtime_min_ns >= 0 && d->runtime_min_ns <= d->runtime_max_ns && d->period_min_ns > 0 &&
	       d->period_min_ns <= d->period_max_ns;
}

static int proto_check_kernel_reply(const struct proto_msg *m, const struct proto_bounds *b,
				    struct rtplace_reason *reason)
{
	const struct rtplace_kernel_reply *k = &m->kernel_reply;

	(void)b;
	if (k->rt_group > RTPLACE_KERNEL_RTG_V2 || k->rt_group_boot < -1 || k->rt_group_boot > 1)
		return proto_fail(reason, -EINVAL, "unknown RT group scheduling");
	if (k->rt_group == RTPLACE_KERNEL_RTG_NONE
		    ? k->rt_root_runtime_us || k->rt_root_period_us || k->rt_folders || k->rt_first[0]
		    : k->rt_root_period_us <= 0 || k->rt_root_runtime_us < -1)
		return proto_fail(reason, -ERANGE, "RT group budget out of range");
	if (k->rt_budgetless > k->rt_folders || !proto_string_ok(k->rt_first, sizeof(k->rt_first), false) ||
	    (k->rt_first[0] && !k->rt_budgetless))
		return proto_fail(reason, -EINVAL, "bad budgetless cgroups");
	if (!proto_dlserver_ok(&k->fair) || !proto_dlserver_ok(&k->ext))
		return proto_fail(reason, -EINVAL, "bad deadline server");
	if (k->scx_state > RTPLACE_KERNEL_SCX_UNKNOWN || k->scx_switch_all < -1 || k->scx_switch_all > 1 ||
	    k->scx_enable_seq < -1 || !proto_string_ok(k->scx_ops, sizeof(k->scx_ops), false) ||
	    (k->scx_ops[0] && (k->scx_state == RTPLACE_KERNEL_SCX_ABSENT || k->scx_state == RTPLACE_KERNEL_SCX_DISABLED)))
		return proto_fail(reason, -EINVAL, "bad sched_ext state");
	return 0;
}

static int proto_check_tracking_reply(const struct proto_msg *m, const struct proto_bounds *b,
				      struct rtplace_reason *reason)
{
	const struct rtplace_tracking_reply *t = &m->tracking_reply;

	if (t->mode > RTPLACE_TRACKING_SAMPLED)
		return proto_fail(reason, -EINVAL, "unknown tracking mode");
	if ((t->mode == RTPLACE_TRACKING_SAMPLED) != (t->interval_ms != 0))
		return proto_fail(reason, -EINVAL, "interval without sampling, or sampling without one");
	if (t->failures > t->samples)
		return proto_fail(reason, -EINVAL, "more failed samples than samples");
	if (t->mode != RTPLACE_TRACKING_SAMPLED && (t->samples || t->cpu_ns))
		return proto_fail(reason, -EINVAL, "sampler counters without sampling");
	if (!proto_string_ok(t->why, sizeof(t->why), t->mode == RTPLACE_TRACKING_SAMPLED))
		return proto_fail(reason, -EINVAL, "bad why string");
	if (t->mode != RTPLACE_TRACKING_SAMPLED && t->why[0])
		return proto_fail(reason, -EINVAL, "why without sampling");
	return 0;
}

static int proto_check_move_reply(const struct proto_msg *m, const struct proto_bounds *b, struct rtplace_reason *reason)
{
	const struct rtplace_move_reply *r = &m->move_reply;

	if (r->tid <= 0)
		return proto_fail(reason, -ERANGE, "tid out of range");
	if (!proto_sched_ok(r->policy, r->prio) || !proto_sched_ok(r->prev_policy, r->prev_prio))
		return proto_fail(reason, -EINVAL, "bad policy or prio");
	if (proto_mask_empty(&r->cpus) || proto_mask_empty(&r->prev_cpus))
		return proto_fail(reason, -EINVAL, "empty cpu mask");
	if (!proto_mask_within(&r->cpus, b->ncpus) || !proto_mask_within(&r->prev_cpus, b->ncpus))
		return proto_fail(reason, -ERANGE, "cpu out of range");
	return 0;
}

static int proto_check_subscribe_reply(const struct proto_msg *m, const struct proto_bounds *b,
				       struct rtplace_reason *reason)
{
	const struct rtplace_subscribe_reply *r = &m->subscribe_reply;

	if (!r->ring_records || (r->ring_records & (r->ring_records - 1)))
		return proto_fail(reason, -EINVAL, "ring size not a power of two");
	if (r->record_size != 32 && r->record_size != 64)
		return proto_fail(reason, -EINVAL, "record size not 32 or 64");
	if (r->ring_bytes < (uint64_t)r->ring_records * r->record_size)
		return proto_fail(reason, -EINVAL, "ring smaller than its records");
	return 0;
}

static int proto_check_claim_ended(const struct proto_msg *m, const struct proto_bounds *b,
				   struct rtplace_reason *reason)
{
	const struct rtplace_claim_ended *e = &m->claim_ended;

	if (!e->claim_id)
		return proto_fail(reason, -EINVAL, "claim id is 0");
	if (e->why < RTPLACE_CLAIM_ENDED_EXPIRED || e->why > RTPLACE_CLAIM_ENDED_REVOKED)
		return proto_fail(reason, -EINVAL, "unknown claim end");
	if (e->reserved)
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	return 0;
}

/* The one encoding of a claim (rtplace-proto.h's CLAIM_REPLY rules), or
 * of none. */
static int proto_check_claim_reply(const struct proto_msg *m, const struct proto_bounds *b,
				   struct rtplace_reason *reason)
{
	const struct rtplace_claim_reply *r = &m->claim_reply;
	const uint32_t f = r->flags;

	if (!r->claim_id) {
		if (!proto_is_zero(r, sizeof(*r)))
			return proto_fail(reason, -EINVAL, "no claim, but claim fields set");
		return 0;
	}
	if (f & ~RTPLACE_CLAIM_F_ALL)
		return proto_fail(reason, -EINVAL, "unknown claim flags 0x%x", f & ~RTPLACE_CLAIM_F_ALL);
	if (!(f & RTPLACE_CLAIM_F_OWNER_EXIT) == !(f & RTPLACE_CLAIM_F_CONNECTION))
		return proto_fail(reason, -EINVAL, "a claim ends with its owner process or its connection, one of them");
	if (!(f & RTPLACE_CLAIM_F_UID) == !(f & RTPLACE_CLAIM_F_OTHER_USER))
		return proto_fail(reason, -EINVAL, "a claim's user is either shown or another's, one of them");
	if (f & RTPLACE_CLAIM_F_PID && !((f & RTPLACE_CLAIM_F_UID) && (f & RTPLACE_CLAIM_F_OWNER_EXIT)))
		return proto_fail(reason, -EINVAL, "owner pid without its user or without an owner process");
	if (!(f & RTPLACE_CLAIM_F_LEASE) && r->lease_left_ms)
		return proto_fail(reason, -EINVAL, "lease time without a lease");
	if ((f & RTPLACE_CLAIM_F_PID) ? r->owner_pid <= 0 : r->owner_pid != 0)
		return proto_fail(reason, -EINVAL, "owner pid %d does not match the claim flags", (int)r->owner_pid);
	if (!(f & RTPLACE_CLAIM_F_UID) && r->owner_uid)
		return proto_fail(reason, -EINVAL, "owner uid without RTPLACE_CLAIM_F_UID");
	if (!proto_string_ok(r->owner_comm, sizeof(r->owner_comm), false) ||
	    (!(f & RTPLACE_CLAIM_F_PID) && r->owner_comm[0]))
		return proto_fail(reason, -EINVAL, "bad owner comm");
	if (r->level < RTPLACE_LEVEL_NORMAL || r->level > RTPLACE_LEVEL_DL)
		return proto_fail(reason, -ERANGE, "claim level %u out of range %u..%u", r->level, RTPLACE_LEVEL_NORMAL,
				  RTPLACE_LEVEL_DL);
	if (!(f & RTPLACE_CLAIM_F_EXCLUSIVE) != (r->level != RTPLACE_LEVEL_DL))
		return proto_fail(reason, -EINVAL, "the exclusive flag and level %u disagree", r->level);
	if ((f & RTPLACE_CLAIM_F_ISOLATED) && !(f & RTPLACE_CLAIM_F_EXCLUSIVE))
		return proto_fail(reason, -EINVAL, "an isolated claim that is not exclusive");
	if (!proto_is_zero(r->reserved, sizeof(r->reserved)))
		return proto_fail(reason, -EINVAL, "reserved field not zero");
	if (proto_mask_empty(&r->cpus))
		return proto_fail(reason, -EINVAL, "a claim without CPUs");
	if (!proto_mask_within(&r->cpus, b->ncpus))
		return proto_fail(reason, -ERANGE, "claimed cpu out of range");
	return 0;
}

#define PROTO_TYPE(t, side, body, nm, fn) \
	{ .type = (t), .accept = (side), .body_size = (body), .name = (nm), .check = (fn) }

/* A request or reply whose body (struct st) ends in n CPU sets, the first
 * of them field first. */
#define PROTO_SETS_TYPE(t, side, st, first, n, nm, fn)                                                     \
	{ .type = (t), .accept = (side), .body_size = sizeof(struct st), .nsets = (n),                    \
	  .set_offset = offsetof(struct st, first), .name = (nm), .check = (fn) }

/* A reply whose body (struct st) ends in the list field list, counted by
 * field count. */
#define PROTO_LIST_TYPE(t, st, list, count, nm, fn)                                             \
	{ .type = (t), .accept = PROTO_ACCEPT_REPLIES, .body_size = sizeof(struct st),                      \
	  .list_offset = offsetof(struct st, list), .entry_size = sizeof(((struct st *)0)->list[0]),        \
	  .count_offset = offsetof(struct st, count), .count_size = sizeof(((struct st *)0)->count),       \
	  .max_entries = sizeof(((struct st *)0)->list) / sizeof(((struct st *)0)->list[0]),               \
	  .name = (nm), .check = (fn) }

/* Bytes of a CPU set in versions 1 and 2. */
#define PROTO_V2_SET (RTPLACE_CPUMASK_V2_CPUS / 8)

/* proto_decode() copies the wire bytes into the message before unpacking
 * them: the longest wire form of a type with sets or a mask fits too. */
_Static_assert(sizeof(struct rtplace_msg_hdr) + offsetof(struct rtplace_query_reply, list) + PROTO_V2_SET +
			       sizeof(((struct rtplace_query_reply *)0)->list) <=
		       offsetof(struct proto_msg, packed),
	       "a version-1 query reply fits the message");

/* The sets are the body's last fields, so version 3's trimmed sets and
 * versions 1 and 2's 16 words are each a prefix of the set in the body. */
_Static_assert(offsetof(struct rtplace_query, allowed) + sizeof(struct rtplace_cpumask) ==
		       sizeof(struct rtplace_query),
	       "query ends in its set");
_Static_assert(offsetof(struct rtplace_move, cpus) + sizeof(struct rtplace_cpumask) == sizeof(struct rtplace_move),
	       "move ends in its set");
_Static_assert(offsetof(struct rtplace_move_reply, prev_cpus) == offsetof(struct rtplace_move_reply, cpus) +
										sizeof(struct rtplace_cpumask) &&
		       offsetof(struct rtplace_move_reply, prev_cpus) + sizeof(struct rtplace_cpumask) ==
			       sizeof(struct rtplace_move_reply),
	       "move reply ends in its two sets");

/* A reason is its body's last field, or the one before its list, after
 * the count: the codec takes it out and puts it back whole. */
_Static_assert(offsetof(struct rtplace_error, reason) + RTPLACE_REASON_MAX == sizeof(struct rtplace_error),
	       "error ends in its reason");
_Static_assert(offsetof(struct rtplace_tracking_reply, why) + RTPLACE_REASON_MAX ==
		       sizeof(struct rtplace_tracking_reply),
	       "tracking reply ends in its why");
_Static_assert(offsetof(struct rtplace_query_reply, reason) + RTPLACE_REASON_MAX ==
			       offsetof(struct rtplace_query_reply, list) &&
		       offsetof(struct rtplace_query_reply, count) < offsetof(struct rtplace_query_reply, reason),
	       "query reply's reason precedes its list");

/* The list is the body's last field, so a version-2 message is a prefix
 * of the version-1 one. */
_Static_assert(offsetof(struct rtplace_query_reply, list) + sizeof(((struct rtplace_query_reply *)0)->list) ==
		       sizeof(struct rtplace_query_reply),
	       "query reply ends in its list");
_Static_assert(offsetof(struct rtplace_cpus_reply, cpus) + sizeof(((struct rtplace_cpus_reply *)0)->cpus) ==
		       sizeof(struct rtplace_cpus_reply),
	       "cpus reply ends in its list");
_Static_assert(offsetof(struct rtplace_cpu_times_reply, cpus) +
			       sizeof(((struct rtplace_cpu_times_reply *)0)->cpus) ==
		       sizeof(struct rtplace_cpu_times_reply),
	       "cpu times reply ends in its list");

static const struct proto_type proto_types[] = {
	PROTO_SETS_TYPE(RTPLACE_MSG_QUERY, PROTO_ACCEPT_REQUESTS, rtplace_query, allowed, 1, "query",
			proto_check_query),
	PROTO_TYPE(RTPLACE_MSG_RELEASE, PROTO_ACCEPT_REQUESTS, sizeof(struct rtplace_release), "release",
		   proto_check_release),
	PROTO_TYPE(RTPLACE_MSG_CPUS, PROTO_ACCEPT_REQUESTS, sizeof(struct rtplace_cpus), "cpus",
		   proto_check_cpus),
	PROTO_TYPE(RTPLACE_MSG_STATUS, PROTO_ACCEPT_REQUESTS, 0, "status", proto_check_empty),
	PROTO_SETS_TYPE(RTPLACE_MSG_MOVE, PROTO_ACCEPT_REQUESTS, rtplace_move, cpus, 1, "move", proto_check_move),
	PROTO_TYPE(RTPLACE_MSG_SUBSCRIBE, PROTO_ACCEPT_REQUESTS, sizeof(struct rtplace_subscribe), "subscribe",
		   proto_check_subscribe),
	PROTO_TYPE(RTPLACE_MSG_CPU_TIMES, PROTO_ACCEPT_REQUESTS, sizeof(struct rtplace_cpus), "cpu-times",
		   proto_check_cpus),
	PROTO_TYPE(RTPLACE_MSG_TRACKING, PROTO_ACCEPT_REQUESTS, 0, "tracking", proto_check_empty),
	PROTO_TYPE(RTPLACE_MSG_HOST, PROTO_ACCEPT_REQUESTS, 0, "host", proto_check_empty),
	PROTO_TYPE(RTPLACE_MSG_LOCAL, PROTO_ACCEPT_REQUESTS, 0, "local", proto_check_empty),
	{ .type = RTPLACE_MSG_ERROR, .accept = PROTO_ACCEPT_REPLIES, .body_size = sizeof(struct rtplace_error),
	  .has_reason = true, .reason_offset = offsetof(struct rtplace_error, reason),
	  .reason_v2 = RTPLACE_REASON_V2_MAX, .name = "error",
	  .check = proto_check_error },
	{ .type = RTPLACE_MSG_QUERY_REPLY, .accept = PROTO_ACCEPT_REPLIES,
	  .body_size = sizeof(struct rtplace_query_reply), .list_offset = offsetof(struct rtplace_query_reply, list),
	  .entry_size = sizeof(struct rtplace_cpu_choice), .count_offset = offsetof(struct rtplace_query_reply, count),
	  .count_size = sizeof(((struct rtplace_query_reply *)0)->count), .max_entries = RTPLACE_QUERY_MAX_COUNT,
	  .list_mask = true, .has_reason = true, .reason_offset = offsetof(struct rtplace_query_reply, reason),
	  .reason_v2 = RTPLACE_REASON_V2_MAX, .name = "query-reply", .check = proto_check_query_reply },
	PROTO_TYPE(RTPLACE_MSG_RELEASE_REPLY, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_release_reply),
		   "release-reply", proto_check_release_reply),
	{ .type = RTPLACE_MSG_CPUS_REPLY, .accept = PROTO_ACCEPT_REPLIES, .body_size = sizeof(struct rtplace_cpus_reply),
	  .list_offset = offsetof(struct rtplace_cpus_reply, cpus), .entry_size = sizeof(struct rtplace_cpu_info),
	  .count_offset = offsetof(struct rtplace_cpus_reply, count),
	  .count_size = sizeof(((struct rtplace_cpus_reply *)0)->count), .max_entries = RTPLACE_CPUS_PAGE,
	  .v2_entry_size = offsetof(struct rtplace_cpu_info, irq_share), .name = "cpus-reply",
	  .check = proto_check_cpus_reply },
	PROTO_TYPE(RTPLACE_MSG_STATUS_REPLY, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_status_reply),
		   "status-reply", proto_check_status_reply),
	PROTO_SETS_TYPE(RTPLACE_MSG_MOVE_REPLY, PROTO_ACCEPT_REPLIES, rtplace_move_reply, cpus, 2, "move-reply",
			proto_check_move_reply),
	PROTO_TYPE(RTPLACE_MSG_SUBSCRIBE_REPLY, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_subscribe_reply),
		   "subscribe-reply", proto_check_subscribe_reply),
	PROTO_LIST_TYPE(RTPLACE_MSG_CPU_TIMES_REPLY, rtplace_cpu_times_reply, cpus, count, "cpu-times-reply",
			proto_check_cpu_times_reply),
	{ .type = RTPLACE_MSG_TRACKING_REPLY, .accept = PROTO_ACCEPT_REPLIES,
	  .body_size = sizeof(struct rtplace_tracking_reply), .has_reason = true,
	  .reason_offset = offsetof(struct rtplace_tracking_reply, why), .reason_v2 = RTPLACE_TRACKING_WHY_MAX,
	  .name = "tracking-reply", .check = proto_check_tracking_reply },
	PROTO_TYPE(RTPLACE_MSG_HOST_REPLY, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_host_reply), "host-reply",
		   proto_check_host_reply),
	PROTO_TYPE(RTPLACE_MSG_LOCAL_REPLY, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_local_reply), "local-reply",
		   proto_check_local_reply),
	PROTO_TYPE(RTPLACE_MSG_CLAIM_ENDED, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_claim_ended),
		   "claim-ended", proto_check_claim_ended),
	PROTO_TYPE(RTPLACE_MSG_CLAIM, PROTO_ACCEPT_REQUESTS, sizeof(struct rtplace_claim_req), "claim",
		   proto_check_empty),
	PROTO_SETS_TYPE(RTPLACE_MSG_CLAIM_REPLY, PROTO_ACCEPT_REPLIES, rtplace_claim_reply, cpus, 1, "claim-reply",
			proto_check_claim_reply),
	PROTO_SETS_TYPE(RTPLACE_MSG_EXPLAIN, PROTO_ACCEPT_REQUESTS, rtplace_explain, query.allowed, 1, "explain",
			proto_check_explain),
	{ .type = RTPLACE_MSG_EXPLAIN_REPLY, .accept = PROTO_ACCEPT_REPLIES,
	  .body_size = sizeof(struct rtplace_explain_reply), .list_offset = offsetof(struct rtplace_explain_reply, cpus),
	  .entry_size = sizeof(struct rtplace_explain_cpu), .count_offset = offsetof(struct rtplace_explain_reply, count),
	  .count_size = sizeof(((struct rtplace_explain_reply *)0)->count), .max_entries = RTPLACE_CPUS_PAGE,
	  .has_reason = true, .reason_offset = offsetof(struct rtplace_explain_reply, detail),
	  .reason_v2 = RTPLACE_REASON_V2_MAX, .name = "explain-reply", .check = proto_check_explain_reply },
	PROTO_TYPE(RTPLACE_MSG_KERNEL, PROTO_ACCEPT_REQUESTS, 0, "kernel", proto_check_empty),
	PROTO_TYPE(RTPLACE_MSG_KERNEL_REPLY, PROTO_ACCEPT_REPLIES, sizeof(struct rtplace_kernel_reply), "kernel-reply",
		   proto_check_kernel_reply),
	PROTO_TYPE(RTPLACE_MSG_RELOAD, PROTO_ACCEPT_REQUESTS, 0, "reload", proto_check_empty),
	PROTO_TYPE(RTPLACE_MSG_RELOAD_REPLY, PROTO_ACCEPT_REPLIES, 0, "reload-reply", proto_check_empty),
};

_Static_assert(offsetof(struct rtplace_explain, query.allowed) + sizeof(struct rtplace_cpumask) ==
		       sizeof(struct rtplace_explain),
	       "explain ends in its set");
_Static_assert(offsetof(struct rtplace_explain_reply, detail) + RTPLACE_REASON_MAX ==
		       offsetof(struct rtplace_explain_reply, cpus),
	       "explain reply's detail precedes its list");

_Static_assert(offsetof(struct rtplace_claim_reply, cpus) + sizeof(struct rtplace_cpumask) ==
		       sizeof(struct rtplace_claim_reply),
	       "claim reply ends in its set");

static const struct proto_type *proto_type_find(uint16_t type)
{
	for (size_t i = 0; i < sizeof(proto_types) / sizeof(proto_types[0]); i++)
		if (proto_types[i].type == type)
			return &proto_types[i];
	return NULL;
}

static void proto_bounds_from(const struct proto_limits *lim, struct proto_bounds *ret, unsigned *ret_accept)
{
	if (!lim) {
		ret->ncpus = RTPLACE_MAX_CPUS;
		ret->nnodes = RTPLACE_MAX_CPUS;
		ret->machine = false;
		ret->isolate = true;
		*ret_accept = PROTO_ACCEPT_ALL;
		return;
	}
	ret->ncpus = lim->ncpus < RTPLACE_MAX_CPUS ? lim->ncpus : RTPLACE_MAX_CPUS;
	ret->nnodes = lim->nnodes;
	ret->machine = true;
	ret->isolate = lim->isolate;
	*ret_accept = lim->accept;
}

static bool proto_version_ok(uint16_t version)
{
	return version >= RTPLACE_PROTO_VERSION_MIN && version <= RTPLACE_PROTO_VERSION;
}

static uint32_t proto_count_at(const struct proto_type *t, const void *body)
{
	uint32_t count = 0;

	if (t->count_size == sizeof(uint16_t)) {
		uint16_t c16;

		memcpy(&c16, (const char *)body + t->count_offset, sizeof(c16));
		count = c16;
	} else {
		memcpy(&count, (const char *)body + t->count_offset, sizeof(count));
	}
	return count;
}

static struct rtplace_cpumask *proto_set_at(struct proto_msg *m, const struct proto_type *t, uint32_t i)
{
	return (struct rtplace_cpumask *)((char *)m + sizeof(m->hdr) + t->set_offset) + i;
}

/* List entries sent in version: every one in version 1, count from 2. */
static uint32_t proto_list_sent(const struct proto_type *t, uint16_t version, uint32_t count)
{
	return version < 2 ? t->max_entries : count;
}

/* Bytes of each list entry on the wire in version. */
static uint32_t proto_entry_size(const struct proto_type *t, uint16_t version)
{
	return t->v2_entry_size && version < 3 ? t->v2_entry_size : t->entry_size;
}

/* Where the list starts on the wire in version (after the mask of
 * versions 1 and 2 where the type has one). */
static uint32_t proto_wire_list_offset(const struct proto_type *t, uint16_t version)
{
	return t->list_offset + (t->list_mask && version < 3 ? PROTO_V2_SET : 0);
}

/* Entry i of a QUERY_REPLY's list where t has it (the list moves while
 * the codec packs). */
static const struct rtplace_cpu_choice *proto_choice_at(const void *body, const struct proto_type *t, uint32_t i)
{
	return (const struct rtplace_cpu_choice *)((const char *)body + t->list_offset) + i;
}

/*
 * The wire form of m (the readable body, type t) in version: its length
 * and, for a type with CPU sets, the words of each set. -ERANGE when a
 * count is beyond its list or a CPU is beyond what the version can carry.
 */
static int proto_shape_plain(const struct proto_msg *m, const struct proto_type *t, uint16_t version, size_t *ret_len,
		       uint32_t *ret_words)
{
	const void *body = proto_msg_body(m);
	uint32_t words = 0;

	if (t->nsets) {
		for (uint32_t i = 0; i < t->nsets; i++) {
			uint32_t used = proto_mask_used(proto_set_at((struct proto_msg *)m, t, i));

			words = used > words ? used : words;
		}
		if (version < 3) {
			if (words > PROTO_V2_SET / 8)
				return -ERANGE;
			words = PROTO_V2_SET / 8;
		}
		*ret_len = sizeof(m->hdr) + t->set_offset + (size_t)t->nsets * words * 8;
	} else if (t->list_offset) {
		uint32_t count = proto_count_at(t, body);

		if (count > t->max_entries)
			return -ERANGE;
		if (t->list_mask && version < 3)
			for (uint32_t i = 0; i < count; i++)
				if (proto_choice_at(body, t, i)->cpu >= RTPLACE_CPUMASK_V2_CPUS)
					return -ERANGE;
		*ret_len = sizeof(m->hdr) + proto_wire_list_offset(t, version) +
			   (size_t)proto_list_sent(t, version, count) * proto_entry_size(t, version);
	} else {
		*ret_len = sizeof(m->hdr) + t->body_size;
	}
	*ret_words = words;
	return 0;
}

/* Turns the readable body of m into its wire form in version, in place,
 * and sets the header's version and length: each set is cut to the
 * words sent, the second one moving towards the front; before version 3
 * a query reply's list moves 128 bytes back for the mask put before it
 * (the message holds that longer form, see the assertion above). */
static int proto_pack_plain(struct proto_msg *m, const struct proto_type *t, uint16_t version)
{
	char *body = (char *)m + sizeof(m->hdr);
	uint32_t words;
	size_t len;
	int r = proto_shape_plain(m, t, version, &len, &words);

	if (r < 0)
		return r;
	for (uint32_t i = 1; i < t->nsets; i++)
		memmove(body + t->set_offset + (size_t)i * words * 8, proto_set_at(m, t, i), (size_t)words * 8);
	if (t->list_mask && version < 3) {
		uint64_t mask[PROTO_V2_SET / 8] = { 0 };
		uint32_t count = m->query_reply.count;

		for (uint32_t i = 0; i < count; i++) {
			uint16_t cpu = proto_choice_at(body, t, i)->cpu;

			mask[cpu / 64] |= UINT64_C(1) << (cpu % 64);
		}
		memmove(body + proto_wire_list_offset(t, version), body + t->list_offset,
			(size_t)proto_list_sent(t, version, count) * t->entry_size);
		memcpy(body + t->list_offset, mask, sizeof(mask));
	}
	/* Entries cut to their older prefix move towards the front. */
	if (proto_entry_size(t, version) < t->entry_size) {
		uint32_t es = proto_entry_size(t, version), sent = proto_list_sent(t, version, proto_count_at(t, body));

		for (uint32_t i = 1; i < sent; i++)
			memmove(body + t->list_offset + (size_t)i * es, body + t->list_offset + (size_t)i * t->entry_size,
				es);
	}
	m->hdr.version = version;
	m->hdr.length = (uint32_t)len;
	m->packed = true;
	return 0;
}

/*
 * The length a message whose header is h, of len bytes with its body at
 * body, must have from its version, type and, for a list reply from
 * version 2, its count; a message with CPU sets from version 3 may have
 * any length that holds whole sets (len itself then). 0 when there is none.
 */
static size_t proto_wire_length_plain(const struct rtplace_msg_hdr *h, const struct proto_type *t, const void *body,
				   size_t len)
{
	size_t fixed;

	if (t->nsets) {
		size_t set_bytes = (size_t)t->nsets * (h->version < 3 ? PROTO_V2_SET : 8);

		fixed = sizeof(*h) + t->set_offset;
		if (h->version < 3)
			return fixed + set_bytes;
		if (len < fixed || (len - fixed) % set_bytes ||
		    (len - fixed) / set_bytes > RTPLACE_CPUMASK_WORDS)
			return 0;
		return len;
	}
	if (!t->list_offset || h->version < 2) {
		if (t->list_offset)
			return sizeof(*h) + proto_wire_list_offset(t, h->version) +
			       (size_t)t->max_entries * proto_entry_size(t, h->version);
		return sizeof(*h) + t->body_size;
	}
	if (len < sizeof(*h) + t->list_offset)
		return 0;
	if (proto_count_at(t, body) > t->max_entries)
		return 0;
	return sizeof(*h) + proto_wire_list_offset(t, h->version) +
	       (size_t)proto_count_at(t, body) * proto_entry_size(t, h->version);
}

/* The type t without its reason field: the body as if it had none, the
 * list moved up into the field's place. */
static void proto_sans_reason(const struct proto_type *t, struct proto_type *ret)
{
	*ret = *t;
	ret->has_reason = false;
	ret->body_size -= RTPLACE_REASON_MAX;
	if (ret->list_offset)
		ret->list_offset -= RTPLACE_REASON_MAX;
}

/* Bytes of m's reason on the wire in version (t has one): the fixed
 * field before version 3, the text and its NUL from it. */
static size_t proto_reason_sent(const struct proto_msg *m, const struct proto_type *t, uint16_t version)
{
	const char *field = (const char *)proto_msg_body(m) + t->reason_offset;
	size_t n = strnlen(field, RTPLACE_REASON_MAX - 1);

	return version < 3 ? t->reason_v2 : n + 1;
}

static int proto_shape(const struct proto_msg *m, const struct proto_type *t, uint16_t version, size_t *ret_len,
		       uint32_t *ret_words)
{
	int r = proto_shape_plain(m, t, version, ret_len, ret_words);

	/* the reason's field sent as what it holds */
	if (r == 0 && t->has_reason)
		*ret_len = *ret_len - RTPLACE_REASON_MAX + proto_reason_sent(m, t, version);
	return r;
}

/* proto_pack_plain() of the body without its reason, which then goes in
 * its version's place: its field's (cut to fit) before version 3, the
 * end from it. */
static int proto_pack(struct proto_msg *m, const struct proto_type *t, uint16_t version)
{
	char *body = (char *)m + sizeof(m->hdr), *field = body + t->reason_offset;
	char text[RTPLACE_REASON_MAX];
	struct proto_type plain;
	uint32_t words;
	size_t len, n, wire;
	int r;

	if (!t->has_reason)
		return proto_pack_plain(m, t, version);
	r = proto_shape(m, t, version, &len, &words);
	if (r < 0)
		return r;
	n = proto_reason_sent(m, t, version);
	memcpy(text, field, sizeof(text));
	text[n - 1] = '\0';
	proto_sans_reason(t, &plain);
	/* what follows the field: the list entries sent, or nothing */
	if (t->list_offset)
		memmove(field, field + RTPLACE_REASON_MAX,
			(size_t)proto_list_sent(t, version, proto_count_at(t, body)) * t->entry_size);
	proto_pack_plain(m, &plain, version);
	wire = m->hdr.length - sizeof(m->hdr);
	if (version < 3) {
		memmove(field + n, field, wire - t->reason_offset);
		memcpy(field, text, n);
	} else {
		memcpy(body + wire, text, n);
	}
	m->hdr.length += (uint32_t)n;
	return 0;
}

/* proto_wire_length_plain() and the reason's bytes: the field's before
 * version 3, from it any from 1 to RTPLACE_REASON_MAX (len's rest). */
static size_t proto_wire_length_of(const struct rtplace_msg_hdr *h, const struct proto_type *t, const void *body,
				   size_t len)
{
	struct proto_type plain;
	size_t fixed;

	if (!t->has_reason)
		return proto_wire_length_plain(h, t, body, len);
	proto_sans_reason(t, &plain);
	fixed = proto_wire_length_plain(h, &plain, body, len);
	if (!fixed)
		return 0;
	if (h->version < 3)
		return fixed + t->reason_v2;
	return len > fixed && len - fixed <= RTPLACE_REASON_MAX ? len : 0;
}

/*
 * The header of a message of len bytes whose magic was checked, and whose
 * body starts at body: version, length, type, and the type's exact length
 * in that version. Everything here except the version and the type is
 * garbage (-EPROTO) when wrong.
 */
static int proto_check_header(const struct rtplace_msg_hdr *h, const void *body, size_t len, unsigned accept,
			      const struct proto_type **ret_type, struct rtplace_reason *reason)
{
	const struct proto_type *t;

	if (!proto_version_ok(h->version))
		return proto_fail(reason, -EPROTONOSUPPORT, "unsupported protocol version");
	if (h->length != len)
		return proto_fail(reason, -EPROTO, "length field does not match the message");
	t = proto_type_find(h->type);
	if (!t)
		return proto_fail(reason, -EOPNOTSUPP, "unknown message type");
	if (!(t->accept & accept))
		return proto_fail(reason, -EOPNOTSUPP, "message type not accepted here");
	if (len != proto_wire_length_of(h, t, body, len))
		return proto_fail(reason, -EPROTO, "wrong length for the message type");
	*ret_type = t;
	return 0;
}

/*
 * Turns m, which holds a wire message of len bytes (its header checked),
 * into its readable form in place: the sets to their full width (the last
 * first, as each moves to a place at or after where it was sent), the
 * list to its field (the entries not sent read as zero, as version 1
 * sends them), the rest of the body zero. A set of version 3 whose last
 * word sent is zero is not the canonical encoding.
 */
static int proto_unpack_plain(struct proto_msg *m, size_t len, const struct proto_type *t, struct rtplace_reason *reason)
{
	char *body = (char *)m + sizeof(m->hdr);
	size_t sent = len - sizeof(m->hdr);

	m->packed = false;
	if (t->nsets) {
		size_t words = (sent - t->set_offset) / t->nsets / 8;
		bool last = words == 0;

		for (uint32_t i = t->nsets; i-- > 0;) {
			struct rtplace_cpumask *set = proto_set_at(m, t, i);

			memmove(set, body + t->set_offset + i * words * 8, words * 8);
			memset(&set->bits[words], 0, (RTPLACE_CPUMASK_WORDS - words) * 8);
			last |= words && set->bits[words - 1];
		}
		if (m->hdr.version >= 3 && !last)
			return proto_fail(reason, -EINVAL, "cpu set sent past its last cpu");
	} else if (t->list_offset) {
		size_t at = proto_wire_list_offset(t, m->hdr.version), list_bytes = sent - at;

		uint32_t es = proto_entry_size(t, m->hdr.version);

		if (es < t->entry_size) {
			/* Entries sent as their older prefix widen, the last
			 * first, the fields not sent zero. */
			size_t n = list_bytes / es;

			for (size_t i = n; i-- > 0;) {
				memmove(body + t->list_offset + i * t->entry_size, body + at + i * es, es);
				memset(body + t->list_offset + i * t->entry_size + es, 0, t->entry_size - es);
			}
			list_bytes = n * t->entry_size;
		} else {
			memmove(body + t->list_offset, body + at, list_bytes);
		}
		memset(body + t->list_offset + list_bytes, 0, t->body_size - t->list_offset - list_bytes);
	} else {
		memset(body + sent, 0, t->body_size - sent);
	}
	return 0;
}

/*
 * proto_unpack_plain() of the message without its reason (whose length
 * the header check gave), then the reason into its field, zero after the
 * bytes sent. Canonical: one NUL, the last byte sent, in version 3; a NUL
 * within the field before (the rules of every string check the rest).
 */
static int proto_unpack(struct proto_msg *m, size_t len, const struct proto_type *t, struct rtplace_reason *reason)
{
	char *body = (char *)m + sizeof(m->hdr), *field = body + t->reason_offset;
	char text[RTPLACE_REASON_MAX] = { 0 };
	struct proto_type plain;
	size_t n;
	int r;

	if (!t->has_reason)
		return proto_unpack_plain(m, len, t, reason);
	proto_sans_reason(t, &plain);
	if (m->hdr.version < 3) {
		n = t->reason_v2;
		memcpy(text, field, n);
		memmove(field, field + n, len - sizeof(m->hdr) - t->reason_offset - n);
		if (text[n - 1])
			return proto_fail(reason, -EINVAL, "bad reason string");
	} else {
		n = len - proto_wire_length_plain(&m->hdr, &plain, body, len);
		memcpy(text, body + (len - sizeof(m->hdr) - n), n);
		if (strnlen(text, n) != n - 1)
			return proto_fail(reason, -EINVAL, "bad reason string");
	}
	r = proto_unpack_plain(m, len - n, &plain, reason);
	if (r < 0)
		return r;
	memmove(field + RTPLACE_REASON_MAX, field, plain.body_size - t->reason_offset);
	memcpy(field, text, sizeof(text));
	return 0;
}

/* The mask versions 1 and 2 send before a QUERY_REPLY's list (in buf, the
 * wire message) must be the list's CPUs, which the body rules checked. */
static int proto_check_list_mask(const void *buf, const struct proto_type *t, const struct proto_msg *m,
				 struct rtplace_reason *reason)
{
	uint64_t mask[PROTO_V2_SET / 8], seen[PROTO_V2_SET / 8] = { 0 };

	if (!t->list_mask || m->hdr.version >= 3)
		return 0;
	/* after the reason's field of versions 1 and 2 */
	memcpy(mask, (const char *)buf + sizeof(m->hdr) + t->reason_offset + t->reason_v2, sizeof(mask));
	for (uint32_t i = 0; i < m->query_reply.count; i++) {
		uint16_t cpu = m->query_reply.list[i].cpu;

		if (cpu >= RTPLACE_CPUMASK_V2_CPUS)
			return proto_fail(reason, -ERANGE, "cpu out of range");
		seen[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	}
	if (memcmp(mask, seen, sizeof(mask)))
		return proto_fail(reason, -EINVAL, "cpu mask does not match the list");
	return 0;
}

/* The header fields whose rules depend on the type, then the body. */
static int proto_check_msg(const struct proto_msg *m, const struct proto_type *t, const struct proto_bounds *b,
			   struct rtplace_reason *reason)
{
	const struct rtplace_msg_hdr *h = &m->hdr;

	if (h->reserved)
		return proto_fail(reason, -EINVAL, "reserved header field not zero");
	if (t->type == RTPLACE_MSG_ERROR) {
		if (h->status >= 0 || h->status < -PROTO_MAX_ERRNO)
			return proto_fail(reason, -EINVAL, "error status not a negative errno");
	} else if (h->status) {
		return proto_fail(reason, -EINVAL, "status set outside an error");
	}
	if (RTPLACE_MSG_BLOCK(t->type) == RTPLACE_MSG_BLOCK_EVENT) {
		if (h->request_id)
			return proto_fail(reason, -EINVAL, "request id set in an event");
	} else if (!h->request_id && t->type != RTPLACE_MSG_ERROR) {
		return proto_fail(reason, -EINVAL, "request id is 0");
	}
	return t->check(m, b, reason);
}

static void proto_error_set(struct proto_error *e, const char *reason, const struct rtplace_msg_hdr *h)
{
	if (!e)
		return;
	snprintf(e->reason.text, sizeof(e->reason.text), "%s", reason);
	e->request_id = h ? h->request_id : 0;
	e->type = h ? h->type : 0;
	e->version = h && proto_version_ok(h->version) ? h->version : RTPLACE_PROTO_VERSION_MIN;
}

int proto_decode(const void *buf, size_t len, const struct proto_limits *lim, struct proto_msg *ret,
		 struct proto_error *ret_err)
{
	const struct proto_type *t = NULL;
	struct rtplace_msg_hdr h;
	struct proto_bounds b;
	struct rtplace_reason reason;
	unsigned accept;
	int r;

	if (len < sizeof(h)) {
		proto_error_set(ret_err, "short message", NULL);
		return -EPROTO;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != RTPLACE_PROTO_MAGIC) {
		proto_error_set(ret_err, "bad magic", NULL);
		return -EPROTO;
	}
	proto_bounds_from(lim, &b, &accept);
	r = proto_check_header(&h, (const char *)buf + sizeof(h), len, accept, &t, &reason);
	if (r == 0) {
		/* len is the exact length of a known type, which fits *ret */
		memcpy(ret, buf, len);
		r = proto_unpack(ret, len, t, &reason);
	}
	if (r == 0)
		r = proto_check_msg(ret, t, &b, &reason);
	if (r == 0)
		r = proto_check_list_mask(buf, t, ret, &reason);
	if (r < 0)
		proto_error_set(ret_err, reason.text, &h);
	return r;
}

/* Why proto_shape() refused m. */
static const char *proto_shape_reason(const struct proto_msg *m, const struct proto_type *t)
{
	if (t->list_offset && proto_count_at(t, proto_msg_body(m)) > t->max_entries)
		return "count beyond the list";
	return "cpu beyond what the protocol version carries";
}

int proto_validate(const struct proto_msg *m, const struct proto_limits *lim, struct proto_error *ret_err)
{
	const struct proto_type *t = proto_type_find(m->hdr.type);
	struct proto_bounds b;
	struct rtplace_reason reason;
	unsigned accept;
	uint32_t words;
	size_t len;
	int r;

	if (m->hdr.magic != RTPLACE_PROTO_MAGIC) {
		proto_error_set(ret_err, "bad magic", NULL);
		return -EPROTO;
	}
	if (m->packed) {
		/* Its bytes as a peer would receive them. */
		struct proto_msg readable;

		return proto_decode(m, m->hdr.length, lim, &readable, ret_err);
	}
	proto_bounds_from(lim, &b, &accept);
	if (!proto_version_ok(m->hdr.version))
		r = proto_fail(&reason, -EPROTONOSUPPORT, "unsupported protocol version");
	else if (!t)
		r = proto_fail(&reason, -EOPNOTSUPP, "unknown message type");
	else if (!(t->accept & accept))
		r = proto_fail(&reason, -EOPNOTSUPP, "message type not accepted here");
	else if (proto_shape(m, t, m->hdr.version, &len, &words) < 0)
		r = proto_fail(&reason, -ERANGE, "%s", proto_shape_reason(m, t));
	else
		r = proto_check_msg(m, t, &b, &reason);
	if (r < 0)
		proto_error_set(ret_err, reason.text, &m->hdr);
	return r;
}

/* The header of m, whose body is complete, at RTPLACE_PROTO_VERSION. */
static void proto_hdr_set(struct proto_msg *m, const struct proto_type *t, uint32_t request_id, int32_t status)
{
	m->hdr = (struct rtplace_msg_hdr){
		.magic = RTPLACE_PROTO_MAGIC,
		.version = RTPLACE_PROTO_VERSION,
		.type = t->type,
		.request_id = request_id,
		.status = status,
	};
	m->packed = false;
}

int proto_msg_init(struct proto_msg *m, uint16_t type, uint32_t request_id)
{
	const struct proto_type *t = proto_type_find(type);
	uint32_t words;
	size_t len;

	if (!t)
		return -EOPNOTSUPP;
	memset((char *)m + sizeof(m->hdr), 0, t->body_size);
	proto_hdr_set(m, t, request_id, 0);
	/* The empty body's length: a type without sets or list is sent as it is. */
	if (proto_shape(m, t, RTPLACE_PROTO_VERSION, &len, &words) == 0)
		m->hdr.length = (uint32_t)len;
	return 0;
}

int proto_msg_finish(struct proto_msg *m, uint16_t version)
{
	const struct proto_type *t = proto_type_find(m->hdr.type);
	uint16_t was = m->hdr.version;
	bool packed = m->packed;
	struct rtplace_reason reason;
	int r;

	if (!t)
		return -EOPNOTSUPP;
	if (!proto_version_ok(version))
		return -EPROTONOSUPPORT;
	if (packed) {
		r = proto_unpack(m, m->hdr.length, t, &reason);
		if (r < 0)
			return r;
	}
	r = proto_pack(m, t, version);
	/* Refused before anything moved: packed again as it came. */
	if (r < 0 && packed)
		proto_pack(m, t, was);
	return r;
}

int proto_encode(struct proto_msg *ret, uint16_t type, uint32_t request_id, int32_t status, const void *body,
		 struct proto_error *ret_err)
{
	const struct proto_type *t = proto_type_find(type);
	int r;

	if (!t) {
		proto_error_set(ret_err, "unknown message type", NULL);
		return -EOPNOTSUPP;
	}
	if (t->body_size && !body) {
		proto_error_set(ret_err, "missing body", NULL);
		return -EINVAL;
	}
	/* memmove: body may already sit in ret, built in place */
	if (t->body_size)
		memmove((char *)ret + sizeof(ret->hdr), body, t->body_size);
	proto_hdr_set(ret, t, request_id, status);
	r = proto_validate(ret, NULL, ret_err);
	if (r == 0)
		r = proto_pack(ret, t, RTPLACE_PROTO_VERSION);
	return r;
}

int proto_encode_error(struct proto_msg *ret, uint32_t request_id, uint16_t request_type, int error,
		       const char *reason)
{
	struct rtplace_error e = { .request_type = request_type };

	proto_set_string(e.reason, sizeof(e.reason), reason ? reason : "");
	return proto_encode(ret, RTPLACE_MSG_ERROR, request_id, error, &e, NULL);
}

size_t proto_msg_length(uint16_t type)
{
	const struct proto_type *t = proto_type_find(type);
	struct rtplace_msg_hdr h = { .version = 1 };

	return t ? proto_wire_length_of(&h, t, NULL, 0) : 0;
}

size_t proto_wire_length(const void *buf, size_t len)
{
	const struct proto_type *t;
	struct rtplace_msg_hdr h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	t = proto_type_find(h.type);
	if (!t || !proto_version_ok(h.version))
		return 0;
	return proto_wire_length_of(&h, t, (const char *)buf + sizeof(h), len);
}

size_t proto_msg_length_for(const struct proto_msg *m)
{
	const struct proto_type *t = proto_type_find(m->hdr.type);
	uint32_t words;
	size_t len;

	if (m->packed)
		return proto_wire_length(m, m->hdr.length);
	if (!t || !proto_version_ok(m->hdr.version) || proto_shape(m, t, m->hdr.version, &len, &words) < 0)
		return 0;
	return len;
}

const char *proto_type_name(uint16_t type)
{
	const struct proto_type *t = proto_type_find(type);

	return t ? t->name : NULL;
}

uint16_t proto_reply_type(uint16_t type)
{
	const struct proto_type *t = proto_type_find(type);

	if (!t || t->accept != PROTO_ACCEPT_REQUESTS)
		return 0;
	return (uint16_t)(type + RTPLACE_MSG_REPLY_OFFSET);
}

void proto_set_string(char *dst, size_t size, const char *src)
{
	size_t n;

	if (!size)
		return;
	n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

int proto_query_reply_add(struct rtplace_query_reply *r, unsigned cpu, unsigned level)
{
	if (cpu >= RTPLACE_MAX_CPUS || level >= RTPLACE_LEVEL_COUNT)
		return -ERANGE;
	if (r->count >= RTPLACE_QUERY_MAX_COUNT)
		return -ENOSPC;
	for (unsigned i = 0; i < r->count; i++)
		if (r->list[i].cpu == cpu)
			return -EEXIST;
	r->list[r->count] = (struct rtplace_cpu_choice){ .cpu = (uint16_t)cpu, .level = (uint8_t)level };
	if (r->count == 0 || level > r->level)
		r->level = (uint8_t)level;
	r->count++;
	return 0;
}
