#include "wltraits.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

static const char *const want_names[] = {
	[WL_WANT_NONE] = "none",
	[WL_WANT_SETTING] = "setting",
	[WL_WANT_ALWAYS] = "always",
	[WL_WANT_HUGE] = "huge",
	[WL_WANT_BASE] = "base",
	[WL_WANT_FIELD] = "field",
	[WL_WANT_UNMEASURED] = "unmeasured",
};
_Static_assert(sizeof(want_names) / sizeof(want_names[0]) == WL_WANT__COUNT,
	       "want_names out of sync with enum wl_want");

const char *wl_want_name(enum wl_want w)
{
	return (unsigned)w < WL_WANT__COUNT ? want_names[w] : "?";
}

/* a rule with only its coverage evidence (no want, effect or reason field) */
#define COV_RULE(variant, cov_field, want, what) { variant, cov_field, want, NULL, NULL, NULL, NULL, what, 0 }
/* the end of a rule table */
#define RULES_END { NULL, NULL, WL_WANT_NONE, NULL, NULL, NULL, NULL, NULL, 0 }
/* a workload with one coverage rule for every variant */
#define WHOLE_RULES(name, cov_field, want, what) \
	static const struct wl_rule name[] = { COV_RULE("*", cov_field, want, what), RULES_END }

/*
 * The rules. Field names are the ones the guest workloads write (their
 * metric tables declare them; tests/guest/test_workload.c checks that).
 */

/* --madvise=1 under 'madvise' (the runner passes it), so huge unless never */
WHOLE_RULES(memset_rules, "guest_huge_pct", WL_WANT_SETTING, "the buffer");

static const struct wl_rule tlb_rules[] = {
	/* the baseline page and the 4K-backed points: a MADV_NOHUGEPAGE (or split) region */
	COV_RULE("base", "huge_pct", WL_WANT_BASE, "the 4K-backed region"),
	COV_RULE("ws*_4k", "huge_pct", WL_WANT_BASE, "the 4K-backed region"),
	/* the 2M-backed points and the summary's 4K - 2M differences: a MADV_HUGEPAGE region */
	COV_RULE("*", "huge_pct", WL_WANT_HUGE, "the 2M-backed region"),
	RULES_END,
};

static const struct wl_rule hzp_rules[] = {
	/* use_zero_page=1: the read faults must map the huge zero page */
	{ "zp1", NULL, WL_WANT_NONE, NULL, "zero_page_in_effect", "huge zero page", "zero_page_reason",
	  "the buffer", 0 },
	/* use_zero_page=0 (or no knob): the reads allocate, huge pages unless THP is never */
	COV_RULE("*", "huge_pct", WL_WANT_SETTING, "the buffer"),
	RULES_END,
};

WHOLE_RULES(clearorder_rules, "huge_pct", WL_WANT_SETTING, "the tasks' buffers");

/* --madvise=1 under 'madvise' (the runner passes it), so huge unless never */
WHOLE_RULES(fork_rules, "huge_pct", WL_WANT_SETTING, "the forked buffer");

/* its frames one cache way apart must be physically contiguous: one huge page */
WHOLE_RULES(color_rules, "huge_pct", WL_WANT_HUGE, "the region");

static const struct wl_rule dd_rules[] = {
	/* the tmpfs file: its page size is the tmpfs mount's (huge=) and shmem_enabled's */
	{ "tmpfs-*", "tmpfs_huge_pct", WL_WANT_FIELD, "tmpfs_huge_want", NULL, NULL, "cov_note",
	  "the tmpfs file", 0 },
	/* /dev/null: the memory is dd's own buffer, in the dd process */
	{ "*", NULL, WL_WANT_UNMEASURED, NULL, NULL, NULL, "cov_note", "dd's buffer", 0 },
	RULES_END,
};

static const struct wl_rule kcompile_rules[] = {
	/* gcc and make do not madvise: huge pages under always only */
	{ "*", "huge_fault_pct", WL_WANT_ALWAYS, NULL, NULL, NULL, "cov_note",
	  "the build's faults that tried a huge page", 0 },
	RULES_END,
};

static const struct wl_rule exec_rules[] = {
	/* a command of the user's: like a build, assumed not to madvise, so huge pages under always
	 * only; a command that does madvise shows it as an invalid madvise cell */
	{ "*", "huge_fault_pct", WL_WANT_ALWAYS, NULL, NULL, NULL, "cov_note",
	  "the command's faults that tried a huge page", 0 },
	RULES_END,
};

static const struct wl_rule redis_rules[] = {
	/*
	 * redis-server (disable-thp no: the workload leaves THP as the cell sets it)
	 * and jemalloc do not madvise: huge pages under always only. jemalloc grows
	 * its heap by mappings a 6.1 kernel does not align to 2M, and a range
	 * straddling a mapping's end at fault time gets 4K pages that stay 4K once
	 * the mappings merge (until khugepaged): under always only part of the
	 * server's anonymous memory is on huge pages (doc/workloads.md has the
	 * shares measured), none under never; a huge cell needs 50%
	 */
	{ "*", "huge_pct", WL_WANT_ALWAYS, NULL, NULL, NULL, "cov_note", "the server's anonymous memory", 50 },
	{ NULL, NULL, WL_WANT_NONE, NULL, NULL, NULL, NULL, NULL, 0 },
};

static const struct wl_rule pgbench_rules[] = {
	/* shared_buffers is shared memory: shmem_enabled, not 'enabled', decides whether it is
	 * huge; the record says what the run's shmem_enabled asks for (always, within_size,
	 * force: 1) */
	{ "*", "shmem_pmd_pct", WL_WANT_FIELD, "shmem_huge_want", NULL, NULL, "cov_note",
	  "the shared buffers", 0 },
	{ NULL, NULL, WL_WANT_NONE, NULL, NULL, NULL, NULL, NULL, 0 },
};

/* the primary metrics: the figure each workload exists to measure */
/* refault_ns_per_4k: only with the re-fault step (the --balloon axis) */
static const char *const memset_primary[] = { "fault_ns_per_4k", "access_ns", "refault_ns_per_4k", NULL };
static const char *const tlb_primary[] = { "large_2m_access_ns", "walk_shared_4k_access_ns", NULL };
static const char *const hzp_primary[] = { "memcmp_ns", "stride_ns_per_compare", NULL };
static const char *const clearorder_primary[] = { "ns_per_4k", NULL };
static const char *const color_primary[] = { "l1d_nways1_ns", "l2_nways1_ns", NULL };
static const char *const dd_primary[] = { "mib_s", NULL };
static const char *const kcompile_primary[] = { "wall_s", NULL };
static const char *const fork_primary[] = { "fork_us", NULL };
/* exec: the user's own number when a pattern reads one (one of the two, by its direction), and wall time */
static const char *const exec_primary[] = { "metric_higher", "metric_lower", "wall_s", NULL };
/* requests per second (higher is better), the GET tail (ms, lower), the BGSAVE fork (us, lower) */
static const char *const redis_primary[] = { "get_req_per_s", "set_req_per_s", "get_p99_ms", "bgsave_fork_us",
					     NULL };
/* transactions per second, higher is better (the latencies are their inverse at one client) */
static const char *const pgbench_primary[] = { "select_tx_per_s", "tpcb_tx_per_s", NULL };

/* what the application workloads need in the guest image (dash: initdb runs postgres through /bin/sh) */
static const char *const redis_packages[] = { "redis-server", "redis-tools", NULL };
static const char *const pgbench_packages[] = { "postgresql", "dash", NULL };

/* the split's phase metrics */
static const struct wl_split memset_split = {
	/* its plain cells time both phases; the host-cold series (--cold-reps) is its own */
	"", "fault_ns_per_4k", "access_ns", "cold", true,
};
static const struct wl_split tlb_split = {
	/* the 2M-asking region at the largest working set: huge where the cell's
	 * guest setting gives huge pages, 4K where it does not; no fault phase timed */
	"summary", NULL, "large_2m_access_ns", NULL, false,
};

/*
 * The applications have no separable fault phase: their first touches are
 * spread over a server's start, a load and the benchmark's first seconds,
 * mixed with request handling (redis's load_s is reported, not split). The
 * split reads one access-phase latency of their plain cells (no variant:
 * pgbench without --shmem-thp).
 */
static const struct wl_split redis_split = {
	/* GET on random keys of a dataset larger than the TLB reach */
	"", NULL, "get_avg_ms", NULL, false,
};
static const struct wl_split pgbench_split = {
	/* select-only: index and heap lookups through shared_buffers */
	"", NULL, "select_lat_ms", NULL, false,
};

static const struct wl_traits traits[] = {
	{ "memset", memset_rules, memset_primary, &memset_split, NULL },
	{ "tlb", tlb_rules, tlb_primary, &tlb_split, NULL },
	{ "hzp", hzp_rules, hzp_primary, NULL, NULL },
	{ "clearorder", clearorder_rules, clearorder_primary, NULL, NULL },
	{ "color", color_rules, color_primary, NULL, NULL },
	{ "dd", dd_rules, dd_primary, NULL, NULL },
	{ "kcompile", kcompile_rules, kcompile_primary, NULL, NULL },
	{ "fork", fork_rules, fork_primary, NULL, NULL },
	{ "exec", exec_rules, exec_primary, NULL, NULL },	/* its packages: --image-packages */
	{ "redis", redis_rules, redis_primary, &redis_split, redis_packages },
	{ "pgbench", pgbench_rules, pgbench_primary, &pgbench_split, pgbench_packages },
};

const char *const *wltraits_packages(const char *workload)
{
	const struct wl_traits *t = wltraits_find(workload);

	return t ? t->packages : NULL;
}

/*
 * Figures the host computes for a workload's cells and gates like the
 * workload's own: the recovery arms' (orchestrator/run/recovery.c, memset
 * cells of variant "recovery"): the time to 90% host coverage and the
 * guest's access time after the interval.
 */
static const struct {
	const char *workload, *metric;
} host_primary[] = {
	{ "memset", "recovery_t90_s" },
	{ "memset", "recovery_access_after_ns" },
};

bool wltraits_primary(const char *workload, const char *metric)
{
	const struct wl_traits *t = wltraits_find(workload);
	size_t i;

	for (i = 0; workload && metric && i < sizeof(host_primary) / sizeof(host_primary[0]); i++)
		if (!strcmp(host_primary[i].workload, workload) && !strcmp(host_primary[i].metric, metric))
			return true;

	for (i = 0; t && t->primary && t->primary[i]; i++)
		if (!strcmp(t->primary[i], metric))
			return true;
	return false;
}

/* a workload without traits: the record field memset has always carried */
static const struct wl_rule default_rule = {
	"*", "guest_huge_pct", WL_WANT_SETTING, NULL, NULL, NULL, NULL, "the buffer", 0
};

const struct wl_traits *wltraits_at(size_t i)
{
	return i < sizeof(traits) / sizeof(traits[0]) ? &traits[i] : NULL;
}

const struct wl_traits *wltraits_find(const char *workload)
{
	const struct wl_traits *t;
	size_t i;

	for (i = 0; workload && (t = wltraits_at(i)); i++)
		if (!strcmp(t->name, workload))
			return t;
	return NULL;
}

const struct wl_traits *wltraits_split_at(size_t i)
{
	const struct wl_traits *t;
	size_t k;

	for (k = 0; (t = wltraits_at(k)); k++)
		if (t->split && i-- == 0)
			return t;
	return NULL;
}

const struct wl_split *wltraits_split(const char *workload)
{
	const struct wl_traits *t = wltraits_find(workload);

	return t ? t->split : NULL;
}

const struct wl_traits *wltraits_sizing(void)
{
	const struct wl_traits *t;
	size_t i;

	for (i = 0; (t = wltraits_split_at(i)); i++)
		if (t->split->sizing)
			return t;
	return &traits[0];	/* unreachable: tests/lib/test_wltraits.c checks there is one */
}

bool wltraits_cold(const char *workload, const char *variant)
{
	const struct wl_split *s = wltraits_split(workload);

	return s && s->cold_variant && variant && !strcmp(variant, s->cold_variant);
}

const struct wl_rule *wltraits_rule(const char *workload, const char *variant)
{
	const struct wl_traits *t = wltraits_find(workload);
	const struct wl_rule *r;

	for (r = t ? t->rules : NULL; r && r->variant; r++)
		if (!fnmatch(r->variant, variant ? variant : "", 0))
			return r;
	return &default_rule;
}

void wltraits_describe(const struct wl_rule *r, char *buf, size_t len)
{
	const char *cov = r->cov_field ? r->cov_field : "-";

	switch (r->want) {
	case WL_WANT_NONE:
		if (r->effect_field)
			snprintf(buf, len, "%s=1 (%s in effect), else invalid with %s", r->effect_field,
				 r->effect_what ? r->effect_what : "treatment",
				 r->reason_field ? r->reason_field : "no reason");
		else
			snprintf(buf, len, "no evidence rule");
		return;
	case WL_WANT_SETTING:
		snprintf(buf, len, "%s: huge pages of %s unless THP is never, none under never", cov,
			 r->what);
		return;
	case WL_WANT_ALWAYS:
		if (r->need_pct > 0)
			snprintf(buf, len, "%s: huge pages of %s under THP always (at least %.0f%%), none under "
				 "madvise or never", cov, r->what, r->need_pct);
		else
			snprintf(buf, len, "%s: huge pages of %s under THP always, none under madvise or never",
				 cov, r->what);
		return;
	case WL_WANT_HUGE:
		snprintf(buf, len, "%s: huge pages of %s whatever the THP setting (MADV_HUGEPAGE)", cov,
			 r->what);
		return;
	case WL_WANT_BASE:
		snprintf(buf, len, "%s: no huge pages of %s whatever the THP setting (MADV_NOHUGEPAGE)",
			 cov, r->what);
		return;
	case WL_WANT_FIELD:
		snprintf(buf, len, "%s: huge pages of %s where %s=1, none where 0", cov, r->what,
			 r->want_field ? r->want_field : "?");
		return;
	case WL_WANT_UNMEASURED:
		snprintf(buf, len, "coverage of %s not measured (%s says why): never valid", r->what,
			 r->reason_field ? r->reason_field : "no field");
		return;
	case WL_WANT__COUNT:
		break;
	}
	snprintf(buf, len, "?");
}

static bool is_never(const char *setting)
{
	return setting && !strcmp(setting, "never");
}

static const char *note_or(const struct wl_evidence *ev, const char *def)
{
	return ev->note && ev->note[0] ? ev->note : def;
}

/* huge pages expected (1), none (0), or unknown (-1 with why set) */
static int expect_huge(const struct wl_rule *r, const struct wl_evidence *ev, char *why, size_t len)
{
	switch (r->want) {
	case WL_WANT_SETTING:
		return !is_never(ev->setting);
	case WL_WANT_ALWAYS:
		return ev->setting && !strcmp(ev->setting, "always");
	case WL_WANT_HUGE:
		return 1;
	case WL_WANT_BASE:
		return 0;
	case WL_WANT_FIELD:
		if (!ev->nwant) {
			snprintf(why, len, "no %s in the records: what the arm asked for is unknown",
				 r->want_field ? r->want_field : "want field");
			return -1;
		}
		if (ev->want_min != ev->want_max) {
			snprintf(why, len, "the repetitions disagree on %s (%g and %g)", r->want_field,
				 ev->want_min, ev->want_max);
			return -1;
		}
		return ev->want_min >= 0.5;
	case WL_WANT_NONE:
	case WL_WANT_UNMEASURED:
	case WL_WANT__COUNT:
		break;
	}
	snprintf(why, len, "no coverage rule '%s'", wl_want_name(r->want));
	return -1;
}

/* "guest THP is always" / "the arm asks for huge pages (MADV_HUGEPAGE)" / "tmpfs_huge_want=1" */
static void asked(const struct wl_rule *r, const struct wl_evidence *ev, int huge, char *buf, size_t len)
{
	if (r->want == WL_WANT_HUGE)
		snprintf(buf, len, "the arm asks for huge pages (MADV_HUGEPAGE, %s THP %s)", ev->layer,
			 ev->setting ? ev->setting : "?");
	else if (r->want == WL_WANT_BASE)
		snprintf(buf, len, "the arm asks for base pages (MADV_NOHUGEPAGE)");
	else if (r->want == WL_WANT_FIELD)
		snprintf(buf, len, "%s=%d", r->want_field, huge);
	else
		snprintf(buf, len, "%s THP is %s", ev->layer, ev->setting ? ev->setting : "?");
}

bool wltraits_judge(const struct wl_rule *r, const struct wl_evidence *ev, char *why, size_t len)
{
	const char *what = r->what ? r->what : "the memory measured";
	/* the rule's own need where the memory cannot be all huge */
	double need = r->need_pct > 0 && r->need_pct < ev->min_cov ? r->need_pct : ev->min_cov;
	char a[128];
	int huge;

	if (r->effect_field && ev->neffect && ev->effect_min < 0.5) {
		snprintf(why, len, "%s not in effect (%s=0): %s",
			 r->effect_what ? r->effect_what : "treatment", r->effect_field,
			 note_or(ev, "no reason given"));
		return false;
	}
	if (r->want == WL_WANT_UNMEASURED) {
		snprintf(why, len, "coverage of %s not measured: %s", what,
			 note_or(ev, "the workload cannot measure it"));
		return false;
	}
	if (r->want == WL_WANT_NONE) {
		if (r->effect_field && !ev->neffect) {
			snprintf(why, len, "no evidence of the %s: the records lack %s",
				 r->effect_what ? r->effect_what : "treatment", r->effect_field);
			return false;
		}
		return true;
	}
	if (!ev->ncov) {
		snprintf(why, len, "no coverage evidence: the records lack %s%s%s",
			 r->cov_field ? r->cov_field : "a coverage field", ev->note && ev->note[0] ? ": " : "",
			 note_or(ev, ""));
		return false;
	}
	huge = expect_huge(r, ev, why, len);
	if (huge < 0)
		return false;
	asked(r, ev, huge, a, sizeof(a));
	if (huge && ev->cov_min < need) {
		snprintf(why, len, "%s but only %.1f%% of %s is on %s huge pages (need %.0f%%)%s%s", a,
			 ev->cov_min, what, ev->layer, need, ev->note && ev->note[0] ? ": " : "",
			 note_or(ev, ""));
		return false;
	}
	if (!huge && ev->cov_max > ev->off_max) {
		snprintf(why, len, "%s but %.1f%% of %s is on %s huge pages%s", a, ev->cov_max, what,
			 ev->layer,
			 r->want == WL_WANT_ALWAYS && !is_never(ev->setting) ?
				 " (it does not madvise: none expected)" : "");
		return false;
	}
	return true;
}
