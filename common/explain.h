/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why a query's answer is what it is (EXPLAIN, DESIGN §5). Pure: no
 * syscalls, no globals, the inputs placement takes.
 *
 * explain_classify() does not decide anything: it is handed placement's
 * own answer (placement_choose() or the engine's, for the same state) and
 * says of every other CPU which rule passed it over, the first of
 * rtplace-proto.h's RTPLACE_EXPLAIN_* that applies. Hard filters first
 * (allowed, online, managed, node, isolation), then eligibility (the
 * map's level, a claim's), then the preferences in the order placement.h
 * ranks picks (isolated side, kind, level, group, SMT sibling, locality,
 * interrupt noise, rotation). A verdict is a fact of the inputs
 * (test-explain checks each against them over random states); CHANGED
 * says that the answer cannot have come from these inputs, which happens
 * only when the map moved between the answer and the classification.
 *
 * explain_thread() lists what stops a thread from getting an RT policy,
 * from facts its caller read (the daemon: the requester's credentials,
 * cgroup and the host's sysctls); one obstacle per fact that applies, so
 * a new fact of the kernel's environment is a field and an entry here.
 * explain_obstacle_words() puts an obstacle into words that name the fix,
 * and explain_verdict_name() names a verdict, for rtplacectl.
 */
#ifndef RTPLACE_EXPLAIN_H
#define RTPLACE_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "kenv.h"
#include "placement.h"
#include "reason.h"
#include "rtplace-proto.h"

/*
 * Fills ret[0..n-1] for CPU ids first..first+n-1 (below t->ncpus): cpu,
 * verdict, level, map_level, claim_level, rank, other and the ISOLATED
 * (cfg's) and NOISY flags; the rest is zeroed for the caller (pids, the
 * claim's holder). res is placement's answer to req under cfg, t, v and
 * claimed (NULL: none; else t->ncpus levels, 0 unclaimed), n 0 when it
 * refused.
 */
void explain_classify(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		      const uint8_t *claimed, const struct placement_request *req, const struct placement_result *res,
		      uint32_t first, uint32_t n, struct rtplace_explain_cpu *ret);

/* What a thread's policy depends on, as the caller read it. */
struct explain_thread_facts {
	int prio;                 /* the RT priority asked */
	bool cap_sys_nice;        /* CAP_SYS_NICE in its effective set */
	bool cap_daemon_userns;   /* ... over the daemon's user namespace */
	int64_t rtprio_soft;      /* RLIMIT_RTPRIO, -1 for unlimited */
	int64_t rtprio_hard;
	bool budget_missing;      /* its cpu cgroup has cpu.rt_runtime_us 0 */
	int64_t budget_us;        /* then: the most it can be given */
	bool rt_known;            /* the throttling sysctls were read */
	int64_t rt_runtime_us;    /* kernel.sched_rt_runtime_us, -1 unlimited */
	int64_t rt_period_us;
	uint32_t fair_share_ppm;  /* the fair deadline server's largest share, 0: none or unread */
	uint32_t ext_share_ppm;   /* the ext server's likewise */
	bool scx_loaded;          /* a sched_ext scheduler is enabled */
	bool scx_switch_all;      /* ... and every normal task is on it */
};

/* The kernel environment's part of f: the deadline servers' shares where
 * they were read, whether a sched_ext scheduler is enabled. */
void explain_kernel_facts(const struct kenv *k, struct explain_thread_facts *f);

/* The obstacles of f, in ret[0..*ret_n-1] (at most max). */
void explain_thread(const struct explain_thread_facts *f, struct rtplace_explain_obstacle *ret, uint32_t max,
		    uint32_t *ret_n);

/* Obstacle o to prio in words that name the fix; detail is the reply's
 * (the RT budget's folder and fix). */
void explain_obstacle_words(const struct rtplace_explain_obstacle *o, int prio, const char *detail,
			    struct rtplace_reason *ret);

/* A short name of a verdict ("chosen", "busy", ...), "?" out of range. */
const char *explain_verdict_name(unsigned verdict);

#endif
