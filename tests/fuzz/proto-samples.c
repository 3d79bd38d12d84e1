/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Valid messages of every type, for the unit test and the fuzz corpus. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "proto-samples.h"

const uint16_t proto_sample_types[] = {
	RTPLACE_MSG_QUERY,        RTPLACE_MSG_RELEASE,       RTPLACE_MSG_CPUS,
	RTPLACE_MSG_STATUS,       RTPLACE_MSG_MOVE,          RTPLACE_MSG_SUBSCRIBE,
	RTPLACE_MSG_ERROR,        RTPLACE_MSG_QUERY_REPLY,   RTPLACE_MSG_RELEASE_REPLY,
	RTPLACE_MSG_CPUS_REPLY,   RTPLACE_MSG_STATUS_REPLY,  RTPLACE_MSG_MOVE_REPLY,
	RTPLACE_MSG_SUBSCRIBE_REPLY, RTPLACE_MSG_CLAIM_ENDED, RTPLACE_MSG_CPU_TIMES,
	RTPLACE_MSG_CPU_TIMES_REPLY, RTPLACE_MSG_TRACKING, RTPLACE_MSG_TRACKING_REPLY,
	RTPLACE_MSG_HOST,         RTPLACE_MSG_HOST_REPLY,
	RTPLACE_MSG_LOCAL,        RTPLACE_MSG_LOCAL_REPLY,
	RTPLACE_MSG_CLAIM,        RTPLACE_MSG_CLAIM_REPLY,
	RTPLACE_MSG_EXPLAIN,      RTPLACE_MSG_EXPLAIN_REPLY,
	RTPLACE_MSG_KERNEL,       RTPLACE_MSG_KERNEL_REPLY,
	RTPLACE_MSG_RELOAD,       RTPLACE_MSG_RELOAD_REPLY,
};
const size_t proto_sample_ntypes = sizeof(proto_sample_types) / sizeof(proto_sample_types[0]);

static void sample_mask_range(struct rtplace_cpumask *m, unsigned first, unsigned last)
{
	for (unsigned cpu = first; cpu <= last; cpu++)
		rtplace_cpumask_set(m, cpu);
}

/* A reply or event built as the daemon builds one: proto_msg_init(), the
 * body in place, proto_msg_finish(); then validated, so that a sample is
 * valid. */
static int sample_finish(struct proto_msg *ret)
{
	int err = proto_msg_finish(ret, RTPLACE_PROTO_VERSION);

	return err < 0 ? err : proto_validate(ret, NULL, NULL);
}

/* sample_finish() of type's body (size bytes) copied in place. */
static int sample_reply(struct proto_msg *ret, uint16_t type, uint32_t request_id, const void *body, size_t size)
{
	int err = proto_msg_init(ret, type, request_id);

	if (err < 0)
		return err;
	memcpy((char *)ret + sizeof(ret->hdr), body, size);
	return sample_finish(ret);
}

static int sample_query(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_query q = {
		.prio = 50, .policy = RTPLACE_POLICY_FIFO, .count = 1, .node = -1, .near_cpu = -1,
	};

	switch (shape) {
	case 0:
		break;
	case 1:
		q.prio = 99;
		q.policy = RTPLACE_POLICY_RR;
		q.count = 4;
		q.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_EXCLUSIVE | RTPLACE_QUERY_F_MANAGE;
		q.node = 1;
		q.near_cpu = 3;
		q.lease_ms = RTPLACE_LEASE_INFINITE;
		q.owner_pid = 1234;
		sample_mask_range(&q.allowed, 0, 7);
		break;
	case 2:
		q.prio = 1;
		q.count = RTPLACE_QUERY_MAX_COUNT;
		q.flags = RTPLACE_QUERY_F_CLAIM;
		q.lease_ms = RTPLACE_LEASE_DEFAULT;
		rtplace_cpumask_set(&q.allowed, RTPLACE_CPUMASK_V2_CPUS - 1);
		break;
	case 3:
		/* the last CPU rtplace names: version 3 only */
		sample_mask_range(&q.allowed, 1000, 1100);
		rtplace_cpumask_set(&q.allowed, RTPLACE_MAX_CPUS - 1);
		break;
	default:
		return -ENOENT;
	}
	return proto_encode_query(ret, 1 + shape, &q);
}

static int sample_move(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_move mv = { .tid = 4321 };

	switch (shape) {
	case 0:
		mv.flags = RTPLACE_MOVE_F_SET_AFFINITY | RTPLACE_MOVE_F_PLACE;
		sample_mask_range(&mv.cpus, 2, 3);
		break;
	case 1:
		mv.flags = RTPLACE_MOVE_F_SET_AFFINITY | RTPLACE_MOVE_F_SET_SCHED | RTPLACE_MOVE_F_FORCE;
		mv.policy = RTPLACE_POLICY_FIFO;
		mv.prio = 80;
		rtplace_cpumask_set(&mv.cpus, 1);
		break;
	case 2:
		mv.flags = RTPLACE_MOVE_F_SET_SCHED;
		mv.policy = RTPLACE_POLICY_RR;
		mv.prio = 1;
		break;
	case 3:
		/* past 1023: version 3 only */
		mv.flags = RTPLACE_MOVE_F_SET_AFFINITY;
		sample_mask_range(&mv.cpus, 4000, 4100);
		break;
	default:
		return -ENOENT;
	}
	return proto_encode_move(ret, 10 + shape, &mv);
}

static int sample_error(unsigned shape, struct proto_msg *ret)
{
	switch (shape) {
	case 0:
		return proto_encode_error(ret, 1, RTPLACE_MSG_QUERY, -ERANGE, "prio out of range 1..99");
	case 1:
		return proto_encode_error(ret, 0, 0, -EPROTO, "bad magic");
	default:
		return -ENOENT;
	}
}

static int sample_query_reply(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_query_reply r = { 0 };
	int err = 0;

	switch (shape) {
	case 0:
		r.claim_id = 7;
		r.lease_ms = 1000;
		err = proto_query_reply_add(&r, 3, RTPLACE_LEVEL_IDLE);
		if (err == 0)
			err = proto_query_reply_add(&r, 5, RTPLACE_LEVEL_NORMAL);
		break;
	case 1:
		proto_set_string(r.reason, sizeof(r.reason), "no cpu below rt99 in the allowed set");
		break;
	case 2:
		for (unsigned i = 0; i < RTPLACE_QUERY_MAX_COUNT && err == 0; i++)
			err = proto_query_reply_add(&r, RTPLACE_CPUMASK_V2_CPUS - 1 - i, RTPLACE_LEVEL_IDLE + i % 40);
		break;
	case 3:
		/* the last CPU rtplace names: version 3 only */
		err = proto_query_reply_add(&r, RTPLACE_MAX_CPUS - 1, RTPLACE_LEVEL_RT1);
		if (err == 0)
			err = proto_query_reply_add(&r, 1024, RTPLACE_LEVEL_IDLE);
		break;
	default:
		return -ENOENT;
	}
	if (err < 0)
		return err;
	return sample_reply(ret, RTPLACE_MSG_QUERY_REPLY, 1 + shape, &r, sizeof(r));
}

static void sample_cpu_info(struct rtplace_cpu_info *c, unsigned cpu, unsigned cpus_per_node)
{
	*c = (struct rtplace_cpu_info){
		.cpu = (uint16_t)cpu,
		.level = RTPLACE_LEVEL_IDLE,
		.flags = RTPLACE_CPU_F_ONLINE,
		.node = (int32_t)(cpu / cpus_per_node),
		.llc = (int32_t)(cpu / 8),
		.core = (int32_t)(cpu / 2),
	};
	switch (cpu % 5) {
	case 1:
		c->level = RTPLACE_LEVEL_NORMAL;
		c->pid = (int32_t)(1000 + cpu);
		proto_set_string(c->comm, sizeof(c->comm), "bash");
		break;
	case 2:
		c->level = (uint8_t)(RTPLACE_LEVEL_RT1 + 98);
		c->pid = (int32_t)(2000 + cpu);
		c->rt_queued = 2;
		c->claim_id = 7;
		c->claim_level = (uint8_t)(RTPLACE_LEVEL_RT1 + 98);
		proto_set_string(c->comm, sizeof(c->comm), "ffmpeg-with-a-long-name");
		break;
	case 3:
		c->flags |= RTPLACE_CPU_F_HOUSEKEEPING;
		break;
	default:
		break;
	}
}

static int sample_cpus_reply(unsigned shape, struct proto_msg *ret)
{
	/* Built in place: the body is 7 KiB. */
	struct rtplace_cpus_reply *r = &ret->cpus_reply;
	unsigned per_node;
	int err;

	err = proto_msg_init(ret, RTPLACE_MSG_CPUS_REPLY, 1 + shape);
	if (err < 0)
		return err;
	switch (shape) {
	case 0:
		r->total = PROTO_SAMPLE_NCPUS;
		r->first = 0;
		break;
	case 1:
		r->total = 480;
		r->first = 384;
		break;
	case 2:
		r->total = RTPLACE_CPUMASK_V2_CPUS;
		r->first = 0;
		break;
	case 3:
		r->total = RTPLACE_MAX_CPUS;
		r->first = RTPLACE_MAX_CPUS - RTPLACE_CPUS_PAGE;
		break;
	default:
		return -ENOENT;
	}
	per_node = r->total / PROTO_SAMPLE_NNODES;
	r->count = r->total - r->first < RTPLACE_CPUS_PAGE ? r->total - r->first : RTPLACE_CPUS_PAGE;
	for (unsigned i = 0; i < r->count; i++)
		sample_cpu_info(&r->cpus[i], r->first + i, per_node);
	if (shape == 0) {
		/* the last CPU is offline: no level, no topology */
		struct rtplace_cpu_info *c = &r->cpus[r->count - 1];

		*c = (struct rtplace_cpu_info){ .cpu = c->cpu, .node = -1, .llc = -1, .core = -1 };
	}
	return sample_finish(ret);
}

static int sample_cpu_times_reply(unsigned shape, struct proto_msg *ret)
{
	/* Built in place: the body is 4 KiB. */
	struct rtplace_cpu_times_reply *r = &ret->cpu_times_reply;
	int err;

	if (shape > 1)
		return -ENOENT;
	err = proto_msg_init(ret, RTPLACE_MSG_CPU_TIMES_REPLY, 8 + shape);
	if (err < 0)
		return err;
	r->total = shape ? 480 : PROTO_SAMPLE_NCPUS;
	r->first = shape ? 384 : 0;
	r->count = r->total - r->first < RTPLACE_CPUS_PAGE ? r->total - r->first : RTPLACE_CPUS_PAGE;
	r->sampled_ns = 123456789012345ULL;
	for (unsigned i = 0; i < r->count; i++)
		for (unsigned c = 0; c < RTPLACE_CLASS_COUNT; c++)
			r->cpus[i].ns[c] = (uint64_t)(i + 1) * 1000000 * (c + 1);
	return sample_finish(ret);
}

static int sample_status_reply(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_status_reply s = {
		.uptime_ms = 12345,
		.ncpus = PROTO_SAMPLE_NCPUS,
		.nonline = PROTO_SAMPLE_NCPUS - 1,
		.nnodes = PROTO_SAMPLE_NNODES,
		.nllcs = 2,
		.ncores = 8,
		.flags = RTPLACE_STATUS_F_TRACKING,
		.queries = 100,
		.errors = 3,
		.claims_active = 2,
		.claims_total = 9,
		.clients = 4,
		.clients_dropped = 1,
	};

	if (shape > 0)
		return -ENOENT;
	proto_set_string(s.version, sizeof(s.version), "0.1.0");
	return sample_reply(ret, RTPLACE_MSG_STATUS_REPLY, 1, &s, sizeof(s));
}

/* Shapes: live, sampled (with why). */
static int sample_tracking_reply(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_tracking_reply t = { .mode = RTPLACE_TRACKING_LIVE };

	if (shape > 1)
		return -ENOENT;
	if (shape == 1) {
		t = (struct rtplace_tracking_reply){
			.mode = RTPLACE_TRACKING_SAMPLED, .interval_ms = 100, .samples = 600, .failures = 1,
			.cpu_ns = 900000000,
		};
		proto_set_string(t.why, sizeof(t.why), "kernel BTF /sys/kernel/btf/vmlinux is missing");
	}
	return sample_reply(ret, RTPLACE_MSG_TRACKING_REPLY, 11, &t, sizeof(t));
}

/* Shapes: throttled (the kernel's default), unlimited, unreadable. */
static int sample_host_reply(unsigned shape, struct proto_msg *ret)
{
	static const struct rtplace_host_reply h[] = {
		{ .rt_runtime_us = 950000, .rt_period_us = 1000000, .flags = RTPLACE_HOST_F_RT_KNOWN },
		{ .rt_runtime_us = -1, .rt_period_us = 1000000, .flags = RTPLACE_HOST_F_RT_KNOWN },
		{ 0 },
	};

	if (shape >= sizeof(h) / sizeof(h[0]))
		return -ENOENT;
	return sample_reply(ret, RTPLACE_MSG_HOST_REPLY, 12, &h[shape], sizeof(h[shape]));
}

/* Shapes: Debian 12's 6.1 on cgroup v1 (RT group scheduling, no server,
 * no sched_ext), 6.12 with debugfs and a scheduler loaded, and a daemon
 * whose sandbox hides debugfs. */
static int sample_kernel_reply(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_kernel_reply k = { .rt_group_boot = -1, .scx_enable_seq = -1, .scx_switch_all = -1 };

	switch (shape) {
	case 0:
		k.rt_group = RTPLACE_KERNEL_RTG_V1;
		k.rt_root_runtime_us = 950000;
		k.rt_root_period_us = 1000000;
		k.rt_folders = 40;
		k.rt_budgetless = 39;
		proto_set_string(k.rt_first, sizeof(k.rt_first), "/system.slice");
		k.fair.state = k.ext.state = RTPLACE_KERNEL_DL_ABSENT;
		break;
	case 1:
		k.rt_group_boot = 0;
		k.fair = (struct rtplace_kernel_dlserver){ .state = RTPLACE_KERNEL_DL_READ, .runtime_min_ns = 50000000,
							   .runtime_max_ns = 50000000, .period_min_ns = 1000000000,
							   .period_max_ns = 1000000000, .ncpus = 8,
							   .share_max_ppm = 50000 };
		k.ext.state = RTPLACE_KERNEL_DL_ABSENT;
		k.scx_state = RTPLACE_KERNEL_SCX_ENABLED;
		k.scx_switch_all = 1;
		k.scx_enable_seq = 2;
		proto_set_string(k.scx_ops, sizeof(k.scx_ops), "simple");
		break;
	case 2:
		k.fair.state = k.ext.state = RTPLACE_KERNEL_DL_UNREADABLE;
		proto_set_string(k.fair.why, sizeof(k.fair.why), "no /sys/kernel/debug/sched: debugfs is not mounted");
		proto_set_string(k.ext.why, sizeof(k.ext.why), "no /sys/kernel/debug/sched: debugfs is not mounted");
		k.scx_state = RTPLACE_KERNEL_SCX_DISABLED;
		k.scx_enable_seq = 0;
		k.scx_switch_all = 0;
		break;
	default:
		return -ENOENT;
	}
	return sample_reply(ret, RTPLACE_MSG_KERNEL_REPLY, 15, &k, sizeof(k));
}

/* Shapes: an owner-bound claim the receiver may see whole, another
 * user's with a lease, one past CPU 1023 (version 3 only) held by a
 * connection, and the end of the list. */
static int sample_claim_reply(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_claim_reply r = { .claim_id = 5, .level = RTPLACE_LEVEL_DL };

	switch (shape) {
	case 0:
		r.flags = RTPLACE_CLAIM_F_OWNER_EXIT | RTPLACE_CLAIM_F_UID | RTPLACE_CLAIM_F_PID | RTPLACE_CLAIM_F_EXCLUSIVE;
		r.owner_pid = 1234;
		r.owner_uid = 1000;
		proto_set_string(r.owner_comm, sizeof(r.owner_comm), "ffmpeg");
		sample_mask_range(&r.cpus, 2, 3);
		break;
	case 1:
		r.flags = RTPLACE_CLAIM_F_OWNER_EXIT | RTPLACE_CLAIM_F_OTHER_USER | RTPLACE_CLAIM_F_LEASE;
		r.level = RTPLACE_LEVEL_RT1 + 49;
		r.lease_left_ms = 29000;
		rtplace_cpumask_set(&r.cpus, 0);
		break;
	case 2:
		r.flags = RTPLACE_CLAIM_F_CONNECTION | RTPLACE_CLAIM_F_UID;
		r.level = RTPLACE_LEVEL_NORMAL;
		rtplace_cpumask_set(&r.cpus, 5000);
		break;
	case 3:
		r = (struct rtplace_claim_reply){ 0 };
		break;
	default:
		return -ENOENT;
	}
	return sample_reply(ret, RTPLACE_MSG_CLAIM_REPLY, 14, &r, sizeof(r));
}

static int sample_move_reply(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_move_reply r = {
		.tid = 4321, .policy = RTPLACE_POLICY_FIFO, .prio = 80, .prev_policy = RTPLACE_POLICY_OTHER,
	};

	switch (shape) {
	case 0:
		rtplace_cpumask_set(&r.cpus, 1);
		sample_mask_range(&r.prev_cpus, 0, PROTO_SAMPLE_NCPUS - 1);
		break;
	case 1:
		/* sets of different lengths, one past 1023: version 3 only */
		rtplace_cpumask_set(&r.cpus, 5000);
		sample_mask_range(&r.prev_cpus, 0, 3);
		break;
	default:
		return -ENOENT;
	}
	return sample_reply(ret, RTPLACE_MSG_MOVE_REPLY, 10 + shape, &r, sizeof(r));
}

/* Shapes: a dry run of a plain query; of an exclusive claim on some
 * CPUs from the second page. */
static int sample_explain(unsigned shape, struct proto_msg *ret)
{
	struct rtplace_explain e = {
		.query = { .prio = 50, .policy = RTPLACE_POLICY_FIFO, .count = 1, .node = -1, .near_cpu = -1 },
	};

	switch (shape) {
	case 0:
		break;
	case 1:
		e.first = RTPLACE_CPUS_PAGE;
		e.query.count = 2;
		e.query.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_EXCLUSIVE;
		sample_mask_range(&e.query.allowed, 2, 200);
		break;
	default:
		return -ENOENT;
	}
	return proto_encode_explain(ret, 15, &e);
}

/* Shapes: a 16-CPU page with the answer, a claim seen whole, one of
 * another user and every obstacle; no CPU below the priority. */
static int sample_explain_reply(unsigned shape, struct proto_msg *ret)
{
	int err = proto_msg_init(ret, RTPLACE_MSG_EXPLAIN_REPLY, 15);
	struct rtplace_explain_reply *r = &ret->explain_reply;

	if (err < 0 || shape > 1)
		return err < 0 ? err : -ENOENT;
	r->total = r->count = PROTO_SAMPLE_NCPUS;
	r->level = RTPLACE_LEVEL_OFFLINE;
	r->result = -ENOENT;
	for (unsigned c = 0; c < PROTO_SAMPLE_NCPUS; c++) {
		r->cpus[c].cpu = (uint16_t)c;
		r->cpus[c].verdict = RTPLACE_EXPLAIN_BUSY;
		r->cpus[c].level = r->cpus[c].map_level = RTPLACE_LEVEL_RT1 + 79;
		r->cpus[c].other = -1;
	}
	if (shape == 0) {
		r->result = 0;
		r->nchosen = 1;
		r->level = RTPLACE_LEVEL_IDLE;
		r->cpus[3] = (struct rtplace_explain_cpu){ .cpu = 3, .verdict = RTPLACE_EXPLAIN_CHOSEN, .rank = 1,
							    .level = RTPLACE_LEVEL_IDLE, .other = -1 };
		r->cpus[5].verdict = RTPLACE_EXPLAIN_CLAIMED;
		r->cpus[5].map_level = RTPLACE_LEVEL_NORMAL;
		r->cpus[5].level = r->cpus[5].claim_level = RTPLACE_LEVEL_DL;
		r->cpus[5].claim_id = 12;
		r->cpus[5].flags = RTPLACE_EXPLAIN_CPU_F_CLAIM_UID | RTPLACE_EXPLAIN_CPU_F_CLAIM_PID;
		r->cpus[5].claim_uid = 1000;
		r->cpus[5].claim_pid = 4242;
		proto_set_string(r->cpus[5].claim_comm, sizeof(r->cpus[5].claim_comm), "synth");
		r->cpus[6] = r->cpus[5];
		r->cpus[6].cpu = 6;
		r->cpus[6].flags = RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER | RTPLACE_EXPLAIN_CPU_F_ISOLATED;
		r->cpus[6].claim_uid = 0;
		r->cpus[6].claim_pid = 0;
		memset(r->cpus[6].claim_comm, 0, sizeof(r->cpus[6].claim_comm));
		r->cpus[7].verdict = RTPLACE_EXPLAIN_SMT;
		r->cpus[7].level = r->cpus[7].map_level = RTPLACE_LEVEL_IDLE;
		r->cpus[7].other = 3;
		r->cpus[8].pid = 777;
		proto_set_string(r->cpus[8].comm, sizeof(r->cpus[8].comm), "pipewire");
		r->nobstacles = RTPLACE_OBSTACLE_COUNT - 1;
		for (uint16_t k = RTPLACE_OBSTACLE_RTPRIO; k < RTPLACE_OBSTACLE_COUNT; k++)
			r->obstacles[k - 1].kind = k;
		r->obstacles[0].limit = -1;
		r->obstacles[2].limit = 950000;
		r->obstacles[3].value = 950000;
		r->obstacles[3].limit = 1000000;
		r->obstacles[4].value = 50000;
		r->obstacles[5].value = 1;
		proto_set_string(r->detail, sizeof(r->detail), "no RT budget: cpu cgroup /sys/fs/cgroup/cpu/x");
	}
	return sample_finish(ret);
}

int proto_sample(uint16_t type, unsigned shape, struct proto_msg *ret)
{
	switch (type) {
	case RTPLACE_MSG_QUERY:
		return sample_query(shape, ret);
	case RTPLACE_MSG_RELEASE:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_release(ret, 2, &(struct rtplace_release){ .claim_id = 42 });
	case RTPLACE_MSG_CPUS:
		if (shape > 1)
			return -ENOENT;
		return proto_encode_cpus(ret, 3, &(struct rtplace_cpus){ .first = shape * RTPLACE_CPUS_PAGE });
	case RTPLACE_MSG_STATUS:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_status(ret, 4);
	case RTPLACE_MSG_MOVE:
		return sample_move(shape, ret);
	case RTPLACE_MSG_SUBSCRIBE:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_subscribe(ret, 5, &(struct rtplace_subscribe){ 0 });
	case RTPLACE_MSG_ERROR:
		return sample_error(shape, ret);
	case RTPLACE_MSG_QUERY_REPLY:
		return sample_query_reply(shape, ret);
	case RTPLACE_MSG_RELEASE_REPLY:
		if (shape > 0)
			return -ENOENT;
		return sample_reply(ret, RTPLACE_MSG_RELEASE_REPLY, 2,
				    &(struct rtplace_release_reply){ .claim_id = 42, .ncpus = 4 },
				    sizeof(struct rtplace_release_reply));
	case RTPLACE_MSG_CPUS_REPLY:
		return sample_cpus_reply(shape, ret);
	case RTPLACE_MSG_STATUS_REPLY:
		return sample_status_reply(shape, ret);
	case RTPLACE_MSG_MOVE_REPLY:
		return sample_move_reply(shape, ret);
	case RTPLACE_MSG_TRACKING:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_tracking(ret, 11);
	case RTPLACE_MSG_TRACKING_REPLY:
		return sample_tracking_reply(shape, ret);
	case RTPLACE_MSG_HOST:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_host(ret, 12);
	case RTPLACE_MSG_HOST_REPLY:
		return sample_host_reply(shape, ret);
	case RTPLACE_MSG_LOCAL:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_local(ret, 13);
	case RTPLACE_MSG_LOCAL_REPLY:
		if (shape > 0)
			return -ENOENT;
		return sample_reply(ret, RTPLACE_MSG_LOCAL_REPLY, 13,
				    &(struct rtplace_local_reply){ .map_size = 50560, .snap_size = 16064, .snap_layout = 1 },
				    sizeof(struct rtplace_local_reply));
	case RTPLACE_MSG_CLAIM:
		if (shape > 1)
			return -ENOENT;
		return proto_encode_claim(ret, 14, &(struct rtplace_claim_req){ .from_id = shape ? 6 : 0 });
	case RTPLACE_MSG_CLAIM_REPLY:
		return sample_claim_reply(shape, ret);
	case RTPLACE_MSG_EXPLAIN:
		return sample_explain(shape, ret);
	case RTPLACE_MSG_EXPLAIN_REPLY:
		return sample_explain_reply(shape, ret);
	case RTPLACE_MSG_KERNEL:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_kernel(ret, 15);
	case RTPLACE_MSG_KERNEL_REPLY:
		return sample_kernel_reply(shape, ret);
	case RTPLACE_MSG_RELOAD:
		if (shape > 0)
			return -ENOENT;
		return proto_encode_reload(ret, 15);
	case RTPLACE_MSG_RELOAD_REPLY:
		if (shape > 0)
			return -ENOENT;
		return proto_msg_init(ret, RTPLACE_MSG_RELOAD_REPLY, 15) < 0 ? -EINVAL : sample_finish(ret);
	case RTPLACE_MSG_SUBSCRIBE_REPLY:
		if (shape > 0)
			return -ENOENT;
		return sample_reply(ret, RTPLACE_MSG_SUBSCRIBE_REPLY, 5,
				    &(struct rtplace_subscribe_reply){
					    .ring_records = 1024, .record_size = 32, .ring_bytes = 64 + 1024 * 32 },
				    sizeof(struct rtplace_subscribe_reply));
	case RTPLACE_MSG_CPU_TIMES:
		if (shape > 1)
			return -ENOENT;
		return proto_encode_cpu_times(ret, 8, &(struct rtplace_cpus){ .first = shape * RTPLACE_CPUS_PAGE });
	case RTPLACE_MSG_CPU_TIMES_REPLY:
		return sample_cpu_times_reply(shape, ret);
	case RTPLACE_MSG_CLAIM_ENDED:
		if (shape > 1)
			return -ENOENT;
		return sample_reply(ret, RTPLACE_MSG_CLAIM_ENDED, 0,
				    &(struct rtplace_claim_ended){
					    .claim_id = 7,
					    .why = shape ? RTPLACE_CLAIM_ENDED_OWNER_EXITED : RTPLACE_CLAIM_ENDED_EXPIRED },
				    sizeof(struct rtplace_claim_ended));
	default:
		return -ENOENT;
	}
}
