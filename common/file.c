/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "of an unknown type";
}

/* 0 when st is a regular file of at most max bytes, else why not. */
static int file_check(const char *path, const struct stat *st, size_t max, struct rtplace_reason *reason)
{
	if (!S_ISREG(st->st_mode)) {
		reason_set(reason, "%s is not a regular file (%s)", path, file_kind(st->st_mode));
		return -EBADFD;
	}
	if ((unsigned long long)st->st_size > max) {
		reason_set(reason, "%s is longer than %zu bytes", path, max);
		return -EFBIG;
	}
	return 0;
}

/* Stats path (fd < 0) or fd, then file_check(). */
static int file_stat_check(const char *path, int fd, struct stat *st, size_t max, struct rtplace_reason *reason)
{
	if ((fd < 0 ? stat(path, st) : fstat(fd, st)) < 0) {
		int r = -errno;

		reason_set(reason, "%s: %s", path, strerror(-r));
		return r;
	}
	return file_check(path, st, max, reason);
}

int file_read_regular(const char *path, size_t max, struct rtplace_reason *reason, char **ret_buf,
		      size_t *ret_size)
{
	char *buf = NULL;
	size_t size = 0, alloc;
	struct stat st;
	int fd = -1, r;

	/* Checked before opening, so that no device is ever opened (opening
	 * some acts), and again on the descriptor, which is what is read:
	 * the path may have been replaced in between. O_NONBLOCK keeps the
	 * open itself from waiting (a FIFO without a writer, a tty's
	 * carrier) when the path changed to such a file after the stat. */
	r = file_stat_check(path, -1, &st, max, reason);
	if (r < 0)
		goto out;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		reason_set(reason, "%s: %s", path, strerror(-r));
		goto out;
	}
	r = file_stat_check(path, fd, &st, max, reason);
	if (r < 0)
		goto out;
	/* st_size is a hint only (procfs says 0, the file may grow): read
	 * to the end, up to one byte past max to see a file grown beyond it,
	 * with room for the NUL. */
	alloc = (size_t)st.st_size + 1 > 4096 ? (size_t)st.st_size + 1 : 4096;
	if (alloc > max + 2)
		alloc = max + 2;
	buf = malloc(alloc);
	if (!buf) {
		r = -ENOMEM;
		reason_set(reason, "%s: %s", path, strerror(ENOMEM));
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (size + 1 == alloc) {
			char *grown;

			alloc = alloc > max / 2 ? max + 2 : alloc * 2;
			grown = realloc(buf, alloc);
			if (!grown) {
				r = -ENOMEM;
				reason_set(reason, "%s: %s", path, strerror(ENOMEM));
				goto out;
			}
			buf = grown;
		}
		n = read(fd, buf + size, alloc - 1 - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			reason_set(reason, "cannot read %s: %s", path, strerror(-r));
			goto out;
		}
		if (n == 0)
			break;
		size += (size_t)n;
		if (size > max) {
			r = -EFBIG;
			reason_set(reason, "%s is longer than %zu bytes", path, max);
			goto out;
		}
	}
	buf[size] = '\0';
	*ret_buf = buf;
	*ret_size = size;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}
