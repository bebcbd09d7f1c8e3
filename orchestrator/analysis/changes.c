#include "orchestrator/analysis/changes.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* |Welch t| of y[lo..k-1] against y[k..hi-1]; 0 where a side has no spread */
static double split_t(const double *y, size_t lo, size_t k, size_t hi)
{
	double m1 = 0, m2 = 0, v1 = 0, v2 = 0, se;
	size_t i, n1 = k - lo, n2 = hi - k;

	for (i = lo; i < k; i++)
		m1 += y[i];
	for (i = k; i < hi; i++)
		m2 += y[i];
	m1 /= (double)n1;
	m2 /= (double)n2;
	for (i = lo; i < k; i++)
		v1 += (y[i] - m1) * (y[i] - m1);
	for (i = k; i < hi; i++)
		v2 += (y[i] - m2) * (y[i] - m2);
	v1 /= (double)(n1 - 1);
	v2 /= (double)(n2 - 1);
	se = sqrt(v1 / (double)n1 + v2 / (double)n2);
	if (!(se > 0))
		return m1 == m2 ? 0 : INFINITY;
	return fabs(m2 - m1) / se;
}

/* the best split of y[lo..hi-1] (each side CHANGES_MIN_SEGMENT or more) and its |t| */
static size_t best_split(const double *y, size_t lo, size_t hi, double *tmax)
{
	size_t k, best = 0;

	*tmax = -1;
	for (k = lo + CHANGES_MIN_SEGMENT; k + CHANGES_MIN_SEGMENT <= hi; k++) {
		double t = split_t(y, lo, k, hi);

		if (t > *tmax) {
			*tmax = t;
			best = k;
		}
	}
	return best;
}

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* the share of permutations of the segment whose best split is as extreme */
static double perm_p(const double *y, size_t lo, size_t hi, double t0)
{
	size_t n = hi - lo, i, r, hits = 0;
	uint64_t seed = 0x5eedull + n * 1000003ull + lo;
	double *w = malloc(n * sizeof(*w)), t;

	if (!w)
		return 1;
	for (r = 0; r < CHANGES_PERMUTATIONS; r++) {
		memcpy(w, y + lo, n * sizeof(*w));
		for (i = n - 1; i > 0; i--) {
			size_t j = (size_t)(next(&seed) % (i + 1));
			double x = w[i];

			w[i] = w[j];
			w[j] = x;
		}
		best_split(w, 0, n, &t);
		hits += t >= t0;
	}
	free(w);
	return (double)(hits + 1) / (CHANGES_PERMUTATIONS + 1);
}

static void segment(const double *y, size_t lo, size_t hi, struct change_point *out, size_t max, size_t *nout)
{
	double t, m1 = 0, m2 = 0, p;
	size_t k, i;

	if (hi - lo < 2 * CHANGES_MIN_SEGMENT || *nout >= max)
		return;
	k = best_split(y, lo, hi, &t);
	if (!k || !(t > 0))
		return;
	p = perm_p(y, lo, hi, t);
	if (p >= CHANGES_ALPHA)
		return;
	segment(y, lo, k, out, max, nout);
	if (*nout < max) {
		for (i = lo; i < k; i++)
			m1 += y[i];
		for (i = k; i < hi; i++)
			m2 += y[i];
		out[*nout].at = k;
		out[*nout].change_pct = expm1(m2 / (double)(hi - k) - m1 / (double)(k - lo)) * 100.0;
		out[*nout].p = p;
		(*nout)++;
	}
	segment(y, k, hi, out, max, nout);
}

void changes_find(const double *y, size_t n, struct change_point *out, size_t max, size_t *nout)
{
	*nout = 0;
	segment(y, 0, n, out, max, nout);
}
