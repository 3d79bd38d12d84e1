/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rtplacectl's commands share (rtplacectl.c: the commands, the
 * common options and error reporting; ctl-help.c: the options and their
 * help; ctl-top.c: `top`; ctl-svg.c: the picture of `cpus --svg`;
 * ctl-owner.c: the process a claim of `query --claim` lives with;
 * ctl-explain.c: `explain`). Errors go to stderr as "rtplacectl: COMMAND:
 * what failed: why" (under --json also as a JSON document on stdout) and
 * exit statuses follow sysexits.
 */
#ifndef RTPLACE_CTL_H
#define RTPLACE_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtplace.h"

/*
 * The command-line interface as data (ctl-help.c): each command's
 * synopsis, summary and options, every option's help text beside what
 * getopt_long needs of it. The parsers build their getopt tables from it,
 * --help and `rtplacectl help` print it and the tests read it, so an
 * option cannot be accepted without being explained.
 */
struct ctl_option {
	const char *name; /* the long option, without "--" */
	int key;          /* what getopt_long returns for it, unique in a command's table */
	bool letter;      /* key is also the short option -key */
	const char *arg;  /* the value's name in the help; NULL: it takes none */
	const char *help;
};

struct ctl_command {
	const char *name;
	const char *args;    /* the synopsis after the name, wrapped as it fits */
	const char *summary; /* one sentence, for `rtplacectl help` and atop the command's help */
	const struct ctl_option *options; /* its own, ending at a NULL name */
};

/* In dispatch order; ctl_commands[] and rtplacectl.c's runners follow it. */
enum ctl_command_id {
	CTL_CMD_STATUS,
	CTL_CMD_CPUS,
	CTL_CMD_TOP,
	CTL_CMD_QUERY,
	CTL_CMD_RELEASE,
	CTL_CMD_CLAIMS,
	CTL_CMD_MOVE,
	CTL_CMD_WATCH,
	CTL_CMD_EXPLAIN,
	CTL_CMD_RELOAD,
	CTL_CMD_HELP,
	CTL_CMD_COUNT,
};
extern const struct ctl_command ctl_commands[CTL_CMD_COUNT];

/* What every command takes besides its own (the global options, so that
 * they may also follow the command, and --help), and what only comes
 * before a command. Both end at a NULL name. */
extern const struct ctl_option ctl_common_options[];
extern const struct ctl_option ctl_global_options[];

/* The command called name, or NULL. */
const struct ctl_command *ctl_command_find(const char *name);

/* `COMMAND --help`: synopsis, summary, its options, the common options. */
void ctl_command_help(FILE *f, const struct ctl_command *cmd);

/* `rtplacectl --help`: the commands and the global options. */
void ctl_help(FILE *f);

/* Room for the most options a command takes, with the common ones. */
#define CTL_GETOPT_MAX 24

/* A getopt_long table and short-option string for own plus the common
 * options; shorts starts with ':', so a missing value comes back as ':'
 * and getopt prints nothing itself. */
struct ctl_getopt {
	struct option longs[CTL_GETOPT_MAX + 1];
	char shorts[2 * CTL_GETOPT_MAX + 3];
};

/* Fills g from own then common; prefix ("+" or "") leads the shorts.
 * Returns -E2BIG when they do not fit (a test keeps every command below). */
int ctl_getopt_init(struct ctl_getopt *g, const char *prefix, const struct ctl_option *own,
		    const struct ctl_option *common);

struct ctl {
	const char *socket;
	bool json;
	const char *command;
	enum ctl_command_id id;
	struct rtplace *rp;
};

/* One line naming the problem and where the help is; returns EX_USAGE. */
int ctl_usage_error(const struct ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Handles an option getopt_long returned that the command does not know
 * itself: a common option, or a mistake. Returns 0 when handled, -1 after
 * printing the command's help, or EX_USAGE.
 */
int ctl_common_option(struct ctl *c, int o, int argc, char **argv);

/*
 * The next of command c->id's own options, as getopt_long returns it over
 * the table built into g (zeroed by the caller) on the first call of a
 * parse. The common options and mistakes it handles itself (as
 * ctl_common_option), and at the end it refuses more than nargs
 * arguments. Returns -1 when the parse is over, *status then 0 to go on,
 * -1 after printing the help, or EX_USAGE.
 */
int ctl_getopt(struct ctl *c, struct ctl_getopt *g, int argc, char **argv, int nargs, int *ret_index,
	       int *status);

/* Connects c->rp; 0 or the exit status after saying why not. */
int ctl_connect(struct ctl *c);

/*
 * Reports an error: "rtplacectl: COMMAND: MESSAGE" on stderr and, under
 * --json, {"error": {...}} on stdout (rtplacectl(1), JSON OUTPUT).
 * errname is the errno's name ("EPERM"), "" for a usage error. Returns
 * status.
 */
int ctl_report(const struct ctl *c, int status, const char *errname, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The name of errno -r ("EPERM"), "" when unknown. */
const char *ctl_errno_name(int r);

/* Reports a failed library call (the daemon's reason, else strerror) and
 * returns its exit status. */
int ctl_fail(const struct ctl *c, const char *what, int r);

/* The terminal's width: stdout's when it is one, else $COLUMNS, else 80.
 * Tables fit 80 columns and grow with it. */
unsigned ctl_columns(void);

/* Sleeps for seconds (signals that return do not cut it short). */
void ctl_sleep(double seconds);

/* A JSON string to stdout: quotes, backslashes and control characters escaped. */
void ctl_json_string(const char *s);

/* A CPU as JSON, the one object of `cpus` and `top` (rtplacectl(1),
 * JSON OUTPUT); shares NULL when unknown. */
void ctl_json_cpu(const struct rtplace_cpu *ci, const double *shares);

/* A claim as JSON, the one object of `claims` and `query` (rtplacectl(1),
 * JSON OUTPUT). */
void ctl_json_claim(const struct rtplace_claim *cl);

/* A CPU's "irq" and "softirq" JSON members (null where the daemon does
 * not measure them), each after ", ". */
void ctl_json_irq(const struct rtplace_cpu *ci);

/*
 * The share of each class (RTPLACE_CLASS_*) in one CPU's time between two
 * readings, before NULL for since counting began: fractions summing to 1.
 * 0, or -ENODATA when no time was counted in between.
 */
int ctl_class_shares(const struct rtplace_cpu_time *before, const struct rtplace_cpu_time *after,
		     double ret[RTPLACE_CLASS_COUNT]);

/* Parsing went on: no exit status yet. */
#define CTL_GO_ON (-1)

/* Whom a claim of query --claim lives with (--owner). */
enum ctl_owner {
	CTL_OWNER_SHELL,  /* the calling shell, past $(...) subshells: the default */
	CTL_OWNER_PARENT, /* rtplacectl's parent, a subshell or not */
	CTL_OWNER_PID,    /* the process named */
};

/* What `query` (and `explain`) was asked beside the request. */
struct ctl_query_opts {
	bool strict, local, verbose;
	enum ctl_owner owner;
	/* A set as wide as rtplace's (8,192 CPUs), passed as a cpu_set_t of
	 * its size: the word layouts are the same. */
	struct rtplace_cpumask allowed;
};

/* The options of `query` (or `explain`, which takes those that make the
 * request) into req and q, the claim's owner process found. CTL_GO_ON,
 * or the exit status. */
int ctl_query_parse(struct ctl *c, int argc, char **argv, struct rtplace_request *req, struct ctl_query_opts *q);

/* `rtplacectl explain` (ctl-explain.c). */
int ctl_explain(struct ctl *c, int argc, char **argv);

/* `rtplacectl top` (ctl-top.c). */
int ctl_top(struct ctl *c, int argc, char **argv);

/*
 * Writes the SVG picture of the machine (ctl-svg.c): packages (when the
 * daemon names them), nodes, LLCs and cores as nested boxes, each CPU a
 * shape coloured by its level with a <title>, claimed CPUs outlined in
 * their claim's level, offline CPUs grey, a legend. 0, or -errno when
 * writing failed.
 */
int ctl_svg_write(FILE *f, const struct rtplace_cpu *cpus, size_t n);

/*
 * The shell that runs rtplacectl, starting at from (its parent): from, or
 * the first process above it that is neither a fork of its own parent
 * nor a command wrapper (timeout, sudo, nice, ...), so that the subshell
 * of a `$(...)` and a `timeout 5 rtplacectl` are passed over; never above
 * a process that ctl_owner_may_own() refuses (ctl-owner.c).
 */
pid_t ctl_owner_calling_shell(pid_t from);

/* The owner of process pid (of its /proc entry, as the daemon reads it). 0 or -errno. */
int ctl_owner_uid(pid_t pid, uid_t *ret);

/* Whether the daemon lets rtplacectl's user tie a claim to pid: root any
 * process, a user its own. */
bool ctl_owner_may_own(pid_t pid);

/* The comm of pid into buf, "?" when it cannot be read. */
void ctl_owner_comm(pid_t pid, char *buf, size_t len);

#endif
