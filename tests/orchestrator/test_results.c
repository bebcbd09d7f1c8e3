/* tests for orchestrator/stats.c and orchestrator/results.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/results.h"
#include "orchestrator/stats.h"

static void test_summary(void **state)
{
	const double x[] = { 10, 12, 14, 16, 18 };
	struct summary s;

	summarize(x, 5, &s);
	assert_int_equal(s.n, 5);
	assert_true(fabs(s.mean - 14.0) < 1e-12);
	assert_true(fabs(s.sd - sqrt(10.0)) < 1e-12);
	/* t(4) = 2.7764451051978: half width = t * sqrt(10) / sqrt(5) */
	assert_true(fabs((s.ci95_high - s.mean) - 2.7764451051977944 * sqrt(2.0)) < 1e-9);
	assert_true(fabs(s.cv_pct - sqrt(10.0) / 14.0 * 100) < 1e-9);
	summarize(x, 1, &s);
	assert_true(isnan(s.sd) && isnan(s.ci95_low));
	assert_true(s.mean == 10);
	summarize(x, 0, &s);
	assert_true(isnan(s.mean));
	assert_true(isnan(t95(0)));
	assert_true(fabs(t95(1000) - 1.9623390808264085) < 1e-12);
}

/* Coverage of a simulated noisy measurement: the 95% CI should contain the
 * true mean in roughly 95% of trials. Deterministic PRNG, Box-Muller. */
static double rnd01(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static void test_ci_coverage(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int hits = 0, trials = 2000, t, i;

	for (t = 0; t < trials; t++) {
		double x[5];
		struct summary s;

		for (i = 0; i < 5; i++) {
			double u1 = rnd01(&seed), u2 = rnd01(&seed);

			x[i] = 100.0 + 7.0 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		}
		summarize(x, 5, &s);
		if (s.ci95_low <= 100.0 && 100.0 <= s.ci95_high)
			hits++;
	}
	/* 95% +- 3 sigma of a binomial(2000, .95): [92.6%, 97.4%] */
	assert_in_range(hits, 1852, 1948);
}

struct vcase {
	const char *name, *host, *guest;
	double host_pct, guest_pct;
	int reps_ok;
	bool valid;
	const char *why;
};

static void test_validation(void **state)
{
	static const struct vcase cases[] = {
		{ "on/on ok", "always", "always", 97, 99, 3, true, NULL },
		{ "off/off ok", "never", "never", 0, 0, 3, true, NULL },
		{ "host never with huge", "never", "never", 40, 0, 3, false, "host THP is never but" },
		{ "host always low", "always", "never", 20, 0, 3, false, "host THP is always but only" },
		{ "guest never with huge", "always", "never", 97, 50, 3, false, "guest THP is never but" },
		{ "guest always low", "never", "always", 0, 10, 3, false, "guest THP is always but only" },
		{ "no reps", "never", "never", 0, 0, 0, false, "no successful repetition" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vcase *v = &cases[i];
		struct results r;
		struct cell *c;
		int k;

		results_init(&r);
		c = results_cell(&r, "guest", v->host, v->guest, "memset", NULL);
		assert_non_null(c);
		for (k = 0; k < v->reps_ok; k++) {
			metric_add(&c->host_cov, v->host_pct);
			metric_add(&c->guest_cov, v->guest_pct);
			metric_add(cell_metric(c, "access_ns", NULL), 200 + k);
			c->reps_ok++;
		}
		results_finish(&r, 90.0);
		if (c->valid != v->valid)
			fail_msg("case '%s': valid=%d (%s)", v->name, c->valid, c->invalid_reason);
		if (!v->valid && !strstr(c->invalid_reason, v->why))
			fail_msg("case '%s': reason '%s' lacks '%s'", v->name, c->invalid_reason, v->why);
		results_release(&r);
	}
}

static void test_json(void **state)
{
	char dir[] = "/tmp/thpeval-test-results-XXXXXX", path[256];
	struct results r;
	struct cell *c;
	json_object *o, *cells, *cell, *m, *v;
	struct err e = ERR_INIT;

	assert_non_null(mkdtemp(dir));
	results_init(&r);
	snprintf(r.accel, sizeof(r.accel), "tcg");
	thp_settings_put(&r.thp_before, "enabled", "madvise", NULL);
	c = results_cell(&r, "guest", "always", "always", "memset", NULL);
	metric_add(cell_metric(c, "access_ns", NULL), 150.0);
	metric_add(cell_metric(c, "access_ns", NULL), 170.0);
	metric_add(cell_metric(c, "only_one", NULL), 1.0);
	metric_add(&c->host_cov, 99);
	metric_add(&c->guest_cov, 98);
	c->reps_ok = 2;
	results_finish(&r, 90);
	snprintf(path, sizeof(path), "%s/results.json", dir);
	assert_int_equal(results_write_json(&r, path, &e), 0);
	o = json_object_from_file(path);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "schema_version", &v));
	assert_int_equal(json_object_get_int(v), RESULTS_SCHEMA_VERSION);
	assert_true(json_object_object_get_ex(o, "accel", &v));
	assert_string_equal(json_object_get_string(v), "tcg");
	assert_true(json_object_object_get_ex(o, "host", &v));
	assert_true(json_object_object_get_ex(v, "thp_before", &v));
	assert_true(json_object_object_get_ex(v, "enabled", &v));
	assert_string_equal(json_object_get_string(v), "madvise");
	assert_true(json_object_object_get_ex(o, "cells", &cells));
	assert_int_equal(json_object_array_length(cells), 1);
	cell = json_object_array_get_idx(cells, 0);
	assert_true(json_object_object_get_ex(cell, "metrics", &m));
	assert_true(json_object_object_get_ex(m, "access_ns", &m));
	assert_true(json_object_object_get_ex(m, "mean", &v));
	assert_true(fabs(json_object_get_double(v) - 160.0) < 1e-9);
	assert_true(json_object_object_get_ex(m, "samples", &v));
	assert_int_equal(json_object_array_length(v), 2);
	/* one sample: the interval is undefined and written as null, never NaN */
	assert_true(json_object_object_get_ex(cell, "metrics", &m));
	assert_true(json_object_object_get_ex(m, "only_one", &m));
	assert_true(json_object_object_get_ex(m, "ci95_low", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(cell, "coverage", &v));
	assert_true(json_object_object_get_ex(v, "host_huge_pct", &v));
	assert_true(fabs(json_object_get_double(v) - 99) < 1e-9);
	assert_true(json_object_object_get_ex(cell, "valid", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);
	unlink(path);
	rmdir(dir);
	results_release(&r);
}

static void test_atomic_write(void **state)
{
	char dir[] = "/tmp/thpeval-test-atomic-XXXXXX", path[256], buf[16] = { 0 };
	struct err e = ERR_INIT;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	assert_int_equal(write_file_atomic(path, "first", 5, 0644, &e), 0);
	/* a failing write (directory not writable, as for a full or read-only disk)
	 * keeps the earlier file intact and leaves no temporary behind */
	if (geteuid() != 0) {
		chmod(dir, 0500);
		assert_int_not_equal(write_file_atomic(path, "second", 6, 0644, &e), 0);
		assert_non_null(strstr(e.msg, "cannot create"));
		chmod(dir, 0700);
	}
	snprintf(path, sizeof(path), "%s/missing-dir/out.json", dir);
	err_clear(&e);
	assert_int_not_equal(write_file_atomic(path, "x", 1, 0644, &e), 0);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 5);
	fclose(f);
	assert_string_equal(buf, "first");
	unlink(path);
	assert_int_equal(rmdir(dir), 0);	/* no temporary left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_ci_coverage),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_atomic_write),
	};

	return cmocka_run_group_tests_name("orchestrator/results", tests, NULL, NULL);
}
