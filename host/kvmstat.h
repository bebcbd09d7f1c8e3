/*
 * kvmstat: what a KVM guest really runs on, seen from the host: the
 * per-VM KVM statistics in debugfs (guest memory mapped by 4K, 2M and 1G
 * entries, NX huge page splits) and the vCPU threads' dTLB and iTLB misses
 * in guest mode. Missing files mean "not exposed", never an error; roots
 * are parameters for fake trees. Never prints, never exits.
 */
#ifndef THPEVAL_HOST_KVMSTAT_H
#define THPEVAL_HOST_KVMSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/*
 * What a KVM guest really runs on, seen from the host.
 *
 * - Per-VM KVM statistics from debugfs (<root>/sys/kernel/debug/kvm/<pid>-<fd>/):
 *   pages_4k, pages_2m, pages_1g (gauges: the guest memory KVM maps now, by
 *   mapping size) and nx_lpage_splits (a counter). A file that is missing
 *   means "not exposed by this kernel" and is flagged, never an error.
 *   KVM's binary stats (KVM_GET_STATS_FD) need the VM fd QEMU holds: not read.
 * - Hardware counters of the vCPU threads in guest mode (exclude_host):
 *   dTLB and iTLB load misses with the generic perf cache events, where the
 *   host has a PMU. EPT/NPT walk cycles need model-specific raw events and
 *   are not counted here.
 *
 * Roots are parameters so tests run on fake trees. Never prints, never exits.
 */

#define KVMSTAT_DIR "/sys/kernel/debug/kvm"

enum kvm_stat { KVM_PAGES_4K, KVM_PAGES_2M, KVM_PAGES_1G, KVM_NX_LPAGE_SPLITS, KVM_STAT__COUNT };

struct kvm_vm_stats {
	uint64_t v[KVM_STAT__COUNT];
	bool have[KVM_STAT__COUNT];
	unsigned vms;		/* VM directories of the process summed (1 for QEMU) */
};

/* debugfs file name of a statistic ("pages_2m") */
const char *kvm_stat_name(enum kvm_stat s);

/*
 * The stats of the VMs that process pid created (directories "<pid>-<fd>"
 * under root's KVMSTAT_DIR), summed over them; a statistic is had only where
 * every VM has its file. -ENOENT with a reason when debugfs, the VM's
 * directory or every statistic in it is missing; -EBADMSG for an empty,
 * garbled or oversized file; another negative errno for an unreadable one.
 * out is cleared first and stays cleared (v 0, have[] false, vms 0) on
 * every failure: a caller never sees a statistic that was not read.
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
 * negative errnos for other failures (the reason from guest_pmu_reason());
 * on failure nothing stays open: open false, nthreads 0, every fd -1.
 */
int guest_pmu_open(struct guest_pmu *p, const int *tids, size_t n, struct err *e);
/*
 * Totals over the threads, one per event. -ENODEV when the counters are not
 * open, -EIO when one cannot be read; out is all 0 on every failure.
 */
int guest_pmu_read(const struct guest_pmu *p, uint64_t out[GPMU__COUNT], struct err *e);
void guest_pmu_close(struct guest_pmu *p);

/*
 * Why perf_event_open failed with errnum, in words for the results' note:
 * no PMU event, the thread gone, or for EACCES/EPERM the level in
 * <proc_root>/sys/kernel/perf_event_paranoid and what would allow it.
 */
void guest_pmu_reason(const char *proc_root, int errnum, char *buf, size_t len);

#endif
