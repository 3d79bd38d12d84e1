/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claims-state.h"
#include "decimal.h"
#include "levels.h"
#include "procfs.h"

#define CLAIMS_STATE_MAGIC_V1 "rtplace-claims 1"
#define CLAIMS_STATE_MAGIC_V2 "rtplace-claims 2"
#define CLAIMS_STATE_MAGIC_V3 "rtplace-claims 3"
#define CLAIMS_STATE_MAGIC "rtplace-claims 4"
/* What ends a MANAGE claim's line before the CPUs its threads may go to. */
#define CLAIMS_STATE_MANAGE " manage "
#define CLAIMS_STATE_ISOLATED " isolated"
/* One line: its fields take well under 128 bytes, then two CPU lists. */
#define CLAIMS_STATE_LINE_MAX (2 * CPUSET_LIST_MAX + 128)
/* A journal holds at most CLAIMS_STATE_COMPACT_FACTOR lines per claim of a
 * full table (plus the minimum) before it is compacted, most CPU lists far
 * shorter than the longest: anything larger is not one this file wrote. */
#define CLAIMS_STATE_FILE_MAX                                                                              \
	(((size_t)CLAIMS_STATE_COMPACT_FACTOR * CLAIMS_MAX + CLAIMS_STATE_COMPACT_MIN) *                   \
	 (128 + 2 * CPUSET_LIST_MAX / 64))

struct claims_state {
	int fd;            /* the journal, O_APPEND; -1 until compacted, or after a failed write */
	uint32_t reserved; /* every id handed out is below it */
	size_t lines;      /* in the journal */
	size_t live;       /* owner-bound claims it holds */
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

/* --- the pure part: text in, text out ------------------------------------ */

/*
 * The next line of [*p, end) into buf (NUL-terminated, without its
 * newline), advancing *p: 1; 0 at the end or before a last line without
 * its newline; -E2BIG for a line too long, -EBADMSG for one with a NUL.
 */
static int claims_state_line(const char **p, const char *end, char *buf, size_t size)
{
	const char *eol = memchr(*p, '\n', (size_t)(end - *p));
	size_t len;

	if (!eol)
		return 0;
	len = (size_t)(eol - *p);
	if (len >= size)
		return -E2BIG;
	if (memchr(*p, '\0', len))
		return -EBADMSG;
	memcpy(buf, *p, len);
	buf[len] = '\0';
	*p = eol + 1;
	return 1;
}

/* Reads one unsigned decimal field up to max ending in stop (' ', or '\0'
 * for the last). Advances *p. */
static bool claims_state_number(const char **p, uint64_t max, char stop, uint64_t *ret)
{
	const char *s = *p;

	if (!decimal_parse(&s, max, ret) || *s != stop)
		return false;
	*p = stop ? s + 1 : s;
	return true;
}

/* The id of an "end ID" line, 0 when it is not one. */
static uint32_t claims_state_end_id(const char *line)
{
	const char *q = line + strlen("end ");
	uint64_t id;

	if (strncmp(line, "end ", strlen("end ")) != 0 || !claims_state_number(&q, UINT32_MAX, '\0', &id))
		return 0;
	return (uint32_t)id;
}

/* The N of a "next-id N" line, 0 when it is not one. */
static uint32_t claims_state_next_id_of(const char *line)
{
	const char *q = line + strlen("next-id ");
	uint64_t id;

	if (strncmp(line, "next-id ", strlen("next-id ")) != 0 || !claims_state_number(&q, UINT32_MAX, '\0', &id))
		return 0;
	return (uint32_t)id;
}

/* A "claim ..." line into ret. 0 or -EBADMSG. */
static int claims_state_claim_of(const char *line, struct claim *ret)
{
	const char *q = line + strlen("claim "), *manage;
	uint64_t id, pid, start, uid, level, expires;
	char cpus[CPUSET_LIST_MAX], rest[2 * CPUSET_LIST_MAX + 32];
	size_t n = strlen(line), tail = strlen(CLAIMS_STATE_ISOLATED);
	bool isolated = n > tail && strcmp(line + n - tail, CLAIMS_STATE_ISOLATED) == 0;

	if (!claims_state_number(&q, UINT32_MAX, ' ', &id) || !id || !claims_state_number(&q, INT32_MAX, ' ', &pid) ||
	    !pid || !claims_state_number(&q, UINT64_MAX, ' ', &start) ||
	    !claims_state_number(&q, UINT32_MAX, ' ', &uid) || !claims_state_number(&q, LEVEL_DL, ' ', &level) ||
	    level < LEVEL_NORMAL || !claims_state_number(&q, UINT64_MAX, ' ', &expires))
		return -EBADMSG;
	*ret = (struct claim){
		.id = (uint32_t)id,
		.pid = (int32_t)pid,
		.pid_start = start,
		.uid = (uint32_t)uid,
		.level = (uint8_t)level,
		.expires_ms = expires,
		.isolated = isolated,
	};
	/* What follows the numbers, less the isolated mark. */
	n = strlen(q) - (isolated ? tail : 0);
	if (n >= sizeof(rest))
		return -EBADMSG;
	memcpy(rest, q, n);
	rest[n] = '\0';
	q = rest;
	manage = strstr(q, CLAIMS_STATE_MANAGE);
	if (manage && (cpuset_parse(manage + strlen(CLAIMS_STATE_MANAGE), &ret->managed) < 0 ||
		       cpuset_empty(&ret->managed)))
		return -EBADMSG;
	n = manage ? (size_t)(manage - q) : strlen(q);
	if (n >= sizeof(cpus))
		return -EBADMSG;
	memcpy(cpus, q, n);
	cpus[n] = '\0';
	return cpuset_parse(cpus, &ret->cpus) < 0 || cpuset_empty(&ret->cpus) ? -EBADMSG : 0;
}

static int claims_state_fail(struct rtplace_reason *reason, unsigned line, const char *what)
{
	reason_set(reason, "line %u: %s", line, what);
	return -EBADMSG;
}

static int claims_state_cmp_id(const void *a, const void *b)
{
	uint32_t x = ((const struct claim *)a)->id, y = ((const struct claim *)b)->id;

	return x < y ? -1 : x > y;
}

/*
 * The second pass of claims_state_parse(): the claims of the first, sorted
 * by id, lose those an "end" line names. Each may end once, after it
 * began: ids grow, so an end names a claim of an earlier line.
 */
static int claims_state_apply_ends(const char *text, size_t len, struct claim *v, size_t *n,
				   struct rtplace_reason *reason)
{
	const char *p = text, *end = text + len;
	char buf[CLAIMS_STATE_LINE_MAX];
	unsigned line = 0;
	size_t kept = 0;

	qsort(v, *n, sizeof(*v), claims_state_cmp_id);
	for (size_t i = 1; i < *n; i++)
		if (v[i].id == v[i - 1].id)
			return claims_state_fail(reason, 0, "a claim id appears twice");
	while (claims_state_line(&p, end, buf, sizeof(buf)) > 0) {
		uint32_t id = ++line > 2 ? claims_state_end_id(buf) : 0;
		struct claim key = { .id = id }, *cl;

		if (!id)
			continue;
		cl = bsearch(&key, v, *n, sizeof(*v), claims_state_cmp_id);
		if (!cl || !cl->pid)
			return claims_state_fail(reason, line, cl ? "a claim ends twice" : "the end of a claim never begun");
		cl->pid = 0;
	}
	for (size_t i = 0; i < *n; i++)
		if (v[i].pid)
			v[kept++] = v[i];
	*n = kept;
	return 0;
}

int claims_state_parse(const char *text, size_t len, struct claim *ret, size_t max, size_t *ret_n,
		       uint32_t *ret_next_id, struct rtplace_reason *reason)
{
	const char *p = text, *end = text + len;
	char buf[CLAIMS_STATE_LINE_MAX];
	uint32_t next_id = 0;
	unsigned line = 0, ends = 0;
	size_t n = 0;
	int r;

	reason->text[0] = '\0';
	while ((r = claims_state_line(&p, end, buf, sizeof(buf))) != 0) {
		uint32_t id;

		line++;
		if (r < 0)
			return claims_state_fail(reason, line, r == -E2BIG ? "line too long" : "a NUL byte");
		if (line == 1) {
			if (strcmp(buf, CLAIMS_STATE_MAGIC) != 0 && strcmp(buf, CLAIMS_STATE_MAGIC_V3) != 0 &&
			    strcmp(buf, CLAIMS_STATE_MAGIC_V2) != 0 && strcmp(buf, CLAIMS_STATE_MAGIC_V1) != 0)
				return claims_state_fail(reason, line, "not an rtplace claims file (version 1 to 3)");
			continue;
		}
		if ((id = claims_state_next_id_of(buf))) {
			if (id > next_id)
				next_id = id;
			continue;
		}
		if (line == 2)
			return claims_state_fail(reason, line, "expected 'next-id N'");
		if (strncmp(buf, "claim ", strlen("claim ")) == 0) {
			if (n == max)
				return claims_state_fail(reason, line, "too many claims");
			if (claims_state_claim_of(buf, &ret[n]) < 0)
				return claims_state_fail(reason, line,
							 "expected 'claim ID PID START UID LEVEL EXPIRES CPUS [manage CPUS]'");
			n++;
			continue;
		}
		if (claims_state_end_id(buf)) {
			ends++;
			continue;
		}
		return claims_state_fail(reason, line, "unknown line");
	}
	if (line < 2)
		return claims_state_fail(reason, line + 1, "file ends before 'next-id'");
	r = claims_state_apply_ends(text, len, ret, &n, reason);
	if (r < 0)
		return r;
	*ret_n = n;
	*ret_next_id = next_id;
	return 0;
}

uint32_t claims_state_salvage_next_id(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	char buf[CLAIMS_STATE_LINE_MAX];
	uint64_t next = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((eol ? eol : end) - p);
		struct claim cl;
		uint64_t id = 0;

		/* A line too long for any field to be read is skipped whole. */
		if (n < sizeof(buf)) {
			memcpy(buf, p, n);
			buf[n] = '\0';
			if ((id = claims_state_next_id_of(buf)))
				id--;
			else if (!(id = claims_state_end_id(buf)) && strncmp(buf, "claim ", strlen("claim ")) == 0 &&
				 claims_state_claim_of(buf, &cl) == 0)
				id = cl.id;
			if (id && id + 1 > next)
				next = id + 1;
		}
		p = eol ? eol + 1 : end;
	}
	return next > UINT32_MAX ? UINT32_MAX : (uint32_t)next;
}

/* The journal line of claim cl, as snprintf(). */
static int claims_state_format_claim(const struct claim *cl, char *buf, size_t len)
{
	char cpus[CPUSET_LIST_MAX], managed[CPUSET_LIST_MAX] = "";
	bool manage = !cpuset_empty(&cl->managed);

	cpuset_format(&cl->cpus, cpus, sizeof(cpus));
	if (manage)
		cpuset_format(&cl->managed, managed, sizeof(managed));
	return snprintf(buf, len, "claim %" PRIu32 " %" PRId32 " %" PRIu64 " %" PRIu32 " %u %" PRIu64 " %s%s%s%s\n",
			cl->id, cl->pid, cl->pid_start, cl->uid, (unsigned)cl->level, cl->expires_ms, cpus,
			manage ? CLAIMS_STATE_MANAGE : "", managed, cl->isolated ? CLAIMS_STATE_ISOLATED : "");
}

int claims_state_format(const struct claims *c, uint32_t next_id, uint32_t except_id, char *buf, size_t len)
{
	const struct claim *cl;
	size_t used;

	used = (size_t)snprintf(buf, len, CLAIMS_STATE_MAGIC "\nnext-id %" PRIu32 "\n", next_id);
	for (unsigned i = 0; (cl = claims_at(c, i)); i++)
		if (cl->pid && cl->id != except_id)
			used += (size_t)claims_state_format_claim(cl, used < len ? buf + used : NULL,
								  used < len ? len - used : 0);
	return used < len ? (int)used : -ENOSPC;
}

int claims_state_trusted(const struct stat *st, uid_t owner, bool dir, struct rtplace_reason *reason)
{
	const char *what = dir ? "its folder" : "the file";

	/* The folder may be root's when the daemon runs as another user, as
	 * the socket's may (server.c): root can replace anything anyway. */
	if (st->st_uid != owner && !(dir && st->st_uid == 0)) {
		reason_set(reason, "%s is owned by uid %u, not %u", what, (unsigned)st->st_uid, (unsigned)owner);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		reason_set(reason, "%s is writable by %s (mode %04o)", what,
			   st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* --- loading -------------------------------------------------------------- */

/* Opens the folder of path into *ret_dirfd and names the file in it. 0 or -errno. */
static int claims_state_open_dir(const char *path, int *ret_dirfd, const char **ret_base)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else if ((size_t)(slash - path) >= sizeof(dir)) {
		return -ENAMETOOLONG;
	} else {
		/* "/name" lives in "/". */
		memcpy(dir, path, slash > path ? (size_t)(slash - path) : 1);
		dir[slash > path ? slash - path : 1] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_dirfd = fd;
	*ret_base = slash ? slash + 1 : path;
	return 0;
}

/* Reads the whole of fd (size bytes by fstat) into a new buffer. 0 or -errno. */
static int claims_state_read(int fd, size_t size, char **ret, size_t *ret_len)
{
	char *text = malloc(size + 1);
	size_t len = 0;

	if (!text)
		return -ENOMEM;
	while (len < size) {
		ssize_t got = read(fd, text + len, size - len);

		if (got < 0) {
			free(text);
			return -errno;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	*ret = text;
	*ret_len = len;
	return 0;
}

/* Restores the parsed claims whose owner is still the same process. Returns how many. */
static int claims_state_restore(struct claims *c, const struct claim *v, size_t n, uint32_t next_id,
				const char *proc_root)
{
	int restored = 0;

	claims_skip_ids(c, next_id);
	for (size_t i = 0; i < n; i++) {
		struct procfs_stat ps;

		if (procfs_read_stat(proc_root, v[i].pid, 0, &ps) < 0 || ps.start_time != v[i].pid_start)
			continue;
		if (claims_restore(c, &v[i], next_id) == 0)
			restored++;
	}
	return restored;
}

int claims_state_load(struct claims *c, const char *path, uid_t owner, const char *proc_root,
		      struct rtplace_reason *reason)
{
	struct claim *v = NULL;
	char *text = NULL;
	const char *base;
	size_t n = 0, len = 0, max = 1;
	uint32_t next_id;
	struct stat st;
	int dirfd, fd = -1, trust, r;

	reason->text[0] = '\0';
	r = claims_state_open_dir(path, &dirfd, &base);
	if (r < 0)
		return r;
	/* Non-blocking: a FIFO put in its place must not hang the start. A
	 * link is refused, whoever owns it. */
	fd = openat(dirfd, base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP) {
			reason_set(reason, "the file is a symbolic link");
			r = -EPERM;
		}
		goto out;
	}
	if (fstat(dirfd, &st) < 0) {
		r = -errno;
		goto out;
	}
	trust = claims_state_trusted(&st, owner, true, reason);
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (trust == 0)
		trust = claims_state_trusted(&st, owner, false, reason);
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > CLAIMS_STATE_FILE_MAX) {
		if (trust == 0)
			reason_set(reason, "%s", S_ISREG(st.st_mode) ? "too large" : "not a regular file");
		r = trust < 0 ? trust : -EBADMSG;
		goto out;
	}
	r = claims_state_read(fd, (size_t)st.st_size, &text, &len);
	if (r < 0)
		goto out;
	if (trust < 0) {
		/* Nothing of it is restored, but it may be the daemon's own
		 * file made writable since (a chmod, a folder's mode), whose
		 * ids clients may still hold: skip them too, though only so
		 * far that a forged file cannot wrap the ids round to 1. */
		uint32_t past = claims_state_salvage_next_id(text, len);

		claims_skip_ids(c, past < CLAIMS_STATE_UNTRUSTED_IDS ? past : CLAIMS_STATE_UNTRUSTED_IDS);
		r = trust;
		goto out;
	}
	for (const char *q = text; (q = memchr(q, '\n', len - (size_t)(q - text))); q++)
		max++;
	v = calloc(max, sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto out;
	}
	r = claims_state_parse(text, len, v, max, &n, &next_id, reason);
	if (r == -EBADMSG)
		/* Nothing of it is restored, but the ids it names may be held
		 * by clients still: never hand them out again. */
		claims_skip_ids(c, claims_state_salvage_next_id(text, len));
	if (r == 0)
		r = claims_state_restore(c, v, n, next_id, proc_root);
out:
	if (fd >= 0)
		close(fd);
	close(dirfd);
	free(text);
	free(v);
	return r;
}

/* --- the journal ---------------------------------------------------------- */

int claims_state_new(const char *path, struct claims_state **ret)
{
	struct claims_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->fd = -1;
	if ((size_t)snprintf(st->path, sizeof(st->path), "%s", path) >= sizeof(st->path) ||
	    (size_t)snprintf(st->tmp, sizeof(st->tmp), "%s.tmp", path) >= sizeof(st->tmp)) {
		free(st);
		return -ENAMETOOLONG;
	}
	*ret = st;
	return 0;
}

void claims_state_free(struct claims_state *st)
{
	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	free(st);
}

static int claims_state_write(int fd, const char *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, buf + done, len - done);

		if (w < 0)
			return -errno;
		done += (size_t)w;
	}
	return 0;
}

/* Ids up to a block past c's next one: what a journal written now covers. */
static uint32_t claims_state_reserve(const struct claims *c)
{
	uint64_t want = (uint64_t)claims_next_id(c) + CLAIMS_STATE_ID_BLOCK;

	return want > UINT32_MAX ? UINT32_MAX : (uint32_t)want;
}

/* claims_state_compact() leaving out except_id (claims_state_format()). */
static int claims_state_rewrite(struct claims_state *st, const struct claims *c, uint32_t except_id)
{
	uint32_t reserved = claims_state_reserve(c);
	const struct claim *cl;
	size_t len = 4096, live = 0;
	char *buf = NULL;
	int n, fd = -1, r;

	for (;;) {
		char *b = realloc(buf, len);

		if (!b) {
			r = -ENOMEM;
			goto out;
		}
		buf = b;
		n = claims_state_format(c, reserved, except_id, buf, len);
		if (n >= 0)
			break;
		len *= 2;
	}
	/* A fresh file, never one found under the name (a link planted
	 * there would have another file truncated). No fsync: the journal
	 * outlives the daemon, not the machine (claims-state.h). */
	if (unlink(st->tmp) < 0 && errno != ENOENT) {
		r = -errno;
		goto out;
	}
	fd = open(st->tmp, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	r = claims_state_write(fd, buf, (size_t)n);
	if (r == 0 && rename(st->tmp, st->path) < 0)
		r = -errno;
	if (r < 0)
		goto out;
	for (unsigned i = 0; (cl = claims_at(c, i)); i++)
		live += cl->pid && cl->id != except_id;
	if (st->fd >= 0)
		close(st->fd);
	st->fd = fd;
	fd = -1;
	st->reserved = reserved;
	st->live = live;
	st->lines = live + 2;
out:
	if (fd >= 0) {
		close(fd);
		unlink(st->tmp);
	}
	free(buf);
	return r;
}

int claims_state_compact(struct claims_state *st, const struct claims *c)
{
	return claims_state_rewrite(st, c, 0);
}

/*
 * Appends len bytes of lines (nlines of them) to the journal, after which
 * it covers ids below reserved and holds live_delta more claims; or
 * compacts it instead (leaving out except_id) when that is due or a write
 * failed before: a failed write may have left part of a line, which
 * nothing may follow. 0 or -errno.
 */
static int claims_state_append(struct claims_state *st, const struct claims *c, const char *buf, size_t len,
			       size_t nlines, uint32_t reserved, int live_delta, uint32_t except_id)
{
	int r;

	if (st->fd < 0 || st->lines + nlines > CLAIMS_STATE_COMPACT_FACTOR * st->live + CLAIMS_STATE_COMPACT_MIN)
		return claims_state_rewrite(st, c, except_id);
	r = claims_state_write(st->fd, buf, len);
	if (r < 0) {
		close(st->fd);
		st->fd = -1;
		return r;
	}
	st->lines += nlines;
	st->reserved = reserved;
	st->live = (size_t)((ssize_t)st->live + live_delta);
	return 0;
}

int claims_state_added(struct claims_state *st, const struct claims *c, const struct claim *cl)
{
	char buf[CLAIMS_STATE_LINE_MAX + 32];
	uint32_t reserved = st->reserved;
	size_t len = 0, nlines = 0;

	if (claims_next_id(c) > st->reserved) {
		reserved = claims_state_reserve(c);
		len += (size_t)snprintf(buf, sizeof(buf), "next-id %" PRIu32 "\n", reserved);
		nlines++;
	}
	if (cl->pid) {
		len += (size_t)claims_state_format_claim(cl, buf + len, sizeof(buf) - len);
		nlines++;
	}
	return nlines ? claims_state_append(st, c, buf, len, nlines, reserved, cl->pid != 0, 0) : 0;
}

int claims_state_ended(struct claims_state *st, const struct claims *c, const struct claim *cl)
{
	char buf[32];
	int len;

	if (!cl->pid)
		return 0;
	len = snprintf(buf, sizeof(buf), "end %" PRIu32 "\n", cl->id);
	return claims_state_append(st, c, buf, (size_t)len, 1, st->reserved, -1, cl->id);
}
