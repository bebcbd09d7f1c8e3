/*
 * effects: the split of a THP benefit into host prefault, host TLB, guest
 * prefault, guest TLB and their interaction, each a contrast of log times
 * shown as the share of time THP saves with its 95% interval. Host-side
 * effects replicate over boots, guest-side ones are paired inside a boot.
 * Pure: reads the results model, never prints.
 */
#ifndef THPEVAL_ORCH_EFFECTS_H
#define THPEVAL_ORCH_EFFECTS_H

#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/analysis/boots.h"
#include "orchestrator/model/results.h"

/*
 * The split of a THP benefit into host prefault, host TLB, guest
 * prefault, guest TLB and the host x guest interaction, on the ratio scale:
 * each effect is a contrast of log times, shown as the share of time THP saves
 * (positive = faster with THP), its 95% interval computed on the log scale and
 * transformed back, so the baseline's own uncertainty is in it and the
 * interaction is 0 when host and guest THP act independently. Which
 * workloads are split, and on which phase metrics of which cells, is
 * lib/wltraits.h's (struct wl_split).
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

/* the percentage shown for a log contrast d: the share of time saved, (1 - exp(-d)) * 100 */
double effect_pct(double d);

void effects_compute(const struct results *r, struct effects *out);
/* r->effects computed from r's cells (allocated on first use, owned by r);
 * -ENOMEM when it cannot be */
int effects_attach(struct results *r, struct err *e);
/* the guest cell with this host state, workload, variant ("": none) and levels; NULL if not run */
const struct cell *effects_find(const struct results *r, const char *host_state, const char *w, const char *variant,
				const char *host, const char *pf, const char *guest);
/* minimum detectable effect (% of the mean), two cells of n samples with this cv, 80% power */
double mde_pct(double cv_pct, size_t n);

#endif
