/* tests for lib/smaps.c: mappings and their fields from fixture text, and each malformed line refused */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/smaps.h"

static const char fixture[] =
	"55d0c0a00000-55d0c0a21000 r-xp 00000000 fe:01 1234   /usr/bin/thpeval guest\n"
	"Size:                132 kB\n"
	"KernelPageSize:        4 kB\n"
	"MMUPageSize:           4 kB\n"
	"Rss:                 120 kB\n"
	"Pss:                 120 kB\n"
	"Pss_Dirty:             0 kB\n"
	"Shared_Clean:          0 kB\n"
	"Private_Clean:       120 kB\n"
	"Anonymous:             0 kB\n"
	"AnonHugePages:         0 kB\n"
	"THPeligible:    0\n"
	"ProtectionKey:         0\n"
	"VmFlags: rd ex mr mw me dw\n"
	"7f2a00000000-7f2a10000000 rw-p 00000000 00:00 0 \n"
	"Size:             262144 kB\n"
	"Rss:              262144 kB\n"
	"Anonymous:        262144 kB\n"
	"AnonHugePages:    204800 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"VmFlags: rd wr mr mw me ac sd hg\n"
	"7f3000000000-7f3040000000 rw-s 00000000 00:0f 77 /dev/hugepages/guest (deleted)\n"
	"Size:            1048576 kB\n"
	"KernelPageSize:  1048576 kB\n"
	"Rss:                   0 kB\n"
	"Shared_Hugetlb:  1048576 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"VmFlags: rd wr sh mr mw me ms de ht\n";

struct seen {
	struct smaps_map m[4];
	size_t n;
	size_t stop_at;		/* > 0: fn returns 7 at this mapping */
};

static int collect(const struct smaps_map *m, void *ctx, struct err *e)
{
	struct seen *s = ctx;

	(void)e;
	if (s->n < ARRAY_SIZE(s->m))
		s->m[s->n] = *m;
	s->n++;
	return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static int parse(const char *text, struct seen *s, struct err *e)
{
	return smaps_parse_text(text, strlen(text), 1000, 4096, collect, s, e);
}

static void test_fixture(void **state)
{
	struct seen s = { .n = 0 };
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(parse(fixture, &s, &e), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.m[0].start, 0x55d0c0a00000ull);
	assert_int_equal(s.m[0].end, 0x55d0c0a21000ull);
	assert_string_equal(s.m[0].perms, "r-xp");
	assert_string_equal(s.m[0].name, "/usr/bin/thpeval guest");
	assert_int_equal(s.m[0].line, 1);
	assert_int_equal(s.m[0].kb[SMAPS_RSS], 120);
	assert_true(s.m[0].have[SMAPS_ANON_HUGE]);
	assert_false(s.m[0].have[SMAPS_SHMEM_PMD]);
	assert_false(s.m[0].vm_hugetlb);

	assert_string_equal(s.m[1].name, "");
	assert_string_equal(s.m[1].perms, "rw-p");
	assert_int_equal(s.m[1].line, 15);
	assert_int_equal(s.m[1].kb[SMAPS_SIZE], 262144);
	assert_int_equal(s.m[1].kb[SMAPS_ANON], 262144);
	assert_int_equal(s.m[1].kb[SMAPS_ANON_HUGE], 204800);
	assert_true(s.m[1].have[SMAPS_SHMEM_PMD]);
	assert_false(s.m[1].vm_hugetlb);	/* "hg" is not "ht" */

	assert_string_equal(s.m[2].perms, "rw-s");
	assert_string_equal(s.m[2].name, "/dev/hugepages/guest (deleted)");
	assert_int_equal(s.m[2].kb[SMAPS_PAGE_KB], 1048576);
	assert_int_equal(s.m[2].kb[SMAPS_SHARED_HUGETLB], 1048576);
	assert_true(s.m[2].have[SMAPS_PRIVATE_HUGETLB]);
	assert_true(s.m[2].vm_hugetlb);
}

/* smaps_rollup: one pseudo-mapping, no Size */
static void test_rollup(void **state)
{
	static const char text[] =
		"55da50676000-7ffc0b38b000 ---p 00000000 00:00 0                          [rollup]\n"
		"Rss:               19140 kB\nPss:               14605 kB\nAnonymous:          9640 kB\n"
		"KSM:                   0 kB\nAnonHugePages:      4096 kB\nLocked:                0 kB\n";
	struct seen s = { .n = 0 };
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(parse(text, &s, &e), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.m[0].name, "[rollup]");
	assert_false(s.m[0].have[SMAPS_SIZE]);
	assert_int_equal(s.m[0].kb[SMAPS_ANON_HUGE], 4096);
}

static void test_empty_and_stop(void **state)
{
	struct seen s = { .n = 0, .stop_at = 2 };
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(parse("", &s, &e), 0);
	assert_int_equal(s.n, 0);
	/* what fn returns stops the walk and is returned */
	assert_int_equal(parse(fixture, &s, &e), 7);
	assert_int_equal(s.n, 2);
	assert_false(err_isset(&e));
}

/* each malformed line: -EBADMSG, its number and the reason */
static void test_malformed(void **state)
{
#define HDR "7f2000000000-7f2040000000 rw-p 00000000 00:00 0\n"
	static const struct {
		const char *name, *text, *why;
	} cases[] = {
		{ "field before any mapping", "Size: 4 kB\n" HDR, "line 1: field before any mapping" },
		{ "address not hex", "7f20zz000000-7f2040000000 rw-p 00000000 00:00 0\n", "line 1: bad mapping header" },
		{ "upper-case hex", "7F2000000000-7f2040000000 rw-p 00000000 00:00 0\n", "line 1: bad mapping header" },
		{ "end before start", "7f2040000000-7f2000000000 rw-p 00000000 00:00 0\n", "line 1: bad mapping header" },
		{ "address over 64 bits", "10000000000000000-20000000000000000 rw-p 0 00:00 0\n",
		  "line 1: bad mapping header" },
		{ "bad permissions", "7f2000000000-7f2040000000 rwxq 00000000 00:00 0\n", "line 1: bad mapping header" },
		{ "no inode", "7f2000000000-7f2040000000 rw-p 00000000 00:00\n", "line 1: bad mapping header" },
		{ "inode not a number", "7f2000000000-7f2040000000 rw-p 00000000 00:00 x1\n",
		  "line 1: bad mapping header" },
		{ "no space before the name", "7f2000000000-7f2040000000 rw-p 00000000 00:00 0/x\n",
		  "line 1: bad mapping header" },
		{ "no colon", HDR "Rss 12 kB\n", "line 2: expected 'Name: value'" },
		{ "empty line", HDR "\nRss: 1 kB\n", "line 2: expected 'Name: value'" },
		{ "garbage", HDR "hello world\n", "line 2: expected 'Name: value'" },
		{ "in MB", HDR "Rss: 12 MB\n", "line 2: Rss is not 'N kB'" },
		{ "negative", HDR "Rss: -12 kB\n", "line 2: Rss is not 'N kB'" },
		{ "no unit", HDR "Rss: 12\n", "line 2: Rss is not 'N kB'" },
		{ "trailing text", HDR "Rss: 12 kB extra\n", "line 2: Rss is not 'N kB'" },
		{ "overflow", HDR "AnonHugePages: 99999999999999999999999 kB\n",
		  "line 2: AnonHugePages is not 'N kB'" },
		{ "bytes would overflow", HDR "Rss: 18014398509481984 kB\n", "line 2: Rss is not 'N kB'" },
		{ "a field checked, not kept", HDR "Pss: lots\n", "line 2: Pss is not 'N kB'" },
		{ "given twice", HDR "Size: 4 kB\nSize: 4 kB\n", "line 3: Size given twice" },
		{ "hugetlb garbage", HDR "Private_Hugetlb: lots\n", "line 2: Private_Hugetlb is not 'N kB'" },
		{ "too many lines", HDR HDR HDR HDR HDR, "more than 4 lines" },
	};
#undef HDR
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct seen s = { .n = 0 };
		struct err e = ERR_INIT;
		int r = smaps_parse_text(cases[i].text, strlen(cases[i].text), 4, 4096, collect, &s, &e);

		if (r != -EBADMSG || !strstr(e.msg, cases[i].why))
			fail_msg("%s: %d '%s', want -EBADMSG with '%s'", cases[i].name, r, e.msg, cases[i].why);
	}
}

/* a line over the caller's bound, and a NUL byte inside a line */
static void test_bounds(void **state)
{
	static const char nul[] = "7f2000000000-7f2040000000 rw-p 00000000 00:00 0\nRss:\0 4 kB\n";
	struct seen s = { .n = 0 };
	struct err e = ERR_INIT;
	char *text;
	size_t n = 8192, h;

	(void)state;
	text = malloc(n + 64);
	assert_non_null(text);
	strcpy(text, "7f2000000000-7f2040000000 rw-p 00000000 fe:00 1 /");
	h = strlen(text);
	memset(text + h, 'a', n);
	text[h + n] = '\0';
	assert_int_equal(smaps_parse_text(text, strlen(text), 10, 4096, collect, &s, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "a line over 4096 bytes"));
	/* within the bound, a long name is cut to fit */
	err_clear(&e);
	assert_int_equal(smaps_parse_text(text, strlen(text), 10, n + 64, collect, &s, &e), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(strlen(s.m[0].name), SMAPS_NAME_MAX - 1);
	free(text);
	err_clear(&e);
	assert_int_equal(smaps_parse_text(nul, sizeof(nul) - 1, 10, 4096, collect, &s, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "line 2: a NUL byte"));
}

/* the line interface: a mapping is complete when the next header or the end comes */
static void test_feed(void **state)
{
	static const char *const lines[] = {
		"7f0000000000-7f0000001000 r--p 00000000 00:00 0", "Rss: 4 kB",
		"7f0000001000-7f0000002000 rw-p 00000000 00:00 0", "Rss: 8 kB",
	};
	struct smaps_parser p;
	struct smaps_map m;

	(void)state;
	smaps_init(&p);
	assert_int_equal(smaps_feed(&p, lines[0], strlen(lines[0]), &m), 0);
	assert_int_equal(smaps_feed(&p, lines[1], strlen(lines[1]), &m), 0);
	assert_int_equal(smaps_feed(&p, lines[2], strlen(lines[2]), &m), 1);
	assert_int_equal(m.kb[SMAPS_RSS], 4);
	assert_int_equal(smaps_feed(&p, lines[3], strlen(lines[3]), &m), 0);
	assert_int_equal(smaps_finish(&p, &m), 1);
	assert_int_equal(m.kb[SMAPS_RSS], 8);
	assert_int_equal(m.start, 0x7f0000001000ull);
	assert_int_equal(smaps_finish(&p, &m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_rollup),
		cmocka_unit_test(test_empty_and_stop),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_feed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
