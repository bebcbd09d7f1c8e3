/*
 * effects: the split of a THP benefit into host prefault, host TLB, guest
 * prefault, guest TLB and the host x guest interaction, each as a percentage
 * of the baseline (all-never) cell with a 95% confidence interval. Every
 * effect is a linear contrast of cell means; its interval uses Welch's
 * standard error with Satterthwaite's degrees of freedom. Invalid cells and
 * cells with fewer than 2 samples make an effect "not available" with a
 * reason, never a number. Pure: reads the results model, never prints.
 */
#ifndef THPEVAL_ORCH_EFFECTS_H
#define THPEVAL_ORCH_EFFECTS_H

#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/results.h"

#define EFFECTS_MAX 320

struct effect {
	char workload[RES_NAME_MAX];
	char side[16];			/* "host", "guest", "interaction" */
	char component[16];		/* "prefault", "tlb" */
	char metric[REC_KEY_MAX];	/* the phase metric it is computed from */
	char host_thp[RES_NAME_MAX];	/* treatment levels compared with never */
	char guest_thp[RES_NAME_MAX];
	char host_state[16];		/* cells compared: all fresh or all fragmented */
	bool available;
	char note[256];			/* why not available, or how it was derived */
	double estimate_pct;		/* positive = THP made it faster */
	double ci95_low_pct, ci95_high_pct;
	double df;			/* Welch-Satterthwaite degrees of freedom */
	bool significant;		/* interval excludes 0 */
	double share_pct;		/* of the total THP benefit on the same metric */
};

struct effects {
	size_t n;
	struct effect e[EFFECTS_MAX];
};

/* one term of a contrast: weight * mean(metric of cell) */
struct contrast_term {
	const struct metric *m;
	double w;
};

/*
 * estimate = sum(w * mean) / base_mean * 100, with a Welch 95% interval.
 * Returns 0, or -EINVAL when a term has fewer than 2 samples or the base
 * mean is not positive.
 */
int contrast_pct(const struct contrast_term *t, size_t n, double base_mean, double *est,
		 double *lo, double *hi, double *df);

void effects_compute(const struct results *r, struct effects *out);
/* the guest cell (no variant) with this host state, workload and levels; NULL if not run */
const struct cell *effects_find(const struct results *r, const char *host_state, const char *w, const char *host,
				const char *pf, const char *guest);
void effects_print(const struct effects *fx, FILE *out);
/* minimum detectable effect (% of the mean), two cells of n samples with this cv, 80% power */
double mde_pct(double cv_pct, size_t n);

#endif
