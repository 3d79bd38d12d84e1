/*
 * The daemon's one reader of a proc tree (proc(5)): reading a file of a
 * process or thread, parsing a stat line, finding a field of a status
 * file. Every caller passes the tree's root ("/proc" in production, a
 * fixture directory in unit tests), so nothing else in the daemon names
 * /proc or parses its formats.
 *
 * The parsers are pure; procfs_read*() and procfs_list() are the only
 * functions here that make system calls. A file that vanishes while it is read (its process
 * exited) is -ESRCH, so callers can tell "gone" from "unreadable".
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

#endif
