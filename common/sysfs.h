/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader of the kernel's CPU list files in a sysfs tree (sysfs(5)):
 * under devices/system/cpu (online, isolated, nohz_full) and the cgroup v2
 * root's cpuset.cpus.isolated. Every caller passes the tree's root ("/sys"
 * in production, a fixture directory in tests). Other files under /sys
 * have readers of their own: the tracker's BTF and lockdown files
 * (tracker.c) and the cgroups' RT budgets (rtbudget.c).
 *
 * sysfs_parse_cpulist() is pure; the readers make the system calls.
 */
#ifndef RTPLACE_SYSFS_H
#define RTPLACE_SYSFS_H

#include "cpuset.h"
#include "reason.h"

#define SYSFS_ROOT "/sys"

/*
 * Parses the text of a kernel CPU list file: a cpulist ("2-7,9"), blank
 * or "(null)" for none (nohz_full without nohz_full= prints "(null)" on
 * kernels before 6.9 and on Debian's 6.12-rt, left-padded with spaces to
 * the number of CPU ids: "  (null)" on 8), one trailing newline allowed. 0 or -EINVAL; *ret is
 * written only on success.
 */
int sysfs_parse_cpulist(const char *text, struct rtplace_cpumask *ret);

/* Reads and parses <root>/devices/system/cpu/<name>. 0, -ENOENT when the
 * file does not exist, -EINVAL when it is not a CPU list, or -errno. */
int sysfs_read_cpulist(const char *root, const char *name, struct rtplace_cpumask *ret);

/*
 * The host's isolation (DESIGN §20). isolated is what the scheduler never
 * balances onto: isolcpus= (devices/system/cpu/isolated) and the CPUs of
 * cgroup v2 isolated partitions (fs/cgroup/cpuset.cpus.isolated, kernel
 * 6.7+); partitions is the second part alone. nohz_full is the tickless
 * set. A file the kernel does not have means none.
 */
struct sysfs_isolation {
	struct rtplace_cpumask isolated;
	struct rtplace_cpumask partitions;
	struct rtplace_cpumask nohz_full;
};

/* Reads the isolation under root. 0, or -EINVAL / -errno with reason naming
 * the file (what was read before is not kept: *ret is written only on
 * success). */
int sysfs_read_isolation(const char *root, struct rtplace_reason *reason, struct sysfs_isolation *ret);

#endif
