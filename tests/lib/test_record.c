/* tests for lib/record.c: the guest <-> host record protocol */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/record.h"

static int fmt_sample(char *buf, size_t len)
{
	struct record r;

	rec_init(&r, REC_RESULT, 7);
	assert_int_equal(rec_add_str(&r, "workload", "memset"), 0);
	assert_int_equal(rec_add_f64(&r, "access_ns", 123.5), 0);
	assert_int_equal(rec_add_u64(&r, "size_bytes", 268435456), 0);
	assert_int_equal(rec_add_str(&r, "reason", "a b=c%d \xc3\xa9"), 0);
	return rec_format(&r, buf, len);
}

static void test_roundtrip(void **state)
{
	char buf[REC_MAX_LINE + 2], why[128];
	struct record out;
	double d;
	uint64_t u;
	int n = fmt_sample(buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(rec_parse(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_int_equal(out.type, REC_RESULT);
	assert_int_equal(out.seq, 7);
	assert_string_equal(rec_get(&out, "workload"), "memset");
	assert_string_equal(rec_get(&out, "reason"), "a b=c%d \xc3\xa9");
	assert_int_equal(rec_get_f64(&out, "access_ns", &d), 0);
	assert_true(d == 123.5);
	assert_int_equal(rec_get_u64(&out, "size_bytes", &u), 0);
	assert_int_equal(u, 268435456);
	assert_null(rec_get(&out, "missing"));
	assert_int_not_equal(rec_get_u64(&out, "workload", &u), 0);
}

/* each malformed line, with the reason the parser must give */
struct bad_case {
	const char *name;
	const char *line;	/* if NULL, derived by mutate() from a good line */
	int mutate;
	const char *why_contains;
};

enum { MUT_NONE, MUT_FLIP_BYTE, MUT_TRUNCATE, MUT_DROP_CRC, MUT_NUL };

static void test_rejects(void **state)
{
	static const struct bad_case cases[] = {
		{ "empty", "", MUT_NONE, "not a" },
		{ "garbage", "hello world", MUT_NONE, "not a" },
		{ "wrong magic", "THPEVAL2 1 result #00000000", MUT_NONE, "not a" },
		{ "no checksum", "THPEVAL1 1 result a=b", MUT_NONE, "checksum" },
		{ "bad checksum digits", "THPEVAL1 1 result a=b #zzzzzzzz", MUT_NONE, "checksum" },
		{ "flipped byte", NULL, MUT_FLIP_BYTE, "checksum mismatch" },
		{ "truncated", NULL, MUT_TRUNCATE, "checksum" },
		{ "dropped crc", NULL, MUT_DROP_CRC, "checksum" },
		{ "nul byte", NULL, MUT_NUL, "NUL" },
	};
	char buf[REC_MAX_LINE + 2], why[128];
	struct record out;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		size_t len;

		if (c->line) {
			snprintf(buf, sizeof(buf), "%s", c->line);
			len = strlen(buf);
		} else {
			int n = fmt_sample(buf, sizeof(buf));

			assert_true(n > 0);
			len = (size_t)n;
			switch (c->mutate) {
			case MUT_FLIP_BYTE: buf[12] ^= 1; break;
			case MUT_TRUNCATE: len = (size_t)n / 2; break;
			case MUT_DROP_CRC: len -= 11; break;
			case MUT_NUL: buf[20] = '\0'; break;
			}
		}
		why[0] = '\0';
		if (rec_parse(buf, len, &out, why, sizeof(why)) == 0)
			fail_msg("case '%s' was accepted", c->name);
		if (!strstr(why, c->why_contains))
			fail_msg("case '%s': reason '%s' lacks '%s'", c->name, why, c->why_contains);
	}
}

/* build a line with a correct checksum around an arbitrary body */
static size_t with_crc(char *buf, size_t len, const char *body)
{
	int n = snprintf(buf, len, "%s ", body);

	n += snprintf(buf + n, len - (size_t)n, "#%08x", rec_crc32(buf, (size_t)n));
	return (size_t)n;
}

static void test_rejects_structure(void **state)
{
	static const struct { const char *name, *body, *why; } cases[] = {
		{ "unknown type", "THPEVAL1 1 bogus a=b", "unknown record type" },
		{ "missing type", "THPEVAL1 1", "missing record type" },
		{ "bad seq", "THPEVAL1 x1 result", "sequence" },
		{ "leading zero seq", "THPEVAL1 01 result", "sequence" },
		{ "huge seq", "THPEVAL1 99999999999 result", "sequence" },
		{ "no equals", "THPEVAL1 1 result abc", "without '='" },
		{ "empty key", "THPEVAL1 1 result =v", "key" },
		{ "upper key", "THPEVAL1 1 result Key=v", "key" },
		{ "double space", "THPEVAL1 1 result a=b  c=d", "empty field" },
		{ "bad value char", "THPEVAL1 1 result a=b\"c", "bad character" },
		{ "bad escape", "THPEVAL1 1 result a=%zz", "escape" },
		{ "short escape", "THPEVAL1 1 result a=%2", "escape" },
		{ "non canonical escape", "THPEVAL1 1 result a=%41", "non-canonical" },
		{ "nul escape", "THPEVAL1 1 result a=%00", "non-canonical" },
		{ "duplicate key", "THPEVAL1 1 result a=1 a=2", "duplicate" },
		/* a guest's text reaches XML, reports and terminals */
		{ "newline escape", "THPEVAL1 1 fail reason=a%0ab", "control character %0a in value of 'reason'" },
		{ "escape sequence", "THPEVAL1 1 result variant=%1b%5b2J", "control character %1b in value of 'variant'" },
		{ "delete", "THPEVAL1 1 result a=%7f", "control character %7f" },
		{ "tab", "THPEVAL1 1 result a=x%09y", "control character %09" },
	};
	char buf[REC_MAX_LINE + 64], why[128];
	struct record out;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = with_crc(buf, sizeof(buf), cases[i].body);

		why[0] = '\0';
		if (rec_parse(buf, len, &out, why, sizeof(why)) == 0)
			fail_msg("case '%s' was accepted", cases[i].name);
		if (!strstr(why, cases[i].why))
			fail_msg("case '%s': reason '%s' lacks '%s'", cases[i].name, why, cases[i].why);
	}
}

static void test_limits(void **state)
{
	char body[REC_MAX_LINE * 2], buf[REC_MAX_LINE * 2 + 64], why[128], key[16];
	char val[REC_VAL_MAX + 8];
	struct record r, out;
	size_t len;
	int i, n;

	/* too many fields */
	n = snprintf(body, sizeof(body), "THPEVAL1 1 result");
	for (i = 0; i <= REC_MAX_FIELDS; i++)
		n += snprintf(body + n, sizeof(body) - (size_t)n, " k%d=1", i);
	len = with_crc(buf, sizeof(buf), body);
	assert_int_not_equal(rec_parse(buf, len, &out, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "fields"));

	/* oversized line */
	memset(body, 'a', sizeof(body) - 1);
	body[sizeof(body) - 1] = '\0';
	assert_int_not_equal(rec_parse(body, strlen(body), &out, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "longer"));

	/* value too long for the writer and for the parser */
	memset(val, 'v', sizeof(val) - 1);
	val[sizeof(val) - 1] = '\0';
	rec_init(&r, REC_INFO, 0);
	assert_int_equal(rec_add_str(&r, "v", val), -E2BIG);
	snprintf(body, sizeof(body), "THPEVAL1 1 info v=%s", val);
	len = with_crc(buf, sizeof(buf), body);
	assert_int_not_equal(rec_parse(buf, len, &out, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "too long"));

	/* writer refuses bad keys, duplicates, too many fields, non-finite */
	rec_init(&r, REC_INFO, 0);
	assert_int_equal(rec_add_str(&r, "Bad", "x"), -EINVAL);
	assert_int_equal(rec_add_str(&r, "", "x"), -EINVAL);
	assert_int_equal(rec_add_str(&r, "a", "x"), 0);
	assert_int_equal(rec_add_str(&r, "a", "y"), -EINVAL);
	assert_int_equal(rec_add_f64(&r, "nan", 0.0 / 0.0), -EINVAL);
	for (i = 1; i < REC_MAX_FIELDS; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(rec_add_u64(&r, key, (uint64_t)i), 0);
	}
	assert_int_equal(rec_add_u64(&r, "one_more", 1), -E2BIG);
	/* a full record still formats within a line */
	n = rec_format(&r, buf, sizeof(buf));
	assert_true(n > 0 && n <= REC_MAX_LINE + 1);
	assert_int_equal(rec_parse(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_int_equal(out.nfields, REC_MAX_FIELDS);
	/* a too small buffer is refused, not truncated */
	assert_int_equal(rec_format(&r, buf, 40), -E2BIG);
}

struct collect {
	int ok, oversized;
	char last[REC_MAX_LINE + 1];
};

static int collect_line(void *opaque, enum rec_line_kind kind, const char *line, size_t len)
{
	struct collect *c = opaque;

	if (kind == REC_LINE_OVERSIZED) {
		c->oversized++;
		return 0;
	}
	c->ok++;
	memcpy(c->last, line, len);
	c->last[len] = '\0';
	return 0;
}

static void test_reader(void **state)
{
	struct rec_reader *rd = malloc(sizeof(*rd));
	struct collect c = { 0 };
	char *flood;
	size_t i;

	assert_non_null(rd);
	rec_reader_init(rd);
	/* lines split across feeds */
	assert_int_equal(rec_reader_feed(rd, "ab", 2, collect_line, &c), 0);
	assert_int_equal(c.ok, 0);
	assert_int_equal(rec_reader_feed(rd, "c\nde", 4, collect_line, &c), 0);
	assert_int_equal(c.ok, 1);
	assert_string_equal(c.last, "abc");
	/* a flood without newline: reported once as oversized, memory bounded */
	flood = malloc(REC_MAX_LINE * 10);
	assert_non_null(flood);
	memset(flood, 'x', REC_MAX_LINE * 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(rec_reader_feed(rd, flood, REC_MAX_LINE * 10, collect_line, &c), 0);
	assert_int_equal(c.oversized, 1);
	assert_int_equal(c.ok, 1);
	/* after the newline, lines are delivered again */
	assert_int_equal(rec_reader_feed(rd, "\nok\n", 4, collect_line, &c), 0);
	assert_int_equal(c.ok, 2);
	assert_string_equal(c.last, "ok");
	free(flood);
	free(rd);
}

/*
 * The contract the fuzz harness (tests/fuzz/fuzz_record.c) checks, pinned at
 * its edges: a line of exactly REC_MAX_LINE bytes is delivered, one byte more
 * is oversized, however the bytes are chunked; what the parser accepts is
 * exactly what rec_format writes (so a non-canonical checksum is refused).
 */
static void test_reader_edges_canonical(void **state)
{
	static const size_t lens[] = { REC_MAX_LINE - 1, REC_MAX_LINE, REC_MAX_LINE + 1 };
	struct rec_reader *rd = malloc(sizeof(*rd));
	char *line = malloc(REC_MAX_LINE + 2), buf[REC_MAX_LINE + 2], body[256], why[128];
	struct record r;
	size_t i, k, len;
	int n;

	assert_non_null(rd);
	assert_non_null(line);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct collect whole = { 0 }, bytes = { 0 };

		memset(line, 'x', lens[i]);
		line[lens[i]] = '\n';
		rec_reader_init(rd);
		assert_int_equal(rec_reader_feed(rd, line, lens[i] + 1, collect_line, &whole), 0);
		rec_reader_init(rd);
		for (k = 0; k <= lens[i]; k++)
			assert_int_equal(rec_reader_feed(rd, line + k, 1, collect_line, &bytes), 0);
		assert_int_equal(whole.ok, lens[i] <= REC_MAX_LINE);
		assert_int_equal(whole.oversized, lens[i] > REC_MAX_LINE);
		assert_int_equal(bytes.ok, whole.ok);
		assert_int_equal(bytes.oversized, whole.oversized);
		if (whole.ok)
			assert_int_equal(strlen(whole.last), lens[i]);
	}

	len = with_crc(buf, sizeof(buf), "THPEVAL1 42 skip workload=memset reason=no%20memory%3b");
	assert_int_equal(rec_parse(buf, len, &r, why, sizeof(why)), 0);
	n = rec_format(&r, body, sizeof(body));
	assert_int_equal(n, (int)len + 1);
	assert_memory_equal(body, buf, len);
	for (k = len - 8; k < len; k++)
		if (buf[k] >= 'a' && buf[k] <= 'f')
			buf[k] = (char)(buf[k] - 'a' + 'A');
	if (memcmp(body, buf, len) != 0) {	/* the checksum had a letter: upper case is refused */
		assert_int_not_equal(rec_parse(buf, len, &r, why, sizeof(why)), 0);
		assert_non_null(strstr(why, "checksum"));
	}
	free(line);
	free(rd);
}

/* rec_add_str refuses what rec_parse would refuse */
static void test_add_control(void **state)
{
	static const struct { const char *name, *val; int rc; } cases[] = {
		{ "plain", "a b=c", 0 },
		{ "utf-8", "caf\xc3\xa9", 0 },
		{ "newline", "a\nb", -EINVAL },
		{ "escape", "\x1b[2J", -EINVAL },
		{ "delete", "x\x7f", -EINVAL },
	};
	struct record r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rec_init(&r, REC_FAIL, 1);
		if (rec_add_str(&r, "reason", cases[i].val) != cases[i].rc)
			fail_msg("case '%s': want %d", cases[i].name, cases[i].rc);
	}
}

/* the range a field's name gives a value from a guest or a file */
static void test_value_check(void **state)
{
	static const struct {
		const char *name, *key;
		double v;
		const char *why;	/* NULL: accepted */
	} cases[] = {
		{ "a time", "access_ns", 98.5, NULL },
		{ "a zero time", "fault_ns_per_4k", 0, NULL },
		{ "a negative time", "access_ns", -5, "'access_ns' is -5: a time or rate cannot be negative" },
		{ "a negative rate per page", "fault_ns_per_4k", -0.5, "a time or rate cannot be negative" },
		{ "negative cycles", "nways1_cycles", -1, "cannot be negative" },
		{ "negative seconds", "build_s", -1, "cannot be negative" },
		{ "negative throughput", "fault_mib_s", -1, "cannot be negative" },
		{ "a difference may be negative", "tlb_walk_extra_ns", -3, NULL },
		{ "a difference against base", "extra_vs_base_ns", -3, NULL },
		{ "a difference of two sizes' times", "small_4k_minus_2m_ns", -0.0037, NULL },
		{ "a difference of large and base times", "tlb_cache_miss_cycles", -2, NULL },
		{ "coverage 100", "guest_huge_pct", 100, NULL },
		{ "coverage 0", "huge_pct", 0, NULL },
		{ "coverage above 100", "guest_huge_pct", 201, "'guest_huge_pct' is 201: a coverage is from 0 to 100" },
		{ "coverage below 0", "shmem_pmd_pct", -1, "a coverage is from 0 to 100" },
		{ "fault coverage", "huge_fault_pct", 100.5, "a coverage" },
		{ "another percentage", "thrash_pct", -12, NULL },
		{ "a count", "fault_minflt", 65536, NULL },
		{ "a negative count", "fault_minflt", -1, "'fault_minflt' is -1: a count cannot be negative" },
		{ "negative bytes", "rss_bytes", -4096, "a count cannot be negative" },
		{ "a user's number", "metric_lower", -7, NULL },
		{ "NaN", "access_ns", 0.0 / 0.0, "not a finite number" },
		{ "infinity", "metric_lower", 1.0 / 0.0, "not a finite number" },
	};
	char why[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		why[0] = '\0';
		rc = rec_value_check(cases[i].key, cases[i].v, why, sizeof(why));
		if (!cases[i].why && rc)
			fail_msg("case '%s': refused: %s", cases[i].name, why);
		if (cases[i].why && (rc != -EINVAL || !strstr(why, cases[i].why)))
			fail_msg("case '%s': rc %d, reason '%s' lacks '%s'", cases[i].name, rc, why, cases[i].why);
	}
}

/* a whole record: the first field out of range, named */
static void test_check_values(void **state)
{
	static const struct { const char *name, *body, *why; } cases[] = {
		{ "a real record", "THPEVAL1 7 result workload=memset rep=0 warmup=0 seed=1 thp_enabled=always "
		  "size_bytes=268435456 fault_ns_per_4k=512.25 access_ns=98.125 guest_huge_pct=100", NULL },
		{ "a negative access time", "THPEVAL1 7 result workload=memset rep=0 fault_ns_per_4k=512.25 "
		  "access_ns=-98.125 guest_huge_pct=100", "'access_ns' is -98.125: a time or rate cannot be negative" },
		{ "coverage over 100", "THPEVAL1 7 result workload=memset rep=0 access_ns=98 guest_huge_pct=201",
		  "'guest_huge_pct' is 201: a coverage is from 0 to 100 percent" },
		{ "text fields are not numbers", "THPEVAL1 7 result workload=memset variant=-5 tsc=none", NULL },
		{ "a negative difference", "THPEVAL1 3 result workload=tlb variant=ws64 extra_vs_base_ns=-1.5 "
		  "huge_pct=100 access_ns=3", NULL },
	};
	char buf[REC_MAX_LINE + 64], why[128];
	struct record r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = with_crc(buf, sizeof(buf), cases[i].body);
		int rc;

		if (rec_parse(buf, len, &r, why, sizeof(why)))
			fail_msg("case '%s': not parsed: %s", cases[i].name, why);
		why[0] = '\0';
		rc = rec_check_values(&r, why, sizeof(why));
		if (!cases[i].why && rc)
			fail_msg("case '%s': refused: %s", cases[i].name, why);
		if (cases[i].why && (rc != -EINVAL || !strstr(why, cases[i].why)))
			fail_msg("case '%s': rc %d, reason '%s' lacks '%s'", cases[i].name, rc, why, cases[i].why);
	}
}

static void test_type_names(void **state)
{
	enum rec_type t;
	unsigned i;

	for (i = 0; i < REC__COUNT; i++) {
		assert_int_equal(rec_type_parse(rec_type_name((enum rec_type)i), &t), 0);
		assert_int_equal(t, i);
	}
	assert_int_not_equal(rec_type_parse("nope", &t), 0);
	/* CRC-32 (IEEE) check value */
	assert_int_equal(rec_crc32("123456789", 9), 0xcbf43926u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_rejects_structure),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_edges_canonical),
		cmocka_unit_test(test_add_control),
		cmocka_unit_test(test_value_check),
		cmocka_unit_test(test_check_values),
		cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests_name("lib/record", tests, NULL, NULL);
}
