/*
 * tests for lib/wltraits.c: which rule a workload/variant gets, and the
 * validity rule itself as a table (coverage per THP setting, arms that ask
 * for huge or base pages whatever the setting, a rule read from a record
 * field, effect fields with their reason, unmeasured coverage), and the
 * split's phase metrics per workload (tests/guest/test_workload.c checks
 * them against the fields the guest program declares).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/wltraits.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct rule_case {
	const char *workload, *variant;
	const char *cov_field;	/* NULL: none */
	enum wl_want want;
	const char *effect_field;
};

static void test_rules(void **state)
{
	static const struct rule_case cases[] = {
		{ "memset", NULL, "guest_huge_pct", WL_WANT_SETTING, NULL },
		{ "memset", "cold", "guest_huge_pct", WL_WANT_SETTING, NULL },
		{ "tlb", "base", "huge_pct", WL_WANT_BASE, NULL },
		{ "tlb", "ws4096_4k", "huge_pct", WL_WANT_BASE, NULL },
		{ "tlb", "ws4096_2m", "huge_pct", WL_WANT_HUGE, NULL },
		{ "tlb", "summary", "huge_pct", WL_WANT_HUGE, NULL },
		{ "hzp", "zp1", NULL, WL_WANT_NONE, "zero_page_in_effect" },
		{ "hzp", "zp0", "huge_pct", WL_WANT_SETTING, NULL },
		{ "hzp", "zpna", "huge_pct", WL_WANT_SETTING, NULL },
		{ "clearorder", "rev-seq", "huge_pct", WL_WANT_SETTING, NULL },
		{ "color", NULL, "huge_pct", WL_WANT_HUGE, NULL },
		{ "dd", "tmpfs-2m", "tmpfs_huge_pct", WL_WANT_FIELD, NULL },
		{ "dd", "null-4k", NULL, WL_WANT_UNMEASURED, NULL },
		{ "kcompile", "", "huge_fault_pct", WL_WANT_ALWAYS, NULL },
		{ "redis", NULL, "huge_pct", WL_WANT_ALWAYS, NULL },
		{ "pgbench", NULL, "shmem_pmd_pct", WL_WANT_FIELD, NULL },
		{ "pgbench", "shmem-always", "shmem_pmd_pct", WL_WANT_FIELD, NULL },
		/* a workload without traits: what memset has always carried */
		{ "newcomer", NULL, "guest_huge_pct", WL_WANT_SETTING, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		const struct rule_case *c = &cases[i];
		const struct wl_rule *r = wltraits_rule(c->workload, c->variant);

		assert_non_null(r);
		if (r->want != c->want || (c->cov_field ? !r->cov_field || strcmp(r->cov_field, c->cov_field) :
					   r->cov_field != NULL) ||
		    (c->effect_field ? !r->effect_field || strcmp(r->effect_field, c->effect_field) :
				       r->effect_field != NULL))
			fail_msg("%s/%s: %s on %s, effect %s", c->workload, c->variant ? c->variant : "-",
				 wl_want_name(r->want), r->cov_field ? r->cov_field : "-",
				 r->effect_field ? r->effect_field : "-");
	}
	assert_null(wltraits_find("newcomer"));
	assert_string_equal(wl_want_name(WL_WANT_UNMEASURED), "unmeasured");
	assert_string_equal(wl_want_name(WL_WANT__COUNT), "?");
}

/* every rule list ends with a catch-all, and what a rule names exists */
static void test_tables(void **state)
{
	const struct wl_traits *t;
	const struct wl_rule *r;
	char text[256];
	size_t i;

	(void)state;
	for (i = 0; (t = wltraits_at(i)); i++) {
		assert_ptr_equal(wltraits_find(t->name), t);
		for (r = t->rules; r->variant; r++) {
			if (r->want == WL_WANT_FIELD)
				assert_non_null(r->want_field);
			if (r->want == WL_WANT_UNMEASURED)
				assert_non_null(r->reason_field);
			if (r->want != WL_WANT_NONE && r->want != WL_WANT_UNMEASURED)
				assert_non_null(r->cov_field);
			if (r->want == WL_WANT_NONE)
				assert_non_null(r->effect_field);
			assert_non_null(r->what);
			wltraits_describe(r, text, sizeof(text));
			assert_null(strchr(text, '?'));
		}
		assert_true(r > t->rules);
		assert_string_equal(r[-1].variant, "*");
	}
	assert_true(i > 0);	/* one traits entry per guest workload: tests/guest/test_workload.c */
}

struct judge_case {
	const char *name;
	const char *workload, *variant;
	const char *layer, *setting;
	int ncov;
	double cov_min, cov_max;
	int nwant;
	double want_min, want_max;
	int neffect;
	double effect_min;
	const char *note;
	bool valid;
	const char *why;	/* a part of the reason */
};

#define COV(n, lo, hi) n, lo, hi
#define NOWANT 0, NAN, NAN
#define WANT(v) 1, v, v
#define NOEFF 0, NAN
#define EFF(v) 1, v

static const struct judge_case judge_cases[] = {
	/* coverage that follows the setting (memset, clearorder, hzp zp0) */
	{ "memset always, huge", "memset", NULL, "guest", "always", COV(3, 97, 99), NOWANT, NOEFF, NULL,
	  true, NULL },
	{ "memset madvise, huge", "memset", NULL, "guest", "madvise", COV(3, 95, 99), NOWANT, NOEFF, NULL,
	  true, NULL },
	{ "memset always, low", "memset", NULL, "guest", "always", COV(3, 10, 99), NOWANT, NOEFF, NULL,
	  false, "guest THP is always but only 10.0% of the buffer is on guest huge pages (need 90%)" },
	{ "memset never, none", "memset", NULL, "host", "never", COV(3, 0, 0.5), NOWANT, NOEFF, NULL,
	  true, NULL },
	{ "memset never, huge", "memset", NULL, "host", "never", COV(3, 0, 40), NOWANT, NOEFF, NULL,
	  false, "host THP is never but 40.0% of the buffer is on host huge pages" },
	{ "memset without evidence", "memset", NULL, "guest", "always", COV(0, NAN, NAN), NOWANT, NOEFF,
	  NULL, false, "no coverage evidence: the records lack guest_huge_pct" },
	{ "clearorder never, none", "clearorder", "seq-seq", "guest", "never", COV(1, 0, 0), NOWANT,
	  NOEFF, NULL, true, NULL },
	/* arms that ask for a page size whatever the setting (color, tlb) */
	{ "color never: no huge page", "color", NULL, "host", "never", COV(1, 0, 0), NOWANT, NOEFF, NULL,
	  false, "the arm asks for huge pages (MADV_HUGEPAGE, host THP never) but only 0.0% of the "
		 "region is on host huge pages (need 90%)" },
	{ "color madvise: huge", "color", NULL, "guest", "madvise", COV(1, 100, 100), NOWANT, NOEFF,
	  NULL, true, NULL },
	{ "tlb 2m point under never", "tlb", "ws16384_2m", "guest", "never", COV(1, 0, 0), NOWANT, NOEFF,
	  NULL, false, "the arm asks for huge pages" },
	{ "tlb 4k point under always, base", "tlb", "ws16384_4k", "guest", "always", COV(1, 0, 0), NOWANT,
	  NOEFF, NULL, true, NULL },
	{ "tlb 4k point got huge pages", "tlb", "ws16_4k", "guest", "always", COV(1, 0, 50), NOWANT, NOEFF,
	  NULL, false, "the arm asks for base pages (MADV_NOHUGEPAGE) but 50.0% of the 4K-backed region" },
	{ "tlb summary, huge", "tlb", "summary", "host", "always", COV(2, 99, 100), NOWANT, NOEFF, NULL,
	  true, NULL },
	/* hzp: the zero page arm's effect field */
	{ "hzp zp1 in effect", "hzp", "zp1", "guest", "always", COV(0, NAN, NAN), NOWANT, EFF(1), NULL,
	  true, NULL },
	{ "hzp zp1 not in effect", "hzp", "zp1", "host", "madvise", COV(0, NAN, NAN), NOWANT, EFF(0),
	  "reads allocated Rss 1G of 1G", false,
	  "huge zero page not in effect (zero_page_in_effect=0): reads allocated Rss 1G of 1G" },
	{ "hzp zp1 once not in effect", "hzp", "zp1", "guest", "always", COV(0, NAN, NAN), NOWANT, EFF(0),
	  NULL, false, "(zero_page_in_effect=0): no reason given" },
	{ "hzp zp1 without the field", "hzp", "zp1", "guest", "always", COV(0, NAN, NAN), NOWANT, NOEFF,
	  NULL, false, "no evidence of the huge zero page: the records lack zero_page_in_effect" },
	{ "hzp zp0 real huge pages", "hzp", "zp0", "guest", "always", COV(1, 100, 100), NOWANT, NOEFF,
	  NULL, true, NULL },
	{ "hzp zp0 small zero page under never", "hzp", "zp0", "guest", "never", COV(1, 0, 0), NOWANT,
	  NOEFF, NULL, true, NULL },
	/* dd: the tmpfs file as its mount asks; dd's own buffer unmeasured */
	{ "dd tmpfs asks none, none", "dd", "tmpfs-4k", "guest", "always", COV(1, 0, 0), WANT(0), NOEFF,
	  NULL, true, NULL },
	{ "dd tmpfs asks huge, none", "dd", "tmpfs-2m", "guest", "never", COV(1, 0, 0), WANT(1), NOEFF,
	  NULL, false, "tmpfs_huge_want=1 but only 0.0% of the tmpfs file is on guest huge pages" },
	{ "dd tmpfs asks none, huge", "dd", "tmpfs-2m", "host", "never", COV(1, 0, 100), WANT(0), NOEFF,
	  NULL, false, "tmpfs_huge_want=0 but 100.0% of the tmpfs file" },
	{ "dd tmpfs without want", "dd", "tmpfs-2m", "host", "never", COV(1, 0, 0), NOWANT, NOEFF, NULL,
	  false, "no tmpfs_huge_want in the records" },
	{ "dd tmpfs reps disagree", "dd", "tmpfs-2m", "host", "never", COV(2, 0, 0), 2, 0, 1, NOEFF, NULL,
	  false, "the repetitions disagree on tmpfs_huge_want" },
	{ "dd null: unmeasured", "dd", "null-4k", "guest", "always", COV(0, NAN, NAN), NOWANT, NOEFF,
	  "dd's own buffer is in the dd process", false,
	  "coverage of dd's buffer not measured: dd's own buffer is in the dd process" },
	/* kcompile: the compilers do not madvise, so huge pages under always only */
	{ "kcompile always, huge", "kcompile", NULL, "guest", "always", COV(1, 99, 99), NOWANT, NOEFF, NULL,
	  true, NULL },
	{ "kcompile madvise, none", "kcompile", NULL, "guest", "madvise", COV(1, 0, 0), NOWANT, NOEFF,
	  "no page fault of the build tried a huge page", true, NULL },
	{ "kcompile madvise, some", "kcompile", NULL, "host", "madvise", COV(1, 30, 30), NOWANT, NOEFF,
	  NULL, false, "host THP is madvise but 30.0% of the build's faults that tried a huge page is on "
		       "host huge pages (it does not madvise: none expected)" },
	{ "kcompile always, no fault tried", "kcompile", NULL, "guest", "always", COV(1, 0, 0), NOWANT,
	  NOEFF, "no page fault of the build tried a huge page", false,
	  "(need 90%): no page fault of the build tried a huge page" },
	{ "kcompile no counters", "kcompile", NULL, "guest", "always", COV(0, NAN, NAN), NOWANT, NOEFF,
	  "no thp_fault_alloc and thp_fault_fallback in /proc/vmstat", false,
	  "the records lack huge_fault_pct: no thp_fault_alloc" },
	/* redis: always only, its own need (50%) below --min-coverage: jemalloc keeps 4K parts */
	{ "redis always, 72%", "redis", NULL, "guest", "always", COV(3, 71.9, 75.2), NOWANT, NOEFF, NULL, true,
	  NULL },
	{ "redis always, 40%", "redis", NULL, "guest", "always", COV(1, 40, 40), NOWANT, NOEFF, NULL, false,
	  "guest THP is always but only 40.0% of the server's anonymous memory is on guest huge pages (need 50%)" },
	{ "redis never, none", "redis", NULL, "guest", "never", COV(1, 0, 0), NOWANT, NOEFF, NULL, true, NULL },
	{ "redis madvise: it does not madvise", "redis", NULL, "guest", "madvise", COV(1, 20, 20), NOWANT, NOEFF,
	  NULL, false, "(it does not madvise: none expected)" },
	/* pgbench: shared buffers as shmem_enabled asks */
	{ "pgbench shmem always, huge", "pgbench", "shmem-always", "guest", "never", COV(2, 100, 100), WANT(1),
	  NOEFF, NULL, true, NULL },
	{ "pgbench shmem never, none", "pgbench", NULL, "guest", "always", COV(2, 0, 0), WANT(0), NOEFF, NULL,
	  true, NULL },
	{ "pgbench shmem asks huge, none", "pgbench", "shmem-within_size", "guest", "always", COV(1, 0, 0), WANT(1),
	  NOEFF, NULL, false, "shmem_huge_want=1 but only 0.0% of the shared buffers" },
};

static void test_judge(void **state)
{
	const struct judge_case *c = *state;
	const struct wl_rule *r = wltraits_rule(c->workload, c->variant);
	struct wl_evidence ev = {
		.layer = c->layer, .setting = c->setting,
		.ncov = (size_t)c->ncov, .cov_min = c->cov_min, .cov_max = c->cov_max,
		.nwant = (size_t)c->nwant, .want_min = c->want_min, .want_max = c->want_max,
		.neffect = (size_t)c->neffect, .effect_min = c->effect_min,
		.note = c->note, .min_cov = 90.0, .off_max = 1.0,
	};
	char why[256] = "";
	bool valid = wltraits_judge(r, &ev, why, sizeof(why));

	if (valid != c->valid)
		fail_msg("valid=%d, want %d (%s)", valid, c->valid, why);
	if (!valid && !strstr(why, c->why))
		fail_msg("reason '%s' lacks '%s'", why, c->why);
}

/* the applications name their image packages; the microbenchmarks and unknown names none */
static void test_packages(void **state)
{
	const char *const *p;

	(void)state;
	p = wltraits_packages("redis");
	assert_non_null(p);
	assert_string_equal(p[0], "redis-server");
	assert_string_equal(p[1], "redis-tools");
	assert_null(p[2]);
	p = wltraits_packages("pgbench");
	assert_non_null(p);
	assert_string_equal(p[0], "postgresql");
	assert_null(wltraits_packages("memset"));
	assert_null(wltraits_packages("newcomer"));
}

/* every workload names its primary metrics for the gate; unknown names have none */
static void test_primary(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; wltraits_at(i); i++) {
		const struct wl_traits *t = wltraits_at(i);

		if (!t->primary || !t->primary[0])
			fail_msg("%s names no primary metric", t->name);
		assert_true(wltraits_primary(t->name, t->primary[0]));
	}
	assert_true(wltraits_primary("memset", "fault_ns_per_4k"));
	assert_true(wltraits_primary("memset", "access_ns"));
	assert_false(wltraits_primary("memset", "fault_elapsed_ns"));
	/* the recovery arms' figures, computed by the host for memset's recovery cells */
	assert_true(wltraits_primary("memset", "recovery_t90_s"));
	assert_true(wltraits_primary("memset", "recovery_access_after_ns"));
	assert_false(wltraits_primary("memset", "recovery_t50_s"));
	assert_false(wltraits_primary("tlb", "recovery_t90_s"));
	assert_true(wltraits_primary("kcompile", "wall_s"));
	assert_false(wltraits_primary("newcomer", "wall_s"));
	assert_true(wltraits_primary("redis", "get_p99_ms"));
	assert_true(wltraits_primary("pgbench", "tpcb_tx_per_s"));
}

/*
 * The split's traits per workload: the workloads without an entry have no
 * split. The names are the ones the guest workloads write: guest/memset.c
 * rec_add_f64 "fault_ns_per_4k" and "access_ns" on its plain records, the
 * runner's host-cold series labels its memset records variant=cold;
 * guest/tlb.c writes "large_2m_access_ns" on its variant=summary record and
 * times no fault phase.
 */
static const struct split_case {
	const char *workload;
	const char *variant, *fault_metric, *access_metric, *cold_variant;
	bool sizing;
} split_cases[] = {
	{ "memset", "", "fault_ns_per_4k", "access_ns", "cold", true },
	{ "tlb", "summary", NULL, "large_2m_access_ns", NULL, false },
	/* the applications: one access-phase latency of their plain cells, no fault phase */
	{ "redis", "", NULL, "get_avg_ms", NULL, false },
	{ "pgbench", "", NULL, "select_lat_ms", NULL, false },
};

static void assert_str_or_null(const char *what, const char *got, const char *want)
{
	if (!got != !want || (got && strcmp(got, want)))
		fail_msg("%s: '%s', want '%s'", what, got ? got : "(null)", want ? want : "(null)");
}

static void test_split(void **state)
{
	const struct wl_traits *t;
	size_t i, k, nsplit = 0, nsizing = 0;

	(void)state;
	for (i = 0; (t = wltraits_at(i)); i++) {
		const struct split_case *c = NULL;

		for (k = 0; k < N(split_cases); k++)
			if (!strcmp(split_cases[k].workload, t->name))
				c = &split_cases[k];
		assert_ptr_equal(wltraits_split(t->name), t->split);
		if (!c) {
			if (t->split)
				fail_msg("%s has a split the table lacks", t->name);
			continue;
		}
		if (!t->split)
			fail_msg("%s has no split", t->name);
		assert_str_or_null(c->workload, t->split->variant, c->variant);
		assert_str_or_null(c->workload, t->split->fault_metric, c->fault_metric);
		assert_str_or_null(c->workload, t->split->access_metric, c->access_metric);
		assert_str_or_null(c->workload, t->split->cold_variant, c->cold_variant);
		assert_int_equal(t->split->sizing, c->sizing);
		/* the iterator lists the splits in table order */
		assert_ptr_equal(wltraits_split_at(nsplit), t);
		nsplit++;
		nsizing += t->split->sizing;
	}
	assert_int_equal(nsplit, N(split_cases));
	assert_null(wltraits_split_at(nsplit));
	assert_null(wltraits_split("newcomer"));
	assert_null(wltraits_split(NULL));
	/* exactly one workload is the sizing summary's */
	assert_int_equal(nsizing, 1);
	assert_string_equal(wltraits_sizing()->name, "memset");
}

/* which cells are a host-cold series' */
static void test_cold(void **state)
{
	static const struct {
		const char *workload, *variant;
		bool cold;
	} cases[] = {
		{ "memset", "cold", true },
		{ "memset", "", false },
		{ "memset", NULL, false },
		{ "memset", "cold2", false },
		{ "tlb", "cold", false },	/* no host-cold series */
		{ "hzp", "cold", false },	/* no split at all */
		{ "newcomer", "cold", false },
		{ NULL, "cold", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++)
		if (wltraits_cold(cases[i].workload, cases[i].variant) != cases[i].cold)
			fail_msg("%s/%s: cold=%d, want %d", cases[i].workload ? cases[i].workload : "(null)",
				 cases[i].variant ? cases[i].variant : "(null)", !cases[i].cold, cases[i].cold);
}

int main(void)
{
	struct CMUnitTest tests[N(judge_cases) + 6];
	size_t i, n = 0;

	tests[n++] = (struct CMUnitTest){ "rule per workload and variant", test_rules, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "rule tables complete", test_tables, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "primary metrics for the gate", test_primary, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "image packages", test_packages, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "split phase metrics per workload", test_split, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "host-cold series cells", test_cold, NULL, NULL, NULL };
	for (i = 0; i < N(judge_cases); i++)
		tests[n++] = (struct CMUnitTest){ judge_cases[i].name, test_judge, NULL, NULL,
						  (void *)(uintptr_t)&judge_cases[i] };
	return _cmocka_run_group_tests("lib/wltraits", tests, n, NULL, NULL);
}
