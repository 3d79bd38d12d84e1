/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging to stderr. Lines carry a syslog level prefix ("<3>") when stderr
 * is not a terminal, which journald turns into the record's priority; on a
 * terminal they carry the level name instead.
 *
 * Lines that clients can provoke (garbage, refused connections, accept
 * failures) go through a rate limit per call site: the log_*_ratelimited()
 * macros let LOG_RATELIMIT_BURST lines through per LOG_RATELIMIT_INTERVAL_MS,
 * drop the rest, and say how many they dropped before the next line that
 * passes, so that a hostile client cannot flood the journal (DESIGN §14).
 */
#ifndef RTPLACE_LOG_H
#define RTPLACE_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

/* The kernel's printk_ratelimit() defaults: 10 lines per 5 s. */
#define LOG_RATELIMIT_BURST 10
#define LOG_RATELIMIT_INTERVAL_MS 5000

/* Messages above level (LOG_ERR .. LOG_DEBUG) are dropped. */
void log_set_level(int level);
int log_get_level(void);

/* Parses "err", "warning", "notice", "info", "debug". 0 or -EINVAL. */
int log_level_parse(const char *name, int *ret_level);

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * The state of one rate limit: a window of LOG_RATELIMIT_INTERVAL_MS that
 * starts with the first line after the previous window ended. Zeroed
 * means "no window yet".
 */
struct log_ratelimit {
	uint64_t window_start_ms;
	uint32_t printed;    /* lines let through in this window */
	bool started;
	uint64_t suppressed; /* lines dropped in this window */
};

/*
 * Pure: may a line at now_ms pass? On true, *ret_suppressed is the number
 * of lines dropped since the last one that passed (to be reported before
 * this one), usually 0; on false the line is counted as dropped.
 */
bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_ms, uint64_t *ret_suppressed);

/* The clock of the rate limits (monotonic milliseconds). Until one is set,
 * nothing is limited. */
void log_set_clock(uint64_t (*now_ms)(void));

/* log_msg() through rl; a line above the log level neither passes nor
 * counts. */
void log_msg_ratelimited(struct log_ratelimit *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One rate limit per call site (a static in the expansion). */
#define log_ratelimited(level, ...)                                      \
	do {                                                             \
		static struct log_ratelimit log_rl_;                     \
		log_msg_ratelimited(&log_rl_, level, __VA_ARGS__);       \
	} while (0)

#define log_warning_ratelimited(...) log_ratelimited(LOG_WARNING, __VA_ARGS__)
#define log_notice_ratelimited(...) log_ratelimited(LOG_NOTICE, __VA_ARGS__)

#endif
