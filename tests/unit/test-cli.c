/*
 * Unit tests of the helpers rtplacectl and rtplace-run share
 * (client/cli.c): one exit status per library error, whichever tool
 * exits with it.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sysexits.h>
#include <cmocka.h>

#include "cli.h"

static void test_exit_status(void **state)
{
	static const struct {
		int r, status;
	} cases[] = {
		{ -ECONNREFUSED, EX_UNAVAILABLE }, { -EOPNOTSUPP, EX_UNAVAILABLE },
		{ -EPERM, EX_NOPERM },             { -EACCES, EX_NOPERM },
		{ -EINVAL, EX_DATAERR },           { -ESRCH, EX_DATAERR },
		{ -EXDEV, EX_DATAERR },            { -EBADF, EX_DATAERR },
		{ -EBUSY, EX_TEMPFAIL },           { -EUSERS, EX_TEMPFAIL },
		{ -ETIMEDOUT, EX_TEMPFAIL },       { -EPROTO, EX_PROTOCOL },
		{ -ENOMEM, EX_OSERR },             { -EIO, EX_SOFTWARE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(cli_exit_status(cases[i].r), cases[i].status);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
