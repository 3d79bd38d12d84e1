/*
 * What rtplacectl's commands share (rtplacectl.c: the command table, the
 * common options and error reporting; ctl-top.c: `top`; ctl-svg.c: the
 * picture of `cpus --svg`). Errors go to stderr as "rtplacectl: COMMAND:
 * what failed: why" and exit statuses follow sysexits.
 */
#ifndef RTPLACE_CTL_H
#define RTPLACE_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "rtplace.h"

struct ctl {
	const char *socket;
	bool json;
	const char *command;
	struct rtplace *rp;
};

/*
 * The options every command takes besides its own: the global ones, so
 * that they may also follow the command (`rtplacectl status --json`), and
 * --help. Each command's table starts with these.
 */
#define CTL_COMMON_OPTIONS                                    \
	{ "socket", required_argument, NULL, CTL_OPT_SOCKET }, \
	{ "json", no_argument, NULL, CTL_OPT_JSON },           \
	{ "help", no_argument, NULL, 'h' }
/* Short options every command takes; ':' first: getopt reports a missing
 * value as ':' and prints nothing itself. */
#define CTL_COMMON_SHORT ":hj"

enum {
	CTL_OPT_SOCKET = 0x100,
	CTL_OPT_JSON,
	CTL_OPT_FIRST_OWN, /* commands number their long-only options from here */
};

/* One line naming the problem and where the help is; returns EX_USAGE. */
int ctl_usage_error(const struct ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Handles an option getopt_long returned that the command does not know
 * itself: a common option, or a mistake. Returns 0 when handled, -1 after
 * printing the command's help, or EX_USAGE.
 */
int ctl_common_option(struct ctl *c, int o, int argc, char **argv, const char *usage);

/* Connects c->rp; 0 or the exit status after saying why not. */
int ctl_connect(struct ctl *c);

/* Reports a failed library call and returns its exit status. */
int ctl_fail(const struct ctl *c, const char *what, int r);

/* Sleeps for seconds (signals that return do not cut it short). */
void ctl_sleep(double seconds);

/* A JSON string to stdout: quotes, backslashes and control characters escaped. */
void ctl_json_string(const char *s);

/*
 * The share of each class (RTPLACE_CLASS_*) in one CPU's time between two
 * readings, before NULL for since counting began: fractions summing to 1.
 * 0, or -ENODATA when no time was counted in between.
 */
int ctl_class_shares(const struct rtplace_cpu_time *before, const struct rtplace_cpu_time *after,
		     double ret[RTPLACE_CLASS_COUNT]);

/* `rtplacectl top` (ctl-top.c). */
#define CTL_TOP_USAGE                                                                                  \
	"top [-d SECONDS] [-n FRAMES] [-b]\n"                                                           \
	"  -d, --delay SECONDS   time between frames, 0.1..3600 (default 1)\n"                         \
	"  -n, --iterations N    print N frames, then exit (default: until interrupted)\n"             \
	"  -b, --batch           plain frames one after another, for logs and pipes (no screen clearing)\n" \
	"  --json                one JSON document per frame, one line each"
int ctl_top(struct ctl *c, int argc, char **argv);

/*
 * Writes the SVG picture of the machine (ctl-svg.c): packages (when the
 * daemon names them), nodes, LLCs and cores as nested boxes, each CPU a
 * shape coloured by its level with a <title>, claimed CPUs outlined in
 * their claim's level, offline CPUs grey, a legend. 0, or -errno when
 * writing failed.
 */
int ctl_svg_write(FILE *f, const struct rtplace_cpu *cpus, size_t n);

#endif
