/*
 * tests for host/kvmstat.c: KVM debugfs stats and vCPU threads on fake trees
 * (present, summed over several VMs of a process, partial, absent, malformed),
 * the cleared-output guarantee every failure keeps (run.c records a host_kvm_
 * or host_guest_ field only from a read that succeeded), the perf failure
 * reasons on a fake /proc, and the guest-mode PMU for real where there is one.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/kvmstat.h"
#include "tests/host/fixtures/fakefs.h"

#define KVM "sys/kernel/debug/kvm/"
#define VM KVM "4242-17/"
#define PID 4242
#define U64_MAX_S "18446744073709551615"

/* a file under the fake root: relative path and content (content NULL: a directory) */
struct file {
	const char *rel, *text;
};

#define NFILES 12

static void write_files(const char *dir, const struct file *fs)
{
	char rel[PATH_MAX];
	size_t i;

	for (i = 0; i < NFILES && fs[i].rel; i++) {
		if (fs[i].text) {
			assert_int_equal(fake_write(dir, fs[i].rel, fs[i].text), 0);
			continue;
		}
		/* a directory where a file is expected: make it through a child */
		snprintf(rel, sizeof(rel), "%s/.keep", fs[i].rel);
		assert_int_equal(fake_write(dir, rel, ""), 0);
	}
}

/* ---- debugfs present ------------------------------------------------------- */

struct stats_case {
	const char *name;
	struct file files[NFILES];
	bool have[KVM_STAT__COUNT];
	uint64_t v[KVM_STAT__COUNT];	/* 4k, 2m, 1g, nx */
	unsigned vms;
	double pct;			/* NAN: no share */
};

#define ALL { true, true, true, true }

static struct stats_case stats_cases[] = {
	{ "present/one_vm_every_file",
	  { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "510\n" }, { VM "pages_1g", "0\n" },
	    { VM "nx_lpage_splits", "7\n" },
	    /* a VM of another process, and one whose pid only shares a prefix */
	    { KVM "424-3/pages_2m", "1\n" }, { KVM "42420-3/pages_2m", "1\n" },
	    /* not VM directories of 4242 */
	    { KVM "4242-/pages_2m", "1\n" }, { KVM "4242-x1/pages_2m", "1\n" }, { KVM "vcpu0/pages_2m", "1\n" } },
	  ALL, { 1024, 510, 0, 7 }, 1, 100.0 * 261120 / 262144 },
	{ "present/two_vms_of_one_pid_summed",
	  { { VM "pages_4k", "100\n" }, { VM "pages_2m", "10\n" }, { VM "pages_1g", "1\n" },
	    { VM "nx_lpage_splits", "2\n" }, { KVM "4242-9/pages_4k", "28\n" }, { KVM "4242-9/pages_2m", "6\n" },
	    { KVM "4242-9/pages_1g", "0\n" }, { KVM "4242-9/nx_lpage_splits", "3\n" } },
	  ALL, { 128, 16, 1, 5 }, 2, 100.0 * (16 * 512 + 262144) / (128 + 16 * 512 + 262144) },
	{ "present/two_vms_one_without_nx_lpage_splits",
	  { { VM "pages_4k", "100\n" }, { VM "pages_2m", "10\n" }, { VM "pages_1g", "0\n" },
	    { VM "nx_lpage_splits", "2\n" }, { KVM "4242-9/pages_4k", "28\n" }, { KVM "4242-9/pages_2m", "6\n" },
	    { KVM "4242-9/pages_1g", "0\n" } },
	  { true, true, true, false }, { 128, 16, 0, 0 }, 2, 100.0 * (16 * 512) / (128 + 16 * 512) },
	{ "present/older_kernel_no_1g_no_nx",
	  { { VM "pages_4k", "512\n" }, { VM "pages_2m", "1\n" } },
	  { true, true, false, false }, { 512, 1, 0, 0 }, 1, 50.0 },
	{ "present/only_nx_lpage_splits_no_share",
	  { { VM "nx_lpage_splits", "9\n" } },
	  { false, false, false, true }, { 0, 0, 0, 9 }, 1, NAN },
	{ "present/1g_pages_only",
	  { { VM "pages_4k", "0\n" }, { VM "pages_2m", "0\n" }, { VM "pages_1g", "2\n" } },
	  { true, true, true, false }, { 0, 0, 2, 0 }, 1, 100.0 },
	{ "present/nothing_mapped_yet",
	  { { VM "pages_4k", "0\n" }, { VM "pages_2m", "0\n" }, { VM "pages_1g", "0\n" },
	    { VM "nx_lpage_splits", "0\n" } },
	  ALL, { 0, 0, 0, 0 }, 1, NAN },
	{ "present/largest_u64_no_newline",
	  { { VM "pages_4k", "4" }, { VM "pages_2m", "0\n" }, { VM "nx_lpage_splits", U64_MAX_S "\n" } },
	  { true, true, false, true }, { 4, 0, 0, UINT64_MAX }, 1, 0.0 },
};

static void test_stats(void **state)
{
	struct fx *f = *state;
	const struct stats_case *c = f->row;
	struct kvm_vm_stats s;
	struct err e = ERR_INIT;
	size_t i;

	write_files(f->dir, c->files);
	assert_int_equal(kvm_vm_stats_read(f->dir, PID, &s, &e), 0);
	assert_int_equal(e.code, 0);
	assert_int_equal(s.vms, c->vms);
	for (i = 0; i < KVM_STAT__COUNT; i++) {
		assert_int_equal(s.have[i], c->have[i]);
		assert_true(s.v[i] == c->v[i]);
	}
	if (isnan(c->pct))
		assert_true(isnan(kvm_huge_pct(&s)));
	else
		assert_true(fabs(kvm_huge_pct(&s) - c->pct) < 1e-9);
}

/* ---- debugfs absent or malformed: an error, nothing filled ----------------- */

struct bad_stats_case {
	const char *name;
	struct file files[NFILES];
	int pid, rc;
	const char *why;	/* in the message */
};

static struct bad_stats_case bad_stats_cases[] = {
	{ "absent/no_debugfs", { { "sys/kernel/mm/x", "1\n" } }, PID, -ENOENT, "mount debugfs" },
	{ "absent/not_this_vm",
	  { { KVM "99-1/pages_4k", "1\n" }, { KVM "424-3/pages_4k", "1\n" }, { KVM "42420-3/pages_4k", "1\n" },
	    { KVM "4242-/pages_4k", "1\n" }, { KVM "4242-1a/pages_4k", "1\n" } },
	  PID, -ENOENT, "no KVM VM of process 4242" },
	{ "absent/vm_dir_without_statistics", { { VM "vcpu0/guest_mode", "0\n" } }, PID, -ENOENT,
	  "no KVM statistics in" },
	{ "absent/bad_pid", { { VM "pages_4k", "1\n" } }, 0, -EINVAL, "bad QEMU pid 0" },
	{ "absent/negative_pid", { { VM "pages_4k", "1\n" } }, -1, -EINVAL, "bad QEMU pid -1" },
	/* pages_4k first and good: a reader that fills as it goes would leave it */
	{ "malformed/garbled_pages_2m", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "lots\n" } }, PID,
	  -EBADMSG, "4242-17/pages_2m': expected a number" },
	{ "malformed/empty_pages_2m", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "" } }, PID, -EBADMSG,
	  "pages_2m': expected a number" },
	{ "malformed/negative", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "-1\n" } }, PID, -EBADMSG,
	  "pages_2m': expected a number" },
	{ "malformed/two_numbers", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "1 2\n" } }, PID, -EBADMSG,
	  "pages_2m': expected a number" },
	{ "malformed/two_lines", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "1\n2\n" } }, PID, -EBADMSG,
	  "pages_2m': expected a number" },
	{ "malformed/above_u64", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "18446744073709551616\n" } },
	  PID, -EBADMSG, "pages_2m': expected a number" },
	/* the first 31 bytes are a valid number: only the length gives it away */
	{ "malformed/oversized",
	  { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "0000000000000000000000000000000000000001\n" } }, PID,
	  -EBADMSG, "pages_2m': longer than any number" },
	{ "malformed/oversized_trailing_blanks",
	  { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "5\n                                        \n" } }, PID,
	  -EBADMSG, "pages_2m': longer than any number" },
	{ "malformed/unreadable_directory", { { VM "pages_4k", "1024\n" }, { VM "pages_2m", NULL } }, PID,
	  -EISDIR, "cannot read '" },
	{ "malformed/second_vm_garbled",
	  { { VM "pages_4k", "1024\n" }, { VM "pages_2m", "3\n" }, { KVM "4242-9/pages_4k", "1\n" },
	    { KVM "4242-9/pages_2m", "x\n" } },
	  PID, -EBADMSG, "4242-9/pages_2m': expected a number" },
	{ "malformed/sum_overflows",
	  { { VM "nx_lpage_splits", U64_MAX_S "\n" }, { KVM "4242-9/nx_lpage_splits", "1\n" } }, PID, -EOVERFLOW,
	  "nx_lpage_splits of the VMs of process 4242 overflows" },
};

static void assert_cleared(const struct kvm_vm_stats *s)
{
	struct kvm_vm_stats zero;
	size_t i;

	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < KVM_STAT__COUNT; i++) {
		assert_false(s->have[i]);
		assert_true(s->v[i] == 0);
	}
	assert_int_equal(s->vms, 0);
	assert_memory_equal(s, &zero, sizeof(zero));
	assert_true(isnan(kvm_huge_pct(s)));
}

static void test_bad_stats(void **state)
{
	struct fx *f = *state;
	const struct bad_stats_case *c = f->row;
	struct kvm_vm_stats s;
	struct err e = ERR_INIT;

	write_files(f->dir, c->files);
	/* what the caller's struct held before (run.c's is on the stack) */
	memset(&s, 0xa5, sizeof(s));
	assert_int_equal(kvm_vm_stats_read(f->dir, c->pid, &s, &e), c->rc);
	assert_int_equal(e.code, c->rc);
	if (!strstr(e.msg, c->why))
		fail_msg("message '%s' lacks '%s'", e.msg, c->why);
	assert_cleared(&s);
	/* the same with no error slot, as run.c calls it */
	memset(&s, 0xa5, sizeof(s));
	assert_int_equal(kvm_vm_stats_read(f->dir, c->pid, &s, NULL), c->rc);
	assert_cleared(&s);
}

/* a good read followed by a failing one: nothing of the first survives in the struct */
static void test_stats_then_gone(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX];
	struct kvm_vm_stats s;
	struct err e = ERR_INIT;

	assert_int_equal(fake_write(f->dir, VM "pages_4k", "1024\n"), 0);
	assert_int_equal(fake_write(f->dir, VM "pages_2m", "510\n"), 0);
	assert_int_equal(kvm_vm_stats_read(f->dir, PID, &s, &e), 0);
	assert_true(s.have[KVM_PAGES_2M]);
	/* the guest shut down: its directory went away */
	assert_int_equal(fake_write(f->dir, VM "pages_4k", NULL), 0);
	assert_int_equal(fake_write(f->dir, VM "pages_2m", NULL), 0);
	assert_int_equal(fake_join(path, sizeof(path), f->dir, VM), 0);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(kvm_vm_stats_read(f->dir, PID, &s, &e), -ENOENT);
	assert_cleared(&s);
}

static void test_stat_names(void **state)
{
	(void)state;
	assert_string_equal(kvm_stat_name(KVM_PAGES_4K), "pages_4k");
	assert_string_equal(kvm_stat_name(KVM_PAGES_2M), "pages_2m");
	assert_string_equal(kvm_stat_name(KVM_PAGES_1G), "pages_1g");
	assert_string_equal(kvm_stat_name(KVM_NX_LPAGE_SPLITS), "nx_lpage_splits");
	assert_string_equal(kvm_stat_name(KVM_STAT__COUNT), "?");
	assert_string_equal(guest_pmu_event_name(GPMU_DTLB_LOAD_MISSES), "dtlb_load_misses");
	assert_string_equal(guest_pmu_event_name(GPMU_ITLB_LOAD_MISSES), "itlb_load_misses");
	assert_string_equal(guest_pmu_event_name(GPMU__COUNT), "?");
}

/* ---- vCPU threads ------------------------------------------------------------ */

static void test_vcpu_threads(void **state)
{
	struct fx *f = *state;
	char proc[PATH_MAX];
	struct err e = ERR_INIT;
	int tids[VCPU_MAX], n;

	assert_int_equal(fake_write(f->dir, "proc/500/task/500/comm", "qemu-system-x86\n"), 0);
	assert_int_equal(fake_write(f->dir, "proc/500/task/501/comm", "CPU 0/KVM\n"), 0);
	assert_int_equal(fake_write(f->dir, "proc/500/task/502/comm", "CPU 1/KVM\n"), 0);
	assert_int_equal(fake_write(f->dir, "proc/500/task/503/comm", "CPU 2/TCG\n"), 0);
	assert_int_equal(fake_write(f->dir, "proc/500/task/504/comm", "CPU x/KVM\n"), 0);
	assert_int_equal(fake_write(f->dir, "proc/500/task/505/comm", "CPU 3/KVMX\n"), 0);
	assert_int_equal(fake_write(f->dir, "proc/500/task/506/comm", "worker\n"), 0);
	assert_int_equal(fake_join(proc, sizeof(proc), f->dir, "proc"), 0);
	n = vcpu_threads(proc, 500, tids, VCPU_MAX, &e);
	assert_int_equal(n, 3);
	assert_int_equal(vcpu_threads(proc, 501, tids, VCPU_MAX, &e), -ENOENT);
	/* bounded by max */
	assert_int_equal(vcpu_threads(proc, 500, tids, 2, &e), 2);
}

/* ---- perf: why an open failed, on a fake /proc -------------------------------- */

struct reason_case {
	const char *name;
	int errnum;
	const char *paranoid;	/* proc/sys/kernel/perf_event_paranoid; NULL: missing */
	const char *want;
};

static struct reason_case reason_cases[] = {
	{ "perf_reason/no_pmu_enoent", ENOENT, "2\n", "no PMU event for guest-mode counting here" },
	{ "perf_reason/no_pmu_eopnotsupp", EOPNOTSUPP, NULL, "no PMU event for guest-mode counting here" },
	{ "perf_reason/no_pmu_enodev", ENODEV, NULL, "no PMU event for guest-mode counting here" },
	{ "perf_reason/thread_gone", ESRCH, "2\n", "the vCPU thread is gone" },
	{ "perf_reason/paranoid_2", EACCES, "2\n", "kernel.perf_event_paranoid is 2 (run as root, or set it to 1" },
	{ "perf_reason/paranoid_3_eperm", EPERM, "3\n", "kernel.perf_event_paranoid is 3 (run as root" },
	{ "perf_reason/paranoid_missing", EACCES, NULL, "Permission denied (kernel.perf_event_paranoid unreadable)" },
	{ "perf_reason/paranoid_garbled", EACCES, "high\n", "Permission denied (kernel.perf_event_paranoid unreadable)" },
	{ "perf_reason/other_errno", EMFILE, "2\n", "Too many open files" },
};

static void test_pmu_reason(void **state)
{
	struct fx *f = *state;
	const struct reason_case *c = f->row;
	char proc[PATH_MAX], buf[200];

	if (c->paranoid)
		assert_int_equal(fake_write(f->dir, "proc/sys/kernel/perf_event_paranoid", c->paranoid), 0);
	assert_int_equal(fake_join(proc, sizeof(proc), f->dir, "proc"), 0);
	guest_pmu_reason(proc, c->errnum, buf, sizeof(buf));
	if (!strstr(buf, c->want))
		fail_msg("reason '%s' lacks '%s'", buf, c->want);
	/* the note run.c makes of it ("not available: %.150s" of the whole message) keeps the reason */
	assert_true(strlen("perf_event_open(dtlb_load_misses, thread 4194304): ") + strlen(buf) <= 150);
}

/* ---- perf for real ------------------------------------------------------------ */

static int open_fds(void)
{
	struct dirent *d;
	DIR *dp = opendir("/proc/self/fd");
	int n = 0;

	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		n += d->d_name[0] != '.';
	closedir(dp);
	return n;
}

static void assert_pmu_closed(const struct guest_pmu *p)
{
	uint64_t v[GPMU__COUNT];
	struct err e = ERR_INIT;
	size_t ev, i;

	assert_false(p->open);
	assert_int_equal(p->nthreads, 0);
	for (ev = 0; ev < GPMU__COUNT; ev++)
		for (i = 0; i < VCPU_MAX; i++)
			assert_int_equal(p->fd[ev][i], -1);
	/* nothing open: an error and zeros, never a count (run.c records none) */
	memset(v, 0xa5, sizeof(v));
	assert_int_equal(guest_pmu_read(p, v, &e), -ENODEV);
	assert_non_null(strstr(e.msg, "not open"));
	for (ev = 0; ev < GPMU__COUNT; ev++)
		assert_true(v[ev] == 0);
}

/*
 * An open that fails, whatever the host: the thread after this process's does
 * not exist (above any pid_max), so either the first event has no PMU or the
 * second thread fails after the first opened. Nothing may stay open.
 */
static void test_pmu_open_fails(void **state)
{
	int tids[2] = { (int)getpid(), INT_MAX };
	struct guest_pmu p;
	struct err e = ERR_INIT;
	int before = open_fds();

	(void)state;
	assert_true(before > 0);
	assert_int_equal(guest_pmu_open(&p, tids, 0, &e), -EINVAL);
	assert_pmu_closed(&p);
	err_clear(&e);
	assert_int_equal(guest_pmu_open(&p, tids, VCPU_MAX + 1, &e), -EINVAL);
	assert_pmu_closed(&p);
	err_clear(&e);
	assert_true(guest_pmu_open(&p, tids, 2, &e) < 0);
	assert_true(e.code < 0);
	if (!strstr(e.msg, "perf_event_open(dtlb_load_misses, thread "))
		fail_msg("message '%s' does not name the event and thread", e.msg);
	assert_pmu_closed(&p);
	assert_int_equal(open_fds(), before);
	guest_pmu_close(&p);	/* twice is harmless */
	assert_pmu_closed(&p);
}

/* with a PMU: this process never enters guest mode, so its guest-mode counts are 0 */
static void test_pmu_guest_only(void **state)
{
	static volatile unsigned char buf[64 << 20];
	uint64_t v[GPMU__COUNT];
	struct guest_pmu p;
	struct err e = ERR_INIT;
	int self = (int)getpid(), before = open_fds();
	size_t i, at = 1;

	(void)state;
	if (guest_pmu_open(&p, &self, 1, &e)) {
		print_message("skipped: no guest-mode PMU events on this host: %s\n", e.msg);
		assert_pmu_closed(&p);
		skip();
	}
	assert_true(p.open);
	assert_int_equal(p.nthreads, 1);
	/* host-mode dTLB misses aplenty: strided writes over 64 MiB */
	for (i = 0; i < (1u << 20); i++) {
		at = (at * 1103515245 + 12345) % sizeof(buf);
		buf[at & ~(size_t)4095]++;
	}
	memset(v, 0xa5, sizeof(v));
	assert_int_equal(guest_pmu_read(&p, v, &e), 0);
	assert_true(v[GPMU_DTLB_LOAD_MISSES] == 0);
	assert_true(v[GPMU_ITLB_LOAD_MISSES] == 0);
	guest_pmu_close(&p);
	assert_false(p.open);
	assert_int_equal(open_fds(), before);
}

int main(void)
{
	struct CMUnitTest tests[64];
	size_t i, n = 0;

	ADD_TABLE(stats_cases, test_stats);
	ADD_TABLE(bad_stats_cases, test_bad_stats);
	ADD_ONE("absent/after_a_good_read", test_stats_then_gone);
	ADD_ONE("names", test_stat_names);
	ADD_ONE("vcpu_threads/by_comm", test_vcpu_threads);
	ADD_TABLE(reason_cases, test_pmu_reason);
	ADD_ONE("pmu/failed_open_leaves_nothing_open", test_pmu_open_fails);
	ADD_ONE("pmu/guest_mode_counts_stay_0_outside_a_guest", test_pmu_guest_only);
	return _cmocka_run_group_tests("host/kvmstat", tests, n, NULL, NULL);
}
