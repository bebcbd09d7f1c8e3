/*
 * tests for host/khugepaged.c: --khugepaged's syntax and bounds, the
 * settings and counters read from a fake khugepaged directory (and its
 * absence refused with the reason), and the kernel thread found in a fake
 * /proc by comm and PF_KTHREAD, with its CPU time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/khugepaged.h"
#include "tests/host/fixtures/fakefs.h"

struct opts_case {
	const char *name, *arg;
	int want_rc;
	bool set[KHP__COUNT];
	uint64_t v[KHP__COUNT];
	const char *want_msg;
};

static struct opts_case opts_cases[] = {
	{ "opts/both", "pages_to_scan=4096,scan_sleep_millisecs=100", 0, { true, true }, { 4096, 100 }, NULL },
	{ "opts/sleep_only_zero", "scan_sleep_millisecs=0", 0, { false, true }, { 0, 0 }, NULL },
	{ "opts/pages_max", "pages_to_scan=4294967295", 0, { true, false }, { 4294967295u, 0 }, NULL },
	{ "opts/pages_zero", "pages_to_scan=0", -ERANGE, { 0 }, { 0 }, "the kernel takes a number from 1 to 4294967295" },
	{ "opts/pages_too_big", "pages_to_scan=4294967296", -ERANGE, { 0 }, { 0 }, "from 1 to 4294967295" },
	{ "opts/sleep_negative", "scan_sleep_millisecs=-1", -ERANGE, { 0 }, { 0 }, "from 0 to 4294967295" },
	{ "opts/unknown_knob", "max_ptes_none=0", -EINVAL, { 0 }, { 0 }, "unknown khugepaged knob 'max_ptes_none'" },
	{ "opts/twice", "pages_to_scan=1,pages_to_scan=2", -EINVAL, { 0 }, { 0 }, "'pages_to_scan' given twice" },
	{ "opts/no_value", "pages_to_scan", -EINVAL, { 0 }, { 0 }, "is not KNOB=N" },
	{ "opts/empty_item", "pages_to_scan=1,,scan_sleep_millisecs=1", -EINVAL, { 0 }, { 0 }, "expected pages_to_scan=N" },
	{ "opts/empty", "", -EINVAL, { 0 }, { 0 }, "expected pages_to_scan=N" },
};

static void test_opts(void **state)
{
	struct fx *f = *state;
	const struct opts_case *c = f->row;
	struct khp_opts o;
	struct err e = ERR_INIT;
	size_t k;

	assert_int_equal(khp_opts_parse(c->arg, &o, &e), c->want_rc);
	if (c->want_rc) {
		assert_non_null(strstr(e.msg, c->want_msg));
		return;
	}
	for (k = 0; k < KHP__COUNT; k++) {
		assert_int_equal(o.set[k], c->set[k]);
		if (c->set[k])
			assert_int_equal(o.v[k], c->v[k]);
	}
}

#define KDIR FAKE_THP "/khugepaged/"

static void test_state(void **state)
{
	struct fx *f = *state;
	struct khp_state s;
	struct err e = ERR_INIT;

	assert_int_equal(fake_write(f->dir, KDIR "pages_to_scan", "4096\n"), 0);
	assert_int_equal(fake_write(f->dir, KDIR "scan_sleep_millisecs", "10000\n"), 0);
	assert_int_equal(fake_write(f->dir, KDIR "alloc_sleep_millisecs", "60000\n"), 0);
	assert_int_equal(fake_write(f->dir, KDIR "defrag", "1\n"), 0);
	assert_int_equal(fake_write(f->dir, KDIR "max_ptes_none", "511\n"), 0);
	assert_int_equal(fake_write(f->dir, KDIR "full_scans", "3\n"), 0);
	assert_int_equal(fake_write(f->dir, KDIR "pages_collapsed", "2\n"), 0);
	assert_int_equal(khp_state_read(f->dir, &s, &e), 0);
	assert_int_equal(s.pages_to_scan, 4096);
	assert_int_equal(s.scan_sleep_ms, 10000);
	assert_int_equal(s.alloc_sleep_ms, 60000);
	assert_int_equal(s.defrag, 1);
	assert_int_equal(s.max_ptes_none, 511);
	assert_int_equal(s.max_ptes_swap, -1);	/* missing: not an error */
	assert_int_equal(s.full_scans, 3);
	assert_int_equal(s.pages_collapsed, 2);
	assert_int_equal(fake_write(f->dir, KDIR "full_scans", "three\n"), 0);
	assert_int_equal(khp_state_read(f->dir, &s, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "expected a number"));
}

static void test_state_missing(void **state)
{
	struct fx *f = *state;
	struct khp_state s;
	struct err e = ERR_INIT;

	assert_int_equal(fake_write(f->dir, FAKE_THP "/enabled", "always [madvise] never\n"), 0);
	assert_int_equal(khp_state_read(f->dir, &s, &e), -EOPNOTSUPP);
	assert_non_null(strstr(e.msg, "has no"));
	assert_non_null(strstr(e.msg, "khugepaged"));
}

/* a /proc/<pid>/stat line: flags field 9, utime 14, stime 15 */
static void put_stat(const char *dir, int pid, const char *comm, unsigned long flags, unsigned long ut,
		     unsigned long st)
{
	char rel[64], line[512];

	snprintf(rel, sizeof(rel), "%d/stat", pid);
	snprintf(line, sizeof(line), "%d (%s) S 2 0 0 0 -1 %lu 0 0 0 0 %lu %lu 0 0 39 19 1 0 7 0 0\n", pid, comm,
		 flags, ut, st);
	assert_int_equal(fake_write(dir, rel, line), 0);
}

static void test_thread(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	double cpu;
	int pid = 0;

	put_stat(f->dir, 1, "init", 0x400100, 5, 5);
	/* a user process that calls itself khugepaged: no PF_KTHREAD */
	put_stat(f->dir, 300, "khugepaged", 0x400000, 1, 1);
	/* a comm with a space and a parenthesis before the real one */
	put_stat(f->dir, 301, "a) (b", 0x200040, 1, 1);
	put_stat(f->dir, 77, "khugepaged", 0x208040, 150, 50);
	assert_int_equal(fake_write(f->dir, "self", "not a pid\n"), 0);
	assert_int_equal(khp_find_thread(f->dir, &pid, &e), 0);
	assert_int_equal(pid, 77);
	assert_int_equal(khp_cpu_s(f->dir, pid, &cpu, &e), 0);
	assert_true(cpu > 0 && cpu * (double)sysconf(_SC_CLK_TCK) > 199.5 && cpu * (double)sysconf(_SC_CLK_TCK) < 200.5);
}

static void test_thread_none(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	int pid = 0;

	put_stat(f->dir, 300, "khugepaged", 0x400000, 1, 1);
	assert_int_equal(khp_find_thread(f->dir, &pid, &e), -ESRCH);
	assert_non_null(strstr(e.msg, "no khugepaged kernel thread"));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(khp_knob_name(KHP_PAGES_TO_SCAN), "pages_to_scan");
	assert_string_equal(khp_knob_key(KHP_SCAN_SLEEP_MS), "khugepaged/scan_sleep_millisecs");
	assert_string_equal(khp_knob_name(KHP__COUNT), "?");
}

int main(void)
{
	struct CMUnitTest tests[32];
	size_t i, n = 0;

	ADD_TABLE(opts_cases, test_opts);
	ADD_ONE("state/read", test_state);
	ADD_ONE("state/no_khugepaged_dir", test_state_missing);
	ADD_ONE("thread/by_comm_and_kthread_flag", test_thread);
	ADD_ONE("thread/none", test_thread_none);
	ADD_ONE("names", test_names);
	return _cmocka_run_group_tests("host/khugepaged", tests, n, NULL, NULL);
}
