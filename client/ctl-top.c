/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `rtplacectl top`: a live per-CPU view in the habits of top(1). Every
 * delay it reads the daemon's status, the CPU snapshot and the time by
 * class, and prints a frame: a summary line (CPUs, claims, queries and
 * moves per second, collisions of managed threads counted from the
 * notification records it subscribes to) and the CPUs grouped by node and LLC with their level,
 * claim, thread and the share of the interval each class took. A frame
 * covers the interval since the previous reading; the first comes after
 * a short interval (CTL_TOP_FIRST_S), not a whole delay. When the daemon
 * stops, top says so on a line of its own and exits 69, as watch does.
 *
 * Two layouts: a row per CPU, or, when the rows would not fit the terminal
 * (more than CTL_TOP_WIDE_MAX CPUs, or a terminal narrower than a row),
 * cells of CTL_TOP_CELL columns, several per line. No line is wider than
 * the terminal ($COLUMNS, else 80, when stdout is not one).
 *
 * On a terminal (stdout one, not -b or --json) a frame is also never
 * taller than it: the two summary lines stay at the top, the CPUs below
 * are shown a page at a time with a last line naming the page, and keys
 * read from a terminal on stdin move between pages (space, f or PgDn
 * forward, b or PgUp back) or quit (q), without waiting for Enter; a key
 * brings the next frame at once. The terminal's mode is put back on every
 * way out.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sysexits.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"

/* Most CPUs shown a row each; more get the compact cells. */
#define CTL_TOP_WIDE_MAX 64
/* Columns of a wide row ("%4d %-8s %-12s %7d %-15s" and four "%6s"). */
#define CTL_TOP_WIDE_COLS 78
/* The wide row with its IRQ% and SIRQ% columns; narrower, they are left
 * out (--json always has them). */
#define CTL_TOP_WIDE_IRQ_COLS 92
/* Columns of a compact cell, its separator included. */
#define CTL_TOP_CELL 16
/* Longest line built, whatever the terminal's width. */
#define CTL_TOP_LINE_MAX 1024
/* Seconds of the first frame's interval at most, whatever the delay. */
#define CTL_TOP_FIRST_S 0.25
/* Notification records taken per read. */
#define CTL_TOP_RECORDS 64
/* Lines of a frame on a terminal that are not the CPUs: the two summary
 * lines and the page line. */
#define CTL_TOP_FIXED_ROWS 3

struct top_reading {
	struct rtplace_status st;
	struct rtplace_cpu *cpus;
	size_t n;
	struct rtplace_cpu_time *times; /* NULL: the daemon keeps none */
	size_t ntimes;
	uint64_t at_ns; /* CLOCK_MONOTONIC of the reading */
	long collisions; /* since the previous reading, -1 unknown */
};

struct top {
	struct ctl *c;
	struct rtplace_sub *sub; /* NULL: the daemon gives no records */
	double delay;
	bool batch, clear;
	unsigned width, height;
	size_t *order; /* CPU indices grouped by node, LLC, core */
	int sigfd; /* SIGINT and SIGTERM, blocked */
	bool framed; /* a frame was printed */
	bool keys; /* stdin is a terminal in non-canonical mode, saved_tty its mode before */
	struct termios saved_tty;
	/* Paging, on a terminal only (clear): the page shown, the CPU lines
	 * of the frame being printed so far and how many fit a page. */
	unsigned page, body_line, body_rows;
	bool in_body;
};

static uint64_t top_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void top_reading_free(struct top_reading *rd)
{
	rtplace_cpus_free(rd->cpus);
	rtplace_cpu_times_free(rd->times);
	*rd = (struct top_reading){ 0 };
}

/*
 * Collisions of managed threads published since the last call, from the
 * notification records (root and CAP_SYS_NICE see every thread's, others
 * their own); -1 without a subscription. Records lost to a full ring count
 * as unknown: -1 too.
 */
static long top_collisions(struct top *t)
{
	struct rtplace_notification recs[CTL_TOP_RECORDS];
	uint64_t lost = 0, lost_now;
	long n = 0;
	size_t got;

	if (!t->sub)
		return -1;
	do {
		lost_now = 0;
		if (rtplace_sub_read(t->sub, recs, CTL_TOP_RECORDS, &got, &lost_now) < 0) {
			rtplace_sub_free(t->sub);
			t->sub = NULL;
			return -1;
		}
		lost += lost_now;
		for (size_t i = 0; i < got; i++)
			n += recs[i].type == RTPLACE_NOTIFY_COLLISION;
	} while (got == CTL_TOP_RECORDS);
	return lost ? -1 : n;
}

/*
 * A failed reading: on its own line (a terminal's frame ends in the page
 * line, without a newline), and a daemon gone away said as `watch` says
 * it, exit 69: the connection reset, or librtplace's one reconnect
 * finding no socket or no listener. Returns the exit status.
 */
static int top_fail(struct top *t, const char *what, int r)
{
	if (t->clear && t->framed)
		printf("\n");
	fflush(stdout);
	if (r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN || r == -ENOENT || r == -ECONNREFUSED)
		return ctl_report(t->c, EX_UNAVAILABLE, ctl_errno_name(r), "rtplaced closed the connection (it stopped?)");
	return ctl_fail(t->c, what, r);
}

/* 0, or an exit status after saying what failed. */
static int top_read(struct top *t, struct top_reading *ret)
{
	struct ctl *c = t->c;
	int r;

	*ret = (struct top_reading){ .at_ns = top_now_ns(), .collisions = top_collisions(t) };
	r = rtplace_status(c->rp, &ret->st);
	if (r < 0)
		return top_fail(t, "cannot read the daemon's status", r);
	r = rtplace_cpus(c->rp, &ret->cpus, &ret->n);
	if (r < 0)
		return top_fail(t, "cannot read the CPU snapshot", r);
	r = rtplace_cpu_times(c->rp, &ret->times, &ret->ntimes);
	if (r == -EOPNOTSUPP) {
		ret->times = NULL;
		return 0;
	}
	if (r < 0)
		return top_fail(t, "cannot read the time by class", r);
	return 0;
}

/* Prints one line of text, cut at the terminal's width; on a terminal, a
 * line of the CPUs only when it falls on the page shown. */
static void top_line(struct top *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void top_line(struct top *t, const char *fmt, ...)
{
	char buf[CTL_TOP_LINE_MAX];
	va_list ap;

	if (t->clear && t->in_body) {
		unsigned line = t->body_line++;

		if (line / t->body_rows != t->page)
			return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%.*s\n", (int)t->width, buf);
}

static const struct top_reading *top_sort_reading;

/* Node, then LLC, then core, then CPU id; CPUs of unknown place (offline
 * since the daemon started) last. */
static int top_order_cmp(const void *a, const void *b)
{
	const struct rtplace_cpu *x = &top_sort_reading->cpus[*(const size_t *)a];
	const struct rtplace_cpu *y = &top_sort_reading->cpus[*(const size_t *)b];
	int kx[4] = { x->node < 0, x->node, x->llc, x->core }, ky[4] = { y->node < 0, y->node, y->llc, y->core };

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int top_order(struct top *t, const struct top_reading *rd)
{
	size_t *order = realloc(t->order, rd->n * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < rd->n; i++)
		order[i] = i;
	top_sort_reading = rd;
	qsort(order, rd->n, sizeof(*order), top_order_cmp);
	top_sort_reading = NULL;
	t->order = order;
	return 0;
}

/* The shares of CPU i over the interval between the readings, or false. */
static bool top_shares(const struct top_reading *prev, const struct top_reading *cur, size_t i,
		       double ret[RTPLACE_CLASS_COUNT])
{
	if (!prev->times || !cur->times || i >= prev->ntimes || i >= cur->ntimes)
		return false;
	return ctl_class_shares(&prev->times[i], &cur->times[i], ret) == 0;
}

static double top_rate(uint64_t before, uint64_t after, double seconds)
{
	return after >= before && seconds > 0 ? (double)(after - before) / seconds : 0;
}

static void top_json(struct top *t, const struct top_reading *prev, const struct top_reading *cur,
		     double seconds)
{
	printf("{\"interval_s\": %.3f, \"claims_active\": %" PRIu64 ", \"queries_per_s\": %.1f, \"moves_per_s\": %.1f, ",
	       seconds, cur->st.claims_active, top_rate(prev->st.queries, cur->st.queries, seconds),
	       top_rate(prev->st.moves, cur->st.moves, seconds));
	if (cur->collisions >= 0)
		printf("\"collisions\": %ld, ", cur->collisions);
	else
		printf("\"collisions\": null, ");
	printf("\"tracking\": %s, \"cpus\": [", cur->st.flags & RTPLACE_STATUS_F_TRACKING ? "true" : "false");
	for (size_t k = 0; k < cur->n; k++) {
		size_t i = t->order[k];
		const struct rtplace_cpu *ci = &cur->cpus[i];
		double sh[RTPLACE_CLASS_COUNT];
		bool have = top_shares(prev, cur, i, sh);

		printf("%s", k ? ", " : "");
		ctl_json_cpu(ci, have ? sh : NULL);
	}
	printf("]}\n");
}

/* The host's marks of a CPU in one column (DESIGN §20): 'i' isolated,
 * 'n' nohz_full, 'b' both, ' ' neither. */
static char top_host_mark(const struct rtplace_cpu *ci)
{
	bool iso = ci->flags & RTPLACE_CPU_F_ISOLATED, nohz = ci->flags & RTPLACE_CPU_F_NOHZ_FULL;

	return iso && nohz ? 'b' : iso ? 'i' : nohz ? 'n' : ' ';
}

/* A level in at most 5 columns: "normal" and "offline" shortened. */
static const char *top_level_short(unsigned level)
{
	if (level == RTPLACE_LEVEL_NORMAL)
		return "norm";
	if (level == RTPLACE_LEVEL_OFFLINE)
		return "off";
	return rtplace_level_name(level);
}

/* "node N llc M" of a group, "offline" for CPUs of unknown place. */
static void top_group_name(const struct rtplace_cpu *ci, char *buf, size_t len)
{
	if (ci->node < 0)
		snprintf(buf, len, "offline since start");
	else
		snprintf(buf, len, "node %d llc %d", ci->node, ci->llc);
}

static bool top_same_group(const struct rtplace_cpu *a, const struct rtplace_cpu *b)
{
	return a->node == b->node && a->llc == b->llc;
}

static void top_wide(struct top *t, const struct top_reading *prev, const struct top_reading *cur)
{
	const bool irq = t->width >= CTL_TOP_WIDE_IRQ_COLS;
	char group[48];

	top_line(t, "%4s %-7s %-12s %7s %-15s %6s %6s %6s %6s%s", "CPU", "LEVEL", "CLAIM", "PID", "COMM", "IDLE%",
		 "NORM%", "RT%", "DL%", irq ? "   IRQ%  SIRQ%" : "");
	for (size_t k = 0; k < cur->n; k++) {
		const struct rtplace_cpu *ci = &cur->cpus[t->order[k]];
		double sh[RTPLACE_CLASS_COUNT];
		char claim[32], share[4][8], irqs[16] = "";
		bool have = top_shares(prev, cur, t->order[k], sh);

		if (k == 0 || !top_same_group(ci, &cur->cpus[t->order[k - 1]])) {
			top_group_name(ci, group, sizeof(group));
			top_line(t, "-- %s", group);
		}
		if (ci->claim_id)
			snprintf(claim, sizeof(claim), "%" PRIu64 "@%s", ci->claim_id, rtplace_level_name(ci->claim_level));
		else
			snprintf(claim, sizeof(claim), "-");
		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
			if (have)
				snprintf(share[c], sizeof(share[c]), "%.1f", sh[c] * 100);
			else
				snprintf(share[c], sizeof(share[c]), "-");
		if (irq && ci->flags & RTPLACE_CPU_F_IRQ)
			snprintf(irqs, sizeof(irqs), " %6.2f %6.2f", (double)ci->irq_share * 100 / RTPLACE_SHARE_ONE,
				 (double)ci->softirq_share * 100 / RTPLACE_SHARE_ONE);
		else if (irq)
			snprintf(irqs, sizeof(irqs), " %6s %6s", "-", "-");
		top_line(t, "%4d%c%-7s %-12.12s %7d %-15.15s %6s %6s %6s %6s%s", ci->cpu, top_host_mark(ci),
			 rtplace_level_name(ci->level), claim,
			 (int)ci->pid, ci->comm[0] ? ci->comm : "-", share[0], share[1], share[2], share[3], irqs);
	}
}

/* A compact cell: CPU, level, '*' when claimed, and the class that took
 * most of the interval with its percentage ("I", "N", "R", "D"). */
static void top_cell(const struct top_reading *prev, const struct top_reading *cur, size_t i, char *buf,
		     size_t len)
{
	static const char letters[RTPLACE_CLASS_COUNT] = { 'I', 'N', 'R', 'D' };
	const struct rtplace_cpu *ci = &cur->cpus[i];
	double sh[RTPLACE_CLASS_COUNT];
	int top = 0;

	if (!top_shares(prev, cur, i, sh)) {
		snprintf(buf, len, "%4d%c%-5.5s%c   -", ci->cpu, top_host_mark(ci), top_level_short(ci->level),
			 ci->claim_id ? '*' : ' ');
		return;
	}
	for (int c = 1; c < RTPLACE_CLASS_COUNT; c++)
		if (sh[c] > sh[top])
			top = c;
	snprintf(buf, len, "%4d%c%-5.5s%c%c%3.0f", ci->cpu, top_host_mark(ci), top_level_short(ci->level),
		 ci->claim_id ? '*' : ' ',
		 letters[top], sh[top] * 100 > 999 ? 999 : sh[top] * 100);
}

static void top_compact(struct top *t, const struct top_reading *prev, const struct top_reading *cur)
{
	unsigned per_line = t->width / CTL_TOP_CELL ? t->width / CTL_TOP_CELL : 1;
	char line[CTL_TOP_LINE_MAX], cell[CTL_TOP_CELL + 8], group[48];
	size_t used = 0;
	unsigned in_line = 0;

	/* Within 80 columns, as every line of a frame. */
	top_line(t, "cells: CPU[i isolated,n nohz_full,b both] LEVEL[*claimed] top class I/N/R/D %%");
	for (size_t k = 0; k < cur->n; k++) {
		const struct rtplace_cpu *ci = &cur->cpus[t->order[k]];

		if (k == 0 || !top_same_group(ci, &cur->cpus[t->order[k - 1]])) {
			if (in_line)
				top_line(t, "%s", line);
			in_line = 0;
			used = 0;
			top_group_name(ci, group, sizeof(group));
			top_line(t, "-- %s", group);
		}
		top_cell(prev, cur, t->order[k], cell, sizeof(cell));
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%-*s", CTL_TOP_CELL, cell);
		if (++in_line == per_line) {
			top_line(t, "%s", line);
			in_line = 0;
			used = 0;
		}
	}
	if (in_line)
		top_line(t, "%s", line);
}

static void top_text(struct top *t, const struct top_reading *prev, const struct top_reading *cur,
		     double seconds)
{
	bool compact = cur->n > CTL_TOP_WIDE_MAX || t->width < CTL_TOP_WIDE_COLS ||
		       (t->clear && cur->n + 8 > t->height);
	char coll[24];

	if (t->clear)
		printf("\033[H\033[J");
	top_line(t, "rtplace top: %zu CPUs, %u online, levels %s; interval %.2f s", cur->n, cur->st.nonline,
		 cur->st.flags & RTPLACE_STATUS_F_TRACKING ? "live" : "simulated", seconds);
	if (cur->collisions >= 0)
		snprintf(coll, sizeof(coll), "%ld", cur->collisions);
	else
		snprintf(coll, sizeof(coll), "-");
	top_line(t, "claims %" PRIu64 ", queries/s %.1f, moves/s %.1f, collisions %s, clients %" PRIu64 "%s",
		 cur->st.claims_active, top_rate(prev->st.queries, cur->st.queries, seconds),
		 top_rate(prev->st.moves, cur->st.moves, seconds), coll, cur->st.clients,
		 cur->times ? "" : "; no time by class (no BPF tracker)");
	t->in_body = true;
	t->body_line = 0;
	if (compact)
		top_compact(t, prev, cur);
	else
		top_wide(t, prev, cur);
	t->in_body = false;
	if (t->clear) {
		unsigned pages = (t->body_line + t->body_rows - 1) / t->body_rows;

		/* past the last page (a key, or fewer CPUs than when the
		 * page was chosen): the first again, printed at once */
		if (t->page >= pages && pages > 0) {
			t->page = 0;
			top_text(t, prev, cur, seconds);
			return;
		}
		printf("page %u of %u%s", t->page + 1, pages ? pages : 1,
		       t->keys ? " (space next, b back, q quit)" : "");
	}
	if (t->batch)
		printf("\n");
}

/* What ends a wait early. */
enum top_wake { TOP_WAKE_TIME, TOP_WAKE_KEY, TOP_WAKE_QUIT };

/* A key read from the terminal: q quits; space, f and PgDn (ESC [ 6 ~)
 * turn to the next page (after the last, the first), b and PgUp (ESC [ 5
 * ~) to the one before; any other key only brings the next frame. */
static enum top_wake top_key(struct top *t)
{
	char k[8];
	ssize_t n = read(STDIN_FILENO, k, sizeof(k));

	if (n <= 0)
		return TOP_WAKE_KEY;
	if (k[0] == 'q' || k[0] == 'Q')
		return TOP_WAKE_QUIT;
	if (k[0] == ' ' || k[0] == 'f' || (n >= 4 && memcmp(k, "\033[6~", 4) == 0))
		t->page++;
	else if ((k[0] == 'b' || (n >= 4 && memcmp(k, "\033[5~", 4) == 0)) && t->page > 0)
		t->page--;
	return TOP_WAKE_KEY;
}

/* Waits seconds, for SIGINT or SIGTERM (blocked by the caller, read from
 * t->sigfd) or, on a terminal, a key. A signal or q ends top with status
 * 0 between two frames, never inside one. */
static enum top_wake top_wait(struct top *t, double seconds)
{
	uint64_t end = top_now_ns() + (uint64_t)(seconds * 1e9);

	for (;;) {
		struct pollfd fds[2] = { { .fd = t->sigfd, .events = POLLIN },
					 { .fd = t->keys ? STDIN_FILENO : -1, .events = POLLIN } };
		uint64_t now = top_now_ns();
		int ms, n;

		if (now >= end)
			return TOP_WAKE_TIME;
		ms = (int)((end - now + 999999) / 1000000);
		n = poll(fds, 2, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fds[0].revents)
			return TOP_WAKE_QUIT;
		if (fds[1].revents & POLLIN)
			return top_key(t);
		if (fds[1].revents)
			t->keys = false;
	}
}

/* Keys without Enter or echo, when stdin is a terminal and frames go to
 * one; top_keys_off() puts the mode back. */
static void top_keys_on(struct top *t)
{
	struct termios raw;

	if (!t->clear || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &t->saved_tty) < 0)
		return;
	raw = t->saved_tty;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	t->keys = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

static void top_keys_off(struct top *t)
{
	if (t->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved_tty);
	t->keys = false;
}

/* The terminal's size, from stdout when it is one, else $COLUMNS/$LINES,
 * else 80x24. */
static void top_size(struct top *t)
{
	struct winsize ws;
	long v;

	t->width = 80;
	t->height = 24;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		t->width = ws.ws_col;
		t->height = ws.ws_row;
		return;
	}
	if (getenv("COLUMNS") && cli_parse_long(getenv("COLUMNS"), 20, CTL_TOP_LINE_MAX - 1, &v) == 0)
		t->width = (unsigned)v;
	if (getenv("LINES") && cli_parse_long(getenv("LINES"), 5, 100000, &v) == 0)
		t->height = (unsigned)v;
}

/* How many lines of CPUs a page holds: the terminal's rows less the fixed
 * ones, one at least. */
static unsigned top_body_rows(const struct top *t)
{
	return t->height > CTL_TOP_FIXED_ROWS + 1 ? t->height - CTL_TOP_FIXED_ROWS : 1;
}

/* Blocks SIGINT and SIGTERM into t->sigfd, connects, takes the keys and
 * subscribes to the records where it can: 0, or the exit status (t->sigfd
 * is closed then). */
static int top_open(struct top *t)
{
	struct ctl *c = t->c;
	sigset_t sigs;
	int r;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0)
		return ctl_fail(c, "cannot wait for signals", -errno);
	t->sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (t->sigfd < 0)
		return ctl_fail(c, "cannot wait for signals", -errno);
	r = ctl_connect(c);
	if (r) {
		close(t->sigfd);
		return r;
	}
	top_keys_on(t);
	/* Without records (a simulated topology, the subscriber limit) the
	 * collisions are unknown; everything else works. */
	if (rtplace_subscribe(c->rp, &t->sub) < 0)
		t->sub = NULL;
	return 0;
}

/* Reads *cur and prints the frame from *prev to it, which then becomes
 * *prev: 0, or the exit status. */
static int top_frame(struct top *t, struct top_reading *prev, struct top_reading *cur)
{
	double seconds;
	int r = top_read(t, cur);

	if (r)
		return r;
	if (top_order(t, cur) < 0)
		return ctl_fail(t->c, "cannot sort the CPUs", -ENOMEM);
	seconds = (double)(cur->at_ns - prev->at_ns) / 1e9;
	if (t->c->json)
		top_json(t, prev, cur, seconds);
	else
		top_text(t, prev, cur, seconds);
	t->framed = true;
	if (fflush(stdout) != 0)
		r = EX_IOERR;
	top_reading_free(prev);
	*prev = *cur;
	*cur = (struct top_reading){ 0 };
	return r;
}

int ctl_top(struct ctl *c, int argc, char **argv)
{
	struct ctl_getopt g = { 0 };
	struct top t = { .c = c, .delay = 1, .sigfd = -1 };
	struct top_reading prev = { 0 }, cur = { 0 };
	long frames = 0, v;
	int o, r;

	while ((o = ctl_getopt(c, &g, argc, argv, 0, NULL, &r)) != -1) {
		switch (o) {
		case 'd':
			if (cli_parse_seconds(optarg, 0.1, 3600, &t.delay) < 0)
				return ctl_usage_error(c, "-d %s: not a delay in seconds 0.1..3600", optarg);
			break;
		case 'n':
			if (cli_parse_long(optarg, 1, LONG_MAX, &v) < 0)
				return ctl_usage_error(c, "-n %s: not a positive number of frames", optarg);
			frames = v;
			break;
		case 'b':
			t.batch = true;
			break;
		}
	}
	if (r)
		return r < 0 ? EX_OK : r;
	top_size(&t);
	t.clear = !t.batch && !c->json && isatty(STDOUT_FILENO);
	t.body_rows = top_body_rows(&t);
	r = top_open(&t);
	if (r)
		return r;
	r = top_read(&t, &prev);
	/* The first frame comes at once, as top(1)'s does, over a short first
	 * interval rather than a whole delay. */
	for (long f = 0; r == 0 && (frames == 0 || f < frames); f++) {
		if (top_wait(&t, f == 0 && t.delay > CTL_TOP_FIRST_S ? CTL_TOP_FIRST_S : t.delay) == TOP_WAKE_QUIT)
			break;
		r = top_frame(&t, &prev, &cur);
	}
	if (t.clear)
		printf("\n");
	top_keys_off(&t);
	top_reading_free(&prev);
	top_reading_free(&cur);
	rtplace_sub_free(t.sub);
	free(t.order);
	close(t.sigfd);
	return r;
}
