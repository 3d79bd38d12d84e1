/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Feeds every file of a fuzz corpus to LLVMFuzzerTestOneInput, so `make
 * check` runs a harness without libFuzzer (and under the sanitizers with
 * --enable-sanitizers). Arguments are corpus directories or single files;
 * with none, the corpus is REPLAY_CORPUS under $top_srcdir. A harness that
 * finds a bug aborts; a missing or empty corpus fails too, since replaying
 * nothing proves nothing.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the regular file name (relative to dirfd) and runs the harness on it. 0 or -errno. */
static int replay_file(int dirfd, const char *name)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	struct stat st;
	int fd, r = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	/* the harness gets a buffer of exactly the input's size, as libFuzzer
	 * gives it, so ASan sees any read past the end */
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while (size < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + size, (size_t)st.st_size - size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			goto out;
		}
		size += (size_t)n;
	}
	LLVMFuzzerTestOneInput(buf, size);
out:
	free(buf);
	close(fd);
	return r;
}

/* Replays path, a directory (every non-hidden entry) or a file. Adds to *n. */
static int replay_path(const char *path, unsigned *n)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(path);
	if (!d) {
		if (errno != ENOTDIR)
			return -errno;
		r = replay_file(AT_FDCWD, path);
		if (r == 0)
			(*n)++;
		return r;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		r = replay_file(dirfd(d), de->d_name);
		if (r < 0) {
			fprintf(stderr, "replay: %s/%s: %s\n", path, de->d_name, strerror(-r));
			break;
		}
		(*n)++;
	}
	closedir(d);
	return r;
}

int main(int argc, char **argv)
{
	char buf[4096];
	unsigned n = 0;
	int r = 0;

	if (argc < 2) {
		const char *top = getenv("top_srcdir");

		snprintf(buf, sizeof(buf), "%s/%s", top ? top : ".", REPLAY_CORPUS);
		r = replay_path(buf, &n);
		if (r < 0)
			fprintf(stderr, "replay: %s: %s\n", buf, strerror(-r));
	}
	for (int i = 1; i < argc && r == 0; i++) {
		r = replay_path(argv[i], &n);
		if (r < 0)
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(-r));
	}
	if (r == 0 && n == 0)
		fprintf(stderr, "replay: empty corpus\n");
	else if (r == 0)
		printf("replay: %u inputs, no failure\n", n);
	return r == 0 && n > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
