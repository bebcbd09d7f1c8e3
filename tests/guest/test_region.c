/* tests for guest/region.c: 2M alignment, guard pages, advice, smaps coverage, release */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/region.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct map_case {
	const char *name;
	size_t len;
	int advice;
};

static const struct map_case map_cases[] = {
	{ "one page, no advice", REGION_PAGE, REGION_NO_ADVICE },
	{ "2M, MADV_HUGEPAGE", REGION_HUGE, MADV_HUGEPAGE },
	{ "6M + 4K, MADV_NOHUGEPAGE", 3 * REGION_HUGE + REGION_PAGE, MADV_NOHUGEPAGE },
};

/* the child touches a byte; true if it died of SIGSEGV */
static bool faults(volatile char *p)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);	/* not cmocka's handler */
		*p = 1;
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

static void test_map(void **state)
{
	const struct map_case *c = *state;
	struct err e = ERR_INIT;
	struct smaps_vma vma;
	struct region r;
	double pct = -1;

	assert_int_equal(region_map(&r, c->len, c->advice, &e), 0);
	assert_int_equal((uintptr_t)r.buf % REGION_HUGE, 0);
	assert_int_equal(r.len, c->len);
	memset(r.buf, 7, r.len);
	assert_true(faults(r.buf - 1));	/* guard below */
	assert_true(faults(r.buf + r.len));	/* guard above */
	assert_int_equal(region_smaps("", &r, &vma, &pct, &e), 0);
	assert_int_equal(vma.start, (uintptr_t)r.buf);	/* the buffer's own mapping */
	assert_int_equal(vma.end - vma.start, c->len);
	assert_int_equal(vma.rss_bytes, c->len);
	assert_true(pct >= 0 && pct <= 100);
	if (c->advice == MADV_NOHUGEPAGE)
		assert_true(pct == 0);
	region_release(&r);
	assert_null(r.map);
	region_release(&r);	/* twice is fine */
	region_release(NULL);
}

static void test_bad_len(void **state)
{
	struct err e = ERR_INIT;
	struct region r;

	(void)state;
	assert_int_equal(region_map(&r, 0, REGION_NO_ADVICE, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(region_map(&r, 100, REGION_NO_ADVICE, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "not a positive multiple of 4K"));
	err_clear(&e);
	assert_int_equal(region_map(&r, SIZE_MAX & ~(size_t)4095, REGION_NO_ADVICE, &e), -E2BIG);
	assert_null(r.map);
}

static void test_round(void **state)
{
	(void)state;
	assert_int_equal(region_round_huge(1), REGION_HUGE);
	assert_int_equal(region_round_huge(REGION_HUGE), REGION_HUGE);
	assert_int_equal(region_round_huge(REGION_HUGE + 1), 2 * REGION_HUGE);
	assert_int_equal(region_round_huge(UINT64_MAX), 0);
}

int main(void)
{
	struct CMUnitTest tests[N(map_cases) + 2];
	size_t i, n = 0;

	for (i = 0; i < N(map_cases); i++)
		tests[n++] = (struct CMUnitTest){ map_cases[i].name, test_map, NULL, NULL,
						  (void *)(uintptr_t)&map_cases[i] };
	tests[n++] = (struct CMUnitTest){ "bad lengths", test_bad_len, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "round up to 2M", test_round, NULL, NULL, NULL };
	return _cmocka_run_group_tests("region", tests, n, NULL, NULL);
}
