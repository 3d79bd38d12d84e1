/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>

#include "clocks.h"
#include "cpupri.h"
#include "hotplug.h"
#include "procfs.h"
#include "seed.h"
#include "snapshot.h"
#include "sysfs.h"
#include "tracker.h"
/* Generated from bpf/tracker.bpf.c by bpftool; needs cpupri.h first. */
#include "tracker.skel.h"

#define TRACKER_BTF SYSFS_ROOT "/kernel/btf/vmlinux"
#define TRACKER_LOCKDOWN SYSFS_ROOT "/kernel/security/lockdown"

/* Capabilities that <linux/capability.h> of older headers lacks (5.8). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The programs that act only for watched threads (wakeup and exit events):
 * attached while at least one thread is watched, see tracker_watch_attach(). */
#define TRACKER_NWATCH_PROGS 3

struct tracker {
	struct tracker_bpf *skel;
	struct bpf_link *watch_links[TRACKER_NWATCH_PROGS];
	bool watch_attached;
	bool saw_exit;         /* an exit event, whose thread BPF unwatched itself */
	struct ring_buffer *ring;
	const void *map;       /* read-only mapping of the cpupri map */
	struct snapshot_region mirror; /* what local readers map: no BPF map (tracker_mirror()) */
	size_t map_len;        /* bytes mapped, a page multiple */
	size_t map_size;       /* bytes of the region (geometry) */
	const struct tracker_cpu_time *times; /* read-only mapping of tracker_times */
	size_t times_len;      /* bytes mapped, a page multiple */
	uint32_t ncpus;        /* entries of times */
	uint64_t start_ns;     /* CLOCK_MONOTONIC at load (tracker_start_ns) */
	tracker_event_cb *cb;  /* the consumer, only during tracker_consume() */
	void *cb_ctx;
	int stats_fd;          /* BPF_ENABLE_STATS while >= 0 */
};

/*
 * What libbpf said while tracker_open() ran. libbpf prints through one
 * process-wide callback, to stderr by default; library code must not, so
 * the tracker routes it here while it calls libbpf, and what tracker_open()
 * says libbpf said is libbpf's first warning that names a program or map,
 * else its first warning (the cause: later ones repeat the failure up the
 * call chain), leaving out the RLIMIT_MEMLOCK hint libbpf gives before any
 * load when it cannot raise that limit, and, for a program the verifier
 * refused, the verifier's last complaint. Messages from other threads
 * meanwhile go to the callback that was set before.
 */
struct tracker_log {
	char first[304];
	bool named;
	char verifier[192];
};

_Static_assert(sizeof(((struct tracker_log *)0)->first) + sizeof("; verifier: ") +
			       sizeof(((struct tracker_log *)0)->verifier) - 2 <=
		       RTPLACE_REASON_MAX,
	       "what libbpf said fits a reason whole");

static _Thread_local struct tracker_log *tracker_log_cur;
static libbpf_print_fn_t tracker_log_prev;

/* Copies the line of text at line (up to a newline) into buf. */
static void tracker_log_line(char *buf, size_t len, const char *line)
{
	snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
}

/* The verifier's complaint: the last line of its log that is not one of
 * the statistics lines it appends. */
static void tracker_log_verifier(struct tracker_log *log, const char *msg)
{
	const char *begin = strstr(msg, "-- BEGIN PROG LOAD LOG --\n");
	const char *end = strstr(msg, "-- END PROG LOAD LOG --");
	const char *line, *found = NULL;

	if (!begin || !end)
		return;
	for (line = begin + strlen("-- BEGIN PROG LOAD LOG --\n"); line < end; line = strchr(line, '\n') + 1) {
		if (*line != '\n' && strncmp(line, "processed ", 10) != 0 && strncmp(line, "verification time", 17) != 0 &&
		    strncmp(line, "stack depth", 11) != 0)
			found = line;
		if (!strchr(line, '\n'))
			break;
	}
	if (found)
		tracker_log_line(log->verifier, sizeof(log->verifier), found);
}

static int tracker_log_cb(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	struct tracker_log *log = tracker_log_cur;
	char *msg = NULL;

	if (!log)
		return tracker_log_prev ? tracker_log_prev(level, fmt, ap) : 0;
	if (level != LIBBPF_WARN || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	if (!log->named && !strstr(msg, "RLIMIT_MEMLOCK (err")) {
		log->named = strstr(msg, "prog '") || strstr(msg, "map '");
		if (log->named || !log->first[0])
			tracker_log_line(log->first, sizeof(log->first), msg);
	}
	tracker_log_verifier(log, msg);
	free(msg);
	return 0;
}

static void tracker_log_begin(struct tracker_log *log)
{
	memset(log, 0, sizeof(*log));
	tracker_log_cur = log;
	tracker_log_prev = libbpf_set_print(tracker_log_cb);
}

static void tracker_log_end(void)
{
	libbpf_set_print(tracker_log_prev);
	tracker_log_prev = NULL;
	tracker_log_cur = NULL;
}

/* What libbpf said, if anything ("" if not). */
static void tracker_libbpf_said(struct rtplace_reason *said, const struct tracker_log *log)
{
	said->text[0] = '\0';
	if (log->first[0])
		reason_set(said, "%s%s%s", log->first, log->verifier[0] ? "; verifier: " : "", log->verifier);
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
static int tracker_check_kernel(const struct btf *btf, struct rtplace_reason *reason)
{
	static const char *const tracepoints[] = {
		"sched_switch", "sched_update_nr_running_tp", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
		"sched_process_exit",
	};
	char name[128];

	for (size_t i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++) {
		snprintf(name, sizeof(name), "btf_trace_%s", tracepoints[i]);
		if (btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) < 0) {
			reason_set(reason, "kernel lacks the tp_btf tracepoint %s", tracepoints[i]);
			return -EOPNOTSUPP;
		}
	}
	if (!tracker_btf_has_member(btf, "cfs_rq", "rq") && !tracker_btf_has_member(btf, "rt_rq", "rq")) {
		reason_set(reason, "kernel lacks task-to-runqueue pointers (needs CONFIG_FAIR_GROUP_SCHED=y or "
				   "CONFIG_RT_GROUP_SCHED=y)");
		return -EOPNOTSUPP;
	}
	return 0;
}

static void tracker_watch_progs(struct tracker_bpf *skel, struct bpf_program *ret[TRACKER_NWATCH_PROGS])
{
	ret[0] = skel->progs.tracker_wakeup;
	ret[1] = skel->progs.tracker_wakeup_new;
	ret[2] = skel->progs.tracker_exit;
}

/* Whether any thread is watched; on a failure to tell, assumes so. */
static bool tracker_watching_any(const struct tracker *t)
{
	__u32 key;

	return bpf_map_get_next_key(bpf_map__fd(t->skel->maps.tracker_watched), NULL, &key) != -ENOENT;
}

/*
 * Attaches the watch programs (want) or detaches them. They are attached
 * only while the daemon watches a thread: they fire at every wakeup and exit
 * of every task but act only for watched threads, and even a wakeup of a
 * fair task, which returns after one load, costs the program's invocation.
 * So a daemon that only answers queries pays for the switch and queue
 * events alone. The price is paid at each change between none and some:
 * attaching a tracepoint's first program or detaching its last patches its
 * call sites, with an interrupt to every CPU. Returns 0 or -errno.
 */
static int tracker_watch_attach(struct tracker *t, bool want)
{
	struct bpf_program *progs[TRACKER_NWATCH_PROGS];
	struct tracker_log log;
	int r = 0;

	if (want == t->watch_attached)
		return 0;
	tracker_watch_progs(t->skel, progs);
	tracker_log_begin(&log);
	for (int i = 0; i < TRACKER_NWATCH_PROGS && want; i++) {
		t->watch_links[i] = bpf_program__attach(progs[i]);
		if (!t->watch_links[i]) {
			r = -errno;
			want = false;
		}
	}
	tracker_log_end();
	if (!want)
		for (int i = 0; i < TRACKER_NWATCH_PROGS; i++) {
			bpf_link__destroy(t->watch_links[i]);
			t->watch_links[i] = NULL;
		}
	t->watch_attached = want;
	return r;
}

static int tracker_ring_cb(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	struct tracker_event ev;

	if (size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	if (ev.type == TRACKER_EVENT_EXIT)
		t->saw_exit = true;
	return t->cb ? t->cb(&ev, t->cb_ctx) : 0;
}

/*
 * Publishes the /proc view of every online CPU that no BPF writer has
 * reached yet (still at the offline level cpupri_init() left): a CPU the
 * programs already updated holds a fresher, exact value and keeps it.
 * Online is the kernel's list, read after attach; a CPU that goes offline
 * after that read may have published its last (offline) level before the
 * seed overwrote it, so the list is read again and such a seed is undone,
 * unless the programs have published since. A CPU still listed online the
 * second time is seen by the programs on its way down.
 */
static int tracker_seed(const struct topo *topo, void *map, const struct cpupri_geom *g)
{
	__u32 *levels = calloc(topo->ncpus, sizeof(*levels));
	struct rtplace_cpumask online, after;
	int r;

	if (!levels)
		return -ENOMEM;
	r = hotplug_read_online(SYSFS_ROOT, &online);
	if (r == 0)
		r = seed_scan(PROCFS_ROOT, topo->ncpus, 0, levels);
	if (r < 0)
		goto out;
	CPUSET_FOREACH(cpu, &online)
		if ((uint32_t)cpu < topo->ncpus)
			cpupri_set_from(map, g, (__u32)cpu, LEVEL_OFFLINE, levels[cpu]);
	r = hotplug_read_online(SYSFS_ROOT, &after);
	if (r < 0)
		goto out;
	CPUSET_FOREACH(cpu, &online)
		if ((uint32_t)cpu < topo->ncpus && !cpuset_test(&after, (unsigned)cpu))
			cpupri_set_from(map, g, (__u32)cpu, levels[cpu], LEVEL_OFFLINE);
out:
	free(levels);
	return r;
}

/* Maps the time-by-class array read-only and freezes it against syscall
 * writes: only the BPF programs write it. */
static int tracker_map_times(struct tracker *t, uint32_t ncpus, size_t page)
{
	int fd = bpf_map__fd(t->skel->maps.tracker_times);
	size_t len = ((size_t)ncpus * sizeof(struct tracker_cpu_time) + page - 1) / page * page;
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	t->times = p;
	t->times_len = len;
	t->ncpus = ncpus;
	return bpf_map_freeze(fd);
}

/* Whether the effective set holds what loading tracing programs takes:
 * CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (which kernels before 5.8,
 * without the first two, ask for instead). */
static bool tracker_capable(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return true; /* cannot tell: let the load say */
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	return eff >> CAP_SYS_ADMIN & 1 || (eff >> CAP_BPF & 1 && eff >> CAP_PERFMON & 1);
}

/* The kernel's lockdown mode in brackets ("integrity", "confidentiality"),
 * or "" when it is "none" or there is no lockdown LSM. */
static void tracker_lockdown(char *buf, size_t len)
{
	char text[128] = "";
	FILE *f = fopen(TRACKER_LOCKDOWN, "re");
	const char *open, *close;

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(text, sizeof(text), f)) {
		open = strchr(text, '[');
		close = open ? strchr(open, ']') : NULL;
		if (close && strncmp(open, "[none]", 6) != 0)
			snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
	}
	fclose(f);
}

/*
 * Names what stops bpf(2) for this process before libbpf meets it deep in
 * the load with a bare errno: the system call itself (a kernel without
 * CONFIG_BPF_SYSCALL, or a seccomp filter), the capabilities, lockdown. A
 * one-entry array map is the cheapest object every kernel with bpf(2)
 * creates.
 */
static int tracker_check_bpf(struct rtplace_reason *reason)
{
	char lockdown[32];
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	int r = fd < 0 ? fd : 0;

	if (fd >= 0)
		close(fd);
	tracker_lockdown(lockdown, sizeof(lockdown));
	if ((r == 0 || r == -EPERM) && !tracker_capable()) {
		r = -EPERM;
		reason_set(reason, "rtplaced lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) for bpf()");
	} else if (r == -ENOSYS) {
		reason_set(reason, "no bpf() system call (the kernel needs CONFIG_BPF_SYSCALL=y; or a seccomp "
				   "filter hides it)");
	} else if (r == -EPERM && lockdown[0]) {
		reason_set(reason, "bpf() refused under kernel lockdown (%s, %s)", lockdown, TRACKER_LOCKDOWN);
	} else if (r == -EPERM) {
		reason_set(reason, "bpf() refused with the capabilities held (a seccomp filter or a security module)");
	} else if (r < 0) {
		reason_set(reason, "bpf() cannot create a map: %s", strerror(-r));
	}
	return r;
}

/* The running kernel's BTF, which the programs need (CO-RE, tp_btf). */
static int tracker_kernel_btf(struct rtplace_reason *reason, struct btf **ret)
{
	struct btf *btf;
	int r;

	if (access(TRACKER_BTF, R_OK) < 0) {
		r = errno == EACCES ? -EPERM : -ENOENT;
		reason_set(reason, "kernel BTF %s is %s (the kernel needs CONFIG_DEBUG_INFO_BTF=y)", TRACKER_BTF,
			   r == -EPERM ? "not readable" : "missing");
		return r;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		r = -errno;
		reason_set(reason, "cannot read kernel BTF %s: %s", TRACKER_BTF, strerror(-r));
		return r;
	}
	*ret = btf;
	return 0;
}

/* Opens the BPF object for a map of geometry g and ncpus CPUs and loads
 * its programs, the watch programs left detached. 0, or -errno with
 * reason. */
static int tracker_load(struct tracker *t, uint32_t ncpus, const struct cpupri_geom *g,
			struct rtplace_reason *reason)
{
	struct bpf_program *watch_progs[TRACKER_NWATCH_PROGS];
	char lockdown[32];
	int r;

	t->skel = tracker_bpf__open();
	if (!t->skel) {
		r = -errno;
		reason_set(reason, "opening the BPF object failed: %s", strerror(-r));
		return r;
	}
	t->skel->rodata->tracker_geom = *g;
	t->start_ns = clocks_monotonic_ns();
	t->skel->rodata->tracker_start_ns = t->start_ns;
	tracker_watch_progs(t->skel, watch_progs);
	for (int i = 0; i < TRACKER_NWATCH_PROGS; i++)
		bpf_program__set_autoattach(watch_progs[i], false);
	r = bpf_map__set_value_size(t->skel->maps.tracker_cpupri, g->size);
	if (r == 0)
		r = bpf_map__set_max_entries(t->skel->maps.tracker_times, ncpus);
	if (r == 0)
		r = tracker_bpf__load(t->skel);
	if (r < 0) {
		/* Lockdown lets bpf() through but refuses programs that
		 * read kernel memory, so only the load can tell. */
		tracker_lockdown(lockdown, sizeof(lockdown));
		if (r == -EPERM && lockdown[0])
			reason_set(reason, "loading the BPF programs failed under kernel lockdown (%s): %s", lockdown,
				   strerror(-r));
		else
			reason_set(reason, "loading the BPF programs failed: %s", strerror(-r));
	}
	return r;
}

/*
 * The cpupri map, initialised and seeded through a writable mapping while
 * the programs attach, then mapped read-only and frozen against syscall
 * writes, so that only the BPF programs change it afterwards; and the copy
 * local readers get. 0, or -errno with reason.
 */
static int tracker_map_cpupri(struct tracker *t, const struct topo *topo, const struct cpupri_geom *g,
			      const uint16_t *shard_of, size_t page, struct rtplace_reason *reason)
{
	int fd = bpf_map__fd(t->skel->maps.tracker_cpupri), r;
	size_t len = (g->size + page - 1) / page * page;
	void *rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	t->map_size = g->size;
	t->map_len = len;
	if (rw == MAP_FAILED) {
		r = -errno;
		reason_set(reason, "mapping the cpupri map failed: %s", strerror(-r));
		return r;
	}
	cpupri_init(rw, g, shard_of);
	r = tracker_bpf__attach(t->skel);
	if (r < 0)
		reason_set(reason, "attaching the BPF programs failed: %s", strerror(-r));
	/* After attach, so that any CPU the seed misses is one whose next
	 * event the programs see. */
	if (r == 0 && (r = tracker_seed(topo, rw, g)) < 0)
		reason_set(reason, "seeding from %s and %s failed: %s", PROCFS_ROOT, SYSFS_ROOT, strerror(-r));
	if (r == 0) {
		t->map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (t->map == MAP_FAILED) {
			r = -errno;
			t->map = NULL;
			reason_set(reason, "mapping the cpupri map read-only failed: %s", strerror(-r));
		}
	}
	munmap(rw, len);
	if (r == 0 && (r = bpf_map_freeze(fd)) < 0)
		reason_set(reason, "freezing the cpupri map failed: %s", strerror(-r));
	/* What LOCAL hands out: a copy in a sealed memfd, never a descriptor
	 * of the BPF map. Any descriptor of a map, one opened BPF_F_RDONLY by
	 * id included, lets whoever may load a program (CAP_BPF, or anyone
	 * where kernel.unprivileged_bpf_disabled is 0) write the map from it:
	 * the verifier checks the map's flags, never the descriptor's mode,
	 * and BPF_F_RDONLY_PROG is a flag of creation only, which would stop
	 * our own programs. A read-only descriptor cannot be mapped at all
	 * (mmap() drops VM_SHARED, which bpf_map_mmap() requires). Without
	 * the copy there are no local reads: logged by the caller. */
	if (r == 0 && snapshot_region_new("rtplace-map", g->size, &t->mirror) == 0) {
		cpupri_init(t->mirror.map, g, shard_of);
		cpupri_mirror(t->mirror.map, t->map, g);
	}
	return r;
}

int tracker_open(const struct topo *topo, enum topo_shard shard, struct rtplace_reason *reason,
		 struct rtplace_reason *libbpf_said, struct tracker **ret)
{
	long page = sysconf(_SC_PAGESIZE);
	struct tracker *t = NULL;
	struct tracker_log log;
	struct btf *btf = NULL;
	uint16_t *shard_of = NULL;
	struct cpupri_geom g;
	uint32_t nshards;
	int r;

	tracker_log_begin(&log);
	reason_set(reason, "out of memory");
	r = tracker_check_bpf(reason);
	if (r == 0)
		r = tracker_kernel_btf(reason, &btf);
	if (r == 0)
		r = tracker_check_kernel(btf, reason);
	if (r < 0)
		goto out;
	shard_of = calloc(topo->ncpus, sizeof(*shard_of));
	t = calloc(1, sizeof(*t));
	if (t)
		t->stats_fd = -1;
	if (!shard_of || !t) {
		r = -ENOMEM;
		goto out;
	}
	topo_shards(topo, shard, shard_of, &nshards);
	r = cpupri_geom_compute(topo->ncpus, nshards, shard_of, &g);
	if (r < 0) {
		reason_set(reason, "cannot size the cpupri map for %u CPUs in %u shards: %s", topo->ncpus,
			   nshards, strerror(-r));
		goto out;
	}
	r = tracker_load(t, topo->ncpus, &g, reason);
	if (r == 0)
		r = tracker_map_cpupri(t, topo, &g, shard_of, (size_t)page, reason);
	if (r == 0 && (r = tracker_map_times(t, topo->ncpus, (size_t)page)) < 0)
		reason_set(reason, "mapping or freezing the time-by-class map failed: %s", strerror(-r));
	if (r == 0) {
		t->ring = ring_buffer__new(bpf_map__fd(t->skel->maps.tracker_events), tracker_ring_cb, t, NULL);
		if (!t->ring) {
			r = -errno;
			reason_set(reason, "creating the ring buffer reader failed: %s", strerror(-r));
		}
	}
	if (r == 0) {
		*ret = t;
		t = NULL;
		reason->text[0] = '\0';
	}
out:
	if (libbpf_said && r < 0)
		tracker_libbpf_said(libbpf_said, &log);
	else if (libbpf_said)
		libbpf_said->text[0] = '\0';
	tracker_close(t);
	btf__free(btf);
	free(shard_of);
	tracker_log_end();
	return r;
}

const void *tracker_map(const struct tracker *t, size_t *ret_size)
{
	*ret_size = t->map_size;
	return t->map;
}

int tracker_map_ro_fd(const struct tracker *t)
{
	return t->mirror.map ? t->mirror.ro_fd : -1;
}

void tracker_mirror(struct tracker *t)
{
	if (t->mirror.map)
		cpupri_mirror(t->mirror.map, t->map, &((const struct cpupri_header *)t->map)->geom);
}

int tracker_cpu_times(const struct tracker *t, uint32_t cpu, uint64_t now_ns, uint64_t ret[RTPLACE_CLASS_COUNT])
{
	const struct cpupri_geom *g = &((const struct cpupri_header *)t->map)->geom;
	__u64 ns[RTPLACE_CLASS_COUNT];
	int r;

	if (cpu >= t->ncpus)
		return -ERANGE;
	r = tracker_cpu_time_read(&t->times[cpu], &cpupri_slot_ptr((void *)t->map, g, cpu)->level, t->start_ns,
				  now_ns, ns);
	if (r == 0)
		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
			ret[c] = ns[c];
	return r;
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
	t->saw_exit = false;
	r = ring_buffer__consume(t->ring);
	t->cb = NULL;
	t->cb_ctx = NULL;
	/* The last watched thread may have gone. A failure leaves the
	 * programs attached: still correct, only dearer. */
	if (t->saw_exit)
		tracker_watch_attach(t, tracker_watching_any(t));
	return r;
}

int tracker_watch(struct tracker *t, uint32_t tid, bool on)
{
	int fd = bpf_map__fd(t->skel->maps.tracker_watched);
	__u32 one = 1;
	int r;

	if (on) {
		/* Programs first, so that an exit right after the insert is
		 * reported. */
		r = tracker_watch_attach(t, true);
		if (r == 0)
			r = bpf_map_update_elem(fd, &tid, &one, BPF_ANY);
		if (r < 0)
			tracker_watch_attach(t, tracker_watching_any(t));
		return r;
	}
	r = bpf_map_delete_elem(fd, &tid);
	if (r < 0 && r != -ENOENT)
		return r;
	return tracker_watch_attach(t, tracker_watching_any(t));
}

uint64_t tracker_lost(const struct tracker *t)
{
	return __atomic_load_n(&t->skel->bss->tracker_lost, __ATOMIC_RELAXED);
}

int tracker_enable_stats(struct tracker *t)
{
	int fd;

	if (t->stats_fd >= 0)
		return 0;
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0)
		return fd;
	t->stats_fd = fd;
	return 0;
}

int tracker_prog_stats(const struct tracker *t, struct tracker_prog_stats *ret, size_t max, size_t *ret_n)
{
	struct bpf_program *prog;
	size_t n = 0;

	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int r;

		if (n == max)
			break;
		r = bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len);
		if (r < 0)
			return r;
		snprintf(ret[n].name, sizeof(ret[n].name), "%s", bpf_program__name(prog));
		ret[n].runs = info.run_cnt;
		ret[n].run_ns = info.run_time_ns;
		n++;
	}
	*ret_n = n;
	return 0;
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	if (t->stats_fd >= 0)
		close(t->stats_fd);
	for (int i = 0; i < TRACKER_NWATCH_PROGS; i++)
		bpf_link__destroy(t->watch_links[i]);
	ring_buffer__free(t->ring);
	if (t->map)
		munmap((void *)t->map, t->map_len);
	snapshot_region_free(&t->mirror);
	if (t->times)
		munmap((void *)t->times, t->times_len);
	tracker_bpf__destroy(t->skel);
	free(t);
}
