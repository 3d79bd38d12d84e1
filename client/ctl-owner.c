/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who holds a claim that `rtplacectl query --claim` makes. rtplacectl
 * exits as soon as it has printed the answer, so the claim cannot live
 * with its connection; it lives with a process instead. Its parent is the
 * obvious one, but in `cpu=$(rtplacectl query --claim ...)` that parent
 * may be the subshell the shell forked for the command substitution (a
 * pipeline inside it always is), which exits as soon as the output is
 * read: the claim would end before the script used the CPU.
 *
 * A subshell is a fork of its shell that has not called exec: the same
 * executable, the same command line and the same auxiliary vector (which
 * the kernel writes at exec, with the stack's and the vDSO's randomised
 * addresses, so two execs of one shell differ). Going up from the parent
 * while a process is such a copy of its own parent finds the shell that
 * the user or the script runs, the process a reader of the command line
 * means by "the calling shell".
 *
 * A command wrapper (`timeout 5 rtplacectl ...`, `sudo`, `nice`, `env`)
 * is an exec of its own, so it is no fork; but it exits with the command
 * it runs, so a claim tied to it would end at once. The walk goes past a
 * process whose executable has the name of one of the wrappers of
 * ctl_owner_wrappers, known to run one command and exit with it.
 *
 * The daemon lets a user tie a claim only to a process of that user's
 * (root to any). A wrapper that switches users (runuser, setpriv, sudo -u)
 * leaves the shell above it another user's: the walk stops where the
 * owner of the next process differs from rtplacectl's effective uid, and
 * never goes above a process the daemon would refuse.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "file.h"
#include "reason.h"

/* Deeper nesting than this is no shell a person wrote. */
#define CTL_OWNER_MAX_DEPTH 64
/* /proc/PID/cmdline and auxv are read whole up to this. */
#define CTL_OWNER_READ_MAX (256 * 1024)

/* Programs that run the command on their command line and exit with
 * it, changing only how it runs: its privileges, limits, scheduling,
 * affinity, environment, session, buffering or I/O. rtplacectl.1 and
 * `query --help` list the same names. */
static const char *const ctl_owner_wrappers[] = {
	"sudo", "doas", "runuser", "setpriv", "env", "nice", "ionice", "chrt", "taskset", "numactl",
	"timeout", "setsid", "stdbuf", "nohup", "time", "flock", "unbuffer",
};

/* The parent of pid from /proc/PID/stat (after the comm, which may hold
 * spaces and parentheses), or -errno. */
static int ctl_owner_ppid(pid_t pid, pid_t *ret)
{
	struct rtplace_reason why;
	char path[64], *text = NULL, *p;
	size_t size;
	int ppid, r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = file_read_regular(path, 4096, &why, &text, &size);
	if (r < 0)
		return r;
	p = strrchr(text, ')');
	r = p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? 0 : -EINVAL;
	if (r == 0)
		*ret = (pid_t)ppid;
	free(text);
	return r;
}

/* Whether /proc/A/name and /proc/B/name hold the same bytes; false when
 * either cannot be read. */
static bool ctl_owner_same_file(pid_t a, pid_t b, const char *name)
{
	struct rtplace_reason why;
	char path[64];
	char *ta = NULL, *tb = NULL;
	size_t na, nb;
	bool same = false;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)a, name);
	if (file_read_regular(path, CTL_OWNER_READ_MAX, &why, &ta, &na) < 0)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)b, name);
	if (file_read_regular(path, CTL_OWNER_READ_MAX, &why, &tb, &nb) < 0)
		goto out;
	same = na == nb && na > 0 && memcmp(ta, tb, na) == 0;
out:
	free(ta);
	free(tb);
	return same;
}

static bool ctl_owner_same_exe(pid_t a, pid_t b)
{
	char path[64], ea[PATH_MAX], eb[PATH_MAX];
	ssize_t na, nb;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)a);
	na = readlink(path, ea, sizeof(ea));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)b);
	nb = readlink(path, eb, sizeof(eb));
	return na > 0 && na == nb && memcmp(ea, eb, (size_t)na) == 0;
}

/* pid is a fork of parent that has not called exec since. */
static bool ctl_owner_is_fork_of(pid_t pid, pid_t parent)
{
	return ctl_owner_same_exe(pid, parent) && ctl_owner_same_file(pid, parent, "cmdline") &&
	       ctl_owner_same_file(pid, parent, "auxv");
}

static bool ctl_owner_wrapper_name(const char *name)
{
	for (size_t i = 0; i < sizeof(ctl_owner_wrappers) / sizeof(ctl_owner_wrappers[0]); i++)
		if (!strcmp(name, ctl_owner_wrappers[i]))
			return true;
	return false;
}

/* pid runs one of the wrappers: the last component of its executable's
 * path (the comm can be renamed by the program, the exe cannot). */
static bool ctl_owner_is_wrapper(pid_t pid)
{
	char path[64], exe[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	return ctl_owner_wrapper_name(base ? base + 1 : exe);
}

int ctl_owner_uid(pid_t pid, uid_t *ret)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	*ret = st.st_uid;
	return 0;
}

bool ctl_owner_may_own(pid_t pid)
{
	uid_t uid;

	return geteuid() == 0 || (ctl_owner_uid(pid, &uid) == 0 && uid == geteuid());
}

pid_t ctl_owner_calling_shell(pid_t from)
{
	pid_t pid = from, parent;

	for (int depth = 0; depth < CTL_OWNER_MAX_DEPTH; depth++) {
		if (ctl_owner_ppid(pid, &parent) < 0 || parent <= 1)
			break;
		/* Past a user switch: a shell the daemon would refuse. */
		if (!ctl_owner_may_own(parent))
			break;
		if (!ctl_owner_is_wrapper(pid) && !ctl_owner_is_fork_of(pid, parent))
			break;
		pid = parent;
	}
	return pid;
}

void ctl_owner_comm(pid_t pid, char *buf, size_t len)
{
	struct rtplace_reason why;
	char path[64], *text = NULL;
	size_t size;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (file_read_regular(path, 4096, &why, &text, &size) == 0) {
		text[strcspn(text, "\n")] = '\0';
		if (text[0])
			snprintf(buf, len, "%s", text);
	}
	free(text);
}
