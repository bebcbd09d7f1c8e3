/*
 * changes: change points of one series (a metric kind's log means, oldest
 * first) by binary segmentation: the split with the largest Welch t between
 * the two sides, kept when a seeded permutation test finds it (p < 0.01)
 * and each side has 3 or more runs, then each side searched again. Pure:
 * never prints, never exits.
 */
#ifndef THPEVAL_ORCH_CHANGES_H
#define THPEVAL_ORCH_CHANGES_H

#include <stddef.h>

#define CHANGES_MIN_SEGMENT 3
#define CHANGES_PERMUTATIONS 199
#define CHANGES_ALPHA 0.01

struct change_point {
	size_t at;		/* the first run of the new segment (index into the series) */
	double change_pct;	/* the segment after against the one before, exp(mean diff) - 1 */
	double p;		/* permutation p of the split */
};

/*
 * The change points of y[0..n-1], in order, at most max into out; *nout
 * how many. Deterministic (the permutations are seeded from n).
 */
void changes_find(const double *y, size_t n, struct change_point *out, size_t max, size_t *nout);

#endif
