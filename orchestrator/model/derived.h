/*
 * derived: the figures the analyses derive from a run's cells, as the results
 * model carries and writes them: the effects of the split and the variance
 * components of each cell. The model only stores and writes them
 * (results->effects); analysis/effects.c computes them.
 */
#ifndef THPEVAL_ORCH_MODEL_DERIVED_H
#define THPEVAL_ORCH_MODEL_DERIVED_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/record.h"
#include "orchestrator/model/results.h"

/* a cell's variance components: the CV within a boot and between boots */
struct varcomp {
	size_t boots, samples;
	double within_cv_pct, between_cv_pct;
};

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

#endif
