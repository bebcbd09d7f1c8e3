/*
 * abtest: the in-run A/B comparison of a run whose boots alternate between two
 * emulators (guest_log.arm "A" and "B"): each gated metric of each guest cell
 * and each split effect, B against A, on the log scale with a 95% t interval,
 * paired by round where both arms booted in it, and Holm over each family.
 * Pure: reads the results model, writes only results->ab; never prints.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_ABTEST_H
#define THPEVAL_ORCH_ANALYSIS_ABTEST_H

#include <stdbool.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"

/* whether r's boots carry two arms */
bool abtest_applies(const struct results *r);
/* fill out from r (out->n = 0 when no A/B axis); -ENOMEM */
int abtest_compute(const struct results *r, struct abtest *out, struct err *e);
/* r->ab computed (allocated on first use, owned by r), freed when r has no A/B axis; r->ksm_fx
 * too (analysis/ksmfx.h), the KSM arm's on against off */
int abtest_attach(struct results *r, struct err *e);

#endif
