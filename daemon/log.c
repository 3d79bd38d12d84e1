/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* Set by the loop's thread (a reload), read by the acceptor's too: a
 * level that orders nothing else, so relaxed. */
static _Atomic int log_max_level = LOG_INFO;
static uint64_t (*log_clock)(void);

static const char *const log_level_names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",     [LOG_ERR] = "err",
	[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_set_level(int level)
{
	atomic_store_explicit(&log_max_level, level, memory_order_relaxed);
}

int log_get_level(void)
{
	return atomic_load_explicit(&log_max_level, memory_order_relaxed);
}

int log_level_parse(const char *name, int *ret_level)
{
	for (int l = LOG_ERR; l <= LOG_DEBUG; l++) {
		if (strcmp(name, log_level_names[l]) == 0) {
			*ret_level = l;
			return 0;
		}
	}
	return -EINVAL;
}

/* True when stderr is the journal: systemd then names the stream's device
 * and inode in JOURNAL_STREAM (systemd.exec(5)), and "<N>" prefixes carry
 * the level. A terminal, a file or a pipe gets plain words instead. */
static bool log_stderr_is_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!stream || sscanf(stream, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void log_vmsg(int level, const char *fmt, va_list ap)
{
	char line[1024];
	int saved_errno = errno;

	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_stderr_is_journal())
		fprintf(stderr, "<%d>%s\n", level & 7, line);
	else
		fprintf(stderr, "rtplaced: %s: %s\n", log_level_names[level & 7], line);
	errno = saved_errno;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_get_level())
		return;
	/* va_start() leaves errno alone, so %m in fmt reports the caller's. */
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_ms, uint64_t *ret_suppressed)
{
	*ret_suppressed = 0;
	/* A clock that went backwards (another clock injected) starts a new
	 * window rather than keeping the current one shut for ever. */
	if (!rl->started || now_ms - rl->window_start_ms >= LOG_RATELIMIT_INTERVAL_MS ||
	    now_ms < rl->window_start_ms) {
		*ret_suppressed = rl->suppressed;
		rl->started = true;
		rl->window_start_ms = now_ms;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed < LOG_RATELIMIT_BURST) {
		rl->printed++;
		return true;
	}
	rl->suppressed++;
	return false;
}

void log_set_clock(uint64_t (*now_ms)(void))
{
	log_clock = now_ms;
}

void log_msg_ratelimited(struct log_ratelimit *rl, int level, const char *fmt, ...)
{
	int saved_errno = errno;
	uint64_t suppressed = 0;
	va_list ap;

	if (level > log_get_level())
		return;
	if (log_clock && !log_ratelimit_pass(rl, log_clock(), &suppressed))
		return;
	if (suppressed)
		log_msg(level, "%" PRIu64 " messages like the next one were suppressed (at most %d every %d s)",
			suppressed, LOG_RATELIMIT_BURST, LOG_RATELIMIT_INTERVAL_MS / 1000);
	errno = saved_errno;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
