/* tests for lib/parse.c: strict numbers, sizes and durations, the lines of a text */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "lib/parse.h"

static void test_size(void **state)
{
	static const struct { const char *in; int rc; uint64_t want; } cases[] = {
		{ "0", 0, 0 }, { "4096", 0, 4096 }, { "4K", 0, 4096 }, { "4k", 0, 4096 },
		{ "256M", 0, 256ull << 20 }, { "256MiB", 0, 256ull << 20 }, { "1G", 0, 1ull << 30 },
		{ "2T", 0, 2ull << 40 },
		{ "", -EINVAL, 0 }, { "abc", -EINVAL, 0 }, { "M", -EINVAL, 0 }, { "-1M", -EINVAL, 0 },
		{ "1.5G", -EINVAL, 0 }, { "12Q", -EINVAL, 0 }, { " 1M", -EINVAL, 0 }, { "1M ", -EINVAL, 0 },
		{ "99999999999999999999", -ERANGE, 0 }, { "17179869184G", -ERANGE, 0 },
		{ "1;rm -rf /", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int rc = parse_size(cases[i].in, &v);

		if (rc != cases[i].rc)
			fail_msg("parse_size('%s') = %d, want %d", cases[i].in, rc, cases[i].rc);
		if (rc == 0 && v != cases[i].want)
			fail_msg("parse_size('%s') value %llu", cases[i].in, (unsigned long long)v);
	}
	assert_int_equal(parse_size(NULL, &(uint64_t){ 0 }), -EINVAL);
}

static void test_numbers(void **state)
{
	uint64_t u;
	int64_t i;
	double d;

	assert_int_equal(parse_u64("42", &u), 0);
	assert_int_equal(u, 42);
	assert_int_equal(parse_u64("+42", &u), -EINVAL);
	assert_int_equal(parse_u64("0x10", &u), -EINVAL);
	assert_int_equal(parse_u64("18446744073709551616", &u), -ERANGE);
	assert_int_equal(parse_u64_range("0", 1, 10, &u), -ERANGE);
	assert_int_equal(parse_u64_range("11", 1, 10, &u), -ERANGE);
	assert_int_equal(parse_u64_range("10", 1, 10, &u), 0);
	assert_int_equal(parse_i64("-5", &i), 0);
	assert_int_equal(i, -5);
	assert_int_equal(parse_i64("-", &i), -EINVAL);
	assert_int_equal(parse_double("1.5e3", &d), 0);
	assert_true(d == 1500.0);
	assert_int_equal(parse_double("nan", &d), -EINVAL);
	assert_int_equal(parse_double("inf", &d), -EINVAL);
	assert_int_equal(parse_double("1e999", &d), -ERANGE);
	assert_int_equal(parse_double("", &d), -EINVAL);
	assert_int_equal(parse_double("1.5x", &d), -EINVAL);
}

static void test_duration(void **state)
{
	static const struct { const char *in; int rc; uint64_t ms; } cases[] = {
		{ "30", 0, 30000 }, { "30s", 0, 30000 }, { "250ms", 0, 250 }, { "2m", 0, 120000 },
		{ "1h", 0, 3600000 }, { "", -EINVAL, 0 }, { "5d", -EINVAL, 0 }, { "s", -EINVAL, 0 },
		{ "-1s", -EINVAL, 0 }, { "4m30s", 0, 270000 }, { "1h30m", 0, 5400000 }, { "1s500ms", 0, 1500 },
		{ "2m0s", 0, 120000 }, { "30s4m", -EINVAL, 0 }, { "1m1m", -EINVAL, 0 }, { "4m30", -EINVAL, 0 },
		{ "4m 30s", -EINVAL, 0 }, { "1ms1s", -EINVAL, 0 }, { "99999999999999999999h", -ERANGE, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		int rc = parse_duration_ms(cases[i].in, &v);

		if (rc != cases[i].rc || (rc == 0 && v != cases[i].ms))
			fail_msg("parse_duration_ms('%s') = %d (%llu)", cases[i].in, rc, (unsigned long long)v);
	}
}

static void test_list_check(void **state)
{
	static const struct { const char *in; int rc; } cases[] = {
		{ "always", 0 }, { "always,never", 0 }, { "a,b,c", 0 }, { "", -EINVAL },
		{ ",", -EINVAL }, { "always,,never", -EINVAL }, { ",always", -EINVAL },
		{ "always,", -EINVAL }, { "a,b,,", -EINVAL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (parse_list_check(cases[i].in) != cases[i].rc)
			fail_msg("parse_list_check('%s') = %d, want %d", cases[i].in,
				 parse_list_check(cases[i].in), cases[i].rc);
}

static void test_list_dup(void **state)
{
	static const struct { const char *name, *in; int rc; const char *item; } cases[] = {
		{ "one item", "memset", 0, "" },
		{ "distinct", "memset,tlb,stream", 0, "" },
		{ "prefix is not a repeat", "mem,memset,memsetx", 0, "" },
		{ "adjacent", "memset,memset", -EEXIST, "memset" },
		{ "apart", "always,madvise,always", -EEXIST, "always" },
		{ "last two", "a,b,c,c", -EEXIST, "c" },
		{ "first repeat reported", "a,b,b,a", -EEXIST, "a" },
		{ "empty list", "", 0, "" },
		{ "empty items are not repeats", ",a,,b,", 0, "" },
	};
	char item[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		item[0] = '\0';
		rc = parse_list_dup(cases[i].in, item, sizeof(item));
		if (rc != cases[i].rc || strcmp(item, cases[i].item))
			fail_msg("case '%s': %d '%s', want %d '%s'", cases[i].name, rc, item, cases[i].rc,
				 cases[i].item);
	}
}

/* parse_next_line: each line without its newline, a last one without one, empty lines kept, n bounds it */
static void test_next_line(void **state)
{
	static const struct { const char *name, *in; size_t n; const char *lines; } cases[] = {
		{ "two lines", "a\nbc\n", 5, "a|bc|" },
		{ "last line without a newline", "a\nbc", 4, "a|bc|" },
		{ "empty lines kept", "\n\nx\n", 4, "||x|" },
		{ "a carriage return is the caller's", "a\r\n", 3, "a\r|" },
		{ "nothing", "", 0, "" },
		{ "n stops it, not a NUL", "ab\ncd", 4, "ab|c|" },
	};
	char got[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t pos = 0, len, o = 0;
		const char *s;

		got[0] = '\0';
		while (parse_next_line(cases[i].in, cases[i].n, &pos, &s, &len) && o + len + 2 < sizeof(got)) {
			memcpy(got + o, s, len);
			o += len;
			got[o++] = '|';
			got[o] = '\0';
		}
		if (strcmp(got, cases[i].lines))
			fail_msg("case '%s': '%s', want '%s'", cases[i].name, got, cases[i].lines);
		assert_int_equal(pos, cases[i].n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_list_check),
		cmocka_unit_test(test_list_dup),
		cmocka_unit_test(test_next_line),
	};

	return cmocka_run_group_tests_name("lib/parse", tests, NULL, NULL);
}
