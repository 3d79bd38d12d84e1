/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplacectl's commands and options as data, and the help printed from
 * them. Each option's text sits beside its getopt entry, so the parser,
 * `COMMAND --help`, `rtplacectl help COMMAND` and the tests read one
 * table; rtplacectl(1) says the same at length. Pure but for the FILE
 * the help goes to.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ctl.h"

/* Help lines fit an 80-column terminal; option texts start at this column. */
#define CTL_HELP_WIDTH 79
#define CTL_HELP_TEXT_COL 26

const struct ctl_option ctl_common_options[] = {
	{ "socket", 'S', false, "PATH",
	  "the daemon's socket (default $" RTPLACE_SOCKET_ENV ", else " RTPLACE_DEFAULT_SOCKET ")" },
	{ "json", 'j', true, NULL, "print JSON instead of the table: one document, or one a line for top and watch" },
	{ "help", 'h', true, NULL, "print this help and exit" },
	{ 0 },
};

const struct ctl_option ctl_global_options[] = {
	{ "version", 'V', true, NULL, "print rtplacectl's version and exit" },
	{ 0 },
};

static const struct ctl_option ctl_no_options[] = {
	{ 0 },
};

static const struct ctl_option ctl_cpus_options[] = {
	{ "interval", 'i', true, "SECONDS",
	  "the shares of time by class over the next SECONDS (0.1..3600) instead of since the daemon started" },
	{ "svg", 'g', false, NULL, "an SVG picture of the machine instead of the table (not with --interval or --json)" },
	{ 0 },
};

static const struct ctl_option ctl_top_options[] = {
	{ "delay", 'd', true, "SECONDS", "time between frames, 0.1..3600 (default 1)" },
	{ "iterations", 'n', true, "N", "print N frames, then exit (default: until interrupted)" },
	{ "batch", 'b', true, NULL, "plain frames one after another, for logs and pipes (no screen clearing)" },
	{ 0 },
};

/* The options that make a request: query's and explain's. */
#define CTL_REQUEST_OPTIONS \
	{ "prio", 'p', false, "P", "the RT priority 1..99 of the thread to place (required)" }, \
	{ "policy", 'P', false, "fifo|rr", "its RT policy (default fifo)" }, \
	{ "count", 'n', false, "N", "how many CPUs, 1..256 (default 1)" }, \
	{ "cpus", 'n', false, "N", "the same as --count: a count, not a list" }, \
	{ "cpu-list", 'c', true, "LIST", "choose among these CPUs only (e.g. 0-3,8)" }, \
	{ "node", 'N', false, "N", "choose on NUMA node N only" }, \
	{ "near", 'a', false, "CPU", "prefer CPUs close to CPU (same core, then LLC, then node)" }, \
	{ "claim", 'C', false, "MS", \
	  "hold the answer as a claim for MS milliseconds (0: the daemon's claim-timeout-ms); it also ends " \
	  "when its owner exits or on release" }, \
	{ "owner", 'o', false, "PID|shell|parent", \
	  "the process the claim lives with: shell (the default) the calling shell or script, also from inside " \
	  "$(...) and past the command wrappers sudo, doas, runuser, setpriv, env, nice, ionice, chrt, taskset, " \
	  "numactl, timeout, setsid, stdbuf, nohup, time, flock and unbuffer (named by their executable); parent " \
	  "rtplacectl's parent process, which in $(...) may be a subshell or a wrapper that exits at once; or a " \
	  "process id" }, \
	{ "exclusive", 'x', false, NULL, "keep the claimed CPUs from every other query, whatever its priority" }, \
	{ "isolate", 'I', false, NULL, \
	  "--exclusive, and the daemon isolates the claimed CPUs while the claim lives: other tasks, movable " \
	  "interrupts and unbound work leave them, as its [isolation] says (CAP_SYS_NICE)" }, \
	{ "isolate-if-possible", 'i', false, NULL, \
	  "--isolate where the daemon can, and a claim without isolation where it cannot, the reason saying " \
	  "why" },

static const struct ctl_option ctl_query_options[] = {
	CTL_REQUEST_OPTIONS
	{ "strict", 's', false, NULL, "fewer CPUs than asked is a failure (exit 75, the claim given back), not a warning" },
	{ "local", 'L', false, NULL,
	  "answer in this process from the daemon's map and snapshot, read-only, without a round trip (not with "
	  "--claim)" },
	{ "verbose", 'v', true, NULL,
	  "also say on stderr who holds the claim (the shell found, the subshell or wrapper passed over) and how "
	  "it ends" },
	{ 0 },
};

static const struct ctl_option ctl_explain_options[] = {
	CTL_REQUEST_OPTIONS
	{ 0 },
};

static const struct ctl_option ctl_move_options[] = {
	{ "tid", 't', false, "TID", "the thread to move" },
	{ "pid", 'p', true, "PID", "the process PID: its main thread, or with --all every thread" },
	{ "all", 'a', true, NULL, "every thread of the process, all or none" },
	{ "prio", 'r', false, "P", "set RT priority P, 1..99" },
	{ "policy", 'P', false, "fifo|rr", "the RT policy for --prio (default fifo)" },
	{ "cpu-list", 'c', true, "LIST", "set the affinity to these CPUs (e.g. 0-3,8)" },
	{ "cpus", 'm', false, "N", "refused: --cpus is a count elsewhere; the CPUs to move to are --cpu-list" },
	{ "force", 'f', false, NULL, "also move init (pid 1), a kernel thread or rtplaced itself" },
	{ 0 },
};

static const struct ctl_option ctl_watch_options[] = {
	{ "count", 'n', false, "N", "exit after N records (default: until interrupted)" },
	{ 0 },
};

const struct ctl_command ctl_commands[CTL_CMD_COUNT] = {
	[CTL_CMD_STATUS] = { "status", "",
			     "the daemon's version, uptime, topology, where its levels come from, the host's RT "
			     "configuration, the kernel's RT environment (RT group scheduling, deadline servers, "
			     "sched_ext) and the daemon's counters",
			     ctl_no_options },
	[CTL_CMD_CPUS] = { "cpus", "[--interval SECONDS | --svg]",
			   "one line per CPU: node, LLC, core, level, the thread running there, its claim and the "
			   "share of time each scheduling class took",
			   ctl_cpus_options },
	[CTL_CMD_TOP] = { "top", "[-d SECONDS] [-n N] [-b]",
			  "a live per-CPU view: level, claim, thread and the share of each class, frame by frame",
			  ctl_top_options },
	[CTL_CMD_QUERY] = { "query",
			    "--prio P [--policy fifo|rr] [--count N] [--cpu-list LIST] [--node N] [--near CPU] "
			    "[--claim MS [--owner WHO] [--exclusive|--isolate]] [--strict] [--verbose]",
			    "which CPUs suit an RT thread of priority P, best first, and with --claim hold them",
			    ctl_query_options },
	[CTL_CMD_EXPLAIN] = { "explain",
			      "--prio P [--policy fifo|rr] [--count N] [--cpu-list LIST] [--node N] [--near CPU] "
			      "[--claim MS [--owner WHO] [--exclusive|--isolate]]",
			      "why query would answer what it would, claiming nothing: for each CPU allowed, chosen or "
			      "the rule that passed it over (its level and what runs there, a claim and its holder, "
			      "housekeeping, isolation, an SMT sibling, the node, interrupt noise, offline), and what "
			      "would stop the thread from getting the policy, each with the fix",
			      ctl_explain_options },
	[CTL_CMD_CLAIMS] = { "claims", "",
			     "every claim the daemon holds: its level, CPUs and how it ends, and its owner process, "
			     "comm and uid where you may see them (yours, or any as root; another user's claim shows "
			     "only that another user holds it)",
			     ctl_no_options },
	[CTL_CMD_RELEASE] = { "release", "CLAIM-ID", "end claim CLAIM-ID (yours, or any as root)", ctl_no_options },
	[CTL_CMD_MOVE] = { "move",
			   "(--tid TID | --pid PID [--all]) [--prio P] [--policy fifo|rr] [--cpu-list LIST] [--force]",
			   "ask the daemon to set a thread's (or every thread of a process's) RT priority and/or "
			   "affinity, within what the caller could set itself",
			   ctl_move_options },
	[CTL_CMD_WATCH] = { "watch", "[--count N]",
			    "print the daemon's notification records (moves, claims made, released, expired and "
			    "revoked, each with its claim id, collisions, thread exits, the RealtimeKit "
			    "watchdog's demotions, and claims' CPUs isolated and released) as they arrive, in 80 columns (the date too on a wider terminal)",
			    ctl_watch_options },
	[CTL_CMD_RELOAD] = { "reload", "",
			     "as root, have the daemon read its configuration file again and say whether it applied "
			     "it or kept the running one, and why (what `systemctl reload rtplaced` runs)",
			     ctl_no_options },
	[CTL_CMD_HELP] = { "help", "[COMMAND]", "print the commands, or COMMAND's help (the same as COMMAND --help)",
			   ctl_no_options },
};

const struct ctl_command *ctl_command_find(const char *name)
{
	for (size_t i = 0; i < CTL_CMD_COUNT; i++)
		if (strcmp(ctl_commands[i].name, name) == 0)
			return &ctl_commands[i];
	return NULL;
}

/* text from column col, broken at spaces into lines indented to indent. */
static void ctl_help_wrap(FILE *f, const char *text, size_t col, size_t indent)
{
	bool first = true;

	for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
		size_t word = strcspn(p, " ");

		if (!first && col + 1 + word > CTL_HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)word, p);
		col += word;
		p += word;
		first = false;
	}
	fputc('\n', f);
}

static void ctl_help_options(FILE *f, const struct ctl_option *opts)
{
	for (const struct ctl_option *o = opts; o->name; o++) {
		int col;

		if (o->letter)
			col = fprintf(f, "  -%c, --%s", o->key, o->name);
		else
			col = fprintf(f, "      --%s", o->name);
		if (o->arg)
			col += fprintf(f, " %s", o->arg);
		/* A long label gets its text on the next line, as man(1) does. */
		if (col + 2 > CTL_HELP_TEXT_COL) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%*s", CTL_HELP_TEXT_COL - col, "");
		ctl_help_wrap(f, o->help, CTL_HELP_TEXT_COL, CTL_HELP_TEXT_COL);
	}
}

/* A synopsis wrapped as ctl_help_wrap() does, but never inside brackets
 * or parentheses: "[--claim MS [--owner PID]]" stays on one line. */
static void ctl_help_synopsis(FILE *f, const char *args, size_t col, size_t indent)
{
	const char *p = args;

	while (*p) {
		size_t len = 0;
		int depth = 0;

		for (; p[len] && (depth > 0 || p[len] != ' '); len++)
			depth += (p[len] == '[' || p[len] == '(') - (p[len] == ']' || p[len] == ')');
		if (col > indent && col + 1 + len > CTL_HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)len, p);
		col += len;
		p += len + strspn(p + len, " ");
	}
	fputc('\n', f);
}

void ctl_command_help(FILE *f, const struct ctl_command *cmd)
{
	int col = fprintf(f, "usage: rtplacectl %s", cmd->name);

	ctl_help_synopsis(f, cmd->args, (size_t)col, (size_t)col + 1);
	fputc('\n', f);
	ctl_help_wrap(f, cmd->summary, 0, 0);
	if (cmd->options[0].name) {
		fputs("\nOptions:\n", f);
		ctl_help_options(f, cmd->options);
	}
	fputs("\nCommon options (before or after the command):\n", f);
	ctl_help_options(f, ctl_common_options);
	fputs("\nSee rtplacectl(1) for the output and exit statuses.\n", f);
}

void ctl_help(FILE *f)
{
	fputs("usage: rtplacectl [--socket PATH] [--json] COMMAND [OPTIONS]\n"
	      "       rtplacectl help [COMMAND]\n\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < CTL_CMD_COUNT; i++) {
		fprintf(f, "  %-9s", ctl_commands[i].name);
		ctl_help_wrap(f, ctl_commands[i].summary, 11, 11);
	}
	fputs("\nOptions (--socket, --json and --help also after COMMAND):\n", f);
	ctl_help_options(f, ctl_common_options);
	ctl_help_options(f, ctl_global_options);
	fputs("\n'rtplacectl help COMMAND' (or COMMAND --help) prints a command's options;\n"
	      "rtplacectl(1) tells the whole story.\n",
	      f);
}

static int ctl_getopt_add(struct ctl_getopt *g, size_t *n, size_t *k, const struct ctl_option *opts)
{
	for (const struct ctl_option *o = opts; o->name; o++) {
		if (*n >= CTL_GETOPT_MAX)
			return -E2BIG;
		g->longs[(*n)++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, o->key };
		if (!o->letter)
			continue;
		g->shorts[(*k)++] = (char)o->key;
		if (o->arg)
			g->shorts[(*k)++] = ':';
	}
	return 0;
}

int ctl_getopt_init(struct ctl_getopt *g, const char *prefix, const struct ctl_option *own,
		    const struct ctl_option *common)
{
	size_t n = 0, k = strlen(prefix);
	int r;

	memset(g, 0, sizeof(*g));
	memcpy(g->shorts, prefix, k);
	g->shorts[k++] = ':';
	r = ctl_getopt_add(g, &n, &k, own);
	if (r == 0)
		r = ctl_getopt_add(g, &n, &k, common);
	return r;
}
