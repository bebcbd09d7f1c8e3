/* tests for orchestrator/compare.c and `thpeval compare` (cmd_compare.c) */
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

#include "orchestrator/commands.h"
#include "orchestrator/compare.h"
#include "orchestrator/results.h"
#include "orchestrator/results_load.h"

#define FIXTURE "tests/orchestrator/fixtures/results-tcg-2x2.json"

static void fixture_path(char *buf, size_t len)
{
	const char *src = getenv("THPEVAL_SRCDIR");

	snprintf(buf, len, "%s%s%s", src ? src : "", src ? "/" : "", FIXTURE);
}

static struct results *load_fixture(void)
{
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	char path[4096];

	assert_non_null(r);
	fixture_path(path, sizeof(path));
	if (results_load(path, r, &e))
		fail_msg("%s (run from the repository root)", e.msg);
	return r;
}

static void free_results(struct results *r)
{
	results_release(r);
	free(r);
}

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
	char *argv[5];
	int argc = 0, out, err, null, rc, i;

	argv[argc++] = strdup("compare");
	argv[argc++] = strdup(a);
	argv[argc++] = strdup(b);
	if (extra)
		argv[argc++] = strdup(extra);
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	out = dup(1);
	err = dup(2);
	null = open("/dev/null", O_WRONLY);
	dup2(null, 1);
	dup2(null, 2);
	rc = cmd_compare(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	close(null);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	return rc;
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/thpeval-test-compare-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- statistics ------------------------------------------------------------------ */

static void test_welch(void **state)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 3, 4, 5, 6, 7 };
	const double c[] = { 10, 10, 10 }, d[] = { 12, 12, 12 };
	struct summary sa, sb, sc, sd;
	double t, df, p;

	summarize(a, 5, &sa);
	summarize(b, 5, &sb);
	assert_int_equal(welch_test(&sa, &sb, &t, &df, &p), 0);
	assert_true(fabs(t - 2.0) < 1e-12);
	assert_true(fabs(df - 8.0) < 1e-9);
	assert_true(fabs(p - 0.0805162) < 1e-6);	/* two-sided p of t(8) = 2 */
	/* the t quantiles of stats.h come back as p = 0.05 */
	assert_true(fabs(student_t_p2(12.706, 1) - 0.05) < 1e-4);
	assert_true(fabs(student_t_p2(2.776, 4) - 0.05) < 1e-4);
	assert_true(fabs(student_t_p2(1.96, 1e6) - 0.05) < 1e-4);
	assert_true(student_t_p2(0, 3) == 1.0);
	/* zero variance on both sides */
	summarize(c, 3, &sc);
	summarize(d, 3, &sd);
	assert_int_equal(welch_test(&sc, &sd, &t, &df, &p), 0);
	assert_true(p == 0);
	assert_int_equal(welch_test(&sc, &sc, &t, &df, &p), 0);
	assert_true(p == 1);
	/* fewer than 2 samples: no test */
	summarize(a, 1, &sa);
	assert_int_equal(welch_test(&sa, &sb, &t, &df, &p), -EDOM);
	assert_true(isnan(p));
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

/* ---- comparisons -------------------------------------------------------------------- */

static void test_self_compare(void **state)
{
	struct results *r = load_fixture();
	struct comparison c;
	struct err e = ERR_INIT;
	size_t i;

	assert_int_equal(compare_results(r, r, 5.0, &c, &e), 0);
	assert_int_equal(c.ncells_matched, 4);
	assert_int_equal(c.nregressions, 0);
	for (i = 0; i < c.nrows; i++)
		assert_true(c.rows[i].verdict == CMP_OK || c.rows[i].verdict == CMP_INFO);
	comparison_release(&c);
	free_results(r);
}

static void test_worse_copy(void **state)
{
	struct results *base = load_fixture(), *cur = load_fixture();
	struct comparison c;
	struct err e = ERR_INIT;
	size_t i, regressed = 0;

	scale_metric(cur, "memset", "access_ns", 1.2);
	assert_int_equal(compare_results(base, cur, 5.0, &c, &e), 0);
	for (i = 0; i < c.nrows; i++) {
		const struct cmp_row *row = &c.rows[i];

		if (row->verdict != CMP_REGRESSION)
			continue;
		assert_string_equal(row->metric, "access_ns");
		assert_true(fabs(row->change_pct - 20.0) < 1e-6);
		assert_true(row->p < 0.05);
		regressed++;
	}
	/* n = 2 per side: the two cells with tight samples are significant, the others noise */
	assert_int_equal(regressed, 2);
	assert_int_equal(c.nregressions, 2);
	assert_non_null(comparison_find(&c, 3, "access_ns"));
	assert_int_equal(comparison_find(&c, 3, "access_ns")->verdict, CMP_REGRESSION);
	assert_int_equal(comparison_find(&c, 2, "access_ns")->verdict, CMP_NOISE);
	comparison_release(&c);
	/* the same change in the good direction is "better", never a regression */
	assert_int_equal(compare_results(cur, base, 5.0, &c, &e), 0);
	assert_int_equal(c.nregressions, 0);
	assert_int_equal(comparison_find(&c, 3, "access_ns")->verdict, CMP_BETTER);
	comparison_release(&c);
	/* a threshold above the change: no regression */
	assert_int_equal(compare_results(base, cur, 25.0, &c, &e), 0);
	assert_int_equal(c.nregressions, 0);
	comparison_release(&c);
	free_results(base);
	free_results(cur);
}

static void test_untested_invalid_missing(void **state)
{
	struct results *base = load_fixture(), *cur = load_fixture();
	struct comparison c;
	struct err e = ERR_INIT;
	struct metric *m;

	/* one sample left: cannot be tested */
	m = cell_metric(&cur->cells[0], "access_ns", NULL);
	m->n = 1;
	m->samples[0] *= 2;
	summarize(m->samples, m->n, &m->s);
	/* an invalid cell is not gated */
	cur->cells[1].valid = false;
	m = cell_metric(&cur->cells[1], "access_ns", NULL);
	m->samples[0] *= 3;
	m->samples[1] *= 3;
	summarize(m->samples, m->n, &m->s);
	/* a cell only in the baseline */
	snprintf(cur->cells[3].workload, sizeof(cur->cells[3].workload), "other");
	assert_int_equal(compare_results(base, cur, 5.0, &c, &e), 0);
	assert_int_equal(comparison_find(&c, 0, "access_ns")->verdict, CMP_UNTESTED);
	assert_int_equal(comparison_find(&c, 1, "access_ns")->verdict, CMP_INVALID);
	assert_int_equal(comparison_find(&c, 3, "")->verdict, CMP_NEW);
	assert_int_equal(c.ncells_matched, 3);
	assert_int_equal(c.nregressions, 0);
	assert_int_equal(c.nuntested, 1);
	assert_int_equal(c.ninvalid, 1);
	comparison_release(&c);
	/* nothing in common: an error, not a pass */
	snprintf(cur->cells[0].workload, sizeof(cur->cells[0].workload), "other0");
	snprintf(cur->cells[1].workload, sizeof(cur->cells[1].workload), "other1");
	snprintf(cur->cells[2].workload, sizeof(cur->cells[2].workload), "other2");
	assert_int_equal(compare_results(base, cur, 5.0, &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "nothing to compare"));
	free_results(base);
	free_results(cur);
}

static void test_print(void **state)
{
	struct results *base = load_fixture(), *cur = load_fixture();
	struct comparison c;
	struct err e = ERR_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	scale_metric(cur, "memset", "access_ns", 1.2);
	snprintf(cur->host.kernel, sizeof(cur->host.kernel), "6.19.0-new");
	assert_int_equal(compare_results(base, cur, 5.0, &c, &e), 0);
	f = open_memstream(&buf, &len);
	compare_print(&c, base, cur, f);
	fclose(f);
	assert_non_null(strstr(buf, "changed since the baseline:\n  host kernel  6.18.44-fc-v782 -> 6.19.0-new"));
	assert_non_null(strstr(buf, "cell always/always/memset"));
	assert_non_null(strstr(buf, "access_ns              353.2 ±70.21           423.8 ±84.25             +20.0%   0.016  REGRESSION"));
	assert_non_null(strstr(buf, "2 regression(s) in 4 matched cell(s)"));
	assert_non_null(strstr(buf, "Welch t-test"));
	free(buf);
	comparison_release(&c);
	free_results(base);
	free_results(cur);
}

/* ---- the command: exit codes ------------------------------------------------------------ */

static void test_cmd_exit_codes(void **state)
{
	char *dir = tmpdir(), fixture[4096], worse[4200], better[4200], bogus[4200], text[4200];
	struct results *r = load_fixture();
	struct err e = ERR_INIT;
	FILE *f;

	fixture_path(fixture, sizeof(fixture));
	snprintf(worse, sizeof(worse), "%s/worse.json", dir);
	snprintf(better, sizeof(better), "%s/better.json", dir);
	snprintf(bogus, sizeof(bogus), "%s/package.json", dir);
	snprintf(text, sizeof(text), "%s/notes.txt", dir);
	/* the worse copy: memset access_ns samples 20% worse, generated here */
	scale_metric(r, "memset", "access_ns", 1.2);
	if (results_write_json(r, worse, &e))
		fail_msg("%s", e.msg);
	scale_metric(r, "memset", "access_ns", 0.8 / 1.2);
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
	assert_int_equal(run_compare(fixture, worse, "--threshold=25"), 0);	/* within threshold */
	assert_int_equal(run_compare(fixture, bogus, NULL), 2);			/* not a result */
	assert_int_equal(run_compare(text, fixture, NULL), 2);			/* not JSON */
	assert_int_equal(run_compare(fixture, "/nonexistent/results.json", NULL), 2);
	assert_int_equal(run_compare(fixture, worse, "--threshold=abc"), 2);	/* bad usage */
	assert_int_equal(run_compare(fixture, worse, "extra-arg"), 2);
	assert_int_equal(run_compare(fixture, worse, "--help"), 0);
	free_results(r);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_direction_table),
		cmocka_unit_test(test_self_compare),
		cmocka_unit_test(test_worse_copy),
		cmocka_unit_test(test_untested_invalid_missing),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_cmd_exit_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
