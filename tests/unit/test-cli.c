/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the helpers rtplacectl and rtplace-run share
 * (client/cli.c): one exit status per library error, whichever tool
 * exits with it; and of rtplacectl's option tables (client/ctl-help.c):
 * every option a command's parser accepts is in its --help, with its
 * value, and in rtplacectl(1).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <cmocka.h>

#include "cli.h"
#include "ctl.h"

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

/* What f printed, NUL-terminated; the caller frees it. */
static char *help_text(const struct ctl_command *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (cmd)
		ctl_command_help(f, cmd);
	else
		ctl_help(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* opt's label as the help prints it ("-c, --cpu-list LIST"), in text. */
static void assert_option_listed(const char *text, const struct ctl_option *o, const char *where)
{
	char label[128];

	if (o->letter)
		snprintf(label, sizeof(label), "  -%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	else
		snprintf(label, sizeof(label), "      --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	if (!strstr(text, label))
		fail_msg("%s: the help lacks \"%s\":\n%s", where, label, text);
	assert_true(o->help && strlen(o->help) > 10);
}

/* The parser's getopt table is what the help lists: same names, values,
 * short options, and no more. */
static void test_help_lists_parser_options(void **state)
{
	(void)state;
	for (size_t i = 0; i < CTL_CMD_COUNT; i++) {
		const struct ctl_command *cmd = &ctl_commands[i];
		struct ctl_getopt g;
		char *text = help_text(cmd);
		size_t n = 0;

		assert_ptr_equal(ctl_command_find(cmd->name), cmd);
		assert_int_equal(ctl_getopt_init(&g, "", cmd->options, ctl_common_options), 0);
		for (const struct option *lo = g.longs; lo->name; lo++, n++) {
			const struct ctl_option *o = NULL;

			for (const struct ctl_option *t = cmd->options; !o && t->name; t++)
				if (strcmp(t->name, lo->name) == 0)
					o = t;
			for (const struct ctl_option *t = ctl_common_options; !o && t->name; t++)
				if (strcmp(t->name, lo->name) == 0)
					o = t;
			assert_non_null(o);
			assert_int_equal(lo->has_arg, o->arg ? required_argument : no_argument);
			assert_option_listed(text, o, cmd->name);
			/* A short option the parser takes is one the help shows. */
			if (lo->val < 0x100 && strchr(g.shorts + 1, lo->val))
				assert_true(o->letter);
		}
		assert_true(n > 0);
		assert_non_null(strstr(text, "usage: rtplacectl "));
		free(text);
	}
}

static void test_global_help(void **state)
{
	struct ctl_getopt g;
	char *text = help_text(NULL);

	(void)state;
	assert_int_equal(ctl_getopt_init(&g, "+", ctl_global_options, ctl_common_options), 0);
	assert_int_equal(g.shorts[0], '+');
	assert_non_null(strchr(g.shorts, 'V'));
	for (const struct ctl_option *o = ctl_global_options; o->name; o++)
		assert_option_listed(text, o, "rtplacectl");
	for (const struct ctl_option *o = ctl_common_options; o->name; o++)
		assert_option_listed(text, o, "rtplacectl");
	for (size_t i = 0; i < CTL_CMD_COUNT; i++) {
		char line[64];

		snprintf(line, sizeof(line), "\n  %-9s", ctl_commands[i].name);
		if (!strstr(text, line))
			fail_msg("rtplacectl --help lacks the command %s", ctl_commands[i].name);
	}
	free(text);
}

/* Nothing the help prints is wider than an 80-column terminal. */
static void test_help_width(void **state)
{
	(void)state;
	for (size_t i = 0; i <= CTL_CMD_COUNT; i++) {
		char *text = help_text(i < CTL_CMD_COUNT ? &ctl_commands[i] : NULL);

		for (char *line = text, *end; *line; line = end + (*end != '\0')) {
			end = line + strcspn(line, "\n");
			if (end - line > 79)
				fail_msg("a help line of %d columns: %.*s", (int)(end - line), (int)(end - line), line);
		}
		free(text);
	}
}

/* Every option of every command, as roff writes it ("\-\-cpu\-list"),
 * is in the manual page. */
static void test_man_page_lists_options(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[4096], *man = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/man/rtplacectl.1", top ? top : ".");
	f = fopen(path, "r");
	if (!f)
		skip();
	assert_int_equal(getdelim(&man, &len, '\0', f) > 0, 1);
	fclose(f);
	for (size_t i = 0; i <= CTL_CMD_COUNT + 1; i++) {
		const struct ctl_option *opts = i < CTL_CMD_COUNT ? ctl_commands[i].options
						: i == CTL_CMD_COUNT ? ctl_global_options
								     : ctl_common_options;

		for (const struct ctl_option *o = opts; o->name; o++) {
			char roff[128] = "\\-\\-";
			size_t k = strlen(roff);

			for (const char *p = o->name; *p && k + 3 < sizeof(roff); p++) {
				if (*p == '-')
					roff[k++] = '\\';
				roff[k++] = *p;
			}
			roff[k] = '\0';
			if (!strstr(man, roff))
				fail_msg("man/rtplacectl.1 lacks %s (of %s)", roff, i < CTL_CMD_COUNT ? ctl_commands[i].name : "rtplacectl");
		}
	}
	free(man);
}

/* chrt's habits point to rtplace's options; an option no habit explains
 * gets no hint, nor does a longer word that only starts like one. */
static void test_option_hint(void **state)
{
	(void)state;
	assert_string_equal(cli_option_hint("-p"), "; the RT priority is --prio P");
	assert_string_equal(cli_option_hint("--priority"), "; the RT priority is --prio P");
	assert_string_equal(cli_option_hint("--priority=5"), "; the RT priority is --prio P");
	assert_string_equal(cli_option_hint("-f"), "; SCHED_FIFO is --policy fifo (the default)");
	assert_string_equal(cli_option_hint("--rr"), "; SCHED_RR is --policy rr");
	assert_string_equal(cli_option_hint("--prioritize"), "");
	assert_string_equal(cli_option_hint("-x"), "");
	assert_string_equal(cli_option_hint(""), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_help_lists_parser_options),
		cmocka_unit_test(test_global_help),
		cmocka_unit_test(test_help_width),
		cmocka_unit_test(test_man_page_lists_options),
		cmocka_unit_test(test_option_hint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
