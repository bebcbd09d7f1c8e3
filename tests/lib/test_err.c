/* tests for lib/err.c: the first error wins, wrapping, and values quoted for messages */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"

static void test_quote(void **state)
{
	static const struct { const char *name, *in, *want; } cases[] = {
		{ "plain", "always", "'always'" },
		{ "empty", "", "''" },
		{ "newline and tab", "a\nb\tc", "'a\\nb\\tc'" },
		{ "escape and delete", "a\x1b[2Jb\x7f", "'a\\x1b[2Jb\\x7f'" },
		{ "quote and backslash", "it's a\\b", "'it\\'s a\\\\b'" },
		{ "80 bytes shown whole", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		  "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'" },
		{ "81 bytes cut", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy",
		  "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (81 bytes)" },
		{ "UTF-8 not cut inside a character",
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xc3\xa9x",
		  "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (82 bytes)" },
	};
	char buf[ERR_QUOTE_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(err_quote(buf, sizeof(buf), cases[i].in), cases[i].want))
			fail_msg("case '%s': got %s, want %s", cases[i].name, buf, cases[i].want);
	assert_string_equal(err_quote(buf, sizeof(buf), NULL), "''");
}

/* a 100 KB value of control characters keeps the reason, the option and the length in the wrapped message */
static void test_long_value(void **state)
{
	struct err e = ERR_INIT;
	size_t n = 100 * 1024;
	char *v = malloc(n + 1);

	(void)state;
	assert_non_null(v);
	memset(v, '\x01', n);
	v[n] = '\0';
	err_set(&e, -EINVAL, "not a run count from 1 to 100: %s", err_q(v));
	err_wrap(&e, "run: --reps");
	assert_non_null(strstr(e.msg, "run: --reps: not a run count from 1 to 100: '\\x01\\x01"));
	assert_non_null(strstr(e.msg, "... (102400 bytes)"));
	assert_null(strchr(e.msg, '\n'));
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_long_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
