/* tests for orchestrator/analysis/compare.c and `thpeval compare` (cmd/compare.c) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/wltraits.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results.h"
#include "tests/orchestrator/sim.h"
#include "orchestrator/model/results_load.h"
#include "tests/orchestrator/fixture.h"

/* scale every sample of metric in the cells of workload, then recompute its summary */
static void scale_metric(struct results *r, const char *workload, const char *metric, double f)
{
	size_t i, k;

	for (i = 0; i < r->ncells; i++) {
		struct metric *m;

		if (strcmp(r->cells[i].workload, workload))
			continue;
		m = cell_metric(&r->cells[i], metric, NULL);
		assert_non_null(m);
		for (k = 0; k < m->n; k++)
			m->samples[k] *= f;
		summarize(m->samples, m->n, &m->s);
	}
}

/* run cmd_compare with stdout and stderr sent to /dev/null; returns its exit code */
static int run_compare(const char *a, const char *b, const char *extra)
{
	const char *args[] = { a, b, extra };

	return fixture_run_cmd(cmd_compare, "compare", args, extra ? 3 : 2, NULL);
}

/* ---- statistics ------------------------------------------------------------------ */

static void test_student_t_p2(void **state)
{
	assert_true(fabs(student_t_p2(2.0, 8) - 0.0805162) < 1e-6);	/* two-sided p of t(8) = 2 */
	assert_true(fabs(student_t_p2(-2.0, 8) - 0.0805162) < 1e-6);
	/* the t quantiles of stats.h come back as p = 0.05 */
	assert_true(fabs(student_t_p2(12.706, 1) - 0.05) < 1e-4);
	assert_true(fabs(student_t_p2(2.776, 4) - 0.05) < 1e-4);
	assert_true(fabs(student_t_p2(1.96, 1e6) - 0.05) < 1e-4);
	assert_true(student_t_p2(0, 3) == 1.0);
	assert_true(student_t_p2(INFINITY, 3) == 0);
	assert_true(isnan(student_t_p2(1, 0)));
}

struct dir_case {
	const char *metric, *host, *guest;
	enum metric_dir want;
};

static void test_direction_table(void **state)
{
	static const struct dir_case cases[] = {
		{ "access_ns", "always", "always", DIR_LOWER },
		{ "fault_ns_per_4k", "always", "always", DIR_LOWER },
		{ "fault_elapsed_ns", "never", "never", DIR_LOWER },
		{ "fault_user_us", "never", "never", DIR_LOWER },
		{ "boot_s", "never", "never", DIR_LOWER },
		{ "walk_cycles", "never", "never", DIR_LOWER },
		{ "fault_mib_s", "never", "never", DIR_HIGHER },
		{ "ops_per_s", "never", "never", DIR_HIGHER },
		{ "fault_minflt", "never", "never", DIR_LOWER },
		{ "rss_bytes", "never", "never", DIR_INFO },
		{ "anon_huge_bytes", "always", "always", DIR_INFO },
		{ "host_huge_pct", "always", "never", DIR_HIGHER },
		{ "host_huge_pct", "never", "always", DIR_LOWER },
		{ "guest_huge_pct", "never", "always", DIR_HIGHER },
		{ "guest_huge_pct", "always", "never", DIR_LOWER },
		{ "something_else", "never", "never", DIR_INFO },
		/* the applications' primary metrics and split latencies: units and direction in the names */
		{ "get_req_per_s", "never", "always", DIR_HIGHER },
		{ "get_p99_ms", "never", "always", DIR_LOWER },
		{ "get_avg_ms", "never", "always", DIR_LOWER },
		{ "bgsave_fork_us", "always", "always", DIR_LOWER },
		{ "select_tx_per_s", "always", "never", DIR_HIGHER },
		{ "select_lat_ms", "always", "never", DIR_LOWER },
	};
	struct results r;
	size_t i;

	results_init(&r);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cell *c = results_cell(&r, "guest", cases[i].host, cases[i].guest, "memset", NULL);
		enum metric_dir d;

		assert_non_null(c);
		d = metric_direction(cases[i].metric, c);
		if (d != cases[i].want)
			fail_msg("%s (host %s, guest %s): %s, want %s", cases[i].metric, cases[i].host,
				 cases[i].guest, metric_dir_name(d), metric_dir_name(cases[i].want));
	}
	results_release(&r);
}

/* the applications' primary metrics gate: each has a direction (the gate skips DIR_INFO) */
static void test_primary_directed(void **state)
{
	static const char *const apps[] = { "redis", "pgbench" };
	const struct wl_traits *t;
	struct results r;
	struct cell *c;
	size_t i, k;

	(void)state;
	results_init(&r);
	c = results_cell(&r, "guest", "always", "always", "memset", NULL);
	assert_non_null(c);
	for (i = 0; i < sizeof(apps) / sizeof(apps[0]); i++) {
		t = wltraits_find(apps[i]);
		assert_non_null(t);
		for (k = 0; t->primary[k]; k++)
			if (metric_direction(t->primary[k], c) == DIR_INFO)
				fail_msg("%s's primary metric %s has no direction", t->name, t->primary[k]);
	}
	results_release(&r);
}

/* ---- comparisons -------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double gauss(void)
{
	return sim_gauss(&rng);
}

/*
 * A synthetic run of one memset cell per host setting (host never and
 * always, guest always): boots x reps samples of fault_ns_per_4k, access_ns
 * and fault_elapsed_ns (not primary), each boot at its own level
 * exp(boot_sd N), each repetition exp(noise N); access scaled by f.
 */
static struct results *synth(int boots, int reps, double boot_sd, double noise, double f)
{
	static const char *const hosts[] = { "never", "always" };
	struct results *r = malloc(sizeof(*r));
	unsigned boot = 0;
	int h, b, i;

	assert_non_null(r);
	results_init(r);
	for (h = 0; h < 2; h++) {
		struct cell *c = results_cell(r, "guest", hosts[h], "always", "memset", NULL);

		assert_non_null(c);
		for (b = 0; b < boots; b++, boot++) {
			double level = exp(boot_sd * gauss());

			for (i = 0; i < reps; i++) {
				metric_add_boot(cell_metric(c, "fault_ns_per_4k", NULL), 5000 * level *
						exp(noise * gauss()), boot);
				metric_add_boot(cell_metric(c, "access_ns", NULL), 300 * f * level *
						exp(noise * gauss()), boot);
				metric_add_boot(cell_metric(c, "fault_elapsed_ns", NULL), 1e6 * f * level *
						exp(noise * gauss()), boot);
				metric_add_boot(&c->host_cov, h ? 99 : 0, boot);
				metric_add_boot(&c->guest_cov, 99, boot);
				c->reps_ok++;
			}
		}
	}
	results_finish(r, 90);
	return r;
}

static const struct compare_opts primary_5 = { 5.0, GATE_PRIMARY };

static void test_self_compare(void **state)
{
	struct results *r = fixture_results();
	struct comparison c;
	struct err e = ERR_INIT;
	size_t i;

	assert_int_equal(compare_results(r, r, &primary_5, &c, &e), 0);
	assert_int_equal(c.ncells_matched, 4);
	assert_int_equal(c.nregressions, 0);
	assert_false(comparison_failed(&c));
	assert_int_equal(c.ngated, 8);	/* memset's two primary metrics in 4 cells */
	for (i = 0; i < c.nrows; i++)
		assert_true(c.rows[i].verdict == CMP_OK || c.rows[i].verdict == CMP_INFO ||
			    c.rows[i].verdict == CMP_INCONCLUSIVE);
	comparison_release(&c);
	fixture_results_free(r);
}

/* a 20% worse access time with quiet boots: a regression on that metric alone, over boots */
static void test_worse_over_boots(void **state)
{
	struct results *base = synth(5, 3, 0.02, 0.01, 1.0), *cur = synth(5, 3, 0.02, 0.01, 1.2);
	const struct cmp_row *row;
	struct comparison c;
	struct err e = ERR_INIT;

	assert_int_equal(compare_results(base, cur, &primary_5, &c, &e), 0);
	row = comparison_find(&c, 0, "access_ns");
	assert_non_null(row);
	assert_int_equal(row->verdict, CMP_REGRESSION);
	assert_string_equal(row->unit, "boots");
	assert_true(row->change_pct > 15 && row->change_pct < 25);	/* 20% worse, one draw */
	assert_true(row->change_lo_pct < row->change_pct && row->change_pct < row->change_hi_pct);
	assert_true(row->p_holm < 0.05);
	assert_true(comparison_failed(&c));
	assert_int_equal(c.nregressions, 2);	/* both cells */
	assert_int_not_equal(comparison_find(&c, 0, "fault_ns_per_4k")->verdict, CMP_REGRESSION);
	/* fault_elapsed_ns is 20% worse too, but not a primary metric: shown, not gated */
	assert_int_equal(comparison_find(&c, 0, "fault_elapsed_ns")->verdict, CMP_INFO);
	comparison_release(&c);
	/* --gate=all gates it */
	{
		const struct compare_opts all = { 5.0, GATE_ALL };

		assert_int_equal(compare_results(base, cur, &all, &c, &e), 0);
		assert_int_equal(comparison_find(&c, 0, "fault_elapsed_ns")->verdict, CMP_REGRESSION);
		assert_true(c.ngated > 4);
		comparison_release(&c);
	}
	/* the same change in the good direction is "better", never a regression */
	assert_int_equal(compare_results(cur, base, &primary_5, &c, &e), 0);
	assert_int_equal(c.nregressions, 0);
	assert_int_equal(comparison_find(&c, 0, "access_ns")->verdict, CMP_BETTER);
	comparison_release(&c);
	/* a threshold above the change: no regression */
	{
		const struct compare_opts t25 = { 25.0, GATE_PRIMARY };

		assert_int_equal(compare_results(base, cur, &t25, &c, &e), 0);
		assert_int_equal(c.nregressions, 0);
		comparison_release(&c);
	}
	fixture_results_free(base);
	fixture_results_free(cur);
}

/*
 * 20% worse with boots that differ by 25%: the interval can neither exclude
 * nor confirm the threshold. Inconclusive, counted, never "ok".
 */
static void test_inconclusive(void **state)
{
	struct results *base = synth(3, 3, 0.25, 0.01, 1.0), *cur = synth(3, 3, 0.25, 0.01, 1.2);
	struct comparison c;
	struct err e = ERR_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(compare_results(base, cur, &primary_5, &c, &e), 0);
	assert_int_equal(comparison_find(&c, 0, "access_ns")->verdict, CMP_INCONCLUSIVE);
	assert_true(c.ninconclusive >= 1);
	assert_false(comparison_failed(&c));
	f = open_memstream(&buf, &len);
	compare_print(&c, base, cur, f);
	fclose(f);
	assert_non_null(strstr(buf, "inconclusive"));
	assert_null(strstr(buf, "no regression"));
	free(buf);
	comparison_release(&c);
	fixture_results_free(base);
	fixture_results_free(cur);
}

/*
 * The false-alarm rate of the gate: 1000 A/A comparisons (two runs of the
 * same model, no change) flag a regression in at most about 5% of them
 * (Holm keeps the family-wise rate at 5% over all gated metrics).
 */
static void test_aa_false_alarms(void **state)
{
	int trial, trials = 1000, flagged = 0, caught = 0;

	for (trial = 0; trial < trials; trial++) {
		struct results *a = synth(4, 3, 0.10, 0.03, 1.0), *b = synth(4, 3, 0.10, 0.03, 1.0);
		struct results *w = synth(4, 3, 0.02, 0.03, 1.5);
		struct comparison c;
		struct err e = ERR_INIT;

		assert_int_equal(compare_results(a, b, &primary_5, &c, &e), 0);
		flagged += comparison_failed(&c);
		comparison_release(&c);
		assert_int_equal(compare_results(a, w, &primary_5, &c, &e), 0);
		caught += comparison_failed(&c);
		comparison_release(&c);
		fixture_results_free(a);
		fixture_results_free(b);
		fixture_results_free(w);
	}
	printf("A/A: %d of %d comparisons flagged a regression (boot sd 10%%, 4 boots x 3 reps); "
	       "a 50%% slower copy caught in %d\n", flagged, trials, caught);
	assert_true(flagged <= trials * 6 / 100);
	assert_true(caught >= trials * 80 / 100);
}

static void test_untested_invalid_missing(void **state)
{
	struct results *base = fixture_results(), *cur = fixture_results();
	struct comparison c;
	struct err e = ERR_INIT;
	struct metric *m;

	/* one sample left: cannot be tested */
	m = cell_metric(&cur->cells[0], "access_ns", NULL);
	m->n = 1;
	m->samples[0] *= 2;
	summarize(m->samples, m->n, &m->s);
	/* a cell that is invalid now and 3 times slower: judged on its interval, a regression with the reason */
	cur->cells[1].valid = false;
	snprintf(cur->cells[1].invalid_reason, sizeof(cur->cells[1].invalid_reason), "coverage too low");
	m = cell_metric(&cur->cells[1], "access_ns", NULL);
	m->samples[0] *= 3;
	m->samples[1] *= 3;
	summarize(m->samples, m->n, &m->s);
	/* a cell only in the baseline */
	snprintf(cur->cells[3].workload, sizeof(cur->cells[3].workload), "other");
	assert_int_equal(compare_results(base, cur, &primary_5, &c, &e), 0);
	assert_int_equal(comparison_find(&c, 0, "access_ns")->verdict, CMP_UNTESTED);
	assert_int_equal(comparison_find(&c, 1, "access_ns")->verdict, CMP_REGRESSION);
	assert_true(comparison_find(&c, 1, "access_ns")->fails);
	assert_non_null(strstr(comparison_find(&c, 1, "access_ns")->why, "coverage too low"));
	assert_int_equal(comparison_find(&c, 3, "")->verdict, CMP_NEW);
	assert_int_equal(c.ncells_matched, 3);
	assert_int_equal(c.nregressions, 1);
	assert_true(comparison_failed(&c));
	assert_int_equal(c.nuntested, 1);
	assert_int_equal(c.ninvalid, 1);
	assert_int_equal(c.nbase_invalid, 0);
	comparison_release(&c);
	fixture_results_free(base);
	fixture_results_free(cur);
	base = fixture_results();
	cur = fixture_results();
	/* invalid in the current run, unchanged: judged on its interval, not failed for being invalid */
	cur->cells[1].valid = false;
	snprintf(cur->cells[1].invalid_reason, sizeof(cur->cells[1].invalid_reason), "coverage too low");
	/* invalid in the current run with one sample: no interval, judged by the ratio of the means
	 * (unchanged here: it passes, as a run compared with itself must) */
	m = cell_metric(&cur->cells[2], "access_ns", NULL);
	m->n = 1;
	summarize(m->samples, m->n, &m->s);
	cur->cells[2].valid = false;
	snprintf(cur->cells[2].invalid_reason, sizeof(cur->cells[2].invalid_reason), "no evidence");
	/* invalid in the baseline, 3 times slower now: untested, counted, never a regression hidden as ok */
	base->cells[0].valid = false;
	snprintf(base->cells[0].invalid_reason, sizeof(base->cells[0].invalid_reason), "host THP did not take");
	m = cell_metric(&cur->cells[0], "access_ns", NULL);
	m->samples[0] *= 3;
	m->samples[1] *= 3;
	summarize(m->samples, m->n, &m->s);
	assert_int_equal(compare_results(base, cur, &primary_5, &c, &e), 0);
	assert_int_not_equal(comparison_find(&c, 1, "access_ns")->verdict, CMP_INVALID);
	assert_false(comparison_find(&c, 1, "access_ns")->fails);
	assert_non_null(strstr(comparison_find(&c, 1, "access_ns")->why, "invalid in the current run"));
	assert_int_equal(comparison_find(&c, 2, "access_ns")->verdict, CMP_INVALID);
	assert_false(comparison_find(&c, 2, "access_ns")->fails);
	assert_non_null(strstr(comparison_find(&c, 2, "access_ns")->why, "no interval"));
	assert_int_equal(comparison_find(&c, 0, "access_ns")->verdict, CMP_UNTESTED);
	assert_non_null(strstr(comparison_find(&c, 0, "access_ns")->why, "untested: baseline invalid"));
	assert_int_equal(c.nbase_invalid, 1);
	assert_int_equal(c.ninvalid, 3);
	assert_true(c.nuntested >= 1);
	assert_int_equal(c.nregressions, 0);
	comparison_release(&c);
	/* nothing in common: an error, not a pass */
	snprintf(cur->cells[0].workload, sizeof(cur->cells[0].workload), "other0");
	snprintf(cur->cells[1].workload, sizeof(cur->cells[1].workload), "other1");
	snprintf(cur->cells[2].workload, sizeof(cur->cells[2].workload), "other2");
	snprintf(cur->cells[3].workload, sizeof(cur->cells[3].workload), "other");
	assert_int_equal(compare_results(base, cur, &primary_5, &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "nothing to compare"));
	fixture_results_free(base);
	fixture_results_free(cur);
}

static void test_print(void **state)
{
	struct results *base = fixture_results(), *cur = fixture_results();
	struct comparison c;
	struct err e = ERR_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	scale_metric(cur, "memset", "access_ns", 2.0);
	snprintf(cur->host.kernel, sizeof(cur->host.kernel), "6.19.0-new");
	assert_int_equal(compare_results(base, cur, &primary_5, &c, &e), 0);
	f = open_memstream(&buf, &len);
	compare_print(&c, base, cur, f);
	fclose(f);
	assert_non_null(strstr(buf, "changed since the baseline:\n  host kernel  6.18.44-fc-v782 -> 6.19.0-new"));
	assert_non_null(strstr(buf, "cell always/always/memset"));
	assert_non_null(strstr(buf, "+100.0% ["));
	assert_non_null(strstr(buf, "REGRESSION (reps)"));
	assert_non_null(strstr(buf, "Holm"));
	assert_non_null(strstr(buf, "8 gated metric(s)"));
	assert_non_null(strstr(buf, "FAIL"));
	free(buf);
	comparison_release(&c);
	fixture_results_free(base);
	fixture_results_free(cur);
}

/* ---- the command: exit codes ------------------------------------------------------------ */

static void test_cmd_exit_codes(void **state)
{
	char *dir = fixture_tmpdir("compare"), fixture[4096], worse[4200], better[4200], bogus[4200], text[4200];
	struct results *r = fixture_results();
	struct err e = ERR_INIT;
	FILE *f;

	fixture_path(fixture, sizeof(fixture), FIXTURE_2X2);
	snprintf(worse, sizeof(worse), "%s/worse.json", dir);
	snprintf(better, sizeof(better), "%s/better.json", dir);
	snprintf(bogus, sizeof(bogus), "%s/package.json", dir);
	snprintf(text, sizeof(text), "%s/notes.txt", dir);
	/* the worse copy: memset access_ns samples twice as slow, generated here (2 repetitions
	 * of one boot per cell: only a large change is beyond doubt over 8 gated metrics) */
	scale_metric(r, "memset", "access_ns", 2.0);
	if (results_write_json(r, worse, &e))
		fail_msg("%s", e.msg);
	scale_metric(r, "memset", "access_ns", 0.5 / 2.0);
	if (results_write_json(r, better, &e))
		fail_msg("%s", e.msg);
	f = fopen(bogus, "w");
	fputs("{\"name\": \"left-pad\", \"version\": \"1.3.0\"}\n", f);
	fclose(f);
	f = fopen(text, "w");
	fputs("not json at all\n", f);
	fclose(f);

	assert_int_equal(run_compare(fixture, fixture, NULL), 0);		/* itself */
	assert_int_equal(run_compare(fixture, worse, NULL), 1);			/* regression */
	assert_int_equal(run_compare(fixture, better, NULL), 0);		/* improvement */
	assert_int_equal(run_compare(fixture, worse, "--threshold=150"), 0);	/* within threshold */
	assert_int_equal(run_compare(fixture, worse, "--gate=all"), 1);
	assert_int_equal(run_compare(fixture, worse, "--gate=some"), 2);	/* bad usage */
	assert_int_equal(run_compare(fixture, bogus, NULL), 2);			/* not a result */
	assert_int_equal(run_compare(text, fixture, NULL), 2);			/* not JSON */
	assert_int_equal(run_compare(fixture, "/nonexistent/results.json", NULL), 2);
	assert_int_equal(run_compare(fixture, worse, "--threshold=abc"), 2);	/* bad usage */
	assert_int_equal(run_compare(fixture, worse, "extra-arg"), 2);
	assert_int_equal(run_compare(fixture, worse, "--help"), 0);
	fixture_results_free(r);
	fixture_rm_rf(dir);
	free(dir);
}

/*
 * Samples the gate cannot test, and invalid cells with one repetition: the
 * fixture's cell 1 (never/always/memset), access_ns (primary), edited in
 * both runs or in one; then the same two runs from files, by exit code.
 */
struct gate_case {
	const char *name;
	enum cmp_gate gate;
	const char *metric;
	bool one_rep;		/* both runs keep one sample of the metric */
	int invalid;		/* the cell invalid: 0 in neither run, 1 in the current one, 2 in both */
	double base0, cur0;	/* the first sample set to this in that run; NAN: kept */
	double cur_scale;	/* the current run's samples times this */
	bool fails;
	enum cmp_verdict verdict;
	const char *why;	/* in the row's reason; NULL: not checked */
	int exit_code;		/* thpeval compare BASE CUR on the runs written out */
};

static const struct gate_case gate_cases[] = {
	{ "a negative time in the current run fails", GATE_PRIMARY, "access_ns", false, 0, NAN, -5, 1, true,
	  CMP_UNTESTED, "a sample <= 0 in the current run", 2 /* refused at load */ },
	{ "a zero time in the current run fails", GATE_PRIMARY, "access_ns", false, 0, NAN, 0, 1, true,
	  CMP_UNTESTED, "a sample <= 0 in the current run", 1 },
	{ "a zero time in the baseline fails", GATE_PRIMARY, "access_ns", false, 0, 0, NAN, 1, true,
	  CMP_UNTESTED, "a sample <= 0 in the baseline run", 1 },
	{ "a zero time of a metric not gated does not", GATE_PRIMARY, "fault_elapsed_ns", false, 0, NAN, 0, 1,
	  false, CMP_INFO, NULL, 0 },
	{ "a negative count fails", GATE_ALL, "fault_minflt", false, 0, NAN, -1, 1, true, CMP_UNTESTED,
	  "a sample < 0 in the current run", 2 /* refused at load */ },
	{ "a zero count is a measurement", GATE_ALL, "fault_majflt", false, 0, 0, 0, 1, false, CMP_UNTESTED,
	  "fewer than 2 samples on a side, or a value <= 0", 0 },
	{ "a zero time not primary is a measurement", GATE_ALL, "fault_elapsed_ns", false, 0, 0, 0, 1, false,
	  CMP_UNTESTED, "fewer than 2 samples on a side, or a value <= 0", 0 },
	{ "a zero coverage is a measurement", GATE_ALL, "guest_huge_pct", false, 0, 0, 0, 1, false,
	  CMP_UNTESTED, "fewer than 2 samples on a side, or a value <= 0", 0 },
	{ "an invalid one-rep cell against itself passes", GATE_PRIMARY, "access_ns", true, 2, NAN, NAN, 1, false,
	  CMP_UNTESTED, "untested: baseline invalid", 0 },
	{ "an invalid one-rep cell twice as slow as itself is untested", GATE_PRIMARY, "access_ns", true, 2, NAN, NAN,
	  2, false, CMP_UNTESTED, "untested: baseline invalid", 0 },
	{ "a one-rep cell invalid now, unchanged, passes", GATE_PRIMARY, "access_ns", true, 1, NAN, NAN, 1, false,
	  CMP_INVALID, "cell invalid in the current run", 0 },
	{ "a one-rep cell invalid now, 2% slower, passes", GATE_PRIMARY, "access_ns", true, 1, NAN, NAN, 1.02, false,
	  CMP_INVALID, "cell invalid in the current run", 0 },
	{ "a one-rep cell invalid now, twice as slow, fails", GATE_PRIMARY, "access_ns", true, 1, NAN, NAN, 2, true,
	  CMP_INVALID, "worse beyond the threshold", 1 },
};

static void gate_edit(struct results *r, const struct gate_case *gc, double first, double scale, bool is_cur)
{
	struct cell *c = &r->cells[1];
	struct metric *m = !strcmp(gc->metric, "guest_huge_pct") ? &c->guest_cov : cell_metric(c, gc->metric, NULL);
	size_t k;

	assert_non_null(m);
	if (gc->one_rep)
		m->n = m->nall = 1;	/* one sample held, none left out */
	if (!isnan(first))
		m->samples[0] = first;
	for (k = 0; k < m->n; k++)
		m->samples[k] *= scale;
	summarize(m->samples, m->n, &m->s);
	if (gc->invalid == 2 || (gc->invalid == 1 && is_cur)) {
		c->valid = false;
		snprintf(c->invalid_reason, sizeof(c->invalid_reason), "coverage too low");
	}
}

static void test_gate_cases(void **state)
{
	char *dir = fixture_tmpdir("compare"), bpath[4200], cpath[4200];
	size_t i;

	snprintf(bpath, sizeof(bpath), "%s/base.json", dir);
	snprintf(cpath, sizeof(cpath), "%s/cur.json", dir);
	for (i = 0; i < sizeof(gate_cases) / sizeof(gate_cases[0]); i++) {
		const struct gate_case *gc = &gate_cases[i];
		const struct compare_opts o = { 5.0, gc->gate };
		struct results *base = fixture_results(), *cur = fixture_results();
		struct err e = ERR_INIT;
		const struct cmp_row *row;
		struct comparison c;
		int rc;

		gate_edit(base, gc, gc->base0, 1, false);
		gate_edit(cur, gc, gc->cur0, gc->cur_scale, true);
		assert_int_equal(compare_results(base, cur, &o, &c, &e), 0);
		row = comparison_find(&c, 1, gc->metric);
		if (!row)
			fail_msg("case '%s': no row", gc->name);
		if (row->fails != gc->fails || row->verdict != gc->verdict || comparison_failed(&c) != gc->fails)
			fail_msg("case '%s': fails %d verdict %s (%s)", gc->name, row->fails,
				 cmp_verdict_name(row->verdict), row->why);
		if (gc->why && !strstr(row->why, gc->why))
			fail_msg("case '%s': reason '%s' lacks '%s'", gc->name, row->why, gc->why);
		comparison_release(&c);
		if (results_write_json(base, bpath, &e) || results_write_json(cur, cpath, &e))
			fail_msg("case '%s': %s", gc->name, e.msg);
		rc = run_compare(bpath, cpath, gc->gate == GATE_ALL ? "--gate=all" : NULL);
		if (rc != gc->exit_code)
			fail_msg("case '%s': thpeval compare exit %d, want %d", gc->name, rc, gc->exit_code);
		fixture_results_free(base);
		fixture_results_free(cur);
	}
	fixture_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_student_t_p2),
		cmocka_unit_test(test_direction_table),
		cmocka_unit_test(test_primary_directed),
		cmocka_unit_test(test_self_compare),
		cmocka_unit_test(test_worse_over_boots),
		cmocka_unit_test(test_inconclusive),
		cmocka_unit_test(test_aa_false_alarms),
		cmocka_unit_test(test_untested_invalid_missing),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_cmd_exit_codes),
		cmocka_unit_test(test_gate_cases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
