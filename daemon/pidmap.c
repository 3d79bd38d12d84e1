/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Client-named pids as the daemon's, and the daemon's as a client sees them (pidmap.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidmap.h"
#include "procfs.h"
#include "rtplace-proto.h"

#define PIDMAP_REFUSAL "bare pid from another PID namespace: use librtplace >= " PACKAGE_VERSION
/* Its readers are clients that send bare pids, of any protocol version. */
_Static_assert(sizeof(PIDMAP_REFUSAL) <= RTPLACE_REASON_V2_MAX, "the refusal reaches an older client whole");

bool pidmap_same_pidns(const char *root, pid_t pid)
{
	struct procfs_ns mine, theirs;
	struct procfs_nspid a, b;
	int r;

	if (pid <= 0)
		return false;
	r = procfs_pidns(root, getpid(), &mine);
	if (r == 0)
		r = procfs_pidns(root, pid, &theirs);
	if (r == 0)
		return mine.dev == theirs.dev && mine.ino == theirs.ino;
	if (r != -EACCES && r != -EPERM)
		return false;
	return procfs_read_nspid(root, getpid(), 0, &a) == 0 && procfs_read_nspid(root, pid, 0, &b) == 0 &&
	       a.n == 1 && b.n == 1;
}

int pidmap_level(const char *root, pid_t pid, int pidfd)
{
	struct procfs_nspid ns;
	int r;

	if (pidfd >= 0)
		r = procfs_read_pidfd(root, pidfd, &ns);
	else
		r = pid > 0 ? procfs_read_nspid(root, pid, 0, &ns) : -ESRCH;
	return r < 0 ? PIDMAP_LEVEL_UNKNOWN : (int)ns.n - 1;
}

/* The depth of the peer's namespace below the daemon's: the NSpid entry
 * at which a process it can see carries the number it knows. */
static int pidmap_peer_level(const struct pidmap_peer *peer, unsigned *ret, struct rtplace_reason *reason)
{
	if (peer->same_pidns) {
		*ret = 0;
		return 0;
	}
	if (peer->level < 0) {
		reason_set(reason, "cannot read the requester's PID namespace");
		return -ESRCH;
	}
	*ret = (unsigned)peer->level;
	return 0;
}

/* The process behind pidfd, as the proc tree names it in every namespace. */
static int pidmap_read_pidfd(const char *root, int pidfd, struct procfs_nspid *ret, struct rtplace_reason *reason)
{
	int r = procfs_read_pidfd(root, pidfd, ret);

	switch (r) {
	case 0:
		return 0;
	case -EBADF:
		reason_set(reason, "the descriptor sent is not a pidfd");
		return r;
	case -ESRCH:
		reason_set(reason, "the pidfd's process has exited");
		return r;
	case -EXDEV:
		reason_set(reason, "the pidfd's process is outside the daemon's PID namespace");
		return r;
	default:
		reason_set(reason, "cannot read the pidfd: %s", strerror(-r));
		return r;
	}
}

int pidmap_process(const char *root, const struct pidmap_peer *peer, pid_t named, int pidfd, pid_t *ret,
		   struct rtplace_reason *reason)
{
	struct procfs_nspid ns;
	unsigned level = 0;
	int r;

	if (peer->same_pidns) {
		*ret = named;
		return 0;
	}
	if (pidfd < 0) {
		reason_set(reason, "%s", PIDMAP_REFUSAL);
		return -EXDEV;
	}
	r = pidmap_read_pidfd(root, pidfd, &ns, reason);
	if (r == 0)
		r = pidmap_peer_level(peer, &level, reason);
	if (r < 0)
		return r;
	if (level >= ns.n || ns.pids[level] != named) {
		reason_set(reason, "pid %d is not the process of the pidfd sent", (int)named);
		return -EINVAL;
	}
	*ret = ns.pids[0];
	return 0;
}

int pidmap_thread(const char *root, const struct pidmap_peer *peer, pid_t named, int pidfd, pid_t *ret,
		  struct rtplace_reason *reason)
{
	struct procfs_nspid ns;
	unsigned level = 0;
	int r;

	if (peer->same_pidns || pidfd < 0)
		return pidmap_process(root, peer, named, pidfd, ret, reason);
	r = pidmap_read_pidfd(root, pidfd, &ns, reason);
	if (r == 0)
		r = pidmap_peer_level(peer, &level, reason);
	if (r < 0)
		return r;
	if (level >= ns.n) {
		reason_set(reason, "the pidfd's process is outside the requester's namespace");
		return -EINVAL;
	}
	/* The pidfd names the thread itself: a process's main thread, or a
	 * thread pidfd (PIDFD_THREAD, Linux 6.9). Otherwise one of its
	 * process's threads carries the number; threads share their
	 * process's namespaces, so the level is the same. */
	if (ns.pids[level] == named) {
		*ret = ns.pids[0];
		return 0;
	}
	r = procfs_find_thread_nspid(root, ns.pids[0], level, named, ret);
	if (r < 0)
		reason_set(reason, "thread %d is not a thread of the pidfd's process", (int)named);
	return r;
}

void pidmap_view_of(const char *root, const struct pidmap_peer *peer, pid_t pid, int pidfd,
		    struct pidmap_view *ret)
{
	struct procfs_nspid alive;

	*ret = (struct pidmap_view){ .root = root, .same_pidns = peer->same_pidns, .level = peer->level };
	if (peer->same_pidns || peer->level < 0)
		return;
	/* The pidfd, read after the link, proves the number still named the
	 * peer when the link was read. */
	if (procfs_pidns(root, pid, &ret->ns) < 0 || (pidfd >= 0 && procfs_read_pidfd(root, pidfd, &alive) < 0))
		ret->level = PIDMAP_LEVEL_UNKNOWN;
}

pid_t pidmap_nspid_at(const struct procfs_nspid *ns, int level)
{
	return level >= 0 && (unsigned)level < ns->n ? ns->pids[level] : 0;
}

static bool pidmap_nspid_equal(const struct procfs_nspid *a, const struct procfs_nspid *b)
{
	return a->n == b->n && memcmp(a->pids, b->pids, a->n * sizeof(a->pids[0])) == 0;
}

int pidmap_show(const struct pidmap_view *v, pid_t pid, pid_t *ret)
{
	struct procfs_nspid ns, again;
	struct procfs_ns at;
	pid_t shown;
	int r;

	*ret = v->same_pidns ? pid : 0;
	if (v->same_pidns || pid <= 0 || v->level < 0)
		return 0;
	r = procfs_read_nspid(v->root, pid, 0, &ns);
	if (r < 0)
		return r;
	shown = pidmap_nspid_at(&ns, v->level);
	if (!shown)
		return 0;
	r = procfs_pidns_up(v->root, pid, ns.n - 1 - (unsigned)v->level, &at);
	/* Read again: had pid been taken by another task meanwhile, the
	 * namespace read would be the newcomer's. */
	if (r == 0)
		r = procfs_read_nspid(v->root, pid, 0, &again);
	if (r == 0 && !pidmap_nspid_equal(&ns, &again))
		r = -ESRCH;
	if (r < 0)
		return r;
	if (at.dev == v->ns.dev && at.ino == v->ns.ino)
		*ret = shown;
	return 0;
}

/* Whether a pid follows text[i]: "pid " or "thread " ending there, after
 * the start or a character that is no part of a word. */
static bool pidmap_pid_word_ends(const char *text, size_t i)
{
	static const char *const words[] = { "pid ", "thread " };

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t n = strlen(words[w]);

		if (i + 1 >= n && strncmp(text + i + 1 - n, words[w], n) == 0 &&
		    (i + 1 == n || !isalnum((unsigned char)text[i - n])))
			return true;
	}
	return false;
}

void pidmap_text_show(struct rtplace_reason *reason, pidmap_show_fn *show, void *ctx)
{
	const char *text = reason->text;
	char out[RTPLACE_REASON_MAX];
	size_t o = 0, i = 0, cap = sizeof(out);

	while (text[i] && o + 1 < cap) {
		if (i > 0 && pidmap_pid_word_ends(text, i - 1) && isdigit((unsigned char)text[i])) {
			char *end;
			long pid = strtol(text + i, &end, 10);
			int n;

			n = snprintf(out + o, cap - o, "%d",
				     (int)(pid > 0 && pid <= INT32_MAX ? show((pid_t)pid, ctx) : 0));
			o = n < 0 ? o : o + (size_t)n < cap ? o + (size_t)n : cap - 1;
			i = (size_t)(end - text);
			continue;
		}
		out[o++] = text[i++];
	}
	out[o] = '\0';
	memcpy(reason->text, out, o + 1);
}

struct pidmap_reason_ctx {
	const struct pidmap_view *view;
	pid_t known, known_as;
};

static pid_t pidmap_reason_pid(pid_t pid, void *ctx)
{
	const struct pidmap_reason_ctx *c = ctx;
	pid_t shown;

	if (c->known && pid == c->known)
		return c->known_as;
	pidmap_show(c->view, pid, &shown);
	return shown;
}

void pidmap_reason_show(const struct pidmap_view *v, struct rtplace_reason *reason, pid_t known, pid_t known_as)
{
	struct pidmap_reason_ctx c = { .view = v, .known = known, .known_as = known_as };

	if (!v->same_pidns)
		pidmap_text_show(reason, pidmap_reason_pid, &c);
}
