/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading an input file whole, without blocking: the one way the daemon and
 * the clients read a file named from outside (a configuration, a topology,
 * a container's config.json). A path may name anything; only a regular file
 * is read. A FIFO would block the reader until someone writes to it, a
 * device could be read for ever (/dev/zero) or act on being opened (a
 * watchdog), and a directory is no input.
 */
#ifndef RTPLACE_FILE_H
#define RTPLACE_FILE_H

#include <stddef.h>

#include "reason.h"

/*
 * Reads the regular file at path (symbolic links followed), at most max
 * bytes, into a malloc()ed buffer with a NUL after its last byte
 * (*ret_size does not count it). Returns 0; -EBADFD when path is not a
 * regular file, -EFBIG when it is longer than max, or the -errno of
 * stat(), open() or read(). On failure reason says so, naming the path
 * ("/dev/zero is not a regular file (a character device)").
 */
int file_read_regular(const char *path, size_t max, struct rtplace_reason *reason, char **ret_buf,
		      size_t *ret_size);

#endif
