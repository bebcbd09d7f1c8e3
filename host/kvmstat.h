/*
 * kvmstat: what a KVM guest really runs on, seen from the host.
 *
 * - Per-VM KVM statistics from debugfs (<root>/sys/kernel/debug/kvm/<pid>-<fd>/):
 *   pages_4k, pages_2m, pages_1g (gauges: the guest memory KVM maps now, by
 *   mapping size) and nx_lpage_splits (a counter). Files that are missing
 *   mean "not exposed by this kernel" and are flagged, never an error.
 * - Hardware counters of the vCPU threads in guest mode (exclude_host):
 *   dTLB and iTLB load misses with the generic perf cache events, where the
 *   host has a PMU. EPT/NPT walk cycles need model-specific raw events and
 *   are not counted here.
 *
 * Roots are parameters so tests run on fake trees. Never prints, never exits.
 */
#ifndef THPEVAL_HOST_KVMSTAT_H
#define THPEVAL_HOST_KVMSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define KVMSTAT_DIR "/sys/kernel/debug/kvm"

enum kvm_stat { KVM_PAGES_4K, KVM_PAGES_2M, KVM_PAGES_1G, KVM_NX_LPAGE_SPLITS, KVM_STAT__COUNT };

struct kvm_vm_stats {
	uint64_t v[KVM_STAT__COUNT];
	bool have[KVM_STAT__COUNT];
};

/* debugfs file name of a statistic ("pages_2m") */
const char *kvm_stat_name(enum kvm_stat s);

/*
 * The stats of the VM that process pid created (directory "<pid>-<n>" under
 * root's KVMSTAT_DIR). -ENOENT with a reason when debugfs or the VM's
 * directory is not there; -EBADMSG for a malformed file.
 */
int kvm_vm_stats_read(const char *root, int pid, struct kvm_vm_stats *out, struct err *e);

/*
 * Share of guest memory KVM maps with 2M or 1G pages, in percent (pages_*
 * weighted by their size); NAN when the page counts are not all there or 0.
 */
double kvm_huge_pct(const struct kvm_vm_stats *s);

#define VCPU_MAX 64

/*
 * The vCPU threads of a QEMU process: tasks under <proc_root>/<pid>/task
 * whose comm is "CPU <n>/KVM" (or "/TCG"). Returns how many (0 is valid:
 * the guest may not be up yet); negative errno with e set on failure.
 */
int vcpu_threads(const char *proc_root, int pid, int *tids, size_t max, struct err *e);

enum guest_pmu_event { GPMU_DTLB_LOAD_MISSES, GPMU_ITLB_LOAD_MISSES, GPMU__COUNT };

/* Guest-mode counters on a set of vCPU threads. */
struct guest_pmu {
	int fd[GPMU__COUNT][VCPU_MAX];
	size_t nthreads;
	bool open;
};

const char *guest_pmu_event_name(enum guest_pmu_event ev);

/*
 * Open the counters (guest mode only) on every thread in tids. -ENODEV with
 * a reason when the host has no PMU (or it cannot count guest mode), other
 * negative errnos for other failures; nothing stays open on failure.
 */
int guest_pmu_open(struct guest_pmu *p, const int *tids, size_t n, struct err *e);
/* totals over the threads, one per event */
int guest_pmu_read(const struct guest_pmu *p, uint64_t out[GPMU__COUNT], struct err *e);
void guest_pmu_close(struct guest_pmu *p);

#endif
