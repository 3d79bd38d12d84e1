#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static int log_max_level = LOG_INFO;

static const char *const log_level_names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",     [LOG_ERR] = "err",
	[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_set_level(int level)
{
	log_max_level = level;
}

int log_get_level(void)
{
	return log_max_level;
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

void log_msg(int level, const char *fmt, ...)
{
	char line[1024];
	int saved_errno = errno;
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	errno = saved_errno; /* so that %m in fmt reports the caller's errno */
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_stderr_is_journal())
		fprintf(stderr, "<%d>%s\n", level & 7, line);
	else
		fprintf(stderr, "rtplaced: %s: %s\n", log_level_names[level & 7], line);
	errno = saved_errno;
}
