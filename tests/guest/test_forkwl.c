/*
 * tests for guest/forkwl.c: parameter checks, and short real runs whose record
 * is parsed and checked (every declared field, positive times, the cycle no
 * shorter than the fork call, the buffer's coverage a percentage).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guest/forkwl.h"
#include "guest/region.h"
#include "lib/wltraits.h"
#include "wltest.h"

#define N(a) WLT_N(a)

static char small_root[] = "/tmp/thpeval-forkwl-XXXXXX";	/* MemAvailable 100M */

struct bad_case {
	const char *name;
	const char *argv[4];
	const char *reason;
};

static struct bad_case bad_cases[] = {
	{ "zero passes", { "fork", "--passes=0" }, "--passes=0 is out of range" },
	{ "too many passes", { "fork", "--passes=1001" }, "out of range (1 to 1000)" },
	{ "size not 2M", { "fork", "--size=3M" }, "--size must be a multiple of 2M" },
	{ "more than MemAvailable", { "fork", "--size=96M" },
	  "a buffer of 96 MiB (32M kept free) does not fit in the 100 MiB available" },
	{ "negative", { "fork", "--passes=-1" }, "bad value '-1' for --passes" },
};

static void test_bad(void **state)
{
	const struct bad_case *c = *state;

	wlt_expect_bad(small_root, c->argv, N(c->argv), HARNESS_USAGE, REC_FAIL, c->reason, NULL);
}

static void run_fork(const char *madvise)
{
	const char *argv[] = { "fork", "--size=4M", "--passes=3", madvise, "--label=guest_thp=test" };
	static const char *const positive[] = { "fork_us", "cycle_us", "bytes", "passes", NULL };
	double fork_us, cycle_us, pct;
	struct wlt_out o;
	uint64_t u;

	wlt_run("", argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.rec[0].type, REC_RESULT);
	wlt_declared("fork", &o.rec[0], "guest_thp");
	wlt_positive(&o.rec[0], positive);
	assert_int_equal(rec_get_u64(&o.rec[0], "bytes", &u), 0);
	assert_int_equal(u, 4u << 20);
	assert_int_equal(rec_get_u64(&o.rec[0], "madvise", &u), 0);
	assert_int_equal(u, strcmp(madvise, "--madvise=1") ? 0 : 1);
	assert_int_equal(rec_get_f64(&o.rec[0], "fork_us", &fork_us), 0);
	assert_int_equal(rec_get_f64(&o.rec[0], "cycle_us", &cycle_us), 0);
	assert_true(cycle_us >= fork_us);
	assert_int_equal(rec_get_f64(&o.rec[0], "huge_pct", &pct), 0);
	assert_true(pct >= 0 && pct <= 100);
	wlt_free(&o);
}

static void test_real_run(void **state)
{
	(void)state;
	run_fork("--madvise=0");
}

static void test_real_run_madvise(void **state)
{
	(void)state;
	run_fork("--madvise=1");
}

/* its traits: the buffer's coverage proves the treatment, fork_us gates */
static void test_traits(void **state)
{
	const struct wl_rule *r = wltraits_rule("fork", NULL);

	(void)state;
	assert_non_null(wltraits_find("fork"));
	assert_string_equal(r->cov_field, "huge_pct");
	assert_int_equal(r->want, WL_WANT_SETTING);
	assert_true(wltraits_primary("fork", "fork_us"));
	assert_false(wltraits_primary("fork", "cycle_us"));
}

static int setup(void **state)
{
	(void)state;
	return wlt_tree(small_root, false, 102400) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(small_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(bad_cases) + 3];
	size_t i, n = 0;

	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL, &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "short real run", test_real_run, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "short real run, MADV_HUGEPAGE", test_real_run_madvise, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "traits", test_traits, NULL, NULL, NULL };
	return _cmocka_run_group_tests("forkwl", tests, n, setup, teardown);
}
