/*
 * tests for guest/color.c: the set-conflicting stride, the CPUID fallback
 * (used when a fake /sys has no cache directory), parameter checks, short
 * real runs whose record is parsed and checked, and runs on the fixture
 * machines' CPUs (tests/guest/fixtures).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guest/color.h"
#include "wltest.h"

#define N(a) WLT_N(a)
#define IDX "/sys/devices/system/cpu/cpu0/cache/index"

static char small_root[] = "/tmp/thpeval-color-small-XXXXXX";	/* MemAvailable 900M */
static char sys_root[] = "/tmp/thpeval-color-sys-XXXXXX";	/* real /proc, fake caches */
static char bare_root[] = "/tmp/thpeval-color-bare-XXXXXX";	/* real /proc, no caches */

struct stride_case {
	const char *name;
	struct cache_geom g;
	uint64_t stride;
};

static const struct stride_case stride_cases[] = {
	{ "L1d 32K 8-way: one page", { 1, 8, 64, 64, 32768 }, 4096 },
	{ "L1d 48K 12-way: one page", { 1, 12, 64, 64, 49152 }, 4096 },
	{ "L1d 16K 4-way x 64 sets x 32B: at least a page", { 1, 4, 64, 32, 8192 }, 4096 },
	{ "L2 512K 8-way: 64K", { 2, 8, 1024, 64, 524288 }, 65536 },
	{ "L2 1.25M 10-way: 128K", { 2, 10, 2048, 64, 1310720 }, 131072 },
	{ "sets not a power of two", { 2, 12, 1536, 64, 1179648 }, 0 },
	{ "no sets", { 1, 8, 0, 64, 0 }, 0 },
	{ "no line size", { 1, 8, 64, 0, 0 }, 0 },
};

static void test_stride(void **state)
{
	const struct stride_case *c = *state;

	assert_int_equal(color_stride(&c->g), c->stride);
}

/* frames one stride apart, read in a chain: the value read is 0 */
static void test_read(void **state)
{
	char *buf = aligned_alloc(4096, 9 * 4096);

	(void)state;
	assert_non_null(buf);
	memset(buf, 0, 9 * 4096);
	assert_int_equal(color_read(buf, 4096, 9, 100), 0);
	free(buf);
}

static void test_cpuid(void **state)
{
	struct cache_geom g;
	struct err e = ERR_INIT;
	int r;

	(void)state;
	r = color_cpuid_geom(1, &g, &e);
	if (r == -ENOENT) {
		print_message("skipped: %s\n", e.msg);
		skip();
	}
	assert_int_equal(r, 0);
	assert_int_equal(g.level, 1);
	assert_true(g.ways >= 1 && g.ways <= 64);
	assert_true(g.line_bytes >= 16 && g.line_bytes <= 256);
	assert_true(g.sets >= 1);
	assert_int_equal(g.size_bytes, g.ways * g.sets * g.line_bytes);
}

struct bad_case {
	const char *name;
	const char *argv[4];
	const char *reason;
};

static struct bad_case bad_cases[] = {
	{ "zero loads", { "color", "--loads=0" }, "--loads=0 is out of range" },
	{ "zero trials", { "color", "--trials=0" }, "--trials=0 is out of range" },
	{ "unknown option", { "color", "--ways=9" }, "unknown option '--ways' for workload color" },
};

static void test_bad(void **state)
{
	const struct bad_case *c = *state;

	wlt_expect_bad(small_root, c->argv, N(c->argv), HARNESS_USAGE, REC_FAIL, c->reason, NULL);
}

static void check_record(const struct record *r, bool l2)
{
	static const char *const positive[] = { "l1d_ways", "l1d_sets", "l1d_line_bytes",
						 "l1d_stride_bytes", "l1d_nways_ns", "l1d_nways1_ns",
						 "region_bytes", "loads", "trials", NULL };
	static const char *const positive_l2[] = { "l2_ways", "l2_stride_bytes", "l2_nways_ns",
						    "l2_nways1_ns", NULL };
	uint64_t u;
	double pct;

	assert_int_equal(r->type, REC_RESULT);
	wlt_declared("color", r, "guest_thp");
	wlt_positive(r, positive);
	if (l2)
		wlt_positive(r, positive_l2);
	assert_int_equal(rec_get_u64(r, "region_bytes", &u), 0);
	assert_int_equal(u % (2u << 20), 0);
	assert_int_equal(rec_get_u64(r, "huge_backed", &u), 0);
	assert_true(u <= 1);
	assert_int_equal(rec_get_f64(r, "huge_pct", &pct), 0);
	assert_true(pct >= 0 && pct <= 100);
}

/* geometry from a fake sysfs: the record says what it was given */
static void test_real_run_sysfs(void **state)
{
	const char *argv[] = { "color", "--loads=2000", "--trials=1", "--label=guest_thp=test" };
	struct wlt_out o;

	(void)state;
	wlt_run(sys_root, argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	check_record(&o.rec[0], true);
	assert_string_equal(rec_get(&o.rec[0], "geometry"), "sysfs");
	assert_string_equal(rec_get(&o.rec[0], "l1d_ways"), "4");
	assert_string_equal(rec_get(&o.rec[0], "l1d_stride_bytes"), "4096");
	assert_string_equal(rec_get(&o.rec[0], "l2_ways"), "16");
	assert_string_equal(rec_get(&o.rec[0], "l2_size_bytes"), "1048576");
	assert_string_equal(rec_get(&o.rec[0], "l2_stride_bytes"), "65536");
	wlt_free(&o);
}

/*
 * color.c's rule for a usable geometry: 1 to 64 ways, a set-conflicting
 * stride (color_stride), and ways + 1 frames a stride apart within 64M
 */
static bool geom_usable(const struct cache_geom *g)
{
	uint64_t stride = color_stride(g);

	return g->ways >= 1 && g->ways <= 64 && stride && stride * (g->ways + 1) <= (64u << 20);
}

/*
 * No cache directory: the workload takes CPUID's level 1 geometry when that
 * is usable by its rule, and says so in the record; else it skips with the
 * reason. Which of the two is the CPU's business; the test asks it too.
 */
static void test_real_run_cpuid(void **state)
{
	const char *argv[] = { "color", "--loads=2000", "--trials=3", "--label=guest_thp=test" };
	struct cache_geom g;
	struct wlt_out o;
	uint64_t u;

	(void)state;
	wlt_run(bare_root, argv, N(argv), &o);
	if (color_cpuid_geom(1, &g, NULL) || !geom_usable(&g)) {
		wlt_expect_one(&o, HARNESS_SKIPPED, REC_SKIP, "no usable level 1 data cache");
		wlt_free(&o);
		return;
	}
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	check_record(&o.rec[0], false);
	assert_string_equal(rec_get(&o.rec[0], "geometry"), "cpuid");
	assert_int_equal(rec_get_u64(&o.rec[0], "l1d_ways", &u), 0);
	assert_int_equal(u, g.ways);
	assert_int_equal(rec_get_u64(&o.rec[0], "l1d_stride_bytes", &u), 0);
	assert_int_equal(u, color_stride(&g));
	wlt_free(&o);
}

/* the machine's own geometry */
static void test_real_run(void **state)
{
	const char *argv[] = { "color", "--loads=5000", "--trials=3", "--label=guest_thp=test" };
	struct wlt_out o;

	(void)state;
	wlt_run("", argv, N(argv), &o);
	if (o.rc == HARNESS_SKIPPED) {
		print_message("skipped: %s\n", o.msg);
		wlt_free(&o);
		skip();
	}
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	check_record(&o.rec[0], rec_get(&o.rec[0], "l2_ways") != NULL);
	wlt_free(&o);
}

/* ---- the CPUs of the fixture machines (tests/guest/fixtures) ------------------ */

struct cpu_case {
	const char *name, *fixture;
	/* what the record must say: "field=value" (NULL-terminated) */
	const char *want[12];
};

static const struct cpu_case cpu_cases[] = {
	/* L2 stride 1024 sets x 64B = 64K, 9 frames: one 2M region */
	{ "AMD EPYC: L1d 32K 8-way, L2 512K 8-way", "cpu-amd-epyc-512k",
	  { "geometry=sysfs", "l1d_ways=8", "l1d_sets=64", "l1d_size_bytes=32768",
	    "l1d_stride_bytes=4096", "l2_ways=8", "l2_sets=1024", "l2_size_bytes=524288",
	    "l2_stride_bytes=65536", "region_bytes=2097152", NULL } },
	/* L2 stride 2048 sets x 64B = 128K, 17 frames: 2.1M, two 2M pages */
	{ "Intel Xeon: L1d 48K 12-way, L2 2M 16-way", "cpu-intel-xeon-2m",
	  { "geometry=sysfs", "l1d_ways=12", "l1d_sets=64", "l1d_size_bytes=49152",
	    "l1d_stride_bytes=4096", "l2_ways=16", "l2_sets=2048", "l2_size_bytes=2097152",
	    "l2_stride_bytes=131072", "region_bytes=4194304", NULL } },
};

/* the fixture CPU's L1d and L2, from its sysfs, measured one stride apart */
static void test_cpu(void **state)
{
	const struct cpu_case *c = *state;
	const char *argv[] = { "color", "--loads=2000", "--trials=1", "--label=guest_thp=test" };
	char root[] = "/tmp/thpeval-color-cpu-XXXXXX", key[32];
	const char *const *w, *got;
	struct wlt_out o;

	assert_non_null(wlt_cpu_tree(root, c->fixture));
	wlt_run(root, argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	check_record(&o.rec[0], true);
	for (w = c->want; *w; w++) {
		snprintf(key, sizeof(key), "%.*s", (int)(strchr(*w, '=') - *w), *w);
		got = rec_get(&o.rec[0], key);
		if (!got || strcmp(got, strchr(*w, '=') + 1))
			fail_msg("%s: %s = %s, want %s", c->fixture, key, got ? got : "(absent)", *w);
	}
	wlt_free(&o);
	wlt_tree_free(root);
}

static void fake_cache(const char *root, int idx, const char *level, const char *type,
		       const char *ways, const char *sets, const char *size)
{
	char rel[128];

#define PUT(file, text) (snprintf(rel, sizeof(rel), IDX "%d/" file, idx), wlt_put(root, rel, text))
	PUT("level", level);
	PUT("type", type);
	PUT("ways_of_associativity", ways);
	PUT("number_of_sets", sets);
	PUT("coherency_line_size", "64\n");
	PUT("size", size);
#undef PUT
}

static int setup(void **state)
{
	(void)state;
	if (!wlt_tree(small_root, false, 921600) || !wlt_tree(sys_root, true, 0) ||
	    !wlt_tree(bare_root, true, 0))
		return -1;
	fake_cache(sys_root, 0, "1\n", "Data\n", "4\n", "64\n", "16K\n");
	fake_cache(sys_root, 1, "1\n", "Instruction\n", "8\n", "64\n", "32K\n");
	fake_cache(sys_root, 2, "2\n", "Unified\n", "16\n", "1024\n", "1024K\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(small_root);
	wlt_tree_free(sys_root);
	wlt_tree_free(bare_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(stride_cases) + N(bad_cases) + N(cpu_cases) + 5];
	size_t i, n = 0;

	for (i = 0; i < N(stride_cases); i++)
		tests[n++] = (struct CMUnitTest){ stride_cases[i].name, test_stride, NULL, NULL,
						  (void *)(uintptr_t)&stride_cases[i] };
	tests[n++] = (struct CMUnitTest){ "chained reads", test_read, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "CPUID level 1 data cache", test_cpuid, NULL, NULL, NULL };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "geometry from a fake sysfs", test_real_run_sysfs, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "geometry from CPUID", test_real_run_cpuid, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "short real run: record parses, fields positive",
					  test_real_run, NULL, NULL, NULL };
	for (i = 0; i < N(cpu_cases); i++)
		tests[n++] = (struct CMUnitTest){ cpu_cases[i].name, test_cpu, NULL, NULL,
						  (void *)(uintptr_t)&cpu_cases[i] };
	return _cmocka_run_group_tests("color", tests, n, setup, teardown);
}
