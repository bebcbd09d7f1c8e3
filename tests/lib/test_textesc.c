/* tests for lib/textesc.c: what passes, what becomes \xNN, cutting, the whole-output sink */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/textesc.h"

static void test_textesc(void **state)
{
	static const struct {
		const char *name, *in;
		unsigned flags;
		const char *want;
	} cases[] = {
		{ "plain", "host=a b", 0, "host=a b" },
		{ "empty", "", 0, "" },
		{ "escape sequence", "\x1b[2J\x1b]0;pwned\x07", 0, "\\x1b[2J\\x1b]0;pwned\\x07" },
		{ "DEL", "a\x7f", 0, "a\\x7f" },
		{ "newline and tab in a field", "a\nb\tc\r", 0, "a\\x0ab\\x09c\\x0d" },
		{ "newline and tab in a text", "a\nb\tc\r", TEXTESC_KEEP_LINES, "a\nb\tc\\x0d" },
		{ "UTF-8 passes", "±2.0 µs — 東京 \xf0\x9f\x98\x80", 0, "±2.0 µs — 東京 \xf0\x9f\x98\x80" },
		{ "C1 CSI", "\xc2\x9b" "31m", 0, "\\xc2\\x9b31m" },
		{ "not UTF-8", "\xff\xfe" "a\x80", 0, "\\xff\\xfea\\x80" },
		{ "cut sequence", "a\xe6\x9d", 0, "a\\xe6\\x9d" },
		{ "overlong slash", "\xc0\xaf", 0, "\\xc0\\xaf" },
		{ "surrogate", "\xed\xa0\x80", 0, "\\xed\\xa0\\x80" },
		{ "U+FFFE, not XML", "\xef\xbf\xbe", 0, "\\xef\\xbf\\xbe" },
		{ "past U+10FFFF", "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256], *mem = NULL;
		size_t n = textesc(out, sizeof(out), cases[i].in, cases[i].flags), len = 0;
		FILE *m = open_memstream(&mem, &len);

		if (strcmp(out, cases[i].want) || n != strlen(out))
			fail_msg("%s: '%s' (%zu), want '%s'", cases[i].name, out, n, cases[i].want);
		assert_int_equal(textesc_clean(cases[i].in, strlen(cases[i].in), cases[i].flags),
				 !strcmp(cases[i].in, cases[i].want));
		assert_true(textesc_clean(out, n, cases[i].flags));
		/* the stream form says the same */
		assert_non_null(m);
		assert_int_equal(textesc_write(m, cases[i].in, strlen(cases[i].in), cases[i].flags), 0);
		fclose(m);
		if (strcmp(mem, cases[i].want))
			fail_msg("%s: written '%s', want '%s'", cases[i].name, mem, cases[i].want);
		free(mem);
	}
}

/* a short buffer cuts before an escape or a character that does not fit whole */
static void test_textesc_cut(void **state)
{
	static const struct {
		const char *name, *in;
		size_t len;
		const char *want;
	} cases[] = {
		{ "escape does not fit", "ab\x1b", 6, "ab" },
		{ "escape fits", "ab\x1b", 7, "ab\\x1b" },
		{ "character does not fit", "ab\xc2\xb1", 4, "ab" },
		{ "nothing", "abc", 1, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[16];

		memset(out, 'Z', sizeof(out));
		textesc(out, cases[i].len, cases[i].in, 0);
		if (strcmp(out, cases[i].want))
			fail_msg("%s: '%s', want '%s'", cases[i].name, out, cases[i].want);
		assert_int_equal(out[cases[i].len], 'Z');	/* nothing past len */
	}
}

static void test_textesc_sink(void **state)
{
	struct textesc_sink s;
	char *mem = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&mem, &len), *m;

	assert_non_null(out);
	m = textesc_open(&s, out, TEXTESC_KEEP_LINES);
	assert_non_null(m);
	fprintf(m, "cell %s: %s\n", "memset\x1b[8m", "ok\r");
	assert_int_equal(textesc_close(&s), 0);
	fclose(out);
	assert_string_equal(mem, "cell memset\\x1b[8m: ok\\x0d\n");
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_textesc),
		cmocka_unit_test(test_textesc_cut),
		cmocka_unit_test(test_textesc_sink),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
