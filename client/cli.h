/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Argument parsing and formatting shared by rtplacectl and rtplace-run, so
 * both tools accept and print numbers, policies and CPU lists the same way,
 * explain a failed connection or a refused RT policy alike and exit with
 * the same statuses. Pure (no I/O) but for cli_explain_connect(), which
 * looks at the socket file, and cli_explain_rtbudget(), which reads the
 * cgroup files.
 */
#ifndef RTPLACE_CLI_H
#define RTPLACE_CLI_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

#include "reason.h"

/* A decimal integer in min..max, nothing else. 0 or -EINVAL. */
int cli_parse_long(const char *s, long min, long max, long *ret);

/* A decimal number of seconds in min..max ("0.5", "2"), nothing else (no
 * hexadecimal, inf or nan). 0 or -EINVAL. */
int cli_parse_seconds(const char *s, double min, double max, double *ret);

/* "fifo" or "rr" to SCHED_FIFO / SCHED_RR. 0 or -EINVAL. */
int cli_parse_policy(const char *s, int *ret);

/* A non-empty CPU list ("2-5,8") into a cpu_set_t. 0, -EINVAL or -ERANGE. */
int cli_parse_cpus(const char *s, cpu_set_t *ret);

/* s as a CPU list, "?" if it does not fit in len. */
void cli_format_cpus(const cpu_set_t *s, char *buf, size_t len);

/*
 * What to do about a connection to the daemon at path that failed with r,
 * as a parenthesis for the end of an error line (" (...)"), "" when there
 * is nothing to add: for -EACCES the socket's group to join and the
 * socket-group setting, for no daemon a hint that it is not running.
 */
void cli_explain_connect(const char *path, int r, struct rtplace_reason *hint);

/*
 * Whether process or thread pid (0: this one) sits in a cpu cgroup with no
 * RT budget, the usual cause of an EPERM from sched_setscheduler() where
 * the caller may set RT (common/rtbudget.h): 0 with *ret naming the folder
 * and the fix, -ENOENT when that is not the cause, or another -errno.
 */
int cli_explain_rtbudget(pid_t pid, struct rtplace_reason *ret);

/*
 * What an unknown option arg ("-p", "--priority=5") likely meant, from
 * the habits of chrt, taskset and the like ("; the RT priority is --prio
 * P"), to end a usage error; "" when it recalls no habit.
 */
const char *cli_option_hint(const char *arg);

/* The sysexits status for r, an -errno of librtplace (both tools exit
 * with the same status for the same error). */
int cli_exit_status(int r);

#endif
