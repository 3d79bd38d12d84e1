/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why the kernel refused an RT policy: RT group scheduling
 * (CONFIG_RT_GROUP_SCHED, the cgroup v1 cpu controller) gives each cpu
 * cgroup an RT budget, cpu.rt_runtime_us, which is 0 in every folder
 * created after boot, and sched_setscheduler() answers EPERM, even to root,
 * for a thread in a folder without one. Every place that sets an RT policy
 * (the daemon's moves, rtplace-run, the OCI hook, rtplacectl explaining a
 * refused move) asks here, so the diagnosis and the fix read the same.
 *
 * rtbudget_parse_cgroup() and rtbudget_explain() are pure; rtbudget_find()
 * reads the folders' files under a root ("/sys/fs/cgroup", or a fixture
 * tree in tests). The caller reads /proc/TID/cgroup its own way (the
 * daemon through procfs.c).
 */
#ifndef RTPLACE_RTBUDGET_H
#define RTPLACE_RTBUDGET_H

#include <limits.h>

#include "reason.h"
#include "sysfs.h"

#define RTBUDGET_CGROUP_ROOT SYSFS_ROOT "/fs/cgroup"

/* How a reason sent in a reply starts when the cause is a missing budget:
 * the wire's reasons are too short for the fix, so the client that sees it
 * asks rtbudget_find() itself for the full text. */
#define RTBUDGET_REASON_PREFIX "no RT budget"

/* The RT budget the kernel gives the root folder: the most a first child
 * folder can be given. */
#define RTBUDGET_DEFAULT_US 950000LL

struct rtbudget_finding {
	char folder[PATH_MAX];  /* the thread's cpu cgroup folder, under the root: budget 0 */
	char first[PATH_MAX];   /* the top-most folder with budget 0 above it ("" when none): set first */
	long long budget_us;    /* the nearest budgeted ancestor's, the most folder can take */
};

/*
 * Finds the cgroup v1 cpu controller's line in the text of a
 * /proc/TID/cgroup file ("4:cpu,cpuacct:/a/b") and writes the folder it
 * names under root ("<root>/cpu,cpuacct/a/b") into ret. 0; -ENOENT when no
 * line has the cpu controller (cgroup v2 alone has no per-folder RT
 * budget); -ENAMETOOLONG; -EBADMSG for a line that is not ID:LIST:PATH.
 */
int rtbudget_parse_cgroup(const char *proc_cgroup, const char *root, char *ret, size_t size);

/*
 * Whether the thread whose /proc/TID/cgroup text is proc_cgroup sits in a
 * cpu cgroup with no RT budget under root. 0 with *ret filled when it does;
 * -ENOENT when it does not (no cpu controller, no cpu.rt_runtime_us, or a
 * budget above 0), so the refusal has another cause; another -errno when a
 * file cannot be read or parsed.
 */
int rtbudget_find(const char *proc_cgroup, const char *root, struct rtbudget_finding *ret);

/* The finding in words, with the fix. */
void rtbudget_explain(const struct rtbudget_finding *f, struct rtplace_reason *ret);

#endif
