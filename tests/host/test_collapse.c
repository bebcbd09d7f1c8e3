/*
 * tests for host/collapse.c: the guest-RAM ranges of a QEMU found in fake
 * /proc/PID/maps trees, the coverage arithmetic (percent of the mapping on
 * huge pages, time to a level of a series), and the probe and the collapse
 * call for real on a buffer of this process (skipped where the kernel has no
 * MADV_COLLAPSE: the test asserts thpeval's answer, not the kernel's).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/collapse.h"
#include "tests/host/fixtures/fakefs.h"

#define PID 4242
#define MIB (1024ull * 1024)

#define L_TEXT "55d0a0000000-55d0a0400000 r-xp 00000000 fe:00 1234       /usr/bin/qemu-system-x86_64\n"
#define L_HEAP "55d0a1000000-55d0a2000000 rw-p 00000000 00:00 0          [heap]\n"
#define L_SMALL "7f3000000000-7f3000200000 rw-p 00000000 00:00 0 \n"
#define L_STACK "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0          [stack]\n"
/* 512 MiB (+2 MiB of alignment QEMU adds), anonymous, without a name */
#define L_RAM "7f1000000000-7f1020200000 rw-p 00000000 00:00 0 \n"
/* TCG's code buffer: as large, but executable */
#define L_TCG "7f2000000000-7f2040000000 rwxp 00000000 00:00 0 \n"

struct range_case {
	const char *name;
	const char *maps;	/* NULL: no maps file */
	uint64_t guest_bytes;
	int want_rc;
	size_t want_n;
	uint64_t want_start[2], want_end[2];
	const char *want_msg;
};

static struct range_case range_cases[] = {
	{ "ranges/anon_ram_among_others", L_TEXT L_HEAP L_SMALL L_RAM L_STACK, 512 * MIB, 0, 1,
	  { 0x7f1000000000 }, { 0x7f1020200000 }, NULL },
	{ "ranges/no_name_last_line_without_newline", L_TEXT "7f1000000000-7f1020000000 rw-p 00000000 00:00 0",
	  512 * MIB, 0, 1, { 0x7f1000000000 }, { 0x7f1020000000 }, NULL },
	{ "ranges/memfd_ram", L_TEXT "7f1000000000-7f1020000000 rw-s 00000000 00:01 77  /memfd:pc.ram (deleted)\n",
	  512 * MIB, 0, 1, { 0x7f1000000000 }, { 0x7f1020000000 }, NULL },
	{ "ranges/anon_named_ram", "7f1000000000-7f1020000000 rw-p 00000000 00:00 0   [anon:pc.ram]\n", 512 * MIB,
	  0, 1, { 0x7f1000000000 }, { 0x7f1020000000 }, NULL },
	{ "ranges/two_ram_blocks", L_RAM "7f4000000000-7f4040000000 rw-p 00000000 00:00 0 \n", 512 * MIB, 0, 2,
	  { 0x7f1000000000, 0x7f4000000000 }, { 0x7f1020200000, 0x7f4040000000 }, NULL },
	{ "ranges/tcg_code_buffer_skipped", L_TCG L_RAM, 512 * MIB, 0, 1, { 0x7f1000000000 }, { 0x7f1020200000 },
	  NULL },
	{ "ranges/read_only_skipped", "7f1000000000-7f1020000000 r--p 00000000 00:00 0 \n", 512 * MIB, -ESRCH, 0,
	  { 0 }, { 0 }, "no guest-RAM mapping of 512 MiB" },
	{ "ranges/file_and_hugetlbfs_skipped",
	  "7f1000000000-7f1020000000 rw-s 00000000 00:2f 9   /dev/hugepages/qemu_back_mem.pc.ram\n"
	  "7f3000000000-7f3020000000 rw-p 00000000 fe:00 5   /var/lib/big.img\n",
	  512 * MIB, -ESRCH, 0, { 0 }, { 0 }, "is pid 4242 the QEMU of this guest?" },
	{ "ranges/too_small", L_TEXT L_HEAP L_SMALL L_STACK, 512 * MIB, -ESRCH, 0, { 0 }, { 0 }, "no guest-RAM" },
	{ "ranges/process_gone", NULL, 512 * MIB, -ENOENT, 0, { 0 }, { 0 }, "process 4242 is gone" },
	{ "malformed/no_dash", "7f1000000000 rw-p 00000000 00:00 0\n", 512 * MIB, -EBADMSG, 0, { 0 }, { 0 },
	  "line 1: expected" },
	{ "malformed/end_before_start", L_TEXT "7f1020000000-7f1000000000 rw-p 00000000 00:00 0\n", 512 * MIB,
	  -EBADMSG, 0, { 0 }, { 0 }, "line 2" },
	{ "malformed/bad_perms", "7f1000000000-7f1020000000 rwq 00000000 00:00 0\n", 512 * MIB, -EBADMSG, 0, { 0 },
	  { 0 }, "line 1" },
	{ "malformed/no_inode", "7f1000000000-7f1020000000 rw-p 00000000\n", 512 * MIB, -EBADMSG, 0, { 0 }, { 0 },
	  "line 1" },
	{ "args/zero_guest_ram", L_RAM, 0, -EINVAL, 0, { 0 }, { 0 }, "bad maps query" },
};

static void test_ranges(void **state)
{
	struct fx *f = *state;
	const struct range_case *c = f->row;
	struct collapse_ranges rs;
	struct err e = ERR_INIT;
	char rel[64];
	uint64_t bytes = 0;
	size_t i;

	snprintf(rel, sizeof(rel), "%d/maps", PID);
	if (c->maps)
		assert_int_equal(fake_write(f->dir, rel, c->maps), 0);
	assert_int_equal(collapse_find_ranges(f->dir, PID, c->guest_bytes, &rs, &e), c->want_rc);
	if (c->want_rc) {
		assert_int_equal(e.code, c->want_rc);
		assert_non_null(strstr(e.msg, c->want_msg));
		return;
	}
	assert_int_equal(rs.n, c->want_n);
	for (i = 0; i < c->want_n; i++) {
		assert_int_equal(rs.r[i].start, c->want_start[i]);
		assert_int_equal(rs.r[i].end, c->want_end[i]);
		bytes += c->want_end[i] - c->want_start[i];
	}
	assert_int_equal(rs.bytes, bytes);
}

static void test_ranges_too_many(void **state)
{
	struct fx *f = *state;
	struct collapse_ranges rs;
	struct err e = ERR_INIT;
	char maps[4096] = "", line[128];
	int i;

	for (i = 0; i <= COLLAPSE_RANGES_MAX; i++) {
		snprintf(line, sizeof(line), "7f%02d00000000-7f%02d20000000 rw-p 00000000 00:00 0 \n", i + 10, i + 10);
		strcat(maps, line);
	}
	assert_int_equal(fake_write(f->dir, "4242/maps", maps), 0);
	assert_int_equal(collapse_find_ranges(f->dir, PID, 512 * MIB, &rs, &e), -E2BIG);
	assert_non_null(strstr(e.msg, "more than 8 guest-RAM mappings"));
}

struct cov_case {
	const char *name;
	struct smaps_cov cov;
	double want;
};

static struct cov_case cov_cases[] = {
	{ "cov/none", { .mapping_kb = 526336, .rss_kb = 524288 }, 0 },
	{ "cov/half_of_mapping_not_of_rss", { .mapping_kb = 524288, .rss_kb = 262144, .anon_huge_kb = 262144 }, 50 },
	{ "cov/memfd_pmd", { .mapping_kb = 524288, .shmem_pmd_kb = 471859 }, 471859.0 / 524288 * 100 },
	{ "cov/capped", { .mapping_kb = 1024, .anon_huge_kb = 2048 }, 100 },
	{ "cov/empty_mapping", { 0 }, 0 },
};

static void test_cov(void **state)
{
	const struct cov_case *c = ((struct fx *)*state)->row;

	assert_true(fabs(collapse_cov_pct(&c->cov) - c->want) < 1e-9);
}

struct series_case {
	const char *name;
	double t[8], pct[8];
	size_t n;
	double level, want;	/* want NAN: never reached */
};

static struct series_case series_cases[] = {
	{ "series/interpolated", { 0, 1, 2, 3 }, { 0, 20, 60, 95 }, 4, 50, 1.75 },
	{ "series/ninety_between_samples", { 0, 1, 2, 3 }, { 0, 20, 60, 95 }, 4, 90, 2 + 30.0 / 35 },
	{ "series/exactly_on_a_sample", { 0, 1, 2 }, { 1, 50, 80 }, 3, 50, 1 },
	{ "series/already_at_first_sample", { 0.5, 1.5 }, { 97, 99 }, 2, 90, 0.5 },
	{ "series/never_reached", { 0, 1, 2 }, { 0, 40, 89.9 }, 3, 90, NAN },
	{ "series/dip_then_rise", { 0, 1, 2, 3 }, { 10, 5, 30, 70 }, 4, 50, 2.5 },
	{ "series/empty", { 0 }, { 0 }, 0, 50, NAN },
};

static void test_series(void **state)
{
	const struct series_case *c = ((struct fx *)*state)->row;
	double got = collapse_time_to(c->t, c->pct, c->n, c->level);

	if (isnan(c->want))
		assert_true(isnan(got));
	else
		assert_true(fabs(got - c->want) < 1e-9);
}

struct verdict_case {
	const char *name;
	int err;
	int want_rc;
	const char *want_msg;
};

static struct verdict_case verdict_cases[] = {
	{ "probe/collapsed", 0, 0, NULL },
	{ "probe/no_free_block_is_supported", EAGAIN, 0, NULL },
	{ "probe/no_memory_is_supported", ENOMEM, 0, NULL },
	{ "probe/kernel_before_6_1", EINVAL, -EOPNOTSUPP, "refuses MADV_COLLAPSE (EINVAL): collapse arms need Linux 6.1+" },
	{ "probe/no_process_madvise", ENOSYS, -EOPNOTSUPP, "no process_madvise on this kernel" },
	{ "probe/not_root", EPERM, -EOPNOTSUPP, "not permitted: run as root" },
	{ "probe/other", EFAULT, -EOPNOTSUPP, "failed on a probe buffer: Bad address" },
};

static void test_verdict(void **state)
{
	const struct verdict_case *c = ((struct fx *)*state)->row;
	struct err e = ERR_INIT;

	assert_int_equal(collapse_probe_verdict(c->err, &e), c->want_rc);
	if (c->want_msg)
		assert_non_null(strstr(e.msg, c->want_msg));
	else
		assert_false(err_isset(&e));
}

/* the probe and one collapse of our own 4 MiB buffer: either both work or the
 * probe says why not in thpeval's words */
static void test_probe_and_run_self(void **state)
{
	struct collapse_ranges rs = { 0 };
	struct collapse_call call;
	struct err e = ERR_INIT;
	size_t len = 6 * MIB;
	char *buf;
	uintptr_t a;
	int r;

	(void)state;
	r = collapse_probe(&e);
	if (r) {
		assert_int_equal(r, -EOPNOTSUPP);
		assert_non_null(strstr(e.msg, "MADV_COLLAPSE") ? e.msg : strstr(e.msg, "Linux 6.1+"));
		skip();
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(buf != MAP_FAILED);
	a = ((uintptr_t)buf + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1);
	memset((void *)a, 3, 4 * MIB);
	rs.n = 1;
	rs.r[0].start = a;
	rs.r[0].end = a + 4 * MIB;
	rs.bytes = 4 * MIB;
	assert_int_equal(collapse_run(getpid(), &rs, NULL, &call, &e), 0);
	assert_true(call.duration_s >= 0);
	/* a block the kernel could not collapse (no free 2M block) is a count, not an error */
	assert_int_equal(call.blocks, 2);
	assert_int_equal(call.collapsed + call.busy + call.nomem, 2);
	assert_int_equal(call.refused, 0);
	assert_int_equal(((unsigned char *)a)[4 * MIB - 1], 3);	/* contents kept */
	munmap(buf, len);
}

/* a block never touched has no page table: the kernel refuses it (EINVAL) and
 * would stop a call there; the blocks after it are still collapsed */
static void test_run_holes(void **state)
{
	struct collapse_ranges rs = { 0 };
	struct collapse_call call;
	struct err e = ERR_INIT;
	size_t len = 10 * MIB;
	char *buf;
	uintptr_t a;

	(void)state;
	if (collapse_probe(&e))
		skip();
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(buf != MAP_FAILED);
	a = ((uintptr_t)buf + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1);
	memset((void *)a, 5, 2 * MIB);			/* block 0 touched */
	memset((void *)(a + 4 * MIB), 5, 2 * MIB);	/* block 1 never, block 2 touched */
	rs.n = 1;
	rs.r[0].start = a;
	rs.r[0].end = a + 6 * MIB;
	rs.bytes = 6 * MIB;
	assert_int_equal(collapse_run(getpid(), &rs, NULL, &call, &e), 0);
	assert_int_equal(call.blocks, 3);
	assert_int_equal(call.refused, 1);
	assert_int_equal(call.result != 0, 1);
	if (!call.busy && !call.nomem)
		assert_int_equal(call.collapsed, 2);	/* the block after the hole too */
	assert_int_equal(((unsigned char *)a)[4 * MIB], 5);
	munmap(buf, len);
}

/* a stop flag set: no block is tried, the run says it was interrupted */
static void test_run_stop(void **state)
{
	volatile sig_atomic_t stop = 1;
	struct collapse_ranges rs = { 1, { { 0x7f0000000000, 0x7f0000400000 } }, 4 * MIB };
	struct collapse_call call;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(collapse_run(getpid(), &rs, &stop, &call, &e), -EINTR);
	assert_int_equal(call.blocks, 0);
	assert_non_null(strstr(e.msg, "interrupted after 0 of the 2M blocks"));
}

static void test_run_args(void **state)
{
	struct collapse_ranges rs = { 0 };
	struct collapse_call call;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(collapse_run(getpid(), &rs, NULL, &call, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "no guest-RAM ranges"));
}

int main(void)
{
	struct CMUnitTest tests[64];
	size_t i, n = 0;

	ADD_TABLE(range_cases, test_ranges);
	ADD_ONE("ranges/too_many", test_ranges_too_many);
	ADD_TABLE(cov_cases, test_cov);
	ADD_TABLE(series_cases, test_series);
	ADD_TABLE(verdict_cases, test_verdict);
	ADD_ONE("run/probe_and_collapse_self", test_probe_and_run_self);
	ADD_ONE("run/hole_does_not_stop_the_rest", test_run_holes);
	ADD_ONE("run/stop_flag", test_run_stop);
	ADD_ONE("run/no_ranges", test_run_args);
	return _cmocka_run_group_tests("host/collapse", tests, n, NULL, NULL);
}
