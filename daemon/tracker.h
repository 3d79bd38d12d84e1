/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The BPF tracker's loader: the only user of the generated skeleton. It
 * sizes the cpupri map from the topology, loads and attaches the programs of
 * bpf/tracker.bpf.c, seeds the map from /proc, and hands out a read-only
 * mapping of it, the per-CPU time by class and the ring buffer of events
 * (bpf/tracker-abi.h) the daemon must act on. Library code: it never logs; errors come back as -errno with
 * a message for the caller to log.
 *
 * Needs bpf(2), CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), kernel BTF,
 * tp_btf programs on the scheduler tracepoints (sched_update_nr_running_tp
 * among them) and the group-scheduling runqueue pointers
 * (CONFIG_FAIR_GROUP_SCHED or CONFIG_RT_GROUP_SCHED); not tracefs. The map
 * is exact from tracker_open() on, RT tasks that already ran included
 * (seeded from /proc, see seed.h), and a priority change of a queued or
 * running task (sched_setscheduler(), sched_setparam(), sched_setattr(),
 * priority inheritance) is published before the call that made it returns.
 */
#ifndef RTPLACE_TRACKER_H
#define RTPLACE_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracker-abi.h"
#include "reason.h"
#include "topo.h"

struct tracker;

/* Called for each event by tracker_consume(); a negative return stops the
 * drain and is returned by tracker_consume(). */
typedef int tracker_event_cb(const struct tracker_event *ev, void *ctx);

/*
 * Opens, sizes (one map shard per node or LLC of topo), loads, attaches and
 * seeds the tracker for every CPU id of topo: those online now are seeded
 * from /proc, the others stay offline until the kernel brings them up, and
 * every CPU follows hotplug from then on (offline while the scheduler has
 * it offline). Returns 0, or -errno with a one-line reason that names the
 * feature missing (probed, never inferred from the kernel's version):
 * -ENOSYS without bpf(2), -EPERM without the capabilities or when bpf(2) or
 * the load is refused (lockdown named), -ENOENT when the kernel has no BTF,
 * -EOPNOTSUPP when it lacks a tracepoint or field the programs need (each
 * named), others from libbpf. libbpf_said (may be NULL) gets, on failure,
 * libbpf's own first warning and the verifier's complaint, for the log
 * beside reason ("" when libbpf said nothing; reason is the one to send or
 * export). Writes nothing to stderr: libbpf's printing is captured while it
 * runs. *ret is written only on success.
 */
int tracker_open(const struct topo *topo, enum topo_shard shard, struct rtplace_reason *reason,
		 struct rtplace_reason *libbpf_said, struct tracker **ret);

/* The cpupri map, mapped read-only, and its size in bytes (cpupri_view_open()). */
const void *tracker_map(const struct tracker *t, size_t *ret_size);
/*
 * A descriptor for local readers: of a sealed memfd (snapshot.h) that
 * holds a copy of the map, which they can map PROT_READ only and which
 * no BPF program can be given; the tracker keeps it. -1 when none could
 * be made. The copy has the map's levels and RT queue lengths as of the
 * last tracker_mirror() (TRACKER_MIRROR_MS apart on the daemon's loop)
 * and no pids: those of the map are the initial PID namespace's.
 */
int tracker_map_ro_fd(const struct tracker *t);

/* How far apart the daemon refreshes the copy, in milliseconds: what a
 * local read may lag behind the map (a refresh reads one line per CPU). */
#define TRACKER_MIRROR_MS 10

/* Brings the copy of tracker_map_ro_fd() to the map's current levels. */
void tracker_mirror(struct tracker *t);

/*
 * The nanoseconds cpu spent in each class (RTPLACE_CLASS_*) at now_ns
 * (CLOCK_MONOTONIC, read before the call), into ret: counted from
 * tracker_open() (until the CPU's first level change, in the class of the
 * level seeded from /proc), offline time in no class. Reads
 * the programs' per-CPU entries without a syscall or a lock (tracker-abi.h);
 * for one CPU, a later now_ns never gives less in any class. 0, -ERANGE for
 * a CPU beyond the topology, -EBUSY (tracker_cpu_time_read()).
 */
int tracker_cpu_times(const struct tracker *t, uint32_t cpu, uint64_t now_ns, uint64_t ret[RTPLACE_CLASS_COUNT]);

/* The ring buffer's epoll fd: readable when tracker_consume() has events
 * that woke it (exits). Collisions do not wake it; drain them on a timer. */
int tracker_ring_fd(const struct tracker *t);

/* Drains every pending event without blocking, calling cb (NULL: discard).
 * Returns the number of events, or a negative errno / cb's return. */
int tracker_consume(struct tracker *t, tracker_event_cb *cb, void *ctx);

/*
 * Starts (on) or stops reporting the exit and collisions of thread tid.
 * A watched thread is forgotten after its exit (noticed by
 * tracker_consume()). The wakeup and exit programs are attached only while
 * some thread is watched, so the first watch and the last unwatch each
 * patch those tracepoints (an interrupt to every CPU); in between, every
 * wakeup on the machine runs a program. Returns 0, -E2BIG when
 * TRACKER_MAX_WATCHED threads are watched already, or -errno.
 */
int tracker_watch(struct tracker *t, uint32_t tid, bool on);

/* Events dropped because the ring buffer was full, since tracker_open(). */
uint64_t tracker_lost(const struct tracker *t);

/* One tracker program's own cost since statistics were enabled. */
struct tracker_prog_stats {
	char name[32];    /* the program's name in bpf/tracker.bpf.c */
	uint64_t runs;    /* run_cnt */
	uint64_t run_ns;  /* run_time_ns */
};

/*
 * Turns on the kernel's BPF run-time statistics (BPF_ENABLE_STATS) for as
 * long as the tracker is open. It is machine-wide: every BPF program on the
 * machine then pays two clock reads per run. The kernel.bpf_stats_enabled
 * sysctl is left alone. 0 or -errno.
 */
int tracker_enable_stats(struct tracker *t);

/* Fills ret with up to max programs' statistics and *ret_n with their
 * number. 0 or -errno (from BPF_OBJ_GET_INFO_BY_FD). */
int tracker_prog_stats(const struct tracker *t, struct tracker_prog_stats *ret, size_t max, size_t *ret_n);

/* Detaches the programs and frees everything; accepts NULL. */
void tracker_close(struct tracker *t);

#endif
