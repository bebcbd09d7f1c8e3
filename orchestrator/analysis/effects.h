/*
 * effects: the split of a THP benefit into host prefault, host TLB, guest
 * prefault, guest TLB and the host x guest interaction, on the ratio scale:
 * each effect is a contrast of log times, shown as the share of time THP saves
 * (positive = faster with THP), its 95% interval computed on the log scale and
 * transformed back, so the baseline's own uncertainty is in it and the
 * interaction is 0 when host and guest THP act independently.
 *
 * A host setting is applied per guest boot, so host-side effects replicate
 * over boots: each host group's boots give one value each (the mean log time
 * of the cell, or a within-boot difference of cells), and the groups are
 * compared by Welch over boots with Satterthwaite's degrees of freedom.
 * Guest-side effects are paired inside a boot (the boot is the block) and
 * their interval comes from the spread of the within-boot differences over
 * boots; with a single boot, from the repetitions inside it (labelled so).
 * Invalid cells, missing cells and too few boots make an effect "not
 * available" with a reason, never a number. Pure: reads the results model,
 * never prints (report/text.c renders the effects).
 */
#ifndef THPEVAL_ORCH_EFFECTS_H
#define THPEVAL_ORCH_EFFECTS_H

#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/analysis/boots.h"
#include "orchestrator/model/results.h"

#define EFFECTS_MAX 320

struct effect {
	char workload[RES_NAME_MAX];
	char side[16];			/* "host", "guest", "interaction", "total" */
	char component[16];		/* "prefault", "tlb", "warm" (host, fault phase, host-warm) */
	char metric[REC_KEY_MAX];	/* the phase metric it is computed from */
	char host_thp[RES_NAME_MAX];	/* treatment levels compared with never */
	char guest_thp[RES_NAME_MAX];
	char at_guest[RES_NAME_MAX];	/* host-side effects: the guest setting they are measured at */
	char host_state[16];		/* cells compared: all fresh or all fragmented */
	bool available;
	char note[256];			/* why not available, or how it was derived */
	char method[16];		/* "boots" (Welch over boots) or "one-boot" (repetitions in one boot) */
	double log_est, log_se;		/* the contrast of log times and its standard error */
	double estimate_pct;		/* (1 - exp(-log_est)) * 100: positive = THP made it faster */
	double ci95_low_pct, ci95_high_pct;
	double df;			/* Welch-Satterthwaite degrees of freedom */
	unsigned boots_min;		/* fewest boots any arm of the contrast had */
	bool significant;		/* interval excludes 0 */
	double share_pct;		/* of the same table's total, on the log scale; NAN unless that
					 * total is significant */
};

/* one cell's variance components for one phase metric */
struct effect_var {
	char workload[RES_NAME_MAX];
	char label[160];		/* "host always/ondemand guest never" (+ variant, state) */
	char metric[REC_KEY_MAX];
	struct varcomp vc;
};

#define EFFECTS_MAX_VAR 128

/* under TCG the host side is QEMU's software MMU, not KVM's two-dimensional walk */
#define EFFECTS_TCG_NOTE "under TCG, host-side effects are QEMU's software MMU reaching guest RAM " \
	"through the host's page tables (its softmmu TLB refills walk them), not KVM's two-dimensional " \
	"hardware page walk: they do not carry over to KVM guests"

struct effects {
	bool tcg;			/* the guests ran under TCG: host-side effects mean EFFECTS_TCG_NOTE */
	size_t n;
	struct effect e[EFFECTS_MAX];
	size_t nvar;
	struct effect_var var[EFFECTS_MAX_VAR];
};

/* the percentage shown for a log contrast d: the share of time saved, (1 - exp(-d)) * 100 */
double effect_pct(double d);

void effects_compute(const struct results *r, struct effects *out);
/* the guest cell (no variant) with this host state, workload and levels; NULL if not run */
const struct cell *effects_find(const struct results *r, const char *host_state, const char *w, const char *host,
				const char *pf, const char *guest);
/* minimum detectable effect (% of the mean), two cells of n samples with this cv, 80% power */
double mde_pct(double cv_pct, size_t n);

#endif
