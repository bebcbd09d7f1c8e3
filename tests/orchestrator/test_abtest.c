/*
 * tests for orchestrator/analysis/abtest.c: the in-run A/B comparison on
 * planted boots with known answers: a paired ratio whose round-to-round drift
 * cancels, an A/A run that differs nowhere, the Welch fallback when no round
 * has both arms, a split effect that changes between the arms, a metric kind
 * over its cells, Holm over a family, and a run without an A/B axis.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/abtest.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results.h"

/* a boot of arm "A"/"B" in a round; its index in results.guests */
static unsigned add_boot(struct results *r, const char *arm, unsigned round)
{
	struct guest_log *g = results_guest_add(r, NULL);

	assert_non_null(g);
	snprintf(g->arm, sizeof(g->arm), "%s", arm);
	g->round = round;
	return (unsigned)(g - r->guests);
}

/* a valid memset cell with host and guest levels */
static struct cell *memset_cell(struct results *r, const char *host, const char *guest)
{
	struct cell_key k = { "guest", host, "ondemand", guest, "memset", NULL, NULL, NULL };
	struct cell *c = results_cell_key(r, &k, NULL);

	assert_non_null(c);
	c->valid = true;
	return c;
}

/* samples of one metric in one boot: each value v times the factors */
static void add_samples(struct cell *c, const char *metric, unsigned boot, const double *v, size_t n)
{
	struct metric *m = cell_metric(c, metric, NULL);
	size_t i;

	assert_non_null(m);
	for (i = 0; i < n; i++)
		assert_int_equal(metric_add_boot(m, v[i], boot), 0);
}

static const struct ab_row *find_row(const struct abtest *ab, const char *what, const char *metric,
				     const char *label_part)
{
	size_t i;

	for (i = 0; i < ab->n; i++)
		if (!strcmp(ab->rows[i].what, what) && !strcmp(ab->rows[i].metric, metric) &&
		    strstr(ab->rows[i].label, label_part))
			return &ab->rows[i];
	fail_msg("no %s row for %s (%s)", what, metric, label_part);
	return NULL;
}

static void compute(struct results *r, struct abtest *ab)
{
	struct err e = ERR_INIT;

	snprintf(r->settings.emulator, sizeof(r->settings.emulator), "/qa,/qb");
	if (abtest_compute(r, ab, &e))
		fail_msg("abtest_compute: %s", e.msg);
}

/*
 * Per round a drift level L (1, 1.5, 0.7) multiplies both arms; B is 1.25
 * times A times exp(+0.01, -0.01, 0): the paired mean is ln 1.25 exactly, the
 * SD of the differences 0.01, so the interval is ln 1.25 +- t(2) 0.01/sqrt 3
 * whatever the drift (Welch over boots would be far wider).
 */
static void test_paired_ratio(void **state)
{
	static const double drift[] = { 1.0, 1.5, 0.7 }, dev[] = { 0.01, -0.01, 0.0 };
	struct results *r = calloc(1, sizeof(*r));
	struct abtest *ab = calloc(1, sizeof(*ab));
	const struct ab_row *row;
	double half = t975(2) * 0.01 / sqrt(3);
	unsigned rd;

	(void)state;
	results_init(r);
	for (rd = 0; rd < 3; rd++) {
		struct cell *c = memset_cell(r, "never", "never");
		/* ABBA: the order inside a round does not matter to the pairing */
		unsigned a = add_boot(r, rd % 2 ? "B" : "A", rd), b = add_boot(r, rd % 2 ? "A" : "B", rd);
		double va[2] = { 100 * drift[rd], 100 * drift[rd] }, vb[2];

		if (rd % 2) {
			unsigned t = a;

			a = b;
			b = t;
		}
		vb[0] = vb[1] = 125 * drift[rd] * exp(dev[rd]);
		add_samples(c, "access_ns", a, va, 2);
		add_samples(c, "access_ns", b, vb, 2);
	}
	compute(r, ab);
	row = find_row(ab, "metric", "access_ns", "never/never/memset");
	assert_true(row->tested);
	assert_string_equal(row->method, "paired");
	assert_int_equal(row->pairs, 3);
	assert_float_equal(row->ratio, 1.25, 1e-9);
	assert_float_equal(row->ratio_lo, 1.25 * exp(-half), 1e-9);
	assert_float_equal(row->ratio_hi, 1.25 * exp(half), 1e-9);
	assert_float_equal(row->df, 2, 1e-12);
	assert_true(row->differs);
	assert_int_equal(ab->metrics_tested, 1);
	assert_int_equal(ab->metrics_differ, 1);
	row = find_row(ab, "kind", "access_ns", "memset: 1 cell(s)");
	assert_float_equal(row->ratio, 1.25, 1e-9);	/* one cell: the kind is that cell */
	results_release(r);
	free(r);
	free(ab);
}

/* A/A: B's boots are A's with a symmetric wobble: ratio 1, the interval holds 1, nothing differs */
static void test_aa_same(void **state)
{
	static const double wob[] = { 0.02, -0.02, 0.01, -0.01 };
	struct results *r = calloc(1, sizeof(*r));
	struct abtest *ab = calloc(1, sizeof(*ab));
	const struct ab_row *row;
	unsigned rd;

	(void)state;
	results_init(r);
	for (rd = 0; rd < 4; rd++) {
		struct cell *c = memset_cell(r, "never", "never");
		unsigned a = add_boot(r, "A", rd), b = add_boot(r, "B", rd);
		double va[1] = { 50.0 + rd }, vb[1] = { (50.0 + rd) * exp(wob[rd]) };

		add_samples(c, "access_ns", a, va, 1);
		add_samples(c, "access_ns", b, vb, 1);
		add_samples(c, "fault_ns_per_4k", a, va, 1);
		add_samples(c, "fault_ns_per_4k", b, vb, 1);
	}
	compute(r, ab);
	row = find_row(ab, "metric", "access_ns", "never/never/memset");
	assert_true(row->tested);
	assert_float_equal(row->ratio, 1.0, 1e-12);
	assert_true(row->ratio_lo < 1 && row->ratio_hi > 1);
	assert_false(row->differs);
	assert_int_equal(ab->metrics_tested, 2);
	assert_int_equal(ab->metrics_differ, 0);
	results_release(r);
	free(r);
	free(ab);
}

/*
 * No round with both arms: Welch over boots. A's boot means ln 0 and 0.2,
 * B's 0.3 and 0.5: d = 0.3, var = 0.01 + 0.01, df = 2.
 */
static void test_welch_fallback(void **state)
{
	static const double la[] = { 0.0, 0.2 }, lb[] = { 0.3, 0.5 };
	struct results *r = calloc(1, sizeof(*r));
	struct abtest *ab = calloc(1, sizeof(*ab));
	struct cell *c;
	const struct ab_row *row;
	unsigned k;

	(void)state;
	results_init(r);
	c = memset_cell(r, "never", "never");
	for (k = 0; k < 2; k++) {
		double va[1] = { exp(la[k]) }, vb[1] = { exp(lb[k]) };

		add_samples(c, "access_ns", add_boot(r, "A", k), va, 1);
		add_samples(c, "access_ns", add_boot(r, "B", 2 + k), vb, 1);
	}
	compute(r, ab);
	row = find_row(ab, "metric", "access_ns", "never/never/memset");
	assert_true(row->tested);
	assert_string_equal(row->method, "welch");
	assert_int_equal(row->pairs, 0);
	assert_float_equal(row->log_ratio, 0.3, 1e-12);
	assert_float_equal(row->log_se, sqrt(0.02), 1e-12);
	assert_float_equal(row->df, 2, 1e-9);
	assert_float_equal(row->p, student_t_p2(0.3 / sqrt(0.02), 2), 1e-12);
	results_release(r);
	free(r);
	free(ab);
}

/*
 * Host TLB: under A host THP makes access 1.25x faster, under B 1/0.9x; per
 * round drift and a per-boot wobble that cancels nowhere in particular. The
 * effect rows give A's and B's % and the ratio of the speed-ups,
 * (1/0.9)/1.25 = 0.8889, with an interval around it; access_ns of each cell
 * itself: host always is 0.8 (A) and 0.9 (B) of never.
 */
static void test_effect_changes(void **state)
{
	static const double drift[] = { 1.0, 1.3, 0.8, 1.1 }, wob[] = { 0.004, -0.003, 0.002, -0.003 };
	static const char *const hosts[] = { "never", "always" };
	struct results *r = calloc(1, sizeof(*r));
	struct abtest *ab = calloc(1, sizeof(*ab));
	const struct ab_row *row;
	unsigned rd, h, arm;

	(void)state;
	results_init(r);
	snprintf(r->accel, sizeof(r->accel), "tcg");
	for (rd = 0; rd < 4; rd++)
		for (h = 0; h < 2; h++)
			for (arm = 0; arm < 2; arm++) {
				struct cell *c = memset_cell(r, hosts[h], "never");
				unsigned b = add_boot(r, arm ? "B" : "A", rd);
				double f = h ? (arm ? 0.9 : 0.8) : 1.0;
				double v[2] = { 100 * drift[rd] * f * exp(wob[(rd + h + arm) % 4]),
						100 * drift[rd] * f * exp(-wob[(rd + 2 * h + arm) % 4]) };

				add_samples(c, "access_ns", b, v, 2);
			}
	compute(r, ab);
	row = find_row(ab, "effect", "access_ns", "host tlb memset, host always");
	assert_true(row->tested);
	assert_string_equal(row->method, "paired");
	assert_float_equal(row->a, 20.0, 0.5);
	assert_float_equal(row->b, 10.0, 0.5);
	assert_float_equal(row->ratio, (1 / 0.9) / 1.25, 0.01);
	assert_true(row->ratio_lo < (1 / 0.9) / 1.25 && row->ratio_hi > (1 / 0.9) / 1.25);
	assert_true(row->differs);
	row = find_row(ab, "metric", "access_ns", "always/never/memset");
	assert_float_equal(row->ratio, 0.9 / 0.8, 0.01);
	row = find_row(ab, "metric", "access_ns", "never/never/memset");
	assert_float_equal(row->ratio, 1.0, 0.01);
	assert_false(row->differs);
	/* Holm over the two cell rows: the smaller p doubled, the larger kept (never below it) */
	{
		const struct ab_row *x = find_row(ab, "metric", "access_ns", "always/never/memset"), *y = row;
		const struct ab_row *lo = x->p < y->p ? x : y, *hi = x->p < y->p ? y : x;

		assert_float_equal(lo->p_holm, fmin(1, 2 * lo->p), 1e-15);
		assert_float_equal(hi->p_holm, fmax(lo->p_holm, hi->p), 1e-15);
	}
	/* the kind: the geometric mean of its two cells' ratios, paired over the 4 rounds */
	row = find_row(ab, "kind", "access_ns", "memset: 2 cell(s)");
	assert_true(row->tested);
	assert_int_equal(row->pairs, 4);
	assert_float_equal(row->ratio, sqrt(0.9 / 0.8), 0.01);
	assert_true(row->differs);
	assert_int_equal(ab->kinds_tested, 1);
	results_release(r);
	free(r);
	free(ab);
}

/* no boot of arm B (one emulator, or none): nothing to compare, and attach leaves r->ab NULL */
static void test_no_axis(void **state)
{
	struct results *r = calloc(1, sizeof(*r));
	struct err e = ERR_INIT;
	struct cell *c;
	double v[2] = { 1, 2 };

	(void)state;
	results_init(r);
	c = memset_cell(r, "never", "never");
	add_samples(c, "access_ns", add_boot(r, "", 0), v, 2);
	assert_false(abtest_applies(r));
	assert_int_equal(abtest_attach(r, &e), 0);
	assert_null(r->ab);
	results_release(r);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paired_ratio),
		cmocka_unit_test(test_aa_same),
		cmocka_unit_test(test_welch_fallback),
		cmocka_unit_test(test_effect_changes),
		cmocka_unit_test(test_no_axis),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
