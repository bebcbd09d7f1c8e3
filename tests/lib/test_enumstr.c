/*
 * tests for lib/enumstr.h: an enum tied to its strings by ENUM_IMPL, both
 * ways, as tables: every value's name, names out of range, strings that are
 * and are not one of them (case, prefixes, blanks, NULL), *out left alone on
 * a refusal, and the round trip. That a wrong count fails the build is
 * tests/lib/enumstr_count.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "lib/enumstr.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

enum colour { COLOUR_RED, COLOUR_GREEN, COLOUR_DEFER_MADVISE, COLOUR__COUNT };
ENUM_DECL(colour);
ENUM_IMPL(colour, COLOUR__COUNT, "red", "green", "defer+madvise");

static void test_name(void **state)
{
	static const struct {
		int v;
		const char *want;	/* NULL: out of range */
	} cases[] = {
		{ COLOUR_RED, "red" },
		{ COLOUR_GREEN, "green" },
		{ COLOUR_DEFER_MADVISE, "defer+madvise" },
		{ COLOUR__COUNT, NULL },
		{ COLOUR__COUNT + 1, NULL },
		{ -1, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		const char *got = colour_name((enum colour)cases[i].v);

		if (cases[i].want ? !got || strcmp(got, cases[i].want) : got != NULL)
			fail_msg("case %zu (%d): got '%s', want '%s'", i, cases[i].v, got ? got : "(null)",
				 cases[i].want ? cases[i].want : "(null)");
	}
}

static void test_parse(void **state)
{
	static const struct {
		const char *s;
		int rc;
		enum colour want;	/* when rc == 0 */
	} cases[] = {
		{ "red", 0, COLOUR_RED },
		{ "green", 0, COLOUR_GREEN },
		{ "defer+madvise", 0, COLOUR_DEFER_MADVISE },
		{ "", -EINVAL, 0 },
		{ "Red", -EINVAL, 0 },
		{ "RED", -EINVAL, 0 },
		{ "re", -EINVAL, 0 },
		{ "redd", -EINVAL, 0 },
		{ " red", -EINVAL, 0 },
		{ "red ", -EINVAL, 0 },
		{ "red\n", -EINVAL, 0 },
		{ "defer", -EINVAL, 0 },
		{ "madvise", -EINVAL, 0 },
		{ "red,green", -EINVAL, 0 },
		{ NULL, -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		enum colour c = COLOUR__COUNT;	/* a refusal leaves it */
		int rc = colour_parse(cases[i].s, &c);

		if (rc != cases[i].rc)
			fail_msg("case %zu ('%s'): rc %d, want %d", i, cases[i].s ? cases[i].s : "(null)", rc,
				 cases[i].rc);
		if (rc == 0 && c != cases[i].want)
			fail_msg("case %zu ('%s'): %d, want %d", i, cases[i].s, c, cases[i].want);
		if (rc != 0 && c != COLOUR__COUNT)
			fail_msg("case %zu ('%s'): out changed to %d on a refusal", i, cases[i].s ? cases[i].s : "(null)",
				 c);
	}
}

static void test_round_trip(void **state)
{
	int v;

	(void)state;
	for (v = 0; v < COLOUR__COUNT; v++) {
		enum colour c;

		assert_int_equal(colour_parse(colour_name((enum colour)v), &c), 0);
		assert_int_equal(c, v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
