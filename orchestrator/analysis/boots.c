#include "orchestrator/analysis/boots.h"

#include <errno.h>
#include <math.h>

const struct boot_mean *boots_find(const struct boot_mean *b, size_t n, unsigned boot)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i].boot == boot)
			return &b[i];
	return NULL;
}

int boots_group(const struct metric *m, struct boot_mean *out, size_t max, size_t *n)
{
	double ss[BOOTS_MAX];
	size_t i, k;

	*n = 0;
	if (max > BOOTS_MAX)
		max = BOOTS_MAX;
	for (i = 0; i < m->n; i++) {
		struct boot_mean *b = NULL;
		double y, d;

		for (k = 0; k < *n && !b; k++)
			if (out[k].boot == m->boot[i])
				b = &out[k];

		if (!(m->samples[i] > 0))
			return -EDOM;
		y = log(m->samples[i]);
		if (!b) {
			if (*n >= max)
				return -E2BIG;
			b = &out[(*n)++];
			b->boot = m->boot[i];
			b->n = 0;
			b->mean_log = 0;
			ss[b - out] = 0;
		}
		/* Welford: one pass, stable */
		b->n++;
		d = y - b->mean_log;
		b->mean_log += d / (double)b->n;
		ss[b - out] += d * (y - b->mean_log);
	}
	for (k = 0; k < *n; k++)
		out[k].var_log = out[k].n > 1 ? ss[k] / (double)(out[k].n - 1) : NAN;
	return 0;
}

static double cv_of_log_var(double v)
{
	return isfinite(v) ? sqrt(exp(v) - 1) * 100.0 : NAN;
}

int varcomp_compute(const struct metric *m, struct varcomp *vc)
{
	struct boot_mean b[BOOTS_MAX];
	double sw = 0, dfw = 0, mean = 0, sm = 0, inv_n = 0, within = NAN, between = NAN;
	size_t nb, k;
	int r;

	vc->boots = vc->samples = 0;
	vc->within_cv_pct = vc->between_cv_pct = NAN;
	r = boots_group(m, b, BOOTS_MAX, &nb);
	if (r)
		return r;
	vc->boots = nb;
	vc->samples = m->n;
	for (k = 0; k < nb; k++) {
		if (b[k].n > 1) {
			sw += b[k].var_log * (double)(b[k].n - 1);
			dfw += (double)(b[k].n - 1);
		}
		mean += b[k].mean_log;
		inv_n += 1.0 / (double)b[k].n;
	}
	if (dfw > 0)
		within = sw / dfw;
	if (nb >= 2) {
		mean /= (double)nb;
		for (k = 0; k < nb; k++)
			sm += (b[k].mean_log - mean) * (b[k].mean_log - mean);
		sm /= (double)(nb - 1);
		between = sm - (isfinite(within) ? within * inv_n / (double)nb : 0);
		if (between < 0)
			between = 0;
	}
	vc->within_cv_pct = cv_of_log_var(within);
	vc->between_cv_pct = cv_of_log_var(between);
	return 0;
}
