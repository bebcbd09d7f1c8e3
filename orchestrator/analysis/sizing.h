/*
 * sizing: the host-sizing summary of a run. Per host memory state (fresh,
 * fragmented) and guest count, the coverage each guest got and the THP
 * effect kept; per mTHP size, its coverage and effects, where the prefault
 * benefit saturates and the TLB benefit starts. Pure: reads the model,
 * writes only to the FILE* it is given.
 */
#ifndef THPEVAL_ORCH_SIZING_H
#define THPEVAL_ORCH_SIZING_H

#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/model/results.h"

/* an effect of all-never vs one treatment cell, % faster with THP */
struct sz_effect {
	bool available;
	double est, lo, hi;
};

struct sz_row {
	char host_state[24];
	char host_thp[RES_NAME_MAX], guest_thp[RES_NAME_MAX];
	unsigned guests;
	double cov_pct;			/* host coverage of the treatment cell (mean), NAN if none */
	char cov_source[16];
	char per_guest[160];		/* "g0 98.1%, g1 97.6%" */
	struct sz_effect fault, access;	/* against never/never of the same host state */
	double fault_retained_pct, access_retained_pct;	/* of the fresh host's, NAN without one */
};

struct sz_size {
	unsigned kb;
	char host_thp[RES_NAME_MAX];
	double cov_pct;			/* host cell X/never */
	char cov_source[16];
	struct sz_effect fault, access;	/* host X / guest never against never/never */
};

#define SZ_MAX_ROWS 64
#define SZ_MAX_SIZES 16

struct sizing {
	char workload[RES_NAME_MAX];
	size_t nrows;
	struct sz_row rows[SZ_MAX_ROWS];
	size_t nsizes;
	struct sz_size sizes[SZ_MAX_SIZES];
	unsigned saturate_kb;		/* smallest size with >= 90% of the largest fault-phase effect, among
					 * sizes whose effect is above 0 with 95% confidence; 0 = none */
	unsigned tlb_start_kb;		/* smallest size whose access-phase effect is significantly > 0 */
};

/* true when the run has something to size: --guests > 1, a fragmented arm or per-size settings */
bool sizing_applies(const struct results *r);
void sizing_compute(const struct results *r, struct sizing *out);

#endif
