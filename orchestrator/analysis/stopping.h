/*
 * stopping: the --target-ci rule, whether another round of boots is worth
 * running. Widths are judged on the log scale, where effects are estimated;
 * each effect's boots to its target are projected from its current width,
 * and one the limits cannot reach is no longer chased. Pure: a function of
 * the effects so far and the run's limits, testable without guests; never
 * prints.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_STOPPING_H
#define THPEVAL_ORCH_ANALYSIS_STOPPING_H

#include <stdbool.h>
#include <stdint.h>

#include "orchestrator/analysis/effects.h"

/* boots per host setting a run with a CI target runs at least: fewer cover below 95% */
#define STOP_MIN_BOOTS 6
/* projections past this many boots are "more than" it */
#define STOP_BOOTS_CAP 10000
/* effects out of reach a verdict lists */
#define STOP_FAR_MAX 16

enum stop_verdict {
	STOP_MORE,		/* another round */
	STOP_BOOTS,		/* the minimum rounds not yet run: another round, unconditionally */
	STOP_FIXED,		/* no --target-ci: the --boots rounds were the run */
	STOP_TARGET_MET,	/* every targeted effect's half-width is at most its side's target */
	STOP_REACHABLE_MET,	/* every target the limits can reach is met; the others are out of reach */
	STOP_MAX_REPS,		/* another round would exceed --max-reps per cell */
	STOP_BUDGET,		/* another round would end past --budget */
	STOP_NO_EFFECT,		/* effects exist, none is available yet to judge (and the limits allow more) */
	STOP_NO_TARGETS,	/* the run's workloads have no split effect: more rounds narrow nothing */
};

struct stop_params {
	unsigned boots;		/* rounds asked for (with a target: the minimum, at least STOP_MIN_BOOTS) */
	unsigned reps;		/* repetitions per cell per round */
	double target_host;	/* points, host-side effects and interactions; 0 = none */
	double target_guest;	/* points, guest-side effects; 0 = none */
	unsigned max_reps;	/* per cell, over all rounds */
	uint64_t budget_ms;	/* 0 = none */
};

/* an effect the limits cannot bring to its target: not chased */
struct stop_far {
	int effect;		/* index in fx->e */
	double target;		/* its side's target, points */
	unsigned need;		/* boots per host setting it would need (STOP_BOOTS_CAP + 1: more) */
};

/* the chased effect furthest from its target, and the ones out of reach */
struct stop_gap {
	double half;		/* its 95% CI half-width, as points of the ratio scale (e^h - 1); NAN: none */
	double target;		/* its side's target, points */
	int effect;		/* index in fx->e, -1 when none */
	unsigned need;		/* boots per host setting it needs, projected; 0 unknown */
	unsigned allowed;	/* rounds the limits allow in all (UINT_MAX: no limit) */
	unsigned minimum;	/* rounds the rule runs at least */
	bool at_minimum;	/* the targets were met at the minimum: the run stopped there */
	size_t unavailable;	/* targeted effects not available (an invalid or missing cell): not judged */
	size_t nfar;
	struct stop_far far[STOP_FAR_MAX];
};

/* the fewest rounds the rule runs: --boots, and STOP_MIN_BOOTS with a target */
unsigned stop_min_rounds(const struct stop_params *p);

/*
 * The boots per host setting e needs for a 95% half-width of target_pct
 * points on the log scale (ln(1 + target/100)), projected from its standard
 * error at e->boots_min boots: the error falls as 1/sqrt(boots) and the t
 * quantile with the degrees of freedom, which grow with the boots.
 * e->boots_min when it is met; 0 when it cannot be told (not available,
 * one boot); STOP_BOOTS_CAP + 1 when it needs more than STOP_BOOTS_CAP.
 */
unsigned stop_boots_needed(const struct effect *e, double target_pct);

/*
 * After rounds_done rounds in elapsed_s seconds: go on or stop, and why.
 * Host and guest effects are targets (host-side and interactions against
 * target_host, guest-side against target_guest); totals are not. The
 * rounds the limits allow are --max-reps / --reps and the budget over the
 * seconds a round has taken so far; an effect needing more is listed in
 * gap->far and not chased.
 */
enum stop_verdict stop_decide(const struct effects *fx, const struct stop_params *p, unsigned rounds_done,
			      double elapsed_s, struct stop_gap *gap);

/* the verdict in words, for progress and results.json ("target met", ...) */
const char *stop_verdict_name(enum stop_verdict v);

#endif
