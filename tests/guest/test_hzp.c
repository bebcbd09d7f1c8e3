/*
 * tests for guest/hzp.c: parameter checks (fail and skip records with
 * reasons), use_zero_page set and restored in a fake /sys (never the real
 * one), the runner's variants, the zero page evidence (what the read faults
 * mapped) from a fake /proc/vmstat and smaps for both outcomes, a run whose
 * fake smaps says the reads allocated memory, and a short real run whose
 * record is checked.
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
static char fake_root[] = "/tmp/thpeval-hzp-fake-XXXXXX";	/* fake /proc and /sys */

#define VMSTAT "/proc/vmstat"
#define SMAPS "/proc/self/smaps"
#define BUF_ADDR 0x7f0000000000ull	/* the buffer in the fake smaps below */

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

	wlt_expect_bad(small_root, c->argv, N(c->argv), HARNESS_USAGE, REC_FAIL, c->reason, NULL);
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
	struct wl_common c;
	struct hzp_opts a;
	int n = 0;

	(void)state;
	assert_non_null(w);
	assert_non_null(w->runner_variants);
	for (v = w->runner_variants; *v; v++, n++) {
		assert_int_equal(harness_parse_args(w, 1, (char *const *)(uintptr_t)v, &c, &a, &e), 0);
		assert_int_equal(a.zero_page, n == 0 ? 1 : 0);
	}
	assert_int_equal(n, 2);
}

/* ---- the zero page evidence ------------------------------------------------------ */

struct class_case {
	const char *name;
	uint64_t bytes, rss, minflt;
	enum hzp_mapped want;
};

/* Rss decides memory vs zero page; faults per 2M decide the zero page's size */
static void test_classify(void **state)
{
	static const struct class_case cases[] = {
		{ "huge zero page: one fault per 2M", 64u << 20, 0, 33, HZP_MAPPED_HUGE_ZERO },
		{ "small zero page: one fault per 4K", 64u << 20, 0, 16385, HZP_MAPPED_SMALL_ZERO },
		{ "both sizes", 64u << 20, 0, 2000, HZP_MAPPED_MIXED_ZERO },
		{ "reads allocated huge pages", 64u << 20, 64u << 20, 33, HZP_MAPPED_MEMORY },
		{ "reads allocated 4K pages", 64u << 20, 64u << 20, 16385, HZP_MAPPED_MEMORY },
		{ "Rss just within 1%", 100u << 20, 1u << 20, 50, HZP_MAPPED_HUGE_ZERO },
		{ "Rss past 1%", 100u << 20, (1u << 20) + 4096, 50, HZP_MAPPED_MEMORY },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		struct hzp_evidence ev;

		memset(&ev, 0, sizeof(ev));
		ev.bytes = cases[i].bytes;
		ev.vma.rss_bytes = cases[i].rss;
		ev.first_minflt = cases[i].minflt;
		if (hzp_classify(&ev) != cases[i].want)
			fail_msg("%s: %s, want %s", cases[i].name, hzp_mapped_name(hzp_classify(&ev)),
				 hzp_mapped_name(cases[i].want));
	}
}

static void put_vmstat(uint64_t alloc, uint64_t failed)
{
	char text[256];

	snprintf(text, sizeof(text), "nr_free_pages 1000\nthp_fault_alloc 7\nthp_zero_page_alloc %llu\n"
		 "thp_zero_page_alloc_failed %llu\nswpin_zero 0\n", (unsigned long long)alloc,
		 (unsigned long long)failed);
	wlt_put(fake_root, VMSTAT, text);
}

/* one mapping at BUF_ADDR with bytes, of which rss_kb resident, huge_kb on huge pages */
static void put_smaps(uint64_t bytes, uint64_t rss_kb, uint64_t huge_kb)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "7e0000000000-7e0000001000 r--p 00000000 00:00 0\nRss:                   4 kB\n"
		 "%llx-%llx rw-p 00000000 00:00 0\nSize: %llu kB\nRss: %llu kB\n"
		 "AnonHugePages: %llu kB\n",
		 (unsigned long long)BUF_ADDR, (unsigned long long)(BUF_ADDR + bytes),
		 (unsigned long long)(bytes >> 10), (unsigned long long)rss_kb,
		 (unsigned long long)huge_kb);
	wlt_put(fake_root, SMAPS, text);
}

/* the evidence read from the fake files around a "first pass" with minflt faults */
static void read_evidence(uint64_t bytes, uint64_t minflt, uint64_t zp_before, uint64_t zp_after,
			  uint64_t fail_after, struct hzp_evidence *ev)
{
	struct hzp_zpstat z0, z1;
	struct err e = ERR_INIT;

	put_vmstat(zp_before, 0);
	hzp_zpstat_read(fake_root, &z0);
	put_vmstat(zp_after, fail_after);
	hzp_zpstat_read(fake_root, &z1);
	assert_true(z0.have && z1.have);
	if (hzp_evidence_read(fake_root, BUF_ADDR + 4096, bytes, minflt, &z0, &z1, ev, &e))
		fail_msg("evidence: %s", e.msg);
}

/* used: Rss 0, one fault per 2M, the huge zero page allocated on the way */
static void test_evidence_used(void **state)
{
	const uint64_t bytes = 128u << 20;
	struct hzp_evidence ev;
	char why[REC_VAL_MAX] = "";

	(void)state;
	put_smaps(bytes, 0, 0);
	read_evidence(bytes, 65, 8, 9, 0, &ev);
	assert_true(ev.have_zp);
	assert_int_equal(ev.zp_alloc, 1);
	assert_int_equal(ev.zp_failed, 0);
	assert_int_equal(ev.vma.rss_bytes, 0);
	assert_int_equal(hzp_classify(&ev), HZP_MAPPED_HUGE_ZERO);
	assert_true(hzp_zero_page_verdict(&ev, "madvise", true, why, sizeof(why)));
	/* an existing huge zero page is not allocated again: a 0 delta is no evidence against */
	read_evidence(bytes, 65, 9, 9, 0, &ev);
	assert_true(hzp_zero_page_verdict(&ev, "madvise", true, why, sizeof(why)));
}

/* not used: the reads allocated real huge pages (a kernel that does), or took the 4K zero page */
static void test_evidence_not_used(void **state)
{
	const uint64_t bytes = 1u << 30;
	struct hzp_evidence ev;
	char why[REC_VAL_MAX] = "";

	(void)state;
	put_smaps(bytes, 1u << 20, 1u << 20);
	read_evidence(bytes, 514, 0, 0, 0, &ev);
	assert_int_equal(hzp_classify(&ev), HZP_MAPPED_MEMORY);
	assert_false(hzp_zero_page_verdict(&ev, "madvise", true, why, sizeof(why)));
	if (!strstr(why, "reads allocated Rss 1G of 1G (AnonHugePages 1G) with use_zero_page=1, "
			 "THP madvise, madvise=1; thp_zero_page_alloc +0 _failed +0"))
		fail_msg("reason: '%s'", why);

	/* the huge zero page could not be allocated: the faults fell back to the 4K zero page */
	put_smaps(bytes, 0, 0);
	read_evidence(bytes, 512u * 512, 3, 3, 2, &ev);
	assert_int_equal(hzp_classify(&ev), HZP_MAPPED_SMALL_ZERO);
	assert_false(hzp_zero_page_verdict(&ev, "always", false, why, sizeof(why)));
	if (!strstr(why, "4K zero page (512 faults per 2M)") || !strstr(why, "_failed +2"))
		fail_msg("reason: '%s'", why);

	/* no counters: said, not guessed */
	wlt_put(fake_root, VMSTAT, "nr_free_pages 1000\n");
	put_smaps(bytes, 1u << 20, 0);
	{
		struct hzp_zpstat z0, z1;
		struct err e = ERR_INIT;

		hzp_zpstat_read(fake_root, &z0);
		hzp_zpstat_read(fake_root, &z1);
		assert_false(z0.have);
		assert_int_equal(hzp_evidence_read(fake_root, BUF_ADDR, bytes, 9, &z0, &z1, &ev, &e), 0);
	}
	assert_false(ev.have_zp);
	assert_false(hzp_zero_page_verdict(&ev, "always", false, why, sizeof(why)));
	assert_non_null(strstr(why, "thp_zero_page_alloc unreadable"));
}

/*
 * The whole workload on the fake tree (its smaps covers every address): the
 * zp1 arm whose reads were resident says zero_page_in_effect=0 with the
 * reason; the zp0 arm carries its coverage and no zero page verdict.
 */
static void test_run_fake(void **state)
{
	const char *argv[] = { "hzp", "--half=2M", "--passes=2", "--stride-passes=1", "--madvise=1",
			       "--label=guest_thp=test" };
	const struct record *r;
	struct wlt_out o;
	double d;

	(void)state;
	wlt_put(fake_root, SMAPS, "1000-7ffffffff000 rw-p 00000000 00:00 0\nRss: 4096 kB\n"
				  "AnonHugePages: 4096 kB\n");
	put_vmstat(5, 0);
	wlt_put(fake_root, ZP, "1\n");
	wlt_run(fake_root, argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	r = &o.rec[0];
	wlt_declared("hzp", r, "guest_thp");
	assert_string_equal(rec_get(r, "variant"), "zp1");
	assert_string_equal(rec_get(r, "zero_page_mapped"), "none");
	assert_string_equal(rec_get(r, "zero_page_in_effect"), "0");
	assert_string_equal(rec_get(r, "vm_thp_zero_page_alloc"), "0");
	assert_non_null(rec_get(r, "zero_page_reason"));
	if (!strstr(rec_get(r, "zero_page_reason"), "reads allocated Rss 4M of 4M (AnonHugePages 4M) "
						       "with use_zero_page=1, THP madvise, madvise=1"))
		fail_msg("reason: '%s'", rec_get(r, "zero_page_reason"));
	wlt_free(&o);

	wlt_put(fake_root, ZP, "0\n");
	wlt_run(fake_root, argv, N(argv), &o);
	assert_int_equal(o.rc, HARNESS_OK);
	r = &o.rec[0];
	assert_string_equal(rec_get(r, "variant"), "zp0");
	assert_int_equal(rec_get_f64(r, "huge_pct", &d), 0);
	assert_true(d == 100.0);
	assert_null(rec_get(r, "zero_page_in_effect"));
	assert_null(rec_get(r, "zero_page_reason"));
	wlt_free(&o);
	wlt_put(fake_root, ZP, "1\n");
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
#ifdef __SANITIZE_ADDRESS__
	/* the workload runs in this process: ASan's memcmp interceptor reads its shadow of the
	 * buffers, and those shadow pages fault in during the passes (a few) */
	if (later + stride)
		print_message("later passes: %llu + %llu minor faults, not bounded under ASan (its "
			      "shadow memory faults in)\n", (unsigned long long)later,
			      (unsigned long long)stride);
	later = stride = 0;
#endif
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
	/* whatever this machine's kernel did, the record says what it was */
	assert_non_null(rec_get(r, "zero_page_mapped"));
	if (!strcmp(rec_get(r, "use_zero_page"), "1")) {
		assert_int_equal(rec_get_u64(r, "zero_page_in_effect", &u), 0);
		assert_true((u == 1) == !strcmp(rec_get(r, "zero_page_mapped"), "huge"));
		assert_true((u == 0) == (rec_get(r, "zero_page_reason") != NULL));
	}
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
	    !wlt_tree(bare_root, true, 0) || !wlt_tree(fake_root, false, 8u << 20))
		return -1;
	wlt_put(fake_root, "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	wlt_put(fake_root, "/sys/kernel/mm/transparent_hugepage/defrag", "[madvise] never\n");
	wlt_put(fake_root, ZP, "1\n");
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
	wlt_tree_free(fake_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(bad_cases) + 9];
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
	tests[n++] = (struct CMUnitTest){ "what the read faults mapped: classification table",
					  test_classify, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "fake vmstat and smaps: huge zero page used",
					  test_evidence_used, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "fake vmstat and smaps: huge zero page not used",
					  test_evidence_not_used, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "fake tree: zp1 not in effect with its reason, zp0 coverage",
					  test_run_fake, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "short real runs: record parses, fields positive",
					  test_real_run, NULL, NULL, NULL };
	return _cmocka_run_group_tests("hzp", tests, n, setup, teardown);
}
