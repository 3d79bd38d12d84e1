/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `rtplacectl top`: a live per-CPU view in the habits of top(1). Every
 * delay it reads the daemon's status, the CPU snapshot and the time by
 * class, and prints a frame: a summary line (CPUs, claims, queries and
 * moves per second, collisions of managed threads counted from the
 * notification records it subscribes to) and the CPUs grouped by node and LLC with their level,
 * claim, thread and the share of the interval each class took. A frame
 * covers the interval since the previous reading, so the first comes one
 * delay after the start.
 *
 * Two layouts: a row per CPU, or, when the rows would not fit the terminal
 * (more than CTL_TOP_WIDE_MAX CPUs, or a terminal narrower than a row),
 * cells of CTL_TOP_CELL columns, several per line. No line is wider than
 * the terminal ($COLUMNS, else 80, when stdout is not one).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sysexits.h>
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
/* Notification records taken per read. */
#define CTL_TOP_RECORDS 64

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

/* 0, or an exit status after saying what failed. */
static int top_read(struct top *t, struct top_reading *ret)
{
	struct ctl *c = t->c;
	int r;

	*ret = (struct top_reading){ .at_ns = top_now_ns(), .collisions = top_collisions(t) };
	r = rtplace_status(c->rp, &ret->st);
	if (r < 0)
		return ctl_fail(c, "cannot read the daemon's status", r);
	r = rtplace_cpus(c->rp, &ret->cpus, &ret->n);
	if (r < 0)
		return ctl_fail(c, "cannot read the CPU snapshot", r);
	r = rtplace_cpu_times(c->rp, &ret->times, &ret->ntimes);
	if (r == -EOPNOTSUPP) {
		ret->times = NULL;
		return 0;
	}
	if (r < 0)
		return ctl_fail(c, "cannot read the time by class", r);
	return 0;
}

/* Prints one line of text, cut at the terminal's width. */
static void top_line(const struct top *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void top_line(const struct top *t, const char *fmt, ...)
{
	char buf[CTL_TOP_LINE_MAX];
	va_list ap;

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

static void top_json(const struct top *t, const struct top_reading *prev, const struct top_reading *cur,
		     double seconds)
{
	printf("{\"interval_s\": %.3f, \"claims\": %" PRIu64 ", \"queries_per_s\": %.1f, \"moves_per_s\": %.1f, ",
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

		printf("%s{\"cpu\": %d, \"package\": %d, \"node\": %d, \"llc\": %d, \"core\": %d, \"level\": \"%s\", "
		       "\"online\": %s, \"claim\": %" PRIu64 ", \"claim_level\": ",
		       k ? ", " : "", ci->cpu, ci->package, ci->node, ci->llc, ci->core, rtplace_level_name(ci->level),
		       ci->flags & RTPLACE_CPU_F_ONLINE ? "true" : "false", ci->claim_id);
		if (ci->claim_id)
			printf("\"%s\"", rtplace_level_name(ci->claim_level));
		else
			printf("null");
		printf(", \"isolated\": %s, \"nohz_full\": %s", ci->flags & RTPLACE_CPU_F_ISOLATED ? "true" : "false",
		       ci->flags & RTPLACE_CPU_F_NOHZ_FULL ? "true" : "false");
		printf(", \"pid\": %d, \"comm\": ", (int)ci->pid);
		ctl_json_string(ci->comm);
		if (ci->flags & RTPLACE_CPU_F_IRQ)
			printf(", \"irq\": %.4f, \"softirq\": %.4f", (double)ci->irq_share / RTPLACE_SHARE_ONE,
			       (double)ci->softirq_share / RTPLACE_SHARE_ONE);
		else
			printf(", \"irq\": null, \"softirq\": null");
		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
			if (have)
				printf(", \"%s\": %.4f", rtplace_class_name((unsigned)c), sh[c]);
			else
				printf(", \"%s\": null", rtplace_class_name((unsigned)c));
		printf("}");
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

static void top_wide(const struct top *t, const struct top_reading *prev, const struct top_reading *cur)
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

static void top_compact(const struct top *t, const struct top_reading *prev, const struct top_reading *cur)
{
	unsigned per_line = t->width / CTL_TOP_CELL ? t->width / CTL_TOP_CELL : 1;
	char line[CTL_TOP_LINE_MAX], cell[CTL_TOP_CELL + 8], group[48];
	size_t used = 0;
	unsigned in_line = 0;

	top_line(t, "cells: CPU[i isolated, n nohz_full, b both] LEVEL [*claimed] most-used class (Idle Normal Rt Dl) "
		 "and its %%");
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

static void top_text(const struct top *t, const struct top_reading *prev, const struct top_reading *cur,
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
	if (compact)
		top_compact(t, prev, cur);
	else
		top_wide(t, prev, cur);
	if (t->batch)
		printf("\n");
}

/* Waits seconds; false when SIGINT or SIGTERM (blocked by the caller)
 * arrived instead, which ends top with status 0 between two frames, never
 * inside one. */
static bool top_wait(const sigset_t *sigs, double seconds)
{
	uint64_t end = top_now_ns() + (uint64_t)(seconds * 1e9);

	for (;;) {
		uint64_t now = top_now_ns();
		struct timespec ts;

		if (now >= end)
			return true;
		ts = (struct timespec){ .tv_sec = (time_t)((end - now) / 1000000000),
					.tv_nsec = (long)((end - now) % 1000000000) };
		if (sigtimedwait(sigs, NULL, &ts) >= 0)
			return false;
		/* EAGAIN: the time is up; EINTR: another signal, wait on */
		if (errno != EAGAIN && errno != EINTR)
			return true;
	}
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

int ctl_top(struct ctl *c, int argc, char **argv)
{
	struct ctl_getopt g = { 0 };
	struct top t = { .c = c, .delay = 1 };
	struct top_reading prev = { 0 }, cur = { 0 };
	long frames = 0, v;
	sigset_t sigs;
	int o, r;

	while ((o = ctl_getopt(c, &g, argc, argv, NULL)) != -1) {
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
		default:
			r = ctl_common_option(c, o, argc, argv);
			if (r)
				return r < 0 ? EX_OK : r;
		}
	}
	if (optind < argc)
		return ctl_usage_error(c, "unexpected argument %s", argv[optind]);
	top_size(&t);
	t.clear = !t.batch && !c->json && isatty(STDOUT_FILENO);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0)
		return ctl_fail(c, "cannot wait for signals", -errno);
	r = ctl_connect(c);
	if (r)
		return r;
	/* Without records (a simulated topology, the subscriber limit) the
	 * collisions are unknown; everything else works. */
	if (rtplace_subscribe(c->rp, &t.sub) < 0)
		t.sub = NULL;
	r = top_read(&t, &prev);
	for (long f = 0; r == 0 && (frames == 0 || f < frames); f++) {
		double seconds;

		if (!top_wait(&sigs, t.delay))
			break;
		r = top_read(&t, &cur);
		if (r)
			break;
		if (top_order(&t, &cur) < 0) {
			r = ctl_fail(c, "cannot sort the CPUs", -ENOMEM);
			break;
		}
		seconds = (double)(cur.at_ns - prev.at_ns) / 1e9;
		if (c->json)
			top_json(&t, &prev, &cur, seconds);
		else
			top_text(&t, &prev, &cur, seconds);
		if (fflush(stdout) != 0)
			r = EX_IOERR;
		top_reading_free(&prev);
		prev = cur;
		cur = (struct top_reading){ 0 };
	}
	top_reading_free(&prev);
	top_reading_free(&cur);
	rtplace_sub_free(t.sub);
	free(t.order);
	return r;
}
