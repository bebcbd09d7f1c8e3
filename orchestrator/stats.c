#include "orchestrator/stats.h"

#include <math.h>

double t95(size_t df)
{
	static const double tab[] = {
		NAN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};

	if (df == 0)
		return NAN;
	if (df < sizeof(tab) / sizeof(tab[0]))
		return tab[df];
	if (df <= 40)
		return 2.021;
	if (df <= 60)
		return 2.000;
	if (df <= 120)
		return 1.980;
	return 1.960;
}

void summarize(const double *x, size_t n, struct summary *out)
{
	double sum = 0, ss = 0, half;
	size_t i;

	out->n = n;
	out->mean = out->sd = out->cv_pct = out->ci95_low = out->ci95_high = NAN;
	out->min = out->max = NAN;
	if (n == 0)
		return;
	out->min = out->max = x[0];
	for (i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
	out->mean = sum / (double)n;
	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	out->sd = sqrt(ss / (double)(n - 1));
	if (out->mean != 0)
		out->cv_pct = out->sd / fabs(out->mean) * 100.0;
	half = t95(n - 1) * out->sd / sqrt((double)n);
	out->ci95_low = out->mean - half;
	out->ci95_high = out->mean + half;
}
