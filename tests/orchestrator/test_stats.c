/*
 * tests for the Student-t distribution in lib/stats.c: closed forms
 * (df 1, 2, 3), reference quantiles computed apart (mpmath, 40 digits), the
 * normal limit, monotonicity, symmetry, round trips, invalid inputs, and the
 * coverage of a Welch 95% interval that uses t975 of a real df. The scipy
 * comparison over a grid is tests/stats/t_reference.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "lib/array.h"
#include "lib/stats.h"
#include "tests/orchestrator/sim.h"

static const double probs[] = {
	1e-9, 0.001, 0.005, 0.025, 0.05, 0.1, 0.25, 0.4, 0.49, 0.5, 0.51, 0.6,
	0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 1 - 1e-9,
};

static const double dfs[] = {
	0.5, 0.9, 1, 1.5, 2, 2.7, 3, 4, 7.3, 10, 29, 30, 31, 33.3, 40, 60, 61,
	120, 121, 150.5, 1000, 1e4, 99999, 1e5, 1e6, 1e9, INFINITY,
};

static void assert_rel(const char *what, double got, double want, double tol)
{
	double err = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);

	if (!(err <= tol)) {
		print_message("%s: got %.17g, want %.17g (relative error %.3g > %.3g)\n",
			      what, got, want, err, tol);
		fail();
	}
}

/* P(T > t), t >= 0, for df 1 (Cauchy), 2 and 3 in elementary functions,
 * written without the cancellation of 1/2 - ... in the tail */
static double tail_closed(double t, int df)
{
	double s = sqrt(2 + t * t);

	switch (df) {
	case 1:
		return atan2(1, t) / M_PI;
	case 2:
		return 1 / ((s + t) * s);
	default:	/* still cancels as t grows: used up to 1e3 (1e-10) */
		return (atan2(sqrt(3), t) - sqrt(3) * t / (3 + t * t)) / M_PI;
	}
}

static void test_closed_forms(void **state)
{
	char what[96];
	size_t i;
	int df;

	for (i = 0; i < ARRAY_SIZE(probs); i++) {
		double p = probs[i];

		/* tan(pi (p - 1/2)), written as a cotangent: tan near its pole
		 * would lose 1e-16 / (pi p) of its own */
		snprintf(what, sizeof(what), "df 1 quantile p %g", p);
		assert_rel(what, t_quantile(p, 1),
			   p == 0.5 ? 0 : p < 0.5 ? -1 / tan(M_PI * p) : 1 / tan(M_PI * (1 - p)),
			   1e-10);
		snprintf(what, sizeof(what), "df 2 quantile p %g", p);
		assert_rel(what, t_quantile(p, 2), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-10);
	}
	for (df = 1; df <= 3; df++) {
		static const double ts[] = { -1e6, -1e3, -40, -3, -1, -0.2, 0, 1e-8, 0.5, 1, 2.5, 12.7, 1e3 };

		for (i = 0; i < ARRAY_SIZE(ts); i++) {
			double t = ts[i], want = tail_closed(fabs(t), df);

			if (df == 3 && fabs(t) > 1e3)
				continue;
			snprintf(what, sizeof(what), "df %d cdf at %g", df, t);
			/* the lower tail keeps its relative accuracy; above the
			 * median a double near 1 holds the cdf to an ulp or two */
			if (t > 0)
				assert_rel(what, t_cdf(t, df), 1 - want, 3e-16);
			else
				assert_rel(what, t_cdf(t, df), want, 1e-9);
		}
	}
}

struct qcase {
	const char *name;
	double p, df, want;	/* mpmath, 40 digits */
};

static const struct qcase qcases[] = {
	{ "t95(4), was 2.776", 0.975, 4, 2.7764451051977943578 },
	{ "t95(30), was 2.042", 0.975, 30, 2.04227245630123831 },
	{ "t95(1000), was 1.960", 0.975, 1000, 1.962339080826408485 },
	{ "real df 7.3", 0.975, 7.3, 2.345066736547703633 },
	{ "real df 33.3", 0.975, 33.3, 2.0338192241340531968 },
	{ "df 0.5, heavy tail", 0.975, 0.5, 164.55767348048853312 },
	{ "df infinite is the normal", 0.975, INFINITY, 1.9599639845400542355 },
	{ "df 1e15 is the normal", 0.975, 1e15, 1.9599639845400542355 },
};

static void test_reference_values(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(qcases); i++) {
		const struct qcase *c = &qcases[i];

		assert_rel(c->name, t_quantile(c->p, c->df), c->want, 1e-12);
		assert_rel(c->name, t975(c->df), c->want, 1e-12);
	}
	assert_rel("t95(4)", t95(4), qcases[0].want, 1e-12);
	assert_rel("t95(1000)", t95(1000), qcases[2].want, 1e-12);
	/* the old table stepped to 1.980 for df 61-120: anti-conservative */
	assert_true(t95(61) > 1.999 && t95(120) > 1.979 && t95(61) > t95(120));
}

static void test_monotone(void **state)
{
	char what[96];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(dfs); i++) {
		double prev = -INFINITY, prevc = 0;

		for (j = 0; j < ARRAY_SIZE(probs); j++) {
			double q = t_quantile(probs[j], dfs[i]);

			snprintf(what, sizeof(what), "df %g: quantile not increasing at p %g", dfs[i], probs[j]);
			if (!(q > prev)) {
				print_message("%s: %.17g after %.17g\n", what, q, prev);
				fail();
			}
			prev = q;
		}
		for (j = 0; j <= 200; j++) {
			double c = t_cdf(-50 + j * 0.5, dfs[i]);

			if (!(c >= prevc && c <= 1)) {
				print_message("df %g: cdf %.17g at %g after %.17g\n", dfs[i], c, -50 + j * 0.5, prevc);
				fail();
			}
			prevc = c;
		}
	}
	/* the upper quantile falls as df grows, over the whole real range */
	for (j = 0; j < 3; j++) {
		static const double ps[] = { 0.9, 0.975, 0.995 };
		double df, prev = INFINITY;

		for (df = 0.5; df < 2e6; df *= 1.07) {
			double q = t_quantile(ps[j], df);

			if (!(q < prev)) {
				print_message("p %g: quantile %.17g at df %g after %.17g\n", ps[j], q, df, prev);
				fail();
			}
			prev = q;
		}
	}
	/* no seam where the large-df expansion takes over */
	assert_rel("df 1e5 seam", t_quantile(0.975, 1e5 * (1 - 1e-12)), t_quantile(0.975, 1e5), 1e-12);
	assert_rel("df 1e5 seam cdf", 1 - t_cdf(2.5, 1e5 * (1 - 1e-12)), 1 - t_cdf(2.5, 1e5), 1e-11);
}

static void test_symmetry_round_trip(void **state)
{
	char what[96];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(dfs); i++) {
		for (j = 0; j < ARRAY_SIZE(probs); j++) {
			double p = probs[j], df = dfs[i], q = t_quantile(p, df), c = t_cdf(q, df);
			/* an upper p and its exact complement (1 - 1e-9 is not) */
			double pu = p > 0.5 ? p : 1 - p, pl = 1 - pu;

			snprintf(what, sizeof(what), "df %g p %g: symmetry", df, p);
			assert_rel(what, t_quantile(pl, df), -t_quantile(pu, df), 1e-13);
			assert_rel(what, t_cdf(-q, df), 1 - c, p > 0.5 ? 1e-9 : 1e-15);
			snprintf(what, sizeof(what), "df %g p %g: round trip", df, p);
			if (p > 0.5)
				assert_rel(what, 1 - c, 1 - p, 1e-10);
			else
				assert_rel(what, c, p, 1e-10);
		}
	}
	/* deep tails: the bracket and the steps in log t find them too */
	for (i = 0; i < ARRAY_SIZE(dfs); i++) {
		static const double deep[] = { 1e-15, 1e-30, 1e-100, 1e-300 };

		for (j = 0; j < ARRAY_SIZE(deep); j++) {
			double df = dfs[i], q = t_quantile(deep[j], df);

			snprintf(what, sizeof(what), "df %g p %g: deep round trip", df, deep[j]);
			if (isinf(q))	/* only where the quantile is past DBL_MAX */
				assert_true(q < 0 && t_cdf(-DBL_MAX, df) > deep[j]);
			else
				assert_rel(what, t_cdf(q, df), deep[j], 1e-10);
		}
	}
	assert_true(t_quantile(0.5, 3) == 0 && t_cdf(0, 0.7) == 0.5);
	assert_true(t_cdf(INFINITY, 3) == 1 && t_cdf(-INFINITY, 3) == 0);
	/* a quantile beyond DBL_MAX (df 0.1: P(T > 1e308) is about 1e-31) */
	assert_true(isinf(t_quantile(1e-40, 0.1)) && t_quantile(1e-40, 0.1) < 0);
}

static void test_invalid(void **state)
{
	static const double bad_p[] = { 0, 1, -0.1, 1.5, NAN, INFINITY, -INFINITY };
	static const double bad_df[] = { 0, -0.0, -1, -INFINITY, NAN };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_p); i++)
		assert_true(isnan(t_quantile(bad_p[i], 5)));
	for (i = 0; i < ARRAY_SIZE(bad_df); i++) {
		assert_true(isnan(t_quantile(0.975, bad_df[i])));
		assert_true(isnan(t_cdf(1.0, bad_df[i])));
		assert_true(isnan(t975(bad_df[i])));
	}
	assert_true(isnan(t_cdf(NAN, 5)));
	assert_true(isnan(t95(0)));
}

/*
 * Coverage: the 95% Welch interval of a log-ratio, with the Satterthwaite df
 * (real) and t975, holds the true ratio in at least 94% of 1000 trials of
 * two log-normal arms of 5, CV 10%. The normal's 1.96 in its place covers
 * about 91% at these df, so a quantile that ignores df fails here.
 */
/* log(mean ratio) b / a from log-values, Welch: estimate, df, half width */
static void welch_log_ratio(const double *a, size_t na, const double *b, size_t nb,
			    double *est, double *df, double *half)
{
	double ma = 0, mb = 0, va = 0, vb = 0;
	size_t i;

	for (i = 0; i < na; i++)
		ma += log(a[i]) / (double)na;
	for (i = 0; i < nb; i++)
		mb += log(b[i]) / (double)nb;
	for (i = 0; i < na; i++)
		va += (log(a[i]) - ma) * (log(a[i]) - ma) / (double)(na - 1) / (double)na;
	for (i = 0; i < nb; i++)
		vb += (log(b[i]) - mb) * (log(b[i]) - mb) / (double)(nb - 1) / (double)nb;
	*est = mb - ma;
	*df = (va + vb) * (va + vb) / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
	*half = t975(*df) * sqrt(va + vb);
}

static void test_welch_coverage(void **state)
{
	static const double ratios[] = { 0.5, 0.8, 1, 1.25, 2 };
	const double sigma = sqrt(log(1 + 0.10 * 0.10));	/* CV 10% */
	const int trials = 1000, n = 5;
	uint64_t seed = 20240601;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ratios); k++) {
		double truth = log(ratios[k]), dfsum = 0;
		int hits = 0, zhits = 0, t, i;

		for (t = 0; t < trials; t++) {
			double a[5], b[5], est, df, half, se;

			for (i = 0; i < n; i++) {
				a[i] = 100 * exp(sigma * sim_gauss(&seed));
				b[i] = 100 * ratios[k] * exp(sigma * sim_gauss(&seed));
			}
			welch_log_ratio(a, n, b, n, &est, &df, &half);
			se = half / t975(df);
			dfsum += df;
			if (est - half <= truth && truth <= est + half)
				hits++;
			if (fabs(est - truth) <= 1.959963984540054 * se)
				zhits++;
		}
		print_message("  ratio %-4g coverage %.1f%% (mean df %.2f; with 1.96: %.1f%%)\n",
			      ratios[k], 100.0 * hits / trials, dfsum / trials, 100.0 * zhits / trials);
		assert_true(hits >= 940);
		/* and not wider than it should be */
		assert_true(hits <= 985);
	}
}

/* summarize_blocked: the interval over block means, in a closed form */
static void test_blocked_closed_form(void **state)
{
	const double x[] = { 1, 3, 5, 7, 9, 11 };
	const uint16_t blk[] = { 4, 4, 7, 7, 2, 2 };
	const uint16_t one[] = { 3, 3, 3, 3, 3, 3 };
	struct summary s, plain;

	(void)state;
	summarize_blocked(x, blk, 6, &s);
	/* block means 2, 6, 10: mean 6, sd 4, half t(0.975, 2) 4 / sqrt(3) */
	assert_rel("blocked mean", s.mean, 6, 1e-15);
	assert_rel("blocked high", s.ci95_high, 6 + 4.302652729749464 * 4 / sqrt(3), 1e-12);
	assert_rel("blocked low", s.ci95_low, 6 - 4.302652729749464 * 4 / sqrt(3), 1e-12);
	assert_int_equal(s.ci_n, 3);
	assert_true(s.ci_blocks);
	summarize(x, 6, &plain);
	assert_rel("sd stays the samples'", s.sd, plain.sd, 1e-15);
	assert_true(s.min == 1 && s.max == 11 && s.n == 6);
	/* one block: the samples' interval */
	summarize_blocked(x, one, 6, &s);
	assert_false(s.ci_blocks);
	assert_int_equal(s.ci_n, 6);
	assert_rel("one block", s.ci95_high, plain.ci95_high, 1e-15);
	/* unbalanced: the mean of block means, not of samples */
	summarize_blocked(x, blk, 5, &s);	/* blocks 4: {1,3}, 7: {5,7}, 2: {9} */
	assert_rel("unbalanced", s.mean, (2 + 6 + 9) / 3.0, 1e-15);
}

/*
 * Boots that differ (between-boot CV 15%) more than repetitions inside a boot
 * (CV 5%): the interval over boot means covers the true mean at the nominal
 * rate; the one over pooled repetitions would not (it is printed, not asserted
 * on, as the reason for the rule).
 */
/*
 * The one kind of mean: geometric over block means, its interval on the log
 * scale; the arithmetic one kept beside it; a sample of 0 keeps arithmetic.
 */
struct geo_case {
	const char *name;
	double x[6];
	uint16_t block[6];
	size_t n;
	bool geo;
	double mean, arith, hi;	/* hi: NAN where no interval */
};

static void test_geo(void **state)
{
	/* boots {100, 100}, {400, 400}: block mean logs ln 100, ln 400 -> exp(mean) 200 */
	const double l1 = log(100), l4 = log(400), se = (l4 - l1) / 2;
	const struct geo_case cases[] = {
		{ "two boots", { 100, 100, 400, 400 }, { 0, 0, 1, 1 }, 4, true, 200, 250,
		  exp((l1 + l4) / 2 + 12.706204736174705 * se) },
		{ "one boot: over repetitions", { 100, 400 }, { 3, 3 }, 2, true, 200, 250,
		  exp((l1 + l4) / 2 + 12.706204736174705 * se) },
		{ "a zero: arithmetic", { 0, 2, 4, 6 }, { 0, 0, 1, 1 }, 4, false, 3, 3, NAN },
		{ "one sample", { 7 }, { 0 }, 1, true, 7, 7, NAN },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct geo_case *c = &cases[i];
		struct summary s;

		summarize_geo(c->x, c->block, c->n, &s);
		if (s.geo != c->geo || fabs(s.mean - c->mean) > 1e-9 || fabs(s.arith_mean - c->arith) > 1e-9)
			fail_msg("%s: geo %d mean %.6f arith %.6f", c->name, s.geo, s.mean, s.arith_mean);
		if (isnan(c->hi) ? c->geo && isfinite(s.ci95_high) : fabs(s.ci95_high - c->hi) > 1e-6 * c->hi)
			fail_msg("%s: ci95_high %.6f, want %.6f", c->name, s.ci95_high, c->hi);
		if (c->geo && isfinite(s.ci95_high))	/* symmetric on the log scale */
			assert_true(fabs(log(s.ci95_high / s.mean) - log(s.mean / s.ci95_low)) < 1e-9);
	}
}

static void test_blocked_coverage(void **state)
{
	const int trials = 1000, boots = 4, reps = 3;
	uint64_t seed = 20261201;
	int hits = 0, pooled = 0, t, b, r;

	(void)state;
	for (t = 0; t < trials; t++) {
		double x[12];
		uint16_t blk[12];
		struct summary s, p;

		for (b = 0; b < boots; b++) {
			double boot = 100 * (1 + 0.15 * sim_gauss(&seed));

			for (r = 0; r < reps; r++) {
				x[b * reps + r] = boot * (1 + 0.05 * sim_gauss(&seed));
				blk[b * reps + r] = (uint16_t)b;
			}
		}
		summarize_blocked(x, blk, 12, &s);
		summarize(x, 12, &p);
		hits += s.ci95_low <= 100 && 100 <= s.ci95_high;
		pooled += p.ci95_low <= 100 && 100 <= p.ci95_high;
	}
	print_message("  over boots: coverage %.1f%%; over pooled repetitions it would be %.1f%%\n",
		      100.0 * hits / trials, 100.0 * pooled / trials);
	assert_true(hits >= 935 && hits <= 975);
	assert_true(pooled < hits);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocked_closed_form),
		cmocka_unit_test(test_geo),
		cmocka_unit_test(test_blocked_coverage),
		cmocka_unit_test(test_closed_forms),
		cmocka_unit_test(test_reference_values),
		cmocka_unit_test(test_monotone),
		cmocka_unit_test(test_symmetry_round_trip),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_welch_coverage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
