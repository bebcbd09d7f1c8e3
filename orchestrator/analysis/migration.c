#include "orchestrator/analysis/migration.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/stats.h"

static const char *const arms[] = { "none", "precopy", "postcopy" };
static const char *const metrics[] = { "access_ns", "write_ns_per_4k" };
static const char *const phases[] = { "before", "right_after", "settled" };

static double pick(const struct migration_log *m, size_t metric, size_t phase)
{
	const double v[2][3] = {
		{ m->access_before_ns, m->access_after_ns, m->access_settled_ns },
		{ m->write_before_ns, m->write_after_ns, m->write_settled_ns },
	};

	return v[metric][phase];
}

struct moments {
	size_t n;
	double mean, var;
};

static void moments(const struct results *r, const char *host_thp, const char *arm, size_t metric, size_t phase,
		    struct moments *o)
{
	double s = 0, ss = 0;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->mean = o->var = NAN;
	for (i = 0; i < r->nmigrations; i++) {
		const struct migration_log *m = &r->migrations[i];
		double v = pick(m, metric, phase);

		if (strcmp(m->arm, arm) || strcmp(m->host_thp, host_thp) || m->error[0] || !isfinite(v))
			continue;
		o->n++;
		s += v;
		ss += v * v;
	}
	if (!o->n)
		return;
	o->mean = s / (double)o->n;
	if (o->n > 1)
		o->var = (ss - s * s / (double)o->n) / (double)(o->n - 1);
}

static bool seen_host(const struct results *r, size_t upto, const char *host_thp)
{
	size_t i;

	for (i = 0; i < upto; i++)
		if (!strcmp(r->migrations[i].host_thp, host_thp))
			return true;
	return false;
}

int migration_summarize(struct results *r, struct err *e)
{
	size_t h, a, mt, ph;

	r->nmigsum = 0;
	for (h = 0; h < r->nmigrations; h++) {
		const char *host = r->migrations[h].host_thp;

		if (seen_host(r, h, host))
			continue;
		for (a = 0; a < sizeof(arms) / sizeof(arms[0]); a++)
			for (mt = 0; mt < sizeof(metrics) / sizeof(metrics[0]); mt++)
				for (ph = 0; ph < sizeof(phases) / sizeof(phases[0]); ph++) {
					struct moments x, base;
					struct mig_summary *s;

					moments(r, host, arms[a], mt, ph, &x);
					if (!x.n)
						continue;
					s = results_migsum_add(r, e);
					if (!s)
						return e->code;
					snprintf(s->arm, sizeof(s->arm), "%s", arms[a]);
					snprintf(s->host_thp, sizeof(s->host_thp), "%s", host);
					snprintf(s->metric, sizeof(s->metric), "%s", metrics[mt]);
					snprintf(s->phase, sizeof(s->phase), "%s", phases[ph]);
					s->boots = (unsigned)x.n;
					s->mean = x.mean;
					if (x.n > 1) {
						double hw = t95(x.n - 1) * sqrt(x.var / (double)x.n);

						s->ci_lo = x.mean - hw;
						s->ci_hi = x.mean + hw;
					}
					if (a == 0)
						continue;
					moments(r, host, arms[0], mt, ph, &base);
					if (!base.n || !(base.mean > 0))
						continue;
					s->effect_pct = 100.0 * (x.mean - base.mean) / base.mean;
					if (x.n > 1 && base.n > 1) {
						double va = x.var / (double)x.n, vb = base.var / (double)base.n;
						double se = sqrt(va + vb), df;

						/* Welch-Satterthwaite degrees of freedom */
						df = se > 0 ? (va + vb) * (va + vb) /
							(va * va / (double)(x.n - 1) + vb * vb / (double)(base.n - 1)) : NAN;
						if (isfinite(df) && df > 0) {
							double hw = t975(df) * se;

							s->effect_lo_pct = 100.0 * (x.mean - base.mean - hw) / base.mean;
							s->effect_hi_pct = 100.0 * (x.mean - base.mean + hw) / base.mean;
						}
					}
				}
	}
	return 0;
}
