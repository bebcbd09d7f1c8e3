/* tests for host/kvmstat.c: KVM debugfs stats and vCPU threads on fake trees, PMU detection for real */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/kvmstat.h"
#include "tests/host/fixtures/fakefs.h"

#define VM "sys/kernel/debug/kvm/4242-17/"

static void test_stats_all(void **state)
{
	struct fx *f = *state;
	struct kvm_vm_stats s;
	struct err e = ERR_INIT;

	assert_int_equal(fake_write(f->dir, VM "pages_4k", "1024\n"), 0);
	assert_int_equal(fake_write(f->dir, VM "pages_2m", "510\n"), 0);
	assert_int_equal(fake_write(f->dir, VM "pages_1g", "0\n"), 0);
	assert_int_equal(fake_write(f->dir, VM "nx_lpage_splits", "7\n"), 0);
	/* another VM of another process, and one whose pid only shares a prefix */
	assert_int_equal(fake_write(f->dir, "sys/kernel/debug/kvm/424-3/pages_2m", "1\n"), 0);
	assert_int_equal(fake_write(f->dir, "sys/kernel/debug/kvm/42420-3/pages_2m", "1\n"), 0);
	assert_int_equal(kvm_vm_stats_read(f->dir, 4242, &s, &e), 0);
	assert_true(s.have[KVM_PAGES_4K] && s.have[KVM_PAGES_2M] && s.have[KVM_PAGES_1G] &&
		    s.have[KVM_NX_LPAGE_SPLITS]);
	assert_int_equal(s.v[KVM_PAGES_4K], 1024);
	assert_int_equal(s.v[KVM_PAGES_2M], 510);
	assert_int_equal(s.v[KVM_NX_LPAGE_SPLITS], 7);
	/* 510 * 512 huge of 510 * 512 + 1024 */
	assert_true(fabs(kvm_huge_pct(&s) - 100.0 * 261120 / 262144) < 1e-9);
	assert_string_equal(kvm_stat_name(KVM_PAGES_2M), "pages_2m");
}

static void test_stats_partial_and_missing(void **state)
{
	struct fx *f = *state;
	struct kvm_vm_stats s;
	struct err e = ERR_INIT;

	/* no debugfs at all */
	assert_int_equal(kvm_vm_stats_read(f->dir, 4242, &s, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "mount debugfs"));
	/* debugfs, but not this VM */
	err_clear(&e);
	assert_int_equal(fake_write(f->dir, "sys/kernel/debug/kvm/99-1/pages_4k", "1\n"), 0);
	assert_int_equal(kvm_vm_stats_read(f->dir, 4242, &s, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no KVM VM of process 4242"));
	/* an older kernel: no nx_lpage_splits, no pages_1g */
	err_clear(&e);
	assert_int_equal(fake_write(f->dir, VM "pages_4k", "0\n"), 0);
	assert_int_equal(fake_write(f->dir, VM "pages_2m", "0\n"), 0);
	assert_int_equal(kvm_vm_stats_read(f->dir, 4242, &s, &e), 0);
	assert_false(s.have[KVM_NX_LPAGE_SPLITS]);
	assert_false(s.have[KVM_PAGES_1G]);
	assert_true(isnan(kvm_huge_pct(&s)));	/* nothing mapped yet */
	/* garbage is an error naming the file */
	err_clear(&e);
	assert_int_equal(fake_write(f->dir, VM "pages_2m", "lots\n"), 0);
	assert_int_equal(kvm_vm_stats_read(f->dir, 4242, &s, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "pages_2m"));
	err_clear(&e);
	assert_int_equal(kvm_vm_stats_read(f->dir, 0, &s, &e), -EINVAL);
}

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

/* on a host without a PMU (the development machines) opening fails cleanly, with a reason */
static void test_pmu_open_real(void **state)
{
	struct guest_pmu p;
	struct err e = ERR_INIT;
	uint64_t v[GPMU__COUNT];
	int self = (int)getpid();
	int r;

	(void)state;
	assert_int_equal(guest_pmu_open(&p, &self, 0, &e), -EINVAL);
	err_clear(&e);
	r = guest_pmu_open(&p, &self, 1, &e);
	if (r == 0) {
		/* a PMU: this process is not a guest, so guest-mode counts stay 0 */
		assert_int_equal(guest_pmu_read(&p, v, &e), 0);
		guest_pmu_close(&p);
		assert_false(p.open);
		return;
	}
	assert_true(e.msg[0] != '\0');
	assert_false(p.open);
	assert_int_equal(guest_pmu_read(&p, v, &e), 0);	/* nothing open: zeros */
	assert_int_equal(v[GPMU_DTLB_LOAD_MISSES], 0);
	guest_pmu_close(&p);
}

#define ADD_ONE(name, fn) tests[n++] = (struct CMUnitTest){ name, fn, fx_setup, fx_teardown, NULL }

int main(void)
{
	struct CMUnitTest tests[8];
	size_t n = 0;

	ADD_ONE("kvm stats: every file", test_stats_all);
	ADD_ONE("kvm stats: missing debugfs, VM, files; garbage", test_stats_partial_and_missing);
	ADD_ONE("vcpu threads by comm", test_vcpu_threads);
	ADD_ONE("guest-mode PMU: clean failure without one", test_pmu_open_real);
	return _cmocka_run_group_tests("host/kvmstat", tests, n, NULL, NULL);
}
