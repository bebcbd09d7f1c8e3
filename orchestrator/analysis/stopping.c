#include "orchestrator/analysis/stopping.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "lib/stats.h"

/* the side's target, 0 when the effect is not one (totals, or a side without a target) */
static double side_target(const struct stop_params *p, const char *side)
{
	if (!strcmp(side, "guest"))
		return p->target_guest;
	if (!strcmp(side, "host") || !strcmp(side, "interaction"))
		return p->target_host;
	return 0;
}

static bool targeted(const struct stop_params *p)
{
	return p->target_host > 0 || p->target_guest > 0;
}

unsigned stop_min_rounds(const struct stop_params *p)
{
	return targeted(p) && p->boots < STOP_MIN_BOOTS ? STOP_MIN_BOOTS : p->boots;
}

/* the half-width at m boots, projected from se and df at n */
static double half_at(double se, double df, unsigned n, unsigned m)
{
	return t975(df * (double)(m - 1) / (double)(n - 1)) * se * sqrt((double)n / (double)m);
}

unsigned stop_boots_needed(const struct effect *e, double target_pct)
{
	double lim = log1p(target_pct / 100), se = e->log_se, df = e->df, start;
	unsigned n = e->boots_min, m;

	if (!e->available || n < 2 || !(se > 0) || !(df > 0) || !(lim > 0) || strcmp(e->method, "boots"))
		return 0;
	if (half_at(se, df, n, n) <= lim)
		return n;
	/* the t quantile is above 1.96 at any df: no m below this one reaches it */
	start = (double)n * (1.959964 * se / lim) * (1.959964 * se / lim);
	if (start > STOP_BOOTS_CAP)
		return STOP_BOOTS_CAP + 1;
	for (m = start > n + 1 ? (unsigned)start : n + 1; m <= STOP_BOOTS_CAP; m++)
		if (half_at(se, df, n, m) <= lim)
			return m;
	return STOP_BOOTS_CAP + 1;
}

/* the rounds --max-reps and the budget allow in all, from the time a round has taken */
static unsigned rounds_allowed(const struct stop_params *p, unsigned rounds_done, double elapsed_s)
{
	unsigned allowed = p->reps ? p->max_reps / p->reps : UINT_MAX;

	if (p->budget_ms && rounds_done > 0 && elapsed_s > 0) {
		double by_time = (double)p->budget_ms / 1000.0 / (elapsed_s / rounds_done);

		if (by_time < allowed)
			allowed = (unsigned)by_time;
	}
	return allowed;
}

static void gap_clear(struct stop_gap *gap)
{
	memset(gap, 0, sizeof(*gap));
	gap->half = NAN;
	gap->effect = -1;
}

enum stop_verdict stop_decide(const struct effects *fx, const struct stop_params *p, unsigned rounds_done,
			      double elapsed_s, struct stop_gap *gap)
{
	size_t i, ntarget = 0;
	double worst = 0;

	gap_clear(gap);
	gap->minimum = stop_min_rounds(p);
	if (rounds_done < gap->minimum)
		return STOP_BOOTS;
	if (!targeted(p))
		return STOP_FIXED;
	gap->allowed = rounds_allowed(p, rounds_done, elapsed_s);
	for (i = 0; fx && i < fx->n; i++) {
		const struct effect *e = &fx->e[i];
		double target = side_target(p, e->side), h;
		unsigned need;

		if (target <= 0)
			continue;
		ntarget++;
		if (!e->available || !isfinite(e->log_se) || !(e->df > 0)) {
			gap->unavailable++;
			continue;
		}
		need = stop_boots_needed(e, target);
		if (need > gap->allowed) {
			if (gap->nfar < STOP_FAR_MAX)
				gap->far[gap->nfar++] = (struct stop_far){ (int)i, target, need };
			continue;
		}
		/* on the log scale, where the effect and its interval are computed */
		h = t975(e->df) * e->log_se / log1p(target / 100);
		if (gap->effect < 0 || h > worst) {
			worst = h;
			gap->half = expm1(t975(e->df) * e->log_se) * 100;
			gap->target = target;
			gap->effect = (int)i;
			gap->need = need;
		}
	}
	if (ntarget == 0)
		return STOP_NO_TARGETS;
	/* met: every chased effect within its target, or none left to chase */
	if ((gap->effect >= 0 && worst <= 1) || (gap->effect < 0 && gap->nfar > 0)) {
		gap->at_minimum = rounds_done == gap->minimum;
		return gap->nfar ? STOP_REACHABLE_MET : STOP_TARGET_MET;
	}
	if ((uint64_t)(rounds_done + 1) * p->reps > p->max_reps)
		return STOP_MAX_REPS;
	if (p->budget_ms && rounds_done > 0 &&
	    (elapsed_s + elapsed_s / rounds_done) * 1000 > (double)p->budget_ms)
		return STOP_BUDGET;
	return gap->effect >= 0 ? STOP_MORE : STOP_NO_EFFECT;
}

const char *stop_verdict_name(enum stop_verdict v)
{
	switch (v) {
	case STOP_MORE:
		return "more";
	case STOP_BOOTS:
		return "boots";
	case STOP_FIXED:
		return "fixed boots";
	case STOP_TARGET_MET:
		return "target met";
	case STOP_REACHABLE_MET:
		return "reachable targets met";
	case STOP_MAX_REPS:
		return "max-reps reached";
	case STOP_BUDGET:
		return "budget reached";
	case STOP_NO_EFFECT:
		return "no effect yet";
	case STOP_NO_TARGETS:
		return "no split effect to target";
	}
	return "?";
}
