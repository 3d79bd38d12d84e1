/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader of the kernel's RT environment (common/kenv.h, DESIGN §20):
 * RT group scheduling from the cpu cgroup hierarchy and the command line,
 * the fair and ext deadline servers from debugfs, sched_ext from sysfs.
 * The engine reads it where it reads the host's settings (start, reload;
 * at hotplug only with a reloaded topology), and sched_ext every 10 s; it
 * logs everything at the first read and afterwards one line for each part
 * that changed.
 *
 * Debugfs is only read, never mounted: where it is not mounted, or the
 * unit's sandbox hides it, the servers are UNREADABLE and their why says
 * which path failed how.
 */
#ifndef RTPLACE_KERNEL_ENV_H
#define RTPLACE_KERNEL_ENV_H

#include <stdint.h>

#include "kenv.h"

struct kernel_env;

/* sysfs_root: "/sys" or a fixture tree's; proc_root likewise for
 * /proc/cmdline. Both are copied. */
int kernel_env_new(const char *sysfs_root, const char *proc_root, struct kernel_env **ret);
void kernel_env_free(struct kernel_env *k);

/* Reads everything again for CPUs 0 .. ncpus - 1, and logs what changed. */
void kernel_env_read(struct kernel_env *k, uint32_t ncpus);

/* Reads sched_ext again, which changes without an event the daemon sees
 * (a scheduler loaded, ejected or unloaded), every
 * KERNEL_ENV_REFRESH_USEC; logs a change. The deadline servers are not
 * read here: 4 files per CPU cost the loop about 3 ms on 480 CPUs and
 * 110 ms on 8,192 (tmpfs, measured), and only someone writing debugfs
 * changes them (reload then). */
#define KERNEL_ENV_REFRESH_USEC 10000000u
void kernel_env_refresh(struct kernel_env *k);

const struct kenv *kernel_env_get(const struct kernel_env *k);

/* The CPUs' values of a READ server: fair (ext false) or ext; *ret_n
 * entries (0 unless READ). */
const struct kenv_dl_cpu *kernel_env_dl_cpus(const struct kernel_env *k, bool ext, uint32_t *ret_n);

#endif
