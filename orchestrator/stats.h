/*
 * stats: descriptive statistics for repeated measurements: mean, sample
 * standard deviation, coefficient of variation and a Student-t 95%
 * confidence interval of the mean. Pure functions; non-finite inputs are
 * skipped by the caller, never produced here except as NAN for "undefined".
 */
#ifndef THPEVAL_ORCH_STATS_H
#define THPEVAL_ORCH_STATS_H

#include <stddef.h>

struct summary {
	size_t n;
	double mean;
	double sd;		/* NAN when n < 2 */
	double cv_pct;		/* sd / mean * 100, NAN when undefined */
	double ci95_low;	/* NAN when n < 2 */
	double ci95_high;
	double min, max;
};

/* two-sided 95% Student-t quantile for df degrees of freedom (df >= 1) */
double t95(size_t df);
void summarize(const double *x, size_t n, struct summary *out);

#endif
