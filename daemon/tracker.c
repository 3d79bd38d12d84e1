#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cpupri.h"
#include "seed.h"
#include "tracker.h"
/* Generated from bpf/tracker.bpf.c by bpftool; needs cpupri.h first. */
#include "tracker.skel.h"

_Static_assert(TRACKER_MAX_CPUS == RTPLACE_MAX_CPUS, "the programs cover every CPU id rtplace manages");

#define TRACKER_PROC "/proc"
#define TRACKER_BTF "/sys/kernel/btf/vmlinux"

/* The syscall programs, attached and detached on their own (tracker_syscalls). */
#define TRACKER_NSYSCALL_PROGS 6

struct tracker {
	struct tracker_bpf *skel;
	struct bpf_link *syscall_links[TRACKER_NSYSCALL_PROGS];
	struct ring_buffer *ring;
	const void *map;       /* read-only mapping of the cpupri map */
	size_t map_len;        /* bytes mapped, a page multiple */
	size_t map_size;       /* bytes of the region (geometry) */
	tracker_event_cb *cb;  /* the consumer, only during tracker_consume() */
	void *cb_ctx;
};

static void tracker_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void tracker_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool tracker_btf_has_member(const struct btf *btf, const char *type, const char *member)
{
	__s32 id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (__u16 i = 0; i < btf_vlen(t); i++, m++)
		if (strcmp(btf__name_by_offset(btf, m->name_off), member) == 0)
			return true;
	return false;
}

/* Names what the running kernel lacks before libbpf fails on it with a less
 * telling message (or a verifier log). */
static int tracker_check_kernel(char *err, size_t errlen)
{
	static const char *const tracepoints[] = {
		"sched_switch", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task", "sched_pi_setprio",
		"sched_process_exit",
	};
	static const char *const kfuncs[] = { "bpf_task_from_pid", "bpf_task_release" };
	static const char *const tracefs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *syscall_event = "events/syscalls/sys_exit_sched_setscheduler/id";
	struct btf *btf = NULL;
	char name[128];
	int r = 0;

	if (access(TRACKER_BTF, R_OK) < 0) {
		r = errno == EACCES ? -EPERM : -ENOENT;
		tracker_err(err, errlen, "kernel BTF %s is %s (the kernel needs CONFIG_DEBUG_INFO_BTF=y)", TRACKER_BTF,
			    r == -EPERM ? "not readable" : "missing");
		goto out;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		r = -errno;
		tracker_err(err, errlen, "cannot read kernel BTF %s: %s", TRACKER_BTF, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++) {
		snprintf(name, sizeof(name), "btf_trace_%s", tracepoints[i]);
		if (btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) < 0) {
			r = -EOPNOTSUPP;
			tracker_err(err, errlen, "kernel lacks the tp_btf tracepoint %s", tracepoints[i]);
			goto out;
		}
	}
	if (!tracker_btf_has_member(btf, "cfs_rq", "rq") && !tracker_btf_has_member(btf, "rt_rq", "rq")) {
		r = -EOPNOTSUPP;
		tracker_err(err, errlen,
			    "kernel lacks task-to-runqueue pointers (needs CONFIG_FAIR_GROUP_SCHED=y or "
			    "CONFIG_RT_GROUP_SCHED=y)");
		goto out;
	}
	for (size_t i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++) {
		if (btf__find_by_name_kind(btf, kfuncs[i], BTF_KIND_FUNC) < 0) {
			r = -EOPNOTSUPP;
			tracker_err(err, errlen, "kernel lacks the kfunc %s (Linux 6.2 or later)", kfuncs[i]);
			goto out;
		}
	}
	r = -EOPNOTSUPP;
	for (size_t i = 0; i < sizeof(tracefs) / sizeof(tracefs[0]) && r < 0; i++) {
		snprintf(name, sizeof(name), "%s/%s", tracefs[i], syscall_event);
		if (access(name, R_OK) == 0)
			r = 0;
		else if (errno == EACCES)
			r = -EPERM;
	}
	if (r < 0)
		tracker_err(err, errlen,
			    r == -EPERM ? "tracefs is not readable (needs root)"
					: "syscall tracepoints not found: tracefs must be mounted on /sys/kernel/tracing "
					  "and the kernel built with CONFIG_FTRACE_SYSCALLS=y");
out:
	btf__free(btf);
	return r;
}

static void tracker_syscall_progs(struct tracker_bpf *skel, struct bpf_program *ret[TRACKER_NSYSCALL_PROGS])
{
	ret[0] = skel->progs.tracker_setscheduler_enter;
	ret[1] = skel->progs.tracker_setscheduler_exit;
	ret[2] = skel->progs.tracker_setparam_enter;
	ret[3] = skel->progs.tracker_setparam_exit;
	ret[4] = skel->progs.tracker_setattr_enter;
	ret[5] = skel->progs.tracker_setattr_exit;
}

int tracker_syscalls(struct tracker *t, bool on)
{
	struct bpf_program *progs[TRACKER_NSYSCALL_PROGS];
	int r = 0;

	tracker_syscall_progs(t->skel, progs);
	for (int i = 0; i < TRACKER_NSYSCALL_PROGS; i++) {
		if (on && !t->syscall_links[i]) {
			t->syscall_links[i] = bpf_program__attach(progs[i]);
			if (!t->syscall_links[i]) {
				r = -errno;
				break;
			}
		} else if (!on && t->syscall_links[i]) {
			bpf_link__destroy(t->syscall_links[i]);
			t->syscall_links[i] = NULL;
		}
	}
	if (r < 0)
		tracker_syscalls(t, false);
	return r;
}

static int tracker_ring_cb(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	struct tracker_event ev;

	if (!t->cb || size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	return t->cb(&ev, t->cb_ctx);
}

/* Publishes the /proc view of every managed CPU that no BPF writer has
 * reached yet (still at the offline level cpupri_init() left): a CPU the
 * programs already updated holds a fresher, exact value and keeps it. */
static int tracker_seed(const struct topo *topo, void *map, const struct cpupri_geom *g)
{
	__u32 *levels = calloc(topo->ncpus, sizeof(*levels));
	int r;

	if (!levels)
		return -ENOMEM;
	r = seed_scan(TRACKER_PROC, topo->ncpus, levels);
	if (r == 0)
		CPUSET_FOREACH(cpu, &topo->online)
			cpupri_set_from(map, g, (__u32)cpu, LEVEL_OFFLINE, levels[cpu]);
	free(levels);
	return r;
}

int tracker_open(const struct topo *topo, enum topo_shard shard, char *err, size_t errlen, struct tracker **ret)
{
	struct bpf_program *progs[TRACKER_NSYSCALL_PROGS];
	long page = sysconf(_SC_PAGESIZE);
	struct tracker *t = NULL;
	uint16_t *shard_of = NULL;
	void *rw = MAP_FAILED;
	size_t len = 0;
	struct cpupri_geom g;
	uint32_t nshards;
	int fd, r;

	tracker_err(err, errlen, "out of memory");
	r = tracker_check_kernel(err, errlen);
	if (r < 0)
		goto out;
	shard_of = calloc(topo->ncpus, sizeof(*shard_of));
	t = calloc(1, sizeof(*t));
	if (!shard_of || !t) {
		r = -ENOMEM;
		goto out;
	}
	topo_shards(topo, shard, shard_of, &nshards);
	r = cpupri_geom_compute(topo->ncpus, nshards, shard_of, &g);
	if (r < 0) {
		tracker_err(err, errlen, "cannot size the cpupri map for %u CPUs in %u shards: %s", topo->ncpus,
			    nshards, strerror(-r));
		goto out;
	}

	t->skel = tracker_bpf__open();
	if (!t->skel) {
		r = -errno;
		tracker_err(err, errlen, "opening the BPF object failed: %s", strerror(errno));
		goto out;
	}
	t->skel->rodata->tracker_geom = g;
	CPUSET_FOREACH(cpu, &topo->online)
		t->skel->rodata->tracker_managed[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	/* Attached after the rest by tracker_syscalls(), which can undo them. */
	tracker_syscall_progs(t->skel, progs);
	for (int i = 0; i < TRACKER_NSYSCALL_PROGS; i++)
		bpf_program__set_autoattach(progs[i], false);
	r = bpf_map__set_value_size(t->skel->maps.tracker_cpupri, g.size);
	if (r == 0)
		r = tracker_bpf__load(t->skel);
	if (r < 0) {
		tracker_err(err, errlen, "loading the BPF programs failed: %s%s", strerror(-r),
			    r == -EPERM ? " (needs root: CAP_BPF, CAP_PERFMON)" : "");
		goto out;
	}

	/* Writable only while the loader initialises and seeds it; readers
	 * get a read-only mapping and the map is frozen against syscall
	 * writes, so only the BPF programs can change it afterwards. */
	fd = bpf_map__fd(t->skel->maps.tracker_cpupri);
	t->map_size = g.size;
	len = (g.size + (size_t)page - 1) / (size_t)page * (size_t)page;
	t->map_len = len;
	rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rw == MAP_FAILED) {
		r = -errno;
		tracker_err(err, errlen, "mapping the cpupri map failed: %s", strerror(errno));
		goto out;
	}
	cpupri_init(rw, &g, shard_of);

	r = tracker_bpf__attach(t->skel);
	if (r == 0)
		r = tracker_syscalls(t, true);
	if (r < 0) {
		tracker_err(err, errlen, "attaching the BPF programs failed: %s", strerror(-r));
		goto out;
	}
	/* After attach, so that any CPU the seed misses is one whose next
	 * event the programs see. */
	r = tracker_seed(topo, rw, &g);
	if (r < 0) {
		tracker_err(err, errlen, "seeding from %s failed: %s", TRACKER_PROC, strerror(-r));
		goto out;
	}

	t->map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (t->map == MAP_FAILED) {
		r = -errno;
		t->map = NULL;
		tracker_err(err, errlen, "mapping the cpupri map read-only failed: %s", strerror(errno));
		goto out;
	}
	munmap(rw, len);
	rw = MAP_FAILED;
	r = bpf_map_freeze(fd);
	if (r < 0) {
		tracker_err(err, errlen, "freezing the cpupri map failed: %s", strerror(-r));
		goto out;
	}

	t->ring = ring_buffer__new(bpf_map__fd(t->skel->maps.tracker_events), tracker_ring_cb, t, NULL);
	if (!t->ring) {
		r = -errno;
		tracker_err(err, errlen, "creating the ring buffer reader failed: %s", strerror(errno));
		goto out;
	}
	*ret = t;
	t = NULL;
	tracker_err(err, errlen, "%s", "");
out:
	if (rw != MAP_FAILED)
		munmap(rw, len);
	tracker_close(t);
	free(shard_of);
	return r;
}

const void *tracker_map(const struct tracker *t, size_t *ret_size)
{
	*ret_size = t->map_size;
	return t->map;
}

int tracker_ring_fd(const struct tracker *t)
{
	return ring_buffer__epoll_fd(t->ring);
}

int tracker_consume(struct tracker *t, tracker_event_cb *cb, void *ctx)
{
	int r;

	t->cb = cb;
	t->cb_ctx = ctx;
	r = ring_buffer__consume(t->ring);
	t->cb = NULL;
	t->cb_ctx = NULL;
	return r;
}

int tracker_watch(struct tracker *t, uint32_t tid, bool on)
{
	int fd = bpf_map__fd(t->skel->maps.tracker_watched);
	__u32 one = 1;
	int r;

	if (on)
		return bpf_map_update_elem(fd, &tid, &one, BPF_ANY);
	r = bpf_map_delete_elem(fd, &tid);
	return r == -ENOENT ? 0 : r;
}

uint64_t tracker_lost(const struct tracker *t)
{
	return __atomic_load_n(&t->skel->bss->tracker_lost, __ATOMIC_RELAXED);
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	if (t->skel)
		tracker_syscalls(t, false);
	ring_buffer__free(t->ring);
	if (t->map)
		munmap((void *)t->map, t->map_len);
	tracker_bpf__destroy(t->skel);
	free(t);
}
