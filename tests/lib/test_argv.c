/*
 * tests for lib/argv.c: the --exec splitter (every quoting rule, every
 * refusal with its message), the plan-word encoding (round trips of every
 * byte a word may hold, what the encoding may contain, strict decoding) and
 * the display join.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>

#include "lib/argv.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct split_ok {
	const char *name;
	const char *in;
	const char *want[16];	/* NULL-terminated */
};

static struct split_ok split_oks[] = {
	{ "one word", "true", { "true" } },
	{ "words and spaces", "  stress-ng  --vm 1   -t 10s ", { "stress-ng", "--vm", "1", "-t", "10s" } },
	{ "single quotes keep everything", "sh -c 'echo $HOME; ls *|wc -l'",
	  { "sh", "-c", "echo $HOME; ls *|wc -l" } },
	{ "double quotes", "sh -c \"echo 'x' && exit 3\"", { "sh", "-c", "echo 'x' && exit 3" } },
	{ "double quotes: escaped quote and backslash", "printf \"a\\\"b\\\\c\\n\"",
	  { "printf", "a\"b\\c\\n" } },
	{ "backslash outside quotes", "echo a\\ b \\' \\\\", { "echo", "a b", "'", "\\" } },
	{ "parts concatenate", "x'a b'\"c d\"e", { "xa bc de" } },
	{ "empty quoted words", "printf '' \"\" x", { "printf", "", "", "x" } },
	{ "metacharacters are bytes", "echo ; | & && > < $(id) `id` * ? ~ # !",
	  { "echo", ";", "|", "&", "&&", ">", "<", "$(id)", "`id`", "*", "?", "~", "#", "!" } },
	{ "utf-8 bytes", "echo h\xc3\xa9", { "echo", "h\xc3\xa9" } },
};

static void test_split_ok(void **state)
{
	const struct split_ok *c = *state;
	struct argv_list a;
	struct err e = ERR_INIT;
	size_t i, n = 0;

	while (c->want[n])
		n++;
	if (argv_split("--exec", c->in, &a, &e))
		fail_msg("'%s': %s", c->in, e.msg);
	assert_int_equal(a.n, n);
	for (i = 0; i < n; i++)
		assert_string_equal(a.v[i], c->want[i]);
	assert_null(a.v[n]);
}

struct split_bad {
	const char *name;
	const char *in;		/* NULL: built by the test (long strings) */
	int code;
	const char *msg;	/* the whole one-line message */
};

static char long_exec[5001], many_words[200], just_at[4097], over_by_one[4098];

static struct split_bad split_bads[] = {
	{ "empty", "", -EINVAL, "empty --exec" },
	{ "blank", "   ", -EINVAL, "--exec is blank: give a command such as 'stress-ng --vm 1 -t 10s'" },
	{ "5000 characters", long_exec, -E2BIG, "--exec is 5000 characters long: at most 4096" },
	{ "4097 characters", over_by_one, -E2BIG, "--exec is 4097 characters long: at most 4096" },
	{ "65 words", many_words, -E2BIG, "--exec has more than 64 words" },
	{ "tab", "echo\tx", -EINVAL,
	  "--exec has a control character (0x09) at character 5: give printable text" },
	{ "newline", "sh -c 'a\nb'", -EINVAL,
	  "--exec has a control character (0x0a) at character 9: give printable text" },
	{ "escape", "echo \x1b[2J", -EINVAL,
	  "--exec has a control character (0x1b) at character 6: give printable text" },
	{ "DEL", "echo \x7f", -EINVAL,
	  "--exec has a control character (0x7f) at character 6: give printable text" },
	{ "unterminated single quote", "sh -c 'echo", -EINVAL,
	  "--exec has an unterminated single quote (opened at character 7)" },
	{ "unterminated double quote", "echo \"a", -EINVAL,
	  "--exec has an unterminated double quote (opened at character 6)" },
	{ "escaped closing quote", "echo \"a\\\"", -EINVAL,
	  "--exec has an unterminated double quote (opened at character 6)" },
	{ "trailing backslash", "echo a\\", -EINVAL,
	  "--exec ends with a backslash: escape it as \\\\ or quote it" },
	{ "empty program", "'' -c x", -EINVAL,
	  "--exec starts with an empty word: the first word is the program" },
};

static void test_split_bad(void **state)
{
	const struct split_bad *c = *state;
	struct argv_list a;
	struct err e = ERR_INIT;
	int r = argv_split("--exec", c->in, &a, &e);

	if (r != c->code)
		fail_msg("'%.40s': %d (%s), want %d", c->in, r, e.msg, c->code);
	assert_string_equal(e.msg, c->msg);
	assert_null(strchr(e.msg, '\n'));
}

/* exactly 4096 characters and 64 words are accepted */
static void test_split_limits(void **state)
{
	struct argv_list a;
	struct err e = ERR_INIT;
	char words[64 * 2 + 1];
	size_t i;

	(void)state;
	assert_int_equal(argv_split("--exec", just_at, &a, &e), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(strlen(a.v[0]), 4096);
	for (i = 0; i < 64; i++) {
		words[2 * i] = 'w';
		words[2 * i + 1] = ' ';
	}
	words[127] = '\0';
	assert_int_equal(argv_split("--exec", words, &a, &e), 0);
	assert_int_equal(a.n, 64);
}

/* every byte but NUL and the control characters survives encode + decode */
static void test_encode_roundtrip(void **state)
{
	struct argv_list a, b;
	struct err e = ERR_INIT;
	char w[3][200], enc[4096], empty[1] = "";
	size_t i, k = 0;
	int n;

	(void)state;
	for (i = 0x20; i < 0x100; i++) {
		if (i == 0x7f)
			continue;
		w[k / 80][k % 80] = (char)i;
		k++;
	}
	w[0][80] = w[1][80] = '\0';
	w[2][k - 160] = '\0';
	memset(&a, 0, sizeof(a));
	a.v[0] = w[0];
	a.v[1] = w[1];
	a.v[2] = empty;
	a.v[3] = w[2];
	a.n = 4;
	n = argv_encode(&a, enc, sizeof(enc));
	assert_true(n > 0);
	assert_int_equal((size_t)n, argv_encoded_len(&a));
	assert_int_equal(strspn(enc, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:+-"),
			 (size_t)n);
	if (argv_decode("--argv", enc, &b, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(b.n, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(a.v[i], b.v[i]);
	/* too small a buffer: -E2BIG, never a cut word */
	assert_int_equal(argv_encode(&a, enc, (size_t)n), -E2BIG);
	assert_int_equal(argv_encode(&a, enc, (size_t)n + 1), n);
}

static void test_encode_examples(void **state)
{
	struct argv_list a;
	struct err e = ERR_INIT;
	char enc[256], word[64];

	(void)state;
	assert_int_equal(argv_split("--exec", "sh -c \"echo 'x' > /tmp/a; exit 3\"", &a, &e), 0);
	assert_int_equal(argv_encode(&a, enc, sizeof(enc)), 49);
	assert_string_equal(enc, "sh+-c+echo:20:27x:27:20:3E:20/tmp/a:3B:20exit:203");
	assert_int_equal(argv_encode_word("ops/s: ([0-9.]+)", word, sizeof(word)), 30);
	assert_string_equal(word, "ops/s:3A:20:28:5B0-9.:5D:2B:29");
	assert_int_equal(argv_decode_word("--metric", word, enc, sizeof(enc), &e), 0);
	assert_string_equal(enc, "ops/s: ([0-9.]+)");
	assert_int_equal(argv_decode_word("--metric", word, enc, 5, &e), -E2BIG);
}

struct decode_bad {
	const char *name;
	const char *in;
	int code;
	const char *msg;
};

static struct decode_bad decode_bads[] = {
	{ "empty", "", -EINVAL, "empty --argv" },
	{ "a space", "sh -c", -EINVAL,
	  "--argv: character 0x20 at 3 is not of the encoding ([A-Za-z0-9_./-], ':XX', '+')" },
	{ "a quote", "sh+'x'", -EINVAL,
	  "--argv: character ''' at 4 is not of the encoding ([A-Za-z0-9_./-], ':XX', '+')" },
	{ "lower-case hex", "a:3b", -EINVAL,
	  "--argv: ':' at character 2 is not followed by two upper-case hex digits" },
	{ "one hex digit", "a:3", -EINVAL,
	  "--argv: ':' at character 2 is not followed by two upper-case hex digits" },
	{ "encoded NUL", "a:00b", -EINVAL, "--argv: encoded control character 0x00 at character 2" },
	{ "encoded newline", "a:0A", -EINVAL, "--argv: encoded control character 0x0a at character 2" },
	{ "empty program", "+x", -EINVAL, "--argv starts with an empty word: the first word is the program" },
};

static void test_decode_bad(void **state)
{
	const struct decode_bad *c = *state;
	struct argv_list a;
	struct err e = ERR_INIT;
	int r = argv_decode("--argv", c->in, &a, &e);

	if (r != c->code)
		fail_msg("'%s': %d (%s), want %d", c->in, r, e.msg, c->code);
	assert_string_equal(e.msg, c->msg);
	assert_int_equal(a.n, 0);
	assert_null(a.v[0]);
}

static void test_decode_limits(void **state)
{
	struct argv_list a;
	struct err e = ERR_INIT;
	char enc[200], big[3 * 4200];
	size_t i;

	(void)state;
	for (i = 0; i < 65; i++) {
		enc[2 * i] = 'w';
		enc[2 * i + 1] = '+';
	}
	enc[129] = '\0';
	assert_int_equal(argv_decode("--argv", enc, &a, &e), -E2BIG);
	assert_string_equal(e.msg, "--argv has more than 64 words");
	enc[127] = '\0';	/* 64 words */
	err_clear(&e);
	assert_int_equal(argv_decode("--argv", enc, &a, &e), 0);
	assert_int_equal(a.n, 64);
	for (i = 0; i < 4200; i++)
		memcpy(big + 3 * i, ":41", 3);
	big[3 * 4200 - 1] = '\0';
	big[3 * 4199] = '\0';
	err_clear(&e);
	assert_int_equal(argv_decode("--argv", big, &a, &e), -E2BIG);
	assert_non_null(strstr(e.msg, "--argv decodes to more than"));
}

static void test_text_check(void **state)
{
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(argv_text_check("--exec-metric", "x ([0-9]+)", 512, &e), 0);
	assert_int_equal(argv_text_check("--exec-metric", "", 512, &e), -EINVAL);
	assert_string_equal(e.msg, "empty --exec-metric");
	err_clear(&e);
	assert_int_equal(argv_text_check("--exec-metric", "abcd", 3, &e), -E2BIG);
	assert_string_equal(e.msg, "--exec-metric is 4 characters long: at most 3");
}

static void test_join(void **state)
{
	struct argv_list a;
	struct err e = ERR_INIT;
	char out[64];

	(void)state;
	assert_int_equal(argv_split("--exec", "sh -c \"echo it's 1\" x=1 ''", &a, &e), 0);
	argv_join(&a, out, sizeof(out));
	assert_string_equal(out, "sh -c 'echo it'\\''s 1' x=1 ''");
	argv_join(&a, out, 8);
	assert_string_equal(out, "sh -c '");
}

int main(void)
{
	struct CMUnitTest tests[N(split_oks) + N(split_bads) + N(decode_bads) + 8];
	size_t i, n = 0;

	memset(long_exec, 'x', 5000);
	memset(just_at, 'y', 4096);
	memset(over_by_one, 'z', 4097);
	for (i = 0; i < 65; i++) {
		many_words[2 * i] = 'w';
		many_words[2 * i + 1] = ' ';
	}
	for (i = 0; i < N(split_oks); i++)
		tests[n++] = (struct CMUnitTest){ split_oks[i].name, test_split_ok, NULL, NULL,
						  &split_oks[i] };
	for (i = 0; i < N(split_bads); i++)
		tests[n++] = (struct CMUnitTest){ split_bads[i].name, test_split_bad, NULL, NULL,
						  &split_bads[i] };
	for (i = 0; i < N(decode_bads); i++)
		tests[n++] = (struct CMUnitTest){ decode_bads[i].name, test_decode_bad, NULL, NULL,
						  &decode_bads[i] };
	tests[n++] = (struct CMUnitTest){ "4096 characters, 64 words", test_split_limits, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "encode and decode every byte", test_encode_roundtrip, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "encoding examples", test_encode_examples, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "decode limits", test_decode_limits, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "text check", test_text_check, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "join for people", test_join, NULL, NULL, NULL };
	return _cmocka_run_group_tests("argv", tests, n, NULL, NULL);
}
