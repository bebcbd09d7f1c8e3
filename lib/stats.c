#include "lib/stats.h"

#include <math.h>

/*
 * Student-t distribution. The upper tail is
 *	P(T > t) = I_x(df/2, 1/2) / 2,	x = df / (df + t^2),
 * with I the regularized incomplete beta function, computed by its continued
 * fraction (modified Lentz) on the side where it converges fast. The
 * fraction's first denominator loses about df * 1e-16 to cancellation near
 * its switch point, so from df = 1e5 on the tail is the normal tail at the
 * z that the Cornish-Fisher expansion maps to t (terms to 1/df^4; the first
 * term left out is about z^11 / df^5). The quantile is the root of
 * tail(t) = q, by Newton steps kept inside a bracket (bisection when a step
 * leaves it). Both work on the tail q = min(p, 1 - p), exact in double for
 * p >= 0.5, so p = 0.995 loses nothing to 1 - p, and near the median on
 * P(0 < T <= t) = 1/2 - q, computed directly, not as 1/2 - tail.
 */

#define CF_EPS 1e-16	/* converged: a step of 1 to the last bit (about 50 terms at most) */
#define CF_TINY 1e-300
#define CF_MAXIT 10000
#define T_LARGE_DF 1e5

/* ln Gamma(a + 1/2) - ln Gamma(a): the two lgamma values cancel for large a
 * (lgamma(5e5) is 6e6), so there the asymptotic series, whose next term is
 * 17/(14336 a^7) (under 2e-15 from a = 50) */
static double lgamma_half_ratio(double a)
{
	double r;

	if (a < 50)
		return lgamma(a + 0.5) - lgamma(a);
	r = 1.0 / a;
	return 0.5 * log(a) - r / 8 + r * r * r / 192 - r * r * r * r * r / 640;
}

/* one step of Lentz's method: the new c and d from the coefficient aa; the factor d * c */
static double cf_step(double aa, double *c, double *d)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < CF_TINY)
		*d = CF_TINY;
	*c = 1 + aa / *c;
	if (fabs(*c) < CF_TINY)
		*c = CF_TINY;
	*d = 1 / *d;
	return *d * *c;
}

/* continued fraction for I_x(a, b), y = 1 - x (Numerical Recipes' betacf,
 * Lentz); the first denominator 1 - (a + b) x / (a + 1) is also
 * (1 - b + (a + b) y) / (a + 1), free of cancellation when b <= 1 */
static double beta_cf(double a, double b, double x, double y)
{
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d, h, aa, del;
	int m;

	d = b <= 1 ? (1 - b + qab * y) / qap : 1 - qab * x / qap;
	if (fabs(d) < CF_TINY)
		d = CF_TINY;
	d = 1 / d;
	h = d;
	for (m = 1; m <= CF_MAXIT; m++) {
		int m2 = 2 * m;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		h *= cf_step(aa, &c, &d);
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		del = cf_step(aa, &c, &d);
		h *= del;
		if (fabs(del - 1) < CF_EPS || isnan(del))
			break;
	}
	return h;
}

/* Cornish-Fisher (Abramowitz-Stegun 26.7.5): the t quantile at normal
 * quantile z, and its derivative in z in *dt */
static double t_of_z(double z, double df, double *dt)
{
	double z2 = z * z, r = 1 / df;
	double g1 = (z2 + 1) * z / 4;
	double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
	double d1 = (3 * z2 + 1) / 4;
	double d2 = ((25 * z2 + 48) * z2 + 3) / 96;
	double d3 = (((21 * z2 + 95) * z2 + 51) * z2 - 15) / 384;
	double d4 = ((((711 * z2 + 5432) * z2 + 7410) * z2 - 5760) * z2 - 945) / 92160;

	*dt = 1 + r * (d1 + r * (d2 + r * (d3 + r * d4)));
	return z + r * (g1 + r * (g2 + r * (g3 + r * g4)));
}

/* the normal quantile z that t_of_z maps to t, t >= 0 */
static double z_of_t(double t, double df)
{
	double z = t, dt, step;
	int i;

	for (i = 0; i < 20; i++) {
		step = (t_of_z(z, df, &dt) - t) / dt;
		z -= step;
		if (fabs(step) <= 1e-16 * z)
			break;
	}
	return z;
}

/* P(T > t) in *tail and P(0 < T <= t) in *mid, for t >= 0 and df > 0: they
 * add up to 1/2, and whichever is the smaller is computed directly, so both
 * keep their relative accuracy (mid matters for quantiles near the median) */
static void t_split(double t, double df, double *tail, double *mid)
{
	double a = df / 2, b = 0.5, t2, x, y, lx, ly, lfront, front;

	*tail = 0.5;
	*mid = 0;
	if (t == 0)
		return;
	if (isinf(t)) {
		*tail = 0;
		*mid = 0.5;
		return;
	}
	t2 = t * t;
	/* the expansion holds while z^2 is small beside df; beyond that the
	 * tail is under 1e-200 and the fraction has no cancellation there */
	if (isinf(df) || (df >= T_LARGE_DF && t2 < df / 100)) {
		double z = isinf(df) ? t : z_of_t(t, df);

		*tail = 0.5 * erfc(z / M_SQRT2);
		*mid = 0.5 * erf(z / M_SQRT2);
		return;
	}
	if (t2 <= df) {
		double u = t2 / df;

		x = 1 / (1 + u);
		y = u / (1 + u);
		lx = -log1p(u);
		ly = log(u) - log1p(u);
	} else {
		/* t^2 may overflow, df / t^2 underflow: only their logs are safe */
		double r = df / t / t;

		x = r / (1 + r);
		y = 1 / (1 + r);
		lx = log(df) - 2 * log(t) - log1p(r);
		ly = -log1p(r);
	}
	/* ln(x^a y^b / B(a, b)), B(a, 1/2) = sqrt(pi) Gamma(a) / Gamma(a + 1/2) */
	lfront = a * lx + b * ly - (0.5 * log(M_PI) - lgamma_half_ratio(a));
	front = exp(lfront);
	if (x < (a + 1) / (a + b + 2)) {
		*tail = 0.5 * front * beta_cf(a, b, x, y) / a;
		*mid = 0.5 - *tail;
	} else {
		*mid = 0.5 * front * beta_cf(b, a, y, x) / b;
		*tail = 0.5 - *mid;
	}
}

/* log of the density at t >= 0, df > 0 (it only steers Newton: the root is
 * t_split's); t^2 may overflow where the density is still a double's log */
static double t_lpdf(double t, double df)
{
	double l1p;

	if (isinf(df))
		return -0.5 * t * t - 0.5 * log(2 * M_PI);
	if (t * t <= df)
		l1p = log1p(t * t / df);
	else
		l1p = 2 * log(t) - log(df) + log1p(df / t / t);
	return lgamma_half_ratio(df / 2) - 0.5 * log(df * M_PI) - (df + 1) / 2 * l1p;
}

double t_cdf(double t, double df)
{
	double tail, mid;

	if (isnan(t) || isnan(df) || !(df > 0))
		return NAN;
	t_split(fabs(t), df, &tail, &mid);
	if (t < 0)
		return tail;
	return tail < 0.25 ? 1 - tail : 0.5 + mid;
}

/* the t > 0 with P(T > t) = q, for 0 < q < 1/2 and m = 1/2 - q exact.
 * Near the median (q >= 1/4) it solves mid(t) = m by Newton; in the tails
 * it solves log tail(t) = log q by Newton in log t, exact in one step where
 * the tail is a power of t (small df) and well behaved where it is normal.
 * A step that leaves the bracket or is not half the one before the last
 * bisects (Numerical Recipes' rtsafe). */
static double t_upper_inv(double q, double m, double df)
{
	double lo = 0, hi, t, tail, mid, f, dx, dxold;
	int i;

	/* a starting point: the normal quantile (Abramowitz-Stegun 26.2.23,
	 * 4.5e-4) with the first Cornish-Fisher term for df; the bracket
	 * below makes a poor start cost steps, never the answer */
	{
		double w = sqrt(-2 * log(q));
		double z = w - (2.515517 + 0.802853 * w + 0.010328 * w * w) /
			       (1 + 1.432788 * w + 0.189269 * w * w + 0.001308 * w * w * w);

		t = isinf(df) ? z : z + (z * z * z + z) / (4 * df);
		if (!(t > 0))
			t = 1e-3;
	}
	/* bracket: tail(lo) > q >= tail(hi), by doubling or halving t */
	t_split(t, df, &tail, &mid);
	if (tail > q) {
		for (lo = t, hi = 2 * t;; lo = hi, hi *= 2) {
			if (isinf(hi))
				return INFINITY;	/* beyond DBL_MAX */
			t_split(hi, df, &tail, &mid);
			if (tail <= q)
				break;
		}
	} else {
		for (hi = t, lo = t / 2; lo > 0; hi = lo, lo /= 2) {
			t_split(lo, df, &tail, &mid);
			if (tail > q)
				break;
		}
	}
	t = lo > 0 ? sqrt(lo) * sqrt(hi) : hi / 2;
	dx = dxold = hi - lo;
	for (i = 0; i < 400; i++) {
		double lpdf = t_lpdf(t, df), next;

		t_split(t, df, &tail, &mid);
		f = q < 0.25 ? tail - q : m - mid;	/* decreasing in t */
		if (f == 0)
			return t;
		if (f > 0)
			lo = t;
		else
			hi = t;
		if (q < 0.25)
			next = t * exp(log(tail / q) * exp(log(tail) - log(t) - lpdf));
		else
			next = t + f / exp(lpdf);
		if (fabs(next - t) <= 1e-14 * t)	/* converged */
			return next;
		dxold = dx;
		if (next > lo && next < hi && fabs(next - t) <= dxold / 2) {
			dx = fabs(next - t);
			t = next;
		} else {
			/* bisect, by ratio while the bracket spans decades */
			t = lo > 0 && hi > 4 * lo ? sqrt(lo) * sqrt(hi) : lo + (hi - lo) / 2;
			dx = hi - lo;
		}
		if (dx <= 1e-14 * t || hi - lo <= 4e-16 * hi)
			return t;
	}
	return t;
}

double t_quantile(double p, double df)
{
	if (isnan(p) || isnan(df) || !(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -t_upper_inv(p, 0.5 - p, df);
	return t_upper_inv(1 - p, p - 0.5, df);
}

double t975(double df)
{
	if (!(df > 0))
		return NAN;
	return t_quantile(0.975, df);
}

double t95(size_t df)
{
	if (df == 0)
		return NAN;
	return t_quantile(0.975, (double)df);
}

void summarize(const double *x, size_t n, struct summary *out)
{
	double sum = 0, ss = 0, half;
	size_t i;

	out->n = n;
	out->mean = out->sd = out->cv_pct = out->ci95_low = out->ci95_high = NAN;
	out->min = out->max = out->arith_mean = NAN;
	out->geo = false;
	out->ci_n = 0;
	out->ci_blocks = false;
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
	out->mean = out->arith_mean = sum / (double)n;
	out->ci_n = n;
	out->ci_blocks = false;
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

void summarize_blocked(const double *x, const uint16_t *block, size_t n, struct summary *out)
{
	double bmean[512], bsum = 0, bss = 0, half;
	size_t nb = 0, i, j;

	summarize(x, n, out);
	for (i = 0; i < n; i++) {
		double s = 0;
		size_t k = 0;

		for (j = 0; j < i && block[j] != block[i]; j++)
			;
		if (j < i)
			continue;	/* block seen */
		if (nb == sizeof(bmean) / sizeof(bmean[0]))
			return;		/* more blocks than kept: the sample interval stays */
		for (j = i; j < n; j++)
			if (block[j] == block[i]) {
				s += x[j];
				k++;
			}
		bmean[nb++] = s / (double)k;
	}
	if (nb < 2)
		return;
	for (i = 0; i < nb; i++)
		bsum += bmean[i];
	out->mean = out->arith_mean = bsum / (double)nb;
	for (i = 0; i < nb; i++)
		bss += (bmean[i] - out->mean) * (bmean[i] - out->mean);
	half = t95(nb - 1) * sqrt(bss / (double)(nb - 1)) / sqrt((double)nb);
	out->ci95_low = out->mean - half;
	out->ci95_high = out->mean + half;
	out->ci_n = nb;
	out->ci_blocks = true;
}

void summarize_geo(const double *x, const uint16_t *block, size_t n, struct summary *out)
{
	double y[512];
	size_t i;

	summarize_blocked(x, block, n, out);
	out->arith_mean = out->mean;
	out->geo = false;
	if (n == 0 || n > sizeof(y) / sizeof(y[0]))
		return;
	for (i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return;
		y[i] = log(x[i]);
	}
	{
		struct summary l;

		summarize_blocked(y, block, n, &l);
		if (l.ci_blocks != out->ci_blocks)
			return;		/* more blocks than summarize_blocked keeps: as it is */
		out->mean = exp(l.mean);
		out->ci95_low = isfinite(l.ci95_low) ? exp(l.ci95_low) : NAN;
		out->ci95_high = isfinite(l.ci95_high) ? exp(l.ci95_high) : NAN;
		out->geo = true;
	}
}
