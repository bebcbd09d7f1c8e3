/*
 * t_table: thpeval's Student-t quantiles over a grid, for the independent
 * check against scipy in t_reference.py. Test-only; prints one line per
 * grid point, "df p quantile cdf_at_quantile", in %.17g so each double
 * reads back exactly.
 */
#include <stdio.h>

#include "lib/stats.h"

static void line(double df, double p)
{
	double q = t_quantile(p, df);

	printf("%.17g %.17g %.17g %.17g\n", df, p, q, t_cdf(q, df));
}

int main(void)
{
	static const double ps[] = { 0.005, 0.6, 0.9, 0.95, 0.975, 0.995 };
	static const double real_df[] = { 0.5, 1.5, 2.7, 7.3, 33.3, 150.5, 1e4, 1e5, 1e6 };
	size_t i, j;
	int df;

	for (df = 1; df <= 200; df++)
		for (j = 0; j < sizeof(ps) / sizeof(ps[0]); j++)
			line(df, ps[j]);
	for (i = 0; i < sizeof(real_df) / sizeof(real_df[0]); i++)
		for (j = 0; j < sizeof(ps) / sizeof(ps[0]); j++)
			line(real_df[i], ps[j]);
	return 0;
}
