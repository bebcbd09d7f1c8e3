/*
 * results: the one results model of a run (cells, samples, coverage
 * evidence, validity, guests); results_json.h writes it as results.json and
 * results_load.h reads it back. Each cell's summaries and validity are
 * computed here (results_finish); the split is the analysis'
 * (analysis/effects.c effects_attach), the renderings report/'s. Never
 * touches /sys or libvirt.
 */
#ifndef THPEVAL_ORCH_RESULTS_H
#define THPEVAL_ORCH_RESULTS_H

#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "host/procfs.h"
#include "host/thp.h"
#include "lib/err.h"
#include "lib/record.h"
#include "lib/stats.h"

#define RESULTS_SCHEMA_VERSION 1
#define RES_MAX_METRICS 64	/* a KVM memset cell has 45: 29 guest, 9 host, 7 KVM/PMU; +2 mTHP */
#define RES_MAX_SAMPLES 512
#define RES_MAX_FAILURES 8
#define RES_NAME_MAX 32

struct metric {
	char name[REC_KEY_MAX];
	size_t n;			/* the samples analysed: those of the boots the cell keeps */
	size_t nall;			/* all held (0: n): the left-out boots' follow n, kept for results.json */
	double samples[RES_MAX_SAMPLES];
	/* the guest boot each sample came from (an index into results.guests), or
	 * for bare-host cells the round (the host setting is applied anew each round) */
	uint16_t boot[RES_MAX_SAMPLES];
	struct summary s;
};

/* what identifies a cell; empty prefault means "ondemand", empty variant none */
struct cell_key {
	const char *target;		/* "guest" or "host" */
	const char *host_thp;
	const char *prefault;		/* host allocation: "ondemand" or "immediate" */
	const char *guest_thp;
	const char *workload;
	const char *variant;		/* sub-measurement of a workload (e.g. "ws256-4k"), "" if none */
	const char *host_state;		/* "fresh" (NULL) or "fragmented" */
	const char *balloon;		/* "none" (NULL) or "reporting" (--balloon) */
};

/* a boot (a round for bare-host cells) whose evidence failed: out of the cell's samples */
#define RES_MAX_LEFT_OUT 32
struct left_out {
	unsigned boot;
	char reason[256];
};

struct cell {
	char target[8];			/* "guest" or "host" */
	char host_thp[RES_NAME_MAX];
	char prefault[RES_NAME_MAX];
	char guest_thp[RES_NAME_MAX];
	char workload[RES_NAME_MAX];
	char variant[RES_NAME_MAX];
	char host_state[24];		/* host memory before the guests: "fresh", "fragmented" */
	char balloon[16];		/* the guest's balloon: "none", "reporting" (free page reporting) */
	char host_cov_source[16];	/* "smaps" (AnonHugePages of guest RAM) or "mthp_stats" */
	char guest[64];			/* domain that produced the samples */
	size_t nmetrics;
	struct metric metrics[RES_MAX_METRICS];
	struct metric host_cov;		/* host_huge_pct per repetition */
	struct metric guest_cov;	/* guest_huge_pct per repetition */
	unsigned reps_ok, reps_failed, warmups;
	size_t nfailures;
	char failures[RES_MAX_FAILURES][200];
	bool valid;
	char invalid_reason[256];
	/* boots left out of a valid cell (an invalid one keeps every sample), and the boots it ran in */
	size_t nleft;
	struct left_out left[RES_MAX_LEFT_OUT];
	unsigned boots_run;
	/* the workload's own word on its treatment (lib/wltraits.h reason_field of its records:
	 * zero_page_reason, cov_note), the first one seen; "" none */
	char treatment_note[200];
};

/* one guest's own view of one cell (with --guests=N each guest has its own) */
#define GLOG_MAX_CELLS 8
struct guest_cellstat {
	char guest_thp[RES_NAME_MAX];
	char workload[RES_NAME_MAX];
	unsigned reps;
	unsigned ncov, nfault, naccess;
	double cov_sum, fault_sum, access_sum;
};

struct guest_log {
	char name[64];
	char host_state[24];
	unsigned index, concurrency;	/* this guest's index among the group's concurrent guests */
	char mthp_sizes_kb[64];		/* per-size mTHP the guest kernel offers, "none" */
	size_t ncs;
	struct guest_cellstat cs[GLOG_MAX_CELLS];
	char host_thp[RES_NAME_MAX];
	char prefault[RES_NAME_MAX];
	unsigned round;
	char xml_path[PATH_MAX];
	char console_path[PATH_MAX];
	char status[32];		/* "ok", "timeout", "failed", "interrupted" */
	char error[ERR_MSG_MAX];
	double create_to_first_record_s;
	/* create to first record in phases (NAN: not known): domain create (libvirt, QEMU
	 * up), firmware (QEMU running to the guest kernel's clock 0), the kernel to its
	 * "Run /init", the initrd to the runner's start, the runner to its hello */
	double boot_create_s, boot_firmware_s, boot_kernel_s, boot_initrd_s, boot_runner_s;
	double teardown_s;
	double total_s;
	unsigned records, rejected;
	char guest_kernel[64];
	char emulator[256];		/* the QEMU binary (--emulator), "" when libvirt chose it */
	char arm[4];			/* the A/B arm this boot belongs to: "A", "B"; "" without an A/B axis */
	char balloon[16];		/* its balloon arm (--balloon): "none", "reporting" */
};

/* the fragmented-host arm of one host group */
#define RES_BUDDY_ORDERS 16		/* orders a buddyinfo record keeps */

struct frag_log {
	char host_thp[RES_NAME_MAX];
	char prefault[RES_NAME_MAX];
	unsigned round;
	unsigned long long bytes, huge_kb, held_kb;
	unsigned long long free2m_before_kb, free2m_after_kb, free2m_undone_kb;	/* free in >= 2M blocks */
	unsigned long long avail_before_kb, avail_undone_kb;	/* MemAvailable before fragmenting and once undone */
	unsigned orders;
	unsigned long long buddy_before[RES_BUDDY_ORDERS], buddy_after[RES_BUDDY_ORDERS],
		buddy_undone[RES_BUDDY_ORDERS];	/* free blocks per order */
	bool restored, compacted, have_undone;
	bool pcp_low;			/* the per-CPU free lists were kept short while fragmenting */
	bool pcp_drained;		/* undo emptied the per-CPU free lists (percpu_pagelist_high_fraction) */
	unsigned long long compact_scanned;	/* pages undo's compact_memory scanned (compact_migrate_scanned) */
	char stopped[16];		/* why the fragmenter stopped: cap, floor, exhausted */
	char proactiveness[8];		/* vm.compaction_proactiveness before the arm set it to 0; "" when the
					 * kernel has none */
	unsigned long long frag_compact_scanned;	/* pages compaction scanned while fragmenting */
	double seconds;
	/* host-wide vmstat deltas while the guests ran on the fragmented host */
	unsigned long long compact_stall, compact_success, compact_fail, thp_fault_alloc, thp_fault_fallback;
	unsigned long long compact_scanned_guests, pgmigrate_success, pgsteal_direct;
	char error[ERR_MSG_MAX];
};

/* one second of a recovery arm: huge-page coverage of guest RAM at t_s after the setting went in */
struct cov_point {
	double t_s, huge_pct;
};

#define RES_COVSERIES_MAX 600		/* samples a recovery arm keeps (one a second) */

/* khugepaged over a collapse-khugepaged interval: its settings then, its counters' and CPU time's deltas */
struct khp_log {
	bool knobs_set;			/* --khugepaged set pages_to_scan and/or scan_sleep_millisecs */
	unsigned long long pages_to_scan, scan_sleep_ms, alloc_sleep_ms, defrag;
	unsigned long long max_ptes_none, max_ptes_swap, max_ptes_shared;
	unsigned long long full_scans, pages_collapsed;	/* over the interval */
	unsigned pid;			/* the kernel thread read (never signalled) */
	double cpu_s;			/* its utime + stime over the interval; NAN: not read */
};

/*
 * collapse-khugepaged: how QEMU was put on khugepaged's list at the start of
 * the interval: the guest faulted a fresh buffer of most of its free memory
 * (guest RAM the host never backed), then freed it.
 */
struct khp_reg {
	char method[24];		/* "guest_touch" */
	double sent_s;			/* the request, from the setting going in */
	double done_s;			/* the guest's report of it; NAN: none came */
	double touch_s;			/* the guest's time faulting the buffer */
	unsigned long long bytes;	/* the buffer */
	/* coverage at the first sample after done_s: the touch's own huge page faults, not khugepaged's */
	double huge_pct_after_touch;
};

/* one access pass of the guest's probe: host time of its arrival after the setting went in */
struct access_point {
	double t_s, access_ns;
};

#define RES_ACCESS_MAX 600

/*
 * The guest's access passes after its series: the memset pointer chase over
 * one held buffer, repeated at a fixed period before, through and after the
 * recovery interval; means by phase (NAN: no pass in it).
 */
struct probe_log {
	char guest_thp[RES_NAME_MAX];	/* the guest THP setting the passes ran under */
	double period_s;
	unsigned long long buffer_mib, accesses;
	double before_ns, during_ns, after_ns;
	unsigned n_before, n_during, n_after;
	size_t n;
	struct access_point series[RES_ACCESS_MAX];
};

/*
 * A recovery arm of one guest: it booted and ran on host THP never (4K
 * pages), then the group's setting was applied and its guest RAM collapsed
 * on demand (process_madvise MADV_COLLAPSE) while the coverage was sampled.
 */
struct collapse_log {
	char host_thp[RES_NAME_MAX];	/* the setting applied after the guest's series */
	char prefault[RES_NAME_MAX];
	char method[16];		/* "madvise" */
	unsigned round, boot;		/* boot: the guest's index in results.guests */
	unsigned long long mapping_kb;	/* the guest-RAM ranges collapsed */
	unsigned ranges;
	double cov_before_pct, cov_after_pct;	/* huge pages / mapping size, at the start and the end */
	/* at the end: what the guest ever touched (smaps Rss), and the huge share of it */
	unsigned long long resident_kb_after;
	double resident_huge_pct_after;
	double call_s;			/* the process_madvise call's wall time */
	char call_result[24];		/* "ok", or the errno name of the last block not collapsed */
	/* 2M blocks: all, collapsed, refused (EINVAL: never touched, or not eligible), busy (EAGAIN),
	 * no free huge page (ENOMEM) */
	unsigned long long blocks, collapsed, refused, busy, nomem;
	double t50_s, t90_s;		/* first reaching 50% and 90% (interpolated); NAN: not reached */
	size_t n;
	struct cov_point series[RES_COVSERIES_MAX];
	char error[ERR_MSG_MAX];
	/* the interval's end and what ended it; khugepaged's share (method "khugepaged");
	 * the guest's access passes through and after it */
	char stopped[160];		/* "90% reached", "timeout", "plateau", "collapse calls done" */
	double interval_s;		/* from the setting going in to the stop */
	bool has_khp, has_probe;
	struct khp_log khp;
	bool has_reg;
	struct khp_reg reg;
	struct probe_log probe;
};

/* the KSM arm (--ksm): the host's KSM counters at t_s from the group's first boot */
struct ksm_point {
	double t_s;
	unsigned long long pages_shared, pages_sharing, full_scans;
};

/* one guest's host huge-page coverage of its guest RAM at t_s */
struct ksm_cov_point {
	double t_s;
	unsigned guest;			/* its index among the group's guests */
	double huge_pct;
};

#define RES_KSM_SERIES_MAX 1200		/* seconds a KSM arm keeps, one sample a second */
#define RES_KSM_COV_MAX 2400		/* coverage samples, all guests together */

/*
 * One host group of a KSM arm in one round: its N guests ran together, with
 * KSM running (on) or stopped and their RAM unmergeable (off).
 */
struct ksm_log {
	char ksm[4];			/* "off" or "on" */
	char host_thp[RES_NAME_MAX];
	char prefault[RES_NAME_MAX];
	unsigned round;
	unsigned guests, first_boot;	/* the guests are boots first_boot .. first_boot + guests - 1 */
	unsigned long long pages_to_scan, sleep_millisecs;	/* the arm's scan rate; 0 when off */
	unsigned long long thp_split_pmd;	/* host-wide /proc/vmstat delta over the group */
	unsigned long long pages_shared_max, pages_sharing_max, full_scans;	/* full_scans: delta */
	double t_sharing_s;		/* first sample with pages_sharing above 0; NAN: never */
	double waited_s;		/* after the guests' series: waiting for pages_sharing to rise */
	/* memset's access_ns at guest THP never (mean over the guests' measured repetitions)
	 * recorded while nothing was merged (pages_sharing 0), and after a full scan with pages
	 * merged; NAN: none */
	double access_before_ns, access_after_ns;
	unsigned n_before, n_after;
	size_t n;
	struct ksm_point series[RES_KSM_SERIES_MAX];
	size_t ncov;
	struct ksm_cov_point cov[RES_KSM_COV_MAX];
	char error[ERR_MSG_MAX];
};

/*
 * A migration arm of one guest (--migrate): its warm series done, the memset
 * keep phase ran passes while the guest was live-migrated to a second
 * libvirt daemon on this machine (none: it was not), its series going on on
 * the destination.
 */
struct mig_pass {
	double t_s;			/* the pass's start on the host's clock, from the migration's start */
	double write_ns_per_4k, access_ns;
};

#define RES_MIGPASS_MAX 400

struct migration_log {
	char arm[16];			/* "none", "precopy", "postcopy" */
	char host_thp[RES_NAME_MAX];
	unsigned round, boot;		/* boot: the guest's index in results.guests */
	double src_cov_pct;		/* the source QEMU's coverage of guest RAM as the migration starts */
	double dst_cov_first_pct;	/* the destination's, right after it */
	double dst_cov_last_pct;
	double t90_s;			/* from the migration's end to 90% on the destination; NAN: never */
	char t90_why[96];		/* why never */
	double migrate_s;		/* the migration call's wall time on the host */
	bool postcopy_switched;		/* postcopy: the switch happened (else the migration ended in precopy) */
	/* libvirt's job statistics (completed job) */
	bool have_stats;
	double total_ms, downtime_ms, setup_ms;
	unsigned long long data_bytes, memory_bytes, memory_total_bytes, bandwidth_bps, dirty_rate_pps,
		postcopy_requests, iterations;
	/* the guest's per-boot means: before the migration, the first pass after, after settling */
	double access_before_ns, access_after_ns, access_settled_ns;
	double write_before_ns, write_after_ns, write_settled_ns;
	double settled_s;		/* when the destination's coverage settled, from the migration's end */
	size_t n;
	struct cov_point series[RES_COVSERIES_MAX];	/* destination coverage, t from the migration's end */
	size_t npass;
	struct mig_pass pass[RES_MIGPASS_MAX];
	char error[ERR_MSG_MAX];
};

/* per arm, metric and phase over the boots: the mean, its 95% interval, the effect against none */
struct mig_summary {
	char arm[16], host_thp[RES_NAME_MAX], metric[32], phase[16];
	unsigned boots;
	double mean, ci_lo, ci_hi;
	double effect_pct, effect_lo_pct, effect_hi_pct;	/* against the none arm; NAN: none to compare */
};

/*
 * The ranges of the run settings results.json echoes: `thpeval run` refuses
 * an option outside its range (cmd/run_opts.c), and the loader a file's value
 * (results_json.c), from these same numbers.
 */
#define RUN_BOOTS_MIN 1
#define RUN_BOOTS_MAX 50
#define RUN_REPS_MIN 1
#define RUN_REPS_MAX 100
#define RUN_WARMUP_MAX 10
#define RUN_COLD_REPS_MAX 20
#define RUN_MEMORY_MIN (256ll << 20)
#define RUN_MEMORY_MAX (1ll << 40)
#define RUN_VCPUS_MIN 1
#define RUN_VCPUS_MAX 64
#define RUN_SIZE_ALIGN (2ll << 20)	/* --size: a non-zero multiple */
#define RUN_ACCESSES_MIN 1000
#define RUN_ACCESSES_MAX 1000000000ll
#define RUN_SEED_MIN 1
#define RUN_SEED_MAX 0xffffffffll
#define RUN_GUESTS_MIN 1
#define RUN_GUESTS_MAX 8
#define RUN_MIN_COV_MAX 100		/* --min-coverage: percent, from 0 */

/* an effect the stopping rule no longer chased: its target out of reach within the limits */
#define RES_NOT_CHASED_MAX 16
struct not_chased {
	char effect[160];		/* "host prefault (guest always) fault_ns_per_4k" */
	double target_pct;
	unsigned boots_needed;		/* projected from its width when it was dropped */
	unsigned boots_allowed;		/* rounds the budget and --max-reps allowed then */
};

struct run_settings {			/* echo of the configuration */
	unsigned reps, warmup, vcpus, rounds;
	unsigned boots;			/* asked for per host setting; rounds = what ran */
	char pin[128];			/* where vCPUs and QEMU's other threads ran (--pin) */
	unsigned cold_reps;
	char prefault_list[64];
	char backing[32];
	char group_order[512];		/* host groups in the order they ran */
	double target_ci_host, target_ci_guest;	/* points; 0 = none */
	double budget_s;		/* 0 = none */
	char stopped[32];		/* why rounds stopped (stop_verdict_name), "" when fixed */
	bool stopped_at_minimum;	/* the targets were met at the fewest rounds a target runs */
	size_t nnot_chased;
	struct not_chased not_chased[RES_NOT_CHASED_MAX];
	unsigned long long memory_bytes, size_bytes, accesses, seed;
	double min_coverage_pct;
	char host_thp_list[256], guest_thp_list[128], workloads[128];
	unsigned guests;		/* concurrent guests per group */
	char host_state_list[48];
	char balloon_list[32];		/* --balloon: "none", "none,reporting" */
	bool mthp_sweep;
	char guest_mthp[256];		/* what the guest kernel offers for a guest-side sweep */
	char uri[256];
	char kcompile[128];		/* "CONFIG:TARGET" when kcompile ran, else "" */
	char srcdisk_id[20];		/* the kernel source disk kcompile used, else "" */
	char emulator[2 * 256 + 2];	/* --emulator as given: "A" or "A,B"; "" when libvirt chose */
	char ksm[8];			/* --ksm: "off", "on", "off,on"; "" not asked */
};

struct effects;
struct balloon_log;

struct results {
	char thpeval_version[32];
	char accel[8];
	char accel_reason[256];
	char libvirt_version[32];
	char hypervisor_version[32];
	char image_id[20];
	char kvm_stats_note[200];	/* availability of host telemetry, with the reason */
	char pmu_note[200];
	struct host_info host;
	struct thp_settings thp_before;
	struct thp_settings thp_after;
	bool have_thp_after;
	struct run_settings settings;
	time_t started, finished;
	char status[32];		/* "running", "complete", "interrupted", "failed" */
	char error[ERR_MSG_MAX];
	size_t ncells, cap_cells;
	struct cell *cells;
	size_t nguests, cap_guests;
	struct guest_log *guests;
	struct effects *effects;	/* below; set by the analysis (effects_attach), NULL
					 * before; owned here */
	size_t nfrags, cap_frags;
	struct frag_log *frags;
	struct abtest *ab;		/* below; the in-run A/B comparison (analysis/abtest.c), NULL
					 * without an A/B axis; owned here */
	size_t ncollapses, cap_collapses;
	struct collapse_log *collapses;
	size_t nmigrations, cap_migrations;	/* --migrate: one per boot */
	struct migration_log *migrations;
	size_t nmigsum, cap_migsum;
	struct mig_summary *migsum;
	size_t nballoons, cap_balloons;	/* the free page reporting arm (model/balloon.h) */
	struct balloon_log *balloons;
	size_t nksms, cap_ksms;
	struct ksm_log *ksms;
	struct abtest *ksm_fx;		/* KSM on against off per primary metric (analysis/ksmfx.c), NULL
					 * without both arms; owned here */
};

void results_init(struct results *r);
void results_release(struct results *r);

/* find or add the cell with this key */
struct cell *results_cell_key(struct results *r, const struct cell_key *k, struct err *e);
/* shorthand: prefault "ondemand", no variant */
struct cell *results_cell(struct results *r, const char *target, const char *host_thp,
			  const char *guest_thp, const char *workload, struct err *e);
struct guest_log *results_guest_add(struct results *r, struct err *e);
struct frag_log *results_frag_add(struct results *r, struct err *e);
struct collapse_log *results_collapse_add(struct results *r, struct err *e);
struct migration_log *results_migration_add(struct results *r, struct err *e);
struct mig_summary *results_migsum_add(struct results *r, struct err *e);
/*
 * The reference a recovery arm's access passes are compared with: the mean
 * access_ns of the run's fresh-host memset cell at the same host and guest
 * setting (a fresh boot on that setting); NAN when the run has none.
 */
double results_recovery_ref_ns(const struct results *r, const struct collapse_log *c);
struct ksm_log *results_ksm_add(struct results *r, struct err *e);
/* the guest's own stats for a cell, added when new; NULL when full */
struct guest_cellstat *guest_cellstat(struct guest_log *g, const char *guest_thp, const char *workload);
/* the samples m holds, left-out boots' included */
size_t metric_nall(const struct metric *m);
/* a sample of boot 0 (tests, one-boot data) */
int metric_add(struct metric *m, double v);
/*
 * The geometric mean over boots of each repetition position: out[k] is over
 * the (k+1)-th sample of every boot that has one (NAN where one is not
 * positive). Returns the positions, at most max. A position that differs
 * from the others is a bias of the design (what ran before it), not noise.
 */
size_t metric_position_geomeans(const struct metric *m, double *out, size_t max);
int metric_add_boot(struct metric *m, double v, unsigned boot);
struct metric *cell_metric(struct cell *c, const char *name, struct err *e);
const struct metric *cell_metric_find(const struct cell *c, const char *name);
void cell_add_failure(struct cell *c, const char *reason);
struct wl_rule;
/* the rule that decides the cell's validity (lib/wltraits.h), never NULL */
const struct wl_rule *cell_rule(const struct cell *c);
/*
 * A result record's treatment evidence into the cell: its coverage field (per
 * the workload's rule) into cov (guest_cov for a guest cell, host_cov for a
 * bare-host one), its reason field into treatment_note (first one kept).
 */
void cell_take_evidence(struct cell *c, const struct record *rec, struct metric *cov, unsigned boot);

/* the cell's summaries: each metric's over boots (summarize_blocked), coverage's over repetitions */
void cell_summarize(struct cell *c);
/*
 * The cell's samples of the boots in c->left moved behind each metric's n
 * (a valid cell only; order kept otherwise), as validity leaves them and a
 * loaded results.json must again
 */
void cell_leave_out(struct cell *c);
/*
 * Validity per boot, then summaries (min_cov_pct: huge-page share an "on"
 * cell must reach): each boot's evidence is judged on its own; a boot whose
 * evidence fails is left out of the cell with its reason, and the cell is
 * invalid only when fewer than 2 boots remain (none, of a one-boot cell).
 */
void results_finish(struct results *r, double min_cov_pct);
/*
 * Whether any cell has a measured repetition; where none has, why into why (the
 * first guest's error, else the first cell's failure, else "no cell ran")
 */
bool results_any_rep_ok(const struct results *r, char *why, size_t len);


/*
 * What the analyses derive from the cells, as the model carries and writes
 * it (results->effects): the effects of the split and each cell's variance
 * components. analysis/effects.c computes them; the model only stores them.
 */
/* a cell's variance components: the CV within a boot and between boots */
struct varcomp {
	size_t boots, samples;
	double within_cv_pct, between_cv_pct;
};

#define EFFECTS_MAX 320

struct effect {
	char workload[RES_NAME_MAX];
	char side[16];			/* "host", "guest", "interaction", "total" */
	char component[16];		/* "prefault", "tlb", "warm" (host, fault phase, host-warm) */
	char metric[REC_KEY_MAX];	/* the phase metric it is computed from */
	char host_thp[RES_NAME_MAX];	/* treatment levels compared with never */
	char guest_thp[RES_NAME_MAX];
	char at_guest[RES_NAME_MAX];	/* host-side effects: the guest setting they are measured at */
	char host_state[24];		/* cells compared: all fresh or all fragmented */
	bool available;
	char note[256];			/* why not available, or how it was derived */
	char method[16];		/* "boots" (over boots: Welch, or rounds as blocks) or "one-boot"
					 * (repetitions in one boot) */
	double log_est, log_se;		/* the contrast of log times and its standard error */
	double estimate_pct;		/* (1 - exp(-log_est)) * 100: positive = THP made it faster */
	double ci95_low_pct, ci95_high_pct;
	double df;			/* Welch-Satterthwaite degrees of freedom */
	unsigned boots_min;		/* fewest boots any arm of the contrast had */
	/* host-side: rounds as blocks (analysis/effects.c eval_rounds, doc/method.md) */
	char round_estimator[24];	/* "paired by round", "unpaired"; "" guest-side */
	char round_note[96];		/* why that one */
	unsigned rounds;		/* complete rounds (every arm ran) */
	double round_corr;		/* 1 - s_D^2 / sum w^2 s_k^2; NAN unknown */
	double round_var;		/* the round variance component, log scale, truncated at 0 */
	double log_se_unpaired, df_unpaired;	/* Welch over boots, for comparison */
	bool significant;		/* interval excludes 0 */
	double share_pct;		/* estimate_pct over the same table's total's, in %; NAN unless
					 * both are significant */
};

/* one cell's variance components for one phase metric */
struct effect_var {
	char workload[RES_NAME_MAX];
	char label[168];		/* "host always/ondemand guest never" (+ variant, state) */
	char metric[REC_KEY_MAX];
	struct varcomp vc;
};

#define EFFECTS_MAX_VAR 128

/* under TCG the host side is QEMU's software MMU, not KVM's two-dimensional walk */
#define EFFECTS_TCG_NOTE "under TCG, host-side effects are QEMU's software MMU reaching guest RAM " \
	"through the host's page tables (its softmmu TLB refills walk them), not KVM's two-dimensional " \
	"hardware page walk: they do not carry over to KVM guests"

/* the host is a guest of another hypervisor that takes its free memory back */
#define EFFECTS_NESTED_NOTE "this host is itself a virtual machine that reports free memory to its " \
	"hypervisor (free page reporting): a host-cold first touch takes a second fault there when the " \
	"page was reported, so host prefault drifts from run to run with that hypervisor's state; a " \
	"bare-metal host has no such fault"

struct effects {
	bool tcg;			/* the guests ran under TCG: host-side effects mean EFFECTS_TCG_NOTE */
	bool nested;			/* the host reports free memory: EFFECTS_NESTED_NOTE */
	size_t n;
	struct effect e[EFFECTS_MAX];
	size_t nvar;
	struct effect_var var[EFFECTS_MAX_VAR];
};


/*
 * The in-run A/B comparison of a run with two emulators: each gated metric
 * of each cell and each split effect, arm B against arm A over the run's
 * boots. analysis/abtest.c computes it; the model only stores it.
 */
#define AB_MAX_ROWS 256

struct ab_row {
	char what[16];			/* "kind", "metric" or "effect" */
	char label[160];		/* the kind (workload[:variant], its cells), the cell label, or the
					 * effect's name */
	char metric[REC_KEY_MAX];
	unsigned pairs;			/* rounds with both arms (paired), else 0 */
	unsigned boots_a, boots_b;	/* boots behind each arm's value */
	char method[16];		/* "paired" (by round), "welch" (over boots) */
	double a, b;			/* each arm's value: the geometric mean, or the effect in % */
	double log_ratio, log_se, df;	/* ln(B/A) (metric) or effect B - effect A (log scale), its SE */
	double ratio, ratio_lo, ratio_hi;	/* exp(log_ratio) and its 95% interval */
	double p, p_holm;		/* two-sided p of "no difference"; Holm-adjusted in its family */
	bool tested, differs;		/* differs: Holm-adjusted p < 0.05 */
	char note[160];			/* why not tested */
};

struct abtest {
	char axis[16];			/* "emulator" */
	char a[256], b[256];		/* what each arm ran */
	size_t n;
	struct ab_row rows[AB_MAX_ROWS];
	size_t kinds_tested, kinds_differ;	/* each gated metric over a workload's cells */
	size_t metrics_tested, metrics_differ, effects_tested, effects_differ;
};

#endif
