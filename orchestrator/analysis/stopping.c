#include "orchestrator/analysis/stopping.h"

#include <math.h>
#include <string.h>

/* the side's target, 0 when the effect is not one (totals, or a side without a target) */
static double side_target(const struct stop_params *p, const char *side)
{
	if (!strcmp(side, "guest"))
		return p->target_guest;
	if (!strcmp(side, "host") || !strcmp(side, "interaction"))
		return p->target_host;
	return 0;
}

enum stop_verdict stop_decide(const struct effects *fx, const struct stop_params *p, unsigned rounds_done,
			      double elapsed_s, struct stop_gap *gap)
{
	size_t i, targeted = 0;

	gap->half = NAN;
	gap->target = 0;
	gap->effect = -1;
	if (rounds_done < p->boots)
		return STOP_BOOTS;
	if (p->target_host <= 0 && p->target_guest <= 0)
		return STOP_FIXED;
	for (i = 0; fx && i < fx->n; i++) {
		const struct effect *e = &fx->e[i];
		double target = side_target(p, e->side), half;

		if (target <= 0)
			continue;
		targeted++;
		if (!e->available)
			continue;
		half = (e->ci95_high_pct - e->ci95_low_pct) / 2;
		if (gap->effect < 0 || half / target > gap->half / gap->target) {
			gap->half = half;
			gap->target = target;
			gap->effect = (int)i;
		}
	}
	if (targeted == 0)
		return STOP_NO_TARGETS;
	if (gap->effect >= 0 && gap->half <= gap->target)
		return STOP_TARGET_MET;
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
