/* tests for guest/memset.c: the pointer-chase chain (Sattolo cycle, node offsets) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guest/memset.h"

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

int main(void)
{
	struct CMUnitTest tests[N(chain_cases) + 1];
	size_t i, n = 0;

	for (i = 0; i < N(chain_cases); i++)
		tests[n++] = (struct CMUnitTest){ chain_cases[i].name, test_chain, NULL, NULL,
						  &chain_cases[i] };
	tests[n++] = (struct CMUnitTest){ "the seed decides the order", test_seed_changes_order,
					  NULL, NULL, NULL };
	return _cmocka_run_group_tests("memset", tests, n, NULL, NULL);
}
