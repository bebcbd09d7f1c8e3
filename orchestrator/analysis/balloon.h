/*
 * balloon: the free page reporting arm against the guests without a balloon
 * (--balloon=none,reporting), per host setting: each arm's re-fault time
 * (memset's refault_ns_per_4k, geometric mean over boots with its 95%
 * interval), what the host saw around the windows (QEMU's RSS drop, guest
 * RAM's huge-page coverage; results.balloon), and the effect reporting vs
 * none on the re-fault time over boots (Welch, log scale). Pure: never
 * prints, never writes the model.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_BALLOON_H
#define THPEVAL_ORCH_ANALYSIS_BALLOON_H

#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/model/results.h"

#define BALLOON_ROWS_MAX 32

/* one arm of one host setting */
struct balloon_arm_sum {
	bool have;			/* its memset cell ran the re-fault step */
	unsigned boots, windows;	/* boots of the cell, windows the host watched */
	unsigned half_drops;		/* windows whose RSS drop reached half the freed buffer */
	double refault_gm, refault_lo, refault_hi;	/* ns per 4K: geometric mean over boots, 95% CI */
	double freed_mib, rss_before_mib, rss_after_free_mib, rss_after_retouch_mib;	/* means over windows */
	double drop_mib, drop_pct;	/* mean RSS drop after the free, and over the freed buffer */
	double cov_before_pct, cov_after_free_pct, cov_after_retouch_pct;
};

struct balloon_row {
	char host_thp[RES_NAME_MAX], prefault[RES_NAME_MAX], guest_thp[RES_NAME_MAX];
	char host_state[24];
	struct balloon_arm_sum arm[2];	/* [0] none, [1] reporting */
	/* reporting / none on refault_ns_per_4k: the ratio of geometric means and its 95% CI */
	bool have_effect;
	double ratio, ratio_lo, ratio_hi, df;
	char note[160];			/* why there is no effect */
};

/* the rows of a run with the balloon axis, at most max; 0 without one */
size_t balloon_rows(const struct results *r, struct balloon_row *out, size_t max);

#endif
