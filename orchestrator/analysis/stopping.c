#include "orchestrator/analysis/stopping.h"

#include <math.h>
#include <string.h>

enum stop_verdict stop_decide(const struct effects *fx, const struct stop_params *p, unsigned rounds_done,
			      double elapsed_s, double *worst)
{
	size_t i;

	*worst = NAN;
	if (rounds_done < p->boots)
		return STOP_BOOTS;
	if (p->target_ci <= 0)
		return STOP_FIXED;
	for (i = 0; fx && i < fx->n; i++) {
		const struct effect *e = &fx->e[i];
		double half;

		if (!e->available || !strcmp(e->side, "interaction") || !strcmp(e->side, "total"))
			continue;
		half = (e->ci95_high_pct - e->ci95_low_pct) / 2;
		if (isnan(*worst) || half > *worst)
			*worst = half;
	}
	if (isfinite(*worst) && *worst <= p->target_ci)
		return STOP_TARGET_MET;
	if ((uint64_t)(rounds_done + 1) * p->reps > p->max_reps)
		return STOP_MAX_REPS;
	if (p->budget_ms && rounds_done > 0 &&
	    (elapsed_s + elapsed_s / rounds_done) * 1000 > (double)p->budget_ms)
		return STOP_BUDGET;
	return isfinite(*worst) ? STOP_MORE : STOP_NO_EFFECT;
}
