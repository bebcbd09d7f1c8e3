/*
 * stats: descriptive statistics of repeated measurements (mean, sample sd,
 * CV, Student-t 95% interval of the mean) and the Student-t distribution
 * itself (cdf and quantile for any real df > 0). Pure functions, libm only;
 * NAN means "undefined"; the accuracy of the distribution is below.
 */
#ifndef THPEVAL_ORCH_STATS_H
#define THPEVAL_ORCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Accuracy (relative; the cdf's on its smaller tail): against 40-digit
 * mpmath, quantiles within 1e-12 and tail probabilities within 5e-12 for
 * df 0.1 to 1e9 and p 1e-12 to 1 - 1e-6; against scipy.stats.t over df 0.5
 * to 1e6 (tests/stats/t_reference.py, held to 1e-6) the cdf is within 5e-13
 * and the quantile within 5e-9, which is scipy's own ppf tolerance. df =
 * INFINITY is the normal; a quantile beyond DBL_MAX (df < 1, tiny p) is
 * +-INFINITY.
 */

struct summary {
	size_t n;
	double mean;
	double sd;		/* NAN when n < 2 */
	double cv_pct;		/* sd / mean * 100, NAN when undefined */
	double ci95_low;	/* NAN when n < 2 */
	double ci95_high;
	double min, max;
	size_t ci_n;		/* the units of the interval: n, or the blocks (boots) it is over */
	bool ci_blocks;		/* the interval is over block means (summarize_blocked, 2+ blocks) */
	bool geo;		/* mean and interval are geometric (summarize_geo): exp of the log-scale
				 * mean and interval; else arithmetic */
	double arith_mean;	/* the arithmetic mean of the block means (of the samples with one block) */
};

/* P(T <= t) for Student's t with df degrees of freedom; NAN when t is NAN
 * or df is not > 0. A two-sided p-value is 2 * (1 - t_cdf(fabs(t), df)). */
double t_cdf(double t, double df);
/* the t with P(T <= t) = p; NAN unless 0 < p < 1 and df > 0 */
double t_quantile(double p, double df);
/* two-sided 95% quantile t_quantile(0.975, df) for real df; NAN unless df > 0 */
double t975(double df);
/* the same for an integer df; NAN for df 0 */
double t95(size_t df);
void summarize(const double *x, size_t n, struct summary *out);
/*
 * summarize, with the 95% CI over blocks where the samples came from 2 or more
 * (block[i] is sample i's block: a guest boot): the mean is then the mean of
 * the block means and the interval Student's t over them (df blocks - 1), so
 * the spread between boots is in it; sd, cv, min and max stay those of the
 * samples. With one block it is summarize's interval over the samples.
 */
void summarize_blocked(const double *x, const uint16_t *block, size_t n, struct summary *out);
/*
 * summarize_blocked on the log scale, the one kind of mean an effect is
 * compared with: mean = exp(mean over blocks of each block's mean log), the
 * interval exp(that +- t * se) over the block means (over the samples with
 * one block), geo set. With a sample not > 0 there is no log: the arithmetic
 * summary stays, geo false. arith_mean is the arithmetic one either way;
 * sd, cv, min and max are the samples'.
 */
void summarize_geo(const double *x, const uint16_t *block, size_t n, struct summary *out);

#endif
