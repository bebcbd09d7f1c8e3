/*
 * tests for guest/hzp.c: parameter checks (fail and skip records with
 * reasons), use_zero_page set and restored in a fake /sys (never the real
 * one), the runner's variants, and a short real run whose record is checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/hzp.h"
#include "thppolicy.h"
#include "wltest.h"

#define N(a) WLT_N(a)
#define ZP "/sys/kernel/mm/transparent_hugepage/use_zero_page"

static char small_root[] = "/tmp/thpeval-hzp-small-XXXXXX";	/* MemAvailable 900M */
static char knob_root[] = "/tmp/thpeval-hzp-knob-XXXXXX";	/* real /proc, fake knobs */
static char bare_root[] = "/tmp/thpeval-hzp-bare-XXXXXX";	/* real /proc, no THP */

struct bad_case {
	const char *name;
	const char *argv[5];
	const char *reason;
};

static struct bad_case bad_cases[] = {
	{ "zero half", { "hzp", "--half=0" }, "--half=0 is out of range" },
	{ "half not a 2M multiple", { "hzp", "--half=3M" }, "half 3M is not a multiple of 2M" },
	{ "halves above MemAvailable", { "hzp", "--half=512M" },
	  "two halves of 512M exceed available memory 900M" },
	{ "one memcmp pass", { "hzp", "--passes=1" }, "--passes=1 is out of range" },
	{ "no stride pass", { "hzp", "--stride-passes=0" }, "--stride-passes=0 is out of range" },
	{ "zero-page 2", { "hzp", "--zero-page=2" }, "expected keep, 0 or 1" },
	{ "zero-page empty", { "hzp", "--zero-page=" }, "expected keep, 0 or 1" },
};

static void test_bad(void **state)
{
	const struct bad_case *c = *state;
	struct wlt_out o;

	wlt_run(small_root, c->argv, wlt_argc(c->argv, N(c->argv)), &o);
	wlt_expect_one(&o, HARNESS_USAGE, REC_FAIL, c->reason);
	wlt_free(&o);
}

/* no knob: --zero-page=N cannot run here (skip), keep still runs */
static void test_no_knob(void **state)
{
	const char *set[] = { "hzp", "--zero-page=1", "--half=2M" };
	const char *keep[] = { "hzp", "--half=2M", "--passes=2", "--stride-passes=1" };
	struct wlt_out o;

	(void)state;
	wlt_run(bare_root, set, N(set), &o);
	wlt_expect_one(&o, HARNESS_SKIPPED, REC_SKIP, "has no use_zero_page knob");
	wlt_free(&o);
	wlt_run(bare_root, keep, N(keep), &o);
	assert_int_equal(o.rc, HARNESS_OK);
	assert_string_equal(rec_get(&o.rec[0], "use_zero_page"), "unsupported");
	assert_string_equal(rec_get(&o.rec[0], "variant"), "zpna");
	wlt_free(&o);
}

/* the knob is written for the run, recorded, and restored after it */
static void test_set_restore(void **state)
{
	const char *argv[] = { "hzp", "--zero-page=0", "--half=2M", "--passes=2",
			       "--stride-passes=1" };
	char text[32];
	struct wlt_out o;

	(void)state;
	wlt_put(knob_root, ZP, "1\n");
	wlt_run(knob_root, argv, N(argv), &o);
	if (geteuid() != 0) {
		wlt_expect_one(&o, HARNESS_SKIPPED, REC_SKIP, "needs root");
		wlt_free(&o);
		return;
	}
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	assert_string_equal(rec_get(&o.rec[0], "use_zero_page"), "0");
	assert_string_equal(rec_get(&o.rec[0], "variant"), "zp0");
	assert_string_equal(wlt_read(knob_root, ZP, text, sizeof(text)), "1\n");
	wlt_free(&o);

	/* keep: recorded as found, left alone */
	argv[1] = "--zero-page=keep";
	wlt_run(knob_root, argv, N(argv), &o);
	assert_int_equal(o.rc, HARNESS_OK);
	assert_string_equal(rec_get(&o.rec[0], "variant"), "zp1");
	assert_string_equal(wlt_read(knob_root, ZP, text, sizeof(text)), "1\n");
	wlt_free(&o);
}

/* a knob that does not hold a number is a failure with the path, not a crash */
static void test_bad_knob(void **state)
{
	const char *argv[] = { "hzp", "--zero-page=1", "--half=2M" };
	struct wlt_out o;

	(void)state;
	wlt_put(knob_root, ZP, "[1] 0\n");
	wlt_run(knob_root, argv, N(argv), &o);
	wlt_expect_one(&o, HARNESS_USAGE, REC_FAIL, "not a number");
	wlt_free(&o);
	wlt_put(knob_root, ZP, "1\n");
}

/* what the runner adds: each variant is a valid argument */
static void test_runner_variants(void **state)
{
	const struct workload *w = workload_find("hzp");
	const char *const *v;
	struct err e = ERR_INIT;
	struct wl_args a;
	int n = 0;

	(void)state;
	assert_non_null(w);
	assert_non_null(w->runner_variants);
	for (v = w->runner_variants; *v; v++, n++) {
		assert_int_equal(harness_parse_args(w, 1, (char *const *)(uintptr_t)v, &a, &e), 0);
		assert_int_equal(a.zero_page, n == 0 ? 1 : 0);
	}
	assert_int_equal(n, 2);
}

/* system-wide page migrations and NUMA hinting faults so far (0 for a counter the kernel lacks) */
static long long moved_pages(void)
{
	long long hint = tp_vmstat("numa_hint_faults"), mig = tp_vmstat("pgmigrate_success");

	return (hint > 0 ? hint : 0) + (mig > 0 ? mig : 0);
}

/*
 * The later passes find the memory mapped: their minor faults are 0, save
 * those the kernel adds by unmapping pages under them meanwhile (NUMA
 * balancing's hinting faults, a migration by compaction), which can be no
 * more than the system-wide numa_hint_faults + pgmigrate_success rise over
 * the run, moved.
 */
static void check_record(const struct record *r, uint64_t half, long long moved)
{
	static const char *const positive[] = { "memcmp_first_ns", "memcmp_ns", "memcmp_mib_s",
						 "stride_ns", "stride_ns_per_compare", "half_bytes",
						 "passes", "stride_passes", NULL };
	uint64_t u, later, stride;

	assert_int_equal(r->type, REC_RESULT);
	wlt_declared("hzp", r, "guest_thp");
	wlt_positive(r, positive);
	assert_int_equal(rec_get_u64(r, "half_bytes", &u), 0);
	assert_int_equal(u, half);
	assert_int_equal(rec_get_u64(r, "memcmp_first_minflt", &u), 0);
	assert_true(u >= 1);	/* the first pass faults the never-written memory in */
	assert_int_equal(rec_get_u64(r, "memcmp_minflt", &later), 0);
	assert_int_equal(rec_get_u64(r, "stride_minflt", &stride), 0);
	if (later + stride > (uint64_t)moved)
		fail_msg("later passes took %llu + %llu minor faults; pages unmapped under them by "
			 "NUMA balancing or migration: at most %lld", (unsigned long long)later,
			 (unsigned long long)stride, moved);
	if (later + stride)
		print_message("later passes: %llu + %llu minor faults, %lld pages migrated or "
			      "NUMA-hinted meanwhile\n", (unsigned long long)later,
			      (unsigned long long)stride, moved);
	assert_int_equal(rec_get_u64(r, "rss_bytes", &u), 0);
	assert_true(u <= 2 * half);
}

static void test_real_run(void **state)
{
	const char *argv[] = { "hzp", "--half=4M", "--passes=2", "--stride-passes=2",
			       "--label=guest_thp=test", NULL };
	struct wlt_out o;
	long long m0;
	int madv;

	(void)state;
	for (madv = 0; madv < 2; madv++) {
		argv[5] = madv ? "--madvise=1" : NULL;
		m0 = moved_pages();
		wlt_run("", argv, madv ? 6 : 5, &o);
		if (o.rc != HARNESS_OK)
			fail_msg("exit %d: %s", o.rc, o.msg);
		assert_int_equal(o.n, 1);
		check_record(&o.rec[0], 4u << 20, moved_pages() - m0);
		assert_string_equal(rec_get(&o.rec[0], "madvise"), madv ? "1" : "0");
		wlt_free(&o);
	}
}

static int setup(void **state)
{
	(void)state;
	if (!wlt_tree(small_root, false, 921600) || !wlt_tree(knob_root, true, 0) ||
	    !wlt_tree(bare_root, true, 0))
		return -1;
	wlt_put(knob_root, "/sys/kernel/mm/transparent_hugepage/enabled",
		"always [madvise] never\n");
	wlt_put(knob_root, "/sys/kernel/mm/transparent_hugepage/defrag",
		"always defer defer+madvise [madvise] never\n");
	wlt_put(knob_root, ZP, "1\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(small_root);
	wlt_tree_free(knob_root);
	wlt_tree_free(bare_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(bad_cases) + 5];
	size_t i, n = 0;

	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "no use_zero_page knob", test_no_knob, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "use_zero_page set, recorded, restored (fake /sys)",
					  test_set_restore, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "use_zero_page not a number", test_bad_knob, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "runner variants parse", test_runner_variants, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "short real runs: record parses, fields positive",
					  test_real_run, NULL, NULL, NULL };
	return _cmocka_run_group_tests("hzp", tests, n, setup, teardown);
}
