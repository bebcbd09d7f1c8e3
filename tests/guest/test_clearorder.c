/*
 * tests for guest/clearorder.c: every order clears every byte (and only the
 * regions asked for), the names, parameter checks, and short real runs with
 * one and two tasks whose four records are parsed and checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guest/clearorder.h"
#include "guest/region.h"
#include "wltest.h"

#define N(a) WLT_N(a)

static char small_root[] = "/tmp/thpeval-clearorder-XXXXXX";	/* MemAvailable 900M */

static void test_clear(void **state)
{
	const enum clear_order *o = *state;
	size_t len = 3 * REGION_HUGE, i;
	unsigned char *buf = aligned_alloc(REGION_HUGE, len);

	assert_non_null(buf);
	memset(buf, 0xa5, len);
	clear_regions((char *)buf, 2, *o);
	for (i = 0; i < 2 * REGION_HUGE; i++)
		if (buf[i])
			fail_msg("%s left byte %zu set", clear_order_name(*o), i);
	for (; i < len; i++)
		assert_int_equal(buf[i], 0xa5);	/* the third region was not asked for */
	free(buf);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(clear_order_name(CLEAR_SEQ_SEQ), "seq-seq");
	assert_string_equal(clear_order_name(CLEAR_SEQ_REV), "seq-rev");
	assert_string_equal(clear_order_name(CLEAR_REV_SEQ), "rev-seq");
	assert_string_equal(clear_order_name(CLEAR_REV_REV), "rev-rev");
	assert_string_equal(clear_order_name(CLEAR__COUNT), "?");
}

struct bad_case {
	const char *name;
	const char *argv[5];
	const char *reason;
};

static struct bad_case bad_cases[] = {
	{ "zero regions", { "clearorder", "--regions=0" }, "--regions=0 is out of range" },
	{ "zero tasks", { "clearorder", "--tasks=0" }, "--tasks=0 is out of range" },
	{ "too many tasks", { "clearorder", "--tasks=65" }, "out of range (1 to 64)" },
	{ "zero passes", { "clearorder", "--passes=0" }, "--passes=0 is out of range" },
	{ "more than MemAvailable", { "clearorder", "--regions=256", "--tasks=2" },
	  "2 tasks x 256 regions of 2M need 1056M (32M kept free) but only 900M is available" },
	{ "negative", { "clearorder", "--regions=-1" }, "bad value '-1' for --regions" },
};

static void test_bad(void **state)
{
	const struct bad_case *c = *state;

	wlt_expect_bad(small_root, c->argv, N(c->argv), HARNESS_USAGE, REC_FAIL, c->reason, NULL);
}

static void run_tasks(const char *tasks)
{
	const char *argv[] = { "clearorder", "--regions=1", "--passes=2", tasks,
			       "--label=guest_thp=test" };
	static const char *const positive[] = { "mib_s", "task_mib_s", "task_mib_s_min",
						 "ns_per_4k", "bytes_per_task", NULL };
	struct wlt_out o;
	uint64_t u;
	double sum, task;
	size_t i;

	wlt_run("", argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, CLEAR__COUNT);	/* one record per combination, no summary */
	for (i = 0; i < CLEAR__COUNT; i++) {
		const struct record *r = wlt_variant(&o, clear_order_name((enum clear_order)i));

		assert_int_equal(r->type, REC_RESULT);
		wlt_declared("clearorder", r, "guest_thp");
		wlt_positive(r, positive);
		assert_int_equal(rec_get_u64(r, "bytes_per_task", &u), 0);
		assert_int_equal(u, REGION_HUGE);
		assert_int_equal(rec_get_u64(r, "tasks", &u), 0);
		assert_string_equal(rec_get(r, "tasks"), tasks + 8);
		assert_int_equal(rec_get_f64(r, "mib_s", &sum), 0);
		assert_int_equal(rec_get_f64(r, "task_mib_s", &task), 0);
		assert_true(sum >= task * 0.999 * (double)u);	/* sum of the tasks */
		assert_string_equal(rec_get(r, "page_order"), i < 2 ? "seq" : "rev");
		assert_string_equal(rec_get(r, "line_order"), i % 2 ? "rev" : "seq");
	}
	wlt_free(&o);
}

static void test_real_run(void **state)
{
	(void)state;
	run_tasks("--tasks=1");
}

static void test_real_run_tasks(void **state)
{
	(void)state;
	run_tasks("--tasks=2");
}

static int setup(void **state)
{
	(void)state;
	return wlt_tree(small_root, false, 921600) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(small_root);
	return 0;
}

int main(void)
{
	static const enum clear_order orders[CLEAR__COUNT] = { CLEAR_SEQ_SEQ, CLEAR_SEQ_REV,
							       CLEAR_REV_SEQ, CLEAR_REV_REV };
	struct CMUnitTest tests[CLEAR__COUNT + N(bad_cases) + 3];
	size_t i, n = 0;

	for (i = 0; i < CLEAR__COUNT; i++)
		tests[n++] = (struct CMUnitTest){ clear_order_name(orders[i]), test_clear, NULL,
						  NULL, (void *)(uintptr_t)&orders[i] };
	tests[n++] = (struct CMUnitTest){ "order names", test_names, NULL, NULL, NULL };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "short real run, one task", test_real_run, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "short real run, two tasks", test_real_run_tasks, NULL,
					  NULL, NULL };
	return _cmocka_run_group_tests("clearorder", tests, n, setup, teardown);
}
