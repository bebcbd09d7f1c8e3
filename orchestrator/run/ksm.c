/*
 * ksm: the KSM arm (--ksm=off,on). Its host groups come in two arms: on
 * boots the group's guests with their RAM mergeable (no <nosharepages/>)
 * and KSM at a fast scan rate, started once every guest has recorded its
 * first measured repetition, so the access series has a before and an
 * after; off keeps <nosharepages/> with KSM stopped. KSM's knobs go
 * through the host journal. While the guests run, the KSM counters and each
 * guest's host huge-page coverage are sampled every second into
 * results.ksm; the on arm's cells are of host state "ksm".
 */
#include "orchestrator/run/ksm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/ksm.h"
#include "lib/clock.h"
#include "orchestrator/analysis/ksmfx.h"
#include "orchestrator/run/hostplan.h"
#include "orchestrator/run/note.h"
#include "orchestrator/run/telemetry.h"

#define KSM_SAMPLE_S 1.0

int ksm_prepare(const struct run_config *cfg, struct results *res, struct err *e)
{
	if (!cfg->ksm || !cfg->target_guest)
		return 0;
	snprintf(res->settings.ksm, sizeof(res->settings.ksm), "%s",
		 cfg->ksm == RUN_KSM_ON ? "on" : cfg->ksm == RUN_KSM_OFF ? "off" : "off,on");
	if (!ksm_present(cfg->sysfs_root))
		return err_set(e, -EOPNOTSUPP, "--ksm: this host kernel has no KSM (%s%s/run missing: CONFIG_KSM is "
			       "off): run without --ksm", strcmp(cfg->sysfs_root, "/") ? cfg->sysfs_root : "",
			       KSM_SYSFS_DIR);
	return 0;
}

int ksm_groups(const struct run_config *cfg, struct host_session *hs, struct host_group *g, size_t *n, size_t cap,
	       struct err *e)
{
	size_t i, n0 = *n;

	if (!cfg->ksm)
		return 0;
	if (cfg->ksm == (RUN_KSM_OFF | RUN_KSM_ON)) {
		if (2 * n0 > cap)
			return err_set(e, -E2BIG, "--ksm=off,on: too many host groups (%zu, at most %zu)", 2 * n0, cap / 2);
		for (i = 0; i < n0; i++)
			g[n0 + i] = g[i];
		*n = 2 * n0;
	}
	for (i = 0; i < *n; i++) {
		g[i].ksm = cfg->ksm == RUN_KSM_OFF || (cfg->ksm != RUN_KSM_ON && i < n0) ? RUN_KSM_OFF : RUN_KSM_ON;
		g[i].ksm_hs = hs;
	}
	return 0;
}

const char *group_state_name(const struct host_group *hg)
{
	return hg->ksm == RUN_KSM_ON ? KSM_HOST_STATE : host_state_name(hg->host_state);
}

static int ksm_set(struct host_session *hs, const char *key, uint64_t v, struct err *e)
{
	char val[24];

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	return host_session_set(hs, key, val, e);
}

int ksm_group_enter(struct host_session *hs, const struct run_config *cfg, const struct host_group *hg,
		    struct err *e)
{
	int r;

	if (!hg->ksm)
		return 0;
	/* both arms start stopped: the on arm starts KSM after the guests' first measured repetition */
	r = ksm_set(hs, "ksm/run", 0, e);
	if (!r && hg->ksm == RUN_KSM_ON)
		r = ksm_set(hs, "ksm/pages_to_scan", cfg->ksm_pages_to_scan, e);
	if (!r && hg->ksm == RUN_KSM_ON)
		r = ksm_set(hs, "ksm/sleep_millisecs", cfg->ksm_sleep_ms, e);
	return r;
}

/* one group's sampler */
struct ksm_arm {
	const struct run_config *cfg;
	const struct run_io *io;
	const struct host_group *hg;
	struct results *res;
	size_t idx;			/* its entry in res->ksms (the array may move) */
	char proc[PATH_MAX];
	double t0, next;
	bool have_split0, started;
	uint64_t split0, scans0;
	double t_start;			/* KSM started, from t0 */
	/* per guest: the memset access sums seen so far */
	double acc_sum[RUN_GUESTS_MAX];
	unsigned acc_n[RUN_GUESTS_MAX];
	double before_sum, after_sum;
};

static struct ksm_log *arm_log(struct ksm_arm *ka)
{
	return &ka->res->ksms[ka->idx];
}

struct ksm_arm *ksm_arm_begin(const struct run_config *cfg, const struct run_io *io, const struct host_group *hg,
			      unsigned round, unsigned first_boot, struct results *res)
{
	struct ksm_arm *ka;
	struct ksm_log *kl;
	struct ksm_stats ks;
	struct vmstat *vm;
	struct err e = ERR_INIT;

	if (!hg->ksm)
		return NULL;
	ka = calloc(1, sizeof(*ka));
	vm = malloc(sizeof(*vm));
	kl = ka && vm ? results_ksm_add(res, &e) : NULL;
	if (!kl) {
		run_note(io, "warning: no KSM series for this group: %s", e.msg[0] ? e.msg : "out of memory");
		free(ka);
		free(vm);
		return NULL;
	}
	ka->cfg = cfg;
	ka->io = io;
	ka->hg = hg;
	ka->res = res;
	ka->idx = (size_t)(kl - res->ksms);
	snprintf(kl->ksm, sizeof(kl->ksm), "%s", hg->ksm == RUN_KSM_ON ? "on" : "off");
	snprintf(kl->host_thp, sizeof(kl->host_thp), "%s", hg->host_thp);
	snprintf(kl->prefault, sizeof(kl->prefault), "%s", prefault_name(hg->prefault));
	kl->round = round;
	kl->guests = cfg->guests ? cfg->guests : 1;
	kl->first_boot = first_boot;
	if (hg->ksm == RUN_KSM_ON) {
		kl->pages_to_scan = cfg->ksm_pages_to_scan;
		kl->sleep_millisecs = cfg->ksm_sleep_ms;
	}
	run_proc_root(cfg, ka->proc, sizeof(ka->proc));
	if (vmstat_read(ka->proc, vm, NULL) == 0 && vmstat_get(vm, "thp_split_pmd", &ka->split0) == 0)
		ka->have_split0 = true;
	free(vm);
	if (ksm_stats_read(cfg->sysfs_root, &ks, NULL) == 0)
		ka->scans0 = ks.full_scans;
	ka->t0 = mono_s();
	ka->t_start = NAN;
	return ka;
}

/*
 * A guest's memset access sums so far: its measured repetitions at guest THP
 * never, the cell every run has and runs first, so that before and after
 * merging compare one cell's repetitions
 */
static void access_sums(const struct guest_ctx *gc, double *sum, unsigned *n)
{
	size_t i;

	*sum = 0;
	*n = 0;
	for (i = 0; gc->log && i < gc->log->ncs; i++)
		if (!strcmp(gc->log->cs[i].workload, "memset") && !strcmp(gc->log->cs[i].guest_thp, "never")) {
			*sum += gc->log->cs[i].access_sum;
			*n += gc->log->cs[i].naccess;
		}
}

/* every guest has a measured repetition (or is gone): KSM may start */
static bool all_measured(const struct group_shared *grp)
{
	size_t i;

	for (i = 0; i < grp->n; i++) {
		double s;
		unsigned n;

		access_sums(grp->all[i], &s, &n);
		if (!n && grp->all[i]->g && !grp->all[i]->got_end)
			return false;
	}
	return true;
}

/* one sample: the counters, each guest's coverage, the access repetitions since the last one */
static void sample(struct ksm_arm *ka, const struct group_shared *grp)
{
	struct ksm_log *kl = arm_log(ka);
	double t = mono_s() - ka->t0;
	struct ksm_stats ks;
	size_t i;
	int after;

	if (ksm_stats_read(ka->cfg->sysfs_root, &ks, NULL))
		return;
	if (kl->n < RES_KSM_SERIES_MAX)
		kl->series[kl->n++] = (struct ksm_point){ t, ks.pages_shared, ks.pages_sharing, ks.full_scans };
	if (ks.pages_shared > kl->pages_shared_max)
		kl->pages_shared_max = ks.pages_shared;
	if (ks.pages_sharing > kl->pages_sharing_max)
		kl->pages_sharing_max = ks.pages_sharing;
	kl->full_scans = ks.full_scans - ka->scans0;
	if (ks.pages_sharing && isnan(kl->t_sharing_s))
		kl->t_sharing_s = t;
	/* before: KSM not started, nothing merged; after: a full scan since it started, pages merged */
	after = !ka->started && !ks.pages_sharing ? 0 : ka->started && ks.pages_sharing && kl->full_scans ? 1 : -1;
	for (i = 0; i < grp->n && i < RUN_GUESTS_MAX; i++) {
		struct guest_ctx *gc = grp->all[i];
		struct smaps_cov cov;
		double s;
		unsigned n;

		access_sums(gc, &s, &n);
		if (n > ka->acc_n[i] && after == 0) {
			ka->before_sum += s - ka->acc_sum[i];
			kl->n_before += n - ka->acc_n[i];
		} else if (n > ka->acc_n[i] && after == 1) {
			ka->after_sum += s - ka->acc_sum[i];
			kl->n_after += n - ka->acc_n[i];
		}
		ka->acc_sum[i] = s;
		ka->acc_n[i] = n;
		if (!gc->g)
			continue;
		if (gc->qemu_pid <= 0)
			gc->qemu_pid = guest_qemu_pid(gc->g);
		if (gc->qemu_pid > 0 && kl->ncov < RES_KSM_COV_MAX &&
		    smaps_guest_ram(gc->proc_root, gc->qemu_pid, ka->cfg->memory, &cov, NULL) == 0)
			kl->cov[kl->ncov++] = (struct ksm_cov_point){ t, (unsigned)i, smaps_huge_pct(&cov) };
	}
	kl->access_before_ns = kl->n_before ? ka->before_sum / kl->n_before : NAN;
	kl->access_after_ns = kl->n_after ? ka->after_sum / kl->n_after : NAN;
}

/* the on arm: KSM starts once every guest has a measured repetition */
static void maybe_start(struct ksm_arm *ka, const struct group_shared *grp)
{
	struct err e = ERR_INIT;

	if (ka->started || ka->hg->ksm != RUN_KSM_ON || !all_measured(grp))
		return;
	ka->started = true;
	ka->t_start = mono_s() - ka->t0;
	if (ksm_set(ka->hg->ksm_hs, "ksm/run", 1, &e)) {
		run_note(ka->io, "warning: KSM not started: %s", e.msg);
		snprintf(arm_log(ka)->error, sizeof(arm_log(ka)->error), "%s", e.msg);
		return;
	}
	run_note(ka->io, "KSM started (%llu pages every %llu ms) after the guests' first measured repetition",
		 (unsigned long long)ka->cfg->ksm_pages_to_scan, (unsigned long long)ka->cfg->ksm_sleep_ms);
}

void ksm_arm_tick(struct ksm_arm *ka, const struct group_shared *grp)
{
	if (!ka || mono_s() - ka->t0 < ka->next)
		return;
	ka->next += KSM_SAMPLE_S;
	maybe_start(ka, grp);
	sample(ka, grp);
}

void ksm_arm_end(struct ksm_arm *ka, const struct group_shared *grp, bool ok)
{
	struct ksm_log *kl;
	struct vmstat *vm;
	uint64_t split;

	if (!ka)
		return;
	maybe_start(ka, grp);
	sample(ka, grp);
	kl = arm_log(ka);
	/* the series ended before anything merged: the guests wait (for their "bye") a bounded time */
	if (ok && ka->started && !kl->pages_sharing_max && !*ka->io->stop) {
		double w0 = mono_s();

		while (!kl->pages_sharing_max && !*ka->io->stop && (mono_s() - w0) * 1000 < (double)ka->cfg->ksm_wait_ms) {
			virt_event_wait(100);
			ksm_arm_tick(ka, grp);
		}
		kl->waited_s = mono_s() - w0;
		if (!kl->pages_sharing_max)
			run_note(ka->io, "warning: KSM merged nothing within %.0f s of the guests' series",
				 kl->waited_s);
	}
	vm = malloc(sizeof(*vm));
	if (vm && ka->have_split0 && vmstat_read(ka->proc, vm, NULL) == 0 && vmstat_get(vm, "thp_split_pmd", &split) == 0)
		kl->thp_split_pmd = split - ka->split0;
	free(vm);
	if (ka->hg->ksm == RUN_KSM_ON)
		run_note(ka->io, "KSM arm: pages_sharing up to %llu (shared %llu), %llu full scan(s), thp_split_pmd +%llu; "
			 "access %.0f ns before merging (%u reps), %.0f after (%u reps)", kl->pages_sharing_max,
			 kl->pages_shared_max, kl->full_scans, kl->thp_split_pmd, kl->access_before_ns, kl->n_before,
			 kl->access_after_ns, kl->n_after);
	free(ka);
}
