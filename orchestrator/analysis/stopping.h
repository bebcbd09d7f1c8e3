/*
 * stopping: the --target-ci rule, whether another round of boots is worth
 * running. Pure: a function of the effects so far and the run's limits, so
 * every way it can stop is testable without guests; never prints.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_STOPPING_H
#define THPEVAL_ORCH_ANALYSIS_STOPPING_H

#include <stdint.h>

#include "orchestrator/analysis/effects.h"

enum stop_verdict {
	STOP_MORE,		/* another round */
	STOP_BOOTS,		/* --boots rounds not yet run: another round, unconditionally */
	STOP_FIXED,		/* no --target-ci: the --boots rounds were the run */
	STOP_TARGET_MET,	/* every targeted effect's half-width is at most its side's target */
	STOP_MAX_REPS,		/* another round would exceed --max-reps per cell */
	STOP_BUDGET,		/* another round would end past --budget */
	STOP_NO_EFFECT,		/* effects exist, none is available yet to judge (and the limits allow more) */
	STOP_NO_TARGETS,	/* the run's workloads have no split effect: more rounds narrow nothing */
};

struct stop_params {
	unsigned boots;		/* rounds asked for (the minimum when a target is set) */
	unsigned reps;		/* repetitions per cell per round */
	double target_host;	/* points, host-side effects and interactions; 0 = none */
	double target_guest;	/* points, guest-side effects; 0 = none */
	unsigned max_reps;	/* per cell, over all rounds */
	uint64_t budget_ms;	/* 0 = none */
};

/* the targeted effect furthest from its target: half-width over target is the largest */
struct stop_gap {
	double half;		/* its 95% CI half-width, points; NAN when none */
	double target;		/* its side's target, points */
	int effect;		/* index in fx->e, -1 when none */
};

/*
 * After rounds_done rounds in elapsed_s seconds: go on or stop, and why.
 * Host and guest effects are targets (host-side and interactions against
 * target_host, guest-side against target_guest); totals are not.
 */
enum stop_verdict stop_decide(const struct effects *fx, const struct stop_params *p, unsigned rounds_done,
			      double elapsed_s, struct stop_gap *gap);

/* the verdict in words, for progress and results.json ("target met", ...) */
const char *stop_verdict_name(enum stop_verdict v);

#endif
