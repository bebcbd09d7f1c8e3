/*
 * tests for guest/memset.c: the pointer-chase chain (Sattolo cycle, node
 * offsets), the per-2M first-touch probe (on this host's own THP, per buffer
 * through madvise: no global setting is changed; what to expect comes from
 * the effective per-size policy, tests/guest/thppolicy.h) and the 64-bit
 * store pass
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "guest/memset.h"
#include "guest/sysinfo.h"
#include "thppolicy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct chain_case {
	const char *name;
	size_t npages;
	uint64_t seed;
};

static struct chain_case chain_cases[] = {
	{ "2M, seed 1", 512, 1 },
	{ "2M, seed 0", 512, 0 },
	{ "8M, seed 42", 2048, 42 },
	{ "two pages", 2, 7 },
};

/* one cycle through every page, one node per page at a cache-line boundary */
static void test_chain(void **state)
{
	const struct chain_case *c = *state;
	size_t bytes = c->npages * MEMSET_PAGE, i, page, lines_used = 0;
	char *buf = aligned_alloc(MEMSET_PAGE, bytes);
	uint32_t *scratch = malloc(c->npages * sizeof(*scratch));
	unsigned char *seen = calloc(c->npages, 1);
	unsigned char line_seen[64] = { 0 };
	void *start, *p;

	assert_non_null(buf);
	assert_non_null(scratch);
	assert_non_null(seen);
	memset(buf, 0, bytes);
	start = memset_chain_build(buf, c->npages, c->seed, scratch);
	p = start;
	for (i = 0; i < c->npages; i++) {
		size_t off = (size_t)((char *)p - buf);

		assert_true(off < bytes);
		assert_int_equal(off % 64, 0);
		page = off / MEMSET_PAGE;
		assert_int_equal(seen[page], 0);	/* no page twice before the cycle closes */
		seen[page] = 1;
		if (!line_seen[(off % MEMSET_PAGE) / 64]++)
			lines_used++;
		p = *(void **)p;
	}
	assert_ptr_equal(p, start);	/* back at the start after exactly npages links */
	assert_ptr_equal(memset_chase(start, c->npages), start);
	if (c->npages >= 512)
		assert_true(lines_used >= 32);	/* offsets spread over the page's cache lines */
	free(seen);
	free(scratch);
	free(buf);
}

static void test_seed_changes_order(void **state)
{
	size_t npages = 512, bytes = npages * MEMSET_PAGE;
	char *a = aligned_alloc(MEMSET_PAGE, bytes), *b = aligned_alloc(MEMSET_PAGE, bytes);
	uint32_t *scratch = malloc(npages * sizeof(*scratch));
	void *pa, *pb;
	size_t i, same = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(scratch);
	pa = memset_chain_build(a, npages, 1, scratch);
	pb = memset_chain_build(b, npages, 2, scratch);
	for (i = 0; i < 64; i++) {
		same += ((char *)pa - a) == ((char *)pb - b);
		pa = *(void **)pa;
		pb = *(void **)pb;
	}
	assert_true(same < 8);
	/* and the same seed gives the same chain */
	pa = memset_chain_build(a, npages, 3, scratch);
	pb = memset_chain_build(b, npages, 3, scratch);
	for (i = 0; i < 64; i++) {
		assert_int_equal((char *)pa - a, (char *)pb - b);
		pa = *(void **)pa;
		pb = *(void **)pb;
	}
	free(scratch);
	free(a);
	free(b);
}

#define PROBE_BLOCKS 16u

/* a fresh 2M-aligned anonymous buffer of PROBE_BLOCKS blocks; unmap map, map_len after */
static char *fresh_buffer(int advice, char **map, size_t *map_len)
{
	size_t len = PROBE_BLOCKS * MEMSET_HUGE;
	char *buf;

	*map_len = len + MEMSET_HUGE;
	*map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(*map != MAP_FAILED);
	buf = (char *)(((uintptr_t)*map + MEMSET_HUGE - 1) & ~(uintptr_t)(MEMSET_HUGE - 1));
	assert_int_equal(madvise(buf, len, advice), 0);
	return buf;
}

static void assert_filled(const char *buf, size_t len, char c)
{
	size_t i;

	for (i = 0; i < len; i += 509)
		assert_int_equal(buf[i], c);
	assert_int_equal(buf[len - 1], c);
}

/* MADV_NOHUGEPAGE: every first touch maps one 4K page, the probe says so */
static void test_probe_4k(void **state)
{
	struct memset_probe pr;
	struct smaps_vma vma;
	struct err e = { 0 };
	size_t map_len, len = PROBE_BLOCKS * MEMSET_HUGE;
	char *map, *buf = fresh_buffer(MADV_NOHUGEPAGE, &map, &map_len);

	(void)state;
	assert_int_equal(memset_touch_probed(buf, len, 7, &pr), 0);
	assert_int_equal(pr.blocks, PROBE_BLOCKS);
	assert_int_equal(pr.huge_blocks, 0);
	assert_true(pr.probe_ns > 0);
	assert_filled(buf, len, 7);
	assert_int_equal(smaps_self("", (uint64_t)(uintptr_t)buf, &vma, &e), 0);
	assert_int_equal(vma.anon_huge_bytes, 0);
	munmap(map, map_len);
}

/*
 * MADV_HUGEPAGE where the effective PMD policy for anonymous memory allows
 * it (thppolicy.h): the probe counts exactly the blocks smaps shows as huge
 * (khugepaged cannot collapse one within the few ms of the test), and that is
 * some of them unless thp_fault_fallback says no 2M block was free. Where an
 * mTHP size large enough to cover the probed subpage is in effect too, a
 * block whose 2M allocation failed can still fault that subpage in: then,
 * and only then, probe and smaps may disagree.
 */
static void test_probe_huge(void **state)
{
	struct memset_probe pr;
	struct smaps_vma vma;
	struct err e = { 0 };
	struct tp_policy pol, large;
	size_t map_len, len = PROBE_BLOCKS * MEMSET_HUGE;
	unsigned long large_kb = 0;
	long long fb0, fb1;
	bool have_large;
	char *map, *buf;

	(void)state;
	tp_anon_pmd("", &pol);
	if (!tp_allows(&pol, true) || tp_self_thp_disabled()) {
		print_message("skipped: PMD THP is off for anonymous memory here (%s): no huge page "
			      "to find\n", tp_self_thp_disabled() ? "prctl PR_SET_THP_DISABLE" :
			      pol.why[0] ? pol.why : "no THP sysfs");
		skip();
	}
	have_large = tp_anon_mthp_from("", (MEMSET_PROBE_SUBPAGE + 1) * MEMSET_PAGE / 1024,
				       &large_kb, &large);
	fb0 = tp_vmstat("thp_fault_fallback");
	buf = fresh_buffer(MADV_HUGEPAGE, &map, &map_len);
	assert_int_equal(memset_touch_probed(buf, len, 9, &pr), 0);
	fb1 = tp_vmstat("thp_fault_fallback");
	assert_int_equal(pr.blocks, PROBE_BLOCKS);
	assert_filled(buf, len, 9);
	assert_int_equal(smaps_self("", (uint64_t)(uintptr_t)buf, &vma, &e), 0);
	munmap(map, map_len);
	if (!vma.have_anon_huge) {
		print_message("skipped: smaps has no AnonHugePages field (a kernel without THP)\n");
		skip();
	}
	if (pr.huge_blocks * MEMSET_HUGE != vma.anon_huge_bytes) {
		if (have_large && fb1 > fb0) {
			print_message("skipped: %llu blocks probed huge, smaps shows %llu kB: %lu kB mTHP "
				      "is in effect (%s) and thp_fault_fallback rose by %lld, so failed "
				      "2M blocks faulted the probed subpage in\n",
				      (unsigned long long)pr.huge_blocks,
				      (unsigned long long)vma.anon_huge_bytes >> 10, large_kb, large.why,
				      fb1 - fb0);
			skip();
		}
		fail_msg("%llu blocks probed huge, smaps shows %llu kB AnonHugePages",
			 (unsigned long long)pr.huge_blocks,
			 (unsigned long long)vma.anon_huge_bytes >> 10);
	}
	if (pr.huge_blocks > 0)
		return;
	if (fb0 < 0 || fb1 < 0) {
		print_message("skipped: no huge block, and /proc/vmstat has no thp_fault_fallback to "
			      "tell a failed 2M allocation apart\n");
		skip();
	}
	if (fb1 > fb0) {
		print_message("skipped: no free 2M block: thp_fault_fallback rose by %lld\n", fb1 - fb0);
		skip();
	}
	fail_msg("PMD THP allowed (%s), no 2M allocation failed, yet no block was huge", pol.why);
}

/* a block touched before the probe looks huge: the probe needs a fresh buffer */
static void test_probe_needs_fresh(void **state)
{
	struct memset_probe pr;
	size_t map_len, len = PROBE_BLOCKS * MEMSET_HUGE;
	char *map, *buf = fresh_buffer(MADV_NOHUGEPAGE, &map, &map_len);

	(void)state;
	buf[3 * MEMSET_HUGE + MEMSET_PROBE_SUBPAGE * MEMSET_PAGE] = 1;
	assert_int_equal(memset_touch_probed(buf, len, 1, &pr), 0);
	assert_int_equal(pr.huge_blocks, 1);
	munmap(map, map_len);
}

/* mincore() on an unmapped range fails: the error comes back, not a count */
static void test_probe_error(void **state)
{
	struct memset_probe pr;
	size_t map_len;
	char *map, *buf = fresh_buffer(MADV_NOHUGEPAGE, &map, &map_len);

	(void)state;
	assert_int_equal(munmap(buf + MEMSET_PROBE_SUBPAGE * MEMSET_PAGE, MEMSET_PAGE), 0);
	assert_int_equal(memset_touch_probed(buf, 2 * MEMSET_HUGE, 1, &pr), -ENOMEM);
	munmap(map, map_len);
}

static void test_store64(void **state)
{
	uint64_t words[67];
	size_t i;

	(void)state;
	memset(words, 0, sizeof(words));
	memset_store64((char *)words, 66 * sizeof(uint64_t), 0x0123456789abcdefull);
	for (i = 0; i < 66; i++)
		assert_int_equal(words[i], 0x0123456789abcdefull);
	assert_int_equal(words[66], 0);	/* not past len */
}

int main(void)
{
	struct CMUnitTest tests[N(chain_cases) + 6];
	size_t i, n = 0;

	for (i = 0; i < N(chain_cases); i++)
		tests[n++] = (struct CMUnitTest){ chain_cases[i].name, test_chain, NULL, NULL,
						  &chain_cases[i] };
	tests[n++] = (struct CMUnitTest){ "the seed decides the order", test_seed_changes_order,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "probe: 4K first touches", test_probe_4k, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "probe: huge first touches match smaps", test_probe_huge,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "probe: a touched block counts as huge",
					  test_probe_needs_fresh, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "probe: mincore failure", test_probe_error, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "store64 pass", test_store64, NULL, NULL, NULL };
	return _cmocka_run_group_tests("memset", tests, n, NULL, NULL);
}
