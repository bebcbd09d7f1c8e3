/*
 * tests for guest/twinmap.c: both views are the same memory (a write through
 * one is read through the other, on the same physical frames where pagemap
 * shows them), the 4K view never gets a 2M mapping, the 2M view gets them
 * exactly when the effective shmem policy allows, bad sizes are refused,
 * close is safe twice; and the offset chain of guest/tlb.c chased through
 * both views.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/region.h"
#include "guest/sysinfo.h"
#include "guest/tlb.h"
#include "guest/twinmap.h"
#include "thppolicy.h"

/* the frame of a page from pagemap (root only: 0 otherwise) */
static uint64_t pfn_of(const void *p)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)p / 4096 * sizeof(ent))) != sizeof(ent))
		ent = 0;
	close(fd);
	return ent & ((1ull << 55) - 1);
}

static void test_bad_len(void **state)
{
	static const size_t bad[] = { 0, 4096, REGION_HUGE + 4096 };
	struct twinmap t;
	struct err e = ERR_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err_clear(&e);
		assert_int_equal(twinmap_open(&t, bad[i], &e), -EINVAL);
		assert_non_null(strstr(e.msg, "not a positive multiple of 2M"));
		assert_int_equal(t.fd, -1);
		assert_null(t.huge);
	}
}

/*
 * Both views alias; the 4K view never gets a 2M mapping. The 2M view is
 * PMD-mapped throughout exactly when the effective shmem policy for the PMD
 * size allows it (hugepages-2048kB/shmem_enabled unless 'inherit', see
 * thppolicy.h; twinmap madvises the view) and no 2M allocation failed
 * (thp_file_fallback); not at all when the policy is off.
 */
static void test_views_alias(void **state)
{
	size_t len = 2 * REGION_HUGE, off;
	struct twinmap t;
	struct err e = ERR_INIT;
	struct tp_policy pol;
	long long fb0 = tp_vmstat("thp_file_fallback"), fb1;
	double hp = -1, sp = -1;
	uint64_t a, b;

	(void)state;
	assert_int_equal(twinmap_open(&t, len, &e), 0);
	fb1 = tp_vmstat("thp_file_fallback");
	assert_int_equal((uintptr_t)t.huge % REGION_HUGE, 0);
	assert_int_equal((uintptr_t)t.small % REGION_HUGE, REGION_PAGE);
	for (off = 0; off < len; off += REGION_PAGE)
		t.huge[off + 8] = (char)(off / REGION_PAGE * 7);
	for (off = 0; off < len; off += REGION_PAGE)
		assert_int_equal(t.small[off + 8], (char)(off / REGION_PAGE * 7));
	t.small[len - 1] = 'x';
	assert_int_equal(t.huge[len - 1], 'x');
	a = pfn_of(t.huge + 77 * REGION_PAGE);
	b = pfn_of(t.small + 77 * REGION_PAGE);
	if (a && b)
		assert_int_equal(a, b);	/* the same frame behind both */
	assert_int_equal(twinmap_coverage("", &t, &hp, &sp, &e), 0);
	twinmap_close(&t);
	assert_int_equal(t.fd, -1);
	twinmap_close(&t);	/* twice is fine */
	assert_true(sp == 0);	/* 4K past a 2M boundary: no PMD can map it */
	tp_shmem_pmd("", &pol);
	if (!tp_allows(&pol, true) || tp_self_thp_disabled()) {
		if (hp != 0)
			fail_msg("2M view %.1f%% PMD-mapped though shmem THP is off here (%s)", hp,
				 pol.why);
		return;
	}
	if (hp == 100)
		return;
	if (fb0 < 0 || fb1 < 0) {
		print_message("skipped: 2M view %.1f%% PMD-mapped, and /proc/vmstat has no "
			      "thp_file_fallback to tell a failed 2M allocation apart\n", hp);
		skip();
	}
	if (fb1 > fb0) {
		print_message("skipped: no free 2M block: thp_file_fallback rose by %lld while the "
			      "views were faulted (2M view %.1f%% PMD-mapped)\n", fb1 - fb0, hp);
		skip();
	}
	fail_msg("shmem THP allowed (%s), no 2M allocation failed, yet the 2M view is %.1f%% "
		 "PMD-mapped", pol.why, hp);
}

static void test_chain_through_views(void **state)
{
	size_t npages = 1024, i;
	struct twinmap t;
	struct err e = ERR_INIT;
	uint32_t *scratch = malloc(npages * sizeof(*scratch));
	unsigned char *seen = calloc(npages * 64, 1);
	uint64_t start, off;

	(void)state;
	assert_non_null(scratch);
	assert_non_null(seen);
	assert_int_equal(twinmap_open(&t, (size_t)region_round_huge(npages * REGION_PAGE), &e), 0);
	start = tlb_chain_build_off(t.huge, npages, 3, scratch);
	off = start;
	for (i = 0; i < npages; i++) {
		assert_true(off < npages * REGION_PAGE);
		assert_int_equal(off % 64, 0);
		assert_int_equal(seen[off / 64], 0);	/* every page once before the cycle closes */
		seen[off / 64] = 1;
		off = *(const uint64_t *)(t.small + off);	/* written through huge, read through small */
	}
	assert_int_equal(off, start);
	assert_int_equal(tlb_chase_off(t.small, start, npages), start);
	assert_int_equal(tlb_chase_off(t.huge, start, 3 * npages), start);
	assert_int_equal(tlb_chase_off(t.huge, start, 5), tlb_chase_off(t.small, start, 5));
	twinmap_close(&t);
	free(seen);
	free(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_len),
		cmocka_unit_test(test_views_alias),
		cmocka_unit_test(test_chain_through_views),
	};

	return cmocka_run_group_tests_name("twinmap", tests, NULL, NULL);
}
