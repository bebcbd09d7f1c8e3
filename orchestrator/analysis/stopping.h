/*
 * stopping: the --target-ci rule, whether another round of boots is worth
 * running. Pure: a function of the effects so far and the run's limits, so
 * every way it can stop is testable without guests; never prints.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_STOPPING_H
#define THPEVAL_ORCH_ANALYSIS_STOPPING_H

#include <stdint.h>

#include "orchestrator/effects.h"

enum stop_verdict {
	STOP_MORE,		/* another round */
	STOP_BOOTS,		/* --boots rounds not yet run: another round, unconditionally */
	STOP_FIXED,		/* no --target-ci: the --boots rounds were the run */
	STOP_TARGET_MET,	/* every main effect's half-width is at most the target */
	STOP_MAX_REPS,		/* another round would exceed --max-reps per cell */
	STOP_BUDGET,		/* another round would end past --budget */
	STOP_NO_EFFECT,		/* no main effect is available yet to judge (and the limits allow more) */
};

struct stop_params {
	unsigned boots;		/* rounds asked for */
	unsigned reps;		/* repetitions per cell per round */
	double target_ci;	/* points; 0 = none */
	unsigned max_reps;	/* per cell, over all rounds */
	uint64_t budget_ms;	/* 0 = none */
};

/*
 * After rounds_done rounds in elapsed_s seconds: go on or stop, and why.
 * worst gets the widest main-effect half-width (host and guest effects; the
 * interaction and totals are not targets), NAN when none is available.
 */
enum stop_verdict stop_decide(const struct effects *fx, const struct stop_params *p, unsigned rounds_done,
			      double elapsed_s, double *worst);

#endif
