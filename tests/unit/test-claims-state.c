/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the claims state file: the journal's text (replay, torn
 * tail, corruption, the ids a corrupt file still tells), whom it is
 * trusted from, and its writes (append, compaction, reload). No root
 * needed; the file owned by another user is tried when run as root. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "claims-state.h"
#include "claims.h"
#include "levels.h"
#include "procfs.h"
#include "testlib.h"

static char tmpdir[64];

static struct rtplace_cpumask cpus_of(const char *list)
{
	struct rtplace_cpumask s;

	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

/* A claim by connection client of uid, tied to pid (0: none). */
static int add(struct claims *c, uint32_t client, int32_t pid, uint32_t uid, uint32_t level, const char *cpus,
	       uint64_t lease, uint32_t *id)
{
	struct claim t = {
		.client = client, .pid = pid, .uid = uid, .level = (uint8_t)level, .cpus = cpus_of(cpus),
	};

	return claims_add(c, &t, 10, lease, id);
}

static int parse(const char *text, struct claim *v, size_t max, size_t *n, uint32_t *next)
{
	struct rtplace_reason err;

	return claims_state_parse(text, strlen(text), v, max, n, next, &err);
}

static void test_state_round_trip(void **state)
{
	struct claims *c, *d;
	struct claim v[4];
	char buf[1024];
	struct rtplace_reason err;
	size_t n;
	uint32_t next, id1, id2, id3;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(add(c, 1, 4242, 65534, LEVEL_NORMAL, "1-2", 0, &id1), 0);
	assert_int_equal(add(c, 1, 0, 65534, LEVEL_RT1, "3", 0, &id2), 0); /* not saved */
	/* A MANAGE claim keeps where its threads may be pushed, an isolated
	 * one that its CPUs are isolated. */
	assert_int_equal(claims_add(c,
				    &(struct claim){ .client = 2, .pid = 4243, .level = LEVEL_DL, .cpus = cpus_of("4"),
						     .managed = cpus_of("0-1,4-7"), .isolated = true },
				    10, 90, &id3),
			 0);
	assert_int_equal(claims_state_format(c, 77, 0, buf, 10), -ENOSPC);
	assert_true(claims_state_format(c, 77, 0, buf, sizeof(buf)) > 0);
	assert_int_equal(claims_state_parse(buf, strlen(buf), v, 4, &n, &next, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(next, 77);
	assert_int_equal(v[0].pid + v[1].pid, 4242 + 4243);
	for (size_t i = 0; i < n; i++) {
		const struct claim *o = claims_find(c, v[i].id);

		assert_non_null(o);
		assert_int_equal(v[i].pid, o->pid);
		assert_int_equal(v[i].pid_start, o->pid_start);
		assert_int_equal(v[i].uid, o->uid);
		assert_int_equal(v[i].level, o->level);
		assert_int_equal(v[i].expires_ms, o->expires_ms);
		assert_true(cpuset_equal(&v[i].cpus, &o->cpus));
		assert_true(cpuset_equal(&v[i].managed, &o->managed));
		assert_int_equal(v[i].isolated, o->isolated);
	}
	assert_non_null(strstr(buf, " 4 manage 0-1,4-7 isolated\n"));
	/* The claim whose end is being written is left out. */
	assert_true(claims_state_format(c, 77, id1, buf, sizeof(buf)) > 0);
	assert_int_equal(claims_state_parse(buf, strlen(buf), v, 4, &n, &next, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].id, id3);

	/* Restored claims keep their ids; new ones never reuse an id. */
	assert_int_equal(claims_new(8, &d), 0);
	assert_int_equal(claims_restore(d, &v[0], next), 0);
	assert_int_equal(claims_restore(d, &v[0], next), -EEXIST);
	assert_int_equal(add(d, 5, 0, 0, LEVEL_RT1, "6", 0, &id2), 0);
	assert_int_equal(id2, 77);
	assert_int_equal(claims_levels(d)[4], LEVEL_DL);
	claims_free(d);
	claims_free(c);
}

/* A journal replays to the claims alive at its end, whatever order its
 * ids came in; a last line cut short is a write the daemon died in. */
static void test_journal_replay(void **state)
{
	struct claim v[8];
	size_t n;
	uint32_t next;

	assert_int_equal(parse("rtplace-claims 2\nnext-id 1025\n"
			       "claim 7 100 1 0 2 0 1\n"
			       "claim 3 101 1 0 2 0 2\n"
			       "end 7\n"
			       "next-id 2049\n"
			       "claim 1500 102 1 0 2 0 3\n"
			       "claim 1501 103 1 0 2 0 4",
			       v, 8, &n, &next),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(next, 2049);
	assert_int_equal(v[0].id + v[1].id, 3 + 1500);
	/* Version 1 (a snapshot without ends) still loads. */
	assert_int_equal(parse("rtplace-claims 1\nnext-id 5\nclaim 1 2 3 4 50 0 1\n", v, 8, &n, &next), 0);
	assert_int_equal(n, 1);
	assert_int_equal(next, 5);
}

static void test_state_corrupt_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"rtplace-claims 5\nnext-id 5\n",
		"rtplace-claims 2\n",
		"rtplace-claims 2\nnext-id 0\n",
		"rtplace-claims 2\nnext-id 99999999999\n",
		"rtplace-claims 2\nclaim 1 2 3 4 50 0 1\n",              /* no next-id first */
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 50 0\n",     /* no CPUs */
		"rtplace-claims 2\nnext-id 5\nclaim 1 0 3 4 50 0 1\n",   /* pid 0 */
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 1 0 1\n",    /* idle */
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 103 0 1\n",  /* past dl */
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 50 0 1-x\n",
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 -3 4 50 0 1\n",
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 50 0 1\nclaim 1 2\n",
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 50 0 1\nclaim 1 2 3 4 50 0 1\n", /* twice */
		"rtplace-claims 2\nnext-id 5\nend 1\n",                                       /* never begun */
		"rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 50 0 1\nend 1\nend 1\n",          /* ended twice */
		"rtplace-claims 2\nnext-id 5\nend x\n",
		"rtplace-claims 2\nnext-id 5\nwhat\n",
		"rtplace-claims 3\nnext-id 5\nclaim 1 2 3 4 50 0 1 manage \n",   /* no CPUs to push to */
		"rtplace-claims 3\nnext-id 5\nclaim 1 2 3 4 50 0 1 manage x\n",
		"rtplace-claims 3\nnext-id 5\nclaim 1 2 3 4 50 0 manage 1\n",  /* no CPUs claimed */
		"rtplace-claims 3\nnext-id 5\nclaim 1 2 3 4 50 0 1 managed 1\n",
		"rtplace-claims 4\nnext-id 5\nclaim 1 2 3 4 50 0 isolated\n", /* no CPUs claimed */
		"rtplace-claims 4\nnext-id 5\nclaim 1 2 3 4 50 0 1 isolatedx\n",
	};
	static const char nul[] = "rtplace-claims 2\nnext-id 5\nclaim 1 2 3 4 50 0 1\0\n";
	struct claim v[4];
	struct rtplace_reason err;
	size_t n;
	uint32_t next;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(claims_state_parse(bad[i], strlen(bad[i]), v, 4, &n, &next, &err), -EBADMSG);
		assert_true(strncmp(err.text, "line ", 5) == 0);
	}
	assert_int_equal(claims_state_parse(nul, sizeof(nul) - 1, v, 4, &n, &next, &err), -EBADMSG);
	assert_non_null(strstr(err.text, "NUL"));
}

/* A corrupt file still tells which ids were handed out. */
static void test_salvage_next_id(void **state)
{
	static const struct {
		const char *text;
		uint32_t want;
	} cases[] = {
		{ "", 0 },
		{ "\x01\x02garbage", 0 },
		{ "rtplace-claims 2\nnext-id 9\nclaim 3 x\n", 9 },
		{ "rtplace-claims 2\nnext-id 9\nclaim 30 2 3 4 50 0 1\nwhat\n", 31 },
		{ "rtplace-claims 2\nnext-id 9\njunk\nend 4000", 4001 },
		{ "next-id 4294967295\n", 4294967295u },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(claims_state_salvage_next_id(cases[i].text, strlen(cases[i].text)), cases[i].want);
}

static void test_trust(void **state)
{
	struct rtplace_reason err;
	struct stat st = { .st_uid = 0, .st_mode = S_IFREG | 0600 };

	assert_int_equal(claims_state_trusted(&st, 0, false, &err), 0);
	st.st_mode = S_IFREG | 0644;
	assert_int_equal(claims_state_trusted(&st, 0, false, &err), 0);
	st.st_mode = S_IFREG | 0666;
	assert_int_equal(claims_state_trusted(&st, 0, false, &err), -EPERM);
	assert_string_equal(err.text, "the file is writable by others (mode 0666)");
	st.st_mode = S_IFREG | 0620;
	assert_int_equal(claims_state_trusted(&st, 0, false, &err), -EPERM);
	st = (struct stat){ .st_uid = 65534, .st_mode = S_IFREG | 0600 };
	assert_int_equal(claims_state_trusted(&st, 0, false, &err), -EPERM);
	assert_string_equal(err.text, "the file is owned by uid 65534, not 0");
	st = (struct stat){ .st_uid = 0, .st_mode = S_IFDIR | 01777 };
	assert_int_equal(claims_state_trusted(&st, 0, true, &err), -EPERM);
	assert_string_equal(err.text, "its folder is writable by others (mode 1777)");
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

/* A claim is restored only when its owner is the same
 * process; a corrupt file restores nothing, yet its ids stay used. */
static void test_load_checks_the_owner(void **state)
{
	struct claims *c, *d;
	struct claims_state *st;
	char path[128];
	struct rtplace_reason err;
	struct procfs_stat ps;
	pid_t dead;
	uint32_t mine, gone, next;
	struct claim t = { .client = 1, .uid = 0, .level = LEVEL_RT1, .cpus = cpus_of("1") };

	snprintf(path, sizeof(path), "%s/owner.claims", tmpdir);
	assert_int_equal(procfs_read_stat("/proc", getpid(), 0, &ps), 0);
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(claims_state_new(path, &st), 0);
	assert_int_equal(claims_state_compact(st, c), 0);
	t.pid = getpid();
	t.pid_start = ps.start_time;
	assert_int_equal(claims_add(c, &t, 0, 0, &mine), 0);
	assert_int_equal(claims_state_added(st, c, claims_find(c, mine)), 0);
	t.pid_start = ps.start_time + 1; /* the pid now names another process */
	assert_int_equal(claims_add(c, &t, 0, 0, &gone), 0);
	assert_int_equal(claims_state_added(st, c, claims_find(c, gone)), 0);
	t.pid = dead;
	assert_int_equal(claims_add(c, &t, 0, 0, &gone), 0);
	assert_int_equal(claims_state_added(st, c, claims_find(c, gone)), 0);
	claims_state_free(st);

	assert_int_equal(claims_new(8, &d), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), 1);
	assert_non_null(claims_find(d, mine));
	assert_int_equal(claims_count(d), 1);
	assert_int_equal(add(d, 1, 0, 0, LEVEL_RT1, "2", 0, &next), 0);
	assert_true(next > gone);
	claims_free(d);
	claims_free(c);

	/* Corrupt: reported, nothing restored, and ids go on past those it
	 * names rather than from 1. */
	write_text(path, "rtplace-claims 2\nnext-id 7\nclaim 900 2 3 4 50 0 1\nclaim 1 2 3\n", 0600);
	assert_int_equal(claims_new(8, &d), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), -EBADMSG);
	assert_non_null(strstr(err.text, "line 4"));
	assert_int_equal(claims_count(d), 0);
	assert_int_equal(add(d, 1, 0, 0, LEVEL_RT1, "2", 0, &next), 0);
	assert_int_equal(next, 901);
	claims_free(d);

	/* A FIFO, a link, absent: reported, nothing restored, no hang. */
	assert_int_equal(claims_new(8, &d), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), -EBADMSG);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/dev/zero", path), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), -EPERM);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), -ENOENT);
	claims_free(d);
}

/* A file another user wrote, or may write, or in a folder
 * others may write, is refused, whatever it holds. */
static void test_load_refuses_foreign_files(void **state)
{
	char dir[128], path[160], text[256];
	struct rtplace_reason err;
	struct claims *d;
	struct procfs_stat ps;

	assert_int_equal(procfs_read_stat("/proc", getpid(), 0, &ps), 0);
	snprintf(text, sizeof(text), "rtplace-claims 2\nnext-id 5\nclaim 1 %d %llu 0 50 0 0-7\n", (int)getpid(),
		 (unsigned long long)ps.start_time);
	snprintf(dir, sizeof(dir), "%s/foreign", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/rtplaced.sock.claims", dir);
	assert_int_equal(claims_new(8, &d), 0);

	write_text(path, text, 0600);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), 1);
	claims_free(d);
	assert_int_equal(claims_new(8, &d), 0);

	write_text(path, text, 0666);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), -EPERM);
	assert_non_null(strstr(err.text, "writable by others"));
	write_text(path, text, 0600);
	assert_int_equal(claims_state_load(d, path, geteuid() + 1, "/proc", &err), -EPERM);
	assert_non_null(strstr(err.text, "owned by uid"));
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(claims_state_load(d, path, 0, "/proc", &err), -EPERM);
		assert_string_equal(err.text, "the file is owned by uid 65534, not 0");
		assert_int_equal(chown(path, 0, 0), 0);
	}
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), -EPERM);
	assert_string_equal(err.text, "its folder is writable by others (mode 0777)");
	assert_int_equal(claims_count(d), 0);
	claims_free(d);
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* A claim/release loop keeps the journal bounded (compaction), and what is
 * alive at any point is what a reload finds. */
static void test_journal_compacts(void **state)
{
	struct claims *c, *d;
	struct claims_state *st;
	struct rtplace_reason err;
	struct procfs_stat ps;
	char path[128];
	uint32_t kept, id = 0;
	off_t max = 0;
	struct claim t = { .client = 1, .uid = 0, .level = LEVEL_RT1, .cpus = cpus_of("1") };

	snprintf(path, sizeof(path), "%s/loop.claims", tmpdir);
	assert_int_equal(procfs_read_stat("/proc", getpid(), 0, &ps), 0);
	t.pid = getpid();
	t.pid_start = ps.start_time;
	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(claims_state_new(path, &st), 0);
	assert_int_equal(claims_state_compact(st, c), 0);
	assert_int_equal(claims_add(c, &t, 0, 0, &kept), 0);
	assert_int_equal(claims_state_added(st, c, claims_find(c, kept)), 0);
	for (int i = 0; i < 20000; i++) {
		struct claim gone;

		assert_int_equal(claims_add(c, &t, 0, 0, &id), 0);
		assert_int_equal(claims_state_added(st, c, claims_find(c, id)), 0);
		if (i % 2) {
			/* As a lease or an owner's exit: recorded while in the table. */
			assert_int_equal(claims_state_ended(st, c, claims_find(c, id)), 0);
			assert_int_equal(claims_release(c, id), 0);
		} else {
			/* As a RELEASE: recorded once gone. */
			gone = *claims_find(c, id);
			assert_int_equal(claims_release(c, id), 0);
			assert_int_equal(claims_state_ended(st, c, &gone), 0);
		}
		if (file_size(path) > max)
			max = file_size(path);
	}
	/* Compaction at CLAIMS_STATE_COMPACT_MIN lines of about 30 bytes. */
	assert_true(max < CLAIMS_STATE_COMPACT_MIN * 40);
	claims_state_free(st);
	assert_int_equal(claims_new(8, &d), 0);
	assert_int_equal(claims_state_load(d, path, geteuid(), "/proc", &err), 1);
	assert_non_null(claims_find(d, kept));
	assert_true(claims_next_id(d) > id);
	claims_free(d);
	claims_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_journal_replay),
		cmocka_unit_test(test_state_corrupt_refused),
		cmocka_unit_test(test_salvage_next_id),
		cmocka_unit_test(test_trust),
		cmocka_unit_test(test_load_checks_the_owner),
		cmocka_unit_test(test_load_refuses_foreign_files),
		cmocka_unit_test(test_journal_compacts),
	};

	if (test_tmpdir("test-claims-state", 0700, tmpdir, sizeof(tmpdir)) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
