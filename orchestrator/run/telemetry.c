/*
 * telemetry: host-side telemetry of a run: the evidence that the host THP state held
 * (coverage of guest RAM from QEMU's smaps or the per-size mTHP counters) and
 * the per-repetition host counters (QEMU's faults, vmstat, KVM stats and
 * guest-mode PMU counts where a KVM guest has them; nothing under TCG).
 */
#include "orchestrator/run/telemetry.h"

#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "lib/parse.h"
#include "orchestrator/run/note.h"

/* host telemetry deltas since the previous record (one repetition), recorded as
 * per-cell metrics: the QEMU process's minor faults and the host's THP and
 * compaction counters (host-wide: other activity on the host shows up too) */
static const char *const vmstat_keys[] = {
	"thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc", "thp_split_page",
	"thp_split_pmd", "compact_stall", "compact_success", "compact_fail",
};

static int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ok && parse_u64(buf, v) == 0 ? 0 : -EBADMSG;
}

/* hugepages-<kb>kB/stats/anon_fault_{alloc,fallback} (Linux 6.9+) */
void mthp_read(const char *root, unsigned kb, struct mthp_snap *m)
{
	char p[PATH_MAX];
	const char *r = strcmp(root, "/") ? root : "";

	m->have = false;
	snprintf(p, sizeof(p), "%s%s/hugepages-%ukB/stats/anon_fault_alloc", r, THP_DIR, kb);
	if (read_u64_file(p, &m->alloc))
		return;
	snprintf(p, sizeof(p), "%s%s/hugepages-%ukB/stats/anon_fault_fallback", r, THP_DIR, kb);
	if (read_u64_file(p, &m->fallback))
		return;
	m->have = true;
}

void sample_host_coverage(struct guest_ctx *gc, struct cell *c)
{
	struct smaps_cov cov;
	struct err e = ERR_INIT;

	if (gc->qemu_pid <= 0)
		gc->qemu_pid = guest_qemu_pid(gc->g);
	if (gc->qemu_pid <= 0) {
		run_note(gc->io, "warning: QEMU pid of %s unknown: no host coverage evidence", gc->log->name);
		return;
	}
	if (smaps_guest_ram(gc->proc_root, gc->qemu_pid, gc->cfg->memory, &cov, &e)) {
		run_note(gc->io, "warning: %s", e.msg);
		return;
	}
	gc->last_rss_kb = cov.rss_kb;
	if (gc->grp && gc->grp->mthp_kb) {
		/* smaps has no per-size count below PMD size: the host-wide allocations of
		 * that size since the group's guests booted, over their resident guest RAM */
		struct mthp_snap now;
		uint64_t rss = 0;
		size_t i;

		mthp_read(gc->cfg->sysfs_root, gc->grp->mthp_kb, &now);
		for (i = 0; i < gc->grp->n; i++)
			rss += gc->grp->all[i]->last_rss_kb;
		snprintf(c->host_cov_source, sizeof(c->host_cov_source), "mthp_stats");
		if (now.have && gc->grp->base.have && rss) {
			double pct = (double)(now.alloc - gc->grp->base.alloc) * gc->grp->mthp_kb / (double)rss * 100.0;
			struct metric *raw = cell_metric(c, "host_mthp_cov_raw_pct", NULL);

			/* host-wide: QEMU's other memory and other processes count too, so the
			 * raw ratio can pass 100; kept uncapped beside the capped coverage */
			if (raw)
				metric_add_boot(raw, pct, gc->boot);
			metric_add_boot(&c->host_cov, pct > 100 ? 100 : pct, gc->boot);
		}
		return;
	}
	if (gc->grp && gc->grp->hugetlb_kb) {
		/* a hugetlbfs arm: the page size of guest RAM's mapping is its evidence, and
		 * pages of another size (libvirt picked another mount) are not the treatment */
		struct metric *m = cell_metric(c, "host_hugetlb_page_kb", NULL);

		if (m)
			metric_add_boot(m, (double)cov.hugetlb_page_kb, gc->boot);
		if (cov.hugetlb_page_kb != gc->grp->hugetlb_kb) {
			metric_add_boot(&c->host_cov, 0.0, gc->boot);
			return;
		}
	}
	metric_add_boot(&c->host_cov, smaps_huge_pct(&cov), gc->boot);
}

void host_snap_take(struct guest_ctx *gc, struct host_snap *s)
{
	/* every flag false until its counters are read: a TCG guest has no KVM stats */
	memset(s, 0, sizeof(*s));
	if (gc->qemu_pid <= 0)
		gc->qemu_pid = guest_qemu_pid(gc->g);
	if (gc->qemu_pid <= 0 || proc_minflt(gc->proc_root, gc->qemu_pid, &s->qemu_minflt, NULL) ||
	    vmstat_read(gc->proc_root, &s->vm, NULL))
		return;
	s->have = true;
	if (!gc->kvm)
		return;
	s->have_kvm = kvm_vm_stats_read("/", gc->qemu_pid, &s->kvm, NULL) == 0;
	if (!gc->pmu_tried) {
		/* guest-mode TLB misses on the vCPU threads, opened once the guest runs */
		int tids[VCPU_MAX], n = vcpu_threads(gc->proc_root, gc->qemu_pid, tids, VCPU_MAX, NULL);
		struct err pe = ERR_INIT;

		gc->pmu_tried = true;
		if (n > 0 && guest_pmu_open(&gc->pmu, tids, (size_t)n, &pe))
			snprintf(gc->res->pmu_note, sizeof(gc->res->pmu_note), "not available: %.150s", pe.msg);
	}
	s->have_pmu = gc->pmu.open && guest_pmu_read(&gc->pmu, s->pmu, NULL) == 0;
}

/* KVM's view per repetition: mapping sizes now (gauges), splits and guest-mode TLB misses since */
static void kvm_telemetry(struct guest_ctx *gc, struct cell *c, const struct host_snap *now)
{
	struct metric *m;
	size_t i;

	if (now->have_kvm) {
		double pct = kvm_huge_pct(&now->kvm);

		for (i = 0; i < KVM_STAT__COUNT; i++) {
			char name[64];

			if (!now->kvm.have[i])
				continue;
			snprintf(name, sizeof(name), "host_kvm_%s", kvm_stat_name((enum kvm_stat)i));
			if (i == KVM_NX_LPAGE_SPLITS) {
				if (!gc->snap.have_kvm || !gc->snap.kvm.have[i])
					continue;
				m = cell_metric(c, name, NULL);
				if (m)
					metric_add_boot(m, (double)(now->kvm.v[i] - gc->snap.kvm.v[i]), gc->boot);
			} else if ((m = cell_metric(c, name, NULL))) {
				metric_add_boot(m, (double)now->kvm.v[i], gc->boot);
			}
		}
		if (pct == pct && (m = cell_metric(c, "host_kvm_huge_pct", NULL)))
			metric_add_boot(m, pct, gc->boot);
	}
	if (now->have_pmu && gc->snap.have_pmu)
		for (i = 0; i < GPMU__COUNT; i++) {
			char name[64];

			snprintf(name, sizeof(name), "host_guest_%s", guest_pmu_event_name((enum guest_pmu_event)i));
			if ((m = cell_metric(c, name, NULL)))
				metric_add_boot(m, (double)(now->pmu[i] - gc->snap.pmu[i]), gc->boot);
		}
}

void host_telemetry(struct guest_ctx *gc, struct cell *c, bool keep)
{
	struct host_snap now;
	struct metric *m;
	size_t i;

	host_snap_take(gc, &now);
	if (gc->grp && gc->grp->mthp_kb) {
		struct mthp_snap ms;

		mthp_read(gc->cfg->sysfs_root, gc->grp->mthp_kb, &ms);
		if (keep && ms.have && gc->msnap.have) {
			m = cell_metric(c, "host_mthp_fault_alloc", NULL);
			if (m)
				metric_add_boot(m, (double)(ms.alloc - gc->msnap.alloc), gc->boot);
			m = cell_metric(c, "host_mthp_fault_fallback", NULL);
			if (m)
				metric_add_boot(m, (double)(ms.fallback - gc->msnap.fallback), gc->boot);
		}
		gc->msnap = ms;
	}
	if (keep && now.have && gc->snap.have) {
		m = cell_metric(c, "host_qemu_minflt", NULL);
		if (m)
			metric_add_boot(m, (double)(now.qemu_minflt - gc->snap.qemu_minflt), gc->boot);
		for (i = 0; i < sizeof(vmstat_keys) / sizeof(vmstat_keys[0]); i++) {
			uint64_t a, b;
			char name[REC_KEY_MAX];

			if (vmstat_get(&now.vm, vmstat_keys[i], &b) || vmstat_get(&gc->snap.vm, vmstat_keys[i], &a))
				continue;
			snprintf(name, sizeof(name), "host_%s", vmstat_keys[i]);
			m = cell_metric(c, name, NULL);
			if (m)
				metric_add_boot(m, (double)(b - a), gc->boot);
		}
		kvm_telemetry(gc, c, &now);
	}
	gc->snap = now;
}

/* what host telemetry this host can give beyond smaps and vmstat, and why not */
void telemetry_notes(struct results *res, enum accel accel, bool guests)
{
	struct perf_event_attr pa;
	long fd;

	if (!guests)
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note), "not available: no guests (--target=host)");
	else if (accel != ACCEL_KVM)
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note),
			 "not available: guests run under %s; pages_4k/2m/1g and nx_lpage_splits exist only for KVM guests",
			 accel_name(accel));
	else if (access("/sys/kernel/debug/kvm", R_OK) != 0)
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note),
			 "not available: /sys/kernel/debug/kvm is not readable (mount debugfs)");
	else
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note),
			 "collected per repetition from debugfs: host_kvm_pages_4k/2m/1g (mapped now), "
			 "host_kvm_huge_pct, host_kvm_nx_lpage_splits (since the previous repetition)");
	if (guests && accel != ACCEL_KVM) {
		snprintf(res->pmu_note, sizeof(res->pmu_note),
			 "not available: guests run under %s, which has no guest mode to count TLB walks in",
			 accel_name(accel));
		return;
	}
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_HARDWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_HW_CPU_CYCLES;
	pa.disabled = 1;
	pa.exclude_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
	if (fd < 0)
		snprintf(res->pmu_note, sizeof(res->pmu_note),
			 "not available: no hardware PMU here (perf_event_open of cpu-cycles: %s); dTLB/EPT walk counts need one",
			 strerror(errno));
	else {
		close((int)fd);
		snprintf(res->pmu_note, sizeof(res->pmu_note),
			 "collected per repetition on the vCPU threads in guest mode: host_guest_dtlb_load_misses, "
			 "host_guest_itlb_load_misses; EPT/NPT walk cycles need model-specific events and are not counted");
	}
}
