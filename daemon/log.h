/*
 * Logging to stderr. Lines carry a syslog level prefix ("<3>") when stderr
 * is not a terminal, which journald turns into the record's priority; on a
 * terminal they carry the level name instead.
 */
#ifndef RTPLACE_LOG_H
#define RTPLACE_LOG_H

#include <syslog.h>

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

#endif
