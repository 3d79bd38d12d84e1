/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's one reader of a proc tree (proc(5)): reading a file of a
 * process or thread, parsing a stat line, finding a field of a status
 * file. Every caller passes the tree's root ("/proc" in production, a
 * fixture directory in unit tests), so nothing else in the daemon names
 * /proc. The formats that several callers share are parsed here; a file
 * that one caller alone reads is parsed by that caller from the text
 * procfs_read() returns (auth.c: the limits file and a status file's id
 * lists; rtbudget.c: a cgroup file).
 *
 * The parsers are pure; procfs_read*() (a process's files and the sysctls
 * under <root>/sys), procfs_list(), procfs_pidns(),
 * procfs_pidns_up(), procfs_userns() and procfs_find_thread_nspid() are the only functions
 * here that make system calls. A file that vanishes while it is read (its
 * process exited) is -ESRCH, so callers can tell "gone" from "unreadable".
 */
#ifndef RTPLACE_PROCFS_H
#define RTPLACE_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_ROOT "/proc"

/* What rtplace uses of a /proc/PID[/task/TID]/stat line. */
struct procfs_stat {
	char state;          /* field 3: 'R' running or runnable, 'S' sleeping, ... */
	pid_t ppid;          /* field 4 */
	unsigned flags;      /* field 9: PF_* (PF_KTHREAD for kernel threads) */
	int prio;            /* field 18 + 100: the kernel's task_struct.prio, PI boosts included */
	uint64_t start_time; /* field 22: clock ticks after boot; with the pid, a process's identity */
	uint32_t cpu;        /* field 39: the CPU it last ran on */
	int rt_priority;     /* field 40: 1..99 under SCHED_FIFO/RR, else 0 */
	int policy;          /* field 41: SCHED_* */
	uint64_t utime;      /* field 14: user CPU time, clock ticks */
	uint64_t stime;      /* field 15: system CPU time, clock ticks */
	uint64_t vsize;      /* field 23: virtual memory, bytes */
	uint64_t rss;        /* field 24: resident pages */
};

/* PF_KTHREAD of include/linux/sched.h: a kernel thread. */
#define PROCFS_PF_KTHREAD 0x00200000u

/*
 * Parses one stat line; the comm may hold spaces and parentheses (fields
 * resume after the last ')'). Returns 0 or -EBADMSG; *ret is written only
 * on success.
 */
int procfs_parse_stat(const char *line, struct procfs_stat *ret);

/* The text after "Key:" on its own line of a status file, or NULL. */
const char *procfs_status_field(const char *status, const char *key);

/* The unsigned number (base 10, or 16 for the Cap* masks) that starts
 * the "Key:" field, after blanks. Returns 0, -ENOENT (no such key) or
 * -EBADMSG. */
int procfs_status_u64(const char *status, const char *key, int base, uint64_t *ret);

/*
 * Reads <root>/<pid>/<name> (name may be "task/TID/stat") into buf,
 * NUL-terminated. Returns the length, -ESRCH when the process is gone,
 * -EFBIG when the file does not fit in size - 1 bytes, or -errno.
 */
ssize_t procfs_read(const char *root, pid_t pid, const char *name, char *buf, size_t size);

/* The lowest pid of a process under root whose comm is comm (at most 15
 * bytes, as the kernel keeps it): 0, -ESRCH when none, or -errno. */
int procfs_find_comm(const char *root, const char *comm, pid_t *ret);

/* How many descriptors process pid has open (the entries of
 * <root>/<pid>/fd). 0 or -errno. */
int procfs_count_fds(const char *root, pid_t pid, uint32_t *ret);

/* The owner of process pid (the uid of <root>/<pid>, its effective uid as
 * the kernel shows it). 0, -ESRCH when the process is gone, or -errno. */
int procfs_owner(const char *root, pid_t pid, uid_t *ret);

/* Parses a sysctl file's integer (one line, a trailing newline allowed).
 * 0 or -EBADMSG. */
int procfs_parse_sysctl(const char *text, int64_t *ret);

/* Reads the integer sysctl <root>/sys/<name> ("kernel/sched_rt_period_us").
 * 0, -ENOENT, -EBADMSG or -errno. */
int procfs_read_sysctl(const char *root, const char *name, int64_t *ret);

/* RT throttling (sched-rt-group in the kernel's documentation): RT tasks
 * may run runtime_us of every period_us on each CPU; -1 is unlimited. */
struct procfs_rt_throttle {
	int64_t runtime_us;
	int64_t period_us;
};

/* Reads kernel.sched_rt_runtime_us and kernel.sched_rt_period_us. 0,
 * -ENOENT, -EBADMSG (not numbers, or not values the kernel takes) or
 * -errno. */
int procfs_read_rt_throttle(const char *root, struct procfs_rt_throttle *ret);

/* Reads the kernel's command line (<root>/cmdline) into buf. 0, -EFBIG
 * when longer than size - 1, or -errno. */
int procfs_read_cmdline(const char *root, char *buf, size_t size);

/* One CPU's interrupt time as /proc/stat counts it: USER_HZ ticks of
 * hardirq and softirq. Without CONFIG_IRQ_TIME_ACCOUNTING (Debian's
 * kernels) the kernel samples them at each tick, so they are counts of
 * ticks that found the CPU in an interrupt, not measured time. */
struct procfs_cpu_irq {
	uint64_t irq;
	uint64_t softirq;
};

/*
 * Parses the "cpuN" lines of a /proc/stat text into ret[0 .. ncpus - 1]:
 * a CPU without a line (offline) or at or above ncpus is left as it was.
 * Returns 0 or -EBADMSG (a cpuN line with fewer than seven numbers).
 */
int procfs_parse_cpu_irq(const char *text, uint32_t ncpus, struct procfs_cpu_irq *ret);

/* Reads <root>/stat into *buf (grown as needed, *cap its size, the
 * caller's to free) and parses it as procfs_parse_cpu_irq() does. 0,
 * -EBADMSG, -ENOMEM or -errno. */
int procfs_read_cpu_irq(const char *root, char **buf, size_t *cap, uint32_t ncpus, struct procfs_cpu_irq *ret);

/* Reads and parses the stat file of thread tid of process pid, or of
 * process pid when tid is 0. Returns 0, -ESRCH, -EBADMSG or -errno. */
int procfs_read_stat(const char *root, pid_t pid, pid_t tid, struct procfs_stat *ret);

/* A list of process or thread ids, reused from call to call. */
struct procfs_ids {
	pid_t *ids;
	size_t n;
	size_t cap;
};

/*
 * Lists the processes of the tree (pid 0: the numeric entries of <root>)
 * or the threads of process pid (<root>/<pid>/task) into *ret, replacing
 * what it held and growing it as needed. Returns 0, -ESRCH when the
 * process is gone, -ENOMEM, or -errno.
 */
int procfs_list(const char *root, pid_t pid, struct procfs_ids *ret);

void procfs_ids_free(struct procfs_ids *l);

/*
 * PID namespaces (pid_namespaces(7)). An NSpid line (in a status file, and
 * in the fdinfo of a pidfd) lists a task's pid in every namespace from the
 * one of the proc tree down to the task's own: one entry when the task is
 * in the tree's namespace. Namespaces nest at most 32 deep below the
 * initial one.
 */
#define PROCFS_NSPID_MAX 33

struct procfs_nspid {
	unsigned n;                    /* entries, 1..PROCFS_NSPID_MAX */
	pid_t pids[PROCFS_NSPID_MAX];  /* pids[0] in the tree's namespace */
};

/* Parses the NSpid field of a status or fdinfo text. Returns 0, -ENOENT
 * (no such line: a kernel before 4.1, or the task not visible) or
 * -EBADMSG. */
int procfs_parse_nspid(const char *text, struct procfs_nspid *ret);

/*
 * Parses the fdinfo of a pidfd (kernel 5.3+): "Pid:" is the process in the
 * tree's namespace, and NSpid follows it. Returns 0 with *ret filled,
 * -EBADF when the text has no Pid line (the descriptor is no pidfd), -ESRCH
 * when the process has exited (Pid -1), -EXDEV when it lives outside the
 * tree's namespace (Pid 0: an ancestor's process, which the reader cannot
 * name), -EBADMSG on a malformed line.
 */
int procfs_parse_pidfd_fdinfo(const char *fdinfo, struct procfs_nspid *ret);

/* procfs_parse_pidfd_fdinfo() of descriptor fd of the calling process
 * (<root>/<getpid()>/fdinfo/<fd>); -ESRCH also when fd is not open. */
int procfs_read_pidfd(const char *root, int fd, struct procfs_nspid *ret);

/* The NSpid line of thread tid of process pid (of process pid when tid is
 * 0). Returns 0, -ESRCH, -ENOENT, -EBADMSG or -errno. */
int procfs_read_nspid(const char *root, pid_t pid, pid_t tid, struct procfs_nspid *ret);

/* The thread of process pid whose NSpid entry at level is named (its
 * number in that namespace), into *ret as the tree names it. Returns 0,
 * -ESRCH (no such thread, or pid is gone) or -errno. */
int procfs_find_thread_nspid(const char *root, pid_t pid, unsigned level, pid_t named, pid_t *ret);

/* Identity of the PID namespace of process pid: <root>/<pid>/ns/pid's
 * device and inode (stat(2) follows the namespace link). Reading another
 * process's link needs ptrace read access to it (-EACCES without). Returns
 * 0, -ESRCH or -errno. */
struct procfs_ns {
	dev_t dev;
	ino_t ino;
};
int procfs_pidns(const char *root, pid_t pid, struct procfs_ns *ret);

/* The identity of the PID namespace up levels above process pid's
 * (ioctl NS_GET_PARENT, ioctl_ns(2)); procfs_pidns() when up is 0.
 * Returns 0, -ESRCH, -EPERM (that namespace lies above the daemon's) or
 * -errno (-ENOTTY: the link is no namespace, as in a fixture tree). */
int procfs_pidns_up(const char *root, pid_t pid, unsigned up, struct procfs_ns *ret);

/* The same of its user namespace (<root>/<pid>/ns/user). */
int procfs_userns(const char *root, pid_t pid, struct procfs_ns *ret);

#endif
