/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel types tracker.bpf.c reads, written by hand instead of a
 * generated vmlinux.h: only the fields the tracker uses, under their kernel
 * names. Every struct carries preserve_access_index, so clang emits CO-RE
 * relocations and libbpf resolves each field against the running kernel's
 * BTF at load time: member order, offsets and sizes here do not matter, only
 * names and kinds. A field that a kernel lacks makes the load fail unless
 * the code guards it with bpf_core_field_exists().
 *
 * Also the few uapi constants (map types, flags) that <linux/bpf.h> would
 * give: that header pulls in <asm/types.h>, which clang -target bpf cannot
 * find without the host's multiarch include directory. These values are
 * kernel ABI and never change.
 */
#ifndef RTPLACE_KERNEL_TYPES_H
#define RTPLACE_KERNEL_TYPES_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
#define true 1
#define false 0

enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_F_MMAPABLE = 1U << 10,
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};

/* task_struct.on_rq (kernel/sched/sched.h). */
#define TASK_ON_RQ_QUEUED 1
#define TASK_ON_RQ_MIGRATING 2

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct list_head {
	struct list_head *next;
	struct list_head *prev;
};

struct rq;
struct rt_rq;

/* Only with CONFIG_FAIR_GROUP_SCHED: the way from a task to its runqueue
 * (kernels without CONFIG_KALLSYMS_ALL cannot resolve the runqueues ksym). */
struct cfs_rq {
	struct rq *rq;
};

struct sched_entity {
	struct cfs_rq *cfs_rq;
};

struct sched_rt_entity {
	struct list_head run_list;
	unsigned short on_rq;
	struct rt_rq *rt_rq; /* only with CONFIG_RT_GROUP_SCHED */
};

/* x86 and most arches since 5.16 keep the CPU here (THREAD_INFO_IN_TASK). */
struct thread_info {
	__u32 cpu;
};

struct task_struct {
	struct thread_info thread_info;
	int on_rq;
	int prio;
	struct sched_entity se;
	struct sched_rt_entity rt;
	__s32 pid;
	__s32 tgid;
};

/* Kernels 4.9..5.15 kept the CPU in task_struct itself. */
struct task_struct___cpu_in_task {
	unsigned int cpu;
};

/* MAX_RT_PRIO + 1 bits (one delimiter), as unsigned longs. */
struct rt_prio_array {
	unsigned long bitmap[2];
	struct list_head queue[100];
};

struct rt_rq {
	struct rt_prio_array active;
	unsigned int rt_nr_running;
	struct {
		int curr;
		int next;
	} highest_prio;
	struct rq *rq; /* only with CONFIG_RT_GROUP_SCHED */
};

struct rq {
	int cpu;
	int online; /* only with CONFIG_SMP, always set on SMP kernels */
	struct rt_rq rt;
	struct task_struct *curr;
	struct task_struct *idle;
	struct task_struct *stop;
};

#pragma clang attribute pop

#endif
